"""Flow collections (JSON, ``{a: b}``) are spliced like block ones: new entries after
the last one in the collection's own layout, deletions with their separator, values
replaced in place; never the round-trip dump, whose time and memory per node made a
flow document of a few MiB cost minutes and gigabytes (finding 6 of the review)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.request import Request
from proxy_postrender.yamltext import libyaml, splice
from proxy_postrender.yamltext.ops import (
    AddKey,
    AppendItems,
    DeleteItem,
    DeleteKey,
    InsertItems,
    Op,
    SetValue,
)
from tests.e2e import PROXY_VARS
from tests.helpers import SHARED_PROFILE, run_cli
from tests.test_properties import ENV, REMOVE, REQUEST


def _edit(text: str, ops: list[Op]) -> str:
    (node, _), *_ = libyaml.compose(text)
    edits = splice.edits_for(text, node, ops, splice.Style(), "\n")
    return splice.apply_edits(text, edits)


@pytest.mark.parametrize(
    ("text", "ops", "expected"),
    [
        ("a: [1, 2, 3]\n", [AppendItems(("a",), ("x", "y"))], 'a: [1, 2, 3, x, "y"]\n'),
        ("a: [1,2]\n", [AppendItems(("a",), ("x",))], "a: [1,2,x]\n"),
        ("a: [1]\n", [InsertItems(("a",), ("x",))], "a: [x, 1]\n"),
        ("a: [1, 2, 3, 4]\n", [DeleteItem(("a", 1)), DeleteItem(("a", 2))], "a: [1, 4]\n"),
        ("a: [1, 2, 3, 4]\n", [DeleteItem(("a", 2)), DeleteItem(("a", 3))], "a: [1, 2]\n"),
        ("a: [1, 2, 3]\n", [DeleteItem(("a", 0))], "a: [2, 3]\n"),
        (
            "a: [1, 2]\n",
            [DeleteItem(("a", 0)), DeleteItem(("a", 1)), AppendItems(("a",), ("x",))],
            "a: [x]\n",
        ),
        ("a: [1, 2]\n", [DeleteItem(("a", 1)), AppendItems(("a",), ("x",))], "a: [1, x]\n"),
        ("a: {b: 1}\n", [AddKey(("a",), "c", {"d": True})], "a: {b: 1, c: {d: true}}\n"),
        ("a: {b: 1, c: 2}\n", [DeleteKey(("a", "b"))], "a: {c: 2}\n"),
        ("a: {b: 1, c: 2}\n", [DeleteKey(("a", "c"))], "a: {b: 1}\n"),
        ("a: {b: 1}\n", [SetValue(("a", "b"), "x,y")], 'a: {b: "x,y"}\n'),
        ("a: {b: []}\n", [SetValue(("a", "b"), [{"k": "v"}])], "a: {b: [{k: v}]}\n"),
        ("a: {b: null}\n", [SetValue(("a", "b"), {"k": "v"})], "a: {b: {k: v}}\n"),
        ("a: {b: {k: v}}\n", [SetValue(("a", "b"), None)], "a: {b: null}\n"),
        ("a: {b: [1]}\n", [SetValue(("a", "b"), [])], "a: {b: []}\n"),
        ("a: {}\n", [], "a: {}\n"),
        # JSON: strings double-quoted, the key too
        ('{"a": [1]}\n', [AppendItems(("a",), ({"n": "x"},))], '{"a": [1, {"n": "x"}]}\n'),
        ('{"a": {}}\n', [SetValue(("a",), {"k": "v"})], '{"a": {"k": "v"}}\n'),
        # an entry on a line of its own: so is the new one, indented alike
        (
            "a: [\n    1,\n    2\n  ]\n",
            [AppendItems(("a",), (3,))],
            "a: [\n    1,\n    2,\n    3\n  ]\n",
        ),
        ("a: [\n    1\n  ]\n", [InsertItems(("a",), (0,))], "a: [\n    0,\n    1\n  ]\n"),
        ("a: [\n  1,\n  2\n]\n", [DeleteItem(("a", 1))], "a: [\n  1\n]\n"),
        # a comment between entries goes with the entry deleted before it
        ("a: [1, # one\n  2, 3]\n", [DeleteItem(("a", 0))], "a: [2, 3]\n"),
    ],
)
def test_flow_edits(text: str, ops: list[Op], expected: str) -> None:
    assert _edit(text, ops) == expected


@pytest.mark.parametrize(
    ("text", "op"),
    [
        ("a: [1, 2 # last\n]\n", AppendItems(("a",), ("x",))),  # the comment would move
        ("a: [b: c]\n", AddKey(("a", 0), "d", "e")),  # a single-pair mapping: no braces
        ("a: {b: , c: 1}\n", DeleteKey(("a", "c"))),  # an empty value has no end of its own
    ],
)
def test_flow_layouts_not_spliced(text: str, op: Op) -> None:
    with pytest.raises(splice.Unsupported):
        _edit(text, [op])


def test_a_json_deployment_is_spliced_idempotent_and_removed_exactly() -> None:
    text = json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "annotations": {"a": "b"}},
            "spec": {"template": {"spec": {"containers": [{"name": "app", "env": []}]}}},
        },
        indent=2,
    )
    text = text.replace('"env": []', '"env": [{"name": "X", "value": "1"}]') + "\n"
    proc = run_cli([str(SHARED_PROFILE), "--report"], text.encode())
    assert proc.returncode == 0, proc.stderr
    assert b"via round-trip dump" not in proc.stderr
    out = proc.stdout
    data = json.loads(out)  # still JSON
    env = data["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["X", *PROXY_VARS]
    assert run_cli([str(SHARED_PROFILE)], out).stdout == out
    assert run_cli([str(SHARED_PROFILE), "--remove"], out).stdout == text.encode()


def _never(*_: Any) -> str:
    raise AssertionError("the round-trip dump ran")


def test_a_flow_document_of_many_containers_never_takes_the_round_trip_dump(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The work is counted, not timed: one read, one splice, one read back."""
    containers = [
        {"name": f"c{i}", "image": "x", "env": [{"name": "A", "value": "1"}]} for i in range(300)
    ]
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "big"},
        "spec": {"template": {"spec": {"containers": containers}}},
    }
    text = json.dumps(doc) + "\n"
    monkeypatch.setattr(libyaml, "roundtrip", _never)
    reads: list[int] = []
    real = libyaml._Events.read

    def counted(self: Any, loader: Any) -> Any:
        reads.append(1)
        return real(self, loader)

    monkeypatch.setattr(libyaml._Events, "read", counted)
    out = engine.process(text, REQUEST).text
    assert len(reads) == 2  # the input, and the spliced text read back
    assert engine.process(out, REQUEST).text == out
    assert engine.process(out, REMOVE).text == text


def test_a_document_the_splicer_refuses_is_dumped_only_up_to_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The round-trip dump costs some 80 microseconds and a kilobyte per node."""
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
        "spec:\n  containers: [{name: a  # the comment stops the splice\n  }]\n"
        "  x: [" + ", ".join(["0"] * 60) + "]\n"
    )
    assert "HTTP_PROXY" in engine.process(text, REQUEST).text  # dumped: under the bound
    monkeypatch.setattr(libyaml, "ROUNDTRIP_MAX_NODES", 50)
    with pytest.raises(InputError, match="round-trip dump takes documents of at most 50 nodes"):
        engine.process(text, REQUEST)


# -- property: any flow layout of a workload -------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
VALUES = st.text(
    st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_categories=["Cc"]),
    max_size=12,
)


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
    containers = []
    for name in names:
        container: dict[str, Any] = {"name": name, "image": draw(VALUES)}
        env = draw(
            st.lists(
                st.sampled_from(["A", "HTTP_PROXY", "no_proxy", "B"]).map(
                    lambda var: {"name": var, "value": "v"}
                ),
                max_size=3,
                unique_by=lambda item: item["name"],
            )
        )
        keep_empty: bool = draw(st.booleans())
        if env or keep_empty:
            container["env"] = env
        containers.append(container)
    metadata: dict[str, Any] = {"name": draw(NAMES)}
    if draw(st.booleans()):
        metadata["annotations"] = {"k": draw(VALUES)}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {"template": {"spec": {"containers": containers}}},
    }


def _flow_yaml(value: Any, spacing: str) -> str:
    """Flow YAML with plain keys and single-quoted strings (not JSON)."""
    if isinstance(value, dict):
        pairs = [f"{k}: {_flow_yaml(v, spacing)}" for k, v in value.items()]
        return "{" + spacing.join(pairs) + "}"
    if isinstance(value, list):
        return "[" + spacing.join(_flow_yaml(v, spacing) for v in value) + "]"
    return "'" + str(value).replace("'", "''") + "'"


@st.composite
def flow_documents(draw: st.DrawFn) -> str:
    doc = draw(workloads())
    style = draw(st.sampled_from(["json", "json-indented", "flow", "flow-in-block"]))
    if style == "json":
        return json.dumps(doc, separators=draw(st.sampled_from([(", ", ": "), (",", ":")]))) + "\n"
    if style == "json-indented":
        return json.dumps(doc, indent=draw(st.integers(1, 4))) + "\n"
    spacing = draw(st.sampled_from([", ", ","]))
    if style == "flow":
        return _flow_yaml(doc, spacing) + "\n"
    lines = [f"{key}: {_flow_yaml(value, spacing)}" for key, value in doc.items()]
    return "\n".join(lines) + "\n"


OTHER = Request(env=(ENV[0], ("no_proxy", "x")))  # a changed profile: fewer variables


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flow_documents())
def test_flow_documents_keep_every_invariant(text: str) -> None:
    """Spliced (never dumped), idempotent, undone exactly, and re-run with a changed
    profile (entries deleted from the middle, values replaced) as from the input."""
    monkey = pytest.MonkeyPatch()
    monkey.setattr(libyaml, "roundtrip", _never)
    try:
        out = engine.process(text, REQUEST).text
        assert engine.process(out, REQUEST).text == out
        removed = engine.process(out, REMOVE).text
        assert removed == text  # "env: []" included: the record keeps it
        changed = engine.process(out, OTHER).text
        assert libyaml.load_data(changed) == libyaml.load_data(engine.process(text, OTHER).text)
        assert engine.process(changed, OTHER).text == changed
        assert engine.process(changed, REMOVE).text == removed
    finally:
        monkey.undo()
