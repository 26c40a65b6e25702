"""NO_PROXY presets and the infrastructure kinds that pick a cloud preset, as data.

``kubernetes`` depends on the cluster domain, so its entries are templates in
which ``{domain}`` is replaced; the others are fixed.
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_PRESETS: tuple[str, ...] = ("loopback", "kubernetes")
DEFAULT_DOMAIN = "cluster.local"

PRESETS: Mapping[str, tuple[str, ...]] = {
    "loopback": ("localhost", "127.0.0.1", "::1"),
    # in-cluster names of the apiserver, ".svc" for <service>.<namespace>.svc,
    # and the cluster domain that every Service's FQDN ends in
    "kubernetes": (
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        ".svc",
        "{domain}",
        ".{domain}",
    ),
    # instance metadata (IPv4 and the Nitro IPv6 endpoint)
    "aws": ("169.254.169.254", "fd00:ec2::254"),
    # instance metadata and the platform's WireServer
    "azure": ("169.254.169.254", "168.63.129.16"),
    # instance metadata by address and by its two names
    "gcp": ("169.254.169.254", "metadata.google.internal", "metadata"),
}

# Cluster API infrastructure kinds (a Cluster's infrastructureRef, or a
# ClusterClass's infrastructure template without "Template") -> cloud preset.
INFRASTRUCTURE_PRESETS: Mapping[str, str] = {
    "AWSCluster": "aws",
    "AWSManagedCluster": "aws",
    "AWSManagedControlPlane": "aws",
    "ROSACluster": "aws",
    "AzureCluster": "azure",
    "AzureManagedCluster": "azure",
    "AzureManagedControlPlane": "azure",
    "AzureASOManagedCluster": "azure",
    "GCPCluster": "gcp",
    "GCPManagedCluster": "gcp",
}


def preset_entries(name: str, domain: str) -> tuple[str, ...]:
    return tuple(entry.replace("{domain}", domain) for entry in PRESETS[name])


def infrastructure_preset(kind: str | None) -> str | None:
    if not kind:
        return None
    if kind.endswith("Template"):
        kind = kind[: -len("Template")]
    return INFRASTRUCTURE_PRESETS.get(kind)
