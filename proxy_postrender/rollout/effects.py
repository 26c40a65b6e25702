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
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.errors import DocumentContext
    from proxy_postrender.nodes.kubeadm import NodePlan
    from proxy_postrender.plans import Plan
    from proxy_postrender.rollout.references import Key

    # who refers to an object: (shown, kind, role)
    Referrers = list[tuple[str, str, str]]

NO_ROLLOUT_CODE = "nodes/no-rollout"
CODES: tuple[tuple[str, bool, str], ...] = (
    (
        NO_ROLLOUT_CODE,
        True,
        "a node bootstrap object changed, and no running machine gets the change",
    ),
)
_ON_DELETE = "strategy OnDelete: a machine is replaced once it is deleted"
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
    # the MachineDeployments of strategy OnDelete: they replace a machine once it is deleted
    on_delete: frozenset[str] = frozenset()


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
    referrers, new = seen.referrers, seen.new
    machines = [(label, k) for label, k, role in referrers if role == "machines"]
    classes = [label for label, _, role in referrers if role == "class"]
    pools = [label for label, _, role in referrers if role == "class-pool"]
    rolls = [
        _rolls(label, k, renamed=new is not None, after=_time(seen, label))
        if label not in seen.on_delete or (new is None and _time(seen, label) is None)
        else f"not {label} at once ({_ON_DELETE})"
        for label, k in machines
    ]
    stay = [label for (label, _), r in zip(machines, rolls, strict=True) if r.startswith("not")]
    waiting = [label for (label, _), r in zip(machines, rolls, strict=True) if _ON_DELETE in r]
    rolls += [f"every Cluster of {label} {_class_effect(new)}" for label in classes]
    rolls += [f"not the MachinePools of {label}'s Clusters (patched in place)" for label in pools]
    stay += [f"the MachinePools of every Cluster of {label}" for label in pools]
    if not referrers:
        return _alone(kind, key)
    head = f"renamed {new}: " if new is not None else "changed in place: "
    line = head + "; ".join(rolls)
    if not stay:
        return line, None
    if waiting and len(waiting) == len(stay):
        return line, (
            f"{kind} {key[3]} changed, and with strategy OnDelete ({', '.join(waiting)}) a "
            "running machine is replaced only once it is deleted: it keeps the old settings "
            "until then; delete those machines (one at a time) to replace them"
        )
    if pools and len(stay) == len(pools):
        return line, (
            f"{kind} {key[3]} changed, and the topology controller patches the MachinePool "
            "configs made from it in place (cluster-api #10496): the running instances of "
            f"{', '.join(stay)} keep the old settings; replace them"
        )
    hint = (
        "set spec.nodes.rollout: rename, or spec.nodes.rolloutAfter"
        if seen.after is None
        else "set spec.nodes.rollout: rename, or take the manifest's own rollout time "
        "(spec.rollout.after, spec.rolloutAfter, null too) out of them"
    )
    return line, (
        f"{kind} {key[3]} changed in place, and the machines of {', '.join(stay)} keep the "
        "old settings (Cluster API rolls for a new reference, not for a template's content): "
        + hint
    )


def _time(seen: Seen, label: str) -> str | None:
    """The run's rollout time, when the referrer ``label`` carries it."""
    return None if label in seen.untimed else seen.after


def _rolls(label: str, kind: str, *, renamed: bool, after: str | None) -> str:
    if kind == "MachineDeployment":
        if renamed:
            return f"rolls {label} (every machine is replaced)"
        if after is not None:
            return f"rolls {label} (spec.nodes.rolloutAfter {after})"
        return f"not {label} (its reference is the same, and no rollout time of the tool's)"
    if kind == "MachinePool":
        if renamed:
            return f"{label} bootstraps its machines anew (a new configRef name)"
        return f"not {label} (Cluster API re-bootstraps a MachinePool for a new name only)"
    # a MachineSet makes new machines from it, but never replaces the running ones
    return f"not {label} (a MachineSet does not replace its machines; only new ones get it)"


def _class_effect(new: str | None) -> str:
    if new is not None:
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
