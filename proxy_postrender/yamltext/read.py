"""Read the documents of a segment: the fast block reader, else libyaml.

Both give the same node tree (with positions) and the same data; the fast
reader only saves time, and declines whatever it does not handle. Both keep to
the bounds of :mod:`errors` (nesting, nodes) and raise :class:`LimitError`
past them.
"""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.yamltext import blockread
from proxy_postrender.yamltext.errors import MAX_NODES, ParseError, too_many
from proxy_postrender.yamltext.tree import MappingNode, Node, SequenceNode

# The API server takes requests of at most 3 MiB; a document that must be parsed and
# is far larger than any object could be is refused rather than parsed.
MAX_PARSED_BYTES = 8 * 1024 * 1024


def nodes_and_data(text: str) -> list[tuple[Node, Any]]:
    """Every document of ``text`` as its node tree and its data; ParseError when invalid,
    LimitError past a bound."""
    try:
        node, data = blockread.read(text)
    except blockread.Declined:
        pass
    else:
        if _over_bound(text, node):
            raise too_many(MAX_NODES)
        return [(node, data)]
    from proxy_postrender.yamltext import libyaml

    return libyaml.compose(text)


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
            return [blockread.read_data(text)]
        node, data = blockread.read(text)
        return None if _over_bound(text, node) else [data]
    except blockread.Declined:
        pass
    from proxy_postrender.yamltext import libyaml

    try:
        return libyaml.load_data(text, max_nodes=None if spliced else MAX_NODES)
    except ParseError:
        return None
