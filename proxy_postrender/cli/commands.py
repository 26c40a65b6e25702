"""Command-line entry point: a thin shell over :func:`proxy_postrender.engine.process`."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import click

from proxy_postrender import TYPE_CHECKING, __version__, structs
from proxy_postrender.cli import options
from proxy_postrender.cli.options import LOG_ENV
from proxy_postrender.cli.runner import PROG, Reporter, execute, profile_path, request_from
from proxy_postrender.errors import EXIT_INPUT, EXIT_USAGE, ProxyPostrenderError, UsageError
from proxy_postrender.redact import Redactor

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig


_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _click_option(option: options.Option) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The click option of one row of the main command's table."""
    names = (option.flag, option.dest)
    if option.kind == "flag":
        return click.option(*names, is_flag=True, help=option.help)
    if option.kind == "choice":
        return click.option(*names, type=click.Choice(list(option.choices)), help=option.help)
    if option.kind == "optional":
        return click.option(
            *names,
            metavar=option.metavar,
            is_flag=False,
            flag_value=option.flag_value,
            default=None,
            help=option.help,
        )
    return click.option(*names, metavar=option.metavar, help=option.help)


def _filter_options(func: Callable[..., None]) -> Callable[..., None]:
    """The main command's argument and options, from :data:`options.OPTIONS`."""
    for option in reversed(options.OPTIONS):
        func = _click_option(option)(func)
    return click.argument(options.POSITIONAL, metavar="[PROFILE]", required=False)(func)


@click.command(
    name=PROG,
    context_settings=_CONTEXT,
    epilog="Other commands: 'noproxy' prints the NO_PROXY of a profile (and its sources with "
    "--explain); 'noproxy check' tells how Go, curl, Python and wget read it. "
    "'kustomize-plugin install' makes it a kustomize exec plugin; 'patches' writes the "
    "change as kustomize patches for a Flux HelmRelease. "
    f"See '{PROG} noproxy --help'.",
)
@_filter_options
@click.version_option(__version__, prog_name=PROG)
def command(**params: Any) -> None:
    """Inject HTTP(S) proxy settings into a rendered manifest stream (stdin to stdout)."""
    execute(options.Params(**params))


def _no_proxy_config(
    path: str | None, profile_name: str | None, no_proxy: str | None, redactor: Redactor
) -> NoProxyConfig:
    from proxy_postrender.profile import loader

    if path is None:
        if profile_name is not None:
            raise UsageError("--profile-name needs a profile file")
        return loader.no_proxy_from_flags(no_proxy)
    overrides = loader.Overrides(no_proxy=no_proxy)
    loaded = loader.load(path, profile_name=profile_name, overrides=overrides, redactor=redactor)
    return loaded.no_proxy_config


def _clusters(config: NoProxyConfig, source: str | None) -> list[ClusterNetwork]:
    """The networks of the Clusters in the stream (``source``: a file, ``-`` or None)."""
    from proxy_postrender import engine
    from proxy_postrender.yamltext import stream

    if source is None or not config.discover:
        return []
    if source == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(source).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror or exc}") from None
    text, _ = stream.decode(data)
    return list(engine.discover_clusters(list(stream.split(text))).clusters.values())


def _guarded(func: Callable[[Redactor], int]) -> None:
    redactor = Redactor()
    reporter = Reporter(os.environ.get(LOG_ENV), redactor)
    try:
        sys.exit(func(redactor))
    except ProxyPostrenderError as exc:
        reporter.error(str(exc))
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(EXIT_INPUT)


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


@click.command(name="noproxy", context_settings=_CONTEXT)
@click.argument("profile_arg", metavar="[PROFILE]", required=False)
@_profile_options
@click.option("--explain", is_flag=True, help="Show every entry with its sources.")
@click.option(
    "--stream",
    "stream_source",
    metavar="FILE",
    help="Manifests whose Clusters add their networks ('-': stdin; default: stdin unless a tty).",
)
def noproxy_command(
    profile_arg: str | None,
    profile_opt: str | None,
    profile_name: str | None,
    no_proxy: str | None,
    cluster: str | None,
    explain: bool,
    stream_source: str | None,
) -> None:
    """Print the NO_PROXY the profile gives the workloads and each Cluster of the stream."""
    from proxy_postrender.noproxy import explain as explain_mod

    def run_it(redactor: Redactor) -> int:
        config = _no_proxy_config(
            profile_path(profile_arg, profile_opt), profile_name, no_proxy, redactor
        )
        source = stream_source
        if source is None and not sys.stdin.isatty():
            source = "-"
        found = explain_mod.scopes(config, _clusters(config, source))
        if cluster is not None:
            try:
                found = [explain_mod.pick(found, cluster)]
            except LookupError as exc:
                raise UsageError(str(exc)) from None
        if explain:
            sys.stdout.write("\n".join(explain_mod.explain(s) for s in found))
        elif len(found) == 1:
            sys.stdout.write(found[0].value + "\n")
        else:
            sys.stdout.write("".join(f"{s.label}: {s.value}\n" for s in found))
        return 0

    _guarded(run_it)


@click.command(name="noproxy check", context_settings=_CONTEXT)
@click.argument("destinations", metavar="[HOST[:PORT]|URL]...", nargs=-1)
@_profile_options
@click.option("--value", metavar="NO_PROXY", help="Check this exact value instead of a profile's.")
@click.option(
    "--stream", "stream_source", metavar="FILE", help="Manifests holding Clusters ('-': stdin)."
)
@click.option("--strict", is_flag=True, help="Exit 1 when the clients disagree on a destination.")
@click.option(
    "--clients",
    "compared",
    metavar="LIST",
    help="The clients whose disagreement --strict counts (default: go,curl,python,wget).",
)
def check_command(
    destinations: tuple[str, ...],
    profile_opt: str | None,
    profile_name: str | None,
    no_proxy: str | None,
    cluster: str | None,
    value: str | None,
    stream_source: str | None,
    strict: bool,
    compared: str | None,
) -> None:
    """Say, per destination, whether Go, curl, Python and wget go direct or via the proxy."""
    from proxy_postrender.noproxy import clients
    from proxy_postrender.noproxy import explain as explain_mod

    def run_it(redactor: Redactor) -> int:
        config = _no_proxy_config(profile_path(None, profile_opt), profile_name, no_proxy, redactor)
        found = explain_mod.scopes(config, _clusters(config, stream_source))
        try:
            chosen = explain_mod.pick(found, cluster) if cluster else found[0]
            wanted = [(clients.parse_destination(d), "") for d in destinations]
        except (LookupError, clients.DestinationError) as exc:
            raise UsageError(str(exc)) from None
        if not wanted:
            wanted = explain_mod.default_destinations(config, chosen.networks)
        names = clients.CLIENTS
        if compared is not None:
            names = tuple(n.strip() for n in compared.split(",") if n.strip())
        unknown = [n for n in names if n not in clients.CLIENTS]
        if unknown or not names:
            raise UsageError(
                f"--clients: unknown {', '.join(unknown) or 'empty list'} "
                f"(known: {', '.join(clients.CLIENTS)})"
            )
        checked = value if value is not None else chosen.value
        rows = explain_mod.check(checked, wanted, names)
        label = None if value is not None else f"NO_PROXY of {chosen.label}"
        sys.stdout.write(explain_mod.check_table(checked, rows, label))
        return 1 if strict and not all(row.agree for row in rows) else 0

    _guarded(run_it)


PLUGIN_PATH = ("proxy-postrender.io", "v1alpha1", "proxyprofile", "ProxyProfile")


def _plugin_home() -> Path:
    if os.environ.get("KUSTOMIZE_PLUGIN_HOME"):
        return Path(os.environ["KUSTOMIZE_PLUGIN_HOME"])
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(config) / "kustomize" / "plugin"


@click.command(name="kustomize-plugin install", context_settings=_CONTEXT)
@click.option(
    "--plugin-home",
    metavar="DIR",
    help="kustomize's plugin directory (default: $KUSTOMIZE_PLUGIN_HOME, else "
    "$XDG_CONFIG_HOME/kustomize/plugin).",
)
def plugin_install_command(plugin_home: str | None) -> None:
    """Install proxy-postrender as a kustomize exec plugin for kind ProxyProfile."""

    def run_it(redactor: Redactor) -> int:
        home = (Path(plugin_home).expanduser() if plugin_home else _plugin_home()).absolute()
        target = home.joinpath(*PLUGIN_PATH)
        # the interpreter this copy runs with: the plugin works whatever PATH kustomize has
        script = f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m proxy_postrender "$@"\n'
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(script, encoding="utf-8")
            target.chmod(0o755)
        except OSError as exc:
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
        sys.stdout.write(
            f"installed {target}\n"
            f"use: kubectl kustomize --enable-alpha-plugins DIR (with KUSTOMIZE_PLUGIN_HOME={home}"
            " unless that is the default), listing the ProxyProfile file under transformers:\n"
        )
        return 0

    _guarded(run_it)


@click.command(name="patches", context_settings=_CONTEXT)
@click.argument("profile_arg", metavar="[PROFILE]", required=False)
@click.option("--profile", "profile_opt", metavar="FILE", help="ProxyProfile file.")
@click.option("--profile-name", metavar="NAME", help="Pick one profile from the file.")
@click.option("--http-proxy", metavar="URL", help="Override spec.httpProxy.")
@click.option("--https-proxy", metavar="URL", help="Override spec.httpsProxy.")
@click.option("--no-proxy", metavar="LIST", help="Replace spec.noProxy (comma-separated).")
@click.option("--on-conflict", type=click.Choice(["keep", "override", "fail"]))
def patches_command(
    profile_arg: str | None,
    profile_opt: str | None,
    profile_name: str | None,
    http_proxy: str | None,
    https_proxy: str | None,
    no_proxy: str | None,
    on_conflict: str | None,
) -> None:
    """Print, for a rendered chart on stdin, the kustomize patches that make the same change
    (a Flux HelmRelease's spec.postRenderers[].kustomize.patches)."""
    from proxy_postrender import engine, targets
    from proxy_postrender.cli import patches as patches_mod
    from proxy_postrender.profile import loader
    from proxy_postrender.yamltext import libyaml, stream

    def run_it(redactor: Redactor) -> int:
        overrides = loader.Overrides(http_proxy, https_proxy, no_proxy, on_conflict)
        loaded = loader.load(
            profile_path(profile_arg, profile_opt),
            profile_name=profile_name,
            overrides=overrides,
            redactor=redactor,
        )
        # kubeadm objects cannot be patched by name and merge key: they are left out
        request = structs.replace(request_from(loaded), nodes=None)
        text, _ = stream.decode(sys.stdin.buffer.read())
        result = engine.process(text, request)
        sys.stdout.write(patches_mod.render(patches_mod.flux_patches(result.text)))
        skipped = [
            obj
            for doc in libyaml.load_data(text)
            for _, obj in targets.walk_objects(doc)
            if targets.kubeadm_spec_path(obj) or targets.is_clusterclass(obj)
        ]
        if skipped:
            sys.stderr.write(
                f"{PROG}: warning: {len(skipped)} Cluster API kubeadm objects are not expressed "
                "as patches; render them in CI instead (docs/flux.md)\n"
            )
        made = [d for d in libyaml.load_data(result.text) if engine.generated_by(d)]
        if made:
            sys.stderr.write(
                f"{PROG}: warning: the {len(made)} Secrets/ConfigMaps the profile makes are no "
                "patches; create them beside the HelmRelease (docs/flux.md)\n"
            )
        return 0

    _guarded(run_it)


SUBCOMMANDS: dict[tuple[str, ...], click.Command] = {
    ("patches",): patches_command,
    ("kustomize-plugin", "install"): plugin_install_command,
    ("noproxy", "check"): check_command,
    ("noproxy",): noproxy_command,
}


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    chosen: click.Command = command
    name = PROG
    for words, sub in SUBCOMMANDS.items():
        if tuple(args[: len(words)]) == words:
            chosen, args, name = sub, args[len(words) :], f"{PROG} {' '.join(words)}"
            break
    try:
        chosen.main(args=args, prog_name=name, standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        sys.stderr.write(f"{PROG}: error: aborted\n")
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        sys.stderr.write(f"{PROG}: error: {exc.format_message()} (see --help)\n")
        sys.exit(EXIT_USAGE)
