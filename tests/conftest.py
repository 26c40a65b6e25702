"""Test configuration: deterministic property tests in CI."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

# In CI the examples are derived from the test itself, so a run is repeatable;
# locally hypothesis explores new random examples on every run.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def _check_build() -> None:
    """Run the tests against the build PROXY_POSTRENDER_EXPECT_BUILD names ("pure", the
    default, or "compiled"), and refuse to run otherwise.

    pytest puts the repository root first on sys.path (tests/ is a package), and
    ``python -m`` puts the working directory there: either would make the source
    tree shadow the compiled package installed in .venv-compiled. For a compiled run
    the package is imported with the root left out of sys.path, and child Pythons get
    PYTHONSAFEPATH (no working directory on their path)."""
    import subprocess
    import sys
    from pathlib import Path

    from tests.helpers import EXPECTED_BUILD, ROOT, VERSION_LINE

    if EXPECTED_BUILD not in ("pure", "compiled"):
        raise SystemExit(f"PROXY_POSTRENDER_EXPECT_BUILD={EXPECTED_BUILD}: 'pure' or 'compiled'")
    if EXPECTED_BUILD == "compiled":
        assert "proxy_postrender" not in sys.modules, "imported before conftest"
        saved = sys.path[:]
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]
        try:
            import proxy_postrender
        except ImportError as exc:
            raise SystemExit(f"no compiled build installed for {sys.executable}: {exc}") from exc
        finally:
            sys.path[:] = saved
        os.environ["PYTHONSAFEPATH"] = "1"
    import proxy_postrender
    from proxy_postrender import engine

    found = proxy_postrender.build()
    from_tree = Path(engine.__file__ or "").resolve().is_relative_to(ROOT / "proxy_postrender")
    if found != EXPECTED_BUILD or from_tree is (EXPECTED_BUILD == "compiled"):
        raise SystemExit(
            f"the tests expect the {EXPECTED_BUILD} build but import {engine.__file__} "
            f"({found}); a compiled extension in the source tree, or the source tree "
            "shadowing .venv-compiled? (docs/compiled.md)"
        )
    child = subprocess.run(
        [sys.executable, "-m", "proxy_postrender", "--version"],
        capture_output=True,
        cwd=ROOT,
        check=False,
    )
    if child.stdout.decode().strip() != VERSION_LINE:
        raise SystemExit(
            f"a child process runs {child.stdout!r}{child.stderr!r}, not {VERSION_LINE}"
        )


_check_build()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``build("compiled")`` (both builds compared) run in make test-compiled
    and ``build("pure")`` ones in the pure run; in the other run they are deselected, not
    skipped: a run that needs a build it cannot find fails."""
    from tests.helpers import EXPECTED_BUILD

    keep: list[pytest.Item] = []
    other: list[pytest.Item] = []
    for item in items:
        marker = item.get_closest_marker("build")
        (other if marker is not None and marker.args[0] != EXPECTED_BUILD else keep).append(item)
    if other:
        config.hook.pytest_deselected(items=other)
        items[:] = keep
