"""Error types and the exit codes they map to.

Exit codes are part of the contract (SPEC §5.4): 1 for bad input, 2 for bad
usage or a bad profile.
"""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from typing import ClassVar

EXIT_INPUT = 1
EXIT_USAGE = 2


class DocumentContext(FrozenStruct):
    """Where in the stream a problem was found, for one-line error messages."""

    index: int  # 1-based position of the document in the stream
    line: int  # 1-based line in the stream where the document starts
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    source: str | None = None  # Helm's "# Source:" file or Helm 4's filename annotation

    def describe(self) -> str:
        parts = [f"document {self.index} (line {self.line}"]
        if self.kind:
            obj = self.kind
            if self.name:
                obj += " " + (f"{self.namespace}/{self.name}" if self.namespace else self.name)
            parts.append(obj)
        if self.source:
            parts.append(f"from {self.source}")
        return ", ".join(parts) + ")"


class ProxyPostrenderError(Exception):
    """Base class: every error the tool reports carries an exit code."""

    # a class variable: compiled (mypyc), an attribute without ClassVar is per instance
    # and set only by the class's own __init__, which these classes mostly lack
    exit_code: ClassVar[int] = EXIT_INPUT


class InputError(ProxyPostrenderError):
    """The manifest stream cannot be processed."""

    exit_code: ClassVar[int] = EXIT_INPUT

    def __init__(self, message: str, context: DocumentContext | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.context = context

    def __str__(self) -> str:
        if self.context is None:
            return self.message
        return f"{self.context.describe()}: {self.message}"


class ProfileError(ProxyPostrenderError):
    """The proxy profile (file, flags or environment) is invalid."""

    exit_code: ClassVar[int] = EXIT_USAGE


class UsageError(ProxyPostrenderError):
    """The command line is invalid."""

    exit_code: ClassVar[int] = EXIT_USAGE
