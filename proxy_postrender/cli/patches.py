"""Express an injection as kustomize patches, for Flux HelmRelease post-renderers.

Flux runs no external code; its HelmRelease can only apply kustomize
``patches`` to a chart's render. Given the stream *after* injection, this
module writes one strategic-merge patch per changed workload, targeted by
group, version, kind, name and namespace: the tool's annotation and, per container (by
name, the merge key), the variables the tool owns. Applied to the same
render, the patches give the same objects as the direct path.

A strategic merge keeps the fields of an env entry that the patch does not name, so an
entry whose kind changes (the render's ``valueFrom`` overridden by a ``value``, or the
reverse) needs the other field set to null in the patch; every other entry carries
only what the tool wrote.

Custom targets (a profile's ``spec.targets``: an Argo Rollout's pod template, an
AddOnDeploymentConfig's proxy fields) get a JSON patch instead (:mod:`.jsonpatch`):
kustomize knows no merge keys for a custom resource and would replace its whole
container and env lists. An object no patch can reach (no name, a value JSON cannot
carry) is named in a warning, an error under ``--strict``.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.cli import jsonpatch
from proxy_postrender.errors import DocumentContext, InputError
from proxy_postrender.objects import api_group, walk_objects
from proxy_postrender.pods import workloads
from proxy_postrender.pods.selection import CA_VOLUME
from proxy_postrender.record import Record
from proxy_postrender.targets import BUILT_IN, BUILT_IN_ORIGIN, PODS, TargetTable
from proxy_postrender.yamltext import libyaml, stream
from proxy_postrender.yamltext.errors import ParseError

if TYPE_CHECKING:
    from typing import Any

    Located = tuple[Mapping[str, Any], DocumentContext]  # an object and its document


def _nest(path: tuple[str | int, ...], leaf: dict[str, Any]) -> dict[str, Any]:
    node = leaf
    for step in reversed(path):
        node = {str(step): node}
    return node


def _merge(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    for key, value in other.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


Identity = tuple[str, str, str, str]


def identity(obj: Mapping[str, Any]) -> Identity:
    """Group, kind, namespace and name: how a render's object and its patch are paired."""
    metadata = obj.get("metadata")
    meta = metadata if isinstance(metadata, Mapping) else {}
    return (
        api_group(obj.get("apiVersion")),
        str(obj.get("kind")),
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
    )


def _env_entries(spec: Any, list_key: str, container_name: Any) -> dict[Any, Mapping[str, Any]]:
    """The env entries, by name, of one container of a pod spec (none when it is absent)."""
    if not isinstance(spec, Mapping):
        return {}
    for container in spec.get(list_key) or []:
        if isinstance(container, Mapping) and container.get("name") == container_name:
            env = container.get("env")
            return (
                {e.get("name"): e for e in env if isinstance(e, Mapping)}
                if isinstance(env, list)
                else {}
            )
    return {}


def _exclusive(item: Mapping[str, Any], before: Mapping[str, Any] | None) -> dict[str, Any]:
    """The entry; when the render's entry of that name holds the other of value/valueFrom,
    that field set to null too: a merge keeps fields the patch does not mention, and an
    entry with both is invalid."""
    other = "valueFrom" if "value" in item else "value"
    if before is not None and before.get(other) is not None:
        return {**item, other: None}
    return dict(item)


def _named(items: Any) -> list[Any]:
    """The entries named like the tool's CA volume (volumes merge by name, mounts by path)."""
    return [i for i in items or [] if isinstance(i, Mapping) and i.get("name") == CA_VOLUME]


def _patch(obj: Mapping[str, Any], original: Mapping[str, Any] | None) -> dict[str, Any] | None:
    owned = workloads.parse_entries(Record.read(obj, workloads.ANNOTATION).entries)
    if not owned:
        return None
    metadata = obj.get("metadata") or {}
    if not metadata.get("name"):
        return None  # generateName only: a patch cannot name it
    meta: dict[str, Any] = {"name": metadata["name"]}
    if metadata.get("namespace"):
        meta["namespace"] = metadata["namespace"]
    meta["annotations"] = {workloads.ANNOTATION: metadata["annotations"][workloads.ANNOTATION]}
    body: dict[str, Any] = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind")}
    body["metadata"] = meta
    for spec_path in BUILT_IN.paths(obj, PODS):
        spec = workloads.pod_spec_at(obj, spec_path)
        if not isinstance(spec, Mapping):
            continue
        lists: dict[str, Any] = {}
        for list_key in workloads.CONTAINER_LISTS:
            entries = []
            for container in spec.get(list_key) or []:
                names = owned.get(container.get("name"), set())
                entry: dict[str, Any] = {"name": container["name"]}
                before = _env_entries(
                    workloads.pod_spec_at(original, spec_path) if original else None,
                    list_key,
                    container["name"],
                )
                env = [
                    _exclusive(item, before.get(item.get("name")))
                    for item in container.get("env") or []
                    if item.get("name") in names
                ]
                if env:
                    entry["env"] = env
                if workloads.CA_MARK in names:  # the proxy CA the tool mounted
                    entry["volumeMounts"] = _named(container.get("volumeMounts"))
                if len(entry) > 1:
                    entries.append(entry)
            if entries:
                lists[list_key] = entries
        if any("volumeMounts" in e for entries in lists.values() for e in entries):
            lists["volumes"] = _named(spec.get("volumes"))
        if lists:
            _merge(body, _nest(spec_path, lists))
    return body


def _target(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a patch's ``target`` says to pick ``obj`` (which has a name)."""
    metadata = obj["metadata"]
    version = str(obj.get("apiVersion")).rpartition("/")[2]
    target: dict[str, Any] = {"group": api_group(obj.get("apiVersion")), "version": version}
    target["kind"] = obj.get("kind")
    target["name"] = metadata["name"]
    if metadata.get("namespace"):
        target["namespace"] = metadata["namespace"]
    return target


def flux_patches(stream_text: str, render_text: str = "") -> list[dict[str, Any]]:
    """The ``patches`` list of a HelmRelease's kustomize post-renderer for the built-in
    workload kinds, for the injected ``stream_text``; ``render_text`` is the render the
    patches apply to (or the documents of it that hold env values), where an entry the
    tool changed from ``value`` to ``valueFrom`` or back is found."""
    render = {
        identity(obj): obj for doc in libyaml.load_data(render_text) for _, obj in walk_objects(doc)
    }
    result = []
    for doc in libyaml.load_data(stream_text):
        for _, obj in walk_objects(doc):
            if not BUILT_IN.paths(obj, PODS):
                continue
            body = _patch(obj, render.get(identity(obj)))
            if body is not None:
                result.append({"target": _target(obj), "patch": body})
    return result


def located_objects(text: str, kinds: frozenset[str] | None = None) -> list[Located]:
    """The objects of the documents of ``text`` that parse (of ``kinds``, or of a kind
    the first look cannot tell), each with the document that holds it."""
    found: list[Located] = []
    index = 0
    for segment in stream.split(text):
        content = segment.has_content()
        index += int(content or segment.text.startswith("---"))  # as the filter counts
        if not content or (kinds is not None and segment.sniff_kind() not in (*kinds, None)):
            continue
        try:
            docs = libyaml.load_data(segment.text)
        except (ParseError, RecursionError):
            continue  # passed through untouched by the filter: nothing to patch
        for doc in docs:
            for _, obj in walk_objects(doc):
                found.append((obj, _context(segment, index, obj)))
    return found


def _context(segment: stream.Segment, index: int, obj: Mapping[str, Any]) -> DocumentContext:
    metadata = obj.get("metadata")
    meta = metadata if isinstance(metadata, Mapping) else {}
    kind, name, namespace = obj.get("kind"), meta.get("name"), meta.get("namespace")
    return DocumentContext(
        index,
        segment.line,
        str(kind) if kind is not None else None,
        str(name) if name is not None else None,
        str(namespace) if namespace else None,
        segment.helm_source(),
    )


def custom_patches(
    render_text: str, output_text: str, targets: TargetTable
) -> tuple[list[dict[str, Any]], list[InputError]]:
    """The JSON patches that make the filter's change (``render_text`` to
    ``output_text``) to the objects of the custom targets in ``targets``; and, per object
    the filter changes that no patch can reach, why (naming the render's document)."""
    custom = targets.custom()
    if not custom:
        return [], []
    kinds = frozenset(t.kind for t in custom)
    render: dict[tuple[Identity, int], Located] = {}
    for key, (obj, context) in _paired(located_objects(render_text, kinds)):
        target = targets.find(obj)
        if target is not None and target.origin != BUILT_IN_ORIGIN:
            render.setdefault(key, (obj, context))
    result: list[dict[str, Any]] = []
    skipped: list[InputError] = []
    for key, (obj, _) in _paired(located_objects(output_text, kinds)):
        found = render.get(key)
        if found is None:
            continue  # not in the render (no custom target there)
        before, context = found
        try:
            ops = jsonpatch.diff(before, obj)
        except jsonpatch.Inexpressible as exc:
            skipped.append(InputError(f"no JSON patch can express the change ({exc})", context))
            continue
        if not ops:
            continue
        if not _has_name(obj):
            skipped.append(InputError("no patch can target an object without a name", context))
            continue
        result.append({"target": _target(obj), "patch": ops})
    return result, skipped


def _paired(found: list[Located]) -> list[tuple[tuple[Identity, int], Located]]:
    """Each object with the key that pairs it with its other version: its identity, and
    for objects without a name (which share one) the how-many-th such it is; the filter
    keeps the order of the documents."""
    seen: dict[Identity, int] = {}
    keyed: list[tuple[tuple[Identity, int], Located]] = []
    for obj, context in found:
        ident = identity(obj)
        count = 0
        if not _has_name(obj):
            count = seen[ident] = seen.get(ident, 0) + 1
        keyed.append(((ident, count), (obj, context)))
    return keyed


def _has_name(obj: Mapping[str, Any]) -> bool:
    metadata = obj.get("metadata")
    return isinstance(metadata, Mapping) and isinstance(metadata.get("name"), str)


def to_yaml(patches: list[dict[str, Any]]) -> str:
    """YAML for the list; each patch body as a literal block, as Flux examples write it
    (a JSON patch as JSON)."""
    import io

    from ruamel.yaml import YAML
    from ruamel.yaml.scalarstring import LiteralScalarString

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 1 << 30
    out = []
    for item in patches:
        if isinstance(item["patch"], list):  # a JSON patch: JSON quotes every string
            text = jsonpatch.to_text(item["patch"])
        else:
            buffer = io.StringIO()
            yaml.dump(item["patch"], buffer)
            text = buffer.getvalue()
        out.append({"target": item["target"], "patch": LiteralScalarString(text)})
    buffer = io.StringIO()
    yaml.dump(out, buffer)
    return buffer.getvalue()
