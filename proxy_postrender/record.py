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
    from typing import Any, Final

from proxy_postrender.errors import InputError
from proxy_postrender.objects import Path, is_mapping
from proxy_postrender.structs import Struct, field
from proxy_postrender.yamltext.ops import AddKey, DeleteKey, Op, SetValue
from proxy_postrender.yamltext.tree import spelling

# (Constants here are Final: the compiled build reads them from C variables, not
# from the module's dict.)
# Flags: the collection the tool filled was present but null (``~key``) or
# empty (``~empty-key``) in the input, so removal gives that value back instead
# of deleting the key. (Records without them come from inputs without the key,
# or from older versions: their removal deletes the key, as it always did.)
NULL_ANNOTATIONS: Final = "~annotations"
EMPTY_ANNOTATIONS: Final = "~empty-annotations"
NULL_METADATA: Final = "~metadata"
EMPTY_METADATA: Final = "~empty-metadata"
_FLAGS: Final = frozenset({NULL_ANNOTATIONS, EMPTY_ANNOTATIONS, NULL_METADATA, EMPTY_METADATA})
# A flag (or a container's mark) may carry how the input wrote that value, when not the
# plain way (``key:``, ``key: {}``): ``~annotations:_~`` for ``annotations: ~``,
# ``~empty-annotations:%0A____%7B%7D`` for ``{}`` on the next line (the text after the
# key's colon to the end of the value's line, see ``tree.spelling``; a space written
# ``_``, other characters than letters, digits and ``.~+-`` as ``%XX`` or ``%uXXXXXX``:
# the record stays a plain scalar), so that it comes back byte for byte.
SPELLING: Final = ":"
# The entry that keeps the name an object had before the tool renamed it (rollout/):
# ``name=NAME`` (escaped as a spelling is), kept by every planner as long as its record
# has entries of its own.
NAME_ENTRY: Final = "name="
_KEPT: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.~+-")


def escape(text: str) -> str:
    """``text`` in the characters of a plain record (no separator, no space or break)."""
    return "".join(
        c
        if c in _KEPT
        else "_"
        if c == " "
        else f"%{ord(c):02X}"
        if ord(c) < 256
        else f"%u{ord(c):06X}"
        for c in text
    )


_HEX: Final = frozenset("0123456789ABCDEF")


def _code(digits: str) -> int:
    """A code point from exactly the hexadecimal digits ``escape`` writes (no sign, no
    space, no ``_``, upper case); -1 for anything else."""
    if not digits or not set(digits) <= _HEX:
        return -1
    return int(digits, 16)


def unescape(text: str) -> str:
    """The text ``escape`` made ``text`` from; an error for any other spelling (a record
    is read strictly: one text has one spelling) or a code point no text can hold."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "_":
            out.append(" ")
        elif c != "%":
            out.append(c)
        else:
            wide = text[i + 1 : i + 2] == "u"
            digits = text[i + 2 : i + 8] if wide else text[i + 1 : i + 3]
            code = _code(digits) if len(digits) == (6 if wide else 2) else -1
            # no lone surrogate (it cannot be written out) and none beyond Unicode
            if code < 0 or 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                raise InputError(f"malformed spelling in a record: {text!r}")
            out.append(chr(code))
            i += 7 if wide else 2
        i += 1
    result = "".join(out)
    if escape(result) != text:  # e.g. "%41" for "A", or a "/" left as it is
        raise InputError(f"malformed spelling in a record: {text!r}")
    return result


def with_spelling(flag: str, spelling: str | None) -> str:
    return flag if spelling is None else f"{flag}{SPELLING}{escape(spelling)}"


def split_spelling(part: str) -> tuple[str, str | None]:
    """A flag or mark and the spelling it carries (None: the plain one)."""
    flag, sep, spelled = part.partition(SPELLING)
    return flag, unescape(spelled) if sep else None


def mapping_or_none(value: Any, where: str) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not is_mapping(value):
        raise InputError(f"{where} is not a mapping")
    return value


class Record(Struct):
    key: str
    entries: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    spellings: dict[str, str] = field(default_factory=dict)  # flag -> the input's text
    current: str | None = None  # the annotation's value as found
    renamed_from: str | None = None  # the object's name before the tool renamed it

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
                flag, spelled = split_spelling(part) if part[0] == "~" else (part, None)
                if flag in _FLAGS:
                    record.flags.add(flag)
                    if spelled is not None:
                        record.spellings[flag] = spelled
                elif part.startswith(NAME_ENTRY):
                    record.renamed_from = unescape(part[len(NAME_ENTRY) :])
                else:
                    record.entries.append(part)
        if "metadata" in obj and not metadata:
            record.note(NULL_METADATA if metadata is None else EMPTY_METADATA, obj, "metadata")
        if metadata and "annotations" in metadata and not annotations:
            flag = NULL_ANNOTATIONS if annotations is None else EMPTY_ANNOTATIONS
            record.note(flag, metadata, "annotations")
        return record

    def note(self, flag: str, mapping: Mapping[str, Any], key: str) -> None:
        """The input's ``mapping[key]`` is null or empty: ``flag``, with its spelling."""
        self.flags.add(flag)
        spelled = spelling(mapping, key)
        if spelled is not None:
            self.spellings[flag] = spelled

    def value(self, entries: list[str]) -> str:
        """The annotation value for ``entries``; empty when there are none (flags alone drop)."""
        flags = sorted(with_spelling(f, self.spellings.get(f)) for f in self.flags)
        # escaped: a name (not one Kubernetes takes) may hold ";" and read as entries
        named = [NAME_ENTRY + escape(self.renamed_from)] if self.renamed_from else []
        return ";".join(entries + named + flags) if entries else ""

    def ops(self, obj: Mapping[str, Any], base: Path, entries: list[str]) -> list[Op]:
        """Operations that make the annotation say ``entries``."""
        wanted = self.value(entries)
        if self.current == (wanted or None):
            return []
        metadata = obj.get("metadata")
        annotations = metadata.get("annotations") if is_mapping(metadata) else None
        meta_path = (*base, "metadata")
        annotations_path = (*meta_path, "annotations")
        if not wanted:
            if is_mapping(annotations) and len(annotations) == 1:
                if is_mapping(metadata) and len(metadata) == 1:
                    if NULL_METADATA in self.flags:
                        return [SetValue(meta_path, None, self.spellings.get(NULL_METADATA))]
                    if EMPTY_METADATA in self.flags:
                        return [SetValue(meta_path, {}, self.spellings.get(EMPTY_METADATA))]
                if NULL_ANNOTATIONS in self.flags:
                    spelled = self.spellings.get(NULL_ANNOTATIONS)
                    return [SetValue(annotations_path, None, spelled)]
                if EMPTY_ANNOTATIONS in self.flags:
                    spelled = self.spellings.get(EMPTY_ANNOTATIONS)
                    return [SetValue(annotations_path, {}, spelled)]
                if is_mapping(metadata) and len(metadata) == 1:
                    return [DeleteKey(meta_path)]  # the tool added the metadata too
                return [DeleteKey(annotations_path)]
            return [DeleteKey((*annotations_path, self.key))]
        if self.current is not None:
            return [SetValue((*annotations_path, self.key), wanted)]
        if annotations:
            return [AddKey(annotations_path, self.key, wanted)]
        if is_mapping(metadata) and "annotations" in metadata:  # null or {}
            return [SetValue(annotations_path, {self.key: wanted})]
        if metadata:
            return [AddKey(meta_path, "annotations", {self.key: wanted})]
        if "metadata" in obj:  # "metadata: {}" or "metadata: null"
            return [SetValue(meta_path, {"annotations": {self.key: wanted}})]
        return [AddKey(base, "metadata", {"annotations": {self.key: wanted}})]
