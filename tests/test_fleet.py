"""Per-cluster entries (spec.clusters[]) and the settings resolver: which Cluster's nodes get
which proxy, what the workloads get with --cluster, and what is reported or refused."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.noproxy import fleet
from proxy_postrender.noproxy.environments import NODES, WORKLOADS
from proxy_postrender.noproxy.scope import ClusterNetwork
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from proxy_postrender.redact import Redactor
from proxy_postrender.resolve import Resolver, environments
from tests.helpers import DEPLOYMENT, GOLDEN, run_cli

CASE = GOLDEN / "fleet-entries"
PROFILE = CASE / "profile.yaml"
INPUT = (CASE / "input.yaml").read_text()
MUNICH = "http://proxy.munich.corp.example:3128"
PARIS = "http://proxy.paris.corp.example:3128"
CORP = "http://proxy.corp.example:3128"


def _docs(text: str) -> list[Any]:
    return [d for d in YAML(typ="safe").load_all(text) if d is not None]


def _by_name(text: str) -> dict[str, Mapping[str, Any]]:
    return {d["metadata"]["name"]: d for d in _docs(text)}


def _exports(spec: Mapping[str, Any]) -> dict[str, str]:
    """The values the tool's export lines give, as the shell reads them."""
    import shlex

    found = {}
    for command in spec.get("preKubeadmCommands", []):
        if command.startswith("export "):
            name, _, value = command[len("export ") :].partition("=")
            found[name] = shlex.split(value)[0]
    return found


def _profile(text: str, tmp_path: Path, **environ: str) -> Any:
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    return loader.load(str(path), environ=environ, redactor=Redactor())


def test_each_cluster_s_nodes_get_their_entry_and_the_rest_the_defaults() -> None:
    proc = run_cli([str(PROFILE)], INPUT.encode())
    assert proc.returncode == 0, proc.stderr
    out = _by_name(proc.stdout.decode())
    edge1 = _exports(out["edge-1-control-plane"]["spec"]["kubeadmConfigSpec"])
    edge2 = _exports(out["edge-2-control-plane"]["spec"]["kubeadmConfigSpec"])
    central = _exports(out["central-workers"]["spec"]["template"]["spec"])
    assert (edge1["HTTP_PROXY"], edge2["HTTP_PROXY"], central["HTTP_PROXY"]) == (
        MUNICH,
        PARIS,
        CORP,
    )
    # the entry's noProxy is added after spec.noProxy, with the cluster's own networks
    edge1_list = edge1["NO_PROXY"].split(",")
    assert edge1_list[0] == "internal.corp.example"
    assert "registry.munich.corp.example" in edge1_list and "192.168.0.0/16" in edge1_list
    assert "registry.munich.corp.example" not in edge2["NO_PROXY"].split(",")
    assert "172.20.0.0/16" in edge2["NO_PROXY"].split(",")
    assert "10.244.0.0/16" in central["NO_PROXY"].split(",")


_K0S_MACHINES = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: site-a, namespace: fleet}
spec:
  clusterNetwork: {pods: {cidrBlocks: [10.11.0.0/16]}, services: {cidrBlocks: [10.12.0.0/16]}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: site-b, namespace: fleet}
spec:
  clusterNetwork: {pods: {cidrBlocks: [10.21.0.0/16]}, services: {cidrBlocks: [10.22.0.0/16]}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata: {name: worker-a, namespace: fleet}
spec:
  clusterName: site-a
  bootstrap:
    configRef:
      {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: K0sWorkerConfig, name: worker-a}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: K0sWorkerConfig
metadata: {name: worker-a, namespace: fleet}
spec:
  version: v1.32.2+k0s.0
"""
_SITE_A_PROFILE = """\
apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata: {name: fleet}
spec:
  httpProxy: http://proxy.corp.example:3128
  httpsProxy: http://proxy.corp.example:3128
  noProxy: [internal.corp.example]
  clusters:
    - match: {names: [fleet/site-a]}
      httpProxy: http://proxy.site-a.example:3128
      httpsProxy: http://proxy.site-a.example:3128
"""


def test_a_machine_s_own_bootstrap_config_gets_its_cluster_s_entry(tmp_path: Path) -> None:
    """A bootstrap config that a Machine names (k0smotron's samples: a K0sWorkerConfig
    per Machine) belongs to the Machine's Cluster: in a stream of two Clusters it gets
    that Cluster's entry and networks, not the defaults without cluster values."""
    profile = tmp_path / "profile.yaml"
    profile.write_text(_SITE_A_PROFILE)
    proc = run_cli([str(profile), "--report"], _K0S_MACHINES.encode())
    assert proc.returncode == 0, proc.stderr
    # the one coded warning: a Machine's own config bootstraps it once (rollout/effects.py)
    codes = set(re.findall(r"\[([a-z]+/[a-z-]+)\]", proc.stderr.decode()))
    assert codes == {"nodes/no-rollout"}
    config = _by_name(proc.stdout.decode())["worker-a"]
    drop_in = config["spec"]["files"][0]["content"]
    assert 'Environment="HTTP_PROXY=http://proxy.site-a.example:3128"' in drop_in
    assert "10.11.0.0/16,10.12.0.0/16" in drop_in and "10.21.0.0/16" not in drop_in
    assert "referenced by Machine fleet/worker-a; the settings of spec.clusters[0]" in (
        proc.stderr.decode()
    )


def test_the_report_says_which_entry_an_object_got() -> None:
    proc = run_cli([str(PROFILE), "--report"], INPUT.encode())
    report = proc.stderr.decode()
    assert "NO_PROXY for Cluster fleet/edge-1 (referenced by Cluster fleet/edge-1; the " in report
    assert "the settings of spec.clusters[0])" in report
    assert "the settings of spec.clusters[1])" in report


def test_first_match_wins_and_a_shadowed_entry_is_reported(tmp_path: Path) -> None:
    text = PROFILE.read_text() + (
        "    - match:\n        names: [edge-1]\n"
        "      httpProxy: http://proxy.other.corp.example:3128\n"
    )
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    proc = run_cli([str(path), "--report"], INPUT.encode())
    assert proc.returncode == 0, proc.stderr
    out = _by_name(proc.stdout.decode())
    assert _exports(out["edge-1-control-plane"]["spec"]["kubeadmConfigSpec"])["HTTP_PROXY"] == (
        MUNICH
    )
    assert f"[{fleet.SHADOWED_CODE}]" in proc.stderr.decode()
    strict = run_cli([str(path), "--strict"], INPUT.encode())
    assert strict.returncode == 1 and strict.stdout == b""
    assert f"{fleet.SHADOWED_CODE}; --strict" in strict.stderr.decode()


def test_an_entry_that_matches_no_cluster_is_reported_only_for_a_fleet_stream(
    tmp_path: Path,
) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text(
        PROFILE.read_text() + "    - match:\n        names: [fleet/edge-9]\n      noProxy: [x.y]\n"
    )
    proc = run_cli([str(path), "--strict"], INPUT.encode())
    assert proc.returncode == 1
    assert "spec.clusters[2] matches none of the 3 Clusters of the stream" in proc.stderr.decode()
    # a workload render holds no Cluster: every entry would be said, none is
    workload = (GOLDEN / "all-kinds" / "input.yaml").read_bytes()
    quiet = run_cli([str(path), "--report"], workload)
    assert quiet.returncode == 0 and fleet.UNMATCHED_CODE not in quiet.stderr.decode()


@pytest.mark.parametrize(
    "how",
    [
        ["--cluster", "fleet/edge-1"],
        ["--cluster", "edge-1"],
        {"PROXY_POSTRENDER_CLUSTER": "fleet/edge-1"},
        {"ARGOCD_ENV_PROXY_POSTRENDER_CLUSTER": "fleet/edge-1"},
    ],
    ids=["flag", "flag-without-namespace", "env", "argocd-plugin-env"],
)
def test_cluster_chooses_the_workloads_entry(how: list[str] | dict[str, str]) -> None:
    deployment = DEPLOYMENT
    args = [str(PROFILE), *(how if isinstance(how, list) else [])]
    env = how if isinstance(how, dict) else None
    proc = run_cli(args, deployment, env=env)
    assert proc.returncode == 0, proc.stderr
    values = {
        e["name"]: e["value"]
        for d in _docs(proc.stdout.decode())
        if d.get("kind") == "Deployment"
        for c in d["spec"]["template"]["spec"]["containers"]
        for e in c.get("env", [])
    }
    assert values["HTTP_PROXY"] == MUNICH
    assert "registry.munich.corp.example" in values["NO_PROXY"].split(",")


def test_cluster_keeps_other_clusters_nodes_on_their_own_entries() -> None:
    proc = run_cli([str(PROFILE), "--cluster", "fleet/edge-1"], INPUT.encode())
    out = _by_name(proc.stdout.decode())
    assert _exports(out["central-workers"]["spec"]["template"]["spec"])["HTTP_PROXY"] == CORP
    assert _exports(out["edge-2-control-plane"]["spec"]["kubeadmConfigSpec"])["HTTP_PROXY"] == (
        PARIS
    )


def test_a_cluster_that_names_no_entry_is_reported() -> None:
    deployment = DEPLOYMENT
    proc = run_cli([str(PROFILE), "--cluster", "fleet/nowhere", "--report"], deployment)
    assert proc.returncode == 0
    said = "no spec.clusters entry names it (in match.names); the workloads get the defaults"
    assert f"{said} [{fleet.UNKNOWN_CODE}]" in proc.stderr.decode()
    strict = run_cli([str(PROFILE), "--cluster", "fleet/nowhere", "--strict"], deployment)
    assert strict.returncode == 1 and strict.stdout == b""


def test_an_entry_s_password_never_leaves_the_process(tmp_path: Path) -> None:
    secret = "Sup3r-S3cret"
    text = (
        PROFILE.read_text()
        .replace(
            "proxy.munich.corp.example:3128\n      httpsProxy",
            "proxy.munich.corp.example:3128\n      httpsProxy",
        )
        .replace(
            f"httpProxy: {MUNICH}", "httpProxy: http://bob:${MUNICH_PASSWORD}@proxy.munich:3128"
        )
    )
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    env = {"MUNICH_PASSWORD": secret}
    report = run_cli([str(path), "--report"], INPUT.encode(), env=env)
    assert report.returncode == 0, report.stderr
    assert secret.encode() in report.stdout  # inline node bootstrap: the nodes need it
    assert secret.encode() not in report.stderr
    diff = run_cli([str(path), "--diff"], INPUT.encode(), env=env)
    assert diff.returncode == 1
    assert secret.encode() not in diff.stdout + diff.stderr
    assert b"bob:***@" in diff.stdout or b"***@proxy.munich" in diff.stdout
    broken = text.replace("noProxy: [registry.munich.corp.example]", "noProxy: [a b]")
    path.write_text(broken)
    error = run_cli([str(path)], INPUT.encode(), env=env)
    assert error.returncode == 2 and secret.encode() not in error.stderr


def test_an_entry_s_bad_value_is_named_by_its_place(tmp_path: Path) -> None:
    text = PROFILE.read_text().replace(f"httpProxy: {PARIS}", "httpProxy: ftp://paris:21")
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    proc = run_cli([str(path)], INPUT.encode())
    assert proc.returncode == 2
    assert "spec.clusters[1]" in proc.stderr.decode()


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["Fleet/Edge"], "is not [NAMESPACE/]NAME of a Cluster"),
        (["a/b/c"], "is not [NAMESPACE/]NAME of a Cluster"),
        ("edge-1", "must be a list"),
    ],
)
def test_match_names_are_checked(tmp_path: Path, names: Any, message: str) -> None:
    text = (
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nspec:\n"
        f"  httpProxy: {CORP}\n  clusters:\n    - match:\n        names: {names!r}\n"
    ).replace("'", '"')
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    proc = run_cli([str(path)], b"")
    assert proc.returncode == 2
    assert message in proc.stderr.decode()


def test_per_cluster_secret_name_and_ca(tmp_path: Path) -> None:
    pem = GOLDEN / "ca-workloads" / "corp-ca.pem"
    ca = f"      caBundle:\n        file: {pem}\n"
    text = (
        PROFILE.read_text()
        .replace(
            "      noProxy: [registry.munich.corp.example]       # added to spec.noProxy\n",
            "      noProxy: [registry.munich.corp.example]\n      nodes:\n"
            "        secretName: munich-proxy\n" + ca,
        )
        .replace(
            f"      httpsProxy: {PARIS}\n",
            f"      httpsProxy: {PARIS}\n      nodes:\n        secretName: paris-proxy\n",
        )
        + "  nodes:\n    credentials: secret\n    secretName: corp-proxy\n"
    )
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    proc = run_cli([str(path)], INPUT.encode())
    assert proc.returncode == 0, proc.stderr
    docs = _docs(proc.stdout.decode())
    # each name with the digest of the Secret's content (rollout/, nodes/digest.py)
    secrets = {d["metadata"]["name"][:-11] for d in docs if d.get("kind") == "Secret"}
    assert secrets == {"munich-proxy", "paris-proxy", "corp-proxy"}
    out = {d["metadata"]["name"]: d for d in docs}
    files = out["edge-1-control-plane"]["spec"]["kubeadmConfigSpec"]["files"]
    read = {f["contentFrom"]["secret"]["name"] for f in files if "contentFrom" in f}
    assert len(read) == 1 and read.pop() in {d["metadata"]["name"] for d in docs}
    assert {f["contentFrom"]["secret"]["name"][:-11] for f in files if "contentFrom" in f} == {
        "munich-proxy"
    }
    assert any(f["path"].endswith("proxy-ca.crt") for f in files)
    others = out["edge-2-control-plane"]["spec"]["kubeadmConfigSpec"]["files"]
    assert not any(f["path"].endswith("proxy-ca.crt") for f in others)


def test_runs_are_idempotent_and_remove_is_exact() -> None:
    once = run_cli([str(PROFILE)], INPUT.encode())
    twice = run_cli([str(PROFILE)], once.stdout)
    assert twice.stdout == once.stdout
    removed = run_cli([str(PROFILE), "--remove"], once.stdout)
    assert removed.stdout.decode() == INPUT


def test_the_resolver_answers_per_object(tmp_path: Path) -> None:
    loaded = loader.load(str(PROFILE), environ={}, redactor=Redactor())
    request = to_request(loaded)
    from proxy_postrender.noproxy.discovery import discover_stream
    from proxy_postrender.yamltext import stream

    index = discover_stream(stream.split(INPUT))
    resolver = Resolver(request, environments(request, index))
    control_plane = _by_name(INPUT)["edge-2-control-plane"]
    chosen = resolver.resolve(control_plane, NODES)
    assert chosen.value("HTTPS_PROXY") == PARIS
    assert chosen.request is request.rules()[1].request
    assert chosen.found.entry == 1
    workload = {"kind": "Deployment", "metadata": {"name": "x"}}
    assert resolver.resolve(workload, WORKLOADS).value("HTTPS_PROXY") == CORP
    assert request.urls() == [CORP, MUNICH, PARIS]


def test_choose_one_refuses_clusters_with_different_entries() -> None:
    a = ClusterNetwork("Cluster ns/a", cluster=("ns", "a"))
    b = ClusterNetwork("Cluster ns/b", cluster=("ns", "b"), labels=(("site", "x"),))
    matches = [fleet.ClusterMatch(names=("ns/a",)), fleet.ClusterMatch(labels=(("site", "x"),))]
    assert fleet.choose_one(matches, [a], ["e0", "e1"]) == 0
    assert fleet.choose_one(matches, [b], ["e0", "e1"]) == 1
    assert fleet.choose_one(matches, [], ["e0", "e1"]) == fleet.DEFAULTS
    with pytest.raises(InputError, match="e0, Cluster ns/b gets e1"):
        fleet.choose_one(matches, [a, b], ["e0", "e1"])


def test_engine_process_with_entries_is_deterministic() -> None:
    loaded = loader.load(str(PROFILE), environ={}, redactor=Redactor())
    first = engine.process(INPUT, to_request(loaded)).text
    assert (
        first
        == engine.process(INPUT, to_request(loaded)).text
        == (CASE / "expected.yaml").read_text()
    )
    assert os.environ.get("PROXY_POSTRENDER_CLUSTER") is None


def test_noproxy_shows_each_cluster_with_its_entry() -> None:
    listed = run_cli(["noproxy", str(PROFILE), "--stream", str(CASE / "input.yaml")])
    assert listed.returncode == 0, listed.stderr
    lines = dict(line.split(": ", 1) for line in listed.stdout.decode().splitlines())
    assert "registry.munich.corp.example" in lines["Cluster fleet/edge-1"].split(",")
    assert "registry.munich.corp.example" not in lines["Cluster fleet/edge-2"].split(",")
    assert "registry.munich.corp.example" not in lines["workloads"].split(",")
    explained = run_cli(
        ["noproxy", "--explain", "--cluster", "edge-2", str(PROFILE)],
        env={},
    )
    # label-matched: only a stream can say it is edge-2's; without one, the defaults, said
    assert explained.returncode == 0
    assert "no spec.clusters entry names it" in explained.stdout.decode()
    with_stream = run_cli(
        [
            "noproxy",
            "--explain",
            "--cluster",
            "edge-2",
            str(PROFILE),
            "--stream",
            str(CASE / "input.yaml"),
        ]
    )
    assert with_stream.stdout.decode().startswith(
        "# NO_PROXY for Cluster fleet/edge-2 (the settings of spec.clusters[1])"
    )


def test_noproxy_explain_cluster_without_a_stream_shows_the_entry_it_names() -> None:
    proc = run_cli(["noproxy", "--explain", "--cluster", "fleet/edge-1", str(PROFILE)])
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert text.startswith("# NO_PROXY for workloads (the settings of spec.clusters[0])")
    assert "registry.munich.corp.example   spec.clusters[0].noProxy" in text
    check = run_cli(
        [
            "noproxy",
            "check",
            "--profile",
            str(PROFILE),
            "--cluster",
            "fleet/edge-1",
            "registry.munich.corp.example",
        ]
    )
    assert check.returncode == 0, check.stderr
    assert "direct" in check.stdout.decode()


def test_an_entry_for_a_cluster_rendered_without_its_namespace_says_to_pass_it() -> None:
    text = INPUT.replace("  namespace: fleet\n", "")
    proc = run_cli([str(PROFILE), "--report"], text.encode())
    assert "Cluster edge-1 has no namespace in the stream: pass --namespace fleet" in (
        proc.stderr.decode()
    )
    placed = run_cli([str(PROFILE), "--namespace", "fleet"], text.encode())
    out = _by_name(placed.stdout.decode())
    assert _exports(out["edge-1-control-plane"]["spec"]["kubeadmConfigSpec"])["HTTP_PROXY"] == (
        MUNICH
    )


def test_an_entry_with_another_proxy_does_not_borrow_the_defaults_user(tmp_path: Path) -> None:
    text = PROFILE.read_text().replace(
        "  noProxy: [internal.corp.example]\n",
        "  noProxy: [internal.corp.example]\n"
        "  credentials:\n    fromEnv: {user: PU, password: PP}\n",
    )
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    env = {"PU": "corp-user", "PP": "corp-Passw0rd"}
    proc = run_cli([str(path)], INPUT.encode(), env=env)
    assert proc.returncode == 2
    assert "spec.clusters[0]: gives its own httpProxy and httpsProxy but would keep " in (
        proc.stderr.decode()
    )
    fixed = text.replace(
        "      noProxy: [registry.munich.corp.example]",
        "      noProxy: [registry.munich.corp.example]\n      credentials: {}",
    ).replace(
        f"      httpsProxy: {PARIS}\n", f"      httpsProxy: {PARIS}\n      credentials: {{}}\n"
    )
    path.write_text(fixed)
    ok = run_cli([str(path)], INPUT.encode(), env=env)
    assert ok.returncode == 0, ok.stderr
    out = _by_name(ok.stdout.decode())
    assert _exports(out["edge-1-control-plane"]["spec"]["kubeadmConfigSpec"])["HTTP_PROXY"] == (
        MUNICH
    )
    central = _exports(out["central-workers"]["spec"]["template"]["spec"])["HTTP_PROXY"]
    assert central == "http://corp-user:corp-Passw0rd@proxy.corp.example:3128"


def test_an_entry_s_bad_field_is_named_as_written(tmp_path: Path) -> None:
    text = PROFILE.read_text().replace(f"httpProxy: {PARIS}", "httpProxy: http://paris:99999")
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    proc = run_cli([str(path)], INPUT.encode())
    assert "(fleet): spec.clusters[1].httpProxy: proxy URL 'http://paris:99999': invalid port" in (
        proc.stderr.decode()
    )


def _variable(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    (found,) = [v for v in doc["spec"]["topology"]["variables"] if v["name"] == "proxyPostrender"]
    value: Mapping[str, Any] = found["value"]
    return value


def test_a_cluster_class_s_clusters_get_their_entries_in_their_variables() -> None:
    case = GOLDEN / "fleet-clusterclass"
    proc = run_cli([str(case / "profile.yaml")], (case / "input.yaml").read_bytes())
    assert proc.returncode == 0, proc.stderr
    docs = _docs(proc.stdout.decode())
    clusters = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Cluster"}
    munich, berlin = _variable(clusters["munich"]), _variable(clusters["berlin"])
    assert munich["httpProxy"] == "http://proxy.munich.corp.example:3128"
    assert "registry.munich.corp.example" in munich["noProxy"]
    assert berlin["httpProxy"] == "http://proxy.berlin.corp.example:3128"
    assert "registry.munich.corp.example" not in berlin["noProxy"]
    (klass,) = [d for d in docs if d["kind"] == "ClusterClass"]
    (variable,) = [v for v in klass["spec"]["variables"] if v["name"] == "proxyPostrender"]
    default = variable["schema"]["openAPIV3Schema"]["default"]
    assert default["httpProxy"] == CORP  # the defaults: no cluster's entry
    # the class and its templates do not depend on which Clusters the stream holds
    alone = [d for d in _docs((case / "input.yaml").read_text()) if d["kind"] != "Cluster"]
    buffer = __import__("io").StringIO()
    YAML().dump_all(alone, buffer)
    without = run_cli([str(case / "profile.yaml")], buffer.getvalue().encode())
    shared = {d["metadata"]["name"]: d for d in docs if d["kind"] != "Cluster"}
    assert {d["metadata"]["name"]: d for d in _docs(without.stdout.decode())} == shared


def test_secret_mode_gives_each_cluster_of_a_class_a_secret_in_its_namespace() -> None:
    case = GOLDEN / "fleet-clusterclass-secret"
    proc = run_cli([str(case / "profile.yaml")], (case / "input.yaml").read_bytes())
    assert proc.returncode == 0, proc.stderr
    secrets = {
        d["metadata"]["namespace"]: d["stringData"]["proxy.env"]
        for d in _docs(proc.stdout.decode())
        if d["kind"] == "Secret"
    }
    assert "proxy.munich.corp.example" in secrets["fleet-munich"]
    assert "proxy.berlin.corp.example" in secrets["fleet-berlin"]
    assert "proxy.corp.example:3128" in secrets["fleet"]  # the class's own namespace
    # two clusters of the class in one namespace with different values: refused
    together = (case / "input.yaml").read_text().replace("fleet-berlin", "fleet-munich")
    clash = run_cli([str(case / "profile.yaml")], together.encode())
    assert clash.returncode == 1 and clash.stdout == b""
    assert "in secret mode the ClusterClass clusters of one namespace read one Secret" in (
        clash.stderr.decode()
    )


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (
            f"      caBundle:\n        file: {GOLDEN / 'ca-workloads' / 'corp-ca.pem'}\n",
            "spec.clusters[1] gives this Cluster its own caBundle",
        ),
        (
            "      nodes:\n        secretName: berlin-proxy\n",
            "spec.clusters[1] gives this Cluster its own nodes.secretName",
        ),
    ],
    ids=["ca", "secret-name"],
)
def test_what_a_class_cannot_carry_per_cluster_is_refused(
    tmp_path: Path, extra: str, said: str
) -> None:
    case = GOLDEN / "fleet-clusterclass-secret"
    path = tmp_path / "profile.yaml"
    text = (
        (case / "profile.yaml")
        .read_text()
        .replace(
            "      httpsProxy: http://proxy.berlin.corp.example:3128\n",
            "      httpsProxy: http://proxy.berlin.corp.example:3128\n" + extra,
        )
    )
    path.write_text(text)
    proc = run_cli([str(path)], (case / "input.yaml").read_bytes())
    assert proc.returncode == 1 and proc.stdout == b""
    assert "Cluster fleet-berlin/berlin" in proc.stderr.decode()
    assert said in proc.stderr.decode()


def test_secret_mode_clusters_of_a_class_in_one_namespace_share_one_secret(
    tmp_path: Path,
) -> None:
    case = GOLDEN / "capi-clusterclass-topology"  # munich and berlin, both in fleet
    path = tmp_path / "profile.yaml"
    path.write_text(
        (GOLDEN / "profile.yaml").read_text()
        + "  nodes:\n    credentials: secret\n    secretName: site-proxy\n"
    )
    proc = run_cli([str(path)], (case / "input.yaml").read_bytes())
    assert proc.returncode == 0, proc.stderr
    (secret,) = [d for d in _docs(proc.stdout.decode()) if d["kind"] == "Secret"]
    listed = secret["stringData"]["proxy.env"]
    # one Secret for both: the networks of both clusters, whose nodes read it
    assert "10.244.0.0/16" in listed and "192.168.0.0/16" in listed
    assert secret["metadata"]["namespace"] == "fleet"


def test_an_inline_password_in_an_entry_is_warned_about(tmp_path: Path) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text(
        PROFILE.read_text().replace(
            f"httpProxy: {PARIS}", "httpProxy: http://svc:Inl1ne-Pw@proxy.paris.corp.example:3128"
        )
    )
    proc = run_cli([str(path), "--report"], INPUT.encode())
    assert proc.returncode == 0, proc.stderr
    report = proc.stderr.decode()
    assert "spec.clusters[1]: spec.httpProxy holds its credentials inline in the profile" in report
    assert "Inl1ne-Pw" not in report


def test_noproxy_reads_a_namespace_less_stream_as_the_run_does(tmp_path: Path) -> None:
    stream = tmp_path / "clusters.yaml"
    stream.write_text(INPUT.replace("  namespace: fleet\n", ""))
    args = ["noproxy", "--explain", "--cluster", "fleet/edge-1", str(PROFILE)]
    placed = run_cli([*args, "--stream", str(stream), "--namespace", "fleet"])
    assert placed.returncode == 0, placed.stderr
    assert placed.stdout.decode().startswith(
        "# NO_PROXY for Cluster fleet/edge-1 (the settings of spec.clusters[0])"
    )


def test_noproxy_cluster_without_stream_or_entry_shows_the_defaults_and_says_so() -> None:
    proc = run_cli(["noproxy", "--explain", "--cluster", "paris-1", str(PROFILE)])
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert text.startswith("# NO_PROXY for workloads\n")
    assert "warning: --cluster paris-1: no spec.clusters entry names it" in text


def test_secret_mode_a_namespace_less_class_template_gives_no_second_secret(
    tmp_path: Path,
) -> None:
    """The class's templates without a namespace would get the defaults' Secret, and a
    Cluster of the stream its own under the same name: applied into its namespace, the
    second would overwrite the first (found on upstream RKE2, K3s and kubeadm classes)."""
    case = GOLDEN / "capi-clusterclass-topology"
    text = (case / "input.yaml").read_text()
    # the class and its templates without a namespace, as clusterctl templates ship them
    docs = text.split("\n---\n")
    stripped = [
        d.replace("  namespace: fleet\n", "", 1) if "kind: Cluster\n" not in d else d for d in docs
    ]
    path = tmp_path / "profile.yaml"
    path.write_text(
        (GOLDEN / "profile.yaml").read_text()
        + "  nodes:\n    credentials: secret\n    secretName: site-proxy\n"
    )
    proc = run_cli([str(path), "--namespace", "fleet"], "\n---\n".join(stripped).encode())
    assert proc.returncode == 0, proc.stderr
    plain = run_cli([str(path)], "\n---\n".join(stripped).encode())
    assert plain.returncode == 0, plain.stderr
    secrets = [d for d in _docs(plain.stdout.decode()) if d["kind"] == "Secret"]
    assert [s["metadata"]["name"] for s in secrets] == ["site-proxy"]
    assert secrets[0]["metadata"]["namespace"] == "fleet"
