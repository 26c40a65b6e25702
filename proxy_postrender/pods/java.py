"""JAVA_TOOL_OPTIONS for JVMs, which ignore the *_proxy variables."""

from __future__ import annotations

from collections.abc import Mapping


def java_tool_options(env: Mapping[str, str]) -> str:
    """JVM system properties for the proxies (the JVM ignores the *_proxy variables).

    ``http.nonProxyHosts`` takes ``|``-separated host patterns with a leading or
    trailing ``*`` (see :func:`proxy_postrender.noproxy.clients.java_non_proxy_hosts`,
    where the JVM's reading of it is modelled and checked). A proxy's user and
    password have no system property (the JVM needs an Authenticator), so only host
    and port are written.
    """
    from urllib.parse import urlsplit

    from proxy_postrender.noproxy.clients import java_non_proxy_hosts

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
    hosts = java_non_proxy_hosts(env.get("NO_PROXY") or env.get("no_proxy") or "")
    if options and hosts:
        options.append("-Dhttp.nonProxyHosts=" + hosts)
    return " ".join(options)
