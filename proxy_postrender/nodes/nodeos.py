"""Whether a kubeadm bootstrap configures Windows nodes: the one rule every planner uses.

The tool writes systemd drop-ins and shell exports for Linux nodes and one PowerShell
command for Windows nodes, so it must know which a KubeadmConfigSpec is for (or the
part of one that a ClusterClass patch writes). A mention decides nothing (a motd that
names PowerShell, ``apt-get install -y powershell``, a comment with ``C:/``); only what
the spec writes where the operating system shows:

- Windows: a file at a drive-letter path (``c:/k/azure.json``); a command whose program
  runs on Windows only (``powershell``, ``powershell.exe``, ``pwsh.exe``, ``cmd``,
  ``nssm``, a ``.ps1``, ``.exe``, ``.bat`` or ``.cmd``, a program on a drive letter, a
  PowerShell cmdlet such as ``New-Item``), or ``pwsh`` (which runs on Linux too) or
  PowerShell's ``&`` with a script on a drive letter; kubeadm's node
  registration on a named pipe (``criSocket: npipe:...``) or with kubelet arguments on
  drive-letter paths.
- Linux: a file at an absolute POSIX path; a command whose program is an absolute POSIX
  path (also after ``#!``) or a Linux tool (``systemctl``, ``apt-get``, ``bash``, ...);
  kubeadm's node registration on a unix socket.

A spec with a Windows sign and no Linux sign is Windows; one without a Windows sign is
Linux (a spec that shows nothing, too); one with both is refused, naming one of each:
the tool cannot tell which entries the nodes would run. The tool's own entries count
for neither. Pure data in, a bool out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping

from proxy_postrender import TYPE_CHECKING, dialects
from proxy_postrender.errors import InputError

if TYPE_CHECKING:
    from typing import Any

_DRIVE = r"[A-Za-z]:[/\\]"
_WINDOWS_PROGRAMS = frozenset(
    {"powershell", "powershell.exe", "pwsh.exe", "cmd", "cmd.exe", "nssm", "nssm.exe"}
)
_WINDOWS_SUFFIXES = (".ps1", ".exe", ".bat", ".cmd")
# a PowerShell cmdlet (Verb-Noun, one of the common verbs; case as PowerShell writes it):
# a command that is one runs under PowerShell, which Windows templates use as their shell
_CMDLET = (
    r"(?:New|Set|Get|Start|Stop|Restart|Add|Remove|Invoke|Copy|Move|Expand|Install|"
    r"Enable|Disable|Import|Register|Write|Rename|Test|Out|Wait)-[A-Z][A-Za-z]+"
)
_LINUX_PROGRAMS = frozenset(
    {
        "systemctl",
        "apt-get",
        "apt",
        "yum",
        "dnf",
        "zypper",
        "apk",
        "bash",
        "sh",
        "sudo",
        "sed",
        "chmod",
        "chown",
        "modprobe",
        "sysctl",
        "swapoff",
        "update-ca-certificates",
        "update-ca-trust",
    }
)
# the command lists the rule reads: the kubeadm row's (the one dialect with Windows nodes)
COMMAND_LISTS: tuple[str, ...] = dialects.KUBEADM.os_command_lists
# What made the old rule call a value Windows: only a value that mentions one of these
# and cannot be read is left undecided (patch values from Go templates).
_MENTIONS = r"(?im)powershell|pwsh|\.ps1\b|(^|[\s\"'])[A-Za-z]:[/\\]"
_ACTION = r"\{\{.*?\}\}"


def _never(command: str) -> bool:
    return False


def _items(spec: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = spec.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where}.{key} is not a list")
    return value


def _program(command: str) -> tuple[str, list[str]]:
    """The program a command runs (its first word, or the interpreter after ``#!``) and
    the words after it on its first line, without quotes."""
    line = command.strip()
    if line.startswith("#!"):
        line = line[2:]
    words = [w.strip("\"'") for w in line.split("\n", 1)[0].split()]
    return (words[0], words[1:]) if words else ("", [])


def command_sign(command: str) -> str | None:
    """ "windows", "linux" or None: what the program a command runs says."""
    program, args = _program(command)
    if not program:
        return None
    if re.match(_DRIVE, program):
        return "windows"
    if program.startswith("/"):
        return "linux"
    name = program.lower().rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    if name in _WINDOWS_PROGRAMS or name.endswith(_WINDOWS_SUFFIXES):
        return "windows"
    if name in ("pwsh", "&") and any(re.match(_DRIVE, arg) for arg in args):
        return "windows"  # pwsh runs on Linux too; & is PowerShell's call operator
    if re.fullmatch(_CMDLET, program):
        return "windows"
    return "linux" if name in _LINUX_PROGRAMS else None


def path_sign(path: str) -> str | None:
    if re.match(_DRIVE, path):
        return "windows"
    return "linux" if path.startswith("/") else None


class _Signs:
    def __init__(self) -> None:
        self.windows: list[str] = []
        self.linux: list[str] = []

    def add(self, sign: str | None, what: str) -> None:
        if sign == "windows":
            self.windows.append(what)
        elif sign == "linux":
            self.linux.append(what)


def _registration(spec: Mapping[str, Any], signs: _Signs) -> None:
    """The CRI socket and kubelet arguments kubeadm registers the node with."""
    for config in ("initConfiguration", "joinConfiguration"):
        section = spec.get(config)
        registration = section.get("nodeRegistration") if isinstance(section, Mapping) else None
        if not isinstance(registration, Mapping):
            continue
        where = f"{config}.nodeRegistration"
        socket = registration.get("criSocket")
        if isinstance(socket, str):
            if socket.startswith("npipe:"):
                signs.add("windows", f"{where}.criSocket {socket}")
            elif socket.startswith(("unix:", "/")):
                signs.add("linux", f"{where}.criSocket {socket}")
        args = registration.get("kubeletExtraArgs")
        if isinstance(args, Mapping):  # v1beta1: a map; v1beta2: a list of name/value
            values = [(str(k), v) for k, v in args.items()]
        elif isinstance(args, list):
            values = [(str(a.get("name")), a.get("value")) for a in args if isinstance(a, Mapping)]
        else:
            values = []
        for name, value in values:
            if isinstance(value, str) and re.match(_DRIVE, value):
                signs.add("windows", f"{where}.kubeletExtraArgs {name}={value}")


def _signs(
    spec: Mapping[str, Any],
    where: str,
    ignore_paths: Collection[str],
    is_tool: Callable[[str], bool],
) -> _Signs:
    signs = _Signs()
    for index, item in enumerate(_items(spec, "files", where)):
        if not isinstance(item, Mapping):
            raise InputError(f"{where}.files[{index}] is not a mapping")
        path = item.get("path")
        if isinstance(path, str) and path not in ignore_paths:
            signs.add(path_sign(path), f"files[{index}].path {path}")
    for key in COMMAND_LISTS:
        for index, command in enumerate(_items(spec, key, where)):
            if isinstance(command, str) and not is_tool(command):
                program = _program(command)[0]
                signs.add(command_sign(command), f"{key}[{index}] runs {program}")
    _registration(spec, signs)
    return signs


def is_windows(
    spec: Mapping[str, Any],
    where: str = "the spec",
    *,
    ignore_paths: Collection[str] = (),
    is_tool: Callable[[str], bool] = _never,
) -> bool:
    """Whether ``spec`` (a KubeadmConfigSpec, or the lists of one) configures Windows
    nodes, by the rule in the module docstring; ``where`` names it in errors. Files at
    ``ignore_paths`` and commands ``is_tool`` accepts (the tool's own) count for neither."""
    signs = _signs(spec, where, ignore_paths, is_tool)
    if signs.windows and signs.linux:
        raise InputError(
            f"cannot tell whether {where} configures Windows or Linux nodes: "
            f"{signs.windows[0]} is Windows, {signs.linux[0]} is Linux (the tool writes "
            "a PowerShell command for Windows, drop-ins and shell exports for Linux); "
            "make them agree"
        )
    return bool(signs.windows)


def read_template(text: str) -> Any:
    """The data of a Go template's YAML, each ``{{ }}`` action set aside (a line of only
    actions dropped, an action inside a value read as a word); None when that is not
    one YAML document."""
    from proxy_postrender.yamltext import libyaml  # lazy: only ClusterClass patches need it

    lines = []
    for line in text.splitlines():
        if line.strip() and not re.sub(_ACTION, "", line).strip():
            continue  # {{ if }}, {{ end }}: no data of their own
        lines.append(re.sub(_ACTION, "TEMPLATE", line))
    try:
        docs = libyaml.load_data("\n".join(lines) + "\n")
    except Exception:  # any YAML error: the template is not read
        return None
    return docs[0] if len(docs) == 1 else None


def _lists_only(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The lists of a patch's value that can be read: the patch planner checks their
    shape itself (an item from a template action is a word here, not a mapping)."""
    files = spec.get("files")
    lists: dict[str, Any] = {
        "files": [f for f in files if isinstance(f, Mapping)] if isinstance(files, list) else []
    }
    for key in COMMAND_LISTS:
        value = spec.get(key)
        lists[key] = value if isinstance(value, list) else []
    for config in ("initConfiguration", "joinConfiguration"):
        if config in spec:
            lists[config] = spec[config]
    return lists


def value_is_windows(
    value: Any,
    template: str | None,
    list_key: str | None,
    where: str,
    *,
    ignore_paths: Collection[str] = (),
    is_tool: Callable[[str], bool] = _never,
) -> bool:
    """Whether a ClusterClass patch's value configures Windows nodes: its literal
    ``value``, or its ``template`` text read as YAML; ``list_key`` names the list the
    value is (None: the value is the spec that holds the lists). A template the tool
    cannot read decides Linux when it mentions nothing Windows-like, and is refused
    when it does."""
    if template is not None:
        value = read_template(template)
        readable = isinstance(value, list) if list_key else isinstance(value, Mapping)
        if not readable:
            found = re.search(_MENTIONS, template)
            if found is None:
                return False
            raise InputError(
                f"cannot tell whether {where} configures Windows or Linux nodes: its "
                f"template mentions {found.group(0).strip()!r} but is not YAML the tool can "
                "read with its {{ }} actions set aside; write the files and commands as "
                "YAML, with actions only inside values"
            )
    spec = {list_key: value} if list_key else value
    if not isinstance(spec, Mapping):
        return False
    return is_windows(_lists_only(spec), where, ignore_paths=ignore_paths, is_tool=is_tool)
