"""The bootstrap dialects (proxy_postrender/dialects.py): one row per provider, read by all.

- the rows agree with the CRDs: each kind's spec path, file list and command list are
  fields of the real schemas (tests/capi/schemas, and schemas/eks for CAPA's EKS kinds),
  and the levels a row says are required are exactly those the schemas require;
- everything that used to spell out kubeadm's kinds and list names now reads the rows:
  the node targets, the ClusterClass list pointers, the class variable's patch paths,
  the template kinds the discovery keeps; kubeadm's entries are what they were;
- the EKS rows: EKSConfig(Template) with ``files`` + ``preBootstrapCommands``,
  NodeadmConfig(Template) with ``files`` + ``preNodeadmCommands``, Linux only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender import dialects, targets
from proxy_postrender.nodes import classvars, clusterclass
from proxy_postrender.noproxy import discovery
from tests.capi.crd_schema import SCHEMA_DIRS
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

ROWS = [(dialect, row) for dialect in dialects.DIALECTS for row in dialect.kinds]


def _schemas(kind: str) -> dict[str, dict[str, Any]]:
    """version -> the stored JSON Schema of ``kind``."""
    found = {}
    for directory in SCHEMA_DIRS:
        for path in directory.glob(f"{kind.lower()}-*.json"):
            found[Path(path).stem.rpartition("-")[2]] = json.loads(path.read_text())
    return found


@pytest.mark.parametrize(("dialect", "row"), ROWS, ids=[row.kind for _, row in ROWS])
def test_each_row_agrees_with_the_crd(
    dialect: dialects.Dialect, row: dialects.BootstrapKind
) -> None:
    schemas = _schemas(row.kind)
    assert schemas, f"no schema for {row.kind}"
    for version, schema in schemas.items():
        assert schema["properties"]["apiVersion"]["const"] == f"{row.group}/{version}"
        node, required = schema, set()
        for depth, step in enumerate(row.spec_path, 1):
            if step in node.get("required", []):
                required.add(row.spec_path[:depth])
            node = node["properties"][step]
        for key in dialect.list_keys:
            assert node["properties"][key]["type"] == "array", (version, key)
        assert row.requires(f"{row.group}/{version}") == required, version


def test_kubeadm_targets_are_what_they_were() -> None:
    """The literal entries targets.py had before the rows (byte-identical goldens rest on it)."""
    kubeadm = [
        (t.group, t.kind, t.paths) for t in targets.BUILT_IN_TARGETS if t.kind.startswith("Kubeadm")
    ]
    assert kubeadm == [
        ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane", (("spec", "kubeadmConfigSpec"),)),
        (
            "controlplane.cluster.x-k8s.io",
            "KubeadmControlPlaneTemplate",
            (("spec", "template", "spec", "kubeadmConfigSpec"),),
        ),
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate", (("spec", "template", "spec"),)),
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfig", (("spec",),)),
    ]


def test_every_node_target_is_a_row_and_every_row_a_node_target() -> None:
    node_targets = {
        (t.group, t.kind, t.paths) for t in targets.BUILT_IN.of_planner(targets.KUBEADM)
    }
    assert node_targets == {(row.group, row.kind, (row.spec_path,)) for _, row in ROWS}


def test_clusterclass_pointers_and_class_patch_paths_read_the_rows() -> None:
    assert clusterclass.LIST_POINTERS == {
        "KubeadmControlPlaneTemplate": {
            "/spec/template/spec/kubeadmConfigSpec/files": "files",
            "/spec/template/spec/kubeadmConfigSpec/preKubeadmCommands": "commands",
        },
        "KubeadmConfigTemplate": {
            "/spec/template/spec/files": "files",
            "/spec/template/spec/preKubeadmCommands": "commands",
        },
        "EKSConfigTemplate": {
            "/spec/template/spec/files": "files",
            "/spec/template/spec/preBootstrapCommands": "commands",
        },
        "NodeadmConfigTemplate": {
            "/spec/template/spec/files": "files",
            "/spec/template/spec/preNodeadmCommands": "commands",
        },
    }
    assert classvars._PATHS == {
        "KubeadmControlPlaneTemplate": "/spec/template/spec/kubeadmConfigSpec/files/-",
        "KubeadmConfigTemplate": "/spec/template/spec/files/-",
        "EKSConfigTemplate": "/spec/template/spec/files/-",
        "NodeadmConfigTemplate": "/spec/template/spec/files/-",
    }
    assert set(clusterclass.LIST_POINTERS) == discovery.TEMPLATE_KINDS
    assert discovery.TEMPLATE_KINDS <= discovery.DISCOVERY_KINDS


def test_the_eks_rows() -> None:
    eks = {row.kind: (d.files_key, d.commands_key, d.os_rule) for d, row in ROWS}
    assert (
        eks["EKSConfig"] == eks["EKSConfigTemplate"] == ("files", "preBootstrapCommands", "linux")
    )
    assert (
        eks["NodeadmConfig"]
        == eks["NodeadmConfigTemplate"]
        == (
            "files",
            "preNodeadmCommands",
            "linux",
        )
    )
    for dialect in (dialects.EKS, dialects.EKS_NODEADM):
        assert any("aws-node" in note and "kube-proxy" in note for note in dialect.notes)
        assert dialect.source.endswith("@2cf09d78547d32975570a4b9ba5496bdfe26abeb")


def test_kinds_are_unique_across_rows() -> None:
    keys = [(row.group, row.kind) for _, row in ROWS]
    assert len(keys) == len(set(keys)) == len(dialects.BY_KIND)


def test_report_says_the_eks_add_ons_are_not_in_the_render() -> None:
    """--report notes, on each EKS object it configures, that aws-node and kube-proxy are
    EKS add-ons outside the render; a kubeadm stream gets no such note."""
    eks = (GOLDEN / "capi-eks" / "input.yaml").read_bytes()
    proc = run_cli([str(SHARED_PROFILE), "--report"], eks)
    assert proc.returncode == 0, proc.stderr
    report = proc.stderr.decode()
    assert "preBootstrapCommands: 8 commands in front" in report
    assert report.count("note: EKS add-ons (aws-node, kube-proxy)") == 2  # template and config
    kubeadm = (GOLDEN / "capi-v1beta2" / "input.yaml").read_bytes()
    proc = run_cli([str(SHARED_PROFILE), "--report"], kubeadm)
    assert proc.returncode == 0
    assert b"aws-node" not in proc.stderr
    assert b"preKubeadmCommands: 8 commands in front" in proc.stderr


ENV_ROWS = [(d, row) for d, row in ROWS if row.env_lists]


def test_the_env_lists_are_the_static_pods_extra_envs_of_the_control_plane_kinds() -> None:
    kinds = {row.kind for _, row in ENV_ROWS}
    assert kinds == {"KubeadmControlPlane", "KubeadmControlPlaneTemplate"}
    for dialect, _ in ENV_ROWS:
        assert dialects.ENV_LIST in dialect.writers


@pytest.mark.parametrize(("dialect", "row"), ENV_ROWS, ids=[row.kind for _, row in ENV_ROWS])
def test_each_env_list_is_a_name_value_list_of_the_crd(
    dialect: dialects.Dialect, row: dialects.BootstrapKind
) -> None:
    for version, schema in _schemas(row.kind).items():
        spec = schema
        for step in row.spec_path:
            spec = spec["properties"][step]
        for place in row.env_lists:
            node = spec
            for step in place:
                assert step not in node.get("required", []), (version, place)
                node = node["properties"][step]
            assert node["type"] == "array", (version, place)
            assert node["items"]["required"] == ["name"], (version, place)
            assert node["items"]["properties"]["value"]["type"] == "string"
            # v1beta2: never an empty list
            assert node.get("minItems") == (1 if version == "v1beta2" else None), version
