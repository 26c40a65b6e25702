"""The planners, in one table: which planner changes an object, with what settings.

The settings come from the resolver (:mod:`proxy_postrender.resolve`): the request of
the profile entry the object gets, of which each planner reads its own part.

Every planner has one signature, ``plan(obj, base, target, env, settings)``:
the object (plain data), its path in the document, its entry of the target
table, the variables it gets (:class:`~proxy_postrender.noproxy.environments.ObjectEnv`)
and the planner's own part of the request; it returns a
:class:`~proxy_postrender.plans.Plan` (or None: nothing of its kind to do).
A planner whose settings are None is off, except when removing: then every
planner takes out what it injected earlier.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from proxy_postrender import TYPE_CHECKING, dialects, targets
from proxy_postrender.errors import InputError
from proxy_postrender.fields import setters
from proxy_postrender.nodes.settings import ANNOTATION as NODES_ANNOTATION
from proxy_postrender.noproxy import fleet
from proxy_postrender.noproxy.environments import NODES, WORKLOADS, ObjectEnv
from proxy_postrender.objects import Path
from proxy_postrender.pods import workloads
from proxy_postrender.structs import FrozenStruct, replace

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.errors import DocumentContext
    from proxy_postrender.nodes.kubeadm import NodePlan
    from proxy_postrender.plans import Plan
    from proxy_postrender.request import Request
    from proxy_postrender.resolve import ProxySettings, Resolver
    from proxy_postrender.rollout.ledger import Ledger
    from proxy_postrender.targets import Target


class Planner(FrozenStruct):
    plan: Callable[[Mapping[str, Any], Path, Target, ObjectEnv, Any], Plan | None]
    settings: Callable[[Request], Any]  # its part of the request (None: the planner is off)
    scope: str  # whose NO_PROXY its objects get: WORKLOADS or NODES
    annotation: str  # where its plans record what the tool injected


def _clusterclass_plan(
    obj: Mapping[str, Any], base: Path, target: Target, found: ObjectEnv, settings: Any
) -> Plan | None:
    """nodes/clusterclass.py's planner, imported when a stream has a ClusterClass (a run
    without Cluster API objects never loads it, nor nodes/classvars.py)."""
    from proxy_postrender.nodes import clusterclass

    return clusterclass.plan(obj, base, target, found, settings)


def _fields_plan(
    obj: Mapping[str, Any], base: Path, target: Target, found: ObjectEnv, settings: Any
) -> Plan | None:
    """fields/setters.py's planner, or for a target with an embedded document
    fields/embedded.py's, imported when a stream has one."""
    if target.embedded is None:
        return setters.plan(obj, base, target, found, settings)
    from proxy_postrender.fields import embedded

    return embedded.plan(obj, base, target, found, settings)


def _topology_plan(
    obj: Mapping[str, Any], base: Path, target: Target, found: ObjectEnv, settings: Any
) -> Plan | None:
    """nodes/topology.py's planner, imported when a stream has a Cluster."""
    from proxy_postrender.nodes import topology

    return topology.plan(obj, base, target, found, settings)


def _nodes_plan(
    obj: Mapping[str, Any], base: Path, target: Target, found: ObjectEnv, settings: Any
) -> Plan | None:
    """The node planner of the object's dialect row, by the writer it takes: a config
    patch (nodes/talos.py), fields of the spec (nodes/specfields.py), each imported when a
    stream has such an object; else files and commands (nodes/kubeadm.py, imported on the
    first node object: a workload-only run never loads the node planners)."""
    from proxy_postrender.nodes import kubeadm

    dialect, row = kubeadm.dialect_of(target)
    if dialect.patches_key:
        from proxy_postrender.nodes import talos

        return talos.plan(obj, base, row, dialect, found, settings)
    if dialects.FIELD_SETTER in dialect.writers:
        from proxy_postrender.nodes import specfields

        if found.env and settings is not None:
            kubeadm.check_shared(dialect, found, target.kind)

        return specfields.plan(obj, base, target, found, settings)
    return kubeadm.plan(obj, base, target, found, settings)


PLANNERS: Mapping[str, Planner] = {
    targets.PODS: Planner(workloads.plan, lambda r: r.pods, WORKLOADS, workloads.ANNOTATION),
    targets.KUBEADM: Planner(_nodes_plan, lambda r: r.nodes, NODES, NODES_ANNOTATION),
    targets.CLUSTERCLASS: Planner(_clusterclass_plan, lambda r: r.nodes, NODES, NODES_ANNOTATION),
    targets.TOPOLOGY: Planner(_topology_plan, lambda r: r.nodes, NODES, NODES_ANNOTATION),
    targets.FIELDS: Planner(_fields_plan, lambda r: r.fields, WORKLOADS, setters.ANNOTATION),
}


def plan(
    obj: Mapping[str, Any],
    base: Path,
    request: Request,
    resolver: Resolver,
    context: DocumentContext | None = None,
) -> Plan | None:
    """The plan of whichever planner the target table gives the object (None: no target),
    with the settings the resolver gives it; ``context``: its document."""
    try:
        target = request.targets.find(obj)
    except targets.TargetConflict as conflict:  # two selecting entries meet in one place
        raise InputError(str(conflict)) from None
    if target is None:
        return None
    planner = PLANNERS[target.planner]
    if planner.settings(request) is None and not request.removing:
        return None
    chosen = resolver.resolve(obj, planner.scope, context, request)
    if resolver.ledger is not None and target.planner == targets.KUBEADM:
        chosen = _with_name(chosen, obj, target, resolver.ledger)
    settings = planner.settings(chosen.request)
    made = planner.plan(obj, base, target, chosen.found, settings)
    if made is not None and made.for_nodes():
        from proxy_postrender.nodes import kubeadm  # (loaded: it made the plan's class)

        if isinstance(made, kubeadm.NodePlan):
            kubeadm.check_inline_password(made, chosen.request.nodes)
            if target.planner == targets.TOPOLOGY:
                _topology_cluster(made, obj, chosen, request, resolver, context)
    return made


def _with_name(
    chosen: ProxySettings, obj: Mapping[str, Any], target: Target, ledger: Ledger
) -> ProxySettings:
    """The settings with the name the rollout step gives the object (rollout/ledger.py),
    which the planner's record keeps."""
    from proxy_postrender.nodes import kubeadm  # lazy: node objects only

    renaming, original = ledger.intent(obj, kubeadm.dialect_of(target)[1])
    if not renaming:
        return chosen
    return replace(chosen, found=replace(chosen.found, rename=True, renamed_from=original))


def _topology_cluster(
    made: NodePlan,
    obj: Mapping[str, Any],
    chosen: ProxySettings,
    request: Request,
    resolver: Resolver,
    context: DocumentContext | None,
) -> None:
    """What a topology Cluster's plan needs from the other objects of the run: its entry
    must be one its ClusterClass can carry, and in secret mode its Secret serves every
    ClusterClass cluster of its namespace (their templates name one Secret)."""
    from proxy_postrender.nodes import topology  # lazy: start-up

    entry = chosen.found.entry
    if entry is not None and entry >= 0:
        defaults = request.entry(fleet.DEFAULTS).nodes
        topology.check_entry(chosen.request.nodes, defaults, request.rules()[entry].where)
    if made.secret is None:
        return
    try:
        made.secret_env = resolver.resolve_class_neighbours(obj, context).env
    except fleet.EntriesDiffer as exc:
        raise InputError(
            f"in secret mode the ClusterClass clusters of one namespace read one Secret "
            f"({made.secret.name}), but those of this Cluster's namespace get different "
            f"spec.clusters entries ({exc.said}): give them namespaces of their own, or use "
            "inline credentials"
        ) from None
