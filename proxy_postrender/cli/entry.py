"""The console script: plain invocations run the filter directly; everything else
(help, version, subcommands, errors in the arguments) goes through click."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    from proxy_postrender.cli import options

    args = list(sys.argv[1:] if argv is None else argv)
    params = options.parse_plain(args)
    if params is None:
        from proxy_postrender.cli import commands

        commands.main(args)
        return
    from proxy_postrender.cli import runner

    runner.execute(params)
