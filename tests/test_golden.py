"""Golden fixtures: exact output, idempotence, removal, all-or-nothing errors."""

from __future__ import annotations

import pytest

from proxy_postrender.yamltext import libyaml
from tests.golden import Case, load_cases
from tests.helpers import run_cli

CASES = load_cases()
OK = [c for c in CASES if not c.exit]
ERRORS = [c for c in CASES if c.exit]


def _run(case: Case, stdin: bytes, *extra: str) -> bytes:
    proc = run_cli([*case.args, *extra], stdin, cwd=case.path)
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == len(case.warns), lines
    for line, part in zip(lines, case.warns, strict=True):
        assert line.startswith("proxy-postrender: warning: ") and part in line, line
    return proc.stdout


@pytest.mark.parametrize("case", OK, ids=lambda c: c.name)
def test_output_matches_golden(case: Case) -> None:
    assert _run(case, case.input) == case.expected_path.read_bytes()


@pytest.mark.parametrize("case", OK, ids=lambda c: c.name)
def test_second_pass_changes_nothing(case: Case) -> None:
    once = case.expected_path.read_bytes()
    assert _run(case, once) == once


def _strip_empty(value: object) -> object:
    """Normalise away the empty env/annotations that removal cannot tell from absent ones."""
    if isinstance(value, dict):
        return {
            k: _strip_empty(v)
            for k, v in value.items()
            if not (k in ("env", "annotations", "metadata") and v in (None, [], {}))
        }
    if isinstance(value, list):
        return [_strip_empty(v) for v in value]
    return value


@pytest.mark.parametrize(
    "case", [c for c in OK if c.remove_restores != "none"], ids=lambda c: c.name
)
def test_remove_gives_back_the_input(case: Case) -> None:
    args = ["--remove", *case.remove_args]
    removed_output = run_cli(args, case.expected_path.read_bytes(), cwd=case.path).stdout
    removed_input = run_cli(args, case.input, cwd=case.path).stdout
    if case.remove_restores == "bytes":
        assert removed_output == removed_input
    else:

        def load(data: bytes) -> object:
            return _strip_empty(libyaml.load_data(data.decode("utf-8-sig")))

        assert load(removed_output) == load(removed_input)


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c.name)
def test_error_is_one_line_and_nothing_is_written(case: Case) -> None:
    proc = run_cli(case.args, case.input, cwd=case.path)
    assert proc.returncode == case.exit
    assert proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert case.stderr is not None
    assert lines[0].startswith(case.stderr), lines[0]
