"""The NO_PROXY of one scope: the workloads, or the nodes of one Cluster API cluster.

Sources are merged in a fixed order, and every entry remembers where it came
from:

1. the profile's ``spec.noProxy`` (installation-wide);
2. the profile's ``spec.cluster`` section (pod and service CIDRs, apiserver
   address, control-plane endpoint, node networks);
3. the presets (``loopback``, ``kubernetes`` for the cluster domain, cloud
   presets named in the profile or picked by a Cluster's infrastructure kind);
4. what was discovered from the Cluster objects of the stream (nodes only).

The ``portable`` style then adds what some clients need to read the list the
way Go does (see docs/noproxy.md).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from proxy_postrender.noproxy import presets, syntax
from proxy_postrender.noproxy.syntax import NoProxyEntry, Sourced
from proxy_postrender.structs import FrozenStruct, field

STYLES = ("portable", "exact")


class ClusterNetwork(FrozenStruct):
    """What is known of one cluster's networks; every field may be empty."""

    label: str  # where the values come from, e.g. "spec.cluster" or "Cluster ns/name"
    # the Cluster object's (namespace, name) and labels, for the profile's spec.clusters
    cluster: tuple[str, str] | None = None
    labels: tuple[tuple[str, str], ...] = ()
    pods: tuple[str, ...] = ()
    services: tuple[str, ...] = ()
    domain: str | None = None
    api_server: tuple[str, ...] = ()
    endpoint: str | None = None  # control-plane endpoint host (no port)
    nodes: tuple[str, ...] = ()
    presets: tuple[str, ...] = ()  # cloud presets picked by the infrastructure kind
    preset_reason: str | None = None  # e.g. "AWSCluster of Cluster ns/name"
    services_default: bool = False  # services is kubeadm's default, the Cluster names none
    endpoint_source: str | None = None  # the object the endpoint was read from
    infrastructure: str | None = None  # the infrastructure object read, e.g. "AWSCluster ns/a"
    # the infrastructure object the Cluster names (in the stream or not) and its kind
    infrastructure_ref: str | None = None
    infrastructure_kind: str | None = None
    # where the node networks were read from, e.g. "AWSCluster ns/name node networks (…)"
    nodes_source: str | None = None
    # other entries read from the stream, each group with where it came from (e.g. the
    # vCenter of a VSphereCluster): (source, entries)
    derived: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the derived group that covers a provider's load-balancer names, when the endpoint is
    # not in the stream (e.g. "AWSCluster ns/name spec.region eu-west-1")
    endpoint_suffixes: str | None = None
    left_out: tuple[str, ...] = ()  # values that are template variables still, for the report

    @property
    def empty(self) -> bool:
        return not (
            self.pods
            or self.services
            or self.domain
            or self.api_server
            or self.endpoint
            or self.nodes
            or self.presets
            or self.derived
        )


class NoProxyConfig(FrozenStruct):
    """The profile's NO_PROXY settings."""

    entries: tuple[NoProxyEntry, ...] = ()
    cluster: ClusterNetwork = field(default_factory=lambda: ClusterNetwork("spec.cluster"))
    presets: tuple[str, ...] = presets.DEFAULT_PRESETS
    style: str = "portable"
    discover: bool = True
    # entries a spec.clusters entry adds after spec.noProxy: (its source, the entries)
    added: tuple[tuple[str, tuple[NoProxyEntry, ...]], ...] = ()


def listed(source: str) -> bool:
    """Whether ``source`` is a list the user wrote: spec.noProxy, or an entry's noProxy."""
    return source == "spec.noProxy" or (
        source.startswith("spec.clusters[") and source.endswith("].noProxy")
    )


def first_address(cidr: str) -> str | None:
    """The first host address of a service CIDR: the ClusterIP of ``kubernetes.default``."""
    network = ipaddress.ip_network(cidr, strict=False)
    if network.num_addresses < 2:
        return None
    return str(network.network_address + 1)


def _entries(values: Iterable[str]) -> list[NoProxyEntry]:
    return [syntax.parse_entry(value) for value in values]


def _network_groups(net: ClusterNetwork, where: str) -> list[tuple[str, list[NoProxyEntry]]]:
    services = f"{where} service CIDRs" + (" (kubeadm default)" if net.services_default else "")
    groups = [(f"{where} pod CIDRs", _entries(net.pods)), (services, _entries(net.services))]
    if net.api_server:
        groups.append((f"{where} apiserver address", _entries(net.api_server)))
    elif net.services:
        # CIDRs are lost on some clients (docs/noproxy.md): name the apiserver IP itself
        first = first_address(net.services[0])
        if first:
            groups.append(
                (f"{where} apiserver ClusterIP (first service address)", _entries([first]))
            )
    if net.endpoint:
        endpoint = f"{net.endpoint_source or where} control-plane endpoint"
        groups.append((endpoint, _entries([net.endpoint])))
    groups.append((net.nodes_source or f"{where} node networks", _entries(net.nodes)))
    groups += [(source, _entries(values)) for source, values in net.derived]
    return groups


def build(config: NoProxyConfig, discovered: Sequence[ClusterNetwork] = ()) -> list[Sourced]:
    """The merged, annotated entries of one scope (``discovered``: its clusters)."""
    groups: list[tuple[str, list[NoProxyEntry]]] = [("spec.noProxy", list(config.entries))]
    groups += [(source, list(entries)) for source, entries in config.added]
    groups += _network_groups(config.cluster, "spec.cluster")
    domains = [net.domain for net in discovered if net.domain]
    if config.cluster.domain:
        domains.insert(0, config.cluster.domain)
    if not domains:
        domains = [presets.DEFAULT_DOMAIN]
    wanted: list[tuple[str, str]] = [(name, "preset " + name) for name in config.presets]
    for net in discovered:
        wanted += [(name, f"preset {name} ({net.preset_reason})") for name in net.presets]
    seen: set[str] = set()
    for name, source in wanted:
        if name in seen:
            continue
        seen.add(name)
        if name == "kubernetes":
            for domain in dict.fromkeys(domains):
                groups.append((source, _entries(presets.preset_entries(name, domain))))
        else:
            groups.append((source, _entries(presets.preset_entries(name, ""))))
    for net in discovered:
        groups += _network_groups(net, net.label)
        if net.domain:
            groups.append((f"{net.label} service domain", _entries([net.domain])))
    merged = syntax.merge(groups)
    return portable(merged) if config.style == "portable" else merged


def portable(entries: list[Sourced]) -> list[Sourced]:
    """Make the list mean the same to every modelled client where it can.

    - ``*`` anywhere: curl, Python and undici honour it only as the whole value
      (proxy-from-env anywhere), so the value becomes ``*``;
    - ``.example.com``: Go, wget and proxy-from-env skip the bare domain that curl,
      Python and undici include, so ``example.com`` is added in front of it (not for
      a single label such as ``.svc``: nobody calls the bare host ``svc``);
    - ``example.com`` from spec.noProxy: proxy-from-env matches that name only, the
      others its subdomains too, so ``.example.com`` is added after it unless a
      listed suffix already covers them (not for a single label);
    - an IPv6 address: undici and proxy-from-env compare the host in brackets, so
      ``[fd00::1]`` is added after ``fd00::1``.

    CIDRs cannot be made portable: :func:`proxy_postrender.noproxy.advice.unportable`.
    """
    wildcard = [item for item in entries if item.entry.kind == "wildcard"]
    if wildcard:
        dropped = len(entries) - 1
        note = f"portable style: '*' alone ({dropped} other entries dropped)"
        return [Sourced(wildcard[0].entry, (*wildcard[0].sources, note))] if dropped else wildcard
    present = {item.entry.text for item in entries}
    suffixes = [
        item.entry.text
        for item in entries
        if item.entry.kind == "suffix" and item.entry.port is None
    ]
    result: list[Sourced] = []

    def add(text: str, entry: syntax.NoProxyEntry, why: str) -> None:
        present.add(text)
        result.append(Sourced(entry, (f"portable style: {why}",)))

    for item in entries:
        entry = item.entry
        if entry.kind == "suffix" and entry.port is None:
            bare = entry.text[1:]
            if "." in bare.rstrip(".") and bare not in present:
                add(bare, syntax.parse_entry(bare), f"the bare domain of {entry.text}")
        result.append(item)
        if entry.kind == "domain" and not any(map(listed, item.sources)):
            continue  # the presets' and the clusters' names are hosts, not domains
        found = node_twin(entry, present, suffixes)
        if found is not None:
            twin, why = found
            if twin.kind == "suffix":
                suffixes.append(twin.text)
            add(twin.text, twin, why)
    return result


def node_twin(
    entry: syntax.NoProxyEntry, present: set[str], suffixes: Sequence[str]
) -> tuple[syntax.NoProxyEntry, str] | None:
    """The entry undici or proxy-from-env need beside ``entry`` to read it as the other
    clients do, and why; None when there is none or the list has it (``present``: the
    texts listed, ``suffixes``: the suffix entries without a port).

    - a name of more than one label: its suffix entry (proxy-from-env matches the name
      alone), unless a listed suffix covers its subdomains;
    - an IPv6 address without a zone: its bracketed form."""
    if entry.port is not None:
        return None
    if entry.kind == "domain":
        below = "." + entry.text
        if "." not in entry.text.rstrip(".") or any(below.endswith(s) for s in suffixes):
            return None
        return syntax.parse_entry(below), f"the subdomains of {entry.text}"
    if entry.kind == "ip" and ":" in entry.text and "%" not in entry.text:
        twin = syntax.bracketed(entry)
        return None if twin.text in present else (twin, f"{entry.text} in brackets")
    return None
