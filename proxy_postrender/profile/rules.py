"""The cross-field rules of a profile: what no single field's check can say.

Section rules take the section's checked values (see check.read) and run right
after its fields; the others are called by the loader between sections, in the
order that decides which of two errors a profile is told about. Where JSON
Schema can say the same, schema.py says it too.
"""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import ProfileError
from proxy_postrender.redact import userinfo

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# the variables the tool sets itself (either case), which spec.workloads.extraEnv may not
RESERVED_ENV: tuple[str, ...] = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "JAVA_TOOL_OPTIONS")


# --- section rules ------------------------------------------------------------------


def credentials(values: dict[str, Any], where: str) -> None:
    """spec.credentials: createSecret needs secretRef, and forbidPlaintext forbids it."""
    create = values["createSecret"]
    if create and values["secretRef"] is None:
        raise ProfileError(f"{where}.createSecret: needs secretRef (the Secret's name)")
    if create and values["forbidPlaintext"]:
        raise ProfileError(
            f"{where}: createSecret writes the credentials into the output, which "
            "forbidPlaintext forbids; create the Secret another way"
        )


def nodes(values: dict[str, Any], where: str) -> None:
    """spec.nodes: the drop-ins and the env file are three different files."""
    chosen = [values[k] for k in ("containerdDropIn", "kubeletDropIn", "envFile")]
    chosen = [path for path in chosen if path is not None]
    if len(set(chosen)) != len(chosen):
        raise ProfileError(f"{where}: containerdDropIn, kubeletDropIn and envFile must differ")


def workloads(values: dict[str, Any], where: str) -> None:
    """spec.workloads: extraEnv sets other variables, each once; one case at least."""
    seen: set[str] = set()
    for item in values["extraEnv"]:
        name = item["name"]
        if name.upper() in RESERVED_ENV:
            raise ProfileError(f"{where}.extraEnv: {name} is a variable the tool sets itself")
        if name in seen:
            raise ProfileError(f"{where}.extraEnv: {name} is listed twice")
        seen.add(name)
    if not values["upperCase"] and not values["lowerCase"]:
        raise ProfileError(f"{where}: upperCase and lowerCase cannot both be false")


def requirement(values: dict[str, Any], where: str) -> None:
    """A matchExpressions item: In and NotIn need values, Exists and DoesNotExist take none."""
    operator = values["operator"]
    if operator in ("In", "NotIn") and not values["values"]:
        raise ProfileError(f"{where}.values: {operator} needs at least one value")
    if operator in ("Exists", "DoesNotExist") and values["values"]:
        raise ProfileError(f"{where}.values: {operator} takes no values")


# [NAMESPACE/]NAME of a Cluster: a DNS-1123 label, then a DNS-1123 subdomain
CLUSTER_NAME = r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$"


def cluster_match(values: dict[str, Any], where: str) -> None:
    """spec.clusters[].match: names are [NAMESPACE/]NAME, and the match says something."""
    import re  # lazy: only a profile with spec.clusters

    for index, name in enumerate(values["names"]):
        if not re.match(CLUSTER_NAME, name):
            raise ProfileError(
                f"{where}.names[{index}]: {name!r} is not [NAMESPACE/]NAME of a Cluster"
            )
    if not values["names"] and not values["labels"]:
        raise ProfileError(
            f"{where}: give names or labels (an entry for every Cluster is what the defaults are)"
        )


# --- rules between sections (called by the loader) ------------------------------------


def api_version_and_kind(obj: Mapping[str, Any], origin: str, api_version: str, kind: str) -> None:
    if obj.get("apiVersion") != api_version or obj.get("kind") != kind:
        raise ProfileError(
            f"{origin}: expected apiVersion {api_version} and kind {kind}, "
            f"got {obj.get('apiVersion')!r} / {obj.get('kind')!r}"
        )


def no_user_with_from_env(url: str, where: str) -> None:
    """spec.credentials.fromEnv gives the user: the proxy URL must not."""
    if userinfo(url) is not None:
        raise ProfileError(
            f"{where}: the URL has a user already; spec.credentials.fromEnv adds one"
        )


def a_proxy(proxies: Mapping[str, str | None], origin: str) -> None:
    if not proxies["httpProxy"] and not proxies["httpsProxy"]:
        raise ProfileError(f"{origin}: spec.httpProxy or spec.httpsProxy is required")


def secret_values(secret_ref: str | None, proxies: Mapping[str, str | None]) -> set[str]:
    """The proxy values (``httpProxy``...) whose credentials spec.credentials.secretRef
    keeps in a Secret (so out of every manifest: the engine refuses a kubeadm object that
    node bootstrap would write them into inline, see engine.py)."""
    if not secret_ref:
        return set()
    return {name for name, url in proxies.items() if url and userinfo(url)}


def setter_value(
    source: str, path: str, kind: str, secret: set[str], where: str, *, preset: bool = False
) -> None:
    """A field setter must not write a password the profile keeps in a Secret: the fields
    setters fill take plain strings, no Secret reference, and a URL without its user-info
    would fail to authenticate without a word."""
    named = ("httpProxy", "httpsProxy") if source == "proxyForServer" else (source,)
    if not set(named) & secret:
        return
    fix = f"an entry of your own without {path} instead of the preset" if preset else None
    raise ProfileError(
        f"{where}: {path} would get spec.{source} with its password in clear ({kind} takes "
        "a plain string there, no Secret reference), while spec.credentials.secretRef "
        f"keeps the password in a Secret; use {fix or f'the entry without {path}'} and fill "
        "that field another way, or a proxy URL without a password"
    )


def ca_env(extra_env: tuple[tuple[str, str], ...], ca_env: tuple[str, ...], origin: str) -> None:
    """spec.workloads.extraEnv and spec.caBundle.env set different variables."""
    clash = sorted(set(ca_env) & {name for name, _ in extra_env})
    if clash:
        raise ProfileError(
            f"{origin}: spec.workloads.extraEnv sets {', '.join(clash)}, which "
            "spec.caBundle.env sets too"
        )
