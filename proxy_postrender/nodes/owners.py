"""Other owners of the node proxy settings: who else in the stream sets them.

The tool writes containerd and kubelet drop-ins and ``export`` lines. Others
may set the same files or variables, and then either CAPI rejects the result
(two ``files`` entries with one path) or the nodes silently get the other
owner's values:

- a provider's own proxy fields: CAPVCD's ``VCDCluster.spec.proxyConfigSpec``
  (its boot script writes containerd's drop-in itself, after cloud-init wrote
  the ``files``);
- a ClusterClass runtime-extension (``external``) patch: what it generates is
  not in the stream; CAREN's proxy handler adds drop-ins at the tool's default
  paths;
- a kubeadm spec's own proxy drop-ins, ``preKubeadmCommands`` that set the
  variables after the tool's exports, or ``files`` that write them into
  ``/etc/environment`` and the like (charts with proxy values of their own,
  such as Giant Swarm's ``global.connectivity.proxy``).

A :class:`Watch` sees every object the engine parses during one injecting
run (and the kubeadm plans), and at the end says what it found: findings with
a code from :data:`CODES`, whose ``strict`` flag says whether ``--strict``
makes the finding an error. Pure data in, data out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import DocumentContext
from proxy_postrender.nodes import kubeadm
from proxy_postrender.nodes.kubeadm import NodePlan
from proxy_postrender.nodes.settings import NodeSettings

# (the codes and the kinds, which the result and the engine read without this module)
from proxy_postrender.nodes.watched import CODES as CODES
from proxy_postrender.nodes.watched import DROPIN as DROPIN
from proxy_postrender.nodes.watched import ENVIRONMENT as ENVIRONMENT
from proxy_postrender.nodes.watched import EXPORTS as EXPORTS
from proxy_postrender.nodes.watched import EXTENSION as EXTENSION
from proxy_postrender.nodes.watched import EXTERNAL as EXTERNAL
from proxy_postrender.nodes.watched import PROVIDER as PROVIDER
from proxy_postrender.nodes.watched import WATCHED_KINDS as WATCHED_KINDS
from proxy_postrender.nodes.watched import WINDOWS_CA as WINDOWS_CA
from proxy_postrender.objects import api_group, dig
from proxy_postrender.record import Record
from proxy_postrender.structs import FrozenStruct, Struct, field
from proxy_postrender.targets import KUBEADM

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.noproxy.bootstraps import Bootstraps
    from proxy_postrender.targets import Target

_INFRA_GROUP = "infrastructure.cluster.x-k8s.io"
_CAPI_GROUP = "cluster.x-k8s.io"
# CAPVCD's boot script (controllers/cluster_scripts/cloud_init.tmpl) writes this file
CAPVCD_DROPIN = "/etc/systemd/system/containerd.service.d/http-proxy.conf"
# CAREN's proxy handler (pkg/handlers/generic/mutation/httpproxy) adds these two
CAREN_DROPINS = (
    "/etc/systemd/system/containerd.service.d/http-proxy.conf",
    "/etc/systemd/system/kubelet.service.d/http-proxy.conf",
)
_CAREN_EXTENSION = "cluster-api-runtime-extensions-nutanix"
# v1beta2 and v1beta1 names of the extensions a patch calls
_EXTENSION_KEYS = (
    "generatePatchesExtension",
    "generateExtension",
    "validateTopologyExtension",
    "validateExtension",
)

# Patterns, compiled on first use (``re`` caches them): most runs never need them.
_PROXY_VARIABLE = r"(?:HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy)"
# In a file: an env file's or a profile script's line, a drop-in's Environment="NAME=..."
_FILE_SETS = r"(?m)(?:^|[\s\"'=])(?:export\s+)?(" + _PROXY_VARIABLE + r")="
_UNIT_DROPIN = r"/(containerd|kubelet)\.service\.d/[^/]+\.conf$"
# files read as environment by logins, services or shells
_ENVIRONMENT_FILES = (
    r"^/etc/(?:environment|profile|bash\.bashrc|profile\.d/[^/]+|default/[^/]+|"
    r"sysconfig/[^/]+|systemd/system\.conf(?:\.d/[^/]+)?|environment\.d/[^/]+)$"
)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def proxy_names(text: str, *, command: bool = True) -> list[str]:
    """The proxy variables ``text`` sets: a shell command (``command``: any statement on
    any of its lines, read by :mod:`proxy_postrender.nodes.shell`; assigning a variable
    the tool exported changes what kubeadm gets, too), or a file (a drop-in, an env
    file, a profile script)."""
    if command:
        from proxy_postrender.nodes import shell  # lazy: start-up

        names = [n for n in shell.assigned_names(text) if re.fullmatch(_PROXY_VARIABLE, n)]
    else:
        names = re.findall(_FILE_SETS, text)
    return list(dict.fromkeys(names))


def file_content(entry: Mapping[str, Any]) -> str | None:
    """The text a ``files`` entry writes; None when the stream does not show it
    (``contentFrom``, gzip, content that does not decode)."""
    content = entry.get("content")
    if not isinstance(content, str):
        return None
    encoding = str(entry.get("encoding") or "")
    if encoding in ("", "text/plain"):
        return content
    if encoding in ("base64", "b64"):
        import base64  # lazy: start-up time, and few streams hold encoded files

        try:
            return base64.b64decode(content, validate=False).decode("utf-8")
        except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
            return None
    return None


def _name(kind: str, obj: Mapping[str, Any]) -> str:
    namespace = _text(dig(obj, "metadata", "namespace"))
    name = _text(dig(obj, "metadata", "name"))
    return f"{kind} {namespace + '/' if namespace else ''}{name}".rstrip()


class Found(FrozenStruct):
    """One finding: its code (a key of :data:`CODES`), the message, the object."""

    code: str
    message: str
    context: DocumentContext | None = None


class _Class(Struct):
    """A ClusterClass with runtime-extension patches."""

    name: str
    context: DocumentContext | None
    patches: list[str]  # "NAME (EXTENSION)"
    owner: str | None  # why it is known to set proxy drop-ins


class Watch(Struct):
    """What one injecting run has seen of other owners (see the module docstring)."""

    settings: NodeSettings
    injected: int = 0  # node objects that now carry the tool's commands
    providers: list[Found] = field(default_factory=list)
    classes: list[_Class] = field(default_factory=list)
    # ClusterClass name -> Clusters of that class that set proxy variables
    proxy_clusters: dict[str, list[str]] = field(default_factory=dict)
    specs: list[Found] = field(default_factory=list)
    # the bootstrap kinds the stream's clusters name, covered or not: read when the engine
    # gives the namespace of objects without one, made on the first Cluster API object
    bootstraps_namespace: str | None = None
    bootstraps: Bootstraps | None = None

    def tool_paths(self) -> set[str]:
        return kubeadm.tool_paths(self.settings)

    # --- every object the engine parses -------------------------------------------------

    def observe(self, obj: Mapping[str, Any], context: DocumentContext | None) -> None:
        kind = obj.get("kind")
        group = api_group(obj.get("apiVersion"))
        if group == _CAPI_GROUP and self.bootstraps_namespace is not None:
            if self.bootstraps is None:  # a stream without Cluster API objects never reads it
                from proxy_postrender.noproxy.bootstraps import Bootstraps

                self.bootstraps = Bootstraps(self.bootstraps_namespace)
            self.bootstraps.observe(obj, context)
        if group == _INFRA_GROUP and kind in ("VCDCluster", "VCDClusterTemplate"):
            self._vcd(obj, str(kind), context)
        elif group == _CAPI_GROUP and kind == "ClusterClass":
            self._cluster_class(obj, context)
        elif group == _CAPI_GROUP and kind == "Cluster":
            self._cluster(obj)

    def _vcd(self, obj: Mapping[str, Any], kind: str, context: DocumentContext | None) -> None:
        template = kind.endswith("Template")
        spec = dig(obj, "spec", "template", "spec") if template else obj.get("spec")
        proxy = dig(spec, "proxyConfigSpec")
        set_fields = [key for key in ("httpProxy", "httpsProxy") if _text(dig(proxy, key))]
        if not set_fields:
            return  # upstream templates ship the fields empty: CAPVCD then skips its proxy phase
        ours = self.settings.containerd_dropin
        if ours == CAPVCD_DROPIN:
            effect = (
                f"its boot script rewrites {CAPVCD_DROPIN} after cloud-init wrote the tool's "
                "drop-in there, so containerd gets CAPVCD's values and kubelet and kubeadm the "
                "profile's"
            )
        else:
            effect = (
                f"its boot script writes {CAPVCD_DROPIN} besides the tool's {ours}: systemd "
                "reads both, the file that sorts last wins per variable"
            )
        where = "spec.template.spec" if template else "spec"
        message = (
            f"{where}.proxyConfigSpec sets {', '.join(set_fields)}: "
            f"CAPVCD configures the nodes' proxy itself and {effect}; keep one owner: leave "
            "proxyConfigSpec empty, or set spec.nodes.enabled: false in the profile"
        )
        self.providers.append(Found(PROVIDER, message, context))

    def _cluster_class(self, obj: Mapping[str, Any], context: DocumentContext | None) -> None:
        patches = dig(obj, "spec", "patches")
        external: list[str] = []
        caren = False
        for patch in patches if isinstance(patches, list) else []:
            ext = dig(patch, "external")
            if not isinstance(ext, Mapping):
                continue
            names = [_text(ext.get(key)) for key in _EXTENSION_KEYS if _text(ext.get(key))]
            caren |= any(_CAREN_EXTENSION in n for n in names)
            label = _text(dig(patch, "name")) or "unnamed"
            external.append(f"{label} ({names[0]})" if names else label)
        if not external:
            return
        owner = None
        if caren:
            owner = (
                "it calls CAREN, whose proxy handler adds "
                f"{' and '.join(CAREN_DROPINS)} when a Cluster sets clusterConfig.proxy"
            )
        else:
            declared = _proxy_variable(dig(obj, "spec", "variables"))
            if declared:
                owner = f"it declares the variable {declared!r}, which a runtime extension reads"
        name = _text(dig(obj, "metadata", "name"))
        self.classes.append(_Class(name, context, external, owner))

    def _cluster(self, obj: Mapping[str, Any]) -> None:
        topology = dig(obj, "spec", "topology")
        klass = _text(dig(topology, "classRef", "name")) or _text(dig(topology, "class"))
        variables = dig(topology, "variables")
        if not klass or not isinstance(variables, list):
            return
        for variable in variables:
            name = _text(dig(variable, "name"))
            value = dig(variable, "value")
            if _is_proxy_name(name):
                found = name
            elif isinstance(value, Mapping) and any(_is_proxy_name(str(k)) for k in value):
                key = next(str(k) for k in value if _is_proxy_name(str(k)))
                found = f"{name}.{key}"
            else:
                continue
            label = f"{_name('Cluster', obj)} sets {found}"
            self.proxy_clusters.setdefault(klass, []).append(label)

    # --- the kubeadm specs the planner saw ----------------------------------------------

    def node_plan(
        self,
        obj: Mapping[str, Any],
        target: Target | None,
        plan: NodePlan,
        context: DocumentContext | None,
    ) -> None:
        """A node object's plan: counts it, and reads a KubeadmConfigSpec (not a
        ClusterClass) for drop-ins, exports and environment files of its own."""
        if plan.commands <= 0:
            return  # the tool put nothing on these nodes
        self.injected += 1
        if target is None or target.planner != KUBEADM:
            return
        dialect = kubeadm.dialect_of(target)[0].at(str(obj.get("apiVersion") or ""))
        files_key, commands_key = dialect.list_keys
        spec = dig(obj, *(str(step) for step in target.paths[0]))
        where = ".".join(str(step) for step in target.paths[0])
        if plan.windows:
            self._windows(where, context)
        if not isinstance(spec, Mapping) or plan.windows:
            return
        self._files(spec, where, plan, context, files_key)
        self._commands(obj, spec, where, context, commands_key)

    def _windows(self, where: str, context: DocumentContext | None) -> None:
        """A Windows spec gets the machine environment only: say so when the profile
        has a CA for the nodes, which such nodes then do not trust."""
        if not self.settings.ca_bundle:
            return
        message = (
            f"{where} configures Windows nodes: they get the proxy variables but not the "
            "proxy's CA (spec.caBundle), which the tool installs on Linux nodes only; add it "
            "to the Windows machines' trust store by the template's own means, or set "
            "spec.caBundle.nodes: false"
        )
        self.specs.append(Found(WINDOWS_CA, message, context))

    def _files(
        self,
        spec: Mapping[str, Any],
        where: str,
        plan: NodePlan,
        context: DocumentContext | None,
        files_key: str = "files",
    ) -> None:
        files = spec.get(files_key)
        ours = self.tool_paths()
        dropins: list[str] = [f"{p} (kept: onConflict keep)" for p in plan.files_kept]
        environment: list[str] = []
        for entry in files if isinstance(files, list) else []:
            path = _text(dig(entry, "path"))
            if not path or path in ours or not isinstance(entry, Mapping):
                continue
            content = file_content(entry)
            names = proxy_names(content, command=False) if content is not None else []
            if re.search(_UNIT_DROPIN, path):
                if names:
                    dropins.append(f"{path} ({', '.join(names)})")
                elif content is None and "proxy" in path.rsplit("/", 1)[-1].lower():
                    dropins.append(f"{path} (its content is not in the stream)")
            elif names and re.match(_ENVIRONMENT_FILES, path):
                environment.append(f"{path} ({', '.join(names)})")
        if dropins:
            message = (
                f"{where}.{files_key} has proxy drop-ins of its own: {'; '.join(dropins)}; "
                "containerd and kubelet may run with those values rather than the profile's: "
                "take them out of the chart's values, or set spec.onConflict: override "
                "(same path only)"
            )
            self.specs.append(Found(DROPIN, message, context))
        if environment:
            message = (
                f"{where}.{files_key} writes proxy variables into {'; '.join(environment)}: "
                "a second source of the proxy settings on the node, beside the tool's; "
                "keep one owner"
            )
            self.specs.append(Found(ENVIRONMENT, message, context))

    def _commands(
        self,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        where: str,
        context: DocumentContext | None,
        commands_key: str = "preKubeadmCommands",
    ) -> None:
        commands = spec.get(commands_key)
        if not isinstance(commands, list):
            return
        skip = _recorded_commands(obj)
        setting: list[str] = []
        names: list[str] = []
        for index, command in enumerate(commands):
            if index < skip or not isinstance(command, str):
                continue
            found = proxy_names(command)
            if found:
                setting.append(f"[{index}]")
                names += found
        if setting:
            shown = ", ".join(dict.fromkeys(names))
            more = f" and {len(setting) - 3} more" if len(setting) > 3 else ""
            message = (
                f"{where}.{commands_key}{', '.join(setting[:3])}{more} set {shown} "
                "after the tool's exports: "
                "kubeadm and the static pods it writes get the manifest's values, not the "
                "profile's; take them out of the chart's values"
            )
            self.specs.append(Found(EXPORTS, message, context))

    # --- the end of the stream ----------------------------------------------------------

    def findings(self) -> list[Found]:
        """Everything found, in stream order per kind of owner; nothing when the run put
        nothing on any node."""
        if not self.injected:
            return []
        found = [*self.providers]
        for klass in self.classes:
            patches = ", ".join(klass.patches)
            clusters = self.proxy_clusters.get(klass.name, [])
            owner = klass.owner
            if clusters and owner is None:
                owner = f"{'; '.join(clusters)}, which a runtime extension reads"
            if owner is None:
                message = (
                    f"runtime-extension patches ({patches}) make changes that are not in the "
                    "rendered stream: if they set files or preKubeadmCommands, check "
                    "that they keep the tool's entries and write no proxy drop-ins of their own"
                )
                found.append(Found(EXTERNAL, message, klass.context))
                continue
            paths = {self.settings.containerd_dropin, self.settings.kubelet_dropin}
            clash = (
                "CAPI rejects the KubeadmConfig (two files entries with one path)"
                if klass.owner is not None and paths & set(CAREN_DROPINS)
                else "the nodes get two proxy drop-ins per unit"
            )
            if clusters and klass.owner is not None:
                owner += f" ({'; '.join(clusters)})"
            message = (
                f"runtime-extension patches ({patches}) set the nodes' "
                f"proxy: {owner}; with the tool's drop-ins as well, {clash}; keep one owner: "
                "the extension's variable, or the profile with the variable unset"
            )
            found.append(Found(EXTENSION, message, klass.context))
        return found + self.specs


def _is_proxy_name(name: str) -> bool:
    lowered = name.lower().replace("-", "").replace("_", "")
    return lowered in ("proxy", "httpproxy", "httpsproxy", "noproxy")


def _proxy_variable(variables: Any) -> str | None:
    """The first ClusterClass variable that holds proxy settings: by name, or by a
    ``proxy`` property of its schema (CAREN's ``clusterConfig.proxy``)."""
    for variable in variables if isinstance(variables, list) else []:
        name = _text(dig(variable, "name"))
        if _is_proxy_name(name):
            return name
        properties = dig(variable, "schema", "openAPIV3Schema", "properties")
        if isinstance(properties, Mapping):
            for key in properties:
                if _is_proxy_name(str(key)):
                    return f"{name}.{key}"
    return None


def _recorded_commands(obj: Mapping[str, Any]) -> int:
    """How many leading preKubeadmCommands the input records as the tool's (a re-run)."""
    for entry in Record.read(obj, kubeadm.ANNOTATION).entries:
        key, _, value = entry.partition("=")
        if key == "commands" and value.isdigit():
            return int(value)
    return 0
