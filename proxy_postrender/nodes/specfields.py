"""Node bootstrap by fields of the spec: the dialect rows whose writer is the "field
setter" (proxy_postrender/dialects.py; MicroK8s: ``initConfiguration.httpProxy``,
``httpsProxy``, ``noProxy``, and snapd's ``snapstoreHTTPProxy``/``snapstoreHTTPSProxy``).

The row's ``fields`` name each field and the variable it takes; nodes/writers.py's
``plan_fields`` sets them and says what each held before. The record
(``proxy-postrender.io/node-bootstrap``, as for the other dialects) keeps that, and
the level the tool created on the way to the spec, so that ``--remove`` gives the
input back. The values end up in the object itself (no ``contentFrom``): secret mode
is refused. Pure data in, operations out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender import dialects
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import kubeadm, writers
from proxy_postrender.nodes.kubeadm import NodePlan, NodeSettings
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path
from proxy_postrender.record import Record
from proxy_postrender.targets import Target
from proxy_postrender.yamltext.ops import AddKey, DeleteKey, Op, SetValue

# what a shell line of MicroK8s' bootstrap (Go's %q, in double quotes) would change
_SHELL_SPECIAL: frozenset[str] = frozenset("$`")


def wanted_fields(
    dialect: dialects.Dialect, env: Sequence[tuple[str, str]], where: str
) -> list[tuple[str, str]]:
    """``(field, value)`` for each field of the row whose variable the profile gives.

    >>> wanted_fields(dialects.MICROK8S, [("HTTP_PROXY", "http://p:3128")], "spec")[:2]
    [('httpProxy', 'http://p:3128'), ('snapstoreHTTPProxy', 'http://p:3128')]
    """
    values = dict(env)
    found = []
    for name, variable in dialect.fields:
        value = values.get(variable)
        if value is None:
            continue
        if any(c in _SHELL_SPECIAL or not " " <= c <= "~" for c in value):
            raise InputError(
                f"{where}.{name}: the value of {variable} holds a character that the "
                f"{dialect.name} bootstrap script would change ('$', '`' or not printable "
                "ASCII; it passes the value in double quotes): percent-encode it in the URL"
            )
        found.append((name, value))
    return found


def _parse(recorded: Record) -> tuple[dict[str, Any], kubeadm._Created | None]:
    created: kubeadm._Created | None = None
    for entry in recorded.entries:
        key, _, value = entry.partition("=")
        if key == "created" and (made := kubeadm._Created.parse(value)) is not None:
            created = made
        elif key != "field":
            raise InputError(f"annotation {kubeadm.ANNOTATION} is malformed near {entry!r}")
    return writers.parse_fields(recorded.entries), created


def _refuse_secret(dialect: dialects.Dialect) -> None:
    raise InputError(
        f"spec.nodes.credentials: secret is not supported for {dialect.name} nodes: they "
        "take the proxy only in fields of this spec (no contentFrom), so the values would "
        "be in the object; use credentials: inline, or spec.nodes.enabled: false"
    )


def plan(
    obj: Mapping[str, Any],
    base: Path,
    target: Target,
    found: ObjectEnv,
    settings: NodeSettings | None,
) -> NodePlan:
    """The fields of the spec at ``target.paths[0]`` set from the object's variables
    (``settings`` None: given back what they held before the tool set them)."""
    dialect, row = kubeadm.dialect_of(target)
    spec_path = tuple(str(step) for step in target.paths[0])
    where = ".".join(spec_path)
    result = NodePlan.for_env(found)
    recorded = kubeadm.node_record(obj, found)
    owned, created = _parse(recorded)
    wanted: list[tuple[str, str]] = []
    if found.env and settings is not None:
        if settings.credentials == "secret":
            _refuse_secret(dialect)
        result.notes += dialect.notes
        if settings.ca_bundle:  # no field takes a CA: said, as for Talos, not dropped silently
            result.notes.append(
                f"the proxy's CA (spec.caBundle) is not installed on {dialect.name} nodes"
            )
        wanted = wanted_fields(dialect, found.env, where)
        result.owned.append(wanted)
    gap = kubeadm._gap(obj, spec_path)
    spec: Any = obj
    for step in spec_path if gap is None else ():
        spec = spec[step]
    if gap is None and not spec and wanted:
        gap = kubeadm._Created(spec_path, "empty")  # "{}": filled, and given back
    if gap is not None:
        return _plan_missing(obj, base, row, recorded, result, spec_path, gap, wanted)
    on_conflict = settings.on_conflict if settings else "keep"
    wanted = _one_proxy(spec, owned, wanted, on_conflict, where, result)
    fields = writers.plan_fields(spec, (*base, *spec_path), where, owned, wanted, on_conflict)
    result.ops += fields.ops
    result.fields_set = [f"{where}.{name}" for name in fields.set]
    result.files_kept = [f"{where}.{name}" for name in fields.kept]
    entries = list(fields.entries)
    if created is not None:
        if entries:
            entries.append(created.entry())
        else:
            restore = _restore(obj, base, spec_path, created, owned)
            result.ops = result.ops if restore is None else [restore]
    result.ops += recorded.ops(obj, base, entries)
    return result


def _plan_missing(
    obj: Mapping[str, Any],
    base: Path,
    row: dialects.BootstrapKind,
    recorded: Record,
    result: NodePlan,
    spec_path: tuple[str, ...],
    gap: kubeadm._Created,
    wanted: Sequence[tuple[str, str]],
) -> NodePlan:
    """The spec (or a level above it) is absent, null or ``{}``: created with the fields."""
    where = ".".join(spec_path)
    if not wanted:
        result.skipped = f"no {where}"
        result.ops += recorded.ops(obj, base, [])
        return result
    if gap.path != spec_path:
        kubeadm._check_level(obj, row, spec_path, gap)
    value: Any = dict(wanted)
    for step in reversed(spec_path[len(gap.path) :]):
        value = {step: value}
    level = (*base, *gap.path)
    op: Op = SetValue(level, value)
    if gap.was == "absent":
        op = AddKey(level[:-1], gap.path[-1], value)
    result.fields_set = [f"{where}.{name}" for name, _ in wanted]
    if gap.path != spec_path or gap.was != "empty":
        shown = {"absent": "missing", "null": "null", "empty": "{}"}[gap.was]
        result.notes.append(f"created {where} ({'.'.join(gap.path)} was {shown})")
    entries = [f"{writers.FIELD_ENTRY}{name}" for name, _ in wanted]
    # first: when the metadata ends where the new level goes, the annotation comes first
    result.ops = [*recorded.ops(obj, base, [*entries, gap.entry()]), op]
    return result


def _restore(
    obj: Mapping[str, Any],
    base: Path,
    spec_path: tuple[str, ...],
    created: kubeadm._Created,
    owned: Mapping[str, Any],
) -> Op | None:
    """The one operation that gives back what the tool created a level in place of, when
    nothing but the tool's fields (all absent before) is under it; else None."""
    depth = len(created.path)
    if spec_path[:depth] != created.path:
        return None
    node: Any = obj
    for index, step in enumerate(spec_path):
        if not isinstance(node, Mapping) or (index >= depth and set(node) != {step}):
            return None
        node = node.get(step)
    mine = {name for name, was in owned.items() if was.state == "absent"}
    if not isinstance(node, Mapping) or not set(node) <= mine:
        return None
    level = (*base, *created.path)
    if created.was == "absent":
        return DeleteKey(level)
    return SetValue(level, None if created.was == "null" else {})


def _one_proxy(
    spec: Mapping[str, Any],
    owned: Mapping[str, Any],
    wanted: list[tuple[str, str]],
    on_conflict: str,
    where: str,
    result: NodePlan,
) -> list[tuple[str, str]]:
    """Under ``onConflict: keep``, a spec that sets one of the fields itself keeps all of
    them: setting the others would give its nodes two proxies (the manifest's for one
    protocol, the profile's for the other). Said in --report; none of the tool's stay."""
    if on_conflict != "keep":
        return wanted
    theirs = [
        name
        for name, value in wanted
        if name not in owned and spec.get(name) is not None and spec.get(name) != value
    ]
    if not theirs:
        return wanted
    result.notes.append(
        f"{where} sets {', '.join(theirs)} itself: the tool leaves all of its proxy fields "
        "to the manifest (onConflict: keep), so that its nodes use one proxy"
    )
    return []
