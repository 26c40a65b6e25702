"""A password written into --http-proxy/--https-proxy (issue 19, item 5): any user can
read a process's arguments with ps, so it gets the warning a password written into a
profile gets, on stderr and in --report; the same URL from the environment does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

STREAM = (GOLDEN / "helm3-chart" / "input.yaml").read_bytes()
PASSWORD = "Pw-5e1b7d-MARKER"
URL = f"http://build:{PASSWORD}@proxy.corp.example:3128"
WARNING = "holds its credentials inline on the command line, where ps shows them"


def _warnings(stderr: bytes) -> list[str]:
    """The warnings about passwords (not, say, that only --http-proxy is given)."""
    return [
        line
        for line in stderr.decode().splitlines()
        if "warning:" in line and "only httpProxy is set" not in line
    ]


@pytest.mark.parametrize(
    ("flag", "env"),
    [
        ("--http-proxy", "PROXY_POSTRENDER_HTTP_PROXY"),
        ("--https-proxy", "PROXY_POSTRENDER_HTTPS_PROXY"),
    ],
)
def test_a_password_in_a_proxy_flag_is_warned_about_on_stderr(flag: str, env: str) -> None:
    proc = run_cli([flag, URL], STREAM)
    assert proc.returncode == 0, proc.stderr
    assert _warnings(proc.stderr) == [
        f"proxy-postrender: warning: {flag} {WARNING} to every user; prefer ${env}, or "
        "${VAR} or spec.credentials.fromEnv in a profile"
    ]
    assert PASSWORD.encode() not in proc.stderr


def test_both_flags_get_one_warning_each_also_over_a_profile_file() -> None:
    proc = run_cli([str(SHARED_PROFILE), "--http-proxy", URL, "--https-proxy=" + URL], STREAM)
    assert proc.returncode == 0, proc.stderr
    found = _warnings(proc.stderr)
    assert [w.split()[2] for w in found] == ["--http-proxy", "--https-proxy"]


def test_the_report_holds_the_warning_too(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    proc = run_cli(["--http-proxy", URL, f"--report={report}"], STREAM)
    assert proc.returncode == 0, proc.stderr
    text = report.read_text()
    assert f"--http-proxy {WARNING}" in text and PASSWORD not in text
    on_stderr = run_cli(["--http-proxy", URL, "--diff", "--report"], STREAM)
    assert on_stderr.stderr.decode().count(WARNING) == 2  # the warning line, and the report's
    assert PASSWORD.encode() not in on_stderr.stderr + on_stderr.stdout


def test_an_error_stays_one_line_without_the_warning() -> None:
    """On any error stderr holds one line (README, "All or nothing"): the warning comes
    only with a run that succeeded."""
    for stream, code in ((b"a: [", 1), (b"", 2)):
        args = ["--http-proxy", URL] + (["--on-conflict", "fail", "--bogus"] if code == 2 else [])
        proc = run_cli(args, stream)
        assert proc.returncode == code and proc.stdout == b""
        lines = proc.stderr.decode().splitlines()
        assert len(lines) == 1 and "error:" in lines[0] and PASSWORD not in lines[0]


@pytest.mark.parametrize(
    "url",
    [
        "http://proxy.corp.example:3128",
        "http://build@proxy.corp.example:3128",  # a user, no password
        "http://build:@proxy.corp.example:3128",  # an empty password
    ],
    ids=["no-user-info", "user-only", "empty-password"],
)
def test_no_warning_without_a_password(url: str) -> None:
    proc = run_cli(["--http-proxy", url], STREAM)
    assert proc.returncode == 0, proc.stderr
    assert _warnings(proc.stderr) == []


def test_the_environment_variables_are_the_way_without_a_warning() -> None:
    """PROXY_POSTRENDER_HTTP(S)_PROXY: the process's environment is not in ps."""
    env = {"PROXY_POSTRENDER_HTTP_PROXY": URL, "PROXY_POSTRENDER_HTTPS_PROXY": URL}
    proc = run_cli([], STREAM, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    assert PASSWORD.encode() in proc.stdout  # it was used


def test_a_profile_with_var_references_is_the_other_way(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: p}\n"
        "spec:\n  httpProxy: http://build:${PROXY_PASSWORD}@proxy.corp.example:3128\n"
    )
    proc = run_cli([str(profile), "--report"], STREAM, env={"PROXY_PASSWORD": PASSWORD})
    assert proc.returncode == 0, proc.stderr
    assert "credentials inline" not in proc.stderr.decode()


def test_the_docs_show_the_environment_way() -> None:
    from tests.helpers import ROOT

    security = " ".join((ROOT / "docs" / "security.md").read_text().split())
    assert 'PROXY_POSTRENDER_HTTP_PROXY="http://build:${PROXY_PASSWORD}@' in security
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert 'PROXY_POSTRENDER_HTTP_PROXY="http://build:${PROXY_PASSWORD}@' in readme


def test_the_patches_command_warns_about_a_password_flag_too() -> None:
    proc = run_cli(["patches", str(SHARED_PROFILE), "--http-proxy", URL], STREAM)
    assert proc.returncode == 0, proc.stderr
    assert any(f"--http-proxy {WARNING}" in line for line in _warnings(proc.stderr))
    assert PASSWORD.encode() not in proc.stderr
