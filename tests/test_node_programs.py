"""The tool's node bootstrap output read by the real programs (issue 32, item 4).

Per bootstrap object of an output (the goldens' and fresh ones made with a hostile
password): for kubeadm, the cloud-config Cluster API makes of it (tests/cloudconfig.py)
is rendered and validated by cloud-init, and the files and commands are taken from
what cloud-init rendered; cloud-init's own write_files writes the files into a
temporary root and its runcmd script runs the tool's commands in sh (dash, what
cloud-init's ``#!/bin/sh`` is on Debian/Ubuntu) and bash; the env files are sourced
by both; systemd verifies the drop-ins beside stand-in units and dumps their
``Environment=`` values. Every value each program ends with must be the intended one:
the profile's proxy URL, and one NO_PROXY value holding the profile's entries. The
programs: tests/nodeprograms.py. A missing program fails, never skips.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender.yamltext import libyaml
from tests import cloudconfig, nodeprograms
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
# the characters a password may bring: @ # % " \ and space percent-encoded (a URL has
# them so), ' $ ; as they are
HOSTILE_URL = "http://b%20u:p%40s%23s%25'%22%5C$HOME%20;x@proxy.corp.example:3128"
HOSTILE_PROFILE = f"""apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata:
  name: hostile
spec:
  httpProxy: "{HOSTILE_URL}"
  httpsProxy: "{HOSTILE_URL}"
  noProxy: [.svc, 10.0.0.0/8]
"""
ROLES = {
    "KubeadmControlPlane": "init",
    "KubeadmControlPlaneTemplate": "join-control-plane",
    "KubeadmConfigTemplate": "node",
}


class Expect:
    """The intended values: the proxy URL everywhere, one NO_PROXY per node with the
    profile's entries."""

    def __init__(self, proxy: str, no_proxy: list[str]) -> None:
        self.proxy, self.entries = proxy, set(no_proxy)
        self.no_proxy: str | None = None

    def check(self, env: dict[str, str], where: str) -> None:
        got = {n: env.get(n) for n in NAMES}
        assert {got[n] for n in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")} == {
            self.proxy
        }, f"{where}: {got}"
        assert got["NO_PROXY"] == got["no_proxy"] and got["NO_PROXY"] is not None, where
        assert self.entries <= set(got["NO_PROXY"].split(",")), where
        if self.no_proxy is None:
            self.no_proxy = got["NO_PROXY"]
        assert got["NO_PROXY"] == self.no_proxy, f"{where}: NO_PROXY differs between readers"


def _expect(profile_text: str) -> Expect:
    spec = libyaml.load_data(profile_text)[0]["spec"]
    assert spec["httpProxy"] == spec["httpsProxy"]
    return Expect(spec["httpProxy"], spec["noProxy"])


def _golden(name: str) -> tuple[str, Expect]:
    case = GOLDEN / name
    profile = case / "profile.yaml" if (case / "case.yaml").exists() else SHARED_PROFILE
    return (case / "expected.yaml").read_text(), _expect(profile.read_text())


def _fresh(tmp_path: Path, golden: str, nodes: str) -> tuple[str, Expect]:
    profile = tmp_path / "hostile.yaml"
    profile.write_text(HOSTILE_PROFILE + (f"  nodes:\n    {nodes}\n" if nodes else ""))
    proc = run_cli([str(profile)], (GOLDEN / golden / "input.yaml").read_bytes())
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode(), _expect(profile.read_text())


def _user_data(node: nodeprograms.Node) -> str | None:
    """kubeadm: the cloud-config Cluster API makes for the node; others: None."""
    if node.dialect != "kubeadm":
        return None
    role = ROLES.get(node.kind) or ("init" if "initConfiguration" in node.spec else "node")
    return cloudconfig.cloud_config(node.spec, role, node.namespace, node.secrets)


def _check_node(node: nodeprograms.Node, root: Path, read: dict[str, Any], expect: Expect) -> None:
    """Every program's reading of one node, after cloud-init (``read``) wrote its files
    under ``root`` and made its runcmd script."""
    expect.no_proxy = None
    files, commands = read["files"], read["commands"]
    assert [(f["path"], f.get("content")) for f in files] == [
        (f["path"], f.get("content")) for f in node.files
    ], f"{node.label}: cloud-init's Jinja pass changed a file"
    assert commands == node.commands[: node.tool_commands], f"{node.label}: a command changed"
    paths = [f["path"] for f in files]
    for f in files:
        mode = stat.S_IMODE(os.stat(f"{root}{f['path']}").st_mode)
        assert mode == int(f.get("permissions", "0644"), 8), f["path"]
    env_files = [p for p in node.tool_files if "/systemd/" not in p and not p.endswith(".crt")]
    script = (root / "runcmd").read_text()
    for shell in ("sh", "bash"):
        if commands:
            got = nodeprograms.run_script(script, root, paths, shell, NAMES)
            expect.check(got, f"{node.label}: {shell} after the commands")
        for path in env_files:
            sourced = f"#!/bin/sh\nset -a\n. {path}\nset +a\n"
            got = nodeprograms.run_script(sourced, root, paths, shell, NAMES)
            expect.check(got, f"{node.label}: {path} sourced by {shell}")
    dropins = sorted(
        {Path(p).parent.name.removesuffix(".d") for p in node.tool_files if ".service.d/" in p}
    )
    if dropins:
        _check_units(nodeprograms.systemd_units(root), dropins, env_files, expect, node.label)


def _check_units(
    units: dict[str, dict[str, Any]],
    dropins: list[str],
    env_files: list[str],
    expect: Expect,
    label: str,
) -> None:
    """What systemd read of the units the tool wrote drop-ins for: each one read (a
    drop-in systemd does not find is no check), with the intended ``Environment=``
    values or, in the envfile layout, ``EnvironmentFile=`` naming the env files."""
    assert set(dropins) <= set(units), f"{label}: systemd read {sorted(units)}, not {dropins}"
    for unit, seen in units.items():
        if seen["Environment"]:
            expect.check(seen["Environment"], f"{label}: systemd's {unit}")
        else:  # the envfile layout: the drop-in names the env file
            assert env_files, f"{label}: systemd's {unit} has no Environment= nor a file"
            assert [f.split(" (")[0] for f in seen["EnvironmentFile"]] == env_files, unit


def _check_output(text: str, expect: Expect, tmp_path: Path, dialect: str) -> None:
    nodes = nodeprograms.nodes_of(libyaml.load_data(text))
    assert nodes and {n.dialect for n in nodes} == {dialect}
    jobs: list[dict[str, Any]] = [
        {
            "root": str(tmp_path / f"n{i}"),
            "user_data": _user_data(node),
            "files": node.files,
            "commands": node.commands[: node.tool_commands],
        }
        for i, node in enumerate(nodes)
    ]
    for node, job, read in zip(nodes, jobs, nodeprograms.cloud_init(jobs, tmp_path), strict=True):
        _check_node(node, Path(job["root"]), read, expect)


GOLDENS = [
    "capi-v1beta2",
    "capi-v1beta1",
    "rollout-machinepool",
    "capi-credentials",
    "capi-secret",
    "capi-envfile",
]


@pytest.mark.parametrize("golden", GOLDENS)
def test_kubeadm_goldens_read_by_cloud_init_shells_and_systemd(golden: str, tmp_path: Path) -> None:
    text, expect = _golden(golden)
    _check_output(text, expect, tmp_path, "kubeadm")


FRESH = [
    ("capi-v1beta2", "", "kubeadm"),
    ("capi-v1beta2", "layout: envfile", "kubeadm"),
    ("capi-v1beta2", "credentials: secret", "kubeadm"),
    ("capi-rke2-password", "", "rke2"),
    ("capi-rke2-password", "credentials: secret", "rke2"),
    ("capi-k3s-password", "", "k3s"),
    ("capi-k3s-password", "credentials: secret", "k3s"),
    ("capi-k0smotron-password", "", "k0smotron"),
    ("capi-k0smotron-password", "credentials: secret", "k0smotron"),
    ("capi-eks-nodeadm", "", "eks-nodeadm"),
]


@pytest.mark.parametrize(
    ("golden", "nodes", "dialect"), FRESH, ids=[f"{g}-{n or 'inline'}" for g, n, _ in FRESH]
)
def test_a_hostile_password_read_by_the_real_programs(
    golden: str, nodes: str, dialect: str, tmp_path: Path
) -> None:
    text, expect = _fresh(tmp_path, golden, nodes)
    _check_output(text, expect, tmp_path, dialect)


def test_cloud_init_cli_renders_and_validates_what_the_session_did(tmp_path: Path) -> None:
    """`cloud-init devel render` and `cloud-init schema --config-file` themselves, on the
    Secret-mode golden's control plane: valid, and the same text the tests read."""
    text, _ = _golden("capi-secret")
    node = nodeprograms.nodes_of(libyaml.load_data(text))[0]
    user_data = _user_data(node)
    assert user_data is not None and node.kind == "KubeadmControlPlane"
    job = {"root": str(tmp_path / "n"), "user_data": user_data, "files": node.files}
    read = nodeprograms.cloud_init([dict(job, commands=node.commands)], tmp_path)[0]
    assert nodeprograms.render_with_the_cli(user_data, tmp_path) == read["rendered"]


SAFETY = '[Service]\nEnvironment="HTTP_PROXY=http://u:p%40@h:1"\n'  # a bare % specifier


def test_the_checks_catch_what_they_are_there_to_catch(tmp_path: Path) -> None:
    """A bare ``%`` in a drop-in (systemd reads another value or none), a quote the
    shell ends a word at, and Jinja delimiters in a file are each caught."""
    dropin = tmp_path / "r/etc/systemd/system/kubelet.service.d/p.conf"
    dropin.parent.mkdir(parents=True)
    dropin.write_text(SAFETY)
    with pytest.raises(AssertionError):
        seen = nodeprograms.systemd_units(tmp_path / "r")["kubelet.service"]
        assert seen["Environment"].get("HTTP_PROXY") == "http://u:p%40@h:1"
    with pytest.raises(AssertionError):
        nodeprograms.run_script("export A=it's\n", tmp_path, [], "sh", ["A"])
    files = [{"path": "/etc/x.conf", "content": "a {{ ds.meta_data.hostname }} b\n"}]
    node_spec = {"files": files, "preKubeadmCommands": []}
    user_data = cloudconfig.cloud_config(node_spec, "node")
    read = nodeprograms.cloud_init(
        [{"root": str(tmp_path / "j"), "user_data": user_data, "files": files, "commands": []}],
        tmp_path,
    )[0]
    assert read["files"][0]["content"] == "a node-1 b\n"  # what _check_node holds as a change
    # a drop-in systemd did not read, and a unit with neither values nor an env file
    expect = Expect("http://p:1", [])
    with pytest.raises(AssertionError, match="systemd read"):
        _check_units({}, ["kubelet.service"], [], expect, "node")
    empty: dict[str, dict[str, Any]] = {
        "kubelet.service": {"Environment": {}, "EnvironmentFile": []}
    }
    with pytest.raises(AssertionError, match="no Environment"):
        _check_units(empty, ["kubelet.service"], [], expect, "node")


def test_go_quote_reads_back_in_yaml() -> None:
    """commands.go's %q: what YAML (cloud-init's reader) reads back is the command."""
    for command in ["export A='x\"y'", "a\\b\t$HOME ;#", "é\x01\x7f"]:
        assert libyaml.load_data("- " + cloudconfig.go_quote(command)) == [[command]]
