"""What every planner returns for one object: edits, a report, and what the run must emit.

A plan is pure data: the operations that change the object, why it was
skipped (when it was), the lines ``--report`` shows, and what the objects the
run generates need to know about it (:mod:`proxy_postrender.generated`).
"""

from __future__ import annotations

from proxy_postrender.structs import FrozenStruct, Struct, field
from proxy_postrender.yamltext.ops import Op

Env = tuple[tuple[str, str], ...]


class SecretRef(FrozenStruct):
    """A Secret an object reads from."""

    name: str
    namespace: str | None
    cluster: str | None  # the Cluster API cluster it belongs to (its label)


class Plan(Struct):
    ops: list[Op] = field(default_factory=list)
    skipped: str | None = None

    def summary(self) -> str:
        raise NotImplementedError

    def describe(self) -> list[str]:
        """The report's lines about the object, indented."""
        raise NotImplementedError

    def reads_namespace_objects(self) -> bool:
        """Whether the object now reads the Secret and ConfigMap the run emits per namespace."""
        return False

    def for_nodes(self) -> bool:
        """Whether it is a node bootstrap plan (nodes/kubeadm.py's NodePlan), which the
        watch for other owners reads (nodes/watched.py)."""
        return False

    def node_secret(self) -> tuple[SecretRef, Env] | None:
        """The Secret the object's node bootstrap reads, and what it must hold."""
        return None

    def node_secret_is_fallback(self) -> bool:
        """Whether that Secret is made only when no other object of the run gives the same
        Secret (a shared ClusterClass template's: the defaults, for clusters not in the
        stream)."""
        return False
