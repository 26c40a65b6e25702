"""Plan the env-var changes for the pod templates of one object.

Pure data in, operations out: this module never looks at text. What the tool
injected is recorded in the object annotation ``proxy-postrender.io/injected``
(``container=VAR,VAR;other=VAR``) so that a second run is a no-op, a run with
a changed profile replaces exactly those entries, and ``remove`` strips them.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Final, TypeAlias

    from proxy_postrender.pods import envfrom

from proxy_postrender.errors import InputError
from proxy_postrender.noproxy import advice, syntax
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path, is_mapping
from proxy_postrender.plans import Plan
from proxy_postrender.pods import selection
from proxy_postrender.pods.selection import WorkloadSettings
from proxy_postrender.record import Record, escape, split_spelling, unescape, with_spelling
from proxy_postrender.structs import field
from proxy_postrender.targets import Target
from proxy_postrender.yamltext.ops import Op, SetValue, update_list
from proxy_postrender.yamltext.tree import spelling

# (Constants here are Final: the compiled build reads them from C variables, not
# from the module's dict.)
ANNOTATION: Final = "proxy-postrender.io/injected"
# Lists of containers inside a pod spec that get the variables, in this order.
CONTAINER_LISTS: Final[tuple[str, ...]] = ("initContainers", "containers")


class ObjectPlan(Plan):
    containers: int = 0
    # per container name: variables added, ours re-valued, ours dropped,
    # set by the manifest and left alone, set by the manifest and overridden
    injected: dict[str, list[str]] = field(default_factory=dict)
    updated: dict[str, list[str]] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)
    kept: dict[str, list[str]] = field(default_factory=dict)
    overridden: dict[str, list[str]] = field(default_factory=dict)
    kept_no_proxy: dict[str, dict[str, str]] = field(default_factory=dict)  # values kept
    # set through envFrom: "VAR (its source)"; the NO_PROXY variables written as the
    # manifest's entries, then the profile's, and the manifest's values merged; the
    # sources the stream does not hold
    through: dict[str, list[str]] = field(default_factory=dict)
    merged: dict[str, list[str]] = field(default_factory=dict)
    merged_no_proxy: dict[str, dict[str, str]] = field(default_factory=dict)
    unknown_sources: dict[str, list[str]] = field(default_factory=dict)

    def summary(self) -> str:
        return f"{self.containers} containers"

    def reads_namespace_objects(self) -> bool:
        return self.skipped is None and bool(self.containers)

    def describe(self) -> list[str]:
        lines = [f"    skipped: {self.skipped}"] if self.skipped else []
        lines += _per_container("injected", self.injected)
        lines += _per_container("updated", self.updated)
        lines += _per_container("removed", self.removed)
        lines += _per_container("overridden", self.overridden)
        lines += _per_container("kept (set by the manifest)", self.kept)
        lines += _per_container("set through envFrom", self.through)
        lines += [
            f"    merged {container}: {', '.join(names)} (the manifest's entries, then the "
            "profile's)"
            for container, names in self.merged.items()
        ]
        lines += _mixed_pairs(self.kept, self.injected)
        for container, values in self.kept_no_proxy.items():
            lines += [f"    warning {w}" for w in advice.for_kept_values(container, values)]
        for container, values in self.merged_no_proxy.items():
            said: list[str] = []  # each alone: the two are merged into one list
            for var, value in values.items():
                said += advice.for_kept_values(container, {var: value})
            lines += [f"    warning {w}" for w in dict.fromkeys(said)]  # each said once
        lines += [
            f"    envFrom {container}: {source}; what it sets is not known (the tool's env "
            "entries win over it)"
            for container, sources in self.unknown_sources.items()
            for source in sources
        ]
        return lines


def _per_container(label: str, entries: dict[str, list[str]]) -> list[str]:
    return [f"    {label} {container}: {', '.join(names)}" for container, names in entries.items()]


def _mixed_pairs(plan_kept: dict[str, list[str]], plan_injected: dict[str, list[str]]) -> list[str]:
    """Warn where a container keeps one case of a variable and gets the other from the profile."""
    lines = []
    for container, kept in plan_kept.items():
        injected = set(plan_injected.get(container, []))
        for var in kept:
            twin = var.lower() if var.isupper() else var.upper()
            if twin in injected:
                lines.append(
                    f"    warning {container}: {var} comes from the manifest but {twin} from the "
                    "profile; clients reading the other case may use a different proxy"
                )
    return lines


def parse_entries(entries: list[str]) -> dict[str, set[str]]:
    """``container=VAR,VAR`` entries: the variables the tool owns per container."""
    owned: dict[str, set[str]] = {}
    for entry in entries:
        container, sep, names = entry.partition("=")
        if not sep or not container:
            raise InputError(f"annotation {ANNOTATION} is malformed near {entry!r}")
        owned[container] = {n for n in names.split(",") if n}
    return owned


def _containers(
    pod_spec: Mapping[str, Any], where: str
) -> list[tuple[str, int, Mapping[str, Any]]]:
    found: list[tuple[str, int, Mapping[str, Any]]] = []
    for list_key in CONTAINER_LISTS:
        items = pod_spec.get(list_key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise InputError(f"{where}.{list_key} is not a list")
        for index, container in enumerate(items):
            if not is_mapping(container):
                raise InputError(f"{where}.{list_key}[{index}] is not a mapping")
            name = container.get("name")
            if not isinstance(name, str) or not name:
                raise InputError(f"{where}.{list_key}[{index}] has no name")
            found.append((list_key, index, container))
    return found


def _env_items(container: Mapping[str, Any], where: str) -> list[Mapping[str, Any]] | None:
    env = container.get("env")
    if env is None:
        return None
    if not isinstance(env, list):
        raise InputError(f"{where}.env is not a list")
    for index, item in enumerate(env):
        if not is_mapping(item) or not isinstance(item.get("name"), str):
            raise InputError(f"{where}.env[{index}] is not a mapping with a name")
    return env


def pod_spec_at(obj: Mapping[str, Any], spec_path: Path) -> Any:
    """The pod spec (or template) at ``spec_path``; None when the path leads nowhere."""
    node: Any = obj
    for step in spec_path:
        if is_mapping(node):
            node = node.get(step)
        elif isinstance(node, list) and isinstance(step, int) and -len(node) <= step < len(node):
            node = node[step]
        else:
            return None
    return node


def plan(
    obj: Mapping[str, Any],
    base: Path,
    target: Target,
    env: ObjectEnv,
    settings: WorkloadSettings,
) -> ObjectPlan:
    """Operations (paths from the document root) for the pod specs of one object."""
    paths = target.paths
    result = ObjectPlan()
    recorded = Record.read(obj, ANNOTATION)
    previous = parse_entries(recorded.entries)
    record: dict[str, list[str]] = {}
    wanted = settings.wanted(env.env)
    if wanted:
        reason = settings.object_choice(obj, [pod_spec_at(obj, p[:-1]) for p in paths])
        if reason is not None:
            result.skipped = reason
            wanted = ()  # not selected: what the tool injected earlier goes
    found = []
    for spec_path in paths:
        pod_spec = pod_spec_at(obj, spec_path)
        if pod_spec is None:
            continue
        where = ".".join(str(s) for s in spec_path)
        if not is_mapping(pod_spec):
            raise InputError(f"{where} is not a mapping")
        found += [(spec_path, where, c) for c in _containers(pod_spec, where)]
    named = (
        selection.named_containers(
            obj,
            [c["name"] for _, _, (_, _, c) in found],
            [pod_spec_at(obj, p[:-1]) for p in paths],
        )
        if wanted
        else None
    )
    sources = env.sources if wanted else None
    namespace = _namespace(obj, settings)
    names = frozenset(var for var, _ in wanted)
    mounted: set[tuple[str | int, ...]] = set()  # pod specs with a container that gets the CA
    owned_volume: set[tuple[str | int, ...]] = set()  # pod specs whose CA volume is the tool's
    for spec_path, where, (list_key, index, container) in found:
        name = container["name"]
        chosen = wanted
        if chosen and (
            not settings.container_choice(name, list_key == "initContainers")
            or (named is not None and name not in named)
        ):
            chosen = ()
        container_path = (*base, *spec_path, list_key, index)
        here = f"{where}.{list_key}[{index}]"
        had_mount = CA_MARK in previous.get(name, set())
        if had_mount:
            owned_volume.add(spec_path)
        ca = settings.ca if chosen else None
        if ca is not None:
            _check_mount_free(container, ca, had_mount, here)
            mounted.add(spec_path)
        if ca is not None or had_mount:
            mount = ca.mount() if ca else None
            result.ops.extend(_owned_entry(container, container_path, "volumeMounts", mount))
        chart = None  # a container without envFrom
        if sources is not None and chosen and "envFrom" in container:
            from proxy_postrender.pods import envfrom  # lazy: only containers with envFrom

            chart = envfrom.read(container, here, namespace, sources, names)
            if chart.unknown:
                result.unknown_sources[name] = list(chart.unknown)
        owned = _plan_container(
            container,
            container_path,
            here,
            settings.on_conflict,
            chosen,
            previous.get(name, set()),
            result,
            chart,
        )
        if ca is not None:
            owned.append(CA_MARK)
        if owned:
            _check_recordable(name, here)
            record[name] = owned
        result.containers += 1
    for spec_path in paths:
        pod_spec = pod_spec_at(obj, spec_path)
        if not is_mapping(pod_spec) or not (spec_path in mounted or spec_path in owned_volume):
            continue
        volume = settings.ca.volume() if settings.ca and spec_path in mounted else None
        if volume is not None and spec_path not in owned_volume:
            _check_volume_free(pod_spec, ".".join(str(s) for s in spec_path))
        result.ops.extend(_owned_entry(pod_spec, (*base, *spec_path), "volumes", volume))
    if not result.containers:
        result.skipped = "no containers in its pod template"
    entries = [f"{name}={','.join(names)}" for name, names in record.items()]
    result.ops.extend(recorded.ops(obj, base, entries))
    return result


CA_MARK: Final = "+ca"  # in a container's record: the tool mounted the proxy CA there
# In a container's record: its env was null ("env:") or [] before the tool filled it.
NULL_ENV_MARK: Final = "+null-env"
EMPTY_ENV_MARK: Final = "+empty-env"
# What separates the record's entries, a container from its variables, and variables.
_RECORD_SEPARATORS: Final = frozenset(";=,")


def _check_recordable(name: str, where: str) -> None:
    """A container name the record can hold. Kubernetes takes only DNS labels (lower-case
    letters, digits, '-') as container names, so a name with a separator of the record
    belongs to no object the API server accepts: refused rather than escaped."""
    if _RECORD_SEPARATORS.intersection(name):
        raise InputError(
            f"{where} is named {name!r}, which is no valid container name (Kubernetes takes "
            "DNS labels: lower-case letters, digits and '-'), and the record of what the "
            f"tool injects ({ANNOTATION}) could not be read back"
        )


def _check_mount_free(
    container: Mapping[str, Any], ca: selection.CaMount, owned: bool, where: str
) -> None:
    mounts = container.get("volumeMounts")
    # (not a list: _owned_entry says so, naming the container)
    for mount in mounts if isinstance(mounts, list) else []:
        if not is_mapping(mount):
            continue
        if mount.get("name") == selection.CA_VOLUME and not owned:
            raise InputError(
                f"{where} already mounts a volume named {selection.CA_VOLUME}, the name the "
                "tool uses for the proxy CA"
            )
        if mount.get("name") != selection.CA_VOLUME and mount.get("mountPath") == ca.mount_path:
            raise InputError(
                f"{where} already mounts something at {ca.mount_path}; set spec.caBundle.mountPath "
                "to another path"
            )


def _check_volume_free(pod_spec: Mapping[str, Any], where: str) -> None:
    volumes = pod_spec.get("volumes")
    for volume in volumes if isinstance(volumes, list) else []:
        if is_mapping(volume) and volume.get("name") == selection.CA_VOLUME:
            raise InputError(
                f"{where}.volumes already has a volume named {selection.CA_VOLUME}, the name the "
                "tool uses for the proxy CA"
            )


def _owned_entry(
    parent: Mapping[str, Any], path: Path, key: str, wanted: dict[str, Any] | None
) -> list[Op]:
    """Keep the one entry named ``selection.CA_VOLUME`` in ``parent[key]`` as ``wanted``
    (None: take it out); the name is the tool's, so no record is needed."""
    items = parent.get(key)
    if items is not None and not isinstance(items, list):
        raise InputError(f"{key} is not a list")
    ours = [
        i
        for i, item in enumerate(items or [])
        if is_mapping(item) and item.get("name") == selection.CA_VOLUME
    ]
    if wanted is not None and len(ours) == 1 and dict((items or [])[ours[0]]) == wanted:
        return []
    if wanted is None and not ours:
        return []
    return update_list(parent, path, key, set(ours), [wanted] if wanted else [])


Value: TypeAlias = "str | Mapping[str, Any]"  # a literal value, or a valueFrom source


def env_item(var: str, value: Value) -> dict[str, Any]:
    return (
        {"name": var, "value": value}
        if isinstance(value, str)
        else {
            "name": var,
            "valueFrom": value,
        }
    )


def _is(item: Mapping[str, Any], value: Value) -> bool:
    """Whether an env entry is exactly what the tool would write for ``value``."""
    return dict(item) == env_item(str(item.get("name")), value)


def _plan_container(
    container: Mapping[str, Any],
    path: Path,
    where: str,
    on_conflict: str,
    wanted: tuple[tuple[str, Value], ...],
    owned: set[str],
    result: ObjectPlan,
    chart: envfrom.FromSources | None,
) -> list[str]:
    """Plan one container (``chart``: what its envFrom sets); return the variables the
    tool owns in it afterwards."""
    name = container["name"]
    env_path = (*path, "env")
    desired = dict(wanted)
    env = _env_items(container, where)
    owned, was = _was(owned)
    in_env = {item["name"] for item in env or []}
    if on_conflict == "keep" or was:
        was = _merged_env(env or [], owned, was, desired, result, name)
    left = (
        _counted(chart, name, on_conflict, desired, in_env, owned, result)
        if chart is not None and chart.values
        else set()
    )
    ops: list[Op] = []
    ours: set[str] = set()
    present: set[str] = set()
    deleted: set[int] = set()
    appended: list[dict[str, Any]] = []

    def set_value(index: int, item: Mapping[str, Any], value: Value) -> None:
        plain = set(item) == {"name", "value"} and isinstance(item["value"], str)
        if plain and isinstance(value, str):
            if item["value"] != value:
                ops.append(SetValue((*env_path, index, "value"), value))
        else:  # a valueFrom, extra fields, or a literal becoming a reference: replace it
            deleted.add(index)
            appended.append(env_item(item["name"], value))

    for index, item in enumerate(env or []):
        var = item["name"]
        if var in present:
            if var in ours:  # a later duplicate would shadow the tool's value (found by fuzzing)
                deleted.add(index)
            continue  # another duplicate: the manifest's, left as it is
        present.add(var)
        if var in owned:
            if var not in desired and var in was:  # the manifest's own value, back
                ops.append(SetValue((*env_path, index, "value"), was[var], like=True))
                result.removed.setdefault(name, []).append(var)
                continue
            if var not in desired:
                deleted.add(index)
                result.removed.setdefault(name, []).append(var)
                continue
            if var in was and isinstance(desired[var], str) and _plain(item):
                ours.add(var)
                if item["value"] != desired[var]:  # merged anew: the chart's value kept
                    ops.append(SetValue((*env_path, index, "value"), desired[var], like=True))
                continue
            ours.add(var)
            if not _is(item, desired[var]):
                set_value(index, item, desired[var])
                result.updated.setdefault(name, []).append(var)
        elif var in was and _plain(item) and isinstance(desired.get(var), str):
            ours.add(var)  # the chart's NO_PROXY, merged with the profile's (keep)
            if item["value"] != desired[var]:
                ops.append(SetValue((*env_path, index, "value"), desired[var], like=True))
        elif var in desired:
            if on_conflict == "fail":
                raise InputError(f"container {name!r} already sets {var} (onConflict: fail)")
            if on_conflict == "override":
                set_value(index, item, desired[var])
                ours.add(var)
                result.overridden.setdefault(name, []).append(var)
            else:
                result.kept.setdefault(name, []).append(var)
                if var in ("NO_PROXY", "no_proxy") and isinstance(item.get("value"), str):
                    result.kept_no_proxy.setdefault(name, {})[var] = item["value"]
    missing = [env_item(var, desired[var]) for var, _ in wanted if var not in present | left]
    if missing:
        ours.update(item["name"] for item in missing)
        result.injected[name] = [item["name"] for item in missing]
    appended.extend(missing)

    # "env:", "env: null" or "env: []" the tool fills: the record keeps which (and how
    # it was written, when not the plain way), so that taking the entries out again
    # gives the input's own value back
    mark: str | None = None
    spelled: str | None = None
    for part in owned:
        if part.startswith(("+null-env", "+empty-env")):
            flag, text = split_spelling(part)
            if flag in (NULL_ENV_MARK, EMPTY_ENV_MARK):
                mark, spelled = flag, text
    if mark is None and appended and "env" in container and not env:
        mark = NULL_ENV_MARK if container["env"] is None else EMPTY_ENV_MARK
        spelled = spelling(container, "env")
    result.ops.extend(ops)
    result.ops.extend(
        update_list(
            container,
            path,
            "env",
            deleted,
            appended,
            restore_empty=mark == EMPTY_ENV_MARK,
            restore_null=mark == NULL_ENV_MARK,
            restore_text=spelled,
        )
    )
    kept = [f"{var}:{escape(was[var])}" if var in was else var for var, _ in wanted if var in ours]
    return [*kept, with_spelling(mark, spelled)] if kept and mark else kept


def _was(owned: set[str]) -> tuple[set[str], dict[str, str]]:
    """The variables the tool owns in a container, and the manifest's own values of those
    it merged (``VAR:ESCAPED`` in the record: a NO_PROXY the chart sets in ``env``)."""
    names: set[str] = set()
    was: dict[str, str] = {}
    for part in owned:
        var, sep, value = part.partition(":")
        if sep and not part.startswith("+"):
            was[var] = unescape(value)
        names.add(var if sep and not part.startswith("+") else part)
    return names, was


def _plain(item: Mapping[str, Any]) -> bool:
    return set(item) == {"name", "value"} and isinstance(item["value"], str)


def _merged_env(
    env: list[Mapping[str, Any]],
    owned: set[str],
    was: dict[str, str],
    desired: dict[str, Value],
    result: ObjectPlan,
    name: str,
) -> dict[str, str]:
    """Under ``keep``: a NO_PROXY the manifest sets in the container's own ``env`` (a
    plain value; or its value before an earlier run merged it, ``was``) is merged with
    the profile's, the manifest's entries first, into every NO_PROXY variable the tool
    writes. Returns the manifest's values of the entries the tool now merges."""
    # in the order of the container's env, whether recorded (``was``: a set's order,
    # which changes from run to run) or read: one merged list whatever ran before
    chart: dict[str, str] = {}
    for item in env:
        var = item["name"]
        if var not in _NO_PROXY or var in chart:
            continue
        if var in was:
            chart[var] = was[var]
        elif var not in owned and _plain(item):
            chart[var] = item["value"]
    chart.update((var, was[var]) for var in _NO_PROXY if var in was and var not in chart)
    profile = next((v for k, v in desired.items() if k in _NO_PROXY and isinstance(v, str)), None)
    chart = {var: value for var, value in chart.items() if value}
    if not chart or profile is None:
        return was  # (removing: the values to give back)
    value = syntax.merged_lists(list(chart.values()), profile)
    merged: list[str] = [var for var in _NO_PROXY if var in desired]
    desired.update((var, value) for var in merged)
    result.merged[name] = merged
    result.merged_no_proxy[name] = chart
    return chart


_NO_PROXY: Final = ("NO_PROXY", "no_proxy")


def _namespace(obj: Mapping[str, Any], settings: WorkloadSettings) -> str:
    """The object's namespace, else the release's (--namespace), else "" (unknown)."""
    metadata = obj.get("metadata")
    own = metadata.get("namespace") if is_mapping(metadata) else None
    return own if isinstance(own, str) and own else settings.namespace or ""


def _counted(
    chart: envfrom.FromSources,
    name: str,
    on_conflict: str,
    desired: dict[str, Value],
    in_env: set[str],
    owned: set[str],
    result: ObjectPlan,
) -> set[str]:
    """What the container's ``envFrom`` sets counts as set by the manifest, where its own
    ``env`` does not set it (``in_env``: the names there; ``owned``: the tool's): kept,
    overridden or refused per ``on_conflict``. Under ``keep`` a NO_PROXY it sets is
    merged: ``desired`` gets, for each NO_PROXY variable its ``env`` leaves, the
    manifest's entries first, then the profile's. Returns the variables left to the
    sources (the tool writes none of them)."""
    explicit = in_env - owned  # set by the manifest's own env entries: they win
    given = {var: chart.value(var) or "" for var in desired if var not in explicit}
    given = {var: value for var, value in given.items() if value}
    if not given:
        return set()
    result.through[name] = [f"{var} ({chart.source(var)})" for var in given]
    merged: list[str] = []
    from_chart = [given[var] for var in _NO_PROXY if var in given]
    if on_conflict == "keep" and from_chart:
        profile = next((v for k, v in desired.items() if k in _NO_PROXY and isinstance(v, str)), "")
        value = syntax.merged_lists(from_chart, profile)
        merged = [var for var in _NO_PROXY if var in desired and var not in explicit]
        desired.update((var, value) for var in merged)
        result.merged[name] = merged
        result.merged_no_proxy[name] = {var: given[var] for var in _NO_PROXY if var in given}
    left: set[str] = set()
    for var in given:
        if var in in_env or var in merged:
            continue  # the tool's own entry (an earlier run's), or merged
        if on_conflict == "fail":
            raise InputError(
                f"container {name!r} already sets {var} through envFrom "
                f"({chart.source(var)}) (onConflict: fail)"
            )
        if on_conflict == "override":
            result.overridden.setdefault(name, []).append(var)
        else:
            left.add(var)
            result.kept.setdefault(name, []).append(var)
    return left
