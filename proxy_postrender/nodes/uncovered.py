"""Node objects of kinds the tool does not configure: said, never skipped in silence.

The kinds the tool configures nodes for are those of
:data:`proxy_postrender.targets.BUILT_IN` whose planner is ``kubeadm``; what a
cluster's nodes bootstrap from is read by
:mod:`proxy_postrender.noproxy.bootstraps`. A reference to any other bootstrap
or control-plane kind (Canonical Kubernetes' CK8s, ...) is a
``nodes/unsupported-bootstrap`` warning (an error under ``--strict``) naming
the kind and the referrer: those nodes get no proxy settings from the tool. A
control plane that runs as pods (Kamaji, k0smotron's) has no nodes: a note says
so, and its workers are checked by their own kind. A Cluster whose node objects
are all of kinds the tool does not cover is *unconfigured*: ``noproxy`` and
``--report`` say so instead of showing a node NO_PROXY as if it were written.
Pure data in, data out.
"""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.targets import BUILT_IN, KUBEADM

if TYPE_CHECKING:
    from proxy_postrender.errors import DocumentContext
    from proxy_postrender.noproxy.bootstraps import Bootstraps, Ref

UNSUPPORTED_CODE = "nodes/unsupported-bootstrap"
CODES: tuple[tuple[str, bool, str], ...] = (
    (
        UNSUPPORTED_CODE,
        True,
        "a bootstrap or control-plane kind the tool does not configure: those nodes get "
        "no proxy settings from it",
    ),
)


def covered(group: str | None, kind: str) -> bool:
    """Whether a kind (of ``group``; None: a reference that names no group) is one the
    tool configures nodes for: an entry of the built-in target table for ``kubeadm``."""
    return any(
        target.kind == kind and (group is None or target.group == group)
        for target in BUILT_IN.of_planner(KUBEADM)
    )


def _covered(ref: Ref) -> bool:
    return covered(ref.group, ref.kind)


def findings(found: Bootstraps) -> list[tuple[str, str, DocumentContext | None]]:
    """A warning (code, message, the referrer's document) per reference to a kind the
    tool does not configure, in stream order, each once."""
    result: list[tuple[str, str, DocumentContext | None]] = []
    for ref in dict.fromkeys(found.order):
        if ref.pods or _covered(ref):
            continue
        clusters = found.clusters_of(ref) or [
            "its clusters" if ref.by.startswith("ClusterClass") else "its cluster"
        ]
        group = f" ({ref.group})" if ref.group else ""
        message = (
            f"{ref.by}: {ref.what} {ref.kind} {ref.name}{group}, a kind the tool does not "
            f"configure: the nodes of {', '.join(clusters)} get no proxy settings from the "
            "tool; give them their proxy by the provider's own means"
        )
        result.append((UNSUPPORTED_CODE, message, ref.context))
    return result


def notes(found: Bootstraps) -> list[str]:
    """What is said of each control plane without nodes (pods, or a cloud's)."""
    return [
        f"{ref.by}: its control plane {ref.kind} {ref.name} "
        + ("is run by the cloud" if ref.managed else "runs as pods in the management cluster")
        + ": no nodes to configure (its workers are checked by their own kind)"
        for ref in dict.fromkeys(found.order)
        if ref.pods
    ]


def unconfigured(found: Bootstraps) -> dict[str, str]:
    """The Clusters (by label, ``Cluster NS/NAME``) none of whose nodes the tool
    configures, each with why: every object they bootstrap from is of a kind it does not
    cover (a Cluster with none known, or with one covered, is not among them)."""
    result: dict[str, str] = {}
    for key in found.clusters:
        refs = [ref for ref in found.refs_of(key) if not ref.pods]
        if refs and not any(_covered(ref) for ref in refs):
            kinds = ", ".join(dict.fromkeys(ref.kind for ref in refs))
            name = f"Cluster {key[0] + '/' if key[0] else ''}{key[1]}"
            result[name] = f"the tool does not configure its nodes (they bootstrap from {kinds})"
    return result


def provider_notes(found: Bootstraps) -> dict[str, tuple[str, ...]]:
    """Per Cluster (by label, ``Cluster NS/NAME``), what the rows of the providers its
    nodes bootstrap from say about NO_PROXY (RKE2 and K3s add the cluster's ranges to
    their own; k0s adds none), for ``noproxy --explain``."""
    from proxy_postrender import dialects  # lazy: only noproxy with a stream

    result: dict[str, tuple[str, ...]] = {}
    for key in found.clusters:
        said: list[str] = []
        for ref in found.refs_of(key):
            rows = [row for (group, kind), row in dialects.BY_KIND.items() if kind == ref.kind]
            rows = [row for row in rows if ref.group is None or row[1].group == ref.group]
            said += [n for dialect, _ in rows for n in dialect.notes if "NO_PROXY" in n]
        if said:
            name = f"Cluster {key[0] + '/' if key[0] else ''}{key[1]}"
            result[name] = tuple(dict.fromkeys(said))
    return result
