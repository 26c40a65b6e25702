"""What a newcomer hit (issue 32, item 5): warnings for proxy URLs that do not do what
they seem to, errors that explain themselves, a hint when stdin is a terminal."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import GOLDEN, run_cli

STREAM = (GOLDEN / "helm3-chart" / "input.yaml").read_bytes()
HTTP = "http://proxy.corp.example:3128"
TLS = "https://proxy.corp.example:3129"


def _warnings(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode().splitlines() if "warning:" in line]


def test_only_http_proxy_warns_that_https_goes_direct(tmp_path: Path) -> None:
    proc = run_cli(["--http-proxy", HTTP], STREAM)
    assert proc.returncode == 0, proc.stderr
    (line,) = _warnings(proc.stderr)
    assert "only httpProxy is set" in line and "https:// URLs go direct" in line
    assert b"HTTPS_PROXY" not in proc.stdout  # what the warning says
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\n"
        f"metadata: {{name: p}}\nspec: {{httpProxy: '{HTTP}'}}\n"
    )
    report = tmp_path / "report.txt"
    proc = run_cli([str(profile), f"--report={report}"], STREAM)
    assert [w.split("warning: ")[1][:25] for w in _warnings(proc.stderr)] == [
        "only httpProxy is set (sp"
    ]
    assert "only httpProxy is set" in report.read_text()
    both = run_cli(["--http-proxy", HTTP, "--https-proxy", HTTP], STREAM)
    assert both.returncode == 0 and both.stderr == b"", both.stderr
    removal = run_cli(["--remove", "--http-proxy", HTTP], STREAM)
    assert removal.returncode == 0 and removal.stderr == b"", removal.stderr


def test_an_https_proxy_url_warns_once_naming_the_clients_that_speak_tls_to_it() -> None:
    proc = run_cli(["--http-proxy", TLS, "--https-proxy", TLS], STREAM)
    assert proc.returncode == 0, proc.stderr
    (line,) = _warnings(proc.stderr)
    assert "httpProxy and httpsProxy are https:// URLs" in line
    assert "curl >= 7.52, Go's net/http >= 1.10 and Python requests on urllib3 >= 1.26" in line
    proc = run_cli(["--http-proxy", HTTP, "--https-proxy", TLS], STREAM)
    (line,) = _warnings(proc.stderr)
    assert "httpsProxy is an https:// URL" in line


def test_the_warnings_of_a_fleet_profile_name_each_problem_once(tmp_path: Path) -> None:
    profile = tmp_path / "fleet.yaml"
    profile.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: p}\n"
        f"spec:\n  httpProxy: '{HTTP}'\n  httpsProxy: '{HTTP}'\n  clusters:\n"
        f"  - match: {{names: [a]}}\n    httpsProxy: '{TLS}'\n"
        f"  - match: {{names: [b]}}\n    httpsProxy: '{TLS}'\n"
    )
    proc = run_cli([str(profile)], STREAM)
    assert proc.returncode == 0, proc.stderr
    (line,) = _warnings(proc.stderr)
    assert "httpsProxy is an https:// URL" in line


def _profile(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: p}\n"
        f"spec: {{httpProxy: '{url}', httpsProxy: '{url}'}}\n"
    )
    return path


def test_an_error_about_a_password_with_at_or_hash_still_says_what_is_wrong(
    tmp_path: Path,
) -> None:
    """The redactor masks from a URL's scheme to the last "@" on the line: the "@" in the
    explanation after the URL took the explanation with it ("proxy URL 'http://***@;
    percent-encode them")."""
    for password, said in (
        ("p@ss-Word9", "the password holds '@' (percent-encode: %40)"),
        ("pa#ss-Word9", "the password holds '#' (percent-encode: %23)"),
        ("p@s#s-Word9", "the password holds '#' '@' (percent-encode: %23 %40)"),
    ):
        url = f"http://build:{password}@proxy.corp.example:3128"
        for args in ([str(_profile(tmp_path, url))], ["--http-proxy", url, "--https-proxy", url]):
            proc = run_cli(args, STREAM)
            assert proc.returncode == 2 and proc.stdout == b""
            (line,) = proc.stderr.decode().splitlines()
            assert said in line, line
            assert line.endswith("in proxy URL 'http://***@proxy.corp.example:3128'"), line
            assert password not in line and "Word9" not in line


def test_a_variable_reference_in_a_flag_is_named_as_such(tmp_path: Path) -> None:
    """--http-proxy '${P}' (single quotes: the shell left it) said "needs a scheme", and a
    reference in the password said "percent-encode them (%7B %7D)"."""
    profile = _profile(tmp_path, "http://proxy.corp.example:3128")
    for args in (
        ["--http-proxy", "${P}"],
        ["--https-proxy", "http://build:${PROXY_PW}@proxy.corp.example:3128"],
        [str(profile), "--no-proxy", "${NO_PROXY}"],
    ):
        flag = args[-2]
        proc = run_cli(args, STREAM)
        assert proc.returncode == 2 and proc.stdout == b"", proc.stderr
        (line,) = proc.stderr.decode().splitlines()
        assert f"error: {flag} (or $PROXY_POSTRENDER_" in line, line
        assert "flags do not expand variables" in line and "percent-encode" not in line
    env = {"PROXY_POSTRENDER_HTTP_PROXY": "http://build:${PROXY_PW}@proxy.corp.example:3128"}
    proc = run_cli([], STREAM, env=env)
    assert proc.returncode == 2 and b"flags do not expand variables" in proc.stderr
    # in a profile file the reference is expanded, as documented
    proc = run_cli(
        [str(_profile(tmp_path, "http://build:${PROXY_PW}@proxy.corp.example:3128"))],
        STREAM,
        env={"PROXY_PW": "s3cret-Pw"},
    )
    assert proc.returncode == 0 and b"s3cret-Pw" in proc.stdout, proc.stderr
