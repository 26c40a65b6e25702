"""End to end through kpt and kubectl kustomize (both part of the machine image).

The KRM function runs as `kpt fn eval --exec` and in a Kptfile pipeline with
`kpt fn render --allow-exec`; the legacy exec plugin runs in
`kubectl kustomize --enable-alpha-plugins` after `kustomize-plugin install`.
A missing tool fails these tests, never skips them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender.yamltext import libyaml
from tests.e2e import PROXY_VARS, tool
from tests.helpers import FIXTURES, SHARED_PROFILE, run_cli

DEPLOYMENT = """\
# the web tier
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web  # keep me
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app  # main container
        image: nginx
        envFrom:
        - configMapRef:
            name: settings
"""
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata:\n  a: '1'\n"
BAD_PROFILE = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: bad}\n"
    "spec:\n  httpProxy: proxy:3128\n"
)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not on PATH (it is part of the machine image)")
    return path


def _env() -> dict[str, str]:
    """PATH with this interpreter's scripts first, so that the tools find proxy-postrender."""
    scripts = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROXY_POSTRENDER")}
    env["PATH"] = scripts + os.pathsep + env.get("PATH", "")
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        args, cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=120, check=False
    )


def _env_names(doc: Any) -> list[str]:
    containers = doc["spec"]["template"]["spec"]["containers"]
    return [item["name"] for item in containers[0].get("env", [])]


def _package(root: Path) -> Path:
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "deploy.yaml").write_text(DEPLOYMENT)
    (pkg / "other.yaml").write_text(CONFIGMAP)
    return pkg


def test_kpt_fn_eval_exec_injects_and_keeps_comments(tmp_path: Path) -> None:
    kpt = _tool("kpt")
    pkg = _package(tmp_path)
    shutil.copy(SHARED_PROFILE, tmp_path / "profile.yaml")
    args = [kpt, "fn", "eval", "pkg", "--exec", "proxy-postrender", "--fn-config", "profile.yaml"]
    proc = _run(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (pkg / "deploy.yaml").read_text()
    assert text.startswith("# the web tier\n")
    assert "# keep me" in text and "# main container" in text
    (doc,) = libyaml.load_data(text)
    assert _env_names(doc) == list(PROXY_VARS)
    assert (pkg / "other.yaml").read_text() == CONFIGMAP
    assert "Deployment/shop/web" in proc.stderr + proc.stdout  # kpt shows the results
    # a second run changes nothing
    assert _run(args, tmp_path).returncode == 0
    assert (pkg / "deploy.yaml").read_text() == text


def test_kpt_fn_eval_takes_a_configmap_from_key_value_arguments(tmp_path: Path) -> None:
    kpt = _tool("kpt")
    pkg = _package(tmp_path)
    proc = _run(
        [kpt, "fn", "eval", "pkg", "--exec", "proxy-postrender", "--", "httpsProxy=http://p:8080"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    (doc,) = libyaml.load_data((pkg / "deploy.yaml").read_text())
    assert _env_names(doc) == ["HTTPS_PROXY", "NO_PROXY", "https_proxy", "no_proxy"]


def test_kpt_fn_eval_error_fails_and_leaves_the_package_alone(tmp_path: Path) -> None:
    kpt = _tool("kpt")
    pkg = _package(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD_PROFILE)
    args = [kpt, "fn", "eval", "pkg", "--exec", "proxy-postrender", "--fn-config", "bad.yaml"]
    proc = _run(args, tmp_path)
    assert proc.returncode != 0
    assert "proxy URL 'proxy:3128' needs a scheme" in proc.stderr + proc.stdout
    assert (pkg / "deploy.yaml").read_text() == DEPLOYMENT


def test_kpt_fn_render_runs_the_kptfile_pipeline(tmp_path: Path) -> None:
    kpt = _tool("kpt")
    pkg = _package(tmp_path)
    shutil.copy(SHARED_PROFILE, pkg / "profile.yaml")
    executable = shutil.which("proxy-postrender", path=_env()["PATH"])
    assert executable is not None
    (pkg / "Kptfile").write_text(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n"
        f"  mutators:\n  - exec: {executable}\n    configPath: profile.yaml\n"
    )
    proc = _run([kpt, "fn", "render", "pkg", "--allow-exec"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    (doc,) = libyaml.load_data((pkg / "deploy.yaml").read_text())
    assert _env_names(doc) == list(PROXY_VARS)
    assert (pkg / "profile.yaml").read_text() == SHARED_PROFILE.read_text()


def _kustomize_tree(root: Path, profile: str) -> Path:
    base, overlay = root / "base", root / "overlay"
    base.mkdir()
    overlay.mkdir()
    (base / "deploy.yaml").write_text(DEPLOYMENT.replace("  namespace: shop\n", ""))
    (base / "kustomization.yaml").write_text(
        "resources: [deploy.yaml]\nconfigMapGenerator:\n- name: settings\n  literals: [MODE=prod]\n"
    )
    (overlay / "profile.yaml").write_text(profile)
    (overlay / "kustomization.yaml").write_text(
        "resources: [../base]\nnamePrefix: shop-\ntransformers: [profile.yaml]\n"
    )
    return overlay


def test_kubectl_kustomize_runs_the_installed_exec_plugin(tmp_path: Path) -> None:
    kubectl = _tool("kubectl")
    home = tmp_path / "plugins"
    install = run_cli(["kustomize-plugin", "install", "--plugin-home", str(home)])
    assert install.returncode == 0, install.stderr
    plugin = home / "proxy-postrender.io" / "v1alpha1" / "proxyprofile" / "ProxyProfile"
    assert os.access(plugin, os.X_OK)
    overlay = _kustomize_tree(tmp_path, SHARED_PROFILE.read_text())
    env = dict(_env(), KUSTOMIZE_PLUGIN_HOME=str(home), PATH="/usr/bin:/bin")
    proc = _run([kubectl, "kustomize", "--enable-alpha-plugins", str(overlay)], tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    docs = {d["kind"]: d for d in libyaml.load_data(proc.stdout)}
    configmap, deployment = docs["ConfigMap"], docs["Deployment"]
    # the generated name (prefix + content hash) and the reference to it survive
    assert configmap["metadata"]["name"].startswith("shop-settings-")
    spec = deployment["spec"]["template"]["spec"]["containers"][0]
    assert spec["envFrom"][0]["configMapRef"]["name"] == configmap["metadata"]["name"]
    assert deployment["metadata"]["name"] == "shop-web"
    assert _env_names(deployment) == list(PROXY_VARS)


def test_kubectl_kustomize_shows_the_plugins_error(tmp_path: Path) -> None:
    kubectl = _tool("kubectl")
    home = tmp_path / "plugins"
    assert run_cli(["kustomize-plugin", "install", "--plugin-home", str(home)]).returncode == 0
    overlay = _kustomize_tree(tmp_path, BAD_PROFILE)
    env = dict(_env(), KUSTOMIZE_PLUGIN_HOME=str(home))
    proc = _run([kubectl, "kustomize", "--enable-alpha-plugins", str(overlay)], tmp_path, env)
    assert proc.returncode != 0 and proc.stdout == ""
    assert "proxy URL 'proxy:3128' needs a scheme" in proc.stderr


# --- issue 27 finding 5: the plugin's config is the kustomization author's ------------------

TOKEN = "glpat-Zq7xLeakMe"  # what a CI job's CI_DEPLOY_TOKEN holds
BASE_PROFILE = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: base}\n"
    "spec:\n  httpProxy: http://proxy.corp.example:3128\n"
)


def _plugin_build(
    root: Path, spec: str, env: dict[str, str], files: dict[str, Path] | None = None
) -> Any:
    """``kubectl kustomize --enable-alpha-plugins`` of an overlay of a base (as a remote base
    would be) whose own ``transformers:`` lists a ProxyProfile with ``spec``; ``files``:
    copied into the base (its relative path: the source)."""
    home = root / "plugins"
    assert run_cli(["kustomize-plugin", "install", "--plugin-home", str(home)]).returncode == 0
    overlay = _kustomize_tree(root, BASE_PROFILE)
    base = root / "base"
    (base / "profile.yaml").write_text(BASE_PROFILE + spec)
    for name, source in (files or {}).items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, base / name)
    with (base / "kustomization.yaml").open("a") as handle:
        handle.write("transformers: [profile.yaml]\n")
    (overlay / "kustomization.yaml").write_text("resources: [../base]\n")
    full = dict(_env(), KUSTOMIZE_PLUGIN_HOME=str(home), **env)
    return _run([_tool("kubectl"), "kustomize", "--enable-alpha-plugins", str(overlay)], root, full)


def test_a_kustomize_base_puts_no_environment_variable_into_the_manifests(tmp_path: Path) -> None:
    proc = _plugin_build(
        tmp_path,
        "  workloads:\n    extraEnv:\n    - {name: TOKEN, value: '${CI_DEPLOY_TOKEN}'}\n",
        {"CI_DEPLOY_TOKEN": TOKEN, "PROXY_POSTRENDER_ALLOW_ENV": "1"},
    )
    assert proc.returncode != 0 and proc.stdout == ""
    assert TOKEN not in proc.stderr
    assert "spec.workloads.extraEnv[0].value: '${CI_DEPLOY_TOKEN}' is not expanded" in proc.stderr


def test_a_kustomize_base_reads_the_environment_only_when_allowed(tmp_path: Path) -> None:
    spec = "  httpsProxy: http://build:${PROXY_PASSWORD}@proxy.corp.example:3128\n"
    refused = _plugin_build(tmp_path / "a", spec, {"PROXY_PASSWORD": TOKEN})
    assert refused.returncode != 0 and refused.stdout == ""
    assert TOKEN not in refused.stderr
    assert (
        "spec.httpsProxy: '${PROXY_PASSWORD}': this profile comes with the input (the config "
        "of a kustomize exec plugin) and reads no environment variable unless allowed; allow "
        "it with PROXY_POSTRENDER_ALLOW_ENV=1 if you trust whoever writes it"
    ) in refused.stderr
    allowed = {"PROXY_PASSWORD": TOKEN, "PROXY_POSTRENDER_ALLOW_ENV": "1"}
    proc = _plugin_build(tmp_path / "b", spec, allowed)
    assert proc.returncode == 0, proc.stderr
    assert f"http://build:{TOKEN}@proxy.corp.example:3128" in proc.stdout


def test_a_kustomize_plugins_own_arguments_do_not_allow_the_environment(tmp_path: Path) -> None:
    """kustomize passes a config's ``argsOneLiner`` after its path: ``--allow-env`` there is
    the config author's word, not the user's (only the environment allows)."""
    profile = tmp_path / "kust-plugin-config-1"
    profile.write_text(BASE_PROFILE.replace("http://proxy", "http://build:${PROXY_PASSWORD}@proxy"))
    env = {"KUSTOMIZE_PLUGIN_CONFIG_ROOT": str(tmp_path), "PROXY_PASSWORD": TOKEN}
    proc = run_cli([str(profile), "--allow-env"], DEPLOYMENT.encode(), env=env)
    assert proc.returncode == 2 and proc.stdout == b""
    assert TOKEN.encode() not in proc.stderr
    assert b"takes the config's path alone: the 1 argument(s) after it" in proc.stderr
    alone = run_cli([str(profile)], DEPLOYMENT.encode(), env=env)
    assert alone.returncode == 2 and TOKEN.encode() not in alone.stderr
    assert b"allow it with PROXY_POSTRENDER_ALLOW_ENV=1 if you trust" in alone.stderr
    allowed = run_cli(
        [str(profile)], DEPLOYMENT.encode(), env={**env, "PROXY_POSTRENDER_ALLOW_ENV": "1"}
    )
    assert allowed.returncode == 0, allowed.stderr


def test_a_kustomize_base_reads_ca_files_only_in_its_directory(tmp_path: Path) -> None:
    """A relative file is the kustomization's (not kustomize's temporary copy's, in /tmp);
    nothing outside that directory is read."""
    ca = FIXTURES / "golden" / "ca-workloads" / "corp-ca.pem"
    for name in (
        "/etc/ssl/certs/ca-certificates.crt",
        "../../../../../../etc/ssl/certs/ca-certificates.crt",
    ):
        spec = f"  caBundle: {{file: '{name}', workloads: true}}\n"
        proc = _plugin_build(tmp_path / str(len(name)), spec, {})
        assert proc.returncode != 0 and proc.stdout == ""
        assert f"spec.caBundle.file: '{name}' is outside {tmp_path / str(len(name)) / 'base'}" in (
            proc.stderr
        )
    spec = "  caBundle: {file: certs/ca.pem, workloads: true}\n"
    proc = _plugin_build(tmp_path / "inside", spec, {}, {"certs/ca.pem": ca})
    assert proc.returncode == 0, proc.stderr
    assert "proxy-ca-bundle" in proc.stdout


def test_flux_patches_applied_by_kustomize_equal_the_direct_path(tmp_path: Path) -> None:
    kubectl = _tool("kubectl")
    helm = tool("HELM3_BIN", "helm3")
    render = _run([helm, "template", "web", str(FIXTURES / "charts" / "demo")], tmp_path)
    assert render.returncode == 0, render.stderr
    (tmp_path / "render.yaml").write_text(render.stdout)
    patches = run_cli(["patches", str(SHARED_PROFILE)], render.stdout.encode())
    assert patches.returncode == 0, patches.stderr
    direct = run_cli([str(SHARED_PROFILE)], render.stdout.encode())
    assert direct.returncode == 0, direct.stderr
    listed = libyaml.load_data(patches.stdout.decode())[0]
    assert {p["target"]["kind"] for p in listed} >= {"Deployment", "DaemonSet", "CronJob"}
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [render.yaml]\npatches:\n" + patches.stdout.decode()
    )
    proc = _run([kubectl, "kustomize", str(tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stderr

    def by_name(text: str) -> dict[tuple[str, str], Any]:
        return {
            (d["kind"], d["metadata"]["name"]): d
            for d in libyaml.load_data(text)
            if isinstance(d, dict)
        }

    def env_as_map(node: Any) -> Any:
        """kustomize's merge puts the new env entries first, the direct path appends them:
        compare env lists by name (the API server keys them by name too)."""
        if isinstance(node, dict):
            return {
                k: {e["name"]: e for e in v} if k == "env" else env_as_map(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [env_as_map(item) for item in node]
        return node

    patched, expected = by_name(proc.stdout), by_name(direct.stdout.decode())
    assert patched.keys() == expected.keys()
    for key, doc in expected.items():
        assert env_as_map(patched[key]) == env_as_map(doc), key
    assert sum("proxy.corp.example" in str(doc) for doc in patched.values()) >= 5


TWO_NAMESPACES = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: a}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        env:
        - name: HTTP_PROXY
          valueFrom: {secretKeyRef: {name: chart-proxy, key: url}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: b}
spec:
  template:
    spec:
      containers:
      - name: other
        image: nginx
"""


def test_flux_patches_keep_namespaces_apart_and_replace_value_from(tmp_path: Path) -> None:
    kubectl = _tool("kubectl")
    args = ["--http-proxy", "http://p:1", "--on-conflict", "override"]
    patches = run_cli(["patches", *args], TWO_NAMESPACES.encode())
    assert patches.returncode == 0, patches.stderr
    direct = run_cli(args, TWO_NAMESPACES.encode())
    (tmp_path / "render.yaml").write_text(TWO_NAMESPACES)
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [render.yaml]\npatches:\n" + patches.stdout.decode()
    )
    proc = _run([kubectl, "kustomize", str(tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stderr

    def by_key(text: str) -> dict[tuple[str, str], Any]:
        docs = [d for d in libyaml.load_data(text) if isinstance(d, dict)]
        return {(d["metadata"]["namespace"], d["metadata"]["name"]): d for d in docs}

    patched, expected = by_key(proc.stdout), by_key(direct.stdout.decode())
    for key, doc in expected.items():
        containers = patched[key]["spec"]["template"]["spec"]["containers"]
        want = doc["spec"]["template"]["spec"]["containers"]
        assert [c["name"] for c in containers] == [c["name"] for c in want], key
        for got, wanted in zip(containers, want, strict=True):
            assert {e["name"]: e for e in got["env"]} == {e["name"]: e for e in wanted["env"]}


def test_patches_say_that_cluster_api_objects_are_left_out() -> None:
    from tests.helpers import GOLDEN

    stream = (GOLDEN / "capi-v1beta1" / "input.yaml").read_bytes()
    proc = run_cli(["patches", str(SHARED_PROFILE)], stream)
    assert proc.returncode == 0
    assert b"Cluster API kubeadm objects are not expressed as patches" in proc.stderr


def test_patches_follow_the_profiles_workload_rules(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: p}\n"
        "spec:\n  httpProxy: http://p:1\n  workloads:\n    exclude: {namespaces: [b]}\n"
    )
    proc = run_cli(["patches", str(profile)], TWO_NAMESPACES.encode())
    assert proc.returncode == 0, proc.stderr
    listed = libyaml.load_data(proc.stdout.decode())[0]
    assert [p["target"]["namespace"] for p in listed] == ["a"]


def test_flux_patches_carry_the_ca_mount_and_name_what_they_cannot(tmp_path: Path) -> None:
    from tests.helpers import GOLDEN

    kubectl = _tool("kubectl")
    case = GOLDEN / "ca-workloads"
    render = case.joinpath("input.yaml").read_text()
    patches = run_cli(["patches", "profile.yaml"], render.encode(), cwd=case)
    assert patches.returncode == 0, patches.stderr
    assert b"Secrets/ConfigMaps the profile makes are no patches" in patches.stderr
    (tmp_path / "render.yaml").write_text(render)
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [render.yaml]\npatches:\n" + patches.stdout.decode()
    )
    proc = _run([kubectl, "kustomize", str(tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    direct = [
        d
        for d in libyaml.load_data(case.joinpath("expected.yaml").read_text())
        if d["kind"] != "ConfigMap"
    ]
    patched = {d["metadata"]["name"]: d for d in libyaml.load_data(proc.stdout)}
    for doc in direct:
        spec = doc["spec"]["template"]["spec"] if doc["kind"] == "Deployment" else None
        if spec is None:
            continue
        got = patched[doc["metadata"]["name"]]["spec"]["template"]["spec"]
        assert {v["name"] for v in got["volumes"]} == {v["name"] for v in spec["volumes"]}
        for mine, theirs in zip(got["containers"], spec["containers"], strict=True):

            def mounts(c: Any) -> list[list[tuple[str, Any]]]:
                return sorted(sorted(m.items()) for m in c.get("volumeMounts", []))

            assert mounts(mine) == mounts(theirs)


def test_a_kustomize_config_cannot_name_a_file_for_the_tool_to_write(tmp_path: Path) -> None:
    """Found in an adversarial test: kustomize passes a config's ``argsOneLiner`` after its
    path, and ``--log-file`` there made the tool append to a file the config's author
    chose (the build failed after). Now the arguments are refused before anything is
    opened, through the real ``kubectl kustomize``."""
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    created = tmp_path / "created.txt"
    spec = f"argsOneLiner: --log-file {victim} --report={created}\n"
    proc = _plugin_build(tmp_path / "k", spec, {})
    assert proc.returncode != 0 and proc.stdout == ""
    assert "takes the config's path alone" in proc.stderr
    assert victim.read_text() == "untouched\n" and not created.exists()
