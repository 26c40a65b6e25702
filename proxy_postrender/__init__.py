"""proxy-postrender: inject HTTP(S) proxy settings into rendered Kubernetes manifests.

The package in layers, lowest first. A module imports from the layers below
its own, and within its layer only from its own subpackage: never upward,
never sideways between concerns (tests/test_layout.py checks it, and that the
imports have no circle). docs/how-it-works.md draws the data flow.

1. structs, sre_programs — record classes without the start-up cost of dataclasses; the
   programs of the package's regular expressions, compiled when the package was made
2. patterns, errors, redact, objects, dialects — regular expressions from those programs
   (no compiling at each start), exit codes, secret masking, objects as plain data, the
   bootstrap providers as rows
3. yamltext/ — the stream as text: split, read with positions, splice, spool
4. noproxy/ — NO_PROXY: entries, presets, scopes, clusters, clients, advice
4. targets, record, plans — the target table, ownership annotations, the plan base
5. pods/ — env vars for workloads: planning and selection
5. nodes/ — Cluster API node bootstrap: kubeadm specs, ClusterClass patches, quoting
5. fields/ — fields of other kinds set from profile values
6. rollout/ — renamed templates and moved references: a change reaches running machines
7. request, result — what one run asks, and what it found
8. resolve — the settings resolver: what each object gets (which profile entry)
9. planners, generated, verify — the planner table, the objects a run emits, output checks
10. engine — one run over a stream
11. profile/ — the ProxyProfile: option tables, validation, loading, the request it makes
12. cli/ — the console script, subcommands, KRM, Helm and kustomize entry points
13. __main__ — ``python -m proxy_postrender``
"""

__version__ = "0.1.0"

# Modules import their typing names under ``if TYPE_CHECKING:`` from here: the
# typing module itself is never imported at run time (it costs start-up time);
# type checkers take any name TYPE_CHECKING as true.
TYPE_CHECKING = False


def build() -> str:
    """Which build runs: ``"compiled"`` (mypyc extensions) or ``"pure"`` (Python source).

    Read from where the engine module comes from, without importing it."""
    from importlib.util import find_spec

    spec = find_spec("proxy_postrender.engine")
    origin = spec.origin if spec is not None else None
    return "pure" if origin is None or origin.endswith(".py") else "compiled"


def version_line() -> str:
    """``proxy-postrender 0.1.0 (compiled with mypyc)`` or ``... (pure Python)``."""
    kind = "compiled with mypyc" if build() == "compiled" else "pure Python"
    return f"proxy-postrender {__version__} ({kind})"
