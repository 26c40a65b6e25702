"""Cluster API node bootstrap: exact escaping, re-runs, and the Windows guard."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy_postrender import engine, structs
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import kubeadm, quoting
from proxy_postrender.request import Request
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

_C_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "a": "\a", "'": "'"}


def systemd_unquote_environment(line: str) -> tuple[str, str]:
    """Read one ``Environment="NAME=value"`` line the way systemd does.

    systemd splits the value into words with C-style escapes inside double
    quotes, then resolves ``%`` specifiers, where ``%%`` is a literal ``%``.
    Any other specifier would be expanded by systemd, so it fails the test.
    """
    assert line.startswith('Environment="') and line.endswith('"'), line
    body, word, i = line[len("Environment=") :], [], 1
    while i < len(body) - 1:
        ch = body[i]
        if ch == "\\":
            word.append(_C_ESCAPES[body[i + 1]])
            i += 2
            continue
        assert ch != '"', f"unescaped quote in {line!r}"
        word.append(ch)
        i += 1
    unquoted, out, j = "".join(word), [], 0
    while j < len(unquoted):
        if unquoted[j] == "%":
            assert unquoted[j + 1 : j + 2] == "%", f"systemd would expand a specifier in {line!r}"
            j += 2
            out.append("%")
            continue
        out.append(unquoted[j])
        j += 1
    name, _, value = "".join(out).partition("=")
    return name, value


def bash_values(commands: list[str], names: list[str]) -> list[str]:
    """Run the export lines in bash and read the variables back."""
    script = "\n".join(commands) + "\n" + "".join(f'printf "%s\\0" "${n}"\n' for n in names)
    proc = subprocess.run(["bash", "-s"], input=script.encode(), capture_output=True, check=True)
    return proc.stdout.decode().split("\0")[:-1]


TEMPLATE = re.compile(r"\{[{%#]")  # what starts Jinja code in cloud-init's user data
HOSTILE = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x17F, blacklist_characters="\x7f"),
    min_size=1,
    max_size=30,
).filter(lambda v: not TEMPLATE.search(v))  # those are refused: see below


@settings(max_examples=200)
@given(HOSTILE)
def test_systemd_lines_read_back_exactly(value: str) -> None:
    assert systemd_unquote_environment(quoting.systemd_environment("HTTP_PROXY", value)) == (
        "HTTP_PROXY",
        value,
    )


@settings(max_examples=50, deadline=None)
@given(st.lists(HOSTILE, min_size=1, max_size=6))
def test_export_lines_read_back_exactly_in_bash(values: list[str]) -> None:
    names = [f"V{i}" for i in range(len(values))]
    lines = [quoting.shell_export(n, v) for n, v in zip(names, values, strict=True)]
    assert bash_values(lines, names) == values


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\x00b", "a\x1bb"])
def test_control_characters_are_refused(bad: str) -> None:
    with pytest.raises(Exception, match="control character"):
        quoting.systemd_environment("X", bad)
    with pytest.raises(Exception, match="control character"):
        quoting.shell_export("X", bad)


PASSWORD_URL = "http://build:p%40ss%22w%5Crd$HOME(*)!;&x=%25@proxy.corp.example:3128"


def _specs(text: str) -> list[dict[str, Any]]:
    from proxy_postrender import targets

    specs = []
    for doc in libyaml.load_data(text):
        if isinstance(doc, dict) and targets.BUILT_IN.paths(doc, targets.KUBEADM):
            spec: Any = doc
            for step in targets.BUILT_IN.paths(doc, targets.KUBEADM)[0]:
                spec = spec[step]
            specs.append(spec)
    return specs


def test_hostile_password_reaches_containerd_and_kubeadm_unchanged() -> None:
    out = (GOLDEN / "capi-credentials" / "expected.yaml").read_text()
    specs = _specs(out)
    assert len(specs) == 2
    for spec in specs:
        dropins = [f for f in spec["files"] if f["path"].endswith("http-proxy.conf")]
        assert len(dropins) == 2
        for dropin in dropins:
            assert dropin["permissions"] == "0600"  # the URL carries credentials
            lines = dropin["content"].splitlines()
            assert lines[0] == "[Service]"
            values = dict(systemd_unquote_environment(line) for line in lines[1:])
            assert values["HTTP_PROXY"] == values["https_proxy"] == PASSWORD_URL
        exports = spec["preKubeadmCommands"][2:8]
        assert bash_values(exports, ["HTTP_PROXY", "no_proxy"]) == [PASSWORD_URL, ".svc,10.0.0.0/8"]


CAPI = (GOLDEN / "capi-v1beta2" / "input.yaml").read_bytes()
ENV_A = (("HTTP_PROXY", "http://a:1"), ("http_proxy", "http://a:1"))
ENV_B = (("HTTPS_PROXY", "http://b:2"), ("https_proxy", "http://b:2"))
NODES = kubeadm.NodeSettings("/etc/systemd/system/containerd.service.d/p.conf", None)


def test_changed_profile_replaces_files_and_commands_without_duplicates() -> None:
    text = CAPI.decode()
    first = engine.process(text, Request(env=ENV_A, nodes=NODES)).text
    second = engine.process(first, Request(env=ENV_B, nodes=NODES)).text
    assert second == engine.process(text, Request(env=ENV_B, nodes=NODES)).text
    for spec in _specs(second):
        assert [f["path"] for f in spec["files"]].count(NODES.containerd_dropin) == 1
        assert "http://a:1" not in str(spec)
        assert spec["preKubeadmCommands"][2:4] == [
            "export HTTPS_PROXY=http://b:2",
            "export https_proxy=http://b:2",
        ]
    assert engine.process(second, Request(env=())).text == text


def test_a_file_the_manifest_writes_at_the_same_path_is_kept() -> None:
    text = CAPI.decode().replace("/etc/provider/setup.sh", NODES.containerd_dropin)
    result = engine.process(text, Request(env=ENV_A, nodes=NODES))
    kcp = next(o for o in result.objects if o.context.kind == "KubeadmControlPlane")
    assert f"    kept (set by the manifest): {NODES.containerd_dropin}" in kcp.plan.describe()
    spec = _specs(result.text)[0]
    assert [f["path"] for f in spec["files"]] == [NODES.containerd_dropin]
    assert 'echo "configured by the provider"' in spec["files"][0]["content"]


def test_nodes_can_be_switched_off(tmp_path: Any) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(SHARED_PROFILE.read_text() + "  nodes:\n    enabled: false\n")
    proc = run_cli([str(profile)], CAPI)
    assert proc.returncode == 0 and proc.stdout == CAPI


PS_QUOTES = "'\u2018\u2019\u201a\u201b"  # PowerShell ends a '...' string at any of these


def powershell_strings(line: str) -> list[str]:
    """The single-quoted strings of a PowerShell line, read as PowerShell reads them:
    any quote character ends the string unless another quote character follows."""
    strings, i = [], 0
    while i < len(line):
        if line[i] not in PS_QUOTES:
            i += 1
            continue
        value, i = [], i + 1
        while True:
            ch = line[i]
            if ch in PS_QUOTES:
                if i + 1 < len(line) and line[i + 1] in PS_QUOTES:
                    value.append(ch)
                    i += 2
                    continue
                i += 1
                break
            value.append(ch)
            i += 1
        strings.append("".join(value))
    return strings


def powershell_machine_env(command: str) -> dict[str, str]:
    """Decode an -EncodedCommand and read its SetEnvironmentVariable calls."""
    import base64

    prefix = "powershell -NoProfile -NonInteractive -EncodedCommand "
    assert command.startswith(prefix)
    script = base64.b64decode(command[len(prefix) :]).decode("utf-16-le")
    lines = script.split("\n")
    assert lines[0] == "$ErrorActionPreference = 'Stop'"
    assert lines[-1] == "Restart-Service containerd"
    env = {}
    for line in lines[1:-1]:
        assert line.startswith("[Environment]::SetEnvironmentVariable(") and line.endswith(")")
        name, value, scope = powershell_strings(line)  # exactly three strings: nothing escaped
        assert scope == "Machine"
        env[name] = value
    return env


@settings(max_examples=200)
@given(HOSTILE | st.text(st.sampled_from(PS_QUOTES + 'a;$`"()'), min_size=1, max_size=12))
def test_powershell_values_read_back_exactly(value: str) -> None:
    command = quoting.powershell_machine_env([("HTTP_PROXY", value), ("no_proxy", "x")])
    assert powershell_machine_env(command) == {"HTTP_PROXY": value, "no_proxy": "x"}


def test_windows_templates_get_powershell_never_linux_commands() -> None:
    out = (GOLDEN / "capi-windows" / "expected.yaml").read_text()
    (spec,) = _specs(out)
    assert [f["path"] for f in spec["files"]] == ["c:/k/azure.json"]
    first, *rest = spec["preKubeadmCommands"]
    assert rest == ["powershell c:/create-external-network.ps1"]
    assert powershell_machine_env(first)["HTTPS_PROXY"] == "http://proxy.corp.example:3128"
    assert "systemctl" not in out and "export " not in out


def test_windows_templates_can_be_skipped() -> None:
    data = (GOLDEN / "capi-windows-skip" / "input.yaml").read_bytes()
    profile = GOLDEN / "capi-windows-skip" / "profile.yaml"
    proc = run_cli([str(profile), "--report"], data)
    assert proc.stdout == data
    assert b"Windows node template left alone (nodes.windows: skip)" in proc.stderr


def test_secret_mode_keeps_credentials_out_of_the_kubeadm_objects() -> None:
    out = (GOLDEN / "capi-secret" / "expected.yaml").read_text()
    docs = [d for d in libyaml.load_data(out) if isinstance(d, dict)]
    secrets = [d for d in docs if d["kind"] == "Secret"]
    assert len(secrets) == 1 and secrets[0]["metadata"]["namespace"] == "clusters"
    for doc in docs:
        if doc["kind"] != "Secret":
            assert "p%40ss" not in str(doc) and "proxy.corp.example" not in str(doc)
    data = secrets[0]["stringData"]
    url = "http://build:p%40ss%22w%5Crd@proxy.corp.example:3128"
    env = dict(
        systemd_unquote_environment(line)
        for line in data["kubelet-http-proxy.conf"].splitlines()[1:]
    )
    assert env["HTTPS_PROXY"] == url
    script = ["set -a", *data["proxy.env"].splitlines(), "set +a"]
    assert bash_values(script, ["HTTP_PROXY", "no_proxy"]) == [
        url,
        ".svc,.cluster.local,10.0.0.0/8,localhost,127.0.0.1,::1,[::1],kubernetes,kubernetes.default,"
        "kubernetes.default.svc,cluster.local",
    ]
    # the name the kubeadm objects read the files from is the Secret's
    for spec in _specs(out):
        refs = {f["contentFrom"]["secret"]["name"] for f in spec["files"]}
        assert refs == {secrets[0]["metadata"]["name"]}


def test_secret_mode_needs_a_secret_name_for_cluster_classes(tmp_path: Any) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(SHARED_PROFILE.read_text() + "  nodes:\n    credentials: secret\n")
    data = (GOLDEN / "capi-clusterclass" / "input.yaml").read_bytes()
    proc = run_cli([str(profile)], data)
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"set spec.nodes.secretName" in proc.stderr
    profile.write_text(profile.read_text() + "    secretName: corp-proxy\n")
    proc = run_cli([str(profile)], data)
    assert proc.returncode == 0 and b"name: corp-proxy" in proc.stdout


SHARED_TEMPLATES = GOLDEN / "err-capi-clusterclass-secret-name"


def _without_cluster(data: bytes) -> bytes:
    """The stream without its Cluster: a ClusterClass rendered apart from its Clusters."""
    docs = data.decode().split("---\n")
    return "---\n".join(d for d in docs if "kind: Cluster\n" not in d).encode()


@pytest.mark.parametrize("cluster", [True, False], ids=["with-cluster", "class-alone"])
def test_secret_mode_needs_a_secret_name_for_the_templates_a_cluster_class_names(
    tmp_path: Any, cluster: bool
) -> None:
    """A ClusterClass with no patch on the kubeadm lists: its templates took their files
    from a Secret named after the one Cluster of the stream (or after the template), for
    every cluster of the class, exit 0. Now refused naming the ClusterClass document,
    and fine with spec.nodes.secretName."""
    data = (SHARED_TEMPLATES / "input.yaml").read_bytes()
    data = data if cluster else _without_cluster(data)
    profile = tmp_path / "p.yaml"
    profile.write_text((SHARED_TEMPLATES / "profile.yaml").read_text())
    proc = run_cli([str(profile)], data)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and proc.stdout == b"" and err.count("\n") == 1, err
    assert err.startswith(
        "proxy-postrender: error: document 1 (line 1, ClusterClass fleet/quick-start): "
        "this ClusterClass serves many clusters"
    ), err
    # a class's templates are matched to no cluster (invariant 11): named after the template
    secret = "quick-start-control-plane-systemd-proxy"
    assert "set spec.nodes.secretName" in err and f"Secret {secret} in every" in err, err
    profile.write_text(profile.read_text() + "    secretName: corp-proxy\n")
    proc = run_cli([str(profile)], data)
    assert proc.returncode == 0, proc.stderr
    docs = libyaml.load_data(proc.stdout.decode())
    refs = {
        f["contentFrom"]["secret"]["name"]
        for doc in docs
        if doc["kind"].endswith("Template")
        for f in _specs_of(doc)["files"]
    }
    assert refs == {"corp-proxy"}


def _specs_of(doc: dict[str, Any]) -> dict[str, Any]:
    spec = doc["spec"]["template"]["spec"]
    result: dict[str, Any] = spec.get("kubeadmConfigSpec", spec)
    return result


def test_secret_mode_without_a_name_is_fine_for_templates_no_cluster_class_names(
    tmp_path: Any,
) -> None:
    """The same templates, no ClusterClass in the stream: each gets its cluster's Secret."""
    data = (SHARED_TEMPLATES / "input.yaml").read_text().split("---\n", 1)[1]
    profile = tmp_path / "p.yaml"
    profile.write_text((SHARED_TEMPLATES / "profile.yaml").read_text())
    proc = run_cli([str(profile)], data.encode())
    assert proc.returncode == 0, proc.stderr


def systemd_environment_file(text: str) -> dict[str, str]:
    """Read an EnvironmentFile= the way systemd does (shell-like quoting, no expansion).

    Unquoted: a backslash takes the next character literally; single quotes
    take everything up to the next quote; double quotes take backslash escapes
    of ``"`` ``\\`` ``` ` ``` ``$`` only; adjacent parts join into one value.
    """
    values: dict[str, str] = {}
    for line in text.split("\n"):  # systemd splits on newlines only
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        name, _, raw = line.partition("=")
        value, i = [], 0
        while i < len(raw):
            ch = raw[i]
            if ch == "'":
                end = raw.index("'", i + 1)
                value.append(raw[i + 1 : end])
                i = end + 1
            elif ch == '"':
                i += 1
                while raw[i] != '"':
                    if raw[i] == "\\" and raw[i + 1] in '"\\`$':
                        i += 1
                    value.append(raw[i])
                    i += 1
                i += 1
            elif ch == "\\":
                value.append(raw[i + 1])
                i += 2
            else:
                value.append(ch)
                i += 1
        values[name.strip()] = "".join(value).strip()
    return values


@settings(max_examples=100, deadline=None)
@given(st.lists(HOSTILE.filter(lambda v: v == v.strip()), min_size=1, max_size=4))
def test_env_file_reads_the_same_in_systemd_and_bash(values: list[str]) -> None:
    env = [(f"V{i}", v) for i, v in enumerate(values)]
    text = quoting.env_file(env)
    assert systemd_environment_file(text) == dict(env)
    script = ["set -a", *text.split("\n"), "set +a"]
    assert bash_values(script, [n for n, _ in env]) == values


def test_envfile_layout_points_the_dropins_at_one_file() -> None:
    out = (GOLDEN / "capi-envfile" / "expected.yaml").read_text()
    url = "http://build:it's%25@proxy.corp.example:3128"
    for spec in _specs(out):
        files = {f["path"]: f for f in spec["files"]}
        env_file = files[kubeadm.DEFAULT_ENV_FILE]
        assert env_file["permissions"] == "0600"
        assert systemd_environment_file(env_file["content"])["https_proxy"] == url
        for path in (
            "/etc/systemd/system/containerd.service.d/http-proxy.conf",
            "/etc/systemd/system/kubelet.service.d/http-proxy.conf",
        ):
            assert files[path]["content"] == (
                f"[Service]\nEnvironmentFile={kubeadm.DEFAULT_ENV_FILE}\n"
            )
        assert spec["preKubeadmCommands"][2] == (
            f"set -a && . {kubeadm.DEFAULT_ENV_FILE} && set +a"
        )


KCT = """apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: c1-md
  namespace: ns1
  labels:
    cluster.x-k8s.io/cluster-name: c1
spec:
  template:
    spec:
      preKubeadmCommands:
      - echo mine
"""


def _profile(tmp_path: Any, nodes: str) -> str:
    path = tmp_path / f"p{abs(hash(nodes))}.yaml"
    path.write_text(SHARED_PROFILE.read_text() + "  nodes:\n" + nodes)
    return str(path)


def test_a_rerun_never_deletes_commands_the_tool_did_not_write(tmp_path: Any) -> None:
    once = run_cli([str(SHARED_PROFILE)], KCT.encode()).stdout.decode()
    edited = once.replace(
        "- systemctl daemon-reload", "- swapoff -a\n      - systemctl daemon-reload", 1
    )
    proc = run_cli([str(SHARED_PROFILE)], edited.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"are not all its commands" in proc.stderr


def test_switching_nodes_off_keeps_the_secret_the_manifests_still_reference(tmp_path: Any) -> None:
    secret_mode = _profile(tmp_path, "    credentials: secret\n")
    off = _profile(tmp_path, "    enabled: false\n")
    once = run_cli([secret_mode], KCT.encode()).stdout
    assert b"kind: Secret" in once
    assert run_cli([off], once).stdout == once


def test_a_secret_of_the_same_name_in_the_stream_is_an_error(tmp_path: Any) -> None:
    own = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c1-systemd-proxy\n  namespace: ns1\n"
    fixed = _profile(tmp_path, "    credentials: secret\n    rollout: inPlace\n")
    proc = run_cli([fixed], (own + "---\n" + KCT).encode())
    assert proc.returncode == 1 and b"already holds a Secret ns1/c1-systemd-proxy" in proc.stderr
    # with names by content (the default), the name the tool would emit
    digested = _profile(tmp_path, "    credentials: secret\n")
    made = run_cli([digested], KCT.encode()).stdout.decode().split("kind: Secret\n")[1]
    name = made.split("name: ")[1].split("\n")[0]
    assert name.startswith("c1-systemd-proxy-")
    taken = own.replace("c1-systemd-proxy", name)
    proc = run_cli([digested], (taken + "---\n" + KCT).encode())
    assert proc.returncode == 1 and f"already holds a Secret ns1/{name}".encode() in proc.stderr
    reuse = _profile(tmp_path, "    credentials: secret\n    createSecret: false\n")
    proc = run_cli([reuse], (own + "---\n" + KCT).encode())
    assert proc.returncode == 0 and proc.stdout.count(b"kind: Secret") == 1


def test_a_linux_command_that_mentions_powershell_stays_linux() -> None:
    text = KCT.replace("echo mine", "apt-get install -y powershell")
    spec = _specs(run_cli([str(SHARED_PROFILE)], text.encode()).stdout.decode())[0]
    assert spec["preKubeadmCommands"][0] == "systemctl daemon-reload"
    assert len(spec["files"]) == 2


def test_clusterclass_patch_replacing_a_grandparent_of_the_lists_is_an_error() -> None:
    """Two levels above the lists, what the value leaves there is not read: refused.
    (A direct parent is handled: see tests/test_clusterclass_patches.py.)"""
    data = (GOLDEN / "capi-clusterclass" / "input.yaml").read_text()
    data = data.replace(
        "path: /spec/template/spec/kubeadmConfigSpec/files", "path: /spec/template/spec", 1
    )
    proc = run_cli([str(SHARED_PROFILE)], data.encode())
    assert proc.returncode == 1, proc.stderr
    assert b"sets /spec/template/spec as a whole, above" in proc.stderr
    assert b"patch the fields below it instead" in proc.stderr


def test_clusterclass_secret_mode_names_the_secret_to_create(tmp_path: Any) -> None:
    data = (GOLDEN / "capi-clusterclass" / "input.yaml").read_bytes()
    no_lists = data.split(b"---\n")[1]
    assert run_cli([_profile(tmp_path, "    credentials: secret\n")], no_lists).returncode == 0
    named = _profile(tmp_path, "    credentials: secret\n    secretName: corp-proxy\n")
    proc = run_cli([named, "--report"], data)
    assert proc.returncode == 0
    assert b"Secret corp-proxy, which is not emitted for a ClusterClass" in proc.stderr


def test_a_secret_with_odd_metadata_does_not_crash() -> None:
    data = b"apiVersion: v1\nkind: Secret\nmetadata: [proxy-postrender.io/generated]\n"
    proc = run_cli([str(SHARED_PROFILE)], data)
    assert proc.returncode == 0 and proc.stdout == data


# --- the last gate: nothing written into a node holds template code or control characters


TEMPLATED = st.builds(
    lambda a, d, b: a + d + b, HOSTILE | st.just(""), st.sampled_from(["{{", "{%", "{#"]), HOSTILE
)


REFUSED = "the value of NO_PROXY holds '{{', '{%' or '{#'"


@settings(max_examples=100)
@given(TEMPLATED)
def test_every_writer_refuses_template_delimiters(value: str) -> None:
    env = [("NO_PROXY", value)]
    for write in (
        lambda: quoting.systemd_environment("NO_PROXY", value),
        lambda: quoting.shell_export("NO_PROXY", value),
        lambda: quoting.env_file(env),
        lambda: quoting.dropin(env),
        lambda: quoting.powershell_machine_env(env),
        lambda: kubeadm.secret_data(NODES, env),
    ):
        with pytest.raises(InputError, match=re.escape(REFUSED)):
            write()


WINDOWS = (GOLDEN / "capi-windows" / "input.yaml").read_text()
CLASSES = (GOLDEN / "capi-clusterclass" / "input.yaml").read_text()
ENVFILE = structs.replace(NODES, layout="envfile")
SECRET = structs.replace(NODES, credentials="secret", secret_name="corp-proxy")
GATE_CASES = [
    ("dropins", CAPI.decode(), NODES, "KubeadmControlPlane"),
    ("envfile", CAPI.decode(), ENVFILE, "KubeadmControlPlane"),
    ("secret", CAPI.decode(), SECRET, "KubeadmControlPlane"),
    ("windows", WINDOWS, NODES, "Kubeadm"),
    ("clusterclass", CLASSES, NODES, "ClusterClass default/quick-start"),
    ("clusterclass-secret", CLASSES, SECRET, "ClusterClass default/quick-start"),
]


@pytest.mark.parametrize(
    ("text", "nodes", "kind"), [c[1:] for c in GATE_CASES], ids=[c[0] for c in GATE_CASES]
)
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("a,{{ds.meta_data.x}}", "holds '{{', '{%' or '{#', which cloud-init would render"),
        ("a,{%x%}", "holds '{{', '{%' or '{#'"),
        ("a,b\x01", "contains a control character"),
        ("a,b\nc", "contains a control character"),
    ],
)
def test_the_gate_names_the_document_whatever_the_layout(
    text: str, nodes: kubeadm.NodeSettings, kind: str, value: str, message: str
) -> None:
    """Values that slipped past every earlier check are refused where they would be
    written, as an input error that names the document (exit 1)."""
    request = Request(env=(*ENV_A, ("NO_PROXY", value)), nodes=nodes)
    with pytest.raises(InputError) as info:
        engine.process(text, request)
    error = info.value
    assert error.context is not None and kind in error.context.describe()
    assert message in str(error) and "NO_PROXY" in str(error) and "\n" not in str(error)
    assert error.exit_code == 1


def test_the_gate_covers_the_ca_file() -> None:
    pem = "-----BEGIN CERTIFICATE-----\nMII{{x}}\n-----END CERTIFICATE-----\n"
    nodes = structs.replace(NODES, ca_bundle=pem)
    with pytest.raises(InputError, match=f"the file {kubeadm.CA_FILE} would hold"):
        engine.process(CAPI.decode(), Request(env=ENV_A, nodes=nodes))
