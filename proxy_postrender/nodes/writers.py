"""The writers: how the tool's entries go into a bootstrap spec, by kind of place.

A dialect row (proxy_postrender/dialects.py) names the writers its specs take;
this module is their registry. Implemented:

- "file list": the tool's files appended to a list of files (``plan_files``);
- "command prefix": the tool's commands first in a list of commands (``plan_commands``);
- "config patch": one patch document (a string) of the tool's at the end of a list of
  patches, recognised by the digest its record keeps (``plan_patch``).

Declared for providers still to come, refused if a row names them: "field setter"
(fields of the spec set to the proxy values), "env list" (name/value entries in an
env list).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from proxy_postrender import TYPE_CHECKING, dialects

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError
from proxy_postrender.objects import Path
from proxy_postrender.structs import FrozenStruct, Struct
from proxy_postrender.yamltext.ops import Op, update_list


class Writer(FrozenStruct):
    name: str
    what: str  # what it does, for a message
    implemented: bool


REGISTRY: Mapping[str, Writer] = {
    w.name: w
    for w in (
        Writer(dialects.FILE_LIST, "appends the tool's files to a list of files", True),
        Writer(dialects.COMMAND_PREFIX, "puts the tool's commands first in a list", True),
        Writer(dialects.FIELD_SETTER, "sets fields of the spec to the proxy values", False),
        Writer(dialects.CONFIG_PATCH, "adds a patch document to a list of patches", True),
        Writer(dialects.ENV_LIST, "adds name/value entries to an env list", False),
    )
}


class WriterError(ValueError):
    """A dialect row names a writer that is unknown or not implemented yet."""


def writers_of(dialect: dialects.Dialect) -> tuple[Writer, ...]:
    """The writers of a row, each implemented; a WriterError names the first that is not.

    >>> [w.name for w in writers_of(dialects.KUBEADM)]
    ['file list', 'command prefix']
    """
    found = []
    for name in dialect.writers:
        writer = REGISTRY.get(name)
        if writer is None:
            raise WriterError(f"dialect {dialect.name}: no writer {name!r}")
        if not writer.implemented:
            raise WriterError(
                f"dialect {dialect.name}: the writer {name!r} ({writer.what}) is declared "
                "but not implemented yet"
            )
        found.append(writer)
    return tuple(found)


def as_list(value: Any, where: str) -> list[Any]:
    """A list value, or [] for null; anything else is an input error naming ``where``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where} is not a list")
    return value


def _list(spec: Mapping[str, Any], key: str, where: str) -> list[Any]:
    return as_list(spec.get(key), f"{where}.{key}")


class FilesPlan(Struct):
    ops: list[Op]
    owned: list[str]  # drop-in paths the tool owns afterwards, in the profile's order
    added: list[str]
    kept: list[str]  # drop-in paths the manifest already writes itself


def plan_files(
    parent: Mapping[str, Any],
    parent_path: Path,
    key: str,
    where: str,
    owned_paths: Sequence[str],
    wanted: Sequence[Mapping[str, str]],
    on_conflict: str,
    *,
    restore_empty: bool,
) -> FilesPlan:
    """The "file list" writer: the tool's files in ``parent[key]`` (a list of mappings
    with a ``path``). ``owned_paths``: the paths the annotation records as the tool's;
    those are replaced when they differ from ``wanted``; a path the manifest writes
    itself is kept (or overridden, or an error, per ``on_conflict``).

    >>> spec = {"files": [{"path": "/etc/motd", "content": "hi"}]}
    >>> dropin = {"path": "/etc/d.conf", "content": "[Service]"}
    >>> plan = plan_files(spec, ("spec",), "files", "spec", [], [dropin], "keep",
    ...     restore_empty=False)
    >>> plan.added, plan.owned, plan.kept
    (['/etc/d.conf'], ['/etc/d.conf'], [])
    """
    items = _list(parent, key, where)
    by_path = {f["path"]: f for f in wanted}
    deleted: set[int] = set()
    owned: list[str] = []
    kept: list[str] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InputError(f"{where}.{key}[{index}] is not a mapping")
        path = str(item.get("path"))
        if path in owned_paths:
            if path in by_path and dict(item) == by_path[path] and path not in seen:
                owned.append(path)
            else:
                deleted.add(index)
            seen.add(path)
        elif path in by_path:
            if on_conflict == "fail":
                raise InputError(f"{where}.{key} already writes {path} (onConflict: fail)")
            if on_conflict == "override":
                deleted.add(index)
            else:
                kept.append(path)
    added = [dict(f) for f in wanted if f["path"] not in owned and f["path"] not in kept]
    added_paths = [f["path"] for f in added]
    # in the profile's order: those kept as they were, and those added now
    now_owned = [f["path"] for f in wanted if f["path"] in owned or f["path"] in added_paths]
    ops = update_list(parent, parent_path, key, deleted, added, restore_empty=restore_empty)
    return FilesPlan(ops, now_owned, added_paths, kept)


def plan_commands(
    parent: Mapping[str, Any],
    parent_path: Path,
    key: str,
    where: str,
    owned_count: int,
    wanted: Sequence[str],
    *,
    restore_empty: bool,
    is_tool: Callable[[Any], bool],
    record: str,
) -> list[Op]:
    """The "command prefix" writer: the tool's commands stay first in ``parent[key]``,
    the manifest's follow unchanged. ``owned_count``: how many leading entries the
    annotation ``record`` says are the tool's (each must pass ``is_tool``).

    >>> spec = {"preBootstrapCommands": ["echo hi"]}
    >>> ops = plan_commands(spec, ("spec",), "preBootstrapCommands", "spec", 0,
    ...     ["export HTTP_PROXY=http://p:3128"], restore_empty=False,
    ...     is_tool=lambda c: c.startswith("export "), record="an/annotation")
    >>> len(ops)  # one insertion in front of "echo hi"
    1
    """
    items = _list(parent, key, where)
    if len(items) < owned_count or not all(map(is_tool, items[:owned_count])):
        raise InputError(
            f"{where}.{key}: the first {owned_count} entries, recorded in {record} as the "
            "tool's, are not all its commands (was the list edited?); restore them or delete "
            "the annotation"
        )
    if items[:owned_count] == list(wanted):
        return []
    return update_list(
        parent,
        parent_path,
        key,
        set(range(owned_count)),
        list(wanted),
        front=True,
        restore_empty=restore_empty,
    )


def patch_digest(text: str) -> str:
    """The digest a record keeps of the tool's patch document (16 hex digits of sha256).

    >>> patch_digest("machine: {}")
    '3b73c63331cfca16'
    """
    import hashlib  # lazy: only a run with a config-patch dialect needs it

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class PatchPlan(Struct):
    ops: list[Op]
    digest: str | None  # the digest of the tool's patch afterwards (None: no patch)
    changed: bool  # the tool's patch is added, replaced or taken out
    replaced: bool  # a patch of the tool's was there and differs from the wanted one


def plan_patch(
    parent: Mapping[str, Any],
    parent_path: Path,
    key: str,
    where: str,
    owned_digest: str | None,
    wanted: str | None,
    *,
    restore_empty: bool,
    record: str,
) -> PatchPlan:
    """The "config patch" writer: the tool's one patch document at the end of
    ``parent[key]`` (a list of strings), the manifest's patches unchanged and first.
    ``owned_digest``: the digest the annotation ``record`` keeps of the tool's patch
    (an entry with that digest must be there); ``wanted`` None takes it out.

    >>> spec = {"strategicPatches": ["machine: {}"]}
    >>> plan = plan_patch(spec, ("spec",), "strategicPatches", "spec", None,
    ...     "cluster: {}", restore_empty=False, record="an/annotation")
    >>> len(plan.ops), plan.digest == patch_digest("cluster: {}"), plan.changed
    (1, True, True)
    """
    items = _list(parent, key, where)
    found = None
    if owned_digest is not None:
        found = next(
            (
                index
                for index, item in enumerate(items)
                if isinstance(item, str) and patch_digest(item) == owned_digest
            ),
            None,
        )
        if found is None:
            raise InputError(
                f"{where}.{key}: the patch recorded in {record} as the tool's is not there "
                "(was it edited?); restore it or delete the annotation"
            )
    if found is not None and wanted is not None and items[found] == wanted:
        return PatchPlan([], owned_digest, False, False)
    deleted = set() if found is None else {found}
    added = [] if wanted is None else [wanted]
    if not deleted and not added:
        return PatchPlan([], None, False, False)
    ops = update_list(parent, parent_path, key, deleted, added, restore_empty=restore_empty)
    digest = None if wanted is None else patch_digest(wanted)
    return PatchPlan(ops, digest, True, found is not None and wanted is not None)
