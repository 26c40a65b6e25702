"""Wrong splices are refused: mutations of the real spliced output of the golden cases.

Every golden case is run in process; each splice the verification step sees is taken
(the input text, its edits as the splicer reported them, the output, the expected data)
and corrupted at its splice points, in two ways:

- **the output** is corrupted, the edits stay as reported (the text written is not what
  the splicer said it made);
- **an edit** is corrupted and the output is made from the corrupted edits (a splicer bug
  that reports what it did: the edits and the text agree, but they are wrong).

The cheap check (:func:`check.proved`) must not prove any of them, and the full re-read
(:func:`verify.equivalent`) must refuse every one too. Corruptions: wrong indent (first
or inner line, either way), wrong parent (the snippet dedented, or put a line up), lost
inserted line, duplicated key line, broken quoting, a value changed inside the snippet,
an untouched line changed, lost or moved, a line moved out of the snippet.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from proxy_postrender import engine, verify
from proxy_postrender.errors import InputError
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from proxy_postrender.request import Request
from proxy_postrender.yamltext import check, splice
from proxy_postrender.yamltext.splice import Edit
from tests import test_properties
from tests.golden import Case, load_cases


class Capture(NamedTuple):
    text: str  # the spliced output
    expected: list[Any]
    evidence: verify.Evidence


def _runnable(case: Case) -> bool:
    return case.exit == 0 and len(case.args) == 1 and case.args[0].endswith(".yaml")


def _request(case: Case) -> Request:
    profile = Path(case.args[0])
    profile = profile if profile.is_absolute() else case.path / profile
    loaded = loader.load(str(profile))
    return to_request(loaded, remove=False, forbid_plaintext=False, strict=False)


def _spy(patch: pytest.MonkeyPatch) -> list[Capture]:
    """Make the verification step record every splice it is given evidence for; the
    list fills as the engine runs."""
    found: list[Capture] = []
    real = verify.verified

    def spy(text: str, expected: list[Any], evidence: verify.Evidence | None = None) -> bool:
        if evidence is not None:
            found.append(Capture(text, copy.deepcopy(expected), evidence))
        return real(text, expected, evidence)

    patch.setattr(verify, "verified", spy)
    return found


def captures(case: Case, monkeypatch: pytest.MonkeyPatch) -> list[Capture]:
    """Every splice of ``case`` that the verification step was given evidence for."""
    request = _request(case)
    with monkeypatch.context() as patch:
        found = _spy(patch)
        patch.delenv(verify.FULL_CHECK, raising=False)
        engine.process(case.input.decode("utf-8-sig"), request)
    return found


def cheap(text: str, capture: Capture, trace: check.Trace | None = None) -> bool:
    evidence = capture.evidence
    return check.proved(
        evidence.before,
        text,
        evidence.root,
        evidence.trace if trace is None else trace,
        capture.expected[0],
    )


def full(text: str, capture: Capture) -> bool:
    return verify.equivalent(text, capture.expected)


# Corruptions of an inserted snippet (whole lines, each ending with a newline). Each
# returns None where it does not apply.
def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def indent_first_more(text: str) -> str | None:
    return "  " + text


def indent_first_less(text: str) -> str | None:
    lines = _lines(text)
    return "".join([lines[0][2:], *lines[1:]]) if _indent(lines[0]) >= 2 else None


def indent_inner_more(text: str) -> str | None:
    lines = _lines(text)
    for i in range(1, len(lines)):
        if ": " in lines[i] and _indent(lines[i]) > _indent(lines[0]):
            return "".join([*lines[:i], "  " + lines[i], *lines[i + 1 :]])
    return None


def indent_inner_less(text: str) -> str | None:
    lines = _lines(text)
    for i in range(1, len(lines)):
        if _indent(lines[i]) >= _indent(lines[0]) + 2:
            return "".join([*lines[:i], lines[i][2:], *lines[i + 1 :]])
    return None


def wrong_parent(text: str) -> str | None:
    """The whole snippet two columns to the left: under the collection's parent."""
    lines = _lines(text)
    if _indent(lines[0]) < 2:
        return None
    return "".join(line[2:] if line.startswith("  ") else line for line in lines)


def lost_line(text: str) -> str | None:
    lines = _lines(text)
    return "".join(lines[:-1]) if len(lines) > 1 else None


def duplicated_key(text: str) -> str | None:
    lines = _lines(text)
    for i, line in enumerate(lines):
        body = line.lstrip(" ")
        if ": " in body and not body.startswith("- "):
            return "".join([*lines[: i + 1], line, *lines[i + 1 :]])
        if body.startswith("- ") and ": " in body:  # the key of an item's first line
            twin = " " * (_indent(line) + 2) + body[2:]
            return "".join([*lines[: i + 1], twin, *lines[i + 1 :]])
    return None


def broken_quoting(text: str) -> str | None:
    if '"' in text:
        at = text.rindex('"')
        return text[:at] + text[at + 1 :]
    at = text.find(": ")
    return text[: at + 2] + '"' + text[at + 2 :] if at >= 0 else None


def value_changed(text: str) -> str | None:
    at = text.rfind(": ")
    if at < 0 or text[at + 2 : at + 3] in ("", "\n", "|", ">"):
        return None
    return text[: at + 2] + "x" + text[at + 2 :]


SNIPPET_MUTATIONS: dict[str, Callable[[str], str | None]] = {
    f.__name__: f
    for f in (
        indent_first_more,
        indent_first_less,
        indent_inner_more,
        indent_inner_less,
        wrong_parent,
        lost_line,
        duplicated_key,
        broken_quoting,
        value_changed,
    )
}


SCALAR_MUTATIONS = ("scalar: value changed", "scalar: broken quoting", "scalar: a key in the value")


def _insertions(capture: Capture) -> list[tuple[int, int]]:
    """(entry of the trace, edit in it) of every edit that inserts whole lines."""
    return [
        (n, k)
        for n, (_, edits) in enumerate(capture.evidence.trace)
        for k, edit in enumerate(edits)
        if edit.text and edit.start == edit.end and edit.text.endswith("\n")
    ]


def _with(capture: Capture, n: int, k: int, edit: Edit) -> check.Trace:
    trace = list(capture.evidence.trace)
    op, edits = trace[n]
    trace[n] = (op, [*edits[:k], edit, *edits[k + 1 :]])
    return trace


def _made(before: str, trace: check.Trace) -> str:
    return splice.apply_edits(before, [edit for _, edits in trace for edit in edits])


def snippet_mutants(capture: Capture) -> list[tuple[str, str, check.Trace]]:
    """(name, corrupted text, trace the check is given) for every corruption of every
    inserted snippet, of the output (trace as reported) and of the edit (trace changed)."""
    before = capture.evidence.before
    found = []
    for n, k in _insertions(capture):
        edit = capture.evidence.trace[n][1][k]
        for name, mutate in SNIPPET_MUTATIONS.items():
            text = mutate(edit.text)
            if text is None or text == edit.text:
                continue
            wrong = _with(capture, n, k, Edit(edit.start, edit.end, text))
            found.append((f"output: {name}", _made(before, wrong), capture.evidence.trace))
            found.append((f"edit: {name}", _made(before, wrong), wrong))
        # the snippet a line further up: inside the entry before the insertion point
        up = splice.line_start(before, edit.start - 1) if edit.start else 0
        if up < edit.start:
            wrong = _with(capture, n, k, Edit(up, up, edit.text))
            text = _made(before, wrong)
            if not full(text, capture):
                found.append(("output: put a line up", text, capture.evidence.trace))
                found.append(("edit: put a line up", text, wrong))
    for n, (_, edits) in enumerate(capture.evidence.trace):
        for k, edit in enumerate(edits):
            if edit.start == edit.end or not edit.text or "\n" in edit.text:
                continue  # not a scalar written over another
            for name, text in (
                (SCALAR_MUTATIONS[0], edit.text + "x"),
                (SCALAR_MUTATIONS[1], '"' + edit.text),
                (SCALAR_MUTATIONS[2], "a: " + edit.text),
            ):
                wrong = _with(capture, n, k, Edit(edit.start, edit.end, text))
                found.append((f"output: {name}", _made(before, wrong), capture.evidence.trace))
                found.append((f"edit: {name}", _made(before, wrong), wrong))
    return found


CONTEXT_MUTATIONS = (
    "untouched line lost",
    "untouched value changed",
    "untouched line moved into the snippet",
    "inserted line moved to the top",
)


def context_mutants(capture: Capture) -> list[tuple[str, str]]:
    """Corruptions of the output outside the edits, or that move a line across them."""
    out = capture.text
    before = capture.evidence.before
    lines = _lines(out)
    # the first line with a value that no edit touches (apiVersion, as a rule)
    first = next(
        (i for i, line in enumerate(lines) if ": " in line and not line.lstrip().startswith("#")),
        None,
    )
    found = []
    inserted = [capture.evidence.trace[n][1][k] for n, k in _insertions(capture)]
    edited = min((e.start for _, es in capture.evidence.trace for e in es), default=len(before))
    if first is not None and len("".join(lines[: first + 1])) <= edited:
        line = lines[first]
        found.append(("untouched line lost", "".join([*lines[:first], *lines[first + 1 :]])))
        changed = line.rstrip("\r\n") + "x" + line[len(line.rstrip("\r\n")) :]
        found.append(
            ("untouched value changed", "".join([*lines[:first], changed, *lines[first + 1 :]]))
        )
        if inserted:
            # moved to just after the first line of the first inserted snippet
            at = _where(capture, inserted[0])
            end = out.index("\n", at) + 1
            rest = [*lines[:first], *lines[first + 1 :]]
            moved = "".join(rest)
            cut = end - len(line)
            found.append(
                ("untouched line moved into the snippet", moved[:cut] + line + moved[cut:])
            )
    if inserted:
        # the last line of the first inserted snippet, moved to the top of the document
        last = _where(capture, inserted[0]) + len(inserted[0].text)
        begin = out.rfind("\n", 0, last - 1) + 1
        found.append(("inserted line moved to the top", out[begin:last] + out[:begin] + out[last:]))
    return found


def _where(capture: Capture, edit: Edit) -> int:
    """Where ``edit``'s text starts in the output."""
    edits = [e for _, es in capture.evidence.trace for e in es]
    placed = check._placed(capture.evidence.before, capture.text, edits)
    assert placed is not None
    return placed[id(edit)]


CASES = [case for case in load_cases() if _runnable(case)]


@pytest.fixture(scope="module")
def all_captures() -> dict[str, list[Capture]]:
    patch = pytest.MonkeyPatch()
    try:
        return {case.name: captures(case, patch) for case in CASES}
    finally:
        patch.undo()


def test_the_cheap_check_proves_the_real_splices(all_captures: dict[str, list[Capture]]) -> None:
    """The splices of the golden cases verify, and most are proved without a re-read
    (the rest are shapes the check leaves to the full re-read: flow collections, filled
    null or empty values, no final newline)."""
    splices = [c for found in all_captures.values() for c in found]
    assert len(splices) > 80
    proved = [c for c in splices if cheap(c.text, c)]
    assert all(full(c.text, c) for c in splices)
    assert len(proved) >= 0.75 * len(splices), (len(proved), len(splices))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_corrupted_splice_is_refused(
    case: Case, all_captures: dict[str, list[Capture]]
) -> None:
    """Every corruption that changes what the output reads as (the full re-read refuses
    it) is refused by the cheap check; one that does not (two more columns for a whole
    nested block, say) may be proved, and then the full re-read accepts it too."""
    refused = 0
    wrong: list[str] = []
    for capture in all_captures[case.name]:
        if not cheap(capture.text, capture):
            continue  # left to the full re-read: the mutations below say nothing of it
        mutants = [(name, text, capture.evidence.trace) for name, text in context_mutants(capture)]
        for name, text, trace in mutants + snippet_mutants(capture):
            accepted = full(text, capture)
            if text == capture.text:
                wrong.append(f"{name}: the corruption changed nothing")
            elif cheap(text, capture, trace) and not accepted:
                wrong.append(f"{name}: proved by the cheap check, refused by the full one")
            refused += not accepted
    assert not wrong, wrong
    if any(cheap(c.text, c) for c in all_captures[case.name]):
        assert refused >= 4


def test_each_kind_of_corruption_is_met(all_captures: dict[str, list[Capture]]) -> None:
    """Each corruption, of the output and of an edit, turns up as a real one (refused
    by the full re-read) in many splices, and the cheap check refuses those."""
    refused: dict[str, int] = {}
    for capture in (c for found in all_captures.values() for c in found):
        if not cheap(capture.text, capture):
            continue
        mutants = [(name, text, capture.evidence.trace) for name, text in context_mutants(capture)]
        for name, text, trace in mutants + snippet_mutants(capture):
            if not full(text, capture):
                assert not cheap(text, capture, trace), name
                refused[name] = refused.get(name, 0) + 1
    kinds = [*CONTEXT_MUTATIONS, "output: put a line up", "edit: put a line up"]
    names = [*SNIPPET_MUTATIONS, *SCALAR_MUTATIONS]
    kinds += [f"{where}: {name}" for name in names for where in ("output", "edit")]
    assert {kind: refused.get(kind, 0) for kind in kinds if refused.get(kind, 0) < 5} == {}


def test_the_mutations_can_fail(
    all_captures: dict[str, list[Capture]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check that does not compare what the snippets read as with the expected data
    proves corrupted edits: the test above can fail."""
    capture = next(c for found in all_captures.values() for c in found if cheap(c.text, c))
    mutants = [
        (name, text, trace)
        for name, text, trace in snippet_mutants(capture)
        if name.startswith("edit: ") and not full(text, capture)
    ]
    assert mutants and not any(cheap(text, capture, trace) for _, text, trace in mutants)
    monkeypatch.setattr(check._Layouts, "holds", lambda self, path, change: True)
    assert any(cheap(text, capture, trace) for _, text, trace in mutants)


def test_the_full_check_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """PROXY_POSTRENDER_FULL_CHECK=1: the output is the same, every splice read back."""
    case = next(c for c in CASES if c.name == "helm3-chart")
    calls: list[str] = []
    real = check.proved

    def counted(*args: Any) -> bool:
        calls.append("cheap")
        return real(*args)

    monkeypatch.setattr(check, "proved", counted)
    request = _request(case)
    text = case.input.decode("utf-8-sig")
    monkeypatch.delenv(verify.FULL_CHECK, raising=False)
    cheap_out = engine.process(text, request).text
    assert calls
    calls.clear()
    monkeypatch.setenv(verify.FULL_CHECK, "1")
    assert engine.process(text, request).text == cheap_out
    assert calls == []
    assert os.environ[verify.FULL_CHECK] == "1"


def test_a_comment_the_new_block_would_take_in_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files entry goes before a comment indented more than the list: the literal
    block at the end of the new entry takes the comment in as content. The real splicer
    makes that text (and the round-trip fallback then writes the document); the cheap
    check refuses it (the line after a snippet must not be indented more than its
    collection), and the full re-read does too."""
    doc = (
        "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: KubeadmConfig\nmetadata:\n"
        "  name: n\nspec:\n  files:\n  - path: /etc/a\n    content: a\n"
        "        # a comment more indented than the list\n  preKubeadmCommands:\n  - echo hi\n"
    )
    case = next(c for c in CASES if c.name == "capi-v1beta1")
    found = _spy(monkeypatch)
    engine.process(doc, _request(case))
    assert len(found) == 1
    (capture,) = found
    assert "content: |\n" in capture.text and "a comment" in capture.text
    assert not cheap(capture.text, capture) and not full(capture.text, capture)


# Property: on generated Deployments and their splices, the cheap check proves no text
# the full re-read refuses; it proves every correct splice of these (ordinary) shapes;
# and every mutant of a splice that the full re-read refuses, it refuses too.
ENV = (("HTTP_PROXY", "http://proxy.corp.example:3128"), ("NO_PROXY", ".svc,10.0.0.0/8"))
_VALUES = st.sampled_from(['"1"', "'x y'", "plain", '"a: b"', "'it''s'", "http://h:1/p"])


@st.composite
def deployments(draw: st.DrawFn) -> str:
    ind = draw(st.sampled_from([2, 4]))
    offset = draw(st.sampled_from([0, 2]))
    pad = " " * ind

    def seq(depth: int) -> str:  # the dash column of a sequence under a key at ``depth``
        return " " * (depth * ind + offset)

    lines = ["apiVersion: apps/v1", "kind: Deployment", "metadata:", f"{pad}name: web"]
    if draw(st.booleans()):
        lines += [f"{pad}annotations:", f'{pad * 2}team: "a"']
    lines += ["spec:", f"{pad}template:", f"{pad * 2}spec:", f"{pad * 3}containers:"]
    dash = seq(3)
    item = dash + "  "
    for number in range(draw(st.integers(1, 3))):
        lines += [f"{dash}- name: c{number}", f"{item}image: nginx"]
        if draw(st.booleans()):
            lines.append(f"{item}env:")
            for k in range(draw(st.integers(1, 2))):
                inner = " " * (len(item) + offset)
                lines += [f"{inner}- name: V{k}", f"{inner}  value: {draw(_VALUES)}"]
        tail = draw(st.sampled_from(["", "resources", "command", "args", "comment"]))
        if tail == "resources":
            lines += [f"{item}resources:", f"{item}{pad}limits:", f"{item}{pad * 2}cpu: 100m"]
        elif tail == "command":
            lines += [f"{item}command:", f"{' ' * (len(item) + offset)}- sleep"]
        elif tail == "args":
            lines += [f"{item}script: |", f"{item}{pad}echo a", f"{item}{pad}echo b"]
        elif tail == "comment":
            lines.append(f"{item}# the end of c{number}")
    if draw(st.booleans()):
        lines += [f"{pad * 3}volumes:", f"{seq(3)}- name: data", f"{seq(3)}  emptyDir: {{}}"]
    return "\n".join(lines) + "\n"


# Odd shapes around the place a key is added: merge keys (inline and block, first,
# between, last), complex keys (first, between, last) and block scalars, before and
# after the insertion point. The splicer must place the new key at the column of the
# mapping's own keys (or decline); the cheap check declines them all (issue 27,
# finding 1: both took the column of a merged key, or of the key after "? ").
_MERGED = st.sampled_from(['x-merged: "1"', "image: busybox", "name: merged", "a: b, c: d"])


def _odd_entries(draw: st.DrawFn, pad: str, n: int) -> list[list[str]]:
    """Up to ``n`` entries of a mapping (lines at its column; ``pad``: one indent): a
    merge key (at most one), a complex key, a block scalar."""
    entries: list[list[str]] = []
    merged = False
    for _ in range(draw(st.integers(0, n))):
        shape = draw(st.sampled_from(["merge", "block merge", "complex", "script"]))
        if shape == "merge" and not merged:
            entries.append([f"<<: {{{draw(_MERGED)}}}"])
        elif shape == "block merge" and not merged:
            entries.append(["<<:", *(f"{pad}{kv}" for kv in draw(_MERGED).split(", "))])
        elif shape == "complex":
            entries.append([f"? x-complex{len(entries)}", ": '1'"])
        else:
            entries.append([f"note{len(entries)}: |", f"{pad}line a", f"{pad}  line b"])
        merged = merged or "merge" in shape
    return entries


def _place(draw: st.DrawFn, entries: list[list[str]], extra: list[list[str]]) -> list[list[str]]:
    """``entries`` with each of ``extra`` put at a drawn place (first and last included)."""
    for entry in extra:
        entries.insert(draw(st.integers(0, len(entries))), entry)
    return entries


def _lines_of(entries: list[list[str]], col: int, dash: str = "") -> list[str]:
    """A block mapping's lines at column ``col``; ``dash``: the first after it, an item."""
    lines = [" " * col + line for entry in entries for line in entry]
    if dash:
        lines[0] = dash + lines[0][len(dash) :]
    return lines


@st.composite
def odd_deployments(draw: st.DrawFn) -> str:
    ind = draw(st.sampled_from([2, 4]))
    offset = draw(st.sampled_from([0, 2]))
    pad = " " * ind
    meta: list[list[str]] = [["name: web"]]
    if draw(st.booleans()):
        meta.append(["annotations:", f"{pad}note: |", f"{pad * 2}a script", f"{pad * 2}  line"])
    lines = ["apiVersion: apps/v1", "kind: Deployment", "metadata:"]
    lines += _lines_of(_place(draw, meta, _odd_entries(draw, pad, 1)), ind)
    lines += ["spec:", f"{pad}template:", f"{pad * 2}spec:", f"{pad * 3}containers:"]
    dash = " " * (3 * ind + offset) + "- "
    col = len(dash)
    for number in range(draw(st.integers(1, 2))):
        name = [f"name: c{number}"] if draw(st.booleans()) else ["? name", f": c{number}"]
        entries = [name, ["image: nginx"]]
        if draw(st.booleans()):
            entries.append(["env:", f"{' ' * offset}- name: V0", f"{' ' * offset}  value: x"])
        if draw(st.booleans()):
            script = ["- sh", "- -c", "- |", "  set -e", "  exec sleep 1d"]
            entries.append(["command:", *(" " * offset + line for line in script)])
        lines += _lines_of(_place(draw, entries, _odd_entries(draw, pad, 2)), col, dash)
    return "\n".join(lines) + "\n"


@st.composite
def odd_kubeadm_templates(draw: st.DrawFn) -> str:
    ind = draw(st.sampled_from([2, 4]))
    pad = " " * ind
    script = [f"{pad}- |", f"{pad}  set -e", f"{pad}  echo done > /var/log/joined"]
    entries = [
        ["joinConfiguration:", f"{pad}nodeRegistration:", f"{pad * 2}name: n"],
        ["postKubeadmCommands:", *script],
    ]
    if draw(st.booleans()):
        entries.append(["preKubeadmCommands:", f"{pad}- echo first"])
    lines = ["apiVersion: bootstrap.cluster.x-k8s.io/v1beta1", "kind: KubeadmConfigTemplate"]
    lines += ["metadata:", f"{pad}name: workers", "spec:", f"{pad}template:", f"{pad * 2}spec:"]
    lines += _lines_of(_place(draw, entries, _odd_entries(draw, pad, 2)), 3 * ind)
    return "\n".join(lines) + "\n"


def _splices(doc: str, request: Request | None = None) -> list[Capture]:
    with pytest.MonkeyPatch.context() as patch:
        found = _spy(patch)
        engine.process(doc, Request(env=ENV) if request is None else request)
    return found


_CHARS = st.sampled_from([" ", "  ", "-", ": ", '"', "'", "#", "\n", "x", "|", "{", "&a ", "\t"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=deployments(), data=st.data())
def test_cheap_and_full_checks_agree(doc: str, data: st.DataObject) -> None:
    (capture,) = _splices(doc)
    assert full(capture.text, capture) and cheap(capture.text, capture)
    _mutants_agree(capture, data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=odd_deployments() | odd_kubeadm_templates(), data=st.data())
def test_cheap_and_full_checks_agree_around_merge_and_complex_keys(
    doc: str, data: st.DataObject
) -> None:
    """The property above on mappings with merge keys, complex keys and block scalars
    before and after the place a key is added: the cheap check proves no splice the full
    re-read refuses (none in a document with a merge key, none that adds to a mapping
    with a complex key), and the output is the one the full re-read gives, with nothing
    left to add."""
    request = test_properties.REQUEST
    found = _splices(doc, request)
    for capture in found:
        proved = cheap(capture.text, capture)
        accepted = full(capture.text, capture)
        event(f"splice: full {'accepts' if accepted else 'refuses'}, cheap {proved}")
        assert accepted or not proved, capture.text
        assert not proved or "<<" not in doc
        _mutants_agree(capture, data)
    out = engine.process(doc, request).text
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(verify.FULL_CHECK, "1")
        assert engine.process(doc, request).text == out
    assert engine.process(out, request).text == out  # nothing left to add


def _mutants_agree(capture: Capture, data: st.DataObject) -> None:
    """A mutant of one of ``capture``'s edits, in the output as reported and in the edits:
    the cheap check proves it only where the full re-read accepts it."""
    edits = [(n, k) for n, (_, es) in enumerate(capture.evidence.trace) for k in range(len(es))]
    n, k = data.draw(st.sampled_from(edits))
    edit = capture.evidence.trace[n][1][k]
    text = edit.text
    at = data.draw(st.integers(0, len(text)))
    how = data.draw(st.sampled_from(["insert", "delete", "replace", "line"]))
    if how == "insert":
        text = text[:at] + data.draw(_CHARS) + text[at:]
    elif how == "delete":
        text = text[:at] + text[at + data.draw(st.integers(1, 3)) :]
    elif how == "replace":
        text = text[:at] + data.draw(_CHARS) + text[at + 1 :]
    else:
        lines = _lines(text)
        i = data.draw(st.integers(0, max(0, len(lines) - 1)))
        text = "".join(
            lines[:i] + lines[i + 1 :] if data.draw(st.booleans()) else lines + lines[i : i + 1]
        )
    wrong = _with(capture, n, k, Edit(edit.start, edit.end, text))
    made = _made(capture.evidence.before, wrong)
    accepted = full(made, capture)
    for where, trace in (("output", capture.evidence.trace), ("edit", wrong)):
        proved = cheap(made, capture, trace)
        full_says = "accepts" if accepted else "refuses"
        event(f"{where}: full {full_says}, cheap {'proves' if proved else 'declines'}")
        if proved:
            assert accepted, (how, text)


_OTHER_BREAKS = st.sampled_from(["\r", "\x85", "\u2028", "\u2029"])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=deployments(), data=st.data())
def test_a_line_break_other_than_lf_is_never_proved_wrongly(doc: str, data: st.DataObject) -> None:
    """One LF of the input made a CR alone, NEL, LS or PS: YAML reads each as a line break,
    where the splicer and the proof count from LF. The cheap check must not prove what
    the full read refuses (the first cut did, for a fuzz input with a CR alone)."""
    breaks = [i for i, char in enumerate(doc[:-1]) if char == "\n"]
    at = data.draw(st.sampled_from(breaks))
    text = doc[:at] + data.draw(_OTHER_BREAKS) + doc[at + 1 :]
    try:
        found = _splices(text)
    except InputError:
        return  # refused: nothing written
    for capture in found:
        proved = cheap(capture.text, capture)
        event(f"cheap {'proves' if proved else 'declines'}")
        if proved:
            assert full(capture.text, capture), repr(text)


@pytest.mark.parametrize(
    ("text", "odd"),
    [
        ("a: &x 1\n", True),
        ("- *a\n", True),
        ("x: [a, *b]\n", True),
        ("x: {a: !t 1}\n", True),
        ("x: [\n  [ &a 1]]\n", True),
        ("  c, *b]\n", True),
        ("a: |+\n  x\n", True),
        ("a: b && c\n", False),
        ("- do [ -S f ] && break\n", False),
        ("a: x+y\n", False),
    ],
)
def test_anchors_aliases_tags_and_keep_chomping_are_left_to_the_full_read(
    text: str, odd: bool
) -> None:
    """A document or snippet that may hold an anchor, an alias, a tag or ``+`` chomping
    is not proved (an alias elsewhere could name an inserted anchor; a kept block scalar
    takes in the blank lines after it)."""
    assert check._odd(text) is odd
