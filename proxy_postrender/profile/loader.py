"""Load a ProxyProfile from a file, a parsed object (a KRM functionConfig) or
flags: pick the profile, expand ``${VAR}`` references, apply the flags, and
assemble the Profile section by section, with the cross-field rules between
sections in a fixed order (the first error found is the one reported).

A profile is a Kubernetes-style object so that one file serves as a CLI
argument, a KRM ``functionConfig`` and a kustomize plugin config::

    apiVersion: proxy-postrender.io/v1alpha1
    kind: ProxyProfile
    metadata: {name: corp}
    spec:
      httpProxy: http://proxy.corp.example:3128
      httpsProxy: http://proxy.corp.example:3128
      noProxy: [internal.corp.example, 10.0.0.0/8]

The proxy URLs may reference environment variables as ``${NAME}`` (expand.py:
where the tables say so, and not in a profile that comes with the input unless
the user allows it). The fields are declared in tables.py; check.py validates
them, build.py turns them into settings, rules.py holds the rules between
fields. ``spec.targets`` is parsed by hand here (:func:`_targets`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

from proxy_postrender import structs, targets
from proxy_postrender.errors import ProfileError
from proxy_postrender.objects import Path, api_group
from proxy_postrender.pods.selection import CaMount
from proxy_postrender.profile import build, check, expand, rules, tables
from proxy_postrender.profile.check import validate_proxy_url
from proxy_postrender.profile.records import InputProfile, Overrides, Profile
from proxy_postrender.profile.tables import API_VERSION, KIND
from proxy_postrender.redact import Redactor, userinfo
from proxy_postrender.targets import TargetTable

if TYPE_CHECKING:
    from proxy_postrender.noproxy.scope import NoProxyConfig


def from_object(
    obj: Any,
    origin: str,
    environ: Mapping[str, str],
    overrides: Overrides | None = None,
    redactor: Redactor | None = None,
    base: str | None = None,
    source: InputProfile | None = None,
) -> Profile:
    """Build a Profile from a parsed ProxyProfile object (plus flag overrides);
    relative file names in it (spec.caBundle.file) are read from ``base``. ``source``:
    it comes with the input, and may read only what that allows."""
    overrides = overrides or Overrides()
    expand.no_references(overrides)
    denied = None if source is None else source.env_denied()
    check.mapping(tables.PROFILE, obj, origin)
    rules.api_version_and_kind(obj, origin, API_VERSION, KIND)
    metadata = obj.get("metadata") or {}
    check.mapping(tables.METADATA, metadata, f"{origin}: metadata")
    spec = obj.get("spec")
    check.mapping(tables.SPEC, spec, f"{origin}: spec")
    fields = expand.section(tables.SPEC, spec, f"{origin}: spec", environ, denied)
    if overrides.http_proxy is not None:
        fields["httpProxy"] = overrides.http_proxy
    if overrides.https_proxy is not None:
        fields["httpsProxy"] = overrides.https_proxy
    if overrides.no_proxy is not None:
        fields["noProxy"] = overrides.no_proxy
    if overrides.on_conflict is not None:
        fields["onConflict"] = overrides.on_conflict
    name = str(metadata.get("name") or "unnamed")
    inline: set[str] = {
        key
        for key in ("httpProxy", "httpsProxy")
        if isinstance(spec.get(key), str)
        and "${" not in spec[key]
        and key in fields
        and fields[key] == spec[key]
    }
    context = check.Context(environ, redactor or Redactor(), denied)
    loaded = _build(name, fields, origin, context, overrides.namespace, inline, base, source)
    if not fields.get("clusters"):
        return loaded

    def build_entry(merged: dict[str, Any], where: str, inlined: set[str]) -> Profile:
        return _build(name, merged, where, context, overrides.namespace, inlined, base, source)

    return _with_entries(loaded, fields, spec.get("clusters"), origin, context, build_entry)


def _with_entries(
    loaded: Profile,
    fields: Mapping[str, Any],
    raw: Any,
    origin: str,
    context: check.Context,
    build_entry: Callable[[dict[str, Any], str, set[str]], Profile],
) -> Profile:
    """``loaded`` with its spec.clusters entries (``raw``: as written, before ``${VAR}``
    expansion), and each entry's own warnings (an inline password in its URL) once."""
    from proxy_postrender.profile import fleet  # lazy: only a profile with spec.clusters

    entries = fleet.entries(fields, raw, origin, context, build_entry)
    said = [
        f"{entry.where}: {warning}"
        for entry in entries
        for warning in entry.profile.warnings
        if warning not in loaded.warnings
    ]
    return structs.replace(loaded, clusters=entries, warnings=(*loaded.warnings, *said))


def no_proxy_from_flags(no_proxy: str | None) -> NoProxyConfig:
    """NO_PROXY settings without a profile file: the entries given, default presets."""
    fields = {} if no_proxy is None else {"noProxy": no_proxy}
    return build.no_proxy(fields, "flags", check.Context({}))


def from_flags(overrides: Overrides, redactor: Redactor | None = None) -> Profile:
    """A profile made only of command-line flags."""
    fields: dict[str, Any] = {
        "httpProxy": overrides.http_proxy,
        "httpsProxy": overrides.https_proxy,
        "noProxy": overrides.no_proxy,
        "onConflict": overrides.on_conflict,
    }
    chosen = {k: v for k, v in fields.items() if v is not None}
    ctx = check.Context({}, redactor or Redactor())
    return _build("flags", chosen, "flags", ctx, overrides.namespace)


_TARGET_KEYS = frozenset(
    {"apiVersion", "kind", "podTemplate", "set", "name", "namespace", "selector", "embedded"}
)


def _targets(value: Any, where: str, secret: set[str]) -> TargetTable:
    """The built-in target table with the entries of spec.targets added (``secret``: the
    profile values no setter may write, see rules.secret_values)."""
    if value is None:
        return targets.BUILT_IN
    if not isinstance(value, list):
        raise ProfileError(f"{where}: must be a list")
    entries: list[targets.Target] = []
    for index, entry in enumerate(value):
        here = f"{where}[{index}]"
        if not isinstance(entry, Mapping):
            raise ProfileError(f"{here}: must be a mapping")
        preset = None
        if "preset" in entry:
            check.unknown_keys(entry, {"preset"}, here)
            presets = targets.TARGET_PRESETS
            if not isinstance(entry["preset"], str) or entry["preset"] not in presets:
                raise ProfileError(
                    f"{here}.preset: {entry['preset']!r} is not one of {', '.join(presets)}"
                )
            preset = str(entry["preset"])
            entry = presets[preset]
        note = targets.PRESET_NOTES.get(preset or "", "")
        for one in entry if isinstance(entry, list) else [entry]:
            try:
                made = _target(one, here, preset, secret)
            except targets.PathError as exc:
                raise ProfileError(f"{here}: {exc}") from None
            entries.append(structs.replace(made, note=note) if note else made)
    try:
        return targets.BUILT_IN.with_entries(entries)
    except targets.TargetConflict as conflict:  # compiled, one name has one type
        raise ProfileError(str(conflict)) from None


def _target(
    entry: Mapping[str, Any], here: str, preset: str | None, secret: set[str]
) -> targets.Target:
    """One spec.targets entry (a preset's, when ``preset`` names it)."""
    check.unknown_keys(entry, _TARGET_KEYS, here)
    api_version, kind = entry.get("apiVersion"), entry.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not kind:
        raise ProfileError(f"{here}: needs apiVersion and kind")
    group = api_group(api_version)
    if ("podTemplate" in entry) == ("set" in entry):
        raise ProfileError(f"{here}: give podTemplate or set (one of them)")
    select = _select(entry, here)
    if "podTemplate" in entry:
        if "embedded" in entry:
            raise ProfileError(f"{here}: embedded takes set, not podTemplate")
        path = _one_place(str(entry["podTemplate"]), f"{here}.podTemplate")
        spec = ((*path, "spec"),)
        return targets.Target(group, kind, targets.PODS, spec, origin=here, select=select)
    embedded = _embedded(entry.get("embedded"), f"{here}.embedded")
    fields_to_set = entry["set"]
    if not isinstance(fields_to_set, Mapping) or not fields_to_set:
        raise ProfileError(f"{here}.set: must map JSONPaths to profile values")
    pairs = []
    for path_text, source in fields_to_set.items():
        if source not in targets.FIELD_VALUES:
            raise ProfileError(
                f"{here}.set: {source!r} is not one of {', '.join(targets.FIELD_VALUES)}"
            )
        field_path = targets.parse_path(str(path_text))
        if embedded is None and field_path[0] in ("metadata", "apiVersion", "kind"):
            raise ProfileError(f"{here}.set: {path_text} is not the object's content")
        where = f"{here} (preset {preset})" if preset else f"{here}.set"
        rules.setter_value(str(source), str(path_text), kind, secret, where, preset=bool(preset))
        pairs.append((field_path, str(source)))
    return targets.Target(
        group,
        kind,
        targets.FIELDS,
        fields=tuple(pairs),
        origin=here,
        select=select,
        embedded=embedded,
    )


def _one_place(text: str, where: str) -> Path:
    path = targets.parse_path(text)
    if targets.ANY in path:
        raise ProfileError(f"{where}: {text} names every item of a list, not one place")
    return path


def _select(entry: Mapping[str, Any], here: str) -> targets.Select | None:
    """The objects of its kind a target takes (None: all of them)."""
    if not any(key in entry for key in ("name", "namespace", "selector")):
        return None
    name, namespace = entry.get("name"), entry.get("namespace")
    for key, value in (("name", name), ("namespace", namespace)):
        if value is not None and not (isinstance(value, str) and re.match(check.DNS_NAME, value)):
            raise ProfileError(f"{here}.{key}: must be a Kubernetes object name")
    labels: tuple[tuple[str, str], ...] = ()
    selector = entry.get("selector")
    if selector is not None:
        if not isinstance(selector, Mapping):
            raise ProfileError(f"{here}.selector: must be a mapping with matchLabels")
        check.unknown_keys(selector, {"matchLabels"}, f"{here}.selector")
        found = selector.get("matchLabels")
        if (
            not isinstance(found, Mapping)
            or not found
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in found.items())
        ):  # (a label's value is a string: `true` or `1` unquoted would never match)
            raise ProfileError(f"{here}.selector.matchLabels: must map label keys to string values")
        labels = tuple(sorted(found.items()))
    return targets.Select(name, namespace, labels)


def _embedded(value: Any, where: str) -> targets.Embedded | None:
    """Where the document the set paths apply in is held (None: the object itself)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ProfileError(f"{where}: must be a mapping with path, format and encoding")
    check.unknown_keys(value, {"path", "format", "encoding"}, where)
    if not isinstance(value.get("path"), str):
        raise ProfileError(f"{where}.path: the JSONPath of the string field is required")
    path = _one_place(value["path"], f"{where}.path")
    if path[0] in ("metadata", "apiVersion", "kind"):
        raise ProfileError(f"{where}.path: {value['path']} is not the object's content")
    form = value.get("format", "yaml")
    encoding = value.get("encoding", "none")
    if form not in targets.EMBEDDED_FORMATS:
        raise ProfileError(f"{where}.format: one of {', '.join(targets.EMBEDDED_FORMATS)}")
    if encoding not in targets.ENCODINGS:
        raise ProfileError(f"{where}.encoding: one of {', '.join(targets.ENCODINGS)}")
    return targets.Embedded(path, str(form), str(encoding))


def _build(
    name: str,
    fields: Mapping[str, Any],
    origin: str,
    ctx: check.Context,
    namespace: str | None = None,
    inline: set[str] | None = None,
    base: str | None = None,
    source: InputProfile | None = None,
) -> Profile:
    """Check the fields and assemble the Profile; proxy URLs are registered with
    ``ctx.redactor`` before any check of theirs."""
    redactor = ctx.redactor
    assert redactor is not None
    spec = f"{origin}: spec"
    credentials, info = build.credentials(build.spec_field("credentials", fields, origin, ctx), ctx)
    proxies: dict[str, str | None] = {}
    warnings: list[str] = []
    for key in ("httpProxy", "httpsProxy"):
        value = build.spec_field(key, fields, origin, ctx)
        if value is None:
            proxies[key] = None
            continue
        redactor.add_url(value)
        if info is not None:
            rules.no_user_with_from_env(value, f"{spec}.{key}")
            scheme, _, rest = value.partition("://")
            value = f"{scheme}://{info}@{rest}"
        elif userinfo(value) and key in (inline or set()):
            warnings.append(
                f"spec.{key} holds its credentials inline in the profile; prefer ${{VAR}} "
                "or spec.credentials.fromEnv"
            )
        proxies[key] = validate_proxy_url(value, f"{spec}.{key}")
    rules.a_proxy(proxies, origin)
    on_conflict = build.spec_field("onConflict", fields, origin, ctx)
    strict = build.spec_field("strict", fields, origin, ctx)
    nodes = build.nodes(build.spec_field("nodes", fields, origin, ctx))
    secret = rules.secret_values(credentials.secret_ref, proxies)
    custom = _targets(fields.get("targets"), f"{spec}.targets", secret)
    workloads = build.workloads(build.spec_field("workloads", fields, origin, ctx), namespace)
    if credentials.secret_ref:
        workloads = structs.replace(workloads, secret_ref=credentials.secret_ref)
    ca = build.spec_field("caBundle", fields, origin, ctx)
    pem = None if ca is None else build.ca_pem(ca, f"{spec}.caBundle", base, source)
    if ca is not None and ca["workloads"]:
        rules.ca_env(workloads.extra_env, ca["env"], origin)
        mount = CaMount(ca["configMapName"], ca["mountPath"])
        extra = tuple((n, mount.file) for n in ca["env"])
        workloads = structs.replace(workloads, ca=mount, extra_env=(*workloads.extra_env, *extra))
    if ca is not None and ca["nodes"] and nodes is not None:
        nodes = structs.replace(nodes, ca_bundle=pem)
    return Profile(
        name=name,
        http_proxy=proxies["httpProxy"],
        https_proxy=proxies["httpsProxy"],
        no_proxy_config=build.no_proxy(fields, origin, ctx),
        workloads=workloads,
        credentials=credentials,
        ca_pem=_workloads_ca(ca, pem),
        ca_public_roots=ca is not None and ca["mode"] == "merged",
        setter_ca=pem,
        custom=custom,
        warnings=tuple(warnings),
        on_conflict=on_conflict,
        strict=strict,
        nodes=nodes,
    )


def _workloads_ca(ca: dict[str, Any] | None, pem: str | None) -> str | None:
    """The CA the workloads' ConfigMaps carry (None: they get none)."""
    if ca is None or pem is None or not ca["workloads"]:
        return None
    return pem


def _parse_profile_file(path: str) -> list[Any]:
    try:
        # UTF-8 with its BOM taken off, as "utf-8-sig" would (whose codec module is one
        # more import at start-up)
        with open(path, encoding="utf-8") as handle:
            text = handle.read().removeprefix("\ufeff")
    except OSError as exc:
        raise ProfileError(f"cannot read profile {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ProfileError(f"profile {path} is not valid UTF-8") from None
    from proxy_postrender.yamltext import blockread, stream

    try:  # the common layout, without loading ruamel.yaml (start-up time)
        return [blockread.read(s.text)[1] for s in stream.split(text) if s.has_content()]
    except blockread.Declined:
        pass
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        docs = [d for d in YAML(typ="safe").load_all(text) if d is not None]
    except YAMLError as error:  # compiled, one name has one type (OSError above)
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise ProfileError(f"profile {path}: {problem}{where}") from None
    return docs


def load(
    path: str | None,
    *,
    profile_name: str | None = None,
    overrides: Overrides | None = None,
    environ: Mapping[str, str] | None = None,
    redactor: Redactor | None = None,
    source: InputProfile | None = None,
) -> Profile:
    """Load the profile from ``path`` (or from flags alone when ``path`` is None);
    ``source``: the file comes with the input (its directory is ``source.directory``).

    Proxy URLs are registered with ``redactor`` as soon as they are known, so
    that even a validation error about them is masked.
    """
    environ = os.environ if environ is None else environ
    overrides = overrides or Overrides()
    expand.no_references(overrides)
    if path is None:
        if profile_name is not None:
            raise ProfileError("--profile-name needs a profile file")
        if not overrides.any_proxy():
            raise ProfileError(
                "no profile: pass a ProxyProfile file (--profile FILE, a path argument or "
                "PROXY_POSTRENDER_PROFILE) or --http-proxy/--https-proxy"
            )
        return from_flags(overrides, redactor)
    docs = _parse_profile_file(path)
    profiles = [d for d in docs if isinstance(d, Mapping) and d.get("kind") == KIND]
    if not profiles:
        raise ProfileError(f"profile {path}: no object of kind {KIND} found")
    if profile_name is not None:
        chosen = [p for p in profiles if (p.get("metadata") or {}).get("name") == profile_name]
        if not chosen:
            names = ", ".join(str((p.get("metadata") or {}).get("name")) for p in profiles)
            raise ProfileError(f"profile {path}: no {KIND} named {profile_name!r} (found: {names})")
        if len(chosen) > 1:
            raise ProfileError(f"profile {path}: several {KIND} objects named {profile_name!r}")
        obj = chosen[0]
    elif len(profiles) > 1:
        names = ", ".join(str((p.get("metadata") or {}).get("name")) for p in profiles)
        raise ProfileError(
            f"profile {path}: {len(profiles)} profiles ({names}); pick one with --profile-name"
        )
    else:
        obj = profiles[0]
    name = (obj.get("metadata") or {}).get("name")
    origin = f"profile {path}" + (f" ({name})" if name else "")
    base = os.path.dirname(path) if source is None else source.directory
    return from_object(obj, origin, environ, overrides, redactor, base, source)
