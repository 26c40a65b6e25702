"""The rollout oracle (tests/rollout_oracle.py) against hand-made BEFORE/AFTER pairs.

Each rule of Cluster API the oracle models, and each exemption, has a test here that
fails if the rule is dropped; v1beta1 and v1beta2 shapes both. The source lines are in
the oracle's docstrings (kubernetes-sigs/cluster-api@ae7ff047).
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pytest

from tests.rollout_oracle import (
    CAPI_COMMIT,
    Verdict,
    dangling_references,
    kubeadm_config_differences,
    resolve_bootstrap_template,
    rolling,
    rollouts,
)

Obj = dict[str, Any]
NOW = datetime.datetime(2026, 6, 1, 12, 0, tzinfo=datetime.UTC)
VERSIONS = ["v1beta1", "v1beta2"]
PROXY_FILE = {"path": "/etc/environment", "content": "HTTP_PROXY=http://proxy:3128\n"}


def _ref(version: str, kind: str, name: str, group: str) -> Obj:
    if version == "v1beta1":
        return {"apiVersion": f"{group}/v1beta1", "kind": kind, "name": name, "namespace": "ns"}
    return {"apiGroup": group, "kind": kind, "name": name}


def _meta(name: str) -> Obj:
    return {"name": name, "namespace": "ns"}


def kct(version: str, name: str = "workers", files: list[Obj] | None = None) -> Obj:
    return {
        "apiVersion": f"bootstrap.cluster.x-k8s.io/{version}",
        "kind": "KubeadmConfigTemplate",
        "metadata": _meta(name),
        "spec": {"template": {"spec": {"files": files or [dict(PROXY_FILE)]}}},
    }


def machines(version: str, kind: str = "MachineDeployment", config: str = "workers") -> Obj:
    config_kind = "KubeadmConfig" if kind == "MachinePool" else "KubeadmConfigTemplate"
    return {
        "apiVersion": f"cluster.x-k8s.io/{version}",
        "kind": kind,
        "metadata": _meta("md-0"),
        "spec": {
            "clusterName": "c1",
            "template": {
                "spec": {
                    "clusterName": "c1",
                    "version": "v1.31.2",
                    "bootstrap": {
                        "configRef": _ref(
                            version, config_kind, config, "bootstrap.cluster.x-k8s.io"
                        )
                    },
                    "infrastructureRef": _ref(
                        version, "DockerMachineTemplate", "infra", "infrastructure.cluster.x-k8s.io"
                    ),
                }
            },
        },
    }


def kubeadm_config(version: str, name: str = "pool") -> Obj:
    return {
        "apiVersion": f"bootstrap.cluster.x-k8s.io/{version}",
        "kind": "KubeadmConfig",
        "metadata": _meta(name),
        "spec": {"files": [dict(PROXY_FILE)]},
    }


def kcp(version: str) -> Obj:
    infra = _ref(version, "DockerMachineTemplate", "cp", "infrastructure.cluster.x-k8s.io")
    template = {"infrastructureRef": infra}
    return {
        "apiVersion": f"controlplane.cluster.x-k8s.io/{version}",
        "kind": "KubeadmControlPlane",
        "metadata": _meta("cp"),
        "spec": {
            "version": "v1.31.2",
            "replicas": 3,
            "machineTemplate": template if version == "v1beta1" else {"spec": template},
            "kubeadmConfigSpec": {
                "files": [dict(PROXY_FILE)],
                "clusterConfiguration": {"controlPlaneEndpoint": "10.0.0.1:6443"},
                "initConfiguration": {"nodeRegistration": {"name": "a"}},
                "joinConfiguration": {"nodeRegistration": {"name": "a"}},
            },
        },
    }


def secret(name: str, value: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _meta(name),
        "stringData": {"env": value},
    }


def verdict(before: list[Obj], after: list[Obj], label: str, **options: Any) -> Verdict:
    options.setdefault("now", NOW)
    found = {v.label: v for v in rollouts(before, after, **options)}
    return found[label]


def _after(before: list[Obj]) -> list[Obj]:
    return copy.deepcopy(before)


def _tspec(obj: Obj) -> Obj:
    spec: Obj = obj["spec"]["template"]["spec"]
    return spec


def test_the_oracle_names_the_commit_it_models() -> None:
    assert CAPI_COMMIT == "ae7ff047db499ac3858ade268ba38db8c9f128bb"


# --- MachineDeployment: MachineTemplateUpToDate ------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_md_template_content_changed_in_place_rolls_nothing(version: str) -> None:
    before = [machines(version), kct(version)]
    after = _after(before)
    _tspec(after[1])["files"][0]["content"] = "HTTP_PROXY=http://other:3128\n"
    v = verdict(before, after, "MachineDeployment/md-0")
    assert not v.rolls and v.reasons == ()
    assert any("KubeadmConfigTemplate workers: spec changed in place" in d for d in v.drift)


@pytest.mark.parametrize("version", VERSIONS)
def test_md_renamed_bootstrap_template_rolls(version: str) -> None:
    before = [machines(version), kct(version)]
    after = [machines(version, config="workers-1a2b3c"), kct(version, "workers-1a2b3c")]
    v = verdict(before, after, "MachineDeployment/md-0")
    assert v.rolls
    assert v.reasons == (
        "spec.template.spec.bootstrap.configRef KubeadmConfigTemplate workers"
        " -> KubeadmConfigTemplate workers-1a2b3c",
    )


def test_md_v1beta1_reference_version_and_namespace_are_dropped_as_the_conversion_does() -> None:
    before = [machines("v1beta1")]
    after = _after(before)
    ref = _tspec(after[0])["bootstrap"]["configRef"]
    ref["apiVersion"] = "bootstrap.cluster.x-k8s.io/v1beta2"
    ref["namespace"] = "elsewhere"
    assert not verdict(before, after, "MachineDeployment/md-0").rolls
    ref["apiVersion"] = "bootstrap.example.com/v1beta1"  # the group is kept
    assert verdict(before, after, "MachineDeployment/md-0").rolls


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("version", "v1.32.0"),
        ("failureDomain", "zone-b"),
        ("infrastructureRef", None),
    ],
)
def test_md_version_infrastructure_and_failure_domain_roll(
    version: str, field: str, value: Any
) -> None:
    before = [machines(version)]
    after = _after(before)
    if field == "infrastructureRef":
        _tspec(after[0])["infrastructureRef"]["name"] = "infra-2"
    else:
        _tspec(after[0])[field] = value
    v = verdict(before, after, "MachineDeployment/md-0")
    assert v.rolls and v.reasons[0].startswith(f"spec.template.spec.{field} ")


@pytest.mark.parametrize("version", VERSIONS)
def test_md_version_without_v_prefix_is_the_same_version(version: str) -> None:
    before = [machines(version)]
    after = _after(before)
    _tspec(after[0])["version"] = "1.31.2"
    assert not verdict(before, after, "MachineDeployment/md-0").rolls


@pytest.mark.parametrize("version", VERSIONS)
def test_md_fields_propagated_in_place_do_not_roll(version: str) -> None:
    before = [machines(version)]
    after = _after(before)
    after[0]["spec"]["template"]["metadata"] = {"labels": {"a": "b"}, "annotations": {"c": "d"}}
    _tspec(after[0])["readinessGates"] = [{"conditionType": "X"}]
    after[0]["spec"]["replicas"] = 5
    assert not verdict(before, after, "MachineDeployment/md-0").rolls


@pytest.mark.parametrize("version", VERSIONS)
def test_md_data_secret_name_is_part_of_the_bootstrap_struct(version: str) -> None:
    before = [machines(version)]
    del _tspec(before[0])["bootstrap"]["configRef"]
    _tspec(before[0])["bootstrap"]["dataSecretName"] = "boot-a"
    after = _after(before)
    _tspec(after[0])["bootstrap"]["dataSecretName"] = "boot-b"
    v = verdict(before, after, "MachineDeployment/md-0")
    assert v.reasons == ("spec.template.spec.bootstrap.dataSecretName boot-a -> boot-b",)


# --- rollout.after -----------------------------------------------------------------------


def _with_rollout_after(obj: Obj, when: str) -> Obj:
    obj = copy.deepcopy(obj)
    if obj["apiVersion"].endswith("v1beta1"):
        obj["spec"]["rolloutAfter"] = when
    else:
        obj["spec"]["rollout"] = {"after": when}
    return obj


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("make", [machines, kcp], ids=["md", "kcp"])
def test_rollout_after_replaces_machines_made_before_it_once_passed(
    version: str, make: Any
) -> None:
    obj = make(version)
    label = f"{obj['kind']}/{obj['metadata']['name']}"
    field = "spec.rolloutAfter" if version == "v1beta1" else "spec.rollout.after"
    past = [_with_rollout_after(obj, "2026-05-01T00:00:00Z")]
    v = verdict([obj], past, label)
    assert v.rolls and v.reasons == (
        f"{field} 2026-05-01T00:00:00Z has passed and the machines were created before it",
    )
    future = [_with_rollout_after(obj, "2026-07-01T00:00:00Z")]
    v = verdict([obj], future, label)
    assert not v.rolls and v.scheduled == datetime.datetime(2026, 7, 1, tzinfo=datetime.UTC)
    # the same time again: the machines were made at it already
    assert not verdict(past, copy.deepcopy(past), label).rolls
    # moved to a later time that has passed
    later = [_with_rollout_after(obj, "2026-05-20T00:00:00Z")]
    assert verdict(past, later, label).rolls
    # machines known to be newer than the time
    newer = datetime.datetime(2026, 5, 2, tzinfo=datetime.UTC)
    assert not verdict([obj], past, label, machines_created=newer).rolls


def test_rollout_after_at_now_rolls_a_md_but_not_yet_a_kcp() -> None:
    """util.go l. 507: a MachineDeployment acts once ``now`` is not before it;
    machine_filters.go l. 227: KCP once it is strictly before ``now``."""
    at_now = "2026-06-01T12:00:00Z"
    md, cp = machines("v1beta2"), kcp("v1beta2")
    after = [_with_rollout_after(md, at_now), _with_rollout_after(cp, at_now)]
    assert rolling([md, cp], after, now=NOW) == {"MachineDeployment/md-0"}


# --- KubeadmControlPlane: matchesKubeadmConfig and its exemptions -------------------------


def _cspec(obj: Obj) -> Obj:
    spec: Obj = obj["spec"]["kubeadmConfigSpec"]
    return spec


@pytest.mark.parametrize("version", VERSIONS)
def test_kcp_files_change_rolls_every_machine(version: str) -> None:
    before = [kcp(version)]
    after = _after(before)
    _cspec(after[0])["files"][0]["content"] = "HTTP_PROXY=http://other:3128\n"
    v = verdict(before, after, "KubeadmControlPlane/cp")
    assert v.reasons == (
        "spec.kubeadmConfigSpec.files (KubeadmConfig of the joined machines)",
        "spec.kubeadmConfigSpec.files (KubeadmConfig of the first machine)",
    )


@pytest.mark.parametrize(
    ("version", "path", "value"),
    [
        ("v1beta2", ("clusterConfiguration", "controlPlaneEndpoint"), "10.0.0.2:6443"),
        ("v1beta1", ("clusterConfiguration", "controlPlaneEndpoint"), {"host": "b", "port": 1}),
        ("v1beta2", ("clusterConfiguration", "dns"), {"imageTag": "v1.11"}),
        ("v1beta1", ("clusterConfiguration", "dns"), {"imageTag": "v1.11"}),
        ("v1beta2", ("joinConfiguration", "discovery"), {"bootstrapToken": {"token": "x"}}),
        ("v1beta1", ("joinConfiguration", "discovery"), {"bootstrapToken": {"token": "x"}}),
        (
            "v1beta2",
            ("initConfiguration", "timeouts"),
            {"controlPlaneComponentHealthCheckSeconds": 300},
        ),
        (
            "v1beta2",
            ("joinConfiguration", "timeouts"),
            {"controlPlaneComponentHealthCheckSeconds": 300},
        ),
        ("v1beta1", ("clusterConfiguration", "apiServer"), {"timeoutForControlPlane": "5m"}),
    ],
    ids=lambda x: x if isinstance(x, str) else ".".join(x) if isinstance(x, tuple) else "",
)
def test_kcp_exempt_fields_do_not_roll(version: str, path: tuple[str, ...], value: Any) -> None:
    before = [kcp(version)]
    after = _after(before)
    node = _cspec(after[0])
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    v = verdict(before, after, "KubeadmControlPlane/cp")
    assert not v.rolls, v.reasons
    assert any("exempt" in d for d in v.drift)


@pytest.mark.parametrize("version", VERSIONS)
def test_kcp_empty_and_absent_are_one_except_taints(version: str) -> None:
    before = [kcp(version)]
    after = _after(before)
    _cspec(after[0])["preKubeadmCommands"] = []
    _cspec(after[0])["format"] = "cloud-config"  # the default
    _cspec(after[0])["joinConfiguration"]["nodeRegistration"]["imagePullPolicy"] = "IfNotPresent"
    assert not verdict(before, after, "KubeadmControlPlane/cp").rolls
    _cspec(after[0])["joinConfiguration"]["nodeRegistration"]["taints"] = []
    v = verdict(before, after, "KubeadmControlPlane/cp")
    assert v.reasons == (
        "spec.kubeadmConfigSpec.joinConfiguration.nodeRegistration.taints"
        " (KubeadmConfig of the joined machines)",
    )


def test_kcp_first_machine_is_compared_in_join_form_first() -> None:
    """filters.go l. 254-296: the first machine's init configuration, read as a join
    one, is compared with the desired join configuration; only on a mismatch is it
    compared in init form. So a change of initConfiguration alone, in a spec whose
    init and join node registrations agree, rolls no machine at all."""
    spec = _cspec(kcp("v1beta2"))
    changed = copy.deepcopy(spec)
    changed["initConfiguration"]["nodeRegistration"]["name"] = "b"
    assert kubeadm_config_differences(spec, changed) == {"join": [], "init": []}
    # init and join configured apart: the init form decides for the first machine
    spec["joinConfiguration"]["nodeRegistration"]["name"] = "x"
    changed = copy.deepcopy(spec)
    changed["initConfiguration"]["nodeRegistration"]["name"] = "b"
    assert kubeadm_config_differences(spec, changed) == {
        "join": [],
        "init": ["spec.kubeadmConfigSpec.initConfiguration.nodeRegistration.name"],
    }
    # a join-only change: the first machine still matches in init form
    changed = copy.deepcopy(spec)
    changed["joinConfiguration"]["nodeRegistration"]["name"] = "y"
    assert kubeadm_config_differences(spec, changed) == {
        "join": ["spec.kubeadmConfigSpec.joinConfiguration.nodeRegistration.name"],
        "init": [],
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_kcp_version_and_infrastructure_template_roll(version: str) -> None:
    before = [kcp(version)]
    after = _after(before)
    after[0]["spec"]["version"] = "v1.32.0"
    v = verdict(before, after, "KubeadmControlPlane/cp")
    assert v.reasons == ("spec.version v1.31.2 -> v1.32.0",)
    after = _after(before)
    template = after[0]["spec"]["machineTemplate"]
    ref = (template if version == "v1beta1" else template["spec"])["infrastructureRef"]
    ref["name"] = "cp-2"
    reasons = verdict(before, after, "KubeadmControlPlane/cp").reasons
    assert len(reasons) == 1 and ".infrastructureRef " in reasons[0]


def test_kcp_v1beta1_infrastructure_reference_version_is_not_compared() -> None:
    before = [kcp("v1beta1")]
    after = _after(before)
    ref = after[0]["spec"]["machineTemplate"]["infrastructureRef"]
    ref["apiVersion"] = "infrastructure.cluster.x-k8s.io/v1beta2"
    assert not verdict(before, after, "KubeadmControlPlane/cp").rolls


# --- Secrets: only the name counts --------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_secret_content_never_counts_only_its_name(version: str) -> None:
    from_secret = {
        "path": "/etc/environment",
        "contentFrom": {"secret": {"name": "px", "key": "env"}},
    }
    cp, md, template = kcp(version), machines(version), kct(version, files=[from_secret])
    _cspec(cp)["files"] = [copy.deepcopy(from_secret)]
    before = [cp, md, template, secret("px", "HTTP_PROXY=http://a:1")]
    after = _after(before)
    after[3]["stringData"]["env"] = "HTTP_PROXY=http://b:1"
    found = {v.label: v for v in rollouts(before, after, now=NOW)}
    assert not found["KubeadmControlPlane/cp"].rolls
    assert not found["MachineDeployment/md-0"].rolls
    assert "Secret px: content changed under the same name (never compared)" in (
        found["KubeadmControlPlane/cp"].drift
    )
    assert any("Secret px" in d for d in found["MachineDeployment/md-0"].drift)
    # a new Secret name in the control plane's spec rolls it
    after = _after(before)
    _cspec(after[0])["files"][0]["contentFrom"]["secret"]["name"] = "px-5d41"
    after[3]["metadata"]["name"] = "px-5d41"
    assert rolling(before, after, now=NOW) == {"KubeadmControlPlane/cp"}


# --- MachinePool and MachineSet -----------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_machine_pool_rebootstraps_only_on_a_new_config_name(version: str) -> None:
    before = [machines(version, "MachinePool", "pool"), kubeadm_config(version)]
    after = _after(before)
    after[1]["spec"]["files"][0]["content"] = "HTTP_PROXY=http://other:3128\n"
    v = verdict(before, after, "MachinePool/md-0")
    assert not v.rolls
    assert any("KubeadmConfig pool: spec changed in place" in d for d in v.drift)
    after = [machines(version, "MachinePool", "pool-9f8e"), kubeadm_config(version, "pool-9f8e")]
    v = verdict(before, after, "MachinePool/md-0")
    assert v.reasons == (
        "spec.template.spec.bootstrap.configRef KubeadmConfig pool -> KubeadmConfig pool-9f8e",
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_machine_set_never_replaces_its_machines(version: str) -> None:
    before = [machines(version, "MachineSet"), kct(version)]
    after = [machines(version, "MachineSet", "workers-2"), kct(version, "workers-2")]
    v = verdict(before, after, "MachineSet/md-0")
    assert not v.rolls
    assert any("a MachineSet never replaces its machines" in d for d in v.drift)


# --- ClusterClass -------------------------------------------------------------------------


def cluster_class(version: str, template: str = "workers", pool: str = "pool-t") -> Obj:
    group = "bootstrap.cluster.x-k8s.io"

    def ref(kind: str, name: str, api: str = f"{group}/{version}") -> Obj:
        return {"apiVersion": api, "kind": kind, "name": name}

    infra = ref("DockerMachineTemplate", "infra", f"infrastructure.cluster.x-k8s.io/{version}")
    cp = ref("KubeadmControlPlaneTemplate", "cp-t", f"controlplane.cluster.x-k8s.io/{version}")
    boot, pboot = ref("KubeadmConfigTemplate", template), ref("KubeadmConfigTemplate", pool)
    if version == "v1beta1":
        md = {
            "class": "default",
            "template": {"bootstrap": {"ref": boot}, "infrastructure": {"ref": infra}},
        }
        mp = {
            "class": "pool",
            "template": {"bootstrap": {"ref": pboot}, "infrastructure": {"ref": infra}},
        }
        control_plane: Obj = {"ref": cp}
    else:
        md = {
            "class": "default",
            "bootstrap": {"templateRef": boot},
            "infrastructure": {"templateRef": infra},
        }
        mp = {
            "class": "pool",
            "bootstrap": {"templateRef": pboot},
            "infrastructure": {"templateRef": infra},
        }
        control_plane = {"templateRef": cp}
    return {
        "apiVersion": f"cluster.x-k8s.io/{version}",
        "kind": "ClusterClass",
        "metadata": _meta("cc"),
        "spec": {
            "controlPlane": control_plane,
            "workers": {"machineDeployments": [md], "machinePools": [mp]},
        },
    }


def topology_cluster(version: str) -> Obj:
    workers = {
        "machineDeployments": [{"class": "default", "name": "md-a"}],
        "machinePools": [{"class": "pool", "name": "mp-a"}],
    }
    topology: Obj = {"version": "v1.31.2", "workers": workers}
    if version == "v1beta1":
        topology["class"] = "cc"
    else:
        topology["classRef"] = {"name": "cc"}
    return {
        "apiVersion": f"cluster.x-k8s.io/{version}",
        "kind": "Cluster",
        "metadata": _meta("c1"),
        "spec": {"topology": topology},
    }


def cp_template(version: str) -> Obj:
    return {
        "apiVersion": f"controlplane.cluster.x-k8s.io/{version}",
        "kind": "KubeadmControlPlaneTemplate",
        "metadata": _meta("cp-t"),
        "spec": {"template": {"spec": {"kubeadmConfigSpec": {"files": [dict(PROXY_FILE)]}}}},
    }


def class_stream(version: str) -> list[Obj]:
    infra = {
        "apiVersion": f"infrastructure.cluster.x-k8s.io/{version}",
        "kind": "DockerMachineTemplate",
        "metadata": _meta("infra"),
        "spec": {"template": {"spec": {}}},
    }
    return [
        cluster_class(version),
        topology_cluster(version),
        kct(version),
        kct(version, "pool-t"),
        cp_template(version),
        infra,
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_class_bootstrap_template_content_rolls_every_cluster_of_the_class(version: str) -> None:
    before = class_stream(version)
    after = _after(before)
    _tspec(after[2])["files"][0]["content"] = "HTTP_PROXY=http://other:3128\n"
    assert rolling(before, after, now=NOW) == {
        "ClusterClass/cc",
        "Cluster/c1:workers.machineDeployments[md-a]",
    }
    reason = verdict(before, after, "ClusterClass/cc").reasons[0]
    assert reason == (
        "spec.workers.machineDeployments[default].bootstrap KubeadmConfigTemplate workers:"
        " spec changed, rotated by the topology controller"
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_class_template_renamed_with_the_same_content_rolls_nothing(version: str) -> None:
    """The topology controller compares the content, not the class's template name."""
    before = class_stream(version)
    after = _after(before)
    after[0] = cluster_class(version, template="workers-77aa")
    after[2]["metadata"]["name"] = "workers-77aa"
    after[2]["metadata"]["labels"] = {"renamed": "yes"}  # metadata only: patched in place
    assert rolling(before, after, now=NOW) == set()


@pytest.mark.parametrize("version", VERSIONS)
def test_class_machine_pool_bootstrap_is_patched_in_place(version: str) -> None:
    before = class_stream(version)
    after = _after(before)
    _tspec(after[3])["files"][0]["content"] = "HTTP_PROXY=http://other:3128\n"
    assert rolling(before, after, now=NOW) == set()
    v = verdict(before, after, "Cluster/c1:workers.machinePools[mp-a]")
    assert any("patched in place (no new data secret)" in d for d in v.drift)


@pytest.mark.parametrize("version", VERSIONS)
def test_class_control_plane_template_reaches_the_kcp_rule(version: str) -> None:
    before = class_stream(version)
    after = _after(before)
    spec = after[4]["spec"]["template"]["spec"]["kubeadmConfigSpec"]
    spec["clusterConfiguration"] = {"dns": {"imageTag": "v1.11"}}  # exempt
    assert rolling(before, after, now=NOW) == set()
    spec["files"][0]["content"] = "HTTP_PROXY=http://other:3128\n"
    assert rolling(before, after, now=NOW) == {"ClusterClass/cc", "Cluster/c1:controlPlane"}


@pytest.mark.parametrize("version", VERSIONS)
def test_topology_rollout_after_and_version(version: str) -> None:
    before = class_stream(version)
    after = _after(before)
    after[1]["spec"]["topology"]["workers"]["machineDeployments"][0]["rollout"] = {
        "after": "2026-05-01T00:00:00Z"
    }
    assert rolling(before, after, now=NOW) == {"Cluster/c1:workers.machineDeployments[md-a]"}
    after = _after(before)
    after[1]["spec"]["topology"]["version"] = "v1.32.0"
    assert rolling(before, after, now=NOW) == {
        "Cluster/c1:workers.machineDeployments[md-a]",
        "Cluster/c1:controlPlane",
    }


# --- references ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_dangling_references_are_found(version: str) -> None:
    stream = [machines(version), kct(version), *class_stream(version)]
    assert dangling_references(stream) == []
    assert resolve_bootstrap_template(stream[0], stream) == stream[1]
    stream[1]["metadata"]["name"] = "workers-1a2b"  # renamed, the MachineDeployment not moved
    stream[4]["metadata"]["name"] = "workers-1a2b"  # the class's template too
    assert resolve_bootstrap_template(stream[0], stream) is None
    found = dangling_references(stream)
    assert len(found) == 2
    assert found[0] == (
        "MachineDeployment/md-0 spec.template.spec.bootstrap.configRef:"
        " KubeadmConfigTemplate workers is not in the stream"
    )
    assert found[1].startswith("ClusterClass/cc spec.workers.machineDeployments[default]")


def test_a_changed_api_version_is_an_error() -> None:
    with pytest.raises(ValueError, match="apiVersion"):
        rollouts([machines("v1beta1")], [machines("v1beta2")], now=NOW)


def test_a_second_run_with_the_same_objects_triggers_nothing() -> None:
    stream = [
        machines("v1beta2"),
        kct("v1beta2"),
        kcp("v1beta2"),
        machines("v1beta1", "MachinePool", "pool"),
        kubeadm_config("v1beta1"),
        *class_stream("v1beta2"),
    ]
    verdicts = rollouts(stream, copy.deepcopy(stream), now=NOW)
    assert len(verdicts) == 7
    assert [v for v in verdicts if v.rolls or v.drift] == []
