"""The cloud-config Cluster API's kubeadm bootstrap provider makes from a KubeadmConfig spec.

Written for the tests (tests/test_node_programs.py), after the upstream Go templates
of kubernetes-sigs/cluster-api at commit ae7ff047db49 (the commit of the CRDs in
/work/shared/capi-crds), package ``bootstrap/kubeadm/pkg/cloudinit`` (``PKG`` below),
so that the tool's node output can be handed to cloud-init itself. The text is made
the way ``text/template`` makes it from those templates, whitespace trimming
included, for the parts a KubeadmConfig spec fills: ``write_files`` (the spec's
files, then the kubeadm configuration and the placeholder), ``bootcmd``, ``runcmd``
(``preKubeadmCommands`` first, then the kubeadm command, then ``postKubeadmCommands``),
``ntp`` and ``users``. Left out: the certificate files the controller puts before
the spec's files for a control plane (``secret.Certificates.AsFiles``; no certificates
exist in a test), ``diskSetup``/``mounts``, ``contentFormat: Template`` files and the
Ignition format. The kubeadm configurations are written as JSON (which is YAML), not
with the controller's marshaller (their text is not what the tests check).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

PKG = "bootstrap/kubeadm/pkg/cloudinit"
CONTROLLER = "bootstrap/kubeadm/reconcilers/kubeadmconfig/kubeadmconfig_controller.go"

# cloudinit.go:35-37: every user data starts with the Jinja marker, so cloud-init renders
# the whole document (files included) as a Jinja template before it reads it
HEADER = "## template: jinja\n#cloud-config\n"
# cloudinit.go:31 and :34
JOIN = "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml {verbosity}"
SENTINEL = "echo success > /run/cluster-api/bootstrap-success.complete"
PLACEHOLDER = (  # node.go:28-31 (the same in controlplane_init.go and controlplane_join.go)
    "\n-   path: /run/cluster-api/placeholder\n    owner: root:root\n    permissions: '0640'\n"
    '    content: "This placeholder file is used to create the /run/cluster-api sub directory'
    " in a way that is compatible with both Linux and Windows (mkdir -p /run/cluster-api"
    ' does not work with Windows)"'
)
ROLES = ("init", "join-control-plane", "node")

_GO_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t"}
_GO_ESCAPES |= {"\v": r"\v", "\\": r"\\", '"': r"\""}


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote), which commands.go:22 and boot_commands.go:23
    use for every command: a double-quoted string that YAML reads back as the same text."""
    out = ['"']
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def indent(text: str, width: int) -> str:
    """utils.go:33-37 (templateYAMLIndent): every line, the last (empty) one included,
    prefixed with ``width`` spaces; nothing else, no YAML escaping of any kind."""
    pad = " " * width
    return pad + ("\n" + pad).join(text.split("\n"))


def files_section(files: Sequence[Mapping[str, Any]]) -> str:
    """files.go:20-38: a literal block per file, content indented verbatim; ``encoding``
    double-quoted, ``permissions`` single-quoted, ``owner`` plain, ``append`` when true."""
    out = ["write_files:"]
    for f in files:
        out.append(f"\n-   path: {f['path']}\n    ")
        if f.get("encoding"):
            out.append(f'encoding: "{f["encoding"]}"\n    ')
        if f.get("owner"):
            out.append(f"owner: {f['owner']}\n    ")
        if f.get("permissions"):
            out.append(f"permissions: '{f['permissions']}'\n    ")
        if f.get("append"):
            out.append("append: true\n    ")
        out.append("content: |\n" + indent(f.get("content", ""), 6))
    return "".join(out)


def commands_section(commands: Sequence[str]) -> str:
    """commands.go:20-24: one ``  - "..."`` item per command, each Go-quoted."""
    return "".join(f"\n  - {go_quote(c)}" for c in commands)


def boot_commands_section(commands: Sequence[str]) -> str:
    """boot_commands.go:20-26: ``bootcmd`` only when there are boot commands."""
    return "\nbootcmd:" + commands_section(commands) if commands else ""


def ntp_section(ntp: Mapping[str, Any] | None) -> str:
    """ntp.go:20-30: ``ntp`` with ``enabled`` when set and the servers as plain items."""
    if not ntp:
        return ""
    enabled = "enabled: " + str(ntp["enabled"]).lower() + "\n  " if "enabled" in ntp else ""
    return "\nntp:\n  " + enabled + "servers:" + "".join(f"\n    - {s}" for s in ntp["servers"])


_USER_FIELDS = (  # users.go:23-50, in its order: spec field -> cloud-config key
    ("passwd", "passwd"),
    ("gecos", "gecos"),
    ("groups", "groups"),
    ("homeDir", "homedir"),
    ("inactive", "inactive"),
    ("lockPassword", "lock_passwd"),
    ("shell", "shell"),
    ("primaryGroup", "primary_group"),
    ("sudo", "sudo"),
)


def users_section(users: Sequence[Mapping[str, Any]]) -> str:
    """users.go:20-53: each user's set fields as plain scalars, then its SSH keys."""
    if not users:
        return ""
    out = ["\nusers:"]
    for user in users:
        out.append(f"\n  - name: {user['name']}")
        for field, key in _USER_FIELDS:
            value = user.get(field)
            if value:
                out.append(f"\n    {key}: {str(value).lower() if value is True else value}")
        keys = user.get("sshAuthorizedKeys") or []
        if keys:
            out.append("\n    ssh_authorized_keys:" + "".join(f"\n      - {k}" for k in keys))
    return "".join(out)


def kubeadm_yaml(kind: str, section: Mapping[str, Any] | None) -> str:
    """A kubeadm configuration document (the controller marshals the spec's section)."""
    doc = {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": kind, **(section or {})}
    return json.dumps(doc, indent=2) + "\n"  # JSON is YAML


def secrets_in(docs: Sequence[Any]) -> dict[tuple[str, str], dict[str, str]]:
    """(namespace, name) -> data of every Secret in a stream, ``stringData`` over ``data``
    (what the API server stores when the Secret is applied)."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "Secret" and doc.get("apiVersion") == "v1":
            meta = doc.get("metadata") or {}
            data = {k: base64.b64decode(v).decode() for k, v in (doc.get("data") or {}).items()}
            data.update(doc.get("stringData") or {})
            found[(meta.get("namespace", "default"), meta["name"])] = data
    return found


def resolve_files(
    files: Sequence[Mapping[str, Any]],
    namespace: str,
    secrets: Mapping[tuple[str, str], Mapping[str, str]],
    source_key: str = "secret",
) -> list[dict[str, Any]]:
    """kubeadmconfig_controller.go:1018-1052 (resolveFiles, resolveSecretFileContent): a
    file with ``contentFrom.secret`` gets the Secret's key, in the config's namespace, as
    its content; a missing Secret or key is an error there and a KeyError here.
    ``source_key``: another provider's name for the Secret's key (k0smotron: secretRef)."""
    out = []
    for f in files:
        f = dict(f)
        source = f.pop("contentFrom", None)
        if source:
            ref = source[source_key]
            f["content"] = secrets[(namespace, ref["name"])][ref["key"]]
        out.append(f)
    return out


def cloud_config(
    spec: Mapping[str, Any],
    role: str,
    namespace: str = "default",
    secrets: Mapping[tuple[str, str], Mapping[str, str]] | None = None,
) -> str:
    """The user data for a machine of ``role`` ("init": controlplane_init.go:24-48,
    "join-control-plane": controlplane_join.go:26-47, "node": node.go:20-42)."""
    assert role in ROLES, role
    files = files_section(resolve_files(spec.get("files") or [], namespace, secrets or {}))
    verbosity = f"--v {spec['verbosity']}" if spec.get("verbosity") is not None else ""  # :569
    if role == "init":
        kubeadm_file = (
            "\n-   path: /run/kubeadm/kubeadm.yaml\n    owner: root:root\n    permissions: '0640'"
            "\n    content: |\n      ---\n"
            + indent(kubeadm_yaml("ClusterConfiguration", spec.get("clusterConfiguration")), 6)
            + "\n      ---\n"
            + indent(kubeadm_yaml("InitConfiguration", spec.get("initConfiguration")), 6)
        )
        command = "'kubeadm init --config /run/kubeadm/kubeadm.yaml " + verbosity
        command += " && " + SENTINEL + "'"
    else:
        separator = "      ---\n" if role == "node" else ""
        kubeadm_file = (
            "\n-   path: /run/kubeadm/kubeadm-join-config.yaml\n    owner: root:root"
            "\n    permissions: '0640'\n    content: |\n"
            + separator
            + indent(kubeadm_yaml("JoinConfiguration", spec.get("joinConfiguration")), 6)
        )
        command = JOIN.format(verbosity=verbosity) + " && " + SENTINEL
    return (
        HEADER
        + "\n"
        + files
        + kubeadm_file
        + PLACEHOLDER
        + boot_commands_section(spec.get("bootCommands") or [])
        + "\nruncmd:"
        + commands_section(spec.get("preKubeadmCommands") or [])
        + "\n  - "
        + command
        + commands_section(spec.get("postKubeadmCommands") or [])
        + ntp_section(spec.get("ntp"))
        + users_section(spec.get("users") or [])
        + "\n"
    )
