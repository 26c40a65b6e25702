"""Where pod templates live, as data.

Keys are (API group, kind); the version does not matter. Values are the paths
from the object root to each pod spec the kind carries.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.yamltext.ops import Path

_TEMPLATE_SPEC: Path = ("spec", "template", "spec")

POD_SPECS: Mapping[tuple[str, str], tuple[Path, ...]] = {
    ("", "Pod"): (("spec",),),
    ("", "PodTemplate"): (("template", "spec"),),
    ("", "ReplicationController"): (_TEMPLATE_SPEC,),
    ("apps", "Deployment"): (_TEMPLATE_SPEC,),
    ("apps", "ReplicaSet"): (_TEMPLATE_SPEC,),
    ("apps", "StatefulSet"): (_TEMPLATE_SPEC,),
    ("apps", "DaemonSet"): (_TEMPLATE_SPEC,),
    # pre-1.16 manifests still found in old charts
    ("extensions", "Deployment"): (_TEMPLATE_SPEC,),
    ("extensions", "ReplicaSet"): (_TEMPLATE_SPEC,),
    ("extensions", "DaemonSet"): (_TEMPLATE_SPEC,),
    ("batch", "Job"): (_TEMPLATE_SPEC,),
    ("batch", "CronJob"): (("spec", "jobTemplate", "spec", "template", "spec"),),
}

# Where the KubeadmConfigSpec of each Cluster API kubeadm kind lives (all API versions).
KUBEADM_SPECS: Mapping[tuple[str, str], Path] = {
    ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane"): ("spec", "kubeadmConfigSpec"),
    ("controlplane.cluster.x-k8s.io", "KubeadmControlPlaneTemplate"): (
        "spec",
        "template",
        "spec",
        "kubeadmConfigSpec",
    ),
    ("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate"): ("spec", "template", "spec"),
    ("bootstrap.cluster.x-k8s.io", "KubeadmConfig"): ("spec",),
}

# Lists of containers inside a pod spec that get the variables, in this order.
CONTAINER_LISTS: tuple[str, ...] = ("initContainers", "containers")

# Kinds whose items are objects in their own right.
LIST_KINDS: frozenset[str] = frozenset({"List"})

# Every kind that may need parsing; used to pass other documents through unread.
CLUSTERCLASS = ("cluster.x-k8s.io", "ClusterClass")

CANDIDATE_KINDS: frozenset[str] = (
    frozenset(kind for _, kind in POD_SPECS)
    | frozenset(kind for _, kind in KUBEADM_SPECS)
    | frozenset({CLUSTERCLASS[1]})
    | LIST_KINDS
)


def api_group(api_version: Any) -> str:
    text = str(api_version or "")
    return text.rpartition("/")[0] if "/" in text else ""


def pod_spec_paths(obj: Mapping[str, Any]) -> tuple[Path, ...]:
    return POD_SPECS.get((api_group(obj.get("apiVersion")), str(obj.get("kind"))), ())


def kubeadm_spec_path(obj: Mapping[str, Any]) -> Path | None:
    return KUBEADM_SPECS.get((api_group(obj.get("apiVersion")), str(obj.get("kind"))))


def is_clusterclass(obj: Mapping[str, Any]) -> bool:
    return (api_group(obj.get("apiVersion")), str(obj.get("kind"))) == CLUSTERCLASS


def is_list(obj: Mapping[str, Any]) -> bool:
    kind = obj.get("kind")  # any YAML value, a mapping included (found by fuzzing)
    return isinstance(kind, str) and kind in LIST_KINDS and api_group(obj.get("apiVersion")) == ""


def walk_objects(obj: Any, path: Path = ()) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """The object itself, or the items of a ``kind: List`` (recursively)."""
    if not isinstance(obj, Mapping):
        return
    if is_list(obj) and isinstance(obj.get("items"), list):
        for index, item in enumerate(obj["items"]):
            yield from walk_objects(item, (*path, "items", index))
    else:
        yield path, obj


def annotations_of(obj: Any) -> Mapping[str, Any]:
    """The object's metadata.annotations, or an empty mapping when there are none."""
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    found = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return found if isinstance(found, Mapping) else {}
