"""Parsing with positions (C speed) and the round-trip fallback dump."""

from __future__ import annotations

import io

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.patterns import compiled

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _T = TypeVar("_T")

from ruamel.yaml import YAML
from ruamel.yaml.error import (
    MarkedYAMLError,
    YAMLError,
    YAMLFutureWarning,
    YAMLWarning,
)
from ruamel.yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from proxy_postrender import structs
from proxy_postrender.yamltext import blockread, tree
from proxy_postrender.yamltext import ops as ops_mod
from proxy_postrender.yamltext.errors import (
    MAX_DEPTH,
    MAX_NODES,
    ParseError,
    too_deep,
    too_many,
)
from proxy_postrender.yamltext.loader import Loader
from proxy_postrender.yamltext.splice import Style


def _error(exc: YAMLError) -> ParseError:
    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        return ParseError(problem, mark.index if mark is not None else None)
    return ParseError(str(exc).splitlines()[0] if str(exc) else "invalid YAML", None)


def _check_expansion(root: Node, max_nodes: int | None) -> bool:
    """Refuse alias bombs, recursive aliases and expansions past ``max_nodes``; return
    whether any node is shared."""
    sizes: dict[int, int] = {}
    seen: set[int] = set()  # entered (finished ones are also in sizes)
    unique = 0
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if not children_done and id(node) in seen:
            continue
        seen.add(id(node))
        children: list[Node] = []
        if isinstance(node, MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, SequenceNode):
            children = list(node.value)
        if children_done:
            if any(id(c) not in sizes for c in children):  # entered, not finished: an ancestor
                raise ParseError(
                    "a recursive alias (Kubernetes objects cannot be recursive)",
                    node.start_mark.index,
                )
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            unique += 1
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in seen)
    expanded = sizes[id(root)]
    if expanded > 10 * unique + 10_000:
        raise ParseError(
            f"aliases expand the document from {unique} to {expanded} nodes (an alias bomb?)",
            root.start_mark.index,
        )
    if max_nodes is not None and expanded > max_nodes:
        raise too_many(max_nodes)
    return expanded != unique


def shares_nodes(root: tree.Node) -> bool:
    """Whether a list or mapping of the document is reachable twice (through an alias)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, (tree.MappingNode, tree.SequenceNode)):
            if id(node) in seen:
                return True
            seen.add(id(node))
            if isinstance(node, tree.MappingNode):
                stack.extend(n for pair in node.value for n in pair)
            else:
                stack.extend(node.value)
    return False


def _convert(root: Node) -> tree.Node:
    """libyaml's composed nodes as a :mod:`nodes` tree (shared nodes stay shared)."""
    memo: dict[int, tree.Node] = {}

    def convert(node: Node) -> tree.Node:
        done = memo.get(id(node))
        if done is not None:
            return done
        start, end = node.start_mark.index, node.end_mark.index
        out: tree.Node
        if isinstance(node, MappingNode):
            mapping = tree.MappingNode(start, end, [], not node.flow_style)
            memo[id(node)] = mapping
            mapping.value.extend((convert(k), convert(v)) for k, v in node.value)
            out = mapping
        elif isinstance(node, SequenceNode):
            sequence = tree.SequenceNode(start, end, [], not node.flow_style)
            memo[id(node)] = sequence
            sequence.value.extend(convert(v) for v in node.value)
            out = sequence
        else:
            assert isinstance(node, ScalarNode)
            null = str(node.tag).endswith(":null")
            out = tree.ScalarNode(start, end, node.value, node.style or "", null)
            memo[id(node)] = out
        return out

    return convert(root)


_SURROGATE_RE = compiled(r"[\udc80-\udcff]")


def compose(
    text: str, *, max_nodes: int | None = MAX_NODES, max_depth: int = MAX_DEPTH
) -> list[tuple[tree.Node, Any]]:
    """Every document of ``text`` as (node with marks, constructed data).

    The data never shares a list or mapping between two places, so that a
    change planned for one place is expected at that place only. A document
    nested more than :data:`MAX_DEPTH` levels, or with more than ``max_nodes``
    nodes (aliases expanded), raises :class:`LimitError`.
    """
    return _read(text, max_nodes, with_nodes=True, max_depth=max_depth)


def load_data(text: str, *, max_nodes: int | None = MAX_NODES) -> list[Any]:
    """The data of every document of ``text`` (as :func:`compose` gives it)."""
    return [data for _, data in _read(text, max_nodes, with_nodes=False)]


def _read(
    text: str, max_nodes: int | None, *, with_nodes: bool, max_depth: int = MAX_DEPTH
) -> list[tuple[Any, Any]]:
    bad = _SURROGATE_RE.search(text)
    if bad:
        raise ParseError("not valid UTF-8", bad.start())
    loader = Loader(text)
    try:
        docs = _Events(max_nodes, with_nodes, max_depth).read(loader)
    except YAMLError as exc:
        raise _error(exc) from None
    finally:
        loader.dispose()
    if docs is not None:
        return docs
    # within the bounds (the events were counted), so the composer cannot recurse too far
    return compose_full(text, max_nodes)


def check(text: str, max_nodes: int | None = MAX_NODES, max_depth: int = MAX_DEPTH) -> None:
    """Raise ParseError unless ``text`` is valid YAML within the bounds (LimitError past
    them) without a recursive alias or an alias bomb; builds nothing (for a text another
    reader reads next)."""
    bad = _SURROGATE_RE.search(text)
    if bad:
        raise ParseError("not valid UTF-8", bad.start())
    loader = Loader(text)
    events = _Events(max_nodes, with_nodes=False, max_depth=max_depth)
    events.building = False
    try:
        events.read(loader)
    except YAMLError as exc:
        raise _error(exc) from None
    finally:
        loader.dispose()
    if events.aliases:
        compose_full(text, max_nodes)


def compose_full(text: str, max_nodes: int | None = MAX_NODES) -> list[tuple[tree.Node, Any]]:
    """:func:`compose` through libyaml's composer and ruamel.yaml's constructor: for what
    the event reader leaves to them (anchors, aliases, tags, merge keys, duplicate keys).
    The caller has checked the depth: the composer recurses in C."""
    bad = _SURROGATE_RE.search(text)
    if bad:
        raise ParseError("not valid UTF-8", bad.start())
    loader = Loader(text)
    docs: list[tuple[tree.Node, Any]] = []
    node: Node | None = None
    may_alias = "*" in text  # without an alias indicator no node can be shared
    try:
        while loader.check_node():
            node = loader.get_node()
            shared = may_alias and _check_expansion(node, max_nodes)
            data = loader.construct_document(node)
            # aliases expanded: no list or mapping reachable twice
            docs.append((_convert(node), ops_mod.copy_tree(data) if shared else data))
    except YAMLError as exc:
        raise _error(exc) from None
    except (ValueError, KeyError, TypeError):
        # a value that does not fit its tag: "2024-02-30", "!!int abc", "!!bool maybe"
        where = node.start_mark.index if node is not None else None
        raise ParseError(
            "a value does not match its type (date, !!int, !!bool...)", where
        ) from None
    except RecursionError:
        raise too_deep() from None
    finally:
        loader.dispose()
    return docs


_NO_KEY = object()


class _Events:
    """Documents built straight from libyaml's parse events: the same nodes and data as
    :func:`compose_full` gives, at a fraction of its time and memory, for the YAML that
    manifests use. At an anchor, alias, tag, directive, merge key, duplicate key or a
    key that is not a string or number, it stops building and only counts: the caller
    composes then. Either way it reads every event, so the bounds hold for both paths
    (and libyaml's composer never sees a document nested deeper than ``MAX_DEPTH``)."""

    __slots__ = ("aliases", "building", "max_depth", "max_nodes", "strings", "with_nodes")

    def __init__(self, max_nodes: int | None, with_nodes: bool, max_depth: int = MAX_DEPTH) -> None:
        self.max_depth = max_depth
        self.max_nodes = max_nodes if max_nodes is not None else -1
        self.with_nodes = with_nodes
        self.building = True
        self.aliases = False  # whether an alias was read
        self.strings: dict[str, str] = {}

    def read(self, loader: Any) -> list[tuple[Any, Any]] | None:
        """Every document as (node or None, data); None: the composer must build them."""
        docs: list[tuple[Any, Any]] = []
        # the open collections: [is a mapping, start, flow, child nodes, data, pending key]
        stack: list[list[Any]] = []
        depth = nodes = 0
        limit = self.max_nodes
        with_nodes = self.with_nodes
        item: tuple[Any, Any]
        check, get = loader.check_event, loader.get_event
        while check():
            event = get()
            kind = event.__class__
            if kind is ScalarEvent:
                nodes += 1
                if nodes == limit + 1:
                    raise too_many(limit)
                if not self.building:
                    continue
                built = self._scalar(event, with_nodes)
                if built is None:
                    stack, docs = [], []
                    continue
                item = built
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                nodes += 1
                depth += 1
                if nodes == limit + 1:
                    raise too_many(limit)
                if depth > self.max_depth:
                    raise too_deep()
                if self.building:
                    if event.anchor is not None or event.tag is not None:
                        self.building = False
                        stack, docs = [], []
                    else:
                        is_map = kind is MappingStartEvent
                        data: Any = {} if is_map else []
                        start = event.start_mark.index
                        stack.append([is_map, start, event.flow_style, [], data, _NO_KEY, None])
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                depth -= 1
                if not self.building:
                    continue
                is_map, start, flow, children, data, _, _ = stack.pop()
                end = event.end_mark.index
                node: Any = None
                if with_nodes:
                    node = (
                        tree.MappingNode(start, end, children, not flow)
                        if is_map
                        else tree.SequenceNode(start, end, children, not flow)
                    )
                item = (node, data)
            elif kind is AliasEvent:
                nodes += 1
                if nodes == limit + 1:
                    raise too_many(limit)
                self.aliases = True
                self.building = False
                stack, docs = [], []
                continue
            elif kind is DocumentStartEvent:
                if event.version is not None or event.tags:
                    self.building = False  # directives: the composer's resolver decides
                    stack, docs = [], []
                continue
            else:  # stream start and end, document end
                continue
            if not stack:
                docs.append(item)
            elif not self._attach(stack[-1], item):
                stack, docs = [], []
        return docs if self.building else None

    def _scalar(self, event: Any, with_nodes: bool) -> tuple[Any, Any] | None:
        if event.anchor is not None or event.tag is not None:
            self.building = False
            return None
        # one string object for each text that recurs (keys, names, the injected
        # values): a document of a million nodes holds a few thousand distinct ones
        value = self.strings.setdefault(event.value, event.value)
        style = event.style or ""
        if style:
            data: Any = value
        else:
            try:
                data = blockread.resolve_plain(value)
            except blockread.Declined:  # a merge key, or a value its type refuses
                self.building = False
                return None
        node = None
        if with_nodes:
            start, end = event.start_mark.index, event.end_mark.index
            node = tree.ScalarNode(start, end, value, style, not style and data is None)
        return node, data

    def _attach(self, frame: list[Any], item: tuple[Any, Any]) -> bool:
        """Add ``item`` to the open collection ``frame``; False: stop building."""
        node, data = item
        if not frame[0]:
            frame[3].append(node)
            frame[4].append(data)
            return True
        if frame[5] is _NO_KEY:
            # strings and integers (booleans too); the composer judges the rest, and
            # refuses a duplicate key
            if not isinstance(data, (str, int)) or data in frame[4]:
                self.building = False
                return False
            frame[5] = data
            frame[6] = node
            return True
        frame[4][frame[5]] = data
        frame[3].append((frame[6], node))
        frame[5] = _NO_KEY
        return True


_WORD_RE = compiled(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _quoted(value: Any) -> Any:
    """Strings the tool adds, double-quoted unless a bare word: libyaml rejects
    some plain scalars (``http://h:1`` in flow context) that ruamel writes."""
    if isinstance(value, dict):
        return {_quoted(k): _quoted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_quoted(v) for v in value]
    if isinstance(value, str) and not _WORD_RE.fullmatch(value):
        return DoubleQuotedScalarString(value)
    return value


def _quote_op(op: ops_mod.Op) -> ops_mod.Op:
    if isinstance(op, (ops_mod.SetValue, ops_mod.AddKey)):
        return structs.replace(op, value=_quoted(op.value))
    if isinstance(op, (ops_mod.AppendItems, ops_mod.InsertItems)):
        return structs.replace(op, items=tuple(_quoted(list(op.items))))
    return op


def quietly(work: Callable[[], _T]) -> _T:
    """``work()`` without the warnings of ruamel.yaml's pure-Python reader: they go to
    stderr quoting the input (a float "1e3", a reused anchor), where only the one-line
    error belongs, and none of them changes a value."""
    import warnings  # lazy: start-up time

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", YAMLWarning)
        warnings.simplefilter("ignore", YAMLFutureWarning)
        return work()


# ruamel.yaml's round-trip loader and dumper are pure Python: some 80 microseconds and
# a kilobyte per node. A document the splicer refuses is dumped up to this size.
ROUNDTRIP_MAX_NODES = 50_000


def roundtrip(text: str, changes: list[list[ops_mod.Op]], style: Style, newline: str) -> str:
    """Apply ``changes`` through ruamel.yaml's round-trip loader and dumper.

    Used only where the splicer declines (flow style, aliases, empty values):
    comments and quoting survive, indentation is normalised to ``style``.
    """
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    yaml.indent(mapping=style.map_indent, sequence=style.seq_offset + 2, offset=style.seq_offset)
    body = text.replace("\r\n", "\n")
    stripped = body.lstrip()
    yaml.explicit_start = stripped.startswith("---")
    header = ""
    if not yaml.explicit_start:
        # comments before the first document stay as they were
        lines = body.splitlines(keepends=True)
        kept = 0
        while kept < len(lines) and (
            not lines[kept].strip() or lines[kept].lstrip().startswith("#")
        ):
            kept += 1
        header = "".join(lines[:kept])
    try:
        docs = quietly(lambda: list(yaml.load_all(body)))
    except YAMLError as exc:
        raise _error(exc) from None
    for doc, doc_ops in zip(docs, changes, strict=True):
        ops_mod.apply(doc, [_quote_op(op) for op in doc_ops])
    out = io.StringIO()
    yaml.dump_all(docs, out)
    dumped = out.getvalue()
    if header and not dumped.startswith(header):
        dumped = header + dumped
    return dumped.replace("\n", newline) if newline != "\n" else dumped
