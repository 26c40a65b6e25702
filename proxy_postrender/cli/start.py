"""Starting the filter from its parsed parameters (by the fast path or by click): a
profile argument that is no file but a mistyped subcommand is refused first."""

from __future__ import annotations

from proxy_postrender.cli import runner, table
from proxy_postrender.cli.options import Params
from proxy_postrender.errors import UsageError


def run_filter(params: Params, reporter: runner.Reporter) -> None:
    """Run the filter, unless its profile argument is no file and a mistyped command."""
    if params.profile_arg is not None:
        misread = table.misread_profile(params.profile_arg)
        if misread is not None:
            raise UsageError(misread)
    runner.execute(params, reporter)
