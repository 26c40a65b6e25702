"""The target table: built-in entries and spec.targets in one table, conflicts refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy_postrender import planners, targets
from proxy_postrender.errors import ProfileError
from proxy_postrender.profile import loader
from proxy_postrender.targets import BUILT_IN, FIELDS, PODS, Target, TargetConflict, TargetTable

HEAD = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: t}\n"
    "spec:\n  httpProxy: http://p:1\n  targets:\n"
)
ROLLOUT = "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, "


def test_every_built_in_entry_names_a_planner_and_a_kind_once() -> None:
    kinds = [(t.group, t.kind) for t in targets.BUILT_IN_TARGETS]
    assert len(kinds) == len(set(kinds))
    assert {t.planner for t in targets.BUILT_IN_TARGETS} <= set(planners.PLANNERS)
    assert set(targets.CUSTOM_PLANNERS) <= set(planners.PLANNERS)


def test_lookup_is_by_group_and_kind_not_version() -> None:
    for api_version in ("apps/v1", "apps/v1beta2"):
        found = BUILT_IN.find({"apiVersion": api_version, "kind": "Deployment"})
        assert found is not None and found.planner == PODS
    assert BUILT_IN.find({"apiVersion": "example.com/v1", "kind": "Deployment"}) is None
    assert BUILT_IN.paths({"apiVersion": "v1", "kind": "Pod"}, PODS) == (("spec",),)
    assert BUILT_IN.paths({"apiVersion": "v1", "kind": "Pod"}, FIELDS) == ()
    assert "List" in BUILT_IN.kinds and "Deployment" in BUILT_IN.kinds


def test_entries_of_one_planner_for_one_kind_merge() -> None:
    a = Target("x", "Y", PODS, (("spec", "a"),), origin="spec.targets[0]")
    b = Target("x", "Y", PODS, (("spec", "b"),), origin="spec.targets[1]")
    merged = TargetTable.of([a, b]).find({"apiVersion": "x/v1", "kind": "Y"})
    assert merged is not None and merged.paths == (("spec", "a"), ("spec", "b"))


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (
            [Target("apps", "Deployment", PODS, (("spec",),), origin="spec.targets[0]")],
            "spec.targets[0]: Deployment is a built-in target",
        ),
        (
            [
                Target("x", "Y", PODS, (("spec",),), origin="spec.targets[0]"),
                Target(
                    "x",
                    "Y",
                    FIELDS,
                    fields=((("spec", "p"), "httpProxy"),),
                    origin="spec.targets[1]",
                ),
            ],
            "spec.targets[1]: Y is already a target of spec.targets[0]",
        ),
        (
            [
                Target("x", "Y", PODS, (("spec",),), origin="spec.targets[0]"),
                Target("x", "Y", PODS, (("spec",),), origin="spec.targets[1]"),
            ],
            "spec.targets[1]: $.spec of Y is in spec.targets[0]",
        ),
        (
            [
                Target(
                    "x",
                    "Y",
                    FIELDS,
                    fields=((("spec", "p"), "httpProxy"),),
                    origin="spec.targets[0]",
                ),
                Target(
                    "x", "Y", FIELDS, fields=((("spec", "p"), "noProxy"),), origin="spec.targets[1]"
                ),
            ],
            "spec.targets[1]: $.spec.p of Y is in spec.targets[0]",
        ),
    ],
)
def test_conflicting_entries_are_refused(entries: list[Target], message: str) -> None:
    with pytest.raises(TargetConflict) as info:
        BUILT_IN.with_entries(entries)
    assert str(info.value).startswith(message)


def test_a_kind_with_a_pod_template_and_setters_is_a_profile_error(tmp_path: Path) -> None:
    """Before the one table, the setters of such a kind were silently ignored."""
    path = tmp_path / "p.yaml"
    path.write_text(
        HEAD
        + f"  - {ROLLOUT}podTemplate: $.spec.template}}\n"
        + f"  - {ROLLOUT}set: {{$.spec.proxy: httpProxy}}}}\n"
    )
    with pytest.raises(ProfileError, match=r"spec\.targets\[1\]: Rollout is already a target"):
        loader.load(str(path), environ={})


def test_a_profile_adds_its_targets_to_the_built_in_ones(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + f"  - {ROLLOUT}podTemplate: $.spec.template}}\n  - preset: ocm-addon\n")
    table = loader.load(str(path), environ={}).custom
    rollout = table.find({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout"})
    assert rollout is not None and rollout.paths == (("spec", "template", "spec"),)
    addon = table.find(
        {"apiVersion": "addon.open-cluster-management.io/v1", "kind": "AddOnDeploymentConfig"}
    )
    assert addon is not None and addon.planner == FIELDS and len(addon.fields) == 4
    assert table.find({"apiVersion": "apps/v1", "kind": "Deployment"}) is not None
