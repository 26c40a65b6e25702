"""What ``proxy-postrender noproxy`` prints: the NO_PROXY of each scope, its sources,
and how each client reads it for a set of destinations."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence

from proxy_postrender.noproxy import advice, clients, presets, scope, size, syntax
from proxy_postrender.noproxy.clients import Destination
from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
from proxy_postrender.noproxy.syntax import Sourced
from proxy_postrender.structs import FrozenStruct, replace

ServiceName = tuple[str, str, int | None]  # namespace ("" when unknown), name, first port


class Scope(FrozenStruct):
    label: str  # "workloads" or "Cluster ns/name"
    networks: tuple[ClusterNetwork, ...]
    entries: tuple[Sourced, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...] = ()  # e.g. what the services preset cost
    entry: str | None = None  # the profile's spec.clusters entry it was made from
    # why the tool writes no NO_PROXY for this Cluster's nodes (none of them is of a kind
    # it configures); None: it does
    unconfigured: str | None = None

    @property
    def value(self) -> str:
        return syntax.join(item.entry for item in self.entries)


def scopes(
    config: NoProxyConfig,
    clusters: Sequence[ClusterNetwork],
    services: Sequence[tuple[str, str]] = (),
    entry_of: Callable[[ClusterNetwork], tuple[NoProxyConfig, str | None]] | None = None,
    workloads_entry: str | None = None,
    unconfigured: Mapping[str, str] | None = None,
) -> list[Scope]:
    """The workloads' scope, then one per Cluster of the stream; ``services`` are the
    stream's Services ``(namespace, name)``, for the ``services`` preset (workloads only:
    nodes do not resolve Service names). ``entry_of``: the settings of a Cluster's
    spec.clusters entry and its name (None: the defaults'); ``workloads_entry``: the
    entry ``config`` is, when it is one. ``unconfigured``: the Clusters (by label) none
    of whose nodes the tool configures, with why."""
    result = []
    for label, nets in [("workloads", ()), *((net.label, (net,)) for net in clusters)]:
        chosen, where = config, workloads_entry
        if nets and entry_of is not None:
            chosen, where = entry_of(nets[0])
        found = _scope(label, nets, chosen, services, where)
        if nets and unconfigured and label in unconfigured:
            found = replace(found, warnings=(), notes=(), unconfigured=unconfigured[label])
        result.append(found)
    return result


def _scope(
    label: str,
    nets: tuple[ClusterNetwork, ...],
    config: NoProxyConfig,
    services: Sequence[tuple[str, str]],
    where: str | None,
) -> Scope:
    """One scope: the workloads' (no ``nets``) or the nodes' of one Cluster."""
    entries = scope.build(config, nets)
    notes: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    if not nets and presets.SERVICES in config.presets:
        resolved = presets.resolve_services(entries, services)
        entries, notes, left_out = list(resolved.entries), (resolved.cost,), resolved.left_out
    warnings = [*advice.for_list(entries, config, nets), *left_out]
    about = f"the nodes of {label}" if nets else "the workloads"
    large = size.large(syntax.join(item.entry for item in entries), about)
    if large is not None:
        warnings.append(large)
    notes += tuple(advice.unportable(entries))
    return Scope(label, tuple(nets), tuple(entries), tuple(warnings), notes, where)


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
    "cidr4": "CIDR: wget ignores it (and curl before 7.86); so do undici and proxy-from-env",
    "cidr6": "IPv6 CIDR: curl (7.86 to 8.17), Python requests, wget, Java, undici and "
    "proxy-from-env ignore it",
    "suffix": "subdomains only for Go, wget, Java and proxy-from-env; curl, Python and undici "
    "also match the bare domain",
    "bracketed": "IPv6 in brackets: undici and proxy-from-env match it; the others ignore it",
    "port": "with a port: curl and wget ignore it; Python only when the URL names the port",
    "wildcard": "'*': curl, Python and undici honour it only as the whole value; wget never",
}


def note(entry: syntax.NoProxyEntry) -> str:
    if entry.port is not None:
        return _KIND_NOTES["port"]
    if entry.kind == "cidr" and ":" in entry.text:
        return _KIND_NOTES["cidr6"]
    if entry.kind == "cidr":
        java = "" if advice.java_reads(entry) else "; Java too (it has no form for a network)"
        return _KIND_NOTES["cidr4"] + java
    return _KIND_NOTES.get(entry.kind, "")


def not_written(found: Scope) -> str:
    """What is said instead of the NO_PROXY of a Cluster whose nodes the tool does not
    configure."""
    return f"not written: {found.unconfigured}; give them their proxy by the provider's own means"


def explain(found: Scope) -> str:
    if found.unconfigured is not None:
        return f"# NO_PROXY for {found.label}\n{not_written(found)}\n"
    rows = [(item.entry.text, "; ".join(item.sources), note(item.entry)) for item in found.entries]
    width = max([len("entry"), *(len(r[0]) for r in rows)])
    settings = f" (the settings of {found.entry})" if found.entry else ""
    lines = [
        f"# NO_PROXY for {found.label}{settings}",
        f"{'entry':<{width}}  source — client notes",
    ]
    for text, sources, remark in rows:
        lines.append(f"{text:<{width}}  {sources}" + (f" — {remark}" if remark else ""))
    lines += [f"note: {n}" for n in found.notes]
    lines += [f"warning: {w}" for w in found.warnings]
    return "\n".join(lines) + "\n"


def default_destinations(
    config: NoProxyConfig,
    nets: Sequence[ClusterNetwork],
    named: Iterable[ServiceName] = (),
) -> list[tuple[Destination, str]]:
    """The destinations worth checking in any cluster, from what is known of it: the
    apiserver (its three short names and its address), a pod IP, a Service FQDN, the
    metadata endpoint, then the short names of each Service ``named`` (the stream's)."""
    all_nets = [config.cluster, *nets]
    domain = next((n.domain for n in reversed(all_nets) if n.domain), presets.DEFAULT_DOMAIN)
    services = [cidr for n in all_nets for cidr in n.services]
    pods = [cidr for n in all_nets for cidr in n.pods]
    api = next((a for n in all_nets for a in n.api_server), None)
    result = [
        (clients.parse_destination(f"{name}:443"), "apiserver Service name")
        for name in service_forms("default", "kubernetes")
    ]
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
    for namespace, name, port in named:
        label = f"Service {namespace + '/' if namespace else ''}{name}"
        for form in service_forms(namespace, name):
            destination = clients.parse_destination(f"{form}:{port or 443}")
            if destination not in [d for d, _ in result]:
                result.append((destination, label))
    return result


def service_forms(namespace: str, name: str) -> list[str]:
    """The names a pod may call a Service by without the cluster domain: ``name``,
    ``name.namespace``, ``name.namespace.svc`` (only ``name`` when the namespace is
    unknown)."""
    if not namespace:
        return [name]
    return [name, f"{name}.{namespace}", f"{name}.{namespace}.svc"]


def fix_for(value: str, destination: Destination) -> str | None:
    """The one entry that makes every client go direct to ``destination`` when added to
    ``value``: ``.svc`` for ``NAME.NAMESPACE.svc``, else the name itself."""
    host = destination.host
    candidates = [".svc", host] if host.endswith(".svc") else [host]
    for entry in candidates:
        added = f"{value},{entry}" if value else entry
        if all(clients.decide(added, destination).values()):
            return entry
    return None


def proxied_names(value: str, rows: Sequence[CheckRow]) -> list[str]:
    """A line per Service name row (the apiserver's, the stream's) that goes through the
    proxy for some client: which clients, and the entry that would fix it."""
    lines = []
    for row in rows:
        if not (row.label.startswith("Service ") or row.label == "apiserver Service name"):
            continue
        proxied = [c for c in clients.CLIENTS if not row.direct[c]]
        if not proxied:
            continue
        fix = fix_for(value, row.destination)
        remedy = f"add {fix}" if fix else "no single entry fixes it"
        lines.append(
            f"{row.destination.host} ({row.label}): via the proxy for {', '.join(proxied)}; "
            f"{remedy}"
        )
    return lines


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


class CheckRow(FrozenStruct):
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
    # the EXTRA_CLIENTS (java) are columns too; only ``compared`` counts for agreement
    return [CheckRow(d, label, clients.decide_all(value, d), compared) for d, label in destinations]


def check_table(value: str, rows: Sequence[CheckRow], scope_label: str | None) -> str:
    first = max([len("destination"), *(len(str(r.destination)) for r in rows)])
    lines = [f"NO_PROXY={value}", f"# {scope_label or 'the value given with --value'}", ""]
    columns = [
        *clients.CLIENTS,
        *(c for c in clients.EXTRA_CLIENTS if all(c in r.direct for r in rows)),
    ]
    header = f"{'destination':<{first}}  " + "  ".join(f"{c:<{max(6, len(c))}}" for c in columns)
    lines.append(header.rstrip())
    for row in rows:
        cells = "  ".join(
            f"{'direct' if row.direct[c] else 'PROXY':<{max(6, len(c))}}" for c in columns
        )
        flag = "" if row.agree else "  <- clients disagree"
        label = f"  ({row.label})" if row.label else ""
        lines.append(f"{row.destination!s:<{first}}  {cells}{flag}{label}".rstrip())
    proxied = proxied_names(value, rows)
    if proxied:
        lines += ["", f"Service names that go through the proxy ({len(proxied)}):"]
        lines += [f"  {line}" for line in proxied]
        lines.append(
            f"  (spec.noProxyPresets: [..., {presets.SERVICES}] adds NAME and NAME.NAMESPACE "
            "of the Services of the render whose last label cannot be a public top-level "
            "domain: one with a digit or a hyphen)"
        )
    titles = {**clients.TITLES, **clients.EXTRA_TITLES}
    lines += ["", "clients: " + ", ".join(f"{c} = {titles[c]}" for c in columns)]
    return "\n".join(lines) + "\n"
