"""Plan the node-bootstrap changes for Cluster API bootstrap objects, in their dialect.

Every spec of a dialect row whose nodes take files and commands (kubeadm's
KubeadmConfigSpec, EKS's EKSConfig and NodeadmConfig specs; proxy_postrender/
dialects.py) gets systemd drop-ins for containerd (and kubelet) in its file list
(kubeadm: ``files``) and, in front of its command list (kubeadm:
``preKubeadmCommands``), a daemon-reload, a containerd restart that waits for
its socket, and ``export`` lines (kubeadm pulls images itself and copies
``*_proxy`` into the static pods); the writers of nodes/writers.py put them in.
What the tool added is recorded in ``proxy-postrender.io/node-bootstrap``
(``files=PATH,PATH;commands=N``). Pure data in, operations out.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender import dialects
from proxy_postrender.dialects import BootstrapKind, Dialect
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import quoting

# (the names the profile and the request import from nodes/settings.py; here too)
from proxy_postrender.nodes.settings import ANNOTATION as ANNOTATION
from proxy_postrender.nodes.settings import DEFAULT_ENV_FILE as DEFAULT_ENV_FILE
from proxy_postrender.nodes.settings import NodeSettings as NodeSettings
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path
from proxy_postrender.plans import Env, Plan, SecretRef
from proxy_postrender.record import Record
from proxy_postrender.structs import FrozenStruct, Struct, field, replace
from proxy_postrender.targets import Target
from proxy_postrender.yamltext.ops import AddKey, DeleteKey, Op, SetValue

CONTAINERD_SOCKET: str = dialects.CONTAINERD_SOCKET
RESTART_CONTAINERD: str = dialects.RESTART_CONTAINERD
# every dialect's restart command (a re-run recognises the tool's own)
_RESTARTS: frozenset[str] = frozenset(d.restart for d in dialects.DIALECTS if d.restart)


# made on first use (below): every kubeadm object asks for it, a run without one never
_UNIT_ENV_FILES: dict[str, frozenset[str]] = {}


def _unit_env_files() -> frozenset[str]:
    """The distributions' own unit env files (RKE2, K3s: nodes/unitenv.py) of every row,
    and their drop-ins (nodes/unitenv.py is read only when a run needs these)."""
    found = _UNIT_ENV_FILES.get("")
    if found is None:
        from proxy_postrender.nodes import unitenv

        found = _UNIT_ENV_FILES[""] = frozenset(
            path
            for d in dialects.DIALECTS
            for env_file in d.env_files.values()
            for path in (env_file, unitenv.dropin_path(env_file))
        )
    return found


SECRET_KEYS: dict[str, str] = {
    "containerd": "containerd-http-proxy.conf",
    "kubelet": "kubelet-http-proxy.conf",
}
ENV_KEY: str = "proxy.env"
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


def check_inline_password(plan: NodePlan, settings: NodeSettings | None) -> None:
    """Refuse a node object whose bootstrap would get the proxy password in clear while
    spec.credentials.secretRef keeps it out of the workloads. Checked per object: a
    stream without kubeadm objects needs no spec.nodes.credentials: secret."""
    if (
        settings is None
        or not settings.forbid_inline_password
        or plan.secret is not None
        or plan.skipped
        or not (plan.files_added or plan.commands or plan.fields_set)
    ):
        return
    raise InputError(
        "spec.credentials.secretRef keeps the proxy password out of the workloads, but "
        "spec.nodes.credentials: inline (the default) would write it in clear into this "
        "object's node bootstrap: set spec.nodes.credentials: secret "
        "(or spec.nodes.enabled: false)"
    )


class NodePlan(Plan):
    files_added: list[str] = field(default_factory=list)
    files_kept: list[str] = field(default_factory=list)  # same path set by the manifest
    fields_set: list[str] = field(default_factory=list)  # a field setter's fields, now set
    commands: int = 0  # commands the tool now has in front
    commands_key: str = dialects.KUBEADM.commands_key  # the list they are in
    changed_commands: bool = False
    secret: SecretRef | None = None  # the Secret the files now come from
    secret_env: Env = ()  # what the Secret must hold
    # the Secret is read by the clusters of a shared ClusterClass: it holds the defaults,
    # and a topology Cluster of the stream in the same namespace gives it its own values
    secret_fallback: bool = False
    notes: list[str] = field(default_factory=list)
    no_proxy_from: tuple[str, ...] = ()  # the clusters whose networks NO_PROXY holds
    matched: str | None = None  # how the object was matched to them (or why not)
    windows: bool = False  # the spec configures Windows nodes (nodes/nodeos.py)
    # what the tool's entries hold (files, commands, patch text, field values, env list
    # entries), in the order the writers were given them: what nodes/digest.py digests
    owned: list[Any] = field(default_factory=list)

    def summary(self) -> str:
        return "node bootstrap"

    def for_nodes(self) -> bool:
        return True

    def node_secret(self) -> tuple[SecretRef, Env] | None:
        return None if self.secret is None else (self.secret, self.secret_env)

    def node_secret_is_fallback(self) -> bool:
        return self.secret_fallback

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
            lines.append(f"    {self.commands_key}: {self.commands} commands in front")
        if self.fields_set:
            lines.append(f"    fields set: {', '.join(self.fields_set)}")
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
    """Whether an entry of a command list (preKubeadmCommands, preBootstrapCommands, ...)
    is one this tool writes."""
    if not isinstance(command, str):
        return False
    return (
        command in ("systemctl daemon-reload", TRUST_CA)
        or command in _RESTARTS
        or any(command.startswith(f"export {name}=") for name in _PROXY_NAMES)
        or (command.startswith("set -a && . ") and command.endswith(" && set +a"))
        or command.startswith(_POWERSHELL_PREFIX)
    )


def is_windows(
    spec: Mapping[str, Any], where: str = "the spec", *, ignore_paths: Collection[str] = ()
) -> bool:
    """A Windows node template, by the one rule of :mod:`proxy_postrender.nodes.nodeos`;
    the tool's own commands, and files at ``ignore_paths``, count for neither."""
    from proxy_postrender.nodes import nodeos  # lazy: a workload-only run never reads it

    return nodeos.is_windows(spec, where, ignore_paths=ignore_paths, is_tool=is_tool_command)


def tool_paths(settings: NodeSettings | None, recorded: Sequence[str] = ()) -> set[str]:
    """The paths of the files the tool writes (with these settings) or wrote (recorded)."""
    paths = set(recorded)
    if settings is not None:
        paths |= {settings.containerd_dropin, settings.env_file, CA_FILE, *_unit_env_files()}
        if settings.kubelet_dropin:
            paths.add(settings.kubelet_dropin)
    return paths


def desired_files(
    settings: NodeSettings,
    env: Sequence[tuple[str, str]],
    secret: SecretRef | None = None,
    *,
    shared: bool = False,
    dialect: Dialect = dialects.KUBEADM,
) -> list[dict[str, Any]]:
    """The drop-ins, and the env file where one is used, as ``files`` entries (in the
    dialect's form: ``owner`` where its items take one, its ``contentFrom`` key). ``shared``
    (a template a ClusterClass names, inline values): the ``envfile`` layout's drop-ins
    and the CA, without the env file, which the class's own patch writes per cluster
    (nodes/classvars.py)."""
    paths = [("containerd", settings.containerd_dropin)]
    if settings.kubelet_dropin:
        paths.append(("kubelet", settings.kubelet_dropin))
    secret_mode = "0600" if settings.password else "0640"
    owner = {"owner": "root:root"} if dialect.file_owner else {}

    def entry(path: str, content: str, permissions: str = secret_mode) -> dict[str, Any]:
        content = quoting.gate(content, f"the file {path}", lines=True)
        return {"path": path, **owner, "permissions": permissions, "content": content}

    def from_secret(path: str, key: str) -> dict[str, Any]:
        assert secret is not None
        ref = {dialect.secret_source: {"name": secret.name, "key": key}}
        return {"path": path, **owner, "permissions": "0600", "contentFrom": ref}

    ca = [entry(CA_FILE, settings.ca_bundle, "0644")] if settings.ca_bundle else []
    if settings.layout == "envfile" or (shared and secret is None):
        # the drop-ins carry no value: systemd reads the one env file
        dropins = [entry(p, quoting.dropin_envfile(settings.env_file), "0640") for _, p in paths]
        if shared and secret is None:
            return [*dropins, *ca]
        if secret is not None:
            return [*dropins, from_secret(settings.env_file, ENV_KEY), *ca]
        return [*dropins, entry(settings.env_file, quoting.env_file(env), "0600"), *ca]
    if secret is not None:
        files = [from_secret(path, SECRET_KEYS[unit]) for unit, path in paths]
        return [*files, from_secret(settings.env_file, ENV_KEY), *ca]
    dropin = quoting.dropin(env)
    return [*(entry(path, dropin) for _, path in paths), *ca]


def desired_commands(
    env: Sequence[tuple[str, str]],
    settings: NodeSettings,
    secret: SecretRef | None = None,
    *,
    shared: bool = False,
    dialect: Dialect = dialects.KUBEADM,
) -> list[str]:
    """The proxy CA into the system trust (when given), daemon-reload, the dialect's
    containerd restart (that waits for its socket), then the variables (from the env
    file with ``shared``)."""
    # no restart: the dialect's units start after the commands, drop-ins in place
    head = ["systemctl daemon-reload", dialect.restart] if dialect.restart else []
    if settings.ca_bundle:
        head.insert(0, TRUST_CA)
    if secret is not None or settings.layout == "envfile" or shared:
        commands = [*head, f"set -a && . {settings.env_file} && set +a"]
    else:
        commands = [*head, *(quoting.shell_export(name, value) for name, value in env)]
    label = f"a {dialect.commands_key} entry"
    return [quoting.gate(command, label) for command in commands]


def desired_entries(
    settings: NodeSettings | None,
    env: Sequence[tuple[str, str]],
    secret: SecretRef | None,
    *,
    shared: bool = False,
    dialect: Dialect = dialects.KUBEADM,
    level: str = dialects.CONFIG,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The files and leading commands a Linux spec should carry; none when removing.
    When a Secret will carry the values (secret mode), no writer here sees them: they
    are checked here, so that an error names the object. ``shared``: a template a
    ClusterClass names (no value in it: see ``desired_files``). A row with its own unit
    env file (``level`` chooses it) gets that file and exports (nodes/unitenv.py)."""
    if settings is None or not env:
        return [], []
    if secret is not None or shared:
        quoting.check_env(env)
    if dialect.env_files:
        return _unit_env_entries(settings, env, secret, dialect, level, shared=shared)
    return (
        desired_files(settings, env, secret, shared=shared, dialect=dialect),
        desired_commands(env, settings, secret, shared=shared, dialect=dialect),
    )


def _unit_env_entries(
    settings: NodeSettings,
    env: Sequence[tuple[str, str]],
    secret: SecretRef | None,
    dialect: Dialect,
    level: str,
    *,
    shared: bool,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The entries of a row whose distribution reads its own unit env file."""
    from proxy_postrender.nodes import unitenv  # lazy: only RKE2 and K3s rows

    ca = None
    if settings.ca_bundle:
        content = quoting.gate(settings.ca_bundle, f"the file {CA_FILE}", lines=True)
        ca = {"path": CA_FILE, "owner": "root:root", "permissions": "0644", "content": content}
    parts = unitenv.Parts(
        dialect.env_files[level],
        dialect.env_file_inline,
        None if secret is None else {"name": secret.name, "key": ENV_KEY},
        ca,
        TRUST_CA,
    )
    return unitenv.entries(parts, env, f"a {dialect.commands_key} entry", shared=shared)


# recorded paths, count of leading commands, lists that were "[]", the created level
_Parsed = tuple[list[str], int, set[str], "_Created | None"]


def _parse(recorded: Record, dialect: Dialect) -> _Parsed:
    """Recorded drop-in paths, count of leading commands, lists that were ``[]``, and the
    mapping the tool created to hold them (``created=PATH``, ``PATH:null``, ``PATH:{}``)."""
    files: list[str] = []
    commands = 0
    empty: set[str] = set()
    created: _Created | None = None
    for entry in recorded.entries:
        key, _, value = entry.partition("=")
        if key == "files":
            files = [p for p in value.split(",") if p]
        elif key == "commands" and value.isdigit():
            commands = int(value)
        elif key == "empty":
            empty = {k for k in value.split(",") if k in dialect.list_keys}
        elif key == "created" and (found := _Created.parse(value)) is not None:
            created = found
        elif key.startswith("env") and _is_static_pods_entry(key):
            continue  # the static pods' env lists: nodes/staticpods.py reads them
        elif key == "after":
            continue  # the rollout time: nodes/rollouttime.py reads it
        else:
            raise InputError(f"annotation {ANNOTATION} is malformed near {entry!r}")
    return files, commands, empty, created


def _is_static_pods_entry(key: str) -> bool:
    from proxy_postrender.nodes import staticpods  # lazy: start-up

    return staticpods.is_entry(key)


def node_record(obj: Mapping[str, Any], found: ObjectEnv) -> Record:
    """The node record of an object, with the name it had before a rename as the rollout
    step decided it (rollout/ledger.py), when it did."""
    recorded = Record.read(obj, ANNOTATION)
    if found.rename:
        recorded.renamed_from = found.renamed_from
    return recorded


def dialect_of(target: Target) -> tuple[Dialect, BootstrapKind]:
    """The dialect row of a node target's kind (every built-in one has a row)."""
    found = dialects.of_kind(target.group, target.kind)
    if found is None:  # pragma: no cover - targets.BUILT_IN is made from the rows
        raise InputError(f"{target.kind}: no bootstrap dialect row covers this kind")
    from proxy_postrender.nodes import writers  # lazy: a run without node objects skips it

    try:
        writers.writers_of(found[0])
    except writers.WriterError as exc:
        raise InputError(f"{target.kind}: {exc}") from None
    return found


def unit_dropin(unit: str) -> str:
    """The path of the tool's drop-in for a systemd ``unit`` (k0s's k0sworker, ...)."""
    return f"/etc/systemd/system/{unit}.service.d/http-proxy.conf"


class _Job(Struct):
    """One node object being planned: where its spec is, and in which dialect."""

    obj: Mapping[str, Any]
    base: Path
    spec_path: tuple[str, ...]
    dialect: Dialect
    row: BootstrapKind
    settings: NodeSettings | None
    found: ObjectEnv
    recorded: Record
    result: NodePlan

    @property
    def where(self) -> str:
        return ".".join(self.spec_path)

    def secret(self) -> SecretRef | None:
        """The Secret the files come from in secret mode (noted on the plan), else None."""
        settings, env = self.settings, self.found.env
        if not (settings and env and settings.credentials == "secret"):
            return None
        secret = _secret_for(self.obj, settings, self.found)
        if settings.rollout == "rename" and settings.create_secret and not self.found.shared_by:
            from proxy_postrender.nodes import digest  # lazy: secret mode only

            name = digest.secret_name(secret.name, secret_data(settings, env))
            secret = SecretRef(name, secret.namespace, secret.cluster)
        self.result.secret = secret
        self.result.secret_env = env
        self.result.secret_fallback = self.found.shared_by is not None
        return secret

    def wanted(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The files and leading commands a Linux spec of this dialect should carry (a
        dialect whose variables go to its own unit: that unit's drop-in, no kubelet's)."""
        shared = self.found.shared_by is not None
        settings = self.settings
        unit = self.dialect.units.get(self.row.level)
        if settings is not None and unit:
            settings = replace(settings, containerd_dropin=unit_dropin(unit), kubelet_dropin=None)
        return desired_entries(
            settings,
            self.found.env,
            self.secret(),
            shared=shared,
            dialect=self.dialect,
            level=self.row.level,
        )


def plan(
    obj: Mapping[str, Any],
    base: Path,
    target: Target,
    found: ObjectEnv,
    settings: NodeSettings | None,
) -> NodePlan:
    """The node bootstrap of the spec at ``target.paths[0]``, in the dialect of its kind
    (``settings`` None: take out what the tool injected earlier). A spec that is missing
    (or null, or a level above it that is missing, null or ``{}``) is created where the
    CRD allows its absence, and the record says what was created so that removal gives
    it back."""
    dialect, row = dialect_of(target)
    dialect = dialect.at(str(obj.get("apiVersion") or ""))  # its command list
    spec_path = tuple(str(step) for step in target.paths[0])
    result = NodePlan.for_env(found)
    result.commands_key = dialect.commands_key
    if found.env and settings is not None:
        result.notes += dialect.notes
        check_shared(dialect, found, str(obj.get("kind")))
    recorded = node_record(obj, found)
    parsed = _parse(recorded, dialect)  # a malformed record is an error in any case
    job = _Job(obj, base, spec_path, dialect, row, settings, found, recorded, result)
    gap = _gap(obj, spec_path)
    if gap is not None:
        return _plan_missing(job, gap)
    spec: Any = obj
    for step in spec_path:
        spec = spec[step]
    return _plan_spec(job, spec, parsed)


def check_shared(dialect: Dialect, found: ObjectEnv, kind: str) -> None:
    """Refuse a template a ClusterClass of the stream names when the class cannot give
    its clusters their own values for this row (its patch writes the per-cluster file
    only for rows whose class patches it knows): the template's value-free entries would
    read a file no patch writes."""
    if found.shared_by is None or (dialect.class_patches and dialects.FILE_LIST in dialect.writers):
        return
    raise InputError(
        f"this {kind} is a template of {found.shared_by.label}, and the tool cannot give "
        f"the clusters of a {dialect.name} ClusterClass their own proxy values (no class "
        "patch for this provider): give each cluster a template of its own outside the "
        "class, or set spec.nodes.enabled: false for this stream"
    )


def _wanted_in(
    job: _Job, spec: Mapping[str, Any], owned_files: Sequence[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """What the spec should carry: a Windows spec gets one PowerShell command (or is
    skipped), a Linux one the dialect's files and commands."""
    settings, env, result = job.settings, job.found.env, job.result
    result.windows = job.dialect.os_rule == dialects.OS_NODEOS and is_windows(
        spec, job.where, ignore_paths=tool_paths(settings, owned_files)
    )
    if not (settings and env):
        return [], []
    from proxy_postrender.nodes import formats  # lazy: start-up

    formats.check(spec, job.where, job.dialect.format_path)
    if not result.windows:
        return _linux_wanted(job, spec)
    # never a Linux command in a Windows template
    if settings.windows == "skip":
        result.skipped = "Windows node template left alone (nodes.windows: skip)"
    elif settings.credentials == "secret":
        result.skipped = "Windows node template: secret mode covers Linux nodes only"
    else:
        command = quoting.powershell_machine_env(env)
        commands = [quoting.gate(command, f"a {job.dialect.commands_key} entry")]
        result.owned.append(commands)
        return [], commands
    return [], []


def _linux_wanted(job: _Job, spec: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """``job.wanted()``, in the form the provider's bootstrap format needs (k0smotron:
    nodes/k0s.py)."""
    if job.dialect.name == dialects.K0SMOTRON.name:
        from proxy_postrender.nodes import k0s  # lazy: only k0smotron's objects

        wanted = k0s.adapt(spec, job.where, job.wanted())
    else:
        wanted = job.wanted()
    job.result.owned += wanted
    return wanted


def _plan_spec(job: _Job, spec: Mapping[str, Any], parsed: _Parsed) -> NodePlan:
    """The plan for an object whose spec is there: the writers put the tool's entries in
    (or take them out), and the record says what is the tool's."""
    from proxy_postrender.nodes import writers  # lazy: start-up

    result, dialect = job.result, job.dialect
    files_key, commands_key = dialect.list_keys
    owned_files, owned_commands, empty, created = parsed
    wanted_files, wanted_commands = _wanted_in(job, spec, owned_files)
    on_conflict = job.settings.on_conflict if job.settings else "keep"
    spec_full_path = (*job.base, *job.spec_path)
    # a list written as "[]" comes back as "[]" when the tool takes its entries out again
    empty |= {key for key in dialect.list_keys if spec.get(key) == [] and key in spec}
    files = writers.plan_files(
        spec,
        spec_full_path,
        files_key,
        job.where,
        owned_files,
        wanted_files,
        on_conflict,
        restore_empty=files_key in empty,
    )
    result.ops += files.ops
    result.files_added, result.files_kept = files.added, files.kept
    commands = writers.plan_commands(
        spec,
        spec_full_path,
        commands_key,
        job.where,
        owned_commands,
        wanted_commands,
        restore_empty=commands_key in empty,
        is_tool=is_tool_command,
        record=ANNOTATION,
    )
    result.ops += commands
    result.changed_commands = bool(commands)
    result.commands = len(wanted_commands)
    if created is not None and not wanted_files and not wanted_commands:
        # what the tool created holds nothing else: give back the input's own value
        restore = _restore(job, created, owned_files, owned_commands)
        if restore is not None:
            result.ops = [restore]
    entries = []
    if files.owned:
        entries.append("files=" + ",".join(files.owned))
    if wanted_commands:
        entries.append(f"commands={len(wanted_commands)}")
    if entries and empty:
        entries.append("empty=" + ",".join(k for k in dialect.list_keys if k in empty))
    if entries and created is not None:
        entries.append(created.entry())
    entries += _static_pods(job, spec, spec_full_path)
    entries += _rollout_after(job, owns=bool(entries))
    result.ops += job.recorded.ops(job.obj, job.base, entries)
    return result


def _rollout_after(job: _Job, *, owns: bool) -> list[str]:
    """The rollout time of a kind that reads one (spec.nodes.rolloutAfter), while the
    tool ``owns`` other entries of the object: its operations go on the plan, its record
    entry is returned."""
    if not job.row.rollout_after:
        return []
    from proxy_postrender.nodes import rollouttime as after  # lazy: control planes only

    settings = job.settings
    wanted = settings.rollout_after if settings is not None and owns else None
    made = after.plan(job.obj, job.base, wanted, after.recorded(job.recorded.entries))
    job.result.ops += made.ops
    if made.line is not None:
        job.result.notes.append(made.line)
    return [made.entry] if made.entry is not None else []


def _version(obj: Mapping[str, Any]) -> Any:
    """``spec.version`` of an object (a KubeadmControlPlane's Kubernetes), else None."""
    spec = obj.get("spec")
    return spec.get("version") if isinstance(spec, Mapping) else None


def _static_pods(job: _Job, spec: Mapping[str, Any], spec_path: Path) -> list[str]:
    """The static pods' env lists of a control plane (spec.nodes.staticPods: extraEnvs):
    their operations go on the plan, their record entries are returned."""
    if not job.row.env_lists:
        return []
    from proxy_postrender.nodes import staticpods  # lazy: a run without node objects skips it

    settings = job.settings
    ask = None
    if settings is not None:
        ask = staticpods.Ask(
            settings.static_pods == staticpods.EXTRA_ENVS,
            settings.password
            and (settings.credentials == "secret" or settings.forbid_inline_password),
            settings.on_conflict,
        )
    ops, entries, lines, wanted = staticpods.plan(
        spec,
        spec_path,
        job.where,
        job.row,
        ask,
        job.found,
        job.recorded.entries,
        ANNOTATION,
        windows=job.result.windows,
        version=_version(job.obj),
    )
    job.result.ops += ops
    job.result.notes += lines
    if entries:
        job.result.owned.append(wanted)
    return entries


class _Created(FrozenStruct):
    """A mapping on the way to the spec that the tool filled: it was absent, null or ``{}``
    (only a level above the spec: a spec written ``{}`` is filled in place)."""

    path: tuple[str, ...]  # from the object's root
    was: str  # "absent", "null" or "empty"
    # how a null was written when not the plain way (``spec: null``, ``spec: ~``), so
    # that removal writes it back so: ``created=PATH:null:SPELLING`` (record.escape)
    spelled: str | None = None

    _SUFFIX = {"absent": "", "null": ":null", "empty": ":{}"}  # noqa: RUF012

    def entry(self) -> str:
        entry = "created=" + ".".join(self.path) + self._SUFFIX[self.was]
        if self.was == "null" and self.spelled is not None:
            from proxy_postrender import record  # lazy: only a spelled null

            entry += ":" + record.escape(self.spelled)
        return entry

    @classmethod
    def parse(cls, value: str) -> _Created | None:
        text, colon, suffix = value.partition(":")
        suffix, spelled_colon, spelled = suffix.partition(":")
        was = {"": "absent", "null": "null", "{}": "empty"}.get(suffix)
        steps = tuple(text.split("."))
        if was is None or (colon and not suffix) or not all(steps):
            return None
        if not spelled_colon:
            return cls(steps, was)
        if was != "null":
            return None
        from proxy_postrender import record  # lazy: only a spelled null

        return cls(steps, was, record.unescape(spelled))


def _gap(obj: Mapping[str, Any], spec_path: tuple[str, ...]) -> _Created | None:
    """The first level on the way to the spec that is absent or null, or (above the spec)
    ``{}``; None when the spec is a mapping. Anything else there is an input error."""
    node: Mapping[str, Any] = obj
    for depth, step in enumerate(spec_path, 1):
        path = spec_path[:depth]
        if step not in node:
            return _Created(path, "absent")
        value = node[step]
        if value is None:
            from proxy_postrender.yamltext.tree import spelling  # lazy: only a null level

            return _Created(path, "null", spelling(node, step))
        if not isinstance(value, Mapping):
            raise InputError(f"{'.'.join(path)} is not a mapping")
        if not value and depth < len(spec_path):
            return _Created(path, "empty")
        node = value
    return None


def _plan_missing(job: _Job, gap: _Created) -> NodePlan:
    """The plan for an object without its spec: the spec is created with the tool's
    entries (nothing to do when removing)."""
    result, obj, spec_path = job.result, job.obj, job.spec_path
    files_key, commands_key = job.dialect.list_keys
    wanted_files, wanted_commands = _linux_wanted(job, {})
    if not wanted_files and not wanted_commands:
        result.secret, result.secret_env = None, ()
        result.skipped = f"no {job.where}"
        result.ops += job.recorded.ops(obj, job.base, [])
        return result
    _check_allowed(job, gap)
    body: dict[str, Any] = {}
    if wanted_files:
        body[files_key] = wanted_files
    if wanted_commands:
        body[commands_key] = wanted_commands
    value: Any = body
    for step in reversed(spec_path[len(gap.path) :]):
        value = {step: value}
    level = (*job.base, *gap.path)
    if gap.was == "absent":
        result.ops.append(AddKey(level[:-1], gap.path[-1], value))
    else:
        result.ops.append(SetValue(level, value))
    result.files_added = [str(f["path"]) for f in wanted_files]
    result.changed_commands = bool(wanted_commands)
    result.commands = len(wanted_commands)
    shown = {"absent": "missing", "null": "null", "empty": "{}"}[gap.was]
    result.notes.append(f"created {job.where} ({'.'.join(gap.path)} was {shown})")
    if job.row.env_lists and job.settings is not None and job.settings.static_pods != "exports":
        result.notes.append("static pods: no extraEnvs in a spec the tool creates (the exports)")
    entries = []
    if wanted_files:
        entries.append("files=" + ",".join(result.files_added))
    if wanted_commands:
        entries.append(f"commands={len(wanted_commands)}")
    # first: when the metadata ends where the new level goes, the annotation comes first
    result.ops = [*job.recorded.ops(obj, job.base, [*entries, gap.entry()]), *result.ops]
    return result


def _check_allowed(job: _Job, gap: _Created) -> None:
    """An InputError when the CRD of the object requires the level the tool would create
    (the gap itself, or the first level under a ``{}``): the levels of its dialect row."""
    _check_level(job.obj, job.row, job.spec_path, gap)


def _check_level(
    obj: Mapping[str, Any], row: BootstrapKind, spec_path: tuple[str, ...], gap: _Created
) -> None:
    """``_check_allowed`` for an object, its kind's row and the path to its spec."""
    kind = str(obj.get("kind") or "")
    api_version = str(obj.get("apiVersion") or "")
    version = api_version.rpartition("/")[2]
    missing = gap.path if gap.was != "empty" else spec_path[: len(gap.path) + 1]
    if missing in row.requires(api_version):
        state = "null" if gap.was == "null" else "missing"
        raise InputError(
            f"{'.'.join(missing)} is {state}, and the {kind} CRD "
            f"({version or dialects.rules_of(api_version)}) "
            "requires it: the API server would refuse this object; write it in the "
            "manifest (the tool does not make it up)"
        )


def _restore(
    job: _Job,
    created: _Created,
    owned_files: Sequence[str],
    owned_commands: int,
) -> Op | None:
    """The one operation that gives back the value the tool created a mapping in place
    of, when everything under it is still only the tool's entries; else None."""
    spec_path = job.spec_path
    files_key, commands_key = job.dialect.list_keys
    depth = len(created.path)
    if spec_path[:depth] != created.path:
        return None
    node: Any = job.obj
    for index, step in enumerate(spec_path):
        if not isinstance(node, Mapping):
            return None
        if index >= depth and set(node) != {step}:
            return None  # something else was added next to a level the tool created
        node = node.get(step)
    if not isinstance(node, Mapping) or not set(node) <= set(job.dialect.list_keys):
        return None
    files = node.get(files_key) or []
    commands = node.get(commands_key) or []
    if not isinstance(files, list) or not isinstance(commands, list):
        return None
    if len(commands) != owned_commands or not all(
        isinstance(f, Mapping) and f.get("path") in owned_files for f in files
    ):
        return None
    level = (*job.base, *created.path)
    if created.was == "absent":
        return DeleteKey(level)
    if created.was == "null":
        return SetValue(level, None, created.spelled)
    return SetValue(level, {})


def _named(obj: Mapping[str, Any]) -> str:
    """``KIND NS/NAME`` of an object, for a message."""
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    namespace, name = metadata.get("namespace"), metadata.get("name")
    return f"{obj.get('kind')} {f'{namespace}/' if namespace else ''}{name}"


def _secret_for(obj: Mapping[str, Any], settings: NodeSettings, found: ObjectEnv) -> SecretRef:
    """The Secret an object's files come from: one per cluster. The one Cluster of the
    stream the object was matched to names it when neither ``nodes.secretName`` nor a
    cluster-name label does (not the object: a cluster's control plane and workers
    share one Secret, their NO_PROXY is the same), and gives its namespace to an object
    without one (CAPI reads the Secret in the namespace of the cluster's machines)."""
    ref = _cluster_secret(obj, settings, found)
    shared = found.shared_by
    if shared is not None and not settings.secret_name:
        raise InputError(
            f"{'this ClusterClass' if shared.context else shared.label} serves many clusters: "
            "with spec.nodes.credentials: secret, set spec.nodes.secretName (a Secret each "
            f"cluster's namespace provides); without it, its template {_named(obj)} would "
            f"take its files from Secret {ref.name} in every cluster of the class",
            shared.context,
        )
    return ref


def _cluster_secret(obj: Mapping[str, Any], settings: NodeSettings, found: ObjectEnv) -> SecretRef:
    ref = secret_ref(obj, settings)
    if len(found.clusters) != 1:
        return ref
    kind, _, key = found.clusters[0].partition(" ")
    namespace, _, cluster = key.rpartition("/")
    if kind != "Cluster" or not cluster:
        return ref  # the profile's spec.cluster: no name
    if settings.secret_name or ref.cluster:
        return SecretRef(ref.name, ref.namespace or namespace or None, ref.cluster)
    return SecretRef(f"{cluster}-systemd-proxy", ref.namespace or namespace or None, cluster)
