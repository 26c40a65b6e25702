"""Where a run's output goes until the run has succeeded (all or nothing).

:class:`Output` takes the output text piece by piece. It keeps it in memory,
or, given a limit, in a temporary file once past that many characters, so
that a stream of any size runs in bounded memory. It can be read back as segments for
the end-of-stream checks, and is copied out only when the whole run has
succeeded.
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Callable, Iterable, Iterator

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import BinaryIO

from proxy_postrender.yamltext import stream

CHUNK = 1 << 20


def _reader(source: BinaryIO) -> Callable[[int], bytes]:
    """How to read ``source`` in chunks: on a terminal one line at a time (``read1``), so
    that one Ctrl-D ends the input; a buffered read would wait for a second one."""
    try:
        interactive = source.isatty()
    except (OSError, ValueError):
        interactive = False
    if interactive and isinstance(source, io.BufferedReader):
        return source.read1
    return source.read


def read_text(source: BinaryIO) -> Iterator[str]:
    """The text of a byte stream in chunks (UTF-8; other bytes as surrogate escapes,
    so that they pass through unchanged), keeping a byte-order mark."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
    read = _reader(source)
    while True:
        data = read(CHUNK)
        if not data:
            break
        text = decoder.decode(data)
        if text:
            yield text
    text = decoder.decode(b"", final=True)
    if text:
        yield text


class Output:
    """Text written piece by piece: kept in memory up to ``memory_limit`` characters
    (no limit: always), then moved to a temporary file and appended there."""

    def __init__(self, memory_limit: int | None = None) -> None:
        self._limit = memory_limit
        self._pieces: list[str] = []
        self._size = 0
        # the segments, while every piece was one (read back without splitting again)
        self._segments: list[stream.Segment] | None = []
        self._file: BinaryIO | None = None
        self._last = ""
        self._read = False

    def write(self, text: str) -> None:
        if text:
            self._segments = None
            self._write(text)

    def add(self, segment: stream.Segment) -> None:
        """Write a segment of a stream (in order), to read back as it is."""
        if self._segments is not None and self._file is None:
            self._segments.append(segment)
            self._write(segment.text)
        else:
            self.write(segment.text)

    def _write(self, text: str) -> None:
        self._last = text[-1]
        if self._file is None:
            self._pieces.append(text)
            self._size += len(text)
            if self._limit is not None and self._size > self._limit:
                self._roll_over()
            return
        if self._read:
            self._file.seek(0, 2)
            self._read = False
        self._file.write(text.encode("utf-8", "surrogateescape"))

    def _roll_over(self) -> None:
        import tempfile

        try:
            # closed by close() or on leaving a with block: it lives as long as the Output
            self._file = tempfile.TemporaryFile()  # noqa: SIM115
        except OSError:
            # no writable temporary directory (a read-only container): keep it in memory
            self._limit = None
            return
        for piece in self._pieces:
            self._file.write(piece.encode("utf-8", "surrogateescape"))
        self._pieces, self._segments = [], None

    def write_all(self, pieces: Iterable[str]) -> None:
        for piece in pieces:
            self.write(piece)

    def partial_line(self) -> bool:
        """Whether the output so far ends inside a line (a new document needs a newline first)."""
        return bool(self._last) and self._last != "\n"

    def line_break(self) -> str:
        """The line break of the text so far (its last one): ``\r\n`` or ``\n``."""
        tail = self._tail()
        at = tail.rfind("\n")
        return "\r\n" if at > 0 and tail[at - 1] == "\r" else "\n"

    def drop_final_newline(self) -> None:
        """Take back the line break that ends the text so far (one the tool wrote itself,
        as :meth:`line_break` gave it: a ``\r\n`` where the line break before it is one)."""
        if self._last != "\n":
            return
        tail = self._tail()
        before = tail.rfind("\n", 0, len(tail) - 2)
        crlf = tail.endswith("\r\n") and (before < 0 or tail[before - 1 : before] == "\r")
        self._drop_last()
        if crlf:
            self._drop_last()

    def _tail(self, size: int = 4096) -> str:
        """At most the last ``size`` characters of the text so far (for its line breaks;
        from a file, what its last bytes decode to)."""
        if self._file is None:
            pieces: list[str] = []
            held = 0
            for piece in reversed(self._pieces):
                pieces.append(piece)
                held += len(piece)
                if held >= size:
                    break
            return "".join(reversed(pieces))[-size:]
        end = self._file.seek(0, 2)
        self._file.seek(max(end - size, 0))
        self._read = True  # the next write seeks back to the end
        return self._file.read(size).decode("utf-8", "surrogateescape")

    def _drop_last(self) -> None:
        """Take back the last character of the text so far."""
        if self._file is None:
            self._pieces[-1] = self._pieces[-1][:-1]
            if self._segments:
                last = self._segments[-1]
                self._segments[-1] = stream.Segment(last.text[:-1], last.offset, last.line)
                if not last.text[:-1]:
                    self._segments.pop()
            if not self._pieces[-1]:
                self._pieces.pop()
            self._size -= 1
            self._last = self._pieces[-1][-1] if self._pieces else ""
            return
        size = self._file.seek(0, 2) - 1
        self._file.truncate(size)
        self._file.seek(max(size - 1, 0))
        self._last = self._file.read(1).decode("utf-8", "surrogateescape")[-1:]
        self._read = True  # the next write seeks back to the end

    def segments(self) -> Iterator[stream.Segment]:
        """The text so far, read back as segments."""
        if self._file is None:
            if self._segments is not None:
                yield from list(self._segments)
            else:
                yield from stream.split("".join(self._pieces))
            return
        self._file.seek(0)
        self._read = True  # the next write seeks back to the end
        yield from stream.split_chunks(read_text(self._file))

    def blank(self) -> bool:
        """Whether the text so far is empty or only white space (a spilled file never is:
        it holds more than the memory limit)."""
        return self._file is None and not any(piece.strip() for piece in self._pieces)

    def text(self) -> str:
        if self._file is None:
            return "".join(self._pieces)
        self._file.seek(0)
        self._read = True
        return "".join(read_text(self._file))

    def copy_to(self, target: BinaryIO, prefix: str = "") -> None:
        """Write everything out (after ``prefix``, a byte-order mark say)."""
        target.write(prefix.encode("utf-8"))
        if self._file is None:
            for piece in self._pieces:
                target.write(piece.encode("utf-8", "surrogateescape"))
            return
        import shutil

        self._file.seek(0)
        self._read = True
        shutil.copyfileobj(self._file, target, CHUNK)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> Output:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
