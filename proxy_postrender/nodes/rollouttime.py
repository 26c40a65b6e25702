"""The rollout timestamp: ``spec.nodes.rolloutAfter`` written where Cluster API reads one.

MachineDeployment and KubeadmControlPlane replace the machines made before
``spec.rollout.after`` (v1beta2) or ``spec.rolloutAfter`` (v1beta1) once that time
has passed (kubernetes-sigs/cluster-api@ae7ff047db499ac3858ade268ba38db8c9f128bb,
core/config/crd/bases/cluster.x-k8s.io_machinedeployments.yaml,
controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml).
The time comes from the profile: the output stays a function of its input.

The tool writes the field only where the object has none (a time the manifest sets
is kept, and said), and records that it did: ``after`` (it added the field) or
``after=rollout`` (it added ``spec.rollout`` too in v1beta2), so that a changed
profile replaces its own time and ``--remove`` takes it out again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING, dialects
from proxy_postrender.objects import Path, is_mapping
from proxy_postrender.structs import FrozenStruct, field
from proxy_postrender.yamltext.ops import AddKey, DeleteKey, Op, SetValue

if TYPE_CHECKING:
    from typing import Any

ENTRY = "after"
_CREATED_ROLLOUT = "rollout"
KINDS: frozenset[str] = frozenset({"MachineDeployment", "KubeadmControlPlane"})


def path_of(api_version: str) -> tuple[str, ...]:
    """Where an object of ``api_version`` reads the time."""
    if dialects.rules_of(api_version) == "v1beta1":
        return ("spec", "rolloutAfter")
    return ("spec", "rollout", "after")


class AfterPlan(FrozenStruct):
    ops: list[Op] = field(default_factory=list)
    entry: str | None = None  # the record's entry afterwards
    line: str | None = None  # for the report


def recorded(entries: Sequence[str]) -> str | None:
    """The tool's entry for the time among a record's entries (None: none)."""
    for entry in entries:
        if entry == ENTRY or entry.startswith(ENTRY + "="):
            return entry
    return None


def plan(obj: Mapping[str, Any], base: Path, wanted: str | None, owned: str | None) -> AfterPlan:
    """The time ``wanted`` (None: none) at the object's place, given the record's entry
    ``owned`` (None: the tool wrote no time there)."""
    spec = obj.get("spec")
    if not is_mapping(spec):
        return AfterPlan()
    steps = path_of(str(obj.get("apiVersion") or ""))
    holder: Any = obj
    for step in steps[:-1]:
        holder = holder.get(step) if is_mapping(holder) else None
    current = holder.get(steps[-1]) if is_mapping(holder) else None
    # a null the manifest writes is its own (--remove could not give back its spelling)
    present = is_mapping(holder) and steps[-1] in holder
    where = ".".join(steps)
    full = (*base, *steps)
    if current is None:
        owned = None  # the time the record names is not there (any more): none of the tool's
    if owned is not None:
        if wanted is None:
            if owned == f"{ENTRY}={_CREATED_ROLLOUT}":
                return AfterPlan([DeleteKey((*base, *steps[:-1]))])
            return AfterPlan([DeleteKey(full)])
        ops: list[Op] = [] if current == wanted else [SetValue(full, wanted)]
        return AfterPlan(ops, owned, f"{where}: {wanted}")
    if wanted is None:
        return AfterPlan()
    if present or (len(steps) == 3 and "rollout" in spec and not is_mapping(holder)):
        return AfterPlan(line=f"kept (set by the manifest): {where}")
    if len(steps) == 3 and not is_mapping(spec.get("rollout")):
        op: Op = AddKey((*base, "spec"), "rollout", {"after": wanted})
        return AfterPlan([op], f"{ENTRY}={_CREATED_ROLLOUT}", f"{where}: {wanted}")
    return AfterPlan([AddKey(full[:-1], steps[-1], wanted)], ENTRY, f"{where}: {wanted}")
