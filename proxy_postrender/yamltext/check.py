"""Prove a splice right from what it inserted, without reading the output again.

The splicer reports, per operation, the text edits it made (see ``splice.edits_for``'s
``trace``). :func:`proved` takes those claims and checks them, at a cost that grows
with the inserted text and the touched collections, not with the document:

1. **The text is the input with exactly these edits.** The output must equal the input
   with the claimed edits made (no edits overlap): no line outside the edits was lost,
   moved or changed. (A comparison of strings, in C.)
2. **Each edit is the one its operation asks for, at its place.** A new key or items go
   as whole lines after the last entry of a non-empty block collection (or before an
   item's dash line); a deletion takes the whole lines of one entry whose line holds
   nothing else; a replaced scalar was on one line, plain or quoted.
3. **Each inserted snippet reads as intended, in context.** A snippet is read on its own
   (each distinct one once per run): one document, a mapping or a sequence as its
   collection. Its first line starts at the column of the collection's entries, and no
   line is indented less, so in the document its lines belong to that collection and to
   nothing around it; what precedes it ends before it (the input read so), and the next
   line after it is indented no more than the collection's entries (so no block scalar,
   plain continuation or comment of the snippet's last value takes it in). A replaced
   scalar is read as the value of a one-line mapping, with the rest of its line.
4. **Each touched collection holds what the expected data holds there.** Kept entries,
   deleted entries, new keys and their values, new items at their positions, the
   number of entries (so a key added twice, or next to the same key, is caught). Every
   key of a touched mapping is a plain scalar written at the mapping's own column at
   the start of its line (``splice.entry_column``): the key nodes counted are the
   mapping's lines, and the column of its entries is theirs.

What these checks do not cover, they decline (:func:`proved` is False) and the caller
reads the whole output again: flow collections, null or empty values filled or
restored, documents with anchors, aliases, tags or merge keys (``<<``: the mapping that
merges reads the merged pairs first, as key nodes at the merged mapping's places, and
the ``<<`` entry is no node at all), complex keys (``? name``), quoted keys or any key
not at its mapping's column in a touched mapping, ``+`` chomping, no final newline,
several documents in one segment, and any edit of another shape.
"""

from __future__ import annotations

import re

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Final

    from proxy_postrender.objects import Path
    from proxy_postrender.yamltext.ops import Op
    from proxy_postrender.yamltext.splice import Edit

from proxy_postrender.yamltext import splice
from proxy_postrender.yamltext.ops import (
    AddKey,
    AppendItems,
    DeleteItem,
    DeleteKey,
    InsertItems,
    SetValue,
    get,
)
from proxy_postrender.yamltext.read import load_documents
from proxy_postrender.yamltext.tree import MappingNode, Node, ScalarNode, SequenceNode

# (Constants here are Final: the compiled build reads them from C variables, not
# from the module's dict.)
# An anchor, an alias or a tag where a node may start: at the start of a line, after a
# dash, "?", ": " or a comma, or after a flow collection that opens there ("a && b" in a
# block value, "[ -S f ] && b" in a command, are none). Such a document is checked by
# reading it all.
_ANCHOR_ALIAS_TAG: Final = (
    r"(?m)(?:^[ \t]*(?:[-?][ \t]+)*|:[ \t]+)(?:[\[{][^\n]*)?[&*!]|,[ \t]*[&*!]"
)
# A block scalar header with "+" (keep) chomping: its value takes the blank lines after it.
_KEEP_CHOMPING: Final = r"[|>][1-9]?\+"
# A merge key: "<<" as a whole plain scalar (after a line's indentation, a dash, "? ", "{",
# "[" or a comma), then a colon and a space or the end of the line, or the end of the line
# (after "? "). The mapping that holds it reads the merged pairs first, as key nodes of
# its own at the merged mapping's places (a heredoc, "cat <<EOF", is none).
_MERGE_KEY: Final = r"(?m)(?:^|[ \t{\[,])<<[ \t]*(?::(?:[ \t,\]}]|\r?$)|\r?$|#)"
# Snippets already read in this run: (text, column) -> its data (_UNREAD: not read).
_SNIPPETS: Final[dict[tuple[str, int], Any]] = {}
_MAX_SNIPPETS: Final = 4096
_UNREAD: Final = object()

Trace = list[tuple["Op | None", list["Edit"]]]


def proved(before: str, after: str, root: Node, trace: Trace, expected: Any) -> bool:
    """Whether ``after`` (the one document of ``before``, whose node tree is ``root``,
    with the edits of ``trace`` made) reads back as ``expected`` — proved from the edits.
    False: not proved (the caller reads ``after`` in full)."""
    if not trace or not before.endswith("\n") or _odd(before) or _other_breaks(before):
        return False
    placed = _placed(before, after, [edit for _, edits in trace for edit in edits])
    if placed is None:
        return False
    try:
        return _Layouts(before, after, root, placed, expected).check(trace)
    except (splice.Unsupported, LookupError, TypeError):
        return False


def _other_breaks(text: str) -> bool:
    """Whether ``text`` holds a line break other than LF or CR LF: a CR alone, NEL, LS or
    PS, which YAML reads as line breaks too. The proof counts lines and columns from LF
    alone, so it cannot vouch for such a text (the full read does)."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return True
    # (all three are outside ASCII: an ASCII text, most of them, is not searched)
    return not text.isascii() and ("\x85" in text or "\u2028" in text or "\u2029" in text)


def _odd(text: str) -> bool:
    """Whether ``text`` may hold an anchor, alias, tag, keep chomping or a merge key
    (looked for in C first: most texts hold none of their characters)."""
    if ("&" in text or "*" in text or "!" in text) and re.search(_ANCHOR_ALIAS_TAG, text):
        return True
    if "<<" in text and re.search(_MERGE_KEY, text):
        return True
    return "+" in text and re.search(_KEEP_CHOMPING, text) is not None


def _placed(before: str, after: str, edits: list[Edit]) -> dict[int, int] | None:
    """Where each edit's text starts in ``after`` (by the edit's id), when ``after`` is
    ``before`` with exactly ``edits`` made, none overlapping; else None."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))  # stable: order at one point
    pieces: list[str] = []
    where: dict[int, int] = {}
    cursor = length = 0
    for edit in ordered:
        if edit.start < cursor or edit.end < edit.start:
            return None
        kept = before[cursor : edit.start]
        pieces.append(kept)
        length += len(kept)
        where[id(edit)] = length
        pieces.append(edit.text)
        length += len(edit.text)
        cursor = edit.end
    pieces.append(before[cursor:])
    return where if "".join(pieces) == after else None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _next_indent(text: str, pos: int) -> int:
    """The indentation of the first line at or after ``pos`` (a line start) that is not
    blank; -1 at the end of the text."""
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end].rstrip("\r")
        if line.strip(" "):
            return _indent(line)
        pos = end + 1
    return -1


def _snippet(text: str, col: int) -> Any:
    """The data of inserted lines ``text`` read on their own (_UNREAD: they are not whole
    lines that start at column ``col`` and none of whose lines is indented less, or not
    one document, or they hold an anchor, alias, tag or keep chomping).

    The lines are read ``col`` columns to the left (block structure is relative to the
    indentation, also a block scalar's indentation indicator), a sequence as the value
    of a key: the shape the fast block reader reads, so that libyaml is not loaded for
    it."""
    cached = _SNIPPETS.get((text, col), _SNIPPETS)
    if cached is not _SNIPPETS:
        return cached
    value: Any = _UNREAD
    lines = text.split("\n")
    if (
        text.endswith("\n")
        and _indent(lines[0]) == col
        and lines[0].strip(" \r")
        and all(_indent(line) >= col for line in lines[:-1] if line.strip(" \r"))
        and not _odd(text)
    ):
        left = "\n".join(line[col:] for line in lines) if col else text
        item = left.startswith("-")
        # at column 0, "%" starts a directive and "---" or "..." a document marker
        marked = left.startswith("%") or any(
            line.startswith(("---", "...")) for line in left.split("\n")
        )
        docs = None if marked else load_documents("x:\n" + left if item else left, spliced=True)
        if docs is not None and len(docs) == 1:
            value = docs[0]
            if item:
                value = value["x"] if isinstance(value, dict) and list(value) == ["x"] else _UNREAD
    if len(_SNIPPETS) >= _MAX_SNIPPETS:
        _SNIPPETS.clear()
    _SNIPPETS[text, col] = value
    return value


def _scalar(text: str) -> Any:
    """The value of a scalar ``text`` (with the rest of its line) as a block value."""
    if "\n" in text or "\r" in text or _odd(text):
        return _UNREAD
    data = _snippet(f"x: {text}\n", 0)
    if isinstance(data, dict) and len(data) == 1 and "x" in data:
        return data["x"]
    return _UNREAD


def _plain_keys(text: str, node: MappingNode) -> bool:
    """Whether every key of the block mapping ``node`` is a plain scalar written at the
    mapping's own column, at the start of its line (the first after the dashes of the
    items it opens): what :meth:`_Layouts.holds` counts and the edits' columns come from.
    Not so: a complex key (``? name``), a quoted or flow one, or a key of a mapping
    merged in (a document with a merge key is not proved: see ``_MERGE_KEY``).

    Without a "?" in the text (looked for in C), there is no complex key, and YAML puts
    every other key of a block mapping at its column (libyaml refuses a key indented
    otherwise): only the keys' kind and style are looked at then."""
    placed = "?" in text  # where the keys are is looked at
    col = splice.entry_column(text, node) if placed else 0
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.style:
            return False
        if placed and not splice.own_key(text, node, key, col):
            return False
    return True


class _Change:
    """What the edits do to one block collection: per original index (mapping: per key)
    deleted or replaced, and what goes in before an index (its length: at the end)."""

    __slots__ = ("added", "deleted", "node", "replaced")

    def __init__(self, node: Node) -> None:
        self.node = node
        self.deleted: set[Any] = set()
        self.replaced: dict[Any, Any] = {}
        self.added: list[tuple[int, Any]] = []  # (position, data), in text order


class _Layouts:
    def __init__(
        self, before: str, after: str, root: Node, placed: dict[int, int], expected: Any
    ) -> None:
        self.before = before
        self.after = after
        self.root = root
        self.placed = placed
        self.expected = expected
        self.changes: dict[Path, _Change] = {}

    def change(self, path: Path, node: Node) -> _Change:
        found = self.changes.get(path)
        if found is None:
            found = self.changes[path] = _Change(node)
        return found

    def check(self, trace: Trace) -> bool:
        for op, edits in trace:
            if op is None or len(edits) != 1 or not self.edit(op, edits[0]):
                return False
        # a path through a sequence whose items moved would name another item now
        moved = {p for p, c in self.changes.items() if c.deleted or self._inserted_inside(c)}
        for path in self.changes:
            if any(path[:i] in moved for i, step in enumerate(path) if isinstance(step, int)):
                return False
        return all(self.holds(path, change) for path, change in self.changes.items())

    @staticmethod
    def _inserted_inside(change: _Change) -> bool:
        node = change.node
        return isinstance(node, SequenceNode) and any(
            at < len(node.value) for at, _ in change.added
        )

    def edit(self, op: Op, edit: Edit) -> bool:
        text = self.before
        if type(op) is AddKey or type(op) is AppendItems or type(op) is InsertItems:
            coll = splice.resolve(self.root, op.path)
            if not isinstance(coll, (MappingNode, SequenceNode)) or not coll.value:
                return False
            if not splice.is_block(coll) or edit.start != edit.end:
                return False
            if isinstance(coll, MappingNode) and type(op) is AddKey:
                col = splice.entry_column(text, coll)
            elif isinstance(coll, SequenceNode) and type(op) is not AddKey:
                col = splice.column(text, self._dash(coll.value[0]))
            else:
                return False
            index = len(coll.value)
            if type(op) is InsertItems and op.index < len(coll.value):
                assert isinstance(coll, SequenceNode)
                index = op.index
                dash = self._dash(coll.value[index])
                if edit.start != splice.line_start(text, dash):
                    return False
            else:
                end = splice.content_end(coll)
                if edit.start != splice.next_line_start(text, end):
                    return False
                rest = text[end : edit.start].strip()
                if rest and not rest.startswith("#"):
                    return False
            data = self._inserted(edit, col)
            if data is _UNREAD:
                return False
            change = self.change(op.path, coll)
            if type(op) is AddKey:
                if not isinstance(data, dict) or list(data) != [op.key]:
                    return False
                change.added.append((index, (op.key, data[op.key])))
            else:
                if not isinstance(data, list) or not data:
                    return False
                change.added.extend((index, item) for item in data)
            return True
        if type(op) is DeleteItem or type(op) is DeleteKey:
            coll = splice.resolve(self.root, op.path[:-1])
            if not splice.is_block(coll) or edit.text:
                return False
            if type(op) is DeleteItem:
                if not isinstance(coll, SequenceNode):
                    return False
                entry = coll.value[int(op.path[-1])]
                first = self._dash(entry)
            else:
                if not isinstance(coll, MappingNode):
                    return False
                key_node, entry = splice.mapping_entry(coll, str(op.path[-1]))
                first = key_node.start
            begin = splice.line_start(text, first)
            if text[begin:first].strip(" ") or edit.start != begin:
                return False
            if edit.end != splice.next_line_start(text, splice.content_end(entry)):
                return False
            col = splice.column(text, first)
            if _next_indent(self.after, self.placed[id(edit)]) > col:
                return False
            self.change(op.path[:-1], coll).deleted.add(op.path[-1])
            return True
        if type(op) is SetValue:
            if not isinstance(op.value, str) or not op.path:
                return False
            coll = splice.resolve(self.root, op.path[:-1])
            node = splice.resolve(self.root, op.path)
            if not isinstance(coll, (MappingNode, SequenceNode)) or not splice.is_block(coll):
                return False
            if not isinstance(node, ScalarNode) or node.style not in ("", "'", '"'):
                return False
            if (edit.start, edit.end) != (node.start, node.end) or node.start == node.end:
                return False
            if "\n" in text[node.start : node.end]:
                return False
            line_end = text.find("\n", node.end)
            value = _scalar(edit.text + text[node.end : line_end])
            if value is _UNREAD:
                return False
            self.change(op.path[:-1], coll).replaced[op.path[-1]] = value
            return True
        return False

    def _dash(self, item: Node) -> int:
        dash = splice.dash_position(self.before, item)
        if self.before[splice.line_start(self.before, dash) : dash].strip(" "):
            raise splice.Unsupported("a dash after other content")
        return dash

    def _inserted(self, edit: Edit, col: int) -> Any:
        """The data of an inserted snippet, when it starts a line of the output and the
        next line after it is indented no more than ``col``."""
        at = self.placed[id(edit)]
        if at and self.after[at - 1] != "\n":
            return _UNREAD
        if _next_indent(self.after, at + len(edit.text)) > col:
            return _UNREAD
        return _snippet(edit.text, col)

    def holds(self, path: Path, change: _Change) -> bool:
        """Whether the expected data at ``path`` is the collection as the edits leave it."""
        have = get(self.expected, path)
        node = change.node
        if isinstance(node, MappingNode):
            return (
                isinstance(have, dict)
                and _plain_keys(self.before, node)
                and self._mapping(have, node, change)
            )
        assert isinstance(node, SequenceNode)
        return isinstance(have, list) and self._sequence(have, node, change)

    @staticmethod
    def _mapping(have: dict[Any, Any], node: MappingNode, change: _Change) -> bool:
        kept = 0
        keys: set[str] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, ScalarNode):
                return False
            key = key_node.value
            if key in change.deleted:
                if key in have:
                    return False
                continue
            if key not in have or key in keys:
                return False
            keys.add(key)
            kept += 1
            if key in change.replaced and have[key] != change.replaced[key]:
                return False
        if not kept or len(change.replaced.keys() - keys):
            return False
        for _, (key, value) in change.added:
            if key in keys or key not in have or have[key] != value:
                return False
            keys.add(key)
        return len(have) == len(keys)

    @staticmethod
    def _sequence(have: list[Any], node: SequenceNode, change: _Change) -> bool:
        n = len(node.value)
        if not all(isinstance(i, int) and 0 <= i < n for i in change.deleted):
            return False
        if len(change.deleted) == n or any(i in change.deleted for i in change.replaced):
            return False
        added = sorted(range(len(change.added)), key=lambda k: change.added[k][0])  # stable
        position = 0
        slot = 0
        for index in range(n + 1):
            while position < len(added) and change.added[added[position]][0] == index:
                if slot >= len(have) or have[slot] != change.added[added[position]][1]:
                    return False
                position += 1
                slot += 1
            if index < n and index not in change.deleted:
                if index in change.replaced and (
                    slot >= len(have) or have[slot] != change.replaced[index]
                ):
                    return False
                slot += 1
        return slot == len(have)
