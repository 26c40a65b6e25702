"""Cluster API objects validate against JSON Schemas generated from the upstream CRDs.

The converter (``tests/capi/crd_schema.py``) is tested on a hand-written CRD;
the stored schemas are checked against the CRDs (or, without them, against the
hashes in ``SOURCE.md``); every golden case holding Cluster API objects of a
covered kind is validated, input and output.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender.objects import walk_objects
from proxy_postrender.yamltext import libyaml
from tests import validate as validate_script
from tests.capi import crd_schema
from tests.capi.validate import (
    assert_no_new_capi_errors,
    capi_errors,
    covered,
    is_capi,
    make_validator,
    stream_errors,
)
from tests.helpers import GOLDEN, ROOT

# --- (a) the conversion rules, on a small CRD -------------------------------------------

_CRD_TEXT = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.cluster.x-k8s.io}
spec:
  group: example.cluster.x-k8s.io
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: false
    schema: {openAPIV3Schema: {type: object}}
  - name: v1
    served: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        description: dropped
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [mode]
            properties:
              mode: {type: string, enum: [a, b], default: a}
              port:
                x-kubernetes-int-or-string: true
                anyOf: [{type: integer}, {type: string}]
              note: {type: string, nullable: true}
              plain: {type: string}
              free: {type: object, x-kubernetes-preserve-unknown-fields: true}
              empty: {type: object}
              labels: {type: object, additionalProperties: {type: string}}
              count: {type: integer, format: int32, minimum: 0, exclusiveMinimum: true}
              data: {type: string, format: byte}
              when: {type: string, format: date-time}
              tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
              args:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties: {name: {type: string}, value: {type: string}}
              files:
                type: array
                x-kubernetes-validations:
                - rule: self.all(x, self.exists_one(y, x.path == y.path))
                  message: unique paths
                items:
                  type: object
                  required: [path]
                  properties: {path: {type: string}}
              kind:
                type: string
                x-kubernetes-validations:
                - rule: "!(self in ['Ready','Gone'])"
                  message: reserved
              odd:
                type: string
                x-kubernetes-validations:
                - {rule: self.startsWith('x'), message: starts with x}
              inner:
                type: object
                x-kubernetes-embedded-resource: true
                properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}
          status:
            type: object
            properties: {ready: {type: boolean}}
"""


def _widget_schema() -> tuple[dict[str, Any], tuple[crd_schema.CelRule, ...]]:
    (generated,) = crd_schema.convert_crd(libyaml.load_data(_CRD_TEXT)[0], "widgets.yaml")
    assert generated.name == "widget-v1.json"  # the version that is not served gives none
    return generated.schema, generated.cel


def _errors(spec: dict[str, Any], *, mode: bool = True, **top: Any) -> list[str]:
    obj = {
        "apiVersion": "example.cluster.x-k8s.io/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {**({"mode": "a"} if mode else {}), **spec},
        **top,
    }
    schema, _ = _widget_schema()
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in make_validator(schema).iter_errors(obj)
    ]


def test_a_valid_widget_has_no_error() -> None:
    assert _errors({}) == []


def test_an_unknown_field_is_an_error_where_fields_are_listed() -> None:
    assert _errors({"plain": "x"}) == []
    assert any("'plian' was unexpected" in e for e in _errors({"plian": "x"}))
    assert _errors({"empty": {}}) == []
    assert _errors({"empty": {"x": 1}})  # no properties, no preserve: nothing is allowed


def test_preserve_unknown_fields_allows_any_field() -> None:
    assert _errors({"free": {"anything": [1, {"goes": True}]}}) == []
    assert _errors({"free": "not an object"})
    assert _errors({"inner": {"apiVersion": "v1", "kind": "X", "spec": {"y": 1}}}) == []


def test_int_or_string() -> None:
    assert _errors({"port": 8080}) == []
    assert _errors({"port": "http"}) == []
    assert _errors({"port": 1.5})
    assert _errors({"port": None})


def test_nullable_allows_null_and_only_there() -> None:
    assert _errors({"note": None}) == []
    assert _errors({"plain": None})


def test_enum_and_required() -> None:
    assert _errors({"mode": "b"}) == []
    assert _errors({"mode": "c"})
    schema, _ = _widget_schema()
    assert "mode" in schema["properties"]["spec"]["required"]
    assert any("'mode' is a required property" in e for e in _errors({}, mode=False))


def test_maps_lists_and_bounds() -> None:
    assert _errors({"labels": {"a": "b"}}) == []
    assert _errors({"labels": {"a": 1}})
    assert _errors({"tags": ["a", "b"]}) == []
    assert _errors({"tags": ["a", "a"]})  # list-type set
    assert _errors({"args": [{"name": "a"}, {"name": "b"}]}) == []
    assert _errors({"args": [{"name": "a"}, {"name": "a", "value": "x"}]})  # list-type map
    assert _errors({"count": 1}) == []
    assert _errors({"count": 0})  # exclusiveMinimum: true became a number
    assert _errors({"count": 2**31})  # int32


def test_formats_the_apiserver_checks() -> None:
    assert _errors({"data": "aGVsbG8=", "when": "2025-01-02T03:04:05Z"}) == []
    assert _errors({"data": "not base64!"})
    assert _errors({"when": "yesterday"})
    assert _errors({"when": "2025-13-02T03:04:05Z"})


def test_cel_rules_of_known_shapes_are_checked_and_the_others_listed() -> None:
    assert _errors({"files": [{"path": "/a"}, {"path": "/b"}], "kind": "Fine"}) == []
    assert _errors({"files": [{"path": "/a"}, {"path": "/a"}]})
    assert _errors({"kind": "Ready"})
    assert _errors({"odd": "y"}) == []  # not evaluated
    _, cel = _widget_schema()
    assert {(c.path, c.checked) for c in cel} == {
        (".spec.files", True),
        (".spec.kind", True),
        (".spec.odd", False),
    }


def test_root_metadata_is_object_meta_and_type_meta_is_constant() -> None:
    assert _errors({}, metadata={"name": "w", "labels": {"app.kubernetes.io/name": "x"}}) == []
    assert _errors({}, metadata={"name": "W_1"})  # not a DNS subdomain
    assert _errors({}, metadata={"namespace": "default"})  # no name
    assert _errors({}, metadata={"name": "w", "labels": {"a": "b c"}})
    assert _errors({}, metadata={"name": "w", "nmae": "x"})
    assert _errors({}, apiVersion="example.cluster.x-k8s.io/v1alpha1")
    assert _errors({}, kind="Gadget")


def test_status_is_not_checked_when_the_crd_has_a_status_subresource() -> None:
    assert _errors({}, status={"ready": "no", "other": 1}) == []
    crd = libyaml.load_data(_CRD_TEXT)[0]
    del crd["spec"]["versions"][1]["subresources"]
    (generated,) = crd_schema.convert_crd(crd, "widgets.yaml")
    assert generated.schema["properties"]["status"]["properties"]["ready"] == {"type": "boolean"}


def test_a_keyword_the_converter_does_not_know_stops_it() -> None:
    with pytest.raises(ValueError, match=r"\.spec: keyword\(s\) not handled: x-new"):
        crd_schema.convert_node({"type": "object", "properties": {"spec": {"x-new": 1}}})


# --- (b) the stored schemas are what the converter gives ----------------------------------


def test_stored_schemas_are_what_the_converter_gives() -> None:
    """Where ``../shared/capi-crds`` exists (the development machines), regenerate every
    file of ``tests/capi/schemas`` from it and compare byte for byte (``SOURCE.md``, with
    the commit and the CRDs' sha256, included). Where it does not (a fresh clone, CI),
    check instead that ``SOURCE.md`` records a commit and six source CRDs, lists exactly
    the stored schema files, and gives each one's sha256 and size correctly."""
    if crd_schema.DEFAULT_CRD_DIR.is_dir():
        generated = crd_schema.generate(crd_schema.DEFAULT_CRD_DIR)
        stored = crd_schema.stored()
        assert sorted(stored) == sorted(generated)
        for name, text in generated.items():
            assert stored[name] == text, f"{name}: run python -m tests.capi.crd_schema --write"
        return
    source = (crd_schema.SCHEMAS / crd_schema.SOURCE_NAME).read_text(encoding="utf-8")
    assert re.search(r"^- Commit: [0-9a-f]{40}$", source, re.M)
    rows = re.findall(r"^\| (\S+\.json) \| (\d+) \| ([0-9a-f]{64}) \|$", source, re.M)
    assert len(re.findall(r"^\| \S+\.yaml \| [0-9a-f]{64} \|$", source, re.M)) == 6
    files = {p.name: p.read_bytes() for p in crd_schema.SCHEMAS.glob("*.json")}
    assert sorted(name for name, _, _ in rows) == sorted(files)
    for name, size, digest in rows:
        assert (len(files[name]), crd_schema.sha256(files[name])) == (int(size), digest), name


def test_eks_schemas_record_their_source_and_hashes() -> None:
    """CAPA's EKS bootstrap CRDs (not kept in the repository: converted from the pinned
    commit, proxy_postrender/dialects.py): ``schemas/eks/SOURCE.md`` records the commit
    and the four source CRDs, lists exactly the stored schemas, each with its size and
    sha256."""
    source = (crd_schema.EKS_SCHEMAS / crd_schema.SOURCE_NAME).read_text(encoding="utf-8")
    assert "- Repository: kubernetes-sigs/cluster-api-provider-aws" in source
    assert "- Commit: 2cf09d78547d32975570a4b9ba5496bdfe26abeb" in source
    assert len(re.findall(r"^\| \S+\.yaml \| [0-9a-f]{64} \|$", source, re.M)) == 4
    rows = re.findall(r"^\| (\S+\.json) \| (\d+) \| ([0-9a-f]{64}) \|$", source, re.M)
    files = {p.name: p.read_bytes() for p in crd_schema.EKS_SCHEMAS.glob("*.json")}
    assert sorted(name for name, _, _ in rows) == sorted(files)
    for name, size, digest in rows:
        assert (len(files[name]), crd_schema.sha256(files[name])) == (int(size), digest), name


def test_every_kind_and_served_version_has_a_schema() -> None:
    kinds = ["Cluster", "ClusterClass", "KubeadmConfig", "KubeadmConfigTemplate"]
    kinds += ["KubeadmControlPlane", "KubeadmControlPlaneTemplate"]
    kinds += ["MachineDeployment", "MachineSet", "MachinePool"]
    eks = ["EKSConfig", "EKSConfigTemplate", "NodeadmConfig", "NodeadmConfigTemplate"]
    microk8s = ["MicroK8sConfig", "MicroK8sConfigTemplate", "MicroK8sControlPlane"]
    k0s = ["K0sWorkerConfig", "K0sWorkerConfigTemplate", "K0sControllerConfig"]
    k0s += ["K0sControlPlane", "K0sControlPlaneTemplate"]
    kinds += k0s
    kinds += ["RKE2Config", "RKE2ConfigTemplate", "RKE2ControlPlane", "RKE2ControlPlaneTemplate"]
    kinds += ["KThreesConfig", "KThreesConfigTemplate", "KThreesControlPlane"]
    # CAPA serves v1beta2 only, and cluster-api-k3s its KThreesControlPlaneTemplate
    v1beta2_only = [*eks, "KThreesControlPlaneTemplate"]
    assert {(v.rpartition("/")[2], k) for v, k in covered()} == {
        (version, kind) for kind in kinds for version in ("v1beta1", "v1beta2")
    } | {("v1beta2", kind) for kind in v1beta2_only} | {
        (version, kind)
        for kind in ("TalosConfig", "TalosConfigTemplate")
        for version in ("v1alpha3", "v1beta1")
    } | {("v1alpha3", "TalosControlPlane")} | {  # CACPPT serves v1alpha3 only
        ("v1beta1", kind)
        for kind in microk8s  # MicroK8s serves v1beta1 only
    }


# each provider's converted CRDs: (directory, repository, commit, how many source CRDs),
# the commits proxy_postrender/dialects.py pins
PROVIDER_SCHEMAS = [
    (
        crd_schema.CORE_SCHEMAS,
        "kubernetes-sigs/cluster-api",
        "ae7ff047db499ac3858ade268ba38db8c9f128bb",
        3,
    ),
    (
        crd_schema.TALOS_SCHEMAS,
        "siderolabs/cluster-api-bootstrap-provider-talos",
        "e21a01e06ee321cd1ae9b57ba6a45493eb492396",
        2,
    ),
    (
        crd_schema.TALOS_CP_SCHEMAS,
        "siderolabs/cluster-api-control-plane-provider-talos",
        "97b33e78ff1091bd143db6c428b8ed53ec3e0931",
        1,
    ),
    (
        crd_schema.MICROK8S_SCHEMAS[0],
        "canonical/cluster-api-bootstrap-provider-microk8s",
        "71682d3c068a8bd62df989a2b085ab8402b6884e",
        2,
    ),
    (
        crd_schema.MICROK8S_SCHEMAS[1],
        "canonical/cluster-api-control-plane-provider-microk8s",
        "ade5fcbf701ef21373942e3fa28708c80ec1fe8f",
        1,
    ),
    (
        crd_schema.K0SMOTRON_SCHEMAS,
        "k0sproject/k0smotron",
        "3897bbe645698acbe9974449bb771e949dedb77e",
        5,
    ),
    (
        crd_schema.RKE2_SCHEMAS,
        "rancher/cluster-api-provider-rke2",
        "c8a3286ad22366f17faaab9c8fefb7eb80c52221",
        4,
    ),
    (
        crd_schema.K3S_SCHEMAS,
        "k3s-io/cluster-api-k3s",
        "7ed944f292e20aae69b3f4ae63497ab77144fff3",
        4,
    ),
]


@pytest.mark.parametrize(
    ("directory", "repo", "commit", "crds"),
    PROVIDER_SCHEMAS,
    ids=[directory.name for directory, _, _, _ in PROVIDER_SCHEMAS],
)
def test_provider_schemas_record_their_source_and_hashes(
    directory: Path, repo: str, commit: str, crds: int
) -> None:
    """Each provider's converted CRDs: SOURCE.md records the commit and the source CRDs,
    and lists exactly the stored schemas, each with its size and sha256."""
    source = (directory / crd_schema.SOURCE_NAME).read_text(encoding="utf-8")
    assert f"- Repository: {repo}" in source
    assert f"- Commit: {commit}" in source
    assert len(re.findall(r"^\| \S+\.yaml \| [0-9a-f]{64} \|$", source, re.M)) == crds
    rows = re.findall(r"^\| (\S+\.json) \| (\d+) \| ([0-9a-f]{64}) \|$", source, re.M)
    files = {p.name: p.read_bytes() for p in directory.glob("*.json")}
    assert rows and sorted(name for name, _, _ in rows) == sorted(files)
    for name, size, digest in rows:
        assert (len(files[name]), crd_schema.sha256(files[name])) == (int(size), digest), name


# --- (c) golden cases ----------------------------------------------------------------------

# Golden inputs that are not valid against the real CRDs, and why. The tool must not
# add errors to any input (see test_golden_output_adds_no_schema_error) and the strict
# xfail flags a fixed one.
_NO_INFRA_REF = "its MachineDeployment has no spec.template.spec.infrastructureRef (required)"
KNOWN_INVALID_INPUTS: dict[str, str] = {
    "capi-namespace-less-machinedeployment": _NO_INFRA_REF,
    "capi-secret-no-final-newline": _NO_INFRA_REF,
    "capi-two-clusters": _NO_INFRA_REF,
}
# Outputs invalid because their input is (an input the tool repairs, e.g. by filling an
# empty list, would be left out here).
KNOWN_INVALID_OUTPUTS: dict[str, str] = dict(KNOWN_INVALID_INPUTS)


def _covered_objects(path: Path) -> int:
    text = path.read_text(encoding="utf-8-sig")
    found = 0
    for doc in libyaml.load_data(text):
        for _, obj in walk_objects(doc):
            if is_capi(obj) and (obj.get("apiVersion"), obj.get("kind")) in covered():
                found += 1
    return found


CAPI_CASES = sorted(
    p.parent.name for p in GOLDEN.glob("*/expected.yaml") if _covered_objects(p) > 0
)


def _params(known: dict[str, str]) -> list[Any]:
    return [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=known[name]))
        if name in known
        else name
        for name in CAPI_CASES
    ]


def test_the_golden_capi_cases_are_found() -> None:
    assert {"capi-v1beta1", "capi-v1beta2", "capi-clusterclass"} <= set(CAPI_CASES)


@pytest.mark.parametrize("case", _params(KNOWN_INVALID_OUTPUTS))
def test_golden_output_validates(case: str) -> None:
    checked, errors = stream_errors((GOLDEN / case / "expected.yaml").read_text("utf-8-sig"))
    assert errors == [] and checked > 0, "\n".join(errors)


@pytest.mark.parametrize("case", _params(KNOWN_INVALID_INPUTS))
def test_golden_input_validates(case: str) -> None:
    checked, errors = stream_errors((GOLDEN / case / "input.yaml").read_text("utf-8-sig"))
    assert errors == [] and checked > 0, "\n".join(errors)


@pytest.mark.parametrize("case", CAPI_CASES)
def test_golden_output_adds_no_schema_error(case: str) -> None:
    assert_no_new_capi_errors(
        (GOLDEN / case / "input.yaml").read_bytes(), (GOLDEN / case / "expected.yaml").read_bytes()
    )


def test_known_invalid_cases_exist() -> None:
    assert set(KNOWN_INVALID_INPUTS) <= set(CAPI_CASES)


# --- (d) the validator catches a wrong output ---------------------------------------------


def _template() -> dict[str, Any]:
    text = (GOLDEN / "capi-empty-lists-no-final-newline" / "expected.yaml").read_text()
    docs = [d for d in libyaml.load_data(text) if d.get("apiVersion", "").endswith("/v1beta2")]
    assert capi_errors(docs[0]) == []
    assert docs[0]["spec"]["template"]["spec"]["files"]
    return copy.deepcopy(docs[0])


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda s: s["files"][0].pop("path"), ".spec.template.spec.files[0]: 'path' is"),
        (lambda s: s.__setitem__("preKubeadmCommands", "echo"), ".preKubeadmCommands: 'echo'"),
        (lambda s: s["files"][0].__setitem__("contents", "x"), "('contents' was unexpected)"),
        (lambda s: s.__setitem__("files", []), ".spec.template.spec.files: [] should be non-"),
        (lambda s: s["files"][0].__setitem__("owner", None), ".files[0].owner: None is not"),
    ],
    ids=["file-without-path", "commands-as-string", "unknown-field", "empty-files", "null"],
)
def test_a_wrong_output_is_caught(change: Any, where: str) -> None:
    obj = _template()
    change(obj["spec"]["template"]["spec"])
    errors = capi_errors(obj)
    assert any(where in e for e in errors), errors


def test_errors_the_tool_adds_are_told_from_those_the_input_had() -> None:
    good = (GOLDEN / "capi-v1beta1" / "expected.yaml").read_text()
    assert_no_new_capi_errors(good, good)
    broken = good.replace("path: /etc/systemd/system/containerd.service.d/", "paht: /etc/", 1)
    assert broken != good
    with pytest.raises(AssertionError, match="errors the tool added"):
        assert_no_new_capi_errors(good, broken)


def test_a_kind_without_a_schema_is_a_lookup_error() -> None:
    with pytest.raises(LookupError):
        capi_errors({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine"})
    with pytest.raises(LookupError):
        capi_errors({"apiVersion": "cluster.x-k8s.io/v1alpha4", "kind": "Cluster"})


# --- make validate (tests/validate.py) -----------------------------------------------------


def _broken_stream(tmp_path: Path) -> Path:
    text = (GOLDEN / "capi-empty-lists-no-final-newline" / "expected.yaml").read_text()
    path = tmp_path / "out.yaml"
    path.write_text(text.replace("path: /etc/systemd", "paht: /etc/systemd", 1))
    return path


def test_validate_script_checks_capi_objects_without_kubeconform(tmp_path: Path) -> None:
    good = GOLDEN / "capi-clusterclass" / "expected.yaml"
    env_path = {"PATH": str(tmp_path)}  # no kubeconform here
    run = [sys.executable, "-m", "tests.validate"]
    ok = subprocess.run([*run, str(good)], capture_output=True, env=env_path, cwd=ROOT)
    assert ok.returncode == 0, ok.stdout
    bad = subprocess.run(
        [*run, str(_broken_stream(tmp_path))], capture_output=True, env=env_path, cwd=ROOT
    )
    assert bad.returncode == 1
    assert b"'paht' was unexpected" in bad.stdout


def test_validate_script_skips_capi_kinds_in_kubeconform_and_checks_them_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[list[str]] = []

    def call(command: list[str]) -> int:
        calls.append(command)
        return 0

    monkeypatch.setattr("tests.validate.shutil.which", lambda name: f"/bin/{name}")
    monkeypatch.setattr("tests.validate.subprocess.call", call)
    path = _broken_stream(tmp_path)
    assert validate_script.main([str(path)]) == 1
    (command,) = calls
    assert command[0] == "kubeconform" and command[-1] == str(path)
    assert "-strict" in command and "-ignore-missing-schemas" in command
    skipped = command[command.index("-skip") + 1].split(",")
    assert "KubeadmConfigTemplate" in skipped and "Deployment" not in skipped
    assert "'paht' was unexpected" in capsys.readouterr().out
