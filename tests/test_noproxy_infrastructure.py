"""NO_PROXY from Cluster API infrastructure cluster objects (issue 28, items 4 and 5):
node networks, infrastructure API endpoints, load-balancer suffixes, the cloud presets,
and the noproxy/node-addresses warning."""

from __future__ import annotations

from typing import Any

import pytest

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.noproxy import coverage, infrastructure, presets
from proxy_postrender.noproxy.discovery import discover
from proxy_postrender.noproxy.scope import ClusterNetwork
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from proxy_postrender.result import CODES
from proxy_postrender.rollout import codes as rollout_codes
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"


def _cluster(kind: str, name: str = "c1", endpoint: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "infrastructureRef": {"apiVersion": INFRA, "kind": kind, "name": name},
        "controlPlaneRef": {
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
            "kind": "KubeadmControlPlane",
            "name": f"{name}-cp",
        },
    }
    if endpoint:
        spec["controlPlaneEndpoint"] = {"host": endpoint, "port": 6443}
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": spec,
    }


def _infra(kind: str, spec: dict[str, Any], api_version: str = INFRA) -> dict[str, Any]:
    meta = {"name": "c1", "namespace": "ns"}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}


def _network(kind: str, spec: dict[str, Any], endpoint: str | None = None) -> ClusterNetwork:
    return discover([_cluster(kind, endpoint=endpoint), _infra(kind, spec)]).clusters[("ns", "c1")]


AWS = {
    "region": "eu-west-1",
    "network": {
        "vpc": {"cidrBlock": "10.20.0.0/16"},
        "subnets": [
            {"cidrBlock": "10.20.0.0/24"},
            {"cidrBlock": "10.20.1.0/24", "ipv6CidrBlock": "2001:db8:1a00::/64"},
        ],
    },
}


@pytest.mark.parametrize(
    ("kind", "spec", "nodes", "fields"),
    [
        (
            "AWSCluster",
            AWS,
            ("10.20.0.0/16", "2001:db8:1a00::/64"),
            "spec.network.vpc.cidrBlock, spec.network.subnets[].ipv6CidrBlock",
        ),
        (
            "AzureCluster",
            {
                "networkSpec": {
                    "vnet": {"cidrBlocks": ["172.18.0.0/16"]},
                    "subnets": [{"cidrBlocks": ["172.18.1.0/24", "fd00:18::/64"]}],
                }
            },
            ("172.18.0.0/16", "fd00:18::/64"),
            "spec.networkSpec.vnet.cidrBlocks[], spec.networkSpec.subnets[].cidrBlocks[]",
        ),
        (
            "OpenStackCluster",
            {"managedSubnets": [{"cidr": "10.6.0.0/24"}]},
            ("10.6.0.0/24",),
            "spec.managedSubnets[].cidr",
        ),
        (
            "GCPCluster",
            {"network": {"subnets": [{"cidrBlock": "10.128.0.0/20"}]}},
            ("10.128.0.0/20",),
            "spec.network.subnets[].cidrBlock",
        ),
    ],
)
def test_node_networks_come_from_the_infrastructure_object(
    kind: str, spec: dict[str, Any], nodes: tuple[str, ...], fields: str
) -> None:
    net = _network(kind, spec, endpoint="api.example")
    assert net.nodes == nodes
    assert net.nodes_source == f"{kind} ns/c1 node networks ({fields})"


@pytest.mark.parametrize(
    ("kind", "spec", "entry", "source"),
    [
        ("VSphereCluster", {"server": "vcenter.corp.example"}, "vcenter.corp.example", "vCenter"),
        ("VSphereCluster", {"server": "https://VC.corp.example:443/sdk"}, "vc.corp.example", ""),
        ("VSphereCluster", {"server": "10.1.2.3:443"}, "10.1.2.3", ""),
        ("VSphereCluster", {"server": "fd00::7"}, "fd00::7", ""),
        ("VSphereCluster", {"server": "https://[fd00::7]/sdk"}, "fd00::7", ""),
        # found by an adversarial test: forms govmomi's soap.ParseURL takes
        ("VSphereCluster", {"server": "[fd00::5]:443"}, "fd00::5", ""),
        ("VSphereCluster", {"server": "admin:S3cretPW@vc.corp.example"}, "vc.corp.example", ""),
        ("VSphereCluster", {"server": "admin:pa$sword@vc.corp.example:443"}, "vc.corp.example", ""),
        (
            "NutanixCluster",
            {"prismCentral": {"address": "prism.corp.example", "port": 9440}},
            "prism.corp.example",
            "Prism Central",
        ),
    ],
)
def test_infrastructure_endpoints_go_direct(
    kind: str, spec: dict[str, Any], entry: str, source: str
) -> None:
    net = _network(kind, spec, endpoint="10.0.0.10")
    ((label, entries),) = net.derived
    assert entries == (entry,)
    assert label.startswith(f"{kind} ns/c1 spec.")
    assert source in label


def test_the_region_gives_the_load_balancer_suffixes_only_without_an_endpoint() -> None:
    net = _network("AWSCluster", AWS)
    ((label, entries),) = net.derived
    assert entries == (".elb.eu-west-1.amazonaws.com", ".eu-west-1.elb.amazonaws.com")
    assert label == "AWSCluster ns/c1 spec.region (load balancers of the region)"
    assert net.endpoint_suffixes == "AWSCluster ns/c1 spec.region eu-west-1"
    assert _network("AWSCluster", AWS, endpoint="api.example").derived == ()
    china = _network("AWSCluster", {"region": "cn-north-1"}).derived[0][1]
    assert china == (".elb.cn-north-1.amazonaws.com.cn", ".cn-north-1.elb.amazonaws.com.cn")


def test_an_object_of_another_group_with_the_same_kind_is_not_read() -> None:
    objects = [_cluster("AWSCluster"), _infra("AWSCluster", AWS, "example.com/v1")]
    net = discover(objects).clusters[("ns", "c1")]
    assert net.nodes == ()
    assert net.derived == ()


def test_variables_still_to_expand_are_left_out_and_reported() -> None:
    spec = {"region": "${AWS_REGION}", "network": {"vpc": {"cidrBlock": "${VPC_CIDR}"}}}
    net = _network("AWSCluster", spec)
    assert net.nodes == ()
    assert net.derived == ()
    assert net.left_out == (
        "AWSCluster ns/c1 spec.network.vpc.cidrBlock ('${VPC_CIDR}')",
        "AWSCluster ns/c1 spec.region ('${AWS_REGION}')",
    )


@pytest.mark.parametrize(
    ("kind", "spec", "message"),
    [
        ("AWSCluster", {"network": {"vpc": {"cidrBlock": "0.0.0.0/0"}}}, "a /0 CIDR is every IPv"),
        (
            "AWSCluster",
            {"network": {"subnets": [{"ipv6CidrBlock": "::/0"}]}},
            "a /0 CIDR is every IPv",
        ),
        ("AWSCluster", {"network": {"vpc": {"cidrBlock": "10.0.0.0/8,*"}}}, "is not a CIDR"),
        ("OpenStackCluster", {"managedSubnets": [{"cidr": "host.example"}]}, "is not a CIDR"),
        ("AWSCluster", {"region": "eu-west-1\n"}, "is not an AWS region"),
        ("VSphereCluster", {"server": "vc.example;reboot"}, "is not a host name"),
        ("NutanixCluster", {"prismCentral": {"address": "{{ ds.meta_data }}"}}, "is not a host"),
    ],
)
def test_values_that_are_no_cidr_or_host_are_refused(
    kind: str, spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        _network(kind, spec)


def test_outermost_keeps_the_networks_no_other_covers() -> None:
    found = infrastructure.outermost(
        ["10.20.0.0/24", "10.20.0.0/16", "fd00::/64", "10.20.0.0/16", "10.30.0.0/24"]
    )
    assert found == ("10.20.0.0/16", "fd00::/64", "10.30.0.0/24")


def test_the_aws_preset_holds_the_credential_endpoints() -> None:
    aws = presets.PRESETS["aws"]
    assert {"169.254.170.2", "169.254.170.23", "fd00:ec2::23"} <= set(aws)


@pytest.mark.parametrize("kind", ["OpenStackCluster", "OpenStackClusterTemplate"])
def test_openstack_clusters_pick_the_openstack_preset(kind: str) -> None:
    assert presets.infrastructure_preset(kind) == "openstack"
    assert presets.PRESETS["openstack"] == ("169.254.169.254",)


# --- noproxy/node-addresses -----------------------------------------------------------


def test_the_codes_are_declared_uncovered_strict_unknown_not() -> None:
    assert CODES[coverage.NODE_ADDRESSES].strict
    assert not CODES[coverage.NODE_ADDRESSES_UNKNOWN].strict


def test_no_node_network_known_is_said_not_strict() -> None:
    (gap,) = coverage.node_addresses("10.0.0.0/8", ClusterNetwork("Cluster ns/a"), ())
    assert gap.code == coverage.NODE_ADDRESSES_UNKNOWN
    assert gap.message.startswith("no node network is known for Cluster ns/a, so the tool ")
    assert "cannot check" in gap.message
    assert "spec.cluster.nodeCIDRs" in gap.message and "spec.noProxy" in gap.message
    assert "in the stream" not in gap.message and "give " not in gap.message


def test_the_unknown_fixes_fit_the_cluster() -> None:
    missing = ClusterNetwork(
        "Cluster ns/a", infrastructure_ref="AWSCluster ns/a", infrastructure_kind="AWSCluster"
    )
    (gap,) = coverage.node_addresses("", missing, ())
    assert "put AWSCluster ns/a, which gives it, in the stream" in gap.message
    # a VSphereCluster names no node network: neither putting it in nor giving it one helps
    for infra in (None, "VSphereCluster ns/a"):
        vsphere = ClusterNetwork(
            "Cluster ns/a",
            infrastructure=infra,
            infrastructure_ref="VSphereCluster ns/a",
            infrastructure_kind="VSphereCluster",
        )
        (gap,) = coverage.node_addresses("", vsphere, ())
        assert "in the stream" not in gap.message and "give " not in gap.message
    assert "(VSphereCluster ns/a has no field for it)" in gap.message
    # the kinds offered are the table's kinds with node-network fields
    assert infrastructure.NODE_KINDS == (
        "AWSCluster",
        "AzureCluster",
        "OpenStackCluster",
        "GCPCluster",
    )


def test_golden_clusters_without_a_known_node_network_pass_strict() -> None:
    for case in ("infra-vsphere", "infra-nutanix", "capi-clusterclass", "capi-v1beta2"):
        text = (GOLDEN / case / "input.yaml").read_text()
        request = to_request(loader.load(str(SHARED_PROFILE), environ={}))
        result = engine.process(text, request)
        codes = {f.code for f in result.findings}
        assert coverage.NODE_ADDRESSES not in codes, case
        # strict: nothing but the lone templates' nodes/no-rollout (tests/test_rollout.py)
        assert {f.code for f in result.findings if f.strict} <= {rollout_codes.NO_ROLLOUT_CODE}, (
            case
        )


def test_a_node_network_not_covered_is_named_with_its_source() -> None:
    net = ClusterNetwork("Cluster ns/a", nodes=("10.20.0.0/16",), nodes_source="AWSCluster ns/a")
    (gap,) = coverage.node_addresses("10.20.0.0/17", net, ())
    assert "the node network 10.20.0.0/16 (AWSCluster ns/a) of Cluster ns/a" in gap.message
    assert "such as 10.20.128.0 " in gap.message
    assert coverage.node_addresses("10.20.0.0/16", net, ()) == []
    profile = coverage.node_addresses("10.0.0.0/8", ClusterNetwork("Cluster ns/a"), ["10.1.0.0/16"])
    assert profile == []


def _findings(text: str, profile: str = str(SHARED_PROFILE)) -> list[str]:
    result = engine.process(text, to_request(loader.load(profile, environ={})))
    codes = (coverage.NODE_ADDRESSES, coverage.NODE_ADDRESSES_UNKNOWN)
    return [f.code for f in result.findings if f.code in codes]


def test_the_warning_follows_the_control_plane_and_the_known_networks() -> None:
    aws = (GOLDEN / "infra-aws" / "input.yaml").read_text()
    unknown = (GOLDEN / "infra-node-addresses-unknown" / "input.yaml").read_text()
    assert _findings(aws) == []  # the AWSCluster gives the VPC
    assert _findings(unknown) == [coverage.NODE_ADDRESSES_UNKNOWN]
    # a worker template's exports reach no static pod
    workers = unknown.replace("kind: KubeadmControlPlane", "kind: KubeadmConfigTemplate")
    assert _findings(workers) == []


def test_spec_cluster_node_cidrs_silences_it(tmp_path: Any) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        SHARED_PROFILE.read_text() + "  cluster:\n    nodeCIDRs: [10.20.0.0/16]\n", "utf-8"
    )
    unknown = (GOLDEN / "infra-node-addresses-unknown" / "input.yaml").read_text()
    assert _findings(unknown, str(profile)) == []


def test_explain_names_the_object_each_entry_came_from() -> None:
    proc = run_cli(
        [
            "noproxy",
            str(SHARED_PROFILE),
            "--explain",
            "--stream",
            str(GOLDEN / "infra-aws" / "input.yaml"),
            "--cluster",
            "aws-1",
        ],
        b"",
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert (
        "AWSCluster fleet/aws-1 node networks (spec.network.vpc.cidrBlock" in lines["10.20.0.0/16"]
    )
    assert "AWSCluster fleet/aws-1 spec.region" in lines[".elb.eu-west-1.amazonaws.com"]
    assert "preset aws (AWSCluster of Cluster fleet/aws-1)" in lines["169.254.170.23"]
    assert "10.20.1.0/24" not in lines  # inside the VPC: not listed again


def test_a_vpc_capa_creates_has_its_default_network() -> None:
    """CAPA creates a managed VPC of 10.0.0.0/16 when the AWSCluster names no VPC, CIDR
    or IPAM pool (pkg/cloud/services/network/vpc.go, createVPC): its nodes are there."""
    net = _network("AWSCluster", {"region": "eu-west-1"})
    assert net.nodes == ("10.0.0.0/16",)
    assert "CAPA's default for the VPC it creates" in (net.nodes_source or "")
    (gap,) = coverage.node_addresses("localhost", net, ())
    assert "10.0.0.0/16" in gap.message
    assert coverage.node_addresses("10.0.0.0/16", net, ()) == []
    for vpc in ({"id": "vpc-123"}, {"ipamPool": {"name": "pool"}}, {"cidrBlock": "${CIDR}"}):
        assert _network("AWSCluster", {"network": {"vpc": vpc}}).nodes == ()


def test_an_infrastructure_object_without_a_network_is_named() -> None:
    net = _network("AWSCluster", {"region": "eu-west-1", "network": {"vpc": {"id": "vpc-1"}}})
    assert net.infrastructure == "AWSCluster ns/c1"
    (gap,) = coverage.node_addresses("10.0.0.0/8", net, ())
    assert gap.message.startswith("no node network is known for Cluster ns/c1 (AWSCluster ")
    assert gap.code == coverage.NODE_ADDRESSES_UNKNOWN
    assert "give AWSCluster ns/c1 its network" in gap.message


@pytest.mark.parametrize(
    "server", ["admin:S3cretPW@vc corp", "https://admin:S3cretPW@{{ x }}/sdk", "admin:S3cretPW@"]
)
def test_a_password_in_an_endpoint_never_reaches_a_message(server: str) -> None:
    """Found by an adversarial test: user information without a scheme was kept in the
    value, and a refusal quoted it (stderr, the log, KRM results)."""
    with pytest.raises(InputError) as info:
        _network("VSphereCluster", {"server": server}, endpoint="10.0.0.10")
    assert "S3cretPW" not in str(info.value)
    assert "admin" not in str(info.value)


def test_a_zone_id_is_no_node_network() -> None:
    spec = {"network": {"vpc": {"ipv6": {"cidrBlock": "fe80::1%eth0"}}}}
    with pytest.raises(InputError, match="zone ID names one link of one host"):
        _network("AWSCluster", spec)


def test_an_object_of_another_group_is_not_the_infrastructure_object() -> None:
    """Found by an adversarial test: objects were found by kind, namespace and name, so
    one of another API group with the same kind and name replaced the real one."""
    other = _infra("AWSCluster", {"network": {"vpc": {"cidrBlock": "10.9.0.0/16"}}}, "x.io/v1")
    real = _infra("AWSCluster", {"network": {"vpc": {"cidrBlock": "10.1.0.0/16"}}})
    for stream in ([_cluster("AWSCluster"), real, other], [_cluster("AWSCluster"), other, real]):
        assert discover(stream).clusters[("ns", "c1")].nodes == ("10.1.0.0/16",)
    # a reference that names the other group gets that object
    cluster = _cluster("AWSCluster")
    cluster["spec"]["infrastructureRef"]["apiVersion"] = "x.io/v1"
    assert discover([cluster, real, other]).clusters[("ns", "c1")].nodes == ()
