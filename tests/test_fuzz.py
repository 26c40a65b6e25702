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

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.yamltext import libyaml, stream
from proxy_postrender.yamltext.errors import ParseError
from tests.golden import load_cases
from tests.test_properties import REQUEST

SEEDS = [case.input.decode("utf-8-sig", "surrogateescape") for case in load_cases()]
ALPHABET = [*list(":-#&*!|>'\"{}[],\n\r\t ?%@`\\"), "---\n", "...\n", "  ", "\ufeff", "é"]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "300"))
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
