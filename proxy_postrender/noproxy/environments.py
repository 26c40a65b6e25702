"""Which variables an object gets: the workloads one set, each cluster's nodes their own.

Workloads run in the cluster the stream is applied to and get the profile's
NO_PROXY. Cluster API kubeadm objects configure the nodes of the clusters
they serve (see :mod:`proxy_postrender.noproxy.discovery`), so their NO_PROXY
also holds what those clusters' Cluster objects say.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import DocumentContext, InputError
from proxy_postrender.noproxy import advice, coverage, fleet, presets, scope, size, syntax
from proxy_postrender.noproxy.fleet import ClusterMatch
from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
from proxy_postrender.objects import api_group
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from proxy_postrender.noproxy.clusterindex import ClassRef, ClusterIndex
    from proxy_postrender.noproxy.envsources import EnvSources

Env = tuple[tuple[str, str], ...]
_NO_PROXY = ("NO_PROXY", "no_proxy")
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY")
WORKLOADS = "workloads"  # the scope of the objects that run in the cluster
NODES = "nodes"  # the scope of the objects that configure a cluster's nodes
# the node objects whose exports kubeadm copies into the static pods of a control plane
CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io"
CAPI_GROUP = "cluster.x-k8s.io"
CONTROL_PLANE_KINDS = frozenset({"KubeadmControlPlane", "KubeadmControlPlaneTemplate"})


class ObjectEnv(FrozenStruct):
    """The variables one object gets (empty: take out what the tool injected)."""

    env: Env
    clusters: tuple[str, ...] = ()  # labels of the clusters whose values are in NO_PROXY
    how: str | None = None  # how the object was matched to them, or why it was not
    # the ClusterClass of the stream that names the object as a template (shared by all
    # the clusters of the class), when clusters are looked for
    shared_by: ClassRef | None = None
    # the clusters of the stream and who uses what (None: clusters are not looked for)
    index: ClusterIndex | None = None
    # whose settings the object gets: None, the run's (the workloads'); fleet.DEFAULTS,
    # the profile's defaults; else the index of the spec.clusters entry
    entry: int | None = None
    # the rollout step (rollout/) decides the object's name: ``rename`` True, and the name
    # its record keeps as the one before the tool renamed it (None: not renamed); False:
    # the record keeps what it says
    rename: bool = False
    renamed_from: str | None = None
    # the stream's ConfigMaps and Secrets a container's envFrom may name (None: not read,
    # as when removing): what they set counts as set by the manifest (pods/envfrom.py)
    sources: EnvSources | None = None


def with_no_proxy(env: Env, value: str) -> Env:
    """``env`` with NO_PROXY and no_proxy set to ``value`` (added after the proxies)."""
    if not value:
        return tuple((n, v) for n, v in env if n not in _NO_PROXY)
    if any(name in _NO_PROXY for name, _ in env):
        return tuple((n, value if n in _NO_PROXY else v) for n, v in env)
    upper = [(n, v) for n, v in env if n.isupper()] + [("NO_PROXY", value)]
    return tuple(upper + [(n.lower(), v) for n, v in upper])


def with_services_preset(
    env: Env, config: NoProxyConfig, services: Sequence[tuple[str, str]]
) -> tuple[Env, presets.Resolved]:
    """The workloads' variables with the ``services`` preset resolved for the render's
    ``services`` (namespace, name), and what the preset did (its cost, what it left out)."""
    resolved = presets.resolve_services(scope.build(config), services)
    return with_no_proxy(env, syntax.join(item.entry for item in resolved.entries)), resolved


class EntryEnv(FrozenStruct):
    """What one per-cluster entry (or the defaults) gives the nodes it is chosen for."""

    where: str  # "spec.clusters[0]", or "the defaults"
    match: ClusterMatch
    env: Env
    config: NoProxyConfig | None
    same: int = -1  # the first entry whose settings are the same (this one's index: -1)


class Environments:
    """The variables of each scope of one run: ``env`` (the profile's), with the NO_PROXY
    of each cluster's nodes made from ``config`` and the clusters in ``index``;
    ``workloads`` is the workloads' (``env`` with the ``services`` preset's names, which
    nodes never get: they do not resolve Service names)."""

    def __init__(
        self,
        env: Env,
        config: NoProxyConfig | None,
        index: ClusterIndex | None,
        workloads: Env | None = None,
        entries: Sequence[EntryEnv] = (),
        defaults: EntryEnv | None = None,
        sources: EnvSources | None = None,
    ) -> None:
        self.env = env
        self.config = config
        self.index = index
        self.entries = list(entries)  # spec.clusters, in order
        # what choosing an entry reads, once: each entry's match, its name, and the first
        # entry with the same settings
        self._matches = [entry.match for entry in self.entries]
        self._named = [entry.where for entry in self.entries]
        self._same = [i if e.same < 0 else e.same for i, e in enumerate(self.entries)]
        # what the nodes of a cluster no entry matches get (the run's when None)
        self.defaults = defaults or EntryEnv("the defaults", ClusterMatch(), env, config)
        self.workloads_env = env if workloads is None else workloads
        self._workloads = ObjectEnv(self.workloads_env, sources=sources)
        # the nodes' when no Cluster is looked for
        self._plain = ObjectEnv(self.defaults.env, entry=fleet.DEFAULTS)
        self._cache: dict[tuple[int, tuple[ClusterNetwork, ...], bool], Env] = {}
        # warnings about each NO_PROXY written: "workloads" or the clusters' labels
        self.warnings: dict[str, list[str]] = {}
        self.notes: dict[str, list[str]] = {}  # what no style can make portable, per scope
        # what each NO_PROXY given to an object sends through the proxy (coverage.check)
        self._gaps: dict[str, list[coverage.Gap]] = {}
        # the node addresses a control plane's static pods call (coverage.node_addresses)
        self._static_pods: dict[str, list[coverage.Gap]] = {}
        self.large: dict[str, str] = {}  # the warning about each large NO_PROXY, per scope
        # the Clusters (by label) none of whose nodes the tool configures, with why: no
        # NO_PROXY is made (or checked) for their nodes (nodes/uncovered.py)
        self.unconfigured: dict[str, str] = {}
        self._workloads_used = False
        self._plain_used = False  # nodes got ``env`` (no Cluster looked for)
        if config is not None and env:
            listed = scope.build(config)
            self.warnings[WORKLOADS] = advice.for_list(listed, config)
            self.notes[WORKLOADS] = advice.unportable(listed)

    def gaps(self) -> list[coverage.Gap]:
        """The coverage gaps of the NO_PROXY values objects got, each said once, its message
        naming the scope: the workloads' (when an object got it), then each cluster's nodes'."""
        found: list[coverage.Gap] = []
        if not any(name.upper() in _PROXIES for name, _ in self.env):
            return found  # nothing goes through a proxy
        config = self.config
        workloads = _no_proxy(self.workloads_env)
        plain = _no_proxy(self.defaults.env)
        if config is not None and (
            self._workloads_used or (self._plain_used and plain == workloads)
        ):
            gaps = coverage.check(workloads, [config.cluster], workloads=True)
            found += _about("the workloads", gaps)
        if config is not None and self._plain_used and plain != workloads:
            # the nodes' list lacks the Service names: checked as the workloads' list is
            gaps = coverage.check(plain, [config.cluster], workloads=True)
            said = {gap.code for gap in found}
            found += _about("the nodes", [gap for gap in gaps if gap.code not in said])
        for label, gaps in self._gaps.items():
            found += _about(label, gaps)
        for label, gaps in self._static_pods.items():
            found += _about(label, gaps)
        return found

    def for_object(
        self, obj: Mapping[str, Any], where: str, context: DocumentContext | None = None
    ) -> ObjectEnv:
        """The variables of ``obj`` in scope ``where`` (WORKLOADS or NODES); ``context``:
        its document, named by what is said about it."""
        if where == WORKLOADS or self.config is None or not self.env:
            self._workloads_used = True
            return self._workloads
        if self.index is None:
            self._plain_used = True
            plain = self.defaults
            self._check_static_pods(obj, (), _no_proxy(plain.env), context, plain.config)
            return self._plain
        shared = self.index.class_of(obj)
        if _is_cluster(obj) and self._unconfigured(obj):
            return ObjectEnv(self.defaults.env, index=self.index, entry=fleet.DEFAULTS)
        if _is_cluster(obj) and self.index.topology_class(obj) is None:
            # only a topology Cluster whose class is in the stream gets values (its
            # variable's, nodes/topology.py): no NO_PROXY is made (or checked) for the others
            return ObjectEnv(self.defaults.env, index=self.index, entry=fleet.DEFAULTS)
        if shared is not None or _is_class(obj):
            # shared by every cluster of a class: the profile's values, never one cluster's
            # (each cluster's own arrive through the class's variable, nodes/classvars.py);
            # the patch completes the list per cluster, so it is not checked as one
            said = f"shared by {shared.label}" if shared else "a ClusterClass"
            said += ": each cluster's values come from its variable"
            return self._for_networks(obj, (), said, shared, context, checked=False)
        networks, how = self.index.networks_for(obj)
        return self._for_networks(obj, networks, how, None, context)

    def _unconfigured(self, obj: Mapping[str, Any]) -> bool:
        """Whether the Cluster ``obj`` is one none of whose nodes the tool configures
        (then the report says so, once, where their NO_PROXY would be)."""
        assert self.index is not None
        key = self.index.cluster_key(obj)
        label = self.index.clusters[key].label if key is not None else None
        reason = self.unconfigured.get(label) if label is not None else None
        if reason is None:
            return False
        self.notes[f"nodes of {label}"] = [f"not written: {reason}"]
        return True

    def for_class_neighbours(
        self, obj: Mapping[str, Any], context: DocumentContext | None = None
    ) -> ObjectEnv:
        """The variables of the one Secret the nodes of the Cluster ``obj`` read in secret
        mode: those of every Cluster of a class of the stream in its namespace (their
        templates name one Secret); refused when they get different entries."""
        assert self.index is not None
        networks = self.index.class_neighbours(obj)
        how = "the Secret of the ClusterClass clusters of its namespace"
        return self._for_networks(obj, networks, how, None, context)

    def _for_networks(
        self,
        obj: Mapping[str, Any],
        networks: Sequence[ClusterNetwork],
        how: str | None,
        shared: ClassRef | None,
        context: DocumentContext | None,
        *,
        checked: bool = True,
    ) -> ObjectEnv:
        """The variables of an object that configures the nodes of ``networks``' clusters."""
        key = tuple(dict.fromkeys(networks))
        chosen = fleet.choose_one(self._matches, key, self._named, self._same)
        entry = self.defaults if chosen == fleet.DEFAULTS else self.entries[chosen]
        if (chosen, key, checked) not in self._cache:
            value = self.value(key, entry.config, checked=checked)
            self._cache[chosen, key, checked] = with_no_proxy(entry.env, value)
        env = self._cache[chosen, key, checked]
        if checked:
            self._check_static_pods(obj, key, _no_proxy(env), context, entry.config)
        labels = tuple(net.label for net in key)
        if chosen != fleet.DEFAULTS:
            how = f"{how or 'matched'}; the settings of {entry.where}"
        return ObjectEnv(env, labels, how, shared, self.index, chosen)

    def _check_static_pods(
        self,
        obj: Mapping[str, Any],
        networks: Sequence[ClusterNetwork],
        value: str,
        context: DocumentContext | None,
        config: NoProxyConfig | None,
    ) -> None:
        """For a control plane's kubeadm object: whether ``value``, which kubeadm copies into
        its static pods, covers the nodes' own addresses (said once per scope, about the
        first such object, whose document is ``context``)."""
        if (
            obj.get("kind") not in CONTROL_PLANE_KINDS
            or api_group(obj.get("apiVersion")) != CONTROL_PLANE_GROUP
        ):
            return
        assert config is not None
        label = "the nodes of " + ", ".join(net.label for net in networks)
        if not networks:
            label = "the nodes matched to no Cluster"
            networks = (ClusterNetwork("their cluster (no Cluster object matched)"),)
        if label not in self._static_pods:
            self._static_pods[label] = [
                coverage.Gap(gap.code, gap.message, context)
                for net in networks
                for gap in coverage.node_addresses(value, net, config.cluster.nodes)
            ]

    def value(
        self,
        networks: Sequence[ClusterNetwork],
        config: NoProxyConfig | None = None,
        *,
        checked: bool = True,
    ) -> str:
        """The NO_PROXY of the nodes of ``networks`` made from ``config`` (the run's when
        None): the warnings about it are kept (not its coverage gaps unless ``checked``),
        a list no process could start with is refused."""
        config = config or self.config
        assert config is not None
        entries = scope.build(config, networks)
        label = "nodes of " + ", ".join(net.label for net in networks)
        if networks:
            self.warnings[label] = advice.for_list(entries, config, networks)
            self.notes[label] = advice.unportable(entries)
        value = syntax.join(item.entry for item in entries)
        about = "the " + label if networks else "the nodes matched to no Cluster"
        self._check_size(value, about)
        if not checked:
            return value
        if networks:
            gaps = coverage.check(value, networks, workloads=False)
        else:  # the profile's spec.cluster, else kubeadm's default service CIDR
            gaps = coverage.check(value, [config.cluster], workloads=False, assume_default=True)
        self._gaps[about] = gaps
        return value

    def _check_size(self, value: str, about: str) -> None:
        """Refuse a NO_PROXY no process could start with; note a large one."""
        refused = size.too_large(value, about)
        if refused is not None:
            raise InputError(refused)
        warning = size.large(value, about)
        if warning is not None:
            self.large[about] = warning


def _is_class(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "ClusterClass" and api_group(obj.get("apiVersion")) == CAPI_GROUP


def _is_cluster(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "Cluster" and api_group(obj.get("apiVersion")) == CAPI_GROUP


def _no_proxy(env: Env) -> str:
    """The NO_PROXY of ``env`` as Go reads it (NO_PROXY first; the tool writes both alike)."""
    values = dict(env)
    return values.get("NO_PROXY", values.get("no_proxy", ""))


def _about(scope_label: str, gaps: Sequence[coverage.Gap]) -> list[coverage.Gap]:
    return [
        coverage.Gap(g.code, f"NO_PROXY of {scope_label}: {g.message}", g.context) for g in gaps
    ]
