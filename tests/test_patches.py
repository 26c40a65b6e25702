"""`proxy-postrender patches`: the env entries of a patch carry what the tool wrote, and a
null for the other of value/valueFrom only where the render's entry holds that field.

kubectl (kustomize 5.5) is part of the machine image; a missing kubectl fails the test
that applies the patches.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from proxy_postrender.yamltext import libyaml
from tests.e2e import tool
from tests.helpers import run_cli

PLAIN = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        env:
        - name: LOG_LEVEL
          value: debug
"""
# the chart sets HTTP_PROXY from its own Secret, and https_proxy as a value
MIXED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        env:
        - name: HTTP_PROXY
          valueFrom: {secretKeyRef: {name: chart-proxy, key: url}}
        - name: https_proxy
          value: http://chart.example:3128
"""
SECRET_PROFILE = """\
apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata: {name: p}
spec:
  httpProxy: http://proxy.corp.example:3128
  httpsProxy: http://proxy.corp.example:3128
  onConflict: override
  credentials: {secretRef: proxy-credentials}
"""


def _env(patches_stdout: bytes) -> list[dict[str, Any]]:
    (listed,) = libyaml.load_data(patches_stdout.decode())
    (item,) = listed
    (patch,) = libyaml.load_data(item["patch"])
    (container,) = patch["spec"]["template"]["spec"]["containers"]
    env: list[dict[str, Any]] = container["env"]
    return env


def test_patches_write_no_empty_value_from_for_new_entries() -> None:
    proc = run_cli(["patches", "--http-proxy", "http://p:1"], PLAIN.encode())
    assert proc.returncode == 0, proc.stderr
    assert b"valueFrom" not in proc.stdout
    for entry in _env(proc.stdout):
        assert set(entry) == {"name", "value"}, entry


def test_patches_null_only_the_field_an_overridden_entry_changes() -> None:
    args = ["patches", "--http-proxy", "http://p:1", "--https-proxy", "http://p:1"]
    proc = run_cli([*args, "--on-conflict", "override"], MIXED.encode())
    assert proc.returncode == 0, proc.stderr
    env = {e["name"]: e for e in _env(proc.stdout)}
    # the render's valueFrom must go: the patch nulls it
    assert env["HTTP_PROXY"] == {"name": "HTTP_PROXY", "value": "http://p:1", "valueFrom": None}
    # the render's value is replaced by the merge itself: nothing to null
    assert env["https_proxy"] == {"name": "https_proxy", "value": "http://p:1"}
    assert all(set(e) == {"name", "value"} for n, e in env.items() if n != "HTTP_PROXY")


def test_patches_from_a_secret_ref_null_the_renders_value(tmp_path: Path) -> None:
    kubectl = tool("KUBECTL_BIN", "kubectl")
    (tmp_path / "p.yaml").write_text(SECRET_PROFILE)
    proc = run_cli(["patches", "p.yaml"], MIXED.encode(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    env = {e["name"]: e for e in _env(proc.stdout)}
    assert env["https_proxy"]["value"] is None and "valueFrom" in env["https_proxy"]
    assert "value" not in env["HTTP_PROXY"]  # valueFrom in the render and in the patch
    assert "valueFrom" not in env["NO_PROXY"]
    # kustomize applies them to the render and gets what the direct path writes
    direct = run_cli(["p.yaml"], MIXED.encode(), cwd=tmp_path)
    assert direct.returncode == 0, direct.stderr
    (tmp_path / "render.yaml").write_text(MIXED)
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [render.yaml]\npatches:\n" + proc.stdout.decode()
    )
    applied = subprocess.run(
        [kubectl, "kustomize", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert applied.returncode == 0, applied.stderr

    def env_by_name(text: str) -> dict[str, Any]:
        (doc,) = libyaml.load_data(text)
        (container,) = doc["spec"]["template"]["spec"]["containers"]
        return {e["name"]: e for e in container["env"]}

    assert env_by_name(applied.stdout) == env_by_name(direct.stdout.decode())


# --- custom targets (spec.targets): a JSON patch, since kustomize merges no lists of a
# custom resource by name

CUSTOM_PROFILE = """\
apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata: {name: p}
spec:
  httpProxy: http://proxy.corp.example:3128
  httpsProxy: http://proxy.corp.example:3128
  noProxy: [.corp.example, 10.96.0.1]
  noProxyPresets: []
  targets:
  - apiVersion: argoproj.io/v1alpha1
    kind: Rollout
    podTemplate: $.spec.template
  - apiVersion: addon.open-cluster-management.io/v1alpha1
    kind: AddOnDeploymentConfig
    set:
      $.spec.proxyConfig.httpProxy: httpProxy
      $.spec.proxyConfig.httpsProxy: httpsProxy
      $.spec.proxyConfig.noProxy: noProxy
"""
# a pod template of a custom kind: a container with env of its own, one without, an init
# container; a second Rollout that already has annotations
ROLLOUT = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  strategy: {canary: {steps: [{setWeight: 20}]}}
  template:
    metadata: {labels: {app: web}}
    spec:
      initContainers:
      - name: migrate
        image: migrate
      containers:
      - name: app
        image: nginx
        env:
        - name: LOG_LEVEL
          value: debug
      - name: side
        image: busybox
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: api
  annotations: {team: core}
spec:
  template:
    spec:
      containers:
      - name: api
        image: api
        env: []
"""
# proxy fields: an object without them, one whose owner set one of them (kept)
ADDON = """\
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: proxy-config, namespace: cluster1}
spec:
  nodePlacement: {}
---
apiVersion: addon.open-cluster-management.io/v1alpha1
kind: AddOnDeploymentConfig
metadata: {name: partly-set, namespace: cluster2}
spec:
  proxyConfig:
    httpProxy: http://other-proxy:8080
"""


def _kustomized(tmp_path: Path, render: str, patches: bytes) -> list[Any]:
    """What ``kubectl kustomize`` makes of ``render`` with ``patches`` (parsed)."""
    kubectl = tool("KUBECTL_BIN", "kubectl")
    work = tmp_path / "kustomize"
    work.mkdir()
    (work / "render.yaml").write_text(render)
    (work / "kustomization.yaml").write_text(
        "resources: [render.yaml]\npatches:\n" + patches.decode()
    )
    applied = subprocess.run(
        [kubectl, "kustomize", str(work)], capture_output=True, text=True, timeout=120, check=False
    )
    assert applied.returncode == 0, applied.stderr
    return libyaml.load_data(applied.stdout)


def _by_identity(docs: list[Any]) -> dict[tuple[str, str], Any]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def _patches_equal_the_filter(tmp_path: Path, render: str) -> list[Any]:
    (tmp_path / "p.yaml").write_text(CUSTOM_PROFILE)
    proc = run_cli(["patches", "p.yaml"], render.encode(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    direct = run_cli(["p.yaml"], render.encode(), cwd=tmp_path)
    assert direct.returncode == 0, direct.stderr
    expected = _by_identity(libyaml.load_data(direct.stdout.decode()))
    patched = _by_identity(_kustomized(tmp_path, render, proc.stdout))
    # the whole objects, env order and all: the patch appends where the filter does
    assert patched == expected
    (listed,) = libyaml.load_data(proc.stdout.decode())
    return list(listed)


def test_patches_of_a_custom_pod_template_give_the_filters_output(tmp_path: Path) -> None:
    listed = _patches_equal_the_filter(tmp_path, ROLLOUT)
    assert [(p["target"]["kind"], p["target"]["name"]) for p in listed] == [
        ("Rollout", "web"),
        ("Rollout", "api"),
    ]
    assert listed[0]["target"]["namespace"] == "shop"
    # a JSON patch: JSON quotes every value, so YAML 1.1 readers cannot retype one
    ops = libyaml.load_data(listed[0]["patch"])[0]
    assert {"op": "test", "path": "/spec/template/spec/containers/0/name", "value": "app"} in ops


def test_patches_of_custom_proxy_fields_give_the_filters_output(tmp_path: Path) -> None:
    listed = _patches_equal_the_filter(tmp_path, ADDON)
    assert [p["target"]["name"] for p in listed] == ["proxy-config", "partly-set"]
    ops = libyaml.load_data(listed[1]["patch"])[0]
    assert "/spec/proxyConfig/httpProxy" not in {op["path"] for op in ops}  # the owner's


def test_a_patch_for_a_moved_container_fails_instead_of_patching_another(
    tmp_path: Path,
) -> None:
    (tmp_path / "p.yaml").write_text(CUSTOM_PROFILE)
    proc = run_cli(["patches", "p.yaml"], ROLLOUT.encode(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    moved = ROLLOUT.replace("- name: app\n", "- name: app0\n", 1)
    kubectl = tool("KUBECTL_BIN", "kubectl")
    work = tmp_path / "k"
    work.mkdir()
    (work / "render.yaml").write_text(moved)
    (work / "kustomization.yaml").write_text(
        "resources: [render.yaml]\npatches:\n" + proc.stdout.decode()
    )
    applied = subprocess.run(
        [kubectl, "kustomize", str(work)], capture_output=True, text=True, timeout=120, check=False
    )
    assert applied.returncode != 0 and "test failed" in applied.stderr


NAMELESS = """\
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {generateName: web-}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
"""


def test_a_custom_object_no_patch_can_target_is_named_and_strict_fails(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(CUSTOM_PROFILE)
    stream = (ADDON + "---\n" + NAMELESS).encode()
    proc = run_cli(["patches", "p.yaml"], stream, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (listed,) = libyaml.load_data(proc.stdout.decode())
    assert len(listed) == 2  # the AddOnDeploymentConfigs still get theirs
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert "document 3 (line 13, Rollout)" in lines[0]
    assert "no patch can target an object without a name" in lines[0]
    strict = run_cli(["patches", "p.yaml", "--strict"], stream, cwd=tmp_path)
    assert strict.returncode == 1 and strict.stdout == b""
    (line,) = strict.stderr.decode().splitlines()
    assert "document 3 (line 13, Rollout)" in line and "without a name" in line


def test_nameless_objects_are_paired_in_order_and_the_right_one_is_named(
    tmp_path: Path,
) -> None:
    """Found in review: objects without a name share one identity, so a changed one was
    compared with the first such object of the render and the warning named that one.
    They are paired in the order of the stream: the changed Rollout is the one named."""
    (tmp_path / "p.yaml").write_text(CUSTOM_PROFILE)
    unchanged = NAMELESS.split("spec:")[0] + "spec: {replicas: 1}\n"
    stream = (ADDON + "---\n" + unchanged + "---\n" + NAMELESS).encode()
    proc = run_cli(["patches", "p.yaml"], stream, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stderr.decode().splitlines()
    assert "document 4 (line 18, Rollout)" in line and "without a name" in line


def _in(namespace: str) -> bytes:
    return PLAIN.replace("namespace: shop", f"namespace: {namespace}").encode()


def test_patches_warn_when_targets_say_another_namespace_than_the_release(
    tmp_path: Path,
) -> None:
    """A newcomer's `helm template` without --namespace: a chart that writes
    .Release.Namespace says `default`, and the HelmRelease installing into `shop` renders
    `shop`, where these targets match nothing. --namespace names the release namespace."""
    proxy = ["--http-proxy", "http://proxy.corp.example:3128"]
    proc = run_cli(["patches", *proxy, "--namespace", "shop"], _in("default"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stderr.decode().splitlines()
    assert "1 patch targets are in namespace default, not shop (--namespace)" in line
    assert "helm template --namespace shop" in line
    # without --namespace, targets in `default` are pointed out
    proc = run_cli(["patches", *proxy], _in("default"), cwd=tmp_path)
    (line,) = proc.stderr.decode().splitlines()
    assert "patch targets say namespace default" in line and "--namespace NS" in line
    # the render's namespace is the release's: nothing to say
    for args in (["--namespace", "shop"], []):
        proc = run_cli(["patches", *proxy, *args], PLAIN.encode(), cwd=tmp_path)
        assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    proc = run_cli(["patches", *proxy, "--namespace", "default"], _in("default"), cwd=tmp_path)
    assert proc.stderr == b"", proc.stderr


GENERATED_NAMES = """\
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {generateName: web-}
  spec: {template: {spec: {containers: [{name: app, image: nginx}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: "", generateName: x-}
spec: {template: {spec: {containers: [{name: app, image: nginx}]}}}
"""


def test_patches_warn_for_every_workload_whose_generated_name_no_target_matches(
    tmp_path: Path,
) -> None:
    """generateName inside a `kind: List`, and an empty name beside generateName: the
    filter changes both, no patch can (there was no warning for either)."""
    proxy = ["--http-proxy", "http://proxy.corp.example:3128"]
    proc = run_cli(["patches", *proxy], GENERATED_NAMES.encode(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert libyaml.load_data(proc.stdout.decode()) == [[]]
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 2, lines
    assert "document 1" in lines[0] and "document 2" in lines[1]
    assert all("no patch can target an object without a name" in line for line in lines)
    strict = run_cli(["patches", *proxy, "--strict"], GENERATED_NAMES.encode(), cwd=tmp_path)
    assert strict.returncode == 1 and strict.stdout == b""
