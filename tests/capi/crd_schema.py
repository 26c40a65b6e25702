"""Turn the upstream Cluster API CRDs into JSON Schemas (draft 2020-12) kept as test data.

Run ``python -m tests.capi.crd_schema --write [CRD_DIR]`` to regenerate
``tests/capi/schemas/`` (one ``<kind>-<version>.json`` per kind and served
version, and ``SOURCE.md``); without ``--write`` it only reports which stored
files differ from what the CRDs give (exit 1). ``CRD_DIR`` defaults to
``../shared/capi-crds`` next to the repository; its ``README.md`` names the
upstream repository and commit.

The conversion follows what the apiserver does with a structural schema when a
manifest is applied with strict field validation (``kubectl --validate=strict``):

- ``properties`` without ``x-kubernetes-preserve-unknown-fields``: unknown
  fields are errors (``additionalProperties: false``); an object with neither
  ``properties`` nor ``additionalProperties`` accepts no field at all (the
  apiserver would prune every one).
- ``x-kubernetes-int-or-string``: integer or string; ``nullable: true``: null
  is allowed as well. A null elsewhere is an error (the apiserver prunes it
  silently, which loses what the writer meant, so the check is stricter there).
- ``x-kubernetes-embedded-resource``: ``apiVersion`` and ``kind`` are required
  and ``metadata`` is an ObjectMeta.
- ``x-kubernetes-list-type: set``: ``uniqueItems``; ``map``: the list map keys
  are kept as ``x-kubernetes-list-map-keys``, which ``tests.capi.validate``
  checks (no two items with the same keys).
- ``format``: kept; ``tests.capi.validate`` checks ``byte`` and ``date-time``
  (both validated by the apiserver) and the ``int32``/``int64`` ranges (the
  apiserver accepts any integer there, but the controllers' typed decode
  fails).
- the root ``metadata`` is an ObjectMeta (name or generateName required; name,
  namespace, label and annotation syntax checked as the apiserver does), and
  ``apiVersion``/``kind`` are constants of the version and kind.
- ``status`` is not checked when the CRD has a status subresource: the
  apiserver drops it from what is created or updated through the resource.
- dropped: ``description``, ``default`` (none of these CRDs has a default on a
  required field), ``example``, ``title``, ``externalDocs``,
  ``x-kubernetes-map-type`` and the CEL ``x-kubernetes-validations``, which
  cannot be evaluated here; ``SOURCE.md`` lists every CEL rule that is not
  checked. A keyword the converter does not know stops it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.helpers import ROOT

SCHEMAS = Path(__file__).resolve().parent / "schemas"
DEFAULT_CRD_DIR = ROOT.parent / "shared" / "capi-crds"
SOURCE_NAME = "SOURCE.md"
# the schemas of other providers' bootstrap CRDs, each in a directory of its own
# (``--out``): CAPA's EKS kinds, from kubernetes-sigs/cluster-api-provider-aws
EKS_SCHEMAS = SCHEMAS / "eks"
# Talos: CABPT (bootstrap kinds) and CACPPT (TalosControlPlane), one commit each
TALOS_SCHEMAS = SCHEMAS / "talos"
TALOS_CP_SCHEMAS = SCHEMAS / "talos-controlplane"
# MicroK8s: canonical/cluster-api-bootstrap-provider-microk8s (MicroK8sConfig(Template))
# and canonical/cluster-api-control-plane-provider-microk8s (MicroK8sControlPlane)
MICROK8S_SCHEMAS = (SCHEMAS / "microk8s", SCHEMAS / "microk8s-controlplane")
# k0smotron: k0sproject/k0smotron (K0sWorkerConfig(Template), K0sControllerConfig,
# K0sControlPlane(Template))
K0SMOTRON_SCHEMAS = SCHEMAS / "k0smotron"
# rancher/cluster-api-provider-rke2's and k3s-io/cluster-api-k3s's kinds
RKE2_SCHEMAS = SCHEMAS / "rke2"
K3S_SCHEMAS = SCHEMAS / "k3s"
# Cluster API's own MachineDeployment, MachineSet and MachinePool (core/config/crd/bases/
# at the commit of ../shared/capi-crds), which the rollout tests validate
CORE_SCHEMAS = SCHEMAS / "core"
SCHEMA_DIRS = (
    SCHEMAS,
    CORE_SCHEMAS,
    EKS_SCHEMAS,
    TALOS_SCHEMAS,
    TALOS_CP_SCHEMAS,
    *MICROK8S_SCHEMAS,
    K0SMOTRON_SCHEMAS,
    RKE2_SCHEMAS,
    K3S_SCHEMAS,
)
DIALECT = "https://json-schema.org/draft/2020-12/schema"

Schema = dict[str, Any]

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = rf"{_DNS_LABEL}(\.{_DNS_LABEL})*"
_QUALIFIED_NAME = rf"^({_DNS_SUBDOMAIN}/)?([A-Za-z0-9][-A-Za-z0-9_.]{{0,61}})?[A-Za-z0-9]$"
_LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
_STRING: Schema = {"type": "string"}

# metav1.ObjectMeta as the apiserver validates it for a custom resource.
OBJECT_META: Schema = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "maxLength": 253, "pattern": f"^{_DNS_SUBDOMAIN}$"},
        "generateName": _STRING,
        "namespace": {"type": "string", "maxLength": 63, "pattern": f"^{_DNS_LABEL}$"},
        "labels": {
            "type": ["object", "null"],
            "propertyNames": {"pattern": _QUALIFIED_NAME},
            "additionalProperties": {"type": "string", "maxLength": 63, "pattern": _LABEL_VALUE},
        },
        "annotations": {
            "type": ["object", "null"],
            "propertyNames": {"pattern": _QUALIFIED_NAME},
            "additionalProperties": _STRING,
        },
        "finalizers": {"type": "array", "items": _STRING},
        "ownerReferences": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["apiVersion", "kind", "name", "uid"],
                "properties": {
                    "apiVersion": _STRING,
                    "kind": _STRING,
                    "name": _STRING,
                    "uid": _STRING,
                    "controller": {"type": "boolean"},
                    "blockOwnerDeletion": {"type": "boolean"},
                },
            },
        },
        "uid": _STRING,
        "resourceVersion": _STRING,
        "selfLink": _STRING,
        "generation": {"type": "integer"},
        "creationTimestamp": {"type": ["string", "null"], "format": "date-time"},
        "deletionTimestamp": {"type": ["string", "null"], "format": "date-time"},
        "deletionGracePeriodSeconds": {"type": "integer"},
        "managedFields": {"type": "array", "items": {"type": "object"}},
    },
}
_META_REF: Schema = {"$ref": "#/$defs/ObjectMeta"}

# Keywords copied unchanged; everything else is handled below or refused.
_COPIED = (
    "required",
    "enum",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "multipleOf",
    "uniqueItems",
    "format",
)
_DROPPED = frozenset(
    {"description", "default", "example", "title", "externalDocs", "x-kubernetes-map-type"}
)
_HANDLED = frozenset(
    {
        "type",
        "nullable",
        "properties",
        "additionalProperties",
        "items",
        "anyOf",
        "allOf",
        "oneOf",
        "not",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-validations",
    }
)
_INT_OR_STRING_BRANCHES = [{"type": "integer"}, {"type": "string"}]


@dataclass(frozen=True)
class CelRule:
    """One ``x-kubernetes-validations`` entry that the JSON Schema cannot express."""

    path: str
    rule: str
    message: str
    checked: bool  # translated into JSON Schema by cel_to_schema


_NOT_IN = re.compile(r"^!\(self in \[((?:'[^'\\]*',?\s*)+)\]\)$")
_MATCHES = re.compile(r"^self\.matches\('([^'\\]*)'\)$")
_UNIQUE = re.compile(r"^self\.all\((\w+), self\.exists_one\((\w+), \1\.(\w+) == \2\.\3\)\)$")
_ONE_OF = re.compile(
    r"^\[((?:has\(self\.\w+\),?)+)\]\.filter\((\w+), ?\2 ?== ?true\)\.size\(\) == 1$"
)


def cel_to_schema(rule: str) -> Schema | None:
    """JSON Schema of the few CEL rule shapes these CRDs use, or None for any other rule.

    ``!(self in [...])``: not one of; ``self.matches('re')``: a pattern (RE2 and
    Python agree on the ones used); ``self.all(x, self.exists_one(y, x.f == y.f))``:
    no two items with the same ``f`` (``x-unique-by``, checked by
    ``tests.capi.validate``); ``[has(self.a),has(self.b)].filter(x,x==true).size() == 1``:
    exactly one of the fields.
    """
    if match := _NOT_IN.match(rule):
        return {"not": {"enum": re.findall(r"'([^']*)'", match.group(1))}}
    if match := _MATCHES.match(rule):
        return {"pattern": match.group(1)}
    if match := _UNIQUE.match(rule):
        return {"x-unique-by": [match.group(3)]}
    if match := _ONE_OF.match(rule):
        fields = re.findall(r"has\(self\.(\w+)\)", match.group(1))
        return {"oneOf": [{"required": [name]} for name in fields]}
    return None


@dataclass
class _Context:
    cel: list[CelRule] = field(default_factory=list)
    embedded: bool = False  # whether ObjectMeta is referenced


def convert_node(node: Any, path: str = "", *, structural: bool = True) -> Schema:
    """JSON Schema of one CRD schema node (see the module docstring for the rules)."""
    return _convert(node, path, structural, _Context())


def _convert(node: Any, path: str, structural: bool, ctx: _Context) -> Schema:
    if not isinstance(node, dict):
        raise ValueError(f"{path or '.'}: a schema must be a mapping, not {type(node).__name__}")
    unknown = set(node) - _DROPPED - _HANDLED - set(_COPIED)
    if unknown:
        raise ValueError(f"{path or '.'}: keyword(s) not handled: {', '.join(sorted(unknown))}")
    out: Schema = {}
    for item in node.get("x-kubernetes-validations") or []:
        rule = " ".join(str(item["rule"]).split())
        message = item.get("message") or item.get("messageExpression") or ""
        translated = cel_to_schema(rule)
        if translated is not None:
            out.setdefault("allOf", []).append(translated)
        ctx.cel.append(CelRule(path or ".", rule, message, translated is not None))

    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = node.get("x-kubernetes-embedded-resource") is True
    nullable = node.get("nullable") is True

    types: list[str] = []
    if int_or_string:
        types = ["integer", "string"]
    elif "type" in node:
        types = [str(node["type"])]
    if types and nullable:
        types.append("null")
    if types:
        out["type"] = types[0] if len(types) == 1 else types

    for key in _COPIED:
        if key in node:
            out[key] = node[key]
    if nullable and "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(key) is True:  # OpenAPI 3.0 flag -> JSON Schema number
            out[key] = out.pop(bound)

    for key in ("anyOf", "allOf", "oneOf"):
        if key not in node:
            continue
        if int_or_string and key == "anyOf" and node[key] == _INT_OR_STRING_BRANCHES:
            continue  # what controller-gen writes next to int-or-string: the type says it
        out.setdefault(key, []).extend(
            _convert(branch, f"{path}<{key}{i}>", False, ctx) for i, branch in enumerate(node[key])
        )
    if "not" in node:
        out["not"] = _convert(node["not"], f"{path}<not>", False, ctx)

    if "items" in node:
        out["items"] = _convert(node["items"], f"{path}[]", structural, ctx)
    list_type = node.get("x-kubernetes-list-type")
    if list_type == "set":
        out["uniqueItems"] = True
    elif list_type == "map":
        out["x-kubernetes-list-map-keys"] = list(node.get("x-kubernetes-list-map-keys") or [])

    properties: Schema = {
        name: _convert(child, f"{path}.{name}", structural, ctx)
        for name, child in (node.get("properties") or {}).items()
    }
    if embedded:
        ctx.embedded = True
        properties.setdefault("apiVersion", dict(_STRING))
        properties.setdefault("kind", dict(_STRING))
        properties["metadata"] = dict(_META_REF)
        out["required"] = sorted({*out.get("required", []), "apiVersion", "kind"})
    if properties or "properties" in node:
        out["properties"] = properties
    additional = node.get("additionalProperties")
    if isinstance(additional, dict):
        out["additionalProperties"] = _convert(additional, f"{path}{{}}", structural, ctx)
    elif isinstance(additional, bool):
        out["additionalProperties"] = additional
    is_object = "object" in types or "properties" in out
    if structural and is_object and not preserve and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


@dataclass(frozen=True)
class Generated:
    """One schema file: its name, the JSON Schema and the CEL rules it leaves out."""

    name: str
    schema: Schema
    cel: tuple[CelRule, ...]


def convert_crd(crd: Any, source: str) -> list[Generated]:
    """One schema per served version of a CustomResourceDefinition."""
    spec = crd["spec"]
    group, kind = str(spec["group"]), str(spec["names"]["kind"])
    out = []
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        name = str(version["name"])
        ctx = _Context()
        schema = _convert(version["schema"]["openAPIV3Schema"], "", True, ctx)
        properties = schema.setdefault("properties", {})
        properties["apiVersion"] = {"const": f"{group}/{name}"}
        properties["kind"] = {"const": kind}
        properties["metadata"] = {
            **_META_REF,
            "anyOf": [{"required": ["name"]}, {"required": ["generateName"]}],
        }
        if "status" in (version.get("subresources") or {}) and "status" in properties:
            properties["status"] = {}  # dropped by the apiserver on create and update
        schema["required"] = ["apiVersion", "kind", "metadata", *schema.get("required", [])]
        document: Schema = {
            "$schema": DIALECT,
            "$comment": f"Generated by tests/capi/crd_schema.py from {source}; do not edit.",
            "title": f"{kind} {group}/{name}",
            **schema,
            "$defs": {"ObjectMeta": OBJECT_META},
        }
        out.append(Generated(f"{kind.lower()}-{name}.json", document, tuple(ctx.cel)))
    return out


def dump(schema: Schema) -> str:
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":")) + "\n"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _provenance(crd_dir: Path) -> tuple[str, str]:
    readme = (crd_dir / "README.md").read_text(encoding="utf-8")
    repo = re.search(r"Repository:\s*(\S+)", readme)
    commit = re.search(r"Commit:\s*([0-9a-f]{40})", readme)
    if not repo or not commit:
        raise ValueError(f"{crd_dir / 'README.md'} names no repository and commit")
    return repo.group(1), commit.group(1)


def generate(crd_dir: Path, out: Path = SCHEMAS) -> dict[str, str]:
    """Every file of ``out`` as the CRDs in ``crd_dir`` give it (name -> text)."""
    repo, commit = _provenance(crd_dir)
    yaml = YAML(typ="safe", pure=False)
    files: dict[str, str] = {}
    sources: list[tuple[str, str]] = []
    generated: list[Generated] = []
    for path in sorted(crd_dir.glob("*.yaml")):
        data = path.read_bytes()
        sources.append((path.name, sha256(data)))
        generated.extend(convert_crd(yaml.load(data), path.name))
    for item in sorted(generated, key=lambda g: g.name):
        files[item.name] = dump(item.schema)
    files[SOURCE_NAME] = _source_md(repo, commit, sources, generated, files, out != SCHEMAS)
    return files


def _title(repo: str, elsewhere: bool) -> str:
    if repo == "kubernetes-sigs/cluster-api":
        return f"# Cluster API{' core' if elsewhere else ''} JSON Schemas: source"
    return f"# {repo} JSON Schemas: source"


def _source_md(
    repo: str,
    commit: str,
    sources: list[tuple[str, str]],
    generated: list[Generated],
    files: dict[str, str],
    elsewhere: bool,
) -> str:
    out = " --out DIR" if elsewhere else ""
    lines = [
        _title(repo, elsewhere),
        "",
        f"Generated by `python -m tests.capi.crd_schema --write{out} [CRD_DIR]` from the upstream",
        "CustomResourceDefinitions; do not edit. The conversion rules are in the docstring",
        "of `tests/capi/crd_schema.py`.",
        "",
        f"- Repository: {repo}",
        f"- Commit: {commit}",
        "",
        "## Source CRDs (sha256)",
        "",
        "| file | sha256 |",
        "|---|---|",
        *(f"| {name} | {digest} |" for name, digest in sources),
        "",
        "## Generated schemas (sha256)",
        "",
        "| file | bytes | sha256 |",
        "|---|---|---|",
    ]
    for name in sorted(files):
        data = files[name].encode()
        lines.append(f"| {name} | {len(data)} | {sha256(data)} |")
    for checked, title, intro in (
        (
            False,
            "CEL rules not checked",
            "`x-kubernetes-validations` need a CEL evaluator; these rules are left out of\n"
            "the schemas (the apiserver checks them, `tests.capi.validate` does not).",
        ),
        (
            True,
            "CEL rules checked as JSON Schema",
            "Rules of a shape `cel_to_schema` knows, translated into JSON Schema.",
        ),
    ):
        by_rule: dict[tuple[str, str], list[str]] = {}
        for item in sorted(generated, key=lambda g: g.name):
            for cel in item.cel:
                if cel.checked == checked:
                    by_rule.setdefault((cel.rule, cel.message), []).append(
                        f"{item.name.removesuffix('.json')} `{cel.path}`"
                    )
        lines += ["", f"## {title}", "", intro, ""]
        if not by_rule:
            lines.append("(none)")
        for (rule, message), where in by_rule.items():
            lines.append(f"- `{rule}` ({message}):")
            lines.extend(f"  - {place}" for place in where)
    return "\n".join(lines) + "\n"


def stored(out: Path = SCHEMAS) -> dict[str, str]:
    """The files now in ``out`` (name -> text)."""
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(out.iterdir()) if p.is_file()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.capi.crd_schema", description=__doc__)
    parser.add_argument("--write", action="store_true", help="write the schemas (default: check)")
    parser.add_argument("--out", type=Path, default=SCHEMAS, help="default: tests/capi/schemas")
    parser.add_argument("crd_dir", nargs="?", type=Path, default=DEFAULT_CRD_DIR)
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    files = generate(args.crd_dir, out)
    if args.write:
        out.mkdir(exist_ok=True)
        for name in set(stored(out)) - set(files):
            (out / name).unlink()
        for name, text in files.items():
            (out / name).write_text(text, encoding="utf-8")
        total = sum(len(text.encode()) for text in files.values())
        print(f"wrote {len(files)} files, {total} bytes, to {out.relative_to(ROOT)}")
        return 0
    current = stored(out)
    differ = sorted(n for n in set(files) | set(current) if files.get(n) != current.get(n))
    for name in differ:
        print(f"differs: {name}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
