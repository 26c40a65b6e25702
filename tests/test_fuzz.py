"""Fuzzing the splitter and the engine with mutated real inputs (hypothesis-driven).

Every golden input is mutated at the byte level with characters that matter to
YAML; the splitter must stay lossless, and the engine must either succeed (the
output parses, a second pass changes nothing, removal gives the input back
when the input was clean) or fail with an InputError: never another exception.
`make test` runs a bounded number of examples; `make fuzz` runs many more
(FUZZ_EXAMPLES). A crash found here belongs in tests/bad_inputs/ as a fixture.
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from proxy_postrender import engine, verify
from proxy_postrender.errors import InputError
from proxy_postrender.yamltext import libyaml, stream
from proxy_postrender.yamltext.errors import ParseError
from tests.golden import load_cases
from tests.test_properties import REQUEST

SEEDS = [case.input.decode("utf-8-sig", "surrogateescape") for case in load_cases()]
ALPHABET = [
    *list(":-#&*!|>'\"{}[],\n\r\t ?%@`\\"),
    *("---\n", "...\n", "  ", "\ufeff", "é", "<<: ", "? "),
]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "300"))
# the line of a key in a block mapping: indentation, the dashes of the items it opens,
# the key, and the rest of the line after its colon
KEY_LINE = re.compile(r"( *)((?:- +)*)([A-Za-z_][\w./-]*):((?: .*)?)")
# the settings of every mutation-fuzz test (here and in tests/test_blockread.py)
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def mutate(draw: st.DrawFn, text: str) -> str:
    """``text`` after 1 to 8 byte-level edits with characters that matter to YAML."""
    for _ in range(draw(st.integers(1, 8))):
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        action = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        piece = draw(st.sampled_from(ALPHABET))
        if action == "insert":
            text = text[:at] + piece + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        elif action == "replace":
            text = text[:at] + piece + text[at + 1 :]
        else:
            end = min(len(text), at + draw(st.integers(1, 200)))
            text = text[:end] + text[at:end] + text[end:]
    return text


@st.composite
def mutated(draw: st.DrawFn) -> str:
    return mutate(draw, draw(st.sampled_from(SEEDS)))


@FUZZ_SETTINGS
@given(mutated())
def test_mutated_inputs_succeed_cleanly_or_fail_cleanly(text: str) -> None:
    assert "".join(segment.text for segment in stream.split(text)) == text
    try:
        out = engine.process(text, REQUEST).text
    except InputError:
        return
    try:
        libyaml.load_data(text)
    except ParseError:
        return  # an input that does not parse may pass through untouched, as it was
    libyaml.load_data(out)
    assert engine.process(out, REQUEST).text == out


def merge_or_complex(draw: st.DrawFn, text: str) -> str:
    """``text`` with a merge key (inline or block) or a complex key put into one of its
    block mappings: before one of its keys (first in the mapping when that key was), after
    an entry (last when it was), or a key written as ``? key`` and ``: value``."""
    lines = text.split("\n")
    keyed = [i for i, line in enumerate(lines) if KEY_LINE.fullmatch(line)]
    if not keyed:
        return text
    i = draw(st.sampled_from(keyed))
    match = KEY_LINE.fullmatch(lines[i])
    assert match is not None
    indent, dashes, key, rest = match.groups()
    head, pad = indent + dashes, " " * (len(indent) + len(dashes))
    merged = draw(st.sampled_from(["x-merged: m", "image: busybox", "name: merged", "a: b, c: d"]))
    shape = draw(st.sampled_from(["merge", "block merge", "complex", "merge after"]))
    if shape == "merge":
        new = [f"{head}<<: {{{merged}}}", f"{pad}{key}:{rest}"]
    elif shape == "block merge":
        new = [f"{head}<<:", *(f"{pad}  {kv}" for kv in merged.split(", ")), f"{pad}{key}:{rest}"]
    elif shape == "complex":
        new = [f"{head}? {key}", f"{pad}:{rest}"]
    else:  # after the entry: past the lines indented more (or its indentless items)
        end = i + 1
        while end < len(lines) and (
            not lines[end].strip()
            or lines[end].lstrip().startswith("#")
            or len(lines[end]) - len(lines[end].lstrip(" ")) > len(pad)
            or lines[end].startswith(pad + "- ")
        ):
            end += 1
        return "\n".join([*lines[:end], f"{pad}<<: {{{merged}}}", *lines[end:]])
    return "\n".join([*lines[:i], *new, *lines[i + 1 :]])


@st.composite
def merged_or_complex(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 3))):
        text = merge_or_complex(draw, text)
    return text


@settings(
    max_examples=max(50, EXAMPLES // 3),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(merged_or_complex())
def test_merge_and_complex_keys_give_what_the_full_read_gives(text: str) -> None:
    """Real inputs with merge keys and complex keys put into their mappings: the output
    (the splice proved cheaply, where it is) is the one the full re-read of every splice
    gives, it parses, and a second pass changes nothing. Before issue 27 (finding 1) the
    cheap proof vouched for env and drop-ins written at the column of a merged key or of
    the key after "? ": into a block scalar, or as no YAML."""
    try:
        out = engine.process(text, REQUEST).text
    except InputError:
        event("refused")
        return
    event("changed" if out != text else "unchanged")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(verify.FULL_CHECK, "1")
        assert engine.process(text, REQUEST).text == out
    try:
        libyaml.load_data(text)
    except ParseError:
        return
    libyaml.load_data(out)
    assert engine.process(out, REQUEST).text == out
