"""A marker password must never appear outside the places the user asked for it
(the manifests on stdout), on any CLI path; log files are created 0600."""

from __future__ import annotations

import base64
import os
import re
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
    assert diff.returncode == 1  # changes
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


# --- the review's findings: setters, --diff, one message path, control characters -------

SECRET_MODE = "  credentials: {secretRef: proxy}\n  nodes: {credentials: secret}\n"
ADDON = (
    b"apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnDeploymentConfig\n"
    b"metadata: {name: addons}\nspec: {}\n"
)
SETTERS = {
    "preset": "  targets:\n  - preset: ocm-addon\n",
    "set": (
        "  targets:\n  - apiVersion: addon.open-cluster-management.io/v1alpha1\n"
        "    kind: AddOnDeploymentConfig\n    set:\n"
        "      $.spec.proxyConfig.noProxy: noProxy\n"
        "      $.spec.proxyConfig.httpsProxy: httpsProxy\n"
    ),
}


@pytest.mark.parametrize("entry", sorted(SETTERS))
def test_secret_mode_refuses_a_setter_that_would_write_the_password(
    entry: str, tmp_path: Path
) -> None:
    """Finding 1: the setter's field takes a plain string, so the profile is refused, with
    the spec.targets entry and the JSONPath named, instead of a password in clear."""
    path = tmp_path / "p.yaml"
    path.write_text(PROFILE + SECRET_MODE + SETTERS[entry])
    proc = run_cli([str(path), "--report"], ADDON + b"---\n" + POD)
    assert proc.returncode == 2 and proc.stdout == b"", proc.stderr
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "spec.targets[0]" in err and "secretRef" in err, err
    wanted = "httpProxy" if entry == "preset" else "httpsProxy"
    assert f"$.spec.proxyConfig.{wanted} would get spec.{wanted}" in err
    _clean(err)


def test_secret_mode_lets_setters_write_a_url_without_credentials(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: m}\n"
        "spec:\n  httpProxy: http://proxy.corp.example:3128\n" + SECRET_MODE + SETTERS["preset"]
    )
    proc = run_cli([str(path)], ADDON)
    assert proc.returncode == 0, proc.stderr
    assert b"httpProxy: http://proxy.corp.example:3128" in proc.stdout.replace(b'"', b"")


def _payloads(text: str) -> list[str]:
    """The scripts of the PowerShell -EncodedCommand payloads in ``text``."""
    found = re.findall(r"-EncodedCommand\s+([A-Za-z0-9+/=]+)", text)
    return [base64.b64decode(payload).decode("utf-16-le") for payload in found]


# shlex.quote writes "it's" as it'"'"'s, systemd inside YAML as it's-S3cret%%22Zq
QUOTED_URL = "http://build:it's-S3cret%22Zq@proxy.corp.example:3128"
KUBEADM_FLOW = (
    b"{apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, "
    b"metadata: {name: flow}, spec: {files: [], preKubeadmCommands: [echo hi]}}\n"
)


@pytest.mark.parametrize(
    "stream",
    [
        (GOLDEN / "capi-v1beta1" / "input.yaml").read_bytes(),
        (GOLDEN / "capi-windows" / "input.yaml").read_bytes(),
        KUBEADM_FLOW,
        KUBEADM_FLOW.rstrip(b"\n"),
        (GOLDEN / "capi-v1beta1" / "input.yaml").read_bytes().rstrip(b"\n"),
    ],
    ids=["block", "windows", "flow", "flow-no-final-newline", "no-final-newline"],
)
def test_diff_masks_a_password_with_quotes_in_every_writer(stream: bytes) -> None:
    """Finding 2: the diff shows a run made with masked values, so every escaper (shell,
    systemd, YAML, PowerShell, each inside another) writes the mask, not the password."""
    proc = run_cli(["--http-proxy", QUOTED_URL, "--https-proxy", QUOTED_URL, "--diff"], stream)
    assert proc.returncode == 1, proc.stderr
    shown = proc.stdout.decode() + "".join(_payloads(proc.stdout.decode()))
    assert "\n+" in shown and "***@proxy.corp.example" in shown
    assert "S3cret" not in shown and b"S3cret" not in proc.stderr


def test_diff_of_a_rotated_password_masks_the_old_one_too() -> None:
    """The "-" lines hold what an earlier run wrote: masked in every quoting it has."""
    old = "http://build:it's-0ldS3cret%22@proxy.corp.example:3128"
    capi = (GOLDEN / "capi-v1beta1" / "input.yaml").read_bytes()
    injected = run_cli(["--http-proxy", old], capi).stdout
    assert b"0ldS3cret" in injected
    proc = run_cli(["--http-proxy", QUOTED_URL, "--diff"], injected)
    assert proc.returncode == 1, proc.stderr
    assert b"\n-" in proc.stdout and b"\n+" in proc.stdout
    assert b"0ldS3cret" not in proc.stdout and b"S3cret" not in proc.stdout


@pytest.mark.parametrize(
    "value",
    [
        '"http://build:it\'s a \\"Zq7S3cret\\"@proxy.corp.example:3128"',
        "http://build:it's Zq7S3cret@proxy.corp.example:3128",
    ],
    ids=["quotes", "blank"],
)
def test_a_duplicate_profile_key_never_shows_the_password(value: str, tmp_path: Path) -> None:
    """Finding 3: the parser quotes both values of a duplicate key in its message."""
    path = tmp_path / "dup.yaml"
    path.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: d}\n"
        f"spec:\n  httpProxy: {value}\n  httpProxy: http://proxy.corp.example:3128\n"
    )
    state = tmp_path / "state"
    env = {"HELM_PLUGIN_NAME": "proxy", "XDG_STATE_HOME": str(state)}
    proc = run_cli([str(path)], POD, env=env)
    assert proc.returncode == 2 and b"duplicate key" in proc.stderr
    log = (state / "proxy-postrender" / "helm-plugin.log").read_text()
    for text in (proc.stderr.decode(), log):
        assert "Zq7S3cret" not in text and "it's" not in text, text


def test_a_usage_error_is_redacted_and_reaches_the_plugin_log(tmp_path: Path) -> None:
    """Finding 3: click's "unexpected extra argument (URL)" goes through the redactor,
    and, like every error, into the Helm 4 plugin log."""
    state = tmp_path / "state"
    env = {"HELM_PLUGIN_NAME": "proxy", "XDG_STATE_HOME": str(state)}
    proc = run_cli(["profile.yaml", f"http://build:{MARKER}@proxy:3128"], POD, env=env)
    assert proc.returncode == 2 and proc.stdout == b""
    assert b"unexpected extra argument" in proc.stderr and b"***@proxy:3128" in proc.stderr
    log = (state / "proxy-postrender" / "helm-plugin.log").read_text()
    assert "unexpected extra argument" in log
    _clean(proc.stderr, log)


def test_control_characters_in_names_are_escaped_everywhere(tmp_path: Path) -> None:
    """Finding 6: a name or a # Source: comment cannot forge a log line or drive the
    terminal: CR, ESC, U+2028 and the like come out escaped."""
    name = "web\\r2026-01-01T00:00:00Z proxy-postrender: ok \\e[2K\\u2028x"  # YAML escapes
    good = f'apiVersion: v1\nkind: Pod\nmetadata: {{name: "{name}"}}\n'
    good += "spec:\n  containers:\n  - name: a\n"
    bad = f'---\n# Source: chart/\x1b[31mred\u2029.yaml\n{good}x: "\x1b"\n'
    log = tmp_path / "run.log"
    report = run_cli(["--http-proxy", URL, "--report", "--log-file", str(log)], good.encode())
    error = run_cli(["--http-proxy", URL, "--log-file", str(log)], (good + bad).encode())
    assert report.returncode == 0 and error.returncode == 1, error.stderr
    assert report.stderr.count(b"\n") == log.read_text().count("\n") - 1
    texts = (report.stderr.decode(), error.stderr.decode(), log.read_text())
    for text in texts:
        assert not {"\r", "\x1b", "\u2028", "\u2029"} & set(text), repr(text)
    assert "Pod web\\r2026-01-01T00:00:00Z proxy-postrender: ok \\x1b[2K\\u2028x" in texts[0]
    assert "from chart/\\x1b[31mred\\u2029.yaml" in texts[1]


# --- faults: nothing partial ever reaches stdout ---------------------------------

MANY = b"".join(
    b"---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d%d}\nspec:\n"
    b"  template:\n    spec:\n      containers:\n      - {name: a, image: x}\n" % i
    for i in range(20000)  # flow items are read on the fast path: 4000 took < 0.3 s
)


def _start(args: list[str]) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROXY_POSTRENDER")}
    return subprocess.Popen(
        [sys.executable, "-m", "proxy_postrender", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        # a test run started in the background of a non-interactive shell inherits SIGINT
        # ignored; the tool keeps an ignored SIGINT ignored (as nohup wants), so the child
        # gets the default back to be interruptible
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_interrupt_writes_nothing() -> None:
    proc = _start(["--http-proxy", URL])
    assert proc.stdin is not None
    proc.stdin.write(MANY)
    proc.stdin.close()
    time.sleep(0.3)  # well inside the work on 20000 Deployments
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
