"""Discover Cluster API clusters in the stream and tell which cluster an object serves.

A ``cluster.x-k8s.io`` Cluster gives its pod and service CIDRs, its service
domain, its control-plane endpoint (or that of its infrastructure cluster, when
that object is in the stream too) and, through its infrastructure kind, a cloud
preset. A kubeadm object belongs to the clusters that

1. its ``cluster.x-k8s.io/cluster-name`` label names, else
2. reference it: a Cluster's ``controlPlaneRef``, a MachineDeployment's,
   MachinePool's or Machine's bootstrap ``configRef``, or a ClusterClass (through every
   Cluster whose topology uses that class), else
3. share its namespace, when there is exactly one Cluster there (for an
   object without a namespace: when the stream holds exactly one Cluster).

API versions v1beta1 and v1beta2 differ in where references live; both are
read. Everything here is pure data in, data out.

The values a Cluster gives end up in the nodes' drop-ins and commands, inside
user data that cloud-init renders as a Jinja template: a value that is not a
CIDR, an IP address or a host name (as NO_PROXY entries are parsed) is an
error that names the document it came from. A value that is still a template
variable (``${POD_CIDR}``, as in clusterctl templates) is left out, and the
report says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from proxy_postrender import TYPE_CHECKING, dialects
from proxy_postrender.patterns import compiled

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import DocumentContext, InputError, UsageError
from proxy_postrender.noproxy import presets, syntax
from proxy_postrender.noproxy import services as service_rules
from proxy_postrender.noproxy.bootstraps import Bootstraps
from proxy_postrender.noproxy.clusterindex import CAPI_GROUP as CAPI_GROUP
from proxy_postrender.noproxy.clusterindex import CLUSTER_NAME_LABEL as CLUSTER_NAME_LABEL
from proxy_postrender.noproxy.clusterindex import ClassRef as ClassRef
from proxy_postrender.noproxy.clusterindex import ClusterIndex as ClusterIndex
from proxy_postrender.noproxy.clusterindex import Key, RefKey
from proxy_postrender.noproxy.clusterindex import is_capi as _is_capi
from proxy_postrender.noproxy.clusterindex import label_of as _label
from proxy_postrender.noproxy.clusterindex import meta_of as _meta
from proxy_postrender.noproxy.clusterindex import named_cluster as _cluster_key
from proxy_postrender.noproxy.clusterindex import text_of as _text
from proxy_postrender.noproxy.scope import ClusterNetwork
from proxy_postrender.objects import HELM4_FILENAME, LIST_KINDS, api_group, dig, walk_objects
from proxy_postrender.structs import FrozenStruct, Struct, field, replace
from proxy_postrender.yamltext.read import MAX_PARSED_BYTES, load_documents

if TYPE_CHECKING:
    from proxy_postrender.yamltext.stream import Segment

# kubeadm's service subnet when a Cluster names none (clusterNetwork.services unset)
KUBEADM_SERVICE_CIDR = "10.96.0.0/12"
# kinds the discovery reads (besides the infrastructure clusters a Cluster names)
# the bootstrap template kinds a ClusterClass names, of every dialect row (kept in the
# index: the class's own patch selects those of the stream)
TEMPLATE_KINDS: frozenset[str] = dialects.TEMPLATE_KINDS
DISCOVERY_KINDS: frozenset[str] = (
    frozenset({"Cluster", "MachineDeployment", "MachinePool", "Machine", "ClusterClass"})
    | TEMPLATE_KINDS
)

# a clusterctl/envsubst variable not yet expanded: ${NAME}, ${NAME:=default}, $NAME
_VARIABLE = compiled(r"\$\{?[A-Za-z_]")
_WANTED = {
    ("cidr", "ip"): "a CIDR or an IP address",
    ("domain", "ip"): "a host name or an IP address",
    ("domain",): "a domain name",
    ("suffix",): "a domain suffix",
}
_HOST = ("domain", "ip")
_CIDRS = ("cidr", "ip")
_ENDPOINT = "spec.controlPlaneEndpoint.host"

Contexts = Callable[[Mapping[str, "Any"]], DocumentContext | None]


def _strings(value: Any, where: str) -> list[tuple[str, str]]:
    """The non-empty strings of a list, each with where it is (``where[i]``)."""
    if not isinstance(value, list):
        return []
    return [(f"{where}[{i}]", v) for i, v in enumerate(value) if isinstance(v, str) and v]


def _ref(value: Any, namespace: str) -> RefKey | None:
    """A reference's (kind, namespace, name): v1beta1 ObjectReference or v1beta2 templateRef."""
    kind, name = _text(dig(value, "kind")), _text(dig(value, "name"))
    if not kind or not name:
        return None
    return kind, _text(dig(value, "namespace")) or namespace, name


class _Values(Struct):
    """Reads the network values of one object: checked, normalised, variables noted."""

    label: str  # e.g. "Cluster ns/name", for the report
    context: DocumentContext | None
    left_out: list[str] = field(default_factory=list)  # "FIELD ('${VAR}')", for the report

    def entry(self, value: str, kinds: tuple[str, ...], where: str) -> str | None:
        """The normalised entry; None for a template variable; InputError for anything else
        that is not one of ``kinds`` (it would land in the node bootstrap)."""
        if _VARIABLE.search(value):
            self.left_out.append(f"{self.label} {where} ({_shown(value)})")
            return None
        try:
            entry = syntax.parse_entry(value)
        except syntax.WholeRangeError as exc:
            raise InputError(
                f"{where}: {_shown(value)}: {syntax.whole_range(exc.version)}, and it would "
                "go into the NO_PROXY of the nodes' bootstrap; to turn the proxy off for every "
                "host, write '*' in the profile's spec.noProxy",
                self.context,
            ) from None
        except syntax.NoProxyEntryError:
            entry = None
        if entry is None or entry.kind not in kinds or entry.port is not None:
            raise InputError(
                f"{where}: {_shown(value)} is not {_WANTED[kinds]}, and it would go into the "
                "NO_PROXY of the nodes' bootstrap (a ${VAR} still to be expanded is left out "
                "instead)",
                self.context,
            )
        return entry.text

    def entries(self, value: Any, kinds: tuple[str, ...], where: str) -> tuple[str, ...]:
        found = (self.entry(v, kinds, at) for at, v in _strings(value, where))
        return tuple(e for e in found if e is not None)

    def one(self, value: Any, kinds: tuple[str, ...], where: str) -> str | None:
        text = _text(value)
        return None if text is None else self.entry(text, kinds, where)


def _shown(value: str) -> str:
    """A value for a one-line message: repr (control characters escaped), shortened."""
    return repr(value if len(value) <= 80 else value[:77] + "...")


class _Cluster(Struct):
    key: Key
    obj: Mapping[str, Any]
    infra: RefKey | None
    control_plane: RefKey | None
    klass: Key | None


def _cluster_refs(obj: Mapping[str, Any], namespace: str) -> tuple[RefKey | None, RefKey | None]:
    spec = dig(obj, "spec")
    return _ref(dig(spec, "infrastructureRef"), namespace), _ref(
        dig(spec, "controlPlaneRef"), namespace
    )


def _class_key(obj: Mapping[str, Any], namespace: str) -> Key | None:
    topology = dig(obj, "spec", "topology")
    name = _text(dig(topology, "class")) or _text(dig(topology, "classRef", "name"))
    if name is None:
        return None
    other = _text(dig(topology, "classNamespace")) or _text(dig(topology, "classRef", "namespace"))
    return (other or namespace, name)


def _class_refs(obj: Mapping[str, Any], namespace: str) -> tuple[list[RefKey], str | None]:
    """The templates a ClusterClass names, and its infrastructure kind."""
    spec = dig(obj, "spec")
    refs: list[RefKey] = []

    def add(value: Any) -> None:
        for key in ("ref", "templateRef"):
            ref = _ref(dig(value, key), namespace)
            if ref:
                refs.append(ref)

    add(dig(spec, "controlPlane"))
    workers = dig(spec, "workers")
    for group in ("machineDeployments", "machinePools"):
        items = dig(workers, group)
        for item in items if isinstance(items, list) else []:
            add(dig(item, "template", "bootstrap"))  # v1beta1
            add(dig(item, "bootstrap"))  # v1beta2
    infra = dig(spec, "infrastructure")
    infra_kind = _text(dig(infra, "ref", "kind")) or _text(dig(infra, "templateRef", "kind"))
    return refs, infra_kind


def _no_context(obj: Mapping[str, Any]) -> DocumentContext | None:
    return None


def discover(
    objects: Iterable[Mapping[str, Any]],
    context_of: Contexts = _no_context,
    namespace: str | None = None,
) -> ClusterIndex:
    """Index the Cluster API objects of a stream (objects of any kind may be passed);
    ``context_of`` names an object's document in errors; ``namespace`` is that of the
    objects without one (--namespace)."""
    default = namespace or ""
    found: dict[Key, _Cluster] = {}
    others: dict[RefKey, list[Mapping[str, Any]]] = {}
    machine_sets: list[tuple[Key, RefKey, str]] = []
    classes: dict[Key, tuple[list[RefKey], str | None]] = {}
    named_by_class: dict[RefKey, ClassRef] = {}
    class_objects: dict[Key, Mapping[str, Any]] = {}
    templates: dict[RefKey, Mapping[str, Any]] = {}
    bootstraps = Bootstraps(default)
    for obj in objects:
        bootstraps.observe(obj, context_of(obj))
        namespace, name, _ = _meta(obj, default)
        kind = str(obj.get("kind") or "")
        if _is_capi(obj, "Cluster"):
            _check_once(found, (namespace, name), obj, context_of)
            infra, control_plane = _cluster_refs(obj, namespace)
            found[(namespace, name)] = _Cluster(
                (namespace, name), obj, infra, control_plane, _class_key(obj, namespace)
            )
        elif _is_capi(obj, "MachineDeployment") or _is_capi(obj, "MachinePool"):
            owner = _text(dig(obj, "spec", "clusterName"))
            ref = _ref(dig(obj, "spec", "template", "spec", "bootstrap", "configRef"), namespace)
            if owner and ref:
                machine_sets.append(((namespace, owner), ref, _label(kind, (namespace, name))))
        elif _is_capi(obj, "Machine"):  # a Machine of its own (k0smotron's samples have them)
            owner = _text(dig(obj, "spec", "clusterName"))
            ref = _ref(dig(obj, "spec", "bootstrap", "configRef"), namespace)
            if owner and ref:
                machine_sets.append(((namespace, owner), ref, _label(kind, (namespace, name))))
        elif _is_capi(obj, "ClusterClass"):
            classes[(namespace, name)] = _class_refs(obj, namespace)
            class_objects[(namespace, name)] = obj
            named = ClassRef(_label("ClusterClass", (namespace, name)), context_of(obj))
            for ref in classes[(namespace, name)][0]:
                named_by_class.setdefault(ref, named)
        else:
            if kind in TEMPLATE_KINDS:
                templates.setdefault((kind, namespace, name), obj)
            others.setdefault((kind, namespace, name), []).append(obj)
    index = ClusterIndex(
        named_by_class=named_by_class,
        namespace=default,
        class_objects=class_objects,
        templates=templates,
        bootstraps=bootstraps,
    )

    def refer(ref: RefKey, cluster: Key, by: str) -> None:
        index.referenced_by.setdefault(ref, {})[cluster] = by

    for cluster in found.values():
        klass = cluster.klass
        if klass is not None and klass not in classes and ("", klass[1]) in classes:
            cluster.klass = ("", klass[1])  # a ClusterClass written without a namespace
        infra_kind = cluster.infra[0] if cluster.infra else None
        if infra_kind is None and cluster.klass in classes:
            infra_kind = classes[cluster.klass][1]
        index.clusters[cluster.key] = _network(cluster, others, infra_kind, context_of)
        by = _label("Cluster", cluster.key)
        if cluster.control_plane:
            refer(cluster.control_plane, cluster.key, by)
        if cluster.klass is not None:
            index.class_users.setdefault(cluster.klass, set()).add(cluster.key)
            index.cluster_classes[cluster.key] = cluster.klass
            for ref in classes.get(cluster.klass, ([], None))[0]:
                refer(ref, cluster.key, f"ClusterClass {cluster.klass[1]} of {by}")
    for (owner_namespace, owner), ref, by in machine_sets:
        # a MachineDeployment without a namespace serves the Cluster of its clusterName
        refer(ref, _cluster_key(index.clusters, owner_namespace, owner), by)
    return index


def _check_once(
    found: Mapping[Key, _Cluster], key: Key, obj: Mapping[str, Any], context_of: Contexts
) -> None:
    """InputError when a Cluster of this namespace and name is already in the stream: the
    second would replace the first when applied, and the nodes of one would get the other's
    networks (the last one won, silently, before)."""
    first = found.get(key)
    if first is None:
        return
    where = context_of(first.obj)
    first_at = f"document {where.index}, line {where.line}" if where else "earlier"
    raise InputError(
        f"{_label('Cluster', key)} is in the stream twice (the first is {first_at}): one "
        "would replace the other when applied, and whose networks its nodes get is not "
        "known; rename or remove one",
        context_of(obj),
    )


def _referenced(
    cluster: _Cluster, others: Mapping[RefKey, list[Mapping[str, Any]]]
) -> Mapping[str, Any] | None:
    """The infrastructure object a Cluster's ``infrastructureRef`` names: of the group the
    reference names (``apiVersion``, or v1beta2's ``apiGroup``), else of the
    infrastructure group; an object of another group with that kind and name is not it."""
    if cluster.infra is None:
        return None
    from proxy_postrender.noproxy import infrastructure  # lazy: start-up

    ref = dig(cluster.obj, "spec", "infrastructureRef")
    group = _text(dig(ref, "apiGroup")) or api_group(dig(ref, "apiVersion"))
    wanted = group or infrastructure.INFRASTRUCTURE_GROUP
    found = [o for o in others.get(cluster.infra, []) if api_group(o.get("apiVersion")) == wanted]
    return found[-1] if found else None


def _network(
    cluster: _Cluster,
    others: Mapping[RefKey, list[Mapping[str, Any]]],
    infra_kind: str | None,
    context_of: Contexts,
) -> ClusterNetwork:
    label = _label("Cluster", cluster.key)
    values = _Values(label, context_of(cluster.obj))
    spec = dig(cluster.obj, "spec")
    network = dig(spec, "clusterNetwork")
    where = "spec.clusterNetwork"
    endpoint = values.one(dig(spec, "controlPlaneEndpoint", "host"), _HOST, _ENDPOINT)
    endpoint_source = label
    infra = _referenced(cluster, others)
    infra_values = None
    if cluster.infra is not None and infra is not None:
        kind, namespace, name = cluster.infra
        infra_values = _Values(_label(kind, (namespace, name)), context_of(infra))
    if endpoint is None and infra is not None and infra_values is not None:
        endpoint_source = infra_values.label
        host = dig(infra, "spec", "controlPlaneEndpoint", "host")
        endpoint = infra_values.one(host, _HOST, _ENDPOINT)
    derived = Derived()
    if infra is not None and infra_values is not None:
        derived = _derive(infra, infra_values, endpoint_known=endpoint is not None)
    services, pods = (
        values.entries(dig(network, net, "cidrBlocks"), _CIDRS, f"{where}.{net}.cidrBlocks")
        for net in ("services", "pods")
    )
    domain = values.one(dig(network, "serviceDomain"), ("domain",), f"{where}.serviceDomain")
    if domain is not None:  # the cluster domain, as the profile's: without a final dot
        domain = domain.rstrip(".")
    preset = presets.infrastructure_preset(infra_kind)
    _, _, labels = _meta(cluster.obj)
    return ClusterNetwork(
        label=label,
        cluster=cluster.key,
        labels=tuple(sorted((str(k), str(v)) for k, v in labels.items() if isinstance(v, str))),
        pods=pods,
        services=services or (KUBEADM_SERVICE_CIDR,),
        services_default=not services,
        endpoint_source=endpoint_source if endpoint else None,
        domain=domain,
        endpoint=endpoint,
        nodes=derived.nodes,
        infrastructure=infra_values.label if infra_values else None,
        infrastructure_ref=_label(cluster.infra[0], cluster.infra[1:]) if cluster.infra else None,
        infrastructure_kind=cluster.infra[0] if cluster.infra else None,
        nodes_source=derived.source if derived.nodes else None,
        derived=derived.groups,
        endpoint_suffixes=derived.suffixes,
        presets=(preset,) if preset else (),
        preset_reason=f"{infra_kind} of {label}" if preset else None,
        left_out=(*values.left_out, *(infra_values.left_out if infra_values else ())),
    )


class Derived(FrozenStruct):
    """What an infrastructure cluster object gives (:mod:`.infrastructure`)."""

    source: str = ""  # e.g. "AWSCluster ns/name node networks (spec.network.vpc.cidrBlock)"
    nodes: tuple[str, ...] = ()  # the node networks
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (source, entries), the others
    suffixes: str | None = None  # where the load-balancer suffixes came from


def _derive(obj: Mapping[str, Any], values: _Values, *, endpoint_known: bool) -> Derived:
    """The node networks and the other entries of an infrastructure cluster object, each
    value checked as the Cluster's are (a variable still to expand is left out)."""
    from proxy_postrender.noproxy import infrastructure  # lazy: start-up

    fields = infrastructure.FIELDS.get(str(obj.get("kind") or ""))
    if fields is None or api_group(obj.get("apiVersion")) != infrastructure.INFRASTRUCTURE_GROUP:
        return Derived()
    nodes: dict[str, str] = {}  # entry -> the field it came from
    groups: list[tuple[str, tuple[str, ...]]] = []
    suffixes = None
    for item in fields:
        for where, raw in infrastructure.values(obj, item.path):
            if not isinstance(raw, str) or not raw:
                continue
            if item.holds == infrastructure.NODES:
                entry = values.entry(raw, _CIDRS, where)
                if entry is not None and "%" in entry:  # a zone: a link, not a network
                    raise InputError(
                        f"{where}: {_shown(raw)} is not a network the nodes' addresses are "
                        "in (an IPv6 zone ID names one link of one host)",
                        values.context,
                    )
                if entry is not None:
                    nodes.setdefault(entry, item.path)
                continue
            found: tuple[str, ...] = ()
            if item.holds == infrastructure.ENDPOINT:
                entry = values.entry(infrastructure.endpoint_host(raw), _HOST, where)
                found = (entry,) if entry is not None else ()
            elif not endpoint_known:
                found = _elb(raw, values, where)
                suffixes = f"{values.label} {where} {raw}" if found else None
            if found:
                groups.append((f"{values.label} {where} ({item.about})", found))
    for default in infrastructure.defaults(str(obj.get("kind")), obj):
        nodes.setdefault(default.value, f"{default.path}: {default.about}")
    kept = infrastructure.outermost(nodes)
    paths = ", ".join(dict.fromkeys(nodes[cidr] for cidr in kept))
    source = f"{values.label} node networks ({paths})" if kept else values.label
    return Derived(source, kept, tuple(groups), suffixes)


def _elb(region: str, values: _Values, where: str) -> tuple[str, ...]:
    """The load-balancer suffixes of an AWS region (the control-plane endpoint is not in
    the stream); a region that is no AWS region's name is an error naming the document."""
    if _VARIABLE.search(region):
        values.left_out.append(f"{values.label} {where} ({_shown(region)})")
        return ()
    from proxy_postrender.noproxy import infrastructure  # lazy: start-up

    if not infrastructure.is_region(region):
        raise InputError(
            f"{where}: {_shown(region)} is not an AWS region, and the load-balancer names "
            "of that region would go into the NO_PROXY of the nodes' bootstrap",
            values.context,
        )
    suffixes = infrastructure.elb_suffixes(region)
    return tuple(e for e in (values.entry(s, ("suffix",), where) for s in suffixes) if e)


def _context(segment: Segment, index: int, obj: Mapping[str, Any]) -> DocumentContext:
    """Where ``obj`` is in the stream, as the engine names documents in its errors."""
    namespace, name, _ = _meta(obj)
    annotations = dig(obj, "metadata", "annotations")
    source = segment.helm_source() or _text(dig(annotations, HELM4_FILENAME))
    kind = _text(obj.get("kind"))
    return DocumentContext(index, segment.line, kind, name or None, namespace or None, source)


def discover_stream(
    segments: Iterable[Segment],
    namespace: str | None = None,
    read: list[Mapping[str, Any]] | None = None,
) -> ClusterIndex:
    """Index the Cluster API objects of a stream; unparsable documents are left out.
    Documents are counted as the engine counts them, so errors name the same one.
    ``namespace`` is that of the documents without one (--namespace); ``read`` gets every
    object read (the rollout pass takes the references from them)."""
    objects: list[Mapping[str, Any]] = []
    contexts: dict[int, DocumentContext] = {}
    # the kubeadm templates: read only when a ClusterClass is in the stream (they matter
    # to its own patch only, and most streams have none)
    templates: list[tuple[Segment, int]] = []
    classes = False
    index = 0
    for segment in segments:
        content = segment.has_content()
        index += int(content or segment.text.startswith("---"))
        if CAPI_GROUP not in segment.text or not content:
            continue
        if len(segment.text) > MAX_PARSED_BYTES:
            continue  # no Cluster is that large; a target of that size is refused later
        kind = segment.sniff_kind()
        if (
            kind is not None
            and kind not in LIST_KINDS
            and kind not in DISCOVERY_KINDS
            and not kind.endswith("Cluster")
        ):
            continue
        if kind in TEMPLATE_KINDS:
            templates.append((segment, index))
            continue
        classes |= _read_into(segment, index, objects, contexts)
    if classes:
        for segment, at in templates:
            _read_into(segment, at, objects, contexts)
    if read is not None:
        read += objects
    return discover(objects, lambda obj: contexts.get(id(obj)), namespace)


def _read_into(
    segment: Segment,
    index: int,
    objects: list[Mapping[str, Any]],
    contexts: dict[int, DocumentContext],
) -> bool:
    """Add the objects of a segment (none when it does not parse: the main pass reports
    it when it is a target); whether one of them is a ClusterClass."""
    docs = load_documents(segment.text)
    found = False
    for doc in docs or []:
        for _, obj in walk_objects(doc):
            objects.append(obj)
            contexts[id(obj)] = _context(segment, index, obj)
            found |= _is_capi(obj, "ClusterClass")
    return found


class ServiceRef(FrozenStruct):
    """A Service of the stream: where clients reach it by its short names."""

    namespace: str  # "" when the document names none and no --namespace is given
    name: str
    port: int | None = None  # its first port, when it names one
    context: DocumentContext | None = None  # its document, for an error about it


def _service(obj: Mapping[str, Any], namespace: str, context: DocumentContext) -> ServiceRef | None:
    """The Service ``obj`` is (None: it is not a core Service, or it is nameless or named
    by a template variable still to be expanded); a name or namespace that no Service can
    have is an InputError naming the document: names become NO_PROXY entries."""
    if obj.get("kind") != "Service" or obj.get("apiVersion") != "v1":
        return None
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name = metadata.get("name")
    own = metadata.get("namespace")
    if name is None or name == "":
        return None
    if any(isinstance(v, str) and _VARIABLE.search(v) for v in (name, own)):
        return None
    problem = service_rules.name_problem(name)
    if problem is None and own is not None and own != "":
        problem = service_rules.namespace_problem(own)
    if problem is not None:
        # the error names the document on one line: its name and namespace escaped
        shown = replace(context, name=_escaped(context.name), namespace=_escaped(context.namespace))
        raise InputError(problem, shown)
    ports = dig(obj, "spec", "ports")
    first = dig(ports[0], "port") if isinstance(ports, list) and ports else None
    port = first if isinstance(first, int) and not isinstance(first, bool) else None
    return ServiceRef(str(own or namespace), str(name), port, context)


def _escaped(text: str | None) -> str | None:
    """``text`` with what a terminal would act on (control characters) escaped."""
    if text is None or text.isprintable():
        return text
    return text.encode("unicode_escape").decode("ascii")


def discover_services(
    segments: Iterable[Segment], namespace: str | None = None
) -> tuple[ServiceRef, ...]:
    """The core Services of a stream, in stream order, each once (for the ``services``
    preset and ``noproxy check``); only documents whose kind may be a Service are parsed.
    ``namespace`` is that of the documents without one (--namespace). A name or a
    namespace no Service can have is an InputError naming its document."""
    default = namespace or ""
    if default and service_rules.namespace_problem(default) is not None:
        raise UsageError(f"--namespace: {service_rules.namespace_problem(default)}")
    found: dict[tuple[str, str], ServiceRef] = {}
    index = 0
    for segment in segments:
        content = segment.has_content()
        # documents as the engine counts them, so errors name the same one
        index += int(content or segment.text.startswith("---"))
        if "Service" not in segment.text or not content:
            continue
        if len(segment.text) > MAX_PARSED_BYTES:
            continue
        kind = segment.sniff_kind()
        if kind is not None and kind != "Service" and kind not in LIST_KINDS:
            continue
        for doc in load_documents(segment.text) or []:
            for _, obj in walk_objects(doc):
                service = _service(obj, default, _context(segment, index, obj))
                if service is not None:
                    found.setdefault((service.namespace, service.name), service)
    return tuple(found.values())
