"""Plan the node-bootstrap changes for Cluster API kubeadm objects.

Every KubeadmConfigSpec gets systemd drop-ins for containerd (and kubelet) in
``files`` and, in front of ``preKubeadmCommands``, a daemon-reload, a
containerd restart that waits for its socket, and ``export`` lines (kubeadm
pulls images itself and copies ``*_proxy`` into the static pods). What the
tool added is recorded in ``proxy-postrender.io/node-bootstrap``
(``files=PATH,PATH;commands=N``). Pure data in, operations out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError
from proxy_postrender.nodes import quoting
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path
from proxy_postrender.plans import Env, Plan, SecretRef
from proxy_postrender.record import Record
from proxy_postrender.structs import Struct, field
from proxy_postrender.targets import Target
from proxy_postrender.yamltext.ops import Op, update_list

ANNOTATION = "proxy-postrender.io/node-bootstrap"
CONTAINERD_SOCKET = "/run/containerd/containerd.sock"
RESTART_CONTAINERD = (
    "systemctl restart containerd && for i in $(seq 1 60); do "
    f"[ -S {CONTAINERD_SOCKET} ] && break; sleep 1; done"
)
_LIST_KEYS = ("files", "preKubeadmCommands")
_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[/\\]")


DEFAULT_ENV_FILE = "/etc/proxy-postrender/proxy.env"
SECRET_KEYS = {"containerd": "containerd-http-proxy.conf", "kubelet": "kubelet-http-proxy.conf"}
ENV_KEY = "proxy.env"
CA_FILE = "/etc/proxy-postrender/proxy-ca.crt"
# Add the CA to the system trust with whichever tool the distribution has
# (RHEL family, Debian/Ubuntu, Flatcar); a node without one is left as it is.
_ANCHORS = "/etc/pki/ca-trust/source/anchors/proxy-postrender-ca.crt"
_LOCAL_CERTS = "/usr/local/share/ca-certificates/proxy-postrender-ca.crt"
TRUST_CA = (
    "if command -v update-ca-trust >/dev/null 2>&1; then "
    f"cp {CA_FILE} {_ANCHORS} && update-ca-trust extract; "
    "elif [ -d /usr/local/share/ca-certificates ]; then "
    f"cp {CA_FILE} {_LOCAL_CERTS} && update-ca-certificates; "
    "elif command -v update-ca-certificates >/dev/null 2>&1; then "
    f"cp {CA_FILE} /etc/ssl/certs/proxy-postrender-ca.pem && update-ca-certificates; fi"
)


class NodeSettings(Struct, frozen=True):
    containerd_dropin: str
    kubelet_dropin: str | None
    credentials: str = "inline"  # "inline": values in the manifests; "secret": contentFrom
    secret_name: str | None = None  # default: <cluster>-systemd-proxy
    create_secret: bool = True
    env_file: str = DEFAULT_ENV_FILE
    windows: str = "configure"  # or "skip": leave Windows node templates alone
    # "dropins": values in each drop-in; "envfile": one env file, drop-ins point at it
    layout: str = "dropins"
    ca_bundle: str | None = None  # PEM of a TLS-intercepting proxy's CA, for the node's trust
    on_conflict: str = "keep"  # when a spec already writes a drop-in path: keep, override, fail
    password: bool = False  # a proxy URL carries user:password (stricter file modes)


def secret_ref(obj: Mapping[str, Any], settings: NodeSettings) -> SecretRef:
    metadata: Mapping[str, Any] = (
        obj["metadata"] if isinstance(obj.get("metadata"), Mapping) else {}
    )
    labels: Mapping[str, Any] = (
        metadata["labels"] if isinstance(metadata.get("labels"), Mapping) else {}
    )
    cluster = labels.get("cluster.x-k8s.io/cluster-name")
    namespace = metadata.get("namespace")
    if settings.secret_name:
        name = settings.secret_name
    elif cluster or metadata.get("name"):
        name = f"{cluster or metadata.get('name')}-systemd-proxy"
    else:
        raise InputError("cannot name the proxy Secret: set spec.nodes.secretName")
    return SecretRef(name, str(namespace) if namespace else None, str(cluster) if cluster else None)


def secret_data(settings: NodeSettings, env: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The Secret's keys: the env file, and with the drop-ins layout the drop-ins too
    (the nodes read them as files: they pass the same gate)."""
    data = {}
    if settings.layout == "dropins":
        data[SECRET_KEYS["containerd"]] = quoting.dropin(env)
        if settings.kubelet_dropin:
            data[SECRET_KEYS["kubelet"]] = quoting.dropin(env)
    data[ENV_KEY] = quoting.env_file(env)
    return {
        key: quoting.gate(text, f"the Secret key {key}", lines=True) for key, text in data.items()
    }


class NodePlan(Plan):
    files_added: list[str] = field(default_factory=list)
    files_kept: list[str] = field(default_factory=list)  # same path set by the manifest
    commands: int = 0  # commands the tool now has in front
    changed_commands: bool = False
    secret: SecretRef | None = None  # the Secret the files now come from
    secret_env: Env = ()  # what the Secret must hold
    notes: list[str] = field(default_factory=list)
    no_proxy_from: tuple[str, ...] = ()  # the clusters whose networks NO_PROXY holds
    matched: str | None = None  # how the object was matched to them (or why not)

    def summary(self) -> str:
        return "node bootstrap"

    def node_secret(self) -> tuple[SecretRef, Env] | None:
        return None if self.secret is None else (self.secret, self.secret_env)

    @classmethod
    def for_env(cls, found: ObjectEnv) -> NodePlan:
        """An empty plan that says, when the object gets variables, whose NO_PROXY they hold."""
        plan = cls()
        if found.env:
            plan.no_proxy_from, plan.matched = found.clusters, found.how
        return plan

    def describe(self) -> list[str]:
        lines = []
        if self.skipped:
            lines.append(f"    skipped: {self.skipped}")
        if self.files_added:
            lines.append(f"    files written: {', '.join(dict.fromkeys(self.files_added))}")
        if self.changed_commands:
            lines.append(f"    preKubeadmCommands: {self.commands} commands in front")
        lines += [f"    kept (set by the manifest): {path}" for path in self.files_kept]
        lines += [f"    note: {note}" for note in self.notes]
        if self.no_proxy_from:
            lines.append(
                f"    NO_PROXY for {', '.join(self.no_proxy_from)} ({self.matched or 'matched'})"
            )
        elif self.matched:
            lines.append(f"    NO_PROXY without cluster values: {self.matched}")
        return lines


_PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
_POWERSHELL_PREFIX = "powershell -NoProfile -NonInteractive -EncodedCommand "


def is_tool_command(command: Any) -> bool:
    """Whether a preKubeadmCommands entry is one this tool writes."""
    if not isinstance(command, str):
        return False
    return (
        command in ("systemctl daemon-reload", RESTART_CONTAINERD, TRUST_CA)
        or any(command.startswith(f"export {name}=") for name in _PROXY_NAMES)
        or (command.startswith("set -a && . ") and command.endswith(" && set +a"))
        or command.startswith(_POWERSHELL_PREFIX)
    )


def _runs_powershell(command: Any) -> bool:
    if not isinstance(command, str) or not command.strip():
        return False
    first = command.split()[0].lower().rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    return first in ("powershell", "powershell.exe", "pwsh", "pwsh.exe") or first.endswith(".ps1")


def is_windows(spec: Mapping[str, Any]) -> bool:
    """A Windows node template: PowerShell commands or ``c:/`` file paths."""
    commands = [*(spec.get("preKubeadmCommands") or []), *(spec.get("postKubeadmCommands") or [])]
    if any(_runs_powershell(c) for c in commands):
        return True
    files = spec.get("files") or []
    return any(
        isinstance(f, Mapping) and _WINDOWS_PATH.match(str(f.get("path", ""))) for f in files
    )


def desired_files(
    settings: NodeSettings,
    env: Sequence[tuple[str, str]],
    secret: SecretRef | None = None,
) -> list[dict[str, Any]]:
    """The drop-ins, and the env file where one is used, as ``files`` entries."""
    paths = [("containerd", settings.containerd_dropin)]
    if settings.kubelet_dropin:
        paths.append(("kubelet", settings.kubelet_dropin))
    secret_mode = "0600" if settings.password else "0640"

    def entry(path: str, content: str, permissions: str = secret_mode) -> dict[str, Any]:
        content = quoting.gate(content, f"the file {path}", lines=True)
        return {"path": path, "owner": "root:root", "permissions": permissions, "content": content}

    def from_secret(path: str, key: str) -> dict[str, Any]:
        assert secret is not None
        ref = {"secret": {"name": secret.name, "key": key}}
        return {"path": path, "owner": "root:root", "permissions": "0600", "contentFrom": ref}

    ca = [entry(CA_FILE, settings.ca_bundle, "0644")] if settings.ca_bundle else []
    if settings.layout == "envfile":
        # the drop-ins carry no value: systemd reads the one env file
        dropins = [entry(p, quoting.dropin_envfile(settings.env_file), "0640") for _, p in paths]
        if secret is not None:
            return [*dropins, from_secret(settings.env_file, ENV_KEY), *ca]
        return [*dropins, entry(settings.env_file, quoting.env_file(env), "0600"), *ca]
    if secret is not None:
        files = [from_secret(path, SECRET_KEYS[unit]) for unit, path in paths]
        return [*files, from_secret(settings.env_file, ENV_KEY), *ca]
    dropin = quoting.dropin(env)
    return [*(entry(path, dropin) for _, path in paths), *ca]


def desired_commands(
    env: Sequence[tuple[str, str]], settings: NodeSettings, secret: SecretRef | None = None
) -> list[str]:
    """The proxy CA into the system trust (when given), daemon-reload, a containerd restart
    that waits for its socket, then the variables."""
    head = ["systemctl daemon-reload", RESTART_CONTAINERD]
    if settings.ca_bundle:
        head.insert(0, TRUST_CA)
    if secret is not None or settings.layout == "envfile":
        commands = [*head, f"set -a && . {settings.env_file} && set +a"]
    else:
        commands = [*head, *(quoting.shell_export(name, value) for name, value in env)]
    return [quoting.gate(command, "a preKubeadmCommands entry") for command in commands]


def desired_entries(
    settings: NodeSettings | None,
    env: Sequence[tuple[str, str]],
    secret: SecretRef | None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The files and leading commands a Linux spec should carry; none when removing.
    When a Secret will carry the values (secret mode), no writer here sees them: they
    are checked here, so that an error names the object."""
    if settings is None or not env:
        return [], []
    if secret is not None:
        quoting.check_env(env)
    return desired_files(settings, env, secret), desired_commands(env, settings, secret)


def _parse(recorded: Record) -> tuple[list[str], int, set[str]]:
    """Recorded drop-in paths, count of leading commands, and lists that were ``[]``."""
    files: list[str] = []
    commands = 0
    empty: set[str] = set()
    for entry in recorded.entries:
        key, _, value = entry.partition("=")
        if key == "files":
            files = [p for p in value.split(",") if p]
        elif key == "commands" and value.isdigit():
            commands = int(value)
        elif key == "empty":
            empty = {k for k in value.split(",") if k in _LIST_KEYS}
        else:
            raise InputError(f"annotation {ANNOTATION} is malformed near {entry!r}")
    return files, commands, empty


def as_list(value: Any, where: str) -> list[Any]:
    """A list value, or [] for null; anything else is an input error naming ``where``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where} is not a list")
    return value


def _list(spec: Mapping[str, Any], key: str, where: str) -> list[Any]:
    return as_list(spec.get(key), f"{where}.{key}")


class FilesPlan(Struct):
    ops: list[Op]
    owned: list[str]  # drop-in paths the tool owns afterwards, in the profile's order
    added: list[str]
    kept: list[str]  # drop-in paths the manifest already writes itself


def plan_files(
    parent: Mapping[str, Any],
    parent_path: Path,
    key: str,
    where: str,
    owned_paths: Sequence[str],
    wanted: Sequence[Mapping[str, str]],
    on_conflict: str,
    *,
    restore_empty: bool,
) -> FilesPlan:
    """The drop-ins in ``parent[key]``: the tool's are replaced when they differ,
    the manifest's own are kept (or overridden, or an error, per ``on_conflict``)."""
    items = _list(parent, key, where)
    by_path = {f["path"]: f for f in wanted}
    deleted: set[int] = set()
    owned: list[str] = []
    kept: list[str] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InputError(f"{where}.{key}[{index}] is not a mapping")
        path = str(item.get("path"))
        if path in owned_paths:
            if path in by_path and dict(item) == by_path[path] and path not in seen:
                owned.append(path)
            else:
                deleted.add(index)
            seen.add(path)
        elif path in by_path:
            if on_conflict == "fail":
                raise InputError(f"{where}.{key} already writes {path} (onConflict: fail)")
            if on_conflict == "override":
                deleted.add(index)
            else:
                kept.append(path)
    added = [dict(f) for f in wanted if f["path"] not in owned and f["path"] not in kept]
    added_paths = [f["path"] for f in added]
    # in the profile's order: those kept as they were, and those added now
    now_owned = [f["path"] for f in wanted if f["path"] in owned or f["path"] in added_paths]
    ops = update_list(parent, parent_path, key, deleted, added, restore_empty=restore_empty)
    return FilesPlan(ops, now_owned, added_paths, kept)


def plan_commands(
    parent: Mapping[str, Any],
    parent_path: Path,
    key: str,
    where: str,
    owned_count: int,
    wanted: Sequence[str],
    *,
    restore_empty: bool,
) -> list[Op]:
    """The tool's commands stay first in ``parent[key]``, the manifest's follow unchanged."""
    items = _list(parent, key, where)
    if len(items) < owned_count or not all(map(is_tool_command, items[:owned_count])):
        raise InputError(
            f"{where}.{key}: the first {owned_count} entries, recorded in {ANNOTATION} as the "
            "tool's, are not all its commands (was the list edited?); restore them or delete "
            "the annotation"
        )
    if items[:owned_count] == list(wanted):
        return []
    return update_list(
        parent,
        parent_path,
        key,
        set(range(owned_count)),
        list(wanted),
        front=True,
        restore_empty=restore_empty,
    )


def plan(
    obj: Mapping[str, Any],
    base: Path,
    target: Target,
    found: ObjectEnv,
    settings: NodeSettings | None,
) -> NodePlan:
    """The node bootstrap of the KubeadmConfigSpec at ``target.paths[0]`` (``settings``
    None: take out what the tool injected earlier)."""
    spec_path = target.paths[0]
    env = found.env
    on_conflict = settings.on_conflict if settings else "keep"
    result = NodePlan.for_env(found)
    spec: Any = obj
    for step in spec_path:
        spec = spec.get(step) if isinstance(spec, Mapping) else None
    where = ".".join(str(step) for step in spec_path)
    recorded = Record.read(obj, ANNOTATION)
    owned_files, owned_commands, empty = _parse(recorded)
    if spec is None:
        result.skipped = f"no {where}"
        return result
    if not isinstance(spec, Mapping):
        raise InputError(f"{where} is not a mapping")
    spec_full_path = (*base, *spec_path)
    secret = None
    wanted_files: list[dict[str, Any]] = []
    wanted_commands: list[str] = []
    if is_windows(spec):
        # never a Linux command in a Windows template
        if settings and env and settings.windows == "skip":
            result.skipped = "Windows node template left alone (nodes.windows: skip)"
        elif settings and env and settings.credentials == "secret":
            result.skipped = "Windows node template: secret mode covers Linux nodes only"
        elif settings and env:
            command = quoting.powershell_machine_env(env)
            wanted_commands = [quoting.gate(command, "a preKubeadmCommands entry")]
    elif settings and env:
        if settings.credentials == "secret":
            secret = result.secret = secret_ref(obj, settings)
            result.secret_env = env
        wanted_files, wanted_commands = desired_entries(settings, env, secret)

    # a list written as "[]" comes back as "[]" when the tool takes its entries out again
    empty |= {key for key in _LIST_KEYS if spec.get(key) == [] and key in spec}
    files = plan_files(
        spec,
        spec_full_path,
        "files",
        where,
        owned_files,
        wanted_files,
        on_conflict,
        restore_empty="files" in empty,
    )
    result.ops += files.ops
    result.files_added, result.files_kept = files.added, files.kept
    commands = plan_commands(
        spec,
        spec_full_path,
        "preKubeadmCommands",
        where,
        owned_commands,
        wanted_commands,
        restore_empty="preKubeadmCommands" in empty,
    )
    result.ops += commands
    result.changed_commands = bool(commands)
    result.commands = len(wanted_commands)
    now_owned = files.owned

    entries = []
    if now_owned:
        entries.append("files=" + ",".join(now_owned))
    if wanted_commands:
        entries.append(f"commands={len(wanted_commands)}")
    if entries and empty:
        entries.append("empty=" + ",".join(k for k in _LIST_KEYS if k in empty))
    result.ops += recorded.ops(obj, base, entries)
    return result
