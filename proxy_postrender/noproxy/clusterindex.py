"""The index of a stream's Cluster API clusters (:class:`ClusterIndex`): who references
whom, and which clusters an object serves. noproxy/discovery.py fills it from the stream;
a stream without a Cluster API group gets an empty one without that module.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import DocumentContext
from proxy_postrender.objects import api_group, dig
from proxy_postrender.structs import FrozenStruct, Struct, field

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.noproxy.bootstraps import Bootstraps
    from proxy_postrender.noproxy.scope import ClusterNetwork

CAPI_GROUP: str = "cluster.x-k8s.io"
CLUSTER_NAME_LABEL: str = "cluster.x-k8s.io/cluster-name"

Key = tuple[str, str]  # (namespace, name); "" is the namespace of objects without one
RefKey = tuple[str, str, str]  # (kind, namespace, name)


def text_of(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def meta_of(obj: Mapping[str, Any], default: str = "") -> tuple[str, str, Mapping[str, Any]]:
    """Namespace (``default`` for an object without one), name and labels."""
    namespace = text_of(dig(obj, "metadata", "namespace")) or default
    name = text_of(dig(obj, "metadata", "name")) or ""
    labels = dig(obj, "metadata", "labels")
    return namespace, name, labels if isinstance(labels, Mapping) else {}


def is_capi(obj: Mapping[str, Any], kind: str) -> bool:
    return obj.get("kind") == kind and api_group(obj.get("apiVersion")) == CAPI_GROUP


class ClassRef(FrozenStruct):
    """A ClusterClass of the stream, as errors about the templates it names show it."""

    label: str  # "ClusterClass NS/NAME"
    context: DocumentContext | None  # its document


class ClusterIndex(Struct):
    """The clusters of one stream and who references whom."""

    clusters: dict[Key, ClusterNetwork] = field(default_factory=dict)
    # referenced object -> {cluster: who references it on the cluster's behalf}
    referenced_by: dict[RefKey, dict[Key, str]] = field(default_factory=dict)
    class_users: dict[Key, set[Key]] = field(default_factory=dict)
    # a template a ClusterClass of the stream names -> that class (the first one)
    named_by_class: dict[RefKey, ClassRef] = field(default_factory=dict)
    # the namespace of objects without one (--namespace); "" when not given
    namespace: str = ""
    # the ClusterClasses of the stream, the kubeadm templates of the stream, and the
    # class each topology Cluster uses
    class_objects: dict[Key, Mapping[str, Any]] = field(default_factory=dict)
    templates: dict[RefKey, Mapping[str, Any]] = field(default_factory=dict)
    cluster_classes: dict[Key, Key] = field(default_factory=dict)
    # what each Cluster's nodes bootstrap from (of any kind: bootstraps.py); None: the
    # stream holds no Cluster API object (the empty index, made without the discovery)
    bootstraps: Bootstraps | None = None

    def cluster_key(self, obj: Mapping[str, Any]) -> Key | None:
        """The key of a ``cluster.x-k8s.io`` Cluster object of the stream, or None."""
        if not is_capi(obj, "Cluster"):
            return None
        namespace, name, _ = meta_of(obj, self.namespace)
        return (namespace, name) if (namespace, name) in self.clusters else None

    def topology_class(self, obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The ClusterClass of the stream that a Cluster of the stream uses, or None."""
        key = self.cluster_key(obj)
        klass = self.cluster_classes.get(key) if key is not None else None
        return self.class_objects.get(klass) if klass is not None else None

    def class_neighbours(self, obj: Mapping[str, Any]) -> list[ClusterNetwork]:
        """The Clusters of the stream in the namespace of the Cluster ``obj`` whose
        ClusterClass is in the stream (``obj``'s own included): in secret mode their nodes
        read one Secret, named by their classes' templates."""
        key = self.cluster_key(obj)
        if key is None:
            return []
        return [
            self.clusters[other]
            for other in sorted(self.cluster_classes)
            if other[0] == key[0]
            and other in self.clusters
            and self.class_objects.get(self.cluster_classes[other]) is not None
        ]

    def template(self, ref: RefKey) -> Mapping[str, Any] | None:
        """A kubeadm template of the stream that a reference names (as ``class_of`` pairs
        a template and a class: the same namespace, or either side without one)."""
        kind, namespace, name = ref
        for key in (ref, (kind, "", name)):
            if key in self.templates:
                return self.templates[key]
        if not namespace:
            for (t_kind, _, t_name), found in self.templates.items():
                if (t_kind, t_name) == (kind, name):
                    return found
        return None

    def class_of(self, obj: Mapping[str, Any]) -> ClassRef | None:
        """The ClusterClass of the stream that names ``obj`` as a template (whether or not
        a Cluster of the stream uses it), or None."""
        namespace, name, _ = meta_of(obj, self.namespace)
        kind = str(obj.get("kind") or "")
        for key in ((kind, namespace, name), (kind, "", name)):
            if key in self.named_by_class:
                return self.named_by_class[key]
        if not namespace:  # applied to some namespace: a class of any namespace fits
            for (ref_kind, _, ref_name), found in self.named_by_class.items():
                if (ref_kind, ref_name) == (kind, name):
                    return found
        return None

    def networks_for(self, obj: Mapping[str, Any]) -> tuple[list[ClusterNetwork], str | None]:
        """The networks of the clusters ``obj`` serves, and how they were matched."""
        namespace, name, labels = meta_of(obj, self.namespace)
        kind = str(obj.get("kind") or "")
        own = self.cluster_key(obj)
        if own is not None:  # a Cluster object: its own networks, whatever its labels say
            return [self.clusters[own]], "the Cluster itself"
        label = text_of(labels.get(CLUSTER_NAME_LABEL))
        if label is not None:
            net = self.clusters.get(named_cluster(self.clusters, namespace, label))
            if net is None:
                return [], f"its {CLUSTER_NAME_LABEL} label names {label}, not in the stream"
            return [net], f"{CLUSTER_NAME_LABEL} label"
        referrers = dict(self.referenced_by.get((kind, namespace, name), {}))
        # a reference written without a namespace, by an object without one, fits any
        referrers.update(self.referenced_by.get((kind, "", name), {}))
        if not namespace:  # applied to some namespace: a reference from any namespace fits
            for (ref_kind, _, ref_name), found in self.referenced_by.items():
                if (ref_kind, ref_name) == (kind, name):
                    referrers.update(found)
        if is_capi(obj, "ClusterClass"):
            for key in self.class_users.get((namespace, name), set()):
                referrers[key] = label_of("Cluster", key)
        nets = [self.clusters[k] for k in sorted(referrers) if k in self.clusters]
        if nets or (referrers and len(self.clusters) != 1):
            by = sorted(set(referrers.values()))
            how = "ClusterClass of " if is_capi(obj, "ClusterClass") else "referenced by "
            if not nets and not self.clusters:  # e.g. the hooks' half of a split call
                by[-1] += ", whose Cluster is not in the stream"
            elif not nets:
                by[-1] += f", whose Cluster is not resolved (--namespace, {CLUSTER_NAME_LABEL})"
            return nets, how + ", ".join(by)
        # an object without a namespace lands in whichever namespace it is applied to
        candidates = [k for k in self.clusters if not namespace or k[0] == namespace]
        if len(candidates) == 1:
            where = "its namespace" if namespace else "the stream"
            return [self.clusters[candidates[0]]], f"the only Cluster in {where}"
        if self.clusters:
            return [], "no Cluster of the stream is matched to it (label it with " + (
                f"{CLUSTER_NAME_LABEL})"
            )
        # never silent: a split post-render call (Helm 4.2, Flux 2.9 "separate") may carry
        # the Cluster in the other part, and a template fragment carries none
        return [], "the stream holds no Cluster (its networks are not in NO_PROXY)"


def named_cluster(clusters: Mapping[Key, Any], namespace: str, name: str) -> Key:
    """The Cluster an object in ``namespace`` names: for an object without a namespace
    (and no --namespace), the only Cluster of that name in the stream, whatever its own."""
    if namespace:
        return namespace, name
    named = [key for key in clusters if key[1] == name]
    return named[0] if len(named) == 1 else ("", name)


def label_of(kind: str, key: Key) -> str:
    namespace, name = key
    return f"{kind} {namespace + '/' if namespace else ''}{name}"
