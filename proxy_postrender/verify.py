"""The checks a run makes on its own output before anything is written.

:func:`equivalent` is the safety net of the splice design: every changed
document is read back and must give exactly the data the plan asked for
(the original data with the operations applied); a document that does not is
never written. :func:`no_plaintext` is the gate of
``--forbid-plaintext-credentials``: no URL with a password in clear, also not
inside the PowerShell commands of Windows nodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import DocumentContext, InputError
from proxy_postrender.objects import GENERATED
from proxy_postrender.yamltext.read import load_documents

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.yamltext.stream import Segment

# scheme://user:password@ — a URL that carries a password in clear
_PLAINTEXT = r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:[^\s/?#@]+@"
_ENCODED_COMMAND = r"-EncodedCommand\s+([A-Za-z0-9+/=]+)"


def equivalent(text: str, expected: list[Any]) -> bool:
    """Whether ``text``, read back, gives exactly the documents ``expected``."""
    docs = load_documents(text, spliced=True)
    return docs is not None and bool(docs == expected)


def _decoded(payload: str) -> str:
    """A PowerShell -EncodedCommand payload (base64 of UTF-16LE) as text."""
    try:
        import base64  # lazy: start-up time

        return base64.b64decode(payload, validate=True).decode("utf-16-le", "replace")
    except ValueError:
        return ""


def no_plaintext(segments: Iterable[Segment], *, secret_backed: bool = False) -> None:
    """Raise when a document holds a URL with a password in clear. ``secret_backed``:
    the profile keeps the workloads' credentials in a Secret (spec.credentials.secretRef),
    so a password in clear did not come from the tool's own writers."""
    plaintext, encoded = re.compile(_PLAINTEXT), re.compile(_ENCODED_COMMAND)
    for index, segment in enumerate(segments, start=1):
        match = plaintext.search(segment.text)
        if match is None and not any(
            plaintext.search(_decoded(m.group(1))) for m in encoded.finditer(segment.text)
        ):
            continue
        line = segment.line + (segment.text.count("\n", 0, match.start()) if match else 0)
        where = f"a URL with a password in clear at line {line} (--forbid-plaintext-credentials)"
        if GENERATED in segment.text:
            hint = (
                "the Secret that spec.credentials.createSecret or spec.nodes.createSecret emits "
                "holds the password; create that Secret another way"
            )
        elif secret_backed:
            hint = (
                "proxy-postrender writes none with spec.credentials.secretRef, so it came with "
                "the input (the chart's own values); take it out there"
            )
        else:
            hint = "keep the password in a Secret with spec.credentials.secretRef"
        raise InputError(
            f"{where}: {hint}",
            DocumentContext(index, segment.line, source=segment.helm_source()),
        )
