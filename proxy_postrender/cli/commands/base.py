"""What the click commands share: their context settings, the help section that
lists subcommands from the table, lazy loading of a row's command, the groups, the
error guard of a subcommand's work, and running a command with one-line errors.

A command runs with the process's :class:`Reporter` as its click context object:
its messages take the one path every message takes (:func:`runner.guard`)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

import click

from proxy_postrender.cli import runner, table
from proxy_postrender.cli.runner import Reporter
from proxy_postrender.errors import UsageError
from proxy_postrender.redact import Redactor

PROG = table.PROG
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def write_commands(
    formatter: click.HelpFormatter, words: tuple[str, ...], *, relative: bool = False
) -> None:
    """The "Commands" section of the help of ``words``: the table's rows under it, by
    their whole names (or, ``relative``, by the words that follow ``words``)."""
    rows = table.below(words)
    if rows:
        with formatter.section("Commands"):
            skip = len(words) if relative else 0
            formatter.write_dl([(" ".join(r.words[skip:]), r.summary) for r in rows])


class TableCommand(click.Command):
    """A command whose help also lists the subcommands the table has under it."""

    words: tuple[str, ...] = ()

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        write_commands(formatter, self.words)
        super().format_epilog(ctx, formatter)


def command(words: tuple[str, ...]) -> Callable[[Callable[..., None]], TableCommand]:
    """The decorator of the click command of the table's row ``words``."""

    def make(func: Callable[..., None]) -> TableCommand:
        made = click.command(" ".join(words), cls=TableCommand, context_settings=CONTEXT)(func)
        made.words = words
        return made

    return make


def load(row: table.Subcommand) -> click.Command:
    """The click command of a row of the table (its module is imported now)."""
    found = getattr(importlib.import_module(row.module), row.attr)
    if not isinstance(found, click.Command):
        raise TypeError(f"{row.module}.{row.attr} is not a click command")
    return found


class Group(click.Group):
    """The words that lead to subcommands ("kustomize-plugin"): its help lists them from
    the table without importing them."""

    def __init__(self, words: tuple[str, ...]) -> None:
        name = " ".join(words)
        super().__init__(
            name,
            context_settings=CONTEXT,
            help=f"The '{name}' commands; see '{PROG} help {name} COMMAND'.",
        )
        self.words = words

    def list_commands(self, ctx: click.Context) -> list[str]:
        return table.next_words(self.words)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        row = table.row((*self.words, cmd_name))
        return None if row is None else load(row)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        write_commands(formatter, self.words, relative=True)


def chosen(choice: table.Choice) -> click.Command:
    """The click command of what :func:`table.find` found."""
    return Group(choice.words) if choice.row is None else load(choice.row)


def prog_name(words: tuple[str, ...]) -> str:
    return " ".join((PROG, *words))


def get_help(cmd: click.Command, words: tuple[str, ...]) -> str:
    """The help of a command, as ``PROG WORDS --help`` prints it."""
    context = click.Context(cmd, info_name=prog_name(words), **cmd.context_settings)
    return cmd.get_help(context)


def invoke(
    cmd: click.Command, args: list[str], words: tuple[str, ...], reporter: Reporter | None = None
) -> None:
    """Run a click command; its usage errors become :class:`UsageError` (one line)."""
    try:
        cmd.main(args=args, prog_name=prog_name(words), standalone_mode=False, obj=reporter)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        raise UsageError("aborted") from None
    except click.ClickException as exc:
        context = exc.ctx if isinstance(exc, click.UsageError) else None
        where = context.command_path if context is not None else prog_name(words)
        message = exc.format_message().replace("\n", " ").removesuffix(".")
        raise UsageError(f"{message} (see '{where} --help')") from None


def reporter() -> Reporter:
    """The process's reporter (the click context's object), or one for this command."""
    context = click.get_current_context(silent=True)
    found = context.find_object(Reporter) if context is not None else None
    return found if found is not None else Reporter.for_argv([])


def guarded(func: Callable[[Redactor], int]) -> None:
    """Run a subcommand's work: its errors are one line on stderr (and in the log)."""
    chosen = reporter()
    sys.exit(runner.guard(chosen, lambda: func(chosen.redactor)))
