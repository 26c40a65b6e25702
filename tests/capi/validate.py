"""Check Cluster API objects against the JSON Schemas generated from the upstream CRDs.

``capi_errors(obj)`` gives the errors of one object ([] when valid) and raises
LookupError for a kind or version without a schema; ``assert_capi_valid(text)``
checks every covered object of a YAML stream and returns how many it checked.
A MachineDeployment's or MachineSet's selector is defaulted first, as Cluster API's
defaulting webhook does before the apiserver checks the schema.
Besides the JSON Schema keywords it checks the formats the apiserver checks
(``byte``, ``date-time``), the ``int32``/``int64`` ranges, and two keywords the
converter writes: ``x-kubernetes-list-map-keys`` and ``x-unique-by`` (no two
list items with the same values of these fields).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema

from proxy_postrender.objects import walk_objects
from proxy_postrender.yamltext import libyaml
from tests.capi.crd_schema import SCHEMA_DIRS

_RFC3339 = re.compile(
    r"^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$",
)
_INT_RANGES = {"int32": 2**31, "int64": 2**63}

FORMATS = jsonschema.FormatChecker(formats=())


def _is_byte(instance: object) -> bool:
    if isinstance(instance, str):
        base64.b64decode(instance, validate=True)
    return True


def _is_date_time(instance: object) -> bool:
    if isinstance(instance, str):
        if not _RFC3339.match(instance):
            return False
        datetime.datetime.fromisoformat(instance.upper().replace("Z", "+00:00"))
    return True


def _int_range(name: str) -> None:
    limit = _INT_RANGES[name]

    def check(instance: object) -> bool:
        if isinstance(instance, int) and not isinstance(instance, bool):
            return -limit <= instance < limit
        return True

    FORMATS.checks(name)(check)


FORMATS.checks("byte", raises=(binascii.Error, ValueError))(_is_byte)
FORMATS.checks("date-time", raises=ValueError)(_is_date_time)
for _name in _INT_RANGES:
    _int_range(_name)


def _unique_by(
    validator: Any, keys: list[str], instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "array"):
        return
    seen: dict[str, int] = {}
    for index, item in enumerate(instance):
        if not isinstance(item, dict):
            continue
        key = json.dumps([item.get(k) for k in keys])
        if key in seen:
            values = ", ".join(f"{k}={item.get(k)!r}" for k in keys)
            yield jsonschema.ValidationError(
                f"items {seen[key]} and {index} have the same {values}"
            )
        else:
            seen[key] = index


Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    {"x-kubernetes-list-map-keys": _unique_by, "x-unique-by": _unique_by},
)


def make_validator(schema: dict[str, Any]) -> Any:
    """A validator of one generated schema, with the formats and keywords above."""
    return Validator(schema, format_checker=FORMATS)


@cache
def _schemas() -> dict[tuple[str, str], Any]:
    """(apiVersion, kind) -> validator, for every stored schema."""
    out = {}
    for path in sorted(p for d in SCHEMA_DIRS for p in d.glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        props = schema["properties"]
        out[props["apiVersion"]["const"], props["kind"]["const"]] = make_validator(schema)
    return out


def covered() -> set[tuple[str, str]]:
    """The (apiVersion, kind) pairs with a schema."""
    return set(_schemas())


def is_capi(obj: Any) -> bool:
    """Whether ``obj`` is an object of a Cluster API group (``*cluster.x-k8s.io``)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("apiVersion"), str):
        return False
    group = str(obj["apiVersion"]).rpartition("/")[0]
    return group == "cluster.x-k8s.io" or group.endswith(".cluster.x-k8s.io")


def _plain(value: Any) -> Any:
    """What the apiserver's YAML-to-JSON step gives: timestamps become RFC 3339 strings."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _where(error: jsonschema.ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out or "."


# Kinds whose defaulting webhook fills ``spec.selector.matchLabels`` before the apiserver
# checks the schema (mutating admission runs before schema validation):
# core/webhooks/admission/machinedeployment.go and machineset.go, ``Default``, at
# kubernetes-sigs/cluster-api@ae7ff047db499ac3858ade268ba38db8c9f128bb.
_SELECTOR_DEFAULTED = frozenset({"MachineDeployment", "MachineSet"})


def _admission_defaults(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` as the schema sees it after Cluster API's defaulting webhooks: a
    MachineDeployment's or MachineSet's missing (or null) selector gets its labels."""
    spec = obj.get("spec")
    if obj.get("kind") not in _SELECTOR_DEFAULTED or not isinstance(spec, dict):
        return obj
    selector = spec.get("selector")
    if selector is not None and not isinstance(selector, dict):
        return obj
    selector = dict(selector or {})
    if selector.get("matchLabels") is None:
        selector["matchLabels"] = {}
    return {**obj, "spec": {**spec, "selector": selector}}


def capi_errors(obj: Any) -> list[str]:
    """Validation errors of one object ([] when valid); raises LookupError without a schema."""
    key = (obj.get("apiVersion"), obj.get("kind")) if isinstance(obj, dict) else None
    validator = _schemas().get(key) if key else None  # type: ignore[arg-type]
    if validator is None:
        raise LookupError(f"no Cluster API schema for {key}")
    seen = _plain(_admission_defaults(obj))
    errors = sorted(validator.iter_errors(seen), key=lambda e: list(e.absolute_path))
    return [f"{_where(e)}: {e.message}" for e in errors]


def _objects(text: str) -> Iterator[Any]:
    for doc in libyaml.load_data(text):
        if isinstance(doc, dict) and doc.get("kind") == "ResourceList":
            items = doc.get("items")
            docs = items if isinstance(items, list) else []
        else:
            docs = [doc]
        for item in docs:
            for _, obj in walk_objects(item):
                yield obj


def stream_errors(text: str) -> tuple[int, list[str]]:
    """(objects checked, errors) of every covered object in a YAML stream or KRM
    ResourceList; each error names the object's kind and name."""
    checked, errors = 0, []
    for obj in _objects(text):
        if not is_capi(obj):
            continue
        try:
            found = capi_errors(obj)
        except LookupError:
            continue
        checked += 1
        label = f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')}"
        errors += [f"{label}: {error}" for error in found]
    return checked, errors


def _text(data: str | bytes) -> str:
    return data.decode("utf-8-sig") if isinstance(data, bytes) else data


def assert_capi_valid(text: str | bytes) -> int:
    """Assert every covered Cluster API object in ``text`` validates; return how many
    were checked."""
    checked, errors = stream_errors(_text(text))
    assert not errors, "Cluster API schema errors:\n" + "\n".join(errors)
    return checked


def assert_no_new_capi_errors(before: str | bytes, after: str | bytes) -> int:
    """Assert the tool's output ``after`` has no schema error its input ``before`` did
    not have (for inputs that are not fully valid themselves) and that it holds at
    least one covered object; return how many were checked."""
    _, old = stream_errors(_text(before))
    checked, new = stream_errors(_text(after))
    added = sorted(set(new) - set(old))
    assert not added, "Cluster API schema errors the tool added:\n" + "\n".join(added)
    assert checked, "no Cluster API object with a schema in the output"
    return checked
