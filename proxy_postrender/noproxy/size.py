"""How large a NO_PROXY value the tool writes.

Linux takes one environment string of at most MAX_ARG_STRLEN (32 pages: 131072
bytes, ``NAME=`` and the final NUL included) in ``execve``; a longer one makes
every start of the container fail with "argument list too long" (E2BIG). All the
strings of a process (arguments and environment) also share ARG_MAX (a quarter of
the stack limit, 2 MiB by default). The tool writes NO_PROXY twice, as ``NO_PROXY``
and ``no_proxy``, and ``JAVA_TOOL_OPTIONS`` repeats it in about twice its size, so
the two strings together are bounded at half of one string's limit, and warned
about long before.
"""

from __future__ import annotations

MAX_ARG_STRLEN = 131072  # Linux: one argument or environment string, NUL included
LIMIT = 65536  # both strings, NO_PROXY=... and no_proxy=..., NULs included
WARN = 8192  # the same, where the warning starts

SIZE_CODE = "noproxy/size"
# code, whether --strict makes it an error, what it means (docs/noproxy.md)
CODES: tuple[tuple[str, bool, str], ...] = (
    (SIZE_CODE, True, "NO_PROXY is large: every container's environment carries it twice"),
)


def environment_bytes(value: str) -> int:
    """Bytes of environment that ``NO_PROXY=value`` and ``no_proxy=value`` take."""
    return 2 * (len("NO_PROXY=") + len(value.encode()) + 1)


def too_large(value: str, scope: str) -> str | None:
    """The reason a NO_PROXY ``value`` (of ``scope``) is refused; None when it is not."""
    total = environment_bytes(value)
    if total <= LIMIT:
        return None
    return (
        f"NO_PROXY of {scope} would be {len(value.encode())} bytes, {total} bytes of "
        f"environment with no_proxy: more than the tool writes ({LIMIT}; Linux refuses to "
        f"start a process with one environment string over {MAX_ARG_STRLEN} bytes)"
    )


def large(value: str, scope: str) -> str | None:
    """The warning about a large NO_PROXY ``value`` (of ``scope``); None when it is not."""
    total = environment_bytes(value)
    if total <= WARN:
        return None
    return (
        f"NO_PROXY of {scope} is {len(value.encode())} bytes, {total} bytes of environment "
        f"with no_proxy in every container (the tool refuses more than {LIMIT}; Linux, one "
        f"string over {MAX_ARG_STRLEN})"
    )
