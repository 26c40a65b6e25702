"""``noproxy`` and stdin (issue 19, item 5): without ``--stream`` it must not wait on a
terminal or on a pipe nobody closes. It reads stdin when ``--stream -`` asks for it
(a pipe or a terminal alike), or, unasked, when stdin is redirected from a regular file
(``< cluster.yaml``), which always ends; never otherwise."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.helpers import GOLDEN, SHARED_PROFILE

CLUSTERS = GOLDEN / "capi-two-clusters" / "input.yaml"
TIMEOUT = 30  # seconds; a run that waits on stdin never ends


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PROXY_POSTRENDER", "HELM_"))}


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "proxy_postrender", "noproxy", str(SHARED_PROFILE), *args]


def _labels(stdout: bytes) -> list[str]:
    """The scopes printed: one value alone is the workloads'."""
    lines = stdout.decode().splitlines()
    if len(lines) == 1 and ": " not in lines[0]:
        return ["workloads"]
    return [line.split(": ")[0] for line in lines]


def _scopes_of_the_file() -> list[str]:
    proc = subprocess.run(
        _command("--stream", str(CLUSTERS)), capture_output=True, timeout=TIMEOUT, check=False
    )
    assert proc.returncode == 0, proc.stderr
    labels = _labels(proc.stdout)
    assert labels[0] == "workloads" and len(labels) > 1  # the stream has Clusters
    return labels


def test_an_open_pipe_that_never_closes_is_not_read() -> None:
    """A CI step's stdin may be a pipe whose writer never closes it: the command returns
    at once with the profile's NO_PROXY alone."""
    proc = subprocess.Popen(
        _command(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdin is not None
    proc.stdin.write(CLUSTERS.read_bytes())  # data, but no end: the pipe stays open
    proc.stdin.flush()
    try:
        code = proc.wait(timeout=TIMEOUT)
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
        proc.stdin.close()
    assert code == 0, stderr
    assert _labels(stdout) == ["workloads"]


def test_a_terminal_is_not_read() -> None:
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            _command(),
            stdin=follower,
            capture_output=True,
            timeout=TIMEOUT,
            env=_env(),
            check=False,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 0, proc.stderr
    assert _labels(proc.stdout) == ["workloads"]


def test_stream_dash_reads_a_pipe_to_its_end() -> None:
    proc = subprocess.run(
        _command("--stream", "-"),
        input=CLUSTERS.read_bytes(),
        capture_output=True,
        timeout=TIMEOUT,
        env=_env(),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert _labels(proc.stdout) == _scopes_of_the_file()


def test_stream_dash_reads_a_terminal_when_asked() -> None:
    """--stream - on a terminal reads it, as asked, until end of input (^D)."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            _command("--stream", "-"),
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
        )
        os.write(leader, b"\x04")  # end of input, at the start of a line
        try:
            stdout, stderr = proc.communicate(timeout=TIMEOUT)
        finally:
            proc.kill()
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 0, stderr
    assert _labels(stdout) == ["workloads"]


def test_a_redirected_file_is_read_without_being_asked(tmp_path: Path) -> None:
    """``noproxy corp.yaml < cluster.yaml`` (README, docs/noproxy.md): a regular file."""
    with CLUSTERS.open("rb") as handle:
        proc = subprocess.run(
            _command(), stdin=handle, capture_output=True, timeout=TIMEOUT, env=_env(), check=False
        )
    assert proc.returncode == 0, proc.stderr
    assert _labels(proc.stdout) == _scopes_of_the_file()


def test_a_closed_pipe_is_not_read_without_being_asked() -> None:
    """The rule does not depend on timing: a pipe is read only with --stream -, even
    one that holds a whole stream and is closed."""
    proc = subprocess.run(
        _command(),
        input=CLUSTERS.read_bytes(),
        capture_output=True,
        timeout=TIMEOUT,
        env=_env(),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert _labels(proc.stdout) == ["workloads"]


def test_no_stdin_at_all() -> None:
    proc = subprocess.run(
        _command(), stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT, check=False
    )
    assert proc.returncode == 0, proc.stderr
    closed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; os.close(0); sys.argv[0] = 'x'; "
            "from proxy_postrender.cli.entry import main; main(sys.argv[1:])",
            "noproxy",
            str(SHARED_PROFILE),
        ],
        capture_output=True,
        timeout=TIMEOUT,
        env=_env(),
        check=False,
    )
    assert closed.returncode == 0, closed.stderr
    assert _labels(closed.stdout) == ["workloads"]
