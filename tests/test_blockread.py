"""The fast block reader against libyaml: whatever it accepts, it reads exactly as the
full path does (data, node kinds, offsets), and whatever libyaml refuses, it declines."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proxy_postrender.yamltext import blockread, libyaml, stream, tree
from proxy_postrender.yamltext.errors import ParseError
from proxy_postrender.yamltext.loader import scalar_loader
from tests.golden import load_cases
from tests.helpers import FIXTURES
from tests.test_fuzz import FUZZ_SETTINGS, mutate

BAD_INPUTS = Path(__file__).resolve().parent / "bad_inputs"


def _shape(node: tree.Node, text: str) -> Any:
    """What the splicer relies on: kinds, block or flow, values, starts, scalar ends."""
    if isinstance(node, tree.MappingNode):
        pairs = [(_shape(k, text), _shape(v, text)) for k, v in node.value]
        return ("map", node.block, node.start, pairs)
    if isinstance(node, tree.SequenceNode):
        return ("seq", node.block, node.start, [_shape(v, text) for v in node.value])
    assert isinstance(node, tree.ScalarNode)
    return ("scalar", node.value, node.style, node.null, node.start, node.end)


def _same(a: Any, b: Any) -> bool:
    """Data equality in which NaN equals NaN and types must match (1 is not True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def check_segment(text: str) -> bool:
    """Compare the two readers on one segment; return whether the fast one accepted it."""
    try:
        node, data = blockread.read(text)
    except blockread.Declined:
        return False
    try:
        docs = libyaml.compose(text)
    except ParseError as exc:
        raise AssertionError(f"accepted what libyaml refuses ({exc.problem}):\n{text}") from None
    assert len(docs) == 1, text
    full_node, full_data = docs[0]
    assert _same(data, full_data), f"data differs:\n{text}\n{data!r}\n{full_data!r}"
    assert _shape(node, text) == _shape(full_node, text), f"nodes differ:\n{text}"
    return True


def _inputs() -> list[tuple[str, str]]:
    found = [
        (case.name, case.input.decode("utf-8-sig", "surrogateescape")) for case in load_cases()
    ]
    found += [
        (path.name, path.read_bytes().decode("utf-8", "surrogateescape"))
        for path in sorted(BAD_INPUTS.glob("*.yaml"))
    ]
    found.append(("demo", (FIXTURES / "demo" / "rendered.yaml").read_text()))
    return found


@pytest.mark.parametrize(("name", "text"), _inputs(), ids=[name for name, _ in _inputs()])
def test_fixtures_read_exactly_or_declined(name: str, text: str) -> None:
    for segment in stream.split(text):
        if segment.has_content():
            check_segment(segment.text)


def test_the_demo_render_is_read_without_the_full_parser() -> None:
    """The common layout is inside the subset: every document of a real Helm render."""
    text = (FIXTURES / "demo" / "rendered.yaml").read_text()
    segments = [s for s in stream.split(text) if s.has_content()]
    assert segments
    assert all(check_segment(s.text) for s in segments)


CASES = [
    "a: 1\nb: [x, 'y', \"z\"]\nc: {d: e, f: [1, 2]}\n",
    "a:\n- 1\n-   b: c\n    d: e\n- [x]\n",
    "a: |\n  x\n\n  y\n\nb: |-\n    z\nc: |+\n  k\n\n",
    "a: >\n  x\n  y\nb: >-\n  z\n",
    "a:   # c\n  b: c   # c\n  # c\n  d:\n  e: ~\n",
    "'a b': \"c\\td\\u00e9\"\n\"k\": 'it''s'\n",
    "a: 1.5\nb: 0x1f\nc: true\nd: 2024-01-02\ne: .inf\nf: -3\ng: +4\nh: 0o17\n",
    "a: - b\n",
    "a: b: c\n",
    "a: 'b\n  c'\n",
    "a: [b,\n  c]\n",
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "<<: {a: 1}\n",
    "a: 1\na: 2\n",
    "a:\n  b\n  c\n",
    "a: b\n  c\n",
    "a:\n  - b\n  c: d\n",
    "? a\n: b\n",
    'a: "\\q"\n',
    "a: [b, , c]\n",
    "a: {b}\n",
    "a: [b: c]\n",
    "a: 2024-02-30\n",
    "a: |2\n   x\n",
    "a: |\n  x\n b: c\n",
    "---\na: 1\n",
    "# Source: x\n---\n# c\na: 1\n...\n",
    "a:\n-\n- b\n",
    "a: 'x' y\n",
    "a: [x] y\n",
    "a: {b: [c, {d: e}], 'f': \"g\"}\n",
    "a: x #c\nb: x#c\nc: -x\nd: :x\ne: ?x\n",
    "a: {?b: c}\n",  # found by fuzzing: flow plain scalars starting with '?' or ':'
    "a: {:b: c}\n",
    "a: [?b, :c, -d]\n",
    # issue 21: flow collections as block sequence items, values on the line after a key
    'a:\n- {name: A, value: "1"}\n- {name: B, valueFrom: {fieldRef: {fieldPath: x}}}\n',
    "a:\n  - [x, y]   # c\n  - []\n  - {}\n  -   {b: c}\n",
    "a:\n  {}\nb:\n    []  # none\nc:\n  # later\n  {d: 1}\n",
    "a:\n  - b: 1\n    c:\n      {}\n  -\n    [x]\n",
    "a:\n  \"x\"\nb:\n  'y'\nc:\n  z   # c\nd:\n  ~\ne:\n  7\n",
]

# Shapes around the new ones that must still be declined, or refused by libyaml (then
# declined here too): a flow collection used as a key, text after it, a collection
# that continues on the next line, a value on the next line that continues, a block
# scalar header on the next line, a value at its key's indentation.
HARD_CASES = [
    "a:\n- {b: c}: d\n",
    "a:\n- [b]: c\n",
    "a:\n- {b: c} d\n",
    "a:\n- {b: c,\n   d: e}\n",
    "a:\n- [b,\n  c]\n",
    "a:\n  {b: c}\n  d: e\n",
    "a:\n  x\n  y\n",
    "a:\n  x\n    y\n",
    "a:\n  |\n  x\n",
    "a:\n  >-\n    x\n",
    "a:\n{}\n",
    "a:\n  &x {}\n",
    "a:\n  !!map {}\n",
    "a:\n  *x\n",
    "a:\n  - {b: c}\n  {d: e}\n",
    "a:\n  x: y\n  {}\n",
    "- {a: b}\n",
    "{a: b}\n",
    "a:\n  'x'\n  'y'\n",
    "a:\n  [x] # c\n   y\n",
    "a:\n- {b: [c, {d: e]}\n",
]


@pytest.mark.parametrize("text", CASES)
def test_hand_picked_cases(text: str) -> None:
    check_segment(text)


def test_hand_picked_common_cases_are_read() -> None:
    for text in CASES[:7]:
        assert check_segment(text), text


NEW_SHAPES = [text for text in CASES if "{name: A" in text or "[x, y]" in text] + [
    text for text in CASES if text.startswith(("a:\n  {}", "a:\n  - b: 1", 'a:\n  "x"'))
]


def test_flow_items_and_values_on_the_next_line_are_read() -> None:
    """Issue 21: charts write env and ports as "- {name: A, value: "1"}", and Helm's
    toYaml with nindent writes an empty map on the line after its key."""
    assert len(NEW_SHAPES) == 5
    for text in NEW_SHAPES:
        assert check_segment(text), text


@pytest.mark.parametrize("text", HARD_CASES)
def test_hard_shapes_next_to_the_new_ones_are_declined(text: str) -> None:
    with pytest.raises(blockread.Declined) as declined:
        blockread.read(text)
    assert declined.value.reason
    check_segment(text)  # and never read otherwise than libyaml reads it


def test_declined_says_why() -> None:
    for text, reason in [
        ("a:\n- {b: c}: d\n", "text after a value"),
        ('{"a": 1}\n', "a flow collection at the root (JSON)"),
        ("a:\n  x\n  y\n", "indentation"),
        ("a: &x 1\n", "value starts with '&'"),
    ]:
        with pytest.raises(blockread.Declined) as declined:
            blockread.read(text)
        assert declined.value.reason == reason, text


def test_a_flow_item_keeps_the_positions_libyaml_gives() -> None:
    text = 'a:\n  - {name: A, value: "1"}  # c\n'
    node, data = blockread.read(text)
    assert data == {"a": [{"name": "A", "value": "1"}]}
    assert isinstance(node, tree.MappingNode)
    items = node.value[0][1]
    assert isinstance(items, tree.SequenceNode) and items.block
    item = items.value[0]
    assert isinstance(item, tree.MappingNode) and not item.block
    assert (item.start, item.end) == (text.index("{"), text.index("}") + 1)
    check_segment(text)


# Documents in the shapes issue 21 added, built from parts: flow collections as items
# and values (one line), values on the line after their key, comments, at several
# indentations. The fast reader must read each exactly as libyaml does; the well-formed
# ones (all but the "odd" parts) it must read at all.
FLOW_SCALARS = ["x", "'q y'", '"d\\tz"', "1", "true", "~", "-x", "a b", "1.5", "256Mi", ""]
ODD_PARTS = ["{a: b}: c", "[a] x", "{a: b", "&x {}", "x\n{pad}  y", "|\n{pad}  z"]


@st.composite
def flow_text(draw: st.DrawFn, depth: int = 0) -> str:
    if depth < 2 and draw(st.booleans()):
        items = draw(st.lists(flow_text(depth + 1), max_size=3))
        if draw(st.booleans()):
            return "[" + ", ".join(items) + "]"
        keys = draw(st.lists(st.sampled_from("abcde"), max_size=len(items), unique=True))
        return "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, items, strict=False)) + "}"
    return draw(st.sampled_from([s for s in FLOW_SCALARS if s]))


@st.composite
def flow_shaped(draw: st.DrawFn) -> tuple[str, bool]:
    """(text, whether it holds an odd part)."""
    lines: list[str] = []
    odd = False
    pad = " " * draw(st.sampled_from([0, 2, 4]))
    lines.append("root:")
    for n in range(draw(st.integers(1, 4))):
        key = f"{pad}  k{n}:"
        shape = draw(st.sampled_from(["items", "next-line", "same-line", "odd"]))
        if shape == "items":
            lines.append(key)
            dash = pad + draw(st.sampled_from(["  ", "    ", ""]))
            if dash == pad and n > 0:
                dash += "  "
            for _ in range(draw(st.integers(1, 3))):
                lines.append(f"{dash}- {draw(flow_text())}")
                if draw(st.booleans()):
                    lines.append(f"{dash}  # comment")
        elif shape == "next-line":
            lines.append(key)
            if draw(st.booleans()):
                lines.append(f"{pad}    # comment")
            value = draw(st.one_of(flow_text(), st.sampled_from(FLOW_SCALARS[:6])))
            lines.append(f"{pad}    {value}" + draw(st.sampled_from(["", "  # c", " "])))
        elif shape == "same-line":
            lines.append(f"{key} {draw(flow_text())}")
        else:
            odd = True
            part = draw(st.sampled_from(ODD_PARTS)).replace("{pad}", pad + "  ")
            lines.append(f"{key}\n{pad}  - {part}" if draw(st.booleans()) else f"{key} {part}")
    return "\n".join(lines) + "\n", odd


@FUZZ_SETTINGS
@given(flow_shaped())
def test_flow_shaped_documents_read_as_libyaml_reads_them(found: tuple[str, bool]) -> None:
    text, odd = found
    try:
        libyaml.compose(text)
    except ParseError:
        valid = False
    else:
        valid = True
    accepted = check_segment(text)
    if valid and not odd:
        assert accepted, text


SEEDS = [text for _, text in _inputs()] + CASES + HARD_CASES


@st.composite
def mutated_segment(draw: st.DrawFn, seeds: list[str] = SEEDS) -> str:
    """One document of one of ``seeds``, mutated as the fuzz test mutates streams."""
    text = draw(st.sampled_from(seeds))
    segments = [s.text for s in stream.split(text) if s.has_content()]
    text = draw(st.sampled_from(segments)) if segments else text
    return mutate(draw, text)


@FUZZ_SETTINGS
@given(mutated_segment())
def test_mutated_segments_read_exactly_or_declined(text: str) -> None:
    check_segment(text)


def test_implicit_starts_match_the_loader() -> None:
    """Plain scalars starting elsewhere are strings for the full path's resolver too."""
    loader = scalar_loader()
    assert {k for k in loader.yaml_implicit_resolvers if k} == set(blockread.IMPLICIT_STARTS)


@pytest.mark.parametrize(
    "value",
    [
        "0",
        "-0",
        "7",
        "-12",
        "+4",
        "017",
        "0x1f",
        "0o17",
        "1_000",
        "1.5",
        "-.5",
        ".inf",
        "true",
        "True",
        "TRUE",
        "false",
        "FALSE",
        "tRue",
        "null",
        "Null",
        "NULL",
        "~",
        "nULL",
        "2024-01-02",
        "2024-01-02T10:00:00Z",
        "<<",
        "=",
        "yes",
        "no",
        "on",
        "1e3",
        "256Mi",
        "500m",
        "-",
        "0.0.1",
    ],
)
def test_plain_scalars_resolve_as_the_loader_does(value: str) -> None:
    text = f"a: {value}\n"
    try:
        _, data = blockread.read(text)
    except blockread.Declined:
        return
    assert _same(data, libyaml.load_data(text)[0])


@pytest.mark.parametrize(
    "value", ["256Mi", "500m", "1Gi", "0.5s", "3h", "1.2.3-rc1", "-x", "+y", "127.0.0.1", "1.2.3"]
)
def test_strings_that_start_like_numbers(value: str) -> None:
    _, data = blockread.read(f"a: {value}\n")
    assert _same(data, libyaml.load_data(f"a: {value}\n")[0])


# -- read_data: blocks remembered by their text ------------------------------------


def _read_or_declined(text: str) -> Any:
    try:
        return ("data", blockread.read(text)[1])
    except blockread.Declined:
        return ("declined", None)


def _read_data_or_declined(text: str) -> Any:
    try:
        return ("data", blockread.read_data(text))
    except blockread.Declined:
        return ("declined", None)


@contextmanager
def _own_memo() -> Iterator[Any]:
    """read_data with a memo of its own (restored after)."""
    saved = blockread._MEMO
    blockread._MEMO = memo = blockread._Memo()
    try:
        yield memo
    finally:
        blockread._MEMO = saved


@pytest.fixture
def fresh_memo() -> Iterator[Any]:
    with _own_memo() as memo:
        yield memo


def _check_in_turn(texts: list[str]) -> None:
    """Each text, read three times round-robin with one memo, reads as read() reads it."""
    for _ in range(3):
        for text in texts:
            want, got = _read_or_declined(text), _read_data_or_declined(text)
            assert want[0] == got[0] and _same(want[1], got[1]), f"{text!r}: {want} != {got}"


# The same block in other surroundings: what follows it (a shallower line, a dash or a
# key at its own column, a comment, the end of the text with or without a final line
# break) decides where it ends and what its last block scalar keeps.
CONTEXT_CASES = [
    ["a:\n  b: 1\n  c: 2\nd: 3\n", "a:\n  b: 1\n  c: 2\n"],
    ["a:\n  b: 1\n  c: 2\nd: 3\n", "a:\n  b: 1\n  c: 2"],
    ["a:\n  b: |+\n    x\n\nd: 3\n", "a:\n  b: |+\n    x\n\n", "a:\n  b: |+\n    x\n\n\n"],
    ["a:\n  b: |\n    x\n# c\nd: 3\n", "a:\n  b: |\n    x\n# c\n"],
    ["r:\n  a:\n  - b: 1\n    c: 2\n  - d\n  e: 1\n", "r:\n  a:\n  - b: 1\n    c: 2\n  e: 1\n"],
    ["a:\n  - b\n  - c\n# x\n  - d\ne: 1\n", "a:\n  - b\n  - c\n# x\ne: 1\n"],
    ["x:\n  a:\n    b: 1\n  c: 2\n", "y:\n  a:\n    b: 1\n  c: 3\n", "z:\n  a:\n    b: 1\n"],
]


@pytest.mark.parametrize("texts", CONTEXT_CASES)
def test_read_data_reads_a_remembered_block_in_new_surroundings(
    fresh_memo: Any, texts: list[str]
) -> None:
    _check_in_turn(texts)
    assert fresh_memo.entries  # a test that cannot fail is a defect: the memo was used


def test_read_data_reads_a_remembered_block_without_reading_it_again(
    fresh_memo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "a:\n  b:\n    c: [1, 2]\n  d: x\ne: 1\n"
    for _ in range(2):
        blockread.read_data(text)  # seen, then remembered
    calls: list[int] = []
    inner = blockread._Reader._node_at

    def counted(self: Any, i: int, col: int) -> Any:
        calls.append(i)
        return inner(self, i, col)

    monkeypatch.setattr(blockread._Reader, "_node_at", counted)
    assert blockread.read_data(text) == {"a": {"b": {"c": [1, 2]}, "d": "x"}, "e": 1}
    assert calls == []
    assert blockread.read_data(text.replace("[1, 2]", "[1, 3]"))["a"]["b"]["c"] == [1, 3]


def test_read_data_keeps_within_its_bounds(
    fresh_memo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(blockread, "_MAX_CHARS", 64)
    monkeypatch.setattr(blockread, "_MAX_SEEN", 4)
    for n in range(40):
        text = f"a:\n  b: {n}\n  c: {n}\nd: 1\n"
        for _ in range(3):
            assert blockread.read_data(text) == {"a": {"b": n, "c": n}, "d": 1}
        assert fresh_memo.chars <= 64 and len(fresh_memo.seen) <= 4


# Lines at a few columns, with comments, blank lines, block scalars and sequences: texts
# made of them share blocks often, in different surroundings.
LINES = [
    "a:",
    "a: 1",
    "b: x",
    "- k: v",
    "- s",
    "  b: 1",
    "  c:",
    "  - x",
    "  - y: 1",
    "  d: |+",
    "  d: >-",
    "    t",
    "    z: 2",
    "    - deep",
    "      w: [1, {p: q}]",
    "",
    "  ",
    "# c",
    "  # c",
    "      # c",
    "---",
]


@st.composite
def sharing_texts(draw: st.DrawFn) -> list[str]:
    lines = st.lists(st.sampled_from(LINES), max_size=4)
    shared = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=8))
    texts = []
    for _ in range(draw(st.integers(2, 4))):
        body = [*draw(lines), *shared, *draw(lines)]
        texts.append("\n".join(body) + draw(st.sampled_from(["\n", "", "\n\n"])))
    return texts


@FUZZ_SETTINGS
@given(sharing_texts())
def test_read_data_reads_as_read_does_when_texts_share_blocks(texts: list[str]) -> None:
    with _own_memo():  # one per example: a function-scoped fixture would span them all
        _check_in_turn(texts)


# The quoted scalar's end found without the pattern where it holds no escape, and the
# ASCII test for unread characters: the same answers as the patterns they stand for.
_QUOTED_PIECES = ['"', "'", "''", "\\", '\\"', "a", " ", "#", ":", "\\x41", "é", "\u2028"]


@given(st.sampled_from(['"', "'"]), st.lists(st.sampled_from(_QUOTED_PIECES), max_size=12))
def test_a_quoted_scalar_ends_where_its_pattern_does(quote: str, pieces: list[str]) -> None:
    s = quote + "".join(pieces)
    match = (blockread._DOUBLE if quote == '"' else blockread._SINGLE).match(s)
    assert blockread._quoted_end(s) == (-1 if match is None else match.end())


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)))
def test_the_ascii_test_for_unread_characters_is_the_full_one(text: str) -> None:
    full = blockread._UNREAD.search(text)
    ascii_only = blockread._UNREAD_ASCII.search(text)
    assert (full is None) == (ascii_only is None)
    assert full is None or ascii_only is None or full.start() == ascii_only.start()
    assert blockread._unread(text) == (full is not None)  # the test the reader makes


def test_the_test_for_unread_characters_takes_each_ascii_character_as_the_pattern() -> None:
    for code in range(0x80):
        for text in (chr(code), f"a: b{chr(code)}\nc: d\n"):
            assert blockread._unread(text) == (blockread._UNREAD.search(text) is not None)


def test_plain_scalars_resolve_the_same_from_the_resolvers_cache() -> None:
    # the resolver keeps what each text resolved to: nulls, booleans, numbers and
    # strings come back with their own type the second time (1 is not True, ~ is None)
    texts = ["~", "null", "0", "1", "true", "True", "false", "8080", "-3", "1.5", "0o17"]
    texts += ["500m", "256Mi", "1.2.3", "2001-12-14", "+1", ".5", "-", "=x", "0x1F", "1_000"]
    fresh = blockread._Resolver()
    first = [(type(v), v) for v in map(fresh.plain, texts)]
    again = [(type(v), v) for v in map(fresh.plain, texts)]
    expected = [(type(v), v) for v in (blockread._Resolver()._resolve(t) for t in texts)]
    assert first == again == expected
    assert [fresh.plain(t) for t in texts[:3]] == [None, None, 0]


@pytest.mark.parametrize("text", ["a: [a?b]\n", "a: [a ?b]\n", "a: [a?]\n", "a: {x: a?b}\n"])
def test_a_question_mark_in_a_flow_plain_scalar_is_left_to_libyaml(text: str) -> None:
    """The libyaml the tool loads refuses these (found by the mutation test on a golden
    input, cidrBlocks: [1?92.168.0.0/16]); the fast reader must decline, not accept."""
    with pytest.raises(blockread.Declined):
        blockread.read(text)
    with pytest.raises(ParseError):
        libyaml.compose(text)
