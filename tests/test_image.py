"""The OCI image `make image` builds (tools/build-image.sh; make test builds it once, before
the tests, and names it in PROXY_POSTRENDER_IMAGE), run with podman the way its users run
it: as a KRM function (`podman run --rm -i`, `kpt fn eval --image`, a Kptfile pipeline
under `kpt fn render`) as the specification's nobody, and as the Argo CD plugin's sidecar
(deploy/argocd/sidecar-patch.yaml: uid 999), always with no network and a read-only
root. What the image prints is compared byte for byte with the host's CLI.

podman, kpt and the image are required: a missing one fails the test, never skips it."""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender import sre_programs
from proxy_postrender.yamltext import libyaml
from tests.e2e import console_script, tool
from tests.helpers import GOLDEN, ROOT, SHARED_PROFILE, run_cli
from tests.test_argocd import _generate
from tests.test_argocd import _run as run_plugin_on_host

pytestmark = [pytest.mark.e2e, pytest.mark.build("pure")]

VERSION = "0.1.0"
EXAMPLE = ROOT / "examples" / "proxy-workloads"
PATCH = ROOT / "deploy" / "argocd" / "sidecar-patch.yaml"
# what every run gets: no network, a read-only root (podman mounts a tmpfs on /tmp,
# as the sidecar patch mounts an emptyDir there)
SANDBOX = ("--rm", "--network=none", "--read-only")


@pytest.fixture(scope="module")
def image() -> str:
    ref = os.environ.get("PROXY_POSTRENDER_IMAGE", "")
    assert ref, "run the tests through make test (it runs make image) or set PROXY_POSTRENDER_IMAGE"
    podman = tool("PODMAN_BIN", "podman")
    found = subprocess.run([podman, "image", "exists", ref], check=False)
    assert found.returncode == 0, f"podman has no image {ref}: run make image"
    return ref


def _podman(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [tool("PODMAN_BIN", "podman"), *args],
        input=stdin,
        capture_output=True,
        timeout=300,
        check=False,
    )


def _sh(image: str, user: str, script: str) -> str:
    proc = _podman("run", *SANDBOX, "--user", user, "--entrypoint", "/bin/sh", image, "-c", script)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


def _resource_list() -> bytes:
    """The example package's resources and the shared profile, as kpt hands them over."""

    def indent(text: str, first: str) -> str:
        lines = text.rstrip("\n").split("\n")
        return first + "\n  ".join(lines) + "\n"

    names = ("deployment.yaml", "cronjob.yaml", "configmap.yaml")
    items = [(EXAMPLE / name).read_text() for name in names]
    return (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
        + "".join(indent(item, "- ") for item in items)
        + indent(SHARED_PROFILE.read_text(), "functionConfig:\n  ")
    ).encode()


def test_the_image_is_the_version_and_runs_as_nobody_with_no_network(image: str) -> None:
    assert image.endswith(f"/proxy-postrender:{VERSION}")
    user = _podman("image", "inspect", "--format", "{{.Config.User}}", image)
    assert user.stdout.decode().strip() == "65534:65534"
    assert _sh(image, "65534", "id -un; id -u").split() == ["nobody", "65534"]
    # the network namespace holds loopback only, and the root cannot be written
    links = _sh(image, "65534", "ls /sys/class/net").split()
    assert links == ["lo"]
    denied = _podman(
        "run", *SANDBOX, "--user", "0", "--entrypoint", "/bin/sh", image, "-c", "touch /etc/x"
    )
    assert denied.returncode != 0 and b"Read-only file system" in denied.stderr
    version = _podman("run", *SANDBOX, image, "--version")
    assert version.stdout.decode().strip() == f"proxy-postrender {VERSION} (pure Python)"


@pytest.mark.parametrize("user", ["65534", "999"])
def test_a_resource_list_through_podman_run_equals_the_host_cli(image: str, user: str) -> None:
    """The KRM function mode: the image's entry point reads the ResourceList on stdin."""
    stdin = _resource_list()
    host = run_cli([], stdin)
    assert host.returncode == 0, host.stderr
    ran = _podman("run", *SANDBOX, "-i", "--user", user, image, stdin=stdin)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == host.stdout
    assert ran.stderr == host.stderr
    (out,) = libyaml.load_data(ran.stdout.decode())
    assert [r["resourceRef"]["kind"] for r in out["results"] if "resourceRef" in r] == [
        "Deployment",
        "CronJob",
    ]


def test_a_bad_function_config_fails_in_the_image_as_on_the_host(image: str) -> None:
    stdin = _resource_list().replace(b"http://proxy.corp.example:3128", b"proxy:3128")
    host = run_cli([], stdin)
    ran = _podman("run", *SANDBOX, "-i", image, stdin=stdin)
    assert host.returncode == ran.returncode == 2
    assert ran.stdout == host.stdout and ran.stderr == host.stderr
    assert b"needs a scheme" in ran.stderr


def test_the_merged_ca_bundle_holds_the_certifi_the_tests_ran_with(image: str) -> None:
    """The image's dependencies are the versions of the test run (tools/build-image.sh
    pins them): caBundle.mode merged writes certifi's roots, as the golden case holds."""
    case = GOLDEN / "ca-merged"
    ran = _podman(
        "run",
        *SANDBOX,
        "-i",
        "--volume",
        f"{case}:/case:ro",
        "--workdir",
        "/case",
        image,
        "--profile",
        "profile.yaml",
        stdin=(case / "input.yaml").read_bytes(),
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == (case / "expected.yaml").read_bytes()


_PROGRAMS_PROBE = """
import re, sys
from proxy_postrender import patterns, sre_programs
stored = sorted(sre_programs.PROGRAMS)
differ = [key for key in stored if patterns.compiled(*key) != re.compile(*key)]
print(sys.version.split()[0], patterns.usable(), len(stored), differ)
"""


def test_the_image_python_runs_the_stored_regex_programs(image: str) -> None:
    """The image's Python is Debian 12's build of 3.11 (another patch release than the
    one tests/update_patterns.py ran on): it takes the package's regular expressions
    from the stored programs (proxy_postrender/patterns.py), and each is the program its
    own re makes of the pattern (a Pattern's == compares the code)."""
    ran = _podman("run", *SANDBOX, "--entrypoint", "python3", image, "-c", _PROGRAMS_PROBE)
    assert ran.returncode == 0, ran.stderr
    version, usable, count, differ = ran.stdout.decode().split(" ", 3)
    assert version.startswith("3.11.")
    assert (usable, int(count), differ.strip()) == ("True", len(sre_programs.PROGRAMS), "[]")


# --- kpt, with podman as its function runtime -------------------------------------------


def _kpt(
    args: list[str], cwd: Path, bin_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROXY_POSTRENDER")}
    env["KPT_FN_RUNTIME"] = "podman"
    if bin_dir is not None:  # first on PATH
        env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"
    proc = subprocess.run(
        [tool("KPT_BIN", "kpt"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def _package(to: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, to, ignore=shutil.ignore_patterns(".expected")))


def _same_trees(left: Path, right: Path) -> None:
    names = sorted(p.relative_to(left) for p in left.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(right) for p in right.rglob("*") if p.is_file())
    for name in names:
        assert filecmp.cmp(left / name, right / name, shallow=False), name


def test_kpt_fn_eval_image_equals_the_executable(image: str, tmp_path: Path) -> None:
    by_image, by_exec = _package(tmp_path / "image"), _package(tmp_path / "exec")
    runs = {"image": ["--image", image], "exec": ["--exec", console_script()]}
    for name, function in runs.items():
        config = f"{name}/proxy-profile.yaml"
        proc = _kpt(["fn", "eval", name, *function, "--fn-config", config], tmp_path)
        assert "injected app: HTTP_PROXY" in proc.stderr
        assert (f'[PASS] "{image}"' in proc.stderr) is (name == "image")
    _same_trees(by_image, by_exec)
    assert "HTTPS_PROXY" in (by_image / "deployment.yaml").read_text()
    # the ConfigMap form kpt writes from key=value arguments
    for name, function in runs.items():
        _kpt(["fn", "eval", name, *function, "--", "httpsProxy=http://p.example:8080"], tmp_path)
    _same_trees(by_image, by_exec)
    assert "http://p.example:8080" in (by_image / "cronjob.yaml").read_text()


def test_kpt_runs_the_image_as_docs_kpt_says(image: str, tmp_path: Path) -> None:
    """docs/kpt.md names the podman options kpt runs an image with (as nobody, no
    network) and says that kpt does not make the root read-only: a podman on PATH
    that logs its arguments shows what kpt asked for."""
    text = " ".join((ROOT / "docs" / "kpt.md").read_text().split())
    claimed = re.search(r"`podman run (--[^`]*)`: kpt does not make the root read-only", text)
    assert claimed, "docs/kpt.md no longer says how kpt runs an image"
    log, shim = tmp_path / "podman.log", tmp_path / "bin" / "podman"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$*" >>{log}\nexec {tool("PODMAN_BIN", "podman")} "$@"\n')
    shim.chmod(0o755)
    _package(tmp_path / "pkg")
    _kpt(
        ["fn", "eval", "pkg", "--image", image, "--fn-config", "pkg/proxy-profile.yaml"],
        tmp_path,
        shim.parent,
    )
    (run,) = [line for line in log.read_text().splitlines() if line.startswith("run ")]
    assert claimed.group(1) in run and run.endswith(image), run
    assert "--read-only" not in run, run


def test_the_image_commands_of_docs_kpt_run_as_written(image: str, tmp_path: Path) -> None:
    text = (ROOT / "docs" / "kpt.md").read_text()
    text = text[text.index("## The image\n") :]
    block = re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)[0]
    assert image in block
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROXY_POSTRENDER")}
    env["PATH"] = f"{Path(tool('KPT_BIN', 'kpt')).parent}:{env.get('PATH', '')}"
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.count(f'[PASS] "{image}"') == 2, proc.stderr
    assert "name: HTTPS_PROXY" in (tmp_path / "pkg" / "deployment.yaml").read_text()


def _pipeline(package: Path, function: str) -> None:
    kptfile = package / "Kptfile"
    kptfile.write_text(
        kptfile.read_text()
        + f"pipeline:\n  mutators:\n  - {function}\n    configPath: proxy-profile.yaml\n"
    )


def test_kpt_fn_render_runs_the_image_in_a_kptfile_pipeline(image: str, tmp_path: Path) -> None:
    by_image, by_exec = _package(tmp_path / "image"), _package(tmp_path / "exec")
    _pipeline(by_image, f"image: {image}")
    _pipeline(by_exec, f"exec: {console_script()}")
    _kpt(["fn", "render", "image"], tmp_path)
    _kpt(["fn", "render", "exec", "--allow-exec"], tmp_path)
    (by_exec / "Kptfile").write_text((by_image / "Kptfile").read_text())
    _same_trees(by_image, by_exec)
    (deployment,) = libyaml.load_data((by_image / "deployment.yaml").read_text())
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"} <= {e["name"] for e in env}


# --- the Argo CD plugin's sidecar ----------------------------------------------------------


def _sidecar() -> dict[str, Any]:
    (patch,) = libyaml.load_data(PATCH.read_text())
    (container,) = patch["spec"]["template"]["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def test_the_sidecar_patch_runs_this_image_as_999_with_a_read_only_root() -> None:
    sidecar = _sidecar()
    assert sidecar["image"].endswith(f"/proxy-postrender:{VERSION}")
    assert sidecar["securityContext"]["runAsUser"] == 999
    assert sidecar["securityContext"]["readOnlyRootFilesystem"] is True
    assert {"mountPath": "/tmp", "name": "helm-proxy-tmp"} in sidecar["volumeMounts"]


def test_the_image_holds_the_plugin_file_where_the_cmp_server_reads_it(image: str) -> None:
    held = _sh(image, "999", "cat /home/argocd/cmp-server/config/plugin.yaml")
    assert held == (ROOT / "deploy" / "argocd" / "plugin.yaml").read_text()
    # docs/argocd.md: the image holds Helm 3.17.2
    user, helm = _sh(image, "999", "id -un; helm version --short").split()
    assert (user, helm.split("+")[0]) == ("argocd", "v3.17.2")


@pytest.fixture
def app(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / "apps" / "web"
    shutil.copytree(ROOT / "fixtures" / "charts" / "demo", path)
    shutil.copy(SHARED_PROFILE, path / "proxy-profile.yaml")
    return path


def _generate_in_image(
    image: str, app: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """The plugin's generate command as Argo CD's CMP server runs it in the sidecar: the
    application's directory as the working directory, the sidecar's user and read-only
    root, no network."""
    context = _sidecar()["securityContext"]
    user = str(context["runAsUser"])
    # allowPrivilegeEscalation: false is what no-new-privileges does
    assert context["allowPrivilegeEscalation"] is False
    command, *args = _generate()
    settings = {
        "ARGOCD_APP_NAME": "web",
        "ARGOCD_APP_NAMESPACE": "shop",
        "ARGOCD_APP_SOURCE_PATH": "apps/web",
        "KUBE_VERSION": "1.32.0",
        **env,
    }
    return _podman(
        "run",
        *SANDBOX,
        "--user",
        user,
        "--security-opt=no-new-privileges",
        "--volume",
        f"{app}:/app:ro",
        "--workdir",
        "/app",
        *(f"--env={k}={v}" for k, v in settings.items()),
        "--entrypoint",
        command,
        image,
        *args,
    )


@pytest.mark.parametrize(
    "env",
    [{}, {"ARGOCD_ENV_HTTPS_PROXY": "http://other:8080", "ARGOCD_ENV_NO_PROXY": "only.example"}],
    ids=["repository-profile", "application-env"],
)
def test_the_plugins_generate_command_in_the_image_equals_the_host(
    image: str, app: Path, env: dict[str, str]
) -> None:
    ran = _generate_in_image(image, app, env)
    assert ran.returncode == 0, ran.stderr
    host = run_plugin_on_host(app, env)
    assert host.returncode == 0, host.stderr
    assert ran.stdout.decode() == host.stdout
    assert "HTTPS_PROXY" in host.stdout
    if env:
        assert "http://other:8080" in host.stdout and "only.example" in host.stdout


def test_a_failing_render_in_the_image_prints_nothing(image: str, app: Path) -> None:
    ran = _generate_in_image(image, app, {"ARGOCD_ENV_HELM_ARGS": "--set failRender=true"})
    assert ran.returncode != 0 and ran.stdout == b""
    assert b"failRender is set" in ran.stderr
