"""Carry out operations by editing the raw text of a document.

Positions come from :mod:`tree` nodes (the fast block reader's, or libyaml's).
Block collections get new lines in the document's own indentation; flow
collections (JSON, ``{a: b}``) get new entries after their last one (or before
their first), on one line or each on a line of its own as the collection
writes them, with its separator, and with strings double-quoted where the
document quotes its keys as JSON does. A layout not edited here raises
:class:`Unsupported`, and the caller falls back to a round-trip dump.
"""

from __future__ import annotations

from collections.abc import Iterable

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.patterns import compiled

if TYPE_CHECKING:
    from typing import Any, Final

from proxy_postrender import structs
from proxy_postrender.objects import Path
from proxy_postrender.structs import FrozenStruct
from proxy_postrender.yamltext import scalars
from proxy_postrender.yamltext.ops import (
    AddKey,
    AppendItems,
    DeleteItem,
    DeleteKey,
    InsertItems,
    Op,
    SetValue,
)
from proxy_postrender.yamltext.tree import MappingNode, Node, ScalarNode, SequenceNode


class Unsupported(Exception):
    """The layout at an edit point is not one the splicer edits in place."""


class Edit(FrozenStruct):
    start: int
    end: int
    text: str

    def __init__(self, start: int, end: int, text: str) -> None:
        # Several a document: an __init__ of its own is compiled in the compiled build,
        # where the records' shared one (structs.py) runs as Python. The same fields, in
        # order (tests/test_structs.py compares the two).
        self.__dict__.update(start=start, end=end, text=text)


class Style(FrozenStruct):
    """How a document indents: nested mapping keys and sequence dashes."""

    map_indent: int = 2
    seq_offset: int = 2  # dash column minus the column of the key that holds the sequence
    # "|" block scalars for multi-line values; off where the text has no final
    # newline (a block scalar at the very end would lose its last line break)
    literal: bool = True


def is_block(node: Node) -> bool:
    return not isinstance(node, (MappingNode, SequenceNode)) or node.block


def lf_view(text: str) -> str:
    """``text`` with the line breaks YAML reads besides LF and CR LF (NEL, LS, PS, a CR
    alone) turned into LF, one character for one: positions stay, and the lines and
    columns this module counts from LF are the reader's. Edits made on this view apply
    to ``text`` itself (what they copy from it is never a line break), so such a break
    stays as it was, as ``--remove`` needs."""
    if not text.isascii() and ("\x85" in text or "\u2028" in text or "\u2029" in text):
        text = text.translate(_OTHER_BREAKS)
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        text = _LONE_CR.sub("\n", text)
    return text


_OTHER_BREAKS: Final = {0x85: "\n", 0x2028: "\n", 0x2029: "\n"}
_LONE_CR: Final = compiled("\r(?!\n)")


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def next_line_start(text: str, pos: int) -> int:
    """The start of the line after ``pos`` (``pos`` itself if it starts a line)."""
    if pos == 0 or text[pos - 1] == "\n":
        return pos
    newline = text.find("\n", pos)
    return len(text) if newline < 0 else newline + 1


def column(text: str, pos: int) -> int:
    return pos - line_start(text, pos)


def content_end(node: Node) -> int:
    """Offset just after the last character that belongs to ``node``'s content."""
    return _last_node(node).end


def mapping_entry(node: Node, key: str) -> tuple[Node, Node]:
    """The pair of ``key`` in a mapping: the last one (a mapping merged in with ``<<``
    comes first in the node, and the mapping's own key, after it, is the one read)."""
    if not isinstance(node, MappingNode):
        raise Unsupported("not a mapping")
    for key_node, value_node in reversed(node.value):
        if isinstance(key_node, ScalarNode) and key_node.value == key:
            return key_node, value_node
    raise Unsupported(f"no key {key!r}")


# The column of a block mapping's entries. Not that of its first key node: where the
# mapping merges another in (``<<: {image: busybox}``, ``<<:`` and a block, ``<<: *a``),
# the constructor puts the merged mapping's pairs first, at their own places; after a
# ``? `` the key node starts two columns on. The mapping's own first token (its first
# key, ``<<`` or ``?``; after an anchor or a tag, the first thing on the next line that
# holds any) is where its entries start their lines; a key of its own, a scalar written
# at that column at the start of a line, confirms it.


def starts_line(text: str, pos: int, dashes: bool = False) -> bool:
    """Whether only spaces come before ``pos`` on its line (``dashes``: or the ``- ``
    of the block sequence items that open there)."""
    begin = text.rfind("\n", 0, pos) + 1
    if text.count(" ", begin, pos) == pos - begin:  # (in C, nothing copied)
        return True
    return dashes and not text[begin:pos].replace("- ", "  ").strip(" ")


def own_key(text: str, mapping: MappingNode, key: Node, col: int) -> bool:
    """Whether ``key`` is a scalar key written in ``mapping`` itself at column ``col`` (the
    mapping's first token, or the first thing on its line): not the key of a mapping
    merged in, nor one after a ``? ``."""
    start = key.start
    if not isinstance(key, ScalarNode) or not mapping.start <= start <= mapping.end:
        return False
    begin = text.rfind("\n", 0, start) + 1
    if start - begin != col:
        return False
    return start == mapping.start or text.count(" ", begin, start) == col


def first_entry(text: str, mapping: MappingNode) -> int:
    """Where the first entry of the block ``mapping`` starts: its first token, or after
    its anchor and tag, the first thing on the next line that is not blank or a comment.
    Unsupported when something other than spaces and the ``- `` of sequence items comes
    before it on its line, or other content follows the anchor or tag on theirs."""
    start = mapping.start
    if not mapping.value or start >= len(text):
        raise Unsupported("an empty mapping")
    if text[start] in "&!":
        line_end = text.find("\n", start)
        if line_end < 0:
            raise Unsupported("a mapping that is only its properties")
        for token in text[start:line_end].split():
            if token.startswith("#"):
                break
            if token[0] not in "&!":
                raise Unsupported("a mapping that does not start its line")
        start = _next_content(text, line_end + 1)
    elif not starts_line(text, start, dashes=True):
        raise Unsupported("a mapping that does not start its line")
    return start


def _next_content(text: str, pos: int) -> int:
    """Where the first line at or after ``pos`` (a line start) that is not blank or a
    comment starts its content."""
    while pos < len(text):
        newline = text.find("\n", pos)
        newline = len(text) if newline < 0 else newline
        line = text[pos:newline]
        content = line.strip(" \r")
        if content and not content.startswith("#"):
            return pos + len(line) - len(line.lstrip(" "))
        pos = newline + 1
    raise Unsupported("no content after a mapping's properties")


def entry_column(text: str, mapping: MappingNode) -> int:
    """The column at which the entries of the block ``mapping`` start their lines (see
    above); Unsupported when that cannot be told (see :func:`first_entry`; no scalar key
    of its own at that column)."""
    start = mapping.start
    if mapping.value:
        first = mapping.value[0][0]
        # most mappings: the first key node is the first token, after spaces or the
        # dashes of the items it opens
        if (
            first.start == start
            and isinstance(first, ScalarNode)
            and starts_line(text, start, dashes=True)
        ):
            return column(text, start)
    start = first_entry(text, mapping)
    col = column(text, start)
    first = mapping.value[0][0]
    if first.start == start and isinstance(first, ScalarNode):
        return col  # (most mappings: the first key node is the first token)
    for key, _ in mapping.value:
        if own_key(text, mapping, key, col):
            return col
    raise Unsupported("no key of the mapping's own at its column")


def own_entry(text: str, mapping: Node, key: str) -> tuple[Node, Node]:
    """:func:`mapping_entry` in a block mapping, where the key must be one of the
    mapping's own at its column (not merged in, not after ``? ``)."""
    key_node, value_node = mapping_entry(mapping, key)
    assert isinstance(mapping, MappingNode)
    if not own_key(text, mapping, key_node, entry_column(text, mapping)):
        raise Unsupported("a key merged in or after '? '")
    return key_node, value_node


def block_end(text: str, node: Node, deeper: int, merge_next: bool = False) -> int:
    """The start of the line after ``node``'s content, when nothing of ``node`` comes
    after it: the next line that is not blank or a comment is indented less than
    ``deeper`` (the least indentation a line of ``node`` may have) and goes on with no
    flow collection. Else Unsupported: the last pair of a mapping in it is not the last
    entry there (a ``<<`` entry after it), or a flow collection goes on. ``merge_next``:
    a ``<<`` entry at ``deeper`` may follow (a new key goes before it). A document
    marker may follow at column 0."""
    end = next_line_start(text, content_end(node))
    pos = end
    while pos < len(text):
        newline = text.find("\n", pos)
        newline = len(text) if newline < 0 else newline
        line = text[pos:newline]
        content = line.strip(" \t\r")
        if content and not content.startswith("#"):
            indent = len(line) - len(line.lstrip(" "))
            if content[0] in ",]}" or (
                indent >= deeper
                and not (merge_next and indent == deeper and content.startswith("<<"))
                and not (indent == 0 and content.startswith(("---", "...")))
            ):
                raise Unsupported("more of the collection after its last entry")
            break
        pos = newline + 1
    return end


def mapping_end(text: str, mapping: MappingNode, col: int) -> int:
    """Where a new key goes in the block ``mapping`` whose entries are at ``col``: after
    the content of its last pair, which must be one of its own (the pairs of a mapping
    merged in come first, but a mapping may hold only those)."""
    if not own_key(text, mapping, mapping.value[-1][0], col):
        raise Unsupported("the last pair is not a key of the mapping's own")
    return block_end(text, mapping, col, merge_next=True)


def resolve(root: Node, path: Path) -> Node:
    node = root
    for step in path:
        if isinstance(step, int):
            if not isinstance(node, SequenceNode):
                raise Unsupported("not a sequence")
            node = node.value[step]
        else:
            node = mapping_entry(node, step)[1]
    return node


def detect_style(text: str, root: Node) -> Style:
    """Read the indentation of the first nested block mapping and block sequence."""
    text = lf_view(text)
    map_indent: int | None = None
    seq_offset: int | None = None
    stack: list[Node] = [root]
    seen: set[int] = set()
    while stack and (map_indent is None or seq_offset is None):
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        # (the loops below push in reverse without building a reversed copy: this runs
        # for every changed document)
        # (only collections are pushed: a scalar has nothing to tell)
        if not isinstance(node, MappingNode) or not is_block(node):
            if isinstance(node, SequenceNode):
                for item in reversed(node.value):
                    if isinstance(item, (MappingNode, SequenceNode)):
                        stack.append(item)
            continue
        for key_node, value in node.value:
            if not isinstance(value, (MappingNode, SequenceNode)) or not value.block:
                continue
            if not value.value:
                continue
            if isinstance(value, MappingNode) and map_indent is None:
                map_indent = _nested_indent(text, key_node, value)  # None: look further
            elif isinstance(value, SequenceNode) and seq_offset is None:
                try:
                    dash = dash_position(text, value.value[0])
                    seq_offset = column(text, dash) - column(text, key_node.start)
                except Unsupported:
                    pass  # no dash line of its own: look further
        for _, value in reversed(node.value):
            if isinstance(value, (MappingNode, SequenceNode)):
                stack.append(value)
    return Style(
        map_indent if map_indent and map_indent > 0 else 2,
        seq_offset if seq_offset is not None and seq_offset >= 0 else 2,
    )


def _nested_indent(text: str, key_node: Node, value: MappingNode) -> int | None:
    """How many columns the entries of ``value`` start right of its key (None: not told,
    the key is after a ``? `` or the value's column is not known)."""
    if not starts_line(text, key_node.start, dashes=True):
        return None
    try:
        return entry_column(text, value) - column(text, key_node.start)
    except Unsupported:
        return None


def dash_position(text: str, item: Node) -> int:
    """Offset of the ``-`` that introduces a block sequence item."""
    pos: int = item.start - 1
    while pos >= 0 and text[pos] in " \t\r\n":
        pos -= 1
    if pos < 0 or text[pos] != "-" or text[line_start(text, pos) : pos].strip():
        raise Unsupported("sequence item without its own dash line")
    return pos


def _block(value: Any, indent: int, style: Style) -> list[str]:
    """Block-style lines for ``value`` (a dict or list), starting at ``indent``."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict):
                lines.append(f"{pad}{scalars.render(key)}:")
                lines.extend(_block(item, indent + style.map_indent, style))
            elif isinstance(item, list):
                lines.append(f"{pad}{scalars.render(key)}:")
                lines.extend(_block(item, indent + style.seq_offset, style))
            elif isinstance(item, str) and style.literal and scalars.literal_ok(item):
                lines.append(f"{pad}{scalars.render(key)}: |")
                inner = " " * (indent + style.map_indent)
                lines.extend(inner + line for line in item[:-1].split("\n"))
            else:
                lines.append(f"{pad}{scalars.render(key)}: {_block_scalar(item)}")
        return lines
    for element in value:
        lines.extend(_item(element, indent, 2, style))
    return lines


# (Constants here are Final: the compiled build reads them from C variables, not
# from the module's dict.)
# Lines already rendered, by what was rendered and where (see _rendered): the planners
# give document after document the same entries (the proxy variables, the ownership
# record) at the same columns, and rendering them is most of the splice's work.
_RENDERED: Final[dict[tuple[Any, ...], tuple[str, ...]]] = {}
_MAX_RENDERED: Final = 1024


class _Unkeyed(Exception):
    """A value with a part whose rendering :func:`_key` does not vouch for."""


def _key(value: Any) -> Any:
    """``value`` as a hashable key equal only for values that render alike: exact types
    (``True`` is not ``1``, a tuple is not a list, a dict subclass is not a dict), keys
    in order. Raises :class:`_Unkeyed` on any other type (it is rendered uncached)."""
    # (``type(value) is`` each time: it tells the compiled build the type, for the
    # loops; lists, then tuples: a list comprehension is made in one go)
    # (a string is its own key: taken without a call, most parts are strings)
    if type(value) is str or value is None:
        return value  # equal to no key of another type
    if type(value) is dict:
        return (
            dict,
            tuple(
                [
                    (k if type(k) is str else _key(k), v if type(v) is str else _key(v))
                    for k, v in value.items()
                ]
            ),
        )
    if type(value) is list:
        return (list, tuple([v if type(v) is str else _key(v) for v in value]))
    if type(value) is tuple:
        return (tuple, tuple([v if type(v) is str else _key(v) for v in value]))
    if type(value) is int or type(value) is bool:
        return (type(value), value)
    raise _Unkeyed


def _rendered(value: Any, indent: int, offset: int, style: Style) -> tuple[str, ...]:
    """The lines of ``value`` at column ``indent``: a mapping's entries (``offset``
    ignored) or a sequence's items, content ``offset`` columns after their dash;
    rendered once per run for each value, place and style (an error is not kept)."""
    try:
        key = (_key(value), indent, offset, style.map_indent, style.seq_offset, style.literal)
    except _Unkeyed:
        key = None
    found = _RENDERED.get(key) if key is not None else None
    if found is not None:
        return found
    if isinstance(value, dict):
        lines = tuple(_block(value, indent, style))
    else:
        lines = tuple(line for item in value for line in _item(item, indent, offset, style))
    if key is not None:
        if len(_RENDERED) >= _MAX_RENDERED:
            _RENDERED.clear()
        _RENDERED[key] = lines
    return lines


def block_lines(value: dict[str, Any]) -> list[str]:
    """A whole new document in block style, two-space indents."""
    return _block(value, 0, Style(seq_offset=0))


def _block_scalar(value: Any) -> str:
    if isinstance(value, str):
        return scalars.render_block(value)
    other = scalars.render_other(value)
    if other is None:
        raise Unsupported(f"no rendering for a {type(value).__name__}")
    return other


def _flow_text(value: Any, quote: bool) -> str:
    """``value`` in flow style on one line (strings double-quoted with ``quote``)."""
    if isinstance(value, dict):
        pairs = (f"{_flow_text(k, quote)}: {_flow_text(v, quote)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow_text(v, quote) for v in value) + "]"
    if isinstance(value, str):
        return scalars.render_flow(value, quote)
    return _block_scalar(value)


def _item(element: Any, dash_col: int, content_offset: int, style: Style) -> list[str]:
    if not isinstance(element, (dict, list)):
        return [" " * dash_col + "- " + _block_scalar(element)]
    inner = _block(element, dash_col + content_offset, style)
    first = inner[0]
    return [" " * dash_col + "-" + first[dash_col + 1 :], *inner[1:]]


def _item_offset(text: str, first: Node, dash_col: int) -> int:
    """How many columns after its dash the first item's mapping starts (2 by default)."""
    if not isinstance(first, MappingNode) or not first.value:
        return 2
    if not is_block(first):  # "- {name: a}": where its first key is
        return max(2, column(text, first.value[0][0].start) - dash_col)
    try:
        return max(2, entry_column(text, first) - dash_col)
    except Unsupported:
        return 2


def _kept_blank_lines(text: str, start: int, end: int, spaces: int | None = None) -> int:
    """``end`` (a line start after ``start``) moved back over the blank lines that end the
    range: a block scalar's node ends after the blank lines that follow it, but the tool
    writes no blank line, so they are the input's and stay (``--remove`` gives them back
    where the tool's lines came between them and the scalar before). ``spaces``: a blank
    line is at most that many spaces (more would be the scalar's content); None: any
    line of white space (the range is the tool's, which writes none)."""
    while end > start:
        begin = text.rfind("\n", start, end - 1) + 1
        line = text[begin:end].rstrip("\r\n")
        if begin <= start or (
            line.strip(" \t") if spaces is None else line.strip(" ") or len(line) > spaces
        ):
            break
        end = begin
    return end


def _after(text: str, node: Node, end: int) -> int:
    """Where lines added after ``node`` go, given ``end``, the start of the line after
    its content (:func:`block_end`): before the blank lines a block scalar that ends it
    took in (the input's: they stay after what is added, and so after what ``--remove``
    takes out again), unless the scalar keeps them (``|+``: they are its value). Lines
    of more spaces than the scalar's indentation are its content, and stay in it."""
    last = _last_node(node)
    header = _block_header(text, last)
    if not header or "+" in header:
        return end  # only a block scalar takes in the lines after it, and |+ keeps them
    return _kept_blank_lines(text, node.start, end, _content_indent(text, last, header))


def _content_indent(text: str, scalar: Node, header: str) -> int:
    """How many spaces a blank line of the block ``scalar`` may hold and still be blank:
    its content indentation (that of its first line with more than spaces); 0 with an
    indentation indicator (``|2``: the parent's indentation is not looked up here), or
    when no line has content."""
    if any(c.isdigit() for c in header):
        return 0
    body_start = text.find("\n", scalar.start) + 1
    if body_start <= 0:
        return 0
    for line in text[body_start : scalar.end].split("\n"):
        content = line.rstrip("\r")
        if content.strip(" "):
            return len(content) - len(content.lstrip(" "))
    return 0


def _replace_literal(text: str, node: ScalarNode, value: str, newline: str) -> Edit:
    """The lines of a ``|`` (or ``|-``, ``|+``) block scalar given ``value``, in its
    header, indentation and line breaks (an embedded document held in a string field).
    A ``|+`` keeps its blank lines at the end as the input writes them (spaces and all)
    while the value ends in as many line breaks."""
    header = _block_header(text, node).strip()
    kept = value + "\n" if header == "|-" else value
    if header == "|+":
        kept = value.rstrip("\n") + "\n"
    if header not in ("|", "|-", "|+") or value.endswith("\n") == (header == "|-"):
        raise Unsupported(f"a block scalar {header!r} takes no such value")
    if not scalars.literal_ok(kept):
        raise Unsupported("the value cannot be written as the block scalar it replaces")
    indent = _content_indent(text, node, header)
    body_start = text.find("\n", node.start) + 1
    end = _kept_blank_lines(text, node.start, node.end, indent)
    if indent == 0 or body_start <= 0 or end <= body_start or not text[:end].endswith("\n"):
        raise Unsupported("a block scalar without a body of its own")
    lines = [(" " * indent + line) if line else "" for line in kept[:-1].split("\n")]
    body = newline.join(lines) + newline
    if header != "|+":
        return Edit(body_start, end, body)
    breaks = len(value) - len(kept)  # the blank lines that end the value
    tail = text[end : node.end]
    if tail.count("\n") != breaks or len(tail.splitlines()) != breaks:
        tail = newline * breaks
    return Edit(body_start, node.end, body + tail)


def _block_header(text: str, node: Node) -> str:
    """The indicators of a block scalar (``|``, ``>-``, ``|+2``); "" for any other node."""
    if not isinstance(node, ScalarNode) or node.style not in ("|", ">"):
        return ""
    header_end = text.find("\n", node.start)
    return text[node.start : header_end if header_end >= 0 else len(text)].split("#", 1)[0]


def _delete_lines(text: str, start: int, end: int) -> Edit:
    """Delete whole lines (not the blank lines that end them, :func:`_kept_blank_lines`);
    at the end of a text without a final newline, take the line break before them."""
    end = _kept_blank_lines(text, start, end)
    if end == len(text) and text and not text.endswith("\n") and start > 0:
        start -= 2 if text[start - 2 : start] == "\r\n" else 1
    return Edit(start, end, "")


def _insert_lines(text: str, pos: int, lines: Iterable[str], newline: str) -> Edit:
    body = newline.join(lines)
    if pos == len(text) and text and not text.endswith("\n"):
        return Edit(pos, pos, newline + body)
    return Edit(pos, pos, body + newline)


def _add_key(text: str, mapping: MappingNode, end: int, lines: Iterable[str], newline: str) -> Edit:
    """The new key's ``lines`` after the mapping's last entry; before it when that entry
    ends a text without a final newline with a block scalar that keeps its last line
    break (``|``, ``>``, ``|+``): a line after it would give the scalar that break (its
    value would change, and a ``-`` to prevent it would outlive ``--remove``)."""
    if end < len(text) or text.endswith("\n") or not _keeps_break(text, _last_node(mapping)):
        return _insert_lines(text, end, lines, newline)
    key_node = mapping.value[-1][0]
    start = line_start(text, key_node.start)
    if text[start : key_node.start].strip():
        raise Unsupported("a block scalar ends the text after a key on a dash's line")
    return Edit(start, start, newline.join(lines) + newline)


def ends_in_open_block_scalar(text: str, root: Node) -> bool:
    """Whether ``root`` ends ``text``, which has no final newline, with a block scalar
    that keeps its last line break (``|``, ``>``, ``|+``): a re-dump must write it with
    ``-`` to keep its value, and ``--remove`` could not give the input back."""
    text = lf_view(text)
    if not text or text.endswith("\n"):
        return False
    node = _last_node(root)
    return next_line_start(text, node.end) == len(text) and _keeps_break(text, node)


def _last_node(node: Node) -> Node:
    """The node whose content ends ``node``'s: the last value of its last entry, down
    through block collections."""
    seen: set[int] = set()
    while isinstance(node, (MappingNode, SequenceNode)) and node.value and is_block(node):
        if id(node) in seen:
            raise Unsupported("recursive alias")
        seen.add(id(node))
        node = node.value[-1][1] if isinstance(node, MappingNode) else node.value[-1]
    return node


def _keeps_break(text: str, node: Node) -> bool:
    """Whether ``node`` is a block scalar without ``-`` (strip) in its header."""
    header = _block_header(text, node)
    return bool(header) and "-" not in header


def _line_break_start(text: str, pos: int) -> int:
    """Where the line break that ends just before ``pos`` (a line start, or the end of a
    text without a final newline) begins: an edit up to there keeps the break."""
    if text[pos - 2 : pos] == "\r\n":
        return pos - 2
    return pos - 1 if pos and text[pos - 1] == "\n" else pos


def _is_empty(node: Node) -> bool:
    if isinstance(node, (MappingNode, SequenceNode)):
        return not node.value
    return isinstance(node, ScalarNode) and node.null


def _clear(text: str, node: Node) -> Edit:
    """Delete a block collection that starts on its own line: ``key:`` stays, null."""
    if not isinstance(node, (MappingNode, SequenceNode)) or not is_block(node) or not node.value:
        raise Unsupported("only block collections are cleared")
    if isinstance(node, MappingNode):
        entry_column(text, node)
        first = first_entry(text, node)
    else:
        first = dash_position(text, node.value[0])
    start = line_start(text, first)
    if text[start:first].strip():
        raise Unsupported("mapping does not start on its own line")
    deeper = column(text, first) + (0 if isinstance(node, MappingNode) else 1)
    return _delete_lines(text, start, block_end(text, node, deeper))


def _collapse(text: str, root: Node, op: SetValue, newline: str) -> Edit:
    """Turn a block collection back into ``key: []`` or ``key: {}`` (its key's comment stays)."""
    parent = resolve(root, op.path[:-1])
    if not isinstance(parent, MappingNode) or not is_block(parent):
        raise Unsupported("sequence is not in a block mapping")
    key_node, value_node = own_entry(text, parent, str(op.path[-1]))
    if not is_block(value_node):
        raise Unsupported("not a block collection")
    colon = text.find(":", key_node.end)
    key_line_end = text.find("\n", colon)
    if colon < 0 or key_line_end < 0 or key_line_end > value_node.start:
        raise Unsupported("sequence does not start on the line after its key")
    comment = text[colon + 1 : key_line_end].strip()
    end = block_end(text, value_node, column(text, key_node.start) + 1)
    end = _kept_blank_lines(text, colon, end)
    body = (" []" if op.value == [] else " {}") + (f"  {comment}" if comment else "")
    return Edit(colon + 1, _line_break_start(text, end), body)


def _set_collection(text: str, root: Node, op: SetValue, style: Style, newline: str) -> list[Edit]:
    """Fill an empty or null value (``key:``, ``key: []``, ``key: {}``, ``key: ~``, on the
    key's line or the next) with a block collection: lines are added after the value's
    line, and only the empty token goes (with its line when it has one of its own); the
    key's line, comments and blank lines stay as they are."""
    if not op.path or not isinstance(op.path[-1], str):
        raise Unsupported("collection target is not a mapping value")
    parent = resolve(root, op.path[:-1])
    if not isinstance(parent, MappingNode) or not is_block(parent):
        raise Unsupported("collection target is not in a block mapping")
    key_node, value_node = own_entry(text, parent, op.path[-1])
    if not _is_empty(value_node):
        raise Unsupported("only empty values are replaced by collections")
    colon = text.find(":", key_node.end)
    if colon < 0 or text[key_node.end : colon].strip():
        raise Unsupported("no ':' after the key")
    key_col = column(text, key_node.start)
    nested = style.map_indent if isinstance(op.value, dict) else style.seq_offset
    lines = _block(op.value, key_col + nested, style)
    if isinstance(value_node, ScalarNode) and not value_node.value:
        # "key:" (perhaps with a comment): a pure insertion after the key's line
        return [_insert_lines(text, next_line_start(text, colon + 1), lines, newline)]
    start, end = value_node.start, value_node.end
    if start == end or start < colon:
        raise Unsupported("an empty value without a token")
    line_end = next_line_start(text, end)
    after = text[end:line_end].strip()
    if after and not after.startswith("#"):
        raise Unsupported("more content after the value")
    begin = line_start(text, start)
    added = newline.join(lines)
    # one edit that ends where the value's line ends, before its line break (which stays,
    # whatever its kind): new keys added after the mapping (which ends there too) come
    # after these lines
    stop = _line_break_start(text, line_end)
    if begin <= colon:  # on the key's line: the token goes (a comment after it stays)
        return [Edit(colon + 1, stop, (f" {after}" if after else "") + newline + added)]
    if text[begin:start].strip(" "):
        raise Unsupported("the value shares its line with something else")
    if not after:  # on a line of its own: the line goes, the new lines take its place
        return [Edit(begin, stop, added)]
    # a comment after it stays on that line
    return [Edit(start, stop, text[end:stop] + newline + added)]


def _restore(text: str, root: Node, op: SetValue, newline: str) -> Edit:
    """Give a value the tool filled back its input text (``op.text``: everything after the
    key's colon up to the end of the value's line), in place of all that follows the
    colon now, up to the end of the collection."""
    assert op.text is not None
    parent = resolve(root, op.path[:-1])
    if not isinstance(parent, MappingNode) or not is_block(parent):
        raise Unsupported("the value is not in a block mapping")
    key_node, value_node = own_entry(text, parent, str(op.path[-1]))
    colon = text.find(":", key_node.end)
    if colon < 0 or text[key_node.end : colon].strip():
        raise Unsupported("no ':' after the key")
    end = block_end(text, value_node, column(text, key_node.start) + 1)
    end = _kept_blank_lines(text, colon, end)
    if end <= colon:
        raise Unsupported("the value ends before its key")
    return Edit(colon + 1, _line_break_start(text, end), op.text)


def _in_flow(root: Node, path: Path) -> bool:
    """Whether the value at ``path`` is an entry of a flow collection."""
    return bool(path) and not is_block(resolve(root, path[:-1]))


def _replace_in_flow(text: str, node: Node, value: Any, quote: bool, *, like: bool = False) -> Edit:
    """Write ``value`` over an entry of a flow collection (``like``: in the quoting of the
    scalar there)."""
    if node.start == node.end:
        raise Unsupported("an empty value in a flow collection")
    if isinstance(value, str):
        if isinstance(node, ScalarNode) and node.style in ("|", ">"):
            raise Unsupported("replacement target is a block scalar")
        if (
            like
            and isinstance(node, ScalarNode)
            and (
                node.style in ("'", '"')
                or (not node.style and not quote and scalars.plain_name(value))
            )
        ):
            return Edit(node.start, node.end, scalars.render_like(value, node.style))
        return Edit(node.start, node.end, scalars.render_flow(value, quote))
    if not is_block(node) or isinstance(node, ScalarNode):
        return Edit(node.start, node.end, _flow_text(value, quote))
    raise Unsupported("a block collection in a flow collection")


def _set_value(
    text: str, root: Node, op: SetValue, style: Style, newline: str, quote: bool
) -> Edit | list[Edit]:
    """The edit that gives the value at ``op.path`` its new value (or spelling)."""
    node = resolve(root, op.path)
    spelled = op.text is not None and (op.value is None or op.value in ([], {}))
    if _in_flow(root, op.path):
        if spelled and op.text:
            if node.start == node.end:
                raise Unsupported("an empty value in a flow collection")
            return Edit(node.start, node.end, op.text)
        return _replace_in_flow(text, node, op.value, quote, like=op.like)
    if spelled:
        return _restore(text, root, op, newline)
    if op.value is None:
        return _clear(text, node)
    if (op.value == [] and isinstance(node, SequenceNode) and node.value) or (
        op.value == {} and isinstance(node, MappingNode) and node.value
    ):
        return _collapse(text, root, op, newline)
    if not isinstance(op.value, str):
        return _set_collection(text, root, op, style, newline)
    if not isinstance(node, ScalarNode):
        raise Unsupported("only scalars are replaced in place")
    if node.style == "|":
        return _replace_literal(text, node, op.value, newline)
    if node.style == ">":
        raise Unsupported("replacement target is a folded block scalar")
    if node.start == node.end:
        raise Unsupported("empty scalar")
    if op.like:
        return Edit(node.start, node.end, scalars.render_like(op.value, node.style, block=True))
    # as an added entry writes it (_block_scalar): one output whatever came before
    return Edit(node.start, node.end, scalars.render_block(op.value))


def _to_edit(
    text: str, root: Node, op: Op, style: Style, newline: str, quote: bool
) -> Edit | list[Edit]:
    if type(op) is SetValue:
        return _set_value(text, root, op, style, newline, quote)
    if type(op) is AppendItems:
        seq = resolve(root, op.path)
        if not isinstance(seq, SequenceNode) or not is_block(seq) or not seq.value:
            raise Unsupported("append target is not a block sequence")
        first = seq.value[0]
        dash_col = column(text, dash_position(text, first))
        offset = _item_offset(text, first, dash_col)
        lines = _rendered(op.items, dash_col, offset, style)
        at = _after(text, seq, block_end(text, seq, dash_col + 1))
        return _insert_lines(text, at, lines, newline)
    if type(op) is InsertItems:
        seq = resolve(root, op.path)
        if not isinstance(seq, SequenceNode) or not is_block(seq) or not seq.value:
            raise Unsupported("insert target is not a block sequence")
        if not 0 <= op.index <= len(seq.value):
            raise Unsupported("insert index out of range")
        first = seq.value[0]
        dash_col = column(text, dash_position(text, first))
        offset = _item_offset(text, first, dash_col) if op.index else 2
        lines = _rendered(op.items, dash_col, offset, style)
        if op.index == len(seq.value):
            at = _after(text, seq, block_end(text, seq, dash_col + 1))
            return _insert_lines(text, at, lines, newline)
        at = line_start(text, dash_position(text, seq.value[op.index]))
        return Edit(at, at, newline.join(lines) + newline)
    if type(op) is AddKey:
        mapping = resolve(root, op.path)
        if not isinstance(mapping, MappingNode) or not is_block(mapping) or not mapping.value:
            raise Unsupported("key target is not a block mapping")
        key_col = entry_column(text, mapping)
        at = _after(text, mapping, mapping_end(text, mapping, key_col))
        lines = _rendered({op.key: op.value}, key_col, 0, style)
        return _add_key(text, mapping, at, lines, newline)
    if type(op) is DeleteItem:
        seq = resolve(root, op.path[:-1])
        if not isinstance(seq, SequenceNode) or not is_block(seq):
            raise Unsupported("delete target is not in a block sequence")
        item = seq.value[int(op.path[-1])]
        dash = dash_position(text, item)
        start = line_start(text, dash)
        return _delete_lines(text, start, block_end(text, item, column(text, dash) + 1))
    if type(op) is DeleteKey:
        mapping = resolve(root, op.path[:-1])
        if not isinstance(mapping, MappingNode) or not is_block(mapping) or len(mapping.value) < 2:
            raise Unsupported("delete target is not in a block mapping with other keys")
        key_node, value_node = own_entry(text, mapping, str(op.path[-1]))
        start = line_start(text, key_node.start)
        if text[start : key_node.start].strip():
            raise Unsupported("key shares its line with a sequence dash")
        end = block_end(text, value_node, column(text, key_node.start) + 1)
        return _delete_lines(text, start, end)
    raise TypeError(op)


def edits_for(
    text: str,
    root: Node,
    ops: list[Op],
    style: Style,
    newline: str,
    trace: list[tuple[Op | None, list[Edit]]] | None = None,
    *,
    json: bool = False,
) -> list[Edit]:
    """The edits that carry out ``ops``; ``trace`` (when given) gets each operation with
    the edits made for it (None for the edits of a flow collection), for the check of
    :mod:`check`. ``json``: the text is JSON (its new entries are written as JSON)."""
    text = lf_view(text)
    if text and not text.endswith("\n"):
        style = structs.replace(style, literal=False)
    # a document whose first key is double-quoted writes JSON: so do its new flow entries
    quote = json or (
        isinstance(root, MappingNode)
        and bool(root.value)
        and isinstance(root.value[0][0], ScalarNode)
        and root.value[0][0].style == '"'
    )
    flow: dict[Path, _FlowChange] = {}
    edits: list[Edit] = []
    # Where a collection ends, so may the ones around it (an indentless list, the last
    # value of its mapping): what is added there goes into the innermost first, so the
    # deepest ops come first (apply_edits keeps that order at one point).
    for op in sorted(ops, key=lambda op: -len(op.path)):
        if not _flow_change(root, op, flow, quote):
            edit = _to_edit(text, root, op, style, newline, quote)
            made = edit if isinstance(edit, list) else [edit]
            edits.extend(made)
            if trace is not None:
                trace.append((op, made))
    for path, change in flow.items():
        made = change.edits(text, resolve(root, path), newline)
        edits.extend(made)
        if trace is not None:
            trace.append((None, made))
    return edits


class _FlowChange:
    """What the operations do to one flow collection: entries deleted (by index), added
    in front, added at the end."""

    __slots__ = ("back", "deleted", "front")

    def __init__(self) -> None:
        self.deleted: set[int] = set()
        self.front: list[str] = []
        self.back: list[str] = []

    def edits(self, text: str, coll: Node, newline: str) -> list[Edit]:
        entries = _entries(text, coll)
        n = len(entries)
        separator = _separator(text, coll, entries, newline)
        kept = [i for i in range(n) if i not in self.deleted]
        edits: list[Edit] = []
        for i in sorted(self.deleted):
            if kept and kept[-1] > i:  # up to the next entry: its separator goes too
                edits.append(Edit(entries[i][0], entries[i + 1][0], ""))
            elif kept:  # in the last run: from the end of the entry before it
                edits.append(Edit(entries[i - 1][1], entries[i][1], ""))
            elif i == 0:  # all of them
                edits.append(Edit(entries[0][0], entries[-1][1], ""))
        end = entries[-1][1] if entries else coll.start + 1
        if not kept:  # nothing stays to separate from: the new entries go in its place
            added = self.front + self.back
            if added:
                edits.append(Edit(end, end, separator.join(added)))
            return edits
        if self.front:
            start = entries[0][0]
            edits.append(Edit(start, start, separator.join(self.front) + separator))
        if self.back:
            edits.append(Edit(end, end, separator + separator.join(self.back)))
        return edits


def _flow_change(root: Node, op: Op, flow: dict[Path, _FlowChange], quote: bool) -> bool:
    """Note ``op`` in ``flow`` when it adds or deletes an entry of a flow collection."""
    if type(op) is AppendItems or type(op) is InsertItems or type(op) is AddKey:
        path = op.path
    elif type(op) is DeleteItem or type(op) is DeleteKey:
        path = op.path[:-1]
    else:
        return False
    coll = resolve(root, path)
    if is_block(coll):
        return False
    if not isinstance(coll, (MappingNode, SequenceNode)):
        raise Unsupported("not a collection")
    change = flow.setdefault(path, _FlowChange())
    if type(op) is AppendItems or type(op) is InsertItems:
        if not isinstance(coll, SequenceNode):
            raise Unsupported("items for a mapping")
        added = [_flow_text(item, quote) for item in op.items]
        if type(op) is InsertItems and op.index == 0:
            change.front.extend(added)
        elif isinstance(op, AppendItems) or op.index == len(coll.value):
            change.back.extend(added)
        else:
            raise Unsupported("an insertion inside a flow sequence")
    elif type(op) is AddKey:
        if not isinstance(coll, MappingNode):
            raise Unsupported("a key for a sequence")
        change.back.append(f"{_flow_text(op.key, quote)}: {_flow_text(op.value, quote)}")
    elif type(op) is DeleteItem:
        change.deleted.add(int(op.path[-1]))
    else:
        key = str(op.path[-1])
        if not isinstance(coll, MappingNode):
            raise Unsupported("a key in a sequence")
        index = next(
            (
                i
                for i, (k, _) in enumerate(coll.value)
                if isinstance(k, ScalarNode) and k.value == key
            ),
            None,
        )
        if index is None:
            raise Unsupported(f"no key {key!r}")
        change.deleted.add(index)
    return True


def _entries(text: str, coll: Node) -> list[tuple[int, int]]:
    """Where each entry of a flow collection starts and ends (a mapping entry: from its
    key to the end of its value)."""
    if text[coll.start : coll.start + 1] not in ("[", "{"):
        raise Unsupported("a single-pair mapping in a flow sequence")
    if isinstance(coll, MappingNode):
        pairs = coll.value
        if any(value.start == value.end for _, value in pairs):
            raise Unsupported("an empty value in a flow mapping")
        entries = [(key.start, value.end) for key, value in pairs]
    else:
        assert isinstance(coll, SequenceNode)
        entries = [(item.start, item.end) for item in coll.value]
    if entries and "#" in text[entries[-1][1] : coll.end]:
        raise Unsupported("a comment after the last entry of a flow collection")
    return entries


def _separator(text: str, coll: Node, entries: list[tuple[int, int]], newline: str) -> str:
    """What goes between two entries, as the collection writes it: a comma and the last
    entry's line break and indentation when it starts a line of its own, else the
    comma and spaces it has between its last two entries (", " by default)."""
    if not entries:
        return ", "
    last = entries[-1][0]
    before = text[entries[-2][1] if len(entries) > 1 else coll.start + 1 : last]
    if "\n" in before:
        begin = line_start(text, last)
        indent = text[begin:last]
        if indent.strip(" "):
            raise Unsupported("a flow entry that shares its line with another")
        return "," + newline + indent
    if len(entries) > 1 and before.replace(" ", "") == ",":
        return before
    return ", "


def _take_break_at_end(text: str, ordered: list[Edit]) -> None:
    """The deletion that reaches the end of ``text`` (no final newline) takes the line
    break before it when merged deletions left it to none (in place in ``ordered``)."""
    k = len(ordered) - 1
    while k >= 0 and not (ordered[k].start < ordered[k].end == len(text)):
        k -= 1
    if k < 0 or ordered[k].text:
        return
    start = ordered[k].start
    # (a deletion that starts with a line break has taken its own already)
    if text[start - 1 : start] != "\n" or text[start] in "\r\n":
        return
    start -= 2 if text[start - 2 : start] == "\r\n" else 1
    while k and ordered[k - 1].end > start:
        if ordered[k - 1].text:
            raise Unsupported("overlapping edits")
        start = min(start, ordered[k - 1].start)
        del ordered[k - 1]
        k -= 1
    ordered[k] = Edit(start, len(text), "")


def _other_break_ends(text: str, edit: Edit) -> bool:
    """Whether ``edit`` deletes lines the last of which ends in the input's own line break
    other than LF (LS, NEL, PS, a CR alone: the tool writes LF)."""
    if edit.text or edit.end <= edit.start:
        return False
    last = text[edit.end - 1]
    return last in "\x85\u2028\u2029" or (last == "\r" and text[edit.end : edit.end + 1] != "\n")


def _keep_other_breaks(text: str, ordered: list[Edit]) -> None:
    """Deletions (in place in ``ordered``) that end after such a line break keep it and
    take the LF before the deleted lines instead: a changed profile then gives what the
    new profile gives the input. Adjacent deletions before it join it first."""
    k = 0
    while k < len(ordered):
        edit = ordered[k]
        if not _other_break_ends(text, edit):
            k += 1
            continue
        while k and not ordered[k - 1].text and ordered[k - 1].end == edit.start:
            edit = Edit(ordered[k - 1].start, edit.end, "")
            del ordered[k - 1]
            k -= 1
        cut = 2 if text[edit.start - 2 : edit.start] == "\r\n" else 1
        earlier = ordered[k - 1].end if k else 0
        if edit.start - cut >= earlier and text[edit.start - 1 : edit.start] == "\n":
            edit = Edit(edit.start - cut, edit.end - 1, "")
        ordered[k] = edit
        k += 1


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits; insertions at one point keep the order given.

    Deletions that overlap (adjacent blocks at the end of a text without a final
    newline each take the newline before them) are merged into one, which takes the
    newline before it when it reaches that end (as one deletion there does: what is
    added at the end then comes after a line break of its own, not a second one).
    """
    ordered: list[Edit] = []
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):  # stable
        last = ordered[-1] if ordered else None
        if last is not None and edit.start < last.end:
            if last.text or edit.text:
                raise Unsupported("overlapping edits")
            ordered[-1] = Edit(last.start, max(last.end, edit.end), "")
            continue
        ordered.append(edit)
    if text and not text.endswith("\n"):
        _take_break_at_end(text, ordered)
    if not text.isascii() or "\r" in text:  # maybe a line break other than LF
        _keep_other_breaks(text, ordered)
    pieces: list[str] = []
    cursor = 0
    for edit in ordered:
        pieces.append(text[cursor : edit.start])
        pieces.append(edit.text)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)
