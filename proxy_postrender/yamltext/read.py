"""Read the documents of a segment: the fast block reader, else libyaml.

Both give the same node tree (with positions) and the same data; the fast
reader only saves time, and declines whatever it does not handle.
"""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.yamltext import blockread
from proxy_postrender.yamltext.errors import ParseError
from proxy_postrender.yamltext.tree import Node

# The API server takes requests of at most 3 MiB; a document that must be parsed and
# is far larger than any object could be is refused rather than parsed.
MAX_PARSED_BYTES = 8 * 1024 * 1024


def nodes_and_data(text: str) -> list[tuple[Node, Any]]:
    """Every document of ``text`` as its node tree and its data; ParseError when invalid."""
    try:
        return [blockread.read(text)]
    except blockread.Declined:
        pass
    from proxy_postrender.yamltext import libyaml

    return libyaml.compose(text)


def load_documents(text: str, *, spliced: bool = False) -> list[Any] | None:
    """The data of every document of a segment (None: it does not parse). ``spliced``:
    the text is this run's output, which repeats blocks of earlier documents
    (see :func:`blockread.read_data`)."""
    try:
        return [blockread.read_data(text) if spliced else blockread.read(text)[1]]
    except blockread.Declined:
        pass
    from proxy_postrender.yamltext import libyaml

    try:
        return libyaml.load_data(text)
    except ParseError:
        return None
