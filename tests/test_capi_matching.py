"""Cluster matching of MachineDeployments and MachinePools without a namespace
(every CAPOCI template: the Cluster has one, the workers' objects none)."""

from __future__ import annotations

from typing import Any

import pytest

from proxy_postrender.noproxy import discovery
from tests.helpers import SHARED_PROFILE, run_cli


def _cluster(name: str, namespace: str | None, pods: str) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": metadata,
        "spec": {"clusterNetwork": {"pods": {"cidrBlocks": [pods]}}},
    }


def _workers(kind: str, cluster: str, namespace: str | None = None) -> list[dict[str, Any]]:
    """A MachineDeployment (or MachinePool) and the KubeadmConfigTemplate it references."""
    metadata: dict[str, Any] = {"name": f"{cluster}-md-0"}
    if namespace:
        metadata["namespace"] = namespace
    ref = {"kind": "KubeadmConfigTemplate", "name": f"{cluster}-md-0"}
    bootstrap = {"configRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", **ref}}
    owner = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": kind,
        "metadata": metadata,
        "spec": {"clusterName": cluster, "template": {"spec": {"bootstrap": bootstrap}}},
    }
    template = {
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmConfigTemplate",
        "metadata": dict(metadata),
    }
    return [owner, template]


def _match(objects: list[dict[str, Any]], namespace: str | None = None) -> tuple[list[str], str]:
    index = discovery.discover(objects, namespace=namespace)
    nets, how = index.networks_for(objects[-1])
    return [net.label for net in nets], how or ""


@pytest.mark.parametrize("kind", ["MachineDeployment", "MachinePool"])
def test_namespace_less_workers_serve_the_cluster_of_their_cluster_name(kind: str) -> None:
    objects = [_cluster("c1", "ns1", "192.168.0.0/16"), *_workers(kind, "c1")]
    labels, how = _match(objects)
    assert labels == ["Cluster ns1/c1"]
    assert how == f"referenced by {kind} c1-md-0"


def test_the_namespace_option_applies_to_objects_without_one() -> None:
    objects = [_cluster("c1", "ns1", "192.168.0.0/16"), *_workers("MachineDeployment", "c1")]
    labels, how = _match(objects, namespace="ns1")
    assert labels == ["Cluster ns1/c1"] and how == "referenced by MachineDeployment ns1/c1-md-0"
    # applied to another namespace, they serve no Cluster of the stream (nor would CAPI's)
    labels, how = _match(objects, namespace="other")
    assert labels == [] and "label it" in how


def test_a_cluster_without_a_namespace_takes_the_namespace_option() -> None:
    objects = [_cluster("c1", None, "192.168.0.0/16"), *_workers("MachineDeployment", "c1")]
    index = discovery.discover(objects, namespace="team")
    assert list(index.clusters) == [("team", "c1")]
    assert _match(objects, namespace="team")[0] == ["Cluster team/c1"]


def test_two_clusters_of_that_name_leave_the_reference_unresolved() -> None:
    objects = [
        _cluster("c1", "ns1", "192.168.0.0/16"),
        _cluster("c1", "ns2", "172.16.0.0/16"),
        *_workers("MachineDeployment", "c1"),
    ]
    labels, how = _match(objects)
    assert labels == [] and how == (
        "referenced by MachineDeployment c1-md-0, whose Cluster is not resolved "
        "(--namespace, cluster.x-k8s.io/cluster-name)"
    )
    labels, _ = _match(objects, namespace="ns2")
    assert labels == ["Cluster ns2/c1"]


def test_the_only_cluster_of_the_stream_serves_an_unresolved_reference() -> None:
    # the MachineDeployment names a cluster not in the stream: the one Cluster still serves
    objects = [_cluster("c1", "ns1", "192.168.0.0/16"), *_workers("MachineDeployment", "gone")]
    labels, how = _match(objects)
    assert labels == ["Cluster ns1/c1"] and how == "the only Cluster in the stream"


def test_a_label_on_an_object_without_a_namespace_finds_the_cluster_of_that_name() -> None:
    objects = [_cluster("c1", "ns1", "192.168.0.0/16"), _cluster("c2", "ns2", "10.1.0.0/16")]
    template: dict[str, Any] = {
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmConfigTemplate",
        "metadata": {"name": "t", "labels": {discovery.CLUSTER_NAME_LABEL: "c2"}},
    }
    labels, how = _match([*objects, template])
    assert labels == ["Cluster ns2/c2"] and "label" in how


def test_a_stream_without_a_cluster_says_so() -> None:
    """The hooks' half of a split post-render call (or a fragment) holds no Cluster: the
    node objects get the profile's NO_PROXY only, and the report says why."""
    owner, template = _workers("MachineDeployment", "c1")
    assert _match([template]) == (
        [],
        "the stream holds no Cluster (its networks are not in NO_PROXY)",
    )
    assert _match([owner, template]) == (
        [],
        "referenced by MachineDeployment c1-md-0, whose Cluster is not in the stream",
    )


def test_the_workers_nodes_get_the_cluster_cidrs_end_to_end() -> None:
    cluster = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: c1
  namespace: ns1
spec:
  clusterNetwork:
    pods:
      cidrBlocks: [192.168.0.0/16]
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata:
  name: c1-mp-0
spec:
  clusterName: c1
  template:
    spec:
      bootstrap:
        configRef:
          kind: KubeadmConfig
          name: c1-mp-0
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfig
metadata:
  name: c1-mp-0
spec:
  preKubeadmCommands: [echo]
"""
    proc = run_cli([str(SHARED_PROFILE), "--report"], cluster.encode())
    assert proc.returncode == 0, proc.stderr
    assert b"192.168.0.0/16" in proc.stdout.split(b"\nkind: KubeadmConfig\n")[1]
    assert b"NO_PROXY for Cluster ns1/c1 (referenced by MachinePool c1-mp-0)" in proc.stderr
