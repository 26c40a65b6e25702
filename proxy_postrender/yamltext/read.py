"""Read the documents of a segment: the fast block reader, else libyaml.

Both give the same node tree (with positions) and the same data; the fast
reader only saves time, and declines whatever it does not handle. Both keep to
the bounds of :mod:`errors` (nesting, nodes) and raise :class:`LimitError`
past them.
"""

from __future__ import annotations

import re

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.patterns import compiled

if TYPE_CHECKING:
    from typing import Any, Final

from proxy_postrender.yamltext import blockread
from proxy_postrender.yamltext.errors import MAX_NODES, ParseError, too_many
from proxy_postrender.yamltext.tree import MappingNode, Node, ScalarNode, SequenceNode, Spelled

# The API server takes requests of at most 3 MiB; a document that must be parsed and
# is far larger than any object could be is refused rather than parsed.
MAX_PARSED_BYTES = 8 * 1024 * 1024

# What the readers did, counted when a caller sets this to a dict (``bench/coverage.py``):
# (what was read, how) -> documents. What: "target" (a document the engine may change),
# "check" (spliced output read back), "other" (documents only looked at). How: "fast"
# (the block reader) or "declined: " and the block reader's reason (libyaml then). Left
# None, counting costs one test per document.
COUNTS: dict[tuple[str, str], int] | None = None


def _count(what: str, declined: blockread.Declined | None) -> None:
    assert COUNTS is not None
    key = (what, "fast" if declined is None else f"declined: {declined.reason}")
    COUNTS[key] = COUNTS.get(key, 0) + 1


def nodes_and_data(text: str) -> list[tuple[Node, Any]]:
    """Every document of ``text`` as its node tree and its data; ParseError when invalid,
    LimitError past a bound."""
    try:
        node, data = blockread.read(text)
    except blockread.Declined as exc:
        if COUNTS is not None:
            _count("target", exc)
    else:
        if COUNTS is not None:
            _count("target", None)
        if _over_bound(text, node):
            raise too_many(MAX_NODES)
        return [(node, note_spellings(text, node, data))]
    from proxy_postrender.yamltext import libyaml

    return [(node, note_spellings(text, node, data)) for node, data in libyaml.compose(text)]


# Where a text may hold an empty or null value not written the plain way (``key:``,
# ``key: []``, ``key: {}``): a null token, a collection token on a line of its own, with
# spaces inside or around it, or a comment after it. Only such texts are walked. (A
# string that ``re`` compiles on first use and caches: most runs never need it.)
# A line ends at LF (``$``) or at another line break YAML reads: CR (of CR LF too), NEL,
# LS, PS.
_ODD_EMPTY = (
    r"(?m)(?<![^\s:,\[{])(?:~|null|Null|NULL)(?=[ \t]*(?:$|[\r\x85\u2028\u2029]|#|,|\]|\}))"
    r"|\[\s+\]|\{\s+\}|(?:^|(?<=[\r\x85\u2028\u2029]))[ \t]*(?:\[\]|\{\})"
    r"|:(?:[ \t]{2,}|\t)(?:\[\]|\{\})|(?:\[\]|\{\})[ \t]+(?:#|$|[\r\x85\u2028\u2029])"
)
# (Constants here are Final: the compiled build reads them from C variables, not
# from the module's dict.)
_PLAIN: Final = {"[]": " []", "{}": " {}"}
_LINE_BREAK: Final = compiled("[\n\r\x85\u2028\u2029]")
_ODD_PATTERN: re.Pattern[str] | None = None
# Every text _ODD_EMPTY matches holds one of these tokens (a null, an empty collection,
# a bracket followed by white space): looking for them first (substring search, in C)
# spares most texts the pattern above, which cannot skip ahead and costs hundreds of
# instructions a character (+12 % on a dense 500-Deployment render without this).
_TOKENS = ("~", "null", "Null", "NULL", "[]", "{}", *(o + w for o in "[{" for w in " \t\r\n"))
# What may follow "[" or "{" in a token: its closer or white space.
_AFTER_BRACKET: Final = {"[": ("]", " ", "\t", "\r", "\n"), "{": ("}", " ", "\t", "\r", "\n")}


def first_token(text: str) -> int:
    """Where the first of ``_TOKENS`` starts in ``text`` (-1: none of them is there).

    The same as the least ``text.find(token)``, in fewer passes over the text: the
    bracket tokens are found from the brackets (a scan for one character, rare in
    rendered YAML), and each search stops where an earlier token was found."""
    first = len(text)
    for token in ("~", "null", "Null", "NULL"):
        # an occurrence that starts before ``first`` ends before first + len - 1
        at = text.find(token, 0, first + len(token) - 1)
        if at >= 0:
            first = at
    for opener, after in _AFTER_BRACKET.items():
        at = text.find(opener, 0, first)
        while at >= 0:
            if text[at + 1 : at + 2] in after:
                first = at
                break
            at = text.find(opener, at + 1, first)
    return first if first < len(text) else -1


def odd_empty_matches(text: str) -> list[tuple[int, int]]:
    """Where ``_ODD_EMPTY`` matches ``text``: (start, end) of each match, in order."""
    first = first_token(text)
    if first < 0:
        return []
    global _ODD_PATTERN
    if _ODD_PATTERN is None:
        _ODD_PATTERN = compiled(_ODD_EMPTY)
    # Every match starts on the line of the token it holds, or later (its ``^`` or its
    # ':' is on that line): the search starts at the line of the first token, and
    # skips the text before it (most of a document, which the pattern reads slowly).
    line = text.rfind("\n", 0, first) + 1
    return [(m.start(), m.end()) for m in _ODD_PATTERN.finditer(text, line)]


def note_spellings(text: str, root: Node, data: Any) -> Any:
    """``data`` in which every mapping that holds an empty or null value not written the
    plain way is a :class:`Spelled` that says how (see :func:`tree.spelling`); those
    who fill such a value and take it out again give back the input's own text."""
    found = odd_empty_matches(text)
    if not found:
        return data
    from bisect import bisect_left

    starts = [start for start, _ in found]
    ends = [end for _, end in found]
    top: list[Any] = [data]
    # (node, its data, the collection that holds the data, the index or key there)
    stack: list[tuple[Node, Any, Any, Any]] = [(root, data, top, 0)]
    seen: set[int] = set()
    while stack:
        node, value, holder, at = stack.pop()
        if id(node) in seen:
            continue  # an alias: its first place speaks for it
        seen.add(id(node))
        k = bisect_left(ends, node.start)
        if k == len(ends) or starts[k] > node.end:
            continue  # no odd spelling in its text
        if isinstance(node, SequenceNode) and isinstance(value, list):
            if len(node.value) == len(value):
                stack.extend(
                    (n, v, value, i) for i, (n, v) in enumerate(zip(node.value, value, strict=True))
                )
            continue
        if not isinstance(node, MappingNode) or not isinstance(value, dict):
            continue
        if len(node.value) != len(value):
            continue  # merge keys: the data is not the nodes'
        spelled: dict[str, str] = {}
        for (key_node, value_node), (key, item) in zip(node.value, value.items(), strict=True):
            if isinstance(item, (dict, list)) and item:
                stack.append((value_node, item, value, key))
            elif isinstance(key, str) and (item is None or isinstance(item, (dict, list))):
                written = _written(text, key_node, value_node, node.block)
                if written is not None:
                    spelled[key] = written
        if spelled:
            odd = Spelled(value)
            odd.spelled = spelled
            holder[at] = odd
    return top[0]


def _written(text: str, key_node: Node, value_node: Node, block: bool) -> str | None:
    """The text of an empty or null value when not the plain one (see ``note_spellings``)."""
    if value_node.start == value_node.end:
        return None  # "key:" (a comment may follow: it stays where it is)
    if not block:
        token = text[value_node.start : value_node.end]
        return None if token in ("null", "[]", "{}") else token
    if not isinstance(key_node, ScalarNode):
        return None
    colon = text.find(":", key_node.end, value_node.start)
    if colon < 0:
        return None
    # the end of the line: at LF, CR LF, or another line break YAML reads (NEL, LS, PS)
    found = _LINE_BREAK.search(text, value_node.end)
    written = text[colon + 1 : found.start() if found is not None else len(text)]
    token = text[value_node.start : value_node.end]
    return None if _PLAIN.get(token) == written else written


def _over_bound(text: str, node: Node) -> bool:
    """Whether the block reader's tree of ``text`` holds more than MAX_NODES nodes (every
    node of its subset takes a character of its own: a short text cannot)."""
    return len(text) > MAX_NODES and count_nodes(node, MAX_NODES) > MAX_NODES


def count_nodes(root: Node, stop: int | None = None) -> int:
    """The nodes of a tree, a shared one counted each time it is reached (no more than
    ``stop`` + 1 are counted)."""
    count = 0
    stack = [root]
    while stack and (stop is None or count <= stop):
        node = stack.pop()
        count += 1
        if isinstance(node, MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return count


def load_documents(text: str, *, spliced: bool = False) -> list[Any] | None:
    """The data of every document of a segment (None: it does not parse, or is past a
    bound). ``spliced``: the text is this run's output, which repeats blocks of earlier
    documents (see :func:`blockread.read_data`), and may hold more nodes than its input
    (it is read back without the node bound)."""
    try:
        if spliced:
            found = blockread.read_data(text)
        else:
            node, found = blockread.read(text)
            if _over_bound(text, node):
                return None
    except blockread.Declined as exc:
        if COUNTS is not None:
            _count("check" if spliced else "other", exc)
    else:
        if COUNTS is not None:
            _count("check" if spliced else "other", None)
        return [found]
    from proxy_postrender.yamltext import libyaml

    try:
        return libyaml.load_data(text, max_nodes=None if spliced else MAX_NODES)
    except ParseError:
        return None
