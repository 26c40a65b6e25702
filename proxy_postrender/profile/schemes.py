"""Warnings about the proxy URLs a profile (or the flags) ends up with: an httpProxy
without an httpsProxy, a proxy URL with the ``https`` scheme, and a proxy password
that JAVA_TOOL_OPTIONS cannot carry."""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from proxy_postrender.profile.records import Profile

HTTP_ONLY = (
    "only httpProxy is set (spec.httpProxy or --http-proxy): the tool sets no HTTPS_PROXY, "
    "so requests to https:// URLs go direct, past the proxy; set httpsProxy too (usually "
    "the same URL)"
)

JAVA_NO_PASSWORD = (
    "the proxy URLs hold a user and password, but JAVA_TOOL_OPTIONS carries no proxy user "
    "or password (no JVM system property takes one; spec.workloads.javaToolOptions writes "
    "the host and port): a JVM gets 407 from a proxy that asks for them unless the "
    "application installs a java.net.Authenticator"
)


def tls_proxy(keys: list[str]) -> str:
    what = (
        f"{keys[0]} is an https:// URL"
        if len(keys) == 1
        else f"{' and '.join(keys)} are https:// URLs"
    )
    return (
        f"{what}: clients must speak TLS to the proxy itself, which curl >= 7.52, Go's "
        "net/http >= 1.10 and Python requests on urllib3 >= 1.26 do and other clients may "
        "not; use http:// unless the proxy listens with TLS"
    )


def advice(profile: Profile) -> list[str]:
    """The warnings for ``profile`` and each of its cluster entries, once each."""
    found: list[str] = []
    for one in (profile, *(entry.profile for entry in profile.entries())):
        said = []
        if one.http_proxy and not one.https_proxy:
            said.append(HTTP_ONLY)
        urls = (("httpProxy", one.http_proxy), ("httpsProxy", one.https_proxy))
        tls = [key for key, url in urls if url and url[:8].lower() == "https://"]
        if tls:
            said.append(tls_proxy(tls))
        if one.workloads.java and one.has_credentials:
            said.append(JAVA_NO_PASSWORD)
        found += [s for s in said if s not in found]
    return found
