"""Split a multi-document YAML stream into segments that keep their raw text.

Joining the segments gives back the input exactly, so any document the tool
does not change is written back byte for byte. A segment starts at a ``---``
line (or at the stream start) and runs to the next one; ``%`` directive lines
right before a ``---`` belong to the document that follows them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import pairwise

from proxy_postrender.patterns import compiled
from proxy_postrender.structs import Struct

BOM = "\ufeff"

# A top-level "kind" key is one of these at column 0, then spaces or tabs and ':'.
_KIND_NAMES = ("kind", '"kind"', "'kind'")
_SOURCE_RE = compiled(r"^# Source: (.+?)\r?$", re.MULTILINE)
_CONTENT_RE = compiled(
    r"^(?![ \t]*(?:#|\r?$)|---[ \t]*(?:#.*)?\r?$|\.\.\.[ \t]*(?:#.*)?\r?$)", re.MULTILINE
)


class Segment(Struct):
    text: str
    offset: int  # character offset of the segment in the stream (after the BOM)
    line: int  # 1-based line number of the segment's first line

    @property
    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"

    def has_content(self) -> bool:
        """True when the segment holds more than separators, comments and blank lines."""
        return _CONTENT_RE.search(self.text) is not None

    def helm_source(self) -> str | None:
        match = _SOURCE_RE.search(self.text)
        return match.group(1) if match else None

    def _block_root(self) -> bool:
        """Whether the first content line starts a block mapping key at column 0."""
        for match in _CONTENT_RE.finditer(self.text):
            line = self.text[match.start() : match.start() + 1]
            if line == "%":
                continue  # a directive
            return line not in ("", " ", "\t", "-", "{", "[", "!", "&", "*", "?", "|", ">")
        return False

    def sniff_kind(self) -> str | None:
        """The top-level kind when the raw text shows it unambiguously, else None.

        ``None`` means "parse to find out": a quoted or flow-style document, an
        indented root mapping, or several candidate lines.
        """
        if not self._block_root():
            return None
        matches = _kind_values(self.text)
        if len(matches) != 1:
            return None
        value: str = matches[0].split(" #", 1)[0].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        # [A-Za-z][A-Za-z0-9]*, without a pattern (``re.fullmatch`` looks its pattern
        # up in Python code, once a document)
        if not value or not (value.isascii() and value.isalnum() and value[0].isalpha()):
            return None
        return value


def _kind_values(text: str) -> list[str]:
    """What follows the ':' of every top-level ``kind`` key line (plain or quoted), to
    the end of its line, in the order of the text.

    Found with ``str.find`` for each spelling after a line break: a pattern would be
    tried at every line break of the document, and a document the tool passes through
    (a CRD of 500 KB) has thousands of lines and one ``kind``."""
    found: list[tuple[int, str]] = []
    for name in _KIND_NAMES:
        if text.startswith(name):
            _kind_value(text, len(name), 0, found)
        needle = "\n" + name
        at = text.find(needle)
        while at >= 0:
            _kind_value(text, at + len(needle), at + 1, found)
            at = text.find(needle, at + len(needle))
    found.sort()
    return [value for _, value in found]


def _kind_value(text: str, i: int, line: int, found: list[tuple[int, str]]) -> None:
    """Note in ``found`` the value after the key name that ends at ``i`` (on the line
    at ``line``), when spaces or tabs and then ':' follow it."""
    end = len(text)
    while i < end and (text[i] == " " or text[i] == "\t"):
        i += 1
    if i < end and text[i] == ":":
        stop = text.find("\n", i + 1)
        found.append((line, text[i + 1 : stop if stop >= 0 else end]))


def _dash_lines(text: str, end: int) -> Iterator[int]:
    """Offsets of the lines of ``text[:end]`` that start with "---" (str.find jumps
    between them; a MULTILINE regex "^" is tried at every character)."""
    if text.startswith("---", 0, end):
        yield 0
    pos = text.find("\n---", 0, end)
    while pos >= 0:
        yield pos + 1
        pos = text.find("\n---", pos + 1, end)


def _starts(text: str, end: int) -> list[int]:
    """Offsets where segments start in ``text[:end]`` (always including 0)."""
    starts = [0]
    for start in _dash_lines(text, end):
        if text[start + 3 : min(start + 4, end)] not in ("", " ", "\t", "\r", "\n"):
            continue  # "----" or "---x": not a marker
        # pull preceding directive lines ("%YAML 1.2"), and the comments and blank
        # lines between them and the marker, into the document they introduce
        line_start = cursor = start
        while cursor > 0:
            prev = text.rfind("\n", 0, cursor - 1) + 1
            line = text[prev:cursor].strip()
            if line.startswith("%"):
                line_start = prev
            elif line and not line.startswith("#"):
                break
            cursor = prev
        if line_start > starts[-1]:
            starts.append(line_start)
    return starts


def split(text: str) -> list[Segment]:
    """Split ``text`` (without BOM) into segments; ``"".join`` of their texts is ``text``."""
    return _segments(text, _starts(text, len(text)), len(text), 0, 1)[0] if text else []


def _segments(
    text: str, starts: list[int], end: int, offset: int, line: int
) -> tuple[list[Segment], int]:
    """The segments of ``text[:end]`` from its segment starts, and the line after them;
    ``offset`` and ``line`` are where ``text`` sits in the stream."""
    segments = []
    for begin, stop in pairwise([*starts, end]):
        chunk = text[begin:stop]
        segments.append(Segment(chunk, offset + begin, line))
        line += chunk.count("\n")
    return segments, line


def split_chunks(chunks: Iterable[str]) -> Iterator[Segment]:
    """:func:`split` of the concatenation of ``chunks``, holding only the current
    document (and one chunk) in memory: the same segments, offsets and lines.

    A segment start depends only on its marker line and the lines before it, so
    every segment before the last start of the text read so far is final (the
    text is cut at a line end: "---" at the very end may yet become "----").
    """
    pending: list[str] = []
    tail = ""  # the last characters read: a marker may straddle two chunks
    offset, line = 0, 1
    for chunk in chunks:
        if not chunk:
            continue
        pending.append(chunk)
        if "\n---" not in chunk and "\n---" not in tail + chunk[:3]:
            tail = (tail + chunk[-4:])[-4:]
            continue
        tail = chunk[-4:]
        buffer = "".join(pending) if len(pending) > 1 else chunk
        starts = _starts(buffer, buffer.rfind("\n") + 1)
        cut = starts[-1]
        if cut == 0:
            pending = [buffer]
            continue
        segments, line = _segments(buffer, starts[:-1], cut, offset, line)
        yield from segments
        offset += cut
        pending = [buffer[cut:]]
    rest = "".join(pending)
    if rest:
        yield from _segments(rest, _starts(rest, len(rest)), len(rest), offset, line)[0]


def decode(data: bytes) -> tuple[str, bool]:
    """Decode stdin bytes; return the text without BOM and whether a BOM was present.

    Bytes that are not UTF-8 are kept as surrogate escapes so that documents the
    tool does not touch still pass through unchanged.
    """
    text = data.decode("utf-8", errors="surrogateescape")
    if text.startswith(BOM):
        return text[1:], True
    return text, False


def encode(text: str, bom: bool) -> bytes:
    return ((BOM if bom else "") + text).encode("utf-8", errors="surrogateescape")
