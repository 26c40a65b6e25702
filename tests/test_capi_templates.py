"""Kubeadm objects without their KubeadmConfigSpec (v1beta2 allows a
KubeadmConfigTemplate without spec.template.spec), and secret mode's Secret per
cluster and its exact removal from a stream without a final newline."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from proxy_postrender.yamltext.spool import Output
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

SECRET_PROFILE = GOLDEN / "capi-secret" / "profile.yaml"
HEAD = """\
apiVersion: bootstrap.cluster.x-k8s.io/{version}
kind: KubeadmConfigTemplate
metadata:
  name: workers
  namespace: ns1
"""


def _run(stream: str, *args: str, profile: Path = SHARED_PROFILE) -> str:
    proc = run_cli([str(profile), *args], stream.encode())
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


@pytest.mark.parametrize(
    ("version", "rest", "record"),
    [
        ("v1beta2", "", "created=spec"),
        (
            "v1beta2",
            "spec:\n  template:\n    metadata: {labels: {a: b}}\n",
            "created=spec.template.spec",
        ),
        ("v1beta1", "spec:\n  template: {}\n", "created=spec.template:{}"),
        ("v1beta2", "spec:\n  template:\n    spec:\n", "created=spec.template.spec:null"),
    ],
)
def test_a_missing_spec_is_created_and_given_back(version: str, rest: str, record: str) -> None:
    stream = HEAD.format(version=version) + rest
    out = _run(stream)
    assert record in out
    assert "      files:\n" in out and "      preKubeadmCommands:\n" in out
    assert _run(out) == out
    assert _run(out, "--remove") == stream


def test_what_the_manifest_adds_under_a_created_spec_stays_on_removal() -> None:
    out = _run(HEAD.format(version="v1beta2"))
    edited = out.replace("    spec:\n", "    spec:\n      format: ignition\n", 1)
    removed = _run(edited, "--remove")
    assert "node-bootstrap" not in removed and "files:" not in removed
    assert removed.endswith("spec:\n  template:\n    spec:\n      format: ignition\n")


@pytest.mark.parametrize(
    ("stream", "missing"),
    [
        (
            "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\n"
            "metadata: {name: cp}\nspec:\n  version: v1.32.2\n",
            "spec.kubeadmConfigSpec is missing, and the KubeadmControlPlane CRD (v1beta1)",
        ),
        (
            HEAD.format(version="v1beta2") + "spec: {}\n",
            "spec.template is missing, and the KubeadmConfigTemplate CRD (v1beta2)",
        ),
    ],
)
def test_a_level_the_crd_requires_is_an_error_not_made_up(stream: str, missing: str) -> None:
    proc = run_cli([str(SHARED_PROFILE)], stream.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    assert missing in proc.stderr.decode()
    assert len(proc.stderr.decode().strip().splitlines()) == 1
    assert run_cli([str(SHARED_PROFILE), "--remove"], stream.encode()).stdout == stream.encode()


def test_a_v1beta2_control_plane_without_kubeadm_config_spec_gets_one() -> None:
    stream = (
        "apiVersion: controlplane.cluster.x-k8s.io/v1beta2\nkind: KubeadmControlPlane\n"
        "metadata:\n  name: cp\nspec:\n  version: v1.32.2\n"
    )
    out = _run(stream)
    assert "created=spec.kubeadmConfigSpec" in out and "  kubeadmConfigSpec:\n    files:\n" in out
    assert _run(out, "--remove") == stream


CLUSTER = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: c1
  namespace: ns1
spec:
  controlPlaneRef:
    kind: KubeadmControlPlane
    name: c1-cp
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: c1-cp
  namespace: ns1
spec:
  kubeadmConfigSpec:
    preKubeadmCommands: [echo cp]
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: c1-md-0
spec:
  template:
    spec:
      preKubeadmCommands: [echo md]"""


def test_secret_mode_makes_one_secret_per_cluster() -> None:
    # neither object has a cluster-name label: the Cluster they serve names the Secret
    out = _run(CLUSTER, profile=SECRET_PROFILE)
    # the name carries the digest of the Secret's content (rollout/, nodes/digest.py)
    names = re.findall(r"name: (c1-systemd-proxy-[0-9a-f]{10})\n", out)
    assert len(names) == 7 and len(set(names)) == 1  # 3 files in each object, the Secret
    assert out.count("\nkind: Secret\n") == 1
    secret = out.split("\nkind: Secret\n")[1]
    assert "  namespace: ns1\n" in secret and "cluster.x-k8s.io/cluster-name: c1" in secret


@pytest.mark.parametrize("stream", [CLUSTER, CLUSTER + "\n"])
def test_secret_mode_keeps_the_input_ending(stream: str) -> None:
    out = _run(stream, profile=SECRET_PROFILE)
    assert out.endswith("\n") == stream.endswith("\n")
    assert _run(out, profile=SECRET_PROFILE) == out
    assert _run(out, "--remove", profile=SECRET_PROFILE) == stream
    # a profile that makes no such Secret keeps it as it is; --remove still gives back
    # the input, without the newline the tool wrote before the Secret
    inline = _run(out)
    assert "kind: Secret" in inline and inline.endswith("\n") == stream.endswith("\n")
    assert _run(inline, "--remove") == stream


@pytest.mark.parametrize("limit", [None, 4])
def test_the_spool_takes_back_a_final_newline(limit: int | None) -> None:
    out = Output(memory_limit=limit)
    out.write("a: b\n")
    out.write("c: d\n")
    out.drop_final_newline()
    assert out.partial_line()
    out.drop_final_newline()  # no newline at the end now: nothing to take back
    out.write("\n---\n")
    assert out.text() == "a: b\nc: d\n---\n"
