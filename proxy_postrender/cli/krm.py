"""The KRM function entry: a ``ResourceList`` in, a ``ResourceList`` out.

kpt and standalone kustomize call exec functions with a ResourceList
(``config.kubernetes.io/v1``) on stdin: ``items`` to transform and a
``functionConfig`` — here a ProxyProfile, or a ConfigMap whose ``data`` holds
``httpProxy``, ``httpsProxy``, ``noProxy`` (and ``onConflict``), as
``kpt fn eval -- key=value`` writes it. The items go through the same engine
as any stream (each item one document), every annotation the tools put on
them is kept, and ``results`` says what changed. On an error the items come
back unchanged with an error result, and the caller exits non-zero: kustomize
ignores ``results`` and reads only stderr and the exit code, and an empty
item list would delete every resource.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, MutableMapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender import engine
from proxy_postrender.errors import InputError, ProfileError, ProxyPostrenderError
from proxy_postrender.generated import generated_by
from proxy_postrender.request import Request
from proxy_postrender.result import Result
from proxy_postrender.structs import Struct, field
from proxy_postrender.yamltext import stream

API_VERSION = "config.kubernetes.io/v1"
KIND = "ResourceList"
CONFIGMAP_KEYS = ("httpProxy", "httpsProxy", "noProxy", "onConflict")


def is_resource_list(text: str) -> bool:
    """Whether the stream is one ResourceList (a cheap look at the first document)."""
    if KIND not in text[:65536]:
        return False
    segments = [s for s in stream.split(text) if s.has_content()]
    return len(segments) == 1 and segments[0].sniff_kind() == KIND


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 30
    yaml.indent(mapping=2, sequence=2, offset=0)
    return yaml


def profile_object(config: Any) -> Mapping[str, Any] | None:
    """The ProxyProfile a functionConfig stands for (None: there is none)."""
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise ProfileError("functionConfig: must be a ProxyProfile or a ConfigMap")
    if config.get("kind") == "ConfigMap":
        data = config.get("data") or {}
        if not data:
            return None  # kpt sends an empty ConfigMap when no --fn-config is given
        if not isinstance(data, Mapping):
            raise ProfileError("functionConfig ConfigMap: data must be a mapping")
        unknown = sorted(str(k) for k in data if k not in CONFIGMAP_KEYS)
        if unknown:
            raise ProfileError(
                f"functionConfig ConfigMap: unknown key(s) {', '.join(unknown)} "
                f"(allowed: {', '.join(CONFIGMAP_KEYS)}; use a ProxyProfile for the rest)"
            )
        metadata = config.get("metadata") or {}
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        return {
            "apiVersion": "proxy-postrender.io/v1alpha1",
            "kind": "ProxyProfile",
            "metadata": {"name": str(name or "function-config")},
            "spec": {str(k): str(v) for k, v in data.items()},
        }
    return config


class Outcome(Struct):
    text: str  # the ResourceList to write
    error: ProxyPostrenderError | None = None  # set: exit non-zero, the reason on stderr
    results: list[dict[str, Any]] = field(default_factory=list)
    result: Result | None = None


def _ref(context: Any) -> dict[str, str]:
    ref = {"kind": str(context.kind or "")}
    if context.name:
        ref["name"] = str(context.name)
    if context.namespace:
        ref["namespace"] = str(context.namespace)
    return ref


def _results(result: Result) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    for report in result.objects:
        if report.method == "unchanged":
            continue
        lines = [line.strip() for line in report.plan.describe()]
        warning = any(line.startswith(("warning", "kept")) for line in lines)
        results.append(
            {
                "message": "; ".join([report.plan.summary(), *lines]),
                "severity": "warning" if warning else "info",
                "resourceRef": _ref(report.context),
            }
        )
    results += [{"message": w, "severity": "warning"} for w in result.warnings]
    for scope, warnings in result.no_proxy_warnings.items():
        results += [
            {"message": f"NO_PROXY ({scope}): {w}", "severity": "warning"} for w in warnings
        ]
    return results


def run(
    text: str,
    make_request: Callable[[Mapping[str, Any] | None], Request],
    redact: Callable[[str], str] = lambda message: message,
) -> Outcome:
    """Transform the items of the ResourceList ``text``; bad items or profiles give an
    Outcome with the error (raises only when ``text`` is no ResourceList at all)."""
    from ruamel.yaml.error import YAMLError

    yaml = _yaml()
    try:
        resource_list = yaml.load(text)
    except YAMLError as exc:
        raise InputError(
            f"the ResourceList is not valid YAML: {str(exc).splitlines()[0]}"
        ) from None
    if (
        not isinstance(resource_list, MutableMapping)
        or resource_list.get("apiVersion") != API_VERSION
    ):
        raise InputError(f"expected a {KIND} of apiVersion {API_VERSION}")
    items = resource_list.get("items")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise InputError(f"{KIND}: items must be a list")
    try:
        request = make_request(profile_object(resource_list.get("functionConfig")))
        documents = []
        for item in items:
            buffer = io.StringIO()
            yaml.dump(item, buffer)
            documents.append("---\n" + buffer.getvalue())
        result = engine.process("".join(documents), request)
        new_items = [doc for doc in yaml.load_all(result.text) if doc is not None]
        kept = [item for item in items if not _generated(item)]
        if len([item for item in new_items if not _generated(item)]) != len(kept):
            raise InputError(f"{len(kept)} items came in but a different number came out")
        _restore_paths(items, new_items)
    except ProxyPostrenderError as exc:
        resource_list["results"] = [{"message": redact(str(exc)), "severity": "error"}]
        return Outcome(_dump(yaml, resource_list), error=exc)
    resource_list["items"] = new_items
    results = [{**r, "message": redact(r["message"])} for r in _results(result)]
    resource_list["results"] = results
    return Outcome(_dump(yaml, resource_list), results=results, result=result)


def _generated(item: Any) -> bool:
    """A Secret or ConfigMap the tool emitted (made anew on every run)."""
    return generated_by(item) is not None


def _key(item: Any) -> tuple[str, str]:
    metadata = item.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


def _restore_paths(before: list[Any], after: list[Any]) -> None:
    """A re-emitted Secret keeps the file kpt had it in (its path annotations)."""
    old = {_key(item): item for item in before if _generated(item)}
    for item in after:
        previous = old.get(_key(item)) if _generated(item) else None
        if previous is None:
            continue
        annotations = item["metadata"]["annotations"]
        for key, value in previous["metadata"]["annotations"].items():
            if key.startswith(("config.kubernetes.io/", "internal.config.kubernetes.io/")):
                annotations.setdefault(key, value)


def _dump(yaml: Any, data: Any) -> str:
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue()
