"""The entries of a distribution that reads its own unit environment file (RKE2, K3s).

A dialect row with ``env_files`` (proxy_postrender/dialects.py) names, per level, the
file its service unit reads (RKE2: ``/etc/default/rke2-server`` or ``-agent``; K3s:
``/etc/default/k3s`` or ``k3s-agent``). Its nodes get, in place of kubeadm's systemd
drop-ins and containerd restart (the distribution is installed after the commands
run, by the provider's own script):

- that file, mode 0600, ``KEY='value'`` lines (``quoting.env_file``), or in secret mode
  from the Secret's env file key (``contentFrom``); a row with ``env_file_inline``
  False (K3s, whose installer writes its unit env file from the exported variables)
  gets the file in secret mode only;
- first in the command list: the proxy CA into the system trust (when given), then
  ``export`` lines, or, when the file holds the values, one line that sources it: the
  installer's download and the distribution's image pulls go through the proxy.

A template a ClusterClass names (inline values) carries no value: its commands source
the file, which the class's own patch appends to its file list per cluster
(nodes/classvars.py), and a value-free drop-in for the distribution's unit that reads
the file keeps that list there for the patch to append to (``dropin_path``).

Pure data in, entries out: the planner (nodes/kubeadm.py) puts them in with the row's
writers, as for every row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.nodes import quoting

if TYPE_CHECKING:
    from typing import Any


class Parts:
    """What the entries are made of, beside the variables (from the node settings)."""

    def __init__(
        self,
        path: str,
        inline_file: bool,
        secret: Mapping[str, str] | None,
        ca_file: Mapping[str, Any] | None,
        trust: str,
    ) -> None:
        self.path = path  # the unit env file of the object's level
        self.inline_file = inline_file  # the file is written with inline values too
        self.secret = secret  # {name, key} of the Secret's env file key (secret mode)
        self.ca_file = ca_file  # the proxy CA's file entry, when the nodes get one
        self.trust = trust  # the command that adds it to the system trust


def dropin_path(env_file: str) -> str:
    """The value-free drop-in of a shared template, for the unit whose env file is
    ``env_file`` (its units read ``/etc/default/%N``: the file's name is the unit's).

    >>> dropin_path("/etc/default/rke2-agent")
    '/etc/systemd/system/rke2-agent.service.d/proxy-postrender.conf'
    """
    unit = env_file.rsplit("/", 1)[-1]
    return f"/etc/systemd/system/{unit}.service.d/proxy-postrender.conf"


def entries(
    parts: Parts, env: Sequence[tuple[str, str]], label: str, *, shared: bool = False
) -> tuple[list[dict[str, Any]], list[str]]:
    """The files and the leading commands of a spec (``label`` names a command in an
    error). ``shared`` (a template a ClusterClass names, inline values): the value-free
    drop-in, and the commands source the file (the class's own patch writes it).

    >>> parts = Parts("/etc/default/rke2-agent", True, None, None, "")
    >>> files, commands = entries(parts, [("HTTP_PROXY", "http://p:3128")], "an entry")
    >>> files[0]["path"], files[0]["permissions"], files[0]["content"]
    ('/etc/default/rke2-agent', '0600', 'HTTP_PROXY=http://p:3128\\n')
    >>> commands
    ['export HTTP_PROXY=http://p:3128']
    >>> entries(Parts("/etc/default/k3s", False, {"name": "s", "key": "proxy.env"}, None, ""),
    ...     [("HTTP_PROXY", "http://p:3128")], "an entry")[1]
    ['set -a && . /etc/default/k3s && set +a']
    """
    head = [parts.trust] if parts.ca_file is not None else []
    ca = [dict(parts.ca_file)] if parts.ca_file is not None else []
    source = f"set -a && . {parts.path} && set +a"
    if parts.secret is not None:
        ref = {"secret": dict(parts.secret)}
        file = {"path": parts.path, "owner": "root:root", "permissions": "0600", "contentFrom": ref}
        commands = [*head, source]
        return [file, *ca], [quoting.gate(c, label) for c in commands]
    if shared:
        path = dropin_path(parts.path)
        content = quoting.gate(quoting.dropin_envfile(parts.path), f"the file {path}", lines=True)
        dropin = {"path": path, "owner": "root:root", "permissions": "0640", "content": content}
        return [dropin, *ca], [quoting.gate(c, label) for c in [*head, source]]
    exports = [quoting.shell_export(name, value) for name, value in env]
    commands = [quoting.gate(c, label) for c in [*head, *exports]]
    if not parts.inline_file:
        return ca, commands
    content = quoting.gate(quoting.env_file(env), f"the file {parts.path}", lines=True)
    file = {"path": parts.path, "owner": "root:root", "permissions": "0600", "content": content}
    return [file, *ca], commands
