"""The ``patches`` subcommand: the filter's change as kustomize patches, for a Flux
HelmRelease's post-renderers."""

from __future__ import annotations

import sys

import click

from proxy_postrender import TYPE_CHECKING, structs
from proxy_postrender.cli.commands import base
from proxy_postrender.cli.options import ON_CONFLICT
from proxy_postrender.cli.runner import profile_path

if TYPE_CHECKING:
    from proxy_postrender.redact import Redactor


@base.command(("patches",))
@click.argument("profile_arg", metavar="[PROFILE]", required=False)
@click.option("--profile", "profile_opt", metavar="FILE", help="ProxyProfile file.")
@click.option("--profile-name", metavar="NAME", help="Pick one profile from the file.")
@click.option("--http-proxy", metavar="URL", help="Override spec.httpProxy.")
@click.option("--https-proxy", metavar="URL", help="Override spec.httpsProxy.")
@click.option("--no-proxy", metavar="LIST", help="Replace spec.noProxy (comma-separated).")
@click.option("--on-conflict", type=click.Choice(list(ON_CONFLICT)))
def patches_command(
    profile_arg: str | None,
    profile_opt: str | None,
    profile_name: str | None,
    http_proxy: str | None,
    https_proxy: str | None,
    no_proxy: str | None,
    on_conflict: str | None,
) -> None:
    """Print, for a rendered chart on stdin, the kustomize patches that make the same change
    (a Flux HelmRelease's spec.postRenderers[].kustomize.patches)."""
    from proxy_postrender import engine, targets
    from proxy_postrender.cli import patches as patches_mod
    from proxy_postrender.generated import generated_by
    from proxy_postrender.objects import walk_objects
    from proxy_postrender.profile import loader, records
    from proxy_postrender.profile.request import to_request
    from proxy_postrender.yamltext import libyaml, stream

    unpatchable = (targets.KUBEADM, targets.CLUSTERCLASS)

    def run_it(redactor: Redactor) -> int:
        overrides = records.Overrides(http_proxy, https_proxy, no_proxy, on_conflict)
        loaded = loader.load(
            profile_path(profile_arg, profile_opt),
            profile_name=profile_name,
            overrides=overrides,
            redactor=redactor,
        )
        # kubeadm objects cannot be patched by name and merge key: they are left out
        request = structs.replace(to_request(loaded), nodes=None)
        text, _ = stream.decode(sys.stdin.buffer.read())
        result = engine.process(text, request)
        sys.stdout.write(patches_mod.render(patches_mod.flux_patches(result.text)))
        skipped = [
            obj
            for doc in libyaml.load_data(text)
            for _, obj in walk_objects(doc)
            if (target := targets.BUILT_IN.find(obj)) and target.planner in unpatchable
        ]
        if skipped:
            sys.stderr.write(
                f"{base.PROG}: warning: {len(skipped)} Cluster API kubeadm objects are not "
                "expressed as patches; render them in CI instead (docs/flux.md)\n"
            )
        made = [d for d in libyaml.load_data(result.text) if generated_by(d)]
        if made:
            sys.stderr.write(
                f"{base.PROG}: warning: the {len(made)} Secrets/ConfigMaps the profile makes are "
                "no patches; create them beside the HelmRelease (docs/flux.md)\n"
            )
        return 0

    base.guarded(run_it)
