"""Which variables an object gets: the workloads one set, each cluster's nodes their own.

Workloads run in the cluster the stream is applied to and get the profile's
NO_PROXY. Cluster API kubeadm objects configure the nodes of the clusters
they serve (see :mod:`proxy_postrender.noproxy.discovery`), so their NO_PROXY also
holds what those clusters' Cluster objects say.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.noproxy import advice, scope, syntax
from proxy_postrender.noproxy.discovery import ClusterIndex
from proxy_postrender.noproxy.scope import ClusterNetwork
from proxy_postrender.request import Request
from proxy_postrender.structs import Struct

Env = tuple[tuple[str, str], ...]
_NO_PROXY = ("NO_PROXY", "no_proxy")


class NodeEnv(Struct, frozen=True):
    env: Env
    clusters: tuple[str, ...]  # labels of the clusters whose values are in NO_PROXY
    how: str | None  # how the object was matched to them, or why it was not


def with_no_proxy(env: Env, value: str) -> Env:
    """``env`` with NO_PROXY and no_proxy set to ``value`` (added after the proxies)."""
    if not value:
        return tuple((n, v) for n, v in env if n not in _NO_PROXY)
    if any(name in _NO_PROXY for name, _ in env):
        return tuple((n, value if n in _NO_PROXY else v) for n, v in env)
    upper = [(n, v) for n, v in env if n.isupper()] + [("NO_PROXY", value)]
    return tuple(upper + [(n.lower(), v) for n, v in upper])


class Environments:
    def __init__(self, request: Request, index: ClusterIndex | None) -> None:
        self.request = request
        self.index = index
        self._cache: dict[tuple[ClusterNetwork, ...], Env] = {}
        # warnings about each NO_PROXY written: "workloads" or the clusters' labels
        self.warnings: dict[str, list[str]] = {}
        if request.no_proxy is not None and request.env:
            entries = scope.build(request.no_proxy)
            self.warnings["workloads"] = advice.for_list(entries, request.no_proxy)

    def for_node(self, obj: Mapping[str, Any]) -> NodeEnv:
        config = self.request.no_proxy
        if config is None or self.index is None or not self.request.env:
            return NodeEnv(self.request.env, (), None)
        networks, how = self.index.networks_for(obj)
        key = tuple(dict.fromkeys(networks))
        if key not in self._cache:
            self._cache[key] = with_no_proxy(self.request.env, self.value(key))
        return NodeEnv(self._cache[key], tuple(net.label for net in key), how)

    def value(self, networks: Sequence[ClusterNetwork]) -> str:
        config = self.request.no_proxy
        assert config is not None
        entries = scope.build(config, networks)
        if networks:
            label = "nodes of " + ", ".join(net.label for net in networks)
            self.warnings[label] = advice.for_list(entries, config, networks)
        return syntax.join(item.entry for item in entries)
