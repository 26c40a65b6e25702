"""The KRM function entry: a ``ResourceList`` in, a ``ResourceList`` out.

kpt and standalone kustomize call exec functions with a ResourceList
(``config.kubernetes.io/v1``) on stdin: ``items`` to transform and a
``functionConfig`` — here a ProxyProfile, or a ConfigMap whose ``data`` holds
``httpProxy``, ``httpsProxy``, ``noProxy`` (and ``onConflict``), as
``kpt fn eval -- key=value`` writes it. The items go through the same engine
as any stream (each item one document), every annotation the tools put on
them is kept, and ``results`` says what changed. On an error the items come
back unchanged with an error result, and the caller exits non-zero: kustomize
ignores ``results`` and reads only stderr and the exit code, and an empty
item list would delete every resource.

The ResourceList is edited as text, as the engine edits a stream: each item of
the block sequence ``items`` is cut out as a document of its own (its lines
less the item's indentation), the engine changes it, and a changed item is put
back in its place, indented again; items it did not change stay byte for byte,
and ``results`` is written in place of the old one. The result is read back and
must hold exactly the data planned. A layout this does not cut (flow-style
items, an item that is no block mapping, CR line breaks) or a result that does
not read back goes through ruamel.yaml's round-trip reader and dumper instead,
which takes minutes for what the text path does in seconds: it is bounded by
:data:`ROUNDTRIP_MAX_NODES`.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, MutableMapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender import engine, generated, verify
from proxy_postrender.cli.options import KRM_KIND
from proxy_postrender.errors import InputError, ProfileError, ProxyPostrenderError
from proxy_postrender.request import Request
from proxy_postrender.result import Result
from proxy_postrender.structs import Struct, field
from proxy_postrender.yamltext import splice, stream
from proxy_postrender.yamltext.errors import MAX_DEPTH, MAX_NODES, LimitError, ParseError
from proxy_postrender.yamltext.tree import MappingNode, ScalarNode, SequenceNode

API_VERSION = "config.kubernetes.io/v1"
KIND = KRM_KIND
CONFIGMAP_KEYS = ("httpProxy", "httpsProxy", "noProxy", "onConflict")


def is_resource_list(text: str) -> bool:
    """Whether the stream is one ResourceList (a cheap look at the first document)."""
    if KIND not in text[:65536]:
        return False
    segments = [s for s in stream.split(text) if s.has_content()]
    return len(segments) == 1 and segments[0].sniff_kind() == KIND


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 30
    yaml.indent(mapping=2, sequence=2, offset=0)
    return yaml


def profile_object(config: Any) -> Mapping[str, Any] | None:
    """The ProxyProfile a functionConfig stands for (None: there is none)."""
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise ProfileError("functionConfig: must be a ProxyProfile or a ConfigMap")
    if config.get("kind") == "ConfigMap":
        data = config.get("data") or {}
        if not data:
            return None  # kpt sends an empty ConfigMap when no --fn-config is given
        if not isinstance(data, Mapping):
            raise ProfileError("functionConfig ConfigMap: data must be a mapping")
        unknown = sorted(str(k) for k in data if k not in CONFIGMAP_KEYS)
        if unknown:
            raise ProfileError(
                f"functionConfig ConfigMap: unknown key(s) {', '.join(unknown)} "
                f"(allowed: {', '.join(CONFIGMAP_KEYS)}; use a ProxyProfile for the rest)"
            )
        metadata = config.get("metadata") or {}
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        return {
            "apiVersion": "proxy-postrender.io/v1alpha1",
            "kind": "ProxyProfile",
            "metadata": {"name": str(name or "function-config")},
            "spec": {str(k): str(v) for k, v in data.items()},
        }
    return config


class Outcome(Struct):
    text: str  # the ResourceList to write
    error: ProxyPostrenderError | None = None  # set: exit non-zero, the reason on stderr
    results: list[dict[str, Any]] = field(default_factory=list)
    result: Result | None = None


def _ref(context: Any) -> dict[str, str]:
    ref = {"kind": str(context.kind or "")}
    if context.name:
        ref["name"] = str(context.name)
    if context.namespace:
        ref["namespace"] = str(context.namespace)
    return ref


def _results(result: Result) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for report in result.objects:
        if report.method == "unchanged":
            continue
        lines = [line.strip() for line in report.plan.describe()]
        warning = any(line.startswith(("warning", "kept")) for line in lines)
        results.append(
            {
                "message": "; ".join([report.plan.summary(), *lines]),
                "severity": "warning" if warning else "info",
                "resourceRef": _ref(report.context),
            }
        )
    results += [{"message": w, "severity": "warning"} for w in result.warnings]
    results += [{"message": n, "severity": "info"} for n in result.notes]
    for finding in result.findings:
        entry: dict[str, Any] = {"message": finding.message, "severity": "warning"}
        if finding.context is not None:
            entry["resourceRef"] = _ref(finding.context)
        entry["tags"] = {"code": finding.code, "strict": str(finding.strict).lower()}
        results.append(entry)
    notes = (("warning", result.no_proxy_warnings), ("info", result.no_proxy_notes))
    for severity, found in notes:
        for scope, texts in found.items():
            results += [
                {"message": f"NO_PROXY ({scope}): {t}", "severity": severity} for t in texts
            ]
    return results


def run(
    text: str,
    make_request: Callable[[Mapping[str, Any] | None], Request],
    redact: Callable[[str], str] = lambda message: message,
) -> Outcome:
    """Transform the items of the ResourceList ``text``; bad items or profiles give an
    Outcome with the error (raises only when ``text`` is no ResourceList at all)."""
    listed = _read_listed(text)
    if listed is not None:
        data = listed.data
        if data.get("apiVersion") != API_VERSION:
            raise InputError(f"expected a {KIND} of apiVersion {API_VERSION}")
        if data.get("items") is not None and not isinstance(data.get("items"), list):
            raise InputError(f"{KIND}: items must be a list")
        _check_items(data.get("items") or [])
        outcome = _run_listed(listed, make_request, redact)
        if outcome is not None:
            return outcome
    _check(text, ROUNDTRIP_MAX_NODES)
    return _run_roundtrip(text, make_request, redact)


def _check_items(items: list[Any]) -> None:
    """Every item is an object (a mapping): a null, a scalar or a list among them is an
    error that names it, not a count of items that came out wrong."""
    for number, item in enumerate(items, 1):
        if not isinstance(item, Mapping):
            what = "null" if item is None else "a list" if isinstance(item, list) else "a scalar"
            raise InputError(f"{KIND}: item {number} is {what}, not a Kubernetes object")


def _run_roundtrip(
    text: str,
    make_request: Callable[[Mapping[str, Any] | None], Request],
    redact: Callable[[str], str],
) -> Outcome:
    """:func:`run` through ruamel.yaml's round-trip reader and dumper."""
    from ruamel.yaml.error import YAMLError

    from proxy_postrender.yamltext import libyaml

    yaml = _yaml()
    try:
        resource_list = libyaml.quietly(lambda: yaml.load(text))
    except YAMLError as exc:
        raise InputError(
            f"the ResourceList is not valid YAML: {str(exc).splitlines()[0]}"
        ) from None
    except RecursionError:  # within the nesting bound, past Python's recursion limit
        raise InputError("the ResourceList is nested too deeply") from None
    if (
        not isinstance(resource_list, MutableMapping)
        or resource_list.get("apiVersion") != API_VERSION
    ):
        raise InputError(f"expected a {KIND} of apiVersion {API_VERSION}")
    items = resource_list.get("items")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise InputError(f"{KIND}: items must be a list")
    _check_items(items)
    try:
        request = make_request(profile_object(resource_list.get("functionConfig")))
        documents = []
        for item in items:
            buffer = io.StringIO()
            yaml.dump(item, buffer)
            documents.append("---\n" + buffer.getvalue())
        result = engine.process("".join(documents), request)
        new_items = [doc for doc in yaml.load_all(result.text) if doc is not None]
        kept = [item for item in items if not _generated(item)]
        if len([item for item in new_items if not _generated(item)]) != len(kept):
            raise InputError(f"{len(kept)} items came in but a different number came out")
        _restore_paths(items, new_items)
    except ProxyPostrenderError as exc:
        resource_list["results"] = [{"message": redact(str(exc)), "severity": "error"}]
        return Outcome(_dump(yaml, resource_list), error=exc)
    resource_list["items"] = new_items
    results = [{**r, "message": redact(r["message"])} for r in _results(result)]
    resource_list["results"] = results
    return Outcome(_dump(yaml, resource_list), results=results, result=result)


# The round-trip path reads the ResourceList, and writes it back, whole with ruamel.yaml's
# pure-Python reader and dumper: some 200 microseconds and 4 KB per node with the
# engine's own work. Beyond this, a one-line error instead of minutes of work.
ROUNDTRIP_MAX_NODES = 50_000


def _check(text: str, max_nodes: int) -> None:
    """Refuse, with libyaml's C reader, what would take minutes (too many nodes), crash
    the round-trip reader (nesting), or be read wrongly by it (a recursive alias comes
    out as ``[null]``)."""
    from proxy_postrender.yamltext import libyaml

    try:
        # an item is two levels down (the ResourceList, its items): as deep as a document
        libyaml.check(text, max_nodes, MAX_DEPTH + 2)
    except ParseError as exc:
        raise _invalid(text, exc) from None


def _invalid(text: str, exc: ParseError) -> InputError:
    if isinstance(exc, LimitError):
        return InputError(f"the ResourceList: {exc.problem}")
    where = f" at line {text.count(chr(10), 0, exc.offset) + 1}" if exc.offset else ""
    return InputError(f"the ResourceList is not valid YAML{where}: {exc.problem}")


class _Item(Struct):
    """One item of a ResourceList read as text."""

    start: int  # the start of the line of its dash
    end: int  # the start of the line after it
    column: int  # of its content (its keys)
    doc: str  # the item as a document of its own
    data: Any


class _Listed(Struct):
    """A ResourceList whose items are block mappings in a block sequence."""

    text: str
    data: dict[str, Any]
    root: MappingNode
    items: list[_Item]
    after_items: int | None  # where new items go (None: there is no block sequence)
    dash: str  # what comes before an item's first line: "- ", "  - "...


def _read_listed(text: str) -> _Listed | None:
    """The ResourceList as text and data; None when its layout is not one cut here."""
    from proxy_postrender.yamltext import libyaml

    try:
        # an item is two levels down (the ResourceList, its items): as deep as a document
        docs = libyaml.compose(text, max_nodes=MAX_NODES, max_depth=MAX_DEPTH + 2)
    except ParseError as exc:
        raise _invalid(text, exc) from None
    if len(docs) != 1 or "\r" in text:
        return None
    root, data = docs[0]
    if not isinstance(root, MappingNode) or not root.block or not isinstance(data, dict):
        return None
    if splice.column(text, root.start) != 0:
        return None
    node = next(
        (v for k, v in root.value if isinstance(k, ScalarNode) and k.value == "items"), None
    )
    if not isinstance(node, SequenceNode) or not node.block or not node.value:
        if data.get("items"):
            return None
        return _Listed(text, data, root, [], None, "- ")
    items = _cut_items(text, node, data["items"])
    if items is None:
        return None
    first = items[0]
    dash = text[first.start : first.start + first.column]
    after = splice.next_line_start(text, splice.content_end(node))
    return _Listed(text, data, root, items, after, dash)


def _cut_items(text: str, node: SequenceNode, data: list[Any]) -> list[_Item] | None:
    """Each item of a block sequence as a document of its own: its lines from its dash
    on, less its indentation (a comment line less indented loses its spaces)."""
    items: list[_Item] = []
    dash_column = splice.column(text, node.start)
    start = splice.line_start(text, node.start)
    for index, item in enumerate(node.value):
        if not isinstance(item, MappingNode) or not item.block or not item.value:
            return None
        while True:  # comment and blank lines before the dash belong to no item
            line_end = text.find("\n", start)
            line = text[start : len(text) if line_end < 0 else line_end]
            if line.lstrip(" ")[:1] == "-" or line_end < 0:
                break
            if line.strip(" ")[:1] not in ("", "#"):
                return None
            start = line_end + 1
        if len(line) - len(line.lstrip(" ")) != dash_column:
            return None
        column = splice.column(text, item.start)
        end = splice.next_line_start(text, splice.content_end(item))
        lines = text[start:end].split("\n")
        if lines[0][:column].strip(" ") != "-":
            return None
        doc = [lines[0][column:]]
        for line in lines[1:]:
            if not line[:column].strip(" "):
                doc.append(line[column:])
            elif line.lstrip(" ")[:1] == "#":
                doc.append(line.lstrip(" "))
            else:
                return None
        items.append(_Item(start, end, column, "\n".join(doc), data[index]))
        start = end
    return items


def _indented(doc: str, dash: str) -> str:
    """A document as an item: its first line after ``dash``, the others indented alike."""
    pad = " " * len(dash)
    lines = doc.split("\n")
    return "\n".join([dash + lines[0], *(pad + line if line else "" for line in lines[1:])])


def _body(segment: stream.Segment) -> str:
    """A segment of the engine's output without its ``---`` line."""
    text = segment.text
    return text[text.index("\n") + 1 :] if text.startswith("---") else text


def _results_lines(results: list[dict[str, Any]]) -> str:
    if not results:
        return "results: []\n"
    return "\n".join(splice.block_lines({"results": results})) + "\n"


def _results_edit(listed: _Listed, results: list[dict[str, Any]]) -> splice.Edit:
    """``results`` written where the old ones were, or at the end of the ResourceList."""
    text = listed.text
    new = _results_lines(results)
    for key, value in listed.root.value:
        if isinstance(key, ScalarNode) and key.value == "results":
            start = splice.line_start(text, key.start)
            end = splice.next_line_start(text, splice.content_end(value))
            return splice.Edit(start, end, new)
    end = splice.next_line_start(text, splice.content_end(listed.root))
    return splice.Edit(end, end, new if text.endswith("\n") or not text else "\n" + new)


def _finish(
    listed: _Listed, edits: list[splice.Edit], items: list[Any], results: list[dict[str, Any]]
) -> str | None:
    """The ResourceList with ``edits`` made and ``results`` written, when it reads back as
    the items and results planned (None: it does not, the round-trip path decides)."""
    text = splice.apply_edits(listed.text, [*edits, _results_edit(listed, results)])
    expected = {**listed.data, "results": results}
    if items or listed.items:  # else "items" stays as it was: absent, null or []
        expected["items"] = items
    return text if verify.verified(text, [expected]) else None


def _run_listed(
    listed: _Listed,
    make_request: Callable[[Mapping[str, Any] | None], Request],
    redact: Callable[[str], str],
) -> Outcome | None:
    """:func:`run` on a ResourceList read as text (None: the round-trip path decides)."""
    data = listed.data
    try:
        request = make_request(profile_object(data.get("functionConfig")))
        joined = "".join("---\n" + item.doc for item in listed.items)
        result = engine.process(joined, request)
        segments = [s for s in stream.split(joined) if s.has_content()]
        if len(segments) != len(listed.items):
            return None
        dropped = []
        for segment in segments:
            found = generated.earlier(segment)
            dropped.append(found is not None and generated.makes(request, found))
        kept = [item for item, gone in zip(listed.items, dropped, strict=True) if not gone]
        outs = [s for s in stream.split(result.text) if s.has_content()]
        if len(outs) < len(kept) or any(_generated(item.data) for item in kept[len(outs) :]):
            raise InputError(f"{len(kept)} items came in but a different number came out")
        edits, items = _changed_items(listed, kept, outs[: len(kept)])
        edits += [
            splice.Edit(item.start, item.end, "")
            for item, gone in zip(listed.items, dropped, strict=True)
            if gone
        ]
        made = _made_items(listed, outs[len(kept) :])
        if made and listed.after_items is None:
            return None
        if made:
            at = listed.after_items
            assert at is not None
            edits.append(splice.Edit(at, at, "".join(_indented(t, listed.dash) for t, _ in made)))
            items += [d for _, d in made]
    except ProxyPostrenderError as exc:
        error = [{"message": redact(str(exc)), "severity": "error"}]
        text = _finish(listed, [], [item.data for item in listed.items], error)
        return None if text is None else Outcome(text, error=exc)
    results = [{**r, "message": redact(r["message"])} for r in _results(result)]
    text = _finish(listed, edits, items, results)
    return None if text is None else Outcome(text, results=results, result=result)


def _changed_items(
    listed: _Listed, kept: list[_Item], outs: list[stream.Segment]
) -> tuple[list[splice.Edit], list[Any]]:
    """Edits that put each changed item back in its place; the data of every item."""
    from proxy_postrender.yamltext import libyaml

    edits: list[splice.Edit] = []
    items: list[Any] = []
    for item, out in zip(kept, outs, strict=True):
        doc = _body(out)
        if doc == item.doc:
            items.append(item.data)
            continue
        dash = listed.text[item.start : item.start + item.column]
        edits.append(splice.Edit(item.start, item.end, _indented(doc, dash)))
        items.extend(libyaml.load_data(doc, max_nodes=None))
    return edits, items


def _made_items(listed: _Listed, outs: list[stream.Segment]) -> list[tuple[str, Any]]:
    """The objects the run made, as item texts with their data: a re-made one keeps the
    file kpt had the old one in (its path annotations)."""
    from proxy_postrender.yamltext import libyaml

    before = [item.data for item in listed.items]
    made: list[tuple[str, Any]] = []
    for out in outs:
        (doc,) = libyaml.load_data(_body(out))
        _restore_paths(before, [doc])
        made.append(("\n".join(splice.block_lines(doc)) + "\n", doc))
    return made


def _generated(item: Any) -> bool:
    """A Secret or ConfigMap the tool emitted (made anew on every run)."""
    return generated.generated_by(item) is not None


def _key(item: Any) -> tuple[str, str]:
    metadata = item.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def _restore_paths(before: list[Any], after: list[Any]) -> None:
    """A re-emitted Secret keeps the file kpt had it in (its path annotations)."""
    old = {_key(item): item for item in before if _generated(item)}
    for item in after:
        previous = old.get(_key(item)) if _generated(item) else None
        if previous is None:
            continue
        annotations = item["metadata"]["annotations"]
        for key, value in previous["metadata"]["annotations"].items():
            if key.startswith(("config.kubernetes.io/", "internal.config.kubernetes.io/")):
                annotations.setdefault(key, value)


def _dump(yaml: Any, data: Any) -> str:
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue()
