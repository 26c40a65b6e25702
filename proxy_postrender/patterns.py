"""Regular expressions whose compiling was done when the package was made, not at each
start (start-up, issue 33).

``re.compile`` parses and compiles a pattern in Python: about a million instructions
for each of the YAML reader's patterns, 30 M of a plain run's start-up. :func:`compiled`
gives the same pattern object from the program that ``re`` made of it when
``tests/update_patterns.py`` last ran (:mod:`proxy_postrender.sre_programs`), for the
Python version and regular-expression engine it ran on; anything else (another Python,
a pattern not in the table) is compiled by ``re`` as before. tests/test_patterns.py
checks that every stored program equals what ``re.compile`` makes of its pattern on the
running Python, and that a plain run compiles none of the package's patterns itself.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # re's engine (no stubs): its compile()
import re
import sys

from proxy_postrender.sre_programs import MAGIC, PROGRAMS, PYTHON

_USABLE: bool = sys.version_info[:2] == PYTHON and _sre.MAGIC == MAGIC


def usable() -> bool:
    """Whether the stored programs are for this Python and its engine."""
    return _USABLE


def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, made from its stored program when there is one."""
    program = PROGRAMS.get((pattern, int(flags))) if _USABLE else None
    if program is None:
        return re.compile(pattern, flags)
    all_flags, code, groups, groupindex, indexgroup = program
    made: re.Pattern[str] = _sre.compile(
        pattern, all_flags, list(code), groups, dict(groupindex), indexgroup
    )
    return made
