"""Classic NO_PROXY mistakes, found in a built list or in values a manifest keeps.

Each function returns human-readable warnings; nothing here changes output.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence

from proxy_postrender.noproxy import scope, syntax
from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
from proxy_postrender.noproxy.syntax import Sourced

USER_SOURCES = ("spec.noProxy", "spec.cluster apiserver address")


def _networks_known(
    config: NoProxyConfig, discovered: Sequence[ClusterNetwork]
) -> tuple[bool, bool]:
    nets = [config.cluster, *discovered]
    return any(n.pods for n in nets), any(n.services for n in nets)


def _is_cluster_ip(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_private and not (address.is_loopback or address.is_link_local)


def for_list(
    entries: Sequence[Sourced], config: NoProxyConfig, discovered: Sequence[ClusterNetwork] = ()
) -> list[str]:
    """Warnings about a NO_PROXY list the tool is about to write."""
    warnings: list[str] = []
    mine = [
        item for item in entries if any(s in USER_SOURCES or scope.listed(s) for s in item.sources)
    ]
    texts = {item.entry.text for item in entries}
    domain_known = any(
        item.entry.kind in ("domain", "suffix") and "cluster" in item.entry.text for item in entries
    )
    for item in mine:
        if item.entry.text in (".svc", "svc"):
            warnings.append(
                f"{item.entry.text} matches NAME.NAMESPACE.svc only: short Service names (NAME, "
                "NAME.NAMESPACE) still go through the proxy, and Service FQDNs end in the cluster "
                "domain" + ("" if domain_known else " (add it, e.g. cluster.local)")
            )
    pods, services = _networks_known(config, discovered)
    cidrs = [ipaddress.ip_network(item.entry.text) for item in entries if item.entry.kind == "cidr"]
    for item in mine:
        if item.entry.kind != "ip" or item.entry.port is not None:
            continue
        address = ipaddress.ip_address(item.entry.text)
        if not _is_cluster_ip(address):
            continue
        covered = any(address in net for net in cidrs if net.version == address.version)
        if not services and not covered:
            warnings.append(
                f"{item.entry.text} is listed as an address, but no service CIDR is known: "
                "clients that call other Services by ClusterIP go through the proxy "
                "(set spec.cluster.serviceCIDRs)"
            )
        if not pods:
            warnings.append(
                f"{item.entry.text} is listed as an address, but no pod CIDR is known: traffic "
                "to pod IPs (metrics scrapes, headless Services) goes through the proxy "
                "(set spec.cluster.podCIDRs)"
            )
            break
    for item in entries:
        if item.entry.port is not None:
            warnings.append(
                f"{item.entry.text}: curl, wget and Java (JAVA_TOOL_OPTIONS) ignore entries "
                "with a port, Python honours them only for URLs that name the port"
            )
    warnings += _fully_qualified(entries, texts)
    for item in entries:
        if item.entry.kind == "ip" and "%" in item.entry.text:
            warnings.append(
                f"{item.entry.text}: Go matches an address with a zone ID only in URLs with that "
                "zone, curl never: list the address without its zone as well"
            )
    if any(item.entry.kind == "cidr" and ":" in item.entry.text for item in entries):
        warnings.append(
            "IPv6 CIDRs are ignored by curl (7.86 to 8.17), Python requests, wget, Java and "
            "Node.js (undici, proxy-from-env): list the IPv6 addresses those clients call, or "
            "expect them to use the proxy"
        )
    if config.style == "exact":
        warnings += _exact_for_node(mine, entries)
    for net in discovered:
        warnings += [
            f"{field} is a template variable still, left out of NO_PROXY: expand it first "
            "(clusterctl generate cluster, envsubst) or list the value in spec.noProxy"
            for field in net.left_out
            if "controlPlaneEndpoint" not in field  # said below
        ]
        if net.endpoint is None and net.endpoint_suffixes is not None:
            warnings.append(
                f"the control-plane endpoint of {net.label} is not in the stream: NO_PROXY "
                f"holds the load-balancer suffixes of {net.endpoint_suffixes}, which cover "
                "the name of a load balancer the provider makes there; an endpoint of "
                "another name needs an entry in spec.noProxy"
            )
        elif net.endpoint is None:
            warnings.append(
                f"the control-plane endpoint of {net.label} is not in the stream (set at run "
                "time, or a variable): kubelet and the node bootstrap (kubeadm join and the "
                "like) reach it through the proxy unless an entry covers it (its domain, e.g. "
                ".elb.amazonaws.com, or its CIDR)"
            )
    if "*" in texts and len(texts) > 1:
        warnings.append(
            "'*' among other entries: curl, Python and undici honour '*' only on its own "
            "(Go and proxy-from-env send every host direct)"
        )
    elif "*" in texts:
        warnings.append("NO_PROXY is '*': no request goes through the proxy (wget ignores '*')")
    return warnings


def _exact_for_node(mine: Sequence[Sourced], entries: Sequence[Sourced]) -> list[str]:
    """What the portable style would have added for the Node.js clients
    (:func:`scope.node_twin`), as warnings about the user's entries in the exact style."""
    warnings = []
    texts = {item.entry.text for item in entries}
    suffixes = [i.entry.text for i in entries if i.entry.kind == "suffix" and i.entry.port is None]
    for item in mine:
        found = scope.node_twin(item.entry, texts, suffixes)
        if found is None:
            continue
        text, twin = item.entry.text, found[0].text
        if found[0].kind == "suffix":
            warnings.append(
                f"{text}: proxy-from-env (axios) matches this name only, not its "
                f"subdomains (add {twin}, or use noProxyStyle: portable)"
            )
        else:
            warnings.append(
                f"{text}: undici and proxy-from-env (Node.js) match an IPv6 host only "
                f"written in brackets, which noProxyStyle: portable adds ({twin})"
            )
    return warnings


def java_reads(entry: syntax.NoProxyEntry) -> bool:
    """Whether the JVM's http.nonProxyHosts has a form for a CIDR entry: only for one of
    a single address (``/32``), written as that address. A pattern such as ``10.*`` would
    match names too (``10.evil.example``), so pods/java.py writes none."""
    return ipaddress.ip_network(entry.text, strict=False).num_addresses == 1


def unportable(entries: Sequence[Sourced]) -> list[str]:
    """What no style can make every client read: IPv4 CIDRs (IPv6 ones are warned about
    in :func:`for_list`). A note, not a warning: every cluster's list holds some."""
    cidrs = [i.entry for i in entries if i.entry.kind == "cidr" and ":" not in i.entry.text]
    if not cidrs or any(item.entry.kind == "wildcard" for item in entries):
        return []
    java = [entry.text for entry in cidrs if not java_reads(entry)]
    clients = "wget, undici and proxy-from-env (Node.js)"
    also = f" (Java also {', '.join(java)}: the JVM has no form for a network)" if java else ""
    if len(java) == len(cidrs):  # the usual case: no CIDR of a single address
        clients, also = "wget, Java, undici and proxy-from-env (Node.js)", ""
    return [
        f"CIDRs cannot be made portable: {clients} ignore "
        + ", ".join(entry.text for entry in cidrs)
        + also
        + ": they reach those addresses through the proxy unless the address itself is "
        "listed (host names are read alike)"
    ]


def _fully_qualified(entries: Sequence[Sourced], texts: set[str]) -> list[str]:
    """A name written with the final dot (``cluster.local.``) whose plain form is not listed:
    curl drops the dot of entries and hosts, Go, Python and wget compare them as written."""
    warnings = []
    plain_names = [
        (item.entry.kind, item.entry.text)
        for item in entries
        if item.entry.kind in ("domain", "suffix")
        and item.entry.port is None
        and not syntax.is_fully_qualified(item.entry)
    ]

    def covered(plain: syntax.NoProxyEntry) -> bool:
        """Every name ``plain`` matches is matched by a listed entry without a final dot."""
        host, subdomains_only = plain.text.lstrip("."), plain.kind == "suffix"
        for kind, text in plain_names:
            if kind == "domain" and (host == text or host.endswith("." + text)):
                return True
            if kind == "suffix" and (host.endswith(text) or (subdomains_only and host == text[1:])):
                return True
        return False

    for item in entries:
        if not syntax.is_fully_qualified(item.entry):
            continue
        plain = syntax.without_final_dot(item.entry)
        if plain.text in texts or (plain.port is None and covered(plain)):
            continue
        warnings.append(
            f"{item.entry.text} ends in a dot: Go, Python, wget, Java and Node.js match it only "
            f"for host names written with the final dot (curl for both forms); add "
            f"{plain.text} for names written without it"
        )
    return warnings


def for_kept_values(container: str, values: Mapping[str, str]) -> list[str]:
    """Warnings about NO_PROXY/no_proxy values a manifest sets and the tool keeps."""
    warnings: list[str] = []
    for var, value in values.items():
        items = [part.strip() for part in value.split(",")]
        if any(" " in part or "\t" in part for part in items):
            warnings.append(
                f"{container}: {var} holds whitespace inside an entry; Go reads "
                f"{value!r} differently from curl and Python (separate entries with commas)"
            )
        for part in items:
            if not part or " " in part or "\t" in part:
                continue
            try:
                syntax.parse_entry(part)
            except syntax.NoProxyEntryError as exc:
                warnings.append(f"{container}: {var}: {exc}")
    upper, lower = values.get("NO_PROXY"), values.get("no_proxy")
    if upper is not None and lower is not None and upper != lower:
        warnings.append(
            f"{container}: NO_PROXY and no_proxy differ; Go reads NO_PROXY first, curl, Python "
            "and wget read no_proxy first"
        )
    return warnings
