"""What a Cluster API infrastructure cluster object says must go direct, as data.

One table, :data:`FIELDS`: for each infrastructure kind (group
``infrastructure.cluster.x-k8s.io``), the fields to read, written as paths
(``a.b[].c``: ``[]`` walks a list), and what each holds:

- ``nodes``: a network the nodes have their addresses in (a CIDR);
- ``endpoint``: an infrastructure API the nodes call (a host, an IP, or a URL
  whose host is taken);
- ``region``: an AWS region, which gives the load-balancer DNS suffixes
  (:func:`elb_suffixes`) when the control-plane endpoint is not in the stream.

The paths were read from each provider's CRD (``config/crd/bases`` unless said),
at these commits:

- CAPA kubernetes-sigs/cluster-api-provider-aws 2cf09d78547d32975570a4b9ba5496bdfe26abeb
  (AWSCluster v1beta1 and v1beta2; ``secondaryCidrBlocks`` only in v1beta2);
- CAPZ kubernetes-sigs/cluster-api-provider-azure 69ec3a40a818ccbc32b8ce88c84609404d8cb7a2
  (AzureCluster v1beta1: ``vnet.cidrBlocks`` and ``subnets[].cidrBlocks`` are lists; the
  singular ``cidrBlock`` of v1alpha3 is gone);
- CAPO kubernetes-sigs/cluster-api-provider-openstack e52de58abe6f70f4ad3ad7f7f51632bfd70354b7
  (OpenStackCluster v1beta1 and v1beta2);
- CAPG kubernetes-sigs/cluster-api-provider-gcp 5e0bb3b249cab59aa2720f03094a172fd153666b
  (GCPCluster v1beta1);
- CAPV kubernetes-sigs/cluster-api-provider-vsphere 111a1ba9bc520513125324c90aa3a8b80321fc13
  (``config/default/crd/bases``, VSphereCluster v1beta1 and v1beta2; CAPV hands
  ``spec.server`` to govmomi's ``soap.ParseURL``: a host, ``host:port`` or a URL);
- CAPX nutanix-cloud-native/cluster-api-provider-nutanix 946f0db32e1d28b34cf37740da1ad7546adf793d
  (NutanixCluster v1beta1).

Pure data in, data out: the values read are checked by the caller
(:mod:`proxy_postrender.noproxy.discovery`), as every value of the stream is.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator, Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.patterns import compiled
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from typing import Any

INFRASTRUCTURE_GROUP = "infrastructure.cluster.x-k8s.io"
NODES = "nodes"
ENDPOINT = "endpoint"
REGION = "region"


class Field(FrozenStruct):
    path: str  # "spec.network.subnets[].cidrBlock"
    holds: str  # NODES, ENDPOINT or REGION
    about: str  # what it is, for the report


FIELDS: Mapping[str, tuple[Field, ...]] = {
    "AWSCluster": (
        Field("spec.network.vpc.cidrBlock", NODES, "VPC CIDR"),
        Field("spec.network.vpc.ipv6.cidrBlock", NODES, "VPC IPv6 CIDR"),
        Field("spec.network.vpc.secondaryCidrBlocks[].ipv4CidrBlock", NODES, "VPC CIDR"),
        Field("spec.network.subnets[].cidrBlock", NODES, "subnet CIDR"),
        Field("spec.network.subnets[].ipv6CidrBlock", NODES, "subnet IPv6 CIDR"),
        Field("spec.region", REGION, "load balancers of the region"),
    ),
    "AzureCluster": (
        Field("spec.networkSpec.vnet.cidrBlocks[]", NODES, "VNet CIDR"),
        Field("spec.networkSpec.subnets[].cidrBlocks[]", NODES, "subnet CIDR"),
    ),
    "OpenStackCluster": (Field("spec.managedSubnets[].cidr", NODES, "managed subnet CIDR"),),
    "GCPCluster": (Field("spec.network.subnets[].cidrBlock", NODES, "subnet CIDR"),),
    "VSphereCluster": (Field("spec.server", ENDPOINT, "vCenter"),),
    "NutanixCluster": (Field("spec.prismCentral.address", ENDPOINT, "Prism Central"),),
}


class Default(FrozenStruct):
    """A node network a provider uses when the object names none: ``value`` when nothing
    is at ``path`` nor at any of ``unless`` (the fields that make the provider use
    another network)."""

    path: str
    value: str
    unless: tuple[str, ...]
    about: str  # where the default is, for the report


DEFAULTS: Mapping[str, tuple[Default, ...]] = {
    # pkg/cloud/services/network/vpc.go (createVPC, defaultVPCCidr) at the commit above:
    # a managed VPC (no id) without an IPAM pool gets 10.0.0.0/16
    "AWSCluster": (
        Default(
            "spec.network.vpc.cidrBlock",
            "10.0.0.0/16",
            ("spec.network.vpc.id", "spec.network.vpc.ipamPool"),
            "CAPA's default for the VPC it creates",
        ),
    ),
}


def defaults(kind: str, obj: Mapping[str, Any]) -> Iterator[Default]:
    """The defaults of ``kind`` that apply to ``obj`` (it names none of their fields)."""
    for default in DEFAULTS.get(kind, ()):
        paths = (default.path, *default.unless)
        if not any(next(iter(values(obj, path)), None) for path in paths):
            yield default


# an AWS region as its endpoints are named (us-east-1, eu-central-2, us-gov-west-1, cn-north-1)
_REGION = compiled(r"[a-z]{2}(?:-[a-z]+)+-[0-9]{1,2}")


def values(obj: Mapping[str, Any], path: str) -> Iterator[tuple[str, Any]]:
    """Each value at ``path`` in ``obj`` with where it is (``a.b[1].c``); lists are
    walked at ``[]``, anything of another shape is skipped (the CRD would refuse it)."""
    found: list[tuple[str, Any]] = [("", obj)]
    for step in path.split("."):
        key, walk = (step[:-2], True) if step.endswith("[]") else (step, False)
        following: list[tuple[str, Any]] = []
        for where, value in found:
            child = value.get(key) if isinstance(value, Mapping) else None
            at = f"{where}.{key}" if where else key
            if not walk:
                following.append((at, child))
            elif isinstance(child, list):
                following += [(f"{at}[{i}]", item) for i, item in enumerate(child)]
        found = following
    return ((where, value) for where, value in found if value is not None)


def endpoint_host(value: str) -> str:
    """The host of an endpoint written as a host, ``host:port``, ``[v6]:port``, or a URL,
    with or without a scheme, and without the user information before an ``@`` (govmomi's
    ``soap.ParseURL`` takes ``user:password@host``): never a password. What is none of
    these is returned without its user information, to be refused."""
    rest = value.split("://", 1)[1] if "://" in value else value
    rest = rest.split("/", 1)[0].rsplit("@", 1)[-1]  # the authority, without user info
    if rest.startswith("["):
        host, bracket, port = rest[1:].partition("]")
        return host if bracket and (not port or _is_port(port)) else rest
    if rest.count(":") == 1:  # host:port; an IPv6 address has more colons
        host, _, port = rest.partition(":")
        return host if port.isdigit() else rest
    return rest


def _is_port(text: str) -> bool:
    return text.startswith(":") and text[1:].isdigit()


def is_region(value: str) -> bool:
    return _REGION.fullmatch(value) is not None


def elb_suffixes(region: str) -> tuple[str, str]:
    """The DNS suffixes of the load balancers CAPA makes in ``region``: network and
    application load balancers (``NAME.elb.REGION.amazonaws.com``) and classic ones, its
    default (``NAME.REGION.elb.amazonaws.com``); ``.com.cn`` in the China regions."""
    domain = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f".elb.{region}.{domain}", f".{region}.elb.{domain}"


def outermost(cidrs: Iterable[str]) -> tuple[str, ...]:
    """``cidrs`` (normalised CIDRs or addresses) without those another of them covers (the
    subnets of a VPC that is listed), in their order; the first of equal ones is kept.

    The networks are taken widest first; each is looked up, at each prefix length kept
    so far, in the set of those kept: at most 129 lookups each, not one per other network."""
    texts = list(cidrs)
    networks = [ipaddress.ip_network(text, strict=False) for text in texts]
    order = sorted(range(len(networks)), key=lambda i: (networks[i].prefixlen, i))
    kept: set[tuple[int, int, int]] = set()  # (version, first address, prefix length)
    lengths: dict[int, list[int]] = {4: [], 6: []}  # the prefix lengths kept, ascending
    keep: list[int] = []
    for i in order:
        network = networks[i]
        version, length = network.version, network.prefixlen
        first = int(network.network_address)
        bits = network.max_prefixlen
        if any(
            (version, first >> (bits - wider) << (bits - wider), wider) in kept
            for wider in lengths[version]
        ):
            continue
        kept.add((version, first, length))
        if not lengths[version] or lengths[version][-1] != length:
            lengths[version].append(length)
        keep.append(i)
    return tuple(texts[i] for i in sorted(keep))


# the kinds whose objects can name the nodes' network (the others name none: the
# node-addresses warnings offer them no field to set)
NODE_KINDS: tuple[str, ...] = tuple(
    kind for kind, fields in FIELDS.items() if any(item.holds == NODES for item in fields)
)
