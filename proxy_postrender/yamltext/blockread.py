"""A fast, exact reader for the block-style YAML that renderers write.

:func:`read` gives a document's node tree (with offsets) and its data, the
same as libyaml's compose and ruamel.yaml's safe construction give, or raises
:class:`Declined` when the text uses anything outside the subset it reads
exactly. The engine then takes the full libyaml path, so declining costs time,
never correctness.

The subset: one document of block mappings and block sequences, LF line
breaks, no tabs; plain scalars on one line; single- and double-quoted scalars
on one line (common escapes); literal block scalars and simple folded ones;
flow collections on one line, as mapping values and as sequence items
(``- {name: A, value: "1"}``); a one-line value on the line after its key
(``annotations:`` then ``{}``, as Helm's ``toYaml | nindent`` writes it); comments
anywhere. Not read: anchors, aliases,
tags, merge keys, complex keys, directives, multi-line plain, quoted or flow
values, duplicate keys, CR line breaks. The reader is checked against libyaml
node by node (``tests/test_blockread.py``).

:func:`read_data` reads spliced output back for the engine's check. It gives the
data only, and remembers the block collections it has read by their text, so a
block that recurs from one document to the next (the same inserted ``env``
entries, the same ``resources``) is read once.
"""

from __future__ import annotations

import re
from itertools import accumulate

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.patterns import compiled

if TYPE_CHECKING:
    from typing import Any, Final

from proxy_postrender.yamltext.errors import MAX_DEPTH
from proxy_postrender.yamltext.tree import MappingNode, Node, ScalarNode, SequenceNode


class Declined(Exception):
    """The text is outside the subset this reader reads exactly; ``reason`` says which
    part of it (a short phrase, the same for every text declined for that reason:
    ``bench/coverage.py`` counts them)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# The module's constants are Final: the compiled build reads them from C variables,
# not from the module's dict (a lookup each time, a few per line read).

# Characters libyaml refuses or reads as line breaks, plus tab, CR and BOM:
# any of them sends the document to the full parser.
_UNREAD: Final = compiled(
    r"[\t\r\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]"
)
# The same set for an ASCII text: all of it below 256, which ``re`` tests with one table
# lookup a character (the set above, with its ranges past 255, costs several).
_UNREAD_ASCII: Final = compiled(r"[\t\r\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_DOUBLE: Final = compiled(r'"((?:[^"\\]|\\.)*)"')
_SINGLE: Final = compiled(r"'((?:[^']|'')*)'")
_ESCAPES: Final = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_ESCAPE: Final = compiled(r"\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))")
# A plain scalar may not start with these (a few may when a non-space follows).
_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_SCALAR: Final = compiled(
    r"""(?:("(?:[^"\\]|\\.)*")|('(?:[^']|'')*')|([^\s,\[\]{}#'"][^,\[\]{}#]*?)) *(?=[,\]}:]|$)"""
)
_NULLS: Final = frozenset({"", "~", "null", "Null", "NULL"})


def _unescape(body: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1) or match.group(2) or match.group(3)
        if code:
            char = chr(int(code, 16))
            if 0xD800 <= ord(char) <= 0xDFFF:
                raise Declined("surrogate escape")
            return char
        escaped = _ESCAPES.get(match.group(4))
        if escaped is None:
            raise Declined("unknown escape")
        return escaped

    return _ESCAPE.sub(one, body)


# First characters of the plain scalars the loader's implicit resolvers may turn into
# something other than a string (checked against the loader in the tests).
IMPLICIT_STARTS: Final = frozenset("!&*+-.0123456789<=FNTfnt~")
_BOOLS: Final = {"true": True, "True": True, "TRUE": True, "false": False, "False": False}
_BOOLS["FALSE"] = False
_DECIMAL: Final = compiled(r"-?(?:0|[1-9][0-9]*)")
# A character no number, date, infinity or NaN holds ("256Mi", "500m"): a string.
_NOT_NUMERIC: Final = compiled(r"[^0-9a-fA-F+\-._: xXoObBtTzZiInN]")
_DOTTED: Final = compiled(r"[0-9]+(?:\.[0-9]+){2,}")  # addresses and versions: never numbers


_UNKNOWN: Final = object()


class _Resolver:
    """Plain scalars to data exactly as the full path's loader resolves them.

    Most scalars start with a character no implicit type starts with and are
    strings; booleans, nulls and decimal integers are read here; the rest go
    through the loader's own resolver and constructor (ruamel.yaml is imported only
    then). Every value that needs more than its first character is cached by its text
    ("8080", "500m", "2": the same values recur in every document).
    """

    def __init__(self) -> None:
        self._loader: Any = None
        self._cache: dict[str, Any] = {}

    def plain(self, value: str) -> Any:
        if value[:1] not in IMPLICIT_STARTS:
            return value if value else None
        found = self._cache.get(value, _UNKNOWN)  # (a null is cached: None)
        if found is not _UNKNOWN:
            return found
        result = self._resolve(value)
        if len(self._cache) < 4096:
            self._cache[value] = result
        return result

    def _resolve(self, value: str) -> Any:
        if value in _NULLS:
            return None
        found = _BOOLS.get(value)
        if found is not None:
            return found
        if _DECIMAL.fullmatch(value):
            return int(value)
        if value == "<<" or value == "=":
            raise Declined("merge or value key")
        if _NOT_NUMERIC.search(value) is not None or _DOTTED.fullmatch(value):
            return value
        return self._full(value)

    def _full(self, value: str) -> Any:
        from ruamel.yaml.nodes import ScalarNode as RuamelScalar

        if self._loader is None:
            from proxy_postrender.yamltext.loader import scalar_loader

            self._loader = scalar_loader()
        loader = self._loader
        tag = loader.resolve(RuamelScalar, value, (True, False))
        name = str(tag)
        if name.endswith((":merge", ":value")):
            raise Declined("merge or value key")
        if name.endswith(":str"):
            return value
        try:
            return loader.construct_object(RuamelScalar(tag, value, None, None), deep=True)
        except Exception as exc:  # a value that does not fit its type: the full path says so
            raise Declined("unconstructable scalar") from exc


_RESOLVER: Final = _Resolver()


def resolve_plain(value: str) -> Any:
    return _RESOLVER.plain(value)


# A mapping entry's line, read once per run (the same lines recur in document after
# document: "replicas: 2", "- name: app", "imagePullPolicy: IfNotPresent"), by its
# content from the key on: the key's node (end, text, style, null) and data, the
# offset just after its colon, the offset of the value, and the value when it is a
# scalar that ends on the line (its node's end, text, style, null, and its data);
# offsets from the key. What a line reads as is a function of its text alone (a flow
# collection, whose nesting bound depends on its depth, is not kept); its data is a
# scalar, which nothing changes in place. Bounded: past _MAX_LINES lines it is
# emptied; lines longer than _MAX_LINE are not kept.
_Scalar = tuple[int, str, str, bool, "Any"]
_Line = tuple[int, str, str, bool, "Any", int, int, "_Scalar | None"]
_LINES: Final[dict[str, _Line]] = {}
_MAX_LINES: Final = 4096
_MAX_LINE: Final = 256

# The flow collections read (a line's text from the opening bracket on): the nodes at
# offset 0, the data, the end, and how many collections deep it goes. The same lines
# recur ("- {name: http, containerPort: 8080}"); a hit hands out a copy of the nodes
# at the offset where the text is and of the data, the same as reading it again gives
# (the nesting bound is checked at the depth where it is read). At most _MAX_FLOWS
# texts (then it is emptied), none longer than _MAX_FLOW.
_FLOWS: Final[dict[str, tuple[Node, Any, int, int]]] = {}
_MAX_FLOWS: Final = 1024
_MAX_FLOW: Final = 256

_SHALLOWER: Final[dict[int, re.Pattern[str]]] = {}
# Bounds of the memo of regions read: characters of one region, characters of all
# regions kept, and regions seen once (their hashes are kept).
_MAX_REGION = 1 << 16
_MAX_CHARS = 1 << 20
_MAX_SEEN = 1 << 16


def _shallower(col: int) -> re.Pattern[str]:
    """A line with content indented less than ``col`` (blank and comment lines have none)."""
    pattern = _SHALLOWER.get(col)
    if pattern is None:
        pattern = _SHALLOWER[col] = re.compile(f"\n {{0,{col - 1}}}[^ \n#]")
    return pattern


class _Memo:
    """Block collections already read, by their exact text: their data, the node read
    (offsets from the text it was first read in) and how many lines they took.

    Reading is a function of the text alone, so a region of text read again gives the
    same data. Spliced documents repeat the same inserted entries and the same
    untouched blocks, one document after another. A region is remembered the second
    time it is seen, within bounds on what is kept; past them, everything is forgotten.
    """

    __slots__ = ("chars", "entries", "seen")

    def __init__(self) -> None:
        self.entries: dict[str, tuple[Node, Any, int]] = {}
        self.seen: set[int] = set()
        self.chars = 0

    def admit(self, region: str) -> bool:
        """Whether ``region`` was seen before (it is noted as seen when not)."""
        key = hash(region)
        if key in self.seen:
            return True
        if len(self.seen) >= _MAX_SEEN:
            self.seen.clear()
        self.seen.add(key)
        return False

    def store(self, region: str, entry: tuple[Node, Any, int]) -> None:
        if self.chars + len(region) > _MAX_CHARS:
            self.entries.clear()
            self.chars = 0
        self.entries[region] = entry
        self.chars += len(region)


class _Reader:
    __slots__ = ("depth", "indent", "lines", "memo", "n", "starts", "stripped", "text")

    def __init__(self, text: str, memo: _Memo | None = None) -> None:
        self.text = text
        self.memo = memo
        self.depth = 1  # collections open, the root mapping included (as libyaml counts)
        lines = text.split("\n")
        self.lines = lines
        self.n = len(lines)
        stripped = [line.lstrip(" ") for line in lines]
        self.stripped = stripped
        self.indent = [len(a) - len(b) for a, b in zip(lines, stripped, strict=True)]
        # where each line starts: the sums of the lengths before it (in C)
        starts = list(accumulate([len(line) + 1 for line in lines], initial=0))
        starts.pop()
        self.starts = starts

    def next_content(self, i: int) -> int:
        """The first line at or after ``i`` with content (``n`` when none)."""
        stripped = self.stripped
        n = self.n
        while i < n:
            s = stripped[i]
            if s and s[0] != "#":
                return i
            i += 1
        return n

    # -- scalars on one line -------------------------------------------------

    def inline(self, s: str, offset: int) -> tuple[Node, Any]:
        """The value that starts ``s`` (at ``offset``) and ends on its line; ``s`` has
        no leading spaces and is not empty or a comment."""
        first = s[0]
        if first == '"' or first == "'":
            end = _quoted_end(s)
            if end < 0:
                raise Declined("quoted scalar continues on the next line")
            _check_tail(s, end)
            value = _quoted(first, s[1 : end - 1])
            return ScalarNode(offset, offset + end, value, first, False), value
        if first == "[" or first == "{":
            node, data, end = _flow_at(s, offset, self.depth + 1)
            _check_tail(s, end)
            return node, data
        if first == "|" or first == ">":
            raise Declined("block scalar")  # handled by the caller
        if _indicator_start(s, "-?:"):
            raise Declined(f"value starts with {first!r}")
        end = s.find(" #")
        value = (s if end < 0 else s[:end]).rstrip(" ")
        if ": " in value or value.endswith(":"):
            raise Declined("':' in a plain scalar")
        node = ScalarNode(offset, offset + len(value), value, "", value in _NULLS)
        return node, value if value[:1] not in IMPLICIT_STARTS else resolve_plain(value)

    def block_scalar(self, i: int, s: str, offset: int, parent_col: int) -> tuple[Node, Any, int]:
        """A ``|`` or ``>`` scalar whose header is ``s`` on line ``i``; returns the next line."""
        header = s.split(" #", 1)[0].rstrip(" ")
        if header not in ("|", "|-", "|+", ">", ">-", ">+"):
            raise Declined("block scalar header")
        if len(header) < len(s.rstrip(" ")) and not s[len(header) :].lstrip(" ").startswith("#"):
            raise Declined("text after a block scalar header")
        lines, indent, stripped = self.lines, self.indent, self.stripped
        j = i + 1
        n = self.n
        # the content indentation: that of the first non-blank line
        k = j
        while k < n and not stripped[k]:
            if lines[k]:
                raise Declined("spaces on a leading blank line")
            k += 1
        content_col = indent[k] if k < n else 0
        if k >= n or content_col <= parent_col:
            raise Declined("empty block scalar")
        end_line = k
        while end_line < n:
            line = lines[end_line]
            if stripped[end_line]:
                if indent[end_line] < content_col:
                    break
            elif len(line) > content_col:
                raise Declined("spaces beyond the indentation on a blank line")
            end_line += 1
        # trailing blank lines belong to the scalar (its end is the line after them)
        last = end_line
        while last > k and not stripped[last - 1]:
            last -= 1
        body = [line[content_col:] for line in lines[j:last]]
        trailing = end_line - last
        if end_line >= n:
            if not self.text.endswith("\n"):
                raise Declined("block scalar at the end of a text without a final newline")
            trailing -= 1  # the split's empty last element is not a line
        kind, chomp = header[0], header[1:]
        if kind == ">":
            if any(not part or part[0] == " " for part in body):
                raise Declined("folded scalar with blank or more-indented lines")
            value = " ".join(body)
        else:
            value = "\n".join(body)
        if chomp == "-":
            pass
        elif chomp == "+":
            value += "\n" * (1 + trailing)
        else:
            value += "\n"
        end = self.starts[end_line] if end_line < n else len(self.text)
        return ScalarNode(offset, end, value, kind, False), value, end_line

    # -- block collections ---------------------------------------------------

    def node_at(self, i: int) -> tuple[Node, Any, int]:
        """The block collection starting on content line ``i``; returns the next line."""
        # a document past the nesting bound is declined; libyaml's reader refuses it
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Declined("nested too deeply")
        col = self.indent[i]
        memo = self.memo is not None and col > 0
        found = self._remembered(i, col) if memo else self._node_at(i, col)
        self.depth -= 1
        return found

    def _remembered(self, i: int, col: int) -> tuple[Node, Any, int]:
        """:meth:`node_at` through the memo (spliced text read back)."""
        memo = self.memo
        assert memo is not None
        # The collection ends at or before the next content line indented less: its
        # reading depends on that text alone, and on whether the text ends there (NUL,
        # which no text read here holds, marks a region that runs to the end).
        text = self.text
        start = self.starts[i]
        found = _shallower(col).search(text, start)
        stop = len(text) if found is None else found.start() + 1
        if stop - start > _MAX_REGION:
            return self._node_at(i, col)
        region = text[start:stop] if found is not None else text[start:stop] + "\0"
        hit = memo.entries.get(region)
        if hit is not None:
            node, data, lines = hit
            return node, data, i + lines
        if not memo.admit(region):
            return self._node_at(i, col)
        node, data, after = self._node_at(i, col)
        memo.store(region, (node, data, after - i))
        return node, data, after

    def _node_at(self, i: int, col: int) -> tuple[Node, Any, int]:
        s = self.stripped[i]
        if _is_dash(s):
            return self.sequence(i, col)
        return self.mapping(i, col, s, self.starts[i] + col)

    def value_after(
        self, i: int, rest: str, offset: int, mark: int, col: int, indentless_ok: bool
    ) -> tuple[Node, Any, int]:
        """The value after a key or dash at column ``col`` on line ``i``: ``rest`` is the
        text after the indicator (stripped of leading spaces) at ``offset``; ``mark`` is
        just after the indicator."""
        if rest and rest[0] != "#":
            first = rest[0]
            if first == "|" or first == ">":
                return self.block_scalar(i, rest, offset, col)
            node, data = self.inline(rest, offset)
            return node, data, i + 1
        j = self.next_content(i + 1)
        if j < self.n:
            jcol = self.indent[j]
            s = self.stripped[j]
            dash = _is_dash(s)
            if jcol > col or (jcol == col and dash and indentless_ok):
                if dash or s in _LINES or _looks_like_key(s):
                    return self.node_at(j)
                if jcol == col:
                    raise Declined("value at the indentation of its key")
                # A value on the line after its key ("annotations:" then "{}", as
                # Helm's toYaml with nindent writes it): one line, whatever follows
                # is the caller's (a deeper line after it is declined there: a
                # multi-line scalar).
                if s[0] == "|" or s[0] == ">":
                    raise Declined("block scalar header on the line after its key")
                node, data = self.inline(s, self.starts[j] + jcol)
                return node, data, j + 1
        # nothing nested: null, marked just after the indicator
        return ScalarNode(mark, mark, "", "", True), None, i + 1

    def sibling(self, i: int, col: int) -> tuple[int, bool]:
        """The next content line at or after ``i``, and whether it continues a collection
        at column ``col`` (a shallower line ends it; a deeper one is not read)."""
        i = self.next_content(i)
        if i >= self.n or self.indent[i] < col:
            return i, False
        if self.indent[i] > col:
            raise Declined("indentation")
        return i, True

    def mapping(self, i: int, col: int, s: str, offset: int) -> tuple[Node, Any, int]:
        """A block mapping whose first key is ``s`` at ``offset`` (line ``i``, column ``col``)."""
        pairs: list[tuple[Node, Node]] = []
        data: dict[Any, Any] = {}
        start = offset
        lines = _LINES
        stripped, indent, starts, n = self.stripped, self.indent, self.starts, self.n
        while True:
            line = lines.get(s)
            if line is None:
                line = self._line(s)
            key_end, key_text, key_style, key_null, key, after, rest_at, scalar = line
            key_node = ScalarNode(offset, offset + key_end, key_text, key_style, key_null)
            value_node: Node
            if scalar is not None:  # a scalar that ends on this line
                value_end, text, style, null, value = scalar
                at = offset + rest_at
                value_node = ScalarNode(at, at + value_end, text, style, null)
                i += 1
            else:
                value_node, value, i = self.value_after(
                    i, s[rest_at:], offset + rest_at, offset + after, col, True
                )
            if key in data or (type(key) is not str and not _usable_key(key)):
                raise Declined("duplicate or unusual key")
            data[key] = value
            pairs.append((key_node, value_node))
            # the next entry: :meth:`sibling` and :func:`_is_dash`, written out (a call
            # each costs more than their work, once per entry of every document)
            while i < n:
                s = stripped[i]
                if s and s[0] != "#":
                    break
                i += 1
            if i >= n or indent[i] < col:
                break
            if indent[i] > col:
                raise Declined("indentation")
            if s[0] == "-" and (len(s) == 1 or s[1] == " "):
                break  # a dash here is an indentless sequence's next item: the caller's
            offset = starts[i] + col
        return MappingNode(start, pairs[-1][1].end, pairs, True), data, i

    def _line(self, s: str) -> _Line:
        """A mapping entry's line ``s`` read at offset 0 (:data:`_LINES`): its key, where
        its value starts, and that value when it is a scalar that ends on the line."""
        key_node, key, after = _key(s, 0)
        rest = s[after:].lstrip(" ")
        rest_at = len(s) - len(rest)
        scalar: _Scalar | None = None
        if rest and rest[0] not in "#|>[{":  # (a flow collection is read at its depth)
            node, value = self.inline(rest, 0)
            assert isinstance(node, ScalarNode)
            scalar = (node.end, node.value, node.style, node.null, value)
        line = (key_node.end, key_node.value, key_node.style, key_node.null, key, after)
        found = (*line, rest_at, scalar)
        if len(s) <= _MAX_LINE:
            if len(_LINES) >= _MAX_LINES:
                _LINES.clear()
            _LINES[s] = found
        return found

    def sequence(self, i: int, col: int) -> tuple[Node, Any, int]:
        """A block sequence whose first dash is on line ``i`` at column ``col``."""
        items: list[Node] = []
        data: list[Any] = []
        stripped, indent, starts, n = self.stripped, self.indent, self.starts, self.n
        start = starts[i] + col
        while True:
            s = stripped[i]
            rest = s[1:].lstrip(" ")
            rest_offset = starts[i] + col + len(s) - len(rest)
            # (a line read as a mapping entry before is one: _LINES)
            if rest and (rest in _LINES or _looks_like_key(rest)):
                self.depth += 1  # a mapping in the item: one level deeper
                if self.depth > MAX_DEPTH:
                    raise Declined("nested too deeply")
                node, value, i = self.mapping(i, rest_offset - starts[i], rest, rest_offset)
                self.depth -= 1
            elif _is_dash(rest):
                raise Declined("nested sequence on one line")
            else:
                mark = starts[i] + col + 1
                node, value, i = self.value_after(i, rest, rest_offset, mark, col, False)
                if isinstance(node, ScalarNode) and node.null and not rest:
                    raise Declined("null sequence item")
            items.append(node)
            data.append(value)
            # the next item: :meth:`sibling` and :func:`_is_dash`, written out
            while i < n:
                s = stripped[i]
                if s and s[0] != "#":
                    break
                i += 1
            if i >= n or indent[i] < col:
                break
            if indent[i] > col:
                raise Declined("indentation")
            if not (s[0] == "-" and (len(s) == 1 or s[1] == " ")):
                break  # the end of an indentless sequence; the caller checks the line
        return SequenceNode(start, items[-1].end, items, True), data, i


def _usable_key(key: Any) -> bool:
    """Keys read here: strings and numbers (null and collections go to the full path)."""
    return type(key) is str or isinstance(key, (int, float, bool))


def _quoted_end(s: str) -> int:
    """Just after the quoted scalar that starts ``s`` (its quote is ``s[0]``), as
    ``_DOUBLE`` or ``_SINGLE`` match it; -1 when it does not end on this line.

    Most quoted scalars hold no escape: their end is the next quote, found by a
    substring search; the pattern, which tests each character, reads the others."""
    first = s[0]
    close = s.find(first, 1)
    if close < 0:
        return -1
    if first == '"':
        if s.find("\\", 1, close) < 0:
            return close + 1
        match = _DOUBLE.match(s)
    else:
        if s[close + 1 : close + 2] != "'":
            return close + 1
        match = _SINGLE.match(s)
    return -1 if match is None else match.end()


def _quoted(quote: str, body: str) -> str:
    """The value of a quoted scalar on one line, from the text between its quotes."""
    if quote == "'":
        return body.replace("''", "'")
    return _unescape(body) if "\\" in body else body


def _indicator_start(s: str, allowed: str) -> bool:
    """Whether ``s`` starts with an indicator that cannot start a plain scalar
    (those in ``allowed`` can, when a non-space follows)."""
    first = s[0]
    return first in _INDICATORS and (first not in allowed or len(s) == 1 or s[1] == " ")


def _is_dash(s: str) -> bool:
    """Whether a line's content starts a block sequence entry."""
    return s[:1] == "-" and (len(s) == 1 or s[1] == " ")


def _check_tail(s: str, end: int) -> None:
    """After a quoted or flow value: only spaces and a comment may follow."""
    tail = s[end:]
    if tail and (tail[0] != " " or tail.lstrip(" ")[:1] not in ("", "#")):
        raise Declined("text after a value")


def _looks_like_key(s: str) -> bool:
    """Whether a line's content is a ``key: value`` (or ``key:``) entry (not a comment,
    and not a flow collection, which may hold ``: `` but is a value: as a key, it is
    declined where it is read)."""
    first = s[0]
    if first == '"' or first == "'":
        end = _quoted_end(s)
        if end < 0:
            return False
        tail = s[end:].lstrip(" ")
        return tail[:1] == ":" and (len(tail) == 1 or tail[1] == " ")
    if first in "#[{":
        return False
    colon = s.find(": ")
    comment = s.find(" #")
    if colon >= 0 and (comment < 0 or colon < comment):
        return True
    body = s if comment < 0 else s[:comment]
    return body.rstrip(" ").endswith(":")


def _key(s: str, offset: int) -> tuple[ScalarNode, Any, int]:
    """The key that starts ``s``: (node, data, index just after its ':')."""
    first = s[0]
    if first == '"' or first == "'":
        end = _quoted_end(s)
        if end < 0:
            raise Declined("quoted key continues on the next line")
        value = _quoted(first, s[1 : end - 1])
        colon = end + len(s[end:]) - len(s[end:].lstrip(" "))
        if s[colon : colon + 1] != ":" or (len(s) > colon + 1 and s[colon + 1] != " "):
            raise Declined("quoted key without ':'")
        return ScalarNode(offset, offset + end, value, first, False), value, colon + 1
    if _indicator_start(s, "-:"):
        raise Declined(f"key starts with {first!r}")
    colon = s.find(": ")
    if colon < 0:
        comment = s.find(" #")
        body = (s if comment < 0 else s[:comment]).rstrip(" ")
        if not body.endswith(":"):
            raise Declined("not a key")
        colon = len(body) - 1
    key_text = s[:colon].rstrip(" ")
    if " #" in key_text or not key_text or len(key_text) > 1000:
        raise Declined("unusual key")
    key = key_text if key_text[0] not in IMPLICIT_STARTS else resolve_plain(key_text)
    null = key_text in _NULLS
    return ScalarNode(offset, offset + len(key_text), key_text, "", null), key, colon + 1


def _flow(s: str, pos: int, offset: int, depth: int) -> tuple[Node, Any, int]:
    """A flow collection on one line starting at ``s[pos]``, ``depth`` collections deep;
    returns (node, data, end)."""
    if depth > MAX_DEPTH:
        raise Declined("nested too deeply")
    opener = s[pos]
    closer = "]" if opener == "[" else "}"
    start = offset + pos
    items: list[Any] = []
    data_items: list[Any] = []
    pos += 1
    expect_item = True
    while True:
        pos = _skip_spaces(s, pos)
        char = s[pos : pos + 1]
        if char == closer:
            end = pos + 1
            break
        if char == ",":
            if expect_item:
                raise Declined("empty flow entry")
            expect_item = True
            pos += 1
            continue
        if not expect_item:
            raise Declined("flow entries without ','")
        node, value, pos = _flow_value(s, pos, offset, depth)
        if opener == "{":
            if s[pos : pos + 1] != ":":
                raise Declined("flow mapping entry without ':'")
            if s[pos + 1 : pos + 2] not in (" ", ",", "}") and not (
                isinstance(node, ScalarNode) and node.style
            ):
                raise Declined("':' in a flow plain scalar")
            vnode, vvalue, pos = _flow_value(s, _skip_spaces(s, pos + 1), offset, depth)
            if not _usable_key(value) or any(value == k for k, _ in data_items):
                raise Declined("flow mapping key")
            items.append((node, vnode))
            data_items.append((value, vvalue))
        else:
            if s[pos : pos + 1] == ":":
                raise Declined("single-pair mapping in a flow sequence")
            items.append(node)
            data_items.append(value)
        expect_item = False
    if opener == "[":
        return SequenceNode(start, offset + end, items, False), data_items, end
    return MappingNode(start, offset + end, items, False), dict(data_items), end


def _flow_at(s: str, offset: int, depth: int) -> tuple[Node, Any, int]:
    """:func:`_flow` of the flow collection that starts ``s`` (at ``offset``), through
    :data:`_FLOWS`: a text read before gives a copy of what it read then."""
    found = _FLOWS.get(s)
    if found is not None:
        node, data, end, levels = found
        if depth + levels - 1 <= MAX_DEPTH:
            return _shifted(node, offset), _copied(data), end
        # (deeper than the bound here: read again, which declines it)
    node, data, end = _flow(s, 0, 0, depth)
    if len(s) <= _MAX_FLOW:
        if len(_FLOWS) >= _MAX_FLOWS:
            _FLOWS.clear()
        _FLOWS[s] = (node, data, end, _levels(node))
        data = _copied(data)  # (what is kept is never handed out)
    return _shifted(node, offset), data, end


def _shifted(node: Node, by: int) -> Node:
    """A copy of a flow collection's nodes, ``by`` characters further on."""
    if isinstance(node, ScalarNode):
        return ScalarNode(node.start + by, node.end + by, node.value, node.style, node.null)
    if isinstance(node, MappingNode):
        pairs = [(_shifted(k, by), _shifted(v, by)) for k, v in node.value]
        return MappingNode(node.start + by, node.end + by, pairs, False)
    assert isinstance(node, SequenceNode)
    items = [_shifted(item, by) for item in node.value]
    return SequenceNode(node.start + by, node.end + by, items, False)


def _copied(data: Any) -> Any:
    """A copy of a flow collection's data: its dicts and lists new, its scalars shared
    (the planners' operations change collections in place, never a scalar)."""
    if type(data) is dict:
        return {k: _copied(v) for k, v in data.items()}
    if type(data) is list:
        return [_copied(v) for v in data]
    return data


def _levels(node: Node) -> int:
    """How many collections deep a flow collection's nodes go (1: no nested one)."""
    if isinstance(node, MappingNode):
        return 1 + max((max(_levels(k), _levels(v)) for k, v in node.value), default=0)
    if isinstance(node, SequenceNode):
        return 1 + max((_levels(item) for item in node.value), default=0)
    return 0


def _skip_spaces(s: str, pos: int) -> int:
    while pos < len(s) and s[pos] == " ":
        pos += 1
    return pos


def _flow_value(s: str, pos: int, offset: int, depth: int) -> tuple[Node, Any, int]:
    """One flow entry's key or value at ``s[pos]`` inside a collection ``depth`` deep;
    returns (node, data, position after it and the spaces that follow)."""
    char = s[pos : pos + 1]
    if char == "[" or char == "{":
        node, value, end = _flow(s, pos, offset, depth + 1)
        return node, value, _skip_spaces(s, end)
    match = _FLOW_SCALAR.match(s, pos)
    if match is None:
        raise Declined("flow scalar")
    double, single, plain = match.groups()
    node, value = _flow_scalar(match, double, single, plain, offset)
    return node, value, match.end()


def _flow_scalar(
    match: re.Match[str], double: str | None, single: str | None, plain: str | None, offset: int
) -> tuple[ScalarNode, Any]:
    quoted = double if double is not None else single
    if quoted is not None:
        value = _quoted(quoted[0], quoted[1:-1])
        start = offset + match.start(1 if double is not None else 2)
        return ScalarNode(start, start + len(quoted), value, quoted[0], False), value
    assert plain is not None
    text = plain.rstrip(" ")
    # libyaml reads "?x" and ":x" differently inside flow collections: only "-x" here;
    # and the libyaml the tool loads refuses a "?" anywhere in a flow plain scalar
    # ("[a?b]": "did not find expected ','"), which the full reader then reports
    if _indicator_start(text, "-") or ": " in text or text.endswith(":") or "?" in text:
        raise Declined("flow plain scalar")
    start = offset + match.start(3)
    node = ScalarNode(start, start + len(text), text, "", text in _NULLS)
    return node, resolve_plain(text)


def read(text: str) -> tuple[Node, Any]:
    """The one document of ``text`` (a stream segment) as (node tree, data)."""
    return _read(text, None)


_MEMO = _Memo()


def read_data(text: str) -> Any:
    """The data of the one document of ``text``, as :func:`read` gives it. Blocks read in
    earlier calls are not read again: for text that repeats earlier documents' blocks
    (spliced output, read back to check it). The nodes of such a reading point into
    other texts, so only the data is given."""
    return _read(text, _MEMO)[1]


# The ASCII characters the reader takes: LF and the printable ones (not ``_UNREAD_ASCII``).
_READ_BYTES: Final = b"\n" + bytes(range(0x20, 0x7F))


def _unread(text: str) -> bool:
    """Whether ``text`` holds a character of ``_UNREAD``. In an ASCII text those are the
    control characters but LF, and DEL (``_UNREAD_ASCII``): what is left when the text's
    bytes without ``_READ_BYTES`` (``bytes.translate``: a table lookup a byte, in C,
    where the pattern costs several times as much)."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _READ_BYTES))
    return _UNREAD.search(text) is not None


def _read(text: str, memo: _Memo | None) -> tuple[Node, Any]:
    if _unread(text):
        raise Declined("tab, CR, BOM or a character libyaml refuses")
    reader = _Reader(text, memo)
    i = reader.next_content(0)
    if i >= reader.n:
        raise Declined("no content")
    s = reader.stripped[i]
    if s.startswith("---"):
        if s.rstrip(" ") != "---" or reader.indent[i]:
            raise Declined("content on the '---' line")
        i = reader.next_content(i + 1)
        if i >= reader.n:
            raise Declined("no content")
        s = reader.stripped[i]
    if s[0] == "{" or s[0] == "[":
        raise Declined("a flow collection at the root (JSON)")
    if reader.indent[i] or not _looks_like_key(s) or s[0] == "%":
        raise Declined("the document is not a block mapping at column 0")
    try:
        node, data, i = reader.mapping(i, 0, s, reader.starts[i])
    except RecursionError:
        raise Declined("nested too deeply") from None
    if reader.next_content(i) < reader.n:
        raise Declined("more content after the root mapping")
    return node, data
