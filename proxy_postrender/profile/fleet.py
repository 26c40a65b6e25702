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
from proxy_postrender.errors import ProfileError
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
        _no_borrowed_user(fields, entry, f"{origin}: {where}")
        try:
            profile = build(_merged(fields, entry), f"{origin} {where}", inline)
        except ProfileError as exc:  # name the entry's field, not the defaults'
            raise ProfileError(_renamed(str(exc), f"{origin} {where}", origin, where)) from None
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


def _no_borrowed_user(fields: Mapping[str, Any], entry: Mapping[str, Any], where: str) -> None:
    """Refuse an entry that gives another proxy but keeps the defaults' fromEnv: the
    defaults' user and password would be sent to that proxy."""
    credentials = fields.get("credentials")
    if "credentials" in entry or not isinstance(credentials, Mapping):
        return
    if credentials.get("fromEnv") is None:
        return
    given = [key for key in ("httpProxy", "httpsProxy") if key in entry]
    if given:
        raise ProfileError(
            f"{where}: gives its own {' and '.join(given)} but would keep "
            "spec.credentials.fromEnv, sending the defaults' user and password to that "
            "proxy; give the entry its own credentials (credentials: {} for none)"
        )


def _renamed(message: str, built_as: str, origin: str, where: str) -> str:
    """A message about the entry's profile, its fields named by their place in the file:
    ``ORIGIN spec.clusters[0]: spec.httpProxy: ...`` becomes
    ``ORIGIN: spec.clusters[0].httpProxy: ...``."""
    prefix = f"{built_as}: spec."
    if message.startswith(prefix):
        return f"{origin}: {where}.{message[len(prefix) :]}"
    if message.startswith(f"{built_as}: "):
        return f"{origin}: {where}: {message[len(built_as) + 2 :]}"
    return message
