"""The ProxyProfile: load it from a file, flags or the environment, and validate it.

A profile is a Kubernetes-style object so that one file serves as a CLI
argument, a KRM ``functionConfig`` and a kustomize plugin config::

    apiVersion: proxy-postrender.io/v1alpha1
    kind: ProxyProfile
    metadata: {name: corp}
    spec:
      httpProxy: http://proxy.corp.example:3128
      httpsProxy: http://proxy.corp.example:3128
      noProxy: [internal.corp.example, 10.0.0.0/8]

String values may reference environment variables as ``${NAME}``; ``$${``
writes a literal ``${``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any
from urllib.parse import quote, urlsplit

from proxy_postrender import structs, targets
from proxy_postrender.errors import ProfileError
from proxy_postrender.nodes.kubeadm import DEFAULT_ENV_FILE, NodeSettings
from proxy_postrender.noproxy import presets, scope, syntax
from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
from proxy_postrender.objects import api_group
from proxy_postrender.pods.selection import (
    OPERATORS,
    CaMount,
    Criteria,
    LabelSelector,
    Requirement,
    WorkloadSettings,
)
from proxy_postrender.redact import Redactor, redact_url, userinfo
from proxy_postrender.structs import Struct, field
from proxy_postrender.targets import TargetTable

API_VERSION = "proxy-postrender.io/v1alpha1"
KIND = "ProxyProfile"
ON_CONFLICT = ("keep", "override", "fail")

_TOP_LEVEL_FIELDS = {"apiVersion", "kind", "metadata", "spec"}
_METADATA_FIELDS = {"name", "namespace", "labels", "annotations"}
_SPEC_FIELDS = {
    "httpProxy",
    "httpsProxy",
    "noProxy",
    "noProxyPresets",
    "noProxyStyle",
    "noProxyDiscovery",
    "cluster",
    "onConflict",
    "nodes",
    "workloads",
    "credentials",
    "caBundle",
    "targets",
}
_CA_FIELDS = {"file", "pem", "workloads", "nodes", "configMapName", "mountPath", "env"}
_CA_ENV_DEFAULT = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")
_CREDENTIAL_FIELDS = {"fromEnv", "secretRef", "createSecret", "forbidPlaintext"}
_WORKLOAD_FIELDS = {
    "include",
    "exclude",
    "containers",
    "initContainers",
    "upperCase",
    "lowerCase",
    "javaToolOptions",
    "extraEnv",
}
_CRITERIA_FIELDS = {"kinds", "namespaces", "names", "selector"}
_ENV_NAME_RE = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_CLUSTER_FIELDS = {
    "domain",
    "podCIDRs",
    "serviceCIDRs",
    "apiServer",
    "controlPlaneEndpoint",
    "nodeCIDRs",
}
_NODES_FIELDS = {
    "enabled",
    "containerdDropIn",
    "kubeletDropIn",
    "credentials",
    "secretName",
    "createSecret",
    "envFile",
    "windows",
    "layout",
}
_DNS_NAME_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DEFAULT_CONTAINERD_DROPIN = "/etc/systemd/system/containerd.service.d/http-proxy.conf"
DEFAULT_KUBELET_DROPIN = "/etc/systemd/system/kubelet.service.d/http-proxy.conf"
_PATH_RE = re.compile(r"^/[A-Za-z0-9._/@+-]+$")
_VAR_RE = re.compile(r"\$(\$?)\{([^}]*)\}")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Profile(Struct, frozen=True):
    name: str
    http_proxy: str | None
    https_proxy: str | None
    no_proxy_config: NoProxyConfig = field(default_factory=NoProxyConfig)
    workloads: WorkloadSettings = field(default_factory=WorkloadSettings)
    credentials: Credentials = field(default_factory=lambda: Credentials())
    ca_pem: str | None = None  # set when the workloads mount the proxy CA
    setter_ca: str | None = None  # the proxy CA, for field setters (caBundle)
    custom: TargetTable = targets.BUILT_IN
    warnings: tuple[str, ...] = ()
    on_conflict: str = "keep"
    nodes: NodeSettings | None = field(
        default_factory=lambda: NodeSettings(DEFAULT_CONTAINERD_DROPIN, DEFAULT_KUBELET_DROPIN)
    )

    @property
    def has_credentials(self) -> bool:
        return any(
            "@" in urlsplit(url).netloc for url in (self.http_proxy, self.https_proxy) if url
        )

    def no_proxy(self) -> list[syntax.Sourced]:
        """The NO_PROXY entries of the workloads, with their sources."""
        return scope.build(self.no_proxy_config)

    def env_vars(self) -> list[tuple[str, str]]:
        """The variables every container gets, upper case first, in a fixed order."""
        return env_with(self.http_proxy, self.https_proxy, self.no_proxy())


def env_with(
    http_proxy: str | None, https_proxy: str | None, entries: list[syntax.Sourced]
) -> list[tuple[str, str]]:
    upper: list[tuple[str, str]] = []
    if http_proxy:
        upper.append(("HTTP_PROXY", http_proxy))
    if https_proxy:
        upper.append(("HTTPS_PROXY", https_proxy))
    if entries:
        upper.append(("NO_PROXY", syntax.join(item.entry for item in entries)))
    return upper + [(name.lower(), value) for name, value in upper]


class Credentials(Struct, frozen=True):
    secret_ref: str | None = None  # workloads read the proxy URLs from this Secret
    create_secret: bool = False  # and the tool emits it in every namespace it touches
    forbid_plaintext: bool = False


class Overrides(Struct):
    """Values from command-line flags; ``None`` means "not given"."""

    http_proxy: str | None = None
    https_proxy: str | None = None
    no_proxy: str | None = None
    on_conflict: str | None = None
    namespace: str | None = None  # the release namespace (--namespace, ARGOCD_APP_NAMESPACE)

    def any_proxy(self) -> bool:
        return self.http_proxy is not None or self.https_proxy is not None


def expand_vars(value: str, where: str, environ: Mapping[str, str]) -> str:
    """Replace ``${NAME}`` with the environment variable; ``$${`` escapes."""

    def substitute(match: re.Match[str]) -> str:
        escaped, name = match.group(1), match.group(2)
        if escaped:
            return "${" + name + "}"
        if not _NAME_RE.match(name):
            raise ProfileError(f"{where}: '${{{name}}}' is not a valid variable reference")
        if name not in environ:
            raise ProfileError(f"{where}: environment variable {name} is not set")
        return environ[name]

    return _VAR_RE.sub(substitute, value)


def validate_proxy_url(value: str, where: str) -> str:
    """Check a proxy URL; messages never repeat the URL's credentials."""
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
    if info and any(ch in info for ch in "/?#[]@"):
        raise ProfileError(
            f"{where}: proxy URL {shown!r}: the user name or password holds one of / ? # [ ] @; "
            "percent-encode them (%2F %3F %23 %5B %5D %40)"
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
    if port is not None and port == 0:
        raise ProfileError(f"{where}: proxy URL {shown!r}: port must be 1-65535")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ProfileError(f"{where}: proxy URL {shown!r} must not have a path, query or fragment")
    return value


def _expand_tree(value: Any, where: str, environ: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return expand_vars(value, where, environ)
    if isinstance(value, list):
        return [_expand_tree(v, f"{where}[{i}]", environ) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return {k: _expand_tree(v, f"{where}.{k}", environ) for k, v in value.items()}
    return value


def _check_keys(obj: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(str(k) for k in obj if k not in allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        by_case = {name.lower(): name for name in allowed}
        hints = [by_case[k.lower()] for k in unknown if k.lower() in by_case]
        hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
        raise ProfileError(
            f"{where}: unknown field(s) {', '.join(unknown)}{hint} (allowed: {known})"
        )


def _no_proxy_entries(value: Any, where: str) -> tuple[syntax.NoProxyEntry, ...]:
    if value is None:
        return ()
    if not isinstance(value, str | list):
        raise ProfileError(f"{where}: must be a list or a comma-separated string")
    if isinstance(value, list) and not all(isinstance(v, str) for v in value):
        raise ProfileError(f"{where}: every entry must be a string")
    try:
        return tuple(syntax.normalise(syntax.split_value(value)))
    except syntax.NoProxyEntryError as exc:
        raise ProfileError(f"{where}: {exc}") from None


def from_object(
    obj: Any,
    origin: str,
    environ: Mapping[str, str],
    overrides: Overrides | None = None,
    redactor: Redactor | None = None,
    base: str | None = None,
) -> Profile:
    """Build a Profile from a parsed ProxyProfile object (plus flag overrides);
    relative file names in it (spec.caBundle.file) are read from ``base``."""
    overrides = overrides or Overrides()
    if not isinstance(obj, Mapping):
        raise ProfileError(f"{origin}: a ProxyProfile must be a mapping")
    _check_keys(obj, _TOP_LEVEL_FIELDS, origin)
    if obj.get("apiVersion") != API_VERSION or obj.get("kind") != KIND:
        raise ProfileError(
            f"{origin}: expected apiVersion {API_VERSION} and kind {KIND}, "
            f"got {obj.get('apiVersion')!r} / {obj.get('kind')!r}"
        )
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise ProfileError(f"{origin}: metadata must be a mapping")
    _check_keys(metadata, _METADATA_FIELDS, f"{origin}: metadata")
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise ProfileError(f"{origin}: spec must be a mapping")
    _check_keys(spec, _SPEC_FIELDS, f"{origin}: spec")
    fields = {
        key: _expand_tree(spec[key], f"{origin}: spec.{key}", environ)
        for key in _SPEC_FIELDS
        if key in spec
    }
    if overrides.http_proxy is not None:
        fields["httpProxy"] = overrides.http_proxy
    if overrides.https_proxy is not None:
        fields["httpsProxy"] = overrides.https_proxy
    if overrides.no_proxy is not None:
        fields["noProxy"] = overrides.no_proxy
    if overrides.on_conflict is not None:
        fields["onConflict"] = overrides.on_conflict
    name = str(metadata.get("name") or "unnamed")
    inline: set[str] = {
        key
        for key in ("httpProxy", "httpsProxy")
        if isinstance(spec.get(key), str)
        and "${" not in spec[key]
        and key in fields
        and fields[key] == spec[key]
    }
    return _build(name, fields, origin, redactor, overrides.namespace, environ, inline, base)


def no_proxy_from_flags(no_proxy: str | None) -> NoProxyConfig:
    """NO_PROXY settings without a profile file: the entries given, default presets."""
    return _noproxy_config({} if no_proxy is None else {"noProxy": no_proxy}, "flags")


def from_flags(overrides: Overrides, redactor: Redactor | None = None) -> Profile:
    """A profile made only of command-line flags."""
    fields: dict[str, Any] = {
        "httpProxy": overrides.http_proxy,
        "httpsProxy": overrides.https_proxy,
        "noProxy": overrides.no_proxy,
        "onConflict": overrides.on_conflict,
    }
    chosen = {k: v for k, v in fields.items() if v is not None}
    return _build("flags", chosen, "flags", redactor, overrides.namespace)


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = syntax.split_value(value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProfileError(f"{where}: must be a list of strings or a comma-separated string")
    return tuple(v.strip() for v in value if v.strip())


def _check_entries(values: tuple[str, ...], where: str, kinds: tuple[str, ...]) -> None:
    for value in values:
        try:
            entry = syntax.parse_entry(value)
        except syntax.NoProxyEntryError as exc:
            raise ProfileError(f"{where}: {exc}") from None
        if entry.kind not in kinds or entry.port is not None:
            wanted = " or ".join(
                {"cidr": "a CIDR", "ip": "an IP address", "domain": "a host name"}[k] for k in kinds
            )
            raise ProfileError(f"{where}: {value!r} is not {wanted}")


def _endpoint_host(value: Any, where: str) -> str | None:
    """The host of ``host``, ``host:port`` or ``[v6]:port``."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ProfileError(f"{where}: must be a host name or address, optionally with a port")
    try:
        entry = syntax.parse_entry(value)
    except syntax.NoProxyEntryError as exc:
        raise ProfileError(f"{where}: {exc}") from None
    if entry.kind not in ("domain", "ip"):
        raise ProfileError(f"{where}: {value!r} is not a host name or address")
    if entry.port is None:
        return entry.text
    host = entry.text.rsplit(":", 1)[0]
    return host[1:-1] if host.startswith("[") else host


def _cluster(value: Any, where: str) -> ClusterNetwork:
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: must be a mapping")
    _check_keys(value, _CLUSTER_FIELDS, where)
    pods = _string_list(value.get("podCIDRs"), f"{where}.podCIDRs")
    services = _string_list(value.get("serviceCIDRs"), f"{where}.serviceCIDRs")
    nodes = _string_list(value.get("nodeCIDRs"), f"{where}.nodeCIDRs")
    for values, key in ((pods, "podCIDRs"), (services, "serviceCIDRs"), (nodes, "nodeCIDRs")):
        _check_entries(values, f"{where}.{key}", ("cidr", "ip"))
    api_server = _string_list(value.get("apiServer"), f"{where}.apiServer")
    _check_entries(api_server, f"{where}.apiServer", ("ip", "domain"))
    domain = value.get("domain")
    if domain is not None:
        if not isinstance(domain, str):
            raise ProfileError(f"{where}.domain: must be a string")
        _check_entries((domain,), f"{where}.domain", ("domain",))
        domain = domain.strip().lower().rstrip(".")
    return ClusterNetwork(
        label="spec.cluster",
        pods=pods,
        services=services,
        domain=domain,
        api_server=api_server,
        endpoint=_endpoint_host(value.get("controlPlaneEndpoint"), f"{where}.controlPlaneEndpoint"),
        nodes=nodes,
    )


def _noproxy_config(fields: Mapping[str, Any], origin: str) -> NoProxyConfig:
    chosen = fields.get("noProxyPresets", list(presets.DEFAULT_PRESETS))
    if chosen is None:
        chosen = []
    if not isinstance(chosen, list) or not all(isinstance(v, str) for v in chosen):
        raise ProfileError(f"{origin}: spec.noProxyPresets: must be a list of preset names")
    unknown = [name for name in chosen if name not in presets.PRESETS]
    if unknown:
        raise ProfileError(
            f"{origin}: spec.noProxyPresets: unknown preset(s) {', '.join(unknown)} "
            f"(known: {', '.join(presets.PRESETS)})"
        )
    style = fields.get("noProxyStyle", "portable")
    if style not in scope.STYLES:
        raise ProfileError(
            f"{origin}: spec.noProxyStyle: {style!r} is not one of {', '.join(scope.STYLES)}"
        )
    discover = fields.get("noProxyDiscovery", True)
    if not isinstance(discover, bool):
        raise ProfileError(f"{origin}: spec.noProxyDiscovery: must be true or false")
    config = NoProxyConfig(
        entries=_no_proxy_entries(fields.get("noProxy"), f"{origin}: spec.noProxy"),
        cluster=_cluster(fields.get("cluster"), f"{origin}: spec.cluster"),
        presets=tuple(dict.fromkeys(chosen)),
        style=style,
        discover=discover,
    )
    try:
        scope.build(config)
    except syntax.NoProxyEntryError as exc:  # a preset made invalid by the cluster domain
        raise ProfileError(f"{origin}: {exc}") from None
    return config


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ProfileError(f"{where}: must be a list of non-empty strings")
    return tuple(value)


def _bool(value: Any, default: bool, where: str) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ProfileError(f"{where}: must be true or false")
    return value


def _selector(value: Any, where: str) -> LabelSelector | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: must be a mapping")
    _check_keys(value, {"matchLabels", "matchExpressions"}, where)
    labels = value.get("matchLabels") or {}
    if not isinstance(labels, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        raise ProfileError(f"{where}.matchLabels: must map label keys to string values")
    requirements = []
    for index, item in enumerate(value.get("matchExpressions") or []):
        here = f"{where}.matchExpressions[{index}]"
        if not isinstance(item, Mapping):
            raise ProfileError(f"{here}: must be a mapping")
        _check_keys(item, {"key", "operator", "values"}, here)
        key, operator = item.get("key"), item.get("operator")
        if not isinstance(key, str) or not key:
            raise ProfileError(f"{here}.key: must be a label key")
        if operator not in OPERATORS:
            raise ProfileError(
                f"{here}.operator: {operator!r} is not one of {', '.join(OPERATORS)}"
            )
        values = _strings(item.get("values"), f"{here}.values")
        if operator in ("In", "NotIn") and not values:
            raise ProfileError(f"{here}.values: {operator} needs at least one value")
        if operator in ("Exists", "DoesNotExist") and values:
            raise ProfileError(f"{here}.values: {operator} takes no values")
        requirements.append(Requirement(key, operator, values))
    return LabelSelector(tuple(labels.items()), tuple(requirements))


def _rules(value: Any, where: str) -> tuple[Criteria, ...]:
    """One rule (a mapping) or a list of rules."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        return (_criteria(value, where),)
    if not isinstance(value, list):
        raise ProfileError(f"{where}: must be a rule (a mapping) or a list of rules")
    return tuple(_criteria(item, f"{where}[{i}]") for i, item in enumerate(value))


def _criteria(value: Any, where: str) -> Criteria:
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: must be a mapping")
    _check_keys(value, _CRITERIA_FIELDS, where)
    return Criteria(
        kinds=_strings(value.get("kinds"), f"{where}.kinds"),
        namespaces=_strings(value.get("namespaces"), f"{where}.namespaces"),
        names=_strings(value.get("names"), f"{where}.names"),
        selector=_selector(value.get("selector"), f"{where}.selector"),
    )


def _workloads(value: Any, where: str, namespace: str | None) -> WorkloadSettings:
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: must be a mapping")
    _check_keys(value, _WORKLOAD_FIELDS, where)
    containers = value.get("containers") or {}
    if not isinstance(containers, Mapping):
        raise ProfileError(f"{where}.containers: must be a mapping with include/exclude")
    _check_keys(containers, {"include", "exclude"}, f"{where}.containers")
    extra: list[tuple[str, str]] = []
    for index, item in enumerate(value.get("extraEnv") or []):
        here = f"{where}.extraEnv[{index}]"
        if not isinstance(item, Mapping) or set(item) != {"name", "value"}:
            raise ProfileError(f"{here}: must be a mapping with name and value")
        name, text = item["name"], item["value"]
        if not isinstance(name, str) or not _ENV_NAME_RE.match(name):
            raise ProfileError(f"{here}.name: {name!r} is not an environment variable name")
        if not isinstance(text, str):
            raise ProfileError(f"{here}.value: must be a string")
        extra.append((name, text))
    reserved = {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "JAVA_TOOL_OPTIONS"}
    seen: set[str] = set()
    for name, _ in extra:
        if name.upper() in reserved:
            raise ProfileError(f"{where}.extraEnv: {name} is a variable the tool sets itself")
        if name in seen:
            raise ProfileError(f"{where}.extraEnv: {name} is listed twice")
        seen.add(name)
    upper = _bool(value.get("upperCase"), True, f"{where}.upperCase")
    lower = _bool(value.get("lowerCase"), True, f"{where}.lowerCase")
    if not upper and not lower:
        raise ProfileError(f"{where}: upperCase and lowerCase cannot both be false")
    return WorkloadSettings(
        include=_rules(value.get("include"), f"{where}.include"),
        exclude=_rules(value.get("exclude"), f"{where}.exclude"),
        containers=_strings(containers.get("include"), f"{where}.containers.include"),
        exclude_containers=_strings(containers.get("exclude"), f"{where}.containers.exclude"),
        init_containers=_bool(value.get("initContainers"), True, f"{where}.initContainers"),
        namespace=namespace,
        upper_case=upper,
        lower_case=lower,
        java=_bool(value.get("javaToolOptions"), False, f"{where}.javaToolOptions"),
        extra_env=tuple(extra),
    )


def _node_settings(value: Any, where: str) -> NodeSettings | None:
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: must be a mapping")
    _check_keys(value, _NODES_FIELDS, where)
    enabled = value.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ProfileError(f"{where}.enabled: must be true or false")
    if not enabled:
        return None
    paths: dict[str, str | None] = {}
    for key, default in (
        ("containerdDropIn", DEFAULT_CONTAINERD_DROPIN),
        ("kubeletDropIn", DEFAULT_KUBELET_DROPIN),
        ("envFile", DEFAULT_ENV_FILE),
    ):
        path = value.get(key, default)
        if path is None and key == "kubeletDropIn":
            paths[key] = None  # no kubelet drop-in
            continue
        if not isinstance(path, str) or not _PATH_RE.match(path) or ".." in path.split("/"):
            raise ProfileError(f"{where}.{key}: must be an absolute path of plain characters")
        paths[key] = path
    for key in ("containerdDropIn", "kubeletDropIn"):
        path = paths[key]
        if path is not None and (not path.endswith(".conf") or ".d/" not in path):
            raise ProfileError(f"{where}.{key}: a drop-in is a UNIT.d/NAME.conf file")
    chosen = [p for p in paths.values() if p is not None]
    if len(set(chosen)) != len(chosen):
        raise ProfileError(f"{where}: containerdDropIn, kubeletDropIn and envFile must differ")
    credentials = value.get("credentials", "inline")
    if credentials not in ("inline", "secret"):
        raise ProfileError(f"{where}.credentials: {credentials!r} is not one of inline, secret")
    secret_name = value.get("secretName")
    if secret_name is not None and (
        not isinstance(secret_name, str)
        or len(secret_name) > 253
        or not _DNS_NAME_RE.match(secret_name)
    ):
        raise ProfileError(f"{where}.secretName: must be a Kubernetes object name")
    layout = value.get("layout", "dropins")
    if layout not in ("dropins", "envfile"):
        raise ProfileError(f"{where}.layout: {layout!r} is not one of dropins, envfile")
    windows = value.get("windows", "configure")
    if windows not in ("configure", "skip"):
        raise ProfileError(f"{where}.windows: {windows!r} is not one of configure, skip")
    create_secret = value.get("createSecret", True)
    if not isinstance(create_secret, bool):
        raise ProfileError(f"{where}.createSecret: must be true or false")
    return NodeSettings(
        str(paths["containerdDropIn"]),
        paths["kubeletDropIn"],
        credentials=credentials,
        secret_name=secret_name,
        create_secret=create_secret,
        env_file=str(paths["envFile"]),
        windows=windows,
        layout=layout,
    )


def _credentials(
    value: Any, where: str, environ: Mapping[str, str], redactor: Redactor
) -> tuple[Credentials, str | None]:
    """The credentials section, and the user-info that ``fromEnv`` builds (URL-encoded)."""
    if value is None:
        return Credentials(), None
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: must be a mapping")
    _check_keys(value, _CREDENTIAL_FIELDS, where)
    info = None
    from_env = value.get("fromEnv")
    if from_env is not None:
        if not isinstance(from_env, Mapping):
            raise ProfileError(f"{where}.fromEnv: must be a mapping with user and password")
        _check_keys(from_env, {"user", "password"}, f"{where}.fromEnv")
        parts = []
        for key in ("user", "password"):
            variable = from_env.get(key)
            if not isinstance(variable, str) or not _NAME_RE.match(variable):
                raise ProfileError(f"{where}.fromEnv.{key}: must name an environment variable")
            if variable not in environ:
                raise ProfileError(
                    f"{where}.fromEnv.{key}: environment variable {variable} is not set"
                )
            if key == "password":
                redactor.add(environ[variable])
            parts.append(quote(environ[variable], safe=""))
        info = ":".join(parts)
        redactor.add(info)
    secret_ref = value.get("secretRef")
    if secret_ref is not None and (
        not isinstance(secret_ref, str) or not _DNS_NAME_RE.match(secret_ref)
    ):
        raise ProfileError(f"{where}.secretRef: must be the name of a Secret")
    create = value.get("createSecret", False)
    forbid = value.get("forbidPlaintext", False)
    for key, flag in (("createSecret", create), ("forbidPlaintext", forbid)):
        if not isinstance(flag, bool):
            raise ProfileError(f"{where}.{key}: must be true or false")
    if create and secret_ref is None:
        raise ProfileError(f"{where}.createSecret: needs secretRef (the Secret's name)")
    if create and forbid:
        raise ProfileError(
            f"{where}: createSecret writes the credentials into the output, which "
            "forbidPlaintext forbids; create the Secret another way"
        )
    return Credentials(secret_ref, create, forbid), info


_PEM_RE = re.compile(r"-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+-----END CERTIFICATE-----\n?")


def _ca_bundle(
    value: Any, where: str, base: str | None
) -> tuple[str | None, bool, bool, dict[str, Any]]:
    """(PEM, for workloads, for nodes, workload options) of spec.caBundle."""
    if value is None:
        return None, False, False, {}
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: must be a mapping")
    _check_keys(value, _CA_FIELDS, where)
    if ("file" in value) == ("pem" in value):
        raise ProfileError(f"{where}: give the CA as file or as pem (one of them)")
    if "file" in value:
        if not isinstance(value["file"], str):
            raise ProfileError(f"{where}.file: must be a path")
        path = os.path.expanduser(value["file"])
        if not os.path.isabs(path) and base is not None:
            path = os.path.join(base, path)
        try:
            with open(path, encoding="utf-8") as handle:
                pem = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or "not UTF-8 text"
            raise ProfileError(f"{where}.file: cannot read {path}: {reason}") from None
    else:
        pem = value["pem"]
        if not isinstance(pem, str):
            raise ProfileError(f"{where}.pem: must be PEM text")
    pem = pem.replace("\r\n", "\n")
    # text around the blocks (comments, openssl's "Bag Attributes") is left out
    blocks = [b if b.endswith("\n") else b + "\n" for b in _PEM_RE.findall(pem)]
    if not blocks:
        raise ProfileError(f"{where}: no PEM certificate (BEGIN/END CERTIFICATE) in it")
    pem = "".join(blocks)
    workloads = _bool(value.get("workloads"), False, f"{where}.workloads")
    nodes = _bool(value.get("nodes"), True, f"{where}.nodes")
    options = {
        "configMapName": value.get("configMapName", "proxy-ca-bundle"),
        "mountPath": value.get("mountPath", "/etc/proxy-postrender/ca"),
        "env": value.get("env", list(_CA_ENV_DEFAULT)),
    }
    name = options["configMapName"]
    if not isinstance(name, str) or not _DNS_NAME_RE.match(name):
        raise ProfileError(f"{where}.configMapName: must be a ConfigMap name")
    mount = options["mountPath"]
    if not isinstance(mount, str) or not _PATH_RE.match(mount):
        raise ProfileError(f"{where}.mountPath: must be an absolute path of plain characters")
    names = options["env"]
    if not isinstance(names, list) or not all(
        isinstance(n, str) and _ENV_NAME_RE.match(n) for n in names
    ):
        raise ProfileError(f"{where}.env: must be a list of environment variable names")
    return pem, workloads, nodes, options


def _targets(value: Any, where: str) -> TargetTable:
    """The built-in target table with the entries of spec.targets added."""
    if value is None:
        return targets.BUILT_IN
    if not isinstance(value, list):
        raise ProfileError(f"{where}: must be a list")
    entries: list[targets.Target] = []
    for index, entry in enumerate(value):
        here = f"{where}[{index}]"
        if not isinstance(entry, Mapping):
            raise ProfileError(f"{here}: must be a mapping")
        if "preset" in entry:
            _check_keys(entry, {"preset"}, here)
            presets = targets.TARGET_PRESETS
            if entry["preset"] not in presets:
                raise ProfileError(
                    f"{here}.preset: {entry['preset']!r} is not one of {', '.join(presets)}"
                )
            entry = presets[entry["preset"]]
        _check_keys(entry, {"apiVersion", "kind", "podTemplate", "set"}, here)
        api_version, kind = entry.get("apiVersion"), entry.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
            raise ProfileError(f"{here}: needs apiVersion and kind")
        group = api_group(api_version)
        if ("podTemplate" in entry) == ("set" in entry):
            raise ProfileError(f"{here}: give podTemplate or set (one of them)")
        try:
            if "podTemplate" in entry:
                path = targets.parse_path(str(entry["podTemplate"]))
                spec = ((*path, "spec"),)
                entries.append(targets.Target(group, kind, targets.PODS, spec, origin=here))
                continue
            fields_to_set = entry["set"]
            if not isinstance(fields_to_set, Mapping) or not fields_to_set:
                raise ProfileError(f"{here}.set: must map JSONPaths to profile values")
            pairs = []
            for path_text, source in fields_to_set.items():
                if source not in targets.FIELD_VALUES:
                    raise ProfileError(
                        f"{here}.set: {source!r} is not one of {', '.join(targets.FIELD_VALUES)}"
                    )
                field_path = targets.parse_path(str(path_text))
                if field_path[0] in ("metadata", "apiVersion", "kind"):
                    raise ProfileError(f"{here}.set: {path_text} is not the object's content")
                pairs.append((field_path, str(source)))
            entries.append(
                targets.Target(group, kind, targets.FIELDS, fields=tuple(pairs), origin=here)
            )
        except targets.PathError as exc:
            raise ProfileError(f"{here}: {exc}") from None
    try:
        return targets.BUILT_IN.with_entries(entries)
    except targets.TargetConflict as exc:
        raise ProfileError(str(exc)) from None


def _build(
    name: str,
    fields: Mapping[str, Any],
    origin: str,
    redactor: Redactor | None,
    namespace: str | None = None,
    environ: Mapping[str, str] | None = None,
    inline: set[str] | None = None,
    base: str | None = None,
) -> Profile:
    """Validate the fields; proxy URLs are registered with ``redactor`` before any check."""
    redactor = redactor or Redactor()
    credentials, info = _credentials(
        fields.get("credentials"), f"{origin}: spec.credentials", environ or {}, redactor
    )
    proxies: dict[str, str | None] = {}
    warnings: list[str] = []
    for key in ("httpProxy", "httpsProxy"):
        value = fields.get(key)
        if value is None:
            proxies[key] = None
            continue
        if not isinstance(value, str):
            raise ProfileError(f"{origin}: spec.{key}: must be a string")
        redactor.add_url(value)
        if info is not None:
            if userinfo(value) is not None:
                raise ProfileError(
                    f"{origin}: spec.{key}: the URL has a user already; "
                    "spec.credentials.fromEnv adds one"
                )
            scheme, _, rest = value.partition("://")
            value = f"{scheme}://{info}@{rest}"
        elif userinfo(value) and key in (inline or set()):
            warnings.append(
                f"spec.{key} holds its credentials inline in the profile; prefer ${{VAR}} "
                "or spec.credentials.fromEnv"
            )
        proxies[key] = validate_proxy_url(value, f"{origin}: spec.{key}")
    if not proxies["httpProxy"] and not proxies["httpsProxy"]:
        raise ProfileError(f"{origin}: spec.httpProxy or spec.httpsProxy is required")
    on_conflict = fields.get("onConflict", "keep")
    if on_conflict not in ON_CONFLICT:
        raise ProfileError(
            f"{origin}: spec.onConflict: {on_conflict!r} is not one of {', '.join(ON_CONFLICT)}"
        )
    nodes = _node_settings(fields.get("nodes"), f"{origin}: spec.nodes")
    has_credentials = any(userinfo(url) for url in proxies.values() if url)
    if credentials.secret_ref and has_credentials and nodes and nodes.credentials == "inline":
        raise ProfileError(
            f"{origin}: spec.credentials.secretRef keeps the password out of the workloads, but "
            "Cluster API node bootstrap would write it inline: set spec.nodes.credentials: "
            "secret (or spec.nodes.enabled: false)"
        )
    workloads = _workloads(fields.get("workloads"), f"{origin}: spec.workloads", namespace)
    if credentials.secret_ref:
        workloads = structs.replace(workloads, secret_ref=credentials.secret_ref)
    pem, ca_workloads, ca_nodes, ca = _ca_bundle(
        fields.get("caBundle"), f"{origin}: spec.caBundle", base
    )
    if pem is not None and ca_workloads:
        mount = CaMount(ca["configMapName"], ca["mountPath"])
        extra = tuple((n, mount.file) for n in ca["env"])
        clash = sorted({n for n, _ in extra} & {n for n, _ in workloads.extra_env})
        if clash:
            raise ProfileError(
                f"{origin}: spec.workloads.extraEnv sets {', '.join(clash)}, which "
                "spec.caBundle.env sets too"
            )
        workloads = structs.replace(workloads, ca=mount, extra_env=(*workloads.extra_env, *extra))
    if pem is not None and ca_nodes and nodes is not None:
        nodes = structs.replace(nodes, ca_bundle=pem)
    return Profile(
        name=name,
        http_proxy=proxies["httpProxy"],
        https_proxy=proxies["httpsProxy"],
        no_proxy_config=_noproxy_config(fields, origin),
        workloads=workloads,
        credentials=credentials,
        ca_pem=pem if ca_workloads else None,
        setter_ca=pem,
        custom=_targets(fields.get("targets"), f"{origin}: spec.targets"),
        warnings=tuple(warnings),
        on_conflict=on_conflict,
        nodes=nodes,
    )


def _parse_profile_file(path: str) -> list[Any]:
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except OSError as exc:
        raise ProfileError(f"cannot read profile {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ProfileError(f"profile {path} is not valid UTF-8") from None
    from proxy_postrender.yamltext import blockread, stream

    try:  # the common layout, without loading ruamel.yaml (start-up time)
        return [blockread.read(s.text)[1] for s in stream.split(text) if s.has_content()]
    except blockread.Declined:
        pass
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        docs = [d for d in YAML(typ="safe").load_all(text) if d is not None]
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ProfileError(f"profile {path}: {problem}{where}") from None
    return docs


def load(
    path: str | None,
    *,
    profile_name: str | None = None,
    overrides: Overrides | None = None,
    environ: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
) -> Profile:
    """Load the profile from ``path`` (or from flags alone when ``path`` is None).

    Proxy URLs are registered with ``redactor`` as soon as they are known, so
    that even a validation error about them is masked.
    """
    environ = os.environ if environ is None else environ
    overrides = overrides or Overrides()
    if path is None:
        if profile_name is not None:
            raise ProfileError("--profile-name needs a profile file")
        if not overrides.any_proxy():
            raise ProfileError(
                "no profile: pass a ProxyProfile file (--profile FILE, a path argument or "
                "PROXY_POSTRENDER_PROFILE) or --http-proxy/--https-proxy"
            )
        return from_flags(overrides, redactor)
    docs = _parse_profile_file(path)
    profiles = [d for d in docs if isinstance(d, Mapping) and d.get("kind") == KIND]
    if not profiles:
        raise ProfileError(f"profile {path}: no object of kind {KIND} found")
    if profile_name is not None:
        chosen = [p for p in profiles if (p.get("metadata") or {}).get("name") == profile_name]
        if not chosen:
            names = ", ".join(str((p.get("metadata") or {}).get("name")) for p in profiles)
            raise ProfileError(f"profile {path}: no {KIND} named {profile_name!r} (found: {names})")
        if len(chosen) > 1:
            raise ProfileError(f"profile {path}: several {KIND} objects named {profile_name!r}")
        obj = chosen[0]
    elif len(profiles) > 1:
        names = ", ".join(str((p.get("metadata") or {}).get("name")) for p in profiles)
        raise ProfileError(
            f"profile {path}: {len(profiles)} profiles ({names}); pick one with --profile-name"
        )
    else:
        obj = profiles[0]
    name = (obj.get("metadata") or {}).get("name")
    origin = f"profile {path}" + (f" ({name})" if name else "")
    return from_object(obj, origin, environ, overrides, redactor, base=os.path.dirname(path))
