"""The control plane's static pods, given the proxy in their own ``extraEnvs`` (opt-in).

kubeadm copies every ``*_proxy`` variable of its environment (the tool's exports) into
kube-apiserver, kube-controller-manager and kube-scheduler. With
``spec.nodes.staticPods: extraEnvs`` the same names and values are also written into
``clusterConfiguration.{apiServer,controllerManager,scheduler}.extraEnvs`` of a
KubeadmControlPlane(Template) (the env lists of its dialect row), where they win over
the copy and are visible per component in the object (Kubernetes >= 1.31, Cluster API
>= 1.8). The "env list" writer (nodes/writers.py) puts them in; what the tool owns is
recorded in the node-bootstrap annotation next to the files and commands:
``env:PLACE=NAME,NAME`` per list and ``env-created=LEVEL`` per level the tool filled.

Refused: a template a ClusterClass names (one value for every cluster of the class,
whose NO_PROXY differs per cluster), and a proxy password in secret mode (static pods
cannot read a Secret: the password would be in clear in the object).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.dialects import BootstrapKind
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import writers
from proxy_postrender.noproxy.environments import ObjectEnv
from proxy_postrender.objects import Path
from proxy_postrender.structs import FrozenStruct
from proxy_postrender.yamltext.ops import Op

EXTRA_ENVS: str = "extraEnvs"
_OWNED: str = "env:"  # a record entry's key prefix: env:PLACE=NAMES
_CREATED: str = "env-created"
MIN_MINOR: int = 31  # extraEnvs: kubeadm v1beta4, Kubernetes 1.31


class Ask(FrozenStruct):
    """What this module reads of the profile's node settings (nodes/kubeadm.py, which
    imports this module, makes it)."""

    extra_envs: bool  # spec.nodes.staticPods: extraEnvs
    # a proxy password that secret mode (or spec.credentials.secretRef) keeps out of the
    # objects
    secret_password: bool
    on_conflict: str


def is_entry(key: str) -> bool:
    """Whether a node-bootstrap record entry's key is one of this module's."""
    return key.startswith(_OWNED) or key == _CREATED


def _parse(
    entries: Sequence[str], places: Sequence[writers.Place], record: str
) -> tuple[dict[writers.Place, list[str]], list[writers.Created]]:
    owned: dict[writers.Place, list[str]] = {}
    created: list[writers.Created] = []
    for entry in entries:
        key, _, value = entry.partition("=")
        if key.startswith(_OWNED):
            place = tuple(key[len(_OWNED) :].split("."))
            names = [n for n in value.split(",") if n]
            if place not in places or not names:
                raise InputError(f"annotation {record} is malformed near {entry!r}")
            owned[place] = names
        elif key == _CREATED:
            level = writers.parse_created(value)
            if level is None:
                raise InputError(f"annotation {record} is malformed near {entry!r}")
            created.append(level)
    return owned, created


def escape(value: str) -> str:
    """A value as an env entry must spell it: the kubelet expands ``$(NAME)`` in it and
    reads ``$$`` as ``$``, so every ``$`` is doubled (a password may hold one)."""
    return value.replace("$", "$$")


def _wanted(ask: Ask | None, found: ObjectEnv, windows: bool, kind: str) -> list[dict[str, str]]:
    """The entries each list should hold; none unless the profile asks for them."""
    if ask is None or not found.env or not ask.extra_envs or windows:
        return []
    if found.shared_by is not None:
        raise InputError(
            f"spec.nodes.staticPods: extraEnvs cannot serve this {kind}: "
            f"{found.shared_by.label} serves many clusters, and the extraEnvs of its "
            "template would hold one NO_PROXY for all of them (their node networks differ); "
            "use spec.nodes.staticPods: exports for a ClusterClass (the exports carry each "
            "cluster's values)"
        )
    if ask.secret_password:
        raise InputError(
            "spec.nodes.staticPods: extraEnvs would write the proxy password in clear into "
            f"this {kind} (static pods cannot read a Secret): use spec.nodes.staticPods: "
            "exports with spec.nodes.credentials: secret"
        )
    return [{"name": name, "value": escape(value)} for name, value in found.env]


def _minor(version: Any) -> int | None:
    """The minor of a Kubernetes version ``v1.MINOR.PATCH``; None when it is not one."""
    if not isinstance(version, str):
        return None
    major, _, rest = version.removeprefix("v").partition(".")
    minor = rest.partition(".")[0]
    return int(minor) if major == "1" and minor.isdigit() else None


def check_version(version: Any, kind: str) -> None:
    """Kubernetes older than 1.31 has no extraEnvs (kubeadm v1beta3): Cluster API leaves
    them out of the kubeadm config it writes, so they would do nothing: refused."""
    minor = _minor(version)
    if minor is not None and minor < MIN_MINOR:
        raise InputError(
            f"spec.nodes.staticPods: extraEnvs needs Kubernetes >= 1.{MIN_MINOR} (kubeadm "
            f"v1beta4), and this {kind} runs {version}: Cluster API would leave them out; "
            "use spec.nodes.staticPods: exports"
        )


def plan(
    spec: Mapping[str, Any],
    spec_path: Path,
    where: str,
    row: BootstrapKind,
    ask: Ask | None,
    found: ObjectEnv,
    entries: Sequence[str],
    record: str,
    *,
    windows: bool = False,
    version: Any = None,
) -> tuple[list[Op], list[str], list[str], list[dict[str, str]]]:
    """The operations on the env lists of ``row`` in ``spec`` (at ``spec_path``), the
    record entries that say what the tool owns there afterwards, lines for the report,
    and the entries each list is given. Nothing for a kind without env lists (a recorded
    entry there is malformed).
    ``version``: the object's Kubernetes version when it says one (spec.version of a
    KubeadmControlPlane)."""
    places = row.env_lists
    owned, created = _parse(entries, places, record)
    kind = row.kind
    wanted = _wanted(ask, found, windows, kind)
    if wanted:
        check_version(version, kind)
    if not places or (not wanted and not owned and not created):
        return [], [], [], wanted
    on_conflict = ask.on_conflict if ask else "keep"
    result = writers.plan_env_lists(
        spec, spec_path, places, where, owned, created, wanted, on_conflict
    )
    record_entries = [
        f"{_OWNED}{'.'.join(place)}={','.join(names)}"
        for place in places
        if (names := result.owned.get(place))
    ]
    if record_entries:
        record_entries += [f"{_CREATED}={writers.created_entry(c)}" for c in result.created]
    lines = []
    if wanted:
        components = [place[-2] for place in places if place in result.owned]
        lines.append(f"static pods: {EXTRA_ENVS} of {', '.join(components)}")
    lines += [f"kept (set by the manifest): {kept}" for kept in result.kept]
    return result.ops, record_entries, lines, wanted
