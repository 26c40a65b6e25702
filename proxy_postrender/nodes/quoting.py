"""Text for node bootstrap: systemd unit values and shell lines, escaped exactly.

Everything the tool writes into a node's files and commands passes a last gate
here, whatever checked the values before (the profile's validation, the
discovery of a Cluster's values): Cluster API renders its cloud-init user data
as a Jinja template (``## template: jinja``), so ``{{``, ``{%`` or ``{#`` would
run as code on the node, as root; a control character would end a unit line or
a command early. The gate raises InputError, which the engine reports with the
document that was being changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from proxy_postrender.errors import InputError
from proxy_postrender.patterns import compiled

# what starts a Jinja expression, statement or comment
TEMPLATE = compiled(r"\{[{%#]")
_CONTROL = compiled(r"[\x00-\x1f\x7f]")
_CONTROL_BUT_NEWLINE = compiled(r"[\x00-\x09\x0b-\x1f\x7f]")
_JINJA = (
    "which cloud-init would render as Jinja code on the node (Cluster API user data is a template)"
)


def check_value(name: str, value: str) -> None:
    """Refuse a variable's value that cannot be written into node bootstrap safely."""
    if _CONTROL.search(value):
        # a newline would end the unit line or the shell command early
        raise InputError(
            f"the value of {name} contains a control character; it cannot be written into "
            "node bootstrap safely"
        )
    if TEMPLATE.search(value):
        raise InputError(f"the value of {name} holds '{{{{', '{{%' or '{{#', {_JINJA}")


def check_env(env: Iterable[tuple[str, str]]) -> None:
    for name, value in env:
        check_value(name, value)


def gate(text: str, what: str, *, lines: bool = False) -> str:
    """``text`` as written into a node (a file's content, ``lines``; or a command), when
    it holds no template delimiter and no control character (but newlines in files)."""
    control = _CONTROL_BUT_NEWLINE if lines else _CONTROL
    if control.search(text):
        raise InputError(f"{what} would contain a control character; refusing to write it")
    if TEMPLATE.search(text):
        raise InputError(f"{what} would hold '{{{{', '{{%' or '{{#', {_JINJA}")
    return text


def systemd_environment(name: str, value: str) -> str:
    """One ``Environment="NAME=value"`` line.

    systemd unquotes C-style inside double quotes (``\\\\`` and ``\\"``) and expands
    ``%`` specifiers in Environment=, so ``%`` is doubled.
    """
    check_value(name, value)
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
    check_value(name, value)
    import shlex  # lazy: start-up time

    return f"export {name}={shlex.quote(value)}"


def env_file(env: Sequence[tuple[str, str]]) -> str:
    """``NAME=value`` lines, POSIX single-quoted.

    Both readers take the same text: ``set -a; . FILE`` in a shell, and
    systemd's EnvironmentFile= (which, like the shell, joins adjacent quoted
    parts and expands no ``%`` specifiers or ``$`` references).
    """
    check_env(env)
    import shlex  # lazy: start-up time

    return "".join(f"{name}={shlex.quote(value)}\n" for name, value in env)


# PowerShell ends a single-quoted string at any of these; each is escaped by doubling
_PS_QUOTES = compiled("(['\u2018\u2019\u201a\u201b])")


def powershell_string(value: str, name: str = "a setting") -> str:
    """A PowerShell single-quoted string: every quote character PowerShell knows is doubled."""
    check_value(name, value)
    return "'" + _PS_QUOTES.sub(r"\1\1", value) + "'"


def powershell_machine_env(env: Sequence[tuple[str, str]], service: str = "containerd") -> str:
    """One command that sets ``env`` machine-wide on Windows and restarts ``service``.

    The script travels base64-encoded (UTF-16LE, as ``-EncodedCommand`` wants),
    so no value ever meets cmd.exe or PowerShell command-line quoting.
    """
    lines = ["$ErrorActionPreference = 'Stop'"]
    lines += [
        f"[Environment]::SetEnvironmentVariable({powershell_string(n)}, "
        f"{powershell_string(v, n)}, 'Machine')"
        for n, v in env
    ]
    lines.append(f"Restart-Service {service}")
    import base64  # lazy: start-up time

    encoded = base64.b64encode("\n".join(lines).encode("utf-16-le")).decode("ascii")
    return f"powershell -NoProfile -NonInteractive -EncodedCommand {encoded}"
