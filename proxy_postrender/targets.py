"""Where things live, as data: one table of targets, built in or from ``spec.targets``.

A :class:`Target` says which planner handles objects of one (API group,
kind) and where in them it works: the pod specs of a workload, the
KubeadmConfigSpec of a Cluster API kubeadm kind, or the fields a setter fills
from profile values. The version does not matter. The built-in entries and a
profile's ``spec.targets`` feed one :class:`TargetTable`; two entries that
claim the same kind for different planners, or the same place twice, are a
conflict, never a silent choice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from proxy_postrender import TYPE_CHECKING, dialects
from proxy_postrender.objects import LIST_KINDS, Path, group_kind
from proxy_postrender.structs import FrozenStruct, field

if TYPE_CHECKING:
    from typing import Any

# The planners (keys of proxy_postrender.planners.PLANNERS).
PODS = "pods"  # env vars into every container of the pod specs at ``paths``
KUBEADM = "kubeadm"  # node bootstrap into the spec at ``paths[0]`` (dialects.py rows)
CLUSTERCLASS = "clusterclass"  # ClusterClass patches that set the kubeadm lists
TOPOLOGY = "topology"  # a topology Cluster's value of its class's variable
FIELDS = "fields"  # ``fields``: each path is set from a profile value
BUILT_IN_ORIGIN = "built-in"
CUSTOM_PLANNERS = (PODS, FIELDS)  # the planners a profile's spec.targets can name

# The profile values a field setter may name.
FIELD_VALUES = ("httpProxy", "httpsProxy", "noProxy", "caBundle", "caBundleBase64")


class Target(FrozenStruct):
    group: str
    kind: str
    planner: str
    paths: tuple[Path, ...] = ()  # PODS: pod specs; KUBEADM: the KubeadmConfigSpec
    fields: tuple[tuple[Path, str], ...] = ()  # FIELDS: (path, profile value)
    origin: str = BUILT_IN_ORIGIN  # "built-in", or "spec.targets[N]"


class TargetConflict(ValueError):
    """Two table entries claim the same kind or place; the message names both."""


_TEMPLATE_SPEC: Path = ("spec", "template", "spec")

BUILT_IN_TARGETS: tuple[Target, ...] = (
    Target("", "Pod", PODS, (("spec",),)),
    Target("", "PodTemplate", PODS, (("template", "spec"),)),
    Target("", "ReplicationController", PODS, (_TEMPLATE_SPEC,)),
    Target("apps", "Deployment", PODS, (_TEMPLATE_SPEC,)),
    Target("apps", "ReplicaSet", PODS, (_TEMPLATE_SPEC,)),
    Target("apps", "StatefulSet", PODS, (_TEMPLATE_SPEC,)),
    Target("apps", "DaemonSet", PODS, (_TEMPLATE_SPEC,)),
    # pre-1.16 manifests still found in old charts
    Target("extensions", "Deployment", PODS, (_TEMPLATE_SPEC,)),
    Target("extensions", "ReplicaSet", PODS, (_TEMPLATE_SPEC,)),
    Target("extensions", "DaemonSet", PODS, (_TEMPLATE_SPEC,)),
    Target("batch", "Job", PODS, (_TEMPLATE_SPEC,)),
    Target("batch", "CronJob", PODS, (("spec", "jobTemplate", "spec", "template", "spec"),)),
    # Cluster API bootstrap kinds (every API version) of the dialect rows: where the
    # spec holding the file and command lists lives
    *(
        Target(row.group, row.kind, KUBEADM, (row.spec_path,))
        for dialect in dialects.DIALECTS
        for row in dialect.kinds
    ),
    Target("cluster.x-k8s.io", "ClusterClass", CLUSTERCLASS),
    Target("cluster.x-k8s.io", "Cluster", TOPOLOGY),
)

# Ready-made spec.targets entries. Open Cluster Management's add-on configuration
# (seed 004): proxy settings for every add-on agent of a managed cluster.
TARGET_PRESETS: Mapping[str, Mapping[str, Any]] = {
    "ocm-addon": {
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "AddOnDeploymentConfig",
        "set": {
            "$.spec.proxyConfig.httpProxy": "httpProxy",
            "$.spec.proxyConfig.httpsProxy": "httpsProxy",
            "$.spec.proxyConfig.noProxy": "noProxy",
            "$.spec.proxyConfig.caBundle": "caBundleBase64",
        },
    },
}


def _dotted(path: Path) -> str:
    return "$." + ".".join(str(step) for step in path)


def _merge(old: Target, new: Target) -> Target:
    """One entry for a kind out of two, or the conflict between them."""
    if old.origin == BUILT_IN_ORIGIN or new.origin == BUILT_IN_ORIGIN:
        custom = new if old.origin == BUILT_IN_ORIGIN else old
        raise TargetConflict(f"{custom.origin}: {custom.kind} is a built-in target")
    if old.planner != new.planner:
        raise TargetConflict(
            f"{new.origin}: {new.kind} is already a target of {old.origin}; one kind takes "
            "either podTemplate or set, not both"
        )
    for path in new.paths:
        if path in old.paths:
            raise TargetConflict(f"{new.origin}: {_dotted(path)} of {new.kind} is in {old.origin}")
    taken = {path for path, _ in old.fields}
    for path, _ in new.fields:
        if path in taken:
            raise TargetConflict(f"{new.origin}: {_dotted(path)} of {new.kind} is in {old.origin}")
    return Target(
        old.group,
        old.kind,
        old.planner,
        (*old.paths, *new.paths),
        (*old.fields, *new.fields),
        old.origin,
    )


class TargetTable(FrozenStruct):
    """The targets of one run, one entry per (API group, kind)."""

    by_kind: Mapping[tuple[str, str], Target] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: Iterable[Target]) -> TargetTable:
        """The table of ``entries``; raises TargetConflict for entries that clash."""
        table: dict[tuple[str, str], Target] = {}
        for entry in entries:
            key = (entry.group, entry.kind)
            table[key] = _merge(table[key], entry) if key in table else entry
        return cls(table)

    def with_entries(self, entries: Iterable[Target]) -> TargetTable:
        return TargetTable.of((*self.by_kind.values(), *entries))

    def find(self, obj: Mapping[str, Any]) -> Target | None:
        return self.by_kind.get(group_kind(obj))

    def paths(self, obj: Mapping[str, Any], planner: str) -> tuple[Path, ...]:
        """Where ``planner`` works in ``obj`` (nothing when another planner, or none, owns it)."""
        target = self.by_kind.get(group_kind(obj))
        return target.paths if target is not None and target.planner == planner else ()

    def of_planner(self, planner: str) -> list[Target]:
        return [t for t in self.by_kind.values() if t.planner == planner]

    @property
    def kinds(self) -> frozenset[str]:
        """Every kind a document must be parsed for (``kind: List`` may hold any of them)."""
        return frozenset(kind for _, kind in self.by_kind) | LIST_KINDS


BUILT_IN = TargetTable.of(BUILT_IN_TARGETS)


class PathError(ValueError):
    pass


def parse_path(text: str) -> Path:
    """A JSONPath naming one place (``$.a.b[0].c``) as a path of keys and indexes."""
    from jsonpath_ng.jsonpath import Child, Fields, Index, Root
    from jsonpath_ng.parser import parse

    try:
        expression = parse(text)
    except Exception as exc:  # the lexer and parser raise several kinds
        raise PathError(f"{text!r} is not a JSONPath ({str(exc).splitlines()[0]})") from None
    steps: list[str | int] = []

    def walk(node: Any) -> None:
        if isinstance(node, Root):
            return
        if isinstance(node, Child):
            walk(node.left)
            walk(node.right)
        elif isinstance(node, Fields) and len(node.fields) == 1 and node.fields[0] != "*":
            steps.append(node.fields[0])
        elif isinstance(node, Index) and len(node.indices) == 1:
            steps.append(node.indices[0])
        else:
            raise PathError(f"{text!r}: only fields and indexes (one place), not {node}")

    walk(expression)
    if not steps:
        raise PathError(f"{text!r} names the whole object")
    return tuple(steps)
