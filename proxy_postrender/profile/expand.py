"""The ``${VAR}`` references in a profile's values.

A reference is replaced by the variable of the tool's environment only in the
fields whose row in the option tables says so (``Option.expand``: the proxy
URLs, where a password has its documented place); anywhere else it is an error
naming the field, so that no value of the environment (a CI token, a cloud
key) lands in a manifest through, say, ``extraEnv``. ``$${`` writes a literal
``${`` in any field. A profile that comes with the input reads no variable at
all unless the user allows it (``denied``: why not, and how to allow it).

Only the values are read: mapping keys stay as written. Fields the tables do
not know are checked like fields that expand nothing (check.py refuses them
next).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import ProfileError
from proxy_postrender.profile import check, tables

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from proxy_postrender.profile.options import Option, Section
    from proxy_postrender.profile.records import Overrides

    Strings = Callable[[str, str], str]  # (a string value, where) -> its text

_VAR = r"\$(\$?)\{([^}]*)\}"


def _substituted(value: str, variable: Callable[[str], str]) -> str:
    """``value`` with each ``${NAME}`` replaced by ``variable(NAME)``; ``$${`` escapes."""
    if "${" not in value:
        return value

    def substitute(match: re.Match[str]) -> str:
        escaped, name = match.group(1), match.group(2)
        return "${" + name + "}" if escaped else variable(name)

    return re.sub(_VAR, substitute, value)


def expand_vars(
    value: str, where: str, environ: Mapping[str, str], denied: str | None = None
) -> str:
    """Replace ``${NAME}`` with the environment variable; ``$${`` escapes. ``denied``:
    the profile may read no variable, and this says why."""

    def variable(name: str) -> str:
        if not re.match(check.VARIABLE, name):
            raise ProfileError(f"{where}: '${{{name}}}' is not a valid variable reference")
        if denied is not None:
            raise ProfileError(f"{where}: '${{{name}}}': {denied}")
        if name not in environ:
            raise ProfileError(f"{where}: environment variable {name} is not set")
        return environ[name]

    return _substituted(value, variable)


def literal(value: str, where: str) -> str:
    """A value of a field that expands nothing: ``$${`` escapes, a reference is an error."""

    def variable(name: str) -> str:
        raise ProfileError(
            f"{where}: '${{{name}}}' is not expanded here: only {_words(expanding())} "
            "may hold ${VAR} references (write $${ for a literal ${)"
        )

    return _substituted(value, variable)


def _words(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def expanding() -> list[str]:
    """The fields that may hold references, as the docs name them (from the tables)."""
    return _expanding(tables.SPEC)


def _expanding(table: Section) -> list[str]:
    found: list[str] = []
    for option in table.options:
        if option.expand:
            found.append(f"{table.name}.{option.name}")
        inner = option.kind.table()
        if inner is not None:
            found += _expanding(inner)
    return found


def section(
    table: Section,
    given: Mapping[Any, Any],
    where: str,
    environ: Mapping[str, str],
    denied: str | None = None,
) -> dict[Any, Any]:
    """The fields of the mapping ``given`` of ``table``, references expanded or refused."""
    by_name = {option.name: option for option in table.options}
    sep = ": " if table.root else "."
    return {
        key: _value(by_name.get(key), value, f"{where}{sep}{key}", environ, denied)
        for key, value in given.items()
    }


def _value(
    option: Option | None,
    value: Any,
    where: str,
    environ: Mapping[str, str],
    denied: str | None,
) -> Any:
    """One field's value: a section's mapping (or a list of them) field by field, any
    other value with every string in it expanded or checked."""
    table = option.kind.table() if option is not None else None
    if table is not None and isinstance(value, Mapping):
        return section(table, value, where, environ, denied)
    if table is not None and isinstance(value, list):
        return [
            section(table, item, f"{where}[{i}]", environ, denied)
            if isinstance(item, Mapping)
            else _strings(item, f"{where}[{i}]", literal)
            for i, item in enumerate(value)
        ]
    if option is not None and option.expand:
        return _strings(value, where, lambda text, here: expand_vars(text, here, environ, denied))
    return _strings(value, where, literal)


def _strings(value: Any, where: str, text: Strings) -> Any:
    """``value`` with ``text`` applied to every string in it (values, not keys)."""
    if isinstance(value, str):
        return text(value, where)
    if isinstance(value, list):
        return [_strings(v, f"{where}[{i}]", text) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return {k: _strings(v, f"{where}.{k}", text) for k, v in value.items()}
    return value


def no_references(overrides: Overrides) -> None:
    """Flags (and the PROXY_POSTRENDER_* variables that stand for them) expand nothing: a
    ``${VAR}`` there is what the shell left in single quotes, not text to percent-encode.
    The message does not repeat the reference: inside a URL's password, the redactor
    masks it as the password."""
    for flag, field, value in (
        ("--http-proxy", "spec.httpProxy", overrides.http_proxy),
        ("--https-proxy", "spec.httpsProxy", overrides.https_proxy),
        ("--no-proxy", None, overrides.no_proxy),
    ):
        if value is None or re.search(r"\$\{[^}]*\}", value) is None:
            continue
        instead = f", or write the reference in a profile file's {field}" if field else ""
        variable = "PROXY_POSTRENDER_" + flag[2:].replace("-", "_").upper()
        raise ProfileError(
            f"{flag} (or ${variable}) holds a ${{VAR}} reference, and flags do not expand "
            "variables: let the "
            f'shell expand it (double quotes: {flag} "...$VAR...")' + instead
        )
