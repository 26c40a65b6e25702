"""The command line: profile sources, flags, reports, logs, errors and secrecy."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden import Case, load_cases
from tests.helpers import GOLDEN, SHARED_PROFILE, VERSION_LINE, run_cli

DEPLOYMENT = (GOLDEN / "helm3-chart" / "input.yaml").read_bytes()
EXPECTED = (GOLDEN / "helm3-chart" / "expected.yaml").read_bytes()
MARKER = "Pw-7f3a9c-MARKER"
BAD_DOC = (
    b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n"
    b"spec:\n  template:\n    spec:\n      containers: 3\n"
)


def _secret_profile(tmp_path: Path) -> Path:
    path = tmp_path / "secret.yaml"
    path.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata:\n  name: s\n"
        "spec:\n  httpProxy: http://alice:${PROXY_PASSWORD}@proxy.corp.example:3128\n"
        "  httpsProxy: http://alice:${PROXY_PASSWORD}@proxy.corp.example:3128\n"
    )
    return path


def test_empty_input_gives_empty_output() -> None:
    proc = run_cli([str(SHARED_PROFILE)], b"")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_comment_only_input_passes_through() -> None:
    data = b"---\n# Source: x/templates/empty.yaml\n# nothing\n"
    assert run_cli([str(SHARED_PROFILE)], data).stdout == data


def test_profile_from_option_argument_and_environment_agree() -> None:
    by_option = run_cli(["--profile", str(SHARED_PROFILE)], DEPLOYMENT).stdout
    by_argument = run_cli([str(SHARED_PROFILE)], DEPLOYMENT).stdout
    by_env = run_cli([], DEPLOYMENT, env={"PROXY_POSTRENDER_PROFILE": str(SHARED_PROFILE)}).stdout
    by_equals = run_cli([f"--profile={SHARED_PROFILE}"], DEPLOYMENT).stdout
    assert by_option == by_argument == by_env == by_equals == EXPECTED


def test_profile_given_twice_is_a_usage_error() -> None:
    proc = run_cli(["--profile", str(SHARED_PROFILE), str(SHARED_PROFILE)], DEPLOYMENT)
    assert proc.returncode == 2 and proc.stdout == b""
    assert b"give the profile once" in proc.stderr


def test_flags_alone_work() -> None:
    proc = run_cli(
        ["--http-proxy", "http://p:1", "--no-proxy", "a.com,10.0.0.0/8"],
        BAD_DOC.replace(b"3", b"\n      - name: c"),
    )
    assert proc.returncode == 0, proc.stderr
    assert b"value: a.com,.a.com,10.0.0.0/8" in proc.stdout
    assert b"HTTPS_PROXY" not in proc.stdout


def test_no_profile_at_all_is_a_usage_error() -> None:
    proc = run_cli([], DEPLOYMENT)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode().count("\n") == 1


def test_a_profile_that_cannot_be_read_is_named_as_given(tmp_path: Path) -> None:
    (tmp_path / "latin1.yaml").write_bytes(b"kind: ProxyProfile # caf\xe9\n")
    for name, reason in [
        ("./missing.yaml", "cannot read profile ./missing.yaml: No such file or directory"),
        ("latin1.yaml", "profile latin1.yaml is not valid UTF-8"),
    ]:
        proc = run_cli([name], DEPLOYMENT, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stdout == b""
        assert proc.stderr.decode() == f"proxy-postrender: error: {reason}\n"


def test_unknown_option_is_one_line_exit_2() -> None:
    proc = run_cli(["--bogus"], DEPLOYMENT)
    assert proc.returncode == 2 and proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("proxy-postrender: error: No such option")


def test_report_on_stderr_and_in_a_file(tmp_path: Path) -> None:
    proc = run_cli([str(SHARED_PROFILE), "--report"], DEPLOYMENT)
    assert proc.stdout == EXPECTED
    report = proc.stderr.decode()
    assert "5 documents, 1 targets (1 changed" in report
    assert "kept (set by the manifest) app: HTTP_PROXY" in report
    assert (
        "warning app: HTTP_PROXY comes from the manifest but http_proxy from the profile" in report
    )
    out = tmp_path / "report.txt"
    proc = run_cli([str(SHARED_PROFILE), f"--report={out}"], DEPLOYMENT)
    assert proc.stderr == b"" and out.read_text() == report


def test_errors_go_to_the_log_file_created_0600(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "pp.log"
    proc = run_cli([str(SHARED_PROFILE), "--log-file", str(log)], BAD_DOC)
    assert proc.returncode == 1 and proc.stdout == b""
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    assert proc.stderr.decode().strip() in log.read_text()
    env_log = tmp_path / "env.log"
    run_cli([str(SHARED_PROFILE)], BAD_DOC, env={"PROXY_POSTRENDER_LOG": str(env_log)})
    assert "containers is not a list" in env_log.read_text()


def test_helm4_plugin_runs_log_to_the_state_directory(tmp_path: Path) -> None:
    env = {"HELM_PLUGIN_NAME": "proxy", "XDG_STATE_HOME": str(tmp_path)}
    proc = run_cli([str(SHARED_PROFILE)], BAD_DOC, env=env)
    assert proc.returncode == 1
    assert (
        "containers is not a list"
        in (tmp_path / "proxy-postrender" / "helm-plugin.log").read_text()
    )


def test_password_never_leaks(tmp_path: Path) -> None:
    profile = _secret_profile(tmp_path)
    env = {"PROXY_PASSWORD": MARKER}
    log = tmp_path / "log"
    report = tmp_path / "report"
    runs = [
        run_cli([str(profile), "--report", "--log-file", str(log)], DEPLOYMENT, env=env),
        run_cli([str(profile), f"--report={report}", "--log-file", str(log)], DEPLOYMENT, env=env),
        run_cli([str(profile), "--log-file", str(log)], BAD_DOC, env=env),
        run_cli(
            [str(profile), "--log-file", str(log), "--on-conflict", "fail"], DEPLOYMENT, env=env
        ),
        run_cli([str(profile), "--no-proxy", "bad entry"], DEPLOYMENT, env=env),
        run_cli(
            ["--http-proxy", f"http://bob:{MARKER}@proxy:notaport", "--log-file", str(log)],
            DEPLOYMENT,
        ),
        run_cli(["--http-proxy", f"ftp://bob:{MARKER}@proxy:1"], DEPLOYMENT),
    ]
    assert (
        runs[0].returncode == 0 and MARKER.encode() in runs[0].stdout
    )  # the user asked for it there
    assert [r.returncode for r in runs[2:]] == [1, 1, 2, 2, 2]
    for proc in runs:
        assert MARKER.encode() not in proc.stderr
    assert MARKER not in log.read_text() and MARKER not in report.read_text()
    assert "***@proxy" in runs[6].stderr.decode()


@pytest.mark.parametrize("password", ["MA/RKER", "MA#RKER", "MA?RKER", "MA[RKER", "MA RKER"])
def test_password_with_url_delimiters_never_leaks(tmp_path: Path, password: str) -> None:
    marker = password.replace("MA", "Zq9").replace("RKER", "xW4")
    profile = _secret_profile(tmp_path)
    log = tmp_path / "log"
    proc = run_cli(
        [str(profile), "--log-file", str(log)], DEPLOYMENT, env={"PROXY_PASSWORD": marker}
    )
    flag = run_cli(["--http-proxy", f"http://bob:{marker}@proxy:1"], DEPLOYMENT)
    no_scheme = run_cli(["--http-proxy", f"bob:{marker}@proxy:1"], DEPLOYMENT)
    for run in (proc, flag, no_scheme):
        assert run.returncode == 2 and run.stdout == b"", run.stderr
        assert b"Traceback" not in run.stderr
        for part in {marker, *marker.split()}:
            assert part.encode() not in run.stderr, run.stderr
    assert marker not in log.read_text()


def test_values_of_an_earlier_profile_in_parse_errors_are_masked() -> None:
    data = (
        b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n"
        b"    env:\n    - name: HTTP_PROXY\n      value: http://u:OLDSECRET@p:1\n"
        b"      value: http://u:OLDSECRET@p:1\n"
    )
    proc = run_cli(["--remove"], data)
    assert proc.returncode == 1 and b"duplicate key" in proc.stderr
    assert b"OLDSECRET" not in proc.stderr


def test_undecodable_bytes_in_other_documents_pass_through() -> None:
    data = b"apiVersion: v1\nkind: Secret\ndata:\n  x: \xff\xfe\n---\n" + DEPLOYMENT
    proc = run_cli([str(SHARED_PROFILE)], data)
    assert proc.returncode == 0
    assert proc.stdout.startswith(b"apiVersion: v1\nkind: Secret\ndata:\n  x: \xff\xfe\n---\n")


def test_documents_that_are_not_objects_pass_through() -> None:
    data = b"- a\n- b\n---\njust a string\n---\n"
    assert run_cli([str(SHARED_PROFILE)], data).stdout == data


def test_version_says_which_build_runs() -> None:
    proc = run_cli(["--version"])
    assert (proc.returncode, proc.stdout) == (0, f"{VERSION_LINE}\n".encode())


def test_helm4_plugin_errors_also_reach_the_terminal(tmp_path: Path) -> None:
    """Helm 4 swallows stderr: under HELM_PLUGIN_NAME the reason also goes to /dev/tty."""
    script = shutil.which("script")  # util-linux: gives the command a terminal
    assert script, "the util-linux 'script' command is required for this test"
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(BAD_DOC)
    command = f"{sys.executable} -m proxy_postrender {SHARED_PROFILE} < {bad} 2>/dev/null"
    env = {**os.environ, "HELM_PLUGIN_NAME": "proxy", "XDG_STATE_HOME": str(tmp_path)}
    proc = subprocess.run(
        [script, "-qec", command, "/dev/null"],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert b"spec.template.spec.containers is not a list" in proc.stdout


def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = ["apiVersion: v1", "kind: Pod", "metadata:", "  name: bomb", "x0: &a0 [lol, lol, lol]"]
    lines += [f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    lines += ["spec:", "  containers:", "  - name: c", "    args: *a9"]
    proc = run_cli([str(SHARED_PROFILE)], ("\n".join(lines) + "\n").encode())
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"alias bomb" in proc.stderr


def test_recursive_alias_is_refused() -> None:
    data = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: r\nx: &a [*a]\n"
    data += b"spec:\n  containers:\n  - name: c\n"
    proc = run_cli([str(SHARED_PROFILE)], data)
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"recursive alias" in proc.stderr


def test_diff_shows_the_change_with_credentials_masked() -> None:
    pod = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
    proc = run_cli(["--http-proxy", "http://u:s3cret@p:1", "--diff"], pod)
    assert proc.returncode == 1, proc.stderr  # changes (tests/test_diff_exit.py)
    text = proc.stdout.decode()
    assert text.startswith("--- manifests\n+++ manifests (proxy-postrender)\n@@ ")
    assert "+    - name: HTTP_PROXY\n" in text and "http://***@p:1" in text
    assert "s3cret" not in text
    injected = run_cli(["--http-proxy", "http://u:s3cret@p:1"], pod).stdout
    again = run_cli(["--http-proxy", "http://u:s3cret@p:1", "--diff"], injected)
    assert again.returncode == 0 and again.stdout == b""


def test_diff_masks_credentials_in_every_form_the_tool_writes() -> None:
    from tests.helpers import GOLDEN

    case = GOLDEN / "capi-credentials"
    proc = run_cli(["profile.yaml", "--diff"], (case / "input.yaml").read_bytes(), cwd=case)
    assert proc.returncode == 1, proc.stderr
    text = proc.stdout.decode()
    assert 'Environment="HTTP_PROXY=http://***@proxy.corp.example:3128"' in text
    for secret in ("p%40ss", "p%%40ss", "p@ss", "build:"):
        assert secret not in text


def test_diff_keeps_bytes_and_marks_a_missing_final_newline() -> None:
    pod = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a"
    bad = b"# caf\xe9\n---\n" + pod
    proc = run_cli(["--http-proxy", "http://p:1", "--diff"], bad)
    assert proc.returncode == 1, proc.stderr
    assert b"\\ No newline at end of file\n" in proc.stdout


# --- the review's findings: output targets, the final copy, --diff, the environment ----


def test_an_unwritable_report_fails_before_any_output(tmp_path: Path) -> None:
    """Finding 5: every output target is opened before a byte reaches stdout."""
    target = tmp_path / "missing" / "report.txt"
    proc = run_cli([str(SHARED_PROFILE), f"--report={target}"], DEPLOYMENT)
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode().splitlines() == [
        f"proxy-postrender: error: --report: cannot write {target}: No such file or directory"
    ]


def _commit_with_signals(count: int) -> tuple[bytes, BaseException]:
    """runner.commit of 100 pieces with ``count`` SIGINTs sent during the copy."""
    import io
    import signal
    from typing import BinaryIO

    from proxy_postrender.cli import runner

    out = io.BytesIO()

    def write(target: BinaryIO) -> None:
        for piece in range(100):
            if piece in range(10, 10 + 10 * count, 10):
                os.kill(os.getpid(), signal.SIGINT)
            target.write(b"%d\n" % piece)

    # the handler commit replaces, whatever the test run inherited (a run in the
    # background of a non-interactive shell has SIGINT ignored, and commit keeps it so)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", io.TextIOWrapper(out))
        try:
            runner.commit(write)
        except BaseException as exc:  # the test looks at what came out
            return out.getvalue(), exc
        finally:
            signal.signal(signal.SIGINT, previous)
    raise AssertionError("no interrupt")


def test_an_interrupt_during_the_final_copy_waits_for_its_end() -> None:
    """Finding 5: the copy is all or nothing for one signal; a second one stops it."""
    from proxy_postrender.cli import runner

    written, exc = _commit_with_signals(1)
    assert written == b"".join(b"%d\n" % n for n in range(100))
    assert isinstance(exc, runner.Interrupted) and exc.complete and exc.signum == 2
    written, exc = _commit_with_signals(2)
    assert isinstance(exc, runner.Interrupted) and not exc.complete
    assert written == b"".join(b"%d\n" % n for n in range(20))


def _apply(before: str, patch: str) -> str:
    """``patch`` (a unified diff) applied to ``before``; asserts every line it names."""
    old: list[str] = re.findall(r"[^\n]*\n|[^\n]+$", before)
    new: list[str] = []
    at, rows = 0, re.findall(r"[^\n]*\n|[^\n]+$", patch)[2:]
    for index, row in enumerate(rows):
        if row.startswith("@@"):
            start, length = re.match(r"@@ -(\d+)(?:,(\d+))? ", row).groups()  # type: ignore[union-attr]
            begin = int(start) - (1 if length != "0" else 0)
            new += old[at:begin]
            at = begin
        elif row[0] in " -+":
            text = row[1:]
            if index + 1 < len(rows) and rows[index + 1].startswith("\\ No newline"):
                text = text.removesuffix("\n")
            if row[0] != "+":
                assert old[at] == text, (at, old[at], text)
                at += 1
            if row[0] != "-":
                new.append(text)
    return "".join(new + old[at:])


def _without_credentials(case: Case) -> bool:
    data = case.input + (case.expected_path.read_bytes() if case.exit == 0 else b"")
    return case.exit == 0 and re.search(rb"://[^\s/@]*@", data) is None


@pytest.mark.parametrize(
    "case", [c for c in load_cases() if _without_credentials(c)], ids=lambda c: c.name
)
def test_diff_is_a_unified_diff_of_the_whole_stream(case: Case) -> None:
    """Finding 2: compared document by document, the diff is still one valid unified
    diff of the stream, with the stream's line numbers (cases without credentials: with
    them the diff shows them masked)."""
    proc = run_cli(["--diff", *case.args], case.input, cwd=case.path)
    assert proc.returncode == (1 if proc.stdout else 0), proc.stderr
    expected = case.expected_path.read_bytes().decode("utf-8-sig", "surrogateescape")
    before = case.input.decode("utf-8-sig", "surrogateescape")
    assert _apply(before, proc.stdout.decode("utf-8", "surrogateescape")) == expected


def test_proxy_values_from_the_environment_and_flags_win() -> None:
    """Finding 7: PROXY_POSTRENDER_HTTP(S)_PROXY and _NO_PROXY, for callers that must not
    put credentials in argv (the Argo CD plugin); a flag wins over them."""
    env = {
        "PROXY_POSTRENDER_HTTP_PROXY": "http://env:1",
        "PROXY_POSTRENDER_NO_PROXY": "from-env.example",
    }
    from_env = run_cli([], DEPLOYMENT, env=env)
    assert from_env.returncode == 0, from_env.stderr
    assert b"http://env:1" in from_env.stdout and b"from-env.example" in from_env.stdout
    flag = run_cli(["--http-proxy", "http://flag:2"], DEPLOYMENT, env=env)
    assert b"http://flag:2" in flag.stdout and b"http://env:1" not in flag.stdout
    noproxy = run_cli(["noproxy"], b"", env=env)
    assert b"from-env.example" in noproxy.stdout


# --- issue 19, item 4: spec.credentials.secretRef without Cluster API --------------------

_SECRET_REF_PROFILE = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata:\n  name: s\n"
    "spec:\n  httpProxy: http://build:Pw-sr-MARKER@proxy.corp.example:3128\n"
    "  credentials:\n    secretRef: proxy-credentials\n"
)
_INLINE_NODES = "would write it in clear into this object's node bootstrap"


def _secret_ref_profile(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "secret-ref.yaml"
    path.write_text(_SECRET_REF_PROFILE + extra)
    return path


@pytest.mark.parametrize(
    "stream",
    [b"", DEPLOYMENT, (GOLDEN / "cred-secret-ref-no-capi" / "input.yaml").read_bytes()],
    ids=["empty", "chart", "cluster-only"],
)
def test_secret_ref_needs_no_node_secret_mode_without_kubeadm_objects(
    tmp_path: Path, stream: bytes
) -> None:
    """spec.nodes at its defaults (credentials: inline): nothing would write the password
    into a node's bootstrap, so the profile is fine (it was refused with exit 2 before,
    even for empty input)."""
    proc = run_cli([str(_secret_ref_profile(tmp_path))], stream)
    assert proc.returncode == 0, proc.stderr
    assert b"Pw-sr-MARKER" not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("case", "kind"),
    [
        ("capi-v1beta1", "KubeadmControlPlane"),
        ("capi-clusterclass", "ClusterClass"),
        ("capi-windows", "KubeadmConfigTemplate"),
    ],
)
def test_secret_ref_refuses_a_kubeadm_object_that_would_get_the_password(
    tmp_path: Path, case: str, kind: str
) -> None:
    stream = (GOLDEN / case / "input.yaml").read_bytes()
    proc = run_cli([str(_secret_ref_profile(tmp_path))], stream)
    assert proc.returncode == 1 and proc.stdout == b""
    line = proc.stderr.decode()
    assert line.count("\n") == 1 and f", {kind} " in line and _INLINE_NODES in line
    assert "set spec.nodes.credentials: secret" in line and "Pw-sr-MARKER" not in line
    diff = run_cli([str(_secret_ref_profile(tmp_path)), "--diff"], stream)
    assert diff.returncode == 3 and _INLINE_NODES in diff.stderr.decode()


@pytest.mark.parametrize(
    "extra",
    [
        "  nodes:\n    credentials: secret\n",
        "  nodes:\n    enabled: false\n",
    ],
    ids=["secret-mode", "nodes-off"],
)
def test_secret_ref_with_kubeadm_objects_passes_when_nodes_keep_it_out(
    tmp_path: Path, extra: str
) -> None:
    stream = (GOLDEN / "capi-v1beta1" / "input.yaml").read_bytes()
    proc = run_cli([str(_secret_ref_profile(tmp_path, extra))], stream)
    assert proc.returncode == 0, proc.stderr
    holding = [d for d in proc.stdout.decode().split("\n---\n") if "Pw-sr-MARKER" in d]
    # only the node Secret that secret mode emits (nodes.createSecret) holds the password
    assert all("\nkind: Secret\n" in d for d in holding)


def test_secret_ref_without_a_password_or_when_removing_passes(tmp_path: Path) -> None:
    stream = (GOLDEN / "capi-v1beta1" / "input.yaml").read_bytes()
    plain = tmp_path / "plain.yaml"
    plain.write_text(_SECRET_REF_PROFILE.replace("build:Pw-sr-MARKER@", ""))
    assert run_cli([str(plain)], stream).returncode == 0
    injected = run_cli([str(SHARED_PROFILE)], stream).stdout
    removed = run_cli([str(_secret_ref_profile(tmp_path)), "--remove"], injected)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == stream


def test_the_schema_accepts_secret_ref_without_node_secret_mode() -> None:
    import json

    import jsonschema
    from ruamel.yaml import YAML

    from proxy_postrender.profile import schema

    profile = YAML(typ="safe").load(_SECRET_REF_PROFILE)
    jsonschema.validate(profile, json.loads(schema.text()))
