"""Commands of README.md and docs/*.md run as written, on a machine like a fresh
Debian 12 (issue 32, item 5g): the blocks a newcomer copies are taken from the files
themselves, not restated here. helm 3 and kpt are required (never skipped)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.e2e import console_script, tool
from tests.helpers import FIXTURES, ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def _after(path: Path, heading: str, language: str = "sh") -> str:
    """The first ``language`` block after ``heading`` in ``path``."""
    text = path.read_text()
    return _blocks(text[text.index(heading) :], language)[0]


def _shell(script: str, cwd: Path, path_dirs: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROXY_POSTRENDER", "HELM_"))}
    env["PATH"] = os.pathsep.join([*path_dirs, env.get("PATH", "")])
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_no_command_pip_installs_into_the_system_python() -> None:
    """Debian 12's pip refuses (externally-managed-environment): every pip install of a
    command block goes through a virtualenv's pip."""
    for path in DOCS:
        for block in _blocks(path.read_text(), "sh"):
            for line in block.splitlines():
                words = line.split("#")[0].split()
                if "pip" in words and "install" in words:
                    raise AssertionError(f"{path.name}: {line.strip()}")


def test_the_kptfile_pipeline_of_docs_kpt_runs_as_written(tmp_path: Path) -> None:
    tool("KPT_BIN", "kpt")
    block = _after(ROOT / "docs" / "kpt.md", "## kpt fn render (a Kptfile pipeline)")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    proc = _shell(block, tmp_path, [str(Path(console_script()).parent)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Successfully executed 1 function(s)" in proc.stdout + proc.stderr
    deployment = (tmp_path / "pkg" / "deployment.yaml").read_text()
    assert "name: HTTPS_PROXY" in deployment


def test_the_helm_template_lines_of_the_readme_run_as_written(tmp_path: Path) -> None:
    """The README's Helm 3 `helm template` line, beside `helm install` (which needs a
    cluster), on the demo chart with the README's own profile."""
    helm3 = tool("HELM3_BIN", "helm3")
    readme = ROOT / "README.md"
    (tmp_path / "corp.yaml").write_text(_after(readme, "## The profile", "yaml"))
    (tmp_path / "chart").symlink_to(FIXTURES / "charts" / "demo")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "helm").symlink_to(helm3)
    block = _after(readme, "**Helm 3**")
    (line,) = [x for x in block.splitlines() if x.startswith("helm template")]
    proc = _shell(line, tmp_path, [str(bin_dir), str(Path(console_script()).parent)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("name: HTTPS_PROXY") >= 6
