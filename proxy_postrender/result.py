"""What a run found and did, document by document, for reports and the end of the stream."""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender.errors import DocumentContext, InputError
from proxy_postrender.nodes import uncovered, watched
from proxy_postrender.noproxy import coverage, fleet, services, size
from proxy_postrender.plans import Env, Plan, SecretRef
from proxy_postrender.rollout import codes as rollout_codes
from proxy_postrender.structs import FrozenStruct, Struct, field


class Code(FrozenStruct):
    """A kind of warning: its name, and whether ``--strict`` (``spec.strict``) makes a
    warning of it an error."""

    name: str
    strict: bool
    summary: str


# Every warning code, in one table: a check that warns adds its codes here.
CODES: Mapping[str, Code] = {
    name: Code(name, strict, summary)
    for name, strict, summary in (
        *watched.CODES,
        *coverage.CODES,
        *services.CODES,
        *size.CODES,
        *fleet.CODES,
        *uncovered.CODES,
        *rollout_codes.CODES,
    )
}


class Finding(FrozenStruct):
    """A warning with a code (a key of :data:`CODES`) and the object it is about."""

    code: str
    message: str
    context: DocumentContext | None = None

    @property
    def strict(self) -> bool:
        """Whether ``--strict`` turns it into an error."""
        return CODES[self.code].strict

    def __str__(self) -> str:
        where = f"{self.context.describe()}: " if self.context is not None else ""
        return f"{where}{self.message} [{self.code}]"

    def error(self) -> InputError:
        """The error ``--strict`` makes of it (one line, naming the document)."""
        return InputError(f"{self.message} [{self.code}; --strict]", self.context)


class Earlier(FrozenStruct):
    """An object an earlier run generated, met in the stream."""

    made_by: str
    kind: str
    namespace: str | None
    name: str
    # without a final newline: it ends the stream, and the newline before it is the tool's
    unterminated: bool = False
    data: tuple[tuple[str, str], ...] = ()  # a Secret's stringData, as it was

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


class Hook(FrozenStruct):
    """A Helm hook: the phases of its ``helm.sh/hook`` annotation and its weight."""

    phases: tuple[str, ...]
    weight: int = 0

    def joined(self, other: Hook) -> Hook:
        """A hook that runs before both: every phase of either, the lower weight."""
        phases = (*self.phases, *(p for p in other.phases if p not in self.phases))
        return Hook(phases, min(self.weight, other.weight))


class ObjectReport(Struct):
    context: DocumentContext
    plan: Plan
    method: str  # "unchanged" | "splice" | "roundtrip"
    hook: Hook | None = None  # the object is a Helm hook


class Outcome(Struct):
    """What processing one segment gave: its new text and the objects it held."""

    text: str
    reports: list[ObjectReport] = field(default_factory=list)
    passed_through: int = 0  # 1: it was parsed and held no target


class Result(Struct):
    text: str = ""  # process() only; run() writes to its Output
    documents: int = 0
    passed_through: int = 0
    objects: list[ObjectReport] = field(default_factory=list)  # if keep_objects
    # warnings about the NO_PROXY values written, per scope
    no_proxy_warnings: dict[str, list[str]] = field(default_factory=dict)
    no_proxy_notes: dict[str, list[str]] = field(default_factory=dict)  # advice.unportable
    # False: only what the end of the stream needs is kept (bounded memory)
    keep_objects: bool = True
    # the namespaces of the workloads that now read the per-namespace objects, in order
    # (None: the default namespace)
    workload_namespaces: dict[str | None, None] = field(default_factory=dict)
    # the same for Helm hook workloads, with the phases and lowest weight of those hooks
    hook_namespaces: dict[str | None, Hook] = field(default_factory=dict)
    # the Secrets node bootstrap reads: (the object's report, the Secret, what it holds)
    node_secrets: list[tuple[ObjectReport, SecretRef, Env]] = field(default_factory=list)
    # objects earlier runs generated: dropped (made anew where still needed), kept
    dropped: list[Earlier] = field(default_factory=list)
    kept: list[Earlier] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # about the run as a whole
    notes: list[str] = field(default_factory=list)  # said, not warned (a --report note)
    findings: list[Finding] = field(default_factory=list)  # coded warnings, in stream order

    def strict_error(self) -> InputError | None:
        """The error of the first finding that ``--strict`` makes an error (None: none)."""
        return next((f.error() for f in self.findings if f.strict), None)

    @property
    def changed(self) -> list[ObjectReport]:
        return [o for o in self.objects if o.method != "unchanged"]

    def merge(self, outcome: Outcome) -> None:
        """Count a processed document (in stream order)."""
        self.passed_through += outcome.passed_through
        for report in outcome.reports:
            self.add(report)

    def add(self, report: ObjectReport) -> None:
        if self.keep_objects:
            self.objects.append(report)
        plan = report.plan
        if plan.reads_namespace_objects():
            namespace, hook = report.context.namespace, report.hook
            if hook is None:
                self.workload_namespaces[namespace] = None
            else:
                known = self.hook_namespaces.get(namespace)
                self.hook_namespaces[namespace] = hook if known is None else known.joined(hook)
        secret = plan.node_secret()
        if secret is not None:
            self.node_secrets.append((report, *secret))
