"""NO_PROXY presets and the infrastructure kinds that pick a cloud preset, as data.

``kubernetes`` depends on the cluster domain, so its entries are templates in
which ``{domain}`` is replaced; ``services`` depends on the Services of the
render (:func:`service_names`), so it has no fixed entries; the others are fixed.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from proxy_postrender.noproxy import services as services_mod
from proxy_postrender.noproxy import syntax
from proxy_postrender.structs import FrozenStruct

DEFAULT_PRESETS: tuple[str, ...] = ("loopback", "kubernetes")
DEFAULT_DOMAIN = "cluster.local"
SERVICES = "services"  # opt-in: the short names of the Services in the same render

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
    # instance metadata (IPv4 and the Nitro IPv6 endpoint), and the private DNS names
    # of instances: REGION.compute.internal, ec2.internal in us-east-1 (the domain
    # entries match their subdomains for every client but proxy-from-env, which needs
    # the suffix entries). Load-balancer names (*.elb.amazonaws.com) and VPC endpoints
    # cannot be known here: spec.noProxy (a Cluster's AWSCluster gives its region's load
    # balancer suffixes). Then the credential endpoints AWS SDKs call from a pod: ECS
    # (169.254.170.2) and EKS Pod Identity (169.254.170.23, fd00:ec2::23); a proxy
    # cannot reach a node-local address
    "aws": (
        "169.254.169.254",
        "fd00:ec2::254",
        "compute.internal",
        ".compute.internal",
        "ec2.internal",
        ".ec2.internal",
        "169.254.170.2",
        "169.254.170.23",
        "fd00:ec2::23",
    ),
    # instance metadata and the platform's WireServer
    "azure": ("169.254.169.254", "168.63.129.16"),
    # instance metadata by address and by its names; the fully qualified form too: Go,
    # Python and wget compare a final dot as written (curl drops it)
    "gcp": (
        "169.254.169.254",
        "metadata.google.internal",
        "metadata.google.internal.",
        "metadata",
    ),
    # the metadata service (instance metadata, user data: cloud-init reads it)
    "openstack": ("169.254.169.254",),
    # NAME and NAME.NAMESPACE of each Service in the render (see service_names)
    SERVICES: (),
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
    "OpenStackCluster": "openstack",
}


def preset_entries(name: str, domain: str) -> tuple[str, ...]:
    """``{domain}`` without a final dot: ``cluster.local.`` would give entries that Go,
    Python and wget match only for names written with the dot."""
    return tuple(entry.replace("{domain}", domain.rstrip(".")) for entry in PRESETS[name])


def infrastructure_preset(kind: str | None) -> str | None:
    if not kind:
        return None
    if kind.endswith("Template"):
        kind = kind[: -len("Template")]
    return INFRASTRUCTURE_PRESETS.get(kind)


def service_names(
    services: Iterable[tuple[str, str]], listed: Collection[str] = ()
) -> tuple[tuple[str, ...], list[str]]:
    """The ``services`` preset's entries for ``(namespace, name)`` pairs (each a valid
    Service name and namespace, or "" for an unknown namespace): ``name`` and
    ``name.namespace`` of each whose subdomains stay out of public DNS
    (:func:`proxy_postrender.noproxy.services.is_safe`), and one warning naming every
    form left out that ``listed`` (the entries already there) lacks."""
    written: dict[str, None] = {}
    left: dict[str, str] = {}  # form -> the first Service that has it
    for namespace, name in services:
        found = services_mod.forms(namespace, name)
        written.update((form, None) for form in found if services_mod.is_safe(form))
        label = f"Service {namespace + '/' if namespace else ''}{name}"
        for form in found:
            if not services_mod.is_safe(form) and form not in listed:
                left.setdefault(form, label)
    if not left:
        return tuple(written), []
    return tuple(written), [services_mod.left_out_message(list(left.items()))]


def added_cost(before: str, after: str) -> tuple[int, int]:
    """Entries and bytes that ``after`` (a NO_PROXY value) adds to ``before``."""
    old = [e for e in before.split(",") if e]
    new = [e for e in after.split(",") if e]
    return len(new) - len(old), len(after) - len(before)


class Resolved(FrozenStruct):
    """The workloads' entries with the ``services`` preset resolved, the line that
    states its cost, and the warnings about the Service names it left out."""

    entries: tuple[syntax.Sourced, ...]
    cost: str
    left_out: tuple[str, ...] = ()


def resolve_services(
    entries: Sequence[syntax.Sourced], services: Sequence[tuple[str, str]]
) -> Resolved:
    """``entries`` with the ``services`` preset resolved for ``services``
    (``(namespace, name)`` pairs, as found in the render), after everything else."""
    # a form the list already holds (the kubernetes preset's, the profile's) is not lost
    names, left_out = service_names(services, {item.entry.text for item in entries})
    groups: list[tuple[str, Iterable[syntax.NoProxyEntry]]] = [
        (source, [item.entry]) for item in entries for source in item.sources
    ]
    added = [syntax.parse_entry(name) for name in names]
    after = syntax.merge([*groups, (f"preset {SERVICES} (Services of the render)", added)])
    before_value = syntax.join(item.entry for item in entries)
    value = syntax.join(item.entry for item in after)
    count, size = added_cost(before_value, value)
    cost = (
        f"preset {SERVICES}: {len(services)} Service(s) of the render added {count} "
        f"entries, {size} bytes to NO_PROXY ({2 * size} bytes of environment with no_proxy); "
        f"NO_PROXY is now {len(value)} bytes"
    )
    return Resolved(tuple(after), cost, tuple(left_out))
