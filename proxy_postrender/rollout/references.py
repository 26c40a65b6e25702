"""Who refers to a bootstrap template or config, and where: FieldSpecs as data.

Each :class:`RefSpec` row names a referrer kind and the path to a reference in it
(``*``: every item of a list). A reference is a mapping with ``kind`` and ``name``,
and ``apiGroup`` (v1beta2) or ``apiVersion`` (v1beta1), and in v1beta1 an optional
``namespace``; the shapes are those of the Cluster API CRDs at
kubernetes-sigs/cluster-api@ae7ff047db499ac3858ade268ba38db8c9f128bb
(core/config/crd/bases/cluster.x-k8s.io_{machinedeployments,machinesets,
machinepools,clusterclasses}.yaml). A new referrer is one row.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.objects import api_group, group_kind, is_mapping
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.objects import Path

CAPI_GROUP: str = "cluster.x-k8s.io"
EXP_GROUP: str = "exp.cluster.x-k8s.io"  # MachinePool before it moved to the core group
ANY: str = "*"
_MACHINE_REF: tuple[str, ...] = ("spec", "template", "spec", "bootstrap", "configRef")


class RefSpec(FrozenStruct):
    """One place where a referrer kind names a bootstrap template (or config)."""

    groups: tuple[str, ...]
    kind: str
    path: tuple[str, ...]  # to the reference mapping; ANY steps into every list item
    # what the referrer does with it: "machines" (its machines are made from it),
    # "class" (a ClusterClass's MachineDeployment class: the topology controller makes
    # each cluster's copy and rolls it), "class-pool" (a MachinePool class: the topology
    # controller patches each cluster's config in place, cluster-api #10496)
    role: str = "machines"


# a ClusterClass's worker classes: v1beta1 CLASS.template.bootstrap.ref, v1beta2
# CLASS.bootstrap.templateRef; a MachinePool class's configs are patched in place
_CLASS_REFS: tuple[tuple[str, ...], ...] = (
    ("template", "bootstrap", "ref"),
    ("bootstrap", "templateRef"),
)
_CLASS_LISTS: tuple[tuple[str, str], ...] = (
    ("machineDeployments", "class"),
    ("machinePools", "class-pool"),
)

REFERRERS: tuple[RefSpec, ...] = (
    RefSpec((CAPI_GROUP,), "MachineDeployment", _MACHINE_REF),
    RefSpec((CAPI_GROUP,), "MachineSet", _MACHINE_REF),
    RefSpec((CAPI_GROUP, EXP_GROUP), "MachinePool", _MACHINE_REF),
    *(
        RefSpec((CAPI_GROUP,), "ClusterClass", ("spec", "workers", key, ANY, *ref), role)
        for key, role in _CLASS_LISTS
        for ref in _CLASS_REFS
    ),
)
REFERRER_KINDS: frozenset[str] = frozenset(spec.kind for spec in REFERRERS)

# (API group, kind, namespace, name) of a referenced object
Key = tuple[str, str, str, str]


class Ref(FrozenStruct):
    """One reference found in an object."""

    name_path: tuple[str | int, ...]  # from the object's root to the reference's name
    key: Key  # the object it names
    role: str


def key_of(obj: Mapping[str, Any], default_namespace: str) -> Key | None:
    """The key of an object of the stream (None: it has no name)."""
    metadata = obj.get("metadata")
    if not is_mapping(metadata) or not isinstance(metadata.get("name"), str):
        return None
    namespace = metadata.get("namespace")
    namespace = namespace if isinstance(namespace, str) and namespace else default_namespace
    return (*group_kind(obj), namespace, metadata["name"])


def specs_for(obj: Mapping[str, Any]) -> list[RefSpec]:
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in REFERRER_KINDS:
        return []
    group = api_group(obj.get("apiVersion"))
    return [spec for spec in REFERRERS if spec.kind == kind and group in spec.groups]


def references(obj: Mapping[str, Any], default_namespace: str) -> list[Ref]:
    """Every reference of ``obj`` to another object, by the table."""
    found: list[Ref] = []
    own = key_of(obj, default_namespace)
    namespace = own[2] if own is not None else default_namespace
    for spec in specs_for(obj):
        for path, ref in _walk(obj, spec.path, ()):
            key = _ref_key(ref, namespace)
            if key is not None:
                found.append(Ref((*path, "name"), key, spec.role))
    return found


def infrastructure_of(obj: Mapping[str, Any], default_namespace: str) -> Key | None:
    """The infrastructure a MachinePool's machines are made with (its template's
    ``infrastructureRef``)."""
    own = key_of(obj, default_namespace)
    namespace = own[2] if own is not None else default_namespace
    hits = _walk(obj, ("spec", "template", "spec", "infrastructureRef"), ())
    return _ref_key(hits[0][1], namespace) if hits else None


def _walk(
    value: Any, steps: tuple[str, ...], path: tuple[str | int, ...]
) -> list[tuple[tuple[str | int, ...], Mapping[str, Any]]]:
    if not steps:
        return [(path, value)] if is_mapping(value) else []
    step, rest = steps[0], steps[1:]
    if step == ANY:
        if not isinstance(value, list):
            return []
        return [hit for i, item in enumerate(value) for hit in _walk(item, rest, (*path, i))]
    if not is_mapping(value) or step not in value:
        return []
    return _walk(value[step], rest, (*path, step))


def _ref_key(ref: Mapping[str, Any], namespace: str) -> Key | None:
    name, kind = ref.get("name"), ref.get("kind")
    if not isinstance(name, str) or not isinstance(kind, str) or not name:
        return None
    group = ref.get("apiGroup")
    if not isinstance(group, str):
        group = api_group(ref.get("apiVersion"))
    own = ref.get("namespace")
    return (group, kind, own if isinstance(own, str) and own else namespace, name)


def shown(key: Key) -> str:
    """``Kind ns/name`` of a key, for a message."""
    return f"{key[1]} {key[2] + '/' if key[2] else ''}{key[3]}"


def base_path(base: Path, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
    return (*base, *path)
