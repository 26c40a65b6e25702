"""The command reads its input in chunks and spools its output: with chunks of a
few bytes and a spool that goes to disk at once, every golden case still gives
its exact output (or its exact error, with nothing written)."""

from __future__ import annotations

import io
import os
import sys

import pytest

from proxy_postrender.cli import entry, runner
from proxy_postrender.yamltext import spool, stream
from tests.golden import Case, load_cases
from tests.helpers import GOLDEN

CASES = load_cases()


def run_in_process(
    case: Case, stdin: bytes, monkeypatch: pytest.MonkeyPatch, chunk: int, spool_bytes: int
) -> tuple[int, bytes, str]:
    """The console script in this process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(spool, "CHUNK", chunk)
    monkeypatch.setattr(runner, "SPOOL_MEMORY", spool_bytes)
    monkeypatch.chdir(case.path)
    for name in [n for n in os.environ if n.startswith(("PROXY_POSTRENDER", "HELM_"))]:
        monkeypatch.delenv(name)
    out, err = io.BytesIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out))
    monkeypatch.setattr(sys, "stderr", err)
    code = 0
    try:
        entry.main(list(case.args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    sys.stdout.flush()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize(("chunk", "spool_bytes"), [(7, 1), (4096, 64)])
def test_small_chunks_and_a_spool_on_disk_change_nothing(
    case: Case, chunk: int, spool_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run_in_process(case, case.input, monkeypatch, chunk, spool_bytes)
    assert code == case.exit, err
    if case.exit:
        assert out == b""
        assert case.stderr is not None
        assert case.stderr in err
    else:
        assert out == case.expected_path.read_bytes()


def test_a_byte_order_mark_and_split_characters_survive_small_chunks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = next(c for c in CASES if c.name == "all-kinds")
    text = "# é ü — 字\n" + case.input.decode()
    expected = "# é ü — 字\n" + case.expected_path.read_text()
    data = stream.BOM.encode() + text.encode()
    for chunk in (1, 2, 3, 5):
        code, out, err = run_in_process(case, data, monkeypatch, chunk, 1)
        assert code == 0, err
        assert out == stream.BOM.encode() + expected.encode()


def test_the_output_spool_reads_back_what_was_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool, "CHUNK", 8)
    text = (GOLDEN / "all-kinds" / "input.yaml").read_text()
    with spool.Output(memory_limit=100) as out:
        for segment in stream.split(text):
            out.write(segment.text)
        assert out.text() == text
        next(out.segments())  # a read that stops early...
        out.write("---\nx: 1\n")  # ...and a write after it goes to the end
        assert [s.text for s in out.segments()] == [s.text for s in stream.split(text)] + [
            "---\nx: 1\n"
        ]
        target = io.BytesIO()
        out.copy_to(target, stream.BOM)
    assert target.getvalue() == (stream.BOM + text + "---\nx: 1\n").encode()


def test_without_a_writable_temporary_directory_the_output_stays_in_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tempfile

    def refuse() -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    case = next(c for c in CASES if c.name == "all-kinds")
    code, out, err = run_in_process(case, case.input, monkeypatch, 7, 1)
    assert (code, err) == (0, "")
    assert out == case.expected_path.read_bytes()
