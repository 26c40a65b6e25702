"""End to end through the real Helm 3.17.2 and Helm 4.1.4 binaries (installed by `make test`)."""

from __future__ import annotations

import os
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
from tests.helpers import EXPECTED_BUILD, FIXTURES, ROOT, SHARED_PROFILE
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
    for name in ("pyproject.toml", "hatch_build.py", "README.md", "plugin.yaml"):
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
    # the install hook compiles when it can: in the compiled run (make test-compiled) it
    # must, so that Helm 4 runs the compiled build; the pure run asks for pure Python.
    # make test-compiled hands over the compiled wheel it built once (and installed in
    # .venv-compiled): the hook installs it rather than compiling a second time
    install_env = dict(env)
    if EXPECTED_BUILD == "pure":
        install_env["PROXY_POSTRENDER_COMPILE"] = "0"
    elif wheel := os.environ.get("PROXY_POSTRENDER_COMPILED_WHEEL", ""):
        install_env["PROXY_POSTRENDER_WHEEL"] = wheel
    proc = run([helm, "plugin", "install", str(plugin_src)], env=install_env)
    output = proc.stderr.decode() + proc.stdout.decode()
    assert proc.returncode == 0, output
    said = {"pure": "build: pure Python (", "compiled": "build: compiled with mypyc\n"}
    assert said[EXPECTED_BUILD] in output, output
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


# Helm hooks and generated objects: the profile of the golden case hooks-generated
# (createSecret and caBundle.workloads), on the demo chart whose pre-install Job is a hook.
HOOKS_PROFILE = FIXTURES / "golden" / "hooks-generated" / "profile.yaml"


def _sections(dry_run: str) -> tuple[str, str]:
    """The HOOKS and MANIFEST sections of ``helm install --dry-run`` output."""
    hooks = dry_run.split("HOOKS:", 1)[1].split("MANIFEST:", 1)[0]
    return hooks, dry_run.split("MANIFEST:", 1)[1].split("NOTES:", 1)[0]


def test_helm4_creates_the_hooks_copies_before_the_hook_job(helm4_home: dict[str, str]) -> None:
    proc = helm4(
        helm4_home,
        "install",
        "rel",
        str(CHART),
        "--dry-run=client",
        *PLUGIN,
        f"--post-renderer-args={HOOKS_PROFILE}",
    )
    assert proc.returncode == 0, proc.stderr.decode()
    hooks, manifest = _sections(proc.stdout.decode())
    # Helm lists the copies as hooks, before the Job, one weight below it
    order = [d["metadata"]["name"] for d in libyaml.load_data(hooks) if d]
    assert order == ["proxy-credentials-hooks", "proxy-ca-bundle-hooks", "rel-demo-migrate"]
    by_name = {d["metadata"]["name"]: d for d in libyaml.load_data(hooks) if d}
    for name in ("proxy-credentials-hooks", "proxy-ca-bundle-hooks"):
        annotations = by_name[name]["metadata"]["annotations"]
        assert annotations["helm.sh/hook"] == "pre-install"
        assert annotations["helm.sh/hook-weight"] == "-6"  # the Job's is -5
        assert annotations["helm.sh/hook-delete-policy"] == "before-hook-creation"
    job = str(by_name["rel-demo-migrate"])
    assert "proxy-credentials-hooks" in job and "proxy-ca-bundle-hooks" in job
    # the release's own objects read the ordinary copies, part of the release manifest
    names = [d["metadata"]["name"] for d in libyaml.load_data(manifest) if d]
    assert "proxy-credentials" in names and "proxy-ca-bundle" in names
    assert not any(n.endswith("-hooks") for n in names) and "-hooks" not in manifest


def test_helm3_sends_no_hooks_so_makes_no_hook_copies(helm3: str) -> None:
    proc = helm3_render(helm3, "--post-renderer-args", str(HOOKS_PROFILE))
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert "-hooks" not in out and "name: proxy-credentials" in out
    for doc in libyaml.load_data(out):
        if doc and is_hook(doc):  # appended by Helm after the post-renderer: untouched
            assert "proxy-credentials" not in str(doc)


CAPTURE_PLUGIN = """\
apiVersion: v1
type: postrenderer/v1
name: capture
version: 0.1.0
runtime: subprocess
runtimeConfig:
  platformCommand:
    - command: /bin/sh
      args: ["-c", "tee \\"$PROXY_TEST_CAPTURE\\""]
"""


def test_split_post_render_of_a_real_helm4_stream(
    helm4_home: dict[str, str], tmp_path: Path
) -> None:
    """Helm 4.2 ``separate`` (Flux 2.9 ``postRenderStrategy: separate``) sends the hooks
    alone, then the templates alone, in the form Helm 4.1 sends the whole: taken here from
    a real render, split, and each part given to the tool."""
    from tests.test_hooks import assert_references_resolve, generated, objects, split

    plugin = tmp_path / "capture"
    plugin.mkdir()
    (plugin / "plugin.yaml").write_text(CAPTURE_PLUGIN)
    home = {**helm4_home, "PROXY_TEST_CAPTURE": str(tmp_path / "stdin.yaml")}
    proc = helm4(home, "plugin", "install", str(plugin))
    assert proc.returncode == 0, proc.stderr.decode()
    proc = helm4(home, "template", "rel", str(CHART), "--post-renderer", "capture")
    assert proc.returncode == 0, proc.stderr.decode()
    sent = (tmp_path / "stdin.yaml").read_text()
    assert "postrenderer.helm.sh/postrender-filename" in sent
    hooks, templates = split(sent)
    assert "rel-demo-migrate" in hooks and "rel-demo-migrate" not in templates
    script = console_script()
    parts = []
    for part in (hooks, templates):
        done = run([script, str(HOOKS_PROFILE)], stdin=part.encode())
        assert done.returncode == 0, done.stderr.decode()
        parts.append(done.stdout.decode())
        assert_references_resolve(parts[-1])
        again = run([script, str(HOOKS_PROFILE)], stdin=done.stdout)
        assert again.stdout == done.stdout
        assert run([script, "--remove"], stdin=done.stdout).stdout.decode() == part
    made = generated(parts[0]) + generated(parts[1])
    assert len(made) == len(set(made)) == 4
    # the same objects as the combined call Helm 4.1 makes
    whole = run([script, str(HOOKS_PROFILE)], stdin=sent.encode()).stdout.decode()
    assert len(objects(whole)) == len(objects(parts[0])) + len(objects(parts[1]))
    assert sorted(generated(whole)) == sorted(made)


EMPTY_CHART_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
"""


def test_helm4_accepts_an_empty_render(helm4_home: dict[str, str], tmp_path: Path) -> None:
    """A chart of CRDs only (crds/ never reaches a post-renderer) or with every template
    disabled: Helm 4 refuses blank post-renderer output, so the plugin writes a comment."""
    chart = tmp_path / "crds-only"
    (chart / "crds").mkdir(parents=True)
    (chart / "templates").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: crds-only\nversion: 0.1.0\n")
    (chart / "crds" / "widgets.yaml").write_text(EMPTY_CHART_CRD)
    (chart / "templates" / "cm.yaml").write_text(
        "{{- if .Values.on }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n{{- end }}\n"
    )
    proc = helm4(helm4_home, "template", "rel", str(chart), *PLUGIN, *PROFILE_ARGS)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.strip() == b""
    proc = helm4(
        helm4_home, "template", "rel", str(chart), "--include-crds", *PLUGIN, *PROFILE_ARGS
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert documents(proc.stdout.decode())[-1].count("name: widgets.example.com") == 1
    proc = helm4(
        helm4_home, "install", "rel", str(chart), "--dry-run=client", *PLUGIN, *PROFILE_ARGS
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().split("MANIFEST:", 1)[1].strip() == ""
    # the plain filter keeps SPEC 5.4: empty input, empty output
    plain = run([console_script(), str(SHARED_PROFILE)], stdin=b"")
    assert plain.returncode == 0 and plain.stdout == b""
