"""Parsing with positions (C speed) and the round-trip fallback dump."""

from __future__ import annotations

import io
import re

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.cyaml import CSafeLoader
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from proxy_postrender import structs
from proxy_postrender.yamltext import ops as ops_mod
from proxy_postrender.yamltext import tree
from proxy_postrender.yamltext.errors import ParseError
from proxy_postrender.yamltext.splice import Style


class _Loader(CSafeLoader):
    """A safe loader that reads unknown tags (``!Ref``) as plain data instead of failing."""


def _construct_unknown(loader: SafeConstructor, node: Node) -> Any:
    if isinstance(node, MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_Loader.add_constructor(None, _construct_unknown)


def _error(exc: YAMLError) -> ParseError:
    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        return ParseError(problem, mark.index if mark is not None else None)
    return ParseError(str(exc).splitlines()[0] if str(exc) else "invalid YAML", None)


def _check_expansion(root: Node) -> bool:
    """Refuse alias bombs and recursive aliases; return whether any node is shared."""
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
    return expanded != unique


def shares_nodes(root: tree.Node) -> bool:
    """Whether a list or mapping of the document is reachable twice (through an alias)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, tree.MappingNode | tree.SequenceNode):
            if id(node) in seen:
                return True
            seen.add(id(node))
            if isinstance(node, tree.MappingNode):
                stack.extend(n for pair in node.value for n in pair)
            else:
                stack.extend(node.value)
    return False


def scalar_loader() -> Any:
    """A loader whose resolver and constructors turn plain scalars into data exactly
    as :func:`compose` does (for the fast block reader)."""
    return _Loader("")


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


_SURROGATE_RE = re.compile("[\udc80-\udcff]")


def compose(text: str) -> list[tuple[tree.Node, Any]]:
    """Every document of ``text`` as (node with marks, constructed data).

    The data never shares a list or mapping between two places, so that a
    change planned for one place is expected at that place only.
    """
    bad = _SURROGATE_RE.search(text)
    if bad:
        raise ParseError("not valid UTF-8", bad.start())
    loader = _Loader(text)
    docs: list[tuple[tree.Node, Any]] = []
    node: Node | None = None
    may_alias = "*" in text  # without an alias indicator no node can be shared
    try:
        while loader.check_node():
            node = loader.get_node()
            shared = may_alias and _check_expansion(node)
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
        raise ParseError("the document is nested too deeply", None) from None
    finally:
        loader.dispose()
    return docs


def load_data(text: str) -> list[Any]:
    return [data for _, data in compose(text)]


_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _quoted(value: Any) -> Any:
    """Strings the tool adds, double-quoted unless a bare word: libyaml rejects
    some plain scalars (``http://h:1`` in flow context) that ruamel writes."""
    if isinstance(value, dict):
        return {_quoted(k): _quoted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_quoted(v) for v in value]
    if isinstance(value, str) and not _WORD_RE.fullmatch(value):
        return DoubleQuotedScalarString(value)
    return value


def _quote_op(op: ops_mod.Op) -> ops_mod.Op:
    if isinstance(op, ops_mod.SetValue | ops_mod.AddKey):
        return structs.replace(op, value=_quoted(op.value))
    if isinstance(op, ops_mod.AppendItems | ops_mod.InsertItems):
        return structs.replace(op, items=tuple(_quoted(list(op.items))))
    return op


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
        docs = list(yaml.load_all(body))
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
