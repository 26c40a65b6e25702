"""The builders: checked sections of a profile (check.read's values) into the
settings records the engine uses (ClusterNetwork, NoProxyConfig, NodeSettings,
WorkloadSettings, Credentials) and the CA bundle's certificates."""

from __future__ import annotations

import os
import re
from urllib.parse import quote

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import ProfileError
from proxy_postrender.nodes.settings import NodeSettings
from proxy_postrender.noproxy import scope, syntax
from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
from proxy_postrender.pods.selection import Criteria, LabelSelector, Requirement, WorkloadSettings
from proxy_postrender.profile import check, tables
from proxy_postrender.profile.records import Credentials, InputProfile

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

_SPEC = {option.name: option for option in tables.SPEC.options}
_PEM_BLOCK = r"-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+-----END CERTIFICATE-----\n?"


def spec_field(name: str, fields: Mapping[str, Any], origin: str, ctx: check.Context) -> Any:
    """The checked value of the spec field ``name``."""
    return check.field(_SPEC[name], fields, f"{origin}: spec.{name}", ctx)


def credentials(
    values: dict[str, Any] | None, ctx: check.Context
) -> tuple[Credentials, str | None]:
    """The credentials section, and the user-info that ``fromEnv`` builds (URL-encoded)."""
    if values is None:
        return Credentials(), None
    info = None
    from_env = values["fromEnv"]
    if from_env is not None:
        info = ":".join(quote(from_env[key], safe="") for key in ("user", "password"))
        if ctx.redactor is not None:
            ctx.redactor.add(info)
    return Credentials(values["secretRef"], values["createSecret"], values["forbidPlaintext"]), info


def nodes(values: dict[str, Any]) -> NodeSettings | None:
    if not values["enabled"]:
        return None
    return NodeSettings(
        values["containerdDropIn"],
        values["kubeletDropIn"],
        credentials=values["credentials"],
        secret_name=values["secretName"],
        create_secret=values["createSecret"],
        env_file=values["envFile"],
        windows=values["windows"],
        layout=values["layout"],
        static_pods=values["staticPods"],
        rollout=values["rollout"],
        rollout_after=values["rolloutAfter"],
    )


def _selector(values: dict[str, Any] | None) -> LabelSelector | None:
    if values is None:
        return None
    requirements = tuple(
        Requirement(item["key"], item["operator"], item["values"])
        for item in values["matchExpressions"]
    )
    return LabelSelector(values["matchLabels"], requirements)


def _criteria(values: dict[str, Any]) -> Criteria:
    return Criteria(
        kinds=values["kinds"],
        namespaces=values["namespaces"],
        names=values["names"],
        selector=_selector(values["selector"]),
    )


def workloads(values: dict[str, Any], namespace: str | None) -> WorkloadSettings:
    containers = values["containers"]
    return WorkloadSettings(
        include=tuple(_criteria(rule) for rule in values["include"]),
        exclude=tuple(_criteria(rule) for rule in values["exclude"]),
        containers=containers["include"],
        exclude_containers=containers["exclude"],
        init_containers=values["initContainers"],
        namespace=namespace,
        upper_case=values["upperCase"],
        lower_case=values["lowerCase"],
        java=values["javaToolOptions"],
        extra_env=tuple((item["name"], item["value"]) for item in values["extraEnv"]),
    )


def ca_pem(
    values: dict[str, Any], where: str, base: str | None, source: InputProfile | None = None
) -> str:
    """The CA's certificates, from ``file`` (relative to ``base``) or ``pem``; a profile
    that comes with the input (``source``) reads only files in its directory."""
    if values["file"] is not None:
        path = os.path.expanduser(values["file"])
        if not os.path.isabs(path) and base is not None:
            path = os.path.join(base, path)
        if source is not None:
            _inside(path, values["file"], f"{where}.file", source)
        try:
            with open(path, encoding="utf-8") as handle:
                pem = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or "not UTF-8 text"
            raise ProfileError(f"{where}.file: cannot read {path}: {reason}") from None
    else:
        pem = values["pem"]
    pem = pem.replace("\r\n", "\n")
    # text around the blocks (comments, openssl's "Bag Attributes") is left out
    blocks = [b if b.endswith("\n") else b + "\n" for b in re.findall(_PEM_BLOCK, pem)]
    if not blocks:
        raise ProfileError(f"{where}: no PEM certificate (BEGIN/END CERTIFICATE) in it")
    return "".join(blocks)


def _inside(path: str, given: str, where: str, source: InputProfile) -> None:
    """Refuse a file outside the directory of a profile that comes with the input (links
    followed: a link in the directory to a file elsewhere is outside)."""
    directory = os.path.realpath(source.directory)
    real = os.path.realpath(path)
    if os.path.commonpath([directory, real]) != directory:
        raise ProfileError(
            f"{where}: {given!r} is outside {directory}: this profile comes with the input "
            f"({source.route}) and reads files only in that directory"
        )


def no_proxy(fields: Mapping[str, Any], origin: str, ctx: check.Context) -> NoProxyConfig:
    """The NO_PROXY settings: entries, the cluster's networks, presets, style, discovery."""
    chosen = spec_field("noProxyPresets", fields, origin, ctx)
    style = spec_field("noProxyStyle", fields, origin, ctx)
    discover = spec_field("noProxyDiscovery", fields, origin, ctx)
    entries = spec_field("noProxy", fields, origin, ctx)
    net = spec_field("cluster", fields, origin, ctx)
    config = NoProxyConfig(
        entries=entries,
        cluster=ClusterNetwork(
            label="spec.cluster",
            pods=net["podCIDRs"],
            services=net["serviceCIDRs"],
            domain=net["domain"],
            api_server=net["apiServer"],
            endpoint=net["controlPlaneEndpoint"],
            nodes=net["nodeCIDRs"],
        ),
        presets=chosen,
        style=style,
        discover=discover,
    )
    try:
        scope.build(config)
    except syntax.NoProxyEntryError as exc:  # a preset made invalid by the cluster domain
        raise ProfileError(f"{origin}: {exc}") from None
    return config
