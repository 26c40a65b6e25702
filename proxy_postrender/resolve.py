"""The settings resolver: one place decides what an object gets.

``Resolver.resolve(obj, scope)`` answers with :class:`ProxySettings`: the request
of the profile entry the object gets (the run's for workloads; for the node
objects of a Cluster API cluster, the first ``spec.clusters`` entry that matches
that cluster, else the defaults) and the variables made from it for this object
(the proxy URLs, and a NO_PROXY with its clusters' networks). Planners ask it and
read nothing else of the profile; the redactor and the ``--diff`` mask take every
URL from :meth:`Request.urls`.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.noproxy import fleet
from proxy_postrender.noproxy.environments import EntryEnv, Environments, ObjectEnv
from proxy_postrender.request import Request
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.errors import DocumentContext
    from proxy_postrender.noproxy.clusterindex import ClusterIndex
    from proxy_postrender.noproxy.environments import Env
    from proxy_postrender.noproxy.envsources import EnvSources
    from proxy_postrender.rollout.ledger import Ledger


class ProxySettings(FrozenStruct):
    """What one object gets."""

    request: Request  # the entry's: its planners' settings, CA, credentials, node Secret
    found: ObjectEnv  # the object's variables, and which clusters they were made for

    @property
    def env(self) -> Env:
        return self.found.env

    def value(self, name: str) -> str | None:
        """A variable's value (``HTTP_PROXY``, ``NO_PROXY``, ...), None when not set."""
        return dict(self.found.env).get(name)

    @property
    def node_secret_name(self) -> str | None:
        nodes = self.request.nodes
        return None if nodes is None else nodes.secret_name


def environments(
    request: Request,
    index: ClusterIndex | None,
    workloads: Env | None = None,
    sources: EnvSources | None = None,
) -> Environments:
    """The variables of each scope of a run of ``request`` (``index``: the clusters of the
    stream; ``workloads``: the workloads' variables when a preset changed them;
    ``sources``: the ConfigMaps and Secrets of the stream, for the workloads' envFrom)."""
    defaults = request.entry(fleet.DEFAULTS)
    rules = request.rules()
    # an object that serves the clusters of two entries with the same settings gets them
    requests = [rule.request for rule in rules]
    entries = [
        EntryEnv(rule.where, rule.match, rule.request.env, rule.request.no_proxy, same)
        for rule, same in zip(rules, (requests.index(r.request) for r in rules), strict=True)
    ]
    chosen = None
    if defaults is not request:
        chosen = EntryEnv("the defaults", fleet.ClusterMatch(), defaults.env, defaults.no_proxy)
    envs = Environments(
        request.env, request.no_proxy, index, workloads, entries, chosen, sources=sources
    )
    if index is not None and index.bootstraps is not None:
        from proxy_postrender.nodes import uncovered  # lazy: only streams with clusters

        envs.unconfigured = uncovered.unconfigured(index.bootstraps)
    return envs


class Resolver:
    """The settings of each object of one run."""

    def __init__(self, request: Request, envs: Environments) -> None:
        self.request = request
        self.envs = envs
        # the rollout pass's findings (rollout/ledger.py): which node objects are renamed
        self.ledger: Ledger | None = None

    def resolve(
        self,
        obj: Mapping[str, Any],
        scope: str,
        context: DocumentContext | None = None,
        run: Request | None = None,
    ) -> ProxySettings:
        """What ``obj`` gets in ``scope`` (WORKLOADS or NODES); ``context``: its document;
        ``run``: the run's request as the object's document sees it (a Helm hook's reads
        the hooks' copies of the generated objects), when not the resolver's own."""
        found = self.envs.for_object(obj, scope, context)
        if found.entry is None:
            return ProxySettings(run or self.request, found)
        return ProxySettings(self.request.entry(found.entry), found)

    def resolve_class_neighbours(
        self, obj: Mapping[str, Any], context: DocumentContext | None = None
    ) -> ProxySettings:
        """What the one Secret of the ClusterClass clusters in the namespace of the Cluster
        ``obj`` holds (secret mode): their entry, with all their networks."""
        found = self.envs.for_class_neighbours(obj, context)
        return ProxySettings(self.request.entry(found.entry or fleet.DEFAULTS), found)

    def findings(self) -> list[tuple[str, str]]:
        """The coded warnings about the profile's entries and the stream's Clusters:
        entries that match none of them, Clusters two differing entries match, and what
        the request already found (an unknown ``--cluster``)."""
        found = list(self.request.findings)
        rules = self.request.rules()
        index = self.envs.index
        if not rules or index is None:
            return found
        matches = [rule.match for rule in rules]
        where = [rule.where for rule in rules]
        nets = list(index.clusters.values())
        differs = [[a.request != b.request for b in rules] for a in rules]
        found += [(fleet.SHADOWED_CODE, m) for m in fleet.shadowed(matches, differs, where, nets)]
        found += [(fleet.UNMATCHED_CODE, m) for m in fleet.unmatched(matches, where, nets)]
        return found
