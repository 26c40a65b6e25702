"""ClusterClass patches that set a whole file or command list of a bootstrap template.

The lists are those of the dialect rows (proxy_postrender/dialects.py): kubeadm's
``files`` and ``preKubeadmCommands``, EKS's ``files`` and ``preBootstrapCommands``
or ``preNodeadmCommands``, in each template kind's spec.

When the topology reconciles, Cluster API applies each definition's
``jsonPatches`` in order to the templates it selects. A patch that sets a whole
list, or a parent of it, wipes whatever the tool injected into the template.

- A patch with a literal ``value`` list gets the same entries as the template
  (drop-ins appended, commands first), written into that value.
- A patch whose value comes from ``valueFrom.template`` (a Go template the tool
  cannot extend) is followed, in the same definition, by literal patches that
  carry the tool's entries: ``add <list>/-`` per file, ``add <list>/0`` per
  command in reverse order, or the whole list when a replaced parent has none.
  Being in the same definition, they share its selector and its patch's
  ``enabledIf``: they run exactly when the replacing patch does. The same holds
  for a parent replaced with a literal mapping.
- A value from ``valueFrom.variable`` cannot be seen, a template whose keys sit
  inside a template action cannot be read, and a value that already writes one
  of the tool's files would be written twice: each is an error that says what to
  change.

What the tool added is recorded per patch, with indices as they are in the
output: ``pI.dJ.jK=files:PATH,PATH`` / ``=commands:N`` (the literal list of
``jsonPatches[K]``) and ``pI.dJ.jK=patches:N`` (the N patches from ``K`` on
are the tool's). The record is read strictly, and a recorded range is replaced or
deleted only when it holds nothing but patches of the tool's shape (``ccowned``).
The work is linear in the ClusterClass: a template's keys are classified in one pass,
and the recorded ranges are looked up per definition, not searched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING, dialects

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.nodes.ccowned import Owned

from proxy_postrender.errors import InputError
from proxy_postrender.nodes import kubeadm, quoting
from proxy_postrender.nodes.kubeadm import NodePlan, NodeSettings
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path
from proxy_postrender.plans import SecretRef
from proxy_postrender.record import Record
from proxy_postrender.structs import Struct
from proxy_postrender.targets import Target
from proxy_postrender.yamltext.ops import DeleteItem, InsertItems


def _pointer(path: Path, key: str) -> str:
    return "".join(f"/{step}" for step in (*path, key))


# In the template objects a patch selects: the JSON pointer of each list, and its role
# ("files" or "commands"), from the dialect rows.
LIST_POINTERS: Mapping[str, Mapping[str, str]] = {
    row.kind: {
        _pointer(row.spec_path, dialect.files_key): "files",
        _pointer(row.spec_path, dialect.commands_key): "commands",
    }
    for dialect in dialects.DIALECTS
    for row in dialect.kinds
    if row.kind in dialects.TEMPLATE_KINDS
}
# the template kinds whose dialect has Linux nodes only (no Windows rule applies)
_LINUX_ONLY: frozenset[str] = frozenset(
    row.kind
    for dialect in dialects.DIALECTS
    if dialect.os_rule == dialects.OS_LINUX
    for row in dialect.kinds
)
# the template kinds of every row: (the dialect, the kind's level)
_TEMPLATE_ROWS: Mapping[str, tuple[dialects.Dialect, str]] = {
    row.kind: (dialect, row.level)
    for dialect in dialects.DIALECTS
    for row in dialect.kinds
    if row.level in dialects.TEMPLATE_LEVELS
}

# Patterns, compiled on first use (``re`` caches them): most runs never need them.
_KEY_LINE = r"""^(?:"([^"]*)"|'([^']*)'|([^\s#'"{\[\-][^:#]*?))\s*:(?:\s+(.*))?$"""
_PROXY_EXPORT = r"(?i)export\s+(?:HTTPS?_PROXY|NO_PROXY)="


class _Wanted(Struct):
    """The entries the tool writes into the templates of one ClusterClass."""

    linux_files: list[dict[str, Any]]
    linux_commands: list[str]
    windows_commands: list[str]
    paths: list[str]  # of the files the tool writes (also with other settings)

    def for_os(self, windows: bool) -> tuple[list[dict[str, Any]], list[str]]:
        if windows:
            return [], self.windows_commands
        return self.linux_files, self.linux_commands


class _Unreadable(Exception):
    """A template value whose top-level structure cannot be told from its text."""


def _top_level(lines: list[str]) -> list[tuple[int, str]]:
    """The lines of a template (with their indices) at its outermost indentation, checked
    to be plain YAML (keys or items); a template action there (``{{ if }}``) may drop or
    repeat them."""
    content = [(i, line) for i, line in enumerate(lines) if line.strip()]
    indents = [len(line) - len(line.lstrip(" ")) for _, line in content]
    if not content:
        raise _Unreadable("it is empty")
    base = min(indents)
    top = []
    for (index, line), indent in zip(content, indents, strict=True):
        stripped = line.strip()
        if stripped.startswith("{{") and indent <= base:
            raise _Unreadable(
                "a template action ({{ ... }}) stands at its top level, so which keys it "
                "writes is unknown; put the condition inside the values"
            )
        if indent == base and not stripped.startswith("#"):
            top.append((index, stripped))
    return top


def _template_keys(text: str) -> dict[str, str]:
    """The top-level keys of a mapping template, each with "list" (a sequence follows),
    "null" (no value) or "other". Linear in the template: each key looks at the lines
    between it and the next content line only."""
    lines = text.splitlines()
    keys: dict[str, str] = {}
    for index, stripped in _top_level(lines):
        if stripped.startswith("- "):
            continue  # an item of the key above, written at the key's indentation
        match = re.match(_KEY_LINE, stripped)
        if match is None:
            raise _Unreadable(f"its top-level line {stripped[:40]!r} is not a key")
        key = next(g for g in match.groups()[:3] if g is not None)
        keys[key] = _value_kind(match.group(4), lines, index)
    return keys


def _value_kind(inline: str | None, lines: list[str], index: int) -> str:
    """What follows the key on ``lines[index]``: its inline value, else the next content
    line (an item, or something else), else nothing."""
    if inline:
        inline = inline.split(" #")[0].strip()
        if inline in ("~", "null", "Null", "NULL"):
            return "null"
        return "list" if inline.startswith("[") else "other"
    for after in range(index + 1, len(lines)):  # no slice: that would copy the rest
        stripped = lines[after].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("{{"):
            raise _Unreadable(
                "a template action ({{ ... }}) stands before the first item of a list; "
                "put the condition inside the items"
            )
        return "list" if stripped.startswith("- ") or stripped == "-" else "other"
    return "null"


def _check_list_template(text: str) -> None:
    top = [line for _, line in _top_level(text.splitlines())]
    if not all(line.startswith("- ") or line == "-" for line in top) and top != ["[]"]:
        raise _Unreadable("it is not a list at its top level")


def _refusal(name: Any, where: str, pointer: str, reason: str) -> InputError:
    return InputError(f"ClusterClass patch {name!r} ({where}) sets {pointer} {reason}")


def _follow_up(
    json_patch: Mapping[str, Any],
    pointer: str,
    pointers: Mapping[str, str],
    wanted: _Wanted,
    name: Any,
    where: str,
    *,
    linux_only: bool = False,
) -> list[dict[str, Any]] | None:
    """The literal patches that put the tool's entries back after a patch that sets a
    list (or its parent) as a whole; None when the patch does not wipe them.
    ``linux_only``: the selected kind's dialect has no Windows nodes."""
    value_from = json_patch.get("valueFrom")
    literal = "value" in json_patch
    lists = {p: n for p, n in pointers.items() if p == pointer or p.startswith(pointer + "/")}
    if not lists or json_patch.get("op") not in ("add", "replace"):
        return None
    if pointer in pointers and literal:
        return None  # a literal list: extended in place
    if not literal:
        _check_template_source(value_from, pointer, name, where)
    _check_not_above(lists, pointer, name, where)
    value = json_patch.get("value")
    text = "" if literal or value_from is None else str(value_from["template"])
    seen = repr(value) if literal else text  # what the patch writes, to search
    carried = _carried(seen, wanted)
    if carried:
        raise _refusal(
            name,
            where,
            pointer,
            f"from a value that already writes {carried}, which the tool adds after the patch; "
            "take that out of the value and let the tool write it",
        )
    windows = not linux_only and _is_windows(
        json_patch, pointers.get(pointer), f"ClusterClass patch {name!r} ({where})"
    )
    files, commands = wanted.for_os(windows)
    try:
        kinds: dict[str, str] = {}
        if pointer in lists:
            _check_list_template(text)
        elif literal:
            if not isinstance(value, Mapping):
                raise _Unreadable("its value is not a mapping")
            kinds = {str(k): _literal_kind(v) for k, v in value.items()}
        else:
            kinds = _template_keys(text)
    except _Unreadable as exc:
        raise _refusal(
            name, where, pointer, f"from a template the tool cannot read safely: {exc}"
        ) from None
    return _list_patches(lists, kinds, files, commands, pointer, name, where)


def _check_not_above(lists: Mapping[str, str], pointer: str, name: Any, where: str) -> None:
    """Refuse a patch that sets a level more than one above a list as a whole."""
    deeper = [p for p in lists if p != pointer and "/" in p[len(pointer) + 1 :]]
    if deeper:
        raise _refusal(
            name,
            where,
            pointer,
            f"as a whole, above {', '.join(deeper)}: the tool cannot tell what it leaves there; "
            "patch the fields below it instead",
        )


def _check_template_source(value_from: Any, pointer: str, name: Any, where: str) -> None:
    """Refuse a patch without a literal value whose ``valueFrom`` is no template the
    tool can read (a variable's value it cannot see, or no mapping at all)."""
    if not isinstance(value_from, Mapping):
        raise InputError(f"{where} has neither a value nor a valueFrom mapping")
    if not isinstance(value_from.get("template", ""), str):
        raise InputError(f"{where}.valueFrom.template is not a string")
    if "template" not in value_from:
        variable = value_from.get("variable")
        raise _refusal(
            name,
            where,
            pointer,
            f"from the variable {variable!r}, whose value the tool cannot see or extend; "
            "append with a path ending in '/-' instead, or add the entries to that value yourself",
        )


def _list_patches(
    lists: Mapping[str, str],
    kinds: Mapping[str, str],
    files: Sequence[Any],
    commands: Sequence[Any],
    pointer: str,
    name: Any,
    where: str,
) -> list[dict[str, Any]]:
    """The literal patches that put ``files`` and ``commands`` into the ``lists`` a patch
    at ``pointer`` sets (``kinds``: what its value holds at each key)."""
    patches: list[dict[str, Any]] = []
    for list_pointer, list_name in lists.items():
        entries: Sequence[Any] = files if list_name == "files" else commands
        if not entries:
            continue
        key = list_pointer.rsplit("/", 1)[1]
        state = "list" if list_pointer == pointer else kinds.get(key, "absent")
        if state == "absent":
            patches.append({"op": "add", "path": list_pointer, "value": list(entries)})
        elif state != "list":
            raise _refusal(
                name,
                where,
                pointer,
                f"from a value whose {key} is not a list the tool can add to; write it as a list",
            )
        elif list_name == "files":
            patches += [{"op": "add", "path": f"{list_pointer}/-", "value": f} for f in files]
        else:
            patches += [
                {"op": "add", "path": f"{list_pointer}/0", "value": c} for c in reversed(commands)
            ]
    return patches


_KUBEADM: dialects.Dialect = (
    dialects.KUBEADM
)  # the dialect the Windows rule (nodes/nodeos.py) reads


def _is_windows(
    json_patch: Mapping[str, Any], list_name: str | None, patch: str, ours: Sequence[str] = ()
) -> bool:
    """Whether a patch's value (literal or template) configures Windows nodes, by the one
    rule of nodes/nodeos.py; ``list_name`` names the list the value is (None: the spec
    holding the lists), ``ours`` the tool's files, which count for neither."""
    value_from = json_patch.get("valueFrom")
    template = None
    if "value" not in json_patch and isinstance(value_from, Mapping) and "template" in value_from:
        template = str(value_from["template"])
    from proxy_postrender.nodes import nodeos  # lazy: start-up

    return nodeos.value_is_windows(
        json_patch.get("value"),
        template,
        {"files": _KUBEADM.files_key, "commands": _KUBEADM.commands_key}.get(list_name or ""),
        f"the value of {patch}",
        ignore_paths=ours,
        is_tool=kubeadm.is_tool_command,
    )


def _literal_kind(value: Any) -> str:
    if value is None:
        return "null"
    return "list" if isinstance(value, list) else "other"


def _carried(text: str, wanted: _Wanted) -> str | None:
    """The first of the tool's files or exports that ``text`` already writes."""
    for path in wanted.paths:
        if path in text:
            return path
    match = re.search(_PROXY_EXPORT, text)
    return match.group(0).rstrip("=") if match else None


def _pointers(definition: Mapping[str, Any], where_def: str) -> Mapping[str, str]:
    """The bootstrap lists (pointer -> "files" or "commands") of the templates that the
    definition's selector picks."""
    selector = definition.get("selector")
    if selector is None:
        return {}
    if not isinstance(selector, Mapping):
        raise InputError(f"{where_def}.selector is not a mapping")
    return LIST_POINTERS.get(str(selector.get("kind")), {})


def _selected_kind(definition: Mapping[str, Any]) -> str | None:
    selector = definition.get("selector")
    return str(selector.get("kind")) if isinstance(selector, Mapping) else None


def _wanted(
    settings: NodeSettings | None, env: Any, secret: SecretRef | None, kind: str | None = None
) -> _Wanted:
    """What the tool writes into the templates of ``kind`` (None: kubeadm's) that a class
    names, in the dialect of its row."""
    dialect, level = _TEMPLATE_ROWS.get(kind or "", (dialects.KUBEADM, dialects.TEMPLATE))
    # the class's templates carry no value (nodes/classvars.py): nor do the follow-ups
    files, commands = kubeadm.desired_entries(
        settings, env, secret, shared=True, dialect=dialect, level=level
    )
    windows: list[str] = []
    if settings and env and settings.windows != "skip" and settings.credentials != "secret":
        command = quoting.powershell_machine_env(env)
        windows = [quoting.gate(command, "a preKubeadmCommands entry")]
    paths = []
    if settings:
        paths = [settings.containerd_dropin, *filter(None, [settings.kubelet_dropin])]
        paths += [settings.env_file, kubeadm.CA_FILE, *dialect.env_files.values()]
    return _Wanted(files, commands, windows, paths)


class _WantedByKind:
    """The entries of each template kind a class's patches select, made once per kind."""

    def __init__(self, settings: NodeSettings | None, env: Any, secret: SecretRef | None) -> None:
        self.settings, self.env, self.secret = settings, env, secret
        self.made: dict[str | None, _Wanted] = {}

    def of(self, kind: str | None) -> _Wanted:
        if kind not in self.made:
            self.made[kind] = _wanted(self.settings, self.env, self.secret, kind)
        return self.made[kind]


def plan(
    obj: Mapping[str, Any],
    base: Path,
    target: Target,
    found: ObjectEnv,
    settings: NodeSettings | None,
) -> NodePlan | None:
    """The patches of a ClusterClass that set the kubeadm lists (None: it has none the
    tool extends, and nothing of the tool's is recorded on it)."""
    from proxy_postrender.nodes import classvars  # lazy: start-up

    env = found.env
    on_conflict = settings.on_conflict if settings else "keep"
    result = NodePlan.for_env(found)
    recorded = Record.read(obj, kubeadm.ANNOTATION)
    from proxy_postrender.nodes import ccowned, writers  # lazy: start-up

    owned = ccowned.parse(recorded)
    injecting = bool(settings and env)
    secret = None
    if injecting and settings and settings.credentials == "secret" and settings.secret_name:
        secret = kubeadm.secret_ref(obj, settings)
    by_kind = _WantedByKind(settings if injecting else None, env, secret)
    wanted_commands = by_kind.of(None).linux_commands

    def need_secret_name() -> None:
        if injecting and settings and settings.credentials == "secret" and secret is None:
            raise InputError(
                "a ClusterClass serves many clusters: with spec.nodes.credentials: "
                "secret, set spec.nodes.secretName (a Secret each cluster's "
                "namespace provides)"
            )

    spec: Mapping[str, Any] = obj["spec"] if isinstance(obj.get("spec"), Mapping) else {}
    ccowned.check_runs(spec, owned, _pointers)  # before anything recorded is replaced
    entries: list[str] = []
    now_empty: set[str] = set()
    claimed: set[tuple[int, int, int]] = set()
    ours = classvars.named(writers.as_list(spec.get("patches"), "spec.patches"), classvars.PATCH)
    for i, patch in enumerate(writers.as_list(spec.get("patches"), "spec.patches")):
        if owned.patch is not None and i in ours:
            continue  # the tool's own last patch: planned below
        definitions = patch.get("definitions") if isinstance(patch, Mapping) else None
        for j, definition in enumerate(
            writers.as_list(definitions, f"spec.patches[{i}].definitions")
        ):
            if not isinstance(definition, Mapping):
                continue
            where_def = f"spec.patches[{i}].definitions[{j}]"
            pointers = _pointers(definition, where_def)
            linux_only = _selected_kind(definition) in _LINUX_ONLY
            wanted = by_kind.of(_selected_kind(definition))
            json_patches = writers.as_list(
                definition.get("jsonPatches"), f"{where_def}.jsonPatches"
            )
            list_path = (*base, "spec", "patches", i, "definitions", j, "jsonPatches")
            patch_name = patch.get("name", i) if isinstance(patch, Mapping) else i
            # the tool's patches recorded here (checked above): index of the first -> count
            tool_runs = owned.patches.get((i, j), {})
            old_before = new_before = 0
            k = 0
            while k < len(json_patches):
                if k in tool_runs:  # the tool's own: planned with the patch before them
                    old_before += tool_runs[k]
                    k += tool_runs[k]
                    continue
                json_patch = json_patches[k]
                out_k = k - old_before + new_before
                where = f"{where_def}.jsonPatches[{k}]"
                k += 1
                if not isinstance(json_patch, Mapping):
                    continue
                op, pointer = json_patch.get("op"), str(json_patch.get("path"))
                if op == "remove" and any(
                    p == pointer or p.startswith(pointer + "/") for p in pointers
                ):
                    if injecting:
                        wiped = [p for p in pointers if p == pointer or p.startswith(pointer + "/")]
                        raise InputError(
                            f"ClusterClass patch {patch_name!r} ({where}) does 'remove' on "
                            f"{pointer}, which would wipe the proxy entries in "
                            f"{', '.join(wiped)} when the topology reconciles; patch the fields "
                            "below it instead"
                        )
                    continue
                follow = None
                if injecting:
                    from proxy_postrender.nodes import formats  # lazy: start-up

                    formats.check_patch(json_patch, pointer, pointers, f"{patch_name!r} ({where})")
                    follow = _follow_up(
                        json_patch,
                        pointer,
                        pointers,
                        wanted,
                        patch_name,
                        where,
                        linux_only=linux_only,
                    )
                    if follow:
                        need_secret_name()
                existing = tool_runs.get(k, 0)
                current = json_patches[k : k + existing]
                if existing:
                    claimed.add((i, j, k))
                if (follow or []) != current:
                    result.ops += [DeleteItem((*list_path, x)) for x in range(k, k + existing)]
                    if follow:
                        result.ops.append(InsertItems(list_path, tuple(follow), index=k))
                        _count(result, follow)
                if follow is not None:
                    if follow:
                        entries.append(f"p{i}.d{j}.j{out_k + 1}=patches:{len(follow)}")
                        new_before += len(follow)
                    continue
                if op not in ("add", "replace") or pointer not in pointers:
                    continue
                ident = f"p{i}.d{j}.j{out_k}"
                old_ident = f"p{i}.d{j}.j{k - 1}"  # as the input (an earlier output) has it
                _extend_literal(
                    json_patch,
                    (*list_path, k - 1),
                    pointers[pointer],
                    where,
                    owned,
                    old_ident,
                    ident,
                    wanted.linux_files,
                    wanted.linux_commands,
                    on_conflict,
                    result,
                    entries,
                    now_empty,
                    need_secret_name,
                    linux_only=linux_only,
                )
    # tool patches recorded where no patch needs them any more (a changed ClusterClass)
    for (i, j), runs in owned.patches.items():
        list_path = (*base, "spec", "patches", i, "definitions", j, "jsonPatches")
        for start, count in runs.items():
            if (i, j, start) not in claimed:
                result.ops += [DeleteItem((*list_path, x)) for x in range(start, start + count)]
    if result.changed_commands or any("=commands:" in e for e in entries):
        result.commands = len(wanted_commands)
    if secret is not None and entries:
        result.notes.append(
            f"the files come from Secret {secret.name}, which is not emitted for a ClusterClass: "
            "the run emits it for its topology Clusters, in their namespaces; create it in the "
            "namespaces of the other clusters"
        )
    owned_idents = {entry.partition("=")[0] for entry in entries}
    if now_empty & owned_idents:
        entries.append("empty=" + ",".join(sorted(now_empty & owned_idents)))
    entries += _own_entries(obj, base, spec, found, settings if injecting else None, owned, result)
    if not entries and not recorded.current and not result.ops:
        return None  # a ClusterClass that does not touch the lists: not a target
    result.ops += recorded.ops(obj, base, entries)
    return result


def _own_entries(
    obj: Mapping[str, Any],
    base: Path,
    spec: Mapping[str, Any],
    found: ObjectEnv,
    settings: NodeSettings | None,
    owned: Owned,
    result: NodePlan,
) -> list[str]:
    """The class's variable and its last patch (nodes/classvars.py), planned into
    ``result``; the record's entries for them."""
    from proxy_postrender.nodes import classvars  # lazy: start-up

    variable = patch = None
    env = found.env
    if settings is not None and classvars.applies(settings, env) and found.index is not None:
        selected = classvars.slots(obj, found.index)
        result.notes += [f"not in the class's patch: {why}" for why in selected.left_out]
        if selected:
            if settings.forbid_inline_password:
                raise InputError(
                    "spec.credentials.secretRef keeps the proxy password out of the "
                    "workloads, but spec.nodes.credentials: inline (the default) would write "
                    "it in clear into this object's node bootstrap (the default of its "
                    f"variable {classvars.VARIABLE}): set spec.nodes.credentials: secret "
                    "(or spec.nodes.enabled: false)"
                )
            default = classvars.value_of(env, f"ClusterClass {_name(obj)} (its default)")
            variable = classvars.definition(default)
            patch = classvars.patch(selected, env, settings.env_file)
    spec_path = (*base, "spec")
    if not isinstance(obj.get("spec"), Mapping):
        if variable is None:
            return []
        raise InputError("spec is not a mapping")
    ops, var_state = classvars.plan_entry(
        spec, spec_path, "variables", classvars.VARIABLE, owned.variable, variable
    )
    more, patch_state = classvars.plan_entry(
        spec, spec_path, "patches", classvars.PATCH, owned.patch, patch, last=True
    )
    result.ops += ops + more
    if variable is not None:
        result.notes.append(
            f"variable {classvars.VARIABLE} and patch {classvars.PATCH}: each cluster's nodes "
            "get their own proxy and NO_PROXY when the topology reconciles"
        )
    entries = [] if var_state is None else [f"variable={var_state}"]
    return entries + ([] if patch_state is None else [f"patch={patch_state}"])


def _name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return str(name)


def _count(result: NodePlan, patches: list[dict[str, Any]]) -> None:
    """Say in the report what the follow-up patches write."""
    for patch in patches:
        value = patch["value"]
        if str(patch["path"]).rsplit("/", 1)[-1] in ("files", "-"):
            items = value if isinstance(value, list) else [value]
            result.files_added += [str(f["path"]) for f in items if isinstance(f, Mapping)]
        else:
            result.changed_commands = True


def _extend_literal(
    json_patch: Mapping[str, Any],
    path: Path,
    list_name: str,
    where: str,
    owned: Owned,
    old_ident: str,
    ident: str,
    wanted_files: list[dict[str, Any]],
    wanted_commands: list[str],
    on_conflict: str,
    result: NodePlan,
    entries: list[str],
    now_empty: set[str],
    need_secret_name: Any,
    *,
    linux_only: bool = False,
) -> None:
    """A patch whose literal ``value`` is the whole list: the tool's entries go into it."""
    from proxy_postrender.nodes import writers  # lazy: start-up

    value = json_patch.get("value")
    writers.as_list(value, f"{where}.value")  # a list or null, before it is looked at
    ours = [*owned.files.get(old_ident, []), *(str(f["path"]) for f in wanted_files)]
    if not linux_only and _is_windows(
        json_patch, list_name, f"the ClusterClass patch at {where}", ours
    ):
        return  # a Windows list written out in full: left as it is
    if wanted_files or wanted_commands:
        need_secret_name()
    # a "value: []" comes back as "[]" when the tool takes its entries out again
    restore = old_ident in owned.empty or value == []
    if restore:
        now_empty.add(ident)
    args = (json_patch, path, where, owned, old_ident, ident, result, entries, restore)
    if list_name == "files":
        _extend_files(*args, wanted_files, on_conflict)
    else:
        _extend_commands(*args, wanted_commands)


def _extend_files(
    json_patch: Mapping[str, Any],
    path: Path,
    where: str,
    owned: Owned,
    old_ident: str,
    ident: str,
    result: NodePlan,
    entries: list[str],
    restore: bool,
    wanted_files: list[dict[str, Any]],
    on_conflict: str,
) -> None:
    """The "file list" writer on a patch's literal list of files, with its record entry."""
    from proxy_postrender.nodes import writers  # lazy: start-up

    files = writers.plan_files(
        json_patch,
        path,
        "value",
        where,
        owned.files.get(old_ident, []),
        wanted_files,
        on_conflict,
        restore_empty=restore,
    )
    result.ops += files.ops
    result.files_added += files.added
    result.files_kept += files.kept
    if files.owned:
        entries.append(f"{ident}=files:{','.join(files.owned)}")


def _extend_commands(
    json_patch: Mapping[str, Any],
    path: Path,
    where: str,
    owned: Owned,
    old_ident: str,
    ident: str,
    result: NodePlan,
    entries: list[str],
    restore: bool,
    wanted_commands: list[str],
) -> None:
    """The "command prefix" writer on a patch's literal list of commands."""
    from proxy_postrender.nodes import writers  # lazy: start-up

    ops = writers.plan_commands(
        json_patch,
        path,
        "value",
        where,
        owned.commands.get(old_ident, 0),
        wanted_commands,
        restore_empty=restore,
        is_tool=kubeadm.is_tool_command,
        record=kubeadm.ANNOTATION,
    )
    result.ops += ops
    result.changed_commands |= bool(ops)
    if wanted_commands:
        entries.append(f"{ident}=commands:{len(wanted_commands)}")
