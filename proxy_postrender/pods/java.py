"""JAVA_TOOL_OPTIONS for JVMs, which ignore the *_proxy variables."""

from __future__ import annotations

from collections.abc import Mapping


def java_tool_options(env: Mapping[str, str]) -> str:
    """JVM system properties for the proxies (the JVM ignores the *_proxy variables).

    ``http.nonProxyHosts`` takes ``|``-separated host patterns with a leading or
    trailing ``*``; CIDRs and ports have no equivalent and are left out. A
    proxy's user and password have no system property either (the JVM needs an
    Authenticator), so only host and port are written.
    """
    from urllib.parse import urlsplit

    options = []
    for scheme in ("http", "https"):
        url = env.get(f"{scheme.upper()}_PROXY") or env.get(f"{scheme}_proxy")
        if not url:
            continue
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        port = parts.port or (443 if parts.scheme == "https" else 80)
        options += [f"-D{scheme}.proxyHost={host}", f"-D{scheme}.proxyPort={port}"]
    patterns: list[str] = []
    for entry in (env.get("NO_PROXY") or env.get("no_proxy") or "").split(","):
        entry = entry.strip()
        if not entry or "/" in entry or entry.startswith("["):
            continue
        if entry == "*":
            patterns = ["*"]
            break
        if entry.count(":") == 1:
            continue  # host:port
        if entry.startswith("."):
            patterns.append("*" + entry)
        elif any(c.isalpha() for c in entry) and ":" not in entry:
            patterns += [entry, "*." + entry]  # a domain and its subdomains, as Go reads it
        else:
            patterns.append(entry)  # an address
    if options and patterns:
        options.append("-Dhttp.nonProxyHosts=" + "|".join(dict.fromkeys(patterns)))
    return " ".join(options)
