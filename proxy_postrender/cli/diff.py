"""``--diff``: a unified diff of what a run changes, with credentials masked by
construction.

The engine runs twice over the same input: with the run's request, and with the
same request whose proxy URLs carry ``***`` as their user-info. The real run
decides what changes (its errors are the run's errors, its output gives the
diff's lines and line numbers); the masked run gives the text shown for every
line of the output. Each writer (YAML, systemd drop-ins, shell ``export`` lines,
PowerShell commands and their base64) wrote the mask in its own spelling, so no
spelling of a password has to be known or searched for. The lines only the input
has (the ``-`` lines: what the run replaces or takes out) cannot be rebuilt so;
every hunk also goes through the redactor, as the second line of defence.

The cost is linear: the engine writes what it makes of each input segment right
after reading it, so each output piece belongs to one input segment
(:class:`_Positions`); each document is compared with its own piece only, and the
hunks are grouped as they come, with the line numbers of the whole stream.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import InputError, ProxyPostrenderError
from proxy_postrender.patterns import compiled
from proxy_postrender.yamltext import spool

if TYPE_CHECKING:
    from proxy_postrender.request import Request
    from proxy_postrender.result import Result
    from proxy_postrender.yamltext.stream import Segment

HEADER = "--- manifests\n+++ manifests (proxy-postrender)\n"
CONTEXT = 3  # lines of context around each change, as diff -u
_LINE_RE = compiled(r"[^\n]*\n|[^\n]+$")


def lines(text: str) -> list[str]:
    """Lines ending in "\\n" only (not at U+2028 and the other breaks str.splitlines knows)."""
    return _LINE_RE.findall(text)


class _Positions:
    """The input's segments for one engine run, noting which one the engine is at (so
    that each write of the run is put down to the segment it came from)."""

    def __init__(self, source: Callable[[], Iterable[Segment]]) -> None:
        self.source = source
        self.index = 0
        self.count = 0

    def __call__(self) -> Iterator[Segment]:
        self.count = 0  # the engine may read the stream twice: the last pass counts
        for segment in self.source():
            self.index = self.count
            self.count += 1
            yield segment
        self.index = self.count  # past the end: what the run adds (generated objects)


class _Recording(spool.Output):
    """A spool that remembers, for each write, the input segment it belongs to."""

    def __init__(self, positions: _Positions, memory_limit: int | None) -> None:
        super().__init__(memory_limit)
        self.positions = positions
        self.writes: list[tuple[int, int]] = []  # (segment index, characters)

    def write(self, text: str) -> None:
        if text:
            self.writes.append((self.positions.index, len(text)))
        super().write(text)

    def pieces(self, count: int) -> Iterator[str]:
        """The output made of each input segment (``count`` of them), then what follows
        them all."""
        text = self.text()
        writes = iter(self.writes)
        pending = next(writes, None)
        end = 0
        for index in range(count + 1):
            start = end
            while pending is not None and (pending[0] <= index or index == count):
                end += pending[1]
                pending = next(writes, None)
            yield text[start:end]


def _joined(pieces: Iterable[tuple[str, str, str]]) -> Iterator[tuple[str, str, str]]:
    """The (input, output, shown) pieces, a piece that ends inside a line joined with the
    next (the last document without a final newline, then generated objects)."""
    carry = ("", "", "")
    for piece in pieces:
        carry = (carry[0] + piece[0], carry[1] + piece[1], carry[2] + piece[2])
        if all(text.endswith("\n") or not text for text in carry):
            yield carry
            carry = ("", "", "")
    if any(carry):
        yield carry


def _range(start: int, length: int) -> str:
    """A hunk header's range, as difflib and diff -u write it."""
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _marked(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


class Hunks:
    """Unified-diff hunks, grouped as difflib groups them (``CONTEXT`` lines around each
    change; changes closer than twice that share a hunk), from runs of equal and
    changed lines fed in order; ``write`` gets the text hunk by hunk."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._old = self._new = 0  # the lines fed so far, on each side
        self._lead: deque[str] = deque(maxlen=CONTEXT)  # equal lines since the last change
        self._hunk: list[str] | None = None  # the open hunk's lines
        self._start = (0, 0)
        self._size = [0, 0]
        self._tail: list[str] = []  # equal lines after the open hunk's last change
        self._written = False

    def equal(self, shown: list[str]) -> None:
        if self._hunk is not None:
            self._tail.extend(shown[: 2 * CONTEXT + 1 - len(self._tail)])
            if len(self._tail) > 2 * CONTEXT:
                self._close()
        self._lead.extend(shown[-CONTEXT:])
        self._old += len(shown)
        self._new += len(shown)

    def change(self, old: list[str], new: list[str]) -> None:
        if self._hunk is None:
            self._hunk = [" " + line for line in self._lead]
            self._start = (self._old - len(self._lead), self._new - len(self._lead))
            self._size = [len(self._lead), len(self._lead)]
        else:
            self._hunk += [" " + line for line in self._tail]
            self._size = [self._size[0] + len(self._tail), self._size[1] + len(self._tail)]
        self._tail = []
        self._lead.clear()
        self._hunk += ["-" + line for line in old]
        self._hunk += ["+" + line for line in new]
        self._size = [self._size[0] + len(old), self._size[1] + len(new)]
        self._old += len(old)
        self._new += len(new)

    def finish(self) -> None:
        if self._hunk is not None:
            self._close()

    @property
    def written(self) -> bool:
        """Whether a hunk was written (the run changes something)."""
        return self._written

    def _close(self) -> None:
        assert self._hunk is not None
        trailing = self._tail[:CONTEXT]
        old, new = self._size[0] + len(trailing), self._size[1] + len(trailing)
        body = "".join(_marked(line) for line in self._hunk + [" " + t for t in trailing])
        ranges = f"-{_range(self._start[0], old)} +{_range(self._start[1], new)}"
        self._write(f"{'' if self._written else HEADER}@@ {ranges} @@\n")
        self._write(body)
        self._written = True
        self._hunk, self._tail = None, []


def compare(hunks: Hunks, before: str, after: str, shown: str) -> None:
    """Feed ``hunks`` the change from ``before`` (input) to ``after`` (output); the output
    side shows the lines of ``shown`` (the masked output), which line up with ``after``'s."""
    import difflib  # lazy: only --diff

    old, new, display = lines(before), lines(after), lines(shown)
    if before == after:
        hunks.equal(display if len(display) == len(new) else old)
        return
    if len(display) != len(new):  # cannot line up: compare with the masked output itself
        new = display
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag == "equal":
            hunks.equal(display[j1:j2])
        else:
            hunks.change(old[i1:i2], display[j1:j2])


def masked_diff(
    kept: spool.Output,
    request: Request,
    masked: Request,
    out: spool.Output,
    redact: Callable[[str], str],
    *,
    memory_limit: int | None = None,
    keep_objects: bool = False,
) -> tuple[Result, bool]:
    """Write into ``out`` the diff of the stream in ``kept`` and what ``request`` makes of
    it, showing what ``masked`` makes; the real run's result, and whether the diff has a
    hunk (the run changes something). Errors are the real run's."""
    from proxy_postrender import engine

    real_at, masked_at = _Positions(kept.segments), _Positions(kept.segments)
    real = _Recording(real_at, memory_limit)
    # without credentials the masked run would be the same run
    shown = real if masked == request else _Recording(masked_at, memory_limit)
    with real, shown:
        result = engine.run(real_at, request, real, keep_objects=keep_objects)
        if shown is real:
            masked_at = real_at
        else:
            try:
                engine.run(masked_at, masked, shown, keep_objects=False)
            except ProxyPostrenderError as exc:
                raise InputError(
                    f"--diff: the run with masked credentials failed where the real one did not "
                    f"({exc}); no diff is shown"
                ) from None
        count = real_at.count
        if masked_at.count != count:
            raise InputError("--diff: the masked run read another stream")  # a bug
        hunks = Hunks(lambda text: out.write(redact(text)))
        inputs = itertools.chain((segment.text for segment in kept.segments()), [""])
        for before, after, display in _joined(
            zip(inputs, real.pieces(count), shown.pieces(count), strict=True)
        ):
            compare(hunks, before, after, display)
        hunks.finish()
    return result, hunks.written
