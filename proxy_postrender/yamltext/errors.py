"""Why a text is not YAML the tool can read (raised by every reader)."""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Final


class ParseError(Exception):
    """Invalid YAML; ``offset`` is where in the text, when known."""

    def __init__(self, problem: str, offset: int | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.offset = offset


class LimitError(ParseError):
    """Valid YAML, but past a bound on the work a document may cost (nodes, nesting):
    ``problem`` is the whole reason, not a syntax error."""


# Bounds on one document that is read (SPEC 5.4: a one-line error, never minutes of
# work or a crash). Kubernetes objects nest a few dozen levels; libyaml's composer
# recurses in C and crashed the process 50 000 levels down. The node bound keeps a
# document to seconds and under a gigabyte: a 1 MiB JSON Deployment holds about
# 125 000 nodes, and 973 000 (7.9 MiB) took 6.3 s and 0.56 GB (docs/performance.md).
# (MAX_DEPTH is Final: the compiled reader, which tests it at every collection, reads
# the number itself, not a module's dict each time)
MAX_DEPTH: Final = 200
MAX_NODES = 1_000_000


def too_deep() -> LimitError:
    return LimitError(f"the document is nested too deeply (more than {MAX_DEPTH} levels)", None)


def too_many(max_nodes: int) -> LimitError:
    return LimitError(
        f"the document has more than {max_nodes} nodes (keys, values, lists and mappings), "
        "more than the tool reads in one document",
        None,
    )
