"""The ConfigMaps and Secrets of the stream a container may read variables from through
``envFrom``: read in a first pass, before any workload is planned (pods/envfrom.py asks
them what a container's sources set).

Only documents whose kind may be a ConfigMap or a Secret are looked at, and only in a
stream where a document has an ``envFrom`` (else no container reads any). Of those, the
ones whose text mentions ``proxy`` (in any case) or another variable the workloads get
(``JAVA_TOOL_OPTIONS``, ``spec.workloads.extraEnv``) are read whole and keep the values
of the keys that may become such a variable (``envFrom.prefix`` goes before the key:
a key is kept when a wanted name ends with it); the others are read for their name only
(the text of their ``metadata``), so that a reference to them is known to be in the
stream. A ConfigMap gives its ``data`` (``binaryData`` never reaches the environment);
a Secret its ``data``, base64, and ``stringData``, which wins (the API server merges it
into ``data``). A value that is no string, or no base64 of UTF-8 text, is left out.

An object is known by (namespace, name); an object without a namespace is in the one
``--namespace`` gives, else in an unknown one, and an unknown namespace fits any other
(the rule of noproxy/discovery.py and rollout/ledger.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.objects import LIST_KINDS, dig, is_mapping, walk_objects
from proxy_postrender.structs import FrozenStruct
from proxy_postrender.yamltext.read import MAX_PARSED_BYTES, load_documents

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.yamltext.stream import Segment

KINDS: frozenset[str] = frozenset({"ConfigMap", "Secret"})


class EnvSource(FrozenStruct):
    """A ConfigMap or Secret of the stream, with the values of its keys that may become a
    variable the workloads get."""

    kind: str
    namespace: str  # "" when the document names none and no --namespace is given
    name: str
    values: tuple[tuple[str, str], ...] = ()  # key, value; in the object's order

    @property
    def label(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


class EnvSources:
    """The ConfigMaps and Secrets of one stream, by kind and name."""

    def __init__(self) -> None:
        self._named: dict[tuple[str, str], list[EnvSource]] = {}

    def add(self, source: EnvSource) -> None:
        """Another object; one of the same kind, namespace and name read earlier is
        replaced (applied in stream order, the later one stays)."""
        found = self._named.setdefault((source.kind, source.name), [])
        found[:] = [s for s in found if s.namespace != source.namespace] + [source]

    def find(self, kind: str, namespace: str, name: str) -> tuple[EnvSource | None, str]:
        """The object a reference from ``namespace`` ("": unknown) names, and when there is
        none, why: not in the stream, or several of the stream's fit it and set different
        values."""
        candidates = self._named.get((kind, name), [])
        exact = [s for s in candidates if s.namespace == namespace]
        fitting = exact or [s for s in candidates if not s.namespace or not namespace]
        if not fitting:
            return None, "not in the stream"
        if any(s.values != fitting[0].values for s in fitting):
            spaces = ", ".join(s.namespace or "(none)" for s in fitting)
            return None, f"fits objects of several namespaces of the stream ({spaces})"
        return fitting[0], ""


def read(
    segments: Iterable[Segment], names: Iterable[str], namespace: str | None = None
) -> EnvSources:
    """The ConfigMaps and Secrets of ``segments``, keeping the values of the keys that may
    become one of ``names`` (the variables the workloads get); ``namespace``: that of the
    documents without one. A document that does not parse is left out (the main pass
    passes it through, or says why it cannot). None is read when no document of
    ``segments`` has an ``envFrom``."""
    wanted = frozenset(names)
    others = [n for n in wanted if "proxy" not in n.lower()]  # JAVA_TOOL_OPTIONS, extraEnv
    found = EnvSources()
    candidates: list[tuple[str, str | None]] = []
    referred = False  # whether any document has an envFrom (else none is read at all)
    for segment in segments:
        text = segment.text
        referred = referred or "envFrom" in text
        if ("ConfigMap" not in text and "Secret" not in text) or len(text) > MAX_PARSED_BYTES:
            continue
        kind = segment.sniff_kind()
        if kind is None or kind in KINDS or kind in LIST_KINDS:
            candidates.append((text, kind))
    for text, kind in candidates if referred else ():
        mentions = "proxy" in text.lower() or any(n in text for n in others)
        docs = _metadata_only(text, kind) if kind in KINDS and not mentions else None
        for doc in docs or load_documents(text) or []:
            for _, obj in walk_objects(doc):
                source = _source(obj, wanted, namespace)
                if source is not None:
                    found.add(source)
    return found


def _metadata_only(text: str, kind: str | None) -> list[Any] | None:
    """The object of ``kind`` with its top-level ``metadata`` alone, read from its own
    lines; None when they cannot be told from the text (then it is read whole)."""
    if not any(_top_line(text, f"apiVersion:{sep}v1") for sep in (" ", ' "', " '")):
        return None  # another group's kind, or spelled otherwise: read whole
    start = 0 if text.startswith("metadata:") else text.find("\nmetadata:") + 1
    if start == 0 and not text.startswith("metadata:"):
        return None
    end = text.find("\n", start)
    while 0 <= end < len(text) - 1 and text[end + 1] in " \t\r\n#":
        end = text.find("\n", end + 1)
    docs = load_documents(text[start:] if end < 0 else text[start : end + 1])
    if not docs or not is_mapping(docs[0]) or not is_mapping(docs[0].get("metadata")):
        return None
    return [{"apiVersion": "v1", "kind": kind, "metadata": docs[0]["metadata"]}]


def _top_line(text: str, line: str) -> bool:
    """Whether ``text`` has a line that starts with ``line`` and holds nothing more but a
    closing quote, spaces or a comment."""
    first = text.startswith(line)
    at = 0 if first else text.find("\n" + line) + 1
    while first or at > 0:
        first = False
        end = text.find("\n", at)
        rest = text[at + len(line) : end if end >= 0 else len(text)]
        if rest.split("#", 1)[0].strip(" \t\r\"'") == "":
            return True
        at = text.find("\n" + line, at + 1) + 1
    return False


def _source(
    obj: Mapping[str, Any], wanted: frozenset[str], namespace: str | None
) -> EnvSource | None:
    kind = obj.get("kind")
    if kind not in KINDS or obj.get("apiVersion") != "v1":
        return None
    name = dig(obj, "metadata", "name")
    own = dig(obj, "metadata", "namespace")
    if not isinstance(name, str) or not name:
        return None
    space = own if isinstance(own, str) and own else namespace or ""
    values: dict[str, str] = {}
    if kind == "ConfigMap":
        values.update(_plain(obj.get("data"), wanted))
    else:
        values.update(_decoded(obj.get("data"), wanted))
        values.update(_plain(obj.get("stringData"), wanted))
    return EnvSource(str(kind), space, name, tuple(values.items()))


def _kept(key: Any, wanted: frozenset[str]) -> bool:
    return isinstance(key, str) and bool(key) and any(n.endswith(key) for n in wanted)


def _plain(data: Any, wanted: frozenset[str]) -> list[tuple[str, str]]:
    if not is_mapping(data):
        return []
    return [(k, v) for k, v in data.items() if _kept(k, wanted) and isinstance(v, str)]


def _decoded(data: Any, wanted: frozenset[str]) -> list[tuple[str, str]]:
    """The base64 values of a Secret's ``data``, decoded (UTF-8 text only)."""
    if not is_mapping(data):
        return []
    import base64  # lazy: only Secrets that mention a wanted name
    import binascii

    found: list[tuple[str, str]] = []
    for key, value in data.items():
        if not _kept(key, wanted) or not isinstance(value, str):
            continue
        try:
            decoded = base64.b64decode("".join(value.split()), validate=True)
            found.append((key, decoded.decode("utf-8")))
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
    return found
