"""Shared test helpers: run the real console entry point as a subprocess."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
GOLDEN = FIXTURES / "golden"
SHARED_PROFILE = GOLDEN / "profile.yaml"

# which build the tests run against: "pure" (the source tree, the default) or
# "compiled" (the mypyc wheel in .venv-compiled: `make test-compiled`); conftest.py
# refuses to run when the modules imported are not of that build
EXPECTED_BUILD = os.environ.get("PROXY_POSTRENDER_EXPECT_BUILD", "pure")
VERSION_LINE = "proxy-postrender 0.1.0 ({})".format(
    {"pure": "pure Python", "compiled": "compiled with mypyc"}.get(EXPECTED_BUILD, EXPECTED_BUILD)
)


def run_cli(
    args: Sequence[str],
    stdin: bytes = b"",
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m proxy_postrender ARGS`` with ``stdin``; never raises on exit codes."""
    full_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PROXY_POSTRENDER", "HELM_"))
    }
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "proxy_postrender", *args],
        input=stdin,
        capture_output=True,
        env=full_env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def run_bare(args: Sequence[str], stdin: bytes = b"", timeout: float = 60) -> Any:
    """``python ARGS`` with the checkout alone on PYTHONPATH and nothing else of the test's
    environment: a child whose imports, collector or compiled patterns a test reads."""
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def probe_line(proc: Any) -> str:
    """What a probe script printed on stderr after ``PROBE ``."""
    line = next(x for x in proc.stderr.decode().splitlines() if x.startswith("PROBE "))
    return str(line.removeprefix("PROBE "))


def go_binary(source: Path, name: str) -> Path:
    """The Go program ``source`` built with the machine's Go, once per Go version and
    source (cached under .cache/NAME); fails (never skips) when Go is missing."""
    go = shutil.which("go")
    assert go is not None, "go is not installed (make test installs it)"
    version = subprocess.run([go, "version"], capture_output=True, text=True, check=True).stdout
    key = hashlib.sha256(version.encode() + source.read_bytes()).hexdigest()[:16]
    cache = ROOT / ".cache" / name
    binary = cache / f"{name}-{key}"
    if not binary.exists():
        cache.mkdir(parents=True, exist_ok=True)
        partial = cache / f"{name}-{key}.{os.getpid()}"
        env = dict(os.environ, GOCACHE=str(cache / "gocache"), GO111MODULE="off", GOFLAGS="")
        subprocess.run([go, "build", "-o", str(partial), str(source)], env=env, check=True)
        partial.replace(binary)
    return binary


# A Deployment with one container and no env: what a plain chart renders.
DEPLOYMENT = b"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
"""


def resource_list(items: Sequence[Any], function_config: Any) -> bytes:
    """A KRM ResourceList (config.kubernetes.io/v1) of ``items``, in block style."""
    from proxy_postrender.yamltext import splice

    data = {
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": list(items),
        "functionConfig": function_config,
    }
    return ("\n".join(splice.block_lines(data)) + "\n").encode()
