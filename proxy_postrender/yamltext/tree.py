"""The node tree the splicer edits: kinds, offsets into the text, block or flow.

Two readers produce it: :mod:`blockread` directly, and :mod:`yamlio` by
converting libyaml's composed nodes (the full path). Offsets are character
offsets into the document text; ``end`` is just after the node's last character
(for a block scalar: the start of the line that ends it).
"""

from __future__ import annotations


class Node:
    __slots__ = ("end", "start")

    def __init__(self, start: int, end: int) -> None:
        self.start = start
        self.end = end


class ScalarNode(Node):
    """``value`` is the scalar's text as written (unescaped, unresolved); ``style`` is
    "" (plain), "'", '"', "|" or ">"; ``null`` says it resolves to null."""

    __slots__ = ("null", "style", "value")

    def __init__(self, start: int, end: int, value: str, style: str, null: bool) -> None:
        self.start = start
        self.end = end
        self.value = value
        self.style = style
        self.null = null


class MappingNode(Node):
    __slots__ = ("block", "value")

    def __init__(self, start: int, end: int, value: list[tuple[Node, Node]], block: bool) -> None:
        self.start = start
        self.end = end
        self.value = value
        self.block = block


class SequenceNode(Node):
    __slots__ = ("block", "value")

    def __init__(self, start: int, end: int, value: list[Node], block: bool) -> None:
        self.start = start
        self.end = end
        self.value = value
        self.block = block


class Spelled(dict):  # type: ignore[type-arg]
    """A mapping (as data) that holds an empty or null value not written the plain way:
    ``spelled`` gives, per such key, the exact text of the value (see :func:`spelling`).
    Equal to the plain dict with the same items."""

    __slots__ = ("spelled",)

    spelled: dict[str, str]


def spelling(mapping: object, key: str) -> str | None:
    """How the input wrote the empty or null value of ``mapping[key]`` when that was not
    the plain way (None: ``key:``, ``key: []``, ``key: {}``, or not known).

    In a block mapping: the text from just after the key's colon to the end of the line
    that ends the value (``" null"``, ``" ~  # none"``, ``"\\n    {}"``); in a flow
    mapping: the value's own text (``~``)."""
    spelled = getattr(mapping, "spelled", None)
    return spelled.get(key) if spelled is not None else None
