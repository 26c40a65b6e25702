"""Fields set inside a document held as text in a string field (``spec.targets[].embedded``).

The document is read from the field (``encoding: base64`` decoded first; strictly: a
value whose encoding would not come back the same is refused), planned by the field
setter as if it were an object of its own (fields/setters.py), changed by splicing its
text (comments, key order and quoting kept; a multi-document text such as ytt's
``#@data/values`` then ``---`` keeps its other documents), checked by reading the new
text back, and encoded again into the field. What the tool set is recorded on the
outer object, each entry ``FIELD>PATH`` (``data.kubeconfig>clusters.0.cluster.
proxy-url``), so that a re-run changes nothing and ``--remove`` gives the outer
document back byte for byte. The document the fields go into is the first of the text
that is a mapping.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import InputError
from proxy_postrender.fields.setters import (
    ANNOTATION,
    FieldPlan,
    FieldSettings,
    dotted_path,
    plan_fields,
    values,
)
from proxy_postrender.objects import Path
from proxy_postrender.record import Record
from proxy_postrender.yamltext.ops import SetValue

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.noproxy.environments import ObjectEnv
    from proxy_postrender.targets import Target
    from proxy_postrender.yamltext.tree import Node

SEPARATOR = ">"  # between the string field and the path inside it, in a record entry


def plan(
    obj: Mapping[str, Any],
    base: Path,
    target: Target,
    found: ObjectEnv,
    settings: FieldSettings,
) -> FieldPlan:
    """The plan that sets ``target.fields`` inside the document of ``target.embedded``."""
    available, on_conflict = values(found.env, settings.ca_pem), settings.on_conflict
    embedded = target.embedded
    assert embedded is not None
    where = dotted_path(embedded.path)
    prefix = where + SEPARATOR
    recorded = Record.read(obj, ANNOTATION)
    mine = [e[len(prefix) :] for e in recorded.entries if e.startswith(prefix)]
    others = [e for e in recorded.entries if not e.startswith(prefix)]
    held = _held(obj, embedded.path)
    if held is None:
        if available and not mine:
            raise InputError(f"{where} holds no document (the target's embedded.path)")
        return FieldPlan()
    text = decode(held, embedded.encoding, where)
    docs = _documents(text, embedded.format, where, shown=embedded.encoding == "none")
    number = next((i for i, (_, data) in enumerate(docs) if isinstance(data, Mapping)), None)
    if number is None:
        raise InputError(f"the document in {where} holds no mapping to set fields in")
    data = docs[number][1]
    inner, entries = plan_fields(data, (), target.fields, available, on_conflict, mine)
    result = FieldPlan(set=_at(where, inner.set), kept=_at(where, inner.kept))
    result.removed = _at(where, inner.removed)
    if inner.ops:
        new_text = rewrite(text, docs, number, inner.ops, where, json=embedded.format == "json")
        new_value = encode(new_text, embedded.encoding)
        # in the quoting the chart gave the field (the value is the chart's, changed)
        result.ops.append(SetValue((*base, *embedded.path), new_value, like=True))
    result.ops += recorded.ops(obj, base, others + [prefix + e for e in entries])
    result.notes += [target.note] if target.note else []
    return result


def _at(where: str, paths: list[str]) -> list[str]:
    return [f"{where}{SEPARATOR}{path}" for path in paths]


def _held(obj: Mapping[str, Any], path: Path) -> str | None:
    node: Any = obj
    for step in path:
        node = node.get(step) if isinstance(node, Mapping) and isinstance(step, str) else None
    if node is not None and not isinstance(node, str):
        raise InputError(f"{'.'.join(map(str, path))} is not a string (the embedded.path)")
    return node


def decode(value: str, encoding: str, where: str) -> str:
    """The text of the document; base64 strictly (it must come back the same)."""
    if encoding != "base64":
        return value
    import base64  # lazy: only encoded documents
    import binascii

    try:
        raw = base64.b64decode(value, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise InputError(f"{where} is not base64 of UTF-8 text") from None
    if base64.b64encode(raw).decode("ascii") != value:
        raise InputError(
            f"{where} is base64 in a form the tool would not write back the same (line "
            "breaks, no padding): give it as one unbroken line"
        )
    return text


def encode(text: str, encoding: str) -> str:
    if encoding != "base64":
        return text
    import base64  # lazy: only encoded documents

    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _documents(text: str, form: str, where: str, *, shown: bool) -> list[tuple[Node, Any]]:
    """The documents of ``text``; an error when it is no YAML. ``shown``: the text is in
    the input as it is; else (decoded from base64) the error says where, not what (a
    reader's message quotes values: a token of a kubeconfig would reach the logs in
    clear)."""
    from proxy_postrender.yamltext.errors import LimitError, ParseError
    from proxy_postrender.yamltext.read import nodes_and_data

    try:
        return nodes_and_data(text)
    except (ParseError, LimitError) as exc:
        why = str(exc)
        if not shown and not isinstance(exc, LimitError):
            line = (
                "" if exc.offset is None else f" at line {text.count(chr(10), 0, exc.offset) + 1}"
            )
            why = f"a syntax error{line} of the decoded text (not shown: it may hold credentials)"
        raise InputError(f"the document in {where} is not valid {form}: {why}") from None


def rewrite(
    text: str,
    docs: list[tuple[Node, Any]],
    number: int,
    ops: list[Any],
    where: str,
    *,
    json: bool = False,
) -> str:
    """``text`` (its documents ``docs``) with ``ops`` made in document ``number``,
    spliced, and read back to check that it holds what the ops mean and nothing else
    changed (``json``: a JSON text, whose new entries are written as JSON, and which
    must read back as JSON)."""
    import copy

    from proxy_postrender.yamltext import ops as yaml_ops
    from proxy_postrender.yamltext import splice
    from proxy_postrender.yamltext.read import nodes_and_data

    newline = "\r\n" if "\r\n" in text else "\n"
    node = docs[number][0]
    try:
        style = splice.detect_style(text, node)
        edits = splice.edits_for(text, node, ops, style, newline, [], json=json)
        new_text = splice.apply_edits(text, edits)
    except splice.Unsupported as exc:
        raise InputError(f"could not change the document in {where} ({exc})") from None
    expected = copy.deepcopy([d for _, d in docs])  # (the plan only read them)
    yaml_ops.apply(expected[number], ops)
    if [d for _, d in nodes_and_data(new_text)] != expected or (
        json and not _json_reads(new_text, expected[number])
    ):
        raise InputError(f"could not change the document in {where} without altering other content")
    return new_text


def _json_reads(text: str, expected: Any) -> bool:
    """Whether ``text`` is JSON that holds ``expected``."""
    import json  # lazy: only JSON documents

    try:
        return bool(json.loads(text) == expected)
    except ValueError:
        return False
