"""The checks a run makes on its own output before anything is written.

:func:`verified` is the verification step, the safety net of the splice design:
every changed document must give exactly the data the plan asked for (the
original data with the operations applied); a document that does not is never
written. A splice is proved from its edits (:mod:`proxy_postrender.yamltext.check`:
the cost grows with what was inserted); what that cannot prove, and any other
output, is read back in full (:func:`equivalent`). ``PROXY_POSTRENDER_FULL_CHECK=1``
reads every changed document back in full (a debugging switch; the output is the
same). :func:`no_plaintext` is the gate of
``--forbid-plaintext-credentials``: no URL with a password in clear, also not
inside the PowerShell commands of Windows nodes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import DocumentContext, InputError
from proxy_postrender.objects import GENERATED
from proxy_postrender.patterns import compiled
from proxy_postrender.redact import base64_tokens
from proxy_postrender.structs import Struct
from proxy_postrender.yamltext.read import load_documents

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.yamltext.ops import Op
    from proxy_postrender.yamltext.splice import Edit
    from proxy_postrender.yamltext.stream import Segment
    from proxy_postrender.yamltext.tree import Node

# scheme://user:password@ — a URL that carries a password in clear
_PLAINTEXT = r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:[^\s/?#@]+@"
_ENCODED_COMMAND = r"-EncodedCommand\s+([A-Za-z0-9+/=]+)"


class Evidence(Struct):
    """What a splice claims: the segment's text before it, the node tree of its one
    document, and each operation with the edits made for it (``splice.edits_for``'s
    ``trace``)."""

    before: str
    root: Node
    trace: list[tuple[Op | None, list[Edit]]]


# Set to 1: every changed document is read back in full (the splice is not proved).
FULL_CHECK = "PROXY_POSTRENDER_FULL_CHECK"


def verified(text: str, expected: list[Any], evidence: Evidence | None = None) -> bool:
    """The verification step: whether ``text`` (a changed segment) gives exactly the
    documents ``expected``. With ``evidence`` of a splice of one document, proved from
    its edits when that is possible; else read back in full."""
    if evidence is not None and len(expected) == 1 and os.environ.get(FULL_CHECK) != "1":
        from proxy_postrender.yamltext import check  # lazy: start-up time

        if check.proved(evidence.before, text, evidence.root, evidence.trace, expected[0]):
            return True
    return equivalent(text, expected)


def equivalent(text: str, expected: list[Any]) -> bool:
    """Whether ``text``, read back in full, gives exactly the documents ``expected``."""
    docs = load_documents(text, spliced=True)
    return docs is not None and bool(docs == expected)


def _decoded(payload: str) -> str:
    """A PowerShell -EncodedCommand payload (base64 of UTF-16LE) as text."""
    try:
        import base64  # lazy: start-up time

        return base64.b64decode(payload, validate=True).decode("utf-16-le", "replace")
    except ValueError:
        return ""


# JSON's escapes of the characters of a URL's scheme and user-info (``\\/``, ``\\u0040``),
# behind any number of backslashes (a JSON text in a YAML double-quoted scalar)
_JSON_ESCAPE = compiled(r"\\+(?:/|u00([2-7][0-9A-Fa-f]))")
_NESTED = 3  # how deep base64 inside base64 is decoded


def _in_clear(text: str, plaintext: re.Pattern[str], depth: int = 0) -> int | None:
    """How many lines into ``text`` a URL with a password in clear is (None: none): also
    one written with JSON's escapes, or inside base64 (a Secret's data, an embedded
    document), base64 inside base64 too."""
    plain = text
    if "\\" in text:
        plain = _JSON_ESCAPE.sub(lambda m: chr(int(m[1], 16)) if m[1] else "/", text)
    match = plaintext.search(plain)
    if match:
        return plain.count("\n", 0, match.start())
    if depth >= _NESTED:
        return None
    for start, inner in base64_tokens(text):
        if _in_clear(inner, plaintext, depth + 1) is not None:
            return text.count("\n", 0, start)
    return None


def no_plaintext(segments: Iterable[Segment], *, secret_backed: bool = False) -> None:
    """Raise when a document holds a URL with a password in clear. ``secret_backed``:
    the profile keeps the workloads' credentials in a Secret (spec.credentials.secretRef),
    so a password in clear did not come from the tool's own writers."""
    plaintext, encoded = compiled(_PLAINTEXT), compiled(_ENCODED_COMMAND)
    for index, segment in enumerate(segments, start=1):
        below = _in_clear(segment.text, plaintext)  # lines below the segment's first
        if below is None and any(
            plaintext.search(_decoded(m.group(1))) for m in encoded.finditer(segment.text)
        ):
            below = 0
        if below is None:
            continue
        line = segment.line + below
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
