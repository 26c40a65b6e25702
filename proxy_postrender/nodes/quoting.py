"""Text for node bootstrap: systemd unit values and shell lines, escaped exactly."""

from __future__ import annotations

import re
from collections.abc import Sequence

from proxy_postrender.errors import ProfileError


def _check(value: str) -> None:
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        # a newline would end the unit line or the shell command early
        raise ProfileError(
            "a proxy setting contains a control character; it cannot be written safely"
        )


def systemd_environment(name: str, value: str) -> str:
    """One ``Environment="NAME=value"`` line.

    systemd unquotes C-style inside double quotes (``\\\\`` and ``\\"``) and expands
    ``%`` specifiers in Environment=, so ``%`` is doubled.
    """
    _check(value)
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'Environment="{name}={escaped}"'


def dropin(env: Sequence[tuple[str, str]]) -> str:
    """A systemd drop-in that sets ``env`` for the service."""
    return "[Service]\n" + "".join(systemd_environment(n, v) + "\n" for n, v in env)


def dropin_envfile(path: str) -> str:
    """A drop-in that reads the service's environment from ``path``."""
    return f"[Service]\nEnvironmentFile={path.replace('%', '%%')}\n"


def shell_export(name: str, value: str) -> str:
    """``export NAME='value'`` safe for any value (POSIX single quoting)."""
    _check(value)
    import shlex  # lazy: start-up time

    return f"export {name}={shlex.quote(value)}"


def env_file(env: Sequence[tuple[str, str]]) -> str:
    """``NAME=value`` lines, POSIX single-quoted.

    Both readers take the same text: ``set -a; . FILE`` in a shell, and
    systemd's EnvironmentFile= (which, like the shell, joins adjacent quoted
    parts and expands no ``%`` specifiers or ``$`` references).
    """
    for _, value in env:
        _check(value)
    import shlex  # lazy: start-up time

    return "".join(f"{name}={shlex.quote(value)}\n" for name, value in env)


# PowerShell ends a single-quoted string at any of these; each is escaped by doubling
_PS_QUOTES = re.compile("(['\u2018\u2019\u201a\u201b])")


def powershell_string(value: str) -> str:
    """A PowerShell single-quoted string: every quote character PowerShell knows is doubled."""
    _check(value)
    return "'" + _PS_QUOTES.sub(r"\1\1", value) + "'"


def powershell_machine_env(env: Sequence[tuple[str, str]], service: str = "containerd") -> str:
    """One command that sets ``env`` machine-wide on Windows and restarts ``service``.

    The script travels base64-encoded (UTF-16LE, as ``-EncodedCommand`` wants),
    so no value ever meets cmd.exe or PowerShell command-line quoting.
    """
    lines = ["$ErrorActionPreference = 'Stop'"]
    lines += [
        f"[Environment]::SetEnvironmentVariable({powershell_string(n)}, "
        f"{powershell_string(v)}, 'Machine')"
        for n, v in env
    ]
    lines.append(f"Restart-Service {service}")
    import base64  # lazy: start-up time

    encoded = base64.b64encode("\n".join(lines).encode("utf-16-le")).decode("ascii")
    return f"powershell -NoProfile -NonInteractive -EncodedCommand {encoded}"
