"""Hostile proxy values: each lands exactly everywhere the tool writes it, or is refused
with a clear error and nothing written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from proxy_postrender import targets
from proxy_postrender.nodes import classvars
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN, run_cli
from tests.test_node_bootstrap import bash_values, systemd_unquote_environment

HOSTILE_PASSWORDS = [
    "p%ss",
    "$HOME",
    "it's",
    'say "hi"',
    "back\\slash",
    "a@b:c/d#e",
    "`id`",
    "100%",
]
URLS = [
    *(f"http://u:{quote(p, safe='')}@proxy.corp.example:3128" for p in HOSTILE_PASSWORDS),
    "http://user%40corp:pw@proxy.corp.example:3128",  # a user name with @, encoded
    "http://[fd00::1]:3128",  # an IPv6 proxy
    "http://u:p%25%24%27@[fd00::1]:8080",
]


def _profile(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: h}\n"
        f"spec:\n  httpProxy: '{url.replace(chr(39), chr(39) * 2)}'\n  noProxyPresets: []\n"
    )
    return path


@pytest.mark.parametrize("url", URLS)
def test_hostile_values_land_exactly(tmp_path: Path, url: str) -> None:
    stream = (GOLDEN / "capi-v1beta1" / "input.yaml").read_bytes() + (
        b"---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
    )
    proc = run_cli([str(_profile(tmp_path, url))], stream)
    assert proc.returncode == 0, proc.stderr
    docs = libyaml.load_data(proc.stdout.decode())
    pod = docs[-1]
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert env["HTTP_PROXY"] == env["http_proxy"] == url  # YAML reads it back exactly
    for doc in docs:
        found = targets.BUILT_IN.paths(doc, targets.KUBEADM) if isinstance(doc, dict) else ()
        path = found[0] if found else None
        if path is None:
            continue
        spec: Any = doc
        for step in path:
            spec = spec[step]
        dropin = next(f for f in spec["files"] if f["path"].endswith("http-proxy.conf"))
        values = dict(
            systemd_unquote_environment(line) for line in dropin["content"].splitlines()[1:]
        )
        assert values["HTTP_PROXY"] == url  # as systemd reads it
        exports = [c for c in spec["preKubeadmCommands"] if c.startswith("export ")]
        assert bash_values(exports, ["HTTP_PROXY", "http_proxy"]) == [url, url]  # as bash reads it


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://u:p\nx@proxy:3128", "whitespace"),
        ("http://u:p\x01x@proxy:3128", "control character"),
        ("http://u:{{x}}@proxy:3128", "percent-encode them"),
        ("http://user@corp:pw@proxy:3128", "the user name holds '@' (percent-encode: %40)"),
        ("http://u:pw@proxy:3128/path", "must not have a path"),
    ],
)
def test_values_that_cannot_land_safely_are_refused(tmp_path: Path, url: str, message: str) -> None:
    proc = run_cli(["--http-proxy", url], b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    assert proc.returncode == 2 and proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert "pw" not in lines[0]


# --- template code and control characters on the way to node bootstrap --------------
#
# Cluster API renders its cloud-init user data as a Jinja template, so "{{", "{%" and
# "{#" in anything the tool writes into a node would run as code there, as root. Every
# value from the profile or the stream is checked where it comes in, and everything
# written into a node passes a last gate (tests/test_node_bootstrap.py).

JINJA = ("{{", "{%", "{#")
CAPI_V1BETA1 = (GOLDEN / "capi-v1beta1" / "input.yaml").read_text()
CLUSTER_CLASS = (GOLDEN / "capi-clusterclass" / "input.yaml").read_text()
CLASS_CLUSTER = """apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: work
  namespace: default
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ["10.1.0.0/16"]
  topology:
    class: quick-start
    version: v1.32.2
"""
# (name, stream): a KubeadmControlPlane and friends with their Cluster, and a
# ClusterClass whose literal patches get the entries, with a Cluster using it
STREAMS = {
    "kubeadm": CAPI_V1BETA1,
    "clusterclass": CLASS_CLUSTER + "---\n" + CLUSTER_CLASS,
}
MODES = {
    "inline": "",
    "secret": "  nodes:\n    credentials: secret\n    secretName: corp-proxy\n",
}


def _node_profile(tmp_path: Path, mode: str, body: str = "") -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: h}\n"
        "spec:\n  httpProxy: http://proxy.corp.example:3128\n" + MODES[mode] + body
    )
    return path


def _refused(proc: subprocess.CompletedProcess[bytes], code: int) -> str:
    """The one-line reason of a refused run that wrote nothing."""
    assert proc.returncode == code, proc.stderr.decode()
    assert proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_streams_and_modes_of_these_tests_inject(
    tmp_path: Path, stream: str, mode: str
) -> None:
    proc = run_cli([str(_node_profile(tmp_path, mode))], STREAMS[stream].encode())
    assert proc.returncode == 0, proc.stderr
    assert b"http-proxy.conf" in proc.stdout


PROFILE_VALUES = [
    ("no-proxy-zone", "  noProxy: ['fe80::1%{{ds.meta_data.x}}']\n", "zone ID"),
    ("no-proxy-zone-port", "  noProxy: ['[fe80::1%{{x}}]:80']\n", "zone ID"),
    ("no-proxy-cidr-zone", "  noProxy: ['fd00::%{{x}}/64']\n", "a CIDR takes no zone ID"),
    ("endpoint", "  cluster:\n    controlPlaneEndpoint: 'fe80::1%{{x}}'\n", "zone ID"),
    ("api-server", "  cluster:\n    apiServer: ['fe80::1%{#x#}']\n", "zone ID"),
    ("pod-cidrs", "  cluster:\n    podCIDRs: ['fd00::%{{x}}/64']\n", "a CIDR takes no zone ID"),
    ("node-cidrs", "  cluster:\n    nodeCIDRs: ['fe80::1%{{x}}']\n", "zone ID"),
    ("zone-control", "  noProxy: ['fe80::1%a\\x01']\n", "zone ID"),
]


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize(
    ("body", "message"), [v[1:] for v in PROFILE_VALUES], ids=[v[0] for v in PROFILE_VALUES]
)
def test_profile_values_that_would_carry_template_code_are_refused(
    tmp_path: Path, stream: str, mode: str, body: str, message: str
) -> None:
    body = body.replace("'fe80::1%a\\x01'", '"fe80::1%a\\x01"')  # a YAML escape
    proc = run_cli([str(_node_profile(tmp_path, mode, body))], STREAMS[stream].encode())
    assert message in _refused(proc, 2)


SPEC = "spec:\n"  # the first one is the Cluster's, in both streams
NETWORK = "spec:\n  clusterNetwork:\n"
# (name, (where, what is added after it), what the error says)
STREAM_VALUES = [
    (
        "endpoint-zone",
        (SPEC, "  controlPlaneEndpoint: {host: 'fe80::1%{{ds.meta_data.x}}'}\n"),
        "spec.controlPlaneEndpoint.host: 'fe80::1%{{ds.meta_data.x}}' is not a host name",
    ),
    (
        "endpoint-name",
        (SPEC, "  controlPlaneEndpoint: {host: '{{ds.meta_data.x}}'}\n"),
        "spec.controlPlaneEndpoint.host: '{{ds.meta_data.x}}' is not a host name",
    ),
    (
        "endpoint-control",
        (SPEC, '  controlPlaneEndpoint: {host: "fe80::1%\\x01"}\n'),
        "spec.controlPlaneEndpoint.host: 'fe80::1%\\x01' is not a host name",
    ),
    (
        "pod-cidr-zone",
        ("      cidrBlocks: [", "'fd00::%{{x}}/64', "),
        "spec.clusterNetwork.pods.cidrBlocks[0]: 'fd00::%{{x}}/64' is not a CIDR",
    ),
    (
        "service-cidr",
        (NETWORK, "    services: {cidrBlocks: ['10.96.0.0/12{%x%}']}\n"),
        "spec.clusterNetwork.services.cidrBlocks[0]: '10.96.0.0/12{%x%}' is not a CIDR",
    ),
    (
        "service-domain",
        (NETWORK, "    serviceDomain: '{#x#}.local'\n"),
        "spec.clusterNetwork.serviceDomain: '{#x#}.local' is not a domain name",
    ),
]


def _hostile_cluster(stream: str, where: str, text: str) -> str:
    """The stream with ``text`` added to its Cluster, after ``where``."""
    assert where in STREAMS[stream]
    return STREAMS[stream].replace(where, where + text, 1)


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize(
    ("change", "message"), [v[1:] for v in STREAM_VALUES], ids=[v[0] for v in STREAM_VALUES]
)
def test_cluster_values_that_would_carry_template_code_name_the_cluster(
    tmp_path: Path, stream: str, mode: str, change: tuple[str, str], message: str
) -> None:
    text = _hostile_cluster(stream, *change)
    assert text != STREAMS[stream]
    proc = run_cli([str(_node_profile(tmp_path, mode))], text.encode())
    line = _refused(proc, 1)
    assert line.startswith("proxy-postrender: error: document 1 (line 1, Cluster default/work)")
    assert message in line


def test_an_infrastructure_clusters_endpoint_is_checked_too(tmp_path: Path) -> None:
    stream = CAPI_V1BETA1.replace(
        "  controlPlaneRef:",
        "  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, "
        "kind: VSphereCluster, name: work}\n  controlPlaneRef:",
        1,
    ) + (
        "---\n# Source: infra/templates/vsphere.yaml\n"
        "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: VSphereCluster\n"
        "metadata: {name: work, namespace: default}\n"
        "spec:\n  controlPlaneEndpoint: {host: 'fe80::1%{{x}}', port: 6443}\n"
    )
    proc = run_cli([str(_node_profile(tmp_path, "inline"))], stream.encode())
    line = _refused(proc, 1)
    assert "document 6 (line " in line
    assert "VSphereCluster default/work, from infra/templates/vsphere.yaml)" in line
    assert "spec.controlPlaneEndpoint.host: 'fe80::1%{{x}}' is not a host name" in line


def test_template_variables_in_a_cluster_are_left_out_and_reported(tmp_path: Path) -> None:
    stream = CAPI_V1BETA1.replace('["192.168.0.0/16"]', '["${POD_CIDR}", "192.168.0.0/16"]')
    stream = stream.replace(
        "  clusterNetwork:\n",
        "  controlPlaneEndpoint: {host: '${CONTROL_PLANE_ENDPOINT_IP}'}\n"
        "  clusterNetwork:\n    serviceDomain: ${SERVICE_DOMAIN:=cluster.local}\n",
    )
    proc = run_cli([str(_node_profile(tmp_path, "inline")), "--report"], stream.encode())
    assert proc.returncode == 0, proc.stderr
    report = proc.stderr.decode()
    assert "Cluster default/work spec.clusterNetwork.pods.cidrBlocks[0] ('${POD_CIDR}') is a " in (
        report
    )
    assert "spec.clusterNetwork.serviceDomain ('${SERVICE_DOMAIN:=cluster.local}') is a" in report
    assert "the control-plane endpoint of Cluster default/work is not in the stream" in report
    no_proxy = [line for line in proc.stdout.decode().splitlines() if "NO_PROXY=" in line]
    assert no_proxy and all("192.168.0.0/16" in line and "${" not in line for line in no_proxy)


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("mode", sorted(MODES))
def test_nothing_written_into_a_node_holds_template_delimiters(
    tmp_path: Path, stream: str, mode: str
) -> None:
    """Whatever the charts' own commands hold, the tool's entries never add one. The
    one exception is the ClusterClass's own patch (nodes/classvars.py), a Go template
    Cluster API renders: its rendered result holds none (tests/test_clusterclass_variables.py
    renders it with Go's text/template for every golden ClusterClass)."""
    proc = run_cli([str(_node_profile(tmp_path, mode))], STREAMS[stream].encode())
    assert proc.returncode == 0, proc.stderr
    given = json.dumps(libyaml.load_data(STREAMS[stream]), ensure_ascii=False)
    before = sum(given.count(d) for d in JINJA)
    docs = [d for d in libyaml.load_data(proc.stdout.decode()) if d is not None]
    own = 0
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "ClusterClass":
            patches = doc["spec"].get("patches") or []
            own += sum(p.get("name") == classvars.PATCH for p in patches)
            doc["spec"]["patches"] = [p for p in patches if p.get("name") != classvars.PATCH]
    assert own == (1 if stream == "clusterclass" and mode == "inline" else 0)
    text = json.dumps(docs, ensure_ascii=False)
    assert sum(text.count(d) for d in JINJA) == before


def test_a_password_with_a_quote_is_masked_in_diffs_of_export_lines() -> None:
    """shlex.quote writes a quote as '"'"' (export lines, env files): masked too."""
    url = "http://build:it's-s3cr3t@proxy.corp.example:3128"
    proc = run_cli(["--http-proxy", url, "--diff"], CAPI_V1BETA1.encode())
    assert proc.returncode == 1, proc.stderr
    assert b"export HTTP_PROXY=" in proc.stdout
    assert b"s3cr3t" not in proc.stdout
