"""What each cluster's nodes bootstrap from: the references of the stream, as data.

A cluster's nodes take their bootstrap from the objects that reference it: a
MachineDeployment's or MachinePool's ``spec.template.spec.bootstrap.configRef``,
a Machine's ``spec.bootstrap.configRef``, a Cluster's ``spec.controlPlaneRef``,
and a ClusterClass's control plane and worker bootstrap templates (``ref`` in
v1beta1, ``templateRef`` in v1beta2; ``apiVersion`` or ``apiGroup`` for the
group). :class:`Bootstraps` collects them per Cluster and per ClusterClass;
which kinds the tool configures is judged above this layer
(:mod:`proxy_postrender.nodes.uncovered`). A control plane that runs as pods in
the management cluster has no nodes (:data:`POD_CONTROL_PLANES`). Pure data in, data out.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import DocumentContext
from proxy_postrender.objects import api_group, dig
from proxy_postrender.structs import FrozenStruct, Struct, field

if TYPE_CHECKING:
    from typing import Any

CAPI_GROUP = "cluster.x-k8s.io"
CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io"
# control planes that run as pods in the management cluster: no nodes to configure
# (Kamaji: clastix/cluster-api-control-plane-provider-kamaji; k0smotron's
# K0smotronControlPlane, not its K0sControlPlane, whose control plane has nodes)
POD_CONTROL_PLANES = frozenset(
    {(CONTROL_PLANE_GROUP, "KamajiControlPlane"), (CONTROL_PLANE_GROUP, "K0smotronControlPlane")}
)
INFRASTRUCTURE_GROUP = "infrastructure.cluster.x-k8s.io"
# control planes a cloud runs (EKS, ROSA, AKS, GKE: CAPA, CAPZ, CAPG): no nodes either;
# their workers are checked by their own kind (EKS: NodeadmConfig, EKSConfig)
MANAGED_CONTROL_PLANES = frozenset(
    {
        (CONTROL_PLANE_GROUP, "AWSManagedControlPlane"),
        (CONTROL_PLANE_GROUP, "AWSManagedControlPlaneTemplate"),
        (CONTROL_PLANE_GROUP, "ROSAControlPlane"),
        (INFRASTRUCTURE_GROUP, "AzureManagedControlPlane"),
        (INFRASTRUCTURE_GROUP, "AzureManagedControlPlaneTemplate"),
        (INFRASTRUCTURE_GROUP, "AzureASOManagedControlPlane"),
        (INFRASTRUCTURE_GROUP, "AzureASOManagedControlPlaneTemplate"),
        (INFRASTRUCTURE_GROUP, "GCPManagedControlPlane"),
    }
)

Key = tuple[str, str]  # (namespace, name) of a Cluster or ClusterClass


class Ref(FrozenStruct):
    """A reference to an object that nodes (or a control plane) bootstrap from."""

    group: str | None  # None: the reference names no group
    kind: str
    name: str
    by: str  # the referrer, e.g. "MachineDeployment ns/md-0"
    context: DocumentContext | None
    what: str = "its machines bootstrap from"  # what the referrer does with it

    @property
    def pods(self) -> bool:
        """A control plane without nodes: it runs as pods, or a cloud runs it."""
        return self.managed or (self.group or CONTROL_PLANE_GROUP, self.kind) in POD_CONTROL_PLANES

    @property
    def managed(self) -> bool:
        """A control plane a cloud runs (EKS, ROSA, AKS, GKE)."""
        return any((group, self.kind) in MANAGED_CONTROL_PLANES for group in self._groups())

    def _groups(self) -> tuple[str, ...]:
        return (self.group,) if self.group else (CONTROL_PLANE_GROUP, INFRASTRUCTURE_GROUP)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def label(kind: str, key: Key) -> str:
    return f"{kind} {key[0] + '/' if key[0] else ''}{key[1]}"


def _ref(value: Any, by: str, context: DocumentContext | None, what: str) -> Ref | None:
    """A v1beta1 ObjectReference (``apiVersion``) or a v1beta2 one (``apiGroup``)."""
    kind, name = _text(dig(value, "kind")), _text(dig(value, "name"))
    if not kind or not name:
        return None
    group = _text(dig(value, "apiGroup")) or api_group(dig(value, "apiVersion"))
    return Ref(group or None, kind, name, by, context, what)


def _class_refs(obj: Mapping[str, Any], by: str, context: DocumentContext | None) -> list[Ref]:
    """The control plane and worker bootstrap templates a ClusterClass names."""
    spec = dig(obj, "spec")
    places: list[tuple[Any, str]] = [(dig(spec, "controlPlane"), "its control plane is")]
    for group in ("machineDeployments", "machinePools"):
        items = dig(spec, "workers", group)
        for item in items if isinstance(items, list) else []:
            what = f"its worker class {_text(dig(item, 'class')) or '(unnamed)'} bootstraps from"
            places += [(dig(item, "template", "bootstrap"), what), (dig(item, "bootstrap"), what)]
    refs = []
    for place, what in places:
        for key in ("ref", "templateRef"):
            found = _ref(dig(place, key), by, context, what)
            if found is not None:
                refs.append(found)
    return refs


class Bootstraps(Struct):
    """The node references of one stream, per Cluster and per ClusterClass."""

    namespace: str = ""  # that of the objects without one (--namespace)
    clusters: dict[Key, list[Ref]] = field(default_factory=dict)
    classes: dict[Key, list[Ref]] = field(default_factory=dict)
    cluster_classes: dict[Key, Key] = field(default_factory=dict)
    order: list[Ref] = field(default_factory=list)  # every reference, in stream order

    def observe(self, obj: Mapping[str, Any], context: DocumentContext | None) -> None:
        """Read an object of the stream (any kind: only Cluster API ones count)."""
        if api_group(obj.get("apiVersion")) != CAPI_GROUP:
            return
        kind = _text(obj.get("kind"))
        namespace = _text(dig(obj, "metadata", "namespace")) or self.namespace
        key = (namespace, _text(dig(obj, "metadata", "name")))
        by = label(kind, key)
        if kind == "Cluster":
            found = _ref(dig(obj, "spec", "controlPlaneRef"), by, context, "its control plane is")
            self._add(self.clusters.setdefault(key, []), found)
            topology = dig(obj, "spec", "topology")
            klass = _text(dig(topology, "classRef", "name")) or _text(dig(topology, "class"))
            other = _text(dig(topology, "classRef", "namespace")) or _text(
                dig(topology, "classNamespace")
            )
            if klass:
                self.cluster_classes[key] = (other or namespace, klass)
        elif kind in ("MachineDeployment", "MachinePool"):
            owner = _text(dig(obj, "spec", "clusterName"))
            config = dig(obj, "spec", "template", "spec", "bootstrap", "configRef")
            found = _ref(config, by, context, "its machines bootstrap from")
            if owner and found is not None:
                self._add(self.clusters.setdefault((namespace, owner), []), found)
        elif kind == "Machine":
            owner = _text(dig(obj, "spec", "clusterName"))
            config = dig(obj, "spec", "bootstrap", "configRef")
            found = _ref(config, by, context, "it bootstraps from")
            if owner and found is not None:
                self._add(self.clusters.setdefault((namespace, owner), []), found)
        elif kind == "ClusterClass":
            refs = self.classes.setdefault(key, [])
            for found in _class_refs(obj, by, context):
                self._add(refs, found)

    def _add(self, refs: list[Ref], found: Ref | None) -> None:
        if found is not None:
            refs.append(found)
            self.order.append(found)

    def _class_of(self, cluster: Key) -> list[Ref]:
        klass = self.cluster_classes.get(cluster)
        if klass is None:
            return []
        return self.classes.get(klass) or self.classes.get(("", klass[1]), [])

    def refs_of(self, cluster: Key) -> list[Ref]:
        """The references the nodes of a Cluster bootstrap from."""
        return [*self.clusters.get(cluster, []), *self._class_of(cluster)]

    def clusters_of(self, ref: Ref) -> list[str]:
        """The Clusters whose nodes ``ref`` configures, by label."""
        found = [key for key in self.clusters if ref in self.refs_of(key)]
        return [label("Cluster", key) for key in sorted(found)]
