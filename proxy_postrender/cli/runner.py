"""The filter itself, without the command-line parser: read stdin, run the engine,
write stdout, report. The console script parses plain invocations itself
(:mod:`proxy_postrender.cli.options`) and gives everything else to click
(:mod:`proxy_postrender.cli.commands.main`); both end in :func:`execute`."""

from __future__ import annotations

import itertools
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.cli.options import LOG_ENV, PROFILE_ENV, Params
from proxy_postrender.cli.table import PROG
from proxy_postrender.errors import EXIT_INPUT, ProxyPostrenderError, UsageError
from proxy_postrender.redact import Redactor

if TYPE_CHECKING:
    from proxy_postrender.request import Request
    from proxy_postrender.yamltext import stream
    from proxy_postrender.yamltext.spool import Output

EXIT_INTERRUPTED = 130  # as a shell reports SIGINT


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
        import datetime  # lazy: start-up time
        from pathlib import Path

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


def execute(params: Params) -> None:
    """Run the filter with the main command's parameters; exit non-zero on any error."""
    redactor = Redactor()
    for url in (params.http_proxy, params.https_proxy):
        if url:
            redactor.add_url(url)
    reporter = Reporter(params.log_file or _default_log_file(), redactor)
    try:
        run(params, reporter)
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


def run(params: Params, reporter: Reporter) -> None:
    """The filter: stdin to stdout (raises ProxyPostrenderError on bad input)."""
    from proxy_postrender import engine
    from proxy_postrender.cli import krm
    from proxy_postrender.cli import report as report_mod
    from proxy_postrender.profile import loader, records
    from proxy_postrender.profile.request import to_request
    from proxy_postrender.request import Request
    from proxy_postrender.yamltext import spool, stream

    path = profile_path(params.profile_arg, params.profile_opt)
    namespace = params.namespace or os.environ.get("ARGOCD_APP_NAMESPACE") or None
    overrides = records.Overrides(
        params.http_proxy, params.https_proxy, params.no_proxy, params.on_conflict, namespace
    )
    remove, report = params.remove, params.report

    profile_warnings: list[str] = []  # shown with --report

    def request_for(function_config: Mapping[str, Any] | None) -> Request:
        if function_config is not None:
            loaded = loader.from_object(
                function_config, "functionConfig", os.environ, overrides, reporter.redactor
            )
        elif remove and path is None and not overrides.any_proxy():
            return Request(env=())
        else:
            loaded = loader.load(
                path,
                profile_name=params.profile_name,
                overrides=overrides,
                redactor=reporter.redactor,
            )
        profile_warnings.extend(loaded.warnings)
        return to_request(loaded, remove=remove, forbid_plaintext=params.forbid_plaintext)

    bom, head, source = _stdin_segments()
    text = ""  # the whole input, when it is read at once
    if params.show_diff or (head and head[-1].sniff_kind() == krm.KIND):
        # a diff, or a KRM ResourceList: the whole text in memory
        text = "".join(segment.text for segment in itertools.chain(head, source))
        if krm.is_resource_list(text):
            if params.show_diff:
                raise UsageError("--diff works on manifest streams, not on a KRM ResourceList")
            outcome = krm.run(text, request_for, reporter.redactor.redact)
            sys.stdout.buffer.write(stream.encode(outcome.text, bom))
            sys.stdout.buffer.flush()
            if outcome.error is not None:
                raise outcome.error
            if report is not None and outcome.result is not None:
                summary = report_mod.render(
                    outcome.result, removing=remove, warnings=profile_warnings
                )
                reporter.info(summary, report)
            return
        head, source = stream.split(text), iter(())
    request = request_for(None)
    with spool.Output(SPOOL_MEMORY) as out, spool.Output(SPOOL_MEMORY) as kept:
        twice = engine.needs_two_passes(request)
        result = engine.run(
            _segments(head, source, kept if twice else None),
            request,
            out,
            keep_objects=report is not None,
        )
        if params.show_diff:
            diff = reporter.redactor.redact(_unified_diff(text, out.text()))
            sys.stdout.buffer.write(diff.encode("utf-8", "surrogateescape"))
        else:
            out.copy_to(sys.stdout.buffer, stream.BOM if bom else "")
    sys.stdout.buffer.flush()
    if report is not None:
        reporter.info(report_mod.render(result, removing=remove, warnings=profile_warnings), report)


def _stdin_segments() -> tuple[bool, list[stream.Segment], Iterator[stream.Segment]]:
    """The stream on stdin: whether it starts with a byte-order mark, its segments up to
    the first with content, and the rest (read from stdin as they are consumed)."""
    from proxy_postrender.yamltext import spool, stream

    chunks = spool.read_text(sys.stdin.buffer)
    first = next(chunks, "")
    bom = first.startswith(stream.BOM)
    source = stream.split_chunks(itertools.chain([first[1:] if bom else first], chunks))
    head: list[stream.Segment] = []
    for segment in source:
        head.append(segment)
        if segment.has_content():
            break
    return bom, head, source


# Characters of output (and of input read twice) kept in memory; past that they wait in
# a temporary file until the run has succeeded.
SPOOL_MEMORY = 16 * 1024 * 1024


def _segments(
    head: list[stream.Segment], rest: Iterator[stream.Segment], kept: Output | None
) -> Callable[[], Iterable[stream.Segment]]:
    """The stream's segments for the engine: read once as they come, or, when the engine
    reads them twice, ``kept`` (a spool) and read back."""
    if kept is None:
        pending = [itertools.chain(head, rest)]
        return lambda: pending.pop()  # a second call is a bug: IndexError
    for segment in itertools.chain(head, rest):
        kept.add(segment)
    return kept.segments


def profile_path(argument: str | None, option: str | None) -> str | None:
    """The profile file: --profile, a path argument, or $PROXY_POSTRENDER_PROFILE."""
    if argument and option:
        raise UsageError("give the profile once: either --profile FILE or a path argument")
    return option or argument or os.environ.get(PROFILE_ENV) or None


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
