"""ClusterClass patches that set a whole ``files`` or ``preKubeadmCommands`` list.

When the topology reconciles, such a patch replaces the list of the template,
wiping whatever the tool injected there. A patch with a literal ``value`` list
gets the same entries as the template (drop-ins appended, commands first); a
patch whose list comes from ``valueFrom`` (a variable or a Go template) cannot
be extended safely and is an error that says what to change. What the tool
added is recorded per patch (``pI.dJ.jK=files:PATH,PATH`` / ``=commands:N``).
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError
from proxy_postrender.nodes import kubeadm
from proxy_postrender.nodes.kubeadm import NodePlan, NodeSettings
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path
from proxy_postrender.record import Record
from proxy_postrender.targets import BUILT_IN, KUBEADM, Target


def _pointer(path: Path, key: str) -> str:
    return "".join(f"/{step}" for step in (*path, key))


# In the template objects a patch selects: the JSON pointer of each list (from the table).
LIST_POINTERS: Mapping[str, Mapping[str, str]] = {
    target.kind: {
        _pointer(target.paths[0], "files"): "files",
        _pointer(target.paths[0], "preKubeadmCommands"): "commands",
    }
    for target in BUILT_IN.of_planner(KUBEADM)
    if target.kind.endswith("Template")
}


def _parse(recorded: Record) -> tuple[dict[str, list[str]], dict[str, int], set[str]]:
    files: dict[str, list[str]] = {}
    commands: dict[str, int] = {}
    empty: set[str] = set()
    for entry in recorded.entries:
        key, _, value = entry.partition("=")
        kind, _, rest = value.partition(":")
        if key == "empty":
            empty = set(value.split(","))
        elif kind == "files":
            files[key] = [p for p in rest.split(",") if p]
        elif kind == "commands" and rest.isdigit():
            commands[key] = int(rest)
        else:
            raise InputError(f"annotation {kubeadm.ANNOTATION} is malformed near {entry!r}")
    return files, commands, empty


def plan(
    obj: Mapping[str, Any],
    base: Path,
    target: Target,
    found: ObjectEnv,
    settings: NodeSettings | None,
) -> NodePlan | None:
    """The patches of a ClusterClass that set the kubeadm lists (None: it has none the
    tool extends, and nothing of the tool's is recorded on it)."""
    env = found.env
    on_conflict = settings.on_conflict if settings else "keep"
    result = NodePlan.for_env(found)
    recorded = Record.read(obj, kubeadm.ANNOTATION)
    owned_files, owned_commands, empty = _parse(recorded)
    injecting = bool(settings and env)
    secret = None
    if injecting and settings and settings.credentials == "secret" and settings.secret_name:
        secret = kubeadm.secret_ref(obj, settings)
    wanted_files, wanted_commands = kubeadm.desired_entries(settings, env, secret)
    spec: Mapping[str, Any] = obj["spec"] if isinstance(obj.get("spec"), Mapping) else {}
    entries: list[str] = []
    now_empty: set[str] = set()
    for i, patch in enumerate(kubeadm.as_list(spec.get("patches"), "spec.patches")):
        definitions = patch.get("definitions") if isinstance(patch, Mapping) else None
        for j, definition in enumerate(
            kubeadm.as_list(definitions, f"spec.patches[{i}].definitions")
        ):
            if not isinstance(definition, Mapping):
                continue
            selector = definition.get("selector") or {}
            pointers = LIST_POINTERS.get(str(selector.get("kind")), {})
            where_def = f"spec.patches[{i}].definitions[{j}]"
            for k, json_patch in enumerate(
                kubeadm.as_list(definition.get("jsonPatches"), where_def)
            ):
                if not isinstance(json_patch, Mapping):
                    continue
                op, pointer = json_patch.get("op"), str(json_patch.get("path"))
                where = f"{where_def}.jsonPatches[{k}]"
                patch_name = patch.get("name", i)
                wiped = [p for p in pointers if p.startswith(pointer + "/")]
                wipes = bool(wiped) and op in ("add", "replace", "remove")
                if injecting and (wipes or (op == "remove" and pointer in pointers)):
                    raise InputError(
                        f"ClusterClass patch {patch_name!r} ({where}) does '{op}' on {pointer}, "
                        f"which would wipe the proxy entries in {', '.join(wiped) or pointer} "
                        "when the topology reconciles; patch the fields below it instead"
                    )
                if op not in ("add", "replace"):
                    continue
                list_name = pointers.get(pointer)
                if list_name is None:
                    continue
                if injecting and settings and settings.credentials == "secret" and secret is None:
                    raise InputError(
                        "a ClusterClass serves many clusters: with spec.nodes.credentials: "
                        "secret, set spec.nodes.secretName (a Secret each cluster's "
                        "namespace provides)"
                    )
                ident = f"p{i}.d{j}.j{k}"
                if "value" not in json_patch:
                    if injecting:
                        raise InputError(
                            f"ClusterClass patch {patch_name!r} ({where}) sets the whole "
                            f"{json_patch.get('path')} from valueFrom, which would wipe the "
                            "proxy entries when the topology reconciles; append with a path "
                            "ending in '/-' instead, or add the entries to that value yourself"
                        )
                    continue
                value = json_patch.get("value")
                list_key = "preKubeadmCommands" if list_name == "commands" else "files"
                if kubeadm.is_windows({list_key: value}):
                    continue  # Windows ClusterClass patches: not extended (yet)
                path = (*base, "spec", "patches", i, "definitions", j, "jsonPatches", k)
                # a "value: []" comes back as "[]" when the tool takes its entries out again
                restore = ident in empty or value == []
                if restore:
                    now_empty.add(ident)
                if list_name == "files":
                    files = kubeadm.plan_files(
                        json_patch,
                        path,
                        "value",
                        where,
                        owned_files.get(ident, []),
                        wanted_files,
                        on_conflict,
                        restore_empty=restore,
                    )
                    result.ops += files.ops
                    result.files_added += files.added
                    result.files_kept += files.kept
                    if files.owned:
                        entries.append(f"{ident}=files:{','.join(files.owned)}")
                else:
                    ops = kubeadm.plan_commands(
                        json_patch,
                        path,
                        "value",
                        where,
                        owned_commands.get(ident, 0),
                        wanted_commands,
                        restore_empty=restore,
                    )
                    result.ops += ops
                    result.changed_commands |= bool(ops)
                    if wanted_commands:
                        entries.append(f"{ident}=commands:{len(wanted_commands)}")
    if result.changed_commands or any("=commands:" in e for e in entries):
        result.commands = len(wanted_commands)
    if secret is not None and entries:
        result.notes.append(
            f"the files come from Secret {secret.name}, which is not emitted for a ClusterClass: "
            "create it in each cluster's namespace"
        )
    owned_idents = {entry.partition("=")[0] for entry in entries}
    if now_empty & owned_idents:
        entries.append("empty=" + ",".join(sorted(now_empty & owned_idents)))
    if not entries and not recorded.current and not result.ops:
        return None  # a ClusterClass that does not touch the lists: not a target
    result.ops += recorded.ops(obj, base, entries)
    return result
