"""What workloads read besides their variables: the Secret of the proxy URLs, the
ConfigMap of the proxy CA, and the plaintext gate.

With ``spec.credentials.secretRef`` the workloads read HTTP_PROXY and
HTTPS_PROXY (and the lower-case twins) from a Secret by ``secretKeyRef``;
with ``createSecret`` the tool also emits that Secret, once per namespace it
touched, marked as generated so that a re-run makes it anew. The plaintext
gate fails a run whose output still holds a URL with a password.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import DocumentContext, InputError
from proxy_postrender.nodes import kubeadm
from proxy_postrender.pods.selection import CA_KEY
from proxy_postrender.structs import Struct
from proxy_postrender.yamltext import splice, stream

if TYPE_CHECKING:
    from proxy_postrender.engine import Result
    from proxy_postrender.request import Request
    from proxy_postrender.yamltext.spool import Output

GENERATED_VALUE = "workload-credentials"
CA_GENERATED_VALUE = "ca-bundle"
# scheme://user:password@ — a URL that carries a password in clear
_PLAINTEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:[^\s/?#@]+@")
_ENCODED_COMMAND = re.compile(r"-EncodedCommand\s+([A-Za-z0-9+/=]+)")


class CredentialSecret(Struct, frozen=True):
    name: str
    data: tuple[tuple[str, str], ...]  # key -> proxy URL (with its credentials)


def touched_namespaces(result: Result, default: str | None) -> list[str | None]:
    """The namespaces of the workloads that now read from the Secret, in order."""
    return list({namespace or default: None for namespace in result.workload_namespaces})


# (namespace, name) of the objects of a kind in the output so far with one of the names
Existing = Callable[[set[str]], set[tuple[str | None, str]]]


def secret_documents(
    result: Result, request: Request, before: Output, existing: Existing
) -> list[str]:
    """The Secrets to emit (``spec.credentials.createSecret``), as new documents;
    ``existing`` finds the (namespace, name) of Secrets already in the stream."""
    secret = request.credential_secret
    if secret is None or not request.env:
        return []
    body = {"type": "Opaque", "stringData": dict(secret.data)}
    hint = "drop spec.credentials.createSecret to use it, or name another secretRef"
    return _per_namespace(result, request, before, existing, ("Secret", secret.name), body, hint)


def ca_documents(result: Result, request: Request, before: Output, existing: Existing) -> list[str]:
    """The ConfigMaps with the proxy CA that the workloads mount, as new documents."""
    ca, pem = request.workloads.ca, request.ca_pem
    if ca is None or pem is None or not request.env:
        return []
    body = {"data": {CA_KEY: pem}}
    hint = "set spec.caBundle.configMapName to another name"
    return _per_namespace(
        result, request, before, existing, ("ConfigMap", ca.config_map), body, hint
    )


def _per_namespace(
    result: Result,
    request: Request,
    before: Output,
    existing: Existing,
    kind_name: tuple[str, str],
    body: dict[str, Any],
    hint: str,
) -> list[str]:
    kind, name = kind_name
    namespaces = touched_namespaces(result, request.workloads.namespace)
    if None in namespaces and len(namespaces) > 1:
        others = ", ".join(str(n) for n in namespaces if n)
        raise InputError(
            f"some workloads have no namespace and others are in {others}: pass --namespace "
            f"so that the {kind} {name} is emitted once per namespace"
        )
    clash = existing({name}) & {(ns, name) for ns in namespaces}
    if clash:
        namespace = sorted(clash, key=str)[0][0]
        raise InputError(
            f"the stream already holds a {kind} {namespace + '/' if namespace else ''}{name}; "
            + hint
        )
    made_by = GENERATED_VALUE if kind == "Secret" else CA_GENERATED_VALUE
    docs = []
    for namespace in namespaces:
        metadata: dict[str, Any] = {"name": name}
        if namespace:
            metadata["namespace"] = namespace
        metadata["annotations"] = {kubeadm.GENERATED: made_by}
        document = {"apiVersion": "v1", "kind": kind, "metadata": metadata, **body}
        docs.append("---\n" + "\n".join(splice.block_lines(document)) + "\n")
    if docs and before.partial_line():
        docs[0] = "\n" + docs[0]
    return docs


def _decoded(payload: str) -> str:
    """A PowerShell -EncodedCommand payload (base64 of UTF-16LE) as text."""
    try:
        import base64  # lazy: start-up time

        return base64.b64decode(payload, validate=True).decode("utf-16-le", "replace")
    except ValueError:
        return ""


def check_plaintext(segments: Iterable[stream.Segment]) -> None:
    """Raise when a document holds a URL with a password in clear."""
    for index, segment in enumerate(segments, start=1):
        if _PLAINTEXT.search(segment.text) is None and not any(
            _PLAINTEXT.search(_decoded(m.group(1))) for m in _ENCODED_COMMAND.finditer(segment.text)
        ):
            continue
        raise InputError(
            "a URL with a password in clear (--forbid-plaintext-credentials); "
            "use spec.credentials.secretRef",
            DocumentContext(index, segment.line, source=segment.helm_source()),
        )
