"""A model of Cluster API's rollout decisions, written from its source, for the tests.

Given the objects of a stream BEFORE and AFTER a change (lists of dicts, as loaded
YAML), ``rollouts`` says, per MachineDeployment, MachineSet, MachinePool,
KubeadmControlPlane, ClusterClass and each Cluster using a ClusterClass, whether the
existing machines would be replaced, and why: each reason names the compared field.
What changed but never reaches existing machines is listed as ``drift``.

Source: kubernetes-sigs/cluster-api at ``CAPI_COMMIT`` (v1.14.0-rc.1 line, the commit
of ../shared/capi-crds). The files and functions modelled:

- MachineDeployment: ``core/reconcilers/machinedeployment/mdutil/util.go``
  ``MachineTemplateUpToDate`` (l. 361: version, the whole bootstrap struct,
  infrastructureRef, failureDomain), ``MachineTemplateDeepCopyRolloutFields`` (l. 416:
  labels, annotations and the in-place fields are left out) and
  ``FindNewAndOldMachineSets`` (l. 455-536: ``rollout.after``). The objects are
  compared in the hub (v1beta2) form: a v1beta1 reference's ``apiVersion`` becomes its
  group, its namespace is dropped (``core/webhooks/conversion/common.go``
  ``convertToContractVersionedObjectReference``, l. 79); ``spec.rolloutAfter`` becomes
  ``spec.rollout.after`` (``api/core/v1beta1/conversion.go`` l. 1691); the defaulting
  webhook prefixes the version with ``v`` (``core/webhooks/admission/machinedeployment.go``
  l. 132).
- KubeadmControlPlane: ``controlplane/kubeadm/pkg/filters.go`` ``UpToDate`` (l. 52:
  ``rollout.after`` through ``util/collections/machine_filters.go``
  ``ShouldRolloutAfter`` l. 219), ``matchesMachineSpec`` (l. 121: version),
  ``matchesInfraMachine`` (l. 183: only the infrastructure template's name and
  group/kind, l. 216), ``matchesKubeadmConfig`` (l. 229: a machine's KubeadmConfig,
  made from the BEFORE spec by ``desiredstate.ComputeDesiredKubeadmConfig``,
  ``controlplane/kubeadm/pkg/desiredstate/desired_state.go`` l. 203, against the AFTER
  spec; join form first, then init form for the first machine) and
  ``PrepareKubeadmConfigsForDiff`` (l. 302), whose exemptions are
  ``clusterConfiguration.controlPlaneEndpoint`` (l. 327), ``clusterConfiguration.dns``
  (l. 330), the defaults of ``ApplyPreviousKubeadmConfigDefaults`` (l. 336;
  ``bootstrap/kubeadm/webhooks/admission/kubeadmconfigtemplate.go`` l. 70),
  ``joinConfiguration.discovery`` (l. 343), ``timeouts.controlPlaneComponentHealthCheckSeconds``
  (l. 351; v1beta1: ``clusterConfiguration.apiServer.timeoutForControlPlane``, which
  converts to it) and empty-vs-absent (``dropOmittableFields``, l. 369).
- MachinePool: ``core/reconcilers/machinepool/machinepool_controller_phases.go``
  ``reconcileBootstrap`` (l. 181-237: the data secret name is taken from the referenced
  config) and ``bootstrap/kubeadm/reconcilers/kubeadmconfig/kubeadmconfig_controller.go``
  (l. 316-348: a config whose data secret exists is never generated again), so only a
  new ``configRef`` gives new bootstrap data (cluster-api #8858, #10496).
- MachineSet: ``core/reconcilers/machineset/machineset_controller.go`` has no up-to-date
  check: it only scales, so a template change reaches new machines only.
- ClusterClass: ``core/reconcilers/topology/cluster/reconcile_state.go``
  ``updateMachineDeployment`` (l. 699) -> ``reconcileReferencedTemplate`` (l. 1232-1324):
  a change of the ``spec`` of a class's MachineDeployment template makes a new template
  under a new name and moves the reference (a rotation: the MachineDeployment rolls);
  a metadata-only change is patched in place. A MachinePool's bootstrap object is
  patched in place (``updateMachinePool`` l. 1006-1034, ``reconcileReferencedObject``
  l. 1152): no new data secret. The control plane object is patched in place, so the
  KubeadmControlPlane rule above decides. ``rollout.after`` of a topology entry is
  copied to the object (``exp/topology/desiredstate/desired_state.go`` l. 438, 922).

Not modelled: the alpha InPlaceUpdates feature (with it and an update extension,
machines that are not up to date may be updated in place instead of replaced),
``rollout.before`` (certificate expiry), ClusterClass patches and variables (a change
of them is reported as drift), and a change of an object's apiVersion between BEFORE
and AFTER (an error).
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

CAPI_COMMIT = "ae7ff047db499ac3858ade268ba38db8c9f128bb"

Obj = dict[str, Any]
Key = tuple[str, str, str]  # kind, namespace, name

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Verdict:
    """What Cluster API does to the existing machines of one object after the change.

    ``rolls``: they are replaced now. ``reasons``: why, each naming the compared
    field. ``drift``: changes the existing machines never receive. ``scheduled``: a
    ``rollout.after`` in the future that will replace them then. ``part``: for a
    Cluster, the topology entry (``workers.machineDeployments[md-0]``, ``controlPlane``).
    """

    kind: str
    namespace: str
    name: str
    part: str
    rolls: bool
    reasons: tuple[str, ...]
    drift: tuple[str, ...]
    scheduled: datetime.datetime | None = None

    @property
    def label(self) -> str:
        """``Kind/name`` (``Kind/name:part`` for a Cluster's topology entry)."""
        return f"{self.kind}/{self.name}" + (f":{self.part}" if self.part else "")


# --- small helpers ------------------------------------------------------------------------


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _meta(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _key(obj: Obj) -> Key:
    namespace, name = _meta(obj)
    return str(obj.get("kind")), namespace, name


def _group(api_version: Any) -> str:
    """The group of an ``apiVersion`` (``""`` for the core group)."""
    text = str(api_version or "")
    return text.rpartition("/")[0]


def _version_of(obj: Obj) -> str:
    return str(obj.get("apiVersion") or "").rpartition("/")[2]


def index(objects: Iterable[Any]) -> dict[Key, Obj]:
    """The objects of a stream by (kind, namespace, name); a missing namespace is ``""``."""
    return {_key(o): o for o in objects if isinstance(o, dict) and o.get("kind")}


def _time(value: Any) -> datetime.datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
    return datetime.datetime.fromisoformat(str(value).upper().replace("Z", "+00:00"))


def _k8s_version(value: Any) -> str:
    """The version as the defaulting webhooks store it (a ``v`` prefix added)."""
    text = str(value or "")
    return text if not text or text.startswith("v") else "v" + text


def _same_api(before: Obj, after: Obj) -> None:
    if before.get("apiVersion") != after.get("apiVersion"):
        raise ValueError(
            f"{_key(after)}: apiVersion {before.get('apiVersion')} -> {after.get('apiVersion')}"
            " (the model compares objects of one apiVersion)"
        )


# --- references ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Ref:
    """A reference as the hub (v1beta2) type holds it, plus where it points."""

    group: str
    kind: str
    name: str
    # where the reference points; not part of a comparison (the hub type has none)
    namespace: str = field(compare=False)

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


def contract_ref(ref: Any, namespace: str) -> Ref | None:
    """A v1beta1 ``ObjectReference`` (apiVersion, kind, name, namespace) or a v1beta2
    ``ContractVersionedObjectReference`` (apiGroup, kind, name), or a ClusterClass
    ``templateRef`` (apiVersion, kind, name), as a ``Ref``; ``None`` when not set.
    The version part of an ``apiVersion`` is dropped, as the conversion does."""
    if not isinstance(ref, dict) or not (ref.get("kind") or ref.get("name")):
        return None
    group = ref["apiGroup"] if "apiGroup" in ref else _group(ref.get("apiVersion"))
    return Ref(
        str(group or ""),
        str(ref.get("kind") or ""),
        str(ref.get("name") or ""),
        str(ref.get("namespace") or namespace),
    )


def resolve(ref: Ref | None, objects: Mapping[Key, Obj]) -> Obj | None:
    """The object of the stream ``ref`` points at (kind, name, namespace and group)."""
    if ref is None:
        return None
    found = objects.get((ref.kind, ref.namespace, ref.name))
    if found is None or (ref.group and _group(found.get("apiVersion")) != ref.group):
        return None
    return found


def bootstrap_ref(obj: Obj) -> Ref | None:
    """``spec.template.spec.bootstrap.configRef`` of a MachineDeployment, MachineSet or
    MachinePool (either API version)."""
    namespace, _ = _meta(obj)
    return contract_ref(_get(obj, "spec", "template", "spec", "bootstrap", "configRef"), namespace)


def resolve_bootstrap_template(obj: Obj, objects: Iterable[Any]) -> Obj | None:
    """The bootstrap template (or, for a MachinePool, config) a MachineDeployment,
    MachineSet or MachinePool references, looked up in ``objects``; None if absent."""
    return resolve(bootstrap_ref(obj), index(objects))


def _class_worker_refs(cc: Obj) -> list[tuple[str, Ref]]:
    """(where, ref) of every worker bootstrap template reference of a ClusterClass:
    v1beta1 ``workers.machineDeployments[].template.bootstrap.ref``, v1beta2
    ``workers.machineDeployments[].bootstrap.templateRef`` (and ``machinePools``)."""
    namespace, _ = _meta(cc)
    out = []
    for group in ("machineDeployments", "machinePools"):
        for entry in _get(cc, "spec", "workers", group) or []:
            raw = _get(entry, "bootstrap", "templateRef") or _get(
                entry, "template", "bootstrap", "ref"
            )
            ref = contract_ref(raw, namespace)
            if ref is not None:
                out.append((f"spec.workers.{group}[{entry.get('class')}] bootstrap", ref))
    return out


def dangling_references(objects: Iterable[Any]) -> list[str]:
    """Every bootstrap reference of the stream that does not resolve within it: a
    MachineDeployment's, MachineSet's or MachinePool's ``configRef`` and a
    ClusterClass's worker bootstrap template references. [] when all resolve."""
    objs = [o for o in objects if isinstance(o, dict)]
    idx = index(objs)
    out = []
    for obj in objs:
        if obj.get("kind") in ("MachineDeployment", "MachineSet", "MachinePool"):
            refs = [("spec.template.spec.bootstrap.configRef", bootstrap_ref(obj))]
        elif obj.get("kind") == "ClusterClass":
            refs = list(_class_worker_refs(obj))
        else:
            continue
        for where, ref in refs:
            if ref is not None and resolve(ref, idx) is None:
                out.append(f"{obj['kind']}/{_meta(obj)[1]} {where}: {ref} is not in the stream")
    return out


# --- rollout.after ------------------------------------------------------------------------


def _rollout_after_path(obj: Obj) -> tuple[str, ...]:
    """``spec.rolloutAfter`` (v1beta1) or ``spec.rollout.after`` (v1beta2)."""
    if _version_of(obj) == "v1beta1":
        return ("spec", "rolloutAfter")
    return ("spec", "rollout", "after")


def rollout_after(
    field: str,
    before: Any,
    after: Any,
    now: datetime.datetime,
    created: datetime.datetime | None,
    *,
    strict: bool,
) -> tuple[str | None, datetime.datetime | None]:
    """(reason, scheduled) of a ``rollout.after`` value. Machines created before it are
    replaced once it has passed: MachineDeployment ``FindNewAndOldMachineSets``
    (util.go l. 507-535: once ``now`` is not before it, a new MachineSet unless one was
    created at or after it), KubeadmControlPlane ``ShouldRolloutAfter``
    (machine_filters.go l. 227: created before it and it strictly before ``now``:
    ``strict``). ``created``: when the existing machines were made; None means they
    conform to BEFORE: made at BEFORE's time if that has passed, else older than any."""
    t_after, t_before = _time(after), _time(before)
    if t_after is None:
        return None, None
    if created is None:
        created = t_before if t_before is not None and t_before <= now else _EPOCH
    if not created < t_after:
        return None, None
    due = t_after < now if strict else not now < t_after
    if due:
        when = t_after.isoformat().replace("+00:00", "Z")
        return f"{field} {when} has passed and the machines were created before it", None
    return None, t_after


# --- MachineDeployment / MachineSet / MachinePool -----------------------------------------


def machine_rollout_fields(obj: Obj) -> dict[str, Any]:
    """The fields of ``spec.template`` ``MachineTemplateUpToDate`` compares, in the hub
    form (``MachineTemplateDeepCopyRolloutFields`` drops the rest)."""
    namespace, _ = _meta(obj)
    spec = _get(obj, "spec", "template", "spec") or {}
    bootstrap = spec.get("bootstrap") or {}
    return {
        "version": _k8s_version(spec.get("version")),
        "bootstrap.configRef": contract_ref(bootstrap.get("configRef"), namespace),
        "bootstrap.dataSecretName": bootstrap.get("dataSecretName") or "",
        "infrastructureRef": contract_ref(spec.get("infrastructureRef"), namespace),
        "failureDomain": spec.get("failureDomain") or "",
    }


def template_differences(before: Obj, after: Obj) -> list[str]:
    """``MachineTemplateUpToDate`` (util.go l. 361-414): one reason per differing field.
    The whole bootstrap struct is compared (configRef or dataSecretName)."""
    old, new = machine_rollout_fields(before), machine_rollout_fields(after)
    reasons = []
    for name in ("version", "infrastructureRef", "failureDomain"):
        if old[name] != new[name]:
            reasons.append(f"spec.template.spec.{name} {old[name]} -> {new[name]}")
    boot = ("bootstrap.configRef", "bootstrap.dataSecretName")
    if any(old[n] != new[n] for n in boot):
        name = boot[0] if old[boot[0]] is not None else boot[1]
        reasons.append(f"spec.template.spec.{name} {old[name]} -> {new[name]}")
    return reasons


def _secret_names(spec: Any) -> set[str]:
    """The Secrets a bootstrap spec reads through ``files[].contentFrom.secret.name``."""
    files = spec.get("files") if isinstance(spec, dict) else None
    return {
        str(_get(f, "contentFrom", "secret", "name"))
        for f in files or []
        if _get(f, "contentFrom", "secret", "name")
    }


def _secret_drift(
    spec: Any, namespace: str, old: Mapping[Key, Obj], new: Mapping[Key, Obj]
) -> list[str]:
    """Secrets whose content changed under the same name: never compared by any rule."""
    out = []
    for name in sorted(_secret_names(spec)):
        a, b = old.get(("Secret", namespace, name)), new.get(("Secret", namespace, name))
        if a and b and (a.get("data"), a.get("stringData")) != (b.get("data"), b.get("stringData")):
            out.append(f"Secret {name}: content changed under the same name (never compared)")
    return out


def _template_drift(
    before: Obj, after: Obj, old: Mapping[Key, Obj], new: Mapping[Key, Obj]
) -> list[str]:
    """The content of a referenced bootstrap template changed while the reference did not."""
    ref_b, ref_a = bootstrap_ref(before), bootstrap_ref(after)
    if ref_a is None or ref_a != ref_b:
        return []
    t_b, t_a = resolve(ref_b, old), resolve(ref_a, new)
    if not t_b or not t_a:
        return []
    out = []
    if t_b.get("spec") != t_a.get("spec"):
        out.append(f"{ref_a}: spec changed in place (the content of a template is never compared)")
    spec = (
        _get(t_a, "spec", "template", "spec")
        if ref_a.kind.endswith("Template")
        else _get(t_a, "spec")
    )
    return out + _secret_drift(spec, ref_a.namespace, old, new)


def _md_verdict(before: Obj, after: Obj, ctx: _Context) -> Verdict:
    _same_api(before, after)
    reasons = template_differences(before, after)
    path = _rollout_after_path(after)
    reason, scheduled = rollout_after(
        ".".join(path), _get(before, *path), _get(after, *path), ctx.now, ctx.created, strict=False
    )
    if reason:
        reasons.append(reason)
    drift = _template_drift(before, after, ctx.old, ctx.new)
    return _verdict(after, "", reasons, drift, scheduled)


def _ms_verdict(before: Obj, after: Obj, ctx: _Context) -> Verdict:
    _same_api(before, after)
    drift = [
        f"{d}: a MachineSet never replaces its machines (new machines only)"
        for d in template_differences(before, after)
    ]
    drift += _template_drift(before, after, ctx.old, ctx.new)
    return _verdict(after, "", [], drift, None)


def _mp_verdict(before: Obj, after: Obj, ctx: _Context) -> Verdict:
    """Only a new bootstrap config (another ``configRef``) gives new bootstrap data; the
    data secret name is written by the controller, so it is not read from the stream."""
    _same_api(before, after)
    old, new = machine_rollout_fields(before), machine_rollout_fields(after)
    reasons, drift = [], []
    name = "bootstrap.configRef"
    if old[name] != new[name]:
        reasons.append(f"spec.template.spec.{name} {old[name]} -> {new[name]}")
    elif new[name] is None and old["bootstrap.dataSecretName"] != new["bootstrap.dataSecretName"]:
        name = "bootstrap.dataSecretName"
        reasons.append(f"spec.template.spec.{name} {old[name]} -> {new[name]}")
    for what in ("version", "infrastructureRef"):
        if old[what] != new[what]:
            drift.append(
                f"spec.template.spec.{what} {old[what]} -> {new[what]}: up to the"
                " infrastructure provider"
            )
    for item in _template_drift(before, after, ctx.old, ctx.new):
        drift.append(f"{item}; its data secret is not generated again")
    return _verdict(after, "", reasons, drift, None)


def _verdict(
    obj: Obj,
    part: str,
    reasons: list[str],
    drift: list[str],
    scheduled: datetime.datetime | None,
    *,
    kind: str | None = None,
) -> Verdict:
    namespace, name = _meta(obj)
    return Verdict(
        kind or str(obj.get("kind")),
        namespace,
        name,
        part,
        bool(reasons),
        tuple(reasons),
        tuple(drift),
        scheduled,
    )


@dataclass(frozen=True)
class _Context:
    old: Mapping[Key, Obj]
    new: Mapping[Key, Obj]
    now: datetime.datetime
    created: datetime.datetime | None


# --- KubeadmControlPlane ------------------------------------------------------------------

# desired_state.go l. 50-60, 304-322: DefaultFeatureGates, for 1.31 <= version < 1.36
_KUBELET_LOCAL_MODE = "ControlPlaneKubeletLocalMode"
_LOCAL_MODE_VERSIONS = ((1, 31, 0), (1, 36, 0))

# PrepareKubeadmConfigsForDiff (filters.go l. 302-362): fields never compared
KCP_EXEMPT: tuple[tuple[str, ...], ...] = (
    ("clusterConfiguration", "controlPlaneEndpoint"),  # l. 327
    ("clusterConfiguration", "dns"),  # l. 330
    ("joinConfiguration", "discovery"),  # l. 343-344
    ("initConfiguration", "timeouts", "controlPlaneComponentHealthCheckSeconds"),  # l. 351-354
    ("joinConfiguration", "timeouts", "controlPlaneComponentHealthCheckSeconds"),
    # v1beta1: converted to the two timeouts above (l. 346-349)
    ("clusterConfiguration", "apiServer", "timeoutForControlPlane"),
)
# dropOmittableFields (l. 369-534) keeps [] apart from absent for nodeRegistration.taints
_KEEP_EMPTY = frozenset({"taints"})


def _semver(version: str) -> tuple[int, int, int] | None:
    core = version.lstrip("v").split("-")[0].split("+")[0].split(".")
    try:
        major, minor, patch = (int(p) for p in [*core, "0", "0"][:3])
    except ValueError:
        return None
    return major, minor, patch


def _default_feature_gates(spec: Obj, version: str) -> None:
    parsed = _semver(version)
    low, high = _LOCAL_MODE_VERSIONS
    if parsed is None or not low <= parsed < high:
        return
    cluster = spec.get("clusterConfiguration") or {}
    gates = dict(cluster.get("featureGates") or {})
    gates.setdefault(_KUBELET_LOCAL_MODE, True)
    spec["clusterConfiguration"] = {**cluster, "featureGates": gates}


def desired_kubeadm_config(spec: Any, version: str, *, join: bool) -> Obj:
    """``ComputeDesiredKubeadmConfig`` (desired_state.go l. 203-252): the KubeadmConfig
    spec of a joining machine (initConfiguration emptied, joinConfiguration.controlPlane
    set) or of the first machine (joinConfiguration emptied), feature gates defaulted."""
    out: Obj = copy.deepcopy(spec) if isinstance(spec, dict) else {}
    if join:
        out["initConfiguration"] = {}
        joined = dict(out.get("joinConfiguration") or {})
        if joined.get("controlPlane") is None:
            joined["controlPlane"] = {}
        out["joinConfiguration"] = joined
    else:
        out["joinConfiguration"] = {}
    _default_feature_gates(out, version)
    return out


def _init_as_join(current: Obj, desired: Obj) -> Obj:
    """filters.go l. 309-323: the first machine's init configuration read as a join one."""
    out = copy.deepcopy(current)
    init = out.get("initConfiguration") or {}
    joined = dict(out.get("joinConfiguration") or {})
    for name in ("timeouts", "patches", "skipPhases", "nodeRegistration"):
        joined[name] = init.get(name)
    joined["controlPlane"] = {"localAPIEndpoint": init.get("localAPIEndpoint")}
    joined["caCertPath"] = _get(desired, "joinConfiguration", "caCertPath")
    out["initConfiguration"] = {}
    out["joinConfiguration"] = joined
    return out


def _pop(spec: Obj, path: tuple[str, ...]) -> None:
    *parents, last = path
    node: Any = spec
    for key in parents:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(last, None)


def _omit_empty(value: Any, key: str = "") -> Any:
    """Absent, null, "", {} and [] are one (``dropOmittableFields`` and Go's zero values),
    except a list the source keeps apart (``taints``)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _omit_empty(v, str(k))
            if v is None or v == "" or v == {} or (v == [] and str(k) not in _KEEP_EMPTY):
                continue
            out[str(k)] = v
        return out
    if isinstance(value, list):
        return [_omit_empty(v) for v in value]
    return value


def prepare_for_diff(spec: Obj) -> Obj:
    """``PrepareKubeadmConfigsForDiff`` on one side: the exemptions removed, the
    defaults of ``ApplyPreviousKubeadmConfigDefaults`` applied, empty values dropped."""
    out = copy.deepcopy(spec)
    for path in KCP_EXEMPT:
        _pop(out, path)
    if not out.get("format"):
        out["format"] = "cloud-config"
    for name in ("initConfiguration", "joinConfiguration"):
        config = dict(out.get(name) or {})
        registration = dict(config.get("nodeRegistration") or {})
        registration["imagePullPolicy"] = registration.get("imagePullPolicy") or "IfNotPresent"
        config["nodeRegistration"] = registration
        out[name] = config
    result: Obj = _omit_empty(out)
    return result


def _diff_paths(old: Any, new: Any, prefix: str) -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new)):
            out += _diff_paths(old.get(key), new.get(key), f"{prefix}.{key}")
        return out
    return [] if old == new else [prefix]


def kubeadm_config_differences(
    before: Any, after: Any, *, before_version: str = "", after_version: str = ""
) -> dict[str, list[str]]:
    """``matchesKubeadmConfig`` (filters.go l. 229-299) for a machine whose KubeadmConfig
    was made from ``before`` (a ``kubeadmConfigSpec``) against the spec ``after``:
    {"join": paths for the joined machines, "init": paths for the first machine}, each
    path under ``spec.kubeadmConfigSpec``. The first machine is compared in join form
    first (its init configuration read as a join one), then in init form."""
    prefix = "spec.kubeadmConfigSpec"
    want_join = desired_kubeadm_config(after, after_version, join=True)
    have_join = desired_kubeadm_config(before, before_version, join=True)
    joined = _diff_paths(prepare_for_diff(have_join), prepare_for_diff(want_join), prefix)
    have_init = desired_kubeadm_config(before, before_version, join=False)
    as_join = _init_as_join(have_init, want_join)
    init: list[str] = []
    if prepare_for_diff(as_join) != prepare_for_diff(want_join):
        want_init = desired_kubeadm_config(after, after_version, join=False)
        init = _diff_paths(prepare_for_diff(have_init), prepare_for_diff(want_init), prefix)
    return {"join": joined, "init": init}


def _kcp_infra(kcp: Obj) -> tuple[str, str, str] | None:
    """The infrastructure template's group, kind and name (``matchesInfraMachine``
    compares these, l. 216): v1beta1 ``spec.machineTemplate.infrastructureRef``, v1beta2
    ``spec.machineTemplate.spec.infrastructureRef``."""
    raw = _get(kcp, "spec", "machineTemplate", "spec", "infrastructureRef")
    if raw is None:
        raw = _get(kcp, "spec", "machineTemplate", "infrastructureRef")
    ref = contract_ref(raw, "")
    return (ref.group, ref.kind, ref.name) if ref else None


def kubeadm_spec_reasons(
    before: Any, after: Any, before_version: str, after_version: str
) -> list[str]:
    """The ``matchesKubeadmConfig`` reasons, each naming the machines it concerns."""
    diffs = kubeadm_config_differences(
        before, after, before_version=before_version, after_version=after_version
    )
    out = [f"{p} (KubeadmConfig of the joined machines)" for p in diffs["join"]]
    return out + [f"{p} (KubeadmConfig of the first machine)" for p in diffs["init"]]


def exempt_drift(before: Any, after: Any) -> list[str]:
    """Changes of the exempted fields: they reach new machines only."""
    return [
        "spec.kubeadmConfigSpec." + ".".join(path) + " changed: exempt from the comparison"
        for path in KCP_EXEMPT
        if _get(before, *path) != _get(after, *path)
    ]


def _kcp_verdict(before: Obj, after: Obj, ctx: _Context) -> Verdict:
    """``UpToDate`` (filters.go l. 52-111) for the machines made from ``before``."""
    _same_api(before, after)
    reasons = []
    v_b, v_a = (
        _k8s_version(_get(before, "spec", "version")),
        _k8s_version(_get(after, "spec", "version")),
    )
    if v_b != v_a:
        reasons.append(f"spec.version {v_b} -> {v_a}")
    if _kcp_infra(before) != _kcp_infra(after):
        where = "spec.machineTemplate" + ("" if _version_of(after) == "v1beta1" else ".spec")
        reasons.append(f"{where}.infrastructureRef {_kcp_infra(before)} -> {_kcp_infra(after)}")
    spec_b, spec_a = (
        _get(before, "spec", "kubeadmConfigSpec"),
        _get(after, "spec", "kubeadmConfigSpec"),
    )
    reasons += kubeadm_spec_reasons(spec_b, spec_a, v_b, v_a)
    path = _rollout_after_path(after)
    reason, scheduled = rollout_after(
        ".".join(path), _get(before, *path), _get(after, *path), ctx.now, ctx.created, strict=True
    )
    if reason:
        reasons.append(reason)
    drift = exempt_drift(spec_b, spec_a) + _secret_drift(spec_a, _meta(after)[0], ctx.old, ctx.new)
    return _verdict(after, "", reasons, drift, scheduled)


# --- ClusterClass and the Clusters of a class ---------------------------------------------


def _class_entry(cc: Obj, group: str, name: str) -> Obj | None:
    for entry in _get(cc, "spec", "workers", group) or []:
        if isinstance(entry, dict) and entry.get("class") == name:
            return entry
    return None


def _node_ref(cc: Obj, node: Any) -> Ref | None:
    """A class's template reference held by ``node``: ``templateRef`` (v1beta2) or
    ``ref`` (v1beta1)."""
    if not isinstance(node, dict):
        return None
    return contract_ref(node.get("templateRef") or node.get("ref"), _meta(cc)[0])


def _worker_node(entry: Any, part: str) -> Any:
    """v1beta2 ``workers.*[].<part>``, v1beta1 ``workers.*[].template.<part>``."""
    return _get(entry, part) or _get(entry, "template", part)


def _templates(refs: tuple[Ref | None, Ref | None], ctx: _Context) -> tuple[Obj | None, Obj | None]:
    return resolve(refs[0], ctx.old), resolve(refs[1], ctx.new)


def _worker_class_changes(
    ccs: tuple[Obj, Obj], group: str, name: str, ctx: _Context
) -> tuple[list[str], list[str]]:
    """(reasons, drift) of one worker class. ``reconcileReferencedTemplate``
    (reconcile_state.go l. 1268-1324) rotates a MachineDeployment's template whose
    ``spec`` changed; a MachinePool's bootstrap object is patched in place
    (``updateMachinePool`` l. 1027-1033): no new data secret."""
    entries = (_class_entry(ccs[0], group, name), _class_entry(ccs[1], group, name))
    if entries[0] is None or entries[1] is None:
        return [], []
    reasons, drift = [], []
    where = f"spec.workers.{group}[{name}]"
    for part in ("bootstrap", "infrastructure"):
        refs = (
            _node_ref(ccs[0], _worker_node(entries[0], part)),
            _node_ref(ccs[1], _worker_node(entries[1], part)),
        )
        old, new = _templates(refs, ctx)
        what = f"{where}.{part} {refs[1]}"
        if old is None or new is None:
            drift.append(f"{what}: not in both streams, cannot tell")
        elif old.get("spec") != new.get("spec"):
            if group == "machineDeployments":
                reasons.append(f"{what}: spec changed, rotated by the topology controller")
            else:
                drift.append(f"{what}: spec changed, patched in place (no new data secret)")
    return reasons, drift


def _control_plane_changes(
    ccs: tuple[Obj, Obj], versions: tuple[str, str], ctx: _Context
) -> tuple[list[str], list[str]]:
    """(reasons, drift) of the class's control plane: the template's
    ``kubeadmConfigSpec`` is patched into the KubeadmControlPlane, where ``UpToDate``
    decides; the machine infrastructure template is rotated (reconcile_state.go l. 360-390)."""
    nodes = (_get(ccs[0], "spec", "controlPlane"), _get(ccs[1], "spec", "controlPlane"))
    refs = (_node_ref(ccs[0], nodes[0]), _node_ref(ccs[1], nodes[1]))
    old, new = _templates(refs, ctx)
    reasons, drift = [], []
    what = f"spec.controlPlane {refs[1]}"
    if old is not None and new is not None:
        path = ("spec", "template", "spec", "kubeadmConfigSpec")
        spec_b, spec_a = _get(old, *path), _get(new, *path)
        reasons += [f"{what}: {r}" for r in kubeadm_spec_reasons(spec_b, spec_a, *versions)]
        drift += [f"{what}: {d}" for d in exempt_drift(spec_b, spec_a)]
    elif refs[1] is not None:
        drift.append(f"{what}: not in both streams, cannot tell")
    infra = (
        _node_ref(ccs[0], _get(nodes[0], "machineInfrastructure")),
        _node_ref(ccs[1], _get(nodes[1], "machineInfrastructure")),
    )
    old, new = _templates(infra, ctx)
    if old is not None and new is not None and old.get("spec") != new.get("spec"):
        reasons.append(
            f"spec.controlPlane.machineInfrastructure {infra[1]}: spec changed, rotated by"
            " the topology controller"
        )
    return reasons, drift


def _class_drift(ccs: tuple[Obj, Obj]) -> list[str]:
    return [
        f"ClusterClass spec.{name} changed: the desired templates may change (not modelled)"
        for name in ("patches", "variables")
        if _get(ccs[0], "spec", name) != _get(ccs[1], "spec", name)
    ]


def _class_pairs(ctx: _Context) -> dict[Key, tuple[Obj, Obj]]:
    pairs = {}
    for key, cc in ctx.new.items():
        if key[0] == "ClusterClass" and key in ctx.old:
            _same_api(ctx.old[key], cc)
            pairs[key] = (ctx.old[key], cc)
    return pairs


def _class_verdicts(ctx: _Context) -> list[Verdict]:
    """One verdict per ClusterClass in both streams: whether the machines of every
    Cluster of the class are replaced, whatever Clusters the stream holds."""
    out = []
    for ccs in _class_pairs(ctx).values():
        reasons: list[str] = []
        drift: list[str] = []
        for group in ("machineDeployments", "machinePools"):
            for entry in _get(ccs[1], "spec", "workers", group) or []:
                r, d = _worker_class_changes(ccs, group, str(entry.get("class")), ctx)
                reasons, drift = reasons + r, drift + d
        r, d = _control_plane_changes(ccs, ("", ""), ctx)
        out.append(_verdict(ccs[1], "", reasons + r, drift + d + _class_drift(ccs), None))
    return out


def _cluster_class_key(cluster: Obj) -> Key:
    """v1beta1 ``spec.topology.class`` (+ ``classNamespace``), v1beta2
    ``spec.topology.classRef.name`` (+ ``namespace``); default: the Cluster's namespace."""
    namespace, _ = _meta(cluster)
    topology = _get(cluster, "spec", "topology") or {}
    ref = topology.get("classRef") or {}
    name = ref.get("name") or topology.get("class") or ""
    where = ref.get("namespace") or topology.get("classNamespace") or namespace
    return "ClusterClass", str(where), str(name)


def _topology_entry(cluster: Obj, group: str, name: str) -> Obj:
    for entry in _get(cluster, "spec", "topology", "workers", group) or []:
        if isinstance(entry, dict) and entry.get("name") == name:
            return entry
    return {}


def _cluster_verdicts(ctx: _Context) -> list[Verdict]:
    """Per topology entry of each Cluster in both streams whose class is in both."""
    pairs = _class_pairs(ctx)
    out = []
    for key, cluster in ctx.new.items():
        ccs = pairs.get(_cluster_class_key(cluster))
        if key[0] != "Cluster" or key not in ctx.old or ccs is None:
            continue
        out += _cluster_parts(ctx.old[key], cluster, ccs, ctx)
    return out


def _cluster_parts(before: Obj, after: Obj, ccs: tuple[Obj, Obj], ctx: _Context) -> list[Verdict]:
    versions = tuple(_k8s_version(_get(c, "spec", "topology", "version")) for c in (before, after))
    upgrade = (
        [f"spec.topology.version {versions[0]} -> {versions[1]}"] if len(set(versions)) > 1 else []
    )
    drift = _class_drift(ccs)
    out = []
    for group in ("machineDeployments", "machinePools"):
        for entry in _get(after, "spec", "topology", "workers", group) or []:
            name = str(entry.get("name"))
            reasons, more = _worker_class_changes(ccs, group, str(entry.get("class")), ctx)
            scheduled = None
            if group == "machineDeployments":
                reasons = upgrade + reasons
                reason, scheduled = rollout_after(
                    "rollout.after",
                    _get(_topology_entry(before, group, name), "rollout", "after"),
                    _get(entry, "rollout", "after"),
                    ctx.now,
                    ctx.created,
                    strict=False,
                )
                reasons += [reason] if reason else []
            part = f"workers.{group}[{name}]"
            out.append(_verdict(after, part, reasons, more + drift, scheduled))
    reasons, more = _control_plane_changes(ccs, (versions[0], versions[1]), ctx)
    path = ("spec", "topology", "controlPlane", "rollout", "after")
    reason, scheduled = rollout_after(
        ".".join(path), _get(before, *path), _get(after, *path), ctx.now, ctx.created, strict=True
    )
    reasons = upgrade + reasons + ([reason] if reason else [])
    out.append(_verdict(after, "controlPlane", reasons, more + drift, scheduled))
    return out


def rollouts(
    before: Iterable[Any],
    after: Iterable[Any],
    *,
    now: datetime.datetime | None = None,
    machines_created: datetime.datetime | None = None,
) -> list[Verdict]:
    """One ``Verdict`` per MachineDeployment, MachineSet, MachinePool and
    KubeadmControlPlane present in both streams, per ClusterClass present in both, and
    per topology entry of each Cluster of AFTER whose class is in both streams.
    ``now`` (default: the current time) decides whether a ``rollout.after`` has passed;
    ``machines_created``: see ``rollout_after``."""
    old, new = index(before), index(after)
    ctx = _Context(old, new, now or datetime.datetime.now(datetime.UTC), machines_created)
    rules = {
        "MachineDeployment": _md_verdict,
        "MachineSet": _ms_verdict,
        "MachinePool": _mp_verdict,
        "KubeadmControlPlane": _kcp_verdict,
    }
    out: list[Verdict] = []
    for key, obj in new.items():
        rule = rules.get(key[0])
        if rule is not None and key in old:
            out.append(rule(old[key], obj, ctx))
    out += _class_verdicts(ctx)
    out += _cluster_verdicts(ctx)
    return out


def rolling(before: Iterable[Any], after: Iterable[Any], **options: Any) -> set[str]:
    """The labels (``Kind/name``, ``Cluster/name:part``) of what rolls now."""
    return {v.label for v in rollouts(before, after, **options) if v.rolls}


def copy_objects(objects: Iterable[Any]) -> list[Any]:
    """A deep copy of a stream, to make an AFTER from a BEFORE in tests."""
    return copy.deepcopy(list(objects))
