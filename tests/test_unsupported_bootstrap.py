"""Nothing is skipped in silence (issue 29, item 4): a bootstrap ``format`` the tool
cannot write for is refused; a bootstrap or control-plane kind no row of the target
table covers is a ``nodes/unsupported-bootstrap`` warning (an error with --strict);
``noproxy`` and ``--report`` say when the tool configures none of a cluster's nodes."""

from __future__ import annotations

import json

import pytest

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import formats, uncovered
from proxy_postrender.noproxy.bootstraps import Bootstraps
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from proxy_postrender.request import Request
from proxy_postrender.result import CODES
from proxy_postrender.structs import replace
from proxy_postrender.targets import BUILT_IN, KUBEADM
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN, SHARED_PROFILE, resource_list, run_cli

REQUEST = to_request(loader.load(str(SHARED_PROFILE), environ={}))
CK8S = (GOLDEN / "capi-unsupported-ck8s" / "input.yaml").read_text()
CK8S_CLASS = (GOLDEN / "capi-unsupported-clusterclass" / "input.yaml").read_text()
TALOS = (GOLDEN / "capi-unsupported-talos" / "input.yaml").read_text()
CODE = uncovered.UNSUPPORTED_CODE


def _findings(text: str, request: Request = REQUEST) -> list[str]:
    return [str(f) for f in engine.process(text, request).findings if f.code == CODE]


# --- format ---------------------------------------------------------------------------

_SPECS = {
    "KubeadmControlPlane": ("spec", "kubeadmConfigSpec"),
    "KubeadmControlPlaneTemplate": ("spec", "template", "spec", "kubeadmConfigSpec"),
    "KubeadmConfigTemplate": ("spec", "template", "spec"),
    "KubeadmConfig": ("spec",),
}


def _kubeadm(kind: str, version: str, fmt: str | None) -> str:
    group = "controlplane" if kind.startswith("KubeadmControlPlane") else "bootstrap"
    spec: dict[str, object] = {"preKubeadmCommands": ["echo hi"]}
    if fmt is not None:
        spec["format"] = fmt
    value: object = spec
    for step in reversed(_SPECS[kind]):
        value = {step: value}
    assert isinstance(value, dict)
    obj = {
        "apiVersion": f"{group}.cluster.x-k8s.io/{version}",
        "kind": kind,
        "metadata": {"name": "n", "namespace": "eksa-system"},
        **value,
    }
    return json.dumps(obj) + "\n"


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
@pytest.mark.parametrize("kind", sorted(_SPECS))
def test_bottlerocket_is_refused_on_every_kubeadm_kind(kind: str, version: str) -> None:
    with pytest.raises(InputError) as caught:
        engine.process(_kubeadm(kind, version, "bottlerocket"), REQUEST)
    message = str(caught.value)
    assert f"{kind} eksa-system/n" in message
    assert f"{'.'.join(_SPECS[kind])}.format is 'bottlerocket'" in message
    assert "proxyConfiguration" in message and "spec.nodes.enabled: false" in message
    assert "\n" not in message


@pytest.mark.parametrize("fmt", [None, "cloud-config", "ignition"])
def test_cloud_config_and_ignition_get_the_entries_as_before(fmt: str | None) -> None:
    text = _kubeadm("KubeadmConfigTemplate", "v1beta2", fmt)
    (out,) = libyaml.load_data(engine.process(text, REQUEST).text)
    spec = out["spec"]["template"]["spec"]
    assert spec.get("format") == fmt
    assert spec["preKubeadmCommands"][-1] == "echo hi"
    assert len(spec["preKubeadmCommands"]) > 1 and spec["files"]


def test_another_unknown_format_is_refused_with_general_advice() -> None:
    with pytest.raises(InputError, match=r"format is 'talos'.*by that format's own means"):
        formats.check({"format": "talos"}, "spec")


def test_bottlerocket_passes_when_nothing_is_written() -> None:
    """--remove and spec.nodes.enabled: false write nothing: nothing to refuse."""
    text = _kubeadm("KubeadmControlPlane", "v1beta1", "bottlerocket")
    assert engine.process(text, replace(REQUEST, nodes=None)).text == text
    assert engine.process(text, replace(REQUEST, env=())).text == text  # --remove


_CLASS = """\
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata:
  name: br
spec:
  patches:
  - name: os
    definitions:
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
        kind: KubeadmConfigTemplate
        matchResources:
          machineDeploymentClass:
            names: [default-worker]
      jsonPatches:
      - op: add
{patch}
"""


@pytest.mark.parametrize(
    "patch",
    [
        "        path: /spec/template/spec/format\n        value: bottlerocket",
        "        path: /spec/template/spec\n        value:\n          format: bottlerocket",
        "        path: /spec/template/spec\n        valueFrom:\n          template: |\n"
        "            format: bottlerocket\n            preKubeadmCommands: [a]",
    ],
    ids=["field", "literal-spec", "template-spec"],
)
def test_a_class_patch_that_sets_bottlerocket_is_refused(patch: str) -> None:
    with pytest.raises(InputError, match=r"ClusterClass patch 'os' .* to 'bottlerocket'"):
        engine.process(_CLASS.format(patch=patch), REQUEST)


def test_a_class_patch_that_sets_ignition_is_kept() -> None:
    """CAPO's Flatcar shape (golden capi-clusterclass-ignition) is followed, not refused."""
    patch = "        path: /spec/template/spec/format\n        value: ignition"
    text = _CLASS.format(patch=patch)
    assert engine.process(text, REQUEST).text == text


# --- unsupported bootstrap kinds ------------------------------------------------------

_OTHERS = [
    ("bootstrap.cluster.x-k8s.io", "CK8sConfigTemplate"),
    ("controlplane.cluster.x-k8s.io", "CK8sControlPlane"),
    ("bootstrap.cluster.x-k8s.io", "RKE2ConfigTemplate"),
    ("controlplane.cluster.x-k8s.io", "RKE2ControlPlane"),
    ("bootstrap.cluster.x-k8s.io", "KThreesConfigTemplate"),
    ("controlplane.cluster.x-k8s.io", "KThreesControlPlane"),
    ("bootstrap.cluster.x-k8s.io", "K0sWorkerConfigTemplate"),
    ("controlplane.cluster.x-k8s.io", "K0sControlPlane"),
    ("bootstrap.cluster.x-k8s.io", "TalosConfigTemplate"),
    ("controlplane.cluster.x-k8s.io", "TalosControlPlane"),
    ("bootstrap.cluster.x-k8s.io", "MicroK8sConfigTemplate"),
    ("controlplane.cluster.x-k8s.io", "MicroK8sControlPlane"),
    ("bootstrap.cluster.x-k8s.io", "EKSConfigTemplate"),
    ("bootstrap.cluster.x-k8s.io", "EKSConfig"),
    ("bootstrap.cluster.x-k8s.io", "NodeadmConfigTemplate"),
]
_ROWS = {(t.group, t.kind) for t in BUILT_IN.of_planner(KUBEADM)}


@pytest.mark.parametrize(("group", "kind"), sorted(_ROWS | set(_OTHERS)))
def test_coverage_is_read_from_the_target_table(group: str, kind: str) -> None:
    """A kind is covered exactly when a kubeadm row of targets.BUILT_IN names it: a row
    added for EKS (or any provider) covers its kinds without a list of this check's own."""
    assert uncovered.covered(group, kind) == ((group, kind) in _ROWS)
    assert not uncovered.covered("example.com", kind)
    assert uncovered.covered(None, kind) == any(k == kind for _, k in _ROWS)


def test_the_code_is_declared_and_strict() -> None:
    assert CODES[CODE].strict


def test_ck8s_v1beta2_references_are_warned_about_naming_kind_and_referrer() -> None:
    found = _findings(CK8S)
    assert len(found) == 2
    cluster, workers = found
    assert "Cluster ck8s/demo: its control plane is CK8sControlPlane demo-control-plane" in cluster
    assert "MachineDeployment ck8s/worker-md-0: its machines bootstrap from CK8sConfigTemplate" in (
        workers
    )
    for message in found:
        assert "the nodes of Cluster ck8s/demo get no proxy settings from the tool" in message


def test_talos_kinds_are_covered_by_their_row_and_not_warned_about() -> None:
    """The Talos row (dialects.TALOS) covers TalosControlPlane and TalosConfigTemplate:
    the stream that was warned about before the row gets no warning now."""
    assert uncovered.covered("controlplane.cluster.x-k8s.io", "TalosControlPlane")
    assert uncovered.covered("bootstrap.cluster.x-k8s.io", "TalosConfigTemplate")
    assert _findings(TALOS) == []


def test_a_class_worker_of_an_uncovered_kind_is_warned_about() -> None:
    found = _findings(CK8S_CLASS)
    assert any(
        "ClusterClass ck8s/ck8s-class: its worker class default-worker bootstraps from "
        "CK8sConfigTemplate"
        in m
        and "Cluster ck8s/edge" in m
        for m in found
    )


_MACHINE_POOL = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata:
  name: pool-0
  namespace: eks
spec:
  clusterName: eks
  template:
    spec:
      clusterName: eks
      bootstrap:
        configRef:
          apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
          kind: EKSConfig
          name: pool-0
"""


def test_a_machine_pool_is_read_too_and_follows_the_table() -> None:
    found = _findings(_MACHINE_POOL)
    covered = uncovered.covered("bootstrap.cluster.x-k8s.io", "EKSConfig")
    assert len(found) == (0 if covered else 1)
    if found:
        assert "MachinePool eks/pool-0: its machines bootstrap from EKSConfig pool-0" in found[0]


_MACHINE = """\
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: {name}
  namespace: ck8s
spec:
  clusterName: demo
  bootstrap:
    configRef:
      apiGroup: bootstrap.cluster.x-k8s.io
      kind: {kind}
      name: {name}
"""


def test_a_machine_of_its_own_is_read_too_and_follows_the_table() -> None:
    """A Machine outside any MachineDeployment (k0smotron's samples have them) names its
    bootstrap config itself: an uncovered kind is warned about, a covered one is not."""
    found = _findings(_MACHINE.format(name="m-0", kind="CK8sConfig"))
    assert len(found) == 1
    assert "Machine ck8s/m-0: it bootstraps from CK8sConfig m-0" in found[0]
    assert "the nodes of Cluster ck8s/demo get no proxy settings from the tool" in found[0]
    assert _findings(_MACHINE.format(name="m-1", kind="K0sWorkerConfig")) == []


def test_kubeadm_streams_get_no_such_warning() -> None:
    for case in ("capi-v1beta1", "capi-v1beta2", "capi-clusterclass", "capi-two-clusters"):
        assert _findings((GOLDEN / case / "input.yaml").read_text()) == []


def test_strict_makes_it_an_error_and_disabled_nodes_silence_it() -> None:
    with pytest.raises(InputError, match=r"\[nodes/unsupported-bootstrap; --strict\]"):
        engine.process(CK8S, replace(REQUEST, strict=True))
    assert _findings(CK8S, replace(REQUEST, nodes=None)) == []


_KAMAJI = """\
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: tenant
  namespace: kamaji
spec:
  controlPlaneRef:
    apiGroup: controlplane.cluster.x-k8s.io
    kind: {control_plane}
    name: tenant
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: tenant-md-0
  namespace: kamaji
spec:
  clusterName: tenant
  template:
    spec:
      clusterName: tenant
      bootstrap:
        configRef:
          apiGroup: bootstrap.cluster.x-k8s.io
          kind: {workers}
          name: tenant-md-0
"""


def test_a_control_plane_of_pods_is_a_note_and_its_workers_count() -> None:
    text = _KAMAJI.format(control_plane="KamajiControlPlane", workers="KubeadmConfigTemplate")
    result = engine.process(text, REQUEST)
    assert [f for f in result.findings if f.code == CODE] == []
    (note,) = result.notes
    assert note.startswith("Cluster kamaji/tenant: its control plane KamajiControlPlane tenant")
    assert "runs as pods in the management cluster: no nodes to configure" in note
    # k0smotron's workers are a row now (dialects.K0SMOTRON): only the note is left
    k0s = _KAMAJI.format(control_plane="K0smotronControlPlane", workers="K0sWorkerConfigTemplate")
    assert _findings(k0s) == []
    (note,) = engine.process(k0s, REQUEST).notes
    assert "K0smotronControlPlane tenant" in note and "runs as pods" in note
    # a worker kind no row covers still counts
    ck8s = _KAMAJI.format(control_plane="K0smotronControlPlane", workers="CK8sConfigTemplate")
    found = _findings(ck8s)
    assert len(found) == 1 and "CK8sConfigTemplate tenant-md-0" in found[0]


def test_report_and_krm_carry_the_warning_exit_0() -> None:
    proc = run_cli([str(SHARED_PROFILE), "--report"], CK8S.encode())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == CK8S
    report = proc.stderr.decode()
    assert report.count(f"[{CODE}]") == 2
    # the nodes' NO_PROXY is said not to be written, not shown as a list
    (line,) = [x for x in report.splitlines() if "NO_PROXY (nodes of Cluster ck8s/demo" in x]
    assert "not written: the tool does not configure its nodes" in line
    items = [d for d in libyaml.load_data(CK8S) if d]
    profile = libyaml.load_data(SHARED_PROFILE.read_text())[0]
    proc = run_cli([], resource_list(items, profile))
    assert proc.returncode == 0, proc.stderr
    (out,) = libyaml.load_data(proc.stdout.decode())
    tagged = [r for r in out["results"] if r.get("tags", {}).get("code") == CODE]
    assert len(tagged) == 2
    assert all(r["severity"] == "warning" and r["tags"]["strict"] == "true" for r in tagged)
    assert tagged[0]["resourceRef"] == {"kind": "Cluster", "name": "demo", "namespace": "ck8s"}


def test_a_class_cluster_of_uncovered_kinds_gets_no_node_no_proxy_checks() -> None:
    result = engine.process(CK8S_CLASS, REQUEST)
    assert set(result.no_proxy_warnings) == {"workloads"}
    assert result.no_proxy_notes["nodes of Cluster ck8s/edge"] == [
        "not written: the tool does not configure its nodes (they bootstrap from "
        "CK8sControlPlaneTemplate, CK8sConfigTemplate)"
    ]
    assert not [f for f in result.findings if f.code.startswith("noproxy/")]


# --- noproxy -------------------------------------------------------------------------


def _noproxy(*args: str, stream: str = "capi-unsupported-ck8s") -> tuple[int, str, str]:
    path = GOLDEN / stream / "input.yaml"
    proc = run_cli(["noproxy", str(SHARED_PROFILE), "--stream", str(path), *args])
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


SAID = (
    "not written: the tool does not configure its nodes (they bootstrap from "
    "CK8sControlPlane, CK8sConfigTemplate); give them their proxy by the provider's own means"
)


def test_noproxy_says_the_nodes_are_not_configured() -> None:
    code, out, _ = _noproxy()
    assert code == 0
    assert out.splitlines()[1] == f"Cluster ck8s/demo: {SAID}"
    code, out, _ = _noproxy("--explain")
    assert out.split("\n\n")[1] == f"# NO_PROXY for Cluster ck8s/demo\n{SAID}\n"
    code, out, err = _noproxy("--cluster", "demo")
    assert (code, out) == (0, "")
    assert err == f"proxy-postrender: Cluster ck8s/demo: {SAID}\n"


def test_noproxy_still_lists_a_cluster_with_kubeadm_nodes() -> None:
    code, out, _ = _noproxy(stream="capi-v1beta2")
    clusters = [line for line in out.splitlines() if line.startswith("Cluster ")]
    assert code == 0 and clusters
    assert all("not written" not in line and ",10." in line for line in clusters)
    index = Bootstraps()
    for doc in libyaml.load_data(
        _KAMAJI.format(control_plane="KamajiControlPlane", workers="CK8sConfigTemplate")
    ):
        index.observe(doc, None)
    # a pod control plane has no nodes: the CK8s workers are all there is
    assert list(uncovered.unconfigured(index)) == ["Cluster kamaji/tenant"]
    index = Bootstraps()
    for doc in libyaml.load_data(
        _KAMAJI.format(control_plane="KamajiControlPlane", workers="KubeadmConfigTemplate")
    ):
        index.observe(doc, None)
    assert uncovered.unconfigured(index) == {}


@pytest.mark.parametrize("control_plane", ["AWSManagedControlPlane", "ROSAControlPlane"])
def test_a_control_plane_a_cloud_runs_is_a_note_not_an_unsupported_kind(
    control_plane: str,
) -> None:
    """EKS's (and ROSA's) control plane has no nodes: CAPA's EKS templates gave a false
    warning, and every one of them failed --strict (found on the upstream templates)."""
    text = _KAMAJI.format(control_plane=control_plane, workers="NodeadmConfigTemplate")
    result = engine.process(text, REQUEST)
    assert [f for f in result.findings if f.code == CODE] == []
    (note,) = result.notes
    assert f"its control plane {control_plane} tenant is run by the cloud" in note
