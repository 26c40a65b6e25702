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
from ruamel.yaml import YAML

from proxy_postrender import dialects, targets
from proxy_postrender.nodes import classvars, clusterclass
from proxy_postrender.nodes.kubeadm import is_tool_command
from proxy_postrender.noproxy import discovery
from proxy_postrender.yamltext import libyaml
from tests import capi_topology as ct
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
        node, required, unmakeable = schema, set(), set()
        for depth, step in enumerate(row.spec_path, 1):
            if step in node.get("required", []):
                required.add(row.spec_path[:depth])
            node = node["properties"][step]
            # a level that requires more than the next level on the way: made up, the
            # API server would refuse it (a row may say so; kubeadm's rows predate this)
            if set(node.get("required", [])) - set(row.spec_path[depth : depth + 1]):
                unmakeable.add(row.spec_path[:depth])
        if dialect.patches_key:  # a config patch: a list of strings, and the version field
            patches = node["properties"][dialect.patches_key]
            assert patches == {"type": "array", "items": {"type": "string"}}, version
            assert node["properties"][dialect.version_key]["type"] == "string", version
        assert bool(dialect.patches_key) == (dialects.CONFIG_PATCH in dialect.writers)
        if dialects.FILE_LIST in dialect.writers:
            assert dialect.files_key and dialect.commands_key
        # the lists a row names (written, or read for other owners of the proxy settings)
        for key in (k for k in dialect.at(f"{row.group}/{version}").list_keys if k):
            assert node["properties"][key]["type"] == "array", (version, key)
        for name, _ in dialect.fields:
            assert node["properties"][name]["type"] == "string", (version, name)
        declared = row.requires(f"{row.group}/{version}")
        assert required <= declared <= required | unmakeable, version
        if dialect.env_files:  # the rows of issue 29's second round say every such level
            assert declared == required | unmakeable, version
        for step in dialect.format_path[:-1]:
            node = node["properties"][step]
        if dialect.formats:
            assert node["properties"][dialect.format_path[-1]]["enum"] == list(dialect.formats)
        else:
            assert dialect.format_path[-1] not in node["properties"], version


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
        "RKE2ControlPlaneTemplate": {
            "/spec/template/spec/files": "files",
            "/spec/template/spec/preRKE2Commands": "commands",
        },
        "RKE2ConfigTemplate": {
            "/spec/template/spec/files": "files",
            "/spec/template/spec/preRKE2Commands": "commands",
        },
        "KThreesControlPlaneTemplate": {
            "/spec/template/spec/kthreesConfigSpec/files": "files",
            "/spec/template/spec/kthreesConfigSpec/preK3sCommands": "commands",
        },
        "KThreesConfigTemplate": {
            "/spec/template/spec/files": "files",
            "/spec/template/spec/preK3sCommands": "commands",
        },
    }
    assert classvars._PATHS == {
        "KubeadmControlPlaneTemplate": "/spec/template/spec/kubeadmConfigSpec/files/-",
        "KubeadmConfigTemplate": "/spec/template/spec/files/-",
        "EKSConfigTemplate": "/spec/template/spec/files/-",
        "NodeadmConfigTemplate": "/spec/template/spec/files/-",
        "RKE2ControlPlaneTemplate": "/spec/template/spec/files/-",
        "RKE2ConfigTemplate": "/spec/template/spec/files/-",
        "KThreesControlPlaneTemplate": "/spec/template/spec/kthreesConfigSpec/files/-",
        "KThreesConfigTemplate": "/spec/template/spec/files/-",
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


# --- RKE2 and K3s -----------------------------------------------------------------------


def _docs(text: str) -> list[Any]:
    return [d for d in libyaml.load_data(text) if isinstance(d, dict)]


def _spec(doc: dict[str, Any]) -> dict[str, Any]:
    found = dialects.of_kind(doc["apiVersion"].partition("/")[0], doc["kind"])
    assert found is not None
    node: Any = doc
    for step in found[1].spec_path:
        node = node[step]
    return dict(node)


def test_the_rke2_and_k3s_rows() -> None:
    """RKE2: the control-plane kinds write /etc/default/rke2-server, the bootstrap kinds
    /etc/default/rke2-agent (what RKE2's units read), with inline values too; format at
    agentConfig.format. K3s: /etc/default/k3s(-agent) in secret mode only (its installer
    writes its unit env file from the exports); no format. Both are Linux only and say
    in --report that the distribution adds the cluster ranges to its own NO_PROXY."""
    paths = {row.kind: d.env_files[row.level] for d, row in ROWS if d.env_files}
    assert paths == {
        "RKE2ControlPlane": "/etc/default/rke2-server",
        "RKE2ControlPlaneTemplate": "/etc/default/rke2-server",
        "RKE2ConfigTemplate": "/etc/default/rke2-agent",
        "RKE2Config": "/etc/default/rke2-agent",
        "KThreesControlPlane": "/etc/default/k3s",
        "KThreesControlPlaneTemplate": "/etc/default/k3s",
        "KThreesConfigTemplate": "/etc/default/k3s-agent",
        "KThreesConfig": "/etc/default/k3s-agent",
    }
    assert dialects.RKE2.env_file_inline and not dialects.K3S.env_file_inline
    assert dialects.RKE2.format_path == ("agentConfig", "format")
    for dialect in (dialects.RKE2, dialects.K3S):
        assert dialect.os_rule == dialects.OS_LINUX and dialect.restart == ""
        assert any(
            "NO_PROXY" in note and "pod and service ranges" in note for note in dialect.notes
        )


def test_rke2_nodes_get_their_env_file_and_exports_and_no_containerd_restart() -> None:
    """What RKE2 and K3s nodes run first: the exports (inline) or the sourced env file
    (secret mode), never kubeadm's daemon-reload and containerd restart (containerd is
    not installed yet when the provider's commands run)."""
    for case, server, agent in (
        ("capi-rke2", 6, 6),
        ("capi-rke2-secret", 1, 1),
        ("capi-k3s", 6, 6),
        ("capi-k3s-secret", 1, 1),
    ):
        docs = _docs((GOLDEN / case / "expected.yaml").read_text())
        for doc in docs:
            if dialects.of_kind(doc["apiVersion"].partition("/")[0], doc["kind"]) is None:
                continue
            spec = _spec(doc)
            key = "preRKE2Commands" if "rke2" in case else "preK3sCommands"
            commands = spec[key]
            expected = server if "ControlPlane" in doc["kind"] else agent
            assert commands[0].startswith(("export HTTP_PROXY=", "set -a && . /etc/default/"))
            assert len([c for c in commands if is_tool_command(c)]) == expected, (case, doc)
            assert not any("systemctl" in c for c in commands), (case, doc)


def test_an_rke2_format_the_tool_cannot_write_for_is_refused() -> None:
    text = (GOLDEN / "capi-rke2" / "input.yaml").read_text()
    bad = text.replace("format: ignition", "format: bottlerocket")
    proc = run_cli([str(SHARED_PROFILE)], bad.encode())
    assert proc.returncode == 1
    assert b"spec.template.spec.agentConfig.format is 'bottlerocket'" in proc.stderr


def test_the_rke2_class_patch_writes_the_file_its_templates_source() -> None:
    """An RKE2 ClusterClass: the class's own patch appends to each template's files the
    env file at that template's row path (rke2-server for the control plane, rke2-agent
    for the workers), which the template's command sources and its value-free drop-in
    names; the template has a files list for the patch to append to."""
    docs = _docs((GOLDEN / "capi-rke2-clusterclass" / "expected.yaml").read_text())
    klass = next(d for d in docs if d["kind"] == "ClusterClass")
    patch = next(p for p in klass["spec"]["patches"] if p["name"] == classvars.PATCH)
    written = {}
    for definition in patch["definitions"]:
        (json_patch,) = definition["jsonPatches"]
        rendered = ct.render_template(json_patch["valueFrom"]["template"])
        entry = YAML(typ="safe", pure=True).load(rendered)
        assert entry["permissions"] == "0600" and "HTTP_PROXY=" in entry["content"]
        written[definition["selector"]["kind"]] = (json_patch["path"], entry["path"])
    assert written == {
        "RKE2ControlPlaneTemplate": ("/spec/template/spec/files/-", "/etc/default/rke2-server"),
        "RKE2ConfigTemplate": ("/spec/template/spec/files/-", "/etc/default/rke2-agent"),
    }
    for doc in docs:
        if doc["kind"] in written:
            spec = _spec(doc)
            path = written[doc["kind"]][1]
            assert spec["preRKE2Commands"][0] == f"set -a && . {path} && set +a"
            (dropin,) = spec["files"]
            assert dropin["content"] == f"[Service]\nEnvironmentFile={path}\n"
            assert "PROXY" not in str(spec)  # no cluster's value in a shared template


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


def test_noproxy_explain_says_what_rke2_adds_to_its_own_no_proxy() -> None:
    stream = GOLDEN / "capi-rke2" / "input.yaml"
    proc = run_cli(["noproxy", str(SHARED_PROFILE), "--explain", "--stream", str(stream)])
    assert proc.returncode == 0, proc.stderr
    cluster = proc.stdout.decode().split("# NO_PROXY for Cluster ")[1]
    assert "note: RKE2 adds the cluster's pod and service ranges" in cluster
    workloads = proc.stdout.decode().split("# NO_PROXY for Cluster ")[0]
    assert "RKE2 adds" not in workloads
