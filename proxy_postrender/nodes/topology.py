"""Each topology Cluster's value of its ClusterClass's variable (nodes/classvars.py).

A ``cluster.x-k8s.io`` Cluster whose ``spec.topology`` uses a ClusterClass of the stream
that gets the variable ``proxyPostrender`` gets, in ``spec.topology.variables``, the
values of its own nodes: the proxies and the NO_PROXY that the variables it is given
(``found.env``, its own networks) say, never the profile read here. Clusters whose class
is not in the stream are left alone (``--remove`` still takes out a recorded value).
What the tool added is recorded in
``proxy-postrender.io/node-bootstrap`` (``variable=STATE``: what the list was before),
so that a second run changes nothing and ``--remove`` gives the input back.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError
from proxy_postrender.nodes import classvars, kubeadm
from proxy_postrender.nodes.kubeadm import NodePlan, NodeSettings
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path, dig
from proxy_postrender.plans import SecretRef
from proxy_postrender.record import Record
from proxy_postrender.targets import Target


def _recorded(record: Record) -> str | None:
    """The state the record gives the list (None: nothing of the tool's); strict."""
    state = None
    for entry in record.entries:
        key, _, value = entry.partition("=")
        if key != "variable" or value not in ("absent", "null", "empty", "listed") or state:
            raise InputError(f"annotation {kubeadm.ANNOTATION} is malformed near {entry!r}")
        state = value
    return state


def _wanted(
    obj: Mapping[str, Any], found: ObjectEnv, settings: NodeSettings | None
) -> dict[str, Any] | None:
    """The Cluster's variable entry (None: it gets none)."""
    index = found.index
    if settings is None or index is None or not classvars.applies(settings, found.env):
        return None
    klass = index.topology_class(obj)
    if klass is None or not classvars.slots(klass, index):
        return None
    if settings.forbid_inline_password:
        raise InputError(
            "spec.credentials.secretRef keeps the proxy password out of the workloads, but "
            "spec.nodes.credentials: inline (the default) would write it in clear into this "
            f"object's node bootstrap (its variable {classvars.VARIABLE}): set "
            "spec.nodes.credentials: secret (or spec.nodes.enabled: false)"
        )
    value = classvars.value_of(found.env, "the values of this Cluster's nodes")
    return {"name": classvars.VARIABLE, "value": value}


def plan(
    obj: Mapping[str, Any],
    base: Path,
    target: Target,
    found: ObjectEnv,
    settings: NodeSettings | None,
) -> NodePlan | None:
    """The Cluster's entry in ``spec.topology.variables`` (None: not one to change)."""
    index = found.index
    if found.env and (index is None or index.topology_class(obj) is None):
        return None  # its class is not in the stream: left alone (removal takes it out)
    record = Record.read(obj, kubeadm.ANNOTATION)
    state = _recorded(record)
    wanted = _wanted(obj, found, settings)
    secret = _node_secret(obj, found, settings)
    if wanted is None and state is None:
        return secret
    topology = dig(obj, "spec", "topology")
    if not isinstance(topology, Mapping):
        raise InputError("spec.topology is not a mapping")
    result = NodePlan.for_env(found)
    ops, now = classvars.plan_entry(
        topology,
        (*base, "spec", "topology"),
        "variables",
        classvars.VARIABLE,
        state,
        wanted,
        where="spec.topology",
    )
    result.ops += ops
    if wanted is not None:
        result.notes.append(f"topology variable {classvars.VARIABLE}: its nodes' own values")
    result.ops += record.ops(obj, base, [] if now is None else [f"variable={now}"])
    if secret is not None:  # secret mode now: the variable an earlier run set goes
        result.secret, result.secret_env = secret.secret, secret.secret_env
        result.notes += secret.notes
    return result


def _node_secret(
    obj: Mapping[str, Any], found: ObjectEnv, settings: NodeSettings | None
) -> NodePlan | None:
    """In secret mode, the Secret the nodes of a topology Cluster read (the class's
    templates name ``spec.nodes.secretName``; each cluster's namespace holds one), with
    this Cluster's values: emitted by the run, so that each cluster of the stream gets its
    own values (two Clusters of one namespace with different values are refused when the
    Secrets are made). None: not secret mode, or not a Cluster of a class of the stream."""
    index = found.index
    if (
        settings is None
        or settings.credentials != "secret"
        or not settings.secret_name
        or not found.env
        or index is None
        or index.topology_class(obj) is None
    ):
        return None
    namespace = dig(obj, "metadata", "namespace")
    name = dig(obj, "metadata", "name")
    plan = NodePlan.for_env(found)
    plan.secret = SecretRef(
        settings.secret_name,
        str(namespace) if namespace else None,
        str(name) if name else None,
    )
    plan.secret_env = found.env
    plan.notes.append(f"its nodes read Secret {settings.secret_name}, emitted with its own values")
    return plan


def check_entry(entry: NodeSettings | None, defaults: NodeSettings | None, where: str) -> None:
    """Refuse a per-cluster entry whose node settings a ClusterClass cannot give one of its
    clusters: its templates carry one CA and name one Secret (the defaults'); only the
    proxies and NO_PROXY travel per cluster (the variable, or the Secret's content)."""
    if entry is None or defaults is None:
        return
    if entry.ca_bundle != defaults.ca_bundle:
        raise InputError(
            f"{where} gives this Cluster its own caBundle, but its ClusterClass's templates "
            "carry one CA for all its clusters (the defaults'): put the CA in spec.caBundle, "
            "or give the cluster templates of its own"
        )
    if entry.credentials == "secret" and entry.secret_name != defaults.secret_name:
        raise InputError(
            f"{where} gives this Cluster its own nodes.secretName, but its ClusterClass's "
            "templates name one Secret for all its clusters (spec.nodes.secretName); each "
            "cluster's namespace holds its own copy: drop the entry's secretName"
        )
