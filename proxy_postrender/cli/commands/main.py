"""The main command, the filter, as click reads it: built from the option table of
:mod:`proxy_postrender.cli.options`; its help ends with the table's subcommands."""

from __future__ import annotations

from collections.abc import Callable

import click

from proxy_postrender import TYPE_CHECKING, __version__, version_line
from proxy_postrender.cli import options
from proxy_postrender.cli.commands import base

if TYPE_CHECKING:
    from typing import Any


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


EPILOG = (
    f"A profile file named like a command is read as the command: pass it as ./NAME or "
    f"--profile NAME. '{base.PROG} help COMMAND' shows a command's options."
)


@click.command(name=base.PROG, cls=base.TableCommand, context_settings=base.CONTEXT, epilog=EPILOG)
@_filter_options
@click.version_option(__version__, prog_name=base.PROG, message=version_line())
def command(**params: Any) -> None:
    """Inject HTTP(S) proxy settings into a rendered manifest stream (stdin to stdout)."""
    from proxy_postrender.cli import start

    start.run_filter(options.Params(**params), base.reporter())
