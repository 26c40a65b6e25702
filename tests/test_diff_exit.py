"""``--diff`` as a CI gate (issue 19, item 5): exit 0 when nothing would change, 1 when
something would, and 2 or more on an error, so that "changes" and "error" never share
a code (as ``git diff --exit-code`` and diff(1))."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

POD = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
CONFIG_MAP = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n"
BAD_YAML = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p\n"
BAD_DOC = (
    b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n"
    b"spec:\n  template:\n    spec:\n      containers: 3\n"
)
FLAGS = [
    "--http-proxy",
    "http://proxy.corp.example:3128",
    "--https-proxy",
    "http://proxy.corp.example:3128",
]


def _injected(stream: bytes) -> bytes:
    proc = run_cli(FLAGS, stream)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_changes_exit_1_with_the_diff_on_stdout() -> None:
    proc = run_cli([*FLAGS, "--diff"], POD)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith(b"--- manifests\n+++ manifests (proxy-postrender)\n@@ ")
    assert proc.stderr == b""


@pytest.mark.parametrize(
    "stream", [b"", CONFIG_MAP, POD], ids=["empty", "no-target", "already-injected"]
)
def test_nothing_to_change_exits_0_with_nothing_on_stdout(stream: bytes) -> None:
    given = _injected(stream) if stream == POD else stream
    proc = run_cli([*FLAGS, "--diff"], given)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_remove_diff_exits_1_on_injected_input_and_0_on_clean_input() -> None:
    injected = run_cli(["--remove", "--diff"], _injected(POD))
    assert injected.returncode == 1, injected.stderr
    assert b"\n-    - name: HTTP_PROXY\n" in injected.stdout
    clean = run_cli(["--remove", "--diff"], POD)
    assert (clean.returncode, clean.stdout) == (0, b"")


@pytest.mark.parametrize("stream", [BAD_YAML, BAD_DOC], ids=["invalid-yaml", "bad-document"])
def test_bad_input_exits_3_under_diff_and_1_without(stream: bytes) -> None:
    """An input error is exit 1 for the filter; under --diff 1 means "changes", so the
    error is 3 there, stdout empty and one line on stderr."""
    plain = run_cli(FLAGS, stream)
    assert plain.returncode == 1
    proc = run_cli([*FLAGS, "--diff"], stream)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == b""
    assert proc.stderr.count(b"\n") == 1 and proc.stderr.startswith(b"proxy-postrender: error:")


def test_an_error_found_after_the_real_run_exits_3() -> None:
    """--forbid-plaintext-credentials fails the run (an input error) after it was made."""
    proc = run_cli(
        ["--http-proxy", "http://u:s3cret@proxy:1", "--forbid-plaintext-credentials", "--diff"],
        POD,
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == b"" and b"s3cret" not in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--diff", "--bogus"],  # click: no such option
        ["--diff", "--http-proxy", "ftp://proxy:1"],  # a bad proxy URL: the profile
        ["--diff"],  # no profile at all
        ["--diff", str(GOLDEN / "no-such-profile.yaml")],
    ],
    ids=["unknown-option", "bad-url", "no-profile", "missing-file"],
)
def test_usage_and_profile_errors_keep_exit_2(args: list[str]) -> None:
    proc = run_cli(args, POD)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == b""


def test_a_resource_list_under_diff_is_a_usage_error() -> None:
    resource_list = b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
    proc = run_cli([str(SHARED_PROFILE), "--diff"], resource_list)
    assert proc.returncode == 2 and proc.stdout == b""


def test_the_click_path_gives_the_same_codes() -> None:
    """A repeated option is parsed by click, not the plain parser: the same exit codes."""
    args = [*FLAGS, "--no-proxy", "a.example", "--no-proxy", "b.example", "--diff"]
    assert run_cli(args, POD).returncode == 1
    assert run_cli(args, b"").returncode == 0
    assert run_cli(args, BAD_YAML).returncode == 3


def test_a_report_file_is_written_with_either_code(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    changed = run_cli([*FLAGS, "--diff", f"--report={report}"], POD)
    assert changed.returncode == 1 and "1 changed" in report.read_text()
    same = run_cli([*FLAGS, "--diff", f"--report={report}"], _injected(POD))
    assert same.returncode == 0 and "0 changed" in report.read_text()


def test_help_and_docs_state_the_codes() -> None:
    from tests.helpers import ROOT

    text = " ".join(run_cli(["--help"]).stdout.decode().split())
    assert "Exit 0: nothing to change, 1: changes, 2: bad usage or profile, 3: bad input" in text
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "0 nothing to change, 1 changes, 2 bad usage or profile, 3 bad input" in readme
