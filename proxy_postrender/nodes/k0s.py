"""k0smotron's bootstrap formats (the K0SMOTRON row of proxy_postrender/dialects.py).

k0smotron (k0sproject/k0smotron at 3897bbe645698acbe9974449bb771e949dedb77e) writes a
node's bootstrap as cloud-init (the default), as Ignition (v1beta1: ``spec.ignition``
set; v1beta2: ``provisioner.type: ignition``) or as a PowerShell script (v1beta2:
``provisioner.type: powershell*`` or ``provisioner.platform: windows``):

- cloud-init: the output starts with ``## template: jinja``
  (internal/provisioner/cloudinit.go), so ``{{``, ``{%`` or ``{#`` in a value would be
  read by Jinja: refused, as for every node (nodes/quoting.py);
- Ignition: every command is its own ``ExecStart=/bin/sh -c '...'`` of
  ``k0s-bootstrap.service`` (internal/provisioner/ignition.go): an ``export`` does not
  reach the k0s download and install, and a ``'`` breaks the line. The tool writes the
  unit drop-in to ``k0s-bootstrap.service.d`` as well, and puts no variable in a command;
- PowerShell (Windows): no systemd: refused.

Pure data in, the entries (or an error) out.
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING, dialects

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError

IGNITION: str = "ignition"
CLOUD_CONFIG: str = "cloud-config"
BOOTSTRAP_DROPIN: str = (
    f"/etc/systemd/system/{dialects.K0S_BOOTSTRAP_UNIT}.service.d/http-proxy.conf"
)


def provisioner(spec: Mapping[str, Any], where: str) -> str:
    """ "ignition" or "cloud-config" for a k0s bootstrap spec; an error for Windows nodes.

    >>> provisioner({"ignition": {"variant": "flatcar"}}, "spec")
    'ignition'
    >>> provisioner({"provisioner": {"type": "cloud-config"}}, "spec")
    'cloud-config'
    """
    found = spec.get("provisioner")
    found = found if isinstance(found, Mapping) else {}
    kind = found.get("type")
    platform = found.get("platform")
    if platform not in (None, "linux"):
        raise InputError(
            f"{where}.provisioner.platform is {platform!r}: these nodes bootstrap with a "
            "PowerShell script, where the tool's systemd drop-ins do not apply; configure "
            "their proxy by their own means, and set spec.nodes.enabled: false"
        )
    if kind not in (None, CLOUD_CONFIG, IGNITION):
        raise InputError(
            f"{where}.provisioner.type is {kind!r}: the tool writes k0s node bootstrap only "
            "for cloud-config and ignition (systemd drop-ins; PowerShell has none); configure "
            "these nodes' proxy by their own means, and set spec.nodes.enabled: false"
        )
    if kind == IGNITION or spec.get("ignition") is not None:
        return IGNITION
    return CLOUD_CONFIG


def adapt(
    spec: Mapping[str, Any],
    where: str,
    wanted: tuple[list[dict[str, Any]], list[str]],
) -> tuple[list[dict[str, Any]], list[str]]:
    """The row's files and commands in the form of the spec's format: with Ignition, the
    unit drop-in for k0s-bootstrap.service too and no command that carries a variable."""
    files, commands = wanted
    form = provisioner(spec, where)
    if form == CLOUD_CONFIG:
        return files, commands  # '{{' and the like: refused for every node (quoting.py)
    if not files:
        return files, commands
    bootstrap = {**files[0], "path": BOOTSTRAP_DROPIN}  # the k0s unit's drop-in, again
    kept = [c for c in commands if not c.startswith(("export ", "set -a && . "))]
    return [*files[:1], bootstrap, *files[1:]], kept
