"""What the tool owns in a ClusterClass: its record, read strictly, and the follow-up
patches it can show to be its own before it replaces or deletes them.

The record (annotation ``proxy-postrender.io/node-bootstrap``) holds ``;``-separated
entries, each index written as the tool writes it (no sign, no leading zero):

- ``pI.dJ.jK=files:PATH,PATH`` and ``pI.dJ.jK=commands:N``: the tool's entries in the
  literal list of ``spec.patches[I].definitions[J].jsonPatches[K]``;
- ``pI.dJ.jK=patches:N`` (N > 0): the N patches from ``K`` on are the tool's;
- ``empty=pI.dJ.jK,...``: those literal lists were ``[]`` before the tool filled them;
- ``variable=STATE`` and ``patch=STATE``: the class's ``spec.variables`` entry
  ``proxyPostrender`` and its last ``spec.patches`` entry ``proxy-postrender`` are the
  tool's (nodes/classvars.py); STATE says what the list was before the tool added to
  it (``absent``, ``null``, ``empty`` or ``listed``), so that removal gives it back.

Anything else, an index given twice, or two ranges of patches that overlap is an error.
A recorded range is deleted or replaced only when every patch in it is one the tool
writes: ``add`` with exactly ``op``, ``path`` and ``value``, a path the definition's
selector makes one of the kubeadm lists (``LIST/-`` for a file, ``LIST/0`` for a
command, ``LIST`` for a whole list) and a value of the tool's shape (a drop-in, the
env file or the CA file, as the tool writes them; a command the tool writes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError
from proxy_postrender.nodes import kubeadm
from proxy_postrender.record import Record
from proxy_postrender.structs import Struct, field

_INDEX = r"(0|[1-9][0-9]*)"
_IDENT = rf"p{_INDEX}\.d{_INDEX}\.j{_INDEX}"
_PROXY_NAME = r"(?:HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy)"
# the contents the tool writes (quoting.dropin, quoting.dropin_envfile, quoting.env_file)
_DROPIN = rf'\[Service\]\n(?:(?:Environment="{_PROXY_NAME}=[^\n]*"\n)+|EnvironmentFile=[^\n]+\n)'
_ENV_FILE = rf"(?:{_PROXY_NAME}=[^\n]*\n)+"
_FILE_KEYS = (
    frozenset({"path", "owner", "permissions", "content"}),
    frozenset({"path", "owner", "permissions", "contentFrom"}),
)
_SECRET_KEYS: tuple[str, ...] = (*kubeadm.SECRET_KEYS.values(), kubeadm.ENV_KEY)

Ident = tuple[int, int, int]  # spec.patches[I].definitions[J].jsonPatches[K]


class Owned(Struct):
    """What the record says the tool owns in one ClusterClass."""

    files: dict[str, list[str]] = field(default_factory=dict)  # ident -> paths
    commands: dict[str, int] = field(default_factory=dict)  # ident -> count
    # (I, J) -> index of the first of the tool's patches -> how many
    patches: dict[tuple[int, int], dict[int, int]] = field(default_factory=dict)
    empty: set[str] = field(default_factory=set)
    # the state spec.variables / spec.patches had before the tool added its entry there
    variable: str | None = None
    patch: str | None = None


STATES = ("absent", "null", "empty", "listed")


def state_of(parent: Mapping[str, Any], key: str) -> str:
    """What ``parent[key]`` is, as a record's ``variable=``/``patch=`` says it."""
    if key not in parent:
        return "absent"
    value = parent[key]
    return "null" if value is None else "empty" if value == [] else "listed"


def ident_of(text: str) -> Ident | None:
    """``pI.dJ.jK`` as the tool writes it, or None."""
    match = re.fullmatch(_IDENT, text)
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def _malformed(entry: str, why: str = "") -> InputError:
    return InputError(f"annotation {kubeadm.ANNOTATION} is malformed near {entry!r}{why}")


def parse(recorded: Record) -> Owned:
    owned = Owned()
    seen: set[str] = set()
    for entry in recorded.entries:
        key, _, value = entry.partition("=")
        kind, _, rest = value.partition(":")
        if key in seen:
            raise _malformed(entry, " (recorded twice)")
        seen.add(key)
        if key in ("variable", "patch"):
            if value not in STATES:
                raise _malformed(entry)
            if key == "variable":
                owned.variable = value
            else:
                owned.patch = value
            continue
        if key == "empty":
            idents = value.split(",")
            if not all(ident_of(x) for x in idents):
                raise _malformed(entry)
            owned.empty = set(idents)
            continue
        ident = ident_of(key)
        if ident is None:
            raise _malformed(entry)
        if kind == "files" and rest and all(rest.split(",")):
            owned.files[key] = rest.split(",")
        elif kind == "commands" and re.fullmatch(_INDEX, rest):
            owned.commands[key] = int(rest)
        elif kind == "patches" and re.fullmatch(_INDEX, rest) and rest != "0":
            owned.patches.setdefault(ident[:2], {})[ident[2]] = int(rest)
        else:
            raise _malformed(entry)
    _check_overlaps(owned)
    return owned


def _check_overlaps(owned: Owned) -> None:
    for (i, j), runs in owned.patches.items():
        end = -1
        for start in sorted(runs):
            if start < end:
                raise _malformed(
                    f"p{i}.d{j}.j{start}=patches:{runs[start]}",
                    " (its patches overlap another recorded range)",
                )
            end = start + runs[start]


def not_the_tools(where_def: str, start: int, count: int, *, missing: bool = False) -> InputError:
    """The error for a recorded range that is not (all) the tool's patches."""
    what = "are not there" if missing else "are not all its patches"
    return InputError(
        f"{where_def}.jsonPatches[{start}:{start + count}], recorded in {kubeadm.ANNOTATION} "
        f"as the tool's, {what} (was the list edited?); restore them or delete the annotation"
    )


def check_runs(
    spec: Mapping[str, Any],
    owned: Owned,
    pointers_of: Callable[[Mapping[str, Any], str], Mapping[str, str]],
) -> None:
    """Every recorded range of patches exists and holds only patches the tool writes
    (``pointers_of``: the kubeadm lists a definition's selector picks)."""
    patches = spec.get("patches")
    for (i, j), runs in owned.patches.items():
        where_def = f"spec.patches[{i}].definitions[{j}]"
        found = _json_patches(patches, i, j)
        for start, count in runs.items():
            if found is None:
                raise not_the_tools(where_def, start, count, missing=True)
            definition, json_patches = found
            pointers = pointers_of(definition, where_def)
            run = json_patches[start : start + count]
            if len(run) < count or not all(is_tool_patch(p, pointers) for p in run):
                raise not_the_tools(where_def, start, count)


def _json_patches(patches: Any, i: int, j: int) -> tuple[Mapping[str, Any], list[Any]] | None:
    """``patches[i].definitions[j]`` and its ``jsonPatches`` list, when they are there."""
    patch = patches[i] if isinstance(patches, list) and i < len(patches) else None
    definitions = patch.get("definitions") if isinstance(patch, Mapping) else None
    if not isinstance(definitions, list) or j >= len(definitions):
        return None
    definition = definitions[j]
    if not isinstance(definition, Mapping):
        return None
    json_patches = definition.get("jsonPatches")
    return (definition, json_patches) if isinstance(json_patches, list) else None


def is_tool_patch(item: Any, pointers: Mapping[str, str]) -> bool:
    """A follow-up patch as the tool writes it: ``add`` of one file to a ``files`` list,
    of one command to the front of ``preKubeadmCommands``, or of a whole list."""
    if not isinstance(item, Mapping) or set(item) != {"op", "path", "value"}:
        return False
    path, value = item["path"], item["value"]
    if item["op"] != "add" or not isinstance(path, str):
        return False
    if path in pointers:
        is_entry = is_tool_file if pointers[path] == "files" else kubeadm.is_tool_command
        return isinstance(value, list) and bool(value) and all(map(is_entry, value))
    base, _, last = path.rpartition("/")
    if pointers.get(base) == "files" and last == "-":
        return is_tool_file(value)
    return pointers.get(base) == "commands" and last == "0" and kubeadm.is_tool_command(value)


def is_tool_file(value: Any) -> bool:
    """A ``files`` entry of the tool's shape: a drop-in, the env file or the CA file,
    inline or from a Secret."""
    if not isinstance(value, Mapping) or frozenset(value) not in _FILE_KEYS:
        return False
    path = value["path"]
    if value["owner"] != "root:root" or value["permissions"] not in ("0600", "0640", "0644"):
        return False
    if not isinstance(path, str):
        return False
    if "contentFrom" in value:
        source = value["contentFrom"]
        secret = source.get("secret") if isinstance(source, Mapping) and len(source) == 1 else None
        return (
            isinstance(secret, Mapping)
            and set(secret) == {"name", "key"}
            and isinstance(secret["name"], str)
            and secret["key"] in _SECRET_KEYS
        )
    content = value["content"]
    if not isinstance(content, str):
        return False
    if path == kubeadm.CA_FILE:
        return True  # the tool's own path: the proxy CA, whatever the profile gave
    return bool(re.fullmatch(_DROPIN, content) or re.fullmatch(_ENV_FILE, content))
