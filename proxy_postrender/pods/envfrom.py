"""What a container's ``envFrom`` gives it, as far as the stream tells.

Kubernetes fills a container's environment from its ``envFrom`` sources in order (a
later source's key wins over an earlier one's), each key behind the source's
``prefix``, and then from ``env``, whose entries win over every source. The sources
are the ConfigMaps and Secrets of the stream (noproxy/envsources.py read them in a
first pass); one the stream does not hold is named, since what it sets is not known.
An empty value counts as unset: it is left out, and it hides an earlier source's value.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import InputError
from proxy_postrender.objects import is_mapping
from proxy_postrender.structs import FrozenStruct

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.noproxy.envsources import EnvSources

_REFS = (("configMapRef", "ConfigMap"), ("secretRef", "Secret"))


class FromSources(FrozenStruct):
    """The variables a container's sources set (not empty), with the source that sets each,
    and the sources the stream does not tell about."""

    values: tuple[tuple[str, str, str], ...] = ()  # variable, value, the source's label
    unknown: tuple[str, ...] = ()  # "ConfigMap NAME (optional): not in the stream"

    def value(self, var: str) -> str | None:
        return next((v for n, v, _ in self.values if n == var), None)

    def source(self, var: str) -> str:
        return next((s for n, _, s in self.values if n == var), "")


def read(
    container: Mapping[str, Any],
    where: str,
    namespace: str,
    sources: EnvSources,
    names: frozenset[str],
) -> FromSources:
    """The values of ``names`` the ``envFrom`` of ``container`` (at ``where``) gives, from
    the stream's ``sources`` for an object in ``namespace`` ("": unknown)."""
    refs = container.get("envFrom")
    if refs is None:
        return FromSources()
    if not isinstance(refs, list):
        raise InputError(f"{where}.envFrom is not a list")
    values: dict[str, tuple[str, str]] = {}
    unknown: list[str] = []
    for index, ref in enumerate(refs):
        if not is_mapping(ref):
            raise InputError(f"{where}.envFrom[{index}] is not a mapping")
        prefix = ref.get("prefix")
        prefix = prefix if isinstance(prefix, str) else ""
        for field, kind in _REFS:
            named = ref.get(field)
            if not is_mapping(named) or not isinstance(named.get("name"), str):
                continue
            name = named["name"]
            if not name:
                continue
            source, why = sources.find(kind, namespace, name)
            if source is None:
                optional = " (optional)" if named.get("optional") is True else ""
                unknown.append(f"{kind} {name}{optional}: {why}")
                continue
            for key, value in source.values:
                if prefix + key in names:
                    values[prefix + key] = (value, source.label)
    found = tuple((var, value, label) for var, (value, label) in values.items() if value)
    return FromSources(found, tuple(unknown))
