"""The annotations in which the tool records what it injected into an object.

A record is a string of ``;``-separated entries (their meaning belongs to the
planner that owns the annotation) plus flags. Keeping it on the object makes a
second run a no-op, lets a changed profile replace exactly the recorded
entries, and lets ``--remove`` strip them.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError
from proxy_postrender.objects import Path
from proxy_postrender.structs import Struct, field
from proxy_postrender.yamltext.ops import AddKey, DeleteKey, Op, SetValue

# Flags: the collection the tool filled was present but null (``~key``) or
# empty (``~empty-key``) in the input, so removal gives that value back instead
# of deleting the key. (Records without them come from inputs without the key,
# or from older versions: their removal deletes the key, as it always did.)
NULL_ANNOTATIONS = "~annotations"
EMPTY_ANNOTATIONS = "~empty-annotations"
NULL_METADATA = "~metadata"
EMPTY_METADATA = "~empty-metadata"
_FLAGS = frozenset({NULL_ANNOTATIONS, EMPTY_ANNOTATIONS, NULL_METADATA, EMPTY_METADATA})


def mapping_or_none(value: Any, where: str) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InputError(f"{where} is not a mapping")
    return value


class Record(Struct):
    key: str
    entries: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    current: str | None = None  # the annotation's value as found

    @classmethod
    def read(cls, obj: Mapping[str, Any], key: str) -> Record:
        metadata = mapping_or_none(obj.get("metadata"), "metadata")
        annotations = mapping_or_none(
            metadata.get("annotations") if metadata else None, "metadata.annotations"
        )
        record = cls(key)
        if annotations and key in annotations:
            value = annotations[key]
            if not isinstance(value, str):
                raise InputError(f"annotation {key} must be a string")
            record.current = value
            for part in filter(None, value.split(";")):
                if part in _FLAGS:
                    record.flags.add(part)
                else:
                    record.entries.append(part)
        if "metadata" in obj and not metadata:
            record.flags.add(NULL_METADATA if metadata is None else EMPTY_METADATA)
        if metadata and "annotations" in metadata and not annotations:
            record.flags.add(NULL_ANNOTATIONS if annotations is None else EMPTY_ANNOTATIONS)
        return record

    def value(self, entries: list[str]) -> str:
        """The annotation value for ``entries``; empty when there are none (flags alone drop)."""
        return ";".join(entries + sorted(self.flags)) if entries else ""

    def ops(self, obj: Mapping[str, Any], base: Path, entries: list[str]) -> list[Op]:
        """Operations that make the annotation say ``entries``."""
        wanted = self.value(entries)
        if self.current == (wanted or None):
            return []
        metadata = obj.get("metadata")
        annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
        meta_path = (*base, "metadata")
        annotations_path = (*meta_path, "annotations")
        if not wanted:
            if isinstance(annotations, Mapping) and len(annotations) == 1:
                if isinstance(metadata, Mapping) and len(metadata) == 1:
                    if NULL_METADATA in self.flags:
                        return [SetValue(meta_path, None)]
                    if EMPTY_METADATA in self.flags:
                        return [SetValue(meta_path, {})]
                if NULL_ANNOTATIONS in self.flags:
                    return [SetValue(annotations_path, None)]
                if EMPTY_ANNOTATIONS in self.flags:
                    return [SetValue(annotations_path, {})]
                if isinstance(metadata, Mapping) and len(metadata) == 1:
                    return [DeleteKey(meta_path)]  # the tool added the metadata too
                return [DeleteKey(annotations_path)]
            return [DeleteKey((*annotations_path, self.key))]
        if self.current is not None:
            return [SetValue((*annotations_path, self.key), wanted)]
        if annotations:
            return [AddKey(annotations_path, self.key, wanted)]
        if isinstance(metadata, Mapping) and "annotations" in metadata:  # null or {}
            return [SetValue(annotations_path, {self.key: wanted})]
        if metadata:
            return [AddKey(meta_path, "annotations", {self.key: wanted})]
        if "metadata" in obj:  # "metadata: {}" or "metadata: null"
            return [SetValue(meta_path, {"annotations": {self.key: wanted}})]
        return [AddKey(base, "metadata", {"annotations": {self.key: wanted}})]
