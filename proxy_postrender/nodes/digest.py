"""The digest of the content the tool owns, and the names made from it.

A renamed template is ``<name>-<digest>``: ``name`` the one it had before the tool
first renamed it (its record keeps it, ``name=``), the digest the first
:data:`LENGTH` hexadecimal digits of SHA-256 over what the tool's entries hold
(:attr:`~proxy_postrender.nodes.kubeadm.NodePlan.owned`). So a re-run keeps the
name, one profile gives one name whatever came before, and a chart's own hash
suffix stays in ``name``. A node Secret's name carries the digest of its keys.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import InputError

if TYPE_CHECKING:
    from typing import Any

LENGTH: int = 10
MAX_NAME: int = 253  # the templates' and Secrets' names are DNS subdomains


def digest(owned: Any) -> str:
    """The digest of ``owned`` (JSON data), canonically written.

    >>> digest([["export A=1"]])
    '88012009d4'
    """
    import hashlib  # lazy: only runs that rename
    import json

    text = json.dumps(owned, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:LENGTH]


def with_digest(name: str, owned: Any, what: str) -> str:
    """``name-<digest of owned>``; an InputError when that is too long a name."""
    made = f"{name}-{digest(owned)}"
    if len(made) > MAX_NAME:
        raise InputError(
            f"{what} {name!r} cannot carry the digest of its proxy content: "
            f"{name}-<{LENGTH} digits> is longer than {MAX_NAME} characters; shorten the "
            "name, or set spec.nodes.rollout: inPlace"
        )
    return made


def is_digested(name: str, base: str) -> bool:
    """Whether ``name`` is ``base`` with a digest.

    >>> is_digested("corp-88012009d4", "corp"), is_digested("corp-x", "corp")
    (True, False)
    """
    suffix = name[len(base) + 1 :]
    return (
        name.startswith(base + "-")
        and len(suffix) == LENGTH
        and all(c in "0123456789abcdef" for c in suffix)
    )


def secret_name(name: str, data: Mapping[str, str]) -> str:
    """The name of a node Secret that holds ``data``."""
    return with_digest(name, sorted(data.items()), "the node Secret")
