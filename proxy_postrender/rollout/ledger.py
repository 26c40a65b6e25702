"""The rollout pass: the references of the stream, and the name each template gets.

:func:`scan` reads the stream once before the main pass (the engine reads it twice
when nodes are configured): it finds every reference the table of
:mod:`~proxy_postrender.rollout.references` names, and plans the bootstrap templates
(and MachinePool configs) that something of the stream refers to, to learn the
digest of the content the tool owns in them. The :class:`Ledger` it gives then
decides, in the main pass, an object's name (:meth:`Ledger.intent`, which the
planner's record keeps) and moves every reference with it (:meth:`Ledger.follow`),
wherever in the stream the referrer comes, before its template or after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from proxy_postrender import TYPE_CHECKING, dialects
from proxy_postrender.errors import DocumentContext, InputError
from proxy_postrender.nodes import digest
from proxy_postrender.nodes import rollouttime as after
from proxy_postrender.nodes.kubeadm import ANNOTATION
from proxy_postrender.objects import LIST_KINDS, Path, annotations_of, dig, walk_objects
from proxy_postrender.plans import Plan
from proxy_postrender.record import Record
from proxy_postrender.rollout import effects
from proxy_postrender.rollout.references import (
    REFERRER_KINDS,
    Key,
    Ref,
    key_of,
    references,
    shown,
)
from proxy_postrender.structs import field
from proxy_postrender.yamltext.ops import Op, SetValue
from proxy_postrender.yamltext.read import MAX_PARSED_BYTES, load_documents

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.nodes.kubeadm import NodeSettings
    from proxy_postrender.yamltext.stream import Segment

# the levels whose objects are renamed: what machines are made from, by reference
RENAMED_LEVELS: frozenset[str] = frozenset({dialects.TEMPLATE, dialects.CONFIG})
_NODE_GROUP_END = "cluster.x-k8s.io"  # every bootstrap and referrer group ends so
_RECORD = ANNOTATION
# what the pass reads besides the node kinds: the referrers, and a List of objects
_SCANNED_KINDS: frozenset[str] = REFERRER_KINDS | LIST_KINDS


class MovedPlan(Plan):
    """The plan of a referrer the tool changes only to follow renamed templates (and to
    carry the rollout time)."""

    moved: list[str] = field(default_factory=list)  # "FROM -> TO" of each reference
    lines: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return "references"

    def describe(self) -> list[str]:
        return [f"    reference moved: {m}" for m in self.moved] + [f"    {x}" for x in self.lines]


# the record of a MachineDeployment's rollout time (it has no other record of the tool)
ROLLOUT_ANNOTATION = "proxy-postrender.io/rollout"


class Ledger:
    """What the rollout pass found: who refers to what, and the names that change."""

    def __init__(self, nodes: NodeSettings | None, removing: bool, namespace: str) -> None:
        """``nodes``: the run's node settings; ``namespace``: that of the objects without
        one (--namespace)."""
        self.removing = removing
        self.rename = nodes is not None and nodes.rollout == "rename"
        self.after = nodes.rollout_after if nodes is not None and not removing else None
        self.namespace = namespace
        # the referenced object -> its referrers: (shown, kind, role)
        self.referrers: dict[Key, list[tuple[str, str, str]]] = {}
        self.names: dict[Key, str] = {}  # the objects whose name changes -> the new one
        self.findings: list[tuple[str, str, DocumentContext | None]] = []
        self.recorded_times = False  # a referrer holds a rollout time the tool wrote
        self.untimed: set[str] = set()  # referrers where the run's time is not written
        self.on_delete: set[str] = set()  # MachineDeployments of strategy OnDelete

    @property
    def moves(self) -> bool:
        """Whether the main pass must read the referrers (a reference moves, or a rollout
        time is written or taken out)."""
        return bool(self.names) or self.after is not None or self.recorded_times

    def add_references(self, obj: Mapping[str, Any]) -> None:
        own = key_of(obj, self.namespace)
        label = shown(own) if own is not None else str(obj.get("kind"))
        for ref in references(obj, self.namespace):
            self.referrers.setdefault(ref.key, []).append((label, str(obj.get("kind")), ref.role))
        if str(obj.get("kind")) not in after.KINDS:
            return
        if obj.get("kind") == "MachineDeployment" and _on_delete(obj):
            self.on_delete.add(label)
        if ROLLOUT_ANNOTATION in annotations_of(obj):
            self.recorded_times = True
        if self.after is not None:
            try:
                record = Record.read(obj, ROLLOUT_ANNOTATION)
            except InputError:
                return  # the main pass says why, in its place
            if after.plan(obj, (), self.after, after.recorded(record.entries)).entry is None:
                self.untimed.add(label)  # the manifest's own time (or null) is kept

    def intent(
        self, obj: Mapping[str, Any], row: dialects.BootstrapKind
    ) -> tuple[bool, str | None]:
        """Whether the rollout step decides the object's name, and the name its record
        keeps as the one before the rename (the planner's record writes it)."""
        if self.removing or row.level not in RENAMED_LEVELS:
            return False, None
        key = key_of(obj, self.namespace)
        if key is None or key not in self.referrers or not (self.rename or row.immutable):
            return False, None
        before = Record.read(obj, _RECORD).renamed_from
        return True, before or key[3]

    def follow(
        self,
        obj: Mapping[str, Any],
        base: Path,
        plan: Plan | None,
        context: DocumentContext | None,
    ) -> Plan | None:
        """``plan`` with the object renamed and its references moved as the ledger says,
        and what its change makes roll said (a plan of its own for a referrer)."""
        ops: list[Op] = []
        key = key_of(obj, self.namespace)
        if key is not None and key in self.names:
            ops.append(SetValue((*base, "metadata", "name"), self.names[key]))
        moved, refs = [], references(obj, self.namespace)
        for ref in refs:
            new = self.names.get(ref.key)
            if new is not None:
                ops.append(SetValue((*base, *ref.name_path), new))
                moved.append(f"{shown(ref.key)} -> {new}")
        timed = self._time(obj, base, refs) if plan is None else None
        if timed is not None:
            ops += timed.ops
        if plan is None and ops:
            plan = MovedPlan(moved=moved, lines=[timed.line] if timed and timed.line else [])
        if plan is not None:
            plan.ops += ops
            if key is not None and not self.removing:
                seen = effects.Seen(
                    self.referrers.get(key, []),
                    self.names.get(key),
                    self.after,
                    frozenset(self.untimed),
                    frozenset(self.on_delete),
                )
                self.findings += effects.of(obj, key, plan, seen, context)
        return plan

    def _time(self, obj: Mapping[str, Any], base: Path, refs: list[Ref]) -> after.AfterPlan | None:
        """The rollout time of a MachineDeployment whose machines a node template of the
        dialect table bootstraps, with its own record."""
        if str(obj.get("kind")) not in after.KINDS or not (self.after or self.recorded_times):
            return None
        record = Record.read(obj, ROLLOUT_ANNOTATION)
        ours = any(dialects.of_kind(ref.key[0], ref.key[1]) for ref in refs)
        made = after.plan(obj, base, self.after if ours else None, after.recorded(record.entries))
        entries = [made.entry] if made.entry is not None else []
        return after.AfterPlan([*made.ops, *record.ops(obj, base, entries)], made.entry, made.line)


def _on_delete(obj: Mapping[str, Any]) -> bool:
    """Whether a MachineDeployment rolls with strategy OnDelete: it replaces a machine
    once that is deleted (spec.strategy.type in v1beta1, spec.rollout.strategy.type in
    v1beta2; cluster-api@ae7ff047 core/reconcilers/machinedeployment/
    machinedeployment_rollout_ondelete.go)."""
    return "OnDelete" in (
        dig(obj, "spec", "strategy", "type"),
        dig(obj, "spec", "rollout", "strategy", "type"),
    )


def scan(
    segments: Iterable[Segment],
    ledger: Ledger,
    plan: Callable[[Mapping[str, Any], Path, DocumentContext], Plan | None],
) -> Ledger:
    """``ledger`` filled from a stream: its references, and the new names of the templates
    they name (``plan``: the main pass's planning of one object)."""
    node_kinds = {row.kind for d in dialects.DIALECTS for row in d.kinds}
    held: list[tuple[Segment, int]] = []
    index = 0
    for segment in segments:
        content = segment.has_content()
        index += int(content or segment.text.startswith("---"))
        if not content or _NODE_GROUP_END not in segment.text:
            continue
        if len(segment.text) > MAX_PARSED_BYTES:
            continue  # refused by the main pass when it is a target
        kind = segment.sniff_kind()
        if kind is not None and kind not in _SCANNED_KINDS and kind not in node_kinds:
            continue
        objects = _objects(segment)
        for obj in objects:
            ledger.add_references(obj)
        # planned below: only what holds a node object (a document is parsed once more)
        if any(str(obj.get("kind")) in node_kinds for obj in objects):
            held.append((segment, index))
    seen: set[Key] = set()
    for segment, at in held:
        seen |= _name_templates(ledger, segment, at, plan)
    _check_unique(ledger, seen)
    return ledger


def _objects(segment: Segment) -> list[Mapping[str, Any]]:
    # (an unreadable document is left out: the main pass says why when it is a target)
    return [obj for doc in load_documents(segment.text) or [] for _, obj in walk_objects(doc)]


def _name_templates(
    ledger: Ledger,
    segment: Segment,
    index: int,
    plan: Callable[[Mapping[str, Any], Path, DocumentContext], Plan | None],
) -> set[Key]:
    """The names of the node objects of ``segment`` that change; the keys of them all."""
    from proxy_postrender.nodes.kubeadm import NodePlan  # lazy: start-up

    seen: set[Key] = set()
    for doc in load_documents(segment.text) or []:
        for base, obj in walk_objects(doc):
            found = dialects.of_kind(_group(obj), str(obj.get("kind")))
            key = key_of(obj, ledger.namespace)
            if found is None or key is None or found[1].level not in RENAMED_LEVELS:
                continue
            seen.add(key)
            try:
                before = Record.read(obj, _RECORD).renamed_from
                if ledger.removing:
                    if before and before != key[3]:
                        ledger.names[key] = before
                    continue
                renaming, original = ledger.intent(obj, found[1])
                if not renaming or original is None:
                    continue
                context = DocumentContext(index, segment.line, key[1], key[3], key[2] or None)
                made = plan(obj, base, context)
            except InputError:
                continue  # the main pass meets it in its place, after what comes before
            owned = made.owned if isinstance(made, NodePlan) else []
            what = f"{key[1]}"
            new = digest.with_digest(original, owned, what) if owned else original
            if new != key[3]:
                ledger.names[key] = new
    return seen


def _group(obj: Mapping[str, Any]) -> str:
    return str(obj.get("apiVersion") or "").rpartition("/")[0]


def _check_unique(ledger: Ledger, keys: set[Key]) -> None:
    """Two objects of one kind may not end with one name (``keys``: every node object of
    the stream that may be renamed)."""
    final: dict[tuple[str, str, str], Key] = {}
    for key in sorted(keys):
        new = ledger.names.get(key, key[3])
        other = final.setdefault((key[1], key[2], new), key)
        if other != key:
            raise InputError(
                f"{shown(key)} and {shown(other)} would both be named {new}: give them "
                "different names"
            )
