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
from proxy_postrender.structs import FrozenStruct, field, replace

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
# (proxyForServer: the proxy for the scheme of the ``server`` field next to the one set,
# a kubeconfig's cluster entry)
FIELD_VALUES = (
    "httpProxy",
    "httpsProxy",
    "noProxy",
    "caBundle",
    "caBundleBase64",
    "proxyForServer",
    "caAppended",
)


class Select(FrozenStruct):
    """Which objects of its kind a target takes: by name, namespace and labels (all that
    are given must match). An object written without a namespace fits any namespace
    (it lands in whichever it is applied to), as the rest of the tool reads it."""

    name: str | None = None
    namespace: str | None = None
    labels: tuple[tuple[str, str], ...] = ()  # matchLabels

    def matches(self, obj: Mapping[str, Any]) -> bool:
        metadata = obj.get("metadata")
        metadata = metadata if isinstance(metadata, Mapping) else {}
        if self.name is not None and metadata.get("name") != self.name:
            return False
        namespace = metadata.get("namespace")
        if self.namespace is not None and namespace and namespace != self.namespace:
            return False
        labels = metadata.get("labels")
        labels = labels if isinstance(labels, Mapping) else {}
        return all(labels.get(key) == value for key, value in self.labels)

    def shown(self) -> str:
        said = [f"name {self.name}"] if self.name is not None else []
        said += [f"namespace {self.namespace}"] if self.namespace is not None else []
        said += [f"label {key}={value}" for key, value in self.labels]
        return ", ".join(said)


EMBEDDED_FORMATS: tuple[str, ...] = ("yaml", "json", "kubeconfig")
ENCODINGS: tuple[str, ...] = ("none", "base64")
ANY: str = "*"  # a path step: every item of a list (``[*]``)


class Embedded(FrozenStruct):
    """A document held as text in a string field of the object: the ``set`` paths of its
    target apply inside that document (fields/embedded.py)."""

    path: Path  # the string field
    format: str = "yaml"  # one of EMBEDDED_FORMATS (a kubeconfig is YAML)
    encoding: str = "none"  # one of ENCODINGS

    def shown(self) -> str:
        return _dotted(self.path)


class Target(FrozenStruct):
    group: str
    kind: str
    planner: str
    paths: tuple[Path, ...] = ()  # PODS: pod specs; KUBEADM: the KubeadmConfigSpec
    fields: tuple[tuple[Path, str], ...] = ()  # FIELDS: (path, profile value)
    origin: str = BUILT_IN_ORIGIN  # "built-in", or "spec.targets[N]"
    select: Select | None = None  # None: every object of the kind
    embedded: Embedded | None = None  # FIELDS: the fields are inside this document
    note: str = ""  # said in --report for every object it changes (a preset's)


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
TARGET_PRESETS: Mapping[str, Any] = {  # an entry, or a list of entries
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
    # The Open Cluster Management klusterlet reaches its hub through the bootstrap
    # kubeconfig (base64 in the Secret bootstrap-hub-kubeconfig): each cluster entry gets
    # the proxy for its server's scheme as proxy-url, and the proxy's CA appended to its
    # certificate-authority-data, as `clusteradm join --proxy-url --proxy-ca-file` does;
    # the agent bootstraps again when this Secret changes.
    "ocm-klusterlet": {
        "apiVersion": "v1",
        "kind": "Secret",
        "name": "bootstrap-hub-kubeconfig",
        "embedded": {"path": "$.data.kubeconfig", "format": "kubeconfig", "encoding": "base64"},
        "set": {
            "$.clusters[*].cluster.proxy-url": "proxyForServer",
            "$.clusters[*].cluster.certificate-authority-data": "caAppended",
        },
    },
    # kapp-controller reads its proxy from the Secret kapp-controller-config, else from a
    # ConfigMap of that name (the Tanzu package ships one): both, the same fields
    "kapp-controller": [
        {
            "apiVersion": "v1",
            "kind": kind,
            "name": "kapp-controller-config",
            "set": {
                f"$.{where}.httpProxy": "httpProxy",
                f"$.{where}.httpsProxy": "httpsProxy",
                f"$.{where}.noProxy": "noProxy",
            },
        }
        for kind, where in (("Secret", "stringData"), ("ConfigMap", "data"))
    ],
}


# What --report says of every object a preset changes.
PRESET_NOTES: Mapping[str, str] = {
    "ocm-klusterlet": "the klusterlet bootstraps again when this Secret changes (it reads "
    "the hub's kubeconfig from it anew)",
}


def _dotted(path: Path) -> str:
    return "$." + ".".join(str(step) for step in path)


def _merge(old: Target, new: Target) -> Target:
    """One entry for a kind out of two, or the conflict between them."""
    if old.origin == BUILT_IN_ORIGIN or new.origin == BUILT_IN_ORIGIN:
        custom = new if old.origin == BUILT_IN_ORIGIN else old
        raise TargetConflict(f"{custom.origin}: {custom.kind} is a built-in target")
    if old.embedded != new.embedded and (old.fields and new.fields):
        raise TargetConflict(
            f"{new.origin}: {new.kind} objects it selects get fields of {old.origin} too, in "
            "another document (embedded): give them selectors that do not meet"
        )
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
        embedded=old.embedded or new.embedded,
        note=old.note or new.note,
    )


class TargetTable(FrozenStruct):
    """The targets of one run: one entry per (API group, kind) for every object of the
    kind, and the entries that select some objects of a kind (by name, namespace,
    labels); an object gets its kind's entry and every selecting entry it matches, as
    one (two of them setting one place are a conflict, said when an object meets it)."""

    by_kind: Mapping[tuple[str, str], Target] = field(default_factory=dict)
    selecting: Mapping[tuple[str, str], tuple[Target, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: Iterable[Target]) -> TargetTable:
        """The table of ``entries``; raises TargetConflict for entries that clash."""
        table: dict[tuple[str, str], Target] = {}
        selecting: dict[tuple[str, str], list[Target]] = {}
        for entry in entries:
            key = (entry.group, entry.kind)
            if entry.select is not None:
                selecting.setdefault(key, []).append(entry)
                continue
            table[key] = _merge(table[key], entry) if key in table else entry
        for key, chosen in selecting.items():
            for entry in chosen:
                if key in table:
                    _merge(table[key], replace(entry, paths=(), fields=()))  # planner, built-in
        return cls(table, {key: tuple(chosen) for key, chosen in selecting.items()})

    def with_entries(self, entries: Iterable[Target]) -> TargetTable:
        chosen = [t for ts in self.selecting.values() for t in ts]
        return TargetTable.of((*self.by_kind.values(), *chosen, *entries))

    def find(self, obj: Mapping[str, Any]) -> Target | None:
        """The target of ``obj``: its kind's, with the selecting entries it matches;
        TargetConflict when two of them set one place."""
        key = group_kind(obj)
        found = self.by_kind.get(key)
        if not self.selecting:
            return found
        for entry in self.selecting.get(key, ()):
            if entry.select is not None and entry.select.matches(obj):
                found = entry if found is None else _merge(found, entry)
        return found

    def paths(self, obj: Mapping[str, Any], planner: str) -> tuple[Path, ...]:
        """Where ``planner`` works in ``obj`` (nothing when another planner, or none, owns it)."""
        target = self.by_kind.get(group_kind(obj))
        return target.paths if target is not None and target.planner == planner else ()

    def of_planner(self, planner: str) -> list[Target]:
        return [t for t in self.by_kind.values() if t.planner == planner]

    @property
    def kinds(self) -> frozenset[str]:
        """Every kind a document must be parsed for (``kind: List`` may hold any of them)."""
        selected = frozenset(kind for _, kind in self.selecting)
        return frozenset(kind for _, kind in self.by_kind) | selected | LIST_KINDS

    def custom(self) -> list[Target]:
        """The entries of a profile's spec.targets."""
        chosen = [t for ts in self.selecting.values() for t in ts]
        return [t for t in (*self.by_kind.values(), *chosen) if t.origin != BUILT_IN_ORIGIN]


BUILT_IN = TargetTable.of(BUILT_IN_TARGETS)


class PathError(ValueError):
    pass


def parse_path(text: str) -> Path:
    """A JSONPath naming one place (``$.a.b[0].c``) as a path of keys and indexes; ``[*]``
    (every item of a list) is the step ANY."""
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
        elif type(node).__name__ == "Wildcard":  # [*]: every item of a list
            steps.append(ANY)
        else:
            raise PathError(f"{text!r}: only fields and indexes (one place), not {node}")

    walk(expression)
    if not steps:
        raise PathError(f"{text!r} names the whole object")
    return tuple(steps)
