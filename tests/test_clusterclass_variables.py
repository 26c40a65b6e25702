"""A ClusterClass's per-cluster values arrive at reconcile time (nodes/classvars.py).

- The class and its templates do not depend on which Clusters are in the stream: the
  same class rendered with 0, 1 and 2 Clusters is byte for byte the same.
- The tool's own patch template is rendered by the real Go text/template
  (tests/gotemplate/main.go, built once per Go version and source, as tests/gourl is),
  with Cluster API's nested variables for two Clusters of different networks and
  proxies, in every enabledIf combination the model enumerates, for every golden
  ClusterClass case: each template gets that cluster's env file once, its drop-ins
  read it, and nothing rendered holds a template delimiter.
- The variable's default validates against its own schema; values the schema would
  refuse are refused by the tool; names the tool did not record are refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from proxy_postrender.nodes import classvars, kubeadm
from proxy_postrender.profile import loader
from proxy_postrender.yamltext import libyaml
from tests import capi_topology as ct
from tests.golden import Case, load_cases
from tests.helpers import GOLDEN, SHARED_PROFILE, go_binary, run_cli

SOURCE = Path(__file__).resolve().parent / "gotemplate" / "main.go"
TOPOLOGY = GOLDEN / "capi-clusterclass-topology" / "input.yaml"
ENV_FILE = kubeadm.DEFAULT_ENV_FILE
_DELIMITER = re.compile(r"\{[{%#]")


@pytest.fixture(scope="module")
def gotemplate() -> Path:
    """The gotemplate binary (tests.helpers.go_binary)."""
    return go_binary(SOURCE, "gotemplate")


def go_renderer(binary: Path, tmp: Path, variables: Mapping[str, Any]) -> Callable[[str], str]:
    """Render a template as Cluster API's topology controller does, with ``variables``."""
    data = tmp / f"vars-{hashlib.sha256(json.dumps(variables).encode()).hexdigest()[:12]}.json"
    data.write_text(json.dumps(variables))
    cache: dict[str, str] = {}

    def render(text: str) -> str:
        if text not in cache:
            source = tmp / "template.txt"
            source.write_text(text)
            proc = subprocess.run(
                [str(binary), str(source), str(data)], capture_output=True, text=True
            )
            assert proc.returncode == 0, proc.stderr
            cache[text] = proc.stdout
        return cache[text]

    return render


def _docs(text: str) -> list[Any]:
    return [d for d in libyaml.load_data(text) if d is not None]


def _run(profile: Path, data: bytes) -> str:
    proc = run_cli([str(profile)], data)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


# --- two clusters of different networks and proxies ---------------------------------------

CLUSTERS: dict[str, dict[str, Any]] = {
    "alpha": {
        "network": {
            "pods": ["10.244.0.0/16"],
            "services": ["10.96.0.0/12"],
            "serviceDomain": "alpha.local",
        },
        "proxy": "http://proxy.alpha.example:3128",
    },
    "beta": {
        "network": {"pods": ["192.168.0.0/16"], "services": ["172.20.0.0/16"]},
        "proxy": "http://proxy.beta.example:8080",
    },
}


def _variables(name: str, value: Mapping[str, Any] | None) -> dict[str, Any]:
    """Cluster API's nested variables map for cluster ``name`` (its own proxy in the
    variable's value; None: the variable's default is not given, as for a class whose
    Cluster has none)."""
    spec = CLUSTERS[name]
    variables: dict[str, Any] = {
        "builtin": {
            "cluster": {"name": name, "namespace": "fleet", "network": spec["network"]},
        }
    }
    if value is not None:
        variables[classvars.VARIABLE] = value
    return variables


def _cluster_value(default: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The cluster's value: its own proxy, the default's NO_PROXY (the builtins add its
    networks), as a per-cluster profile entry would give it."""
    proxy = str(CLUSTERS[name]["proxy"])
    return {"httpProxy": proxy, "httpsProxy": proxy, "noProxy": list(default["noProxy"])}


def _env_lines(content: str) -> dict[str, str]:
    values = {}
    for line in content.splitlines():
        name, _, quoted = line.partition("=")
        assert quoted.startswith("'") and quoted.endswith("'"), line
        values[name] = quoted[1:-1]
    return values


def _check_spec(name: str) -> Callable[[Mapping[str, Any]], list[str]]:
    """The per-cluster checks of one rendered KubeadmConfigSpec."""
    spec_net = CLUSTERS[name]["network"]
    proxy = str(CLUSTERS[name]["proxy"])

    def check(spec: Mapping[str, Any]) -> list[str]:
        if ct.system_of(spec) == "windows":
            return []  # the class's patch does not select it (check_template checks it)
        files = [f for f in spec.get("files") or [] if isinstance(f, Mapping)]
        problems = ct.duplicate_paths(spec)
        env_files = [f for f in files if f.get("path") == ENV_FILE]
        if len(env_files) != 1:
            return [*problems, f"{len(env_files)} env files"]
        values = _env_lines(str(env_files[0]["content"]))
        no_proxy = values.get("NO_PROXY", "").split(",")
        if values.get("HTTP_PROXY") != proxy or values.get("https_proxy") != proxy:
            problems.append(f"not the cluster's proxy: {values}")
        wanted = [*spec_net["pods"], *spec_net["services"]]
        domain = spec_net.get("serviceDomain")
        if domain:
            wanted += [str(domain), f".{domain}"]
        problems += [f"NO_PROXY lacks {w}" for w in wanted if w not in no_proxy]
        if values.get("no_proxy") != values.get("NO_PROXY") or len(set(no_proxy)) != len(no_proxy):
            problems.append(f"NO_PROXY and no_proxy differ, or repeat an entry: {values}")
        for item in files:
            text = str(item.get("content", ""))
            reads = "EnvironmentFile=" in text and item.get("path") != ENV_FILE
            if reads and f"EnvironmentFile={ENV_FILE}" not in text:
                problems.append(f"{item['path']} reads another file")
        texts = [str(f.get("content", "")) for f in files]
        texts += [str(c) for c in spec.get("preKubeadmCommands") or []]
        problems += [f"template delimiter in {t[:60]!r}" for t in texts if _DELIMITER.search(t)]
        return problems

    return check


def _expectation(case: Case) -> ct.Expectation:
    profile = loader.load(str(_profile_of(case)), environ=os.environ)
    assert profile.nodes is not None
    return ct.expectation(profile.nodes, profile.env_vars(), shared=True)


def _profile_of(case: Case) -> Path:
    return case.path / case.args[0] if case.args else SHARED_PROFILE


def _with_tool_patch(case: Case) -> bool:
    """Whether the case's output has a ClusterClass with the tool's variable, and kubeadm
    templates (the topology model reads kubeadm's lists; an RKE2 class's patch is
    checked in tests/test_dialects.py)."""
    if not case.expected_path.exists():
        return False
    docs = [d for d in _docs(case.expected_path.read_text()) if isinstance(d, Mapping)]
    return any(
        d.get("kind") == "ClusterClass"
        and classvars.named((d.get("spec") or {}).get("variables") or [], classvars.VARIABLE)
        for d in docs
    ) and any(str(d.get("kind")) in ct.SPEC_PATHS for d in docs)


CASES = [c for c in load_cases() if not c.exit and _with_tool_patch(c)]


def test_the_golden_clusterclass_cases_get_the_tools_patch() -> None:
    names = {c.name for c in CASES}
    classes = {c.name for c in load_cases() if c.name.startswith("capi-clusterclass")}
    assert classes - {c.name for c in load_cases() if c.exit} <= names
    assert {"capi-clusterclass-topology", "capi-two-clusters"} <= names


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("given", ["own", "default"])
def test_each_cluster_gets_its_own_env_file_in_every_combination(
    case: Case, given: str, gotemplate: Path, tmp_path: Path
) -> None:
    docs = _docs(case.expected_path.read_text())
    expect = _expectation(case)
    combinations = 0
    for klass in [d for d in docs if isinstance(d, Mapping) and d.get("kind") == "ClusterClass"]:
        definitions = [
            v for v in klass["spec"].get("variables") or [] if v["name"] == "proxyPostrender"
        ]
        if not definitions:
            continue
        default = definitions[0]["schema"]["openAPIV3Schema"]["default"]
        for name in CLUSTERS:
            value = _cluster_value(default, name) if given == "own" else None
            variables = _variables(name, value)
            if value is None:  # Cluster API defaults the value of a Cluster that sets none
                variables[classvars.VARIABLE] = {**default, "httpProxy": CLUSTERS[name]["proxy"]}
                variables[classvars.VARIABLE]["httpsProxy"] = CLUSTERS[name]["proxy"]
            render = go_renderer(gotemplate, tmp_path, variables)
            result = ct.check_clusterclass(klass, docs, expect, render, _check_spec(name))
            assert result.problems == [], (name, result.problems[:5])
            assert [n for n in result.not_modelled if "valueFrom" in n] == []
            combinations += result.combinations
    assert combinations > 0


def test_the_template_renders_without_the_variable_and_without_networks(
    gotemplate: Path, tmp_path: Path
) -> None:
    """Every map the template reads may be missing: Go's text/template then errors on a
    field of a nil value, which ``with`` guards; kubeadm's service CIDR stands in."""
    env = (("HTTP_PROXY", "http://p:1"), ("NO_PROXY", "a"), ("no_proxy", "a"))
    text = classvars.template(env, ENV_FILE)
    bare: list[dict[str, Any]] = [{}, {"builtin": {}}, {"builtin": {"cluster": {"name": "x"}}}]
    for variables in bare:
        out = go_renderer(gotemplate, tmp_path, variables)(text)
        entry = libyaml.load_data(out)[0]
        assert entry["content"] == "NO_PROXY='10.96.0.0/12'\nno_proxy='10.96.0.0/12'\n"
    value = {"httpProxy": "http://p:1", "noProxy": ["a", "10.1.0.0/16"]}
    network: dict[str, Any] = {"pods": ["10.1.0.0/16"], "serviceDomain": "x.local"}
    given: dict[str, Any] = {
        "proxyPostrender": value,
        "builtin": {"cluster": {"network": network}},
    }
    entry = libyaml.load_data(go_renderer(gotemplate, tmp_path, given)(text))[0]
    assert entry == {
        "path": ENV_FILE,
        "owner": "root:root",
        "permissions": "0600",
        "content": (
            "HTTP_PROXY='http://p:1'\n"
            "NO_PROXY='a,10.1.0.0/16,10.96.0.0/12,x.local,.x.local'\n"
            "no_proxy='a,10.1.0.0/16,10.96.0.0/12,x.local,.x.local'\n"
        ),
    }
    # a service domain Cluster API does not check: left out unless plain
    network["serviceDomain"] = "{{x}}.local"
    entry = libyaml.load_data(go_renderer(gotemplate, tmp_path, given)(text))[0]
    assert "x.local" not in entry["content"] and not _DELIMITER.search(entry["content"])


# --- the class does not depend on the Clusters in the stream -------------------------------


def _split(text: str) -> tuple[str, list[str]]:
    """The ClusterClass and templates of the topology case, and its Cluster documents."""
    parts = [p.strip("\n") for p in text.split("\n---\n")]
    clusters = [p for p in parts if "\nkind: Cluster\n" in "\n" + p]
    rest = [p for p in parts if p not in clusters]
    return "\n---\n".join(rest), clusters


def test_the_class_and_its_templates_do_not_depend_on_the_clusters_in_the_stream() -> None:
    shared, clusters = _split(TOPOLOGY.read_text())
    assert len(clusters) == 2
    outputs = []
    for count in (0, 1, 2):
        data = "\n---\n".join([shared, *clusters[:count]]) + "\n"
        out = _run(SHARED_PROFILE, data.encode())
        outputs.append(_split(out)[0])
    assert outputs[0] == outputs[1] == outputs[2]
    # and each Cluster gets its own networks in its value
    docs = _docs(_run(SHARED_PROFILE, TOPOLOGY.read_bytes()))
    values = {
        d["metadata"]["name"]: d["spec"]["topology"]["variables"][-1]["value"]
        for d in docs
        if d.get("kind") == "Cluster"
    }
    assert "10.244.0.0/16" in values["munich"]["noProxy"]
    assert "10.244.0.0/16" not in values["berlin"]["noProxy"]
    assert "192.168.0.0/16" in values["berlin"]["noProxy"]
    assert "api.munich.example" in values["munich"]["noProxy"]


# --- the schema ---------------------------------------------------------------------------


def test_the_default_validates_against_the_variables_own_schema() -> None:
    docs = _docs((GOLDEN / "capi-clusterclass-topology" / "expected.yaml").read_text())
    klass = next(d for d in docs if d["kind"] == "ClusterClass")
    definition = next(v for v in klass["spec"]["variables"] if v["name"] == classvars.VARIABLE)
    schema = definition["schema"]["openAPIV3Schema"]
    jsonschema.validate(schema["default"], schema)
    for cluster in (d for d in docs if d["kind"] == "Cluster"):
        value = cluster["spec"]["topology"]["variables"][-1]["value"]
        jsonschema.validate(value, schema)
    for bad in ("http://p:1/'", 'x"', "a b", "`id`", "{{x}}", "a\\b", "a\nb", "a\x7f"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"httpProxy": bad}, schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"noProxy": [bad]}, schema)
    # Cluster API refuses a value's fields its schema does not declare (it prunes and
    # fails on what pruning drops: cluster_variable_validation.go, validateUnknownFields)
    assert _unknown_fields({"httpProxy": "http://p:1", "other": "x"}, schema) == ["other"]
    assert _unknown_fields(schema["default"], schema) == []


def _unknown_fields(value: Any, schema: Mapping[str, Any], where: str = "") -> list[str]:
    """The fields of ``value`` that Cluster API's pruning would drop (no
    x-kubernetes-preserve-unknown-fields in the tool's schema)."""
    if not isinstance(value, Mapping):
        return []
    properties = schema.get("properties", {})
    found = []
    for key, item in value.items():
        if key not in properties:
            found.append(f"{where}{key}")
        else:
            found += _unknown_fields(item, properties[key], f"{where}{key}.")
    return found


# The fields of Cluster API's JSONSchemaProps (api/core/v1beta2/clusterclass_types.go at
# ae7ff047, the commit of ../shared/capi-crds): a ClusterClass variable's schema that uses
# any other key does not decode, and additionalProperties is a schema there, never a boolean.
CAPI_SCHEMA_KEYS = frozenset(
    [
        "description",
        "example",
        "type",
        "properties",
        "additionalProperties",
        "maxProperties",
        "minProperties",
        "required",
        "items",
        "maxItems",
        "minItems",
        "uniqueItems",
        "format",
        "maxLength",
        "minLength",
        "pattern",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "x-kubernetes-preserve-unknown-fields",
        "enum",
        "default",
        "x-kubernetes-validations",
        "x-metadata",
        "x-kubernetes-int-or-string",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
    ]
)


def _schema_problems(schema: Mapping[str, Any], where: str = "openAPIV3Schema") -> list[str]:
    """What Cluster API would refuse in a variable's schema: a key its JSONSchemaProps has
    not, additionalProperties that is no schema or stands beside properties
    (clusterclass_variable_validation.go)."""
    found = [f"{where}.{key}" for key in schema if key not in CAPI_SCHEMA_KEYS]
    extra = schema.get("additionalProperties")
    if extra is not None and (not isinstance(extra, Mapping) or "properties" in schema):
        found.append(f"{where}.additionalProperties")
    for key, sub in (schema.get("properties") or {}).items():
        found += _schema_problems(sub, f"{where}.properties.{key}")
    if isinstance(schema.get("items"), Mapping):
        found += _schema_problems(schema["items"], f"{where}.items")
    return found


def test_the_variable_s_schema_is_one_cluster_api_decodes_and_accepts() -> None:
    for case in ("capi-clusterclass-topology", "fleet-clusterclass", "capi-clusterclass"):
        docs = _docs((GOLDEN / case / "expected.yaml").read_text())
        klass = next(d for d in docs if d["kind"] == "ClusterClass")
        (definition,) = [v for v in klass["spec"]["variables"] if v["name"] == classvars.VARIABLE]
        assert _schema_problems(definition["schema"]["openAPIV3Schema"]) == []
    assert _schema_problems({"type": "object", "properties": {}, "additionalProperties": False})


def test_a_value_the_schema_refuses_is_refused_by_the_tool() -> None:
    from proxy_postrender.errors import InputError

    with pytest.raises(InputError, match="cannot go into the ClusterClass variable"):
        classvars.value_of((("HTTP_PROXY", "http://p:1/'x"),), "the class")
    with pytest.raises(InputError, match="cannot go into the ClusterClass variable"):
        classvars.value_of((("NO_PROXY", "a b"),), "the class")
    assert classvars.value_of((("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", "a,b")), "x") == {
        "httpsProxy": "http://p:1",
        "noProxy": ["a", "b"],
    }


# --- records: what is not the tool's is refused ------------------------------------------


def _error(data: str) -> str:
    proc = run_cli([str(SHARED_PROFILE)], data.encode())
    assert proc.returncode == 1, proc.stdout.decode()
    err = proc.stderr.decode()
    assert err.count("\n") == 1, err
    return err


def test_a_variable_or_patch_of_that_name_the_tool_did_not_record_is_refused() -> None:
    text = TOPOLOGY.read_text()
    variable = text.replace(
        "  - name: imageRepository\n    required", "  - name: proxyPostrender\n    required", 1
    )
    assert variable != text
    assert "spec.variables[0] is called 'proxyPostrender'" in _error(variable)
    patch = text.replace("  - name: workerFiles", "  - name: proxy-postrender", 1)
    assert "spec.patches[0] is called 'proxy-postrender'" in _error(patch)
    cluster = text.replace(
        "    - name: imageRepository\n      value", "    - name: proxyPostrender\n      value", 1
    )
    assert cluster != text
    assert "spec.topology.variables[0] is called 'proxyPostrender'" in _error(cluster)
    assert "Cluster fleet/berlin" in _error(cluster)


def test_a_recorded_patch_that_is_no_longer_last_is_refused() -> None:
    out = _run(SHARED_PROFILE, TOPOLOGY.read_bytes())
    docs = _docs(out)
    klass = next(d for d in docs if d["kind"] == "ClusterClass")
    assert klass["spec"]["patches"][-1]["name"] == classvars.PATCH
    end = out.index("\n---\n")  # the class is the first document; its patches come last
    moved = out[:end] + "\n  - name: later\n    definitions: []" + out[end:]
    assert "no longer the last one" in _error(moved)


def test_remove_takes_out_the_variable_the_patch_and_the_cluster_values() -> None:
    out = _run(SHARED_PROFILE, TOPOLOGY.read_bytes())
    proc = run_cli([str(SHARED_PROFILE), "--remove"], out.encode())
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode() == TOPOLOGY.read_text()


def _profile(tmp_path: Path, name: str, extra: str) -> Path:
    path = tmp_path / name
    path.write_text(
        SHARED_PROFILE.read_text().replace("proxy.corp.example", "proxy.b.example") + extra
    )
    return path


def test_a_changed_profile_gives_what_it_gives_the_input(tmp_path: Path) -> None:
    """Re-rendering the output with another profile replaces the variable's default, the
    patch and the Clusters' values: the same bytes as rendering the input with it. And
    secret mode (no variable) takes all of them out again."""
    first = _run(SHARED_PROFILE, TOPOLOGY.read_bytes())
    other = _profile(tmp_path, "other.yaml", "")
    assert _run(other, first.encode()) == _run(other, TOPOLOGY.read_bytes())
    assert "proxy.b.example" in _run(other, first.encode())
    secret = _profile(
        tmp_path, "secret.yaml", "  nodes:\n    credentials: secret\n    secretName: corp-proxy\n"
    )
    from_output, from_input = _run(secret, first.encode()), _run(secret, TOPOLOGY.read_bytes())
    assert from_output == from_input
    assert f"name: {classvars.VARIABLE}" not in from_input
    assert f"name: {classvars.PATCH}\n" not in from_input
