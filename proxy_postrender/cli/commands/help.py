"""The ``help`` subcommand: the help of proxy-postrender, of a group or of one command,
named by its words."""

from __future__ import annotations

import click

from proxy_postrender.cli import table
from proxy_postrender.cli.commands import base
from proxy_postrender.errors import UsageError


@base.command(("help",))
@click.argument("words", metavar="[COMMAND]...", nargs=-1)
def help_command(words: tuple[str, ...]) -> None:
    """Show the help of proxy-postrender, or of the command named (as 'help noproxy check')."""
    choice = table.find(list(words))
    if choice.rest:
        raise UsageError(table.unknown(choice.words, choice.rest[0]))
    click.echo(base.get_help(base.chosen(choice), choice.words))
