"""The KRM function contract, through the console script."""

from __future__ import annotations

import json
from typing import Any

from proxy_postrender.yamltext import libyaml
from tests.e2e import PROXY_VARS
from tests.helpers import SHARED_PROFILE, run_cli

ANNOTATIONS = (
    "      config.kubernetes.io/index: '0'\n"
    "      internal.config.kubernetes.io/path: deploy.yaml\n"
    "      kustomize.config.k8s.io/id: |\n        kind: Deployment\n        name: web\n"
    "      config.kubernetes.io/previousNames: web-old\n"
)


def _resource_list(items: str, config: str | None) -> bytes:
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:" + items
    if config is not None:
        text += "functionConfig:\n" + "".join("  " + line + "\n" for line in config.splitlines())
    return text.encode()


DEPLOY_ITEM = (
    "\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: web\n    annotations:\n"
    + ANNOTATIONS
    + "  spec:\n    template:\n      spec:\n        containers:\n        - name: app  # main\n"
    "          image: nginx\n"
)
OTHER_ITEM = "\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: svc\n"


def _out(proc: Any) -> Any:
    (doc,) = libyaml.load_data(proc.stdout.decode())
    return doc


def test_items_are_transformed_and_every_annotation_kept() -> None:
    proc = run_cli([], _resource_list(DEPLOY_ITEM + OTHER_ITEM, SHARED_PROFILE.read_text()))
    assert proc.returncode == 0, proc.stderr
    assert b"# main" in proc.stdout
    out = _out(proc)
    deploy, service = out["items"]
    annotations = deploy["metadata"]["annotations"]
    assert annotations["kustomize.config.k8s.io/id"] == "kind: Deployment\nname: web\n"
    assert annotations["config.kubernetes.io/previousNames"] == "web-old"
    assert annotations["internal.config.kubernetes.io/path"] == "deploy.yaml"
    env = deploy["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == list(PROXY_VARS)
    assert service == {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}
    (info,) = [r for r in out["results"] if "resourceRef" in r]
    assert info["resourceRef"] == {"kind": "Deployment", "name": "web"}
    assert out["functionConfig"]["kind"] == "ProxyProfile"


def test_a_configmap_function_config_carries_the_basic_fields() -> None:
    config = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fn}\ndata:\n  httpProxy: http://p:1\n"
    )
    out = _out(run_cli([], _resource_list(DEPLOY_ITEM, config)))
    env = out["items"][0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["HTTP_PROXY", "NO_PROXY", "http_proxy", "no_proxy"]
    bad = config + "  caBundle: x\n"
    proc = run_cli([], _resource_list(DEPLOY_ITEM, bad))
    assert proc.returncode == 2
    assert b"unknown key(s) caBundle" in proc.stderr


def test_an_error_returns_the_items_unchanged_with_an_error_result() -> None:
    broken = OTHER_ITEM + "\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n"
    broken += "    containers: nope\n"
    proc = run_cli([], _resource_list(DEPLOY_ITEM + broken, SHARED_PROFILE.read_text()))
    assert proc.returncode == 1
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and "spec.containers is not a list" in lines[0]
    out = _out(proc)
    assert len(out["items"]) == 3
    assert "env" not in out["items"][0]["spec"]["template"]["spec"]["containers"][0]
    (result,) = out["results"]
    assert result["severity"] == "error" and "spec.containers is not a list" in result["message"]


def test_no_profile_anywhere_is_an_error_result() -> None:
    proc = run_cli([], _resource_list(DEPLOY_ITEM, None))
    assert proc.returncode == 2
    assert b"no profile" in proc.stderr
    assert len(_out(proc)["items"]) == 1


def test_the_profile_argument_serves_when_there_is_no_function_config() -> None:
    proc = run_cli([str(SHARED_PROFILE)], _resource_list(DEPLOY_ITEM, None))
    assert proc.returncode == 0, proc.stderr
    assert "env" in _out(proc)["items"][0]["spec"]["template"]["spec"]["containers"][0]


def test_empty_items_stay_empty_and_removal_works() -> None:
    out = _out(run_cli([], _resource_list(" []\n", SHARED_PROFILE.read_text())))
    assert out["items"] == []
    injected = run_cli([], _resource_list(DEPLOY_ITEM, SHARED_PROFILE.read_text())).stdout
    removed = run_cli(["--remove"], injected)
    assert removed.returncode == 0, removed.stderr
    item = _out(removed)["items"][0]
    assert "env" not in item["spec"]["template"]["spec"]["containers"][0]
    assert "proxy-postrender.io/injected" not in item["metadata"]["annotations"]


def test_an_empty_configmap_from_kpt_means_no_function_config() -> None:
    empty = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: function-input}\ndata: {}\n"
    proc = run_cli([str(SHARED_PROFILE)], _resource_list(DEPLOY_ITEM, empty))
    assert proc.returncode == 0, proc.stderr
    removed = run_cli(["--remove"], _resource_list(DEPLOY_ITEM, empty))
    assert removed.returncode == 0, removed.stderr


def test_secret_mode_items_may_gain_the_generated_secret(tmp_path: Any) -> None:
    from tests.helpers import GOLDEN

    profile = tmp_path / "p.yaml"
    profile.write_text(SHARED_PROFILE.read_text() + "  nodes:\n    credentials: secret\n")
    docs = list(libyaml.load_data((GOLDEN / "capi-v1beta1" / "input.yaml").read_text()))

    items = "".join("\n- " + json.dumps(d) for d in docs if isinstance(d, dict))
    first = run_cli([str(profile)], _resource_list(items, None))
    assert first.returncode == 0, first.stderr
    out = _out(first)
    kinds = [item["kind"] for item in out["items"]]
    secrets = kinds.count("Secret")
    assert secrets >= 1 and len(kinds) == len(docs) + secrets
    second = run_cli([str(profile)], first.stdout)
    assert second.returncode == 0, second.stderr
    assert _out(second)["items"] == out["items"]
    removed = run_cli(["--remove"], first.stdout)
    assert removed.returncode == 0, removed.stderr
    assert "Secret" not in [item["kind"] for item in _out(removed)["items"]]
