"""Talos (issue 29, item 2): the ``talos`` row of proxy_postrender/dialects.py and its
config-patch planner (proxy_postrender/nodes/talos.py).

- the patch is ``machine.env`` before Talos v1.13 (and when ``talosVersion`` is not
  set: the form every Talos version reads), an ``EnvironmentConfig`` document from
  v1.13; a ``talosVersion`` CABPT cannot parse is refused;
- values are YAML double-quoted scalars: the patch parses back to the exact values,
  whatever quotes, colons, ``#`` or backslashes they hold;
- one patch the tool owns, last in ``strategicPatches``: a re-run changes nothing,
  other values replace it, ``--remove`` gives the input back byte for byte;
- TalosConfigTemplate/TalosConfig are immutable: a change to the tool's patch there is
  refused; TalosControlPlane is mutable (a rollout): allowed; secret mode refused.
"""

from __future__ import annotations

import doctest
import io
import re
from typing import Any

import pytest
from ruamel.yaml import YAML

from proxy_postrender import dialects, engine
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import talos, writers
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

REQUEST = to_request(loader.load(str(SHARED_PROFILE), environ={}))
PLAIN = GOLDEN / "capi-talos" / "input.yaml"
ENV = [("HTTP_PROXY", "http://p:3128"), ("NO_PROXY", ".svc,10.0.0.0/8")]


def _load(text: str) -> Any:
    return YAML(typ="safe").load(io.StringIO(text))


def _docs(text: str) -> list[Any]:
    return list(YAML(typ="safe").load_all(io.StringIO(text)))


def _patches(text: str) -> dict[str, list[str]]:
    """kind -> the strategicPatches of its Talos spec."""
    found = {}
    for doc in _docs(text):
        row = dialects.of_kind(doc["apiVersion"].rpartition("/")[0], doc["kind"])
        if row is None or row[0] is not dialects.TALOS:
            continue
        spec = doc
        for step in row[1].spec_path:
            spec = spec[step]
        found[doc["kind"]] = spec.get("strategicPatches", [])
    return found


# --- the patch and its form -------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "form"),
    [
        ("v1.12", "machine.env"),
        ("v1.12.7", "machine.env"),
        ("v1.10", "machine.env"),
        ("v1.13", "EnvironmentConfig"),
        ("v1.13.0", "EnvironmentConfig"),
        ("1.13.1", "EnvironmentConfig"),
        ("v1.14.0-alpha.1", "EnvironmentConfig"),
        ("v2.0", "EnvironmentConfig"),
        (None, "machine.env"),  # not set: the form every Talos version reads
        ("", "machine.env"),
    ],
)
def test_the_form_follows_the_talos_version(version: str | None, form: str) -> None:
    spec = {} if version is None else {"talosVersion": version}
    parsed = _load(talos.patch_text(ENV, talos.version_of(spec, "talosVersion", "spec")))
    expected = {
        "HTTP_PROXY": "http://p:3128",
        "NO_PROXY": ".svc,10.0.0.0/8",
        "http_proxy": "http://p:3128",
        "no_proxy": ".svc,10.0.0.0/8",
    }
    if form == "machine.env":
        assert parsed == {"machine": {"env": expected}}
    else:
        assert parsed == {
            "apiVersion": "v1alpha1",
            "kind": "EnvironmentConfig",
            "variables": expected,
        }


@pytest.mark.parametrize("version", ["latest", "v1", "1.x", "v1.13.0.0", 113, ["v1.13"]])
def test_a_version_cabpt_cannot_parse_is_refused(version: Any) -> None:
    with pytest.raises(InputError, match=r"spec.talosVersion is .*not a Talos version"):
        talos.version_of({"talosVersion": version}, "talosVersion", "spec")


@pytest.mark.parametrize(
    "value",
    [
        'http://u:p"a:ss#w@proxy:3128',
        "http://u:p'a\\ss: #x@proxy:3128",
        "http://u:пароль@proxy:3128",
        "- &a *b {x: y} [z] | > % @ `",
    ],
)
def test_values_read_back_exactly_from_the_patch(value: str) -> None:
    env = [("HTTP_PROXY", value), ("HTTPS_PROXY", value)]
    for version in ((1, 12), (1, 13)):
        parsed = _load(talos.patch_text(env, version))
        variables = parsed["machine"]["env"] if version < (1, 13) else parsed["variables"]
        assert variables == {
            "HTTP_PROXY": value,
            "HTTPS_PROXY": value,
            "http_proxy": value,
            "https_proxy": value,
        }


def test_a_control_character_in_a_value_is_refused() -> None:
    with pytest.raises(InputError):
        talos.patch_text([("HTTP_PROXY", "http://p:3128\nmachine: {}")], (1, 13))


def test_the_module_examples_hold() -> None:
    for module in (talos, writers):
        assert doctest.testmod(module).failed == 0


# --- through the engine -------------------------------------------------------------------


def test_plain_stream_gets_one_patch_per_object_after_the_manifests_own() -> None:
    text = PLAIN.read_text()
    out = engine.process(text, REQUEST).text
    patches = _patches(out)
    control_plane, workers = patches["TalosControlPlane"], patches["TalosConfigTemplate"]
    assert control_plane[0] == _patches(text)["TalosControlPlane"][0]  # the manifest's, first
    assert _load(control_plane[1])["kind"] == "EnvironmentConfig"  # v1.13.0
    assert list(_load(workers[0])) == ["machine"]  # v1.12
    no_proxy = _load(workers[0])["machine"]["env"]["NO_PROXY"].split(",")
    # the cluster's own networks and endpoint, as for kubeadm nodes
    assert {"10.244.0.0/16", "10.96.0.0/12", "10.96.0.1", "192.168.10.5"} <= set(no_proxy)
    assert engine.process(out, REQUEST).text == out  # a re-run changes nothing


def test_remove_gives_the_input_back_byte_for_byte() -> None:
    for case in ("capi-talos", "capi-talos-password", "capi-unsupported-talos"):
        given = (GOLDEN / case / "input.yaml").read_bytes()
        output = (GOLDEN / case / "expected.yaml").read_bytes()
        proc = run_cli(["--remove"], output)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == given, case


def _moved() -> Any:
    profile = GOLDEN / "err-capi-talos-immutable" / "profile.yaml"
    return to_request(loader.load(str(profile), environ={}))


def _only(text: str, *kinds: str) -> str:
    return "\n---\n".join(
        part
        for part in text.split("\n---\n")
        if any(f"\nkind: {kind}\n" in f"\n{part}\n" for kind in kinds)
    )


def test_a_changed_profile_replaces_the_patch_of_a_control_plane() -> None:
    """TalosControlPlane is mutable (a change rolls its machines): the patch is replaced."""
    out = (GOLDEN / "capi-talos" / "expected.yaml").read_text()
    control_plane = _only(out, "TalosControlPlane")
    again = engine.process(control_plane, _moved()).text
    patches = _patches(again)["TalosControlPlane"]
    assert len(patches) == 2
    assert _load(patches[1])["variables"]["HTTP_PROXY"] == "http://proxy2.corp.example:3128"


_TALOS_CONFIG = """\
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: TalosConfig
metadata:
  name: one
spec:
  generateType: worker
  talosVersion: v1.13
"""


@pytest.mark.parametrize("kind", ["TalosConfigTemplate", "TalosConfig"])
def test_a_changed_patch_in_an_immutable_spec_is_refused(kind: str) -> None:
    if kind == "TalosConfig":
        out = engine.process(_TALOS_CONFIG, REQUEST).text
    else:  # with its Cluster (the NO_PROXY it was written with), without what uses it
        workers = ("Cluster", "TalosConfigTemplate")
        out = _only((GOLDEN / "capi-talos" / "expected.yaml").read_text(), *workers)
    assert len(_patches(out)[kind]) == 1
    assert engine.process(out, REQUEST).text == out  # the same values: no change, allowed
    with pytest.raises(InputError, match=rf"a {kind} spec is immutable"):
        engine.process(out, _moved())


def test_a_changed_patch_renames_a_template_whose_machine_deployment_is_there() -> None:
    """Issue 30 item 5: with its MachineDeployment in the stream, a new proxy is a new
    template (a new name, the reference moved): no immutable spec changes."""
    workers = ("Cluster", "MachineDeployment", "TalosConfigTemplate")
    out = _only((GOLDEN / "capi-talos" / "expected.yaml").read_text(), *workers)
    moved = engine.process(out, _moved()).text
    names = re.findall(r"name: (talos-workers-[0-9a-f]{10})", moved)
    assert len(names) == 2 and len(set(names)) == 1  # the template and the reference
    assert names[0] not in out and "name=talos-workers" in moved


def test_a_first_injection_into_a_template_is_allowed() -> None:
    """A template without the tool's patch is a new object of the render: it gets one."""
    template = _only(PLAIN.read_text(), "TalosConfigTemplate")
    out = engine.process(template, _moved()).text
    assert len(_patches(out)["TalosConfigTemplate"]) == 1


def test_secret_mode_is_refused() -> None:
    profile = GOLDEN / "err-capi-talos-secret" / "profile.yaml"
    request = to_request(loader.load(str(profile), environ={}))
    with pytest.raises(InputError, match=r"cannot read a Secret.*not supported for Talos"):
        engine.process(PLAIN.read_text(), request)


def test_a_missing_spec_is_passed_through_with_a_note() -> None:
    """A TalosConfigTemplate without spec.template.spec lacks its required generateType:
    the tool does not make one up, and writes nothing."""
    text = (
        "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: TalosConfigTemplate\n"
        "metadata:\n  name: t\nspec:\n  template: {}\n"
    )
    assert engine.process(text, REQUEST).text == text


_CLASS = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: talos-class, namespace: default}
spec:
  workers:
    machineDeployments:
      - class: default-worker
        template:
          bootstrap:
            ref:
              apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
              kind: TalosConfigTemplate
              name: workers
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: TalosConfigTemplate
metadata: {name: workers, namespace: default}
spec:
  template:
    spec: {generateType: worker, talosVersion: v1.13}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: a, namespace: default}
spec:
  clusterNetwork: {pods: {cidrBlocks: [10.1.0.0/16]}}
  topology: {class: talos-class, version: v1.33.1}
"""


def test_a_template_a_clusterclass_names_is_refused_not_given_one_clusters_values() -> None:
    """The clusters of a class have their own NO_PROXY; a patch in the shared template
    would give them all one value: refused (no Talos ClusterClass support yet)."""
    with pytest.raises(InputError, match=r"TalosConfigTemplate default/workers.*ClusterClass") as e:
        engine.process(_CLASS, REQUEST)
    # it names the class and says what to do, as the other rows without a class patch do
    assert "is a template of ClusterClass default/talos-class" in str(e.value)
    assert "give each cluster a template of its own outside the class" in str(e.value)
