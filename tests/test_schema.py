"""Output validates against the Kubernetes schemas (strict), wherever the input did."""

from __future__ import annotations

import pytest

from proxy_postrender.objects import walk_objects
from proxy_postrender.yamltext import libyaml
from tests.golden import Case, load_cases
from tests.validate import schema_errors


def _objects(text: str) -> list[object]:
    return [obj for doc in libyaml.load_data(text) for _, obj in walk_objects(doc)]


def _has_schema(obj: object) -> bool:
    try:
        schema_errors(obj)
    except LookupError:
        return False
    return True


CASES = [
    c
    for c in load_cases()
    if not c.exit and any(_has_schema(o) for o in _objects(c.input.decode("utf-8-sig")))
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden_output_is_schema_valid(case: Case) -> None:
    before = _objects(case.input.decode("utf-8-sig"))
    after = _objects(case.expected_path.read_text(encoding="utf-8-sig"))
    checked = 0
    # documents the tool adds (generated Secrets) come after the input's and must be valid
    for extra in after[len(before) :]:
        assert schema_errors(extra) == [], extra
        checked += 1
    for doc_in, doc_out in zip(before, after[: len(before)], strict=True):
        try:
            errors = schema_errors(doc_out)
        except LookupError:
            continue  # kinds with no schema, e.g. the example.com/v1 Deployment decoy
        assert errors == [] or errors == schema_errors(doc_in), errors
        checked += 1
    assert checked > 0


def test_a_misplaced_field_is_caught() -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "b", "envs": []}]},
    }
    assert schema_errors(doc)
