"""The generic validator: check a section of a profile against its option table.

:func:`read` checks that a value is a mapping, that it has no unknown field
(with a "did you mean" hint for a wrong case), then reads every field of the
table in order with the check of its kind, and runs the section's cross-field
rule. It returns plain values (tuples, strings, nested dicts) with the
defaults filled in, for the builders in :mod:`.build`.

Messages are templates keyed by a kind's name (``"bool"``) or by a kind and
one of its checks (``"addresses.kind"``); a field or a section may replace any
of them (``Option.messages``), so that the generic checks say what the
hand-written ones said before. Regular expressions are written as strings
and compiled on first use (``re``'s cache): most runs need none of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import ProfileError
from proxy_postrender.noproxy import syntax
from proxy_postrender.redact import redact_url, userinfo
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

    from proxy_postrender.profile.options import Option, Section
    from proxy_postrender.redact import Redactor

    Check = Callable[[Option, Any, str, "Context"], Any]

# shared with schema.py: every one of them is also an ECMAScript pattern
DNS_NAME = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
PLAIN_PATH = r"^/[A-Za-z0-9._/@+-]+$"
ENV_NAME = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"  # a container's variable (Kubernetes' rule)
VARIABLE = r"^[A-Za-z_][A-Za-z0-9_]*$"  # a variable of the tool's environment
TIMESTAMP = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"  # metav1.Time's form

MESSAGES: Mapping[str, str] = {
    "mapping": "{where}: must be a mapping",
    "mappings": "{where}: must be a list",
    "rules": "{where}: must be a rule (a mapping) or a list of rules",
    "one_of": "{where}: give one of {names}",
    "bool": "{where}: must be true or false",
    "string": "{where}: must be a string",
    "strings": "{where}: must be a list of non-empty strings",
    "labels": "{where}: must map label keys to string values",
    "label-key": "{where}: must be a label key",
    "choice": "{where}: {value!r} is not one of {values}",
    "presets": "{where}: must be a list of preset names",
    "presets.unknown": "{where}: unknown preset(s) {unknown} (known: {values})",
    "proxy-url": "{where}: must be a string",
    "no-proxy": "{where}: must be a list or a comma-separated string",
    "no-proxy.entry": "{where}: every entry must be a string",
    "syntax": "{where}: {error}",
    "addresses": "{where}: must be a list of strings or a comma-separated string",
    "addresses.kind": "{where}: {value!r} is not {wanted}",
    "host": "{where}: must be a string",
    "host.kind": "{where}: {value!r} is not {wanted}",
    "endpoint": "{where}: must be a host name or address, optionally with a port",
    "endpoint.kind": "{where}: {value!r} is not a host name or address",
    "path": "{where}: must be an absolute path of plain characters",
    "node-path": "{where}: must be an absolute path of plain characters",
    "drop-in": "{where}: must be an absolute path of plain characters",
    "timestamp": "{where}: must be a time in UTC as Kubernetes writes one (2026-01-31T08:00:00Z)",
    "drop-in.form": "{where}: a drop-in is a UNIT.d/NAME.conf file",
    "file": "{where}: must be a path",
    "pem": "{where}: must be PEM text",
    "env-name": "{where}: {value!r} is not an environment variable name",
    "env-names": "{where}: must be a list of environment variable names",
    "variable": "{where}: must name an environment variable",
    "variable.unset": "{where}: environment variable {value} is not set",
    "variable.denied": "{where}: {denied}",
    "object-name": "{where}: must be a Kubernetes object name",
}
_WANTED = {"cidr": "a CIDR", "ip": "an IP address", "domain": "a host name"}


class Context(FrozenStruct):
    """What some checks need besides the value."""

    environ: Mapping[str, str]  # for fields that name a variable of the tool's environment
    redactor: Redactor | None = None  # secret values are registered as soon as they are read
    denied: str | None = None  # set: the profile may read no variable, and this says why


def fail(messages: Mapping[str, str] | None, key: str, where: str, **values: Any) -> NoReturn:
    """Raise the message ``key`` (``messages`` first, then the kind's)."""
    template = (messages or {}).get(key) or MESSAGES[key]
    raise ProfileError(template.format(where=where, **values))


def unknown_keys(obj: Mapping[Any, Any], allowed: set[str] | frozenset[str], where: str) -> None:
    """Refuse fields that are not ``allowed``, hinting at a wrong case."""
    unknown = sorted(str(k) for k in obj if k not in allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        by_case = {name.lower(): name for name in allowed}
        hints = [by_case[k.lower()] for k in unknown if k.lower() in by_case]
        hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
        raise ProfileError(
            f"{where}: unknown field(s) {', '.join(unknown)}{hint} (allowed: {known})"
        )


def mapping(section: Section, value: Any, where: str) -> Mapping[Any, Any]:
    """``value`` as a mapping of ``section``'s fields: no unknown field, the
    ``one_of`` fields given once, the required fields present."""
    messages = section.messages
    if not isinstance(value, Mapping):
        fail(messages, "mapping", where)
    if messages and "keys" in messages:
        if any(k not in section.names for k in value):
            fail(messages, "keys", where)
    else:
        unknown_keys(value, section.names, where)
    if section.one_of and sum(name in value for name in section.one_of) != 1:
        fail(messages, "one_of", where, names=" or ".join(section.one_of))
    if (
        messages
        and "required" in messages
        and any(o.required and o.name not in value for o in section.options)
    ):
        fail(messages, "required", where)
    return value


def read(section: Section, value: Any, where: str, ctx: Context) -> dict[str, Any]:
    """Check ``value`` against ``section``; its fields' values, defaults filled in."""
    given = mapping(section, value, where)
    values: dict[str, Any] = {}
    sep = ": " if section.root else "."
    for option in section.options:
        name = option.name
        values[name] = field(option, given, f"{where}{sep}{name}", ctx)
        if name == section.switch and values[name] is False:
            return values  # switched off: the other fields are not read
    if section.rule is not None:
        section.rule(values, where)
    return values


def field(option: Option, given: Mapping[Any, Any], where: str, ctx: Context) -> Any:
    """The value of the field ``option`` of the mapping ``given``, checked."""
    name = option.name
    if name not in given:
        if option.required:
            return _CHECKS[option.kind.name](option, None, where, ctx)
        return default(option, where, ctx)
    value = given[name]
    null = option.null
    if value is None or (null == "falsy" and not value):
        if null == "check":
            return _CHECKS[option.kind.name](option, None, where, ctx)
        if null == "none":
            return None
        if null == "empty":
            return ()
        return default(option, where, ctx)
    return _CHECKS[option.kind.name](option, value, where, ctx)


def default(option: Option, where: str, ctx: Context) -> Any:
    """The default of ``option``; a section's default is read for its own defaults."""
    table = option.kind.table() if isinstance(option.default, Mapping) else None
    if table is not None:
        return read(table, option.default, where, ctx)
    return option.default


# --- the checks, one per kind: (option, value, where, context) -> the value to use ----


def _any(option: Option, value: Any, where: str, ctx: Context) -> Any:
    return value


def _bool(option: Option, value: Any, where: str, ctx: Context) -> bool:
    if not isinstance(value, bool):
        fail(option.messages, "bool", where)
    return value


def _string(option: Option, value: Any, where: str, ctx: Context) -> str:
    if not isinstance(value, str):
        fail(option.messages, option.kind.name, where)
    return value


def _strings(option: Option, value: Any, where: str, ctx: Context) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        fail(option.messages, "strings", where)
    return tuple(value)


def _labels(option: Option, value: Any, where: str, ctx: Context) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        fail(option.messages, "labels", where)
    return tuple(value.items())


def _label_key(option: Option, value: Any, where: str, ctx: Context) -> str:
    if not isinstance(value, str) or not value:
        fail(option.messages, "label-key", where)
    return value


def _choice(option: Option, value: Any, where: str, ctx: Context) -> Any:
    allowed = option.kind.values
    if value not in allowed:
        fail(option.messages, "choice", where, value=value, values=", ".join(allowed))
    return value


def _presets(option: Option, value: Any, where: str, ctx: Context) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        fail(option.messages, "presets", where)
    known = option.kind.values
    unknown = [name for name in value if name not in known]
    if unknown:
        fail(
            option.messages,
            "presets.unknown",
            where,
            unknown=", ".join(unknown),
            values=", ".join(known),
        )
    return tuple(dict.fromkeys(value))


def _no_proxy(
    option: Option, value: Any, where: str, ctx: Context
) -> tuple[syntax.NoProxyEntry, ...]:
    if not isinstance(value, (str, list)):
        fail(option.messages, "no-proxy", where)
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        fail(option.messages, "no-proxy.entry", where)
    try:
        return tuple(syntax.normalise(syntax.split_value(value)))
    except syntax.NoProxyEntryError as exc:
        fail(option.messages, "syntax", where, error=exc)


def _entry(option: Option, text: str, where: str) -> syntax.NoProxyEntry:
    try:
        return syntax.parse_entry(text)
    except syntax.NoProxyEntryError as exc:
        fail(option.messages, "syntax", where, error=exc)


def _check_entries(option: Option, values: tuple[str, ...], where: str, key: str) -> None:
    kinds = option.kind.values
    for value in values:
        entry = _entry(option, value, where)
        if entry.kind not in kinds or entry.port is not None:
            wanted = " or ".join(_WANTED[k] for k in kinds)
            fail(option.messages, key, where, value=value, wanted=wanted)


def _addresses(option: Option, value: Any, where: str, ctx: Context) -> tuple[str, ...]:
    if isinstance(value, str):
        value = syntax.split_value(value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        fail(option.messages, "addresses", where)
    values = tuple(v.strip() for v in value if v.strip())
    _check_entries(option, values, where, "addresses.kind")
    return values


def _host(option: Option, value: Any, where: str, ctx: Context) -> str:
    if not isinstance(value, str):
        fail(option.messages, "host", where)
    _check_entries(option, (value,), where, "host.kind")
    return value.strip().lower().rstrip(".")


def _endpoint(option: Option, value: Any, where: str, ctx: Context) -> str:
    """The host of ``host``, ``host:port`` or ``[v6]:port``."""
    if not isinstance(value, str) or not value.strip():
        fail(option.messages, "endpoint", where)
    entry = _entry(option, value, where)
    if entry.kind not in ("domain", "ip"):
        fail(option.messages, "endpoint.kind", where, value=value)
    if entry.port is None:
        return entry.text
    host = entry.text.rsplit(":", 1)[0]
    return host[1:-1] if host.startswith("[") else host


def _path(option: Option, value: Any, where: str, ctx: Context) -> str:
    name = option.kind.name
    if (
        not isinstance(value, str)
        or not re.match(PLAIN_PATH, value)
        or (name != "path" and ".." in value.split("/"))
    ):
        fail(option.messages, name, where)
    if name == "drop-in" and (not value.endswith(".conf") or ".d/" not in value):
        fail(option.messages, "drop-in.form", where)
    return value


def _env_name(option: Option, value: Any, where: str, ctx: Context) -> str:
    if not isinstance(value, str) or not re.match(ENV_NAME, value):
        fail(option.messages, "env-name", where, value=value)
    return value


def _env_names(option: Option, value: Any, where: str, ctx: Context) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(
        isinstance(n, str) and re.match(ENV_NAME, n) for n in value
    ):
        fail(option.messages, "env-names", where)
    return tuple(value)


def _variable(option: Option, value: Any, where: str, ctx: Context) -> str:
    """The value of the variable of the tool's environment that ``value`` names."""
    if not isinstance(value, str) or not re.match(VARIABLE, value):
        fail(option.messages, "variable", where)
    if ctx.denied is not None:
        fail(option.messages, "variable.denied", where, denied=ctx.denied)
    if value not in ctx.environ:
        fail(option.messages, "variable.unset", where, value=value)
    found = ctx.environ[value]
    if option.secret and ctx.redactor is not None:
        ctx.redactor.add(found)
    return found


def _timestamp(option: Option, value: Any, where: str, ctx: Context) -> str:
    """A time as Kubernetes writes one (``2026-11-27T10:00:00Z``); YAML reads one unquoted
    as a date and time, which is written back in that form when it is in UTC."""
    import datetime  # lazy: only profiles with a timestamp

    if isinstance(value, datetime.datetime) and value.utcoffset() == datetime.timedelta(0):
        value = value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if not isinstance(value, str) or not re.match(TIMESTAMP, value):
        fail(option.messages, "timestamp", where)
    try:
        datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        fail(option.messages, "timestamp", where)
    return value


def _object_name(option: Option, value: Any, where: str, ctx: Context) -> str:
    limit = option.kind.limit
    if (
        not isinstance(value, str)
        or (limit is not None and len(value) > limit)
        or not re.match(DNS_NAME, value)
    ):
        fail(option.messages, "object-name", where)
    return value


def _mapping(option: Option, value: Any, where: str, ctx: Context) -> dict[str, Any]:
    section = option.kind.table()
    assert section is not None
    if option.messages and not isinstance(value, Mapping):
        fail(option.messages, "mapping", where)
    return read(section, value, where, ctx)


def _mappings(option: Option, value: Any, where: str, ctx: Context) -> tuple[dict[str, Any], ...]:
    section = option.kind.table()
    assert section is not None
    if isinstance(value, list):
        items: list[Any] = value
    elif isinstance(value, (str, Mapping)):
        items = list(value)  # as before: read item by item, so the first item is named
    else:
        fail(option.messages, "mappings", where)
    return tuple(read(section, item, f"{where}[{i}]", ctx) for i, item in enumerate(items))


def _rules(option: Option, value: Any, where: str, ctx: Context) -> tuple[dict[str, Any], ...]:
    section = option.kind.table()
    assert section is not None
    if isinstance(value, Mapping):
        return (read(section, value, where, ctx),)
    if not isinstance(value, list):
        fail(option.messages, "rules", where)
    return tuple(read(section, item, f"{where}[{i}]", ctx) for i, item in enumerate(value))


_CHECKS: Mapping[str, Check] = {
    "any": _any,
    "bool": _bool,
    "string": _string,
    "file": _string,
    "pem": _string,
    "proxy-url": _string,
    "strings": _strings,
    "labels": _labels,
    "label-key": _label_key,
    "choice": _choice,
    "presets": _presets,
    "no-proxy": _no_proxy,
    "addresses": _addresses,
    "host": _host,
    "endpoint": _endpoint,
    "path": _path,
    "node-path": _path,
    "drop-in": _path,
    "env-name": _env_name,
    "env-names": _env_names,
    "variable": _variable,
    "object-name": _object_name,
    "timestamp": _timestamp,
    "mapping": _mapping,
    "mappings": _mappings,
    "rules": _rules,
    # "const" (apiVersion and kind: rules.api_version_and_kind), "jsonpath" and
    # "setters" (spec.targets: loader._targets) are checked by hand
}


# RFC 3986 user-info as Go's net/url takes it: unreserved, sub-delims, ":" and
# percent-escapes ("@" too, but curl ends the user-info at the first "@": refused)
_USERINFO = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:%"
)
_HEX = frozenset("0123456789ABCDEFabcdef")


def _userinfo_problem(info: str) -> str | None:
    """What in ``user[:password]`` Go programs (containerd, kubelet, kubeadm) would misread,
    said without the value: Go re-reads a URL it cannot parse with ``http://`` in front,
    which gives another proxy, or none."""
    user, _, password = info.partition(":")
    for part, text in (("user name", user), ("password", password)):
        for i, ch in enumerate(text):
            if ch == "%" and not (len(text) >= i + 3 and {text[i + 1], text[i + 2]} <= _HEX):
                return f"the {part} holds a '%' that starts no %XX escape (write '%' as %25)"
            if ch in _USERINFO:
                continue
            if ord(ch) > 0x7E:
                return (
                    f"the {part} holds a non-ASCII character (percent-encode its UTF-8 bytes, "
                    "e.g. é as %C3%A9)"
                )
            return f"the {part} holds '{ch}' (percent-encode it as %{ord(ch):02X})"
    return None


_DELIMITERS = "/?#[]@"


def _delimiters(info: str) -> str:
    """Which URL delimiters the user name and the password hold, and their escapes, said
    without the values. The message names them before the URL: the redactor masks from a
    URL's scheme to the last "@" on the line (a URL that is no valid one), and would take
    an "@" of the explanation after the URL for the end of its user-info."""
    user, _, password = info.partition(":")
    said = []
    for part, text in (("user name", user), ("password", password)):
        found = [ch for ch in _DELIMITERS if ch in text]
        if found:
            chars = " ".join(f"'{ch}'" for ch in found)
            codes = " ".join(f"%{ord(ch):02X}" for ch in found)
            said.append(f"the {part} holds {chars} (percent-encode: {codes})")
    return "; ".join(said)


def validate_proxy_url(value: str, where: str) -> str:
    """Check a proxy URL; messages never repeat the URL's credentials.

    What passes is read the same by Go's net/http (containerd, kubelet, kubeadm),
    curl and Python: tests/test_go_proxy_urls.py checks it against Go."""
    shown = redact_url(value)
    if not value:
        raise ProfileError(f"{where}: must not be empty")
    if any(ch.isspace() for ch in value):
        raise ProfileError(f"{where}: proxy URL {shown!r} contains whitespace")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ProfileError(f"{where}: proxy URL {shown!r} contains a control character")
    if "://" not in value:
        raise ProfileError(f"{where}: proxy URL {shown!r} needs a scheme (http:// or https://)")
    if "{" in value or "}" in value:
        # Cluster API's cloud-init user data is a Jinja template: braces would be expanded
        raise ProfileError(
            f"{where}: proxy URL {shown!r} holds '{{' or '}}'; percent-encode them (%7B %7D)"
        )
    info = userinfo(value)
    if info and any(ch in info for ch in _DELIMITERS):
        raise ProfileError(f"{where}: {_delimiters(info)} in proxy URL {shown!r}")
    problem = _userinfo_problem(info) if info else None
    if problem:
        raise ProfileError(
            f"{where}: proxy URL {shown!r}: {problem}; Go programs (containerd, kubelet, "
            "kubeadm) would use another proxy or none"
        )
    if not shown.isascii():
        raise ProfileError(
            f"{where}: proxy URL {shown!r}: the host must be ASCII (write a name in its "
            "IDNA form, xn--...)"
        )
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        # the message of urllib's ValueError can quote the netloc: do not pass it on
        reason = "invalid port" if "port" in str(exc).lower() else "malformed host"
        raise ProfileError(f"{where}: proxy URL {shown!r}: {reason}") from None
    if parts.scheme not in ("http", "https"):
        raise ProfileError(f"{where}: proxy URL {shown!r}: scheme must be http or https")
    if not parts.hostname:
        raise ProfileError(f"{where}: proxy URL {shown!r} has no host")
    if not syntax.is_host(parts.hostname):
        raise ProfileError(
            f"{where}: proxy URL {shown!r}: the host is not a host name or an IP address "
            "(IPv6 in brackets, without a zone)"
        )
    if port is not None and (port == 0 or not parts.netloc.rpartition(":")[2].isdigit()):
        raise ProfileError(f"{where}: proxy URL {shown!r}: port must be 1-65535")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ProfileError(f"{where}: proxy URL {shown!r} must not have a path, query or fragment")
    return value
