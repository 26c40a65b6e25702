"""The one engine behind every entry point: ``run(segments, request, out)``.

Each document is passed through as raw text unless it holds a target. Target
documents are read with positions (:mod:`proxy_postrender.yamltext.read`),
planned by the planner the target table names (:mod:`proxy_postrender.planners`),
and changed by splicing text; the result is verified
(:func:`proxy_postrender.verify.verified`), and only when the splice is
refused or does not verify does the round-trip fallback run (and is verified
the same way). At the end of the stream come the objects the run generates
(:mod:`proxy_postrender.generated`) and the output gates. What the run saw of
other owners of the node proxy settings (:mod:`proxy_postrender.nodes.owners`, made
on the first object it reads: :mod:`proxy_postrender.nodes.watched`) becomes coded
warnings, errors under ``request.strict``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from proxy_postrender import TYPE_CHECKING, generated, planners, resolve, verify
from proxy_postrender.errors import DocumentContext, InputError, ProfileError
from proxy_postrender.nodes import watched
from proxy_postrender.noproxy import size
from proxy_postrender.noproxy.clusterindex import CAPI_GROUP, ClusterIndex
from proxy_postrender.noproxy.environments import Env, with_services_preset
from proxy_postrender.noproxy.presets import SERVICES
from proxy_postrender.noproxy.services import LEFT_OUT_CODE
from proxy_postrender.objects import (
    HELM4_FILENAME,
    annotations_of,
    api_group,
    is_mapping,
    walk_objects,
)
from proxy_postrender.request import Request
from proxy_postrender.result import Finding, ObjectReport, Outcome, Result
from proxy_postrender.targets import CUSTOM_PLANNERS
from proxy_postrender.yamltext import ops, splice, spool, stream
from proxy_postrender.yamltext.errors import LimitError, ParseError
from proxy_postrender.yamltext.read import (
    MAX_PARSED_BYTES,
    count_nodes,
    load_documents,
    nodes_and_data,
)
from proxy_postrender.yamltext.tree import Node

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.nodes.owners import Found, Watch
    from proxy_postrender.nodes.settings import NodeSettings
    from proxy_postrender.noproxy.bootstraps import Bootstraps
    from proxy_postrender.noproxy.envsources import EnvSources
    from proxy_postrender.plans import Plan
    from proxy_postrender.targets import Target
    from proxy_postrender.yamltext.ops import Op


def _context(segment: stream.Segment, index: int, obj: Any) -> DocumentContext:
    kind = name = namespace = None
    source = segment.helm_source()
    if is_mapping(obj):
        kind = str(obj.get("kind")) if obj.get("kind") is not None else None
        metadata = obj.get("metadata")
        if is_mapping(metadata):
            name = str(metadata.get("name")) if metadata.get("name") is not None else None
            namespace = str(metadata["namespace"]) if metadata.get("namespace") else None
            annotations = metadata.get("annotations")
            if source is None and is_mapping(annotations):
                filename = annotations.get(HELM4_FILENAME)
                source = str(filename) if filename else None
    return DocumentContext(index, segment.line, kind, name, namespace, source)


def process(text: str, request: Request) -> Result:
    """Transform a whole stream (without BOM); raise InputError on any problem (with
    ``request.strict``, also on a warning whose code says so)."""
    segments = stream.split(text)
    out = spool.Output()
    result = run(lambda: segments, request, out)
    result.text = out.text()
    return result


def needs_two_passes(request: Request) -> bool:
    """Whether :func:`run` reads the stream twice (the clusters, the Services of the
    ``services`` preset, or the references of the rollout step first)."""
    return (
        _discovers_clusters(request)
        or _services_preset(request)
        or _follows(request)
        or _reads_env_sources(request)
    )


# in the API group of every object the rollout step and the discovery read
_CAPI: str = CAPI_GROUP


def _follows(request: Request) -> bool:
    """Whether the run renames node templates and moves their references (rollout/)."""
    return request.nodes is not None or request.removing


def _discovers_clusters(request: Request) -> bool:
    config = request.no_proxy
    return (
        config is not None
        and config.discover
        and request.nodes is not None
        and not request.removing
    )


def _services_preset(request: Request) -> bool:
    config = request.no_proxy
    return config is not None and SERVICES in config.presets and not request.removing


def run(
    segments: Callable[[], Iterable[stream.Segment]],
    request: Request,
    out: spool.Output,
    *,
    keep_objects: bool = True,
) -> Result:
    """Transform the stream that ``segments()`` gives (twice when
    :func:`needs_two_passes`) into ``out``; raise InputError on any problem, and with
    ``request.strict`` on the first warning whose code :attr:`Finding.strict` says so."""
    result = Result(keep_objects=keep_objects)
    # other owners of the node proxy settings: looked for only when the run injects them
    watch = None
    if request.nodes is not None and not request.removing:
        watch = _Watching(request.nodes, bootstraps_namespace=request.pods.namespace or "")
    clusters = None
    read: list[Any] | None = None  # the objects the discovery read, for the rollout pass
    # whether some document mentions a Cluster API group (None: not looked for yet)
    capi: bool | None = None
    if _discovers_clusters(request):
        capi = any(_CAPI in segment.text for segment in segments())
        if capi:
            from proxy_postrender.noproxy.discovery import discover_stream  # lazy: start-up

            read = []
            clusters = discover_stream(segments(), request.pods.namespace, read)
        else:  # what the discovery finds there: no Cluster (it reads only those groups)
            clusters = ClusterIndex(namespace=request.pods.namespace or "")
    workloads = _workloads_env(segments, request, result)
    sources = _env_sources(segments, request, workloads)
    envs = resolve.environments(request, clusters, workloads, sources)
    resolver = resolve.Resolver(request, envs)
    kinds = request.targets.kinds
    if capi is None and _follows(request):
        capi = any(_CAPI in segment.text for segment in segments())
    if _follows(request) and capi:
        from proxy_postrender.rollout import ledger, references  # lazy: Cluster API streams

        # the planning of the pass sees the ledger: the names it gives are the main pass's
        seen = resolver.ledger = ledger.Ledger(
            request.nodes, request.removing, request.pods.namespace or ""
        )
        ledger.scan(
            segments(), seen, lambda o, b, c: planners.plan(o, b, request, resolver, c), read
        )
        if seen.moves:
            kinds = kinds | references.REFERRER_KINDS

    def consume(outcome: Outcome) -> None:
        out.write(outcome.text)
        result.merge(outcome)

    for segment in segments():
        content = segment.has_content()
        # documents as a reader counts them: every "---", and content before the first
        counted = int(content or segment.text.startswith("---"))
        result.documents += counted
        found = generated.earlier(segment) if content else None
        if found is not None:
            if generated.makes(request, found):
                result.dropped.append(found)
                continue  # made anew at the end where the stream still needs it
            result.kept.append(found)
        kind = segment.sniff_kind() if content else None
        if not content or (kind is not None and kind not in kinds):
            if watch is not None and kind in watched.WATCHED_KINDS:
                _observe(segment, result.documents, watch)
            consume(_pass_through(segment, result.documents, counted, request))
        else:
            consume(process_segment(segment, result.documents, request, resolver, kind, watch))
    out.write_all(generated.documents(result, request, out))
    if request.forbid_plaintext:
        verify.no_plaintext(out.segments(), secret_backed=request.pods.secret_ref is not None)
    result.no_proxy_warnings = envs.warnings
    result.no_proxy_notes = envs.notes
    if watch is not None:
        result.findings += [Finding(f.code, f.message, f.context) for f in watch.findings()]
        if watch.bootstraps is not None:
            from proxy_postrender.nodes import uncovered  # lazy: start-up

            result.findings += [Finding(*found) for found in uncovered.findings(watch.bootstraps)]
            result.notes += uncovered.notes(watch.bootstraps)
    result.findings += [Finding(g.code, g.message, g.context) for g in envs.gaps()]
    result.findings += [Finding(size.SIZE_CODE, warning) for warning in envs.large.values()]
    result.findings += [Finding(code, message) for code, message in resolver.findings()]
    if resolver.ledger is not None:
        result.findings += [Finding(*found) for found in resolver.ledger.findings]
    error = result.strict_error() if request.strict else None
    if error is not None:
        raise error
    return result


class _Watching:
    """The run's watch for other owners (nodes/owners.py), made when it first has
    something to read (:mod:`proxy_postrender.nodes.watched`)."""

    def __init__(self, settings: NodeSettings, bootstraps_namespace: str) -> None:
        self.settings = settings
        self.bootstraps_namespace = bootstraps_namespace
        self.watch: Watch | None = None

    def _made(self) -> Watch:
        if self.watch is None:
            from proxy_postrender.nodes.owners import Watch

            self.watch = Watch(self.settings, bootstraps_namespace=self.bootstraps_namespace)
        return self.watch

    def observe(self, obj: Mapping[str, Any], context: DocumentContext | None) -> None:
        """Every object the engine parses (one of another group: nothing to read)."""
        if self.watch is not None or api_group(obj.get("apiVersion")) in watched.WATCHED_GROUPS:
            self._made().observe(obj, context)

    def node_plan(
        self,
        obj: Mapping[str, Any],
        target: Target | None,
        plan: Plan,
        context: DocumentContext | None,
    ) -> None:
        """A node object's plan (:meth:`Plan.for_nodes`)."""
        from proxy_postrender.nodes.kubeadm import NodePlan  # (loaded: a node plan exists)

        if isinstance(plan, NodePlan):
            self._made().node_plan(obj, target, plan, context)

    def findings(self) -> list[Found]:
        return [] if self.watch is None else self.watch.findings()

    @property
    def bootstraps(self) -> Bootstraps | None:
        return None if self.watch is None else self.watch.bootstraps


def _workloads_env(
    segments: Callable[[], Iterable[stream.Segment]], request: Request, result: Result
) -> Env:
    """The workloads' variables: the profile's, with the ``services`` preset's names of
    the stream's Services when it is on; a NO_PROXY too large to start a process with
    is refused, a large one is a warning."""
    env = request.env
    cause = ""
    last: DocumentContext | None = None  # the last Service the preset counted
    if _services_preset(request):
        from proxy_postrender.noproxy.discovery import discover_services  # lazy: start-up

        assert request.no_proxy is not None
        services = discover_services(segments(), request.pods.namespace)
        named = [(service.namespace, service.name) for service in services]
        env, resolved = with_services_preset(env, request.no_proxy, named)
        result.warnings.append(resolved.cost)
        result.findings += [Finding(LEFT_OUT_CODE, w) for w in resolved.left_out]
        cause = f" (the {SERVICES} preset names {len(services)} Services of the stream)"
        last = services[-1].context if services else None
    value = dict(env).get("NO_PROXY", dict(env).get("no_proxy", ""))
    refused = size.too_large(value, "the workloads")
    if refused is not None:
        if not cause:
            raise ProfileError(refused)
        raise InputError(refused + cause, last)
    warning = size.large(value, "the workloads")
    if warning is not None:
        result.findings.append(Finding(size.SIZE_CODE, warning + cause))
    return env


def _observe(segment: stream.Segment, index: int, watch: _Watching) -> None:
    """Show the watch a document the tool does not change (a kind it only reads); one it
    cannot read passes through unread, as before."""
    if len(segment.text) > MAX_PARSED_BYTES:
        return
    for doc in load_documents(segment.text) or []:
        for _, obj in walk_objects(doc):
            watch.observe(obj, _context(segment, index, obj))


def _pass_through(segment: stream.Segment, index: int, counted: int, request: Request) -> Outcome:
    """A segment without targets, unchanged (after the removal check)."""
    if counted and request.removing:
        _refuse_unknown_target(segment, index)
    return Outcome(segment.text, passed_through=counted)


# The annotations of the planners only a profile's spec.targets reaches.
_CUSTOM_MARKS = frozenset(planners.PLANNERS[name].annotation for name in CUSTOM_PLANNERS)


def _refuse_unknown_target(segment: stream.Segment, index: int) -> None:
    """Removal without the profile's spec.targets cannot find a custom target: say so
    instead of leaving the injection in place."""
    marks = _CUSTOM_MARKS
    if not any(mark in segment.text for mark in marks):
        return
    for doc in load_documents(segment.text) or []:
        for _, obj in walk_objects(doc):
            if marks & set(annotations_of(obj)):
                raise InputError(
                    f"{obj.get('kind')} is a target only through a profile's spec.targets: "
                    "pass that profile with --remove",
                    _context(segment, index, obj),
                )


def process_segment(
    segment: stream.Segment,
    index: int,
    request: Request,
    resolver: resolve.Resolver,
    kind: str | None = None,
    watch: _Watching | None = None,
) -> Outcome:
    """One segment that may hold targets (document ``index`` of the stream): of a kind
    the target table names, or of a ``kind`` the raw text does not show (None); every
    object read is shown to ``watch``."""
    if len(segment.text) > MAX_PARSED_BYTES:
        size = f"the document is {len(segment.text) / 2**20:.1f} MiB"
        bound = f"{MAX_PARSED_BYTES // 2**20} MiB (the API server takes 3 MiB)"
        reason = (
            f"{size}; an object the tool changes may be at most {bound}"
            if kind is not None
            else f"{size} and its kind shows only when it is parsed (flow style, quoted "
            f"keys or an indented root); the tool parses documents of at most {bound}"
        )
        raise InputError(reason, DocumentContext(index, segment.line, source=segment.helm_source()))
    try:
        if len(segment.text) < _LARGE:
            return _process_parsed(segment, index, request, resolver, watch)
        return _without_collector(lambda: _process_parsed(segment, index, request, resolver, watch))
    except RecursionError:
        # nesting within the readers' bound, but past Python's recursion limit in a later
        # step (the round-trip fallback's pure-Python reader and dumper)
        context = DocumentContext(index, segment.line, source=segment.helm_source())
        raise InputError("the document is nested too deeply", context) from None


# A document this large is read with the cyclic garbage collector paused.
_LARGE = 1 << 20


def _without_collector(work: Callable[[], Outcome]) -> Outcome:
    """``work()`` with the cyclic garbage collector paused. The nodes and data of a
    document hold no reference cycles, but each full pass of the collector visits all of
    them: for a document of millions of nodes, a quarter of its time."""
    import gc  # lazy: only large documents

    paused = gc.isenabled()
    gc.disable()
    try:
        return work()
    finally:
        if paused:
            gc.enable()


def _read(segment: stream.Segment, index: int) -> list[tuple[Node, Any]]:
    """Every document of the segment with its nodes, or the reason it is invalid."""
    try:
        return nodes_and_data(segment.text)
    except LimitError as exc:
        context = DocumentContext(index, segment.line, source=segment.helm_source())
        raise InputError(exc.problem, context) from None
    except ParseError as error:  # not `exc` again: compiled, one name has one type
        line = segment.line
        if error.offset is not None:
            line += segment.text.count("\n", 0, error.offset)
        context = DocumentContext(index, segment.line, source=segment.helm_source())
        raise InputError(f"invalid YAML at line {line}: {error.problem}", context) from None


def _process_parsed(
    segment: stream.Segment,
    index: int,
    request: Request,
    resolver: resolve.Resolver,
    watch: _Watching | None,
) -> Outcome:
    parsed = resolver.ledger.take_parsed(index) if resolver.ledger is not None else None
    docs = parsed if parsed is not None else _read(segment, index)
    changes: list[list[Op]] = []
    reports: list[ObjectReport] = []
    ledger = resolver.ledger
    for number, (_, data) in enumerate(docs):
        doc_ops: list[Op] = []
        for base, obj in walk_objects(data):
            context = _context(segment, index, obj)
            if watch is not None:
                watch.observe(obj, context)
            # a Helm hook reads the hooks' copies of the generated objects
            hook = generated.hook_of(obj)
            planned = request if hook is None else generated.for_hooks(request)
            # the rollout pass planned the templates it renames already (the same plan)
            plan = ledger.take_plan(index, number, base) if ledger and hook is None else None
            try:
                if plan is None:
                    plan = planners.plan(obj, base, planned, resolver, context)
                if watch is not None and plan is not None and plan.for_nodes():
                    watch.node_plan(obj, request.targets.find(obj), plan, context)
                if ledger is not None:
                    plan = ledger.follow(obj, base, plan, context)
            except InputError as exc:  # named by its own document, else by this one
                raise InputError(exc.message, exc.context or context) from None
            if plan is None:
                continue
            doc_ops.extend(plan.ops)
            method = "splice" if plan.ops else "unchanged"
            reports.append(ObjectReport(context, plan, method, hook))
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
    """The segment with ``changes`` made: spliced, else dumped by the round-trip fallback;
    either is written only when the verification step (:func:`verify.verified`) accepts it."""
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
    style = next((s for s in styles if s is not None), None)
    if style is None:  # (a default made only when needed: records are made in Python)
        style = splice.Style()
    try:
        edits: list[splice.Edit] = []
        trace: list[tuple[Op | None, list[splice.Edit]]] = []
        for (node, _), doc_ops, doc_style in zip(docs, changes, styles, strict=True):
            if doc_ops and doc_style is not None:
                edits.extend(
                    splice.edits_for(segment.text, node, doc_ops, doc_style, newline, trace)
                )
        spliced = _same_ending(segment.text, splice.apply_edits(segment.text, edits))
        # the splice's own edits, for the step to prove it from (one document per segment)
        evidence = verify.Evidence(segment.text, docs[0][0], trace) if len(docs) == 1 else None
        if verify.verified(spliced, expected, evidence):
            return spliced, "splice"
        why = "the spliced text did not read back as planned"
    except splice.Unsupported as exc:
        why = f"the splice was refused ({exc})"
    return _dumped(segment, docs, changes, index, style, expected, why)


def _dumped(
    segment: stream.Segment,
    docs: list[tuple[Node, Any]],
    changes: list[list[Op]],
    index: int,
    style: splice.Style,
    expected: list[Any],
    why: str,
) -> tuple[str, str]:
    """The round-trip fallback of :func:`_rewrite` (``why``: why the splice was not
    written), within its bounds, and verified like a splice."""
    from proxy_postrender.yamltext import libyaml

    newline = segment.newline
    if splice.ends_in_open_block_scalar(segment.text, docs[-1][0]):
        raise InputError(
            f"could not apply the change: {why}, and a re-dump would end the block scalar "
            "(| or >) that ends this document without a final newline with '-' (which "
            "--remove could not undo): end the document with a newline",
            _context(segment, index, docs[0][1] if docs else None),
        )
    nodes = sum(count_nodes(node, libyaml.ROUNDTRIP_MAX_NODES) for node, _ in docs)
    if nodes > libyaml.ROUNDTRIP_MAX_NODES:
        raise InputError(
            f"could not apply the change: {why}, and the round-trip dump takes documents of "
            f"at most {libyaml.ROUNDTRIP_MAX_NODES} nodes",
            _context(segment, index, docs[0][1] if docs else None),
        )
    try:
        dumped: str | None = libyaml.roundtrip(segment.text, changes, style, newline)
    except ParseError:
        dumped = None  # the round-trip parser is stricter than libyaml (found by fuzzing)
    if dumped is not None:
        dumped = _same_ending(segment.text, dumped)
        if verify.verified(dumped, expected):
            return dumped, "roundtrip"
    context = _context(segment, index, docs[0][1] if docs else None)
    hint = (
        "; the document shares content through YAML aliases (&anchor/*alias): expand them"
        if any(libyaml.shares_nodes(node) for node, _ in docs)
        else ""
    )
    raise InputError(f"could not apply the change without altering other content{hint}", context)


_LINE_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")


def _same_ending(before: str, after: str) -> str:
    """A document without a final newline stays without one (adjacent deletions at the
    end of the text can leave the newline of the line before them). One that ends in
    another line break (NEL, LS, PS, a CR alone) is ended: the splicer adds lines after
    it, each ended by the document's newline."""
    if before and not before.endswith(_LINE_BREAKS) and after.endswith("\n"):
        return after[:-2] if after.endswith("\r\n") else after[:-1]
    return after


# --- envFrom: the ConfigMaps and Secrets a workload reads its variables from ---


def _reads_env_sources(request: Request) -> bool:
    """Whether the run reads the stream's ConfigMaps and Secrets first: what a container
    gets through ``envFrom`` counts as set by the manifest (pods/envfrom.py)."""
    return bool(request.env) and not request.removing


def _env_sources(
    segments: Callable[[], Iterable[stream.Segment]], request: Request, env: Env
) -> EnvSources | None:
    """The ConfigMaps and Secrets of the stream, keeping the values of the variables the
    workloads get (None: not read)."""
    if not _reads_env_sources(request) or not any("envFrom" in s.text for s in segments()):
        return None  # (no container reads a source: none to know)
    from proxy_postrender.noproxy import envsources  # lazy: start-up time

    names = [name for name, _ in request.pods.wanted(env)]
    return envsources.read(segments(), names, request.pods.namespace)
