"""Edits to a parsed document, expressed as operations on paths.

The planners (workloads, and later kubeadm) decide *what* changes as a list of
operations on plain data; two back-ends carry them out: :mod:`splice` edits the
raw text in place, and :func:`apply` changes a data tree (used to check the
spliced text and for the round-trip fallback).
"""

from __future__ import annotations

from collections.abc import MutableMapping, MutableSequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.objects import Path
from proxy_postrender.structs import FrozenStruct


class SetValue(FrozenStruct):
    path: Path  # to an existing value (scalar, null or collection)
    value: Any
    # for a null or empty ``value``: the text to write after the key's colon (to the end
    # of the value's line; in a flow mapping the value's own text), the input's own
    # spelling given back (see ``tree.spelling``); None: the plain way
    text: str | None = None
    # a string written in the quoting of the scalar it replaces (a value of the
    # manifest's own the tool renames, given back byte for byte by --remove); False: in
    # the tool's one way (its own values: one output whatever came before)
    like: bool = False


class DeleteItem(FrozenStruct):
    path: Path  # to a sequence item; the last element is its index


class AppendItems(FrozenStruct):
    path: Path  # to a sequence
    items: tuple[Any, ...]


class InsertItems(FrozenStruct):
    path: Path  # to a sequence; the items go in front of its item ``index``
    items: tuple[Any, ...]
    index: int = 0  # in the sequence before any change; its length: after the last item


class AddKey(FrozenStruct):
    path: Path  # to a mapping
    key: str
    value: Any

    def __init__(self, path: Path, key: str, value: Any) -> None:
        # Several a document: compiled, as splice.Edit's (the same fields, in order)
        self.__dict__.update(path=path, key=key, value=value)


class DeleteKey(FrozenStruct):
    path: Path  # to a mapping entry; the last element is its key


Op = SetValue | DeleteItem | AppendItems | InsertItems | AddKey | DeleteKey
# The operation classes have no subclasses (tests/test_structs.py checks it): code that
# tells them apart tests ``type(op) is C``, one pointer comparison, where ``isinstance``
# with a record class (whose metaclass is not ``type``) calls the metaclass's
# ``__instancecheck__`` for every class the operation is not, several per operation.
OP_CLASSES = (SetValue, DeleteItem, AppendItems, InsertItems, AddKey, DeleteKey)


def get(tree: Any, path: Path) -> Any:
    node = tree
    for step in path:
        node = node[step]
    return node


def copy_tree(value: Any) -> Any:
    """A copy of plain data in which no dict or list is shared (tuples become lists)."""
    # (a string is taken as it is without a call: most values are strings)
    if isinstance(value, dict):
        return {k: v if type(v) is str else copy_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [v if type(v) is str else copy_tree(v) for v in value]
    return value


def apply(tree: Any, ops: list[Op]) -> None:
    """Apply ``ops`` to ``tree`` in place (dicts/lists or ruamel's round-trip types).

    Paths refer to the tree before any change. Each op's collection is found
    before anything changes, so an insertion or deletion in a sequence never
    moves the target of another op further down. Per collection: replacements
    first, then deletions (from the highest index down), then additions.
    """
    found: list[tuple[Op, Any]] = []
    for op in ops:
        at = (
            op.path
            if (type(op) is AppendItems or type(op) is InsertItems or type(op) is AddKey)
            else op.path[:-1]
        )
        try:
            found.append((op, get(tree, at)))
        except (KeyError, IndexError, TypeError):
            found.append((op, None))  # made by another op (a replaced value): found later
    for op, parent in found:
        if type(op) is SetValue:
            parent = get(tree, op.path[:-1]) if parent is None else parent
            parent[op.path[-1]] = copy_tree(op.value)
    for op, parent in found:
        if type(op) is DeleteKey:
            del parent[op.path[-1]]
    sequences: dict[int, tuple[Any, list[Op]]] = {}
    for op, parent in found:
        if type(op) is DeleteItem or type(op) is InsertItems or type(op) is AppendItems:
            if parent is None:
                parent = get(tree, op.path[:-1] if type(op) is DeleteItem else op.path)
            sequences.setdefault(id(parent), (parent, []))[1].append(op)
    for seq, seq_ops in sequences.values():
        # list first: one C type check in the compiled build, where the ABC runs Python
        assert isinstance(seq, list) or isinstance(seq, MutableSequence)  # noqa: SIM101
        deleted = sorted({int(op.path[-1]) for op in seq_ops if type(op) is DeleteItem})
        for index in reversed(deleted):
            del seq[index]
        inserts = [(op.index, n, op) for n, op in enumerate(seq_ops) if type(op) is InsertItems]
        # the highest first, so that a lower one's index still holds; at one index the
        # last first, so that the items end up in the order of the ops
        for index, _, op in sorted(inserts, key=lambda t: t[:2], reverse=True):
            position = index - sum(1 for gone in deleted if gone < index)
            seq[position:position] = [copy_tree(item) for item in op.items]
        for op in seq_ops:
            if type(op) is AppendItems:
                seq.extend(copy_tree(item) for item in op.items)
    for op, parent in found:
        if type(op) is AddKey:
            mapping = get(tree, op.path) if parent is None else parent
            assert isinstance(mapping, dict) or isinstance(mapping, MutableMapping)  # noqa: SIM101
            mapping[op.key] = copy_tree(op.value)


def update_list(
    parent: Any,
    parent_path: Path,
    key: str,
    deleted: set[int],
    added: list[Any],
    *,
    front: bool = False,
    restore_empty: bool = False,
    restore_null: bool = False,
    restore_text: str | None = None,
) -> list[Op]:
    """Operations that delete ``deleted`` items from ``parent[key]`` and add ``added``.

    Additions go at the end (or in front with ``front``). A missing, null or
    empty list is created; a list that would be left empty by deletions is
    removed with its key, or set back to ``[]`` with ``restore_empty`` or to
    null (``key:``) with ``restore_null`` (the input's own empty value, as its
    ownership record kept it), written as ``restore_text`` when given (the input's
    spelling, see ``SetValue.text``).
    """
    path = (*parent_path, key)
    items = parent.get(key) if isinstance(parent, (dict, MutableMapping)) else None
    if items and deleted == set(range(len(items))) and not added:
        if restore_empty:
            return [SetValue(path, [], restore_text)]
        return [SetValue(path, None, restore_text) if restore_null else DeleteKey(path)]
    ops: list[Op] = [DeleteItem((*path, index)) for index in sorted(deleted)]
    if added:
        if items:
            ops.append(
                InsertItems(path, tuple(added)) if front else AppendItems(path, tuple(added))
            )
        elif key in parent:  # "key: null" or "key: []"
            ops.append(SetValue(path, list(added)))
        else:
            ops.append(AddKey(parent_path, key, list(added)))
    return ops
