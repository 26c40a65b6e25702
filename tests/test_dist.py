"""The release artifacts `make dist` builds (make test builds them once, before the tests,
and names the directory in PROXY_POSTRENDER_DIST): the sdist, the pure wheel, the Helm 4
plugin tarball, and the tarball signed with a throwaway key, installed and tampered with."""

from __future__ import annotations

import email
import io
import os
import shutil
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import run, tool
from tests.helpers import ROOT, SHARED_PROFILE

pytestmark = pytest.mark.e2e

VERSION = "0.1.0"
SDIST = f"proxy_postrender-{VERSION}.tar.gz"
WHEEL = f"proxy_postrender-{VERSION}-py3-none-any.whl"
PLUGIN = f"proxy-{VERSION}.tgz"
# what no artifact may carry: the checkout's history, venvs, caches, the Argo CD plugin
# file Helm 4 refuses, compiled leftovers
DEBRIS = (".git", ".venv", ".venv-compiled", ".cache", "__pycache__", "deploy", "tests")


@pytest.fixture(scope="module")
def dist() -> Path:
    where = os.environ.get("PROXY_POSTRENDER_DIST", "")
    assert where, (
        "run the tests through `make test` (it runs make dist) or set PROXY_POSTRENDER_DIST"
    )
    path = Path(where)
    for name in (SDIST, WHEEL, PLUGIN):
        assert (path / name).is_file(), f"{path / name} missing: run make dist"
    return path


def _debris(names: list[str]) -> list[str]:
    return [n for n in names if set(Path(n).parts) & set(DEBRIS) or n.endswith((".so", ".pyc"))]


def test_sdist_holds_the_license_and_nothing_of_the_checkout(dist: Path) -> None:
    with tarfile.open(dist / SDIST) as sdist:
        names = sdist.getnames()
        pkg_info = sdist.extractfile(f"proxy_postrender-{VERSION}/PKG-INFO")
        assert pkg_info is not None
        meta = email.message_from_bytes(pkg_info.read())
    top = f"proxy_postrender-{VERSION}/"
    assert f"{top}LICENSE" in names and f"{top}hatch_build.py" in names
    assert f"{top}proxy_postrender/engine.py" in names
    assert _debris(names) == [], _debris(names)
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert "Typing :: Typed" in (meta.get_all("Classifier") or [])
    with tarfile.open(dist / SDIST) as sdist:
        member = sdist.extractfile(f"{top}LICENSE")
        assert member is not None
        assert b"Apache License\n                           Version 2.0" in member.read()


def test_pure_wheel_installs_into_a_fresh_venv_and_runs(dist: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(dist / WHEEL) as wheel:
        names = wheel.namelist()
        meta = email.message_from_bytes(
            wheel.read(f"proxy_postrender-{VERSION}.dist-info/METADATA")
        )
    assert f"proxy_postrender-{VERSION}.dist-info/licenses/LICENSE" in names
    assert _debris(names) == [], _debris(names)
    assert meta["License-Expression"] == "Apache-2.0"
    venv = tmp_path / "venv"
    made = run([sys.executable, "-m", "venv", str(venv)])
    assert made.returncode == 0, made.stderr.decode()
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    installed = run([*pip, str(dist / WHEEL)], cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr.decode()
    script = str(venv / "bin" / "proxy-postrender")
    version = run([script, "--version"], cwd=tmp_path)
    assert version.stdout.decode().strip() == "proxy-postrender 0.1.0 (pure Python)"
    # and it filters: a Deployment gets the profile's proxy
    deployment = (
        b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n"
        b"    spec:\n      containers:\n      - name: web\n        image: nginx\n"
    )
    out = run([script, str(SHARED_PROFILE)], stdin=deployment, cwd=tmp_path)
    assert out.returncode == 0, out.stderr.decode()
    assert b"HTTPS_PROXY" in out.stdout


def test_plugin_tarball_holds_only_the_plugin(dist: Path) -> None:
    with tarfile.open(dist / PLUGIN) as plugin:
        names = plugin.getnames()
    assert {"proxy/plugin.yaml", "proxy/plugin/install.sh", "proxy/LICENSE"} <= set(names)
    assert "proxy/pyproject.toml" in names and "proxy/proxy_postrender/engine.py" in names
    assert all(n == "proxy" or n.startswith("proxy/") for n in names)
    assert _debris(names) == [], _debris(names)


@pytest.fixture(scope="module")
def signing_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """A throwaway RSA key in its own GnuPG home, exported as the keyrings helm reads:
    the secret one to sign with, the public one to verify with."""
    gpg = tool("GPG_BIN", "gpg")
    home = tmp_path_factory.mktemp("gnupg")
    home.chmod(0o700)
    env = {"GNUPGHOME": str(home)}
    made = run(
        [gpg, "--batch", "--passphrase", "", "--quick-gen-key", KEY_UID, "rsa2048", "sign", "1d"],
        env=env,
    )
    assert made.returncode == 0, made.stderr.decode()
    keys = {"secring": home / "secring.gpg", "pubring": home / "pubring.gpg"}
    for option, path in (("--export-secret-keys", keys["secring"]), ("--export", keys["pubring"])):
        exported = run(
            [gpg, "--batch", "--pinentry-mode", "loopback", "--passphrase", "", option, KEY_UID],
            env=env,
        )
        assert exported.returncode == 0 and exported.stdout, exported.stderr.decode()
        path.write_bytes(exported.stdout)
    yield keys
    run(["gpgconf", "--kill", "gpg-agent"], env=env)


KEY_UID = "proxy-postrender test signer <signer@example.invalid>"


def _helm4_home(base: Path) -> dict[str, str]:
    return {
        "HELM_DATA_HOME": str(base / "data"),
        "HELM_CONFIG_HOME": str(base / "config"),
        "HELM_CACHE_HOME": str(base / "cache"),
        "XDG_STATE_HOME": str(base / "state"),
    }


def _tampered(signed: Path, where: Path) -> Path:
    """The signed tarball with a line added to the install hook, beside its .prov."""
    where.mkdir()
    copy = where / signed.name
    out = io.BytesIO()
    with tarfile.open(signed) as src, tarfile.open(fileobj=out, mode="w:gz") as dst:
        for member in src.getmembers():
            data = src.extractfile(member) if member.isfile() else None
            content = data.read() if data else None
            if member.name == "proxy/plugin/install.sh" and content is not None:
                content += b"echo tampered\n"
                member.size = len(content)
            dst.addfile(member, io.BytesIO(content) if content is not None else None)
    copy.write_bytes(out.getvalue())
    shutil.copy(f"{signed}.prov", f"{copy}.prov")
    return copy


def test_signed_plugin_installs_with_the_keyring_and_a_tampered_one_is_refused(
    dist: Path, signing_key: dict[str, Path], tmp_path: Path
) -> None:
    helm = tool("HELM4_BIN", "helm4")
    signed_dir = tmp_path / "signed"
    packaged = run(
        ["bash", str(ROOT / "tools" / "dist-plugin.sh"), helm, str(signed_dir)],
        env={"SIGN_KEY": "proxy-postrender test signer", "KEYRING": str(signing_key["secring"])},
    )
    assert packaged.returncode == 0, packaged.stderr.decode()
    signed = signed_dir / PLUGIN
    assert Path(f"{signed}.prov").is_file()
    keyring = ("--keyring", str(signing_key["pubring"]))

    tampered = _tampered(signed, tmp_path / "tampered")
    env = _helm4_home(tmp_path / "home-tampered")
    refused = run([helm, "plugin", "install", str(tampered), *keyring], env=env)
    assert refused.returncode != 0, refused.stdout.decode()
    assert b"sha256 sum does not match" in refused.stderr, refused.stderr.decode()
    assert b"proxy" not in run([helm, "plugin", "list"], env=env).stdout

    # without its .prov the same tarball is refused too
    unsigned = tmp_path / "unsigned"
    unsigned.mkdir()
    shutil.copy(signed, unsigned / PLUGIN)
    refused = run([helm, "plugin", "install", str(unsigned / PLUGIN), *keyring], env=env)
    assert refused.returncode != 0, refused.stdout.decode()
    assert b"no provenance file" in refused.stderr, refused.stderr.decode()
    # and the untouched one, checked against a keyring without the signer's key
    stranger = tmp_path / "empty.gpg"
    stranger.write_bytes(b"")
    refused = run([helm, "plugin", "install", str(signed), "--keyring", str(stranger)], env=env)
    assert b"signature made by unknown entity" in refused.stderr, refused.stderr.decode()
    assert b"proxy" not in run([helm, "plugin", "list"], env=env).stdout

    # the signed one installs; its hook installs the pure wheel make dist built
    env = _helm4_home(tmp_path / "home")
    hook_env = {**env, "PROXY_POSTRENDER_WHEEL": str(dist / WHEEL)}
    installed = run([helm, "plugin", "install", str(signed), *keyring], env=hook_env)
    output = installed.stderr.decode() + installed.stdout.decode()
    assert installed.returncode == 0, output
    assert "build: pure Python (the wheel's build)" in output, output
    listing = run([helm, "plugin", "list"], env=env).stdout.decode()
    assert "proxy" in listing and "postrenderer/v1" in listing, listing
    chart = ROOT / "fixtures" / "charts" / "demo"
    rendered = run(
        [
            helm,
            "template",
            "rel",
            str(chart),
            "--post-renderer",
            "proxy",
            "--post-renderer-args",
            str(SHARED_PROFILE),
        ],
        env=env,
    )
    assert rendered.returncode == 0, rendered.stderr.decode()
    assert b"HTTPS_PROXY" in rendered.stdout
