"""Render Python strings as YAML scalars that every YAML 1.1/1.2 reader reads back unchanged."""

from __future__ import annotations

from functools import lru_cache

from proxy_postrender.patterns import compiled

# Plain only when the text starts with a letter (so it cannot resolve to a number,
# date or alias) and uses characters that are inert in block context.
_PLAIN_RE = compiled(r"[A-Za-z][A-Za-z0-9._/@%+=,;~*-]*(?::(?=[^ \t])[A-Za-z0-9._/@%+=,;~*-]*)*")
# YAML 1.1 (and Go's yaml.v2) read these as booleans or null when plain
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\t": "\\t",
    "\r": "\\r",
    "\0": "\\0",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    if code < 0x20 or 0x7F <= code < 0xA0 or 0xD800 <= code < 0xE000 or code in (0xFFFE, 0xFFFF):
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return ch


@lru_cache(maxsize=4096)
def render(value: str) -> str:
    """A scalar for ``value``: plain when that is unambiguous, else double-quoted."""
    if _PLAIN_RE.fullmatch(value) and value.lower() not in _RESERVED and not value.endswith(":"):
        return value
    return double_quoted(value)


def render_like(value: str, style: str | None, *, block: bool = False) -> str:
    """A scalar for ``value`` in the quoting of the one it replaces (``style``: ``"``,
    ``'`` or plain/None): a quoted value stays quoted the same way where it can, and a
    plain one stays plain where it can (``block``: in block context, which takes more
    characters plain, :func:`render_block`).

    >>> render_like("a-1", '"'), render_like("it's", "'"), render_like("a-1", None)
    ('"a-1"', "'it''s'", 'a-1')
    """
    if style == '"':
        return double_quoted(value)
    if style == "'" and not _UNSAFE_RE.search(value.replace("\\", "").replace('"', "")):
        return "'" + value.replace("'", "''") + "'"
    if not style and plain_name(value):
        return value
    if block and not style:
        return value if _plain_list(value) else render_block(value)
    return render(value)


# a comma-separated list (a NO_PROXY) that starts with a digit or a dot: no number, date,
# boolean or null of YAML 1.1 or 1.2 holds a comma
_LIST_RE = compiled(r"[0-9.][^\t]*,[^\t]*")


def _plain_list(value: str) -> bool:
    """Whether ``value``, a list such as ``10.0.0.0/8,.svc``, is read back as that string
    when written plain in block context (a chart's plain NO_PROXY, merged with the
    profile's, stays plain, and comes back plain: --remove)."""
    return bool(
        _LIST_RE.fullmatch(value)
        and value.isprintable()
        and ": " not in value
        and " #" not in value
        and not value.endswith((":", " "))
    )


# an object name (DNS-1123) that starts with a digit, and a date at its start
_NAME_RE = compiled(r"[0-9][0-9a-z.-]*")
_DATE_START_RE = compiled(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}")
_NO_NUMBER_RE = compiled(r"[g-npqrstuvwyz]|[^eE]-")  # no letter of 0x, 0o or 1e5 numbers


def plain_name(value: str) -> bool:
    """Whether ``value``, an object name that starts with a digit (``0-workers``), is read
    back as that string when written plain (block or flow): a letter that no number holds,
    or a ``-`` after its first character and not after an ``e``, makes it no number of YAML
    1.1 or 1.2 (or of Go's readers), and it does not start like a date. So such a plain
    name renamed ``<name>-<digest>`` stays plain, and comes back plain (--remove).

    >>> [plain_name(v) for v in ("0-md-3f9a1c", "1t", "1e-5", "0x1f", "2026-11-27x", "12")]
    [True, True, False, False, False, False]
    """
    if not _NAME_RE.fullmatch(value) or _DATE_START_RE.match(value):
        return False
    return _NO_NUMBER_RE.search(value) is not None


# the characters _escape changes
_UNSAFE_RE = compiled(r'[\\"\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\ufffe\uffff]')


def double_quoted(value: str) -> str:
    return '"' + _UNSAFE_RE.sub(lambda m: _escape(m.group()), value) + '"'


@lru_cache(maxsize=4096)
def render_flow(value: str, quote: bool) -> str:
    """A scalar for ``value`` inside a flow collection: plain only without ',' (a flow
    indicator) and ':' (libyaml and YAML 1.2 read "a:b" differently there), and never
    with ``quote`` (the document writes its strings double-quoted, as JSON does)."""
    if quote or "," in value or ":" in value:
        return double_quoted(value)
    return render(value)


def render_other(value: object) -> str | None:
    """A boolean, null or integer as YAML writes it (None for a string or anything else)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    return None


def literal_ok(value: str) -> bool:
    """Whether ``value`` reads back exactly as a ``|`` block scalar (clip chomping)."""
    if not value.endswith("\n") or value.endswith("\n\n"):
        return False
    lines = value[:-1].split("\n")
    return (
        lines[0] != ""
        and not lines[0][0].isspace()
        and all(line == line.rstrip() for line in lines)
        and all(ch == "\t" or ch.isprintable() for line in lines for ch in line)
    )


_BLOCK_PLAIN_RE = compiled(r"[A-Za-z/][^\t]*")


@lru_cache(maxsize=4096)
def render_block(value: str) -> str:
    """Like :func:`render`, but for block context only: plain also with spaces and brackets."""
    if (
        _BLOCK_PLAIN_RE.fullmatch(value)
        and value.isprintable()
        and ": " not in value
        and " #" not in value
        and not value.endswith((":", " "))
        and value.lower() not in _RESERVED
    ):
        return value
    return render(value)
