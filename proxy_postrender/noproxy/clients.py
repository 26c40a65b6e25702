"""How four HTTP clients read NO_PROXY: Go, curl, Python requests and GNU wget.

Each model answers one question: for this NO_PROXY value, does a request to
this destination go direct (True) or through the proxy (False)? The rules,
and where each is documented, are in docs/noproxy.md; the tests compare the
curl, wget and Python models with the real programs on the machine.

A final dot (``cluster.local.``, a host ``x.cluster.local.``) is compared as
written by Go, Python and wget; curl alone drops one final dot of the entry and
of the host, so to curl the two forms are the same name.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from proxy_postrender.structs import Struct

CLIENTS: tuple[str, ...] = ("go", "curl", "python", "wget")
TITLES: Mapping[str, str] = {
    "go": "Go (net/http)",
    "curl": "curl 7.87-8.17",
    "python": "Python requests >= 2.34",
    "wget": "GNU wget >= 1.20",
}

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class DestinationError(ValueError):
    pass


class Destination(Struct, frozen=True):
    """Where a request goes: host (lower case, no brackets) and port."""

    host: str
    port: int
    scheme: str = "https"
    explicit_port: bool = False

    @property
    def ip(self) -> Address | None:
        try:
            return ipaddress.ip_address(self.host)
        except ValueError:
            return None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def parse_destination(text: str) -> Destination:
    """``host``, ``host:port``, ``[v6]:port``, a bare IPv6 address or a URL."""
    raw = text.strip()
    if not raw:
        raise DestinationError("empty destination")
    if "://" not in raw:
        try:
            ipaddress.IPv6Address(raw)
            raw = f"[{raw}]"
        except ValueError:
            pass
        raw = "https://" + raw
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        raise DestinationError(f"destination {text!r}: invalid host or port") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DestinationError(f"destination {text!r}: expected HOST[:PORT] or an http(s) URL")
    default = 443 if parts.scheme == "https" else 80
    return Destination(parts.hostname.lower(), port or default, parts.scheme, port is not None)


# --- Go: golang.org/x/net/http/httpproxy, which net/http uses -----------------


def _go_split_host_port(entry: str) -> tuple[str, str] | None:
    """Go's net.SplitHostPort, for the shapes NO_PROXY entries take."""
    if entry.startswith("["):
        end = entry.find("]")
        if end < 0 or entry[end + 1 : end + 2] != ":":
            return None
        return entry[1:end], entry[end + 2 :]
    if entry.count(":") != 1:
        return None
    host, port = entry.split(":")
    return host, port


def go_direct(no_proxy: str, dest: Destination) -> bool:
    host, port = dest.host, str(dest.port)
    ip = dest.ip
    if host == "localhost" or (ip is not None and ip.is_loopback):
        return True  # Go never proxies loopback, whatever NO_PROXY says
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        if "/" in entry:
            try:
                if ip is not None and ip in ipaddress.ip_network(entry, strict=False):
                    return True
                continue
            except ValueError:
                pass
        entry_port = ""
        split = _go_split_host_port(entry)
        if split is not None:
            entry, entry_port = split
            if not entry:
                continue
        try:
            entry_ip = ipaddress.ip_address(entry)
        except ValueError:
            entry_ip = None
        if entry_ip is not None:
            if ip is not None and ip == entry_ip and entry_port in ("", port):
                return True
            continue
        if ip is not None:
            continue  # name entries never match an address (x/net since v0.36.0)
        # no dot is stripped: "cluster.local." and "x.cluster.local" never meet
        match_host = True
        if entry.startswith("*."):
            entry = entry[1:]
        if entry.startswith("."):
            match_host = False
        else:
            entry = "." + entry
        if (host.endswith(entry) or (match_host and host == entry[1:])) and entry_port in (
            "",
            port,
        ):
            return True
    return False


# --- curl 7.87 to 8.17: lib/noproxy.c --------------------------------------------


def _curl_ip_match(address: Address, token: str) -> bool:
    text, _, bits = token.partition("/")
    try:
        network_ip = ipaddress.ip_address(text)
    except ValueError:
        return False
    if network_ip.version != address.version:
        return False
    width = 32 if address.version == 4 else 128
    prefix = int(bits) if bits.isdigit() else 0  # no mask (or a bad one): the whole address
    if prefix == 0:
        prefix = width
    if prefix > width:
        return False
    shift = width - prefix
    return int(address) >> shift == int(network_ip) >> shift


def curl_direct(no_proxy: str, dest: Destination) -> bool:
    if no_proxy == "*":
        return True  # only the whole value; '*' among other entries matches nothing
    # curl 7.86-8.17 hands IPv6 hosts over without brackets: they compare as names
    ip = dest.ip if dest.ip is not None and dest.ip.version == 4 else None
    # one final dot of the host name, and below of each entry, is dropped
    name = dest.host[:-1] if ip is None and dest.host.endswith(".") else dest.host
    for token in re.split(r"[ \t]*,[ \t,]*|[ \t]+", no_proxy.strip(" \t,")):
        if not token:
            continue
        if ip is not None:
            if _curl_ip_match(ip, token):
                return True
            continue
        token = token.lower()
        if token.endswith("."):
            token = token[:-1]
        if token.startswith("."):
            token = token[1:]
        if not token:
            continue
        if token == name or (name.endswith(token) and name[-len(token) - 1] == "."):
            return True
    return False


# --- Python requests (2.34 and later): should_bypass_proxies, then urllib -------


def _is_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _requests_cidr(entry: str) -> ipaddress.IPv4Network | None:
    """requests' is_valid_cidr: IPv4 only, a mask of 1-32."""
    if entry.count("/") != 1:
        return None
    address, bits = entry.split("/")
    if not bits.isdigit() or not 1 <= int(bits) <= 32 or not _is_ipv4(address):
        return None
    return ipaddress.IPv4Network(entry, strict=False)


def _urllib_bypass(no_proxy: str, host: str) -> bool:
    """urllib.request.proxy_bypass_environment (the stdlib fallback requests asks)."""
    if no_proxy == "*":
        return True
    host = host.lower()
    split = re.fullmatch(r"(.*):([0-9]*)", host, re.DOTALL)
    hostonly = split.group(1) if split else host
    for raw in no_proxy.split(","):
        if not raw.strip():
            continue
        name = raw.strip().lstrip(".").lower()  # leading dots only: a final one stays
        if hostonly == name or host == name:
            return True
        if hostonly.endswith("." + name) or host.endswith("." + name):
            return True
    return False


def python_direct(no_proxy: str, dest: Destination) -> bool:
    host = dest.host
    entries = [e for e in no_proxy.replace(" ", "").split(",") if e]
    if _is_ipv4(host):
        for entry in entries:
            network = _requests_cidr(entry)
            if network is not None:
                if ipaddress.IPv4Address(host) in network:
                    return True
            elif host == entry:
                return True
    else:
        with_port = f"{host}:{dest.port}" if dest.explicit_port else host
        for entry in entries:
            name = entry.lstrip(".")
            if name in (host, with_port):
                return True
            if host.endswith("." + name) or with_port.endswith("." + name):
                return True
    return _urllib_bypass(no_proxy, host)


# --- GNU wget: suffix match of each no_proxy entry -----------------------------


def wget_direct(no_proxy: str, dest: Destination) -> bool:
    host = dest.host.lower()  # a final dot stays, in the host and in entries
    for raw in no_proxy.split(","):
        # an empty entry (",,") is kept: it matches any name that ends in a dot
        entry = raw.strip().lower()
        if len(host) < len(entry) or not host.endswith(entry):
            continue
        rest = host[: len(host) - len(entry)]
        if not rest or rest.endswith(".") or entry.startswith("."):
            return True
    return False


RULES: Mapping[str, Callable[[str, Destination], bool]] = {
    "go": go_direct,
    "curl": curl_direct,
    "python": python_direct,
    "wget": wget_direct,
}


def decide(no_proxy: str, dest: Destination) -> dict[str, bool]:
    """For each client: True when the request goes direct."""
    return {client: rule(no_proxy, dest) for client, rule in RULES.items()}
