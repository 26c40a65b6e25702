"""The watch for other owners of the nodes' proxy settings (nodes/owners.py), as the
engine and the result see it without importing it: its warning codes, the kinds and the
API groups it reads (the engine makes the watch on the first object of those groups or
the first node plan: a run without either never imports it, nor the node planners)."""

from __future__ import annotations

PROVIDER: str = "owner/provider-proxy"
EXTENSION: str = "owner/proxy-extension"
EXTERNAL: str = "owner/external-patch"
DROPIN: str = "owner/dropin"
EXPORTS: str = "owner/exports"
ENVIRONMENT: str = "owner/environment"
WINDOWS_CA: str = "nodes/windows-ca"

# code, whether --strict makes it an error, what it means (docs/cluster-api.md)
CODES: tuple[tuple[str, bool, str], ...] = (
    (PROVIDER, True, "a provider sets the nodes' proxy itself (CAPVCD proxyConfigSpec)"),
    (EXTENSION, True, "a runtime extension known to set the proxy drop-ins (CAREN)"),
    (EXTERNAL, False, "a runtime-extension patch whose output the stream does not show"),
    (DROPIN, True, "a kubeadm spec writes its own containerd or kubelet proxy drop-in"),
    (EXPORTS, True, "preKubeadmCommands set proxy variables after the tool's exports"),
    (ENVIRONMENT, True, "files write proxy variables into /etc/environment and the like"),
    (WINDOWS_CA, True, "a Windows node template gets the proxy variables but not the CA"),
)

# the kinds the engine parses only for this watch (besides the target kinds)
# (MachineDeployments, MachinePools and Machines: the bootstrap kinds they name,
# nodes/uncovered.py)
WATCHED_KINDS: frozenset[str] = frozenset(
    {"Cluster", "VCDCluster", "VCDClusterTemplate", "MachineDeployment", "MachinePool", "Machine"}
)
CAPI_GROUP: str = "cluster.x-k8s.io"
INFRA_GROUP: str = "infrastructure.cluster.x-k8s.io"
# the API groups of the objects the watch reads (Watch.observe passes over any other)
WATCHED_GROUPS: frozenset[str] = frozenset({CAPI_GROUP, INFRA_GROUP})
