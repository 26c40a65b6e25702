"""Regular expressions whose compiling was done when the package was made, not at each
start (start-up, issue 33).

``re.compile`` parses and compiles a pattern in Python: about a million instructions
for each of the YAML reader's patterns, 30 M of a plain run's start-up. :func:`compiled`
gives the same pattern object from the program that ``re`` made of it when
``tests/update_patterns.py`` last ran (:mod:`proxy_postrender.sre_programs`), for the
Python version, implementation and regular-expression engine it ran on, and its byte
order (``re`` writes a large character set's block indices as native-endian words: a
program made on a little-endian machine is valid on a big-endian one, and matches
other characters there); anything else (another Python, a pattern not in the table, a
program the engine refuses) is compiled by ``re`` as before. tests/test_patterns.py
checks that every stored program equals what ``re.compile`` makes of its pattern on the
running Python, and that a plain run compiles none of the package's patterns itself.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # re's engine (no stubs): its compile()
import re
import sys

from proxy_postrender.sre_programs import (
    BYTEORDER,
    CODESIZE,
    IMPLEMENTATION,
    MAGIC,
    PROGRAMS,
    PYTHON,
)


def usable_on(
    python: tuple[int, ...], implementation: str, magic: int, codesize: int, byteorder: str
) -> bool:
    """Whether the stored programs are for a Python of this version and implementation,
    whose engine has this magic number and code word size, on a machine of this byte
    order."""
    return (
        python == PYTHON
        and implementation == IMPLEMENTATION
        and magic == MAGIC
        and codesize == CODESIZE
        and byteorder == BYTEORDER
    )


_USABLE: bool = usable_on(
    tuple(sys.version_info[:2]),
    sys.implementation.name,
    _sre.MAGIC,
    _sre.CODESIZE,
    sys.byteorder,
)


def usable() -> bool:
    """Whether the stored programs are for this Python, its engine and this machine."""
    return _USABLE


def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, made from its stored program when there is one."""
    program = PROGRAMS.get((pattern, int(flags))) if _USABLE else None
    if program is None:
        return re.compile(pattern, flags)
    return from_program(pattern, flags, program)


def from_program(
    pattern: str,
    flags: int,
    program: tuple[int, tuple[int, ...], int, dict[str, int], tuple[str | None, ...]],
) -> re.Pattern[str]:
    """The pattern object of a stored program; ``re.compile`` when the engine refuses
    the program (``_sre.compile`` checks its code: "invalid SRE code")."""
    all_flags, code, groups, groupindex, indexgroup = program
    try:
        made: re.Pattern[str] = _sre.compile(
            pattern, all_flags, list(code), groups, dict(groupindex), indexgroup
        )
    except RuntimeError:
        return re.compile(pattern, flags)
    return made
