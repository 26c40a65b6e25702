"""Kubernetes objects as plain data: API groups, ``kind: List`` items, annotations.

Every layer reads objects the same way through these few helpers; none of
them changes anything.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, TypeGuard

# A path from a document's root: mapping keys and sequence indexes.
Path = tuple[str | int, ...]

# The annotation Helm 4 gives each document it post-renders: the template file.
HELM4_FILENAME = "postrenderer.helm.sh/postrender-filename"

# Marks the objects the tool emits itself (Secrets, ConfigMaps).
GENERATED = "proxy-postrender.io/generated"

# Kinds whose items are objects in their own right.
LIST_KINDS: frozenset[str] = frozenset({"List"})


def is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    """``is_mapping(value)``. The data read here is dicts: testing for one first
    is a single type check, where the test against ``Mapping`` (an ABC) runs Python code
    for every call, dozens of times a document."""
    # two tests, not one with a tuple: mypyc compiles the first to a C type check
    return isinstance(value, dict) or isinstance(value, Mapping)  # noqa: SIM101


def api_group(api_version: Any) -> str:
    """The group of an ``apiVersion`` ("" for the core group)."""
    text = str(api_version or "")
    return text.rpartition("/")[0] if "/" in text else ""


def group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    return api_group(obj.get("apiVersion")), str(obj.get("kind"))


def is_list(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("kind")  # any YAML value, a mapping included (found by fuzzing)
    return isinstance(kind, str) and kind in LIST_KINDS and api_group(obj.get("apiVersion")) == ""


def walk_objects(obj: Any, path: Path = ()) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """The object itself, or the items of a ``kind: List`` (recursively)."""
    if not is_mapping(obj):
        return
    if is_list(obj) and isinstance(obj.get("items"), list):
        for index, item in enumerate(obj["items"]):
            yield from walk_objects(item, (*path, "items", index))
    else:
        yield path, obj


def dig(obj: Any, *path: str) -> Any:
    """The value at ``path`` under ``obj``; None where a step is missing or not a mapping."""
    for step in path:
        if not is_mapping(obj):
            return None
        obj = obj.get(step)
    return obj


def annotations_of(obj: Any) -> Mapping[str, Any]:
    """The object's metadata.annotations, or an empty mapping when there are none."""
    metadata = obj.get("metadata") if is_mapping(obj) else None
    found = metadata.get("annotations") if is_mapping(metadata) else None
    return found if is_mapping(found) else {}
