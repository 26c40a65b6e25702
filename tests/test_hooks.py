"""Helm hooks and the objects the run generates (Secret of createSecret, CA ConfigMap).

A hook workload reads its own copies (``<name>-hooks``), emitted as hooks that
Helm creates before it; ordinary workloads read the ordinary objects. The rule
looks at each workload alone, so the two calls of a split post-render (Helm 4.2
``separate``, Flux 2.9 ``postRenderStrategy: separate``: the hooks alone, then
the templates alone) emit each generated object exactly once between them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from proxy_postrender.yamltext import libyaml
from tests.e2e import documents, is_hook
from tests.helpers import GOLDEN, run_cli

CASE = GOLDEN / "hooks-generated"
PROFILE = str(CASE / "profile.yaml")
HOOK = "helm.sh/hook"
WEIGHT = "helm.sh/hook-weight"
PHASES = ("pre-install", "pre-upgrade", "post-install", "test")

Key = tuple[str, str | None, str]  # kind, namespace, name


def split(stream_text: str) -> tuple[str, str]:
    """The hooks and the templates of a stream, as a split post-render sends them."""
    hooks: list[str] = []
    templates: list[str] = []
    for raw in documents(stream_text):
        text = raw if raw.startswith("---") else "---\n" + raw
        (hooks if is_hook(libyaml.load_data(raw)[0]) else templates).append(text)
    return "".join(hooks), "".join(templates)


def render(stream_text: str, *args: str) -> str:
    proc = run_cli([*args], stream_text.encode(), cwd=CASE)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def objects(stream_text: str) -> list[Mapping[str, Any]]:
    return [doc for doc in libyaml.load_data(stream_text) if isinstance(doc, Mapping)]


def key(obj: Mapping[str, Any]) -> Key:
    metadata = obj.get("metadata") or {}
    return str(obj["kind"]), metadata.get("namespace"), str(metadata["name"])


def notes(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def phases(obj: Mapping[str, Any]) -> set[str]:
    return {p.strip() for p in str(notes(obj).get(HOOK, "")).split(",") if p.strip()}


def weight(obj: Mapping[str, Any]) -> int:
    return int(notes(obj).get(WEIGHT, "0"))


def references(obj: Mapping[str, Any]) -> Iterator[Key]:
    """The Secrets and ConfigMaps the workload's pod reads (env and volumes)."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    spec = obj.get("spec") or {}
    pod: Any = (spec.get("template") or {}).get("spec") if "template" in spec else spec
    for container in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
        for item in container.get("env") or []:
            ref = (item.get("valueFrom") or {}).get("secretKeyRef")
            if ref:
                yield "Secret", namespace, ref["name"]
    for volume in pod.get("volumes") or []:
        if "configMap" in volume:
            yield "ConfigMap", namespace, volume["configMap"]["name"]


def assert_references_resolve(output: str) -> None:
    """Every reference resolves in ``output`` to an object Helm has created by the time
    the reader runs: a hook reads a hook of each of its phases with a lower weight; an
    ordinary workload reads an ordinary object."""
    found = {key(obj): obj for obj in objects(output)}
    for obj in objects(output):
        for ref in references(obj):
            assert ref in found, f"{key(obj)} reads {ref}, not in the output"
            target = found[ref]
            if is_hook(obj):
                assert is_hook(target), (key(obj), ref)
                assert phases(obj) <= phases(target), (key(obj), ref)
                assert weight(target) < weight(obj), (key(obj), ref)
            else:
                assert not is_hook(target), (key(obj), ref)


def generated(output: str) -> list[Key]:
    return [key(obj) for obj in objects(output) if "proxy-postrender.io/generated" in notes(obj)]


def test_a_combined_call_gives_hooks_their_own_copies() -> None:
    output = (CASE / "expected.yaml").read_text()
    assert_references_resolve(output)
    made = generated(output)
    assert len(made) == len(set(made)) == 6
    for obj in objects(output):
        if key(obj) in made and is_hook(obj):
            assert key(obj)[2].endswith("-hooks")
            assert notes(obj)["helm.sh/hook-delete-policy"] == "before-hook-creation"
    copies = {key(o)[1]: o for o in objects(output) if key(o) in made and is_hook(o)}
    # the phases of the hooks that read them, one weight below the lowest of theirs
    assert phases(copies["shop"]) == {"pre-install", "pre-upgrade", "post-install"}
    assert weight(copies["shop"]) == -6
    assert phases(copies["billing"]) == {"test"} and weight(copies["billing"]) == -1


def test_split_calls_emit_each_generated_object_once() -> None:
    """Helm 4.2 ``separate``: the hooks alone, then the templates alone."""
    hooks, templates = split(CASE.joinpath("input.yaml").read_text())
    assert hooks and templates
    hooks_out, templates_out = render(hooks, PROFILE), render(templates, PROFILE)
    assert_references_resolve(hooks_out)
    assert_references_resolve(templates_out)
    made = generated(hooks_out) + generated(templates_out)
    assert len(made) == len(set(made))
    # the same objects as one combined call, each in the call whose workloads read it
    combined = objects((CASE / "expected.yaml").read_text())
    assert sorted(key(o) for o in combined) == sorted(
        key(o) for o in objects(hooks_out) + objects(templates_out)
    )
    assert all(is_hook(o) for o in objects(hooks_out))
    assert not any(is_hook(o) for o in objects(templates_out))


@pytest.mark.parametrize("part", [0, 1], ids=["hooks", "templates"])
def test_each_part_reruns_identically_and_removes_exactly(part: int) -> None:
    text = split(CASE.joinpath("input.yaml").read_text())[part]
    once = render(text, PROFILE)
    assert render(once, PROFILE) == once
    assert render(once, "--remove") == text


def test_hooks_of_no_known_phase_and_without_generated_objects() -> None:
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: shop\n"
        "  annotations:\n    helm.sh/hook: {hook}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: c\n        image: busybox\n"
    )
    # a hook of no phase Helm knows never runs: no copy is made for it
    out = render(job.format(hook="pre-nothing"), PROFILE)
    assert generated(out) == []
    # without createSecret and caBundle, a hook only gets the variables
    plain = render(job.format(hook="pre-install"), str(GOLDEN / "profile.yaml"))
    assert generated(plain) == [] and "-hooks" not in plain


def test_a_hook_of_an_earlier_version_moves_to_its_copy() -> None:
    """An output where the hook read the ordinary Secret (before hooks had copies): a
    re-run points the hook at its copy and emits it (the re-valued entries move to the
    end of the list, as any re-valued entry of the tool's does)."""
    hooks, _ = split(CASE.joinpath("input.yaml").read_text())
    once = render(hooks, PROFILE)
    older = "".join(
        ("" if raw.startswith("---") else "---\n") + raw.replace("-hooks", "")
        for raw in documents(once)
        if "proxy-postrender.io/generated" not in raw
    )
    again = render(older, PROFILE)

    def by_name(obj: Mapping[str, Any]) -> str:
        return repr(sorted(_env_sorted(obj).items()))

    assert [by_name(o) for o in objects(again)] == [by_name(o) for o in objects(once)]


def _env_sorted(value: Any) -> Any:
    """``value`` with each env list in name order."""
    if isinstance(value, Mapping):
        return {
            k: sorted((_env_sorted(i) for i in v), key=lambda i: str(i.get("name")))
            if k == "env" and isinstance(v, list)
            else _env_sorted(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_env_sorted(v) for v in value]
    return value
