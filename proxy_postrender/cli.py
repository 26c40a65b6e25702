"""Command-line entry point: a thin shell over :func:`proxy_postrender.engine.process`."""

from __future__ import annotations

import dataclasses
import datetime
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from proxy_postrender import __version__
from proxy_postrender.errors import EXIT_INPUT, EXIT_USAGE, ProxyPostrenderError, UsageError
from proxy_postrender.redact import Redactor

if TYPE_CHECKING:
    from proxy_postrender.credentials import CredentialSecret
    from proxy_postrender.profile import Profile
    from proxy_postrender.request import Request
    from proxy_postrender.scope import ClusterNetwork, NoProxyConfig

PROG = "proxy-postrender"
EXIT_INTERRUPTED = 130  # as a shell reports SIGINT
PROFILE_ENV = "PROXY_POSTRENDER_PROFILE"
LOG_ENV = "PROXY_POSTRENDER_LOG"


class Reporter:
    """Where messages go: stderr always, plus the log file, plus /dev/tty under Helm 4."""

    def __init__(self, log_file: str | None, redactor: Redactor) -> None:
        self.log_file = log_file
        self.redactor = redactor
        # Helm 4 runs plugins with HELM_PLUGIN_NAME set and swallows their stderr.
        self.helm_plugin = bool(os.environ.get("HELM_PLUGIN_NAME"))

    def _log(self, text: str) -> None:
        if not self.log_file:
            return
        path = Path(self.log_file).expanduser()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                for line in text.rstrip("\n").splitlines():
                    handle.write(f"{stamp} {line}\n")
        except OSError as exc:
            sys.stderr.write(f"{PROG}: warning: cannot write log file {path}: {exc.strerror}\n")

    def error(self, message: str) -> None:
        line = self.redactor.redact(f"{PROG}: error: {message}".replace("\n", " "))
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
        self._log(line)
        if self.helm_plugin:
            try:
                with open("/dev/tty", "w", encoding="utf-8") as tty:
                    tty.write(line + "\n")
            except OSError:
                pass

    def info(self, text: str, destination: str | None) -> None:
        text = self.redactor.redact(text)
        if destination == "-":
            sys.stderr.write(text)
        elif destination:
            fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
        self._log(text)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush of a broken or
    full stdout does not print a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _default_log_file() -> str | None:
    if os.environ.get(LOG_ENV):
        return os.environ[LOG_ENV]
    if os.environ.get("HELM_PLUGIN_NAME"):
        state = os.environ.get("XDG_STATE_HOME") or os.path.join("~", ".local", "state")
        return os.path.join(state, PROG, "helm-plugin.log")
    return None


_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.command(
    name=PROG,
    context_settings=_CONTEXT,
    epilog="Other commands: 'noproxy' prints the NO_PROXY of a profile (and its sources with "
    "--explain); 'noproxy check' tells how Go, curl, Python and wget read it. "
    "'kustomize-plugin install' makes it a kustomize exec plugin; 'patches' writes the "
    "change as kustomize patches for a Flux HelmRelease. "
    f"See '{PROG} noproxy --help'.",
)
@click.argument("profile_arg", metavar="[PROFILE]", required=False)
@click.option(
    "--profile",
    "profile_opt",
    metavar="FILE",
    help=f"ProxyProfile file (or a path argument, or ${PROFILE_ENV}).",
)
@click.option(
    "--profile-name", metavar="NAME", help="Pick one profile from a file that holds several."
)
@click.option("--http-proxy", metavar="URL", help="Override spec.httpProxy (works without a file).")
@click.option("--https-proxy", metavar="URL", help="Override spec.httpsProxy.")
@click.option("--no-proxy", metavar="LIST", help="Replace spec.noProxy (comma-separated).")
@click.option(
    "--on-conflict",
    type=click.Choice(["keep", "override", "fail"]),
    help="When a manifest already sets a variable (default: the profile's, else keep).",
)
@click.option(
    "--namespace",
    metavar="NS",
    help="The namespace of documents without one (default: $ARGOCD_APP_NAMESPACE).",
)
@click.option(
    "--forbid-plaintext-credentials",
    "forbid_plaintext",
    is_flag=True,
    help="Fail when the output would hold a proxy password in clear (a CI gate).",
)
@click.option("--remove", is_flag=True, help="Strip everything this tool injected earlier.")
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Print a unified diff of what would change (credentials masked) instead of manifests.",
)
@click.option(
    "--report",
    metavar="[FILE]",
    is_flag=False,
    flag_value="-",
    default=None,
    help="Summarise the changes on stderr (or in FILE).",
)
@click.option(
    "--log-file",
    metavar="PATH",
    help=f"Also append errors and summaries to PATH (created 0600; or ${LOG_ENV}).",
)
@click.version_option(__version__, prog_name=PROG)
def command(
    profile_arg: str | None,
    profile_opt: str | None,
    profile_name: str | None,
    http_proxy: str | None,
    https_proxy: str | None,
    no_proxy: str | None,
    on_conflict: str | None,
    namespace: str | None,
    forbid_plaintext: bool,
    remove: bool,
    show_diff: bool,
    report: str | None,
    log_file: str | None,
) -> None:
    """Inject HTTP(S) proxy settings into a rendered manifest stream (stdin to stdout)."""
    redactor = Redactor()
    for url in (http_proxy, https_proxy):
        if url:
            redactor.add_url(url)
    reporter = Reporter(log_file or _default_log_file(), redactor)
    try:
        run(
            profile_arg,
            profile_opt,
            profile_name,
            http_proxy,
            https_proxy,
            no_proxy,
            on_conflict,
            namespace or os.environ.get("ARGOCD_APP_NAMESPACE") or None,
            forbid_plaintext,
            remove,
            show_diff,
            report,
            reporter,
        )
    except ProxyPostrenderError as exc:
        reporter.error(str(exc))
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(EXIT_INPUT)
    except KeyboardInterrupt:
        reporter.error("interrupted; nothing was written")
        sys.exit(EXIT_INTERRUPTED)
    except MemoryError:
        reporter.error("out of memory")
        sys.exit(EXIT_INPUT)
    except OSError as exc:
        # writing the result failed (a full disk behind stdout, a closed terminal...)
        reporter.error(f"cannot write the output: {exc.strerror or type(exc).__name__}")
        _quiet_stdout()
        sys.exit(EXIT_INPUT)
    except Exception as exc:  # never a traceback with values in it
        reporter.error(f"internal error ({type(exc).__name__}); please report it")
        if os.environ.get("PROXY_POSTRENDER_DEBUG"):
            raise
        sys.exit(EXIT_INPUT)


def run(
    profile_arg: str | None,
    profile_opt: str | None,
    profile_name: str | None,
    http_proxy: str | None,
    https_proxy: str | None,
    no_proxy: str | None,
    on_conflict: str | None,
    namespace: str | None,
    forbid_plaintext: bool,
    remove: bool,
    show_diff: bool,
    report: str | None,
    reporter: Reporter,
) -> None:
    from proxy_postrender import engine, krm, profile, stream
    from proxy_postrender import report as report_mod
    from proxy_postrender.request import Request

    path = _profile_path(profile_arg, profile_opt)
    overrides = profile.Overrides(http_proxy, https_proxy, no_proxy, on_conflict, namespace)

    profile_warnings: list[str] = []  # shown with --report

    def request_for(function_config: Mapping[str, Any] | None) -> Request:
        if function_config is not None:
            loaded = profile.from_object(
                function_config, "functionConfig", os.environ, overrides, reporter.redactor
            )
        elif remove and path is None and not overrides.any_proxy():
            return Request(env=())
        else:
            loaded = profile.load(
                path, profile_name=profile_name, overrides=overrides, redactor=reporter.redactor
            )
        profile_warnings.extend(loaded.warnings)
        return request_from(loaded, remove=remove, forbid_plaintext=forbid_plaintext)

    data = sys.stdin.buffer.read()
    text, bom = stream.decode(data)
    if krm.is_resource_list(text):
        if show_diff:
            raise UsageError("--diff works on manifest streams, not on a KRM ResourceList")
        outcome = krm.run(text, request_for, reporter.redactor.redact)
        sys.stdout.buffer.write(stream.encode(outcome.text, bom))
        sys.stdout.buffer.flush()
        if outcome.error is not None:
            raise outcome.error
        if report is not None and outcome.result is not None:
            text = report_mod.render(outcome.result, removing=remove, warnings=profile_warnings)
            reporter.info(text, report)
        return
    request = request_for(None)
    result = engine.process(text, request)
    if show_diff:
        diff = reporter.redactor.redact(_unified_diff(text, result.text))
        out = diff.encode("utf-8", "surrogateescape")
    else:
        out = stream.encode(result.text, bom)
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    if report is not None:
        reporter.info(report_mod.render(result, removing=remove, warnings=profile_warnings), report)


def _profile_path(argument: str | None, option: str | None) -> str | None:
    """The profile file: --profile, a path argument, or $PROXY_POSTRENDER_PROFILE."""
    if argument and option:
        raise UsageError("give the profile once: either --profile FILE or a path argument")
    return option or argument or os.environ.get(PROFILE_ENV) or None


def request_from(
    loaded: Profile, *, remove: bool = False, forbid_plaintext: bool = False
) -> Request:
    """What a loaded profile asks of the engine (``remove``: take everything out)."""
    from proxy_postrender.request import Request

    return Request(
        env=() if remove else tuple(loaded.env_vars()),
        on_conflict=loaded.on_conflict,
        nodes=loaded.nodes,
        credentials=loaded.has_credentials,
        no_proxy=loaded.no_proxy_config,
        workloads=loaded.workloads,
        credential_secret=_credential_secret(loaded),
        forbid_plaintext=forbid_plaintext or loaded.credentials.forbid_plaintext,
        ca_pem=loaded.ca_pem,
        custom=loaded.custom,
        setter_ca=loaded.setter_ca,
    )


def _credential_secret(loaded: Profile) -> CredentialSecret | None:
    """The Secret of spec.credentials.createSecret, with the proxy URLs it serves."""
    from proxy_postrender.credentials import CredentialSecret

    if not loaded.credentials.create_secret or loaded.credentials.secret_ref is None:
        return None
    data = [("HTTP_PROXY", loaded.http_proxy), ("HTTPS_PROXY", loaded.https_proxy)]
    pairs = tuple((key, url) for key, url in data if url)
    return CredentialSecret(loaded.credentials.secret_ref, pairs)


def _lines(text: str) -> list[str]:
    """Lines ending in "\n" only (not at U+2028 and the other breaks str.splitlines knows)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _unified_diff(before: str, after: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        _lines(before),
        _lines(after),
        fromfile="manifests",
        tofile="manifests (proxy-postrender)",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def _no_proxy_config(
    path: str | None, profile_name: str | None, no_proxy: str | None, redactor: Redactor
) -> NoProxyConfig:
    from proxy_postrender import profile

    if path is None:
        if profile_name is not None:
            raise UsageError("--profile-name needs a profile file")
        return profile.no_proxy_from_flags(no_proxy)
    overrides = profile.Overrides(no_proxy=no_proxy)
    loaded = profile.load(path, profile_name=profile_name, overrides=overrides, redactor=redactor)
    return loaded.no_proxy_config


def _clusters(config: NoProxyConfig, source: str | None) -> list[ClusterNetwork]:
    """The networks of the Clusters in the stream (``source``: a file, ``-`` or None)."""
    from proxy_postrender import engine, stream

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
    from proxy_postrender import explain as explain_mod

    def run_it(redactor: Redactor) -> int:
        config = _no_proxy_config(
            _profile_path(profile_arg, profile_opt), profile_name, no_proxy, redactor
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
    from proxy_postrender import clients
    from proxy_postrender import explain as explain_mod

    def run_it(redactor: Redactor) -> int:
        config = _no_proxy_config(
            _profile_path(None, profile_opt), profile_name, no_proxy, redactor
        )
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
    from proxy_postrender import engine, profile, stream, targets, yamlio
    from proxy_postrender import patches as patches_mod

    def run_it(redactor: Redactor) -> int:
        overrides = profile.Overrides(http_proxy, https_proxy, no_proxy, on_conflict)
        loaded = profile.load(
            _profile_path(profile_arg, profile_opt),
            profile_name=profile_name,
            overrides=overrides,
            redactor=redactor,
        )
        # kubeadm objects cannot be patched by name and merge key: they are left out
        request = dataclasses.replace(request_from(loaded), nodes=None)
        text, _ = stream.decode(sys.stdin.buffer.read())
        result = engine.process(text, request)
        sys.stdout.write(patches_mod.render(patches_mod.flux_patches(result.text)))
        skipped = [
            obj
            for doc in yamlio.load_data(text)
            for _, obj in targets.walk_objects(doc)
            if targets.kubeadm_spec_path(obj) or targets.is_clusterclass(obj)
        ]
        if skipped:
            sys.stderr.write(
                f"{PROG}: warning: {len(skipped)} Cluster API kubeadm objects are not expressed "
                "as patches; render them in CI instead (docs/flux.md)\n"
            )
        made = [d for d in yamlio.load_data(result.text) if engine.generated_by(d)]
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
