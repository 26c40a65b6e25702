"""Per-cluster values for the nodes of a ClusterClass: its variable and its own patch.

A ClusterClass and the templates it names are shared by every cluster of the class, so
they carry no cluster's values (SPEC invariant 11). The templates get only the
``envfile`` layout's value-free drop-ins and commands (nodes/kubeadm.py, ``shared``);
the env file itself is written, when the topology reconciles, by the class's own patch:

- a variable ``proxyPostrender`` (``VARIABLE``): ``{httpProxy, httpsProxy, noProxy}``,
  whose schema admits only what the tool writes safely (``SAFE``: no quote, backslash,
  backtick, whitespace, brace or control character), defaulting to the profile's values
  without any cluster's networks (what a cluster not in the stream gets);
- a last patch ``proxy-postrender`` (``PATCH``): per bootstrap template of the stream
  that the class names (a template kind of a dialect row, proxy_postrender/dialects.py;
  Linux ones: a Windows template gets no env file), ``add`` to its file list of the
  env file, rendered by ``valueFrom.template`` from the variable and the
  builtin variables (the cluster's pod and service CIDRs, its service domain). The
  template uses Go's text/template built-ins only (Cluster API adds sprig's, which are
  not needed), guards every map it reads with ``with`` (a missing key of a missing map
  is an error), and checks the service domain with ``urlquery`` (Cluster API does not
  validate it; the CIDRs its webhook parses).

Each topology Cluster of the stream whose class gets the variable gets its own value in
``spec.topology.variables`` (nodes/topology.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING, dialects

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.noproxy.clusterindex import ClusterIndex

from proxy_postrender.errors import InputError
from proxy_postrender.nodes import kubeadm
from proxy_postrender.objects import Path, dig
from proxy_postrender.yamltext.ops import Op, update_list

VARIABLE = "proxyPostrender"
PATCH = "proxy-postrender"
# kubeadm's service subnet when a Cluster names none (noproxy/discovery.py has the same)
_KUBEADM_SERVICES = "10.96.0.0/12"
# what a value may hold: no quote, backslash, backtick, whitespace, brace or control
# character (Go's RE2 and ECMA-262 read this alike); the env file single-quotes values
SAFE = "^[^\\x00-\\x20\\x7f'\"\\\\`{}]*$"
_URL_MAX = 2048
_ENTRY_MAX = 512
_ENTRIES_MAX = 4096
_URL_FIELDS = (("httpProxy", "HTTP_PROXY"), ("httpsProxy", "HTTPS_PROXY"))
# the template kinds of the dialect rows: (the row, its dialect), and where the patch
# appends the env file (the end of the kind's file list)
_TEMPLATES: dict[str, tuple[dialects.BootstrapKind, dialects.Dialect]] = {
    row.kind: (row, dialect)
    for dialect in dialects.DIALECTS
    for row in dialect.kinds
    if row.kind in dialects.TEMPLATE_KINDS
}
_PATHS: dict[str, str] = {
    kind: "".join(f"/{step}" for step in (*row.spec_path, dialect.files_key, "-"))
    for kind, (row, dialect) in _TEMPLATES.items()
}


def _level(kind: str) -> str | None:
    found = _TEMPLATES.get(kind)
    return found[0].level if found else None


def value_of(env: Sequence[tuple[str, str]], what: str) -> dict[str, Any]:
    """The variable's value for ``env`` (a cluster's nodes' variables, or the defaults),
    refused when its schema would refuse it (``what``: whose value, for the message)."""
    values = dict(env)
    value: dict[str, Any] = {}
    for key, name in _URL_FIELDS:
        if values.get(name):
            value[key] = _checked(values[name], f"{what}: {name}", _URL_MAX)
    no_proxy = values.get("NO_PROXY", values.get("no_proxy", ""))
    entries = [_checked(e, f"{what}: the NO_PROXY entry", _ENTRY_MAX) for e in no_proxy.split(",")]
    value["noProxy"] = [e for e in entries if e]
    if len(value["noProxy"]) > _ENTRIES_MAX:
        raise InputError(f"{what}: NO_PROXY holds more than {_ENTRIES_MAX} entries")
    return value


def _checked(text: str, what: str, limit: int) -> str:
    if not re.fullmatch(SAFE, text) or len(text) > limit:
        raise InputError(
            f"{what} {text[:80]!r} cannot go into the ClusterClass variable {VARIABLE}: its "
            f"schema admits at most {limit} characters and no quote, backslash, backtick, "
            "whitespace, '{', '}' or control character"
        )
    return text


def definition(default: Mapping[str, Any]) -> dict[str, Any]:
    """The entry of ``spec.variables`` (v1beta1 and v1beta2 alike)."""
    string = {"type": "string", "maxLength": _URL_MAX, "pattern": SAFE}
    # no additionalProperties: Cluster API's JSONSchemaProps takes a schema there, never a
    # boolean, and refuses it beside properties; it refuses unknown fields of a value itself
    # (cluster_variable_validation.go, validateUnknownFields)
    schema = {
        "type": "object",
        "properties": {
            "httpProxy": string,
            "httpsProxy": dict(string),
            "noProxy": {
                "type": "array",
                "maxItems": _ENTRIES_MAX,
                "items": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": _ENTRY_MAX,
                    "pattern": SAFE,
                },
            },
        },
        "default": dict(default),
    }
    return {"name": VARIABLE, "required": False, "schema": {"openAPIV3Schema": schema}}


# --- the template -----------------------------------------------------------------------


def _with_chain(keys: Sequence[str], body: str) -> str:
    """``body`` inside one ``with`` per key, from the root: each level may be missing."""
    opened = "".join(f"{{{{ with .{key} }}}}" for key in keys)
    return opened + body + "{{ end }}" * len(keys)


def _add(value: str, against: Sequence[str]) -> str:
    """Print ``value`` (a pipeline) after a comma unless a list in ``against`` (variables
    holding a list or "") has it already."""
    checks = "".join(
        f"{{{{ with {lst} }}}}{{{{ range . }}}}{{{{ if eq . {value} }}}}"
        "{{ $found = true }}{{ end }}{{ end }}{{ end }}"
        for lst in against
    )
    return (
        f"{{{{ $found := false }}}}{checks}{{{{ if not $found }}}}"
        f'{{{{ $sep }}}}{{{{ print {value} }}}}{{{{ $sep = "," }}}}{{{{ end }}}}'
    )


def _no_proxy_template() -> str:
    """The body of ``define "noProxy"``: the variable's entries, then the cluster's pod
    CIDRs, service CIDRs (kubeadm's default without any) and service domain (``D`` and
    ``.D``, as the kubernetes preset writes a domain) not listed already."""
    grab = '{{ $given := "" }}{{ $pods := "" }}{{ $services := "" }}{{ $domain := "" }}'
    grab += '{{ $sep := "" }}'
    grab += _with_chain([VARIABLE, "noProxy"], "{{ $given = . }}")
    network = ["builtin", "cluster", "network"]
    grab += _with_chain([*network, "pods"], "{{ $pods = . }}")
    grab += _with_chain([*network, "services"], "{{ $services = . }}")
    grab += _with_chain([*network, "serviceDomain"], "{{ $domain = . }}")
    given = '{{ with $given }}{{ range . }}{{ $sep }}{{ . }}{{ $sep = "," }}{{ end }}{{ end }}'
    pods = "{{ with $pods }}{{ range $p := . }}" + _add("$p", ["$given"]) + "{{ end }}{{ end }}"
    services = (
        "{{ if $services }}{{ range $s := $services }}"
        + _add("$s", ["$given", "$pods"])
        + "{{ end }}{{ else }}"
        + _add(f'"{_KUBEADM_SERVICES}"', ["$given", "$pods"])
        + "{{ end }}"
    )
    # a service domain Cluster API does not check: only [A-Za-z0-9._~-] goes in
    domain = (
        "{{ with $domain }}{{ if eq (urlquery .) . }}"
        + _add("$domain", ["$given"])
        + _add('(print "." $domain)', ["$given"])
        + "{{ end }}{{ end }}"
    )
    pieces = (grab, given, pods, services, domain)
    # only whitespace between the actions: each trims it, so that lines may break
    return "\n  ".join(pieces).replace("{{ ", "{{- ").replace(" }}", " -}}")


def template(env: Sequence[tuple[str, str]], env_file: str) -> str:
    """The ``valueFrom.template`` of the env file entry: the lines ``quoting.env_file``
    writes (the names of ``env``, in its order), each value single-quoted; a value the
    variable does not hold leaves its line out, NO_PROXY is always written."""
    lines = []
    for name, _ in env:
        upper = name.upper()
        if upper == "NO_PROXY":
            lines.append(f"{name}='{{{{ template \"noProxy\" . }}}}'\\n")
            continue
        key = {"HTTP_PROXY": "httpProxy", "HTTPS_PROXY": "httpsProxy"}.get(upper)
        if key is not None:
            lines.append(_with_chain([VARIABLE, key], f"{name}='{{{{ . }}}}'\\n"))
    content = "".join(lines)
    return (
        f'{{{{- define "noProxy" -}}}}\n  {_no_proxy_template()}\n{{{{- end -}}}}\n'
        f"path: {env_file}\n"
        "owner: root:root\n"
        'permissions: "0600"\n'
        f'content: "{content}"\n'
    )


# --- which templates the patch selects ----------------------------------------------------


class Slots:
    """The kubeadm templates of the stream a ClusterClass names and the patch selects:
    per template (apiVersion, kind, name), the machine deployment and pool classes that
    use it, or that the control plane does."""

    def __init__(self) -> None:
        self.control_plane: list[tuple[str, str]] = []  # (apiVersion, kind)
        self.workers: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        self.left_out: list[str] = []  # templates not selected, and why

    def __bool__(self) -> bool:
        return bool(self.control_plane or self.workers)


def _ref(holder: Any) -> tuple[str, str, str, str] | None:
    """(apiVersion, kind, namespace, name) of a v1beta1 ``ref`` or v1beta2 ``templateRef``."""
    for key in ("ref", "templateRef"):
        ref = dig(holder, key)
        kind, name = dig(ref, "kind"), dig(ref, "name")
        if isinstance(kind, str) and isinstance(name, str) and kind in _PATHS:
            namespace = dig(ref, "namespace")
            return str(dig(ref, "apiVersion") or ""), kind, str(namespace or ""), name
    return None


def slots(klass: Mapping[str, Any], index: ClusterIndex) -> Slots:
    """The templates the class's patch selects: those it names that are in the stream
    (the tool wrote their value-free drop-ins, so ``files`` is there) and not Windows."""
    found = Slots()
    own = str(dig(klass, "metadata", "namespace") or index.namespace)
    spec = dig(klass, "spec")

    def usable(ref: tuple[str, str, str, str]) -> str | None:
        """The template's apiVersion when the patch may select it, else None (noted)."""
        api_version, kind, namespace, name = ref
        template = index.template((kind, namespace or own, name))
        if template is None:
            found.left_out.append(f"{kind} {name} is not in the stream")
            return None
        row, dialect = _TEMPLATES[kind]
        node = dig(template, *row.spec_path)
        if (
            isinstance(node, Mapping)
            and dialect.os_rule == dialects.OS_NODEOS
            and kubeadm.is_windows(node, ".".join(row.spec_path))
        ):
            found.left_out.append(f"{kind} {name} configures Windows nodes")
            return None
        return api_version or str(template.get("apiVersion") or "")

    ref = _ref(dig(spec, "controlPlane"))
    if ref is not None and _level(ref[1]) == dialects.CONTROL_PLANE_TEMPLATE:
        api_version = usable(ref)
        if api_version:
            found.control_plane.append((api_version, ref[1]))
    for group, slot in (("machineDeployments", 0), ("machinePools", 1)):
        items = dig(spec, "workers", group)
        for item in items if isinstance(items, list) else []:
            bootstrap = dig(item, "bootstrap")
            ref = _ref(dig(item, "template", "bootstrap")) or _ref(bootstrap)
            name = dig(item, "class")
            if ref is None or _level(ref[1]) != dialects.TEMPLATE or not isinstance(name, str):
                continue
            api_version = usable(ref)
            if api_version:
                users = found.workers.setdefault((api_version, ref[1]), ([], []))
                users[slot].append(name)
    return found


def env_file_of(kind: str, default: str) -> str:
    """Where the class's patch writes the env file into a template of ``kind``: its row's
    unit env file (RKE2, K3s: the file the distribution's service reads, which the
    template's commands source), else ``default`` (``nodes.envFile``).

    >>> env_file_of("RKE2ConfigTemplate", "/etc/proxy-postrender/proxy.env")
    '/etc/default/rke2-agent'
    >>> env_file_of("KubeadmConfigTemplate", "/etc/proxy-postrender/proxy.env")
    '/etc/proxy-postrender/proxy.env'
    """
    row, dialect = _TEMPLATES[kind]
    return dialect.env_files.get(row.level, default)


def patch(slots_: Slots, env: Sequence[tuple[str, str]], env_file: str) -> dict[str, Any]:
    """The class's last patch: the env file (``template``) added to each selected
    template, at the path of its kind (``env_file_of``)."""
    definitions: list[dict[str, Any]] = []

    def add(api_version: str, kind: str, match: dict[str, Any]) -> None:
        selector = {"apiVersion": api_version, "kind": kind, "matchResources": match}
        text = template(env, env_file_of(kind, env_file))
        json_patch = {"op": "add", "path": _PATHS[kind], "valueFrom": {"template": text}}
        definitions.append({"selector": selector, "jsonPatches": [json_patch]})

    for api_version, kind in slots_.control_plane:
        add(api_version, kind, {"controlPlane": True})
    for (api_version, kind), (deployments, pools) in slots_.workers.items():
        match: dict[str, Any] = {}
        if deployments:
            match["machineDeploymentClass"] = {"names": sorted(set(deployments))}
        if pools:
            match["machinePoolClass"] = {"names": sorted(set(pools))}
        add(api_version, kind, match)
    return {"name": PATCH, "definitions": definitions}


def applies(settings: kubeadm.NodeSettings | None, env: Sequence[tuple[str, str]]) -> bool:
    """Whether a class gets the variable with these settings: inline values (secret mode
    writes no value into the class or its templates: the Secret holds them)."""
    return bool(settings and env and settings.credentials != "secret")


# --- the class's entries, planned ----------------------------------------------------------


def named(items: Sequence[Any], name: str) -> list[int]:
    """The indices of the entries of a list called ``name``."""
    return [
        i for i, item in enumerate(items) if isinstance(item, Mapping) and item.get("name") == name
    ]


def plan_entry(
    spec: Mapping[str, Any],
    spec_path: Path,
    key: str,
    name: str,
    recorded: str | None,
    wanted: Mapping[str, Any] | None,
    *,
    last: bool = False,
    where: str = "spec",
) -> tuple[list[Op], str | None]:
    """Operations that make the entry ``name`` of ``spec[key]`` the tool's ``wanted`` (None:
    none), at the end with ``last``, and the state to record (None: nothing of the tool's).
    An entry of that name the record does not give the tool is an error, and so is a
    recorded one that is not there (or not last, for ``last``)."""
    from proxy_postrender.nodes import ccowned, writers  # lazy: start-up

    where = f"{where}.{key}"
    items = writers.as_list(spec.get(key), where)
    found = named(items, name)
    if recorded is None and found:
        if wanted is None:
            return [], None  # not the tool's, and the tool writes none: left alone
        raise InputError(
            f"{where}[{found[0]}] is called {name!r}, which the tool writes, but "
            f"{kubeadm.ANNOTATION} does not record it as the tool's; rename it or remove it"
        )
    if recorded is not None and len(found) != 1:
        what = "is not there" if not found else "is there twice"
        raise InputError(
            f"the {where} entry {name!r}, recorded in {kubeadm.ANNOTATION} as the tool's, "
            f"{what} (was the list edited?); restore it or delete the annotation"
        )
    if recorded is not None and last and found[0] != len(items) - 1 and wanted is not None:
        raise InputError(
            f"the {where} entry {name!r}, recorded in {kubeadm.ANNOTATION} as the tool's, is "
            "no longer the last one (it must run after every other patch); move it back to "
            "the end or delete it and the annotation"
        )
    state = recorded if recorded is not None else ccowned.state_of(spec, key)
    if found and wanted is not None and items[found[0]] == wanted:
        return [], state
    ops = update_list(
        spec,
        spec_path,
        key,
        set(found),
        [] if wanted is None else [dict(wanted)],
        restore_empty=state == "empty",
        restore_null=state == "null",
    )
    return ops, state if wanted is not None else None
