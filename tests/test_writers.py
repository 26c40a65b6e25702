"""The writers of nodes/writers.py, each on its own: what it plans, and what it refuses.

Each implemented writer is run here as its docstring example shows, then on the cases
that decide it (the tool's entries replaced or kept, the manifest's kept, overridden or
refused; the tool's commands in front, an edited prefix refused). A writer that is only
declared is refused by name when a row names it.
"""

from __future__ import annotations

from typing import Any

import pytest

from proxy_postrender import dialects
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import writers
from proxy_postrender.yamltext.ops import AddKey, AppendItems, DeleteItem, InsertItems

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
    with pytest.raises(writers.WriterError, match=f"dialect future: .*{expected}"):
        writers.writers_of(row)


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
