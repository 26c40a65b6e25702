"""Per-cluster entries of a profile (``spec.clusters[]``): which entry a cluster gets.

An entry matches a Cluster API ``Cluster`` by ``[NAMESPACE/]NAME`` and labels; the
first entry that matches wins, and a cluster no entry matches gets the defaults.
An object that configures the nodes of several clusters (a template two
MachineDeployments of different clusters share) gets one entry only when they all
choose the same one: anything else is refused, never guessed. Pure data.
"""

from __future__ import annotations

from collections.abc import Sequence

from proxy_postrender.errors import InputError
from proxy_postrender.noproxy.scope import ClusterNetwork
from proxy_postrender.structs import FrozenStruct

DEFAULTS = -1  # the entry index of the profile's defaults
UNMATCHED_CODE = "fleet/unmatched-entry"
SHADOWED_CODE = "fleet/shadowed-entry"
UNKNOWN_CODE = "fleet/unknown-cluster"
CODES: tuple[tuple[str, bool, str], ...] = (
    (
        UNMATCHED_CODE,
        True,
        "a spec.clusters entry matches no Cluster of a stream that holds Clusters",
    ),
    (
        SHADOWED_CODE,
        True,
        "a Cluster matches two spec.clusters entries that differ; the first one wins",
    ),
    (UNKNOWN_CODE, True, "--cluster names a Cluster no spec.clusters entry names"),
)


class ClusterMatch(FrozenStruct):
    """``spec.clusters[].match``: names (``[NS/]NAME``) and labels, each all-of when given."""

    names: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()

    def matches(self, net: ClusterNetwork) -> bool:
        """Whether the Cluster of ``net`` is one this entry is for (never for ``net`` that
        is no Cluster's)."""
        if net.cluster is None:
            return False
        namespace, name = net.cluster
        if self.names and not any(_named(given, namespace, name) for given in self.names):
            return False
        labels = dict(net.labels)
        return all(labels.get(key) == value for key, value in self.labels)

    def names_cluster(self, wanted: str) -> bool:
        """Whether ``wanted`` (``--cluster [NS/]NAME``) is one of the names."""
        namespace, _, name = wanted.rpartition("/")
        return any(_named(given, namespace, name) for given in self.names) or (
            not namespace and name in (g.rpartition("/")[2] for g in self.names)
        )


def named_by(matches: Sequence[ClusterMatch], cluster: str) -> list[int]:
    """The entries ``--cluster [NS/]NAME`` may mean, the one it gets first: the first
    entry that names it; for a NAME without a namespace, also each later entry that
    names NAME in another namespace, up to one that names it in every namespace (the
    Cluster may be in any of them)."""
    namespace, _, name = cluster.rpartition("/")
    found = []
    for index, match in enumerate(matches):
        if match.names_cluster(cluster):
            found.append(index)
            if namespace or name in match.names:
                break
    return found


def ambiguous(cluster: str, where: Sequence[str], candidates: Sequence[int]) -> str:
    """The message of a ``--cluster`` NAME that entries of different settings name in
    different namespaces (``candidates``: those entries, from :func:`named_by`)."""
    name = cluster.rpartition("/")[2]
    return (
        f"--cluster {cluster}: {' and '.join(where[i] for i in candidates)} name a Cluster "
        f"{name} in different namespaces, with different settings: say which one "
        f"(--cluster NAMESPACE/{name})"
    )


def _named(given: str, namespace: str, name: str) -> bool:
    """Whether ``given`` (``[NS/]NAME``) names the Cluster ``namespace``/``name``."""
    space, _, bare = given.rpartition("/")
    return bare == name and (not space or space == namespace)


def choose(matches: Sequence[ClusterMatch], net: ClusterNetwork) -> int:
    """The index of the first entry that matches the Cluster of ``net`` (DEFAULTS: none,
    or ``net`` is no Cluster's)."""
    return next((i for i, match in enumerate(matches) if match.matches(net)), DEFAULTS)


def choose_one(
    matches: Sequence[ClusterMatch],
    nets: Sequence[ClusterNetwork],
    where: Sequence[str],
    same: Sequence[int] = (),
) -> int:
    """The entry of an object that serves the clusters of ``nets`` (``where``: how each
    entry is named; ``same``: per entry, the first entry with the same settings); an error
    when they choose entries whose settings differ."""
    chosen = {net.label: choose(matches, net) for net in nets}
    found = {same[i] if 0 <= i < len(same) else i for i in chosen.values()}
    if len(found) <= 1:
        return found.pop() if found else DEFAULTS
    said = ", ".join(
        f"{label} gets {'the defaults' if index == DEFAULTS else where[index]}"
        for label, index in chosen.items()
    )
    raise EntriesDiffer(said)


class EntriesDiffer(InputError):
    """One object configures the nodes of clusters whose entries differ."""

    def __init__(self, said: str) -> None:
        super().__init__(
            f"this object configures the nodes of clusters whose per-cluster entries differ "
            f"({said}); give each cluster its own template, or one entry for all of them"
        )
        self.said = said  # "Cluster ns/a gets spec.clusters[0], Cluster ns/b gets ..."


def shadowed(
    matches: Sequence[ClusterMatch],
    differs: Sequence[Sequence[bool]],
    where: Sequence[str],
    nets: Sequence[ClusterNetwork],
) -> list[str]:
    """A warning per Cluster that a later entry also matches with other values
    (``differs[i][j]``: entries i and j give different values)."""
    found = []
    for net in nets:
        hits = [i for i, m in enumerate(matches) if m.matches(net)]
        later = [j for j in hits[1:] if differs[hits[0]][j]] if hits else []
        if later:
            found.append(
                f"{net.label} matches {where[hits[0]]} and also "
                f"{', '.join(where[j] for j in later)}, whose values differ: the first "
                "entry wins; narrow the matches or merge the entries"
            )
    return found


def unmatched(
    matches: Sequence[ClusterMatch], where: Sequence[str], nets: Sequence[ClusterNetwork]
) -> list[str]:
    """A warning per entry that matches no Cluster of ``nets`` (said only when the stream
    holds Clusters: a workload render holds none, and every entry would be said)."""
    clusters = [net for net in nets if net.cluster is not None]
    if not clusters:
        return []
    found = []
    for index, match in enumerate(matches):
        if not any(match.matches(net) for net in clusters):
            found.append(
                f"{where[index]} matches none of the {len(clusters)} Clusters of the stream "
                f"({_why_unmatched(match, clusters)})"
            )
    return found


def _why_unmatched(match: ClusterMatch, clusters: Sequence[ClusterNetwork]) -> str:
    """A hint: a Cluster the entry names by NS/NAME that has no namespace in the stream
    (a chart's usual render) needs --namespace; anything else may be a typo."""
    bare = {net.cluster[1] for net in clusters if net.cluster is not None and not net.cluster[0]}
    for given in match.names:
        namespace, _, name = given.rpartition("/")
        if namespace and name in bare:
            return (
                f"Cluster {name} has no namespace in the stream: pass --namespace {namespace} "
                "(the namespace it is applied to)"
            )
    return "a typo in its names or labels?"
