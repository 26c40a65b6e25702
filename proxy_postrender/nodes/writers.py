"""The writers: how the tool's entries go into a bootstrap spec, by kind of place.

A dialect row (proxy_postrender/dialects.py) names the writers its specs take;
this module is their registry. Implemented:

- "file list": the tool's files appended to a list of files (``plan_files``);
- "command prefix": the tool's commands first in a list of commands (``plan_commands``);
- "config patch": one patch document (a string) of the tool's at the end of a list of
  patches, recognised by the digest its record keeps (``plan_patch``);
- "field setter": fields of the spec set to the proxy values (``plan_fields``).

Declared for providers still to come, refused if a row names them: "env list"
(name/value entries in an env list).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from proxy_postrender import TYPE_CHECKING, dialects

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError
from proxy_postrender.objects import Path
from proxy_postrender.structs import FrozenStruct, Struct
from proxy_postrender.yamltext.ops import AddKey, DeleteKey, Op, SetValue, update_list


class Writer(FrozenStruct):
    name: str
    what: str  # what it does, for a message
    implemented: bool


REGISTRY: Mapping[str, Writer] = {
    w.name: w
    for w in (
        Writer(dialects.FILE_LIST, "appends the tool's files to a list of files", True),
        Writer(dialects.COMMAND_PREFIX, "puts the tool's commands first in a list", True),
        Writer(dialects.FIELD_SETTER, "sets fields of the spec to the proxy values", True),
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


# The "field setter" writer's record entries, one per field the tool owns:
# ``field=NAME`` (the field was absent), ``field=NAME:null`` (null, written the plain
# way), ``field=NAME:null:SPELLING`` (null, written so: record.escape), and
# ``field=NAME:was:VALUE`` (a string the tool replaced, onConflict: override).
FIELD_ENTRY: str = "field="


class FieldsPlan(Struct):
    ops: list[Op]
    entries: list[str]  # the record's entries for the fields the tool owns afterwards
    set: list[str]  # the fields written (or changed) now
    kept: list[str]  # set by the manifest to another value, left as they are
    restored: list[str]  # the fields given back their input's value (or taken out)


class _Was(FrozenStruct):
    """What a field the tool owns held before: absent, null (with its spelling) or a string."""

    state: str  # "absent", "null" or "value"
    text: str | None = None  # the null's spelling, or the string

    def entry(self, name: str) -> str:
        from proxy_postrender import record  # lazy: start-up

        if self.state == "absent":
            return f"{FIELD_ENTRY}{name}"
        tail = "" if self.text is None else f":{record.escape(self.text)}"
        return f"{FIELD_ENTRY}{name}:{'null' if self.state == 'null' else 'was'}{tail}"

    @classmethod
    def parse(cls, entry: str) -> tuple[str, _Was]:
        """The field and what it held, from a record entry (an InputError if malformed)."""
        from proxy_postrender import record  # lazy: start-up

        name, _, rest = entry.removeprefix(FIELD_ENTRY).partition(":")
        state, sep, text = rest.partition(":")
        if not name or (rest and state not in ("null", "was")) or (state == "was" and not sep):
            raise InputError(f"malformed field entry in a record: {entry!r}")
        if not rest:
            return name, cls("absent")
        shown = record.unescape(text) if sep else None
        return name, cls(state if state == "null" else "value", shown)

    def restore(self, path: Path) -> Op:
        if self.state == "absent":
            return DeleteKey(path)
        if self.state == "null":
            return SetValue(path, None, self.text)
        return SetValue(path, self.text)


def parse_fields(entries: Sequence[str]) -> dict[str, _Was]:
    """The fields a record says the tool owns, and what each held before."""
    return dict(_Was.parse(e) for e in entries if e.startswith(FIELD_ENTRY))


def plan_fields(
    parent: Mapping[str, Any],
    parent_path: Path,
    where: str,
    owned: Mapping[str, _Was],
    wanted: Sequence[tuple[str, str]],
    on_conflict: str,
) -> FieldsPlan:
    """The "field setter" writer: each ``(field, value)`` of ``wanted`` set in ``parent``
    (a mapping); a field the manifest sets to another value is kept (or overridden, or
    an error, per ``on_conflict``). ``owned``: the fields the record says the tool set,
    with what each held before: those no longer wanted get that back, so that removal
    gives the input back. A null field counts as unset.

    >>> plan = plan_fields({"httpProxy": None}, ("spec",), "spec", {},
    ...     [("httpProxy", "http://p:3128"), ("noProxy", "10.0.0.0/8")], "keep")
    >>> plan.set, plan.entries
    (['httpProxy', 'noProxy'], ['field=httpProxy:null', 'field=noProxy'])
    """
    from proxy_postrender.yamltext.tree import spelling  # lazy: start-up

    result = FieldsPlan([], [], [], [], [])
    values = dict(wanted)
    for name, was in owned.items():
        if name not in values and name in parent:
            result.ops.append(was.restore((*parent_path, name)))
            result.restored.append(name)
    for name, value in wanted:
        path = (*parent_path, name)
        current = parent.get(name)
        if name in owned and name in parent:
            result.entries.append(owned[name].entry(name))
            if current != value:
                result.ops.append(SetValue(path, value))
                result.set.append(name)
            continue
        if name not in parent:
            result.ops.append(AddKey(parent_path, name, value))
            was = _Was("absent")
        elif current is None:
            result.ops.append(SetValue(path, value))
            was = _Was("null", spelling(parent, name))
        elif current == value:
            continue  # the manifest says it already
        elif not isinstance(current, str):
            raise InputError(f"{where}.{name} is not a string")
        elif on_conflict == "fail":
            raise InputError(f"{where}.{name} is already set (onConflict: fail)")
        elif on_conflict == "keep":
            result.kept.append(name)
            continue
        else:
            result.ops.append(SetValue(path, value))
            was = _Was("value", current)
        result.entries.append(was.entry(name))
        result.set.append(name)
    return result
