"""spec.nodes.staticPods: extraEnvs (nodes/staticpods.py): the control plane's static pods
get the exports' names and values in their extraEnvs, opt-in.

- off by default: the profile without the field writes what it always wrote;
- the values are those the exports carry, each ``$`` doubled (the kubelet expands
  ``$(NAME)``); a profile switched back to ``exports`` takes them out again;
- refused: a password in secret mode (static pods cannot read a Secret), a ClusterClass's
  template (one NO_PROXY for clusters whose node networks differ); secret mode without a
  password writes them (no secret in them);
- the node-address check of noproxy/environments.py still looks at the control plane's
  NO_PROXY, and says the extraEnvs carry it;
- a malformed record entry is an error naming the annotation.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender import engine
from proxy_postrender.noproxy import coverage
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

V1BETA2 = GOLDEN / "capi-extraenvs-v1beta2"
PLACES = ("apiServer", "controllerManager", "scheduler")


def _profile(tmp_path: Path, nodes: str, base: Path = SHARED_PROFILE) -> Path:
    path = tmp_path / "profile.yaml"
    text = base.read_text().replace("\nspec:\n", f"\nspec:\n  nodes:\n{nodes}", 1)
    if "\n  nodes:\n" in base.read_text():  # the base has its own nodes section
        text = base.read_text().replace("\n  nodes:\n", f"\n  nodes:\n{nodes}", 1)
    path.write_text(text)
    return path


def _docs(text: bytes) -> list[Any]:
    return [d for d in libyaml.load_data(text.decode()) if d is not None]


def _envs(doc: Any, place: str) -> Any:
    return doc["spec"]["kubeadmConfigSpec"]["clusterConfiguration"][place]["extraEnvs"]


def test_the_default_writes_no_extra_envs() -> None:
    text = (GOLDEN / "capi-v1beta2" / "input.yaml").read_bytes()
    proc = run_cli([str(SHARED_PROFILE)], text)
    assert proc.returncode == 0 and b"extraEnvs" not in proc.stdout


def test_the_values_are_the_exports_and_exports_takes_them_out(tmp_path: Path) -> None:
    text = (GOLDEN / "capi-v1beta2" / "input.yaml").read_bytes()
    out = run_cli([str(_profile(tmp_path, "    staticPods: extraEnvs\n"))], text)
    assert out.returncode == 0, out.stderr
    kcp = _docs(out.stdout)[1]
    exports = [
        shlex.split(c.removeprefix("export "))[0].split("=", 1)
        for c in kcp["spec"]["kubeadmConfigSpec"]["preKubeadmCommands"]
        if c.startswith("export ")
    ]
    for place in PLACES:
        assert [[e["name"], e["value"]] for e in _envs(kcp, place)] == exports
    back = run_cli([str(SHARED_PROFILE)], out.stdout)
    assert back.stdout == (GOLDEN / "capi-v1beta2" / "expected.yaml").read_bytes()


def test_a_dollar_is_doubled() -> None:
    expected = (GOLDEN / "capi-extraenvs-v1beta1" / "expected.yaml").read_bytes()
    kcp = _docs(expected)[1]
    value = _envs(kcp, "apiServer")[0]["value"]
    assert "$$HOME(*)" in value and "$HOME" not in value.replace("$$", "")


def test_secret_mode_without_a_password_writes_them(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "    credentials: secret\n    staticPods: extraEnvs\n")
    proc = run_cli([str(profile)], (V1BETA2 / "input.yaml").read_bytes())
    assert proc.returncode == 0, proc.stderr
    kcp = _docs(proc.stdout)[1]
    assert [e["name"] for e in _envs(kcp, "scheduler")][:3] == [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
    ]


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("err-capi-extraenvs-secret-password", "would write the proxy password in clear"),
        ("err-capi-extraenvs-clusterclass", "serves many clusters"),
    ],
)
def test_refusals_are_one_line_naming_the_object(case: str, said: str) -> None:
    directory = GOLDEN / case
    proc = run_cli([str(directory / "profile.yaml")], (directory / "input.yaml").read_bytes())
    assert proc.returncode == 1 and proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert said in line and "KubeadmControlPlane" in line


def test_the_node_address_check_runs_and_names_the_extra_envs(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "    staticPods: extraEnvs\n")
    text = (GOLDEN / "capi-v1beta2" / "input.yaml").read_text()
    result = engine.process(text, to_request(loader.load(str(profile), environ={})))
    (finding,) = [f for f in result.findings if f.code == coverage.NODE_ADDRESSES_UNKNOWN]
    assert finding.context is not None and "Cluster default/work" in finding.message
    assert "spec.nodes.staticPods: extraEnvs, their extraEnvs carry the same NO_PROXY" in (
        finding.message
    )


def test_a_malformed_record_entry_is_an_error(tmp_path: Path) -> None:
    expected = (V1BETA2 / "expected.yaml").read_text()
    broken = expected.replace("env:clusterConfiguration.apiServer.extraEnvs=", "env:nowhere=", 1)
    assert broken != expected
    proc = run_cli([str(V1BETA2 / "profile.yaml")], broken.encode())
    assert proc.returncode == 1
    assert "annotation proxy-postrender.io/node-bootstrap is malformed near 'env:nowhere=" in (
        proc.stderr.decode()
    )


def test_a_spec_the_tool_creates_gets_no_extra_envs_and_the_report_says_so(
    tmp_path: Path,
) -> None:
    text = (V1BETA2 / "input.yaml").read_text()
    kcp_start = text.index("  kubeadmConfigSpec:\n")
    kcp_end = text.index("---", kcp_start)
    bare = text[:kcp_start] + text[kcp_end:]
    proc = run_cli([str(V1BETA2 / "profile.yaml"), "--report"], bare.encode())
    assert proc.returncode == 0, proc.stderr
    assert "extraEnvs" not in str(_docs(proc.stdout)[1])
    assert "static pods: no extraEnvs in a spec the tool creates" in proc.stderr.decode()


@pytest.mark.parametrize(("version", "refused"), [("v1.30.9", True), ("v1.31.0", False)])
def test_a_control_plane_older_than_1_31_is_refused(version: str, refused: bool) -> None:
    text = (V1BETA2 / "input.yaml").read_text().replace("version: v1.32.2", f"version: {version}")
    proc = run_cli([str(V1BETA2 / "profile.yaml")], text.encode())
    if refused:
        assert proc.returncode == 1
        assert (
            "needs Kubernetes >= 1.31 (kubeadm v1beta4), and this KubeadmControlPlane "
            f"runs {version}" in proc.stderr.decode()
        )
    else:
        assert proc.returncode == 0, proc.stderr
