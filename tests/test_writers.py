"""The writers of nodes/writers.py, each on its own: what it plans, and what it refuses.

Each implemented writer is run here as its docstring example shows, then on the cases
that decide it (the tool's entries replaced or kept, the manifest's kept, overridden or
refused; the tool's commands in front, an edited prefix refused). A writer that is only
declared is refused by name when a row names it.
"""

from __future__ import annotations

import copy
import doctest
from typing import Any

import pytest

from proxy_postrender import dialects
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import writers
from proxy_postrender.yamltext.ops import (
    AddKey,
    AppendItems,
    DeleteItem,
    DeleteKey,
    InsertItems,
    apply,
)

DROPIN = {"path": "/etc/d.conf", "owner": "root:root", "content": "[Service]\n"}
MOTD = {"path": "/etc/motd", "content": "hi"}


def _files(spec: dict[str, Any], owned: list[str], on_conflict: str = "keep") -> Any:
    return writers.plan_files(
        spec, ("spec",), "files", "spec", owned, [DROPIN], on_conflict, restore_empty=False
    )


def _commands(spec: dict[str, Any], owned: int, wanted: list[str]) -> list[Any]:
    return writers.plan_commands(
        spec,
        ("spec",),
        "preBootstrapCommands",
        "spec",
        owned,
        wanted,
        restore_empty=False,
        is_tool=lambda c: isinstance(c, str) and c.startswith("export "),
        record="example/record",
    )


# --- "file list" ---------------------------------------------------------------------------


def test_file_list_docstring_example() -> None:
    spec = {"files": [{"path": "/etc/motd", "content": "hi"}]}
    dropin = {"path": "/etc/d.conf", "content": "[Service]"}
    plan = writers.plan_files(
        spec, ("spec",), "files", "spec", [], [dropin], "keep", restore_empty=False
    )
    assert (plan.added, plan.owned, plan.kept) == (["/etc/d.conf"], ["/etc/d.conf"], [])
    assert plan.ops == [AppendItems(("spec", "files"), (dropin,))]


def test_file_list_creates_a_missing_list_and_leaves_its_own_file_alone() -> None:
    assert _files({}, []).ops == [AddKey(("spec",), "files", [DROPIN])]
    same = _files({"files": [MOTD, dict(DROPIN)]}, ["/etc/d.conf"])
    assert (same.ops, same.owned, same.added) == ([], ["/etc/d.conf"], [])


def test_file_list_replaces_its_own_changed_file() -> None:
    old = {**DROPIN, "content": "[Service]\nEnvironment=old\n"}
    plan = _files({"files": [MOTD, old]}, ["/etc/d.conf"])
    assert plan.ops == [DeleteItem(("spec", "files", 1)), AppendItems(("spec", "files"), (DROPIN,))]


def test_file_list_keeps_overrides_or_refuses_the_manifests_file_per_on_conflict() -> None:
    theirs = {"path": "/etc/d.conf", "content": "their own"}
    kept = _files({"files": [theirs]}, [])
    assert (kept.ops, kept.kept, kept.owned) == ([], ["/etc/d.conf"], [])
    overridden = _files({"files": [theirs]}, [], "override")
    assert overridden.owned == ["/etc/d.conf"]
    assert DeleteItem(("spec", "files", 0)) in overridden.ops
    with pytest.raises(InputError, match=r"spec.files already writes /etc/d.conf"):
        _files({"files": [theirs]}, [], "fail")


def test_file_list_refuses_an_item_that_is_not_a_mapping() -> None:
    with pytest.raises(InputError, match=r"spec.files\[0\] is not a mapping"):
        _files({"files": ["oops"]}, [])


# --- "command prefix" ----------------------------------------------------------------------


def test_command_prefix_docstring_example() -> None:
    spec = {"preBootstrapCommands": ["echo hi"]}
    ops = _commands(spec, 0, ["export HTTP_PROXY=http://p:3128"])
    assert ops == [
        InsertItems(("spec", "preBootstrapCommands"), ("export HTTP_PROXY=http://p:3128",))
    ]


def test_command_prefix_replaces_only_its_recorded_prefix() -> None:
    spec = {"preBootstrapCommands": ["export A=1", "export B=2", "echo mine"]}
    assert _commands(spec, 2, ["export A=1", "export B=2"]) == []  # a re-run: nothing
    ops = _commands(spec, 2, ["export A=3"])
    assert ops[:2] == [
        DeleteItem(("spec", "preBootstrapCommands", 0)),
        DeleteItem(("spec", "preBootstrapCommands", 1)),
    ]
    assert ops[2] == InsertItems(("spec", "preBootstrapCommands"), ("export A=3",))


def test_command_prefix_refuses_an_edited_prefix_naming_the_record() -> None:
    spec = {"preBootstrapCommands": ["echo edited", "echo mine"]}
    with pytest.raises(InputError, match=r"recorded in example/record as the tool's"):
        _commands(spec, 1, ["export A=1"])


# --- the registry --------------------------------------------------------------------------


def test_registry_has_every_writer_a_row_may_name() -> None:
    assert set(writers.REGISTRY) == set(dialects.WRITERS)
    implemented = {name for name, w in writers.REGISTRY.items() if w.implemented}
    assert implemented == {
        dialects.FILE_LIST,
        dialects.COMMAND_PREFIX,
        dialects.CONFIG_PATCH,
        dialects.FIELD_SETTER,
        dialects.ENV_LIST,
    }


def test_every_shipped_row_names_implemented_writers_only() -> None:
    for dialect in dialects.DIALECTS:
        assert [w.name for w in writers.writers_of(dialect)] == list(dialect.writers)


@pytest.mark.parametrize("name", [dialects.ENV_LIST, "no such writer"])
def test_a_row_naming_a_declared_or_unknown_writer_is_refused(name: str) -> None:
    row = dialects.Dialect(
        name="future",
        kinds=(),
        files_key="files",
        commands_key="preCommands",
        formats=(),
        os_rule=dialects.OS_LINUX,
        restart=dialects.RESTART_CONTAINERD,
        writers=(dialects.FILE_LIST, name),
    )
    expected = "no writer" if name == "no such writer" else "declared but not implemented"
    # every shipped writer is implemented: a registry where one is only declared
    registry = {
        **writers.REGISTRY,
        dialects.ENV_LIST: writers.Writer(dialects.ENV_LIST, "adds entries", False),
    }
    with pytest.raises(writers.WriterError, match=f"dialect future: .*{expected}"):
        writers.writers_of(row, registry)


# --- config patch ----------------------------------------------------------------------------

_MINE = 'machine:\n  env:\n    HTTP_PROXY: "http://p:3128"\n'


def _patch(spec: dict[str, Any], owned: str | None, wanted: str | None) -> writers.PatchPlan:
    return writers.plan_patch(
        spec,
        ("spec",),
        "strategicPatches",
        "spec",
        owned,
        wanted,
        restore_empty=False,
        record="example/record",
    )


def test_config_patch_appends_after_the_manifests_patches() -> None:
    spec: dict[str, Any] = {"strategicPatches": ["machine: {install: {disk: /dev/sda}}"]}
    plan = _patch(spec, None, _MINE)
    assert plan.ops == [AppendItems(("spec", "strategicPatches"), (_MINE,))]
    assert (plan.digest, plan.changed, plan.replaced) == (writers.patch_digest(_MINE), True, False)


def test_config_patch_again_is_no_change_and_other_values_replace_it() -> None:
    spec: dict[str, Any] = {"strategicPatches": ["theirs: 1", _MINE]}
    digest = writers.patch_digest(_MINE)
    same = _patch(spec, digest, _MINE)
    assert (same.ops, same.digest, same.changed) == ([], digest, False)
    other = _MINE.replace("p:3128", "q:3128")
    moved = _patch(spec, digest, other)
    assert moved.ops == [
        DeleteItem(("spec", "strategicPatches", 1)),
        AppendItems(("spec", "strategicPatches"), (other,)),
    ]
    assert (moved.digest, moved.replaced) == (writers.patch_digest(other), True)
    gone = _patch(spec, digest, None)
    assert (gone.ops, gone.digest) == ([DeleteItem(("spec", "strategicPatches", 1))], None)


def test_config_patch_refuses_a_recorded_patch_that_is_not_there() -> None:
    spec: dict[str, Any] = {"strategicPatches": [_MINE + "# edited\n"]}
    with pytest.raises(InputError, match=r"recorded in example/record as the tool's is not"):
        _patch(spec, writers.patch_digest(_MINE), _MINE)


# --- the "env list" writer -----------------------------------------------------------------

API = ("clusterConfiguration", "apiServer", "extraEnvs")
SCHED = ("clusterConfiguration", "scheduler", "extraEnvs")
PROXY = [{"name": "HTTP_PROXY", "value": "http://p:3128"}, {"name": "NO_PROXY", "value": "a"}]


def _envs(
    spec: dict[str, Any],
    owned: dict[Any, list[str]] | None = None,
    created: list[Any] | None = None,
    wanted: list[dict[str, str]] | None = None,
    on_conflict: str = "keep",
) -> writers.EnvListPlan:
    return writers.plan_env_lists(
        spec,
        ("spec",),
        [API, SCHED],
        "spec",
        owned or {},
        created or [],
        PROXY if wanted is None else wanted,
        on_conflict,
    )


def _applied(spec: dict[str, Any], plan: writers.EnvListPlan) -> dict[str, Any]:
    tree = {"spec": copy.deepcopy(spec)}
    apply(tree, plan.ops)
    return tree["spec"]


def test_env_lists_created_under_one_new_level_and_recorded() -> None:
    spec: dict[str, Any] = {"files": []}
    plan = _envs(spec)
    assert plan.created == [(("clusterConfiguration",), "absent")]
    assert plan.owned == {API: ["HTTP_PROXY", "NO_PROXY"], SCHED: ["HTTP_PROXY", "NO_PROXY"]}
    out = _applied(spec, plan)
    assert out["clusterConfiguration"] == {
        "apiServer": {"extraEnvs": PROXY},
        "scheduler": {"extraEnvs": PROXY},
    }
    # a re-run with the record changes nothing
    again = _envs(out, plan.owned, plan.created)
    assert again.ops == [] and again.created == plan.created
    # removal gives back the spec: the created level goes with the tool's entries
    removed = _envs(out, plan.owned, plan.created, wanted=[])
    assert removed.ops == [DeleteKey(("spec", "clusterConfiguration"))]
    assert _applied(out, removed) == spec


def test_env_lists_next_to_the_manifest_entries_and_a_changed_profile_replaces_in_place() -> None:
    spec: dict[str, Any] = {
        "clusterConfiguration": {
            "apiServer": {"extraEnvs": [{"name": "GODEBUG", "value": "x=1"}]},
            "scheduler": {"extraArgs": {"v": "2"}},
        }
    }
    plan = _envs(spec)
    assert plan.created == [(SCHED, "absent")]
    out = _applied(spec, plan)
    assert out["clusterConfiguration"]["apiServer"]["extraEnvs"] == [
        {"name": "GODEBUG", "value": "x=1"},
        *PROXY,
    ]
    changed = [{"name": "HTTP_PROXY", "value": "http://q:3128"}]
    plan2 = _envs(out, plan.owned, plan.created, wanted=changed)
    out2 = _applied(out, plan2)
    assert out2["clusterConfiguration"]["apiServer"]["extraEnvs"] == [
        {"name": "GODEBUG", "value": "x=1"},
        *changed,
    ]
    assert plan2.owned == {API: ["HTTP_PROXY"], SCHED: ["HTTP_PROXY"]}
    removed = _envs(out2, plan2.owned, plan2.created, wanted=[])
    assert _applied(out2, removed) == spec


def test_env_lists_a_created_level_that_got_other_keys_keeps_them_and_no_empty_list() -> None:
    spec: dict[str, Any] = {"clusterConfiguration": None}
    plan = _envs(spec)
    assert plan.created == [(("clusterConfiguration",), "null")]
    out = _applied(spec, plan)
    out["clusterConfiguration"]["apiServer"]["extraArgs"] = {"v": "2"}  # someone added it
    removed = _envs(out, plan.owned, plan.created, wanted=[])
    after = _applied(out, removed)
    # the scheduler level, the tool's, holds nothing else: it goes (v1beta2 wants no {})
    assert after == {"clusterConfiguration": {"apiServer": {"extraArgs": {"v": "2"}}}}
    assert not any(v == [] for v in _leaves(after))


def _leaves(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [x for v in node.values() for x in [v, *_leaves(v)]]
    return []


def test_env_lists_an_empty_list_or_mapping_comes_back_as_it_was() -> None:
    spec: dict[str, Any] = {
        "clusterConfiguration": {"apiServer": {"extraEnvs": []}, "scheduler": {}}
    }
    plan = _envs(spec)
    assert sorted(plan.created) == sorted([(API, "list"), (SCHED[:2], "empty")])
    out = _applied(spec, plan)
    for created in plan.created:
        assert writers.parse_created(writers.created_entry(created)) == created
    assert _applied(out, _envs(out, plan.owned, plan.created, wanted=[])) == spec


@pytest.mark.parametrize("on_conflict", ["keep", "override", "fail"])
def test_env_lists_a_name_the_manifest_sets_follows_on_conflict(on_conflict: str) -> None:
    theirs = {"name": "NO_PROXY", "value": "mine"}
    spec: dict[str, Any] = {"clusterConfiguration": {"apiServer": {"extraEnvs": [theirs]}}}
    if on_conflict == "fail":
        with pytest.raises(
            InputError, match=r"apiServer.extraEnvs already sets NO_PROXY \(onConflict: fail\)"
        ):
            _envs(spec, on_conflict=on_conflict)
        return
    plan = _envs(spec, on_conflict=on_conflict)
    api = _applied(spec, plan)["clusterConfiguration"]["apiServer"]["extraEnvs"]
    if on_conflict == "keep":
        assert api == [theirs, PROXY[0]] and plan.kept == [f"{'.'.join(API)} NO_PROXY"]
        assert plan.owned[API] == ["HTTP_PROXY"]
    else:
        assert api == [PROXY[1], PROXY[0]] and plan.owned[API] == ["NO_PROXY", "HTTP_PROXY"]


def test_env_lists_not_a_list_or_a_name_twice_is_an_input_error() -> None:
    with pytest.raises(
        InputError, match=r"spec\.clusterConfiguration\.apiServer\.extraEnvs is not a list"
    ):
        _envs({"clusterConfiguration": {"apiServer": {"extraEnvs": "x"}}})
    twice = {"clusterConfiguration": {"apiServer": {"extraEnvs": [PROXY[0], PROXY[0]]}}}
    with pytest.raises(InputError, match="sets HTTP_PROXY twice"):
        _envs(twice, {API: ["HTTP_PROXY"]})


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(writers).failed == 0
