"""The verification step refuses what it is there to refuse: a splice that changed more
(or other) than the plan asked for."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from proxy_postrender import engine, verify
from proxy_postrender.request import Request
from proxy_postrender.yamltext import check, libyaml, stream

ENV = (("HTTP_PROXY", "http://proxy.corp.example:3128"), ("NO_PROXY", ".svc"))
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: app
          image: nginx
          env:
            - name: A
              value: "1"
        - name: sidecar
          image: envoy
"""


def _spliced() -> tuple[str, list[Any]]:
    """The spliced document and the data it must read back as."""
    out = engine.process(DEPLOYMENT, Request(env=ENV)).text
    assert verify.equivalent(out, libyaml.load_data(out))
    return out, libyaml.load_data(out)


def test_the_engine_output_verifies() -> None:
    out, expected = _spliced()
    assert "HTTP_PROXY" in out and [s.text for s in stream.split(out)] == [out]
    assert verify.equivalent(out, expected)


# Each corruption stands for a class of splice bug; none may verify.
CORRUPTIONS = {
    "wrong indent (entry lands in the parent list)": (
        "            - name: HTTP_PROXY",
        "          - name: HTTP_PROXY",
    ),
    "wrong parent (env under the pod spec)": ("          env:\n", "      env:\n"),
    "lost line": ("              value: http://proxy.corp.example:3128\n", ""),
    "duplicated key": (
        "          image: nginx\n",
        "          image: nginx\n          image: nginx\n",
    ),
    "broken quoting": ('value: "1"', 'value: "1'),
    "value changed": ('value: ".svc"', 'value: ".svc,x"'),
    "a neighbour changed": ("image: envoy", "image: envoy2"),
}


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_a_wrong_splice_is_refused(name: str) -> None:
    out, expected = _spliced()
    old, new = CORRUPTIONS[name]
    assert old in out, name
    corrupted = out.replace(old, new, 1)
    assert not verify.equivalent(corrupted, expected), name


def _evidence() -> tuple[str, list[Any], verify.Evidence]:
    """The spliced DEPLOYMENT, its expected data and the evidence the engine gave the step."""
    found: list[tuple[str, list[Any], verify.Evidence]] = []
    real = verify.verified

    def spy(text: str, expected: list[Any], evidence: verify.Evidence | None = None) -> bool:
        if evidence is not None:
            found.append((text, copy.deepcopy(expected), evidence))
        return real(text, expected, evidence)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(verify, "verified", spy)
        engine.process(DEPLOYMENT, Request(env=ENV))
    (one,) = found
    return one


def test_the_step_proves_a_splice_without_reading_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out, expected, evidence = _evidence()
    monkeypatch.delenv(verify.FULL_CHECK, raising=False)
    read: list[str] = []
    real = verify.equivalent

    def full(text: str, docs: list[Any]) -> bool:
        read.append(text)
        return real(text, docs)

    monkeypatch.setattr(verify, "equivalent", full)
    assert verify.verified(out, expected, evidence) and read == []
    # without evidence, or with the switch: read back in full
    assert verify.verified(out, expected) and read == [out]
    monkeypatch.setenv(verify.FULL_CHECK, "1")
    assert verify.verified(out, expected, evidence) and read == [out, out]


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_the_step_refuses_a_wrong_splice(name: str) -> None:
    out, expected, evidence = _evidence()
    old, new = CORRUPTIONS[name]
    corrupted = out.replace(old, new, 1)
    assert not check.proved(evidence.before, corrupted, evidence.root, evidence.trace, expected[0])
    assert not verify.verified(corrupted, expected, evidence)
