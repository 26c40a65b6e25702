"""Issue 30: a proxy change reaches every running node (rollout-aware node bootstrap).

The judge is tests/rollout_oracle.py, a model of Cluster API's rollout decisions
written from its source: after a profile change, with the renames every machine of
every changed MachineDeployment and control plane is replaced; in place, none of the
workers; a second run with the same profile triggers nothing; and no reference of the
output dangles.
"""

from __future__ import annotations

import datetime
import io
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from proxy_postrender.rollout import codes as rollout_codes
from proxy_postrender.structs import replace
from tests import rollout_oracle as oracle
from tests.helpers import GOLDEN, SHARED_PROFILE, resource_list, run_cli

NOW = datetime.datetime(2026, 11, 27, 12, 0, tzinfo=datetime.UTC)
TEMPLATES = (GOLDEN / "rollout-templates" / "input.yaml").read_text()
MOVED = (GOLDEN / "rollout-changed-profile" / "profile.yaml").read_text()


def _profile(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _with_nodes(base: str, nodes: str) -> str:
    """A profile text with ``nodes`` (indented lines) as its spec.nodes."""
    return base.rstrip("\n") + "\n  nodes:\n" + nodes


def _run(text: str, profile: Path | str = SHARED_PROFILE, *args: str) -> str:
    proc = run_cli([str(profile), *args], text.encode())
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def _objects(text: str) -> list[Any]:
    return [d for d in YAML(typ="safe").load_all(text) if d]


def _rolling(before: str, after: str) -> set[str]:
    return oracle.rolling(_objects(before), _objects(after), now=NOW)


def _in_place(tmp_path: Path) -> Path:
    """The shared profile with spec.nodes.rollout: inPlace."""
    text = _with_nodes(SHARED_PROFILE.read_text(), "    rollout: inPlace\n")
    return _profile(tmp_path, text, "in-place.yaml")


def _request(path: Path | str) -> Any:
    return to_request(loader.load(str(path), environ={}))


# --- what rolls, by the oracle ------------------------------------------------------------


def test_a_changed_proxy_rolls_every_machine_deployment_and_control_plane(
    tmp_path: Path,
) -> None:
    first = _run(TEMPLATES)
    second = _run(first, _profile(tmp_path, MOVED))
    assert _rolling(first, second) == {
        "MachineDeployment/c1-md-0",
        "MachineDeployment/c1-md-1",
        "KubeadmControlPlane/c1-cp",
    }
    assert oracle.dangling_references(_objects(second)) == []
    # the same profile again: nothing rolls, nothing changes
    assert _run(second, _profile(tmp_path, MOVED)) == second
    assert _rolling(second, second) == set()


def test_the_first_run_rolls_what_it_changes_too() -> None:
    """A cluster running without the proxy gets it: its workers roll onto the renamed
    templates (the renamed templates are new objects of the render)."""
    out = _run(TEMPLATES)
    assert _rolling(TEMPLATES, out) == {
        "MachineDeployment/c1-md-0",
        "MachineDeployment/c1-md-1",
        "KubeadmControlPlane/c1-cp",
    }
    assert oracle.dangling_references(_objects(out)) == []


def test_in_place_rolls_no_worker_and_says_so(tmp_path: Path) -> None:
    in_place = _profile(tmp_path, _with_nodes(MOVED, "    rollout: inPlace\n"))
    first = _run(TEMPLATES, _in_place(tmp_path))
    proc = run_cli([str(in_place), "--report"], first.encode())
    second = proc.stdout.decode()
    assert _rolling(first, second) == {"KubeadmControlPlane/c1-cp"}  # the oracle: no worker
    report = proc.stderr.decode()
    assert report.count("[nodes/no-rollout]") == 2  # one per changed template
    assert "set spec.nodes.rollout: rename, or spec.nodes.rolloutAfter" in report


def test_a_rollout_time_rolls_them_in_place(tmp_path: Path) -> None:
    nodes = '    rollout: inPlace\n    rolloutAfter: "2026-11-27T06:00:00Z"\n'
    first = _run(TEMPLATES, _in_place(tmp_path))
    proc = run_cli([str(_profile(tmp_path, _with_nodes(MOVED, nodes))), "--report"], first.encode())
    second = proc.stdout.decode()
    assert _rolling(first, second) == {
        "MachineDeployment/c1-md-0",
        "MachineDeployment/c1-md-1",
        "KubeadmControlPlane/c1-cp",
    }
    assert "[nodes/no-rollout]" not in proc.stderr.decode()
    # before the time has passed only the control plane rolls (its spec changed), and
    # the names stay
    early = datetime.datetime(2026, 11, 27, 5, 0, tzinfo=datetime.UTC)
    rolls = oracle.rolling(_objects(first), _objects(second), now=early)
    assert rolls == {"KubeadmControlPlane/c1-cp"}
    assert re.findall(r"name: (c1-md-[01]\S*)", second) == re.findall(
        r"name: (c1-md-[01]\S*)", first
    )


def test_secret_mode_rolls_on_a_new_password(tmp_path: Path) -> None:
    """Only the Secret's content changes, and yet everything rolls: its name carries the
    digest of that content, so every kubeadm object that reads it changes."""
    profile = (GOLDEN / "rollout-secret" / "profile.yaml").read_text()
    one = profile.replace("http://proxy.corp", "http://u:one@proxy.corp")
    two = profile.replace("http://proxy.corp", "http://u:two@proxy.corp")
    first = _run(TEMPLATES, _profile(tmp_path, one, "one.yaml"))
    second = _run(first, _profile(tmp_path, two, "two.yaml"))
    # the passwords are in the Secret only
    assert "u:one" not in first.split("kind: Secret")[0]
    assert "u:two" not in second.split("kind: Secret")[0]
    assert _rolling(first, second) == {
        "MachineDeployment/c1-md-0",
        "MachineDeployment/c1-md-1",
        "KubeadmControlPlane/c1-cp",
    }
    secrets = [d for d in _objects(second) if d["kind"] == "Secret"]
    assert len(secrets) == 1 and oracle.dangling_references(_objects(second)) == []
    # the earlier run's Secret is dropped: one Secret, the new name
    assert secrets[0]["metadata"]["name"] not in first


def test_a_machine_pool_is_bootstrapped_anew(tmp_path: Path) -> None:
    text = (GOLDEN / "rollout-machinepool" / "input.yaml").read_text()
    first = _run(text)
    second = _run(first, _profile(tmp_path, MOVED))
    assert _rolling(first, second) == {"MachinePool/c1-mp-0"}
    assert oracle.dangling_references(_objects(second)) == []


def test_a_cluster_class_stream_moves_both_class_references(tmp_path: Path) -> None:
    text = (GOLDEN / "rollout-clusterclass" / "input.yaml").read_text()
    out = _run(text)
    (cc,) = [d for d in _objects(out) if d["kind"] == "ClusterClass"]
    workers = cc["spec"]["workers"]
    refs = [w["template"]["bootstrap"]["ref"]["name"] for w in workers["machineDeployments"]]
    refs += [w["template"]["bootstrap"]["ref"]["name"] for w in workers["machinePools"]]
    (template,) = [d for d in _objects(out) if d["kind"] == "KubeadmConfigTemplate"]
    renamed = template["metadata"]["name"]
    assert renamed.startswith("quick-start-worker-") and refs == [renamed, renamed]
    assert oracle.dangling_references(_objects(out)) == []
    proc = run_cli([str(SHARED_PROFILE), "--report"], text.encode())
    report = proc.stderr.decode()
    # a MachinePool class: the topology controller patches its configs in place
    assert "[nodes/no-rollout]" in report and "cluster-api #10496" in report


# --- the report ---------------------------------------------------------------------------


def test_each_changed_node_object_gets_one_rollout_line() -> None:
    proc = run_cli([str(SHARED_PROFILE), "--report"], TEMPLATES.encode())
    lines = [line.strip() for line in proc.stderr.decode().splitlines() if "rollout:" in line]
    assert lines == [
        "note: rollout: renamed c1-md-0-3f9a1c-b95aea2deb: rolls MachineDeployment "
        "org-a/c1-md-0 (every machine is replaced)",
        "note: rollout: renamed c1-md-1-b95aea2deb: rolls MachineDeployment org-a/c1-md-1 "
        "(every machine is replaced)",
        "note: rollout: every control-plane machine is replaced (their KubeadmConfigs no "
        "longer match the spec)",
    ]
    again = run_cli([str(SHARED_PROFILE), "--report"], proc.stdout)
    assert "rollout:" not in again.stderr.decode()  # nothing changed: nothing to say


def test_a_lone_template_is_a_warning_and_an_error_under_strict() -> None:
    text = (GOLDEN / "rollout-lone-template" / "input.yaml").read_text()
    result = engine.process(text, _request(SHARED_PROFILE))
    (finding,) = [f for f in result.findings if f.code == rollout_codes.NO_ROLLOUT_CODE]
    assert finding.context is not None and finding.context.name == "c1-md-0"
    assert "render it together with what uses it" in finding.message
    assert "name: c1-md-0\n" in result.text  # changed in place, never renamed alone
    strict = run_cli([str(SHARED_PROFILE), "--strict"], text.encode())
    assert strict.returncode == 1 and strict.stdout == b""


def test_krm_results_carry_the_line_and_the_code(tmp_path: Path) -> None:
    lone = (GOLDEN / "rollout-lone-template" / "input.yaml").read_text()
    items = _objects(TEMPLATES) + _objects(lone.replace("c1-md-0", "c2-md-0"))
    config = YAML(typ="safe").load(SHARED_PROFILE.read_text())
    proc = run_cli([], resource_list(items, config))
    assert proc.returncode == 0, proc.stderr
    results = YAML(typ="safe").load(proc.stdout)["results"]
    messages = [r["message"] for r in results]
    assert any("rollout: renamed c1-md-1-b95aea2deb" in m for m in messages)
    coded = [r for r in results if r.get("tags", {}).get("code") == rollout_codes.NO_ROLLOUT_CODE]
    assert [r["resourceRef"]["name"] for r in coded] == ["c2-md-0"]
    assert coded[0]["tags"]["strict"] == "true"


def test_diff_shows_the_renames(tmp_path: Path) -> None:
    first = _run(TEMPLATES)
    proc = run_cli([str(_profile(tmp_path, MOVED)), "--diff"], first.encode())
    diff = proc.stdout.decode()
    assert '-  name: "c1-md-1-b95aea2deb"\n' in diff
    assert '+  name: "c1-md-1-87daa24c64"\n' in diff
    assert '-          name: "c1-md-1-b95aea2deb"\n' in diff  # the MachineDeployment's


# --- names ---------------------------------------------------------------------------------


def test_the_referrer_may_come_before_or_after_its_template() -> None:
    docs = TEMPLATES.split("\n---\n")
    reordered = "\n---\n".join(reversed(docs)) + "\n"
    out = _run(reordered)
    names = set(re.findall(r"name: (c1-md-0-3f9a1c\S*)", out))
    assert names == {"c1-md-0-3f9a1c-b95aea2deb"}  # the same name, whatever the order
    assert oracle.dangling_references(_objects(out)) == []


def test_the_name_is_the_profile_s_whatever_the_history(tmp_path: Path) -> None:
    moved = _profile(tmp_path, MOVED)
    direct = _run(TEMPLATES, moved)
    through = _run(_run(TEMPLATES), moved)
    assert direct == through
    assert _run(through, SHARED_PROFILE, "--remove") == TEMPLATES


def test_a_name_too_long_for_its_digest_is_an_error() -> None:
    long = "w" * 250
    text = TEMPLATES.replace("c1-md-0-3f9a1c", long)
    proc = run_cli([str(SHARED_PROFILE)], text.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    assert "cannot carry the digest of its proxy content" in proc.stderr.decode()


def test_two_templates_may_not_end_with_one_name() -> None:
    """A template named like another's renamed form would collide with it."""
    out = _run(TEMPLATES)
    taken = out.split("\n---\n")[1].replace("namespace: org-a", "namespace: org-a", 1)
    # the earlier output's renamed template, plus the original stream: two objects of one
    # kind would be named c1-md-0-3f9a1c-b95aea2deb
    clash = TEMPLATES + "---\n" + taken.replace("proxy-postrender.io/node-bootstrap", "x/y")
    with pytest.raises(InputError):
        engine.process(clash, _request(SHARED_PROFILE))


def test_a_template_nothing_refers_to_keeps_its_name_and_a_renamed_one_stays() -> None:
    """A template renamed by an earlier run whose referrer is not in this stream keeps its
    name (moving it back would leave the cluster's MachineDeployment without it)."""
    out = _run(TEMPLATES)
    template = out.split("\n---\n")[1]
    assert "name: c1-md-0-3f9a1c-b95aea2deb" in template
    result = engine.process(template, _request(SHARED_PROFILE))
    assert result.text == template


def test_remove_restores_quoted_names_exactly() -> None:
    out = _run(TEMPLATES)
    assert 'name: "c1-md-1-b95aea2deb"' in out  # the input quoted it: the rename too
    assert _run(out, SHARED_PROFILE, "--remove") == TEMPLATES


# --- secret mode under a fixed name --------------------------------------------------------


def test_a_class_secret_with_new_values_under_its_name_is_a_warning(tmp_path: Path) -> None:
    """The templates of a ClusterClass name one Secret for all its clusters: its name
    cannot carry one content's digest, so new values under it reach no running machine."""
    case = GOLDEN / "fleet-clusterclass-secret"
    profile = (case / "profile.yaml").read_text()
    first = _run((case / "input.yaml").read_text(), case / "profile.yaml")
    moved = _profile(tmp_path, profile.replace("proxy.munich.corp", "proxy2.munich.corp"))
    proc = run_cli([str(moved), "--report"], first.encode())
    assert proc.returncode == 0, proc.stderr
    report = proc.stderr.decode()
    assert (
        "the node Secret fleet-munich/site-proxy holds new proxy values under the same name"
        in report
    )
    assert "[nodes/no-rollout]" in report
    # the same values again: nothing to say
    again = run_cli([str(case / "profile.yaml"), "--report"], first.encode())
    assert "under the same name" not in again.stderr.decode()


def test_secret_mode_in_place_says_nothing_rolls(tmp_path: Path) -> None:
    profile = (GOLDEN / "rollout-secret" / "profile.yaml").read_text()
    in_place = profile + "    rollout: inPlace\n"
    first = _run(TEMPLATES, _profile(tmp_path, in_place, "a.yaml"))
    moved = in_place.replace("http://proxy.corp", "http://proxy2.corp")
    proc = run_cli([str(_profile(tmp_path, moved, "b.yaml")), "--report"], first.encode())
    second = proc.stdout.decode()
    assert _rolling(first, second) == set()  # nothing reads a new name: nothing rolls
    assert "set spec.nodes.rollout: rename [nodes/no-rollout]" in proc.stderr.decode()


# --- the invariants, for any two profiles ------------------------------------------------

_HOSTS = st.sampled_from(["proxy-a.corp.example", "proxy-b.corp.example", "10.1.2.3"])
_PASSWORDS = st.one_of(st.none(), st.text(alphabet="abcXYZ019@#%'", min_size=1, max_size=6))


def _url(host: str, port: int, password: str | None) -> str:
    userinfo = "" if password is None else f"u:{urllib.parse.quote(password, safe='')}@"
    return f"http://{userinfo}{host}:{port}"


def _profile_object(url: str, secret: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"httpProxy": url, "httpsProxy": url, "noProxy": ["corp.example"]}
    if secret:
        spec["nodes"] = {"credentials": "secret", "secretName": "corp-proxy"}
    return {
        "apiVersion": "proxy-postrender.io/v1alpha1",
        "kind": "ProxyProfile",
        "metadata": {"name": "p"},
        "spec": spec,
    }


def _request_of(obj: dict[str, Any]) -> Any:
    return to_request(loader.from_object(obj, "profile", environ={}))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    a=st.tuples(_HOSTS, st.integers(1, 65535), _PASSWORDS),
    b=st.tuples(_HOSTS, st.integers(1, 65535), _PASSWORDS),
    secret=st.booleans(),
)
def test_any_two_profiles_roll_exactly_what_changed(
    a: tuple[str, int, str | None], b: tuple[str, int, str | None], secret: bool
) -> None:
    first = _request_of(_profile_object(_url(*a), secret))
    second = _request_of(_profile_object(_url(*b), secret))
    out_a = engine.process(TEMPLATES, first).text
    out_b = engine.process(out_a, second).text
    objects_a, objects_b = _objects(out_a), _objects(out_b)
    assert oracle.dangling_references(objects_b) == []
    everything = {
        "MachineDeployment/c1-md-0",
        "MachineDeployment/c1-md-1",
        "KubeadmControlPlane/c1-cp",
    }
    rolls = oracle.rolling(objects_a, objects_b, now=NOW)
    assert rolls == (everything if _url(*a) != _url(*b) else set())
    # one profile, one output, whatever ran before; and the input back from either
    assert engine.process(TEMPLATES, second).text == out_b
    assert engine.process(out_b, second).text == out_b
    removing = replace(second, env=(), nodes=None)
    assert engine.process(out_b, removing).text == TEMPLATES


# --- referrers as real streams write them (found on upstream templates) -------------------


def test_a_referrer_without_a_namespace_fits_a_template_with_one() -> None:
    """CAPV's ClusterClass template has no namespace, its templates have one (the rule of
    the Cluster discovery: either side without one fits)."""
    docs = TEMPLATES.split("\n---\n")
    docs[0] = docs[0].replace("  namespace: org-a\n", "", 1)
    out = _run("\n---\n".join(docs))
    (md,) = [d for d in _objects(out) if d["metadata"]["name"] == "c1-md-0"]
    assert "namespace" not in md["metadata"]
    assert md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"] == (
        "c1-md-0-3f9a1c-b95aea2deb"
    )
    assert "name: c1-md-0-3f9a1c-b95aea2deb\n  namespace: org-a" in out
    klass = (GOLDEN / "rollout-clusterclass" / "input.yaml").read_text()
    unspaced = klass.replace("  name: quick-start\n  namespace: org-a\n", "  name: quick-start\n")
    assert unspaced != klass
    report = run_cli([str(SHARED_PROFILE), "--report"], unspaced.encode()).stderr.decode()
    moved = "reference moved: KubeadmConfigTemplate quick-start-worker -> quick-start-worker-"
    assert report.count(moved) == 2  # the MachineDeployment class and the MachinePool class


_TWO_SITES = """\
  clusters:
    - match: {names: [org-b/c2]}
      httpProxy: http://proxy.site-b.example:3128
      httpsProxy: http://proxy.site-b.example:3128
"""


def test_a_reference_without_a_namespace_to_two_renamed_apart_is_an_error(
    tmp_path: Path,
) -> None:
    """Two templates of one name in two namespaces get different proxies, so different
    names: a MachineDeployment without a namespace may mean either, and is refused."""
    docs = TEMPLATES.split("\n---\n")
    other = docs[1].replace(
        "namespace: org-a", "namespace: org-b\n  labels:\n    cluster.x-k8s.io/cluster-name: c2"
    )
    unspaced = docs[0].replace("  namespace: org-a\n", "", 1)
    cluster = (
        "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\n"
        "metadata: {name: c2, namespace: org-b}\nspec: {}"
    )
    text = "\n---\n".join([unspaced, docs[1], other, cluster]) + "\n"
    profile = _profile(tmp_path, SHARED_PROFILE.read_text() + _TWO_SITES)
    proc = run_cli([str(profile)], text.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    assert "has no namespace, and objects of that name in several namespaces" in (
        proc.stderr.decode()
    )
    spaced = "\n---\n".join([docs[0], docs[1], other, cluster]) + "\n"
    out = _run(spaced, profile)
    # the MachineDeployment names org-a's: renamed; org-b's, named by nothing of the
    # stream, keeps its name
    names = re.findall(r"name: (c1-md-0-3f9a1c\S*)\n  namespace: (org-[ab])", out)
    assert sorted(names) == [("c1-md-0-3f9a1c", "org-b"), ("c1-md-0-3f9a1c-b95aea2deb", "org-a")]


def test_a_machine_set_is_renamed_for_and_warned_about() -> None:
    text = TEMPLATES.replace(
        "kind: MachineDeployment\nmetadata:\n  name: c1-md-0",
        "kind: MachineSet\nmetadata:\n  name: c1-md-0",
    )
    proc = run_cli([str(SHARED_PROFILE), "--report"], text.encode())
    report = proc.stderr.decode()
    assert "never replaces its machines: delete them, or let a MachineDeployment own it" in report
    assert "set spec.nodes.rollout: rename" not in report.split("MachineSet org-a/c1-md-0 never")[1]


_MANAGED_POOL = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata: {name: pool-0, namespace: eks}
spec:
  clusterName: eks
  template:
    spec:
      clusterName: eks
      bootstrap:
        configRef:
          {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: NodeadmConfig, name: pool-0}
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
        kind: AWSManagedMachinePool
        name: pool-0
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSManagedMachinePool
metadata: {name: pool-0, namespace: eks}
spec:
  scaling: {minSize: 1, maxSize: 3}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: NodeadmConfig
metadata: {name: pool-0, namespace: eks}
spec:
  kubelet: {}
"""


def test_an_eks_managed_node_group_without_a_launch_template_is_warned_about() -> None:
    """CAPA gives a managed node group's nodes bootstrap data only through its launch
    template: without one the proxy never reaches them."""
    proc = run_cli([str(SHARED_PROFILE), "--report"], _MANAGED_POOL.encode())
    report = proc.stderr.decode()
    assert "has no spec.awsLaunchTemplate: CAPA gives its nodes no bootstrap data" in report
    with_template = _MANAGED_POOL.replace(
        "  scaling: {minSize: 1, maxSize: 3}",
        "  scaling: {minSize: 1, maxSize: 3}\n  awsLaunchTemplate: {name: lt}",
    )
    proc = run_cli([str(SHARED_PROFILE), "--report"], with_template.encode())
    assert "[nodes/no-rollout]" not in proc.stderr.decode()
    assert "MachinePool eks/pool-0 bootstraps its machines anew" in proc.stderr.decode()


@pytest.mark.parametrize("discovery", [True, False])
def test_a_list_of_objects_is_followed_with_or_without_the_discovery(
    tmp_path: Path, discovery: bool
) -> None:
    """The references come from the Cluster discovery's reading when it runs, else from
    the pass's own: a MachineDeployment inside a kind: List is found either way."""
    docs = _objects(TEMPLATES)
    items = YAML(typ="safe")
    stream = io.StringIO()
    items.dump({"apiVersion": "v1", "kind": "List", "items": docs[:2]}, stream)
    profile = SHARED_PROFILE.read_text()
    if not discovery:
        profile = profile.replace("spec:\n", "spec:\n  noProxyDiscovery: false\n", 1)
    out = _run(stream.getvalue(), _profile(tmp_path, profile))
    (listed,) = _objects(out)
    md, template = listed["items"]
    assert template["metadata"]["name"] == "c1-md-0-3f9a1c-b95aea2deb"
    assert md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"] == (
        "c1-md-0-3f9a1c-b95aea2deb"
    )


# --- review of issue 30 --------------------------------------------------------------------


def _as_list(text: str) -> str:
    """The objects of ``text`` as the items of one ``kind: List`` (block style)."""
    docs = [d for d in text.split("\n---\n") if "kind:" in d]
    items = []
    for doc in docs:
        body = [line for line in doc.splitlines() if line and not line.startswith("#")]
        items.append("\n".join(("- " if i == 0 else "  ") + line for i, line in enumerate(body)))
    return "apiVersion: v1\nkind: List\nitems:\n" + "\n".join(items) + "\n"


def test_a_list_of_objects_is_renamed_like_a_stream(tmp_path: Path) -> None:
    """The rollout pass reads the items of a ``kind: List`` (it skipped such a document:
    the template was changed in place, with a warning that nothing refers to it)."""
    listed = _as_list(TEMPLATES)
    proc = run_cli([str(SHARED_PROFILE), "--report"], listed.encode())
    assert proc.returncode == 0, proc.stderr.decode()
    first = proc.stdout.decode()
    assert "name: c1-md-0-3f9a1c-b95aea2deb" in first
    assert "nodes/no-rollout" not in proc.stderr.decode()
    items = _objects(first)[0]["items"]
    assert oracle.dangling_references(items) == []
    second = _run(first, _profile(tmp_path, MOVED))
    rolled = oracle.rolling(_objects(first)[0]["items"], _objects(second)[0]["items"], now=NOW)
    assert {"MachineDeployment/c1-md-0", "MachineDeployment/c1-md-1"} <= rolled
    assert _run(second, SHARED_PROFILE, "--remove") == listed


def test_remove_restores_quoted_names_in_flow_mappings_exactly() -> None:
    """A name quoted inside a flow mapping (``{kind: X, name: "y"}``, ``metadata:
    {name: 'y'}``) keeps its quotes when renamed, so --remove gives it back (the flow
    splice wrote the rename plain, and --remove the name plain)."""
    text = TEMPLATES.replace(
        "        configRef:\n"
        "          apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\n"
        "          kind: KubeadmConfigTemplate\n"
        "          name: c1-md-0-3f9a1c  # the chart's own hash suffix stays\n",
        "        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, "
        'kind: KubeadmConfigTemplate, name: "c1-md-0-3f9a1c"}  # the chart\'s hash stays\n',
    ).replace(
        "metadata:\n  name: c1-md-0-3f9a1c\n  namespace: org-a\n",
        "metadata: {name: 'c1-md-0-3f9a1c', namespace: org-a}  # a comment\n",
    )
    assert text.count("c1-md-0-3f9a1c") == 2 and "{name: 'c1-md-0-3f9a1c'" in text
    out = _run(text)
    assert 'name: "c1-md-0-3f9a1c-b95aea2deb"}' in out
    assert "{name: 'c1-md-0-3f9a1c-b95aea2deb'" in out
    assert _run(out, SHARED_PROFILE, "--remove") == text


@pytest.mark.parametrize(
    ("api", "own"),
    [
        ("v1beta2", '  rollout:\n    after: "2026-01-01T00:00:00Z"\n'),
        ("v1beta1", "  rolloutAfter: 2026-01-01T00:00:00Z\n"),
        ("v1beta1", "  rolloutAfter: null\n"),
        ("v1beta2", "  rollout:\n    after: null\n"),
        ("v1beta2", "  rollout: null\n"),
    ],
)
def test_a_machine_deployment_keeping_its_own_time_is_said_not_to_roll(
    tmp_path: Path, api: str, own: str
) -> None:
    """Where the manifest sets its own rollout time (a null too), the run's is not written:
    the report says that MachineDeployment does not roll, as the oracle does (it said
    "rolls ... (spec.nodes.rolloutAfter ...)"); a null is kept, so --remove gives it back
    (the time was written over it, and --remove deleted the key)."""
    ref = (
        "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1"
        if api == "v1beta1"
        else "apiGroup: bootstrap.cluster.x-k8s.io"
    )
    infra = ref.replace("bootstrap.", "infrastructure.")
    text = (
        f"apiVersion: cluster.x-k8s.io/{api}\nkind: MachineDeployment\n"
        "metadata:\n  name: md\n  namespace: ns\nspec:\n  clusterName: c1\n" + own + "  template:\n"
        "    spec:\n      clusterName: c1\n      bootstrap:\n        configRef:\n"
        f"          {ref}\n          kind: KubeadmConfigTemplate\n          name: t1\n"
        f"      infrastructureRef:\n        {infra}\n        kind: DockerMachineTemplate\n"
        "        name: md\n---\napiVersion: bootstrap.cluster.x-k8s.io/v1beta1\n"
        "kind: KubeadmConfigTemplate\nmetadata:\n  name: t1\n  namespace: ns\n"
        "spec:\n  template:\n    spec: {}\n"
    )
    nodes = '    rollout: inPlace\n    rolloutAfter: "2026-11-27T06:00:00Z"\n'
    first = _run(text, _in_place(tmp_path))
    proc = run_cli([str(_profile(tmp_path, _with_nodes(MOVED, nodes))), "--report"], first.encode())
    assert proc.returncode == 0, proc.stderr.decode()
    assert _rolling(first, proc.stdout.decode()) == set()
    report = proc.stderr.decode()
    assert "rolls MachineDeployment ns/md" not in report
    assert "not MachineDeployment ns/md" in report and "[nodes/no-rollout]" in report
    assert _run(proc.stdout.decode(), SHARED_PROFILE, "--remove") == text


@pytest.mark.parametrize("name", ["0-md-3f9a1c", "1pool"])
def test_remove_restores_a_plain_name_that_starts_with_a_digit(name: str) -> None:
    """A Kubernetes name may start with a digit: renamed, it stays plain (it was written
    double-quoted, and --remove gave the original back quoted: not the input), in block
    style and in a flow mapping."""
    block = TEMPLATES.replace("c1-md-0-3f9a1c", name)
    flow = block.replace(
        f"metadata:\n  name: {name}\n  namespace: org-a\n",
        f"metadata: {{name: {name}, namespace: org-a}}\n",
    )
    assert flow != block
    for text in (block, flow):
        out = _run(text)
        assert f"name: {name}-b95aea2deb" in out
        assert _objects(out)[1]["metadata"]["name"] == f"{name}-b95aea2deb"
        assert _run(out, SHARED_PROFILE, "--remove") == text


def test_a_name_that_holds_a_record_separator_comes_back_exactly() -> None:
    """The record keeps the original name escaped: a name (not one Kubernetes takes) with
    ";" read back as record entries of its own (commands=1), and the second run changed
    the output and --remove did not give the input back."""
    text = TEMPLATES.replace("c1-md-0-3f9a1c", '"c1;commands=1"')
    text = text.replace('""', '"')
    out = _run(text)
    assert "name=c1%3Bcommands%3D1" in out
    assert _run(out) == out
    assert _run(out, SHARED_PROFILE, "--remove") == text


@pytest.mark.parametrize(
    ("kind", "annotations", "message"),
    [
        ("KubeadmConfigTemplate", '{proxy-postrender.io/node-bootstrap: "name=%ZZ"}', "malformed"),
        ("KubeadmConfigTemplate", "[1]", "metadata.annotations is not a mapping"),
        (
            "MachineDeployment",
            '{proxy-postrender.io/rollout: "after;~annotations:%ZZ"}',
            "malformed",
        ),
    ],
)
def test_an_error_of_the_rollout_step_names_its_document(
    kind: str, annotations: str, message: str
) -> None:
    """Errors met while renaming and moving references name the document (they came
    without it: the rollout pass and the moving of references were outside the place
    that adds it)."""
    docs = TEMPLATES.split("\n---\n")
    at = next(i for i, doc in enumerate(docs) if f"\nkind: {kind}\n" in f"\n{doc}")
    docs[at] = docs[at].replace("metadata:\n", f"metadata:\n  annotations: {annotations}\n", 1)
    proc = run_cli([str(SHARED_PROFILE)], "\n---\n".join(docs).encode())
    assert proc.returncode == 1 and proc.stdout == b""
    error = proc.stderr.decode()
    assert message in error and f"document {at + 1} (line" in error and kind in error


def test_a_referrer_with_foreign_annotations_is_moved_without_reading_them() -> None:
    """A MachineDeployment the tool only moves a reference in (no rollout time) is not
    refused for annotations it does not write (it was, with an error naming no document;
    before the rollout step it passed through)."""
    text = TEMPLATES.replace(
        "  name: c1-md-0\n  namespace: org-a\n",
        "  name: c1-md-0\n  namespace: org-a\n  annotations: [1]\n",
        1,
    )
    out = _run(text)
    assert "annotations: [1]" in out and "name: c1-md-0-3f9a1c-b95aea2deb" in out
    assert _run(out, SHARED_PROFILE, "--remove") == text


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("  replicas: 3\n", "  replicas: 3\n  strategy:\n    type: OnDelete\n"),
        (
            "  clusterName: c1\n  template:",
            "  clusterName: c1\n  rollout:\n    strategy:\n      type: OnDelete\n  template:",
        ),
    ],
)
def test_a_machine_deployment_of_strategy_on_delete_is_said_to_wait(old: str, new: str) -> None:
    """A MachineDeployment of strategy OnDelete replaces a machine only once it is deleted
    (cluster-api@ae7ff047 core/reconcilers/machinedeployment/
    machinedeployment_rollout_ondelete.go): the report said "every machine is replaced"."""
    text = TEMPLATES.replace(old, new, 1)
    assert text != TEMPLATES
    proc = run_cli([str(SHARED_PROFILE), "--report"], text.encode())
    assert proc.returncode == 0, proc.stderr.decode()
    report = proc.stderr.decode()
    md = (
        "MachineDeployment org-a/c1-md-0"
        if "replicas" in old
        else "MachineDeployment org-a/c1-md-1"
    )
    assert f"rolls {md}" not in report
    assert f"not {md} at once (strategy OnDelete" in report
    assert f"{md} has strategy OnDelete: a running machine is replaced only once it" in report
    assert "[nodes/no-rollout]" in report
    assert run_cli([str(SHARED_PROFILE), "--strict"], text.encode()).returncode == 1
