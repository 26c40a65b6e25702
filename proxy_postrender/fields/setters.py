"""Field setters: fields of other kinds (add-on configuration objects) set from profile values.

A ``spec.targets`` entry with ``set`` names JSONPaths and the profile value
each gets (``httpProxy``, ``httpsProxy``, ``noProxy``, ``caBundle``,
``caBundleBase64``); :mod:`proxy_postrender.targets` holds them. The fields the
tool set are recorded in ``proxy-postrender.io/fields``, so that a re-run is a
no-op and ``--remove`` takes exactly them out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path
from proxy_postrender.plans import Plan
from proxy_postrender.record import Record, split_spelling, with_spelling
from proxy_postrender.structs import FrozenStruct, field
from proxy_postrender.targets import ANY, Target
from proxy_postrender.yamltext.ops import AddKey, DeleteKey, Op, SetValue
from proxy_postrender.yamltext.tree import spelling

ANNOTATION = "proxy-postrender.io/fields"


class FieldSettings(FrozenStruct):
    on_conflict: str = "keep"  # when a field is already set: keep, override, fail
    ca_pem: str | None = None  # the proxy CA, for caBundle values


def values(env: Sequence[tuple[str, str]], ca_pem: str | None) -> dict[str, str]:
    """The profile values a setter may name (none when removing)."""
    if not env:
        return {}
    import base64  # lazy: start-up time

    found = dict(env)
    result = {
        "httpProxy": found.get("HTTP_PROXY"),
        "httpsProxy": found.get("HTTPS_PROXY"),
        "noProxy": found.get("NO_PROXY"),
        "caBundle": ca_pem,
        "caBundleBase64": base64.b64encode(ca_pem.encode()).decode() if ca_pem else None,
    }
    return {k: v for k, v in result.items() if v is not None}


class FieldPlan(Plan):
    set: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return f"{len(self.set)} fields set"

    def describe(self) -> list[str]:
        lines = [f"    set {', '.join(self.set)}"] if self.set else []
        lines += [f"    kept (set by the manifest) {p}" for p in self.kept]
        lines += [f"    removed {p}" for p in self.removed]
        lines += [f"    note: {n}" for n in self.notes if self.ops]
        return lines


def dotted_path(path: Path) -> str:
    """A field path as the record and the report write it: steps joined by dots."""
    return ".".join(str(step) for step in path)


def plan(
    obj: Mapping[str, Any],
    base: Path,
    target: Target,
    found: ObjectEnv,
    settings: FieldSettings,
) -> FieldPlan:
    """Set each of ``target.fields`` from the profile; take out what the tool set earlier
    and no longer sets (a removal run has no values). The fields of a target with an
    embedded document are set inside that document by fields/embedded.py."""
    available = values(found.env, settings.ca_pem)
    recorded = Record.read(obj, ANNOTATION)
    made, entries = plan_fields(
        obj, base, target.fields, available, settings.on_conflict, recorded.entries
    )
    made.ops += recorded.ops(obj, base, entries)
    made.notes += [target.note] if target.note else []
    return made


def expand(data: Any, setters: Sequence[tuple[Path, str]]) -> list[tuple[Path, str]]:
    """The setters with every ``[*]`` step (targets.ANY) made one path per list item of
    ``data`` (none where the list is absent; an error where something else is there)."""
    out: list[tuple[Path, str]] = []
    for path, name in setters:
        prefixes: list[Path] = [()]
        for step in path:
            if step != ANY:
                prefixes = [(*p, step) for p in prefixes]
                continue
            nodes = [(p, _get(data, p)) for p in prefixes]
            for p, node in nodes:
                if node is not None and not isinstance(node, list):  # (kubeconfig clusters)
                    raise InputError(
                        f"{dotted_path(p)} is not a list ({dotted_path(path)} of the target)"
                    )
            prefixes = [
                (*p, i) for p, node in nodes if isinstance(node, list) for i in range(len(node))
            ]
        out += [(p, name) for p in prefixes]
    return out


def _value(obj: Any, path: Path, name: str, available: Mapping[str, str]) -> str | None:
    """The profile value ``name`` for the field at ``path``; ``proxyForServer``: the proxy
    for the scheme of the ``server`` next to it (a kubeconfig cluster entry)."""
    if name != "proxyForServer":
        return available.get(name)  # (GONE: none)
    server = _child(_get(obj, path[:-1]), "server")
    secure = isinstance(server, str) and server.lower().startswith("https:")
    return available.get("httpsProxy" if secure else "httpProxy")


# a field the record holds that no setter names any more (the profile changed): taken
# out as --remove takes it out (CA_GONE: a caAppended field's CA)
GONE = "-"
CA_GONE = "caAppended-"


def _gone(
    obj: Any, setters: Sequence[tuple[Path, str]], entries: Sequence[str]
) -> list[tuple[Path, str]]:
    """The fields of the record's ``entries`` that none of ``setters`` names, found in
    ``obj`` (a dotted entry read against its keys, which may hold dots)."""
    named = {dotted_path(path) for path, _ in setters}
    out: list[tuple[Path, str]] = []
    for entry in entries:
        if entry.startswith(("+", WAS_NULL)):
            continue  # a mapping the tool made: it goes with its fields
        appended = entry.startswith(APPENDED)
        dotted = entry[1:].rpartition("=")[0] if appended else entry.removeprefix(WAS_EMPTY)
        path = _find(obj, dotted)
        if dotted not in named and path is not None:
            out.append((path, CA_GONE if appended else GONE))
    return out


def _find(node: Any, dotted: str) -> Path | None:
    """The path in ``node`` that ``dotted`` names (None: none)."""
    if isinstance(node, list):
        index, _, rest = dotted.partition(".")
        if not index.isdigit() or int(index) >= len(node):
            return None
        found = _find(node[int(index)], rest) if rest else ()
        return None if found is None else (int(index), *found)
    if not isinstance(node, Mapping):
        return None
    for key in node:
        if isinstance(key, str) and key == dotted:
            return (key,)
        if isinstance(key, str) and dotted.startswith(key + "."):
            found = _find(node[key], dotted[len(key) + 1 :])
            if found is not None:
                return (key, *found)
    return None


def plan_fields(
    obj: Mapping[str, Any],
    base: Path,
    setters: Sequence[tuple[Path, str]],
    available: Mapping[str, str],
    on_conflict: str,
    entries: Sequence[str],
) -> tuple[FieldPlan, list[str]]:
    """The plan that sets ``setters`` in ``obj`` (at ``base``) given the record's
    ``entries``, and the entries the record holds afterwards."""
    plan = FieldPlan()
    setters = expand(obj, setters)
    setters += _gone(obj, setters, entries)
    appended = [e for e in entries if e.startswith(APPENDED)]
    was_empty = {e[1:] for e in entries if e.startswith(WAS_EMPTY)}
    nulls = dict(split_spelling(e[1:]) for e in entries if e.startswith(WAS_NULL))  # mappings
    entries = [e for e in entries if not e.startswith((APPENDED, WAS_EMPTY, WAS_NULL))]
    owned = {e for e in entries if not e.startswith("+")} | was_empty
    created = [e[1:] for e in entries if e.startswith("+")]  # mappings the tool made
    created += list(nulls)  # ... in place of a null of the manifest's
    now: list[str] = []
    now_appended = _append_ca(obj, base, setters, available, appended, plan)
    setters = [(path, name) for path, name in setters if name not in (CA_APPENDED, CA_GONE)]
    missing: list[tuple[Path, str]] = []
    removing: list[Path] = []
    for path, name in setters:
        dotted = dotted_path(path)
        value = _value(obj, path, name, available)
        parent = _get(obj, path[:-1])
        leaf = path[-1]
        present = _has(parent, leaf)
        if value is None:
            if dotted in was_empty and present:  # the manifest's empty value, back
                plan.ops.append(SetValue((*base, *path), ""))
                plan.removed.append(dotted)
            elif dotted in owned and present:
                removing.append(path)
                plan.removed.append(dotted)
            continue
        if present and dotted not in owned and _child(parent, leaf) == "":
            was_empty.add(dotted)  # an empty value counts as unset: the tool's from now
            owned.add(dotted)
        if not present and _in_data(obj, path):
            present, parent, leaf = True, _data_view(obj), path[1]  # the Secret's own
        if present and dotted not in owned:
            if _child(parent, leaf) == value:
                continue
            if on_conflict == "fail":
                raise InputError(f"{dotted} is already set (onConflict: fail)")
            if on_conflict == "keep":
                plan.kept.append(dotted)
                continue
        now.append(dotted)
        if present and _has(_get(obj, path[:-1]), leaf):
            if _child(parent, leaf) != value:
                plan.ops.append(SetValue((*base, *path), value))
                plan.set.append(dotted)
            continue
        missing.append((path, value))
        plan.set.append(dotted)
    additions, made = _additions(obj, base, missing, nulls)
    plan.ops += additions
    plan.ops += _removals(obj, base, removing, created, nulls)
    # a mapping the tool made stays the tool's while one of its fields does
    kept_made = [c for c in created if any(d.startswith(c + ".") for d in now)]
    return plan, [
        _entry(d, was_empty, nulls)
        for d in now + [f"+{c}" for c in dict.fromkeys(kept_made + made)]
    ] + now_appended


def _entry(dotted: str, was_empty: set[str], nulls: Mapping[str, str | None]) -> str:
    """The record's entry for a field (or, ``+PATH``, a mapping) the tool set."""
    path = dotted.removeprefix("+")
    if dotted.startswith("+") and path in nulls:  # in place of the manifest's null
        return with_spelling(f"{WAS_NULL}{path}", nulls[path])
    return f"{WAS_EMPTY}{dotted}" if dotted in was_empty else dotted


# an entry of a field whose empty string of the manifest's the tool's value replaced
# (an empty value counts as unset): --remove writes the empty string back
WAS_EMPTY = "="
# an entry of a mapping the tool made in place of the manifest's null (``key:``, ``key:
# ~``), with how that was written (record.with_spelling): --remove writes it back
WAS_NULL = "~"


def _in_data(obj: Any, path: Path) -> bool:
    """Whether a Secret's ``stringData.KEY`` is set through its base64 ``data.KEY``
    (the API server lays stringData over data: that value counts as the manifest's)."""
    if not isinstance(obj, Mapping) or obj.get("kind") != "Secret" or len(path) != 2:
        return False
    if path[0] != "stringData":
        return False
    return bool(_data_view(obj).get(str(path[1])))


def _data_view(obj: Mapping[str, Any]) -> dict[str, str]:
    """A Secret's ``data``, decoded (keys whose value is no base64 of text left out)."""
    import base64  # lazy: only Secrets
    import binascii

    data = obj.get("data")
    out: dict[str, str] = {}
    for key, value in data.items() if isinstance(data, Mapping) else ():
        try:
            out[str(key)] = base64.b64decode(str(value), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
    return out


# caAppended: the proxy's CA appended to the base64 PEM bundle a field holds (a
# kubeconfig's certificate-authority-data); the record keeps how long the field's own
# bundle is (``^PATH=LENGTH``), so that a re-run appends the CA again to that alone
# and --remove gives it back
CA_APPENDED = "caAppended"
APPENDED = "^"


def _append_ca(
    obj: Any,
    base: Path,
    setters: Sequence[tuple[Path, str]],
    available: Mapping[str, str],
    recorded: Sequence[str],
    plan: FieldPlan,
) -> list[str]:
    """The CA appended to each ``caAppended`` field (taken off again without a CA); the
    record's entries afterwards."""
    import base64  # lazy: only this setter
    import binascii

    lengths = dict(e[1:].rpartition("=")[::2] for e in recorded)
    entries: list[str] = []
    for path, name in setters:
        if name not in (CA_APPENDED, CA_GONE):
            continue
        pem = available.get("caBundle") if name == CA_APPENDED else None
        dotted = dotted_path(path)
        held = _get(obj, path)
        if not isinstance(held, str):
            continue  # no bundle of its own there: nothing to append to
        try:
            raw = base64.b64decode(held, validate=True)
        except binascii.Error:
            raise InputError(f"{dotted} is not base64 (the CA is appended to it)") from None
        length = lengths.get(dotted)
        own = raw[: int(length)] if length and length.isdigit() else raw
        new = own
        if pem is not None:
            new = own + (b"" if own.endswith(b"\n") or not own else b"\n") + pem.encode()
            entries.append(f"{APPENDED}{dotted}={len(own)}")
        if new != raw:
            plan.ops.append(SetValue((*base, *path), base64.b64encode(new).decode("ascii")))
            (plan.set if pem is not None else plan.removed).append(dotted)
    return entries


def _child(node: Any, step: str | int) -> Any:
    if isinstance(node, Mapping) and isinstance(step, str):
        return node.get(step)
    if isinstance(node, list) and isinstance(step, int) and -len(node) <= step < len(node):
        return node[step]
    return None


def _has(node: Any, step: str | int) -> bool:
    if isinstance(node, Mapping):
        return isinstance(step, str) and step in node
    return isinstance(node, list) and isinstance(step, int) and -len(node) <= step < len(node)


def _get(obj: Any, path: Path) -> Any:
    for step in path:
        obj = _child(obj, step)
    return obj


def _leaves(node: Any, prefix: str) -> set[str]:
    if isinstance(node, Mapping) and node:
        return set().union(*(_leaves(v, f"{prefix}.{k}") for k, v in node.items()))
    return {prefix}


def _removals(
    obj: Mapping[str, Any],
    base: Path,
    removing: list[Path],
    created: list[str],
    nulls: Mapping[str, str | None],
) -> list[Op]:
    """Delete the fields; a mapping the tool made goes whole when nothing else is in it."""
    gone = {dotted_path(p) for p in removing}
    ops: list[Op] = []
    handled: set[str] = set()
    for made in sorted(created, key=len):
        node = _get(obj, tuple(made.split(".")))
        if not isinstance(node, Mapping) or any(d.startswith(made + ".") for d in handled):
            continue
        inside = _leaves(node, made)
        if inside and inside <= gone:  # nothing but the tool's fields, however deep
            where = (*base, *made.split("."))
            if made in nulls:  # the manifest's null, back
                ops.append(SetValue(where, None, text=nulls[made]))
            else:
                ops.append(DeleteKey(where))
            handled |= inside
    return ops + [DeleteKey((*base, *p)) for p in removing if dotted_path(p) not in handled]


def _additions(
    obj: Mapping[str, Any],
    base: Path,
    missing: list[tuple[Path, str]],
    nulls: dict[str, str | None],
) -> tuple[list[Op], list[str]]:
    """Add each value at its path, creating the missing mappings on the way; values that
    share a missing mapping go in one addition. Returns the ops and the mappings made (a
    mapping made in place of a null goes into ``nulls`` with how that was written)."""
    groups: dict[Path, tuple[bool, dict[str, Any]]] = {}
    for path, value in missing:
        node: Any = obj
        depth = 0
        while depth < len(path) - 1 and _child(node, path[depth]) is not None:
            node = _child(node, path[depth])
            depth += 1
        if not isinstance(node, Mapping) or not all(isinstance(p, str) for p in path[depth:]):
            where = dotted_path(path[:depth]) or "the object"
            raise InputError(f"cannot set {dotted_path(path)}: {where} is not a mapping")
        anchor = path[: depth + 1]
        replace = path[depth] in node  # "key:" (null) becomes the mapping
        if replace and depth + 1 < len(path):
            nulls.setdefault(dotted_path(anchor), spelling(node, str(path[depth])))
        _, tree = groups.setdefault(anchor, (replace, {}))
        for step in path[depth + 1 : -1]:
            tree = tree.setdefault(str(step), {})
        if depth + 1 < len(path):
            tree[str(path[-1])] = value
        else:
            groups[anchor] = (replace, {"": value})
    ops: list[Op] = []
    made: list[str] = []
    for anchor, (replace, tree) in groups.items():
        added: Any = tree.get("", tree) if set(tree) == {""} else tree
        if replace:
            ops.append(SetValue((*base, *anchor), added))
        else:
            ops.append(AddKey((*base, *anchor[:-1]), str(anchor[-1]), added))
        if isinstance(added, dict):
            made.append(dotted_path(anchor))
    return ops, made
