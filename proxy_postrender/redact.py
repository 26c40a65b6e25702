"""Keep proxy credentials out of every message the tool writes.

Messages are built without proxy URL values in the first place, and ``--diff``
shows a run made with masked values (:mod:`proxy_postrender.cli.diff`); this
module is the line of defence behind them. Every text that leaves the process
through stderr, a log file, the terminal, a report or KRM results goes through
one :class:`Redactor`, which masks:

- the secrets registered with it (the profile's and the flags' credentials, as
  soon as they are known), in each spelling the tool's escapers give them
  (URL-encoded or not; YAML/JSON, systemd, shell and PowerShell quoting, and each
  of those inside another);
- the user-info of anything shaped like a URL, in any of those quotings, and in
  the spelling of a record entry (:func:`proxy_postrender.record.escape`);
- PowerShell ``-EncodedCommand`` payloads that carry credentials;

and :meth:`Redactor.message` also escapes control characters, so that a name in a
message cannot forge a log line or drive a terminal.

Credentials are found on the raw text, not with ``urlsplit``: a password
holding ``/``, ``#``, ``?`` or ``[`` would end urlsplit's host part early.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from urllib.parse import quote, unquote

MASK = "***"
_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]*://"
# The patterns, compiled on first use (a run that writes no message needs none of them).
_PATTERNS = {
    # scheme://userinfo@ as any quoting writes a valid URL: the user-info of a valid proxy
    # URL has no whitespace, "/", "?", "#" or "@", and no escaper adds one
    "userinfo": rf"({_SCHEME})[^\s/?#@]*@",
    # in a one-line message, what a parser quotes may be no valid URL at all (a blank in
    # the password): the user-info runs to the last "@" before the next URL on the line
    "message": rf"({_SCHEME})(?:(?!{_SCHEME})[^\n])*@",
    # the same URL as a record entry spells it (record.escape: ":" "/" "@" as %3A %2F %40,
    # "%" as %25), e.g. the manifest value a field setter replaced (``field=NAME:was:``)
    "recorded": r"([A-Za-z][A-Za-z0-9+.-]*%3A%2F%2F)(?:(?!%2F|%3F|%23|%40)[A-Za-z0-9.~+_%-])*%40",
    "encoded": r"(-EncodedCommand\s+)([A-Za-z0-9+/=]+)",
    # base64 long enough to hold a URL with user-info (a Secret's data, an embedded
    # document: spec.targets[].embedded)
    "base64": r"(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/]{4}){5,}"
    r"(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![A-Za-z0-9+/=])",
    # the longest run of characters no escaper changes: every spelling of a secret holds it
    "plain": r"[A-Za-z0-9]+",
    # characters that must not reach a terminal or a log line raw: controls (C0 but the
    # newline, DEL, C1), line and paragraph separators, direction marks and overrides,
    # and surrogate escapes (bytes of the input that are no UTF-8)
    "unsafe": r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
    r"\ud800-\udfff]",
}
_COMPILED: dict[str, re.Pattern[str]] = {}


def _pattern(name: str) -> re.Pattern[str]:
    found = _COMPILED.get(name)
    if found is None:
        found = _COMPILED[name] = re.compile(_PATTERNS[name])
    return found


def userinfo(url: str) -> str | None:
    """The ``user[:password]`` part of a proxy URL, as written; None when there is none."""
    rest = url.split("://", 1)[1] if "://" in url else url
    if "@" not in rest:
        return None
    return rest.rpartition("@")[0]


_SHORT_ESCAPES = {0x09: "\\t", 0x0D: "\\r"}


def _double_quoted(text: str) -> str:
    """YAML and JSON double quotes, systemd's C-style quoting: backslash and quote escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _json_ascii(text: str) -> str:
    """JSON with every non-ASCII character as a ``\\uXXXX`` escape."""
    import json  # lazy: only for secrets with non-ASCII characters

    return json.dumps(text)[1:-1]


# How the tool's writers spell a value: each quoting, and each inside another (a
# systemd line inside a YAML double-quoted scalar, a shell word inside JSON...).
_ESCAPERS: tuple[Callable[[str], str], ...] = (
    _double_quoted,
    lambda text: _double_quoted(text).replace("%", "%%"),  # systemd Environment=
    lambda text: text.replace("'", "'\"'\"'"),  # POSIX shell, as shlex.quote writes it
    lambda text: text.replace("'", "'\\''"),  # POSIX shell, the other common way
    lambda text: re.sub("(['\u2018\u2019\u201a\u201b])", r"\1\1", text),  # PowerShell, YAML ''
    lambda text: text.replace("%", "%%"),  # systemd specifiers alone
)


def spellings(secret: str) -> set[str]:
    """``secret`` as the tool may write it: URL-encoded or decoded, in each quoting."""
    forms = {secret, unquote(secret), quote(secret, safe=""), quote(unquote(secret), safe="")}
    found: set[str] = set()
    for form in filter(None, forms):
        once = {form, *(escape(form) for escape in _ESCAPERS)}
        if not form.isascii():
            once |= {_json_ascii(f) for f in once}
        found |= once
        found |= {escape(f) for f in once for escape in _ESCAPERS}
    return found


def _plain_run(text: str) -> str:
    """The longest run of ASCII letters and digits in ``text`` ("" when none)."""
    return max(_pattern("plain").findall(text), key=len, default="")


def escape_controls(text: str) -> str:
    """``text`` with control, line- and direction-changing characters escaped (``\\r``,
    ``\\x1b``, ``\\u2028``...); newlines are kept."""
    unsafe = _pattern("unsafe")
    if unsafe.search(text) is None:
        return text

    def escaped(match: re.Match[str]) -> str:
        code = ord(match.group())
        return _SHORT_ESCAPES.get(code) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")

    return unsafe.sub(escaped, text)


class Redactor:
    """The secrets of one process, and the masking of every text it writes."""

    def __init__(self) -> None:
        self._pending: list[str] = []  # registered, spellings not made yet (start-up time)
        # the spellings of the secrets, grouped by the plain run they all contain
        self._groups: dict[str, set[str]] = {}
        self._plain: list[str] = []  # the same spellings, sorted longest first: no run

    @property
    def knows_secrets(self) -> bool:
        return bool(self._pending or self._groups or self._plain)

    def add_url(self, url: str) -> None:
        """Register the credential parts of a proxy URL (well-formed or not)."""
        info = userinfo(url)
        if not info:
            return
        user, _, password = info.partition(":")
        self.add(info)
        # with a password, the user name alone is not masked (it is often "proxy")
        self.add(password or user)

    def add_urls(self, values: Iterable[str | None]) -> None:
        for value in values:
            if value:
                self.add_url(value)

    def add(self, secret: str) -> None:
        """Register a secret value (a password, a user-info): masked in all its spellings."""
        if secret:
            self._pending.append(secret)

    def _spell(self) -> None:
        """Make the spellings of the secrets registered since the last time."""
        for secret in self._pending:
            for form in spellings(secret):
                run = _plain_run(form)
                if len(run) >= 3:
                    self._groups.setdefault(run, set()).add(form)
                elif form not in self._plain:
                    self._plain.append(form)
        self._pending.clear()
        self._plain.sort(key=len, reverse=True)

    def redact(self, text: str) -> str:
        """``text`` (a report, a diff, a log entry) with every credential masked."""
        text = _pattern("userinfo").sub(lambda m: m.group(1) + MASK + "@", text)
        if "%3A%2F%2F" in text:
            text = _pattern("recorded").sub(lambda m: m.group(1) + MASK + "%40", text)
        if "-EncodedCommand" in text:
            text = _pattern("encoded").sub(self._encoded_command, text)
        text = _pattern("base64").sub(self._base64, text)
        return self._known(text)

    def message(self, text: str) -> str:
        """A one-line message, masked (also URLs that are not valid ones) and with its
        control characters escaped."""
        text = self.redact(text.replace("\n", " "))
        text = _pattern("message").sub(lambda m: m.group(1) + MASK + "@", text)
        return escape_controls(text)

    def text(self, text: str) -> str:
        """A multi-line text (a report) masked, with control characters escaped."""
        return escape_controls(self.redact(text))

    def _known(self, text: str) -> str:
        if self._pending:
            self._spell()
        found = [f for run, forms in self._groups.items() if run in text for f in forms]
        # longest first, so that a secret containing another one is masked whole
        for secret in sorted(found, key=len, reverse=True) + self._plain:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def _encoded_command(self, match: re.Match[str]) -> str:
        """A PowerShell payload (base64 of UTF-16LE) with the credentials in it masked."""
        import base64  # lazy: only texts with PowerShell commands

        payload = match.group(2)
        try:
            script = base64.b64decode(payload, validate=True).decode("utf-16-le")
        except ValueError:
            return match.group(1) + MASK if self.knows_secrets else match.group()
        masked = self.redact(script)
        if masked == script:
            return match.group()
        return match.group(1) + base64.b64encode(masked.encode("utf-16-le")).decode("ascii")

    def _base64(self, match: re.Match[str]) -> str:
        """Base64 of UTF-8 text (an embedded document) with the credentials in it masked,
        encoded again; anything else as it is."""
        token = match.group()
        text = decode_base64(token)
        if text is None:
            return token
        masked = self.redact(text)
        if masked == text:
            return token
        import base64  # lazy: only texts with credentials inside base64

        return base64.b64encode(masked.encode("utf-8")).decode("ascii")


def decode_base64(token: str) -> str | None:
    """The UTF-8 text a base64 token holds (None: not base64 of such text)."""
    import base64  # lazy: only texts with base64
    import binascii

    try:
        return base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def base64_tokens(text: str) -> Iterable[tuple[int, str]]:
    """Where each base64 token of ``text`` starts, and the UTF-8 text it holds."""
    for match in _pattern("base64").finditer(text):
        decoded = decode_base64(match.group())
        if decoded is not None:
            yield match.start(), decoded


def redact_url(url: str) -> str:
    """The URL with its user-info masked, for display."""
    info = userinfo(url)
    if info is None:
        return url
    scheme = url.split("://", 1)[0] + "://" if "://" in url else ""
    return f"{scheme}{MASK}@{url.rpartition('@')[2]}"
