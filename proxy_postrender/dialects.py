"""Bootstrap dialects as data: one row per Cluster API bootstrap provider.

A :class:`Dialect` says, for one provider, everything the node planner needs to
know about its kinds: the API group, kind, spec path and level of each
(:class:`BootstrapKind`), the names of the file list and the command list in
that spec, the levels the CRDs require (the tool creates any other missing
level on the way to the spec), the ``format`` values its nodes read, how the
OS of a spec is told, the restart that makes containerd read the tool's
drop-in, and the writers (nodes/writers.py) that put the tool's entries in.
targets.BUILT_IN, the ClusterClass planner (its list pointers and the class
variable's patch) and the check for other owners of the proxy settings all
read these rows: a provider whose nodes take files and commands is one row.

Pure data; imports nothing but the record base (start-up: every run reads it).
"""

from __future__ import annotations

from collections.abc import Mapping

from proxy_postrender.structs import FrozenStruct, field

# The level of a kind: where its spec sits among a cluster's objects.
CONFIG: str = "config"  # one machine's bootstrap config (KubeadmConfig)
TEMPLATE: str = "template"  # the workers' template (KubeadmConfigTemplate)
CONTROL_PLANE: str = "control plane"  # KubeadmControlPlane
CONTROL_PLANE_TEMPLATE: str = "control-plane template"  # a ClusterClass's control plane
TEMPLATE_LEVELS: tuple[str, ...] = (TEMPLATE, CONTROL_PLANE_TEMPLATE)

# How the OS of a spec is told.
OS_NODEOS: str = "nodeos"  # Linux or Windows by the one rule of nodes/nodeos.py
OS_LINUX: str = "linux"  # Linux nodes only: the provider's bootstrap has no Windows form

# The writers (nodes/writers.py registers them by these names).
FILE_LIST: str = "file list"  # the tool's files appended to a list of files
COMMAND_PREFIX: str = "command prefix"  # the tool's commands first in a list of commands
FIELD_SETTER: str = "field setter"  # fields of the spec set to the proxy values
CONFIG_PATCH: str = "config patch"  # a patch document added to a list of patches
ENV_LIST: str = "env list"  # name/value entries added to an env list
WRITERS: tuple[str, ...] = (FILE_LIST, COMMAND_PREFIX, FIELD_SETTER, CONFIG_PATCH, ENV_LIST)

CONTAINERD_SOCKET: str = "/run/containerd/containerd.sock"
# containerd reads its drop-in only when restarted; the wait keeps kubeadm (or the
# provider's bootstrap) from finding no socket
RESTART_CONTAINERD: str = (
    "systemctl restart containerd && for i in $(seq 1 60); do "
    f"[ -S {CONTAINERD_SOCKET} ] && break; sleep 1; done"
)

Steps = tuple[str, ...]


class BootstrapKind(FrozenStruct):
    """One kind of a dialect: where its spec is, and which levels its CRDs require."""

    group: str
    kind: str
    level: str
    spec_path: Steps
    # rule set ("v1beta1": v1beta1 and v1alpha*, "v1beta2": the rest) -> the levels on
    # the way to the spec that the CRD requires when their parent is there: an object
    # without one is refused by the API server, so the tool does not create it
    required: Mapping[str, frozenset[Steps]] = field(default_factory=dict)
    # the env lists under the spec that the "env list" writer fills when the profile asks
    # for it (kubeadm's control plane: the static pods' extraEnvs, spec.nodes.staticPods)
    env_lists: tuple[Steps, ...] = ()

    def requires(self, api_version: str) -> frozenset[Steps]:
        return self.required.get(rules_of(api_version), frozenset())


class Dialect(FrozenStruct):
    """One bootstrap provider, as the node planner sees it."""

    name: str
    kinds: tuple[BootstrapKind, ...]
    files_key: str  # the list of files in the spec
    commands_key: str  # the list of commands run before the node joins
    formats: tuple[str, ...]  # the ``format`` values the nodes read (none: no such field)
    os_rule: str  # OS_NODEOS or OS_LINUX
    restart: str  # the command that makes containerd read the tool's drop-in
    writers: tuple[str, ...]  # names from WRITERS, in the order they apply
    # more command lists read when telling Windows from Linux (the spec's own commands)
    os_command_lists: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # said in --report for every object of the dialect
    source: str = ""  # where the names come from (repository, commit)

    @property
    def list_keys(self) -> tuple[str, str]:
        return (self.files_key, self.commands_key)


_BOOTSTRAP: str = "bootstrap.cluster.x-k8s.io"
_CONTROL_PLANE: str = "controlplane.cluster.x-k8s.io"
_TEMPLATE_SPEC: Steps = ("spec", "template", "spec")
# a template's spec.template is required in every version (Cluster API, CAPA)
_TEMPLATE_REQUIRED: dict[str, frozenset[Steps]] = {
    "v1beta1": frozenset({("spec", "template")}),
    "v1beta2": frozenset({("spec", "template")}),
}

# The control plane's static pods (kube-apiserver, kube-controller-manager,
# kube-scheduler) take name/value entries from these lists, which win over what kubeadm
# copies from its own environment: kubeadm v1beta4 (Kubernetes >= 1.31), Cluster API
# >= 1.8 (PR #10846); items {name (required), value, valueFrom}, at most 100, and in
# v1beta2 at least one (kubernetes-sigs/cluster-api@ae7ff047db499ac3858ade268ba38db8c9f128bb,
# controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml).
# etcd.local.extraEnvs too exists; etcd makes no outgoing call through a proxy: not written.
_STATIC_POD_ENVS: tuple[Steps, ...] = tuple(
    ("clusterConfiguration", component, "extraEnvs")
    for component in ("apiServer", "controllerManager", "scheduler")
)

KUBEADM: Dialect = Dialect(
    name="kubeadm",
    kinds=(
        BootstrapKind(
            _CONTROL_PLANE,
            "KubeadmControlPlane",
            CONTROL_PLANE,
            ("spec", "kubeadmConfigSpec"),
            {
                "v1beta1": frozenset({("spec", "kubeadmConfigSpec")}),
                "v1beta2": frozenset({("spec",)}),
            },
            env_lists=_STATIC_POD_ENVS,
        ),
        BootstrapKind(
            _CONTROL_PLANE,
            "KubeadmControlPlaneTemplate",
            CONTROL_PLANE_TEMPLATE,
            ("spec", "template", "spec", "kubeadmConfigSpec"),
            {
                "v1beta1": frozenset(
                    {
                        ("spec", "template"),
                        ("spec", "template", "spec"),
                        ("spec", "template", "spec", "kubeadmConfigSpec"),
                    }
                ),
                "v1beta2": frozenset({("spec", "template")}),
            },
            env_lists=_STATIC_POD_ENVS,
        ),
        BootstrapKind(
            _BOOTSTRAP, "KubeadmConfigTemplate", TEMPLATE, _TEMPLATE_SPEC, _TEMPLATE_REQUIRED
        ),
        BootstrapKind(_BOOTSTRAP, "KubeadmConfig", CONFIG, ("spec",)),
    ),
    files_key="files",
    commands_key="preKubeadmCommands",
    formats=("cloud-config", "ignition"),
    os_rule=OS_NODEOS,
    restart=RESTART_CONTAINERD,
    writers=(FILE_LIST, COMMAND_PREFIX, ENV_LIST),
    os_command_lists=("preKubeadmCommands", "postKubeadmCommands"),
    source="kubernetes-sigs/cluster-api (tests/capi/schemas/SOURCE.md)",
)

# CAPA's EKS bootstrap (kubernetes-sigs/cluster-api-provider-aws at
# 2cf09d78547d32975570a4b9ba5496bdfe26abeb, config/crd/bases/
# bootstrap.cluster.x-k8s.io_{eksconfigs,eksconfigtemplates,nodeadmconfigs,
# nodeadmconfigtemplates}.yaml): Amazon Linux nodes, cloud-init ``write_files``
# from ``files`` (``contentFrom`` read by the controller), the commands run before
# /etc/eks/bootstrap.sh (AL2) or nodeadm (AL2023); no ``format`` field.
_EKS_SOURCE: str = (
    "kubernetes-sigs/cluster-api-provider-aws@2cf09d78547d32975570a4b9ba5496bdfe26abeb"
)
_EKS_NOTE: str = (
    "EKS add-ons (aws-node, kube-proxy) are installed by EKS, not in the render: "
    "give them the proxy through their add-on configuration"
)

EKS: Dialect = Dialect(
    name="eks",
    kinds=(
        BootstrapKind(
            _BOOTSTRAP, "EKSConfigTemplate", TEMPLATE, _TEMPLATE_SPEC, _TEMPLATE_REQUIRED
        ),
        BootstrapKind(_BOOTSTRAP, "EKSConfig", CONFIG, ("spec",)),
    ),
    files_key="files",
    commands_key="preBootstrapCommands",
    formats=(),
    os_rule=OS_LINUX,
    restart=RESTART_CONTAINERD,
    writers=(FILE_LIST, COMMAND_PREFIX),
    notes=(_EKS_NOTE,),
    source=_EKS_SOURCE,
)

EKS_NODEADM: Dialect = Dialect(
    name="eks-nodeadm",
    kinds=(
        BootstrapKind(
            _BOOTSTRAP, "NodeadmConfigTemplate", TEMPLATE, _TEMPLATE_SPEC, _TEMPLATE_REQUIRED
        ),
        BootstrapKind(_BOOTSTRAP, "NodeadmConfig", CONFIG, ("spec",)),
    ),
    files_key="files",
    commands_key="preNodeadmCommands",
    formats=(),
    os_rule=OS_LINUX,
    restart=RESTART_CONTAINERD,
    writers=(FILE_LIST, COMMAND_PREFIX),
    notes=(_EKS_NOTE,),
    source=_EKS_SOURCE,
)

DIALECTS: tuple[Dialect, ...] = (KUBEADM, EKS, EKS_NODEADM)

# (API group, kind) -> (its dialect, the kind's row)
BY_KIND: Mapping[tuple[str, str], tuple[Dialect, BootstrapKind]] = {
    (row.group, row.kind): (dialect, row) for dialect in DIALECTS for row in dialect.kinds
}
# the template kinds a ClusterClass may name, of every dialect
TEMPLATE_KINDS: frozenset[str] = frozenset(
    row.kind for dialect in DIALECTS for row in dialect.kinds if row.level in TEMPLATE_LEVELS
)


def of_kind(group: str, kind: str) -> tuple[Dialect, BootstrapKind] | None:
    """The dialect and kind row of ``(group, kind)``; None for a kind no row covers."""
    return BY_KIND.get((group, kind))


def rules_of(api_version: str) -> str:
    """The rule set of an API version: "v1beta1" (also v1alpha*) or "v1beta2" (the rest)."""
    version = api_version.rpartition("/")[2]
    return "v1beta1" if version == "v1beta1" or version.startswith("v1alpha") else "v1beta2"
