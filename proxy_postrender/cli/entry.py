"""The console script: choose what argv names from the subcommand table and run it.

Plain invocations of the filter are read without click (:func:`options.parse_plain`)
and run directly; everything else (help, version, subcommands, errors in the
arguments) goes through click, importing only the chosen subcommand's module. Usage
errors are one line on stderr, exit 2, and nothing on stdout."""

from __future__ import annotations

import gc
import os
import sys

from proxy_postrender.cli import options, table
from proxy_postrender.cli.runner import Reporter
from proxy_postrender.errors import UsageError


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    refused = _plugin_arguments(args)
    # (a log file named by refused arguments is never opened)
    reporter = Reporter.for_argv(args, log_from_argv=refused is None)
    try:
        if refused is not None:
            raise UsageError(refused)
        params = options.parse_plain(args)
        if params is None:
            if argv is None:
                # A process of its own (the console script, ``python -m``): what start-up
                # made (modules, classes, the profile) lives to the end of the run, and the
                # garbage collector, which runs every few hundred objects made, need not
                # walk it each time. Not for callers in their own process.
                gc.freeze()
            _dispatch(args, reporter)
        else:
            if argv is None:
                # the same, and no collection at all until the engine starts (the runner
                # freezes what start-up made then: Reporter.start_work)
                reporter.pause_collector()
            from proxy_postrender.cli import start

            start.run_filter(params, reporter)
    except UsageError as exc:
        reporter.error(str(exc))
        sys.exit(exc.exit_code)


def _plugin_arguments(args: list[str]) -> str | None:
    """Why kustomize's exec-plugin arguments are refused (cli/trust.py), None mostly."""
    if not os.environ.get(options.KUSTOMIZE_ROOT):
        return None  # (trust.py only when kustomize runs the tool: start-up)
    from proxy_postrender.cli import trust

    return trust.plugin_arguments(args)


def _dispatch(args: list[str], reporter: Reporter) -> None:
    """Run the subcommand, group or main command that ``args`` names, through click."""
    choice = table.find(args)
    rest = choice.rest
    if choice.row is None:  # a group: a subcommand word must follow
        if not rest:
            raise UsageError(table.needs_subcommand(choice.words))
        if not rest[0].startswith("-"):
            raise UsageError(table.unknown(choice.words, rest[0]))
    elif rest and not rest[0].startswith("-"):
        # "noproxy chek ...", "kustomize-plugins install": before click calls it an
        # extra argument
        misread = table.misread_profile(rest[0], choice.words)
        if misread is not None:
            raise UsageError(misread)
    from proxy_postrender.cli.commands import base

    base.invoke(base.chosen(choice), rest, choice.words, reporter)
