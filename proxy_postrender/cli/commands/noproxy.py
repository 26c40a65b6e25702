"""The ``noproxy`` and ``noproxy check`` subcommands: the NO_PROXY a profile gives,
and how each HTTP client reads it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.cli import table
from proxy_postrender.cli.commands import base
from proxy_postrender.cli.runner import profile_path
from proxy_postrender.errors import UsageError

if TYPE_CHECKING:
    from proxy_postrender.noproxy.discovery import ServiceRef
    from proxy_postrender.noproxy.explain import Scope
    from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
    from proxy_postrender.profile.records import ClusterEntry
    from proxy_postrender.redact import Redactor
    from proxy_postrender.yamltext.stream import Segment


class _Settings:
    """The NO_PROXY settings of a profile: the defaults', and each spec.clusters entry's."""

    def __init__(self, config: NoProxyConfig, entries: tuple[ClusterEntry, ...] = ()) -> None:
        self.config = config
        self.entries = entries

    def entry_of(self, net: ClusterNetwork) -> tuple[NoProxyConfig, str | None]:
        """The settings the nodes of ``net``'s Cluster get, and the entry's name."""
        from proxy_postrender.noproxy import fleet

        index = fleet.choose([entry.match for entry in self.entries], net)
        if index == fleet.DEFAULTS:
            return self.config, None
        entry = self.entries[index]
        return entry.profile.no_proxy_config, entry.where

    def named(self, cluster: str | None) -> ClusterEntry | None:
        """The first entry whose match.names name ``cluster`` (--cluster)."""
        if cluster is None:
            return None
        from proxy_postrender.noproxy import fleet

        entries = self.entries
        chosen = fleet.named_by([entry.match for entry in entries], cluster)
        configs = {entries[i].profile.no_proxy_config for i in chosen}
        if len(configs) > 1:
            raise UsageError(fleet.ambiguous(cluster, [e.where for e in entries], chosen))
        return entries[chosen[0]] if chosen else None


def _settings(
    path: str | None, profile_name: str | None, no_proxy: str | None, redactor: Redactor
) -> _Settings:
    from proxy_postrender.cli import runner
    from proxy_postrender.profile import loader, records

    no_proxy = no_proxy or runner.environment_value(runner.NO_PROXY_ENV)
    if path is None:
        if profile_name is not None:
            raise UsageError("--profile-name needs a profile file")
        return _Settings(loader.no_proxy_from_flags(no_proxy))
    overrides = records.Overrides(no_proxy=no_proxy)
    loaded = loader.load(path, profile_name=profile_name, overrides=overrides, redactor=redactor)
    return _Settings(loaded.no_proxy_config, loaded.entries())


def _scopes(
    settings: _Settings,
    segments: list[Segment],
    services: list[tuple[str, str]],
    cluster: str | None,
    namespace: str | None = None,
) -> list[Scope]:
    """The scopes to print: every one, or with ``cluster`` that Cluster's nodes' (or,
    when the stream does not hold it, the workloads' with the entry that names it)."""
    from proxy_postrender.noproxy import explain as explain_mod

    named = settings.named(cluster)
    config = settings.config if named is None else named.profile.no_proxy_config
    clusters, unconfigured, notes = _clusters(settings.config, segments, namespace)
    found = explain_mod.scopes(
        config,
        clusters,
        services,
        settings.entry_of if settings.entries else None,
        None if named is None else named.where,
        unconfigured,
    )
    if notes:  # what the nodes' distribution adds to NO_PROXY itself (RKE2, K3s)
        from proxy_postrender.structs import replace

        found = [replace(s, notes=(*s.notes, *notes.get(s.label, ()))) for s in found]
    if cluster is None:
        return found
    try:
        return [explain_mod.pick(found, cluster)]
    except LookupError as exc:
        if named is None and (segments or not settings.entries):
            raise UsageError(str(exc)) from None
    if named is not None:
        return [found[0]]
    from proxy_postrender.structs import replace

    said = (
        f"--cluster {cluster}: no spec.clusters entry names it (in match.names), and no "
        "stream holds it: these are the defaults"
    )
    return [replace(found[0], warnings=(*found[0].warnings, said))]


def _segments(source: str | None) -> list[Segment]:
    """The documents of the stream (``source``: a file, ``-`` or None for none)."""
    from proxy_postrender.yamltext import stream

    if source is None:
        return []
    if source == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror or exc}") from None
    text, _ = stream.decode(data)
    return stream.split(text)


def _clusters(
    config: NoProxyConfig, segments: list[Segment], namespace: str | None = None
) -> tuple[list[ClusterNetwork], dict[str, str], dict[str, tuple[str, ...]]]:
    """The networks of the Clusters in the stream (``namespace``: that of the objects
    without one), those (by label) none of whose nodes the tool configures, and what
    their providers say about NO_PROXY."""
    from proxy_postrender.nodes import uncovered
    from proxy_postrender.noproxy.discovery import discover_stream

    if not segments or not config.discover:
        return [], {}, {}
    index = discover_stream(segments, namespace)
    found = index.bootstraps
    clusters = list(index.clusters.values())
    if found is None:  # (the discovery always reads them)
        return clusters, {}, {}
    return clusters, uncovered.unconfigured(found), uncovered.provider_notes(found)


def _services(segments: list[Segment], namespace: str | None = None) -> tuple[ServiceRef, ...]:
    """The Services of the stream (``namespace``: that of the documents without one); a
    name no Service can have is an InputError naming its document."""
    from proxy_postrender.noproxy.discovery import discover_services

    return discover_services(segments, namespace) if segments else ()


def _shown(found: Scope) -> str:
    """A scope's value, or why no value is written for it."""
    if found.unconfigured is None:
        return found.value
    from proxy_postrender.noproxy import explain as explain_mod

    return explain_mod.not_written(found)


def _preset_on(config: NoProxyConfig) -> bool:
    from proxy_postrender.noproxy import presets

    return presets.SERVICES in config.presets


def _service_keys(config: NoProxyConfig, services: tuple[ServiceRef, ...]) -> list[tuple[str, str]]:
    """The ``(namespace, name)`` of the Services, when the ``services`` preset is on."""
    return [(s.namespace, s.name) for s in services] if _preset_on(config) else []


def implied_stream() -> str | None:
    """The stream ``noproxy`` reads without --stream: stdin when it is redirected from a
    regular file (``< cluster.yaml``: it ends), else none. A terminal, a pipe or a
    socket is read only when ``--stream -`` asks for it: a CI step's stdin may be a
    pipe that is never closed, and waiting on it would never end."""
    import os
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):  # no stdin at all, or a closed one
        return None
    return "-" if stat.S_ISREG(mode) else None


_PROFILE_OPTIONS = [
    click.option("--profile", "profile_opt", metavar="FILE", help="ProxyProfile file."),
    click.option("--profile-name", metavar="NAME", help="Pick one profile from the file."),
    click.option("--no-proxy", metavar="LIST", help="Replace spec.noProxy (comma-separated)."),
    click.option(
        "--cluster",
        metavar="[NAMESPACE/]NAME",
        help="Use the NO_PROXY of this Cluster of the stream.",
    ),
]


def _profile_options(func: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(_PROFILE_OPTIONS):
        func = option(func)
    return func


@base.command(("noproxy",))
@click.argument("profile_arg", metavar="[PROFILE]", required=False)
@_profile_options
@click.option("--explain", is_flag=True, help="Show every entry with its sources.")
@click.option(
    "--stream",
    "stream_source",
    metavar="FILE",
    help="Manifests whose Clusters add their networks, and whose Services the `services` "
    "preset names ('-': stdin, also a pipe; without --stream, stdin only when it is "
    "redirected from a file).",
)
@click.option(
    "--namespace",
    metavar="NS",
    help="The namespace of the stream's objects that name none (as the main command's).",
)
def noproxy_command(
    profile_arg: str | None,
    profile_opt: str | None,
    profile_name: str | None,
    no_proxy: str | None,
    cluster: str | None,
    explain: bool,
    stream_source: str | None,
    namespace: str | None,
) -> None:
    """Print the NO_PROXY the profile gives the workloads and each Cluster of the stream."""
    from proxy_postrender.noproxy import explain as explain_mod

    def run_it(redactor: Redactor) -> int:
        misread = profile_arg and table.misread_profile(profile_arg, ("noproxy",))
        if misread:
            raise UsageError(misread)
        settings = _settings(
            profile_path(profile_arg, profile_opt), profile_name, no_proxy, redactor
        )
        config = settings.config
        source = stream_source if stream_source is not None else implied_stream()
        segments = _segments(source)
        # the Services are read only for the preset: nothing else here names them
        services = (
            _service_keys(config, _services(segments, namespace)) if _preset_on(config) else []
        )
        found = _scopes(settings, segments, services, cluster, namespace)
        if explain:
            sys.stdout.write("\n".join(explain_mod.explain(s) for s in found))
        elif len(found) == 1 and found[0].unconfigured is not None:
            # nothing on stdout: no NO_PROXY is written for these nodes
            said = explain_mod.not_written(found[0])
            sys.stderr.write(f"proxy-postrender: {found[0].label}: {said}\n")
        elif len(found) == 1:
            sys.stdout.write(found[0].value + "\n")
        else:
            sys.stdout.write("".join(f"{s.label}: {_shown(s)}\n" for s in found))
        return 0

    base.guarded(run_it)


@base.command(("noproxy", "check"))
@click.argument("destinations", metavar="[HOST[:PORT]|URL]...", nargs=-1)
@_profile_options
@click.option("--value", metavar="NO_PROXY", help="Check this exact value instead of a profile's.")
@click.option(
    "--stream",
    "stream_source",
    metavar="FILE",
    help="Manifests holding Clusters and Services ('-': stdin); without destinations, "
    "the short names of its Services are checked.",
)
@click.option(
    "--namespace",
    metavar="NS",
    help="The namespace of the stream's Services that name none (a Helm release's).",
)
@click.option("--strict", is_flag=True, help="Exit 1 when the clients disagree on a destination.")
@click.option(
    "--clients",
    "compared",
    metavar="LIST",
    help="The clients whose disagreement --strict counts (default: go,curl,requests,wget; "
    "also curl-8.9, urllib, java, undici, proxy-from-env; python means requests).",
)
def check_command(
    destinations: tuple[str, ...],
    profile_opt: str | None,
    profile_name: str | None,
    no_proxy: str | None,
    cluster: str | None,
    value: str | None,
    stream_source: str | None,
    namespace: str | None,
    strict: bool,
    compared: str | None,
) -> None:
    """Say, per destination, whether Go, curl (7.87-8.8 and 8.9-8.17), Python (requests
    and urllib), wget, Java and the Node.js clients (undici, proxy-from-env) go direct
    or via the proxy."""
    from proxy_postrender.noproxy import clients
    from proxy_postrender.noproxy import explain as explain_mod

    def run_it(redactor: Redactor) -> int:
        settings = _settings(profile_path(None, profile_opt), profile_name, no_proxy, redactor)
        config = settings.config
        segments = _segments(stream_source)
        services = _services(segments, namespace)
        keys = _service_keys(config, services)
        chosen = _scopes(settings, segments, keys, cluster, namespace)[0]
        if chosen.unconfigured is not None and value is None:
            raise UsageError(
                f"--cluster {cluster}: {explain_mod.not_written(chosen)}: no node NO_PROXY "
                "to check (give one with --value)"
            )
        try:
            wanted = [(clients.parse_destination(d), "") for d in destinations]
        except (LookupError, clients.DestinationError) as exc:
            raise UsageError(str(exc)) from None
        if not wanted:
            named = [(s.namespace, s.name, s.port) for s in services]
            wanted = explain_mod.default_destinations(config, chosen.networks, named)
        names = clients.CLIENTS
        if compared is not None:
            listed = (n.strip() for n in compared.split(","))
            names = tuple(clients.ALIASES.get(n, n) for n in listed if n)
        known = (*clients.CLIENTS, *clients.EXTRA_CLIENTS)
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            raise UsageError(
                f"--clients: unknown {', '.join(unknown) or 'empty list'} "
                f"(known: {', '.join(known)})"
            )
        checked = value if value is not None else chosen.value
        rows = explain_mod.check(checked, wanted, names)
        label = None if value is not None else f"NO_PROXY of {chosen.label}"
        sys.stdout.write(explain_mod.check_table(checked, rows, label))
        return 1 if strict and not all(row.agree for row in rows) else 0

    base.guarded(run_it)
