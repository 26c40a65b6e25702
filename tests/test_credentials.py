"""Workload credentials: fromEnv, secretRef, createSecret, the plaintext gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy_postrender.errors import ProfileError
from proxy_postrender.profile import loader
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN, run_cli

HEAD = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: c}\n"
    "spec:\n  httpProxy: http://proxy:3128\n  noProxyPresets: []\n"
)
POD = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + body)
    return path


def test_from_env_builds_an_encoded_user_info(tmp_path: Path) -> None:
    path = _write(tmp_path, "  credentials:\n    fromEnv: {user: PU, password: PP}\n")
    loaded = loader.load(str(path), environ={"PU": "me@corp", "PP": "p:w/d%"})
    assert loaded.http_proxy == "http://me%40corp:p%3Aw%2Fd%25@proxy:3128"
    with pytest.raises(ProfileError, match="environment variable PP is not set"):
        loader.load(str(path), environ={"PU": "x"})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("  credentials:\n    createSecret: true\n", "createSecret: needs secretRef"),
        (
            "  credentials:\n    secretRef: s\n    createSecret: true\n    forbidPlaintext: true\n",
            "forbidPlaintext forbids",
        ),
        ("  credentials:\n    secretRef: Not_A_Name\n", "must be the name of a Secret"),
        ("  credentials:\n    fromEnv: {user: U}\n", "fromEnv.password: must name"),
    ],
)
def test_bad_credentials_sections(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ProfileError, match=r"spec\.credentials") as info:
        loader.load(str(_write(tmp_path, body)), environ={"U": "u"})
    assert message in str(info.value)


def test_secret_ref_with_inline_node_credentials_loads(tmp_path: Path) -> None:
    """Issue 19, item 4: the profile is fine; a stream with kubeadm objects is refused
    (tests/test_cli.py::test_secret_ref_refuses_a_kubeadm_object_that_would_get_the_password)."""
    body = "  credentials:\n    secretRef: s\n"
    path = tmp_path / "p.yaml"
    path.write_text(HEAD.replace("http://proxy:3128", "http://u:pw@proxy:3128") + body)
    assert loader.load(str(path), environ={}).credentials.secret_ref == "s"


def test_inline_credentials_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD.replace("http://proxy:3128", "http://u:pw@proxy:3128"))
    proc = run_cli([str(path), "--report"], POD)
    assert proc.returncode == 0
    assert b"warning profile: spec.httpProxy holds its credentials inline" in proc.stderr
    assert b"pw" not in proc.stderr
    by_variable = tmp_path / "v.yaml"
    by_variable.write_text(HEAD.replace("http://proxy:3128", "http://u:${PW}@proxy:3128"))
    quiet = run_cli([str(by_variable), "--report"], POD, env={"PW": "pw"})
    assert b"inline" not in quiet.stderr


def test_create_secret_refuses_a_secret_already_in_the_stream() -> None:
    case = GOLDEN / "cred-create-secret"
    stream = case.joinpath("input.yaml").read_bytes() + (
        b"---\napiVersion: v1\nkind: Secret\nmetadata: {name: proxy-credentials, namespace: shop}\n"
    )
    proc = run_cli(["profile.yaml"], stream, cwd=case)
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"already holds a Secret shop/proxy-credentials" in proc.stderr


def test_generated_secrets_follow_the_profile_and_go_with_remove() -> None:
    case = GOLDEN / "cred-create-secret"
    out = case.joinpath("expected.yaml").read_bytes()
    removed = run_cli(["--remove"], out)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == case.joinpath("input.yaml").read_bytes()
    kinds = [d["kind"] for d in libyaml.load_data(out.decode())]
    assert kinds.count("Secret") == 2  # shop and billing


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("  caBundle: {pem: 'not a certificate'}\n", "no PEM certificate"),
        ("  caBundle: {file: missing.pem}\n", "cannot read"),
        ("  caBundle: {}\n", "give the CA as file or as pem"),
        ("  caBundle: {pem: x, file: y}\n", "give the CA as file or as pem"),
        ("  caBundle: {file: ca.pem, mountPath: relative}\n", "mountPath: must be an absolute"),
        ("  caBundle: {file: ca.pem, env: ['A B']}\n", "env: must be a list"),
    ],
)
def test_bad_ca_bundles(tmp_path: Path, body: str, message: str) -> None:
    pem = (GOLDEN / "ca-workloads" / "corp-ca.pem").read_text()
    (tmp_path / "ca.pem").write_text(pem)
    with pytest.raises(ProfileError, match=r"spec\.caBundle") as info:
        loader.load(str(_write(tmp_path, body)), environ={})
    assert message in str(info.value)


def test_a_ca_for_nodes_only_adds_nothing_to_workloads(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text((GOLDEN / "ca-workloads" / "corp-ca.pem").read_text())
    path = _write(tmp_path, "  caBundle: {file: ca.pem}\n")
    proc = run_cli([str(path)], POD)
    assert proc.returncode == 0, proc.stderr
    assert b"volumeMounts" not in proc.stdout and b"ConfigMap" not in proc.stdout
    loaded = loader.load(str(path), environ={})
    assert loaded.nodes is not None and loaded.nodes.ca_bundle is not None


DEPLOY = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n"
    "  template:\n    spec:\n      containers:\n      - name: app\n        image: x\n"
)


def test_the_gate_catches_quotes_in_passwords_and_encoded_powershell(tmp_path: Path) -> None:
    quoted = run_cli(
        ["--http-proxy", "http://u:it's@host:3128", "--forbid-plaintext-credentials"],
        DEPLOY.encode(),
    )
    assert quoted.returncode == 1 and quoted.stdout == b""
    windows = (GOLDEN / "capi-windows" / "input.yaml").read_bytes()
    proc = run_cli(
        ["--http-proxy", "http://build:hunter2@p:1", "--forbid-plaintext-credentials"], windows
    )
    assert proc.returncode == 1 and b"password in clear" in proc.stderr


def test_the_ca_volume_name_is_the_tools_only_when_it_put_it_there(tmp_path: Path) -> None:
    chart = (
        DEPLOY.replace(
            "        image: x\n",
            "        image: x\n        volumeMounts:\n"
            "        - {name: proxy-postrender-ca, mountPath: /mine}\n",
        )
        + "      volumes:\n      - {name: proxy-postrender-ca, emptyDir: {}}\n"
    )
    plain = run_cli(["--http-proxy", "http://p:1"], chart.encode())
    assert plain.returncode == 0 and b"mountPath: /mine" in plain.stdout
    assert b"emptyDir" in plain.stdout
    (tmp_path / "ca.pem").write_text((GOLDEN / "ca-workloads" / "corp-ca.pem").read_text())
    path = _write(tmp_path, "  caBundle: {file: ca.pem, workloads: true}\n")
    proc = run_cli([str(path)], chart.encode())
    assert (
        proc.returncode == 1 and b"already mounts a volume named proxy-postrender-ca" in proc.stderr
    )
    same_path = DEPLOY.replace(
        "        image: x\n",
        "        image: x\n        volumeMounts:\n"
        "        - {name: certs, mountPath: /etc/proxy-postrender/ca}\n",
    )
    clash = run_cli([str(path)], same_path.encode())
    assert clash.returncode == 1 and b"set spec.caBundle.mountPath" in clash.stderr


def test_generated_objects_need_a_namespace_when_workloads_mix(tmp_path: Path) -> None:
    path = _write(tmp_path, "  credentials: {secretRef: creds, createSecret: true}\n")
    mixed = DEPLOY + "---\n" + DEPLOY.replace(", namespace: shop", "")
    proc = run_cli([str(path)], mixed.encode())
    assert proc.returncode == 1 and b"pass --namespace" in proc.stderr
    assert run_cli([str(path), "--namespace", "shop"], mixed.encode()).returncode == 0


def test_extra_env_cannot_shadow_the_tools_variables(tmp_path: Path) -> None:
    for body, message in (
        ("  workloads:\n    extraEnv: [{name: http_proxy, value: x}]\n", "sets itself"),
        ("  workloads:\n    extraEnv: [{name: A, value: '1'}, {name: A, value: '2'}]\n", "twice"),
    ):
        with pytest.raises(ProfileError, match=message):
            loader.load(str(_write(tmp_path, body)), environ={})


def _with_created_secrets(profile_edit: tuple[str, str] | None, tmp_path: Path) -> Path:
    """The cred-create-secret profile, edited, written to tmp_path."""
    case = GOLDEN / "cred-create-secret"
    text = case.joinpath("profile.yaml").read_text()
    if profile_edit is not None:
        old, new = profile_edit
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    return path


def test_an_earlier_runs_objects_stay_when_this_profile_does_not_make_them(
    tmp_path: Path,
) -> None:
    """Only what this run would make again is dropped; what it keeps, the report names."""
    out = (GOLDEN / "cred-create-secret" / "expected.yaml").read_bytes()
    # the same Secret, but the profile no longer emits it (the user now manages it)
    profile = _with_created_secrets(("    createSecret: true", "    createSecret: false"), tmp_path)
    proc = run_cli([str(profile), "--report"], out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == out  # both Secrets kept, byte for byte, in place
    report = proc.stderr.decode()
    assert report.count("kept, this profile does not make it") == 2
    assert "Secret shop/proxy-credentials" in report and "s3cr" not in report
    # a profile that makes a Secret of another name keeps the old ones and adds its own
    renamed = _with_created_secrets(
        ("secretRef: proxy-credentials", "secretRef: proxy-b"), tmp_path
    )
    proc = run_cli([str(renamed), "--report"], out)
    assert proc.returncode == 0, proc.stderr
    names = [d["metadata"]["name"] for d in libyaml.load_data(proc.stdout.decode())]
    assert names.count("proxy-credentials") == 2 and names.count("proxy-b") == 2
    # --remove still takes every generated object out
    removed = run_cli(["--remove"], out)
    assert removed.stdout == (GOLDEN / "cred-create-secret" / "input.yaml").read_bytes()


def test_an_earlier_runs_object_no_workload_reads_is_dropped_and_reported(tmp_path: Path) -> None:
    out = (GOLDEN / "cred-create-secret" / "expected.yaml").read_text()
    docs = out.split("---\n")
    # drop the billing workloads: its Secret is no longer needed by this run
    kept = [d for d in docs if "namespace: billing" not in d or "kind: Secret" in d]
    proc = run_cli(
        [str(_with_created_secrets(None, tmp_path)), "--report"], "---\n".join(kept).encode()
    )
    assert proc.returncode == 0, proc.stderr
    assert b"namespace: billing" not in proc.stdout
    assert b"Secret billing/proxy-credentials from an earlier run: dropped" in proc.stderr


# --- issue 27 finding 5: ${VAR} only in the proxy URLs; the operator's profile as before ---


def test_the_operators_profile_still_reads_the_password_from_the_environment(
    tmp_path: Path,
) -> None:
    """A profile named on the command line (Helm's post-renderer args, --profile) keeps
    ${VAR} in the proxy URLs and fromEnv, with no permission asked; even under
    PROXY_POSTRENDER_ALLOW_ENV=0."""
    path = tmp_path / "p.yaml"
    path.write_text(
        HEAD.replace("http://proxy:3128", "http://build:${PROXY_PASSWORD}@proxy:3128")
        + "  httpsProxy: http://proxy:3128\n  credentials:\n    forbidPlaintext: false\n"
    )
    for args in (["--profile", str(path)], [str(path)]):
        env = {"PROXY_PASSWORD": "s3cret", "PROXY_POSTRENDER_ALLOW_ENV": "0"}
        proc = run_cli(args, POD, env=env)
        assert proc.returncode == 0, proc.stderr
        assert b"http://build:s3cret@proxy:3128" in proc.stdout
    from_env = _write(tmp_path, "  credentials:\n    fromEnv: {user: PU, password: PP}\n")
    proc = run_cli([str(from_env)], POD, env={"PU": "u", "PP": "s3cret"})
    assert proc.returncode == 0, proc.stderr
    assert b"http://u:s3cret@proxy:3128" in proc.stdout


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            "  workloads:\n    extraEnv:\n    - {name: T, value: 'x${CI_DEPLOY_TOKEN}'}\n",
            "spec.workloads.extraEnv[0].value",
        ),
        ("  noProxy: ['${CI_DEPLOY_TOKEN}.example']\n", "spec.noProxy[0]"),
        ("  caBundle: {pem: '${CI_DEPLOY_TOKEN}'}\n", "spec.caBundle.pem"),
        (
            "  targets:\n  - {apiVersion: a/v1, kind: K, set: {$.spec.x: '${CI_DEPLOY_TOKEN}'}}\n",
            "spec.targets[0].set.$.spec.x",
        ),
        ("  credentials: {secretRef: '${CI_DEPLOY_TOKEN}'}\n", "spec.credentials.secretRef"),
    ],
)
def test_a_variable_outside_the_proxy_urls_is_refused_naming_the_field(
    tmp_path: Path, body: str, field: str
) -> None:
    proc = run_cli([str(_write(tmp_path, body))], POD, env={"CI_DEPLOY_TOKEN": "glpat-leak"})
    assert proc.returncode == 2 and proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert f"{field}: '${{CI_DEPLOY_TOKEN}}' is not expanded here: only spec.httpProxy, " in (line)
    assert "glpat-leak" not in line


def test_the_operators_profile_reads_a_ca_file_anywhere(tmp_path: Path) -> None:
    """Only a profile that comes with the input is held to its directory."""
    (tmp_path / "profiles").mkdir()
    path = tmp_path / "profiles" / "p.yaml"
    ca = GOLDEN / "ca-workloads" / "corp-ca.pem"
    path.write_text(HEAD + f"  caBundle: {{file: '{ca}', workloads: true}}\n")
    proc = run_cli([str(path)], POD)
    assert proc.returncode == 0, proc.stderr
    assert b"proxy-ca-bundle" in proc.stdout
    refused = run_cli(["--untrusted-profile", str(path)], POD)
    assert refused.returncode == 2, refused.stderr
    assert f"spec.caBundle.file: '{ca}' is outside {path.parent}".encode() in refused.stderr
    assert run_cli(["--untrusted-profile", "--http-proxy", "http://p:1"], POD).returncode == 2
