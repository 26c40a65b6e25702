"""Whether the apiserver and the pods are reached direct: the one place that decides.

In-cluster clients call the apiserver by the kubernetes Service address (client-go's
in-cluster config reads ``KUBERNETES_SERVICE_HOST``, an address), nodes call it by
the control-plane endpoint, and pods call each other by pod IP. A NO_PROXY that
does not cover them sends that traffic to the proxy, which is the most common
way controllers and kubeadm's static pods break behind one.

A destination is covered when every client that matters goes direct, as the
models of :mod:`proxy_postrender.noproxy.clients` read the value:

- on nodes, Go alone (kubelet, containerd, kubeadm and the static pods it
  gives the node's proxy variables);
- in workloads, Go, curl and Python requests for the apiserver and the
  control-plane endpoint (controllers, and the Jobs and hooks that call the
  apiserver from a script); Go alone for pod IPs (curl and Python never read an
  IPv6 CIDR, wget no CIDR at all: the per-list warnings say so already).

Each gap is a :class:`Gap` with a code of :data:`CODES`; all of them are strict but
``noproxy/node-addresses-unknown`` (nothing to check: no node network is known).
Pure data in, data out.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from proxy_postrender.errors import DocumentContext
from proxy_postrender.noproxy import clients, syntax
from proxy_postrender.noproxy.clients import Destination
from proxy_postrender.noproxy.scope import ClusterNetwork, first_address
from proxy_postrender.structs import FrozenStruct

APISERVER_SERVICE = "noproxy/apiserver-service"
CONTROL_PLANE_ENDPOINT = "noproxy/control-plane-endpoint"
POD_CIDR = "noproxy/pod-cidr"
NODE_ADDRESSES = "noproxy/node-addresses"
NODE_ADDRESSES_UNKNOWN = "noproxy/node-addresses-unknown"

# code, whether --strict makes it an error, what it means (docs/noproxy.md)
CODES: tuple[tuple[str, bool, str], ...] = (
    (APISERVER_SERVICE, True, "the kubernetes Service address is not in NO_PROXY"),
    (CONTROL_PLANE_ENDPOINT, True, "the control-plane endpoint is not in NO_PROXY"),
    (POD_CIDR, True, "the pod CIDR is not in NO_PROXY"),
    (
        NODE_ADDRESSES,
        True,
        "the nodes' own network is not in the NO_PROXY that reaches kubeadm's static pods",
    ),
    (
        NODE_ADDRESSES_UNKNOWN,
        False,
        "no node network is known for a control plane: the tool cannot check the above",
    ),
)

# kubeadm's service CIDR is 10.96.0.0/12: the kubernetes Service is its first address
DEFAULT_SERVICE_ADDRESS = "10.96.0.1"
SERVICE_PORT = 443
ENDPOINT_PORT = 6443  # Cluster API's and kubeadm's default apiserver port
POD_PORT = 8080  # a pod's port, for the pod CIDRs (any port but the apiserver's)
NODE_CLIENTS: tuple[str, ...] = ("go",)
WORKLOAD_CLIENTS: tuple[str, ...] = ("go", "curl", "requests")
POD_CLIENTS: tuple[str, ...] = ("go",)  # Go only: first_proxied reads it as Go does

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_NO_END = 1 << 129  # above any address: sorts a span (first, any end) before it


class Gap(FrozenStruct):
    """A destination that goes through the proxy: its code, what to say, and the document
    it is about when one object is (a control plane, for the node addresses)."""

    code: str
    message: str
    context: DocumentContext | None = None


def _destination(text: str, port: int) -> Destination | None:
    """A host (or host:port) entry as a request to it; None for a CIDR or a wildcard."""
    try:
        entry = syntax.parse_entry(text)
    except syntax.NoProxyEntryError:
        return None
    if entry.kind not in ("domain", "ip"):
        return None
    if entry.port is not None:
        return clients.parse_destination(entry.text)
    host = entry.text.partition("%")[0]
    return clients.parse_destination(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")


def proxied(value: str, dest: Destination, compared: Sequence[str]) -> list[str]:
    """The clients of ``compared`` that send a request to ``dest`` through the proxy."""
    return [name for name in compared if not clients.RULES[name](value, dest)]


def _names(proxying: Sequence[str]) -> str:
    titles = [clients.TITLES[name] for name in proxying]
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def first_proxied(ranges: clients.GoRanges, cidr: str) -> Address | None:
    """The first address of ``cidr`` Go sends through the proxy, as ``ranges`` (the
    NO_PROXY read once: :func:`clients.go_ranges`) say; None when all go direct."""
    if ranges.everything:
        return None
    network = ipaddress.ip_network(cidr, strict=False)
    first, last = int(network.network_address), int(network.broadcast_address)
    spans = ranges.ranges.get(network.version, ())
    from bisect import bisect_right  # lazy: only profiles that give pod networks

    at = bisect_right(spans, (first, _NO_END)) - 1
    if at >= 0 and spans[at][0] <= first <= spans[at][1]:
        first = spans[at][1] + 1  # the spans do not touch: the next address is proxied
    if first > last:
        return None
    return network.network_address + (first - int(network.network_address))


def _service_addresses(net: ClusterNetwork, assume_default: bool) -> list[tuple[str, str]]:
    """The kubernetes Service addresses of ``net``, each with where it comes from."""
    if net.api_server:
        return [(text, f"{net.label} apiserver address") for text in net.api_server]
    if net.services:
        first = first_address(net.services[0])
        default = " (kubeadm's default)" if net.services_default else ""
        where = f"the first address of {net.label} service CIDR {net.services[0]}{default}"
        return [(first, where)] if first else []
    if assume_default:
        return [(DEFAULT_SERVICE_ADDRESS, "kubeadm's default; no service CIDR is known")]
    return []


def check(
    value: str,
    networks: Sequence[ClusterNetwork],
    *,
    workloads: bool,
    assume_default: bool | None = None,
) -> list[Gap]:
    """What of ``networks`` a NO_PROXY of ``value`` sends through the proxy, for the
    workloads (``workloads``; their network: the profile's spec.cluster) or for the nodes
    of the clusters ``networks`` describe. ``assume_default`` (default: ``workloads``):
    a network without a service CIDR has kubeadm's."""
    if assume_default is None:
        assume_default = workloads
    gaps: list[Gap] = []
    ranges: clients.GoRanges | None = None  # the value read once, for the pod CIDRs
    talkers = WORKLOAD_CLIENTS if workloads else NODE_CLIENTS
    who = (
        "client-go's in-cluster config calls the apiserver by it"
        if workloads
        else "kubelet, containerd and kubeadm's static pods are Go programs"
    )
    for net in networks:
        for address, where in _service_addresses(net, assume_default):
            dest = _destination(address, SERVICE_PORT)
            proxying = proxied(value, dest, talkers) if dest else []
            if proxying:
                hint = (
                    " or set spec.cluster.serviceCIDRs to the cluster's"
                    if where.startswith("kubeadm")
                    else ""
                )
                gaps.append(
                    Gap(
                        APISERVER_SERVICE,
                        f"the kubernetes Service address {address} ({where}) is not covered: "
                        f"{_names(proxying)} send requests for it through the proxy ({who}); "
                        f"add {address} (or the service CIDR) to spec.noProxy{hint}",
                    )
                )
        endpoint = _destination(net.endpoint, ENDPOINT_PORT) if net.endpoint else None
        if endpoint is not None:
            proxying = proxied(value, endpoint, talkers)
            if proxying:
                source = net.endpoint_source or net.label
                gaps.append(
                    Gap(
                        CONTROL_PLANE_ENDPOINT,
                        f"the control-plane endpoint {net.endpoint} ({source}) is not covered: "
                        f"{_names(proxying)} send requests for it through the proxy; add "
                        f"{net.endpoint} (or a domain or CIDR that covers it) to spec.noProxy",
                    )
                )
        for cidr in net.pods:
            ranges = ranges or clients.go_ranges(value, POD_PORT)
            sample = first_proxied(ranges, cidr)
            if sample is not None:
                gaps.append(
                    Gap(
                        POD_CIDR,
                        f"the pod CIDR {cidr} ({net.label}) is not covered: "
                        f"{_names(POD_CLIENTS)} send requests for pod IPs such as {sample} "
                        f"through the proxy (metrics scrapes, webhooks); add {cidr} to "
                        "spec.noProxy",
                    )
                )
    return gaps


_WHY = (
    "kubeadm copies the exported proxy variables into its control plane's static pods "
    "(with spec.nodes.staticPods: extraEnvs, their extraEnvs carry the same NO_PROXY), "
    "and kube-controller-manager and kube-scheduler (from kubeadm 1.33 the kubelet too) "
    "call the apiserver at the node's own address"
)


def node_addresses(value: str, net: ClusterNetwork, profile_nodes: Sequence[str]) -> list[Gap]:
    """Whether a NO_PROXY of ``value``, exported to a control plane's kubeadm (which copies
    it into kube-controller-manager and kube-scheduler; from 1.33 the kubelet too calls the
    apiserver at the node's own address), covers the node networks of ``net`` and the
    profile's (``profile_nodes``): a strict gap for each that it does not; when none is
    known, a gap (not strict) that says the tool cannot check it, and how to let it."""
    known = [*profile_nodes, *net.nodes]
    if not known:
        return [_unknown(net)]
    gaps: list[Gap] = []
    ranges = clients.go_ranges(value, ENDPOINT_PORT)  # read once for all the networks
    for cidr in dict.fromkeys(known):
        source = net.nodes_source if cidr in net.nodes and net.nodes_source else "spec.cluster"
        sample = first_proxied(ranges, cidr)
        if sample is not None:
            gaps.append(
                Gap(
                    NODE_ADDRESSES,
                    f"the node network {cidr} ({source}) of {net.label} is not covered: "
                    f"{_WHY}, and Go sends requests for node addresses such as {sample} "
                    f"through the proxy; add {cidr} (or a CIDR that covers it) to spec.noProxy",
                )
            )
    return gaps


def _unknown(net: ClusterNetwork) -> Gap:
    """That no node network of ``net`` is known, with the fixes that can work for it."""
    from proxy_postrender.noproxy import infrastructure  # lazy: start-up

    fixes = ["set spec.cluster.nodeCIDRs to it (the tool then adds it and checks it)"]
    kind = net.infrastructure_kind
    if kind in infrastructure.NODE_KINDS:
        if net.infrastructure:
            fixes.append(f"give {net.infrastructure} its network (the fields in docs/noproxy.md)")
        elif net.infrastructure_ref:
            fixes.append(f"put {net.infrastructure_ref}, which gives it, in the stream")
    fixes.append(
        "add an entry that covers it to spec.noProxy (the warning stays: set "
        "spec.cluster.nodeCIDRs as well)"
    )
    names = ""
    if net.infrastructure:
        none = "names none" if kind in infrastructure.NODE_KINDS else "has no field for it"
        names = f" ({net.infrastructure} {none})"
    return Gap(
        NODE_ADDRESSES_UNKNOWN,
        f"no node network is known for {net.label}{names}, so the tool cannot check that "
        f"NO_PROXY covers it: {_WHY}, through the proxy unless NO_PROXY covers the node "
        f"addresses; {', '.join(fixes[:-1])}, or {fixes[-1]}",
    )
