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

from proxy_postrender.structs import FrozenStruct, field, replace

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
    # the API server refuses any change to the spec (a webhook): the tool never changes
    # what it wrote into one already (Talos's TalosConfig and TalosConfigTemplate)
    immutable: bool = False
    # the env lists under the spec that the "env list" writer fills when the profile asks
    # for it (kubeadm's control plane: the static pods' extraEnvs, spec.nodes.staticPods)
    env_lists: tuple[Steps, ...] = ()
    # the kind reads a rollout time (spec.rollout.after / spec.rolloutAfter) that
    # spec.nodes.rolloutAfter writes (nodes/rollouttime.py)
    rollout_after: bool = False

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
    # CONFIG_PATCH: the list of patch documents (strings) in the spec, and the spec's
    # field that says which version of the node's configuration the patch is for
    patches_key: str = ""
    version_key: str = ""
    # FIELD_SETTER: (a field of the spec, the variable whose value it takes), in order
    fields: tuple[tuple[str, str], ...] = ()
    # the command list per rule set ("v1beta1"/"v1beta2") where the versions name it
    # differently (``commands_key`` is then the newest's); see ``at``
    commands_by_rules: Mapping[str, str] = field(default_factory=dict)
    file_owner: bool = True  # the file items take ``owner``
    secret_source: str = "secret"  # contentFrom's key for a Secret's key
    class_patches: bool = True  # a ClusterClass's patches may write its lists
    # the systemd unit whose drop-in carries the variables, per level (none: containerd's
    # and kubelet's drop-ins, the profile's paths)
    units: Mapping[str, str] = field(default_factory=dict)

    # where the ``format`` value is, under the spec (RKE2: agentConfig.format)
    format_path: Steps = ("format",)
    # the distribution's own unit environment file, by level (RKE2: /etc/default/rke2-*):
    # a row with one gets that file and ``export`` lines (or, when the file holds the
    # values, a line that sources it) in place of the systemd drop-ins, and no
    # daemon-reload or containerd restart (the distribution is installed after them)
    env_files: Mapping[str, str] = field(default_factory=dict)
    # the env file is written with inline values too; False (K3s): in secret mode only,
    # since its installer writes its unit env file itself from the exported variables
    env_file_inline: bool = True
    # what a change of the control plane's spec does to its machines (rollout/effects.py;
    # "": nothing, the provider replaces them for other reasons only)
    control_plane_rollout: str = (
        "every control-plane machine is replaced (their KubeadmConfigs no longer match the spec)"
    )

    def at(self, api_version: str) -> Dialect:
        """The row as an object of ``api_version`` reads it (its command list).

        >>> K0SMOTRON.at("bootstrap.cluster.x-k8s.io/v1beta1").commands_key
        'preStartCommands'
        """
        key = self.commands_by_rules.get(rules_of(api_version))
        if key is None or key == self.commands_key:
            return self
        return replace(self, commands_key=key)

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
            rollout_after=True,
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

# Amazon Linux 2023's nodeadm: EKS's row with its own kinds and command list
EKS_NODEADM: Dialect = replace(
    EKS,
    name="eks-nodeadm",
    kinds=(
        BootstrapKind(
            _BOOTSTRAP, "NodeadmConfigTemplate", TEMPLATE, _TEMPLATE_SPEC, _TEMPLATE_REQUIRED
        ),
        BootstrapKind(_BOOTSTRAP, "NodeadmConfig", CONFIG, ("spec",)),
    ),
    commands_key="preNodeadmCommands",
)

# Talos (siderolabs/cluster-api-bootstrap-provider-talos at
# e21a01e06ee321cd1ae9b57ba6a45493eb492396, config/crd/bases/bootstrap.cluster.x-k8s.io_
# {talosconfigs,talosconfigtemplates}.yaml; siderolabs/cluster-api-control-plane-provider-
# talos at 97b33e78ff1091bd143db6c428b8ed53ec3e0931, config/crd/bases/controlplane.
# cluster.x-k8s.io_taloscontrolplanes.yaml): no files, no commands; one strategic patch
# of the machine configuration (``strategicPatches``, a list of YAML strings) carries the
# variables, in the form its ``talosVersion`` reads (nodes/talos.py). TalosControlPlane's
# ``controlPlaneConfig.init`` is not used since CACPPT v0.4.0 (api/v1alpha3/
# taloscontrolplane_types.go:19-22): only ``controlplane`` is written. TalosConfig and
# TalosConfigTemplate specs are immutable (api/v1beta1/talosconfig{,template}_webhook.go).
_TALOS_SOURCE: str = (
    "siderolabs/cluster-api-bootstrap-provider-talos@e21a01e06ee321cd1ae9b57ba6a45493eb492396, "
    "siderolabs/cluster-api-control-plane-provider-talos@97b33e78ff1091bd143db6c428b8ed53ec3e0931"
)

TALOS: Dialect = Dialect(
    name="talos",
    kinds=(
        BootstrapKind(
            _CONTROL_PLANE,
            "TalosControlPlane",
            CONTROL_PLANE,
            ("spec", "controlPlaneConfig", "controlplane"),
            {
                "v1beta1": frozenset(
                    {
                        ("spec", "controlPlaneConfig"),
                        ("spec", "controlPlaneConfig", "controlplane"),
                    }
                )
            },
        ),
        BootstrapKind(
            _BOOTSTRAP,
            "TalosConfigTemplate",
            TEMPLATE,
            _TEMPLATE_SPEC,
            {"v1beta1": frozenset({("spec", "template")})},
            immutable=True,
        ),
        BootstrapKind(_BOOTSTRAP, "TalosConfig", CONFIG, ("spec",), immutable=True),
    ),
    files_key="",
    commands_key="",
    formats=(),
    os_rule=OS_LINUX,
    restart="",
    writers=(CONFIG_PATCH,),
    source=_TALOS_SOURCE,
    # siderolabs/cluster-api-control-plane-provider-talos@97b33e78 controllers/
    # controlplane.go: controlPlaneConfig.controlplane against the machines' TalosConfigs
    control_plane_rollout="every control-plane machine is replaced (controlPlaneConfig."
    "controlplane no longer matches their TalosConfigs), unless spec.rolloutStrategy.type "
    "is OnDelete",
    patches_key="strategicPatches",
    version_key="talosVersion",
)

# MicroK8s (canonical/cluster-api-bootstrap-provider-microk8s at
# 71682d3c068a8bd62df989a2b085ab8402b6884e, apis/v1beta1/microk8sconfig_types.go
# InitConfiguration; the control plane's CRD from canonical/
# cluster-api-control-plane-provider-microk8s at ade5fcbf701ef21373942e3fa28708c80ec1fe8f
# embeds the same InitConfiguration): the proxy goes into the spec's own fields, which
# the controller turns into two scripts of the node's cloud-init (controllers/cloudinit/
# scripts/00-configure-snapstore-http-proxy.sh: ``snap set system proxy.http(s)=``,
# before MicroK8s is installed; 10-configure-containerd-proxy.sh: appended to
# /var/snap/microk8s/current/args/containerd-env, then containerd restarted). No
# ``contentFrom``: the values are in the object (secret mode is refused), cloud-config only.
_MICROK8S_SOURCE: str = (
    "canonical/cluster-api-bootstrap-provider-microk8s@71682d3c068a8bd62df989a2b085ab8402b6884e, "
    "canonical/cluster-api-control-plane-provider-microk8s@ade5fcbf701ef21373942e3fa28708c80ec1fe8f"
)
_INIT: str = "initConfiguration"

MICROK8S: Dialect = Dialect(
    name="microk8s",
    kinds=(
        BootstrapKind(
            _CONTROL_PLANE,
            "MicroK8sControlPlane",
            CONTROL_PLANE,
            ("spec", "controlPlaneConfig", _INIT),
        ),
        BootstrapKind(
            _BOOTSTRAP,
            "MicroK8sConfigTemplate",
            TEMPLATE,
            (*_TEMPLATE_SPEC, _INIT),
            _TEMPLATE_REQUIRED,
        ),
        BootstrapKind(_BOOTSTRAP, "MicroK8sConfig", CONFIG, ("spec", _INIT)),
    ),
    files_key="extraWriteFiles",
    commands_key="preRunCommands",
    formats=(),
    os_rule=OS_LINUX,
    restart="",  # MicroK8s restarts its containerd itself after writing containerd-env
    writers=(FIELD_SETTER,),
    fields=(
        ("httpProxy", "HTTP_PROXY"),
        ("httpsProxy", "HTTPS_PROXY"),
        ("noProxy", "NO_PROXY"),
        # snapd's own proxy: ``snap install microk8s`` runs before anything else
        ("snapstoreHTTPProxy", "HTTP_PROXY"),
        ("snapstoreHTTPSProxy", "HTTPS_PROXY"),
    ),
    notes=(
        "MicroK8s gives httpProxy/httpsProxy/noProxy to its containerd only "
        "(containerd-env): kubelet, the API server and add-ons get no proxy from them",
        "snapstoreHTTPProxy/snapstoreHTTPSProxy are snapd's proxy (snap set system "
        "proxy.http/https), which installing MicroK8s needs: the tool sets them to the "
        "same values",
    ),
    source=_MICROK8S_SOURCE,
    # canonical/cluster-api-control-plane-provider-microk8s@ade5fcbf controllers/
    # reconcile.go: machines are replaced for a new Kubernetes minor version only
    control_plane_rollout="",
)

# k0smotron (k0sproject/k0smotron at 3897bbe645698acbe9974449bb771e949dedb77e;
# api/bootstrap/v1beta2/k0s_types.go, api/controlplane/v1beta2/k0s_types.go): k0s runs
# its containerd and kubelet as children of the k0sworker / k0scontroller unit, which
# read a systemd drop-in (k0sproject/k0s docs/environment-variables.md); the commands
# before the k0s download and ``k0s install`` are ``preStartCommands`` in v1beta1 and
# ``preK0sCommands`` in v1beta2. File items have no ``owner``; ``contentFrom.secretRef``.
# K0smotronControlPlane runs as pods (noproxy/bootstraps.py): no row.
_K0S_SOURCE: str = "k0sproject/k0smotron@3897bbe645698acbe9974449bb771e949dedb77e"
K0S_BOOTSTRAP_UNIT: str = "k0s-bootstrap"  # Ignition's unit that runs the commands

K0SMOTRON: Dialect = Dialect(
    name="k0smotron",
    kinds=(
        BootstrapKind(
            _CONTROL_PLANE,
            "K0sControlPlane",
            CONTROL_PLANE,
            ("spec", "k0sConfigSpec"),
            {
                "v1beta1": frozenset({("spec", "k0sConfigSpec")}),
                "v1beta2": frozenset({("spec", "k0sConfigSpec")}),
            },
        ),
        BootstrapKind(
            _CONTROL_PLANE,
            "K0sControlPlaneTemplate",
            CONTROL_PLANE_TEMPLATE,
            ("spec", "template", "spec", "k0sConfigSpec"),
            {
                "v1beta1": frozenset({("spec", "template", "spec", "k0sConfigSpec")}),
                "v1beta2": frozenset({("spec", "template", "spec", "k0sConfigSpec")}),
            },
        ),
        BootstrapKind(_BOOTSTRAP, "K0sWorkerConfigTemplate", TEMPLATE, _TEMPLATE_SPEC),
        BootstrapKind(_BOOTSTRAP, "K0sWorkerConfig", CONFIG, ("spec",)),
        BootstrapKind(_BOOTSTRAP, "K0sControllerConfig", CONTROL_PLANE, ("spec",)),
    ),
    files_key="files",
    commands_key="preK0sCommands",
    formats=(),
    os_rule=OS_LINUX,
    restart="",  # k0s is not installed yet: its units start with the drop-in in place
    writers=(FILE_LIST, COMMAND_PREFIX),
    notes=(
        "k0s adds no cluster ranges to NO_PROXY: the nodes get the tool's per-cluster "
        "NO_PROXY (pods, services, cluster domain)",
    ),
    source=_K0S_SOURCE,
    # k0sproject/k0smotron@3897bbe6 internal/controller/controlplane/helper.go: the
    # machines' k0s config against spec.k0sConfigSpec (updateStrategy InPlace covers a
    # version change only)
    control_plane_rollout="every control-plane machine is replaced (their k0s configs no "
    "longer match spec.k0sConfigSpec)",
    commands_by_rules={"v1beta1": "preStartCommands", "v1beta2": "preK0sCommands"},
    file_owner=False,
    secret_source="secretRef",
    class_patches=False,
    units={
        CONFIG: "k0sworker",
        TEMPLATE: "k0sworker",
        CONTROL_PLANE: "k0scontroller",
        CONTROL_PLANE_TEMPLATE: "k0scontroller",
    },
)

# --- RKE2 and K3s: the distribution's unit env file and exports --------------------
# RKE2's units read /etc/default/rke2-server or -agent (EnvironmentFile=-/etc/default/%N,
# rancher/rke2 bundle/lib/systemd/system/rke2-server.service); its installer
# (get.rke2.io) needs the proxy exported in the shell that runs the preRKE2Commands,
# which cloud-init's runcmd and the Ignition install script both are
# (rancher/cluster-api-provider-rke2@c8a3286, bootstrap/internal/cloudinit and
# bootstrap/internal/ignition/butane/butane.go). Control-plane kinds run
# ``rke2-server``, the bootstrap kinds ``rke2-agent`` (an RKE2Config a control-plane
# Machine uses is generated from the RKE2ControlPlane, which the stream holds).
_RKE2_SOURCE: str = "rancher/cluster-api-provider-rke2@c8a3286ad22366f17faaab9c8fefb7eb80c52221"
_RKE2_SERVER: str = "/etc/default/rke2-server"
_RKE2_AGENT: str = "/etc/default/rke2-agent"
_RANGES_NOTE: str = (
    "{} adds the cluster's pod and service ranges and its DNS domain to its own NO_PROXY; "
    "the tool's NO_PROXY (derived per cluster as for kubeadm nodes) is what the installer, "
    "containerd and the other components read"
)

RKE2: Dialect = Dialect(
    name="rke2",
    kinds=(
        BootstrapKind(
            _CONTROL_PLANE,
            "RKE2ControlPlane",
            CONTROL_PLANE,
            ("spec",),
            # spec requires rolloutStrategy (v1beta2: and version): not made up
            {"v1beta1": frozenset({("spec",)}), "v1beta2": frozenset({("spec",)})},
        ),
        BootstrapKind(
            _CONTROL_PLANE,
            "RKE2ControlPlaneTemplate",
            CONTROL_PLANE_TEMPLATE,
            _TEMPLATE_SPEC,
            {
                "v1beta1": frozenset({("spec", "template"), _TEMPLATE_SPEC}),
                "v1beta2": frozenset({("spec",), ("spec", "template"), _TEMPLATE_SPEC}),
            },
        ),
        BootstrapKind(
            _BOOTSTRAP,
            "RKE2ConfigTemplate",
            TEMPLATE,
            _TEMPLATE_SPEC,
            {
                "v1beta1": frozenset({("spec",), ("spec", "template"), _TEMPLATE_SPEC}),
                "v1beta2": frozenset({("spec",), ("spec", "template"), _TEMPLATE_SPEC}),
            },
        ),
        BootstrapKind(_BOOTSTRAP, "RKE2Config", CONFIG, ("spec",)),
    ),
    files_key="files",
    commands_key="preRKE2Commands",
    formats=("cloud-config", "ignition"),
    os_rule=OS_LINUX,
    restart="",
    writers=(FILE_LIST, COMMAND_PREFIX),
    notes=(_RANGES_NOTE.format("RKE2"),),
    source=_RKE2_SOURCE,
    # rancher/cluster-api-provider-rke2@c8a3286a pkg/rke2/machine_filters.go: the machines'
    # RKE2Config against the spec, with no exemption
    control_plane_rollout="every control-plane machine is replaced (their RKE2Configs no "
    "longer match the spec)",
    format_path=("agentConfig", "format"),
    env_files={
        CONTROL_PLANE: _RKE2_SERVER,
        CONTROL_PLANE_TEMPLATE: _RKE2_SERVER,
        TEMPLATE: _RKE2_AGENT,
        CONFIG: _RKE2_AGENT,
    },
)

# K3s (k3s-io/cluster-api-k3s@7ed944f): cloud-config only (no format field); the
# preK3sCommands run in the runcmd script before ``curl -sfL https://get.k3s.io | ... sh``.
# The installer (k3s-io/k3s install.sh) deletes and rewrites
# /etc/systemd/system/k3s(-agent).service.env, copying into it the *_PROXY variables of
# its own environment: the exports are all it needs with inline values. In secret mode
# the values come from /etc/default/k3s or /etc/default/k3s-agent (its unit reads
# EnvironmentFile=-/etc/default/%N; the installer leaves that file alone), sourced
# before the installer runs.
_K3S_SOURCE: str = "k3s-io/cluster-api-k3s@7ed944f292e20aae69b3f4ae63497ab77144fff3"
_K3S_SERVER: str = "/etc/default/k3s"
_K3S_AGENT: str = "/etc/default/k3s-agent"

K3S: Dialect = Dialect(
    name="k3s",
    kinds=(
        BootstrapKind(
            _CONTROL_PLANE,
            "KThreesControlPlane",
            CONTROL_PLANE,
            ("spec", "kthreesConfigSpec"),
            # spec requires version (v1beta1: and infrastructureTemplate): not made up
            {"v1beta1": frozenset({("spec",)}), "v1beta2": frozenset({("spec",)})},
        ),
        BootstrapKind(
            _CONTROL_PLANE,
            "KThreesControlPlaneTemplate",
            CONTROL_PLANE_TEMPLATE,
            ("spec", "template", "spec", "kthreesConfigSpec"),
            {"v1beta2": frozenset({("spec", "template"), _TEMPLATE_SPEC})},
        ),
        BootstrapKind(
            _BOOTSTRAP, "KThreesConfigTemplate", TEMPLATE, _TEMPLATE_SPEC, _TEMPLATE_REQUIRED
        ),
        BootstrapKind(_BOOTSTRAP, "KThreesConfig", CONFIG, ("spec",)),
    ),
    files_key="files",
    commands_key="preK3sCommands",
    formats=(),
    os_rule=OS_LINUX,
    restart="",
    writers=(FILE_LIST, COMMAND_PREFIX),
    notes=(
        _RANGES_NOTE.format("K3s"),
        "the K3s installer (get.k3s.io) writes the exported *_PROXY variables into "
        "/etc/systemd/system/k3s(-agent).service.env; in secret mode they come from "
        "/etc/default/k3s(-agent), which its unit reads as well (not the file K3s's docs name)",
    ),
    source=_K3S_SOURCE,
    # k3s-io/cluster-api-k3s@7ed944f2 pkg/machinefilters/machine_filters.go: the machines'
    # KThreesConfig against the spec, but for the version
    control_plane_rollout="every control-plane machine is replaced (their KThreesConfigs "
    "no longer match the spec)",
    env_files={
        CONTROL_PLANE: _K3S_SERVER,
        CONTROL_PLANE_TEMPLATE: _K3S_SERVER,
        TEMPLATE: _K3S_AGENT,
        CONFIG: _K3S_AGENT,
    },
    env_file_inline=False,
)

DIALECTS: tuple[Dialect, ...] = (
    KUBEADM,
    EKS,
    EKS_NODEADM,
    TALOS,
    MICROK8S,
    K0SMOTRON,
    RKE2,
    K3S,
)

# (API group, kind) -> (its dialect, the kind's row)
BY_KIND: Mapping[tuple[str, str], tuple[Dialect, BootstrapKind]] = {
    (row.group, row.kind): (dialect, row) for dialect in DIALECTS for row in dialect.kinds
}
# the template kinds a ClusterClass may name, of every dialect whose nodes take files
# (the class's patch writes each cluster's env file; a config patch has no such file;
# the ClusterClass planner's patches write to the file and command lists)
TEMPLATE_KINDS: frozenset[str] = frozenset(
    row.kind
    for dialect in DIALECTS
    if FILE_LIST in dialect.writers and dialect.class_patches
    for row in dialect.kinds
    if row.level in TEMPLATE_LEVELS
)


def of_kind(group: str, kind: str) -> tuple[Dialect, BootstrapKind] | None:
    """The dialect and kind row of ``(group, kind)``; None for a kind no row covers."""
    return BY_KIND.get((group, kind))


def rules_of(api_version: str) -> str:
    """The rule set of an API version: "v1beta1" (also v1alpha*) or "v1beta2" (the rest)."""
    version = api_version.rpartition("/")[2]
    return "v1beta1" if version == "v1beta1" or version.startswith("v1alpha") else "v1beta2"
