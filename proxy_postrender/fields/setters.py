"""Custom targets from the profile: pod templates in other kinds, and field setters.

``spec.targets`` entries name an ``apiVersion`` (its group counts) and a
``kind``, and either a JSONPath to a pod template (``$.spec.template``: its
``spec`` then gets the workload treatment) or fields to set from profile
values (``httpProxy``, ``httpsProxy``, ``noProxy``, ``caBundle``). JSONPaths
are parsed with jsonpath-ng and must name one place: fields and indexes only.
The fields the tool set are recorded in ``proxy-postrender.io/fields``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender import targets
from proxy_postrender.errors import InputError
from proxy_postrender.record import Record
from proxy_postrender.structs import Struct, field
from proxy_postrender.yamltext.ops import AddKey, DeleteKey, Op, Path, SetValue

ANNOTATION = "proxy-postrender.io/fields"
VALUES = ("httpProxy", "httpsProxy", "noProxy", "caBundle", "caBundleBase64")

# Open Cluster Management's add-on configuration (seed 004): proxy settings
# for every add-on agent of a managed cluster.
PRESETS: Mapping[str, Mapping[str, Any]] = {
    "ocm-addon": {
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "AddOnDeploymentConfig",
        "set": {
            "$.spec.proxyConfig.httpProxy": "httpProxy",
            "$.spec.proxyConfig.httpsProxy": "httpsProxy",
            "$.spec.proxyConfig.noProxy": "noProxy",
            "$.spec.proxyConfig.caBundle": "caBundleBase64",
        },
    },
}


class PathError(ValueError):
    pass


def parse_path(text: str) -> Path:
    """A JSONPath naming one place (``$.a.b[0].c``) as a path of keys and indexes."""
    from jsonpath_ng.jsonpath import Child, Fields, Index, Root
    from jsonpath_ng.parser import parse

    try:
        expression = parse(text)
    except Exception as exc:  # the lexer and parser raise several kinds
        raise PathError(f"{text!r} is not a JSONPath ({str(exc).splitlines()[0]})") from None
    steps: list[str | int] = []

    def walk(node: Any) -> None:
        if isinstance(node, Root):
            return
        if isinstance(node, Child):
            walk(node.left)
            walk(node.right)
        elif isinstance(node, Fields) and len(node.fields) == 1 and node.fields[0] != "*":
            steps.append(node.fields[0])
        elif isinstance(node, Index) and len(node.indices) == 1:
            steps.append(node.indices[0])
        else:
            raise PathError(f"{text!r}: only fields and indexes (one place), not {node}")

    walk(expression)
    if not steps:
        raise PathError(f"{text!r} names the whole object")
    return tuple(steps)


class CustomTargets(Struct, frozen=True):
    pod_specs: Mapping[tuple[str, str], tuple[Path, ...]] = field(default_factory=dict)
    setters: Mapping[tuple[str, str], tuple[tuple[Path, str], ...]] = field(default_factory=dict)

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(kind for _, kind in (*self.pod_specs, *self.setters))

    def pod_spec_paths(self, obj: Mapping[str, Any]) -> tuple[Path, ...]:
        return self.pod_specs.get(_key(obj), ())

    def setter_paths(self, obj: Mapping[str, Any]) -> tuple[tuple[Path, str], ...]:
        return self.setters.get(_key(obj), ())


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    return targets.api_group(obj.get("apiVersion")), str(obj.get("kind"))


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


class FieldPlan(Struct):
    ops: list[Op] = field(default_factory=list)
    set: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: str | None = None

    def summary(self) -> str:
        return f"{len(self.set)} fields set"

    def describe(self) -> list[str]:
        lines = [f"    set {', '.join(self.set)}"] if self.set else []
        lines += [f"    kept (set by the manifest) {p}" for p in self.kept]
        lines += [f"    removed {p}" for p in self.removed]
        return lines


def _dotted(path: Path) -> str:
    return ".".join(str(step) for step in path)


def plan_fields(
    obj: Mapping[str, Any],
    base: Path,
    setters: Sequence[tuple[Path, str]],
    available: Mapping[str, str],
    on_conflict: str,
) -> FieldPlan:
    """Set each setter's field from the profile; take out what the tool set earlier and
    no longer sets (a removal run passes no ``available`` values)."""
    plan = FieldPlan()
    recorded = Record.read(obj, ANNOTATION)
    owned = {e for e in recorded.entries if not e.startswith("+")}
    created = [e[1:] for e in recorded.entries if e.startswith("+")]  # mappings the tool made
    now: list[str] = []
    missing: list[tuple[Path, str]] = []
    removing: list[Path] = []
    for path, name in setters:
        dotted = _dotted(path)
        value = available.get(name)
        parent = _get(obj, path[:-1])
        leaf = path[-1]
        present = _has(parent, leaf)
        if value is None:
            if dotted in owned and present:
                removing.append(path)
                plan.removed.append(dotted)
            continue
        if present and dotted not in owned:
            if _child(parent, leaf) == value:
                continue
            if on_conflict == "fail":
                raise InputError(f"{dotted} is already set (onConflict: fail)")
            if on_conflict == "keep":
                plan.kept.append(dotted)
                continue
        now.append(dotted)
        if present:
            if _child(parent, leaf) != value:
                plan.ops.append(SetValue((*base, *path), value))
                plan.set.append(dotted)
            continue
        missing.append((path, value))
        plan.set.append(dotted)
    additions, made = _additions(obj, base, missing)
    plan.ops += additions
    plan.ops += _removals(obj, base, removing, created)
    # a mapping the tool made stays the tool's while one of its fields does
    kept_made = [c for c in created if any(d.startswith(c + ".") for d in now)]
    plan.ops += recorded.ops(obj, base, now + [f"+{c}" for c in dict.fromkeys(kept_made + made)])
    return plan


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
    obj: Mapping[str, Any], base: Path, removing: list[Path], created: list[str]
) -> list[Op]:
    """Delete the fields; a mapping the tool made goes whole when nothing else is in it."""
    gone = {_dotted(p) for p in removing}
    ops: list[Op] = []
    handled: set[str] = set()
    for made in sorted(created, key=len):
        node = _get(obj, tuple(made.split(".")))
        if not isinstance(node, Mapping) or any(d.startswith(made + ".") for d in handled):
            continue
        inside = _leaves(node, made)
        if inside and inside <= gone:  # nothing but the tool's fields, however deep
            ops.append(DeleteKey((*base, *made.split("."))))
            handled |= inside
    return ops + [DeleteKey((*base, *p)) for p in removing if _dotted(p) not in handled]


def _additions(
    obj: Mapping[str, Any], base: Path, missing: list[tuple[Path, str]]
) -> tuple[list[Op], list[str]]:
    """Add each value at its path, creating the missing mappings on the way; values that
    share a missing mapping go in one addition. Returns the ops and the mappings made."""
    groups: dict[Path, tuple[bool, dict[str, Any]]] = {}
    for path, value in missing:
        node: Any = obj
        depth = 0
        while depth < len(path) - 1 and _child(node, path[depth]) is not None:
            node = _child(node, path[depth])
            depth += 1
        if not isinstance(node, Mapping) or not all(isinstance(p, str) for p in path[depth:]):
            where = _dotted(path[:depth]) or "the object"
            raise InputError(f"cannot set {_dotted(path)}: {where} is not a mapping")
        anchor = path[: depth + 1]
        replace = path[depth] in node  # "key:" (null) becomes the mapping
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
            made.append(_dotted(anchor))
    return ops, made
