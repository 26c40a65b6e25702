"""End to end through the real Helm 3.17.2 and Helm 4.1.4 binaries (installed by `make test`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from proxy_postrender.yamltext import libyaml
from tests.e2e import (
    assert_all_injected,
    console_script,
    containers,
    documents,
    env_names,
    is_hook,
    run,
    tool,
)
from tests.helpers import FIXTURES, ROOT, SHARED_PROFILE
from tests.validate import schema_errors

pytestmark = pytest.mark.e2e

CHART = FIXTURES / "charts" / "demo"
HOOK_JOB = "job-pre-install.yaml"


@pytest.fixture(scope="module")
def helm3() -> str:
    path = tool("HELM3_BIN", "helm3")
    assert b"v3.17.2" in run([path, "version", "--short"]).stdout
    return path


@pytest.fixture(scope="module")
def helm4_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An isolated Helm 4 home with the plugin installed from a copy of this repository."""
    helm = tool("HELM4_BIN", "helm4")
    assert b"v4.1.4" in run([helm, "version", "--short"]).stdout
    base = tmp_path_factory.mktemp("helm4")
    plugin_src = base / "proxy-postrender"
    plugin_src.mkdir()
    for name in ("pyproject.toml", "README.md", "plugin.yaml"):
        shutil.copy(ROOT / name, plugin_src / name)
    for name in ("proxy_postrender", "plugin"):
        shutil.copytree(
            ROOT / name, plugin_src / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    env = {
        "HELM_BIN": helm,
        "HELM_DATA_HOME": str(base / "data"),
        "HELM_CONFIG_HOME": str(base / "config"),
        "HELM_CACHE_HOME": str(base / "cache"),
        "XDG_STATE_HOME": str(base / "state"),
    }
    proc = run([helm, "plugin", "install", str(plugin_src)], env=env)
    assert proc.returncode == 0, proc.stderr.decode() + proc.stdout.decode()
    listing = run([helm, "plugin", "list"], env=env).stdout.decode()
    assert "proxy" in listing and "postrenderer/v1" in listing, listing
    yield env


def helm3_render(helm3: str, *extra: str) -> CompletedProcess[bytes]:
    """``helm template`` of the demo chart through the console script (Helm 3)."""
    return run([helm3, "template", "rel", str(CHART), "--post-renderer", console_script(), *extra])


def helm4(home: dict[str, str], *args: str, cwd: Path | None = None) -> CompletedProcess[bytes]:
    """Helm 4 in its isolated home, with the plugin installed."""
    return run([home["HELM_BIN"], *args], env=home, cwd=cwd)


PROFILE_ARGS = ("--post-renderer-args", str(SHARED_PROFILE))
PLUGIN = ("--post-renderer", "proxy")


def helm4_template(
    home: dict[str, str], *extra: str, cwd: Path | None = None
) -> CompletedProcess[bytes]:
    """``helm template`` of the demo chart through the installed plugin (Helm 4)."""
    return helm4(home, "template", "rel", str(CHART), *PLUGIN, *extra, cwd=cwd)


def test_helm3_post_renderer_injects_every_workload(helm3: str) -> None:
    plain = run([helm3, "template", "rel", str(CHART)])
    assert plain.returncode == 0, plain.stderr
    proc = helm3_render(helm3, *PROFILE_ARGS)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert assert_all_injected(out, hooks=False) >= 6
    before, after = documents(plain.stdout.decode()), documents(out)
    assert len(before) == len(after)
    for raw_before, raw_after in zip(before, after, strict=True):
        if "kind: ConfigMap" in raw_before or "kind: Service\n" in raw_before:
            assert raw_after == raw_before  # untouched documents are byte-identical
        assert raw_after.splitlines()[:2] == raw_before.splitlines()[:2]  # "# Source:" kept
    # the chart's own HTTP_PROXY survives
    assert 'value: "http://team-proxy.internal:3128"' in out
    # every object validates strictly against the Kubernetes schema
    for doc in libyaml.load_data(out):
        if doc is not None:
            assert schema_errors(doc) == [], doc["kind"]
    # piping the plain render (hooks included) through twice: the second pass changes nothing
    once = run([console_script(), str(SHARED_PROFILE)], stdin=plain.stdout)
    assert assert_all_injected(once.stdout.decode()) >= 7
    twice = run([console_script(), str(SHARED_PROFILE)], stdin=once.stdout)
    assert twice.stdout == once.stdout


def test_helm3_show_only_still_works(helm3: str) -> None:
    proc = helm3_render(
        helm3, "--show-only", "templates/deployment.yaml", f"--post-renderer-args={SHARED_PROFILE}"
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert out.count("kind: Deployment") == 1 and "kind: Service" not in out
    assert_all_injected(out, hooks=False)


def test_helm3_output_dir_sends_empty_stdin(helm3: str, tmp_path: Path) -> None:
    proc = helm3_render(helm3, "--output-dir", str(tmp_path), *PROFILE_ARGS)
    assert proc.returncode == 0, proc.stderr.decode()


def test_helm3_shows_the_reason_of_a_failing_post_render(helm3: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SHARED_PROFILE.read_text().replace("httpProxy:", "httpProxyy:"))
    proc = helm3_render(helm3, "--post-renderer-args", str(bad))
    assert proc.returncode != 0
    assert b"unknown field(s) httpProxyy" in proc.stderr
    assert b"kind: Deployment" not in proc.stdout


def test_helm3_failing_chart_render_fails(helm3: str) -> None:
    proc = helm3_render(helm3, "--set", "failRender=true", *PROFILE_ARGS)
    assert proc.returncode != 0 and b"failRender is set" in proc.stderr
    assert proc.stdout == b""


def test_helm4_plugin_injects_hooks_too(helm4_home: dict[str, str]) -> None:
    proc = helm4_template(helm4_home, *PROFILE_ARGS)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert assert_all_injected(out) >= 7  # the pre-install hook Job is post-rendered in Helm 4
    assert f"# Source: demo/templates/{HOOK_JOB}" in out
    assert "postrenderer.helm.sh/postrender-filename" not in out  # Helm strips its own annotation
    assert 'value: "http://team-proxy.internal:3128"' in out


def test_helm4_install_dry_run(helm4_home: dict[str, str]) -> None:
    proc = helm4(
        helm4_home,
        "install",
        "rel",
        str(CHART),
        "--dry-run=client",
        *PLUGIN,
        f"--post-renderer-args={SHARED_PROFILE}",
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert_all_injected(proc.stdout.decode().split("MANIFEST:", 1)[-1].split("NOTES:", 1)[0])


def test_helm4_failure_reason_reaches_the_log(helm4_home: dict[str, str]) -> None:
    proc = helm4_template(
        helm4_home,
        *PROFILE_ARGS,
        "--post-renderer-args",
        "--no-proxy=not a host",
    )
    assert proc.returncode != 0
    assert b'plugin "proxy" exited with error' in proc.stderr
    log = Path(helm4_home["XDG_STATE_HOME"]) / "proxy-postrender" / "helm-plugin.log"
    assert "contains whitespace" in log.read_text()


def test_helm4_failing_chart_render_fails(helm4_home: dict[str, str]) -> None:
    proc = helm4_template(
        helm4_home,
        "--set",
        "failRender=true",
        *PROFILE_ARGS,
    )
    assert proc.returncode != 0 and b"failRender is set" in proc.stderr
    assert proc.stdout == b""


def test_helm4_relative_profile_path_resolves_in_the_working_directory(
    helm4_home: dict[str, str], tmp_path: Path
) -> None:
    shutil.copy(SHARED_PROFILE, tmp_path / "corp.yaml")
    proc = helm4_template(
        helm4_home,
        "--post-renderer-args",
        "corp.yaml",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert_all_injected(proc.stdout.decode())


def test_helm4_and_helm3_agree_on_workload_env(helm3: str, helm4_home: dict[str, str]) -> None:
    renders = [
        helm3_render(helm3, *PROFILE_ARGS),
        helm4_template(helm4_home, *PROFILE_ARGS),
    ]
    envs = []
    for proc in renders:
        assert proc.returncode == 0, proc.stderr.decode()
        envs.append(
            {
                where: env_names(container)
                for doc in libyaml.load_data(proc.stdout.decode())
                if not is_hook(doc)
                for where, container in containers(doc)
            }
        )
    assert envs[0] == envs[1]
