"""The wheel's build hook: pure Python by default, compiled with mypyc on request.

``PROXY_POSTRENDER_COMPILE=1 pip install .`` compiles the modules that
``[tool.hatch.build.targets.wheel.hooks.custom]`` in pyproject.toml does not
exclude, as black ships its compiled build. Without the variable, and for an
editable install always, the wheel is pure Python and this hook does nothing.

The compiler never writes into the source tree: the package is copied into a
scratch directory, compiled there, and the extensions are added to the wheel
from it (hatch-mypyc builds in place, which would leave ``.so`` files next to
the sources, where Python imports them before the edited ``.py``). See
docs/compiled.md.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ENV = "PROXY_POSTRENDER_COMPILE"
PACKAGE = "proxy_postrender"

# Run in the scratch copy by the build environment's Python: mypyc writes C,
# setuptools compiles it. argv: opt level, debug level, jobs, then mypy arguments
# and the module files.
_COMPILE = """
import sys
from setuptools import setup
from mypyc.build import mypycify

opt, debug, jobs, *paths = sys.argv[1:]
sys.argv = [sys.argv[0], "build_ext", "--inplace", "--build-temp", "build-tmp",
            "--build-lib", "build-lib", "--parallel", jobs]
setup(
    name="proxy-postrender-compiled",
    packages=[],
    ext_modules=mypycify(paths, opt_level=opt, debug_level=debug, multi_file=True,
                         target_dir="build-mypyc"),
)
"""


def _wanted() -> bool:
    return os.environ.get(ENV, "") == "1"


class CompileHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def _option(self, name: str, default: Any) -> Any:
        return self.config.get(name, default)

    def dependencies(self) -> list[str]:
        if self.target_name != "wheel" or not _wanted():
            return []
        return list(self._option("compile-dependencies", []))

    def modules(self) -> list[str]:
        """The package's modules to compile: every ``.py`` file but the excluded ones
        (paths relative to the project root, ``fnmatch`` patterns)."""
        excluded = list(self._option("compile-exclude", []))
        found = []
        for path in sorted(Path(self.root, PACKAGE).rglob("*.py")):
            relative = path.relative_to(self.root).as_posix()
            if not any(fnmatch.fnmatchcase(relative, pattern) for pattern in excluded):
                found.append(relative)
        return found

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        self._scratch: str | None = None
        if self.target_name != "wheel" or not _wanted():
            return
        if version == "editable":
            self.app.display_warning(
                f"{ENV}=1 is ignored for an editable install: compiled extensions would "
                "shadow the edited sources; build a wheel (pip install .) instead"
            )
            return
        self._scratch = tempfile.mkdtemp(prefix="proxy-postrender-mypyc-")
        work = Path(self._scratch)
        shutil.copytree(
            Path(self.root, PACKAGE), work / PACKAGE, ignore=shutil.ignore_patterns("__pycache__")
        )
        modules = self.modules()
        opt = str(self._option("opt-level", "3"))
        debug = str(self._option("debug-level", "0"))
        jobs = str(os.cpu_count() or 1)
        self.app.display_info(
            f"compiling {len(modules)} modules with mypyc (-O{opt}, debug level {debug})"
        )
        command = [sys.executable, "-c", _COMPILE, opt, debug, jobs]
        command += [*self._option("mypy-args", []), *modules]
        proc = subprocess.run(
            command, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False
        )
        if proc.returncode:
            output = proc.stdout.decode(errors="replace")
            raise RuntimeError(f"mypyc failed (exit {proc.returncode}):\n{output}")
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        built = sorted(work.glob(f"*{suffix}")) + sorted(work.joinpath(PACKAGE).rglob(f"*{suffix}"))
        compiled = {Path(m).with_suffix(suffix).as_posix() for m in modules}
        missing = compiled - {p.relative_to(work).as_posix() for p in built}
        if missing:
            raise RuntimeError(f"mypyc built no extension for {sorted(missing)}")
        for path in built:
            build_data["force_include"][str(path)] = path.relative_to(work).as_posix()
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch: str | None = getattr(self, "_scratch", None)
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
