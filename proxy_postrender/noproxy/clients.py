"""How HTTP clients read NO_PROXY: Go, curl, Python (requests, urllib), GNU wget, Java
and two Node.js packages.

Each model answers one question: for this NO_PROXY value, does a request to
this destination go direct (True) or through the proxy (False)? The rules,
and where each is documented, are in docs/noproxy.md; the tests compare the
models with the real programs (tests/test_client_programs.py, tests/test_noproxy.py).

A final dot (``cluster.local.``, a host ``x.cluster.local.``) is compared as
written by Go, Python and wget; curl alone drops one final dot of the entry and
of the host, so to curl the two forms are the same name.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from proxy_postrender.patterns import compiled
from proxy_postrender.structs import FrozenStruct

# The default --strict set. "requests" was called "python" before: --clients still
# takes that name (ALIASES).
CLIENTS: tuple[str, ...] = ("go", "curl", "requests", "wget")
TITLES: Mapping[str, str] = {
    "go": "Go (net/http)",
    "curl": "curl 7.87-8.8",
    "requests": "Python requests >= 2.34",
    "wget": "GNU wget >= 1.20",
}
ALIASES: Mapping[str, str] = {"python": "requests"}

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class DestinationError(ValueError):
    pass


class Destination(FrozenStruct):
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


# the full stops UTS #46 maps to "." (U+3002, U+FF0E, U+FF61)
_HEX_DIGITS = "0123456789abcdefABCDEF"  # string.hexdigits (string compiles a pattern)
_IDNA_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


def _go_idna_label(label: str) -> str | None:
    """One label of a mapped name as ToASCII gives it; None when it refuses it (Go then
    keeps the whole text as it was). Bidi and joiner rules are not modelled."""
    import unicodedata  # only for non-ASCII names

    if label.startswith("xn--"):
        try:
            label[4:].encode("ascii").decode("punycode")
        except (UnicodeError, ValueError):
            return None
        return label
    if label.startswith("-") or label.endswith("-") or label[2:4] == "--":
        return None  # checkHyphens
    for char in label:
        allowed = (
            char in "abcdefghijklmnopqrstuvwxyz0123456789-"  # STD3 rules
            if char.isascii()
            else unicodedata.category(char)[0] in "LMN"
        )
        if not allowed:
            return None
    return label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")


def idna_ascii(text: str) -> str | None:
    """A name as UTS #46 ToASCII gives it (Go's ``idna.Lookup``, libidn2 in curl and
    wget): ASCII text as it is; otherwise mapped (NFKC, lower case, non-transitional so
    ``ß`` stays) and each label with non-ASCII letters as ``xn--`` Punycode, under STD3
    rules and hyphen checks; None when a label is refused."""
    if text.isascii():
        return text
    import unicodedata  # only for non-ASCII names

    mapped = unicodedata.normalize("NFKC", text.translate(_IDNA_DOTS).lower())
    labels = [_go_idna_label(label) for label in mapped.split(".")]
    if any(label is None for label in labels):
        return None
    return ".".join(label for label in labels if label is not None)


def _go_idna_ascii(text: str) -> str:
    """httpproxy's idnaASCII, applied to the request's host and to each name entry
    (after the leading dot is added): the text as it was when ToASCII fails."""
    converted = idna_ascii(text)
    return text if converted is None else converted


def go_direct(no_proxy: str, dest: Destination) -> bool:
    host, port = _go_idna_ascii(dest.host), str(dest.port)
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
        entry = _go_idna_ascii(entry)  # "示例.com" is ".xn--fsq092h.com", as the host is
        if (host.endswith(entry) or (match_host and host == entry[1:])) and entry_port in (
            "",
            port,
        ):
            return True
    return False


class GoRanges(FrozenStruct):
    """What :func:`go_direct` sends direct among IP addresses at one port, read once:
    everything (``*``), or the address ranges of each IP version (sorted, disjoint, not
    touching: ``(first, last)`` as integers), loopback included."""

    everything: bool
    ranges: Mapping[int, tuple[tuple[int, int], ...]]


_LOOPBACK: tuple[tuple[int, str], ...] = ((4, "127.0.0.0/8"), (6, "::1/128"))


def go_ranges(no_proxy: str, port: int) -> GoRanges:
    """The addresses Go sends direct at ``port`` under ``no_proxy``, read as
    :func:`go_direct` reads each entry for an IP host: a CIDR, or an address with no
    port or with ``port`` (a name never matches an address)."""
    found: dict[int, list[tuple[int, int]]] = {4: [], 6: []}
    for version, text in _LOOPBACK:
        loopback = ipaddress.ip_network(text)
        found[version].append((int(loopback.network_address), int(loopback.broadcast_address)))
    for raw in no_proxy.split(","):
        entry = raw.strip().lower()
        if entry == "*":
            return GoRanges(True, {})
        if not entry:
            continue
        if "/" in entry:
            try:
                network = ipaddress.ip_network(entry, strict=False)
            except ValueError:
                pass
            else:
                first, last = int(network.network_address), int(network.broadcast_address)
                found[network.version].append((first, last))
                continue
        entry_port = ""
        split = _go_split_host_port(entry)
        if split is not None:
            entry, entry_port = split
        try:
            address = ipaddress.ip_address(entry)
        except ValueError:
            continue
        # an address with a zone never equals a destination's (which has none)
        zoned = isinstance(address, ipaddress.IPv6Address) and address.scope_id
        if entry_port in ("", str(port)) and not zoned:
            found[address.version].append((int(address), int(address)))
    return GoRanges(False, {version: _merged(spans) for version, spans in found.items()})


def _merged(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            if last > merged[-1][1]:
                merged[-1] = (merged[-1][0], last)
        else:
            merged.append((first, last))
    return tuple(merged)


# --- curl 7.87 to 8.17: lib/noproxy.c --------------------------------------------
# Two series differ in how a blank between entries reads: curl 7.87 to 8.8 take it
# as a separator ("a b" is two entries; deprecated in 7.88.0), curl 8.9.0 to 8.17
# stop at it ("a b,c" is the entry "a" alone: commit e78913e6, "patterns need to be
# comma separated"). Both compare an IPv6 host as a name (8.18.0 changed that, not
# modelled). The "curl" column is the first series (the real 7.88.1 checks it),
# "curl-8.9" the second.


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


_CURL_SEPARATORS = compiled(r"[ \t]*,[ \t,]*|[ \t]+")


def _curl_tokens_before_8_9(no_proxy: str) -> list[str]:
    """Blanks and commas, in any mix, separate entries."""
    return _CURL_SEPARATORS.split(no_proxy.strip(" \t,"))


def _curl_tokens_since_8_9(no_proxy: str) -> list[str]:
    """Curl_check_noproxy's loop in 8.9.0 to 8.17.0: blanks, a token (up to a blank or
    a comma), blanks; anything but a comma then ends the list."""
    tokens = []
    rest = no_proxy
    while rest:
        rest = rest.lstrip(" \t")
        token = re.match(r"[^ \t,]*", rest)
        text = token.group() if token else ""
        tokens.append(text)
        rest = rest[len(text) :].lstrip(" \t")
        if not rest.startswith(","):
            break
        rest = rest.lstrip(",")
    return tokens


def _curl_match(tokens: list[str], dest: Destination) -> bool:
    # curl 7.86-8.17 hands IPv6 hosts over without brackets: they compare as names
    ip = dest.ip if dest.ip is not None and dest.ip.version == 4 else None
    # an internationalised host is compared as A-labels (libidn2), entries as written;
    # a host libidn2 refuses fails the transfer (curl: (3)), so None is not compared
    host = idna_ascii(dest.host) or dest.host
    # one final dot of the host name, and below of each entry, is dropped
    name = host[:-1] if ip is None and host.endswith(".") else host
    for token in tokens:
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


def curl_direct(no_proxy: str, dest: Destination) -> bool:
    """curl 7.87.0 to 8.8.0."""
    if no_proxy == "*":
        return True  # only the whole value; '*' among other entries matches nothing
    return _curl_match(_curl_tokens_before_8_9(no_proxy), dest)


def curl_8_9_direct(no_proxy: str, dest: Destination) -> bool:
    """curl 8.9.0 to 8.17.0."""
    if no_proxy == "*":
        return True
    return _curl_match(_curl_tokens_since_8_9(no_proxy), dest)


# --- Python: requests (2.34 and later), should_bypass_proxies, then urllib; urllib --


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
    """urllib.request.proxy_bypass_environment (CPython 3.11) for this ``host``: '*' only
    as the whole value; entries split on commas and stripped, leading dots dropped, lower
    case; an entry matches the host with or without its port, and any name ending in
    ``.ENTRY``. Text only: no CIDRs, no address forms."""
    if no_proxy == "*":
        return True
    host = host.lower()
    split = re.fullmatch(r"(.*):([0-9]*)", host, re.DOTALL)  # urllib.parse._splitport
    hostonly = split.group(1) if split and split.group(2) else host
    for raw in no_proxy.split(","):
        if not raw.strip():
            continue
        name = raw.strip().lstrip(".").lower()  # leading dots only: a final one stays
        if hostonly == name or host == name:
            return True
        if hostonly.endswith("." + name) or host.endswith("." + name):
            return True
    return False


def urllib_direct(no_proxy: str, dest: Destination) -> bool:
    """urllib.request.urlopen: its ProxyHandler asks proxy_bypass_environment about the
    Request's host, which is the URL's: an IPv6 address in brackets, the port when the
    URL names one. So IPv4 CIDRs match nothing, ``fd00::1`` never matches
    ``[fd00::1]`` (``[fd00::1]`` does), and ``corp.example:8080`` matches only a URL
    that names port 8080."""
    host = f"[{dest.host}]" if ":" in dest.host else dest.host
    return _urllib_bypass(no_proxy, f"{host}:{dest.port}" if dest.explicit_port else host)


def requests_direct(no_proxy: str, dest: Destination) -> bool:
    """requests' should_bypass_proxies: IPv4 CIDRs, then urllib on the bare host."""
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
    # a final dot stays, in the host and in entries; an internationalised host is
    # compared as A-labels (libidn2; as written when it refuses it), entries as written
    host = (idna_ascii(dest.host) or dest.host).lower()
    # sepstring (src/utils.c): split on commas, skip the blanks after each comma and
    # nothing else, so " a" and "a ,b" give entries " a" and "a " that match no host
    first, *others = no_proxy.split(",")
    for raw in [first, *(o.lstrip(" \t\n\v\f\r") for o in others)]:
        # an empty entry (",,") is kept: it matches any name that ends in a dot
        entry = raw.lower()
        if len(host) < len(entry) or not host.endswith(entry):
            continue
        rest = host[: len(host) - len(entry)]
        if not rest or rest.endswith(".") or entry.startswith("."):
            return True
    return False


RULES: Mapping[str, Callable[[str, Destination], bool]] = {
    "go": go_direct,
    "curl": curl_direct,
    "requests": requests_direct,
    "wget": wget_direct,
}


def decide(no_proxy: str, dest: Destination) -> dict[str, bool]:
    """For each client: True when the request goes direct."""
    return {client: rule(no_proxy, dest) for client, rule in RULES.items()}


# --- Java: http.nonProxyHosts as JAVA_TOOL_OPTIONS writes it, read by the JDK ----
# (OpenJDK 17: sun.net.spi.DefaultProxySelector, its properties via sun.net.NetProperties)

JAVA_TITLE = "Java (OpenJDK 17 DefaultProxySelector)"
JAVA_DEFAULT_NON_PROXY = "localhost|127.*|[::1]|0.0.0.0|[::0]"  # NonProxyInfo.defStringVal


def java_non_proxy_hosts(no_proxy: str) -> str | None:
    """The ``http.nonProxyHosts`` for this NO_PROXY (None: none), as the JVM reads it
    (pods/java.py writes it): ``.d`` becomes ``*.d``, a name ``d`` becomes ``d|*.d``,
    an IPv6 address goes in brackets (the JVM compares ``[fd00::1]``), ``*`` replaces
    everything. Left out, as the JVM has no form for them: CIDRs (but one of a single
    address, written as that address) and entries with a port.

    A CIDR never becomes a pattern: the JVM compares the host's text, so ``10.*``
    (for ``10.0.0.0/8``) would also send the name ``10.evil.example`` direct, and
    ``*`` (for ``0.0.0.0/0``) everything."""
    patterns: list[str] = []
    for raw in no_proxy.split(","):
        entry = raw.strip()
        if not entry:
            continue
        if entry == "*":
            patterns = ["*"]
            break
        pattern = _java_pattern(entry)
        if pattern:
            patterns += pattern
    return "|".join(dict.fromkeys(patterns)) if patterns else None


def _java_pattern(entry: str) -> list[str]:
    if "/" in entry:
        try:
            net = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            return []
        if net.num_addresses != 1:
            return []  # a pattern would match names too (10.* matches 10.evil.example)
        address = str(net.network_address)
        return [f"[{address}]" if net.version == 6 else address]
    if entry.startswith("["):
        return [entry] if entry.endswith("]") else []  # "[v6]:port": no port form
    if entry.count(":") == 1:
        return []  # host:port
    if ":" in entry:
        return [f"[{entry}]"]
    if entry.startswith("*."):
        return [entry]
    if entry.startswith("."):
        return ["*" + entry]
    if any(c.isalpha() for c in entry):
        return [entry, "*." + entry]  # a domain and its subdomains, as Go reads it
    return [entry]  # an IPv4 address


def _java_pattern_matches(pattern: str, host: str) -> bool:
    """DefaultProxySelector.disjunctToRegex: a ``*`` at either end is any text; one
    elsewhere is a literal star."""
    if pattern == "*":
        return True
    if len(pattern) > 1 and pattern.startswith("*") and pattern.endswith("*"):
        return pattern[1:-1] in host
    if pattern.startswith("*"):
        return host.endswith(pattern[1:])
    if pattern.endswith("*"):
        return host.startswith(pattern[:-1])
    return host == pattern


def java_property_direct(non_proxy_hosts: str | None, dest: Destination) -> bool:
    """How the JDK reads ``http.nonProxyHosts`` (also for https URLs): ``|``-separated
    patterns, lower-cased and never trimmed, matched against the whole host as the URI
    gives it (an IPv6 address in brackets, a final dot kept, no port); CIDRs are text.
    The JDK's defaults are added unless the property is set and empty."""
    value = JAVA_DEFAULT_NON_PROXY if non_proxy_hosts is None else non_proxy_hosts
    if non_proxy_hosts:
        value += "|" + JAVA_DEFAULT_NON_PROXY
    host = f"[{dest.host}]" if ":" in dest.host else dest.host.lower()
    if not host:
        return False
    return any(_java_pattern_matches(p.lower(), host) for p in value.split("|") if p)


def java_direct(no_proxy: str, dest: Destination) -> bool:
    """A JVM given the JAVA_TOOL_OPTIONS written from this NO_PROXY."""
    return java_property_direct(java_non_proxy_hosts(no_proxy), dest)


# Clients shown as columns besides CLIENTS, outside the default --strict set.
EXTRA_CLIENTS: tuple[str, ...] = ("curl-8.9", "urllib", "java")
EXTRA_RULES: Mapping[str, Callable[[str, Destination], bool]] = {
    "curl-8.9": curl_8_9_direct,
    "urllib": urllib_direct,
    "java": java_direct,
}
EXTRA_TITLES: Mapping[str, str] = {
    "curl-8.9": "curl 8.9-8.17",
    "urllib": "Python urllib.request (3.11)",
    "java": JAVA_TITLE,
}


def decide_all(no_proxy: str, dest: Destination) -> dict[str, bool]:
    """:func:`decide` plus the EXTRA_CLIENTS."""
    result = decide(no_proxy, dest)
    result.update((client, rule(no_proxy, dest)) for client, rule in EXTRA_RULES.items())
    return result


# --- Node.js: undici's EnvHttpProxyAgent and the proxy-from-env package ----------
# Both read the host as WHATWG URL gives it: lower case, a final dot kept, an IPv6
# address in brackets (canonical form), no port; NO_PROXY entries are split on commas
# and (JavaScript) white space, and "HOST:PORT" limits an entry to one port. Neither
# knows CIDRs or addresses beyond text: "10.0.0.0/8" matches nothing.

# JavaScript's \s, which both split NO_PROXY on (with the comma)
# compiled on first use (``re`` caches them): only the Node models need them
_JS_SPLIT = "[,\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_JS_HOST_PORT = r"(?s)(.+):([0-9]+)"


def _whatwg_number(part: str) -> int | None:
    if part[:2] in ("0x", "0X"):
        digits, base = part[2:] or "0", 16
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    try:
        return int(digits, base) if digits.isascii() and digits.isalnum() else None
    except ValueError:
        return None


def node_host(dest: Destination) -> str | None:
    """The host as WHATWG URL (Node's ``new URL``) gives it; None when it rejects the
    URL: a name whose last label is a number ("www.127.0.0.1", "x10.1.2.3") must be an
    IPv4 address, which is then normalised ("127.0.0.1." is 127.0.0.1)."""
    ip = dest.ip
    if ip is not None:
        return f"[{ip.compressed}]" if ip.version == 6 else dest.host
    parts = dest.host.split(".")
    if len(parts) > 1 and not parts[-1]:
        parts.pop()
    last = parts[-1]
    numeric = last.isascii() and (
        last.isdigit() or (last[:2] in ("0x", "0X") and all(c in _HEX_DIGITS for c in last[2:]))
    )
    if not numeric:
        return dest.host
    numbers = [_whatwg_number(p) if p else None for p in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = sum(n << (8 * (3 - i)) for i, n in enumerate(values[:-1])) + values[-1]
    return str(ipaddress.IPv4Address(address))


def _node_entries(no_proxy: str) -> list[tuple[str, int]]:
    """Each non-empty entry as (host text, port or 0 for any port)."""
    result = []
    for entry in re.split(_JS_SPLIT, no_proxy):
        if not entry:
            continue
        parsed = re.fullmatch(_JS_HOST_PORT, entry)
        result.append((parsed.group(1), int(parsed.group(2))) if parsed else (entry, 0))
    return result


def undici_direct(no_proxy: str, dest: Destination) -> bool:
    """undici 7 EnvHttpProxyAgent: '*' only as the whole value; one leading '.' or '*.'
    is dropped, then an entry matches its name and the names below it (text only, so
    '0.1' sends 10.96.0.1 direct); IPv6 entries need brackets."""
    host = node_host(dest)
    entries = _node_entries(no_proxy)
    if host is None or not entries:
        return False  # an invalid URL: fetch fails before any proxy decision
    if no_proxy == "*":
        return True
    for text, port in entries:
        name = re.sub(r"^\*?\.", "", text).lower()
        if port and port != dest.port:
            continue
        if host == name or host[-(len(name) + 1) :] == "." + name:
            return True
    return False


def proxy_from_env_direct(no_proxy: str, dest: Destination) -> bool:
    """proxy-from-env 2.1 (1.1 matches the same way): an entry without a leading '.' or
    '*' matches its exact name only; otherwise one leading '*' is dropped and the rest is
    a plain text suffix ('.example.com' misses example.com; '*example.com' matches
    'myexample.com'; a '*' anywhere in the list matches every host)."""
    host = node_host(dest)
    if host is None:
        return True  # getProxyForUrl answers "" (no proxy) for a URL it cannot parse
    value = no_proxy.lower()
    if not value:
        return False
    if value == "*":
        return True
    for text, port in _node_entries(value):
        if port and port != dest.port:
            continue
        if not text.startswith((".", "*")):
            if host == text:
                return True
            continue
        if host.endswith(text[1:] if text.startswith("*") else text):
            return True
    return False


NODE_CLIENTS: tuple[str, ...] = ("undici", "proxy-from-env")
NODE_RULES: Mapping[str, Callable[[str, Destination], bool]] = {
    "undici": undici_direct,
    "proxy-from-env": proxy_from_env_direct,
}
NODE_TITLES: Mapping[str, str] = {
    "undici": "Node.js undici 7 EnvHttpProxyAgent (fetch)",
    "proxy-from-env": "Node.js proxy-from-env 2.1 (axios)",
}
# columns besides CLIENTS, like java: outside the default --strict set
EXTRA_CLIENTS = (*EXTRA_CLIENTS, *NODE_CLIENTS)
EXTRA_RULES = {**EXTRA_RULES, **NODE_RULES}
EXTRA_TITLES = {**EXTRA_TITLES, **NODE_TITLES}
