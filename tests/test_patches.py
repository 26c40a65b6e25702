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
