"""What one run asks of the engine: the variables, each planner's settings, what to emit."""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.fields.setters import FieldSettings
from proxy_postrender.nodes.settings import NodeSettings
from proxy_postrender.noproxy.fleet import ClusterMatch
from proxy_postrender.noproxy.scope import NoProxyConfig
from proxy_postrender.pods.selection import WorkloadSettings
from proxy_postrender.structs import FrozenStruct, field
from proxy_postrender.targets import BUILT_IN, TargetTable

if TYPE_CHECKING:
    from typing import Any


class CredentialSecret(FrozenStruct):
    """The Secret the workloads read the proxy URLs from, when the run emits it."""

    name: str
    data: tuple[tuple[str, str], ...]  # key -> proxy URL (with its credentials)


class Request(FrozenStruct):
    env: tuple[tuple[str, str], ...]  # the workloads' variables; empty to remove everything
    pods: WorkloadSettings = field(default_factory=WorkloadSettings)
    nodes: NodeSettings | None = None  # None: leave Cluster API kubeadm objects alone
    fields: FieldSettings = field(default_factory=FieldSettings)
    targets: TargetTable = BUILT_IN  # where each planner works
    # how NO_PROXY is made; None: the NO_PROXY of ``env`` everywhere (no per-cluster values)
    no_proxy: NoProxyConfig | None = None
    credential_secret: CredentialSecret | None = None  # emit it per namespace touched
    ca_pem: str | None = None  # the proxy CA the workloads' ConfigMaps carry
    ca_public_roots: bool = False  # ... followed by certifi's public roots (mode: merged)
    forbid_plaintext: bool = False  # fail when the output holds a password in clear
    strict: bool = False  # a warning whose code says so is an error (--strict, spec.strict)
    # spec.clusters: ClusterRule records, in order (a record cannot name its own class)
    clusters: tuple[Any, ...] = ()
    # coded warnings the profile's use already gave: (code, message), e.g. an unknown --cluster
    findings: tuple[tuple[str, str], ...] = ()
    # the Request of the defaults when this one is an entry's (--cluster): what the nodes of
    # a cluster no entry matches get; None: this one
    defaults: Any = None

    def rules(self) -> tuple[ClusterRule, ...]:
        """The per-cluster entries, each with its whole request."""
        return self.clusters

    def entry(self, index: int) -> Request:
        """The request of entry ``index`` (negative: the defaults')."""
        if index >= 0:
            return self.rules()[index].request
        defaults: Request | None = self.defaults
        return self if defaults is None else defaults

    def urls(self) -> list[str]:
        """Every proxy URL a run may write (the defaults' and each entry's), for the
        redactor and the --diff mask."""
        found = [value for name, value in self.env if name in ("HTTP_PROXY", "HTTPS_PROXY")]
        found += [url for rule in self.rules() for url in rule.request.urls()]
        return list(dict.fromkeys(found))

    @property
    def removing(self) -> bool:
        """A run that takes out everything the tool injected earlier."""
        return not self.env


class ClusterRule(FrozenStruct):
    """One ``spec.clusters[]`` entry: which Clusters, and the request their nodes get."""

    where: str  # "spec.clusters[0]"
    match: ClusterMatch
    request: Request
