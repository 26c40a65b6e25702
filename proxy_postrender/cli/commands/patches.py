"""The ``patches`` subcommand: the filter's change as kustomize patches, for a Flux
HelmRelease's post-renderers."""

from __future__ import annotations

import sys

import click

from proxy_postrender import TYPE_CHECKING
from proxy_postrender.cli.commands import base
from proxy_postrender.cli.options import ON_CONFLICT
from proxy_postrender.cli.runner import profile_path
from proxy_postrender.errors import InputError

if TYPE_CHECKING:
    from typing import Any

    from proxy_postrender.redact import Redactor


@base.command(("patches",))
@click.argument("profile_arg", metavar="[PROFILE]", required=False)
@click.option("--profile", "profile_opt", metavar="FILE", help="ProxyProfile file.")
@click.option("--profile-name", metavar="NAME", help="Pick one profile from the file.")
@click.option("--http-proxy", metavar="URL", help="Override spec.httpProxy.")
@click.option("--https-proxy", metavar="URL", help="Override spec.httpsProxy.")
@click.option("--no-proxy", metavar="LIST", help="Replace spec.noProxy (comma-separated).")
@click.option("--on-conflict", type=click.Choice(list(ON_CONFLICT)))
@click.option(
    "--namespace",
    metavar="NS",
    help="The namespace the HelmRelease installs into: of documents without one, and "
    "targets elsewhere are warned about.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail on an object the filter changes that no patch can reach (spec.strict too).",
)
def patches_command(
    profile_arg: str | None,
    profile_opt: str | None,
    profile_name: str | None,
    http_proxy: str | None,
    https_proxy: str | None,
    no_proxy: str | None,
    on_conflict: str | None,
    namespace: str | None,
    strict: bool,
) -> None:
    """Print, for a rendered chart on stdin, the kustomize patches that make the same change
    (a Flux HelmRelease's spec.postRenderers[].kustomize.patches)."""
    from proxy_postrender import engine, structs
    from proxy_postrender.cli import patches as patches_mod
    from proxy_postrender.cli import runner
    from proxy_postrender.pods.workloads import ANNOTATION
    from proxy_postrender.profile import loader, records
    from proxy_postrender.profile.request import to_request
    from proxy_postrender.yamltext import stream

    def run_it(redactor: Redactor) -> int:
        overrides = records.Overrides(
            http_proxy or runner.environment_value(runner.HTTP_PROXY_ENV),
            https_proxy or runner.environment_value(runner.HTTPS_PROXY_ENV),
            no_proxy or runner.environment_value(runner.NO_PROXY_ENV),
            on_conflict,
            namespace,
        )
        redactor.add_urls((overrides.http_proxy, overrides.https_proxy))
        loaded = loader.load(
            profile_path(profile_arg, profile_opt),
            profile_name=profile_name,
            overrides=overrides,
            redactor=redactor,
        )
        # kubeadm objects cannot be patched by name and merge key: they are left out
        request = structs.replace(to_request(loaded, strict=strict), nodes=None)
        runner.stdin_hint(base.reporter())
        text, _ = stream.decode(sys.stdin.buffer.read())
        result = engine.process(text, request)
        injected = _parsed(result.text, ANNOTATION)
        # "value" also finds "valueFrom": the render's entries a patch may have to null
        found = patches_mod.flux_patches(injected, _parsed(text, "value"))
        custom, skipped = patches_mod.custom_patches(text, result.text, request.targets)
        skipped += _nameless(result.text)
        if skipped and request.strict:
            raise skipped[0]
        patches = patches_mod.to_yaml([*found, *custom])
        warnings = [
            *runner.flag_password_warnings(http_proxy, https_proxy),
            *_warnings(text, result.text),
            *_namespace_warnings([*found, *custom], namespace),
            *(f"{error}; render it in CI instead (docs/flux.md)" for error in skipped),
        ]
        reporter = base.reporter()
        runner.commit(lambda out: out.write(patches.encode("utf-8", "surrogateescape")), reporter)
        for warning in warnings:
            reporter.warning(warning)
        return 0

    base.guarded(run_it)


def _parsed(text: str, needle: str) -> str:
    """The documents of ``text`` that hold ``needle`` and parse: a document the filter
    passed through untouched may be no valid YAML, and holds nothing to patch."""
    from proxy_postrender.yamltext import libyaml, stream
    from proxy_postrender.yamltext.errors import ParseError

    kept = []
    for segment in stream.split(text):
        if needle not in segment.text or not segment.has_content():
            continue
        try:
            libyaml.load_data(segment.text)
        except (ParseError, RecursionError):
            continue
        kept.append(segment.text if segment.text.endswith("\n") else segment.text + "\n")
    return "".join(kept)


def _nameless(after: str) -> list[InputError]:
    """The built-in workloads the filter changed that have no name (``generateName``, an
    empty name; also as items of a ``kind: List``): a patch's target cannot pick them."""
    from proxy_postrender.cli.patches import located_objects
    from proxy_postrender.objects import annotations_of, dig
    from proxy_postrender.pods.workloads import ANNOTATION
    from proxy_postrender.targets import BUILT_IN, PODS

    kinds = frozenset((*(t.kind for t in BUILT_IN.of_planner(PODS)), "List"))
    found = []
    for obj, context in located_objects(after, kinds):
        name = dig(obj, "metadata", "name")
        if (
            BUILT_IN.paths(obj, PODS)
            and ANNOTATION in annotations_of(obj)
            and not (isinstance(name, str) and name)
        ):
            found.append(InputError("no patch can target an object without a name", context))
    return found


def _namespace_warnings(patches: list[dict[str, Any]], namespace: str | None) -> list[str]:
    """Targets that a HelmRelease installing into ``namespace`` never matches: a target
    names the namespace of the render, which is ``default`` for a chart that writes
    ``.Release.Namespace`` when ``helm template`` had no --namespace."""
    expected = namespace or "default"
    elsewhere = sorted(
        {str(p["target"]["namespace"]) for p in patches if "namespace" in p["target"]} - {expected}
    )
    stray = [p for p in patches if p["target"].get("namespace") in elsewhere]
    if namespace is None:
        stray = [p for p in patches if p["target"].get("namespace") == "default"]
        if not stray:
            return []
        return [
            f"{len(stray)} patch targets say namespace default; if the HelmRelease installs "
            "into another namespace they match nothing there: render with "
            "helm template --namespace NS and give patches --namespace NS"
        ]
    if not stray:
        return []
    return [
        f"{len(stray)} patch targets are in namespace {', '.join(elsewhere)}, not {namespace} "
        f"(--namespace): where the chart writes .Release.Namespace, the HelmRelease's render "
        f"says {namespace} and these patches match nothing; render with "
        f"helm template --namespace {namespace}"
    ]


def _warnings(before: str, after: str) -> list[str]:
    """What the patches cannot express: kubeadm objects, and the objects the run makes."""
    from proxy_postrender import targets
    from proxy_postrender.generated import generated_by
    from proxy_postrender.objects import GENERATED, walk_objects
    from proxy_postrender.yamltext import libyaml

    unpatchable = (targets.KUBEADM, targets.CLUSTERCLASS)
    skipped = [
        obj
        for doc in libyaml.load_data(_parsed(before, "kind"))
        for _, obj in walk_objects(doc)
        if (target := targets.BUILT_IN.find(obj)) and target.planner in unpatchable
    ]
    made = [d for d in libyaml.load_data(_parsed(after, GENERATED)) if generated_by(d)]
    warnings = []
    if skipped:
        warnings.append(
            f"{len(skipped)} Cluster API kubeadm objects are not expressed as patches; "
            "render them in CI instead (docs/flux.md)"
        )
    if made:
        warnings.append(
            f"the {len(made)} Secrets/ConfigMaps the profile makes are no patches; create them "
            "beside the HelmRelease (docs/flux.md)"
        )
    return warnings
