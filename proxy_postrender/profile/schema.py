"""The JSON Schema (draft-07) of a ProxyProfile, generated from the option tables.

:func:`text` returns the copy shipped next to this module
(``proxyprofile.schema.json``, printed by ``proxy-postrender schema``);
:func:`generate` builds it anew from tables.py. ``make docs`` writes the
shipped copy and docs/proxyprofile.schema.json, and a test fails when either
is stale. Not imported on the tool's normal path.

The schema says what it can of the tool's checks: types, allowed values,
required and unknown fields, patterns of paths, names and URLs, the rules
that JSON Schema can state (``_RULES``). The fields whose row says so
(``Option.expand``: the proxy URLs) may hold ``${VAR}`` references that the
tool expands before it checks them, so they also accept a string with a
reference.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.profile import check, rules, tables

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.profile.options import Option, Section

FILE_NAME = "proxyprofile.schema.json"
# the shipped copy, and the one in docs/ for editors that read it from the repository
COPIES = (
    Path(__file__).with_name(FILE_NAME),
    Path(__file__).resolve().parents[2] / "docs" / FILE_NAME,
)
MODULE = "proxy_postrender.profile.schema"
DRAFT = "http://json-schema.org/draft-07/schema#"
# a ${VAR} reference (not the escape $${, which the tool turns into a literal ${)
VAR_REFERENCE = r"(?:^|[^$])\$\{[A-Za-z_][A-Za-z0-9_]*\}"

_PORT = r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
# http(s)://[user[:password]@]host[:port][/]: what validate_proxy_url accepts
# user-info as Go's net/url reads it back: RFC 3986 unreserved, sub-delims, ":", %XX
_USERINFO = r"(?:[A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2})*"
PROXY_URL = (
    rf"^[Hh][Tt][Tt][Pp][Ss]?://(?:{_USERINFO}@)?"
    rf"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(?:0*{_PORT})?)?/?$"
)
# NO_PROXY-style entries (noproxy/syntax.py: parse_entry), by what a field accepts
_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
_NAME = rf"{_LABEL}(?:\.{_LABEL})*\.?"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
# IPv6, loosely: hex groups and colons (no ":::", one "::" at most), an IPv4 tail
_IPV6 = (
    r"(?![0-9A-Fa-f:.]*:::)(?![0-9A-Fa-f:.]*::[0-9A-Fa-f:.]*::)"
    rf"(?:[0-9A-Fa-f]{{0,4}}:){{2,7}}(?:[0-9A-Fa-f]{{0,4}}|{_IPV4})"
)
# a prefix of 1 and up: a /0 (every address) is refused, '*' is the entry for that
_CIDR = rf"{_IPV4}/0*(?:3[0-2]|[12][0-9]|[1-9])|{_IPV6}/0*(?:12[0-8]|1[01][0-9]|[1-9][0-9]?)"
_ENTRY_PORT = rf"(?=[0-9]{{1,5}}(?![0-9]))0*{_PORT}"  # 1-5 digits, 1-65535
_ADDRESS = rf"{_IPV4}|{_IPV6}|\[{_IPV6}\]"
_ENTRY = {
    "no-proxy": rf"\*|\[{_IPV6}\](?::{_ENTRY_PORT})?"
    rf"|(?:{_IPV4}|(?:\*\.|\.)?{_NAME})(?::{_ENTRY_PORT})?"
    rf"|{_IPV6}|{_CIDR}",
    ("cidr", "ip"): rf"{_CIDR}|{_ADDRESS}",
    ("ip", "domain"): rf"{_ADDRESS}|{_NAME}",
    "host": rf"(?!{_IPV4}\s*$){_NAME}",
    "endpoint": rf"\[{_IPV6}\](?::{_ENTRY_PORT})?|(?:{_IPV4}|{_NAME})(?::{_ENTRY_PORT})?|{_IPV6}",
}
NODE_PATH = r"^(?!.*/\.\.(?:/|$))/[A-Za-z0-9._/@+-]+$"
DROP_IN = r"^(?!.*/\.\.(?:/|$))(?=.*\.d/)/[A-Za-z0-9._/@+-]+\.conf$"
PEM = r"-----BEGIN CERTIFICATE-----\r?\n(?:[A-Za-z0-9+/=]|\r?\n)+-----END CERTIFICATE-----"
JSONPATH = r"^(?!\$?$)(?!.*\*)(?!.*\.\.)"
# a setter's JSONPath: the object's content, one place or [*] (every item of a list)
CONTENT_PATH = (
    r"^(?!(?:\$\.?)?(?:metadata|apiVersion|kind)(?:[.\[]|$))(?!\$?$)(?!.*\.\.)"
    r"(?:[^*]|\[\*\])*$"
)


def text() -> str:
    """The shipped schema, as JSON text."""
    with open(os.path.join(os.path.dirname(__file__), FILE_NAME), encoding="utf-8") as handle:
        return handle.read()


def generated_text() -> str:
    """The schema as generated from the tables now, as JSON text."""
    return json.dumps(generate(), indent=2, ensure_ascii=False) + "\n"


def generate() -> dict[str, Any]:
    """The schema: the object's fields at the top, every other section in ``definitions``."""
    root = _section(tables.PROFILE)
    root["description"] = (
        "A proxy-postrender profile: the proxy settings to inject into rendered Kubernetes "
        "manifests. Generated from proxy_postrender/profile/tables.py (make docs)."
    )
    definitions = {
        _name(section): _section(section)
        for section in tables.sections()
        if section is not tables.PROFILE
    }
    return {"$schema": DRAFT, "title": "ProxyProfile", **root, "definitions": definitions}


def _name(section: Section) -> str:
    """The section's key in ``definitions``: its path without ``[]``."""
    return section.name.replace("[]", "")


def _ref(section: Section) -> dict[str, Any]:
    return {"$ref": f"#/definitions/{_name(section)}"}


def _plain(doc: str) -> str:
    """Markdown links without their targets (relative to docs/, they mean nothing here)."""
    return re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", doc)


def _section(section: Section) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if section.doc:
        schema["description"] = _plain(section.doc)
    schema["properties"] = {o.name: _option(o) for o in section.options}
    schema["additionalProperties"] = False
    required = [o.name for o in section.options if o.required]
    if required:
        schema["required"] = required
    constraints = [{"required": [name]} for name in section.one_of]
    if constraints:
        schema["oneOf"] = constraints
    rule_list = _RULES.get(section.name, [])
    if rule_list:
        schema["allOf"] = rule_list
    return schema


def _option(option: Option) -> dict[str, Any]:
    schema = _kind(option, option.expand)
    if not option.required and option.null != "check":
        schema = _nullable(schema)
    described: dict[str, Any] = {"description": _plain(option.doc)}
    default = option.default
    if option.shown is None and default is not None and not isinstance(default, dict):
        described["default"] = list(default) if isinstance(default, tuple) else default
    if "$ref" in schema:  # draft-07 ignores the siblings of $ref
        return {**described, "allOf": [schema]}
    return {**described, **schema}


def _string(pattern: str | None = None, expanded: bool = False, **more: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", **more}
    if pattern is not None:
        schema["pattern"] = pattern
    return _expandable(schema) if expanded else schema


def _expandable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema``, or any string with a ``${VAR}`` reference (expanded before the check)."""
    return {"anyOf": [schema, {"type": "string", "pattern": VAR_REFERENCE}]}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if not schema:
        return schema  # anything, null included
    kind = schema.get("type")
    if isinstance(kind, str) and "anyOf" not in schema:
        return {**schema, "type": [kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _list_or_string(entry: str, expanded: bool) -> dict[str, Any]:
    """A list of entries, or one comma-separated string of them."""
    items = _string(rf"^\s*(?:{entry})?\s*$", expanded)
    joined = _string(rf"^\s*(?:{entry})?\s*(?:,\s*(?:{entry})?\s*)*$", expanded)
    return {"anyOf": [{"type": "array", "items": items}, joined]}


def _kind(option: Option, expanded: bool) -> dict[str, Any]:
    kind = option.kind
    name = kind.name
    if name == "any":
        return {}
    if name == "bool":
        return {"type": "boolean"}
    if name in ("string", "file", "label-key"):
        return _string(minLength=1) if name == "label-key" else {"type": "string"}
    if name == "pem":
        return _string(PEM, expanded)
    if name == "const":
        return {"const": kind.values[0]}
    if name == "choice":
        schema: dict[str, Any] = {"enum": list(kind.values)}
        return _expandable(schema) if expanded else schema
    if name in ("strings", "env-names", "presets"):
        if name == "strings":
            items = _string(minLength=1)
        elif name == "env-names":
            items = _string(check.ENV_NAME, expanded)
        else:
            items = {"enum": list(kind.values)}
            items = _expandable(items) if expanded else items
        return {"type": "array", "items": items}
    if name == "labels":
        return {"type": "object", "additionalProperties": {"type": "string"}}
    if name == "proxy-url":
        return _string(PROXY_URL, expanded)
    if name == "no-proxy":
        return _list_or_string(_ENTRY["no-proxy"], expanded)
    if name == "addresses":
        return _list_or_string(_ENTRY[kind.values], expanded)
    if name in ("host", "endpoint"):
        return _string(rf"^\s*(?:{_ENTRY[name]})\s*$", expanded)
    patterns = {
        "path": check.PLAIN_PATH,
        "node-path": NODE_PATH,
        "drop-in": DROP_IN,
        "env-name": check.ENV_NAME,
        "variable": check.VARIABLE,
        "timestamp": check.TIMESTAMP,
        "jsonpath": JSONPATH,
    }
    if name in patterns:
        return _string(patterns[name], expanded and name != "variable")
    if name == "object-name":
        limit = {} if kind.limit is None else {"maxLength": kind.limit}
        return _string(check.DNS_NAME, expanded, **limit)
    if name == "setters":
        values: dict[str, Any] = {"enum": list(kind.values)}
        return {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": CONTENT_PATH},
            "additionalProperties": _expandable(values) if expanded else values,
        }
    table = kind.table()
    assert table is not None, name
    ref = _ref(table)
    if name == "mapping":
        return ref
    if name == "mappings":
        return {"type": "array", "items": ref}
    if name == "rules":
        return {"anyOf": [ref, {"type": "array", "items": ref}]}
    raise ValueError(f"no schema for the kind {name}")


def _true(name: str, value: object) -> dict[str, Any]:
    """``name`` is given and is ``value``."""
    return {"required": [name], "properties": {name: {"const": value}}}


def _any_case(word: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)


_USER_IN_URL = {"type": "string", "pattern": "://.*@"}

# The rules of rules.py that JSON Schema can state, by section; the others
# (paths that must differ, extraEnv names listed twice or also in
# caBundle.env, presets the cluster domain makes invalid, variables that must
# be set, files that must exist) only the tool checks.
_RULES: dict[str, list[dict[str, Any]]] = {
    "spec": [
        {  # rules.a_proxy
            "anyOf": [
                {"required": [key], "properties": {key: {"type": "string", "minLength": 1}}}
                for key in ("httpProxy", "httpsProxy")
            ]
        },
        {  # rules.no_user_with_from_env
            "if": {
                "required": ["credentials"],
                "properties": {
                    "credentials": {
                        "type": "object",
                        "required": ["fromEnv"],
                        "properties": {"fromEnv": {"type": "object"}},
                    },
                },
            },
            "then": {
                "properties": {
                    "httpProxy": {"not": _USER_IN_URL},
                    "httpsProxy": {"not": _USER_IN_URL},
                }
            },
        },
    ],
    "spec.credentials": [
        {  # rules.credentials
            "if": _true("createSecret", True),
            "then": {"required": ["secretRef"], "properties": {"secretRef": {"type": "string"}}},
        },
        {"not": {"allOf": [_true("createSecret", True), _true("forbidPlaintext", True)]}},
    ],
    "spec.workloads": [
        {"not": {"allOf": [_true("upperCase", False), _true("lowerCase", False)]}},
    ],
    "spec.workloads.extraEnv[]": [
        {  # rules.workloads: not a variable the tool sets itself
            "properties": {
                "name": {
                    "not": {
                        "pattern": f"^(?:{'|'.join(_any_case(n) for n in rules.RESERVED_ENV)})$"
                    }
                }
            }
        },
    ],
    "spec.workloads.include[].selector.matchExpressions[]": [
        {  # rules.requirement
            "if": {"required": ["operator"], "properties": {"operator": {"enum": ["In", "NotIn"]}}},
            "then": {
                "required": ["values"],
                "properties": {"values": {"type": "array", "minItems": 1}},
            },
        },
        {
            "if": {
                "required": ["operator"],
                "properties": {"operator": {"enum": ["Exists", "DoesNotExist"]}},
            },
            "then": {"properties": {"values": {"maxItems": 0}}},
        },
    ],
    "spec.clusters[].match": [
        {  # rules.cluster_match
            "anyOf": [
                {"required": ["names"], "properties": {"names": {"minItems": 1}}},
                {"required": ["labels"], "properties": {"labels": {"minProperties": 1}}},
            ],
            "properties": {"names": {"items": {"pattern": rules.CLUSTER_NAME}}},
        },
    ],
    "spec.targets[]": [
        {  # loader._targets: a preset alone, or apiVersion, kind and podTemplate or set
            "oneOf": [
                {"required": ["preset"], "propertyNames": {"const": "preset"}},
                {
                    "required": ["apiVersion", "kind"],
                    "not": {"required": ["preset"]},
                    "oneOf": [{"required": ["podTemplate"]}, {"required": ["set"]}],
                },
            ]
        },
    ],
}


def main(argv: list[str]) -> int:
    """``--write``: write both copies; ``--check``: exit 1 when one is stale."""
    if argv not in (["--write"], ["--check"]):
        print(f"usage: python -m {MODULE} --write | --check", file=sys.stderr)
        return 2
    wanted = generated_text()
    stale = [p for p in COPIES if not p.exists() or p.read_text(encoding="utf-8") != wanted]
    if argv == ["--check"]:
        for path in stale:
            print(f"{path} is stale: run make docs", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
