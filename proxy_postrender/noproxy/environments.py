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

from proxy_postrender.noproxy import advice, coverage, presets, scope, syntax
from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from proxy_postrender.noproxy.discovery import ClusterIndex

Env = tuple[tuple[str, str], ...]
_NO_PROXY = ("NO_PROXY", "no_proxy")
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY")
WORKLOADS = "workloads"  # the scope of the objects that run in the cluster
NODES = "nodes"  # the scope of the objects that configure a cluster's nodes


class ObjectEnv(FrozenStruct):
    """The variables one object gets (empty: take out what the tool injected)."""

    env: Env
    clusters: tuple[str, ...] = ()  # labels of the clusters whose values are in NO_PROXY
    how: str | None = None  # how the object was matched to them, or why it was not


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
) -> tuple[Env, str]:
    """The workloads' variables with the ``services`` preset resolved for the render's
    ``services`` (namespace, name), and the line that states what it cost."""
    entries, note = presets.resolve_services(scope.build(config), services)
    return with_no_proxy(env, syntax.join(item.entry for item in entries)), note


class Environments:
    """The variables of each scope of one run: ``env`` (the workloads'), with the NO_PROXY
    of each cluster's nodes made from ``config`` and the clusters in ``index``."""

    def __init__(self, env: Env, config: NoProxyConfig | None, index: ClusterIndex | None) -> None:
        self.env = env
        self.config = config
        self.index = index
        self._workloads = ObjectEnv(env)
        self._cache: dict[tuple[ClusterNetwork, ...], Env] = {}
        # warnings about each NO_PROXY written: "workloads" or the clusters' labels
        self.warnings: dict[str, list[str]] = {}
        self.notes: dict[str, list[str]] = {}  # what no style can make portable, per scope
        # what each NO_PROXY given to an object sends through the proxy (coverage.check)
        self._gaps: dict[str, list[coverage.Gap]] = {}
        self._workloads_used = False
        if config is not None and env:
            entries = scope.build(config)
            self.warnings[WORKLOADS] = advice.for_list(entries, config)
            self.notes[WORKLOADS] = advice.unportable(entries)

    def gaps(self) -> list[coverage.Gap]:
        """The coverage gaps of the NO_PROXY values objects got, each said once, its message
        naming the scope: the workloads' (when an object got it), then each cluster's nodes'."""
        found: list[coverage.Gap] = []
        if not any(name.upper() in _PROXIES for name, _ in self.env):
            return found  # nothing goes through a proxy
        if self._workloads_used and self.config is not None:
            value = _no_proxy(self.env)
            gaps = coverage.check(value, [self.config.cluster], workloads=True)
            found += _about("the workloads", gaps)
        for label, gaps in self._gaps.items():
            found += _about(label, gaps)
        return found

    def for_object(self, obj: Mapping[str, Any], where: str) -> ObjectEnv:
        """The variables of ``obj`` in scope ``where`` (WORKLOADS or NODES)."""
        if where == WORKLOADS or self.config is None or self.index is None or not self.env:
            self._workloads_used = True
            return self._workloads
        networks, how = self.index.networks_for(obj)
        key = tuple(dict.fromkeys(networks))
        if key not in self._cache:
            self._cache[key] = with_no_proxy(self.env, self.value(key))
        return ObjectEnv(self._cache[key], tuple(net.label for net in key), how)

    def value(self, networks: Sequence[ClusterNetwork]) -> str:
        config = self.config
        assert config is not None
        entries = scope.build(config, networks)
        if networks:
            label = "nodes of " + ", ".join(net.label for net in networks)
            self.warnings[label] = advice.for_list(entries, config, networks)
            self.notes[label] = advice.unportable(entries)
        value = syntax.join(item.entry for item in entries)
        if networks:
            gaps = coverage.check(value, networks, workloads=False)
            self._gaps["the " + label] = gaps
        else:  # the profile's spec.cluster, else kubeadm's default service CIDR
            gaps = coverage.check(value, [config.cluster], workloads=False, assume_default=True)
            self._gaps["the nodes matched to no Cluster"] = gaps
        return value


def _no_proxy(env: Env) -> str:
    """The NO_PROXY of ``env`` as Go reads it (NO_PROXY first; the tool writes both alike)."""
    values = dict(env)
    return values.get("NO_PROXY", values.get("no_proxy", ""))


def _about(scope_label: str, gaps: Sequence[coverage.Gap]) -> list[coverage.Gap]:
    return [coverage.Gap(g.code, f"NO_PROXY of {scope_label}: {g.message}") for g in gaps]
