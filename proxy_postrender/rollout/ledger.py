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
from proxy_postrender.nodes.kubeadm import ANNOTATION, NodePlan
from proxy_postrender.noproxy.discovery import DISCOVERY_KINDS
from proxy_postrender.objects import (
    LIST_KINDS,
    Path,
    annotations_of,
    group_kind,
    is_mapping,
    walk_objects,
)
from proxy_postrender.plans import Plan
from proxy_postrender.record import Record
from proxy_postrender.rollout.references import (
    REFERRER_KINDS,
    Key,
    Ref,
    infrastructure_of,
    key_of,
    references,
    shown,
)
from proxy_postrender.structs import field
from proxy_postrender.yamltext.errors import LimitError, ParseError
from proxy_postrender.yamltext.ops import Op, SetValue
from proxy_postrender.yamltext.read import MAX_PARSED_BYTES, load_documents, nodes_and_data

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.nodes.kubeadm import NodeSettings
    from proxy_postrender.nodes.rollouttime import AfterPlan
    from proxy_postrender.yamltext.stream import Segment
    from proxy_postrender.yamltext.tree import Node

# the levels whose objects are renamed: what machines are made from, by reference
RENAMED_LEVELS: frozenset[str] = frozenset({dialects.TEMPLATE, dialects.CONFIG})
_NODE_GROUP_END = "cluster.x-k8s.io"  # every bootstrap and referrer group ends so
_RECORD = ANNOTATION


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
TIMED_KINDS: frozenset[str] = frozenset({"MachineDeployment"})  # referrers with a time


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
        # (group, kind, name) -> the keys of ``referrers`` and ``names`` of that name, in
        # any namespace (an object or a reference without one fits any: see ``_fits``)
        self._referred: dict[tuple[str, str, str], list[Key]] = {}
        self._named: dict[tuple[str, str, str], list[Key]] = {}
        # a MachinePool's label -> its infrastructure; the EKS managed node groups of the
        # stream without a launch template (CAPA gives their nodes no bootstrap data)
        self._pool_infra: dict[str, Key] = {}
        self._no_launch_template: set[Key] = set()
        self.findings: list[tuple[str, str, DocumentContext | None]] = []
        self.recorded_times = False  # a referrer holds a rollout time the tool wrote
        # the plans this pass made, by (document index, document of its segment, path):
        # the main pass takes them instead of planning those objects again
        self.planned: dict[tuple[int, int, Path], Plan] = {}
        self.parsed: dict[int, list[tuple[Node, Any]]] = {}  # and the documents read
        self.untimed: set[str] = set()  # referrers that keep a rollout time of their own

    @property
    def moves(self) -> bool:
        """Whether the main pass must read the referrers (a reference moves, or a rollout
        time is written or taken out)."""
        return bool(self.names) or self.after is not None or self.recorded_times

    def add_references(self, obj: Mapping[str, Any]) -> None:
        own = key_of(obj, self.namespace)
        label = shown(own) if own is not None else str(obj.get("kind"))
        kind = str(obj.get("kind"))
        if kind == _MANAGED_POOL and own is not None and not _launch_template(obj):
            self._no_launch_template.add(own)
        infra = infrastructure_of(obj, self.namespace) if kind == "MachinePool" else None
        if infra is not None:
            self._pool_infra[label] = infra
        for ref in references(obj, self.namespace):
            if ref.key not in self.referrers:
                self._referred.setdefault(_unspaced(ref.key), []).append(ref.key)
            role = _role(obj, ref.role)
            self.referrers.setdefault(ref.key, []).append((label, str(obj.get("kind")), role))
        if kind not in TIMED_KINDS:
            return
        if ROLLOUT_ANNOTATION in annotations_of(obj):
            self.recorded_times = True
        if self.after is not None and not _takes_time(obj, self.after):
            self.untimed.add(label)  # the manifest's own time (or a null) is kept

    def intent(
        self, obj: Mapping[str, Any], row: dialects.BootstrapKind
    ) -> tuple[bool, str | None]:
        """Whether the rollout step decides the object's name, and the name its record
        keeps as the one before the rename (the planner's record writes it)."""
        if self.removing or row.level not in RENAMED_LEVELS:
            return False, None
        key = key_of(obj, self.namespace)
        if key is None or not self.referrers_of(key) or not (self.rename or row.immutable):
            return False, None
        before = Record.read(obj, _RECORD).renamed_from
        return True, before or key[3]

    def take_parsed(self, index: int) -> list[tuple[Node, Any]] | None:
        """The documents of a segment this pass read with their nodes (once)."""
        return self.parsed.pop(index, None)

    def take_plan(self, index: int, number: int, base: Path) -> Plan | None:
        """The plan this pass made for an object (once: the main pass changes it)."""
        return self.planned.pop((index, number, base), None)

    def referrers_of(self, key: Key) -> list[tuple[str, str, str]]:
        """Who in the stream refers to the object ``key``."""
        found: list[tuple[str, str, str]] = []
        for ref in self._referred.get(_unspaced(key), []):
            if _fits(ref[2], key[2]):
                found += [self._refined(referrer) for referrer in self.referrers[ref]]
        return found

    def _refined(self, referrer: tuple[str, str, str]) -> tuple[str, str, str]:
        """A MachinePool of an EKS managed node group without a launch template."""
        label, kind, _ = referrer
        infra = self._pool_infra.get(label)
        if infra is not None and infra in self._no_launch_template:
            return label, kind, "managed-pool"
        return referrer

    def rename_to(self, key: Key, new: str) -> None:
        self.names[key] = new
        self._named.setdefault(_unspaced(key), []).append(key)

    def new_name(self, ref: Key) -> str | None:
        """The name the object a reference names gets (None: it keeps its name); an
        InputError when a reference without a namespace fits objects renamed apart."""
        if ref in self.names:
            return self.names[ref]
        fitting = {
            self.names[k] for k in self._named.get(_unspaced(ref), []) if _fits(ref[2], k[2])
        }
        if len(fitting) > 1:
            raise InputError(
                f"the reference to {shown(ref)} has no namespace, and objects of that name in "
                "several namespaces of the stream are renamed apart "
                f"({', '.join(sorted(fitting))}): give the objects namespaces, or pass "
                "--namespace"
            )
        return fitting.pop() if fitting else None

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
            ops.append(SetValue((*base, "metadata", "name"), self.names[key], like=True))
        moved, refs = [], references(obj, self.namespace)
        for ref in refs:
            new = self.new_name(ref.key)
            if new is not None:
                ops.append(SetValue((*base, *ref.name_path), new, like=True))
                moved.append(f"{shown(ref.key)} -> {new}")
        timed = self._time(obj, base, refs) if plan is None else None
        if timed is not None:
            ops += timed.ops
        if plan is None and ops:
            plan = MovedPlan(moved=moved, lines=[timed.line] if timed and timed.line else [])
        elif isinstance(plan, NodePlan):  # a ClusterClass: its planner's plan says it
            plan.notes += [f"reference moved: {m}" for m in moved]
        if plan is not None:
            plan.ops += ops
            if key is not None and not self.removing:
                from proxy_postrender.rollout import effects  # lazy: only changed objects

                seen = effects.Seen(
                    self.referrers_of(key),
                    self.names.get(key),
                    self.after,
                    frozenset(self.untimed),
                )
                self.findings += effects.of(obj, key, plan, seen, context)
        return plan

    def _time(self, obj: Mapping[str, Any], base: Path, refs: list[Ref]) -> AfterPlan | None:
        """The rollout time of a MachineDeployment whose machines a node template of the
        dialect table bootstraps, with its own record."""
        if str(obj.get("kind")) not in TIMED_KINDS or not (self.after or self.recorded_times):
            return None  # (nor is its record read: a referrer's annotations are its own)
        from proxy_postrender.nodes import rollouttime as after  # lazy: MachineDeployments

        record = Record.read(obj, ROLLOUT_ANNOTATION)
        ours = any(dialects.of_kind(ref.key[0], ref.key[1]) for ref in refs)
        made = after.plan(obj, base, self.after if ours else None, after.recorded(record.entries))
        entries = [made.entry] if made.entry is not None else []
        return after.AfterPlan([*made.ops, *record.ops(obj, base, entries)], made.entry, made.line)


def _takes_time(obj: Mapping[str, Any], time: str) -> bool:
    """Whether a MachineDeployment gets the run's rollout time (one it sets itself, or
    a null, is kept)."""
    from proxy_postrender.nodes import rollouttime as after  # lazy: MachineDeployments

    try:
        record = Record.read(obj, ROLLOUT_ANNOTATION)
    except InputError:
        return True  # the main pass says why, in its place
    return after.plan(obj, (), time, after.recorded(record.entries)).entry is not None


_MANAGED_POOL = "AWSManagedMachinePool"  # CAPA's EKS managed node group


def _launch_template(obj: Mapping[str, Any]) -> bool:
    spec = obj.get("spec")
    return is_mapping(spec) and spec.get("awsLaunchTemplate") is not None


def _unspaced(key: Key) -> tuple[str, str, str]:
    return key[0], key[1], key[3]


def _fits(one: str, other: str) -> bool:
    """Whether two namespaces may be one: the same, or either unknown (an object written
    without one, and no --namespace, lands in whichever it is applied to), the rule of
    the Cluster discovery (noproxy/discovery.py)."""
    return one == other or not one or not other


def _role(obj: Mapping[str, Any], role: str) -> str:
    """A referrer's role, refined: a MachineDeployment that replaces a machine only when
    it is deleted (``OnDelete``, v1beta1 spec.strategy, v1beta2 spec.rollout.strategy),
    a MachinePool of an EKS managed node group without a launch template."""
    spec = obj.get("spec")
    spec = spec if is_mapping(spec) else {}
    kind = obj.get("kind")
    if kind == "MachineDeployment":
        rollout = spec.get("rollout")
        strategy = (rollout if is_mapping(rollout) else {}).get("strategy", spec.get("strategy"))
        if is_mapping(strategy) and strategy.get("type") == "OnDelete":
            return "ondelete"
    return role


def scan(
    segments: Iterable[Segment],
    ledger: Ledger,
    plan: Callable[[Mapping[str, Any], Path, DocumentContext], Plan | None],
    read: list[Mapping[str, Any]] | None = None,
) -> Ledger:
    """``ledger`` filled from a stream: its references, and the new names of the templates
    they name (``plan``: the main pass's planning of one object; ``read``: the objects
    the Cluster discovery read already, of the kinds it reads, not read again)."""
    for obj in read or []:
        ledger.add_references(obj)
    # the kinds to read here: those the discovery does not read (all, without it)
    wanted = _READ_KINDS if read is None else _READ_KINDS - DISCOVERY_KINDS
    # the kinds that may be renamed (a control plane keeps its name)
    node_kinds = {
        row.kind for d in dialects.DIALECTS for row in d.kinds if row.level in RENAMED_LEVELS
    }
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
        # a referrer (a node object refers to none); a kind that shows only when parsed, and
        # a List, are read by the discovery when it runs
        unseen = kind is None or kind in LIST_KINDS
        if kind in wanted or (unseen and read is None):
            for obj in _objects(segment):
                ledger.add_references(obj)
        # planned below: a node kind, or one that may be (its name is in the text)
        if kind in node_kinds or (unseen and any(k in segment.text for k in node_kinds)):
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
    try:
        docs = nodes_and_data(segment.text)
    except (ParseError, LimitError):
        return seen  # the main pass says why, when it is a target
    for number, (_, doc) in enumerate(docs):
        for base, obj in walk_objects(doc):
            found = dialects.of_kind(*group_kind(obj))
            key = key_of(obj, ledger.namespace)
            if found is None or key is None or found[1].level not in RENAMED_LEVELS:
                continue
            seen.add(key)
            try:
                if ledger.removing:
                    before = Record.read(obj, _RECORD).renamed_from
                    if before and before != key[3]:
                        ledger.rename_to(key, before)
                    continue
                renaming, original = ledger.intent(obj, found[1])
                if not renaming or original is None:
                    continue
                context = DocumentContext(index, segment.line, key[1], key[3], key[2] or None)
                made = plan(obj, base, context)
            except InputError:
                continue  # the main pass meets it in its place, after what comes before
            if made is not None:
                ledger.planned[(index, number, base)] = made
                ledger.parsed[index] = docs  # the main pass splices these
            owned = made.owned if isinstance(made, NodePlan) else []
            what = f"{key[1]}"
            new = _digested(original, owned, what) if owned else original
            if new != key[3]:
                ledger.rename_to(key, new)
    return seen


_READ_KINDS: frozenset[str] = REFERRER_KINDS | {_MANAGED_POOL}


def _digested(name: str, owned: list[Any], what: str) -> str:
    from proxy_postrender.nodes import digest  # lazy: only renamed templates

    return digest.with_digest(name, owned, what)


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
