"""Keep proxy credentials out of every message the tool writes.

Messages are built without proxy URL values in the first place; this module is
the second line of defence: every line that leaves the process through stderr,
a log file or a report goes through :meth:`Redactor.redact`.
"""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

MASK = "***"


class Redactor:
    def __init__(self) -> None:
        self._secrets: set[str] = set()

    def add_url(self, url: str) -> None:
        """Register the credential parts of a proxy URL (parsed or not)."""
        netloc = urlsplit(url).netloc if "://" in url else url
        if "@" not in netloc:
            return
        userinfo = netloc.rpartition("@")[0]
        user, _, password = userinfo.partition(":")
        if password:
            self.add(password)
            self.add(userinfo)
        elif user:
            # a user name alone can itself be a token (e.g. an API key)
            self.add(user)

    def add(self, secret: str) -> None:
        if len(secret) < 1:
            return
        for form in {
            secret,
            unquote(secret),
            quote(secret, safe=""),
            quote(unquote(secret), safe=""),
        }:
            if form:
                self._secrets.add(form)

    def redact(self, text: str) -> str:
        # longest first, so that a secret containing another one is masked whole
        for secret in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(secret, MASK)
        return text


def redact_url(url: str) -> str:
    """Return the URL with its password (and user) replaced, for display."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{MASK}@{host}").geturl()
