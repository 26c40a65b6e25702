"""The example packages under examples/, run the way kpt's test harness runs a catalog
example: `kpt fn eval` on a copy of the package, twice, with the function config that
`.expected/config.yaml` names; the package must then equal the original with
`.expected/diff.patch` applied.

kpt and git are part of the machine image: a missing one fails the test, never skips it.
"""

from __future__ import annotations

import filecmp
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender.yamltext import libyaml
from tests.e2e import console_script
from tests.helpers import ROOT

EXAMPLES = ROOT / "examples"
PACKAGES = sorted(p.parent.parent for p in EXAMPLES.glob("*/.expected/config.yaml"))


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not on PATH (it is part of the machine image)")
    return path


def _copy(package: Path, to: Path) -> Path:
    shutil.copytree(package, to, ignore=shutil.ignore_patterns(".expected"))
    return to


def _config(package: Path) -> dict[str, Any]:
    (config,) = libyaml.load_data((package / ".expected" / "config.yaml").read_text())
    assert isinstance(config, dict)
    return config


def _eval(kpt: str, package: Path, config: dict[str, Any], copy: Path) -> None:
    args = [kpt, "fn", "eval", str(copy), "--exec", console_script()]
    if "fnConfig" in config:
        # relative to .expected, as the harness reads it; the same file in the copy
        source = (package / ".expected" / config["fnConfig"]).resolve()
        args += ["--fn-config", str(copy / source.relative_to(package))]
    if config.get("args"):
        args += ["--", *(f"{k}={v}" for k, v in config["args"].items())]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == config.get("exitCode", 0), proc.stderr


def _same_trees(left: Path, right: Path) -> None:
    names = sorted(p.relative_to(left) for p in left.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(right) for p in right.rglob("*") if p.is_file())
    for name in names:
        assert filecmp.cmp(left / name, right / name, shallow=False), name


def test_there_is_an_example_package() -> None:
    assert [p.name for p in PACKAGES] == ["proxy-workloads"]


@pytest.mark.parametrize("package", PACKAGES, ids=[p.name for p in PACKAGES])
def test_kpt_fn_eval_exec_makes_the_expected_diff(package: Path, tmp_path: Path) -> None:
    kpt, git = _tool("kpt"), _tool("git")
    config = _config(package)
    assert config.get("testType") == "eval"
    patch = (package / ".expected" / "diff.patch").read_text()
    # the function only adds lines: the patch removes none
    assert patch.strip() and not any(
        line.startswith("-") and not line.startswith("--- ") for line in patch.splitlines()
    )

    ran = _copy(package, tmp_path / "ran")
    _eval(kpt, package, config, ran)
    expected = _copy(package, tmp_path / "expected")
    applied = subprocess.run(
        [git, "apply", "--whitespace=nowarn", str(package / ".expected" / "diff.patch")],
        cwd=expected,
        capture_output=True,
        text=True,
        check=False,
    )
    assert applied.returncode == 0, applied.stderr
    _same_trees(ran, expected)

    # kpt's harness runs the function twice: the second run changes nothing
    _eval(kpt, package, config, ran)
    _same_trees(ran, expected)
