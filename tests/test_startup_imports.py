"""What a plain run imports (start-up, issue 33): the modules the demo render loads are
listed here, so that a change that loads one more at start-up is a deliberate one; and
the steps a plain stream never needs (the rollout pass, the envFrom pass, embedded
documents, the other providers' planners) and the heavy libraries stay unloaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import FIXTURES, ROOT, probe_line, run_bare

DEMO = FIXTURES / "demo"

# the package's modules a run over the demo render (a Deployment, a Service, a
# ConfigMap, a ServiceAccount) imports, and over empty input
PLAIN_RUN = frozenset(
    [
        "cli",
        "cli.entry",
        "cli.options",
        "cli.runner",
        "cli.start",
        "cli.table",
        "dialects",
        "engine",
        "errors",
        "fields",
        "fields.setters",
        "generated",
        "nodes",
        "nodes.settings",
        "nodes.uncovered",
        "nodes.watched",
        "noproxy",
        "noproxy.advice",
        "noproxy.clients",
        "noproxy.clusterindex",
        "noproxy.coverage",
        "noproxy.environments",
        "noproxy.fleet",
        "noproxy.presets",
        "noproxy.scope",
        "noproxy.services",
        "noproxy.size",
        "noproxy.syntax",
        "objects",
        "patterns",
        "planners",
        "plans",
        "pods",
        "pods.selection",
        "pods.workloads",
        "profile",
        "profile.build",
        "profile.check",
        "profile.expand",
        "profile.loader",
        "profile.options",
        "profile.records",
        "profile.request",
        "profile.rules",
        "profile.schemes",
        "profile.tables",
        "record",
        "redact",
        "request",
        "resolve",
        "result",
        "rollout",
        "rollout.codes",
        "sre_programs",
        "structs",
        "targets",
        "verify",
        "yamltext",
        "yamltext.blockread",
        "yamltext.check",
        "yamltext.errors",
        "yamltext.ops",
        "yamltext.read",
        "yamltext.scalars",
        "yamltext.splice",
        "yamltext.spool",
        "yamltext.stream",
        "yamltext.tree",
    ]
)
# loaded only by a stream that needs them
LAZY = frozenset(
    [
        "rollout.ledger",
        "rollout.references",
        "rollout.effects",
        "noproxy.envsources",
        "pods.envfrom",
        "fields.embedded",
        "nodes.digest",
        "nodes.rollouttime",
        "nodes.talos",
        "nodes.specfields",
        "nodes.k0s",
        "nodes.unitenv",
        "nodes.staticpods",
        "nodes.clusterclass",
        "nodes.classvars",
        "nodes.topology",
        "nodes.writers",
        "nodes.formats",
        "yamltext.libyaml",
        "cli.diff",
        "cli.report",
        "cli.krm",  # only a stream whose last document sniffs as a ResourceList
        # the node planners and the watch for other owners: the first node object, or
        # the first object of a Cluster API group (issue 33)
        "nodes.kubeadm",
        "nodes.owners",
        "nodes.quoting",
        # the Cluster API discovery: only a stream that mentions a Cluster API group
        "noproxy.discovery",
        "noproxy.bootstraps",
    ]
)
# (string: its Template compiles a pattern at import; noproxy/clients.py spells hexdigits)
HEAVY = frozenset(
    {"ruamel", "click", "jsonpath_ng", "certifi", "json", "hashlib", "typing", "string", "fnmatch"}
)


def _imported(stdin: bytes) -> set[str]:
    proc = run_bare(
        ["-X", "importtime", "-m", "proxy_postrender", str(DEMO / "profile.yaml")], stdin
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    names = set()
    for line in proc.stderr.decode().splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.parametrize(
    "stdin", [b"", (DEMO / "rendered.yaml").read_bytes()], ids=["empty", "demo"]
)
def test_a_plain_run_imports_the_listed_modules_only(stdin: bytes) -> None:
    names = _imported(stdin)
    ours = {n.removeprefix("proxy_postrender.") for n in names if n.startswith("proxy_postrender.")}
    assert ours - PLAIN_RUN == set(), "new at start-up: make it lazy, or list it deliberately"
    assert ours & LAZY == set()
    assert {n.split(".")[0] for n in names} & HEAVY == set()
    # the profile is read as UTF-8 without the "utf-8-sig" codec (one more module)
    assert "encodings.utf_8_sig" not in names


def test_the_lists_name_real_modules() -> None:
    """A name in the lists that is no module of the package would make them pass for
    nothing."""
    package = ROOT / "proxy_postrender"
    for name in PLAIN_RUN | LAZY:
        path = package.joinpath(*name.split("."))
        assert path.with_suffix(".py").exists() or (path / "__init__.py").exists(), name


_COLLECTOR_PROBE = """
import atexit, gc, sys
sys.argv = ["proxy-postrender", sys.argv[1]]
def probe():
    seen = {id(o) for o in gc.get_objects()}  # what the collector still walks (not frozen)
    loose = sorted(
        n for n, m in sys.modules.items()
        if n.startswith("proxy_postrender") and id(vars(m)) in seen
    )
    sys.stderr.write(f"PROBE {gc.isenabled()} {','.join(loose)}\\n")
atexit.register(probe)
from proxy_postrender.cli.entry import main
main()
"""


def test_start_up_is_frozen_before_the_engine_runs() -> None:
    """The console script pauses the garbage collector for start-up and freezes what it
    made (the modules, the profile) when the engine starts (``Reporter.start_work``):
    the modules loaded before the run are out of the collector's sight, and it runs
    again for the run itself."""
    proc = run_bare(
        ["-c", _COLLECTOR_PROBE, str(DEMO / "profile.yaml")], (DEMO / "rendered.yaml").read_bytes()
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    enabled, _, loose = probe_line(proc).partition(" ")
    assert enabled == "True"
    started = {"engine", "profile.loader", "profile.build", "yamltext.read", "cli.start"}
    assert {f"proxy_postrender.{name}" for name in started} & set(loose.split(",")) == set()


def _krm_input() -> bytes:
    from proxy_postrender.yamltext import libyaml
    from tests.helpers import resource_list

    items = [d for d in libyaml.load_data((DEMO / "rendered.yaml").read_text()) if d]
    return resource_list(items, libyaml.load_data((DEMO / "profile.yaml").read_text())[0])


@pytest.mark.parametrize(
    ("args", "kind"),
    [(["--diff"], "manifests"), ([], "resource-list"), ([], "broken-resource-list")],
    ids=["diff", "krm", "krm-error"],
)
def test_every_run_of_the_filter_ends_with_the_collector_on(args: list[str], kind: str) -> None:
    """The console script pauses the collector for start-up: the --diff run, a KRM
    ResourceList and a ResourceList that fails turn it on again (Reporter.start_work)."""
    stdin = {
        "manifests": (DEMO / "rendered.yaml").read_bytes(),
        "resource-list": _krm_input(),
        "broken-resource-list": b"kind: ResourceList\nitems: [\n",
    }[kind]
    profile = [] if kind == "resource-list" else [str(DEMO / "profile.yaml")]
    probe = _COLLECTOR_PROBE.replace("sys.argv[1]]", "*sys.argv[1:]]")
    proc = run_bare(["-c", probe, *args, *profile], stdin)
    assert proc.returncode == (0 if kind == "resource-list" else 1), proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()[-2000:]
    assert probe_line(proc).split(" ")[0] == "True"


def test_a_stream_without_a_cluster_api_group_gets_the_index_the_discovery_makes() -> None:
    """The engine skips the discovery (and its module) when no document mentions a
    Cluster API group, and gives the run an empty index: the one the discovery makes of
    such a stream, but for the bootstrap references, which it then has none of."""
    from proxy_postrender.noproxy.clusterindex import ClusterIndex
    from proxy_postrender.noproxy.discovery import discover_stream
    from proxy_postrender.structs import replace
    from proxy_postrender.yamltext import stream

    segments = stream.split((DEMO / "rendered.yaml").read_text(encoding="utf-8"))
    assert not any("cluster.x-k8s.io" in segment.text for segment in segments)
    for namespace in (None, "apps"):
        found = discover_stream(segments, namespace)
        assert found.bootstraps is not None and not found.bootstraps.clusters
        assert replace(found, bootstraps=None) == ClusterIndex(namespace=namespace or "")


def test_a_profile_with_a_bom_and_crlf_line_ends_reads_as_without(tmp_path: Path) -> None:
    """The profile loader takes a leading BOM off (as the "utf-8-sig" codec did, which
    a plain run no longer imports) and reads CRLF line ends as LF."""
    from proxy_postrender.profile import loader

    plain = (DEMO / "profile.yaml").read_text(encoding="utf-8")
    (tmp_path / "plain.yaml").write_text(plain, encoding="utf-8")
    (tmp_path / "bom.yaml").write_bytes(b"\xef\xbb\xbf" + plain.replace("\n", "\r\n").encode())
    read = loader.load(str(tmp_path / "plain.yaml"))
    assert loader.load(str(tmp_path / "bom.yaml")) == read


_TABLES_PROBE = """
import sys
from proxy_postrender.profile import loader, tables
loader.load(sys.argv[1])
print(",".join(sorted(tables._MADE)))
"""


def test_a_plain_profile_builds_no_table_of_list_items() -> None:
    """The option tables of spec.workloads' rules and extraEnv, spec.clusters and
    spec.targets are made on first use: a profile that has none never builds them; the
    full reference (docs, schema) builds every one."""
    proc = run_bare(["-c", _TABLES_PROBE, str(DEMO / "profile.yaml")])
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert proc.stdout.decode().strip() == ""
    from proxy_postrender.profile import tables

    names = {section.name for section in tables.sections()}
    assert {"spec.clusters[]", "spec.targets[]", "spec.workloads.extraEnv[]"} <= names
    assert len(names) == len(tables.sections()) == 20
