"""Empty or null collections the tool fills come back as written (issue 19, item 1).

The rule: when the tool fills a collection that the input had as null (``key:``)
or empty (``key: []``, ``key: {}``), the ownership record keeps which, and
taking the tool's entries out again sets that value back instead of deleting
the key.
"""

from __future__ import annotations

import difflib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy_postrender import engine
from proxy_postrender.request import Request
from proxy_postrender.yamltext import read

REQUEST = Request(env=(("HTTP_PROXY", "http://proxy.example:3128"), ("NO_PROXY", ".svc")))
REMOVE = Request(env=())
CHANGED = Request(env=(("NO_PROXY", ".svc"),))  # no longer wants HTTP_PROXY

POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n"

SHAPES = {
    "env no value": POD + "      env:\n",
    "env no value, comment": POD + "      env:  # later\n",
    "env []": POD + "      env: []\n",
    "env [] and a key after": POD + "      env: []\n      image: x\n",
    "annotations no value": POD.replace("  name: p\n", "  name: p\n  annotations:\n"),
    "annotations {}": POD.replace("  name: p\n", "  name: p\n  annotations: {}\n"),
    "metadata {}": POD.replace("metadata:\n  name: p\n", "metadata: {}\n"),
    "metadata no value": POD.replace("metadata:\n  name: p\n", "metadata:\n"),
    "no metadata": POD.replace("metadata:\n  name: p\n", ""),
    "all at once": POD.replace("metadata:\n  name: p\n", "metadata: {}\n") + "      env:\n",
    # spelled other ways: the record keeps the text after the colon, and --remove
    # writes it back
    "env null": POD + "      env: null\n",
    "env ~": POD + "      env: ~\n",
    "env Null, comment": POD + "      env: Null  # unset\n",
    "env [] on the next line": POD + "      env:\n        []\n",
    "env [] on the next line, comments": POD + "      env: # a\n        # b\n        []  # c\n",
    "env ~ on the next line": POD + "      env:\n        ~\n",
    "env [ ]": POD + "      env:   [ ]\n",
    "annotations ~": POD.replace("  name: p\n", "  name: p\n  annotations: ~\n"),
    "annotations null": POD.replace("  name: p\n", "  name: p\n  annotations: null\n"),
    "annotations {} on the next line": POD.replace(
        "  name: p\n", "  name: p\n  annotations:\n    {}\n"
    ),
    "annotations {} on the next line, comment": POD.replace(
        "  name: p\n", "  name: p\n  annotations:\n    {}  # none\n"
    ),
    "metadata {} on the next line": POD.replace("metadata:\n  name: p\n", "metadata:\n  {}\n"),
    "at the end, no final newline": POD + "      env:\n        []",
    "CRLF": (POD + "      env: ~  # x\n").replace("\n", "\r\n"),
    "flow parents": (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: ~}\nspec:\n"
        "  containers:\n    - {name: a, env: ~}\n    - {name: b, env: [ ]}\n"
    ),
    "deployment": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations:\n"
        "spec:\n  template:\n    metadata: {}\n    spec:\n      containers:\n"
        "        - name: a\n          env:\n        - name: b\n          env: []\n"
    ),
}


def _removed_lines(before: str, after: str) -> list[str]:
    a, b = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        line
        for tag, i1, i2, _, _ in matcher.get_opcodes()
        if tag in ("delete", "replace")
        for line in a[i1:i2]
    ]


@pytest.mark.parametrize("text", SHAPES.values(), ids=SHAPES.keys())
def test_remove_gives_the_empty_value_back(text: str) -> None:
    out = engine.process(text, REQUEST).text
    assert "HTTP_PROXY" in out
    assert engine.process(out, REQUEST).text == out
    assert engine.process(out, REMOVE).text == text


@pytest.mark.parametrize("text", SHAPES.values(), ids=SHAPES.keys())
def test_the_record_keeps_the_empty_value_while_entries_change(text: str) -> None:
    out = engine.process(text, REQUEST).text
    changed = engine.process(out, CHANGED).text
    assert changed == engine.process(text, CHANGED).text
    assert engine.process(changed, REMOVE).text == text


@pytest.mark.parametrize(
    "text",
    [
        SHAPES["env no value"],
        SHAPES["annotations no value"],
        SHAPES["deployment"].replace("env: []", "env:"),
    ],
)
def test_a_key_with_no_value_only_gets_lines_added(text: str) -> None:
    out = engine.process(text, REQUEST).text
    assert _removed_lines(text, out) == []


def test_an_empty_flow_value_is_the_only_line_rewritten() -> None:
    text = SHAPES["env []"]
    out = engine.process(text, REQUEST).text
    assert _removed_lines(text, out) == ["      env: []"]


def test_older_records_without_the_flags_are_still_removed() -> None:
    # what the tool wrote before it recorded empty values: the key goes, as it did
    older = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
        "    proxy-postrender.io/injected: c=HTTP_PROXY,NO_PROXY\nspec:\n  containers:\n"
        "    - name: c\n      env:\n        - name: HTTP_PROXY\n"
        "          value: http://proxy.example:3128\n        - name: NO_PROXY\n"
        "          value: .svc\n"
    )
    removed = engine.process(older, REMOVE).text
    assert removed == (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n"
    )


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        (SHAPES["env [] on the next line"], ["        []"]),
        (SHAPES["env [] on the next line, comments"], ["        []  # c"]),
        (SHAPES["annotations {} on the next line"], ["    {}"]),
        (SHAPES["env Null, comment"], ["      env: Null  # unset"]),
    ],
)
def test_only_the_line_of_the_empty_token_is_rewritten(text: str, rewritten: list[str]) -> None:
    # an empty or null token must go (block entries cannot follow it); its line is the
    # only one of the input the first run changes
    out = engine.process(text, REQUEST).text
    assert _removed_lines(text, out) == rewritten


def test_the_record_keeps_the_spelling_as_a_plain_scalar() -> None:
    out = engine.process(SHAPES["annotations {} on the next line, comment"], REQUEST).text
    assert ";~empty-annotations:%0A____%7B%7D__%23_none\n" in out


# The search for odd spellings skips the text before the line of the first token: it
# finds what a search of the whole text finds (texts made of the pieces that matter).
_PIECES = ["~", "null", "Null", "NULL", "nul", "[", "]", "{", "}", ":", " ", "  ", "\t"]
_PIECES += ["\n", "\r\n", "#", ",", "a", "key: ", "- ", "[]", "{}", "[ ]", "{ \n}", "x~"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
@settings(max_examples=3000, deadline=None)
def test_odd_spellings_are_found_as_in_the_whole_text(text: str) -> None:
    whole = [(m.start(), m.end()) for m in re.finditer(read._ODD_EMPTY, text)]
    assert read.odd_empty_matches(text) == whole
    finds = [at for at in (text.find(token) for token in read._TOKENS) if at >= 0]
    assert read.first_token(text) == (min(finds) if finds else -1)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: x\n",
        "a: [1]\nb: {c: d}\n",
        "nul: l\nb: [\n",
        "a: 1\nb: ~\n",
        "a: [x]\nb:\n  []\nc: {}\n",
        "imagePullPolicy: x\nb: {\n}\n",
        "a: Null\nb: [ ]\n",
        "a:  {}\n",
        "[ a ]  [\t]\n{}  # c\n",
    ],
)
def test_odd_spellings_in_chosen_texts(text: str) -> None:
    whole = [(m.start(), m.end()) for m in re.finditer(read._ODD_EMPTY, text)]
    assert read.odd_empty_matches(text) == whole
    finds = [at for at in (text.find(token) for token in read._TOKENS) if at >= 0]
    assert read.first_token(text) == (min(finds) if finds else -1)
