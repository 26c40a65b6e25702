"""Shared test helpers: run the real console entry point as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

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
