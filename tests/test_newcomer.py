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


def _on_a_terminal(args: list[str], feed: bytes) -> tuple[int, bytes]:
    """Run the CLI with stdin (and stdout, stderr) on a pseudo-terminal: what it prints
    before reading, then its exit code after ``feed`` and an end of file (Ctrl-D)."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import termios

    from tests.helpers import ROOT

    main, child = pty.openpty()
    attrs = termios.tcgetattr(child)
    attrs[3] &= ~termios.ECHO  # no echo of the input in what is read back
    termios.tcsetattr(child, termios.TCSANOW, attrs)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROXY_POSTRENDER", "HELM_"))}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "proxy_postrender", *args],
        stdin=child,
        stdout=child,
        stderr=child,
        env=env,
        cwd=ROOT,
    )
    os.close(child)
    seen = b""
    while b"Ctrl-D" not in seen:
        ready, _, _ = select.select([main], [], [], 20)
        assert ready, f"no hint before reading stdin: {seen!r}"
        seen += os.read(main, 4096)
    os.write(main, feed + b"\n\x04")  # Ctrl-D at the start of a line: end of file
    try:
        code = proc.wait(timeout=30)
    finally:
        while select.select([main], [], [], 0.5)[0]:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        os.close(main)
    return code, seen


def test_a_terminal_on_stdin_gets_a_hint_that_the_tool_waits_for_input() -> None:
    """And one Ctrl-D ends the input: a buffered read of a terminal waited for a second."""
    proxy = ["--http-proxy", HTTP, "--https-proxy", HTTP]
    code, seen = _on_a_terminal(proxy, b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}")
    assert code == 0, seen
    first = seen.splitlines()[0]
    assert first == (
        b"proxy-postrender: reading manifests from stdin (end with Ctrl-D, or pipe a render "
        b"in: helm template ... | proxy-postrender PROFILE)"
    )
    assert b"kind: ConfigMap" in seen  # the output
    code, seen = _on_a_terminal(["patches", *proxy], b"")
    assert code == 0 and b"reading manifests from stdin" in seen, seen
    # a pipe gets no hint
    proc = run_cli(proxy, STREAM)
    assert proc.returncode == 0 and proc.stderr == b""
