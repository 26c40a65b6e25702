"""The package's regular expressions from stored programs (proxy_postrender/patterns.py,
start-up, issue 33): each stored program is what ``re.compile`` makes of its pattern on
the running Python, and neither importing the package nor a plain run compiles a
pattern of the package through ``re`` (regenerate with ``python -m tests.update_patterns``)."""

from __future__ import annotations

import re
import sys
from typing import Any

from proxy_postrender import patterns, sre_programs
from tests.helpers import FIXTURES, probe_line, run_bare

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
    proc = run_bare(["-c", _PROBE, arg], stdin, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return set(filter(None, probe_line(proc).split(",")))


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


def _big_endian_program(pattern: str, flags: int) -> tuple[object, ...]:
    """The program ``re`` makes of ``pattern`` on a big-endian machine: a large character
    set's block indices are native-endian words (``re._compiler._bytes_to_codes``)."""
    import importlib

    from tests import update_patterns

    compiler: Any = importlib.import_module("re._compiler")  # the standard library's
    native = compiler._bytes_to_codes

    def big_endian(data: bytes) -> list[int]:
        return [int.from_bytes(data[i : i + 4], "big") for i in range(0, len(data), 4)]

    compiler._bytes_to_codes = big_endian
    try:
        return update_patterns.program(pattern, flags)
    finally:
        compiler._bytes_to_codes = native


def test_the_programs_are_used_only_on_the_byte_order_they_were_made_on() -> None:
    """A stored program of a large character set, run on a machine of the other byte
    order, is one the engine accepts and that matches other characters: the guard
    holds the byte order, the implementation and the code word size as well."""
    assert sys.byteorder == "little", "made on a little-endian machine: swap the two below"
    line_breaks = "[\n\r\x85\u2028\u2029]"
    stored = sre_programs.PROGRAMS[(line_breaks, 0)]
    other = _big_endian_program(line_breaks, 0)
    assert other != stored
    wrong = patterns.from_program(line_breaks, 0, other)  # type: ignore[arg-type]
    assert wrong.pattern == line_breaks and wrong.search("a\u2028b") is None  # silently wrong
    assert patterns.from_program(line_breaks, 0, stored).search("a\u2028b") is not None
    here = (
        sre_programs.PYTHON,
        sre_programs.IMPLEMENTATION,
        sre_programs.MAGIC,
        sre_programs.CODESIZE,
        sre_programs.BYTEORDER,
    )
    assert patterns.usable_on(*here) is patterns.usable()
    assert patterns.usable_on(*here[:4], "big") is False
    assert patterns.usable_on(here[0], "pypy", *here[2:]) is False
    assert patterns.usable_on(here[0], here[1], here[2], 2, here[4]) is False
    assert patterns.usable_on((3, 12), *here[1:]) is False


def test_a_program_the_engine_refuses_is_compiled_by_re() -> None:
    """A stored program the engine refuses (``_sre.compile``: "invalid SRE code") is
    not an error at import: the pattern is compiled by re."""
    made = patterns.from_program("a+b", 0, (32, (1, 2, 3), 0, {}, (None,)))
    assert made == re.compile("a+b") and made.fullmatch("aab")
