"""The Argo CD Config Management Plugin, run exactly as deploy/argocd/plugin.yaml says.

The test takes the generate command from the plugin file (the same file
docs/argocd.md shows), runs it with bash in a copy of the demo chart, with the
environment Argo CD's repo-server gives a plugin (ARGOCD_APP_*, KUBE_VERSION,
the Application's env as ARGOCD_ENV_*), the real Helm 3 and this package on
PATH.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender.yamltext import libyaml
from tests.e2e import assert_all_injected, console_script, tool
from tests.helpers import FIXTURES, ROOT, SHARED_PROFILE

PLUGIN = ROOT / "deploy" / "argocd" / "plugin.yaml"
DOC = ROOT / "docs" / "argocd.md"


def _generate() -> list[str]:
    (plugin,) = libyaml.load_data(PLUGIN.read_text())
    generate = plugin["spec"]["generate"]
    return [*generate["command"], *generate["args"]]


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / "apps" / "web"
    shutil.copytree(FIXTURES / "charts" / "demo", path)
    return path


def _run(app: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    helm = tool("HELM3_BIN", "helm3")
    bindir = app.parent.parent.parent / "bin"
    bindir.mkdir(exist_ok=True)
    for name, target in (("helm", helm), ("proxy-postrender", console_script())):
        link = bindir / name
        if not link.exists():
            link.symlink_to(target)
    full_env = {
        "PATH": f"{bindir}:/usr/bin:/bin",
        "HOME": str(app.parent.parent.parent),
        "ARGOCD_APP_NAME": "web",
        "ARGOCD_APP_NAMESPACE": "shop",
        "ARGOCD_APP_SOURCE_PATH": "apps/web",
        "KUBE_VERSION": "1.32.0",
        # a worktree's tests run its own package (its console script is the venv's)
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        **env,
    }
    return subprocess.run(
        _generate(), cwd=app, env=full_env, capture_output=True, text=True, timeout=120, check=False
    )


def _docs(text: str) -> list[Any]:
    return [d for d in libyaml.load_data(text) if isinstance(d, dict)]


def test_the_doc_shows_the_plugin_file_as_it_is() -> None:
    assert PLUGIN.read_text() in DOC.read_text()
    assert (ROOT / "deploy" / "argocd" / "sidecar-patch.yaml").read_text() in DOC.read_text()


def test_profile_from_the_repository(app: Path) -> None:
    shutil.copy(SHARED_PROFILE, app / "proxy-profile.yaml")
    proc = _run(app, {})
    assert proc.returncode == 0, proc.stderr
    # helm template renders hooks into the stream, so they get the variables too
    assert assert_all_injected(proc.stdout, hooks=True) > 0
    kinds = {d["kind"] for d in _docs(proc.stdout)}
    assert {"Deployment", "StatefulSet", "DaemonSet", "CronJob", "Job"} <= kinds


def test_profile_path_and_fields_from_the_application_env(app: Path) -> None:
    shutil.copy(SHARED_PROFILE, app / "corp.yaml")
    proc = _run(
        app,
        {"ARGOCD_ENV_PROXY_PROFILE": "corp.yaml", "ARGOCD_ENV_HTTPS_PROXY": "http://other:8080"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "http://other:8080" in proc.stdout and "http://proxy.corp.example:3128" in proc.stdout
    only_env = _run(app, {"ARGOCD_ENV_HTTP_PROXY": "http://envonly:3128"})
    assert only_env.returncode == 0, only_env.stderr
    assert "http://envonly:3128" in only_env.stdout


def test_proxy_urls_from_the_application_env_never_become_arguments(app: Path) -> None:
    """Finding 7: arguments show in ps; the plugin hands the values over in the
    environment (PROXY_POSTRENDER_HTTP_PROXY...)."""
    bindir = app.parent.parent.parent / "bin"
    bindir.mkdir()
    seen = bindir / "argv"
    wrapper = bindir / "proxy-postrender"  # records its arguments, then runs the tool
    wrapper.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {shlex.quote(str(seen))}\n'
        f'exec {shlex.quote(console_script())} "$@"\n'
    )
    wrapper.chmod(0o755)
    url = "http://build:Zq7xArgoPw@proxy.corp.example:3128"
    proc = _run(app, {"ARGOCD_ENV_HTTP_PROXY": url, "ARGOCD_ENV_NO_PROXY": "only-env.example"})
    assert proc.returncode == 0, proc.stderr
    assert url in proc.stdout and "only-env.example" in proc.stdout
    assert "Zq7xArgoPw" not in seen.read_text() and "only-env" not in seen.read_text()


def test_a_failing_render_fails_and_prints_nothing(app: Path) -> None:
    shutil.copy(SHARED_PROFILE, app / "proxy-profile.yaml")
    proc = _run(app, {"ARGOCD_ENV_HELM_ARGS": "--set failRender=true"})
    assert proc.returncode != 0
    assert proc.stdout == ""
    assert "failRender is set" in proc.stderr


def test_a_bad_profile_fails_and_prints_nothing(app: Path) -> None:
    (app / "proxy-profile.yaml").write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: b}\n"
        "spec:\n  httpProxy: proxy:3128\n"
    )
    proc = _run(app, {})
    assert proc.returncode == 2 and proc.stdout == ""
    assert "needs a scheme" in proc.stderr


def test_no_profile_at_all_is_a_clear_error(app: Path) -> None:
    proc = _run(app, {})
    assert proc.returncode == 2 and proc.stdout == ""
    assert "no profile" in proc.stderr
    (plugin,) = libyaml.load_data(PLUGIN.read_text())
    assert "discover" not in plugin["spec"]  # it would take over every Helm application


def test_crds_and_api_versions_reach_helm(app: Path) -> None:
    shutil.copy(SHARED_PROFILE, app / "proxy-profile.yaml")
    (app / "crds").mkdir()
    (app / "crds" / "widget.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: widgets.example.com}\n"
    )
    (app / "templates" / "caps.yaml").write_text(
        '{{- if .Capabilities.APIVersions.Has "example.com/v1" }}\n'
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: has-example}\n{{- end }}\n"
    )
    proc = _run(app, {"KUBE_API_VERSIONS": "v1,example.com/v1"})
    assert proc.returncode == 0, proc.stderr
    names = {d["metadata"]["name"] for d in _docs(proc.stdout)}
    assert {"widgets.example.com", "has-example"} <= names


# --- issue 27 finding 5: the profile from the repository is the application's -----------

TOKEN = "glpat-Zq7xLeakMe"  # a variable of the sidecar's environment
REPO_PROFILE = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: app}\n"
    "spec:\n  httpProxy: http://proxy.corp.example:3128\n"
)


def test_the_repository_profile_puts_no_environment_variable_into_the_manifests(
    app: Path,
) -> None:
    (app / "proxy-profile.yaml").write_text(
        REPO_PROFILE
        + "  workloads:\n    extraEnv:\n    - {name: TOKEN, value: '${CI_DEPLOY_TOKEN}'}\n"
    )
    proc = _run(app, {"CI_DEPLOY_TOKEN": TOKEN, "PROXY_POSTRENDER_ALLOW_ENV": "1"})
    assert proc.returncode == 2 and proc.stdout == ""
    assert TOKEN not in proc.stderr
    assert "spec.workloads.extraEnv[0].value: '${CI_DEPLOY_TOKEN}' is not expanded" in proc.stderr


def test_the_repository_profile_reads_the_environment_only_when_the_sidecar_allows_it(
    app: Path,
) -> None:
    (app / "proxy-profile.yaml").write_text(
        REPO_PROFILE.replace("http://proxy", "http://build:${PROXY_PASSWORD}@proxy")
    )
    proc = _run(app, {"PROXY_PASSWORD": TOKEN})
    assert proc.returncode == 2 and proc.stdout == ""
    assert TOKEN not in proc.stderr
    assert "comes with the input (--untrusted-profile)" in proc.stderr
    assert "PROXY_POSTRENDER_ALLOW_ENV=1" in proc.stderr
    allowed = _run(app, {"PROXY_PASSWORD": TOKEN, "PROXY_POSTRENDER_ALLOW_ENV": "1"})
    assert allowed.returncode == 0, allowed.stderr
    assert f"http://build:{TOKEN}@proxy.corp.example:3128" in allowed.stdout


def test_the_repository_profile_reads_no_file_outside_the_application(app: Path) -> None:
    system = "../../../../../../../../etc/ssl/certs/ca-certificates.crt"
    for name in (system, "/etc/ssl/certs/ca-certificates.crt"):
        (app / "proxy-profile.yaml").write_text(
            REPO_PROFILE + f"  caBundle: {{file: '{name}', workloads: true}}\n"
        )
        proc = _run(app, {})
        assert proc.returncode == 2 and proc.stdout == ""
        assert f"spec.caBundle.file: '{name}' is outside {app}" in proc.stderr
    (app / "proxy-profile.yaml").write_text(
        REPO_PROFILE + "  caBundle: {file: ca.pem, workloads: true}\n"
    )
    shutil.copy(FIXTURES / "golden" / "ca-workloads" / "corp-ca.pem", app / "ca.pem")
    proc = _run(app, {})
    assert proc.returncode == 0, proc.stderr
    assert "proxy-ca-bundle" in proc.stdout


def test_the_profile_path_from_the_application_stays_in_its_directory(app: Path) -> None:
    (app.parent / "other.yaml").write_text(REPO_PROFILE)
    for path in ("../other.yaml", str(app.parent / "other.yaml"), "sub/../../other.yaml"):
        proc = _run(app, {"ARGOCD_ENV_PROXY_PROFILE": path})
        assert proc.returncode == 2 and proc.stdout == ""
        assert "PROXY_PROFILE must be a path inside the application's directory" in proc.stderr


def test_the_application_env_names_the_cluster_whose_entry_the_workloads_get(app: Path) -> None:
    shutil.copy(FIXTURES / "golden" / "fleet-entries" / "profile.yaml", app / "proxy-profile.yaml")
    proc = _run(app, {"ARGOCD_ENV_PROXY_POSTRENDER_CLUSTER": "fleet/edge-1"})
    assert proc.returncode == 0, proc.stderr
    values = {
        env["value"]
        for doc in _docs(proc.stdout)
        if doc.get("kind") == "Deployment"
        for container in doc["spec"]["template"]["spec"]["containers"]
        for env in container.get("env", [])
        if env["name"] == "HTTPS_PROXY"
    }
    assert values == {"http://proxy.munich.corp.example:3128"}
