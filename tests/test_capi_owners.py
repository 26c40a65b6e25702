"""Other owners of the node proxy settings (issue 18, item 5): each warning fires on its
shape, stays quiet on the ordinary upstream shapes, is an error under --strict (flag or
spec.strict), and reaches --report and the KRM results."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import owners, uncovered
from proxy_postrender.nodes.kubeadm import NodeSettings
from proxy_postrender.noproxy import coverage, fleet, services, size
from proxy_postrender.profile.tables import DEFAULT_CONTAINERD_DROPIN, DEFAULT_KUBELET_DROPIN
from proxy_postrender.request import Request
from proxy_postrender.result import CODES, Finding
from proxy_postrender.rollout import codes as rollout_codes
from proxy_postrender.structs import replace
from proxy_postrender.yamltext import libyaml
from tests.golden import load_cases
from tests.helpers import FIXTURES, GOLDEN, SHARED_PROFILE, resource_list, run_cli

URL = "http://proxy.corp.example:3128"
ENV = (("HTTP_PROXY", URL), ("NO_PROXY", "localhost"), ("http_proxy", URL))
NODES = NodeSettings(DEFAULT_CONTAINERD_DROPIN, DEFAULT_KUBELET_DROPIN)
REQUEST = Request(env=ENV, nodes=NODES)
STRICT = Request(env=ENV, nodes=NODES, strict=True)
OWNERS = FIXTURES / "capi-owners"


def _input(case: str) -> str:
    return (GOLDEN / case / "input.yaml").read_text()


def _findings(text: str, request: Request = REQUEST) -> list[Finding]:
    """The findings of a run but the rollout step's (tests/test_rollout.py has those: the
    lone templates of these streams change in place)."""
    found = engine.process(text, request).findings
    return [f for f in found if f.code != rollout_codes.NO_ROLLOUT_CODE]


def _codes(text: str, request: Request = REQUEST) -> list[str]:
    return [finding.code for finding in _findings(text, request)]


@pytest.mark.parametrize(
    ("case", "codes"),
    [
        ("capi-owner-capvcd", [owners.PROVIDER]),
        ("capi-owner-caren", [owners.EXTENSION]),
        ("capi-owner-chart", [owners.DROPIN, owners.ENVIRONMENT, owners.EXPORTS]),
    ],
)
def test_each_owner_is_found_on_its_shape(case: str, codes: list[str]) -> None:
    assert _codes(_input(case)) == codes


def test_every_code_is_declared_once_and_says_whether_strict_applies() -> None:
    codes = (
        *owners.CODES,
        *coverage.CODES,
        *services.CODES,
        *size.CODES,
        *fleet.CODES,
        *uncovered.CODES,
        *rollout_codes.CODES,
    )
    declared = [name for name, _, _ in codes]
    assert sorted(CODES) == sorted(declared)  # each once: a name twice would be lost
    not_strict = (owners.EXTERNAL, coverage.NODE_ADDRESSES_UNKNOWN)
    assert not any(CODES[c].strict for c in not_strict)
    assert all(CODES[c].strict for c in CODES if c not in not_strict)


def test_the_ordinary_upstream_shapes_give_no_warning() -> None:
    assert _codes((OWNERS / "ordinary.yaml").read_text()) == []


@pytest.mark.parametrize(
    "case",
    [c for c in load_cases() if c.name.startswith("capi") and "owner" not in c.name],
    ids=lambda c: c.name,
)
def test_the_other_capi_golden_inputs_give_no_owner_warning(case: object) -> None:
    from tests.golden import Case

    assert isinstance(case, Case)
    proc = run_cli([*case.args, "--report"], case.input, cwd=case.path)
    if proc.returncode == 0:
        assert b"[owner/" not in proc.stderr, proc.stderr.decode()


def test_an_unknown_runtime_extension_is_a_warning_strict_lets_pass() -> None:
    text = (OWNERS / "runtimesdk.yaml").read_text()
    result = engine.process(text, STRICT)
    (finding,) = result.findings
    assert finding.code == owners.EXTERNAL and not finding.strict
    assert "generate-patches.k8s-upgrade-with-runtimesdk" in finding.message


def test_a_proxy_variable_makes_an_unknown_extension_an_owner() -> None:
    text = (OWNERS / "runtimesdk.yaml").read_text()
    declared = text.replace(
        "  patches:\n",
        "  variables:\n    - name: proxy\n      schema:\n        openAPIV3Schema:\n"
        "          type: object\n  patches:\n",
        1,
    )
    assert _codes(declared) == [owners.EXTENSION]
    cluster = (
        "---\napiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata:\n  name: c\n"
        "spec:\n  topology:\n    classRef:\n      name: quick-start-runtimesdk\n"
        "    variables:\n      - name: config\n        value:\n          httpProxy: x\n"
    )
    assert _codes(text + cluster) == [owners.EXTENSION]


def test_nothing_is_said_when_the_tool_puts_nothing_on_the_nodes() -> None:
    names = ("capi-owner-capvcd", "capi-owner-caren", "capi-owner-chart")
    text = "---\n".join(_input(name) for name in names)
    assert _codes(text, Request(env=ENV, nodes=None)) == []  # spec.nodes.enabled: false
    assert _codes(text, Request(env=(), nodes=NODES)) == []  # --remove
    assert _codes(_input("capi-owner-capvcd").split("kind: KubeadmControlPlane")[0]) == []


def test_a_re_run_finds_the_same_and_not_the_tools_own_entries() -> None:
    text = _input("capi-owner-chart")
    out = engine.process(text, REQUEST).text
    assert _codes(out) == _codes(text)
    plain = text.replace("        - export", "        - echo")
    assert owners.EXPORTS not in _codes(engine.process(plain, REQUEST).text)


def test_a_drop_in_at_the_tools_path_is_an_owner_unless_overridden() -> None:
    text = (GOLDEN / "capi-owner-chart" / "input.yaml").read_text()
    same = text.replace("10-chart-proxy.conf", "http-proxy.conf")
    findings = engine.process(same, REQUEST).findings
    assert "(kept: onConflict keep)" in findings[0].message
    override = replace(REQUEST, nodes=replace(NODES, on_conflict="override"))
    assert owners.DROPIN not in _codes(same, override)


def test_the_capvcd_drop_in_elsewhere_is_said_differently() -> None:
    other = replace(NODES, containerd_dropin="/etc/systemd/system/containerd.service.d/z.conf")
    (finding,) = engine.process(_input("capi-owner-capvcd"), replace(REQUEST, nodes=other)).findings
    assert "the file that sorts last wins" in finding.message


def test_strict_is_an_error_that_names_the_object() -> None:
    with pytest.raises(InputError) as caught:
        engine.process(_input("capi-owner-capvcd"), STRICT)
    assert "VCDCluster vcd/c1" in str(caught.value)
    assert "[owner/provider-proxy; --strict]" in str(caught.value)


MULTILINE = """\
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: md
  namespace: ns1
spec:
  template:
    spec:
      preKubeadmCommands:
      - |
        set -e
        export HTTP_PROXY=http://other:3128
      - env HTTPS_PROXY=http://other:3128 kubeadm config images pull
      - declare -x NO_PROXY=.other
"""


def test_strict_sees_exports_on_any_line_and_after_env_and_declare() -> None:
    """issue 27 finding 10: the chart's own proxy settings on the second line of a
    command, after ``env`` or ``declare -x``, are found, and --strict refuses them."""
    (found,) = _findings(MULTILINE)
    assert found.code == owners.EXPORTS
    assert "preKubeadmCommands[0], [1], [2] set HTTP_PROXY, HTTPS_PROXY, NO_PROXY" in found.message
    proc = run_cli([str(SHARED_PROFILE), "--strict"], MULTILINE.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert line.startswith("proxy-postrender: error: document 1 (line 1, KubeadmConfigTemplate")
    assert line.endswith("[owner/exports; --strict]")


def _profile(tmp_path: Path, strict: bool) -> Path:
    text = SHARED_PROFILE.read_text().replace(
        "spec:\n", f"spec:\n  strict: {str(strict).lower()}\n"
    )
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("how", ["flag", "profile"])
def test_strict_writes_nothing_and_one_line(tmp_path: Path, how: str) -> None:
    args = [str(SHARED_PROFILE), "--strict"] if how == "flag" else [str(_profile(tmp_path, True))]
    proc = run_cli(args, _input("capi-owner-chart").encode())
    assert proc.returncode == 1
    assert proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("proxy-postrender: error: document 1 ")
    assert lines[0].endswith("[owner/dropin; --strict]")


def test_strict_false_in_the_profile_and_the_report(tmp_path: Path) -> None:
    proc = run_cli(
        [str(_profile(tmp_path, False)), "--report"], _input("capi-owner-capvcd").encode()
    )
    assert proc.returncode == 0
    assert proc.stdout == (GOLDEN / "capi-owner-capvcd" / "expected.yaml").read_bytes()
    warnings = [line for line in proc.stderr.decode().splitlines() if "[owner/" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("  warning document 2 (line 24, VCDCluster vcd/c1): ")


def _resource_list(items: str, strict: bool) -> bytes:
    """A ResourceList in block style, the profile as functionConfig."""
    docs = [d for d in libyaml.load_data(items) if d is not None]
    (profile,) = libyaml.load_data(SHARED_PROFILE.read_text())
    profile["spec"]["strict"] = strict
    return resource_list(docs, profile)


def test_krm_results_carry_the_warning_with_its_code() -> None:
    proc = run_cli([], _resource_list(_input("capi-owner-caren"), False))
    assert proc.returncode == 0, proc.stderr.decode()
    (data,) = libyaml.load_data(proc.stdout.decode())
    found = [r for r in data["results"] if r.get("tags", {}).get("code", "").startswith("owner/")]
    assert len(found) == 1
    assert found[0]["severity"] == "warning"
    assert found[0]["tags"] == {"code": owners.EXTENSION, "strict": "true"}
    assert found[0]["resourceRef"] == {"kind": "ClusterClass", "name": "nutanix-quick-start"}


def test_krm_strict_is_an_error_result_and_a_non_zero_exit() -> None:
    text = _resource_list(_input("capi-owner-caren"), True)
    proc = run_cli([], text)
    assert proc.returncode == 1
    assert len(proc.stderr.decode().splitlines()) == 1
    (data,) = libyaml.load_data(proc.stdout.decode())
    assert [r["severity"] for r in data["results"]] == ["error"]
    assert "[owner/proxy-extension; --strict]" in data["results"][0]["message"]


@pytest.mark.parametrize(
    ("text", "command", "names"),
    [
        ("export HTTP_PROXY=x", True, ["HTTP_PROXY"]),
        ("a && export no_proxy=y; NO_PROXY=z", True, ["no_proxy", "NO_PROXY"]),
        ("echo $HTTP_PROXY HTTPS_PROXY=x", True, []),
        ("MY_HTTP_PROXY=x", True, []),
        ('[Service]\nEnvironment="https_proxy=x"\n', False, ["https_proxy"]),
        ("Environment=NO_PROXY=x\nHTTP_PROXY=y\nexport no_proxy=z", False, None),
        ("KUBELET_EXTRA_ARGS=--http-proxy-x", False, []),
        # issue 27 finding 10: each form below was missed
        ("set -e\nexport HTTP_PROXY=x", True, ["HTTP_PROXY"]),
        ("env HTTPS_PROXY=x kubeadm config images pull", True, ["HTTPS_PROXY"]),
        ("env -i -u TERM no_proxy=x kubeadm", True, ["no_proxy"]),
        ("declare -x NO_PROXY=x", True, ["NO_PROXY"]),
        ("typeset -gx https_proxy=x", True, ["https_proxy"]),
        ("export A=1 HTTP_PROXY=x", True, ["HTTP_PROXY"]),
        ("A=1 http_proxy=x kubeadm join", True, ["http_proxy"]),
        ("sudo -E -u root HTTPS_PROXY=x kubeadm", True, ["HTTPS_PROXY"]),
        ("if true; then\n    export NO_PROXY=x\nfi", True, ["NO_PROXY"]),
        ("export \\\n  HTTP_PROXY=x", True, ["HTTP_PROXY"]),
        ('export "HTTPS_PROXY=a b"', True, ["HTTPS_PROXY"]),
        ("readonly no_proxy=x", True, ["no_proxy"]),
        # found by an adversarial test of the fix: wrappers, escaped words, inner shells
        ('sh -c "HTTP_PROXY=x kubeadm join"', True, ["HTTP_PROXY"]),
        ("bash -ec 'export https_proxy=x'", True, ["https_proxy"]),
        ("timeout 300 env HTTPS_PROXY=x kubeadm join", True, ["HTTPS_PROXY"]),
        ("timeout -k 5 -s TERM 300 env NO_PROXY=x kubeadm", True, ["NO_PROXY"]),
        ("builtin export NO_PROXY=a", True, ["NO_PROXY"]),
        ("\\export HTTP_PROXY=x", True, ["HTTP_PROXY"]),
        ("eval export no_proxy=x", True, ["no_proxy"]),
        ("stdbuf -oL env HTTP_PROXY=x kubeadm join", True, ["HTTP_PROXY"]),
        ('/bin/sh -c "sh -c \\"HTTPS_PROXY=y kubeadm\\""', True, ["HTTPS_PROXY"]),
        ("sh /root/setup.sh HTTP_PROXY=x", True, []),
        # not an assignment, or one that takes the export away
        ("# export HTTP_PROXY=x\necho hi", True, []),
        ("echo 'export HTTP_PROXY=x' >> /root/notes", True, []),
        ('bash -c "echo HTTP_PROXY=x"', True, []),
        ("export -n HTTP_PROXY", True, []),
        ("declare +x HTTP_PROXY=x", True, []),
    ],
)
def test_proxy_names(text: str, command: bool, names: list[str] | None) -> None:
    expected = ["NO_PROXY", "HTTP_PROXY", "no_proxy"] if names is None else names
    assert owners.proxy_names(text, command=command) == expected


_PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def test_a_windows_template_that_gets_no_ca_says_so() -> None:
    """With a CA for the nodes, a Windows node template gets the machine environment
    but no CA: a strict warning naming the object, not a silent skip; Linux templates
    get the CA and no such warning."""
    with_ca = replace(NODES, ca_bundle=_PEM)
    windows = _input("capi-windows")
    result = engine.process(windows, Request(env=ENV, nodes=with_ca))
    found = [f for f in result.findings if f.code == owners.WINDOWS_CA]
    assert found and all("configures Windows nodes" in f.message for f in found)
    assert found[0].strict
    assert owners.WINDOWS_CA not in _codes(windows)  # no CA, nothing to say
    linux = _input("capi-empty-lists-no-final-newline")
    assert owners.WINDOWS_CA not in _codes(linux, Request(env=ENV, nodes=with_ca))
    with pytest.raises(
        InputError, match=r"configures Windows nodes.*\[nodes/windows-ca; --strict\]"
    ):
        engine.process(windows, Request(env=ENV, nodes=with_ca, strict=True))
