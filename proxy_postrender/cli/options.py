"""The main command's options, as data: click builds its parser from this table
(:mod:`proxy_postrender.cli.table.main`), and :func:`parse_plain` reads the plain
invocations a pipeline makes without importing click at all (click alone
takes longer to import than a whole run on a small chart).

:func:`parse_plain` reads a subset and declines everything else (help,
version, subcommands, repeated or unknown options, values that look like
options, ``--``): click then parses as before. A property test checks that
whatever it does read, it reads as click does.
"""

from __future__ import annotations

from proxy_postrender import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

from proxy_postrender.cli.table import FIRST_WORDS
from proxy_postrender.structs import FrozenStruct

PROFILE_ENV = "PROXY_POSTRENDER_PROFILE"
LOG_ENV = "PROXY_POSTRENDER_LOG"
ALLOW_ENV = "PROXY_POSTRENDER_ALLOW_ENV"  # as --allow-env
CLUSTER_ENV = "PROXY_POSTRENDER_CLUSTER"  # as --cluster
# the same as an Argo CD application's plugin env sets it (Argo CD adds the prefix)
ARGOCD_CLUSTER_ENV = "ARGOCD_ENV_PROXY_POSTRENDER_CLUSTER"
KUSTOMIZE_ROOT = "KUSTOMIZE_PLUGIN_CONFIG_ROOT"  # set by kustomize for its exec plugins
# the kind of a KRM function's input (cli/krm.py), read here so that a manifest stream
# never loads the KRM shell (start-up, issue 33)
KRM_KIND = "ResourceList"
ON_CONFLICT = ("keep", "override", "fail")
# The first words of the subcommands (cli.table): click reads those.
SUBCOMMAND_WORDS = FIRST_WORDS


class Option(FrozenStruct):
    flag: str  # "--profile"
    dest: str  # the parameter name
    kind: str  # "value", "flag", "choice" or "optional" (a value, or flag_value alone)
    metavar: str | None
    help: str
    choices: tuple[str, ...] = ()
    flag_value: str = "-"  # for "optional": the value of the bare flag


POSITIONAL = "profile_arg"  # the one optional argument: [PROFILE]

OPTIONS = (
    Option(
        "--profile",
        "profile_opt",
        "value",
        "FILE",
        f"ProxyProfile file (or a path argument, or ${PROFILE_ENV}).",
    ),
    Option(
        "--profile-name",
        "profile_name",
        "value",
        "NAME",
        "Pick one profile from a file that holds several.",
    ),
    Option(
        "--untrusted-profile",
        "untrusted_profile",
        "flag",
        None,
        "The profile file comes with the input (e.g. from an Argo CD application's "
        "repository): it reads no environment variable unless --allow-env, and no file "
        "outside its directory.",
    ),
    Option(
        "--allow-env",
        "allow_env",
        "flag",
        None,
        "Let a profile that comes with the input (a KRM functionConfig, a kustomize "
        f"plugin's config, --untrusted-profile) read environment variables (or ${ALLOW_ENV}=1).",
    ),
    Option(
        "--http-proxy",
        "http_proxy",
        "value",
        "URL",
        "Override spec.httpProxy (works without a file; or $PROXY_POSTRENDER_HTTP_PROXY).",
    ),
    Option(
        "--https-proxy",
        "https_proxy",
        "value",
        "URL",
        "Override spec.httpsProxy (or $PROXY_POSTRENDER_HTTPS_PROXY).",
    ),
    Option(
        "--no-proxy",
        "no_proxy",
        "value",
        "LIST",
        "Replace spec.noProxy (comma-separated; or $PROXY_POSTRENDER_NO_PROXY).",
    ),
    Option(
        "--on-conflict",
        "on_conflict",
        "choice",
        None,
        "When a manifest already sets a variable (default: the profile's, else keep).",
        ON_CONFLICT,
    ),
    Option(
        "--namespace",
        "namespace",
        "value",
        "NS",
        "The namespace of documents without one (default: $ARGOCD_APP_NAMESPACE).",
    ),
    Option(
        "--cluster",
        "cluster",
        "value",
        "[NS/]NAME",
        "The Cluster API cluster the workloads run in: they get the first spec.clusters "
        f"entry that names it (or ${CLUSTER_ENV}, or ${ARGOCD_CLUSTER_ENV}).",
    ),
    Option(
        "--forbid-plaintext-credentials",
        "forbid_plaintext",
        "flag",
        None,
        "Fail when the output would hold a proxy password in clear (a CI gate).",
    ),
    Option(
        "--strict",
        "strict",
        "flag",
        None,
        "Fail on the warnings that say so, e.g. another owner of the node proxy settings "
        "(or spec.strict).",
    ),
    Option("--remove", "remove", "flag", None, "Strip everything this tool injected earlier."),
    Option(
        "--diff",
        "show_diff",
        "flag",
        None,
        "Print a unified diff of what would change (credentials masked) instead of "
        "manifests. Exit 0: nothing to change, 1: changes, 2: bad usage or profile, "
        "3: bad input (as git diff --exit-code).",
    ),
    Option(
        "--report", "report", "optional", "[FILE]", "Summarise the changes on stderr (or in FILE)."
    ),
    Option(
        "--log-file",
        "log_file",
        "value",
        "PATH",
        f"Also append errors and summaries to PATH (created 0600; or ${LOG_ENV}).",
    ),
)
_BY_FLAG = {option.flag: option for option in OPTIONS}


class Params(FrozenStruct):
    """The main command's parameters (the table's destinations; a test checks both agree)."""

    profile_arg: str | None = None
    profile_opt: str | None = None
    profile_name: str | None = None
    untrusted_profile: bool = False
    allow_env: bool = False
    http_proxy: str | None = None
    https_proxy: str | None = None
    no_proxy: str | None = None
    on_conflict: str | None = None
    namespace: str | None = None
    cluster: str | None = None
    forbid_plaintext: bool = False
    strict: bool = False
    remove: bool = False
    show_diff: bool = False
    report: str | None = None
    log_file: str | None = None


def parse_plain(argv: list[str]) -> Params | None:
    """The main command's parameters for a plain invocation, else None (let click parse)."""
    if argv and argv[0] in SUBCOMMAND_WORDS:
        return None
    params: dict[str, Any] = {}
    seen: set[str] = set()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg:
            return None
        if not arg.startswith("-"):
            if POSITIONAL in params:
                return None  # click: an extra argument
            params[POSITIONAL] = arg
            continue
        name, eq, inline = arg.partition("=")
        option = _BY_FLAG.get(name)
        if option is None or option.dest in seen:
            return None  # -h, --help, --version, --, unknown or repeated
        seen.add(option.dest)
        if option.kind == "flag":
            if eq:
                return None
            params[option.dest] = True
            continue
        if eq:
            value = inline
        elif option.kind == "optional" and (i == len(argv) or argv[i].startswith("--")):
            params[option.dest] = option.flag_value
            continue
        elif i < len(argv):
            value = argv[i]
            i += 1
        else:
            return None  # click: the option requires an argument
        if not value or value.startswith("-"):
            return None
        if option.kind == "choice" and value not in option.choices:
            return None
        params[option.dest] = value
    return Params(**params)
