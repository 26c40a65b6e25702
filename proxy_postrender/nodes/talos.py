"""Plan the node bootstrap of a Talos object: one strategic patch of its machine config.

Talos (the ``talos`` row of proxy_postrender/dialects.py) has no files or
commands to write: the proxy variables go into the machine configuration, as
one patch document the tool owns at the end of the spec's ``strategicPatches``
(RFC 6902 ``configPatches`` do not work with Talos >= 1.12's multi-document
configuration: CABPT README). The patch's form follows the spec's
``talosVersion``:

- before v1.13: ``machine.env`` (set on PID 1 and every service);
- from v1.13: an ``EnvironmentConfig`` document (``variables``), which replaces
  and deprecates ``machine.env`` (siderolabs/talos, hack/release.toml of v1.13);
- no ``talosVersion``: ``machine.env``, the one form every Talos version reads
  (CABPT then uses the Talos version it was built with, which the render does not
  tell); a ``talosVersion`` CABPT cannot parse is refused, as CABPT refuses it.

Values are YAML double-quoted scalars (JSON string syntax), so a password with
quotes, colons or ``#`` reads back as written. The record (``proxy-postrender.io/
node-bootstrap``: ``patch=DIGEST``) finds the tool's patch again: a re-run with
the same values changes nothing, other values replace it, removal takes it out.
A patch cannot read a Secret: secret mode is refused. TalosConfig and
TalosConfigTemplate specs are immutable (CABPT's webhooks): the tool refuses to
change a patch it wrote there before rather than emit an object the API server
rejects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.patterns import compiled

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.dialects import BootstrapKind, Dialect
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import kubeadm, quoting
from proxy_postrender.nodes.kubeadm import ANNOTATION, NodePlan, NodeSettings
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path
from proxy_postrender.record import Record

# the first Talos version whose configuration has the EnvironmentConfig document
ENVIRONMENT_CONFIG_FROM: tuple[int, int] = (1, 13)
# what CABPT's config.ParseContractFromVersion reads: v?MAJOR.MINOR[.PATCH][-pre][+build]
_VERSION = compiled(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
_NAMES: tuple[str, ...] = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


def version_of(spec: Mapping[str, Any], key: str, where: str) -> tuple[int, int] | None:
    """(major, minor) of the spec's Talos version; None when it has none. A value CABPT
    would refuse ("invalid talos-version") is an input error.

    >>> version_of({"talosVersion": "v1.13.2"}, "talosVersion", "spec")
    (1, 13)
    >>> version_of({}, "talosVersion", "spec") is None
    True
    """
    value = spec.get(key)
    if value is None or value == "":
        return None
    match = _VERSION.match(value) if isinstance(value, str) else None
    if match is None:
        raise InputError(
            f"{where}.{key} is {value!r}, not a Talos version (such as v1.13): CABPT refuses "
            "it, and the tool cannot tell which form of proxy settings the nodes read"
        )
    return int(match.group(1)), int(match.group(2))


def variables(env: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The variables the patch sets: each proxy name in upper and lower case."""
    values = dict(env)
    pairs = [(name, values[name]) for name in _NAMES if name in values]
    return [*pairs, *((name.lower(), value) for name, value in pairs)]


def patch_text(env: Sequence[tuple[str, str]], version: tuple[int, int] | None) -> str:
    """The patch document for a Talos version (None: no version given).

    >>> print(patch_text([("HTTP_PROXY", "http://p:3128")], (1, 12)), end="")
    machine:
      env:
        HTTP_PROXY: "http://p:3128"
        http_proxy: "http://p:3128"
    """
    pairs = variables(env)
    quoting.check_env(pairs)
    if version is not None and version >= ENVIRONMENT_CONFIG_FROM:
        head, indent = "apiVersion: v1alpha1\nkind: EnvironmentConfig\nvariables:\n", "  "
    else:
        head, indent = "machine:\n  env:\n", "    "
    # a JSON string is a YAML double-quoted scalar: quotes, colons and '#' stay values
    body = "".join(f"{indent}{name}: {json.dumps(value)}\n" for name, value in pairs)
    return quoting.gate(head + body, "the Talos config patch", lines=True)


def _refuse_secrets(settings: NodeSettings) -> None:
    if settings.credentials == "secret" or settings.forbid_inline_password:
        raise InputError(
            "a Talos config patch cannot read a Secret, so the proxy settings "
            "(and any password) would be in clear in the object: secret mode is not "
            "supported for Talos; use spec.nodes.credentials: inline without "
            "spec.credentials.secretRef, or spec.nodes.enabled: false"
        )


def _parse(recorded: Record, key: str) -> tuple[str | None, bool]:
    """The digest of the tool's patch, and whether the list was ``[]`` before it."""
    digest, empty = None, False
    for entry in recorded.entries:
        name, _, value = entry.partition("=")
        if name == "patch" and re.fullmatch(r"[0-9a-f]{16}", value):
            digest = value
        elif name == "empty" and value == key:
            empty = True
        else:
            raise InputError(f"annotation {ANNOTATION} is malformed near {entry!r}")
    return digest, empty


def _spec(obj: Mapping[str, Any], spec_path: Sequence[str]) -> Mapping[str, Any] | None:
    node: Any = obj
    for step in spec_path:
        node = node.get(step) if isinstance(node, Mapping) else None
    if node is not None and not isinstance(node, Mapping):
        raise InputError(f"{'.'.join(spec_path)} is not a mapping")
    return node


def plan(
    obj: Mapping[str, Any],
    base: Path,
    row: BootstrapKind,
    dialect: Dialect,
    found: ObjectEnv,
    settings: NodeSettings | None,
) -> NodePlan:
    """The plan of a Talos object (``settings`` None: take the tool's patch out)."""
    result = NodePlan.for_env(found)
    result.commands_key = dialect.patches_key
    recorded = kubeadm.node_record(obj, found)
    digest, empty = _parse(recorded, dialect.patches_key)
    where = ".".join(row.spec_path)
    wanted = None
    spec = _spec(obj, row.spec_path)
    if settings is not None and found.env:
        _refuse_secrets(settings)
        # a ClusterClass's template: refused as for the other rows without a class patch,
        # naming the class and what to do
        kubeadm.check_shared(dialect, found, str(obj.get("kind")))
        if spec is None:
            result.skipped = f"no {where} (the CRD requires its generateType: not made up)"
            result.ops += recorded.ops(obj, base, [])
            return result
        version = version_of(spec, dialect.version_key, where)
        wanted = patch_text(found.env, version)
        result.owned.append(wanted)
        result.notes.append(_form_note(version, where, dialect.version_key))
        if settings.ca_bundle:
            result.notes.append("the proxy's CA (spec.caBundle) is not installed on Talos nodes")
    if spec is None:
        return result
    renamed = found.rename and found.renamed_from is not None  # a new object: not a change
    immutable = row.immutable and not renamed
    return _write(
        obj, base, row, dialect, spec, (digest, empty), wanted, (result, recorded, immutable)
    )


def _write(
    obj: Mapping[str, Any],
    base: Path,
    row: BootstrapKind,
    dialect: Dialect,
    spec: Mapping[str, Any],
    parsed: tuple[str | None, bool],
    wanted: str | None,
    state: tuple[NodePlan, Record, bool],
) -> NodePlan:
    """``state``: the plan so far, the object's record, and whether its spec may not
    change (an immutable kind that keeps its name)."""
    from proxy_postrender.nodes import writers  # lazy: start-up

    result, recorded, immutable = state
    digest, empty = parsed
    key, where = dialect.patches_key, ".".join(row.spec_path)
    empty = empty or (key in spec and spec.get(key) == [])
    patch = writers.plan_patch(
        spec,
        (*base, *row.spec_path),
        key,
        where,
        digest,
        wanted,
        restore_empty=empty,
        record=ANNOTATION,
    )
    if patch.replaced and immutable:
        raise InputError(
            f"{where}.{key} holds the tool's proxy patch with other values, "
            f"and a {obj.get('kind')} spec is immutable (the API server rejects the change): "
            "render it together with the MachineDeployment (MachinePool, ClusterClass) that "
            "uses it, so that the tool renames it and moves the reference"
        )
    result.ops += patch.ops
    entries = [] if patch.digest is None else [f"patch={patch.digest}"]
    if entries and empty:
        entries.append(f"empty={key}")
    result.ops += recorded.ops(obj, base, entries)
    if wanted is not None:
        result.notes.append(f"{where}.{key}: the proxy patch is the tool's (last entry)")
    return result


def _form_note(version: tuple[int, int] | None, where: str, key: str) -> str:
    if version is None:
        return (
            f"{where}.{key} is not set: the patch sets machine.env, which every Talos "
            "version reads (deprecated from v1.13); set it to get an EnvironmentConfig"
        )
    form = "EnvironmentConfig" if version >= ENVIRONMENT_CONFIG_FROM else "machine.env"
    return f"Talos v{version[0]}.{version[1]}: the patch is a {form} document"
