"""What one run asks of the planners."""

from __future__ import annotations

from proxy_postrender.credentials import CredentialSecret
from proxy_postrender.fields.setters import CustomTargets
from proxy_postrender.nodes.kubeadm import NodeSettings
from proxy_postrender.noproxy.scope import NoProxyConfig
from proxy_postrender.pods.selection import WorkloadSettings
from proxy_postrender.structs import Struct, field


class Request(Struct, frozen=True):
    env: tuple[tuple[str, str], ...]  # the workloads' variables; empty to remove everything
    on_conflict: str = "keep"
    nodes: NodeSettings | None = None  # None: leave Cluster API kubeadm objects alone
    credentials: bool = False  # a proxy URL carries user:password (stricter file modes)
    # how NO_PROXY is made; None: the NO_PROXY of ``env`` everywhere (no per-cluster values)
    no_proxy: NoProxyConfig | None = None
    workloads: WorkloadSettings = field(default_factory=WorkloadSettings)
    credential_secret: CredentialSecret | None = None  # emit it per namespace touched
    forbid_plaintext: bool = False  # fail when the output holds a password in clear
    ca_pem: str | None = None  # the proxy CA the workloads' ConfigMaps carry
    custom: CustomTargets = field(default_factory=CustomTargets)
    setter_ca: str | None = None  # the proxy CA for field setters (caBundle values)
