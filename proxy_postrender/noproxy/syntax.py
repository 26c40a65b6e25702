"""NO_PROXY entries: parse, validate, normalise and join.

An entry is one of: a domain (``example.com``), a domain suffix
(``.example.com``; ``*.example.com`` is normalised to it), an IPv4 or IPv6
address, a CIDR, any of those with a port (``host:port``, ``[v6]:port``), or a
lone ``*``. A name written fully qualified (``cluster.local.``) keeps its final
dot: curl ignores it, but Go, Python and wget compare it as written, so
``cluster.local.`` and ``cluster.local`` are different entries to them.

Entries end up in systemd drop-ins and shell lines on Cluster API nodes, inside
user data that cloud-init renders as a Jinja template, so nothing outside these
forms is let through: domains are RFC 1123 labels (``_`` allowed), and the zone
ID of a scoped IPv6 address (``fe80::1%eth0``) is an interface name or index
(letters, digits, ``.``, ``_``, ``-``; at most 15, Linux's limit). A CIDR takes
no zone: no client reads one there.

A CIDR is reduced to its network (``10.1.2.3/8`` is ``10.0.0.0/8``, as every client
reads it), except a /0: ``1.2.3.4/0`` would become ``0.0.0.0/0``, every IPv4 address,
which Go sends direct while curl and Python keep the proxy; it is refused, and ``*``
is the entry that turns the proxy off for everything.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from proxy_postrender.patterns import compiled
from proxy_postrender.structs import FrozenStruct

_LABEL = r"(?!-)[a-z0-9_-]{1,63}(?<!-)"
_DOMAIN_RE = compiled(rf"^{_LABEL}(?:\.{_LABEL})*\.?$")
_PORT_RE = compiled(r"^[0-9]{1,5}$")
_ZONE_RE = compiled(r"^[a-z0-9._-]{1,15}$")  # lower case: entries are compared lower-cased
MAX_NAME = 253  # RFC 1035: a name's text form without the final dot


class NoProxyEntryError(ValueError):
    """A NO_PROXY entry is malformed; the message names the entry."""


def whole_range(version: int) -> str:
    """What a /0 CIDR of IP ``version`` does, for the messages that refuse one."""
    return (
        f"a /0 CIDR is every IPv{version} address, which Go sends direct and curl and "
        "Python through the proxy"
    )


ALL_HOSTS = "write '*' if the proxy is meant to be off for every host"


class WholeRangeError(NoProxyEntryError):
    """A /0 CIDR (``1.2.3.4/0``, ``::/0``): every address of its family, whatever the
    address written; refused, not normalised to ``0.0.0.0/0``."""

    def __init__(self, entry: str, version: int) -> None:
        super().__init__(f"NO_PROXY entry {entry!r}: {whole_range(version)}; {ALL_HOSTS}")
        self.version = version


class NoProxyEntry(FrozenStruct):
    text: str  # normalised form, as written to NO_PROXY
    kind: str  # "wildcard" | "domain" | "suffix" | "ip" | "cidr" | "bracketed"
    port: int | None = None


def bracketed(entry: NoProxyEntry) -> NoProxyEntry:
    """An IPv6 address entry written in brackets (``[fd00::1]``): how undici and
    proxy-from-env compare an IPv6 host; the other clients never match it. Only the
    portable style makes one: :func:`parse_entry` reads ``[fd00::1]`` as ``fd00::1``."""
    return NoProxyEntry(f"[{entry.text}]", "bracketed")


def _check_port(entry: str, port: str) -> int:
    if not _PORT_RE.match(port) or not 0 < int(port) < 65536:
        raise NoProxyEntryError(f"NO_PROXY entry {entry!r}: port {port!r} is not 1-65535")
    return int(port)


def _check_zone(entry: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    zone = getattr(address, "scope_id", None)
    if zone is not None and not _ZONE_RE.match(zone):
        raise NoProxyEntryError(
            f"NO_PROXY entry {entry!r}: an IPv6 zone ID is an interface name or index "
            "(letters, digits, '.', '_', '-'; at most 15)"
        )


def _address(entry: str, host: str) -> str | None:
    """The normalised text of an IP address (None: ``host`` is not one)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    _check_zone(entry, address)
    return str(address)


def _network(entry: str, host: str) -> str:
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        raise NoProxyEntryError(f"NO_PROXY entry {entry!r}: not a valid CIDR") from None
    if getattr(network.network_address, "scope_id", None) is not None:
        raise NoProxyEntryError(f"NO_PROXY entry {entry!r}: a CIDR takes no zone ID")
    if network.prefixlen == 0:
        raise WholeRangeError(entry, network.version)
    return str(network)


def _host_kind(entry: str, host: str) -> tuple[str, str]:
    """Classify a host part (no port); return (normalised text, kind)."""
    address = _address(entry, host)
    if address is not None:
        return address, "ip"
    if "/" in host:
        return _network(entry, host), "cidr"
    suffix = False
    if host.startswith("*."):
        host, suffix = host[2:], True
    elif host.startswith("."):
        host, suffix = host[1:], True
    if not _DOMAIN_RE.match(host) or len(host.rstrip(".")) > MAX_NAME:
        raise NoProxyEntryError(
            f"NO_PROXY entry {entry!r}: not a domain, IP address, CIDR, host:port or '*'"
        )
    return ("." + host, "suffix") if suffix else (host, "domain")


def is_fully_qualified(entry: NoProxyEntry) -> bool:
    """Whether a name entry is written with the final dot (``cluster.local.``)."""
    host = entry.text.rsplit(":", 1)[0] if entry.port is not None else entry.text
    return entry.kind in ("domain", "suffix") and host.endswith(".")


def without_final_dot(entry: NoProxyEntry) -> NoProxyEntry:
    """The same name entry without its final dot (``cluster.local.`` -> ``cluster.local``)."""
    if not is_fully_qualified(entry):
        return entry
    if entry.port is not None:
        host = entry.text.rsplit(":", 1)[0]
        return NoProxyEntry(f"{host[:-1]}:{entry.port}", entry.kind, entry.port)
    return NoProxyEntry(entry.text[:-1], entry.kind)


def parse_entry(raw: str) -> NoProxyEntry:
    entry = raw.strip().lower()
    if not entry:
        raise NoProxyEntryError("NO_PROXY entry is empty")
    if any(ch.isspace() for ch in entry):
        raise NoProxyEntryError(f"NO_PROXY entry {raw.strip()!r} contains whitespace")
    if entry == "*":
        return NoProxyEntry("*", "wildcard")
    if entry.startswith("["):
        # [v6] or [v6]:port
        close = entry.find("]")
        if close < 0:
            raise NoProxyEntryError(f"NO_PROXY entry {entry!r}: missing ']'")
        host, rest = entry[1:close], entry[close + 1 :]
        try:
            addr = ipaddress.IPv6Address(host)
        except ValueError:
            raise NoProxyEntryError(f"NO_PROXY entry {entry!r}: not an IPv6 address") from None
        _check_zone(entry, addr)
        if not rest:
            return NoProxyEntry(str(addr), "ip")
        if not rest.startswith(":"):
            raise NoProxyEntryError(f"NO_PROXY entry {entry!r}: expected ':port' after ']'")
        port = _check_port(entry, rest[1:])
        return NoProxyEntry(f"[{addr}]:{port}", "ip", port)
    if entry.count(":") == 1:
        host, port_text = entry.split(":")
        port = _check_port(entry, port_text)
        text, kind = _host_kind(entry, host)
        if kind == "cidr":
            raise NoProxyEntryError(f"NO_PROXY entry {entry!r}: a CIDR cannot carry a port")
        return NoProxyEntry(f"{text}:{port}", kind, port)
    text, kind = _host_kind(entry, entry)
    return NoProxyEntry(text, kind)


def is_host(text: str) -> bool:
    """Whether ``text`` is a host name or an IP address without a zone (a URL's host)."""
    try:
        entry = parse_entry(text)
    except NoProxyEntryError:
        return False
    return entry.kind in ("domain", "ip") and entry.port is None and "%" not in entry.text


def split_value(value: str | Iterable[str]) -> list[str]:
    """Accept a comma-separated string or a list; return the raw, non-empty items."""
    items = value.split(",") if isinstance(value, str) else list(value)
    return [item for item in (str(i).strip() for i in items) if item]


def normalise(values: Iterable[str]) -> list[NoProxyEntry]:
    """Parse every entry, keep the first occurrence of each, in order."""
    seen: set[str] = set()
    result: list[NoProxyEntry] = []
    for raw in values:
        entry = parse_entry(raw)
        if entry.text not in seen:
            seen.add(entry.text)
            result.append(entry)
    return result


def join(entries: Iterable[NoProxyEntry]) -> str:
    return ",".join(entry.text for entry in entries)


class Sourced(FrozenStruct):
    """A normalised entry and every source that asked for it (first one first)."""

    entry: NoProxyEntry
    sources: tuple[str, ...]


def merge(groups: Iterable[tuple[str, Iterable[NoProxyEntry]]]) -> list[Sourced]:
    """Merge ``(source, entries)`` groups in order; an entry keeps its first place.

    Later sources of an entry already present are recorded, not repeated.
    """
    order: list[str] = []
    sources: dict[str, list[str]] = {}
    entries: dict[str, NoProxyEntry] = {}
    for source, group in groups:
        for entry in group:
            if entry.text not in entries:
                entries[entry.text] = entry
                order.append(entry.text)
                sources[entry.text] = []
            if source not in sources[entry.text]:
                sources[entry.text].append(source)
    return [Sourced(entries[text], tuple(sources[text])) for text in order]


def merged_lists(first: Iterable[str], then: str) -> str:
    """The NO_PROXY values ``first`` (a manifest's own, each comma-separated) and then
    ``then`` (the profile's) as one list: each entry once, where it first comes, as it is
    written (trimmed). Entries are the same when their text is, but for case: a client
    compares ``*.a.example`` and ``.a.example``, ``[::1]`` and ``::1``, each in its own
    way, so both stay."""
    seen: set[str] = set()
    merged: list[str] = []
    for item in [part for value in first for part in split_value(value)] + split_value(then):
        if item.lower() not in seen:
            seen.add(item.lower())
            merged.append(item)
    return ",".join(merged)
