"""libyaml's reader: documents built from parse events against the composer and
constructor (the same nodes and data), and the bounds on nesting and nodes that every
reader keeps (SPEC 5.4: a one-line error, never minutes of work or a crash)."""

from __future__ import annotations

import io
import sys
import warnings
from typing import Any

import pytest
from hypothesis import given

from proxy_postrender.yamltext import blockread, libyaml, read, stream
from proxy_postrender.yamltext.errors import MAX_DEPTH, LimitError, ParseError
from proxy_postrender.yamltext.splice import Style
from tests.test_blockread import CASES, _inputs, _same, _shape, mutated_segment
from tests.test_fuzz import FUZZ_SETTINGS

FLOW_CASES = [
    '{"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "a"}]}}\n',
    '{\n  "a": [\n    1,\n    "x"\n  ],\n  "b": {"c": null, "d": true, "e": 1.5}\n}\n',
    "a: [1, 1e3, 2E-5, 0x1f, 0o17, .inf, -.nan, 2024-01-02, ~, '', \"\"]\n",
    "a: {b: [c, {d: e}], 'f': \"g\"}\nh: |\n  lit\n\ni: >-\n  folded\n  text\n",
    "a: 'multi\n  line'\nb: \"x\\\n  y\"\nc: plain\n  continued\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: &x [1]\nb: *x\n",
    "<<: {a: 1}\nb: 2\n",
    "a: !!str 1\nb: !Ref c\n",
    "? [a]\n: b\n",
    "a: 1\na: 2\n",
    "1: a\ntrue: b\nnull: c\n1.5: d\n",
    "a: 1\n...\n---\nb: 2\n",
    "- a\n- b: [c]\n",
    "a: 2024-02-30\n",
    "a: [b, c\n",
]


def check_events(text: str) -> None:
    """The event reader gives what the composer gives, or the same kind of error."""
    try:
        full = libyaml.compose_full(text)
    except ParseError:
        # refused either way (past the nesting bound the event reader may say so first)
        with pytest.raises(ParseError):
            libyaml.compose(text)
        return
    docs = libyaml.compose(text)
    assert len(docs) == len(full), text
    for (node, data), (full_node, full_data) in zip(docs, full, strict=True):
        assert _same(data, full_data), f"data differs:\n{text}\n{data!r}\n{full_data!r}"
        assert _shape(node, text) == _shape(full_node, text), f"nodes differ:\n{text}"
        assert (node.start, node.end) == (full_node.start, full_node.end), text
    assert [d for _, d in docs] == libyaml.load_data(text)


@pytest.mark.parametrize(("name", "text"), _inputs(), ids=[name for name, _ in _inputs()])
def test_fixtures_read_from_events_as_composed(name: str, text: str) -> None:
    for segment in stream.split(text):
        if segment.has_content():
            check_events(segment.text)


@pytest.mark.parametrize("text", CASES + FLOW_CASES)
def test_hand_picked_cases_read_from_events_as_composed(text: str) -> None:
    check_events(text)


SEEDS = [text for _, text in _inputs()] + CASES + FLOW_CASES


@FUZZ_SETTINGS
@given(mutated_segment(SEEDS))
def test_mutated_segments_read_from_events_as_composed(text: str) -> None:
    check_events(text)


def _nested(depth: int, form: str) -> str:
    """A mapping whose key ``x`` holds collections down to ``depth`` levels in all."""
    inner = depth - 1  # the root mapping is the first level
    if form == "flow":
        return "x: " + "[" * inner + "]" * inner + "\n"
    if form == "block":
        lines = ["  " * level + "k:" for level in range(inner - 1)]
        return "x:\n" + "".join("  " + line + "\n" for line in lines) + "  " * inner + "v: 1\n"
    # block sequences, one dash a line
    lines = ["  " * level + "-" for level in range(inner - 1)]
    return "x:\n" + "".join("  " + line + "\n" for line in lines) + "  " * inner + "- 1\n"


@pytest.mark.parametrize("form", ["flow", "block", "sequence"])
def test_nesting_is_read_to_the_bound_and_refused_past_it(form: str) -> None:
    deepest = _nested(MAX_DEPTH, form)
    assert read.nodes_and_data(deepest)
    assert libyaml.load_data(deepest) == [d for _, d in read.nodes_and_data(deepest)]
    with pytest.raises(LimitError, match=f"nested too deeply \\(more than {MAX_DEPTH} levels"):
        read.nodes_and_data(_nested(MAX_DEPTH + 1, form))


def test_the_block_reader_declines_past_the_nesting_bound() -> None:
    """The fast reader keeps the bound too (libyaml's reader then refuses the text)."""
    blockread.read(_nested(MAX_DEPTH, "block"))
    with pytest.raises(blockread.Declined, match="nested too deeply"):
        blockread.read(_nested(MAX_DEPTH + 1, "block"))
    with pytest.raises(blockread.Declined, match="nested too deeply"):
        blockread.read(_nested(MAX_DEPTH + 1, "flow"))


def test_nesting_deeper_than_the_c_composer_survives_is_refused() -> None:
    """libyaml's composer recurses in C: 50 000 levels crashed the process (a segfault,
    no message); the event reader refuses before it composes anything."""
    text = '{"kind": "ConfigMap", "x": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}\n"
    with pytest.raises(LimitError, match="nested too deeply"):
        libyaml.compose(text)
    with pytest.raises(LimitError, match="nested too deeply"):
        libyaml.check(text)


def test_an_anchored_document_is_bounded_before_the_composer_sees_it() -> None:
    text = "a: &x 1\nb: *x\n" + _nested(MAX_DEPTH + 1, "flow")
    with pytest.raises(LimitError, match="nested too deeply"):
        libyaml.compose(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: [" + ", ".join(["0"] * 98) + "]\n",  # 1 + 1 + 1 + 98 = 101 nodes
        "a: &x [" + ", ".join(["0"] * 48) + "]\nb: *x\n",  # 1 + 1 + 49 + 1 + 49: expanded
    ],
)
def test_the_node_bound_is_exact(text: str) -> None:
    """Keys, values, lists and mappings count; an alias counts what it repeats."""
    limit = 100
    with pytest.raises(LimitError, match=f"more than {limit} nodes"):
        libyaml.compose(text, max_nodes=limit)
    assert libyaml.compose(text, max_nodes=limit + 1)
    assert libyaml.load_data(text, max_nodes=None)


def test_the_block_reader_is_held_to_the_node_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "a:\n" + "".join(f"- {i}\n" for i in range(200))
    monkeypatch.setattr(read, "MAX_NODES", 150)
    with pytest.raises(LimitError, match="more than 150 nodes"):
        read.nodes_and_data(text)
    assert read.load_documents(text) is None
    assert read.load_documents(text, spliced=True) is not None  # the output is not bounded


def test_a_float_without_a_dot_reads_exactly_and_silently(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """ruamel.yaml warns on stderr, quoting the input, about YAML 1.1 floats such as 1e3."""
    text = "a: 1e3\nb: [2E-5, -1e+2]\nc: &x 3e1\nd: *x\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would fail the test
        for reader in (libyaml.compose, libyaml.compose_full):
            (data,) = [d for _, d in reader(text)]
            assert data == {"a": 1000.0, "b": [2e-05, -100.0], "c": 30.0, "d": 30.0}
        assert blockread.resolve_plain("7e2") == 700.0
        dumped = libyaml.roundtrip(text, [[]], Style(), "\n")
        assert libyaml.load_data(dumped) == libyaml.load_data(text)
    assert capfd.readouterr().err == ""


def test_check_refuses_a_recursive_alias_that_the_round_trip_reader_takes() -> None:
    text = "items:\n- kind: ConfigMap\n  data: &a [*a]\n"
    with pytest.raises(ParseError, match="recursive alias"):
        libyaml.check(text)
    libyaml.check("items:\n- kind: ConfigMap\n  data: &a [1]\n  more: *a\n")


def _printed(data: Any) -> str:
    out = io.StringIO()
    print(data, file=out)
    return out.getvalue()


def test_the_event_reader_builds_no_shared_data() -> None:
    """Without aliases nothing is shared; with them the composer's copy is unshared too."""
    for text in ("a: [1]\nb: [1]\n", "a: &x [1]\nb: *x\n"):
        (data,) = libyaml.load_data(text)
        assert data["a"] is not data["b"], _printed(data)
    assert sys.getrecursionlimit() >= 1000  # the bound leaves room below Python's limit
