"""The filter itself, without the command-line parser: read stdin, run the engine,
write stdout, report. The console script parses plain invocations itself
(:mod:`proxy_postrender.cli.options`) and gives everything else to click
(:mod:`proxy_postrender.cli.commands.main`); both end in :func:`execute`.

Every message that leaves the process goes through one :class:`Reporter` (made
by the console script before it reads argv) and its redactor, and every command
runs under :func:`guard`: an error is one line, redacted, with the spec's exit
code. Output is written by :func:`commit`, after every output target is open."""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, BinaryIO, TextIO

from proxy_postrender.cli.options import KRM_KIND, KUSTOMIZE_ROOT, LOG_ENV, PROFILE_ENV, Params
from proxy_postrender.cli.table import PROG
from proxy_postrender.errors import EXIT_INPUT, ProxyPostrenderError, UsageError
from proxy_postrender.redact import Redactor

if TYPE_CHECKING:
    from proxy_postrender.profile.records import InputProfile, Profile
    from proxy_postrender.request import Request
    from proxy_postrender.result import Result
    from proxy_postrender.yamltext import stream
    from proxy_postrender.yamltext.spool import Output

EXIT_INTERRUPTED = 130  # as a shell reports SIGINT
# --diff exits as `git diff --exit-code` and diff(1): 0 no change, 1 changes, 2 and up an
# error; so the errors that exit 1 otherwise (the stream, the output) exit 3 there, and
# usage and profile errors keep their 2.
EXIT_DIFF_CHANGES = 1
EXIT_DIFF_INPUT = 3
TTY = "/dev/tty"  # where Helm 4 plugins show errors besides the log (Helm hides stderr)
# The proxy values from the environment (flags win): the Argo CD plugin passes them
# so, because arguments show in ps and the environment does not.
HTTP_PROXY_ENV = "PROXY_POSTRENDER_HTTP_PROXY"
HTTPS_PROXY_ENV = "PROXY_POSTRENDER_HTTPS_PROXY"
NO_PROXY_ENV = "PROXY_POSTRENDER_NO_PROXY"
_URL_FLAGS = ("--http-proxy", "--https-proxy")
# What a Helm 4 plugin writes for an empty render (a chart of CRDs only, every template
# disabled): Helm 4.1 refuses blank post-renderer output ("produced empty output") and
# reads a stream of only a comment as no documents (tests/test_helm_e2e.py).
HELM4_EMPTY = "# proxy-postrender: the render was empty\n"


def environment_value(name: str) -> str | None:
    return os.environ.get(name) or None


def with_environment(params: Params) -> Params:
    """``params`` with the proxy values of the environment where no flag gives one."""
    from proxy_postrender.structs import replace

    return replace(
        params,
        http_proxy=params.http_proxy or environment_value(HTTP_PROXY_ENV),
        https_proxy=params.https_proxy or environment_value(HTTPS_PROXY_ENV),
        no_proxy=params.no_proxy or environment_value(NO_PROXY_ENV),
    )


def flag_password_warnings(http_proxy: str | None, https_proxy: str | None) -> list[str]:
    """The warning of each proxy flag whose URL carries a password: any user can read a
    process's arguments with ps (the profile's own warning says so of a file)."""
    from proxy_postrender.redact import userinfo

    found = []
    for flag, value, env in (
        ("--http-proxy", http_proxy, HTTP_PROXY_ENV),
        ("--https-proxy", https_proxy, HTTPS_PROXY_ENV),
    ):
        info = userinfo(value) if value else None
        if info and info.partition(":")[2]:
            found.append(
                f"{flag} holds its credentials inline on the command line, where ps shows "
                f"them to every user; prefer ${env}, or ${{VAR}} or "
                "spec.credentials.fromEnv in a profile"
            )
    return found


def _argv_secrets(args: Sequence[str]) -> Iterator[str]:
    """The values in argv that may hold credentials: the proxy flags' values, and any
    word shaped like a URL with user-info (an extra argument, another option's value)."""
    previous = ""
    for arg in args:
        name, eq, value = arg.partition("=")
        if previous in _URL_FLAGS:
            yield arg  # --http-proxy VALUE, whatever its shape
        elif eq and name in _URL_FLAGS:
            yield value
        elif "://" in arg and "@" in arg.split("://", 1)[1]:
            yield value if eq and name.startswith("-") else arg
        previous = arg


def _argv_log_file(args: Sequence[str]) -> str | None:
    """The --log-file of argv, read before any parser (a usage error is logged too)."""
    for index, arg in enumerate(args):
        if arg == "--log-file" and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--log-file="):
            return arg.partition("=")[2]
    return None


def _default_log_file() -> str | None:
    if os.environ.get(LOG_ENV):
        return os.environ[LOG_ENV]
    if os.environ.get("HELM_PLUGIN_NAME"):
        state = os.environ.get("XDG_STATE_HOME") or os.path.join("~", ".local", "state")
        return os.path.join(state, PROG, "helm-plugin.log")
    return None


class Reporter:
    """Where messages go: stderr always, plus the log file, plus the terminal under
    Helm 4; every one is masked and escaped by :attr:`redactor` on the way."""

    def __init__(self, log_file: str | None, redactor: Redactor) -> None:
        self.log_file = log_file
        self.redactor = redactor
        self.committed = False  # whether the output went out in full (see commit)
        # Helm 4 runs plugins with HELM_PLUGIN_NAME set and swallows their stderr.
        self.helm_plugin = bool(os.environ.get("HELM_PLUGIN_NAME"))
        # whether the console script paused the garbage collector for start-up (see
        # :meth:`start_work`)
        self.collector_paused = False

    @classmethod
    def for_argv(cls, args: Sequence[str], *, log_from_argv: bool = True) -> Reporter:
        """The reporter of a process started with ``args``: it knows the credentials
        in argv and in the environment before anything is parsed (``log_from_argv``:
        whether a --log-file in ``args`` counts)."""
        redactor = Redactor()
        redactor.add_urls(_argv_secrets(args))
        redactor.add_urls(environment_value(n) for n in (HTTP_PROXY_ENV, HTTPS_PROXY_ENV))
        named = _argv_log_file(args) if log_from_argv else None
        return cls(named or _default_log_file(), redactor)

    def pause_collector(self) -> None:
        """Start-up of a process of its own (the console script): the modules, classes
        and the profile it makes live to the end of the run, and the garbage collector,
        which runs every few hundred objects made, need not walk them (about 5 % of a
        plain run's start-up). :meth:`start_work` starts it again."""
        import gc

        gc.disable()
        self.collector_paused = True

    def start_work(self) -> None:
        """Start-up is over (the engine and the profile are loaded): what it made is
        frozen out of the collector's sight (``gc.freeze``) and the collector runs
        again, for the objects of the run itself."""
        if self.collector_paused:
            import gc

            self.collector_paused = False
            gc.freeze()
            gc.enable()

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
            shown = self.redactor.message(str(path))
            sys.stderr.write(f"{PROG}: warning: cannot write log file {shown}: {exc.strerror}\n")

    def clean(self, message: str) -> str:
        """A message as it may leave the process: one line, credentials masked, control
        characters escaped (also for KRM results)."""
        return self.redactor.message(message)

    def _stderr(self, text: str) -> None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # stderr closed: the log and the exit code remain

    def error(self, message: str) -> None:
        line = self.clean(f"{PROG}: error: {message}")
        self._stderr(line + "\n")
        self._log(line)
        if self.helm_plugin:
            try:
                with open(TTY, "w", encoding="utf-8") as tty:
                    tty.write(line + "\n")
            except OSError:
                pass

    def note(self, message: str) -> None:
        """A line for the person at the terminal: stderr only, not the log."""
        self._stderr(self.clean(f"{PROG}: {message}") + "\n")

    def warning(self, message: str) -> None:
        line = self.clean(f"{PROG}: warning: {message}")
        self._stderr(line + "\n")
        self._log(line)

    def info(self, text: str, destination: str | None, handle: TextIO | None = None) -> None:
        """A summary (``--report``): on stderr (``-``) or into ``handle`` (see
        :func:`open_report`), and into the log."""
        text = self.redactor.text(text)
        if handle is not None:
            with handle:
                handle.write(text)
        elif destination == "-":
            self._stderr(text)
        self._log(text)


def open_report(destination: str | None) -> TextIO | None:
    """The ``--report`` file, created 0600 and opened before any output is written (a
    path that cannot be written is an error while stdout is still empty)."""
    if destination is None or destination == "-":
        return None
    try:
        fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as exc:
        raise UsageError(f"--report: cannot write {destination}: {exc.strerror or exc}") from None
    return os.fdopen(fd, "w", encoding="utf-8")


# --- one error path, and the output written in one go ---------------------------------


class Interrupted(Exception):
    """A signal arrived while the output was being written (see :func:`commit`)."""

    def __init__(self, signum: int, complete: bool) -> None:
        super().__init__(signum)
        self.signum = signum
        self.complete = complete  # whether the whole output was written first


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush of a broken or
    full stdout does not print a traceback."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def guard(
    reporter: Reporter, work: Callable[[], int | None], *, input_code: int = EXIT_INPUT
) -> int:
    """Run a command's work: its exit code, or, on any error, one redacted line through
    ``reporter`` and SystemExit with the spec's exit code (never a traceback);
    ``input_code`` replaces the code of input and output errors (``EXIT_INPUT``)."""
    try:
        return work() or 0
    except ProxyPostrenderError as exc:
        reporter.error(str(exc))
        code = exc.exit_code
    except BrokenPipeError:
        _quiet_stdout()
        code = EXIT_INPUT
    except KeyboardInterrupt:
        done = (
            "the output had been written in full" if reporter.committed else "nothing was written"
        )
        reporter.error(f"interrupted; {done}")
        code = EXIT_INTERRUPTED
    except Interrupted as exc:
        if exc.complete:
            reporter.error("interrupted; the output had been written in full")
        else:
            reporter.error("interrupted again while writing the output: stdout is incomplete")
        code = 128 + exc.signum
    except MemoryError:
        reporter.error("out of memory")
        code = EXIT_INPUT
    except OSError as exc:
        # writing the result failed (a full disk behind stdout, a closed terminal...)
        reporter.error(f"cannot write the output: {exc.strerror or type(exc).__name__}")
        _quiet_stdout()
        code = EXIT_INPUT
    except Exception as exc:  # never a traceback with values in it
        reporter.error(f"internal error ({type(exc).__name__}); please report it")
        if os.environ.get("PROXY_POSTRENDER_DEBUG"):
            raise
        code = EXIT_INPUT
    sys.exit(input_code if code == EXIT_INPUT else code)


def commit(write: Callable[[BinaryIO], object], reporter: Reporter | None = None) -> None:
    """Write the output to stdout in one go. SIGINT, SIGTERM and SIGHUP wait for the end
    of the copy (then :class:`Interrupted`, the output complete); a second one stops it
    (:class:`Interrupted`, stdout incomplete). ``reporter`` notes that the output is out."""
    import signal

    received: list[int] = []

    def defer(signum: int, _frame: object) -> None:
        if received:
            raise Interrupted(signum, complete=False)
        received.append(signum)

    previous: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, defer)
        except ValueError:  # not the main thread: no handlers, no deferral
            break
    try:
        write(sys.stdout.buffer)
        sys.stdout.buffer.flush()
        if reporter is not None:
            reporter.committed = True
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if received:
        raise Interrupted(received[0], complete=True)


def execute(params: Params, reporter: Reporter) -> None:
    """Run the filter with the main command's parameters; exit non-zero on any error
    (with --diff: ``EXIT_DIFF_CHANGES`` when it shows a change)."""
    reporter.redactor.add_urls((params.http_proxy, params.https_proxy))
    if params.log_file:
        reporter.log_file = params.log_file
    notes = flag_password_warnings(params.http_proxy, params.https_proxy)  # argv's only
    params = with_environment(params)
    reporter.redactor.add_urls((params.http_proxy, params.https_proxy))
    input_code = EXIT_DIFF_INPUT if params.show_diff else EXIT_INPUT
    code = guard(reporter, lambda: run(params, reporter, notes), input_code=input_code)
    for note in notes:  # after a run that succeeded: an error stays one line
        reporter.warning(note)
    if code:
        sys.exit(code)


# --- the filter ------------------------------------------------------------------------


def run(params: Params, reporter: Reporter, notes: list[str] | None = None) -> int:
    """The filter: stdin to stdout (raises ProxyPostrenderError on bad input); the exit
    code (with --diff: ``EXIT_DIFF_CHANGES`` when the run changes something). ``notes``:
    warnings for stderr after the run, shown with --report too: the command line's, to
    which the run adds those about the proxy URLs (profile/schemes.py)."""
    from proxy_postrender.yamltext import stream

    path = profile_path(params.profile_arg, params.profile_opt)
    notes = [] if notes is None else notes
    warnings: list[str] = list(notes)  # and the profile's, shown with --report

    def load(function_config: Mapping[str, Any] | None) -> Profile | None:
        loaded = _load_profile(params, path, function_config, reporter.redactor)
        if loaded is not None and not params.remove:
            from proxy_postrender.profile import schemes

            advice = [a for a in schemes.advice(loaded) if a not in notes]
            notes.extend(advice)
            warnings.extend(advice)
        if loaded is not None:
            warnings.extend(loaded.warnings)
        return loaded

    def request_for(function_config: Mapping[str, Any] | None) -> Request:
        request = _request(load(function_config), params)
        reporter.redactor.add_urls(request.urls())
        return request

    stdin_hint(reporter)
    bom, head, source = _stdin_segments()
    if head and head[-1].sniff_kind() == KRM_KIND:
        from proxy_postrender.cli import krm  # lazy: a manifest stream never needs it

        text = "".join(segment.text for segment in itertools.chain(head, source))
        if krm.is_resource_list(text):
            if params.show_diff:
                raise UsageError("--diff works on manifest streams, not on a KRM ResourceList")
            reporter.start_work()
            outcome = krm.run(text, request_for, reporter.clean)
            handle = open_report(params.report) if outcome.error is None else None
            commit(lambda target: target.write(stream.encode(outcome.text, bom)), reporter)
            if outcome.error is not None:
                raise outcome.error
            if outcome.result is not None:
                _report(reporter, params, outcome.result, warnings, handle)
            return 0
        head, source = stream.split(text), iter(())
    loaded = load(None)
    request = _request(loaded, params)
    reporter.redactor.add_urls(request.urls())
    if params.show_diff:
        hidden = _masked(loaded)
        # nothing to mask: the diff needs no second run
        masked = request if hidden == loaded else _request(hidden, params, gate=False)
        changed = _run_diff(head, source, request, masked, params, reporter, warnings)
        return EXIT_DIFF_CHANGES if changed else 0
    _run_filter(head, source, bom, request, params, reporter, warnings)
    return 0


def _run_filter(
    head: list[stream.Segment],
    source: Iterator[stream.Segment],
    bom: bool,
    request: Request,
    params: Params,
    reporter: Reporter,
    warnings: list[str],
) -> None:
    from proxy_postrender import engine
    from proxy_postrender.yamltext import spool, stream

    reporter.start_work()
    with spool.Output(SPOOL_MEMORY) as out, spool.Output(SPOOL_MEMORY) as kept:
        twice = engine.needs_two_passes(request)
        result = engine.run(
            _segments(head, source, kept if twice else None),
            request,
            out,
            keep_objects=params.report is not None,
        )
        if reporter.helm_plugin and out.blank():
            out.write(HELM4_EMPTY)
        handle = open_report(params.report)
        commit(lambda target: out.copy_to(target, stream.BOM if bom else ""), reporter)
    _report(reporter, params, result, warnings, handle)


def _run_diff(
    head: list[stream.Segment],
    source: Iterator[stream.Segment],
    request: Request,
    masked: Request,
    params: Params,
    reporter: Reporter,
    warnings: list[str],
) -> bool:
    """Write the diff; whether it shows a change."""
    from proxy_postrender.cli import diff
    from proxy_postrender.yamltext import spool

    reporter.start_work()
    with spool.Output(SPOOL_MEMORY) as kept, spool.Output(SPOOL_MEMORY) as shown:
        for segment in itertools.chain(head, source):
            kept.add(segment)
        result, changed = diff.masked_diff(
            kept,
            request,
            masked,
            shown,
            reporter.redactor.redact,
            memory_limit=SPOOL_MEMORY,
            keep_objects=params.report is not None,
        )
        handle = open_report(params.report)
        commit(shown.copy_to, reporter)
    _report(reporter, params, result, warnings, handle)
    return changed


def _report(
    reporter: Reporter, params: Params, result: Result, warnings: list[str], handle: TextIO | None
) -> None:
    if params.report is None:
        return
    from proxy_postrender.cli import report

    summary = report.summary(result, removing=params.remove, warnings=warnings)
    reporter.info(summary, params.report, handle)


def _load_profile(
    params: Params,
    path: str | None,
    function_config: Mapping[str, Any] | None,
    redactor: Redactor,
) -> Profile | None:
    """The profile of the run (a KRM functionConfig, a file or the flags); None for a
    removal without one."""
    from proxy_postrender.profile import loader, records

    namespace = params.namespace or os.environ.get("ARGOCD_APP_NAMESPACE") or None
    overrides = records.Overrides(
        params.http_proxy, params.https_proxy, params.no_proxy, params.on_conflict, namespace
    )
    if function_config is not None:
        from proxy_postrender.cli import trust

        source = trust.function_config(params)
        return loader.from_object(
            function_config,
            "functionConfig",
            os.environ,
            overrides,
            redactor,
            source.directory,
            source,
        )
    if params.remove and path is None and not overrides.any_proxy():
        return None
    return loader.load(
        path,
        profile_name=params.profile_name,
        overrides=overrides,
        redactor=redactor,
        source=_profile_source(params, path),
    )


def _profile_source(params: Params, path: str | None) -> InputProfile | None:
    """Who wrote the profile file (cli/trust.py); None, the operator, without reading
    trust.py on the usual route (start-up)."""
    if not params.untrusted_profile and not os.environ.get(KUSTOMIZE_ROOT):
        return None
    from proxy_postrender.cli import trust

    return trust.profile_file(params, path)


def _request(loaded: Profile | None, params: Params, *, gate: bool = True) -> Request:
    """The run's request; without ``gate`` (the masked run of --diff, whose URLs carry no
    password to find) the plaintext gate is off."""
    from proxy_postrender.profile.request import to_request
    from proxy_postrender.request import Request
    from proxy_postrender.structs import replace

    if loaded is None:
        return Request(env=())
    request = to_request(
        loaded,
        remove=params.remove,
        forbid_plaintext=params.forbid_plaintext,
        strict=params.strict,
        cluster=cluster_of(params),
    )
    return request if gate else replace(request, forbid_plaintext=False)


def cluster_of(params: Params) -> str | None:
    """The cluster the workloads run in: --cluster, else the environment's."""
    from proxy_postrender.cli.options import ARGOCD_CLUSTER_ENV, CLUSTER_ENV

    return (
        params.cluster or os.environ.get(CLUSTER_ENV) or os.environ.get(ARGOCD_CLUSTER_ENV) or None
    )


def _masked(loaded: Profile | None) -> Profile | None:
    """The profile with the user-info of its proxy URLs replaced by the mask."""
    if loaded is None:
        return None
    from proxy_postrender.redact import redact_url
    from proxy_postrender.structs import replace

    http, https = loaded.http_proxy, loaded.https_proxy
    entries = tuple(replace(e, profile=_masked(e.profile)) for e in loaded.entries())
    return replace(
        loaded,
        http_proxy=redact_url(http) if http else http,
        https_proxy=redact_url(https) if https else https,
        clusters=entries,
    )


STDIN_HINT = (
    "reading manifests from stdin (end with Ctrl-D, or pipe a render in: "
    "helm template ... | proxy-postrender PROFILE)"
)


def stdin_hint(reporter: Reporter) -> None:
    """Say on stderr that the tool waits for its input, when stdin is a terminal (someone
    ran it without a pipe); never on a pipe or a file."""
    try:
        interactive = sys.stdin.isatty()
    except (AttributeError, ValueError):  # stdin closed or replaced
        return
    if interactive:
        reporter.note(STDIN_HINT)


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
