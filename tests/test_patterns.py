"""The package's regular expressions from stored programs (proxy_postrender/patterns.py,
start-up, issue 33): each stored program is what ``re.compile`` makes of its pattern on
the running Python, and neither importing the package nor a plain run compiles a
pattern of the package through ``re`` (regenerate with ``python -m tests.update_patterns``)."""

from __future__ import annotations

import re
import subprocess
import sys

from proxy_postrender import patterns, sre_programs
from tests.helpers import FIXTURES, ROOT

# compiled through re on purpose: one pattern per indentation column, made on demand
DYNAMIC = {"yamltext/blockread.py"}

_PROBE = """
import re, sys
compile_ = re._compile
found = []
def watch(pattern, flags):
    if (type(pattern), pattern, flags) not in re._cache:
        frame = sys._getframe(1)
        while frame and frame.f_code.co_filename.endswith("re/__init__.py"):
            frame = frame.f_back
        name = frame.f_code.co_filename
        if "/proxy_postrender/" in name:
            found.append(name.split("/proxy_postrender/")[1])
    return compile_(pattern, flags)
re._compile = watch
if sys.argv[1] == "import":
    import importlib, pkgutil, proxy_postrender
    for module in pkgutil.walk_packages(proxy_postrender.__path__, "proxy_postrender."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
else:
    import atexit
    atexit.register(lambda: sys.stderr.write("PROBE " + ",".join(sorted(set(found))) + "\\n"))
    sys.argv = ["proxy-postrender", sys.argv[1]]
    from proxy_postrender.cli.entry import main
    main()
sys.stderr.write("PROBE " + ",".join(sorted(set(found))) + "\\n")
"""


def _compiled_by_re(arg: str, stdin: bytes = b"") -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, arg],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    line = next(x for x in proc.stderr.decode().splitlines() if x.startswith("PROBE "))
    return set(filter(None, line.removeprefix("PROBE ").split(",")))


def test_the_programs_are_for_this_python() -> None:
    assert sre_programs.PROGRAMS, "run python -m tests.update_patterns"
    if sys.version_info[:2] == sre_programs.PYTHON:
        assert patterns.usable(), "re's engine changed: run python -m tests.update_patterns"


def test_every_stored_program_is_what_re_compiles() -> None:
    for pattern, flags in sre_programs.PROGRAMS:
        made, expected = patterns.compiled(pattern, flags), re.compile(pattern, flags)
        assert made == expected, pattern  # same pattern, flags and program
        assert (made.groups, dict(made.groupindex)) == (expected.groups, expected.groupindex)
        assert made is not expected or not patterns.usable()


def test_a_pattern_not_stored_is_compiled_by_re() -> None:
    made = patterns.compiled(r"(?P<x>not (stored))+", re.IGNORECASE)
    assert made == re.compile(r"(?P<x>not (stored))+", re.IGNORECASE)
    assert made.match("NOT STORED").group("x") == "NOT STORED"  # type: ignore[union-attr]


def test_importing_the_package_compiles_none_of_its_patterns() -> None:
    assert _compiled_by_re("import") == set()


def test_a_plain_run_compiles_none_of_its_patterns() -> None:
    demo = FIXTURES / "demo"
    found = _compiled_by_re(str(demo / "profile.yaml"), (demo / "rendered.yaml").read_bytes())
    assert found - DYNAMIC == set()
