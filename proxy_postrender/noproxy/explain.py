"""What ``proxy-postrender noproxy`` prints: the NO_PROXY of each scope, its sources,
and how each client reads it for a set of destinations."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from proxy_postrender.noproxy import advice, clients, presets, scope, syntax
from proxy_postrender.noproxy.clients import Destination
from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
from proxy_postrender.noproxy.syntax import Sourced
from proxy_postrender.structs import Struct


class Scope(Struct, frozen=True):
    label: str  # "workloads" or "Cluster ns/name"
    networks: tuple[ClusterNetwork, ...]
    entries: tuple[Sourced, ...]
    warnings: tuple[str, ...]

    @property
    def value(self) -> str:
        return syntax.join(item.entry for item in self.entries)


def scopes(config: NoProxyConfig, clusters: Sequence[ClusterNetwork]) -> list[Scope]:
    """The workloads' scope, then one per Cluster of the stream."""
    result = []
    for label, nets in [("workloads", ()), *((net.label, (net,)) for net in clusters)]:
        entries = scope.build(config, nets)
        warnings = advice.for_list(entries, config, nets)
        result.append(Scope(label, tuple(nets), tuple(entries), tuple(warnings)))
    return result


def pick(found: Sequence[Scope], cluster: str) -> Scope:
    """The scope of ``cluster`` (NAME or NAMESPACE/NAME)."""
    wanted = [
        s
        for s in found
        if s.label != "workloads"
        and (s.label == f"Cluster {cluster}" or s.label.endswith(f"/{cluster}"))
    ]
    if len(wanted) != 1:
        names = ", ".join(s.label for s in found if s.label != "workloads") or "none"
        problem = "is ambiguous" if wanted else "is not in the stream"
        raise LookupError(f"cluster {cluster!r} {problem} (Clusters found: {names})")
    return wanted[0]


_KIND_NOTES = {
    "cidr4": "CIDR: wget ignores it (and curl before 7.86)",
    "cidr6": "IPv6 CIDR: curl (7.86 to 8.17), Python requests and wget ignore it",
    "suffix": "subdomains only for Go and wget; curl and Python also match the bare domain",
    "port": "with a port: curl and wget ignore it; Python only when the URL names the port",
    "wildcard": "'*': curl and Python honour it only as the whole value; wget never",
}


def note(entry: syntax.NoProxyEntry) -> str:
    if entry.port is not None:
        return _KIND_NOTES["port"]
    if entry.kind == "cidr":
        return _KIND_NOTES["cidr4" if ":" not in entry.text else "cidr6"]
    return _KIND_NOTES.get(entry.kind, "")


def explain(found: Scope) -> str:
    rows = [(item.entry.text, "; ".join(item.sources), note(item.entry)) for item in found.entries]
    width = max([len("entry"), *(len(r[0]) for r in rows)])
    lines = [f"# NO_PROXY for {found.label}", f"{'entry':<{width}}  source — client notes"]
    for text, sources, remark in rows:
        lines.append(f"{text:<{width}}  {sources}" + (f" — {remark}" if remark else ""))
    lines += [f"warning: {w}" for w in found.warnings]
    return "\n".join(lines) + "\n"


def default_destinations(
    config: NoProxyConfig, nets: Sequence[ClusterNetwork]
) -> list[tuple[Destination, str]]:
    """The destinations worth checking in any cluster, from what is known of it."""
    all_nets = [config.cluster, *nets]
    domain = next((n.domain for n in reversed(all_nets) if n.domain), presets.DEFAULT_DOMAIN)
    services = [cidr for n in all_nets for cidr in n.services]
    pods = [cidr for n in all_nets for cidr in n.pods]
    api = next((a for n in all_nets for a in n.api_server), None)
    result = [(clients.parse_destination("kubernetes.default.svc:443"), "apiserver Service name")]
    if api is None and services:
        api = scope.first_address(services[0])
    if api is not None:
        result.append((clients.parse_destination(f"{_host(api)}:443"), "apiserver address"))
    else:
        result.append(
            (clients.parse_destination("10.96.0.1:443"), "apiserver ClusterIP (kubeadm default)")
        )
    if pods:
        network = ipaddress.ip_network(pods[0], strict=False)
        pod_ip = network.network_address + min(10, network.num_addresses - 1)
        result.append(
            (clients.parse_destination(f"{_host(str(pod_ip))}:8080"), f"a pod IP in {pods[0]}")
        )
    result.append(
        (clients.parse_destination(f"my-service.my-namespace.svc.{domain}:443"), "a Service FQDN")
    )
    result.append((clients.parse_destination("http://169.254.169.254/"), "cloud metadata"))
    return result


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


class CheckRow(Struct, frozen=True):
    destination: Destination
    label: str
    direct: dict[str, bool]
    compared: tuple[str, ...] = clients.CLIENTS  # the clients whose agreement counts

    @property
    def agree(self) -> bool:
        return len({self.direct[c] for c in self.compared}) == 1


def check(
    value: str,
    destinations: Sequence[tuple[Destination, str]],
    compared: tuple[str, ...] = clients.CLIENTS,
) -> list[CheckRow]:
    return [CheckRow(d, label, clients.decide(value, d), compared) for d, label in destinations]


def check_table(value: str, rows: Sequence[CheckRow], scope_label: str | None) -> str:
    first = max([len("destination"), *(len(str(r.destination)) for r in rows)])
    lines = [f"NO_PROXY={value}", f"# {scope_label or 'the value given with --value'}", ""]
    header = f"{'destination':<{first}}  " + "  ".join(f"{c:<6}" for c in clients.CLIENTS)
    lines.append(header.rstrip())
    for row in rows:
        cells = "  ".join(f"{'direct' if row.direct[c] else 'PROXY':<6}" for c in clients.CLIENTS)
        flag = "" if row.agree else "  <- clients disagree"
        label = f"  ({row.label})" if row.label else ""
        lines.append(f"{row.destination!s:<{first}}  {cells}{flag}{label}".rstrip())
    lines += ["", "clients: " + ", ".join(f"{c} = {clients.TITLES[c]}" for c in clients.CLIENTS)]
    return "\n".join(lines) + "\n"
