"""A marker password must never appear outside the places the user asked for it
(the manifests on stdout), on any CLI path; log files are created 0600."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import GOLDEN, run_cli

MARKER = "Zq7xMARKERpw"
URL = f"http://build:{MARKER}@proxy.corp.example:3128"
POD = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
PROFILE = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: m}\n"
    f"spec:\n  httpProxy: {URL}\n  httpsProxy: {URL}\n"
)


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text(PROFILE)
    return path


def _clean(*texts: bytes | str) -> None:
    for text in texts:
        data = text.encode() if isinstance(text, str) else text
        assert MARKER.encode() not in data


def test_success_keeps_the_password_in_the_manifests_only(profile: Path, tmp_path: Path) -> None:
    log = tmp_path / "logs" / "run.log"
    report = tmp_path / "report.txt"
    proc = run_cli(
        [str(profile), f"--report={report}", "--log-file", str(log)],
        (GOLDEN / "capi-v1beta1" / "input.yaml").read_bytes() + b"---\n" + POD,
    )
    assert proc.returncode == 0, proc.stderr
    assert MARKER.encode() in proc.stdout  # the user asked for it there
    _clean(proc.stderr, report.read_text(), log.read_text())
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(report.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("args", "stdin", "code"),
    [
        (["--http-proxy", f"http://build:{MARKER}@proxy:99999"], POD, 2),  # bad port
        (["--http-proxy", f"proxy:{MARKER}@x"], POD, 2),  # no scheme
        (["--http-proxy", URL, "--forbid-plaintext-credentials"], POD, 1),
        (["--http-proxy", URL], b"kind: Pod\nspec: [\n", 1),  # invalid YAML
        (["--http-proxy", URL, "--profile", "a", "b"], POD, 2),  # usage
        (
            ["--http-proxy", URL, "--on-conflict", "fail"],
            POD.replace(
                b"  - name: a\n", b"  - name: a\n    env: [{name: HTTP_PROXY, value: x}]\n"
            ),
            1,
        ),
    ],
)
def test_every_error_path_keeps_the_password_out(
    args: list[str], stdin: bytes, code: int, tmp_path: Path
) -> None:
    log = tmp_path / "err.log"
    proc = run_cli([*args, "--log-file", str(log)], stdin)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout == b""
    _clean(proc.stderr, log.read_text() if log.exists() else "")


def test_diff_noproxy_and_krm_results_keep_it_out(profile: Path) -> None:
    diff = run_cli([str(profile), "--diff"], POD)
    assert diff.returncode == 0
    _clean(diff.stdout, diff.stderr)
    for args in (
        ["noproxy", str(profile), "--explain"],
        ["noproxy", "check", "--profile", str(profile)],
    ):
        proc = run_cli(args, b"")
        assert proc.returncode == 0, proc.stderr
        _clean(proc.stdout, proc.stderr)
    resource_list = (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a}]}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: q}, spec: {containers: x}}\n"
        "functionConfig:\n" + "".join("  " + line + "\n" for line in PROFILE.splitlines())
    )
    krm = run_cli([], resource_list.encode())
    assert krm.returncode == 1
    _clean(krm.stderr)
    results = krm.stdout.decode().split("results:", 1)[1]
    _clean(results)


def test_helm4_plugin_log_keeps_it_out(profile: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    env = {"HELM_PLUGIN_NAME": "proxy", "XDG_STATE_HOME": str(state)}
    proc = run_cli([str(profile)], b"kind: Pod\nspec: [\n", env=env)
    assert proc.returncode == 1
    log = state / "proxy-postrender" / "helm-plugin.log"
    assert log.exists() and "invalid YAML" in log.read_text()
    _clean(proc.stderr, log.read_text())
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_secret_reference_keeps_it_out_of_the_manifests_too(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(PROFILE + "  credentials: {secretRef: proxy}\n  nodes: {enabled: false}\n")
    proc = run_cli([str(path), "--report"], POD)
    assert proc.returncode == 0, proc.stderr
    _clean(proc.stdout, proc.stderr)


# --- faults: nothing partial ever reaches stdout ---------------------------------

MANY = b"".join(
    b"---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d%d}\nspec:\n"
    b"  template:\n    spec:\n      containers:\n      - {name: a, image: x}\n" % i
    for i in range(4000)
)


def _start(args: list[str]) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROXY_POSTRENDER")}
    return subprocess.Popen(
        [sys.executable, "-m", "proxy_postrender", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def test_an_interrupt_writes_nothing() -> None:
    proc = _start(["--http-proxy", URL])
    assert proc.stdin is not None
    proc.stdin.write(MANY)
    proc.stdin.close()
    time.sleep(0.3)  # well inside the work on 4000 Deployments
    proc.send_signal(signal.SIGINT)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=60)
    if proc.returncode == 0:
        pytest.fail("the run finished before the signal; make the input larger")
    assert out == b""
    # 130 with a message once Python runs; a signal before its handler is in place kills it
    assert proc.returncode in (130, -signal.SIGINT), err
    if proc.returncode == 130:
        lines = err.decode().splitlines()
        assert lines == ["proxy-postrender: error: interrupted; nothing was written"]


def test_a_closed_stdout_is_an_error_without_a_traceback() -> None:
    proc = _start(["--http-proxy", URL])
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.close()
    proc.stdin.write(POD)
    proc.stdin.close()
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == 1
    assert b"Traceback" not in err


def test_a_full_disk_behind_stdout_is_an_error() -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "proxy_postrender", "--http-proxy", URL],
            input=POD,
            stdout=full,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == [
        "proxy-postrender: error: cannot write the output: No space left on device"
    ]
