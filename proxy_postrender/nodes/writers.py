"""The writers: how the tool's entries go into a bootstrap spec, by kind of place.

A dialect row (proxy_postrender/dialects.py) names the writers its specs take;
this module is their registry. Implemented:

- "file list": the tool's files appended to a list of files (``plan_files``);
- "command prefix": the tool's commands first in a list of commands (``plan_commands``);
- "config patch": one patch document (a string) of the tool's at the end of a list of
  patches, recognised by the digest its record keeps (``plan_patch``);
- "field setter": fields of the spec set to the proxy values (``plan_fields``);
- "env list": name/value entries in env lists (``plan_env_lists``).

A row naming a writer this registry does not know is refused.
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
        Writer(dialects.ENV_LIST, "adds name/value entries to an env list", True),
    )
}


class WriterError(ValueError):
    """A dialect row names a writer that is unknown or not implemented yet."""


def writers_of(
    dialect: dialects.Dialect, registry: Mapping[str, Writer] | None = None
) -> tuple[Writer, ...]:
    """The writers of a row, each implemented; a WriterError names the first that is not
    (``registry``: the one to read, this module's by default).

    >>> [w.name for w in writers_of(dialects.KUBEADM)]
    ['file list', 'command prefix', 'env list']
    """
    found = []
    for name in dialect.writers:
        writer = (REGISTRY if registry is None else registry).get(name)
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


# --- the "env list" writer ------------------------------------------------------------
# (issue 29, item 3: kubeadm's extraEnvs; appended as its own block, registered below)

from proxy_postrender.yamltext.ops import (  # noqa: E402
    AppendItems,
    DeleteItem,
)

EnvEntry = Mapping[str, str]  # {"name": ..., "value": ...}
Place = tuple[str, ...]  # a list's path under the root the writer is given
# a level the tool filled in place of nothing: its path under the root and what was
# there ("absent", "null", "empty" for {} or [])
Created = tuple[Place, str]
_WAS_SUFFIX: Mapping[str, str] = {"absent": "", "null": ":null", "empty": ":{}", "list": ":[]"}


def created_entry(created: Created) -> str:
    """A created level as a record entry's value: ``PATH``, ``PATH:null``, ``PATH:{}``,
    ``PATH:[]``."""
    return ".".join(created[0]) + _WAS_SUFFIX[created[1]]


def parse_created(value: str) -> Created | None:
    """The created level ``created_entry`` wrote; None for anything else."""
    text, _, suffix = value.partition(":")
    was = {v: k for k, v in _WAS_SUFFIX.items()}.get(f":{suffix}" if suffix else "")
    steps = tuple(text.split("."))
    if was is None or not all(steps) or value != created_entry((steps, was)):
        return None
    return steps, was


class EnvListPlan(Struct):
    ops: list[Op]
    owned: dict[Place, list[str]]  # per list, the names the tool owns afterwards
    kept: list[str]  # "PLACE NAME" entries the manifest sets itself (onConflict: keep)
    created: list[Created]  # the levels the tool filled, for the record


def _gap(root: Mapping[str, Any], place: Place, where: str) -> tuple[Created | None, Any]:
    """The first level on the way to ``place`` (the list included) that is absent, null
    or empty, and the list when there is none."""
    node: Any = root
    for depth, step in enumerate(place, 1):
        path = place[:depth]
        if not isinstance(node, Mapping):
            raise InputError(f"{where}.{'.'.join(path[:-1])} is not a mapping")
        if step not in node:
            return (path, "absent"), None
        value = node[step]
        if value is None:
            return (path, "null"), None
        if depth == len(place):
            if not isinstance(value, list):
                raise InputError(f"{where}.{'.'.join(path)} is not a list")
            return ((path, "list"), None) if not value else (None, value)
        if isinstance(value, Mapping) and not value:
            return (path, "empty"), None
        node = value
    return None, None  # pragma: no cover - a place has at least one step


def _restore_op(path: Path, was: str) -> Op:
    if was == "absent":
        return DeleteKey(path)
    return SetValue(path, {"null": None, "empty": {}, "list": []}[was])


def _place_ops(
    items: list[Any],
    path: Path,
    where: str,
    owned: Sequence[str],
    wanted: Sequence[EnvEntry],
    on_conflict: str,
) -> tuple[list[Op], list[str], list[str]]:
    """The entries of one present list: the tool's replaced in place, deleted or added at
    the end; the manifest's own entry of a wanted name kept, overridden or refused. The
    ops, the names owned afterwards, the names kept."""
    by_name = {entry["name"]: entry for entry in wanted}
    ops: list[Op] = []
    now: list[str] = []
    kept: list[str] = []
    deleted = 0
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InputError(f"{where}[{index}] is not a mapping")
        name = item.get("name")
        if name in now or name in kept:
            raise InputError(f"{where} sets {name} twice; leave one")
        if name in owned or (name in by_name and on_conflict == "override"):
            if name in by_name:
                if dict(item) != dict(by_name[name]):
                    ops.append(SetValue((*path, index), dict(by_name[name])))
                now.append(str(name))
            else:
                ops.append(DeleteItem((*path, index)))
                deleted += 1
        elif name in by_name:
            if on_conflict == "fail":
                raise InputError(f"{where} already sets {name} (onConflict: fail)")
            kept.append(str(name))
    added = [dict(e) for e in wanted if e["name"] not in now and e["name"] not in kept]
    if added:
        ops.append(AppendItems(path, tuple(added)))
    if deleted == len(items) and not added and not now:
        ops = [DeleteKey(path)]  # never an empty list (v1beta2: at least one item)
    return ops, [*now, *(str(e["name"]) for e in added)], kept


def _nest(places: Sequence[Place], depth: int, wanted: Sequence[EnvEntry]) -> dict[str, Any]:
    """The mapping that holds the lists ``places`` from ``depth`` on."""
    value: dict[str, Any] = {}
    for place in places:
        node = value
        for step in place[depth:-1]:
            node = node.setdefault(step, {})
        node[place[-1]] = [dict(e) for e in wanted]
    return value


def plan_env_lists(
    root: Mapping[str, Any],
    root_path: Path,
    places: Sequence[Place],
    where: str,
    owned: Mapping[Place, Sequence[str]],
    created: Sequence[Created],
    wanted: Sequence[EnvEntry],
    on_conflict: str,
) -> EnvListPlan:
    """The "env list" writer: the ``wanted`` name/value entries in each list at
    ``places`` under ``root`` (a mapping at ``root_path``). ``owned``: per list, the
    names the record says are the tool's (replaced in place, deleted when no longer
    wanted); an entry of a wanted name the manifest sets itself is kept, overridden or
    refused (``on_conflict``). A missing level is created, and said in ``created`` (with
    ``created``, the levels the record says the tool filled earlier): when nothing but
    the tool's entries is left under one, removal gives back what was there. A list is
    never left empty.

    >>> spec = {"clusterConfiguration": {"apiServer": {"extraArgs": {"v": "2"}}}}
    >>> place = ("clusterConfiguration", "apiServer", "extraEnvs")
    >>> plan = plan_env_lists(spec, ("spec",), [place], "spec", {}, [],
    ...     [{"name": "NO_PROXY", "value": "10.0.0.0/8"}], "keep")
    >>> plan.owned[place], plan.created
    (['NO_PROXY'], [(('clusterConfiguration', 'apiServer', 'extraEnvs'), 'absent')])
    >>> plan.ops
    [AddKey(path=('spec', 'clusterConfiguration', 'apiServer'), key='extraEnvs', \
value=[{'name': 'NO_PROXY', 'value': '10.0.0.0/8'}])]
    """
    ops: list[Op] = []
    result = EnvListPlan(ops, {}, [], [])
    pending = list(places)
    if not wanted:
        for level, was in created:
            below = [p for p in pending if p[: len(level)] == level]
            node = _get(root, level)
            if node is not _MISSING and _only_tool_at(node, level, below, owned):
                ops.append(_restore_op((*root_path, *level), was))
                pending = [p for p in pending if p not in below]
    else:
        result.created = [c for c in created if _get(root, c[0]) is not _MISSING]
    gaps: dict[Place, tuple[str, list[Place]]] = {}
    for place in pending:
        label = f"{where}.{'.'.join(place)}"
        gap, items = _gap(root, place, where)
        if gap is None:
            place_ops, now, kept = _place_ops(
                items, (*root_path, *place), label, owned.get(place, ()), wanted, on_conflict
            )
            ops += _climb(root, root_path, place, place_ops, created)
            if now:
                result.owned[place] = now
            result.kept += [f"{'.'.join(place)} {name}" for name in kept]
        elif wanted:
            gaps.setdefault(gap[0], (gap[1], []))[1].append(place)
    for level, (was, below) in gaps.items():
        value: Any = _nest(below, len(level), wanted)
        if level in below:  # the list itself
            value = [dict(e) for e in wanted]
        if was == "absent":
            ops.append(AddKey((*root_path, *level[:-1]), level[-1], value))
        else:
            ops.append(SetValue((*root_path, *level), value))
        result.created.append((level, was))
        for place in below:
            result.owned[place] = [str(e["name"]) for e in wanted]
    return result


_MISSING: Any = object()


def _climb(
    root: Mapping[str, Any],
    root_path: Path,
    place: Place,
    ops: list[Op],
    created: Sequence[Created],
) -> list[Op]:
    """A list deleted whole (``ops`` is its DeleteKey) under a level the tool created
    takes with it the mappings on the way that hold nothing else: no ``apiServer: {}``
    is left behind (v1beta2 wants those non-empty); at a created level itself, what was
    there comes back."""
    if ops != [DeleteKey((*root_path, *place))]:
        return ops
    levels = {level: was for level, was in created}
    path = place
    while path not in levels and len(path) > 1:
        parent = _get(root, path[:-1])
        inside = any(path[: len(level)] == level for level in levels)
        if not inside or not isinstance(parent, Mapping) or set(parent) != {path[-1]}:
            break
        path = path[:-1]
    was = levels.get(path)
    return [_restore_op((*root_path, *path), was if was is not None else "absent")]


def _get(root: Mapping[str, Any], path: Place) -> Any:
    node: Any = root
    for step in path:
        if not isinstance(node, Mapping) or step not in node:
            return _MISSING
        node = node[step]
    return node


def _only_tool_at(
    node: Any, level: Place, below: Sequence[Place], owned: Mapping[Place, Sequence[str]]
) -> bool:
    """Whether the created level ``level`` (whose value is ``node``) holds nothing but
    the tool's entries in the lists ``below`` it."""
    if not below:
        return False

    def walk(value: Any, depth: int, places: Sequence[Place]) -> bool:
        if any(len(p) == depth for p in places):
            names = owned.get(places[0], ())
            return isinstance(value, list) and all(
                isinstance(item, Mapping) and item.get("name") in names for item in value
            )
        if not isinstance(value, Mapping) or not set(value) <= {p[depth] for p in places}:
            return False
        return all(
            walk(value[step], depth + 1, [p for p in places if p[depth] == step]) for step in value
        )

    return walk(node, len(level), below)
