"""Why a text is not YAML the tool can read (raised by every reader)."""

from __future__ import annotations


class ParseError(Exception):
    """Invalid YAML; ``offset`` is where in the text, when known."""

    def __init__(self, problem: str, offset: int | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.offset = offset
