"""Who wrote the run's profile, and so what it may read.

A profile named by the pipeline's operator (a path argument, as Helm's
post-renderer arguments pass it; ``--profile``; ``PROXY_POSTRENDER_PROFILE``)
is trusted: its proxy URLs may read the tool's environment (``${VAR}``,
``spec.credentials.fromEnv``) and its CA file may be anywhere. A profile that
comes with the input was written by whoever writes the stream:

- a KRM ``functionConfig`` (kpt, standalone kustomize): its relative file
  names start in the working directory, and its files must be there;
- the config kustomize hands its exec plugin (a ``transformers:`` entry of any
  kustomization in the build, a remote base's included): kustomize runs the
  plugin with ``KUSTOMIZE_PLUGIN_CONFIG_ROOT`` set to that kustomization's
  directory, where its files must be. The arguments after the config's path
  are the config's own (its ``argsOneLiner``, ``argsFromFile``): there only
  the environment may allow;
- a file named with ``--untrusted-profile`` (the Argo CD plugin: a profile from
  the application's repository): its files must be in its own directory.

Such a profile reads no environment variable unless the user allows it
(``--allow-env`` or ``PROXY_POSTRENDER_ALLOW_ENV=1``).
"""

from __future__ import annotations

import os

from proxy_postrender.cli.options import ALLOW_ENV, KUSTOMIZE_ROOT, Params
from proxy_postrender.errors import UsageError
from proxy_postrender.profile.records import InputProfile

HOW_TO_ALLOW = f"allow it with --allow-env or {ALLOW_ENV}=1 if you trust whoever writes it"
HOW_TO_ALLOW_BY_ENV = f"allow it with {ALLOW_ENV}=1 if you trust whoever writes it"
_YES, _NO = ("1", "true"), ("", "0", "false")


def allow_env(params: Params | None) -> bool:
    """Whether the user lets a profile that comes with the input read the environment
    (``params``: the command line's flags count too)."""
    if params is not None and params.allow_env:
        return True
    value = os.environ.get(ALLOW_ENV, "")
    if value.lower() in _YES:
        return True
    if value.lower() in _NO:
        return False
    raise UsageError(f"{ALLOW_ENV} must be 1 (allow) or 0 (do not allow), not {value!r}")


def function_config(params: Params) -> InputProfile:
    """The trust of a KRM functionConfig."""
    return _input("a KRM functionConfig", os.getcwd(), params)


def profile_file(params: Params, path: str | None) -> InputProfile | None:
    """The trust of the profile file ``path`` (None: the operator's, trusted)."""
    root = os.environ.get(KUSTOMIZE_ROOT)
    if path is not None and root:
        route = "the config of a kustomize exec plugin"
        return InputProfile(route, root, allow_env(None), HOW_TO_ALLOW_BY_ENV)
    if params.untrusted_profile:
        if path is None:
            raise UsageError("--untrusted-profile needs a profile file")
        return _input("--untrusted-profile", os.path.dirname(os.path.abspath(path)), params)
    return None


def plugin_arguments(args: list[str]) -> str | None:
    """Why ``args`` are refused when kustomize runs the tool as an exec plugin (None: they
    are not): the config's path comes alone, for what follows it is the config's own
    (``argsOneLiner``, ``argsFromFile``), and its author may not choose the tool's options,
    least of all the files it writes (``--log-file``, ``--report=FILE``). Checked before
    anything is opened."""
    if not os.environ.get(KUSTOMIZE_ROOT) or len(args) < 2:
        return None
    return (
        f"run as a kustomize exec plugin ({KUSTOMIZE_ROOT} is set), proxy-postrender takes "
        f"the config's path alone: the {len(args) - 1} argument(s) after it come from the "
        "config (argsOneLiner, argsFromFile), whose author may not choose the tool's "
        "options or the files it writes; set options in the profile or the environment"
    )


def _input(route: str, directory: str, params: Params) -> InputProfile:
    return InputProfile(route, directory, allow_env(params), HOW_TO_ALLOW)
