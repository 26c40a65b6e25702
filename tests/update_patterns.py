"""Write proxy_postrender/sre_programs.py: the program ``re`` makes of every pattern the
package compiles through :func:`proxy_postrender.patterns.compiled` when its modules are
imported, and of the few it compiles so on first use (``LAZY``) (start-up, issue 33).
Run it after changing such a pattern, or on another Python (tests/test_patterns.py
says when)::

    PYTHONPATH=$PWD .venv/bin/python -m tests.update_patterns
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import importlib
import pkgutil
import re
import sys
from pathlib import Path
from typing import Any

# re's parser and compiler (no stubs): what re.compile runs before _sre.compile
_parser: Any = importlib.import_module("re._parser")
_compiler: Any = importlib.import_module("re._compiler")
TARGET = Path(__file__).resolve().parent.parent / "proxy_postrender" / "sre_programs.py"
# the patterns compiled through patterns.compiled on first use: (module, constant)
LAZY = (
    ("proxy_postrender.yamltext.read", "_ODD_EMPTY"),
    ("proxy_postrender.verify", "_PLAINTEXT"),
    ("proxy_postrender.verify", "_ENCODED_COMMAND"),
)
HEAD = '''"""The programs of the package's regular expressions, as ``re`` compiled them (made by
``python -m tests.update_patterns``; do not edit): read by :mod:`proxy_postrender.patterns`,
used only on the Python version, implementation, regular-expression engine and byte order
named here."""

# ruff: noqa: E501

from __future__ import annotations

PYTHON: tuple[int, ...] = {python!r}
IMPLEMENTATION = "{implementation}"
MAGIC = {magic!r}
CODESIZE = {codesize!r}
# a large character set's block indices are native-endian words (re._compiler)
BYTEORDER = "{byteorder}"
# (pattern, flags) -> (flags, code, groups, group index, index group)
# fmt: off
PROGRAMS: dict[
    tuple[str, int],
    tuple[int, tuple[int, ...], int, dict[str, int], tuple[str | None, ...]],
] = {{
'''


def program(pattern: str, flags: int) -> tuple[Any, ...]:
    """What ``re._compiler.compile`` hands to ``_sre.compile``."""
    parsed = _parser.parse(pattern, flags)
    code = _compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    all_flags = int(flags | parsed.state.flags)
    return (
        all_flags,
        tuple(map(int, code)),
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )


def write(python: tuple[int, ...], magic: int, rows: list[str]) -> None:
    """The table; an empty one (``python`` ()) matches no Python."""
    head = HEAD.format(
        python=python,
        implementation=sys.implementation.name,
        magic=magic,
        codesize=_sre.CODESIZE,
        byteorder=sys.byteorder,
    )
    TARGET.write_text(head + "".join(rows) + "}\n# fmt: on\n")


def recorded() -> set[tuple[str, int]]:
    """The patterns the package's modules compile through patterns.compiled on import."""
    import proxy_postrender
    from proxy_postrender import patterns

    found: set[tuple[str, int]] = set()
    compile_ = re.compile

    def watch(pattern: Any, flags: int = 0) -> re.Pattern[Any]:
        if sys._getframe(1).f_code.co_filename == patterns.__file__:
            found.add((pattern, int(flags)))
        return compile_(pattern, flags)

    re.compile = watch
    try:
        for module in pkgutil.walk_packages(proxy_postrender.__path__, "proxy_postrender."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    finally:
        re.compile = compile_
    for module_name, name in LAZY:  # compiled on first use, not on import
        found.add((getattr(importlib.import_module(module_name), name), 0))
    return found


def main() -> None:
    write((), 0, [])  # an empty table first: every pattern then goes through re.compile
    rows = [f"    {key!a}: {program(*key)!a},\n" for key in sorted(recorded())]
    write(tuple(sys.version_info[:2]), _sre.MAGIC, rows)
    print(f"{TARGET}: {len(rows)} patterns")


if __name__ == "__main__":
    main()
