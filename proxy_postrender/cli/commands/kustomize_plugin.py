"""The ``kustomize-plugin install`` subcommand: make proxy-postrender a kustomize exec
plugin for kind ProxyProfile. kustomize runs it with the profile's path as the first
argument and ``KUSTOMIZE_PLUGIN_CONFIG_ROOT`` set: the profile is then the input's
(cli/trust.py)."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import click

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.cli.commands import base
from proxy_postrender.cli.options import ALLOW_ENV
from proxy_postrender.errors import UsageError

if TYPE_CHECKING:
    from proxy_postrender.redact import Redactor

PLUGIN_PATH = ("proxy-postrender.io", "v1alpha1", "proxyprofile", "ProxyProfile")


def _plugin_home() -> Path:
    if os.environ.get("KUSTOMIZE_PLUGIN_HOME"):
        return Path(os.environ["KUSTOMIZE_PLUGIN_HOME"])
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(config) / "kustomize" / "plugin"


@base.command(("kustomize-plugin", "install"))
@click.option(
    "--plugin-home",
    metavar="DIR",
    help="kustomize's plugin directory (default: $KUSTOMIZE_PLUGIN_HOME, else "
    "$XDG_CONFIG_HOME/kustomize/plugin).",
)
def install_command(plugin_home: str | None) -> None:
    """Install proxy-postrender as a kustomize exec plugin for kind ProxyProfile."""

    def run_it(redactor: Redactor) -> int:
        home = (Path(plugin_home).expanduser() if plugin_home else _plugin_home()).absolute()
        target = home.joinpath(*PLUGIN_PATH)
        # the interpreter this copy runs with: the plugin works whatever PATH kustomize has
        script = f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m proxy_postrender "$@"\n'
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(script, encoding="utf-8")
            target.chmod(0o755)
        except OSError as exc:
            raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
        sys.stdout.write(
            f"installed {target}\n"
            f"use: kubectl kustomize --enable-alpha-plugins DIR (with KUSTOMIZE_PLUGIN_HOME={home}"
            " unless that is the default), listing the ProxyProfile file under transformers:\n"
            f"such a profile comes with the kustomization (remote bases included): it reads "
            f"no environment variable unless {ALLOW_ENV}=1, and no file outside the "
            "kustomization's directory\n"
        )
        return 0

    base.guarded(run_it)
