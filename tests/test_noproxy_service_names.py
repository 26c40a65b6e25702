"""Service names are data (issue 27, findings 2, 8 and 13): only what a Service can be
called becomes a NO_PROXY entry, nodes never get the ``services`` preset's names, and
NO_PROXY stays well below the kernel's limit for one environment string."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import run_cli

PROFILE = """\
apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata:
  name: corp
spec:
  httpProxy: http://proxy.corp:3128
  noProxyPresets: [{presets}]
{extra}"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: team-1}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
"""

WORKER = """\
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata: {name: workers, namespace: team-1}
spec:
  template:
    spec:
      joinConfiguration: {}
"""


def _service(name: str, namespace: str = "team-1") -> str:
    return f"apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  namespace: {namespace}\n"


def _profile(
    tmp_path: Path, extra: str = "", presets: str = "loopback, kubernetes, services"
) -> str:
    path = tmp_path / "profile.yaml"
    path.write_text(PROFILE.format(extra=extra, presets=presets))
    return str(path)


def _stream(*docs: str) -> bytes:
    return "---\n".join(docs).encode()


# YAML spellings of names no Service can have: the proxy switched off for everything,
# a CIDR, an escape (ESC), a colon, a dot, upper case, a leading digit
HOSTILE = ['"*"', '"0.0.0.0/0"', '"::/0"', '"10.0.0.0/8"', '"a\\eb"', '"a:b"', "a.b", "Web", "1a"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_name_no_service_can_have_is_an_error_naming_the_document(
    tmp_path: Path, name: str
) -> None:
    """Today '*' and '0.0.0.0/0' switch the proxy off for every workload, and
    '10.0.0.0/8' or ':' end in an internal error: now a one-line error, exit 1."""
    stream = _stream(DEPLOYMENT, _service(name))
    profile = _profile(tmp_path)
    for args in ([profile], ["noproxy", profile, "--stream", "-"]):
        proc = run_cli(args, stream)
        err = proc.stderr.decode()
        assert proc.returncode == 1, (args, err)
        assert "internal error" not in err and proc.stdout == b""
        assert err.count("\n") == 1 and "\x1b" not in err, err
        assert "document 2 (line 10, Service team-1/" in err, err
        assert "is not a DNS-1035 label" in err, err


@pytest.mark.parametrize("name", ['"a\\eb"', '"a:b"', '"*"'])
def test_noproxy_check_names_the_document_too(name: str) -> None:
    proc = run_cli(["noproxy", "check", "--stream", "-"], _stream(_service(name)))
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "internal error" not in err and "\x1b" not in err and err.count("\n") == 1
    assert err.startswith("proxy-postrender: error: document 1 (line 1, Service team-1/"), err


def test_a_namespace_no_namespace_can_have_is_an_error(tmp_path: Path) -> None:
    proc = run_cli([_profile(tmp_path)], _stream(DEPLOYMENT, _service("web-1", '"a.b"')))
    assert proc.returncode == 1
    assert b"the namespace 'a.b' is not a DNS-1123 label" in proc.stderr
    bad = run_cli([_profile(tmp_path), "--namespace", "*"], _stream(DEPLOYMENT, WORKER))
    assert bad.returncode == 2 and b"--namespace: the namespace '*'" in bad.stderr


def test_the_rules_are_kubernetes_own() -> None:
    from proxy_postrender.noproxy import services  # lazy: the old tree lacks them

    assert services.name_problem("a" * 63) is None
    assert services.name_problem("a" * 64) is not None
    assert services.name_problem("web-1") is None
    assert services.name_problem("1web") is not None  # DNS-1035: a letter first
    assert services.name_problem("web-") is not None
    assert services.name_problem(5) is not None
    assert services.namespace_problem("1-team") is None  # DNS-1123: a digit may lead
    assert services.namespace_problem("") is not None
    for label in ("com", "shop", "io", "xn--p1ai", "ab--c"):
        assert services.may_be_top_level(label), label
    for label in ("kube-system", "team1", "a-b", "x9"):
        assert not services.may_be_top_level(label), label


def _no_proxy_values(text: str) -> set[str]:
    return set(re.findall(r"NO_PROXY=([^\s\"\\]+)", text)) | set(
        re.findall(r"name: NO_PROXY\n\s+value: \"?([^\"\n]+)", text)
    )


@pytest.mark.parametrize("discovery", ["", "  noProxyDiscovery: false\n"])
def test_nodes_never_get_the_service_names(tmp_path: Path, discovery: str) -> None:
    """With noProxyDiscovery: false the node objects took the workloads' list, Service
    names included, into containerd's, kubelet's and kubeadm's environment."""
    profile = _profile(tmp_path, discovery)
    proc = run_cli([profile], _stream(DEPLOYMENT, _service("web-1"), WORKER))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    workloads, nodes = out.split("kind: KubeadmConfigTemplate", 1)
    assert any("web-1,web-1.team-1" in v for v in _no_proxy_values(workloads)), workloads
    found = _no_proxy_values(nodes)
    assert found, nodes
    assert all("web-1" not in value for value in found), found
    assert "web-1" not in nodes


def _names(count: int, length: int) -> list[str]:
    return [f"s{i:05d}-" + "a" * (length - 7) for i in range(count)]


def test_the_size_limit_is_the_kernels() -> None:
    """MAX_ARG_STRLEN measured with a real execve: one environment string of 131072
    bytes (NUL included) starts, one byte more is E2BIG; the tool's bound is well below."""
    from proxy_postrender.noproxy import size  # lazy: the old tree lacks them

    fits = "x" * (size.MAX_ARG_STRLEN - len("NO_PROXY=") - 1)
    env = {"PATH": os.environ.get("PATH", "")}
    ok = subprocess.run(
        [sys.executable, "-c", "import os; print(len(os.environ['NO_PROXY']))"],
        env={**env, "NO_PROXY": fits},
        capture_output=True,
        check=True,
    )
    assert int(ok.stdout) == len(fits)
    with pytest.raises(OSError) as raised:
        subprocess.run(
            [sys.executable, "-c", "0"], env={**env, "NO_PROXY": fits + "x"}, check=False
        )
    assert raised.value.errno == 7  # E2BIG: "Argument list too long"
    assert size.LIMIT <= size.MAX_ARG_STRLEN // 2


def test_many_services_are_an_error_before_the_kernel_refuses(tmp_path: Path) -> None:
    """700 long Service names made a NO_PROXY of 134,527 bytes with exit 0: every
    container then failed to start. Now an error naming the cause, exit 1."""
    docs = [_service(name) for name in _names(700, 63)]
    proc = run_cli([_profile(tmp_path)], _stream(DEPLOYMENT, *docs))
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "NO_PROXY of the workloads would be" in err and "services preset" in err
    assert err.count("\n") == 1 and proc.stdout == b""
    # the error names a document, as every error does: the last Service counted
    assert f"document {len(docs) + 1} (line " in err and f"/{_names(700, 63)[-1]})" in err


def test_a_large_no_proxy_is_a_warning_long_before(tmp_path: Path) -> None:
    from proxy_postrender.noproxy import size  # lazy: the old tree lacks them

    docs = [_service(name) for name in _names(60, 40)]
    stream = _stream(DEPLOYMENT, *docs)
    proc = run_cli([_profile(tmp_path), "--report"], stream)
    assert proc.returncode == 0, proc.stderr
    value = next(iter(_no_proxy_values(proc.stdout.decode())))
    assert size.WARN < size.environment_bytes(value) < size.LIMIT
    assert b"bytes of environment with no_proxy in every container" in proc.stderr
    assert b"[noproxy/size]" in proc.stderr
    strict = run_cli([_profile(tmp_path), "--strict"], stream)
    assert strict.returncode == 1 and b"[noproxy/size; --strict]" in strict.stderr
    # the value the tool would write still starts a process
    subprocess.run(
        [sys.executable, "-c", "0"], env={"NO_PROXY": value, "no_proxy": value}, check=True
    )


def test_a_profile_whose_no_proxy_is_too_large_is_a_profile_error(tmp_path: Path) -> None:
    names = ",".join(f"h{i}.corp.example" for i in range(3000))
    profile = _profile(tmp_path, f"  noProxy: '{names}'\n", "loopback")
    proc = run_cli([profile], DEPLOYMENT.encode())
    assert proc.returncode == 2, proc.stderr
    assert b"NO_PROXY of the workloads would be" in proc.stderr


_NAME_TEXT = st.text(alphabet="az09-.*/:[]%_ \x1b\tAZé", min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(name=_NAME_TEXT, namespace=_NAME_TEXT)
def test_any_service_name_is_refused_or_written_only_in_a_safe_form(
    name: str, namespace: str
) -> None:
    """Whatever a Service is called, the preset either refuses its document or writes
    only NAME / NAME.NAMESPACE whose last label holds a digit or a hyphen."""
    from proxy_postrender.errors import InputError
    from proxy_postrender.noproxy import clients, discovery, presets, scope, services
    from proxy_postrender.noproxy.scope import NoProxyConfig
    from proxy_postrender.yamltext import stream

    doc = f"apiVersion: v1\nkind: Service\nmetadata:\n  name: {json.dumps(name)}\n"
    doc += f"  namespace: {json.dumps(namespace)}\n"
    try:
        found = discovery.discover_services(stream.split(doc))
    except InputError as exc:
        assert exc.context is not None and exc.context.index == 1
        assert services.name_problem(name) or services.namespace_problem(namespace)
        return
    entries = scope.build(NoProxyConfig(presets=("loopback", "kubernetes", "services")))
    resolved = presets.resolve_services(entries, [(s.namespace, s.name) for s in found])
    added = [item.entry.text for item in resolved.entries[len(entries) :]]
    assert set(added) <= {name, f"{name}.{namespace}"}
    assert all(not services.may_be_top_level(entry.rsplit(".", 1)[-1]) for entry in added)
    value = ",".join(item.entry.text for item in resolved.entries)
    for host in ("example.com", "10.1.2.3", "x.example.org"):
        dest = clients.parse_destination(host)
        assert not any(clients.decide_all(value, dest).values()), (value, host)


def test_a_node_no_proxy_too_large_is_an_error_naming_the_object(tmp_path: Path) -> None:
    """The nodes' NO_PROXY is bounded alike: a Cluster of the stream with thousands of
    pod CIDRs would give kubelet and containerd an environment no process starts with."""
    blocks = ", ".join(f'"10.{i // 256}.{i % 256}.0/24"' for i in range(3000))
    cluster = (
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\n"
        "metadata: {name: big, namespace: team-1}\n"
        f"spec:\n  clusterNetwork:\n    pods:\n      cidrBlocks: [{blocks}]\n"
    )
    profile = _profile(tmp_path, presets="loopback, kubernetes")
    proc = run_cli([profile], _stream(cluster, WORKER))
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "document 2 (line 8, KubeadmConfigTemplate team-1/workers)" in err, err
    assert "NO_PROXY of the nodes of Cluster team-1/big would be" in err, err
