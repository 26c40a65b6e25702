"""The ``schema`` subcommand: print the JSON Schema of a ProxyProfile."""

from __future__ import annotations

import sys

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.cli.commands import base

if TYPE_CHECKING:
    from proxy_postrender.redact import Redactor


@base.command(("schema",))
def schema_command() -> None:
    """Print the JSON Schema of a ProxyProfile (for editors and CI checks of profile files)."""

    def run_it(redactor: Redactor) -> int:
        from proxy_postrender.profile import schema

        text = schema.text()
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return 0

    base.guarded(run_it)
