"""The apiserver and the pods must not go through the proxy (issue 20, item 3): each
coverage warning fires on its shape and not on the default profile, --strict makes it an
error that writes nothing, and --report and the KRM results carry it."""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import pytest

from proxy_postrender import engine
from proxy_postrender.noproxy import clients, coverage, infrastructure
from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from proxy_postrender.request import Request
from proxy_postrender.result import CODES
from proxy_postrender.rollout import codes as rollout_codes
from proxy_postrender.yamltext import libyaml
from tests.helpers import FIXTURES, GOLDEN, SHARED_PROFILE, resource_list, run_cli

CASE = GOLDEN / "noproxy-coverage-workloads"
PROFILE = CASE / "profile.yaml"
WORKLOAD = (CASE / "input.yaml").read_text()
DEMO = FIXTURES / "demo"


def _request(profile: Path) -> Request:
    return to_request(loader.load(str(profile), environ={}))


def _codes(gaps: list[coverage.Gap]) -> list[str]:
    return [gap.code for gap in gaps]


def test_the_codes_are_declared_and_strict() -> None:
    for code in (
        coverage.APISERVER_SERVICE,
        coverage.CONTROL_PLANE_ENDPOINT,
        coverage.POD_CIDR,
        coverage.NODE_ADDRESSES,
    ):
        assert CODES[code].strict


@pytest.mark.parametrize(
    ("value", "codes"),
    [
        ("", [coverage.APISERVER_SERVICE]),
        (".svc,cluster.local", [coverage.APISERVER_SERVICE]),
        ("10.96.0.1", []),
        ("10.96.0.0/12", []),
        ("10.0.0.0/8", []),
        ("*", []),
        ("10.96.0.1:6443", [coverage.APISERVER_SERVICE]),  # not the Service's port
    ],
)
def test_the_default_service_address_of_the_workloads(value: str, codes: list[str]) -> None:
    net = ClusterNetwork("spec.cluster")
    assert _codes(coverage.check(value, [net], workloads=True)) == codes
    # nodes assume nothing unless told to
    assert coverage.check(value, [net], workloads=False) == []


def test_the_first_address_of_a_known_service_cidr() -> None:
    net = ClusterNetwork("Cluster ns/a", services=("172.20.0.0/16",))
    (gap,) = coverage.check("10.0.0.0/8", [net], workloads=False)
    assert gap.code == coverage.APISERVER_SERVICE
    assert "172.20.0.1 (the first address of Cluster ns/a service CIDR" in gap.message
    assert "Go (net/http)" in gap.message
    assert coverage.check("172.20.0.0/16", [net], workloads=False) == []


def test_a_client_that_would_go_through_the_proxy_is_named() -> None:
    # '*' among other entries: Go honours it, curl and Python only as the whole value
    (gap,) = coverage.check("*,.svc", [ClusterNetwork("spec.cluster")], workloads=True)
    assert "curl 7.87-8.8 and Python requests >= 2.34 send requests" in gap.message
    assert "Go" not in gap.message.split(" send ")[0]
    # nodes run Go programs only
    net = ClusterNetwork("spec.cluster")
    assert coverage.check("*,.svc", [net], workloads=False, assume_default=True) == []


@pytest.mark.parametrize(
    ("endpoint", "value", "covered"),
    [
        ("api.corp.example", "corp.example", True),
        ("api.corp.example", ".corp.example", True),
        ("api.corp.example", "other.example", False),
        ("192.0.2.10", "192.0.2.0/24", True),
        ("192.0.2.10", "192.0.2.11", False),
        ("fd00::10", "fd00::/64", True),
    ],
)
def test_the_control_plane_endpoint(endpoint: str, value: str, covered: bool) -> None:
    net = ClusterNetwork("Cluster ns/a", endpoint=endpoint, endpoint_source="AWSCluster ns/a")
    gaps = coverage.check(value, [net], workloads=False)
    assert _codes(gaps) == ([] if covered else [coverage.CONTROL_PLANE_ENDPOINT])
    if not covered:
        assert f"{endpoint} (AWSCluster ns/a) is not covered" in gaps[0].message


@pytest.mark.parametrize(
    ("value", "example"),
    [
        ("192.168.0.0/16", None),
        ("192.168.0.0/17,192.168.128.0/17", None),
        ("192.168.0.0/17", "192.168.128.0"),  # the upper half is missing
        ("192.168.1.0/24", "192.168.0.0"),
        ("192.168.0.0/24,192.168.2.0/23", "192.168.1.0"),
        ("10.0.0.0/8", "192.168.0.0"),
    ],
)
def test_the_pod_cidr_is_covered_as_a_whole(value: str, example: str | None) -> None:
    net = ClusterNetwork("Cluster ns/a", pods=("192.168.0.0/16",))
    gaps = coverage.check(value, [net], workloads=False)
    if example is None:
        assert gaps == []
    else:
        (gap,) = gaps
        assert gap.code == coverage.POD_CIDR
        assert f"pod IPs such as {example} " in gap.message


def test_the_built_list_covers_what_it_adds() -> None:
    """Every value the tool adds from spec.cluster or a Cluster is covered: the check speaks
    only when the user's noProxy or a missing service CIDR leaves a gap."""
    from proxy_postrender.noproxy import scope, syntax

    net = ClusterNetwork(
        "Cluster ns/a",
        pods=("192.168.0.0/16", "fd00:1::/56"),
        services=("10.128.0.0/12",),
        endpoint="api.corp.example",
    )
    config = NoProxyConfig(presets=())
    value = syntax.join(item.entry for item in scope.build(config, [net]))
    assert coverage.check(value, [net], workloads=False) == []


def test_the_default_profile_of_the_demo_and_the_golden_cases_is_quiet() -> None:
    """Quiet but for the node addresses not known (not strict): the shared golden profile
    names no node network, and the golden control planes' infrastructure objects give none
    (the demo's profile does); never the strict noproxy/node-addresses."""
    for profile, text, node_addresses in [
        (DEMO / "profile.yaml", (DEMO / "rendered.yaml").read_text(), False),
        (SHARED_PROFILE, (GOLDEN / "capi-v1beta2" / "input.yaml").read_text(), True),
        (SHARED_PROFILE, (GOLDEN / "capi-two-clusters" / "input.yaml").read_text(), True),
    ]:
        result = engine.process(text, _request(profile))
        codes = [f.code for f in result.findings if f.code.startswith("noproxy/")]
        assert [c for c in codes if c != coverage.NODE_ADDRESSES_UNKNOWN] == []
        assert (coverage.NODE_ADDRESSES_UNKNOWN in codes) is node_addresses
        # strict: nothing but the lone templates' nodes/no-rollout (tests/test_rollout.py)
        strict = {f.code for f in result.findings if f.strict}
        assert strict <= {rollout_codes.NO_ROLLOUT_CODE}


def test_the_workloads_warning_names_the_scope() -> None:
    result = engine.process(WORKLOAD, _request(PROFILE))
    (finding,) = result.findings
    assert finding.code == coverage.APISERVER_SERVICE
    assert finding.message.startswith("NO_PROXY of the workloads: the kubernetes Service")


def test_no_warning_without_a_workload_or_node_object() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
    assert engine.process(text, _request(PROFILE)).findings == []


def test_node_objects_matched_to_no_cluster() -> None:
    text = (GOLDEN / "capi-v1beta2" / "input.yaml").read_text()
    # without its Cluster the templates get the profile's list, which lacks 10.96.0.1
    docs = [d for d in text.split("---\n") if "kind: Cluster\n" not in d]
    result = engine.process("---\n".join(docs), _request(PROFILE))
    messages = [f.message for f in result.findings if f.code == coverage.APISERVER_SERVICE]
    assert any(m.startswith("NO_PROXY of the nodes matched to no Cluster: ") for m in messages)


def test_report_carries_the_warning() -> None:
    proc = run_cli([str(PROFILE), "--report"], WORKLOAD.encode())
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == (CASE / "expected.yaml").read_bytes()
    lines = [line for line in proc.stderr.decode().splitlines() if "[noproxy/" in line]
    assert len(lines) == 1
    assert lines[0].startswith("  warning NO_PROXY of the workloads: ")
    assert lines[0].endswith("[noproxy/apiserver-service]")


@pytest.mark.parametrize("how", ["flag", "profile"])
def test_strict_is_an_error_that_writes_nothing(how: str, tmp_path: Path) -> None:
    if how == "flag":
        args = [str(PROFILE), "--strict"]
    else:
        strict = tmp_path / "strict.yaml"
        strict.write_text(PROFILE.read_text() + "  strict: true\n")
        args = [str(strict)]
    proc = run_cli(args, WORKLOAD.encode())
    assert proc.returncode == 1
    assert proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert line.endswith("[noproxy/apiserver-service; --strict]")


def _resource_list(strict: bool) -> bytes:
    (profile,) = libyaml.load_data(PROFILE.read_text())
    profile["spec"]["strict"] = strict
    return resource_list([libyaml.load_data(WORKLOAD)[0]], profile)


def test_krm_results_carry_the_warning() -> None:
    proc = run_cli([], _resource_list(False))
    assert proc.returncode == 0, proc.stderr.decode()
    (data,) = libyaml.load_data(proc.stdout.decode())
    found = [r for r in data["results"] if r.get("tags", {}).get("code", "").startswith("noproxy/")]
    assert len(found) == 1
    assert found[0]["severity"] == "warning"
    assert found[0]["tags"] == {"code": coverage.APISERVER_SERVICE, "strict": "true"}


def test_krm_strict_is_an_error_result() -> None:
    proc = run_cli([], _resource_list(True))
    assert proc.returncode == 1
    (data,) = libyaml.load_data(proc.stdout.decode())
    assert [r["severity"] for r in data["results"]] == ["error"]
    assert "[noproxy/apiserver-service; --strict]" in data["results"][0]["message"]


# --- the node and pod CIDRs: the value read once (issue 28 item 5 review) -------------


def _ipaddress_calls(work: Callable[[], object]) -> int:
    """How many functions of the ipaddress module ``work`` calls (a count, not a time)."""
    calls = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.endswith("ipaddress.py"):
            calls += 1

    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(None)
    return calls


def _node_check(count: int) -> Callable[[], object]:
    cidrs = tuple(f"10.{i // 256}.{i % 256}.0/24" for i in range(count))
    value = ",".join(("localhost", ".svc", *cidrs))
    net = ClusterNetwork("Cluster ns/a", nodes=cidrs, pods=cidrs)
    return lambda: (
        coverage.node_addresses(value, net, ()),
        coverage.check(value, [net], workloads=False),
        infrastructure.outermost([*cidrs, "10.0.0.0/8", *cidrs]),
    )


def test_node_and_pod_cidrs_cost_linear_work_in_their_number() -> None:
    small, large = (_ipaddress_calls(_node_check(n)) for n in (50, 400))
    # 8 times the networks: 8 times the work (the value was read once per network, and
    # outermost compared each network with each other: 64 times)
    assert large <= 9 * small, (small, large)


def _reference_first_proxied(value: str, cidr: str, port: int) -> str | None:
    """The first proxied address of ``cidr`` by asking go_direct about every address."""
    for address in ipaddress.ip_network(cidr, strict=False):
        dest = clients.parse_destination(
            f"[{address}]:{port}" if address.version == 6 else f"{address}:{port}"
        )
        if not clients.go_direct(value, dest):
            return str(address)
    return None


@pytest.mark.parametrize(
    "value",
    [
        "",
        "*",
        "10.0.0.0/29",
        "10.0.0.0/30,10.0.0.4",
        "10.0.0.1,10.0.0.0:6443,10.0.0.2:80,10.0.0.3:6443",
        " 10.0.0.0/31 , 10.0.0.2/31,bad/cidr,example.com,10.0.0.5/32",
        "fd00::/126,fd00::4,[fd00::5]:6443,[fd00::6]:80,fe80::1%eth0",
        "10.0.0.0/28,fd00::/120",
        "127.0.0.1,10.0.0.7",
    ],
)
@pytest.mark.parametrize("cidr", ["10.0.0.0/29", "fd00::/125", "127.0.0.0/30", "10.0.0.6/31"])
def test_first_proxied_reads_the_value_as_go_does(value: str, cidr: str) -> None:
    ranges = clients.go_ranges(value, 6443)
    found = coverage.first_proxied(ranges, cidr)
    assert (str(found) if found else None) == _reference_first_proxied(value, cidr, 6443)


def test_outermost_keeps_order_and_the_first_of_equal_ones() -> None:
    texts = ["10.1.0.0/24", "fd00::/64", "10.1.0.0/24", "10.0.0.0/8", "fd00::1", "10.1.0.5"]
    assert infrastructure.outermost(texts) == ("fd00::/64", "10.0.0.0/8")
    assert infrastructure.outermost(["10.2.0.0/16", "10.1.0.0/16", "10.2.0.0/16"]) == (
        "10.2.0.0/16",
        "10.1.0.0/16",
    )
    assert infrastructure.outermost(iter(["10.0.0.1", "10.0.0.0/31"])) == ("10.0.0.0/31",)
