"""Keep proxy credentials out of every message the tool writes.

Messages are built without proxy URL values in the first place; this module is
the second line of defence: every line that leaves the process through stderr,
a log file or a report goes through :meth:`Redactor.redact`, which masks the
registered secrets and the user-info part of anything that looks like a URL.

Credentials are found on the raw text, not with ``urlsplit``: a password
holding ``/``, ``#``, ``?`` or ``[`` would end urlsplit's host part early.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

MASK = "***"
# scheme://userinfo@ — the user-info runs to the last "@" before whitespace or a quote
_URL_USERINFO_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^\s'\"]*@")
_ENCODED_COMMAND_RE = re.compile(r"(-EncodedCommand\s+)[A-Za-z0-9+/=]+")


def userinfo(url: str) -> str | None:
    """The ``user[:password]`` part of a proxy URL, as written; None when there is none."""
    rest = url.split("://", 1)[1] if "://" in url else url
    if "@" not in rest:
        return None
    return rest.rpartition("@")[0]


class Redactor:
    def __init__(self) -> None:
        self._secrets: set[str] = set()

    def add_url(self, url: str) -> None:
        """Register the credential parts of a proxy URL (well-formed or not)."""
        info = userinfo(url)
        if not info:
            return
        user, _, password = info.partition(":")
        self.add(info)
        # with a password, the user name alone is not masked (it is often "proxy")
        self.add(password or user)

    def add(self, secret: str) -> None:
        for form in {
            secret,
            unquote(secret),
            quote(secret, safe=""),
            quote(unquote(secret), safe=""),
        }:
            if not form:
                continue
            # as the tool writes it: YAML/JSON double quotes, systemd, shell, PowerShell
            quoted = form.replace("\\", "\\\\").replace('"', '\\"')
            for escaped in (
                form,
                quoted,
                quoted.replace("%", "%%"),
                form.replace("'", "'\\''"),
                form.replace("'", "''"),
            ):
                self._secrets.add(escaped)

    def redact(self, text: str) -> str:
        text = _URL_USERINFO_RE.sub(lambda m: m.group(1) + MASK + "@", text)
        if self._secrets:  # a PowerShell command carries the values base64-encoded
            text = _ENCODED_COMMAND_RE.sub(lambda m: m.group(1) + MASK, text)
        # longest first, so that a secret containing another one is masked whole
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return text


def redact_url(url: str) -> str:
    """The URL with its user-info masked, for display."""
    info = userinfo(url)
    if info is None:
        return url
    scheme = url.split("://", 1)[0] + "://" if "://" in url else ""
    return f"{scheme}{MASK}@{url.rpartition('@')[2]}"
