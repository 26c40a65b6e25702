"""The one engine behind every entry point: ``process(text, request)``.

Each document is passed through as raw text unless it holds a target. Target
documents are parsed with positions, planned (pure data), and changed by
splicing text; the result is re-parsed and compared with the expected data,
and only when the splice is refused or does not match does the round-trip
fallback run (and is checked the same way).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender import credentials, targets
from proxy_postrender.errors import DocumentContext, InputError
from proxy_postrender.fields import setters
from proxy_postrender.nodes import clusterclass, kubeadm
from proxy_postrender.noproxy import discovery
from proxy_postrender.noproxy.environments import Environments
from proxy_postrender.pods import workloads
from proxy_postrender.request import Request
from proxy_postrender.structs import Struct, field
from proxy_postrender.yamltext import blockread, ops, splice, spool, stream
from proxy_postrender.yamltext.ops import Op, Path
from proxy_postrender.yamltext.tree import Node

HELM4_FILENAME = "postrenderer.helm.sh/postrender-filename"


class ObjectReport(Struct):
    context: DocumentContext
    plan: workloads.ObjectPlan | kubeadm.NodePlan | setters.FieldPlan
    method: str  # "unchanged" | "splice" | "roundtrip"


class Outcome(Struct):
    """What processing one segment gave: its new text and the objects it held."""

    text: str
    reports: list[ObjectReport] = field(default_factory=list)
    passed_through: int = 0  # 1: it was parsed and held no target


def _touches_namespace(report: ObjectReport) -> bool:
    """Whether the report is of a workload changed in its namespace (one that needs the
    credential Secret and CA ConfigMap there)."""
    plan = report.plan
    return isinstance(plan, workloads.ObjectPlan) and plan.skipped is None and bool(plan.containers)


class Result(Struct):
    text: str = ""  # process() only; run() writes to its Output
    documents: int = 0
    passed_through: int = 0
    objects: list[ObjectReport] = field(default_factory=list)  # if keep_objects
    # warnings about the NO_PROXY values written, per scope
    no_proxy_warnings: dict[str, list[str]] = field(default_factory=dict)
    # False: only what the end of the stream needs is kept (bounded memory)
    keep_objects: bool = True
    # the namespaces of the workloads changed, in order (None: the default namespace)
    workload_namespaces: dict[str | None, None] = field(default_factory=dict)
    node_secrets: list[ObjectReport] = field(default_factory=list)  # plans with a Secret

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
        if _touches_namespace(report):
            self.workload_namespaces[report.context.namespace] = None
        elif isinstance(plan, kubeadm.NodePlan) and plan.secret is not None:
            self.node_secrets.append(report)


def _context(segment: stream.Segment, index: int, obj: Any) -> DocumentContext:
    kind = name = namespace = None
    source = segment.helm_source()
    if isinstance(obj, Mapping):
        kind = str(obj.get("kind")) if obj.get("kind") is not None else None
        metadata = obj.get("metadata")
        if isinstance(metadata, Mapping):
            name = str(metadata.get("name")) if metadata.get("name") is not None else None
            namespace = str(metadata["namespace"]) if metadata.get("namespace") else None
            annotations = metadata.get("annotations")
            if source is None and isinstance(annotations, Mapping):
                filename = annotations.get(HELM4_FILENAME)
                source = str(filename) if filename else None
    return DocumentContext(index, segment.line, kind, name, namespace, source)


def _plan(
    obj: Mapping[str, Any], base: Path, request: Request, envs: Environments
) -> workloads.ObjectPlan | kubeadm.NodePlan | setters.FieldPlan | None:
    """The plan of whichever planner owns the object's kind (None: not a target)."""
    plan = workloads.plan(obj, base, request)
    if plan is not None:
        return plan
    fields_to_set = request.custom.setter_paths(obj)
    if fields_to_set:
        available = setters.values(request.env, request.setter_ca)
        return setters.plan_fields(obj, base, fields_to_set, available, request.on_conflict)
    if request.nodes is None and request.env:
        return None  # node bootstrap is off; removal (no env) still strips earlier injections
    if targets.kubeadm_spec_path(obj) is None and not targets.is_clusterclass(obj):
        return None
    node = envs.for_node(obj)
    for planner in (kubeadm.plan, clusterclass.plan):
        node_plan = planner(
            obj, base, node.env, request.nodes, request.on_conflict, request.credentials
        )
        if node_plan is not None:
            if request.env:
                node_plan.no_proxy_from = node.clusters
                node_plan.matched = node.how
            if node_plan.secret is not None:
                node_plan.secret_env = node.env
            return node_plan
    return None


def load_documents(text: str, *, spliced: bool = False) -> list[Any] | None:
    """The data of every document of a segment (None: it does not parse): the fast
    block reader, else libyaml. ``spliced``: the text is this run's output, which
    repeats blocks of earlier documents (see :func:`blockread.read_data`)."""
    try:
        return [blockread.read_data(text) if spliced else blockread.read(text)[1]]
    except blockread.Declined:
        pass
    from proxy_postrender.yamltext import libyaml

    try:
        return libyaml.load_data(text)
    except libyaml.ParseError:
        return None


def discover_clusters(segments: Iterable[stream.Segment]) -> discovery.ClusterIndex:
    """Index the Cluster API objects of a stream; unparsable documents are left out."""
    objects: list[Mapping[str, Any]] = []
    for segment in segments:
        if discovery.CAPI_GROUP not in segment.text or not segment.has_content():
            continue
        if len(segment.text) > MAX_PARSED_BYTES:
            continue  # no Cluster is that large; a target of that size is refused later
        kind = segment.sniff_kind()
        if (
            kind is not None
            and kind not in targets.LIST_KINDS
            and kind not in discovery.DISCOVERY_KINDS
            and not kind.endswith("Cluster")
        ):
            continue
        docs = load_documents(segment.text)
        if docs is None:
            continue  # reported by the main pass when it is a target
        for doc in docs:
            objects += [obj for _, obj in targets.walk_objects(doc)]
    return discovery.discover(objects)


def _needs_parse(segment: stream.Segment, request: Request) -> bool:
    kind = segment.sniff_kind()
    return kind is None or kind in targets.CANDIDATE_KINDS or kind in request.custom.kinds


def process(text: str, request: Request) -> Result:
    """Transform a whole stream (without BOM); raise InputError on any problem."""
    segments = stream.split(text)
    out = spool.Output()
    result = run(lambda: segments, request, out)
    result.text = out.text()
    return result


def needs_two_passes(request: Request) -> bool:
    """Whether :func:`run` reads the stream twice (the clusters first)."""
    config = request.no_proxy
    return (
        config is not None and config.discover and request.nodes is not None and bool(request.env)
    )


def run(
    segments: Callable[[], Iterable[stream.Segment]],
    request: Request,
    out: spool.Output,
    *,
    keep_objects: bool = True,
) -> Result:
    """Transform the stream that ``segments()`` gives (twice when
    :func:`needs_two_passes`) into ``out``; raise InputError on any problem."""
    result = Result(keep_objects=keep_objects)
    clusters = discover_clusters(segments()) if needs_two_passes(request) else None
    envs = Environments(request, clusters)

    def consume(outcome: Outcome) -> None:
        out.write(outcome.text)
        result.merge(outcome)

    for segment in segments():
        content = segment.has_content()
        # documents as a reader counts them: every "---", and content before the first
        counted = int(content or segment.text.startswith("---"))
        result.documents += counted
        if content and _made_anew(segment, request):
            continue  # emitted by an earlier run: made anew below
        if not content or not _needs_parse(segment, request):
            consume(_pass_through(segment, result.documents, counted, request))
        else:
            consume(process_segment(segment, result.documents, request, envs))
    out.write_all(_secrets(result, request, out))
    out.write_all(
        credentials.secret_documents(result, request, out, partial(_existing, out, kind="Secret"))
    )
    out.write_all(
        credentials.ca_documents(result, request, out, partial(_existing, out, kind="ConfigMap"))
    )
    if request.forbid_plaintext:
        credentials.check_plaintext(out.segments())
    result.no_proxy_warnings = envs.warnings
    return result


def _made_anew(segment: stream.Segment, request: Request) -> bool:
    """Whether the segment is a Secret or ConfigMap an earlier run emitted that this run
    emits again (or, removing, drops)."""
    if kubeadm.GENERATED not in segment.text:
        return False
    made_by = _generated_secret(segment)
    if made_by == "node-bootstrap":
        return request.nodes is not None or not request.env
    return made_by in (credentials.GENERATED_VALUE, credentials.CA_GENERATED_VALUE)


def _pass_through(segment: stream.Segment, index: int, counted: int, request: Request) -> Outcome:
    """A segment without targets, unchanged (after the removal check)."""
    if counted and not request.env:
        _refuse_unknown_target(segment, index)
    return Outcome(segment.text, passed_through=counted)


def _refuse_unknown_target(segment: stream.Segment, index: int) -> None:
    """Removal without a profile cannot find a custom target: say so instead of leaving
    the injection in place."""
    if workloads.ANNOTATION not in segment.text and setters.ANNOTATION not in segment.text:
        return
    for doc in load_documents(segment.text) or []:
        for _, obj in targets.walk_objects(doc):
            found = targets.annotations_of(obj)
            if workloads.ANNOTATION in found or setters.ANNOTATION in found:
                raise InputError(
                    f"{obj.get('kind')} is a target only through a profile's spec.targets: "
                    "pass that profile with --remove",
                    _context(segment, index, obj),
                )


def _generated_secret(segment: stream.Segment) -> str | None:
    """What an earlier run emitted this Secret for (recognised by its annotation), if it did."""
    docs = load_documents(segment.text)
    return generated_by(docs[0]) if docs is not None and len(docs) == 1 else None


def generated_by(doc: Any) -> str | None:
    """What the tool emitted a Secret or ConfigMap for (its generated annotation), if it did."""
    if not isinstance(doc, Mapping) or doc.get("kind") not in ("Secret", "ConfigMap"):
        return None
    value = targets.annotations_of(doc).get(kubeadm.GENERATED)
    return str(value) if value else None


def _existing(out: spool.Output, names: set[str], kind: str) -> set[tuple[str | None, str]]:
    """(namespace, name) of the objects of ``kind`` in the output so far that carry one
    of ``names``."""
    found: set[tuple[str | None, str]] = set()
    for segment in out.segments():
        if segment.sniff_kind() not in (None, kind, "List"):
            continue
        if not any(name in segment.text for name in names):
            continue
        for doc in load_documents(segment.text) or []:
            for _, obj in targets.walk_objects(doc):
                metadata = obj.get("metadata")
                if obj.get("kind") == kind and isinstance(metadata, Mapping):
                    namespace = metadata.get("namespace")
                    found.add((str(namespace) if namespace else None, str(metadata.get("name"))))
    return found


def _secrets(result: Result, request: Request, out: spool.Output) -> list[str]:
    """The Secrets the node bootstrap reads from, as new documents at the end."""
    settings = request.nodes
    if not request.env or settings is None or not settings.create_secret:
        return []
    refs: dict[tuple[str | None, str], kubeadm.SecretRef] = {}
    contents: dict[tuple[str | None, str], tuple[tuple[str, str], ...]] = {}
    for report in result.node_secrets:
        plan = report.plan
        if isinstance(plan, kubeadm.NodePlan) and plan.secret is not None:
            key = (plan.secret.namespace, plan.secret.name)
            refs.setdefault(key, plan.secret)
            if contents.setdefault(key, plan.secret_env) != plan.secret_env:
                namespace, name = key
                raise InputError(
                    f"the Secret {namespace + '/' if namespace else ''}{name} would need two "
                    "contents: objects of clusters with different NO_PROXY values share it; "
                    "label them with cluster.x-k8s.io/cluster-name or drop spec.nodes.secretName",
                    report.context,
                )
    if not refs:
        return []
    clash = _existing(out, {ref.name for ref in refs.values()}, "Secret") & set(refs)
    if clash:
        namespace, name = sorted(clash, key=str)[0]
        raise InputError(
            f"the stream already holds a Secret {namespace + '/' if namespace else ''}{name}, "
            "the name the node bootstrap would emit; set spec.nodes.createSecret: false to use "
            "it, or spec.nodes.secretName to pick another name"
        )
    docs = []
    for key, ref in refs.items():
        metadata: dict[str, Any] = {"name": ref.name}
        if ref.namespace:
            metadata["namespace"] = ref.namespace
        labels = {"clusterctl.cluster.x-k8s.io/move": ""}
        if ref.cluster:
            labels["cluster.x-k8s.io/cluster-name"] = ref.cluster
        metadata["labels"] = labels
        metadata["annotations"] = {kubeadm.GENERATED: "node-bootstrap"}
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata,
            "type": "Opaque",
            "stringData": kubeadm.secret_data(settings, contents[key]),
        }
        docs.append("---\n" + "\n".join(splice.block_lines(secret)) + "\n")
    if docs and out.partial_line():
        docs[0] = "\n" + docs[0]
    return docs


# The API server takes requests of at most 3 MiB; a document that must be parsed and
# is far larger than any object could be is refused rather than parsed.
MAX_PARSED_BYTES = 8 * 1024 * 1024


def process_segment(
    segment: stream.Segment, index: int, request: Request, envs: Environments
) -> Outcome:
    """One segment that may hold targets (document ``index`` of the stream)."""
    if len(segment.text) > MAX_PARSED_BYTES:
        raise InputError(
            f"the document is {len(segment.text) / 2**20:.1f} MiB; an object the tool changes "
            f"may be at most {MAX_PARSED_BYTES // 2**20} MiB (the API server takes 3 MiB)",
            DocumentContext(index, segment.line, source=segment.helm_source()),
        )
    try:
        return _process_parsed(segment, index, request, envs)
    except RecursionError:
        context = DocumentContext(index, segment.line, source=segment.helm_source())
        raise InputError("the document is nested too deeply", context) from None


def _compose(segment: stream.Segment, index: int) -> list[tuple[Node, Any]]:
    """The full libyaml path: every document of the segment, or the reason it is invalid."""
    from proxy_postrender.yamltext import libyaml

    try:
        return libyaml.compose(segment.text)
    except libyaml.ParseError as exc:
        line = segment.line
        if exc.offset is not None:
            line += segment.text.count("\n", 0, exc.offset)
        context = DocumentContext(index, segment.line, source=segment.helm_source())
        raise InputError(f"invalid YAML at line {line}: {exc.problem}", context) from None


def _process_parsed(
    segment: stream.Segment, index: int, request: Request, envs: Environments
) -> Outcome:
    try:
        docs = [blockread.read(segment.text)]
    except blockread.Declined:
        docs = _compose(segment, index)
    changes: list[list[Op]] = []
    reports: list[ObjectReport] = []
    for _, data in docs:
        doc_ops: list[Op] = []
        for base, obj in targets.walk_objects(data):
            context = _context(segment, index, obj)
            try:
                plan = _plan(obj, base, request, envs)
            except InputError as exc:
                raise InputError(exc.message, context) from None
            if plan is None:
                continue
            doc_ops.extend(plan.ops)
            reports.append(ObjectReport(context, plan, "splice" if plan.ops else "unchanged"))
        changes.append(doc_ops)
    if not any(changes):
        return Outcome(segment.text, reports, 0 if reports else 1)
    new_text, method = _rewrite(segment, docs, changes, index)
    for report in reports:
        if report.method != "unchanged":
            report.method = method
    return Outcome(new_text, reports)


def _rewrite(
    segment: stream.Segment, docs: list[tuple[Node, Any]], changes: list[list[Op]], index: int
) -> tuple[str, str]:
    # the data as the change should leave it (changed in place: nothing reads it later)
    expected = [data for _, data in docs]
    for data, doc_ops in zip(expected, changes, strict=True):
        ops.apply(data, doc_ops)
    newline = segment.newline
    styles = [
        splice.detect_style(segment.text, node) if doc_ops else None
        for (node, _), doc_ops in zip(docs, changes, strict=True)
    ]
    # the round-trip dump takes one style for the segment: the first changed document's
    style = next((s for s in styles if s is not None), splice.Style())
    try:
        edits: list[splice.Edit] = []
        for (node, _), doc_ops, doc_style in zip(docs, changes, styles, strict=True):
            if doc_ops and doc_style is not None:
                edits.extend(splice.edits_for(segment.text, node, doc_ops, doc_style, newline))
        spliced = _same_ending(segment.text, splice.apply_edits(segment.text, edits))
        if _matches(spliced, expected):
            return spliced, "splice"
    except splice.Unsupported:
        pass
    from proxy_postrender.yamltext import libyaml

    try:
        dumped = libyaml.roundtrip(segment.text, changes, style, newline)
    except libyaml.ParseError:
        dumped = None  # the round-trip parser is stricter than libyaml (found by fuzzing)
    if dumped is not None:
        dumped = _same_ending(segment.text, dumped)
        if _matches(dumped, expected):
            return dumped, "roundtrip"
    context = _context(segment, index, docs[0][1] if docs else None)
    hint = (
        "; the document shares content through YAML aliases (&anchor/*alias): expand them"
        if any(libyaml.shares_nodes(node) for node, _ in docs)
        else ""
    )
    raise InputError(f"could not apply the change without altering other content{hint}", context)


def _same_ending(before: str, after: str) -> str:
    """A document without a final newline stays without one (adjacent deletions at the
    end of the text can leave the newline of the line before them)."""
    if before and not before.endswith("\n") and after.endswith("\n"):
        return after[:-2] if after.endswith("\r\n") else after[:-1]
    return after


def _matches(text: str, expected: list[Any]) -> bool:
    docs = load_documents(text, spliced=True)
    return docs is not None and bool(docs == expected)
