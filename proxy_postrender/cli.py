"""Command-line entry point: a thin shell over :func:`proxy_postrender.engine.process`."""

from __future__ import annotations

import datetime
import os
import sys
from pathlib import Path

import click

from proxy_postrender import __version__
from proxy_postrender.errors import EXIT_INPUT, EXIT_USAGE, ProxyPostrenderError, UsageError
from proxy_postrender.redact import Redactor

PROG = "proxy-postrender"
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


def _default_log_file() -> str | None:
    if os.environ.get(LOG_ENV):
        return os.environ[LOG_ENV]
    if os.environ.get("HELM_PLUGIN_NAME"):
        state = os.environ.get("XDG_STATE_HOME") or os.path.join("~", ".local", "state")
        return os.path.join(state, PROG, "helm-plugin.log")
    return None


@click.command(
    name=PROG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
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
@click.option("--remove", is_flag=True, help="Strip everything this tool injected earlier.")
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
    remove: bool,
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
            remove,
            report,
            reporter,
        )
    except ProxyPostrenderError as exc:
        reporter.error(str(exc))
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(EXIT_INPUT)
    except MemoryError:
        reporter.error("out of memory")
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
    remove: bool,
    report: str | None,
    reporter: Reporter,
) -> None:
    from proxy_postrender import engine, profile, stream
    from proxy_postrender import report as report_mod
    from proxy_postrender.request import Request

    if profile_arg and profile_opt:
        raise UsageError("give the profile once: either --profile FILE or a path argument")
    path = profile_opt or profile_arg or os.environ.get(PROFILE_ENV) or None
    overrides = profile.Overrides(http_proxy, https_proxy, no_proxy, on_conflict)
    if remove and path is None and not overrides.any_proxy():
        request = Request(env=())
    else:
        loaded = profile.load(
            path, profile_name=profile_name, overrides=overrides, redactor=reporter.redactor
        )
        request = Request(
            env=() if remove else tuple(loaded.env_vars()),
            on_conflict=loaded.on_conflict,
            nodes=loaded.nodes,
            credentials=loaded.has_credentials,
            no_proxy=loaded.no_proxy_config,
        )
    data = sys.stdin.buffer.read()
    text, bom = stream.decode(data)
    result = engine.process(text, request)
    out = stream.encode(result.text, bom)
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    if report is not None:
        reporter.info(report_mod.render(result, removing=remove), report)


def main(argv: list[str] | None = None) -> None:
    try:
        command.main(args=argv, prog_name=PROG, standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        sys.stderr.write(f"{PROG}: error: aborted\n")
        sys.exit(EXIT_USAGE)
    except click.ClickException as exc:
        sys.stderr.write(f"{PROG}: error: {exc.format_message()} (see --help)\n")
        sys.exit(EXIT_USAGE)
