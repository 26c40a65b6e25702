"""A model of how Cluster API applies a ClusterClass's inline patches to its templates,
and a checker for the node bootstrap the tool writes into a KubeadmConfigSpec.

Read from Cluster API (kubernetes-sigs/cluster-api at ae7ff047, the commit of the CRDs in
``../shared/capi-crds/``):

- ``core/reconcilers/topology/cluster/patches/engine.go``: the ClusterClass's patches run
  in order; each patch's output is applied to the templates before the next patch runs;
  external patches (``external:``) call a runtime extension.
- ``core/reconcilers/topology/cluster/patches/inline/json_patch_generator.go``: a patch's
  ``enabledIf`` is evaluated once per patch (and template); a definition applies to a
  template when its selector matches (``apiVersion`` and ``kind`` exactly, then one of
  ``matchResources``: ``controlPlane``, ``infrastructureCluster``,
  ``machineDeploymentClass.names`` / ``machinePoolClass.names`` where a name is exact,
  ``*``, ``*suffix`` or ``prefix*``); each matching definition's ``jsonPatches`` form one
  RFC 6902 document, applied in definition order (``engine.go`` ``applyPatchToRequest``);
  ``value`` is literal, ``valueFrom.variable`` a variable, ``valueFrom.template`` a Go
  template rendered and parsed as YAML; a failing document fails the reconcile.
- ``core/webhooks/admission/patch_validation.go``: a path starts with ``/spec``; in an
  ``add`` every numeric path segment must be ``0`` (else only ``-``); ``replace`` and
  ``remove`` take no numeric segment at all; ``add``/``replace`` carry exactly one of
  ``value`` and ``valueFrom``.
- ``bootstrap/kubeadm/webhooks/admission/kubeadmconfig.go`` ``validateFiles``: the paths of
  ``files`` are unique, and an entry has ``content`` or ``contentFrom``, not both.

What the model does not do (each case is reported, never guessed silently):

- ``enabledIf`` is not evaluated: every combination of on/off per patch is enumerated
  (``MAX_ENUMERATED`` patches at most per template; beyond that, patches that touch no
  kubeadm list are fixed off, and any still beyond the cap are fixed on). The tool's own
  patch (``TOOL_PATCH``, nodes/classvars.py) has no ``enabledIf``: it is always on.
- ``valueFrom.variable`` gets a stand-in value: the variable's schema ``default``, else its
  ``example``, else a placeholder of its type (``""``, ``0``, ``false``, ``[]``, ``{}``);
  builtin variables get a string.
- ``valueFrom.template`` is rendered by a stand-in (``render_template``): a value action
  prints ``x`` (honouring ``{{-``/``-}}`` trimming; removing it instead breaks real
  templates such as ``name: {{ .a }}{{ if .b }}-{{ .c }}{{ end }}``), of ``if``/``with``
  blocks the first branch is kept, a ``range`` body is kept once; what does not parse as
  YAML afterwards makes that template and combination "not modelled". With a
  ``render`` (``model``, ``check_clusterclass``), the templates of the tool's own patch
  are rendered by it instead: tests/test_clusterclass_variables.py passes the real Go
  text/template (tests/gotemplate/main.go) with one cluster's nested variables.
- External patches are not modelled (a runtime extension's output is not in a stream).
- A template that the ClusterClass references but that is not in the stream is not
  modelled.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonpatch
import jsonpointer
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from proxy_postrender.nodes.kubeadm import (
    NodeSettings,
    desired_commands,
    desired_files,
    is_tool_command,
)
from proxy_postrender.nodes.nodeos import value_is_windows
from proxy_postrender.plans import SecretRef
from proxy_postrender.profile.tables import DEFAULT_CONTAINERD_DROPIN, DEFAULT_KUBELET_DROPIN
from proxy_postrender.structs import replace

System = Literal["linux", "windows"]
MAX_ENUMERATED = 10

# Where the KubeadmConfigSpec is in each kind (docs/cluster-api.md; written out here, not
# taken from the tool's table, so that a wrong table would show).
SPEC_PATHS: Mapping[str, tuple[str, ...]] = {
    "KubeadmControlPlane": ("spec", "kubeadmConfigSpec"),
    "KubeadmControlPlaneTemplate": ("spec", "template", "spec", "kubeadmConfigSpec"),
    "KubeadmConfigTemplate": ("spec", "template", "spec"),
    "KubeadmConfig": ("spec",),
}
_LISTS = ("files", "preKubeadmCommands")
_NUMERIC = re.compile(r"^[+-]?[0-9]+$")  # what Go's strconv.Atoi accepts


def kubeadm_spec(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The KubeadmConfigSpec of a kubeadm object; {} where the path is absent (v1beta2 allows
    a template without ``spec.template.spec``); None for other kinds or a non-mapping."""
    path = SPEC_PATHS.get(str(obj.get("kind")))
    if path is None:
        return None
    node: Any = obj
    for step in path:
        if node is None:
            return {}
        if not isinstance(node, Mapping):
            return None
        node = node.get(step)
    if node is None:
        return {}
    return node if isinstance(node, Mapping) else None


def list_pointers(kind: str) -> tuple[str, ...]:
    """The JSON pointers of ``files`` and ``preKubeadmCommands`` in a template kind."""
    path = SPEC_PATHS.get(kind)
    if path is None:
        return ()
    return tuple("/" + "/".join((*path, key)) for key in _LISTS)


# ---------------------------------------------------------------------------------------
# The expectation and the checker


@dataclass(frozen=True)
class Expectation:
    """What the tool should have written into a spec, in shapes that do not depend on the
    cluster (NO_PROXY differs per cluster): the file paths, and a key per command."""

    file_paths: tuple[str, ...]
    command_keys: tuple[str, ...]
    windows: Literal["configure", "skip"] = "configure"

    @property
    def configures_windows(self) -> bool:
        return self.windows == "configure"


_EXPORT = re.compile(r"^export ([A-Za-z_]+)=")
_POWERSHELL = "powershell -NoProfile -NonInteractive -EncodedCommand "
_SAMPLE_ENV = (
    ("HTTP_PROXY", "http://proxy.example:3128"),
    ("HTTPS_PROXY", "http://proxy.example:3128"),
    ("NO_PROXY", "localhost"),
    ("http_proxy", "http://proxy.example:3128"),
    ("https_proxy", "http://proxy.example:3128"),
    ("no_proxy", "localhost"),
)


def command_key(command: Any) -> str:
    """A command up to what varies per cluster: ``export NAME=`` and the PowerShell prefix."""
    text = str(command)
    match = _EXPORT.match(text)
    if match:
        return match.group(0)
    if text.startswith(_POWERSHELL):
        return _POWERSHELL
    return text


def expectation(
    settings: NodeSettings, env: Sequence[tuple[str, str]] = _SAMPLE_ENV, *, shared: bool = False
) -> Expectation:
    """The expectation for a profile's node settings (secret mode: the files come from a
    Secret, whatever its name). Windows specs get one PowerShell command, unless
    ``nodes.windows: skip`` or secret mode (Linux only) leave them alone. ``shared``: a
    template of a ClusterClass after the topology reconciled, inline values: the
    ``envfile`` layout (the class's own patch adds the env file)."""
    secret = SecretRef("proxy", None, None) if settings.credentials == "secret" else None
    if shared and secret is None:
        settings = replace(settings, layout="envfile")
    files = desired_files(settings, env, secret)
    commands = desired_commands(env, settings, secret)
    skip = settings.windows == "skip" or secret is not None
    return Expectation(
        tuple(str(f["path"]) for f in files),
        tuple(command_key(c) for c in commands),
        "skip" if skip else "configure",
    )


DEFAULT_EXPECTATION = expectation(NodeSettings(DEFAULT_CONTAINERD_DROPIN, DEFAULT_KUBELET_DROPIN))


def system_of(spec: Mapping[str, Any]) -> System:
    """Windows or Linux, from the manifest's own entries by the tool's one rule (the
    tool's commands left out, so that a PowerShell command wrongly put into a Linux spec
    does not make it Windows; lists of the wrong shape, which the checker reports, read
    as empty)."""
    windows = value_is_windows(spec, None, None, "the template", is_tool=is_tool_command)
    return "windows" if windows else "linux"


def duplicate_paths(spec: Mapping[str, Any]) -> list[str]:
    """CAPI's KubeadmConfig webhook: paths in ``files`` are unique."""
    files = spec.get("files")
    if not isinstance(files, list):
        return []
    seen: dict[str, int] = {}
    for item in files:
        if isinstance(item, Mapping):
            path = str(item.get("path"))
            seen[path] = seen.get(path, 0) + 1
    return [
        f"files: {path!r} appears {count} times (CAPI rejects duplicate paths)"
        for path, count in seen.items()
        if count > 1
    ]


def check_template(
    spec: Mapping[str, Any] | None, system: System, expect: Expectation | None = None
) -> list[str]:
    """The problems of one KubeadmConfigSpec as the tool should leave it (empty: none);
    ``expect`` defaults to the default profile's (inline values, both drop-ins)."""
    expect = expect or DEFAULT_EXPECTATION
    spec = spec or {}
    problems: list[str] = []
    files = spec.get("files")
    commands = spec.get("preKubeadmCommands")
    if files is not None and not isinstance(files, list):
        return [f"files is not a list: {files!r}"]
    if commands is not None and not isinstance(commands, list):
        return [f"preKubeadmCommands is not a list: {commands!r}"]
    paths = [str(f.get("path")) for f in files or [] if isinstance(f, Mapping)]
    commands = commands or []
    lead = list(itertools.takewhile(is_tool_command, commands))
    lead_keys = [command_key(c) for c in lead]
    if system == "linux":
        problems += [
            p
            for p in duplicate_paths(spec)
            if not p.startswith(tuple(f"files: {path!r}" for path in expect.file_paths))
        ]
        for path in expect.file_paths:
            count = paths.count(path)
            if count == 0:
                problems.append(f"missing drop-in {path}")
            elif count > 1:
                problems.append(
                    f"files: {path!r} appears {count} times (CAPI rejects duplicate paths)"
                )
        want = list(expect.command_keys)
        head = commands[: len(want)]
        if not all(map(is_tool_command, head)) or [command_key(c) for c in head] != want:
            if not commands:
                problems.append("preKubeadmCommands: the tool's commands are missing")
            elif not lead:
                problems.append(
                    f"preKubeadmCommands starts with {str(commands[0])!r}, not with the tool's "
                    f"{len(want)} commands"
                )
            else:
                problems.append(
                    f"preKubeadmCommands: the leading tool commands are {lead_keys}, "
                    f"expected {want}"
                )
        lead = head
        # the manifest's own commands follow; its own exports after the tool's are its
        # business, but the tool's own export again later means its entries were doubled
        again = [c for c in commands[len(lead) :] if c in lead and _EXPORT.match(str(c))]
        if again:
            problems.append(f"preKubeadmCommands: the tool's {str(again[0])!r} appears again later")
        return problems
    # Windows
    problems += duplicate_paths(spec)
    linux_paths = [p for p in expect.file_paths if p in paths]
    if linux_paths:
        problems.append(f"Linux file(s) in a Windows spec: {', '.join(linux_paths)}")
    linux_commands = [c for c in commands if is_tool_command(c) and command_key(c) != _POWERSHELL]
    if linux_commands:
        problems.append(f"Linux command in a Windows spec: {str(linux_commands[0])!r}")
    powershell = [c for c in commands if command_key(c) == _POWERSHELL]
    if expect.configures_windows:
        if not commands or command_key(commands[0]) != _POWERSHELL:
            problems.append("preKubeadmCommands does not start with the tool's PowerShell command")
        if len(powershell) > 1:
            problems.append(f"the tool's PowerShell command appears {len(powershell)} times")
    elif powershell:
        problems.append("a PowerShell command of the tool in a Windows spec it should leave alone")
    return problems


def check_object(obj: Mapping[str, Any], expect: Expectation) -> list[str]:
    """The checker on a kubeadm object of the stream (KubeadmControlPlane, KubeadmConfig and
    their templates)."""
    spec = kubeadm_spec(obj)
    if spec is None:
        return [f"{obj.get('kind')}: the KubeadmConfigSpec is not a mapping"]
    return check_template(spec, system_of(spec), expect)


# ---------------------------------------------------------------------------------------
# The ClusterClass: its template slots, static webhook checks, and the patches applied


@dataclass(frozen=True)
class Slot:
    """A template a ClusterClass references, and the role a patch selector sees it in."""

    role: Literal["controlPlane", "machineDeployment", "machinePool"]
    class_name: str | None
    api_version: str
    kind: str
    name: str

    @property
    def label(self) -> str:
        where = self.role if self.class_name is None else f"{self.role} {self.class_name}"
        return f"{where} ({self.kind} {self.name})"


def _ref(holder: Any, *paths: tuple[str, ...]) -> Mapping[str, Any] | None:
    for path in paths:
        node: Any = holder
        for step in path:
            node = node.get(step) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping):
            return node
    return None


def slots(clusterclass: Mapping[str, Any]) -> list[Slot]:
    """The KubeadmControlPlaneTemplate and KubeadmConfigTemplates a ClusterClass references:
    v1beta1 ``controlPlane.ref`` and ``workers.*[].template.bootstrap.ref``, v1beta2
    ``controlPlane.templateRef`` and ``workers.*[].bootstrap.templateRef``."""
    spec = clusterclass.get("spec") or {}
    found: list[Slot] = []

    def add(role: Any, class_name: str | None, ref: Mapping[str, Any] | None) -> None:
        if ref is not None and str(ref.get("kind")) in SPEC_PATHS:
            found.append(
                Slot(
                    role,
                    class_name,
                    str(ref.get("apiVersion", "")),
                    str(ref["kind"]),
                    str(ref.get("name")),
                )
            )

    add("controlPlane", None, _ref(spec, ("controlPlane", "ref"), ("controlPlane", "templateRef")))
    workers = spec.get("workers") or {}
    for key, role in (("machineDeployments", "machineDeployment"), ("machinePools", "machinePool")):
        for item in workers.get(key) or []:
            if not isinstance(item, Mapping):
                continue
            ref = _ref(
                item,
                ("template", "bootstrap", "ref"),
                ("template", "bootstrap", "templateRef"),
                ("bootstrap", "templateRef"),
                ("bootstrap", "ref"),
            )
            add(role, str(item.get("class")), ref)
    return found


def find_template(
    objects: Sequence[Any], slot: Slot, namespace: str | None
) -> Mapping[str, Any] | None:
    """The template of a slot in the stream: same kind, name and API group; the ClusterClass's
    namespace, or no namespace on either side."""
    group = slot.api_version.partition("/")[0]
    for obj in objects:
        if not isinstance(obj, Mapping) or obj.get("kind") != slot.kind:
            continue
        meta = obj.get("metadata") or {}
        if str(meta.get("name")) != slot.name:
            continue
        if str(obj.get("apiVersion", "")).partition("/")[0] != group:
            continue
        theirs = meta.get("namespace")
        if theirs and namespace and theirs != namespace:
            continue
        return obj
    return None


def _names_match(names: Any, class_name: str | None) -> bool:
    if class_name is None or not isinstance(names, list):
        return False
    for name in map(str, names):
        if name == "*" or name == class_name:
            return True
        if name.startswith("*") and class_name.endswith(name[1:]):
            return True
        if name.endswith("*") and class_name.startswith(name[:-1]):
            return True
    return False


def selector_matches(selector: Any, api_version: str, kind: str, slot: Slot) -> bool:
    """CAPI's ``matchesSelector`` for a bootstrap or control-plane template."""
    if not isinstance(selector, Mapping):
        return False
    if selector.get("apiVersion") != api_version or selector.get("kind") != kind:
        return False
    match = selector.get("matchResources") or {}
    if slot.role == "controlPlane" and match.get("controlPlane") is True:
        return True
    # infrastructureCluster selects the InfrastructureCluster only, never these templates
    md, mp = match.get("machineDeploymentClass"), match.get("machinePoolClass")
    if slot.role == "machineDeployment" and isinstance(md, Mapping):
        return _names_match(md.get("names"), slot.class_name)
    if slot.role == "machinePool" and isinstance(mp, Mapping):
        return _names_match(mp.get("names"), slot.class_name)
    return False


def webhook_problems(clusterclass: Mapping[str, Any]) -> list[str]:
    """What CAPI's ClusterClass webhook rejects in the inline patches' jsonPatches."""
    problems: list[str] = []
    for i, patch in enumerate((clusterclass.get("spec") or {}).get("patches") or []):
        if not isinstance(patch, Mapping):
            continue
        for j, definition in enumerate(patch.get("definitions") or []):
            for k, op in enumerate((definition or {}).get("jsonPatches") or []):
                where = f"patch {patch.get('name', i)!r} definitions[{j}].jsonPatches[{k}]"
                problems += [f"{where}: {p}" for p in json_patch_problems(op)]
    return problems


def json_patch_problems(op: Mapping[str, Any]) -> list[str]:
    """The webhook's rules for one jsonPatch."""
    problems: list[str] = []
    name, path = op.get("op"), str(op.get("path", ""))
    if name not in ("add", "replace", "remove"):
        problems.append(f"op {name!r} is not add, replace or remove")
    if not path.startswith("/spec"):
        problems.append(f"path {path!r} does not start with /spec")
    for part in path.split("/"):
        if not _NUMERIC.match(part):
            continue
        if name == "add" and int(part) != 0:
            problems.append(f"add at {path!r}: arrays take only index 0 (prepend) or - (append)")
        if name in ("replace", "remove"):
            problems.append(f"{name} at {path!r}: no array index allowed")
    if name in ("add", "replace"):
        has_value, value_from = "value" in op, op.get("valueFrom")
        if has_value == (value_from is not None):
            problems.append("needs exactly one of value and valueFrom")
        if isinstance(value_from, Mapping) and bool(value_from.get("variable")) == bool(
            value_from.get("template")
        ):
            problems.append("valueFrom needs exactly one of variable and template")
    return problems


# --- valueFrom stand-ins


PLACEHOLDER = "x"  # what a value action ({{ .var }}, {{ f .var }}) prints in the stand-in
_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)


def _silent(body: str, words: Sequence[str]) -> bool:
    """A comment, an assignment or a ``template`` call: no value printed here."""
    return not words or body.startswith("/*") or words[0] == "template" or ":=" in words[:3]


def render_template(text: str) -> str:
    """A stand-in for Go's text/template: a value action prints ``PLACEHOLDER`` (comments and
    assignments print nothing; ``{{- `` and `` -}}`` trim the whitespace next to them, as in
    Go); of ``if``/``with`` blocks the first branch is kept (``else`` and ``else if`` branches
    dropped), a ``range`` body kept once, ``define`` bodies dropped. A value that a function
    renders as YAML structure (``toYaml``) becomes a scalar: the result may not parse."""
    texts: list[str] = []
    actions: list[tuple[bool, str, bool]] = []
    pos = 0
    for match in _ACTION.finditer(text):
        texts.append(text[pos : match.start()])
        actions.append((bool(match.group(1)), match.group(2).strip(), bool(match.group(3))))
        pos = match.end()
    texts.append(text[pos:])
    for n, (left_trim, _, right_trim) in enumerate(actions):
        if left_trim:
            texts[n] = texts[n].rstrip()
        if right_trim:
            texts[n + 1] = texts[n + 1].lstrip()
    out: list[str] = []
    keep: list[bool] = []  # per open block: whether its text is kept
    for n, chunk in enumerate(texts):
        if all(keep):
            out.append(chunk)
        if n == len(actions):
            break
        words = actions[n][1].split()
        keyword = words[0] if words else ""
        if keyword in ("if", "with", "range", "block"):
            keep.append(True)
        elif keyword == "define":
            keep.append(False)
        elif keyword == "else" and keep:
            keep[-1] = False
        elif keyword == "end" and keep:
            keep.pop()
        elif all(keep) and not _silent(actions[n][1], words):
            out.append(PLACEHOLDER)  # any other action prints a value
    return "".join(out)


def _parse_yaml(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


_PLACEHOLDERS: Mapping[str, Any] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "object": {},
}


def variable_value(clusterclass: Mapping[str, Any], reference: str) -> Any:
    """The stand-in value of ``valueFrom.variable``: the schema's default or example, or a
    placeholder of its type; a builtin (or a path into a variable) is a string."""
    if reference.startswith("builtin."):
        return reference.rsplit(".", 1)[-1]
    name = re.split(r"[.\[]", reference, maxsplit=1)[0]
    for variable in (clusterclass.get("spec") or {}).get("variables") or []:
        if not isinstance(variable, Mapping) or variable.get("name") != name:
            continue
        schema = ((variable.get("schema") or {}).get("openAPIV3Schema")) or {}
        if name != reference:
            return ""
        for key in ("default", "example"):
            if key in schema:
                return copy.deepcopy(schema[key])
        return copy.deepcopy(_PLACEHOLDERS.get(str(schema.get("type")), ""))
    return ""


class NotModelled(Exception):
    """A value the stand-ins cannot produce."""


TOOL_PATCH = "proxy-postrender"  # the name of the tool's own patch (nodes/classvars.py)


def value_of(
    clusterclass: Mapping[str, Any],
    op: Mapping[str, Any],
    render: Callable[[str], str] | None = None,
) -> Any:
    """The value a jsonPatch writes; ``render`` (when given) renders a template as Cluster
    API does (the tool's own templates: real Go text/template, one cluster's variables)."""
    if "value" in op:
        return copy.deepcopy(op["value"])
    value_from = op.get("valueFrom") or {}
    if value_from.get("variable"):
        return variable_value(clusterclass, str(value_from["variable"]))
    if render is not None:
        return _parse_yaml(render(str(value_from.get("template", ""))))
    rendered = render_template(str(value_from.get("template", "")))
    try:
        return _parse_yaml(rendered)
    except YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise NotModelled(
            f"valueFrom.template does not parse after the stand-in: {first}"
        ) from None


# --- enumeration and application


@dataclass
class Outcome:
    """One template under one combination of enabled patches."""

    slot: Slot
    enabled: tuple[str, ...]  # the names of the patches that were on
    template: dict[str, Any] | None  # the template as CAPI would produce it
    errors: list[str] = field(default_factory=list)  # CAPI would fail the reconcile
    not_modelled: str | None = None


def _touches_lists(definition: Mapping[str, Any], pointers: Sequence[str]) -> bool:
    for op in definition.get("jsonPatches") or []:
        path = str((op or {}).get("path", ""))
        for pointer in pointers:
            if path == pointer or pointer.startswith(path + "/") or path.startswith(pointer + "/"):
                return True
    return False


@dataclass
class Model:
    """The patches of one ClusterClass against the templates in the stream."""

    clusterclass: Mapping[str, Any]
    templates: list[tuple[Slot, Mapping[str, Any]]]
    missing: list[Slot]
    external: list[str]  # names of external patches (not modelled)
    webhook: list[str]  # what the ClusterClass webhook rejects
    notes: list[str] = field(default_factory=list)
    # renders the tool's own patch's templates for one cluster (None: the stand-in)
    render: Callable[[str], str] | None = None

    def patches(self) -> list[tuple[int, Mapping[str, Any]]]:
        spec = self.clusterclass.get("spec") or {}
        return [
            (i, p)
            for i, p in enumerate(spec.get("patches") or [])
            if isinstance(p, Mapping) and not p.get("external")
        ]

    def matching(
        self, slot: Slot, template: Mapping[str, Any]
    ) -> list[tuple[int, Mapping[str, Any]]]:
        api_version = str(template.get("apiVersion"))
        kind = str(template.get("kind"))
        return [
            (i, p)
            for i, p in self.patches()
            if any(
                isinstance(d, Mapping)
                and selector_matches(d.get("selector"), api_version, kind, slot)
                for d in p.get("definitions") or []
            )
        ]

    def combinations(self, slot: Slot, template: Mapping[str, Any]) -> list[dict[int, bool]]:
        """The on/off choices to try for the patches that select this template."""
        matching = self.matching(slot, template)
        pointers = list_pointers(str(template.get("kind")))
        # the tool's own patch has no enabledIf: Cluster API always applies it
        fixed: dict[int, bool] = {
            i: True for i, p in matching if p.get("name") == TOOL_PATCH and "enabledIf" not in p
        }
        varied = [i for i, _ in matching if i not in fixed]
        if len(varied) > MAX_ENUMERATED:
            relevant = [
                i
                for i, p in matching
                if any(
                    isinstance(d, Mapping) and _touches_lists(d, pointers)
                    for d in p.get("definitions") or []
                )
            ]
            fixed.update({i: False for i in varied if i not in relevant})
            varied = relevant
            if len(varied) > MAX_ENUMERATED:
                fixed.update({i: True for i in varied[MAX_ENUMERATED:]})
                varied = varied[:MAX_ENUMERATED]
            self.notes.append(
                f"{slot.label}: {len(matching)} patches select it; {len(varied)} enumerated, "
                f"{sum(not v for v in fixed.values())} fixed off, {sum(fixed.values())} fixed on"
            )
        combos = []
        for bits in itertools.product((False, True), repeat=len(varied)):
            combos.append({**fixed, **dict(zip(varied, bits, strict=True))})
        return combos

    def apply(
        self, slot: Slot, template: Mapping[str, Any], enabled: Mapping[int, bool]
    ) -> Outcome:
        obj: dict[str, Any] = copy.deepcopy(dict(template))
        api_version, kind = str(template.get("apiVersion")), str(template.get("kind"))
        names = tuple(str(p.get("name", i)) for i, p in self.patches() if enabled.get(i))
        outcome = Outcome(slot, names, None)
        for i, patch in self.patches():
            if not enabled.get(i):
                continue
            for j, definition in enumerate(patch.get("definitions") or []):
                if not isinstance(definition, Mapping):
                    continue
                if not selector_matches(definition.get("selector"), api_version, kind, slot):
                    continue
                where = f"patch {patch.get('name', i)!r} definitions[{j}]"
                document = []
                try:
                    for op in definition.get("jsonPatches") or []:
                        item = {"op": op.get("op"), "path": op.get("path")}
                        if op.get("op") in ("add", "replace"):
                            tool = patch.get("name") == TOOL_PATCH
                            render = self.render if tool else None
                            item["value"] = value_of(self.clusterclass, op, render)
                        document.append(item)
                except NotModelled as exc:
                    outcome.not_modelled = f"{where}: {exc}"
                    return outcome
                try:
                    obj = jsonpatch.JsonPatch(document).apply(obj)
                except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
                    outcome.errors.append(f"{where}: CAPI fails to apply the jsonPatches: {exc}")
                    return outcome
        outcome.template = obj
        return outcome

    def outcomes(self) -> Iterator[Outcome]:
        for slot, template in self.templates:
            for enabled in self.combinations(slot, template):
                yield self.apply(slot, template, enabled)


def model(
    clusterclass: Mapping[str, Any],
    objects: Sequence[Any],
    render: Callable[[str], str] | None = None,
) -> Model:
    """The model of one ClusterClass over the objects of its stream (``render``: see
    ``Model.render``)."""
    namespace = (clusterclass.get("metadata") or {}).get("namespace")
    templates: list[tuple[Slot, Mapping[str, Any]]] = []
    missing: list[Slot] = []
    for slot in slots(clusterclass):
        template = find_template(objects, slot, namespace)
        if template is None:
            missing.append(slot)
        elif all(s != slot for s, _ in templates):
            templates.append((slot, template))
    external = [
        str(p.get("name"))
        for p in (clusterclass.get("spec") or {}).get("patches") or []
        if isinstance(p, Mapping) and p.get("external")
    ]
    result = Model(
        clusterclass, templates, missing, external, webhook_problems(clusterclass), render=render
    )
    result.notes += _static_notes(clusterclass, templates)
    return result


def _static_notes(
    clusterclass: Mapping[str, Any], templates: Sequence[tuple[Slot, Mapping[str, Any]]]
) -> list[str]:
    """Selectors of a kubeadm template kind that name another apiVersion than the template in
    the stream (CAPI compares apiVersion exactly: such a definition never applies), and
    kubeadm-list patches whose value is a variable (the model uses a stand-in)."""
    notes: list[str] = []
    versions = {(str(t.get("kind")), str(t.get("apiVersion"))) for _, t in templates}
    kinds = {kind for kind, _ in versions}
    for i, patch in enumerate((clusterclass.get("spec") or {}).get("patches") or []):
        if not isinstance(patch, Mapping):
            continue
        for j, definition in enumerate(patch.get("definitions") or []):
            if not isinstance(definition, Mapping):
                continue
            selector = definition.get("selector") or {}
            kind, api_version = str(selector.get("kind")), str(selector.get("apiVersion"))
            where = f"patch {patch.get('name', i)!r} definitions[{j}]"
            if kind in kinds and (kind, api_version) not in versions:
                theirs = sorted(v for k, v in versions if k == kind)
                notes.append(f"{where}: selects {kind} {api_version}, the stream has {theirs}")
            for op in definition.get("jsonPatches") or []:
                value_from = (op or {}).get("valueFrom") or {}
                if value_from.get("variable") and _touches_lists(
                    {"jsonPatches": [op]}, list_pointers(kind)
                ):
                    notes.append(
                        f"{where}: {op.get('op')} {op.get('path')} from variable "
                        f"{value_from['variable']!r}: the model uses a stand-in value"
                    )
    return notes


@dataclass
class ClassResult:
    """The checker over every outcome of one ClusterClass."""

    name: str
    templates: int = 0
    combinations: int = 0
    problems: list[str] = field(default_factory=list)
    not_modelled: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_clusterclass(
    clusterclass: Mapping[str, Any],
    objects: Sequence[Any],
    expect: Expectation,
    render: Callable[[str], str] | None = None,
    check: Callable[[Mapping[str, Any]], list[str]] | None = None,
) -> ClassResult:
    """Apply the patches in every combination and check each resulting template (and with
    ``check``, its KubeadmConfigSpec once more). Problems name the template and the
    patches that were on."""
    the_model = model(clusterclass, objects, render)
    name = str((clusterclass.get("metadata") or {}).get("name"))
    result = ClassResult(name, templates=len(the_model.templates))
    result.problems += [f"webhook: {p}" for p in the_model.webhook]
    result.not_modelled += [f"{s.label}: not in the stream" for s in the_model.missing]
    result.not_modelled += [f"external patch {n!r}" for n in the_model.external]
    seen: set[str] = set()
    for outcome in the_model.outcomes():
        result.combinations += 1
        on = ", ".join(outcome.enabled) or "none"
        if outcome.not_modelled is not None:
            message = f"{outcome.slot.label}: {outcome.not_modelled}"
            if message not in seen:
                seen.add(message)
                result.not_modelled.append(message)
            continue
        problems = list(outcome.errors)
        if outcome.template is not None:
            spec = kubeadm_spec(outcome.template)
            if spec is None:
                problems.append("the KubeadmConfigSpec is not a mapping")
            else:
                problems += check_template(spec, system_of(spec), expect)
                if check is not None:
                    problems += check(spec)
        for problem in problems:
            message = f"{outcome.slot.label} [on: {on}]: {problem}"
            result.problems.append(message)
    result.notes = list(dict.fromkeys(the_model.notes))
    return result
