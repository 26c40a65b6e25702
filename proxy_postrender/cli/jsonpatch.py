"""The change from one object to another as JSON patch (RFC 6902) operations.

kustomize merges a strategic-merge patch into a custom resource without a schema: it
replaces whole lists (containers, env) instead of merging them by name. A JSON patch
says where each change goes, by index, so it expresses the filter's change to any kind:
``add`` for what is new (``/-`` appends to a list), ``replace`` for a changed value,
``remove`` for what went away. Before it descends into a list item that has a ``name``,
it tests that name: a render that moved its containers makes kustomize fail instead of
patching the wrong one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


class Inexpressible(ValueError):
    """A value JSON cannot carry as it is (a key that is not a string, a timestamp)."""


def pointer(path: tuple[str | int, ...]) -> str:
    """The JSON pointer (RFC 6901) of ``path``."""
    return "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in path)


def same(a: Any, b: Any) -> bool:
    """Equal data, types included (``1``, ``1.0`` and ``true`` differ in a manifest)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Mapping):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _check(value: Any) -> Any:
    """``value`` when JSON carries it unchanged; raises Inexpressible otherwise."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise Inexpressible(f"the key {key!r} is not a string")
            _check(item)
    elif isinstance(value, list):
        for item in value:
            _check(item)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise Inexpressible(f"{value!r} is no JSON number")
    elif value is not None and not isinstance(value, (str, int, bool)):
        raise Inexpressible(f"a {type(value).__name__} value")
    return value


def _op(op: str, path: tuple[str | int, ...], value: Any = None) -> dict[str, Any]:
    found: dict[str, Any] = {"op": op, "path": pointer(path)}
    if op != "remove":
        found["value"] = _check(value)
    return found


def _mapping_ops(
    before: Mapping[Any, Any], after: Mapping[Any, Any], path: tuple[str | int, ...]
) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    for key, value in after.items():
        if not isinstance(key, str):
            if key in before and same(before[key], value):
                continue
            raise Inexpressible(f"the key {key!r} is not a string")
        if key in before:
            ops.extend(diff(before[key], value, (*path, key)))
        else:
            ops.append(_op("add", (*path, key), value))
    for key in before:
        if key not in after:
            if not isinstance(key, str):
                raise Inexpressible(f"the key {key!r} is not a string")
            ops.append(_op("remove", (*path, key)))
    return ops


def _list_ops(before: list[Any], after: list[Any], path: tuple[str | int, ...]) -> list[Any]:
    ops: list[dict[str, Any]] = []
    for index, (old, new) in enumerate(zip(before, after, strict=False)):
        changes = diff(old, new, (*path, index))
        name = old.get("name") if isinstance(old, Mapping) else None
        renamed = not isinstance(new, Mapping) or not same(name, new.get("name"))
        if changes and isinstance(name, str) and not renamed:
            ops.append(_op("test", (*path, index, "name"), name))
        ops.extend(changes)
    ops.extend(_op("add", (*path, "-"), new) for new in after[len(before) :])
    ops.extend(_op("remove", (*path, i)) for i in reversed(range(len(after), len(before))))
    return ops


def diff(before: Any, after: Any, path: tuple[str | int, ...] = ()) -> list[dict[str, Any]]:
    """The operations that turn ``before`` into ``after`` (raises Inexpressible)."""
    if same(before, after):
        return []
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        return _mapping_ops(before, after, path)
    if isinstance(before, list) and isinstance(after, list):
        return _list_ops(before, after, path)
    if not path:
        raise Inexpressible("the whole object changes")
    return [_op("replace", path, after)]


def to_text(ops: list[dict[str, Any]]) -> str:
    """The operations as JSON, one a line (ASCII: every other character escaped)."""
    return "[\n" + ",\n".join(json.dumps(op, allow_nan=False) for op in ops) + "\n]\n"
