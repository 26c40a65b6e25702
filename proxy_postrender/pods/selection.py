"""Which workloads and containers get the variables: the profile's ``spec.workloads``
section and the annotations a chart author or user puts on objects.

``include`` and ``exclude`` are lists of rules; a rule matches when every
criterion it gives matches. An object is selected when it matches some
``include`` rule (or there is none), matches no ``exclude`` rule, and no
annotation opts it out. Kinds match exactly; namespaces, names and container names are shell
globs; the label selector has Kubernetes semantics. An object that is not
selected (or a container that is not) gets what the tool injected earlier
taken out, so that narrowing the profile undoes the injection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.errors import InputError
from proxy_postrender.objects import is_mapping
from proxy_postrender.structs import FrozenStruct

INJECT_ANNOTATION = "proxy-postrender.io/inject"
CONTAINERS_ANNOTATION = "proxy-postrender.io/containers"
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
SECRET_KEYS = ("HTTP_PROXY", "HTTPS_PROXY")  # the keys of a credentials Secret
CA_VOLUME = "proxy-postrender-ca"  # the volume and mount name the tool owns
CA_KEY = "ca.crt"


class CaMount(FrozenStruct):
    """The proxy CA for workloads: a ConfigMap mounted read-only into chosen containers."""

    config_map: str
    mount_path: str

    @property
    def file(self) -> str:
        return f"{self.mount_path.rstrip('/')}/{CA_KEY}"

    def volume(self) -> dict[str, Any]:
        return {"name": CA_VOLUME, "configMap": {"name": self.config_map}}

    def mount(self) -> dict[str, Any]:
        return {"name": CA_VOLUME, "mountPath": self.mount_path, "readOnly": True}


class Requirement(FrozenStruct):
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        return not present  # DoesNotExist


class LabelSelector(FrozenStruct):
    match_labels: tuple[tuple[str, str], ...] = ()
    expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            r.matches(labels) for r in self.expressions
        )


class Criteria(FrozenStruct):
    """Criteria an object must all meet; an empty Criteria is met by every object."""

    kinds: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    selector: LabelSelector | None = None

    @property
    def empty(self) -> bool:
        return not (self.kinds or self.namespaces or self.names or self.selector)

    def matches(
        self, kind: str, namespace: str | None, name: str, labels: Mapping[str, str]
    ) -> bool:
        if self.kinds and kind not in self.kinds:
            return False
        if self.namespaces and (namespace is None or not _globbed(namespace, self.namespaces)):
            return False
        if self.names and not _globbed(name, self.names):
            return False
        return self.selector is None or self.selector.matches(labels)


class WorkloadSettings(FrozenStruct):
    on_conflict: str = "keep"  # when a container sets a variable itself: keep, override, fail
    include: tuple[Criteria, ...] = ()  # empty: every object
    exclude: tuple[Criteria, ...] = ()
    containers: tuple[str, ...] = ()  # globs; empty: every container
    exclude_containers: tuple[str, ...] = ()
    init_containers: bool = True
    namespace: str | None = None  # the release namespace, for objects without one
    upper_case: bool = True
    lower_case: bool = True
    java: bool = False  # JAVA_TOOL_OPTIONS with -Dhttp(s).proxyHost/Port and nonProxyHosts
    extra_env: tuple[tuple[str, str], ...] = ()
    # the proxy URLs come from this Secret (keys HTTP_PROXY, HTTPS_PROXY), not literals
    secret_ref: str | None = None
    ca: CaMount | None = None  # mount the proxy CA into the chosen containers

    def wanted(self, env: Sequence[tuple[str, str]]) -> tuple[tuple[str, Any], ...]:
        """The variables a selected container gets, from the proxy variables ``env``."""
        if not env:
            return ()  # removal: nothing is wanted
        chosen: list[tuple[str, Any]] = [
            (n, self._value(n, v))
            for n, v in env
            if (n.isupper() and self.upper_case) or (not n.isupper() and self.lower_case)
        ]
        if self.java:
            from proxy_postrender.pods.java import java_tool_options

            options = java_tool_options(dict(env))
            if options:
                chosen.append(("JAVA_TOOL_OPTIONS", options))
        return (*chosen, *self.extra_env)

    def _value(self, name: str, value: str) -> Any:
        if self.secret_ref is None or name.upper() not in SECRET_KEYS:
            return value
        return {"secretKeyRef": {"name": self.secret_ref, "key": name.upper()}}

    def object_choice(self, obj: Mapping[str, Any], templates: Sequence[Any] = ()) -> str | None:
        """Why the object is left out (None: it is selected); ``templates``: its pod
        templates, whose annotations count too."""
        if (_annotation(obj, INJECT_ANNOTATION, templates) or "").lower() == "false":
            return f'opted out by {INJECT_ANNOTATION}: "false"'
        metadata = obj.get("metadata") if is_mapping(obj.get("metadata")) else {}
        assert is_mapping(metadata)
        namespace = metadata.get("namespace") or self.namespace
        namespace = str(namespace) if namespace else None
        name = str(metadata.get("name") or "")
        raw_labels = metadata.get("labels")
        labels = {str(k): str(v) for k, v in raw_labels.items()} if is_mapping(raw_labels) else {}
        kind = str(obj.get("kind") or "")
        if self.include and not any(
            rule.matches(kind, namespace, name, labels) for rule in self.include
        ):
            if namespace is None and any(rule.namespaces for rule in self.include):
                return "spec.workloads.include names namespaces; its own is unknown (--namespace)"
            return "matched by no spec.workloads.include rule"
        for index, rule in enumerate(self.exclude):
            if rule.matches(kind, namespace, name, labels):
                return f"matched by spec.workloads.exclude[{index}]"
        return None

    def container_choice(self, name: str, init: bool) -> bool:
        if init and not self.init_containers:
            return False
        if self.containers and not _globbed(name, self.containers):
            return False
        return not (self.exclude_containers and _globbed(name, self.exclude_containers))


def _globbed(name: str, globs: Sequence[str]) -> bool:
    """Whether a shell glob of ``globs`` matches ``name`` (case-sensitive); fnmatch is
    imported only by a profile that gives globs (start-up)."""
    import fnmatch

    return any(fnmatch.fnmatchcase(name, glob) for glob in globs)


def _annotation(obj: Mapping[str, Any], key: str, templates: Sequence[Any]) -> str | None:
    """The annotation on the object, else on one of its pod templates (the object's wins)."""
    holders = [obj.get("metadata")]
    holders += [t.get("metadata") for t in templates if is_mapping(t)]
    for holder in holders:
        annotations = holder.get("annotations") if is_mapping(holder) else None
        if is_mapping(annotations) and annotations.get(key) is not None:
            return str(annotations[key]).strip()
    return None


def named_containers(
    obj: Mapping[str, Any], present: Sequence[str], templates: Sequence[Any] = ()
) -> set[str] | None:
    """The containers ``proxy-postrender.io/containers`` names (None: no annotation)."""
    value = _annotation(obj, CONTAINERS_ANNOTATION, templates)
    if value is None:
        return None
    names = {part.strip() for part in value.split(",") if part.strip()}
    unknown = sorted(names - set(present))
    if unknown:
        raise InputError(
            f"{CONTAINERS_ANNOTATION} names {', '.join(unknown)}, not a container of this "
            f"object (containers: {', '.join(present) or 'none'})"
        )
    return names
