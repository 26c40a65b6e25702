"""What a changed node object makes roll, said per object (item 4 of the rollout step).

Each changed node object gets one ``rollout:`` line in ``--report`` and the KRM
results; a change that reaches no running machine is a ``nodes/no-rollout``
warning (an error under ``--strict``) that says what to do. The rules follow
Cluster API's own rollout decisions (FACTS.md, "Rollouts"; tests/rollout_oracle.py
models them from the source): a MachineDeployment rolls for a new bootstrap
*reference*, never for a template's content; a KubeadmControlPlane for its own
spec; a ClusterClass's objects reach its Clusters through the topology controller.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING, dialects
from proxy_postrender.rollout.codes import NO_ROLLOUT_CODE
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.errors import DocumentContext
    from proxy_postrender.nodes.kubeadm import NodePlan
    from proxy_postrender.plans import Plan
    from proxy_postrender.rollout.references import Key

    # who refers to an object: (shown, kind, role)
    Referrers = list[tuple[str, str, str]]

_RESYNC = "at the topology controller's next full resync (10 minutes by default)"
_CLASS_NOTE = (
    "the topology controller applies this to every Cluster of the class: the control "
    "planes and MachineDeployments whose bootstrap changes are replaced"
)


class Seen(FrozenStruct):
    """What the rollout pass knows of one object: who refers to it, its new name (None:
    it keeps its name), and the rollout time the run writes (None: none)."""

    referrers: Referrers
    new: str | None
    after: str | None
    # the referrers that keep a rollout time of the manifest's (the run's is not written)
    untimed: frozenset[str] = frozenset()


def of(
    obj: Mapping[str, Any],
    key: Key,
    plan: Plan,
    seen: Seen,
    context: DocumentContext | None,
) -> list[tuple[str, str, DocumentContext | None]]:
    """The rollout line of a changed object (on its plan) and its warnings."""
    from proxy_postrender.nodes.kubeadm import NodePlan  # lazy: start-up

    if not plan.ops or not isinstance(plan, NodePlan):
        return []
    kind = str(obj.get("kind"))
    found = dialects.of_kind(key[0], kind)
    if found is None:
        if kind in ("ClusterClass", "Cluster"):
            plan.notes.append(f"rollout: {_CLASS_NOTE}")
        return []
    dialect, row = found
    if row.level in (dialects.CONTROL_PLANE, dialects.CONTROL_PLANE_TEMPLATE):
        return _control_plane(kind, key, dialect, row, plan, context)
    line, warning = _worker(kind, key, seen)
    plan.notes.append(f"rollout: {line}")
    return [] if warning is None else [(NO_ROLLOUT_CODE, warning, context)]


def _control_plane(
    kind: str,
    key: Key,
    dialect: dialects.Dialect,
    row: dialects.BootstrapKind,
    plan: NodePlan,
    context: DocumentContext | None,
) -> list[tuple[str, str, DocumentContext | None]]:
    effect = dialect.control_plane_rollout
    if row.level == dialects.CONTROL_PLANE_TEMPLATE:
        effect = (
            "the topology controller copies it into the control plane of every Cluster of "
            f"the class: {effect or 'which keeps its machines'}"
        )
    if dialect.control_plane_rollout:
        plan.notes.append(f"rollout: {effect}")
        return []
    plan.notes.append("rollout: no control-plane machine is replaced")
    return [
        (
            NO_ROLLOUT_CODE,
            f"{kind} {key[3]} changed, and its provider replaces control-plane machines for "
            "a new Kubernetes version only: the running control-plane nodes keep the old "
            "settings; replace them (roll the control plane with a version upgrade), or "
            "leave their proxy to the new machines",
            context,
        )
    ]


def _worker(kind: str, key: Key, seen: Seen) -> tuple[str, str | None]:
    """The line for a worker template (or a MachinePool's config), and the warning."""
    if not seen.referrers:
        return _alone(kind, key)
    renamed = seen.new is not None
    outcomes = [
        _outcome(label, k, role, renamed, None if label in seen.untimed else seen.after)
        for label, k, role in seen.referrers
    ]
    head = f"renamed {seen.new}: " if renamed else "changed in place: "
    line = head + "; ".join(text for text, _ in outcomes)
    advice = [advice for _, advice in outcomes if advice is not None]
    if not advice:
        return line, None
    how = "changed" if renamed else "changed in place"
    return line, (
        f"{kind} {key[3]} {how}, and machines that were made from it keep the old "
        f"settings: {'; '.join(dict.fromkeys(advice))}"
    )


def _outcome(
    label: str, kind: str, role: str, renamed: bool, after: str | None
) -> tuple[str, str | None]:
    """What one referrer does with the change, and what to do when its running machines
    do not get it (None: they do)."""
    if role == "class":
        return f"every Cluster of {label} {_class_effect(renamed)}", None
    if role == "class-pool":
        return f"not the MachinePools of {label}'s Clusters (patched in place)", (
            f"the topology controller patches the MachinePool configs of {label}'s Clusters "
            "in place (cluster-api #10496): replace their instances"
        )
    if kind == "MachineDeployment":
        if role == "ondelete" and (renamed or after is not None):
            return f"not {label} at once (strategy OnDelete)", (
                f"{label} has strategy OnDelete: a running machine is replaced only once it "
                "is deleted (cluster-api machinedeployment_rollout_ondelete.go); delete its "
                "machines, one at a time"
            )
        if renamed:
            return f"rolls {label} (every machine is replaced)", None
        if after is not None:
            return f"rolls {label} (spec.nodes.rolloutAfter {after})", None
        return f"not {label} (its reference is the same, and no rollout time of the tool's)", (
            f"{label} rolls for a new reference, not for a template's content: set "
            "spec.nodes.rollout: rename, or spec.nodes.rolloutAfter (a rollout time the "
            "manifest sets, null too, is kept: take it out)"
        )
    if role == "managed-pool":
        return f"not {label} (an EKS managed node group without a launch template)", (
            f"{label} is an EKS managed node group whose AWSManagedMachinePool has no "
            "spec.awsLaunchTemplate: CAPA gives its nodes no bootstrap data at all; give it "
            "a launch template"
        )
    if kind == "MachinePool":
        if renamed:
            return f"{label} bootstraps its machines anew (a new configRef name)", None
        return f"not {label} (a MachinePool is bootstrapped anew for a new name only)", (
            f"{label} is bootstrapped anew for a new configRef name only: set "
            "spec.nodes.rollout: rename"
        )
    return f"not {label} (a MachineSet never replaces its machines)", (
        f"{label} never replaces its machines: delete them, or let a MachineDeployment own it"
    )


def _class_effect(renamed: bool) -> str:
    if renamed:
        return "rolls: the topology controller makes each cluster's copy of the new template"
    return f"rolls {_RESYNC}: the topology controller rotates each cluster's copy"


def _alone(kind: str, key: Key) -> tuple[str, str]:
    if kind.endswith("Template"):
        return "changed in place: no object of the stream refers to it", (
            f"{kind} {key[3]} changed in place, and no MachineDeployment, MachinePool or "
            "ClusterClass of the stream refers to it: running machines made from it keep "
            "the old settings (Cluster API rolls for a new reference, not for a template's "
            "content); render it together with what uses it, so that the tool renames it "
            "and moves the reference, or roll those machines (spec.rollout.after)"
        )
    return "changed in place: it bootstraps one machine once", (
        f"{kind} {key[3]} changed, and no MachinePool of the stream refers to it: the "
        "machine it bootstrapped keeps the old settings; replace that Machine, or render "
        "the MachinePool that uses it together with it"
    )
