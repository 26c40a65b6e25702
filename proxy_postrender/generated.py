"""The objects a run emits besides the stream: Secrets and ConfigMaps, in one place.

- node bootstrap in Secret mode reads its files from a Secret per cluster
  (``spec.nodes.credentials: secret``, ``createSecret``);
- workloads read the proxy URLs from a Secret in each namespace they run in
  (``spec.credentials.createSecret``);
- workloads mount the proxy CA from a ConfigMap in each such namespace
  (``spec.caBundle.workloads``): the CA followed by certifi's public roots
  (``spec.caBundle.mode: merged``, the default), or the CA alone (``replace``).

The merged bundle is made here, where the ConfigMap is written, so that
certifi is imported only by a run that writes one (``request.ca_public_roots``).
The bundle holds the CA's blocks, one comment line naming the root set, and
certifi's certificate blocks verbatim in certifi's order (its comments are left
out: a smaller ConfigMap); the ConfigMap's annotation ``proxy-postrender.io/
ca-roots`` records ``certifi-<version>``. The output is the same bytes on every
run with one certifi; a newer certifi rewrites the ConfigMap.

A workload that is a Helm hook (``helm.sh/hook``) runs before the release's
ordinary objects exist (``pre-install``, ``pre-upgrade``), so it reads its own
copies of the per-namespace objects, named ``<name>-hooks`` and emitted as
hooks of the phases of the hooks that read them, one weight below the lowest
of theirs, kept by ``before-hook-creation``. The rule looks at each workload
alone, so a Helm 4.2 ``separate`` post-render (hooks alone, then templates
alone) emits each copy in exactly one of its two calls, the same copy as one
combined call.

Each is marked with the annotation ``proxy-postrender.io/generated``. A re-run
drops the old copy of what its profile makes (and makes it anew when the
stream still needs it); ``--remove`` drops every one; an earlier run's object
that this profile does not make stays where it is. Both cases the report
names. One object the stream already holds under the same kind, namespace and
name is an error, never a duplicate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.errors import InputError
from proxy_postrender.noproxy.fleet import DEFAULTS
from proxy_postrender.objects import GENERATED, annotations_of, is_mapping, walk_objects
from proxy_postrender.pods.selection import CA_KEY
from proxy_postrender.result import Earlier, Finding, Hook
from proxy_postrender.structs import FrozenStruct, replace
from proxy_postrender.yamltext.read import load_documents
from proxy_postrender.yamltext.splice import block_lines

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.nodes.settings import NodeSettings
    from proxy_postrender.request import Request
    from proxy_postrender.result import Result
    from proxy_postrender.yamltext.spool import Output
    from proxy_postrender.yamltext.stream import Segment

NODE_BOOTSTRAP = "node-bootstrap"
WORKLOAD_CREDENTIALS = "workload-credentials"
CA_BUNDLE = "ca-bundle"
# the last line of a request's CA when the ConfigMap merges it with the public roots
CA_ROOTS = "proxy-postrender.io/ca-roots"  # the annotation naming the root set merged in
# patterns compiled on first use (``re`` caches them): most runs never need them
_PEM_BLOCK = r"(?s)-----BEGIN CERTIFICATE-----\n.*?-----END CERTIFICATE-----\n"

# Helm's hook annotations, and the suffix of the copies the hooks read
HOOK = "helm.sh/hook"
HOOK_WEIGHT = "helm.sh/hook-weight"
HOOK_DELETE_POLICY = "helm.sh/hook-delete-policy"
HOOK_COPY = "-hooks"
# the phases Helm knows, in the order its documentation lists them (an alias mapped)
_PHASES = (
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
)
_PHASE_ALIASES = {"test-success": "test"}
_WEIGHT = r"[+-]?[0-9]+"
_MAX_NAME = 253  # a Secret's or ConfigMap's name is a DNS subdomain


def hook_of(obj: Any) -> Hook | None:
    """The Helm hook ``obj`` is (None: an ordinary object), read as Helm reads it: the
    known phases of ``helm.sh/hook``, lower-cased, and ``helm.sh/hook-weight`` as an
    integer (0 when it is none)."""
    annotations = annotations_of(obj)
    value = annotations.get(HOOK)
    if value is None:
        return None
    named = {_PHASE_ALIASES.get(p, p) for p in (x.strip().lower() for x in str(value).split(","))}
    weight = str(annotations.get(HOOK_WEIGHT) or "").strip()
    return Hook(
        tuple(p for p in _PHASES if p in named),
        int(weight) if re.fullmatch(_WEIGHT, weight) else 0,
    )


def hook_copy(name: str) -> str:
    """The name of the hooks' copy of the generated object ``name``."""
    return name + HOOK_COPY


def for_hooks(request: Request) -> Request:
    """The request a hook workload is planned with: it reads the hooks' copies of the
    objects the run generates per namespace (the objects it does not generate, as
    ``request`` names them)."""
    pods = request.pods
    secret = request.credential_secret
    if secret is not None and pods.secret_ref == secret.name:
        pods = replace(pods, secret_ref=hook_copy(secret.name))
    if request.ca_pem is not None and pods.ca is not None:
        pods = replace(pods, ca=replace(pods.ca, config_map=hook_copy(pods.ca.config_map)))
    return request if pods is request.pods else replace(request, pods=pods)


class Made(FrozenStruct):
    """One object the run emits."""

    kind: str
    name: str
    namespace: str | None
    made_by: str  # the value of the generated annotation
    body: dict[str, Any]  # what follows metadata
    labels: dict[str, str] | None = None
    taken: str = ""  # the end of the message when the stream holds the object already
    hook: Hook | None = None  # emitted as this Helm hook
    annotations: tuple[tuple[str, str], ...] = ()  # after the generated annotation

    def document(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": self.name}
        if self.namespace:
            metadata["namespace"] = self.namespace
        if self.labels is not None:
            metadata["labels"] = self.labels
        annotations = metadata["annotations"] = {GENERATED: self.made_by, **dict(self.annotations)}
        if self.hook is not None:
            annotations[HOOK] = ",".join(self.hook.phases)
            annotations[HOOK_WEIGHT] = str(self.hook.weight)
            annotations[HOOK_DELETE_POLICY] = "before-hook-creation"
        return {"apiVersion": "v1", "kind": self.kind, "metadata": metadata, **self.body}


def documents(result: Result, request: Request, out: Output) -> list[str]:
    """The objects to emit after the stream, as documents; InputError when one of them
    cannot be made (two contents for one Secret, a name the stream holds already).
    Adds to ``result.warnings`` what became of the earlier runs' objects."""
    made = [*_node_secrets(result, request), *_per_namespace(result, request)]
    emitted = {(m.kind, m.namespace, m.name) for m in made}
    for found in result.dropped:
        if (found.kind, found.namespace, found.name) not in emitted and not request.removing:
            result.warnings.append(
                f"generated {found} from an earlier run: dropped, no object of this run "
                "reads it now"
            )
    for found in result.kept:
        result.warnings.append(
            f"generated {found} from an earlier run: kept, this profile does not make it "
            "(--remove takes it out)"
        )
    # the stream ended without a newline and the tool wrote one before its documents:
    # they end the same way, and when none is made the tool's newline goes again
    unterminated = any(found.unterminated for found in result.dropped)
    if not made:
        if unterminated:
            out.drop_final_newline()
        return []
    existing = _existing(out, {m.name for m in made})
    for item in made:
        if (item.kind, item.namespace, item.name) in existing:
            where = f"{item.namespace}/" if item.namespace else ""
            raise InputError(
                f"the stream already holds a {item.kind} {where}{item.name}{item.taken}"
            )
    docs = ["---\n" + "\n".join(block_lines(item.document())) + "\n" for item in made]
    if out.partial_line() or unterminated:
        docs[-1] = docs[-1][:-1]
    if out.partial_line():  # the document's own line break ends its last line
        docs[0] = out.line_break() + docs[0]
    return docs


def _node_secrets(result: Result, request: Request) -> list[Made]:
    """The Secrets the node bootstrap reads from (one per name and namespace)."""
    settings = request.nodes
    if request.removing or settings is None or not settings.create_secret:
        return []
    made: dict[tuple[str | None, str], Made] = {}
    contents: dict[tuple[str | None, str], Iterable[tuple[str, str]]] = {}
    # a shared template's Secret (the defaults) only where no Cluster of the stream gives one
    first = [item for item in result.node_secrets if not item[0].plan.node_secret_is_fallback()]
    given = {(ref.namespace, ref.name) for _, ref, _ in first}
    named = {ref.name for _, ref, _ in first}
    later = [
        (report, ref, env)
        for report, ref, env in result.node_secrets
        if report.plan.node_secret_is_fallback()
        and (ref.namespace, ref.name) not in given
        # a Secret without a namespace lands in the one it is applied to: maybe one whose
        # Cluster of the stream gives that Secret already (and would be overwritten)
        and not (ref.namespace is None and ref.name in named)
    ]
    for report, ref, env in [*first, *later]:
        key = (ref.namespace, ref.name)
        if contents.setdefault(key, env) != env:
            where = f"{ref.namespace}/" if ref.namespace else ""
            raise InputError(
                f"the Secret {where}{ref.name} would need two contents: objects of clusters "
                "with different proxy values (proxies or NO_PROXY) share it; label them with "
                "cluster.x-k8s.io/cluster-name, or give their clusters different Secret names "
                "(spec.nodes.secretName, spec.clusters[].nodes.secretName) or none; the "
                "clusters of a ClusterClass in one namespace read one Secret: give a cluster "
                "with other values its own namespace, or use inline credentials",
                report.context,
            )
        if key in made:
            continue
        labels = {"clusterctl.cluster.x-k8s.io/move": ""}
        if ref.cluster:
            labels["cluster.x-k8s.io/cluster-name"] = ref.cluster
        from proxy_postrender.nodes.kubeadm import secret_data  # lazy: node Secrets only

        body = {"type": "Opaque", "stringData": secret_data(settings, env)}
        taken = (
            ", the name the node bootstrap would emit; set spec.nodes.createSecret: false to "
            "use it, or spec.nodes.secretName to pick another name"
        )
        made[key] = Made("Secret", ref.name, ref.namespace, NODE_BOOTSTRAP, body, labels, taken)
    _same_name_new_content(result, settings, made)
    return list(made.values())


def _same_name_new_content(
    result: Result, settings: NodeSettings, made: Mapping[tuple[str | None, str], Made]
) -> None:
    """A node Secret that keeps its name with new content (the Secret a ClusterClass's
    templates name, or ``spec.nodes.rollout: inPlace``): nothing that reads it changes,
    and Cluster API compares no Secret's content, so no running machine gets it. (A name
    by content is another name for another content: never found here.)"""
    from proxy_postrender.rollout.codes import NO_ROLLOUT_CODE  # lazy: secret mode only

    for found in result.dropped:
        item = made.get((found.namespace, found.name))
        if item is None or found.made_by != NODE_BOOTSTRAP or not found.data:
            continue
        if found.data == tuple(sorted(item.body["stringData"].items())):
            continue
        why = (
            "set spec.nodes.rollout: rename"
            if settings.rollout != "rename"
            else "the templates of a ClusterClass name one Secret for all its clusters: use "
            "inline credentials for them, or replace the machines"
        )
        result.findings.append(
            Finding(
                NO_ROLLOUT_CODE,
                f"the node {found} holds new proxy values under the same name: no "
                "object that reads it changes, and Cluster API compares no Secret's content, "
                f"so no running machine gets them; {why}",
            )
        )


def _per_namespace(result: Result, request: Request) -> list[Made]:
    """The credential Secret and the CA ConfigMap, once in each namespace whose workloads
    now read them."""
    if request.removing:
        return []
    default = request.pods.namespace
    ordinary = list({ns or default: None for ns in result.workload_namespaces})
    hooks: dict[str | None, Hook] = {}
    for ns, hook in result.hook_namespaces.items():
        if hook.phases:  # a hook of no phase Helm knows never runs
            known = hooks.get(ns or default)
            hooks[ns or default] = hook if known is None else known.joined(hook)
    if not ordinary and not hooks:
        return []  # (and the CA bundle is not made: certifi stays unloaded)
    wanted: list[tuple[str, str, str, dict[str, Any], str, tuple[tuple[str, str], ...]]] = []
    secret = request.credential_secret
    if secret is not None:
        taken = "; drop spec.credentials.createSecret to use it, or name another secretRef"
        body = {"type": "Opaque", "stringData": dict(secret.data)}
        wanted.append(("Secret", secret.name, WORKLOAD_CREDENTIALS, body, taken, ()))
    ca, pem = request.pods.ca, request.ca_pem
    if ca is not None and pem is not None:
        taken = "; set spec.caBundle.configMapName to another name"
        bundle, notes = ca_bundle(pem, merged=request.ca_public_roots)
        body = {"data": {CA_KEY: bundle}}
        wanted.append(("ConfigMap", ca.config_map, CA_BUNDLE, body, taken, notes))
    made = []
    for kind, name, made_by, body, taken, notes in wanted:
        _one_namespace_form(kind, name, ordinary)
        made += [
            Made(kind, name, ns, made_by, body, taken=taken, annotations=notes) for ns in ordinary
        ]
        copy = hook_copy(name)
        if hooks and len(copy) > _MAX_NAME:
            raise InputError(
                f"the {kind} the hooks read would be named {copy}, longer than "
                f"{_MAX_NAME} characters: pick a shorter name"
            )
        _one_namespace_form(kind, copy, list(hooks))
        for ns, hook in hooks.items():
            # created before the hooks that read it, and kept for the release's later hooks
            phases = tuple(p for p in _PHASES if p in hook.phases)
            first = Hook(phases, hook.weight - 1)
            made.append(
                Made(kind, copy, ns, made_by, body, taken=taken, hook=first, annotations=notes)
            )
    return made


def ca_bundle(pem: str, *, merged: bool) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The content of the workloads' CA ConfigMap for the request's CA ``pem``, and the
    annotations the ConfigMap gets: ``pem`` itself (replace mode), or (``merged``) its
    certificates followed by certifi's public roots."""
    if not merged:
        return pem, ()
    version, roots = public_roots()
    return merged_bundle(pem, f"certifi-{version}", roots)


def merged_bundle(pem: str, label: str, roots: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``pem`` (the proxy's CAs first), a comment naming the root set ``label``, then the
    certificate blocks of ``roots`` in their order; and the annotation that records
    ``label``."""
    blocks = "".join(re.findall(_PEM_BLOCK, roots.replace("\r\n", "\n")))
    return f"{pem}# public roots: {label}\n{blocks}", ((CA_ROOTS, label),)


def public_roots() -> tuple[str, str]:
    """certifi's version and its bundle of public roots (imported here only: a run that
    writes no merged bundle does not load it)."""
    import certifi

    return str(certifi.__version__), certifi.contents()


def _one_namespace_form(kind: str, name: str, namespaces: list[str | None]) -> None:
    """Fail when some of ``namespaces`` are None (no namespace, no --namespace) and
    others named: the object might then be emitted twice in one namespace."""
    if None in namespaces and len(namespaces) > 1:
        others = ", ".join(str(n) for n in namespaces if n)
        raise InputError(
            f"some workloads have no namespace and others are in {others}: pass "
            f"--namespace so that the {kind} {name} is emitted once per namespace"
        )


def _existing(out: Output, names: set[str]) -> set[tuple[str, str | None, str]]:
    """(kind, namespace, name) of the Secrets and ConfigMaps in the output so far that
    carry one of ``names``."""
    found: set[tuple[str, str | None, str]] = set()
    for segment in out.segments():
        if segment.sniff_kind() not in (None, "Secret", "ConfigMap", "List"):
            continue
        if not any(name in segment.text for name in names):
            continue
        for doc in load_documents(segment.text) or []:
            for _, obj in walk_objects(doc):
                metadata = obj.get("metadata")
                kind = obj.get("kind")
                if kind in ("Secret", "ConfigMap") and isinstance(metadata, Mapping):
                    namespace = metadata.get("namespace")
                    namespace = str(namespace) if namespace else None
                    found.add((str(kind), namespace, str(metadata.get("name"))))
    return found


def generated_by(doc: Any) -> str | None:
    """What the tool emitted a Secret or ConfigMap for (its generated annotation), if it did."""
    if not isinstance(doc, Mapping) or doc.get("kind") not in ("Secret", "ConfigMap"):
        return None
    value = annotations_of(doc).get(GENERATED)
    return str(value) if value else None


def earlier(segment: Segment) -> Earlier | None:
    """The object an earlier run generated, when the segment is one."""
    if GENERATED not in segment.text:
        return None
    docs = load_documents(segment.text)
    doc = docs[0] if docs is not None and len(docs) == 1 else None
    made_by = generated_by(doc)
    if made_by is None or not isinstance(doc, Mapping):
        return None
    metadata = doc.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    namespace = metadata.get("namespace")
    name = str(metadata.get("name") or "")
    namespace = str(namespace) if namespace else None
    ended = not segment.text.endswith("\n")
    data = doc.get("stringData")
    held = tuple(sorted((str(k), str(v)) for k, v in data.items())) if is_mapping(data) else ()
    return Earlier(made_by, str(doc["kind"]), namespace, name, unterminated=ended, data=held)


def _named_as(name: str, secret_name: str) -> bool:
    """Whether a node Secret named ``name`` is one of ``secret_name``: that name, or that
    name with the digest of a content (nodes/digest.py)."""
    from proxy_postrender.nodes import digest  # lazy: secret mode only

    return name == secret_name or digest.is_digested(name, secret_name)


def makes(request: Request, found: Earlier) -> bool:
    """Whether this run makes objects like ``found`` (so that the old copy goes: made
    anew where the stream still needs it); a removal drops every one."""
    if request.removing:
        return True
    if found.made_by == NODE_BOOTSTRAP:
        # the defaults' and each spec.clusters entry's (its own nodes.secretName)
        chosen = [request, request.entry(DEFAULTS), *(rule.request for rule in request.rules())]
        return any(
            nodes is not None
            and nodes.credentials == "secret"
            and nodes.create_secret
            and (nodes.secret_name is None or _named_as(found.name, nodes.secret_name))
            for nodes in (made.nodes for made in chosen)
        )
    if found.made_by == WORKLOAD_CREDENTIALS:
        secret = request.credential_secret
        return (
            found.kind == "Secret"
            and secret is not None
            and found.name in (secret.name, hook_copy(secret.name))
        )
    if found.made_by == CA_BUNDLE:
        ca = request.pods.ca
        return (
            found.kind == "ConfigMap"
            and ca is not None
            and request.ca_pem is not None
            and found.name in (ca.config_map, hook_copy(ca.config_map))
        )
    return False
