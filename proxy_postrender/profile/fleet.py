"""The per-cluster entries of a profile (``spec.clusters[]``): each one the defaults
with its own fields over them, built and checked as a whole profile is.

- ``httpProxy``, ``httpsProxy``, ``credentials``, ``caBundle`` and
  ``nodes.secretName`` replace the defaults';
- ``noProxy`` is added after ``spec.noProxy`` (its entries' source says which entry).

The entry's profile is built by the same code as the defaults (``build`` below:
the loader's), so every rule of a field holds for it too, and every proxy URL is
registered with the redactor before it is checked.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.noproxy.fleet import ClusterMatch
from proxy_postrender.profile import build as builders
from proxy_postrender.profile.records import ClusterEntry
from proxy_postrender.structs import replace

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from proxy_postrender.profile import check
    from proxy_postrender.profile.records import Profile

    Build = Callable[[dict[str, Any], str, set[str]], Profile]

# the fields of an entry that replace the defaults' (nodes: only secretName)
_REPLACED = ("httpProxy", "httpsProxy", "credentials", "caBundle")


def entries(
    fields: Mapping[str, Any], raw: Any, origin: str, ctx: check.Context, build: Build
) -> tuple[ClusterEntry, ...]:
    """The entries of ``fields["clusters"]`` (checked against their table first; ``raw``:
    the same before ``${VAR}`` expansion, to tell inline credentials)."""
    checked = builders.spec_field("clusters", fields, origin, ctx)
    given = fields["clusters"]
    made = []
    for index, values in enumerate(checked):
        where = f"spec.clusters[{index}]"
        entry = given[index]
        before = raw[index] if isinstance(raw, list) and index < len(raw) else {}
        inline = {
            key
            for key in ("httpProxy", "httpsProxy")
            if isinstance(before.get(key), str) and "${" not in before[key]
        }
        match = values["match"]
        profile = build(_merged(fields, entry), f"{origin} {where}", inline)
        if values["noProxy"]:  # after spec.noProxy, named by where it was written
            added = ((f"{where}.noProxy", values["noProxy"]),)
            profile = replace(
                profile, no_proxy_config=replace(profile.no_proxy_config, added=added)
            )
        made.append(ClusterEntry(where, ClusterMatch(match["names"], match["labels"]), profile))
    return tuple(made)


def _merged(fields: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults' fields with the entry's over them."""
    merged = {key: value for key, value in fields.items() if key != "clusters"}
    for key in _REPLACED:
        if key in entry:
            merged[key] = entry[key]
    secret_name = (entry.get("nodes") or {}).get("secretName")
    if secret_name is not None:
        merged["nodes"] = {**(fields.get("nodes") or {}), "secretName": secret_name}
    return merged
