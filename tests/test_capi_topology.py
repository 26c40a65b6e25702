"""Cluster API's ClusterClass patches, applied the way CAPI does (tests/capi_topology.py),
to the templates the tool wrote: every template in every enabledIf combination keeps both
drop-ins once and the tool's commands first."""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from proxy_postrender.nodes import uncovered
from proxy_postrender.nodes.kubeadm import RESTART_CONTAINERD, NodeSettings, is_tool_command
from proxy_postrender.objects import api_group
from proxy_postrender.profile import loader
from proxy_postrender.profile.tables import DEFAULT_CONTAINERD_DROPIN, DEFAULT_KUBELET_DROPIN
from proxy_postrender.yamltext import libyaml
from tests import capi_topology as ct
from tests.golden import Case, load_cases
from tests.helpers import SHARED_PROFILE, run_cli

CONTAINERD, KUBELET = DEFAULT_CONTAINERD_DROPIN, DEFAULT_KUBELET_DROPIN
EXPECT = ct.expectation(NodeSettings(CONTAINERD, KUBELET))
TOOL_COMMANDS = [
    "systemctl daemon-reload",
    RESTART_CONTAINERD,
    *(f"export {n}=x" for n in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")),
    *(f"export {n}=x" for n in ("http_proxy", "https_proxy", "no_proxy")),
]
CP = "controlplane.cluster.x-k8s.io/v1beta1"
BS = "bootstrap.cluster.x-k8s.io/v1beta1"


def dropin(path: str) -> dict[str, Any]:
    return {"path": path, "owner": "root:root", "permissions": "0640", "content": "[Service]\n"}


TOOL_FILES = [dropin(CONTAINERD), dropin(KUBELET)]


def configured(**extra: Any) -> dict[str, Any]:
    """A KubeadmConfigSpec as the tool leaves it."""
    return {
        "files": [*copy.deepcopy(TOOL_FILES), *extra.pop("files", [])],
        "preKubeadmCommands": [*TOOL_COMMANDS, *extra.pop("preKubeadmCommands", [])],
        **extra,
    }


def cp_template(spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": CP,
        "kind": "KubeadmControlPlaneTemplate",
        "metadata": {"name": "cp"},
        "spec": {"template": {"spec": {"kubeadmConfigSpec": spec or configured()}}},
    }


def md_template(name: str = "md", spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": BS,
        "kind": "KubeadmConfigTemplate",
        "metadata": {"name": name},
        "spec": {"template": {"spec": spec or configured()}},
    }


def clusterclass(
    *patches: dict[str, Any], workers: tuple[str, ...] = ("default-worker",)
) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "ClusterClass",
        "metadata": {"name": "cc"},
        "spec": {
            "controlPlane": {
                "ref": {"apiVersion": CP, "kind": "KubeadmControlPlaneTemplate", "name": "cp"}
            },
            "workers": {
                "machineDeployments": [
                    {
                        "class": w,
                        "template": {
                            "bootstrap": {
                                "ref": {
                                    "apiVersion": BS,
                                    "kind": "KubeadmConfigTemplate",
                                    "name": "md",
                                }
                            }
                        },
                    }
                    for w in workers
                ]
            },
            "patches": list(patches),
        },
    }


def cp_patch(name: str, *ops: dict[str, Any], enabled_if: str | None = None) -> dict[str, Any]:
    selector = {
        "apiVersion": CP,
        "kind": "KubeadmControlPlaneTemplate",
        "matchResources": {"controlPlane": True},
    }
    patch: dict[str, Any] = {
        "name": name,
        "definitions": [{"selector": selector, "jsonPatches": list(ops)}],
    }
    if enabled_if:
        patch["enabledIf"] = enabled_if
    return patch


def md_patch(name: str, names: list[str], *ops: dict[str, Any]) -> dict[str, Any]:
    selector = {
        "apiVersion": BS,
        "kind": "KubeadmConfigTemplate",
        "matchResources": {"machineDeploymentClass": {"names": names}},
    }
    return {"name": name, "definitions": [{"selector": selector, "jsonPatches": list(ops)}]}


CP_LABEL = "controlPlane (KubeadmControlPlaneTemplate cp)"
CP_FILES = "/spec/template/spec/kubeadmConfigSpec/files"
CP_COMMANDS = "/spec/template/spec/kubeadmConfigSpec/preKubeadmCommands"


def cp_specs(cc: dict[str, Any], *objects: dict[str, Any]) -> dict[tuple[str, ...], Any]:
    """The control-plane KubeadmConfigSpec per combination (by the names of the patches on)."""
    m = ct.model(cc, [cc, *objects])
    found = {}
    for outcome in m.outcomes():
        if outcome.slot.role == "controlPlane":
            assert outcome.template is not None, outcome.errors
            found[outcome.enabled] = ct.kubeadm_spec(outcome.template)
    return found


# --- (a) the model on hand-made ClusterClasses


def test_selector_needs_the_exact_apiversion_kind_and_role() -> None:
    slot_cp = ct.Slot("controlPlane", None, CP, "KubeadmControlPlaneTemplate", "cp")
    slot_md = ct.Slot("machineDeployment", "linux-workers", BS, "KubeadmConfigTemplate", "md")
    sel = {
        "apiVersion": CP,
        "kind": "KubeadmControlPlaneTemplate",
        "matchResources": {"controlPlane": True},
    }
    assert ct.selector_matches(sel, CP, "KubeadmControlPlaneTemplate", slot_cp)
    assert not ct.selector_matches(
        sel, "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlaneTemplate", slot_cp
    )
    assert not ct.selector_matches(
        {**sel, "matchResources": {"infrastructureCluster": True}},
        CP,
        "KubeadmControlPlaneTemplate",
        slot_cp,
    )
    md = {"apiVersion": BS, "kind": "KubeadmConfigTemplate"}
    for names, matches in [
        (["linux-workers"], True),
        (["*"], True),
        (["linux-*"], True),
        (["*-workers"], True),
        (["windows-*", "*-gpu"], False),
        (["linux"], False),
        ([], False),
    ]:
        sel_md = {**md, "matchResources": {"machineDeploymentClass": {"names": names}}}
        assert ct.selector_matches(sel_md, BS, "KubeadmConfigTemplate", slot_md) is matches, names
    # machinePoolClass does not select a MachineDeployment's template, nor controlPlane a worker's
    pool = {**md, "matchResources": {"machinePoolClass": {"names": ["*"]}, "controlPlane": True}}
    assert not ct.selector_matches(pool, BS, "KubeadmConfigTemplate", slot_md)


def test_slots_read_v1beta1_and_v1beta2_references() -> None:
    v1 = clusterclass(workers=("a", "b"))
    assert [(s.role, s.class_name, s.kind) for s in ct.slots(v1)] == [
        ("controlPlane", None, "KubeadmControlPlaneTemplate"),
        ("machineDeployment", "a", "KubeadmConfigTemplate"),
        ("machineDeployment", "b", "KubeadmConfigTemplate"),
    ]
    v2 = {
        "spec": {
            "controlPlane": {
                "templateRef": {
                    "apiVersion": CP,
                    "kind": "KubeadmControlPlaneTemplate",
                    "name": "cp",
                }
            },
            "workers": {
                "machinePools": [
                    {
                        "class": "mp",
                        "bootstrap": {
                            "templateRef": {
                                "apiVersion": BS,
                                "kind": "KubeadmConfigTemplate",
                                "name": "t",
                            }
                        },
                    }
                ]
            },
        }
    }
    assert [(s.role, s.class_name, s.name) for s in ct.slots(v2)] == [
        ("controlPlane", None, "cp"),
        ("machinePool", "mp", "t"),
    ]


def test_patches_apply_in_order_and_add_at_0_prepends_at_dash_appends() -> None:
    cc = clusterclass(
        cp_patch("first", {"op": "add", "path": CP_COMMANDS + "/0", "value": "one"}),
        cp_patch(
            "second",
            {"op": "add", "path": CP_COMMANDS + "/0", "value": "two"},
            {"op": "add", "path": CP_COMMANDS + "/-", "value": "last"},
        ),
    )
    plain = cp_template({"preKubeadmCommands": ["own"]})
    specs = cp_specs(cc, plain)
    assert specs[("first", "second")]["preKubeadmCommands"] == ["two", "one", "own", "last"]
    assert specs[("first",)]["preKubeadmCommands"] == ["one", "own"]
    assert specs[()]["preKubeadmCommands"] == ["own"]
    assert len(specs) == 4


def test_enabled_if_gives_both_outcomes_and_a_replace_wipes_the_tools_entries() -> None:
    cc = clusterclass(
        cp_patch(
            "azureJson",
            {
                "op": "replace",
                "path": CP_FILES,
                "value": [{"path": "/etc/kubernetes/azure.json", "content": "{}"}],
            },
            enabled_if="{{ .azure }}",
        )
    )
    result = ct.check_clusterclass(cc, [cc, cp_template()], EXPECT)
    assert result.combinations == 2
    assert result.problems == [
        f"{CP_LABEL} [on: azureJson]: missing drop-in {CONTAINERD}",
        f"{CP_LABEL} [on: azureJson]: missing drop-in {KUBELET}",
    ]


def test_entries_added_after_the_replace_in_the_same_definition_survive_every_combination() -> None:
    """The FACTS claim: in the same definition the entries survive; a separate trailing patch
    duplicates them when the replacing patch is off; placed before the replace, they are wiped."""
    replace = {
        "op": "replace",
        "path": CP_FILES,
        "valueFrom": {"template": "- path: /etc/x\n  content: '{{ .x }}'\n"},
    }
    readd = [{"op": "add", "path": CP_FILES + "/-", "value": f} for f in TOOL_FILES]
    same = clusterclass(cp_patch("pss", replace, *readd, enabled_if="{{ .pss }}"))
    assert ct.check_clusterclass(same, [same, cp_template()], EXPECT).problems == []

    separate = clusterclass(
        cp_patch("pss", replace, enabled_if="{{ .pss }}"), cp_patch("proxy", *readd)
    )
    problems = ct.check_clusterclass(separate, [separate, cp_template()], EXPECT).problems
    assert any("[on: proxy]" in p and "appears 2 times" in p for p in problems), problems
    assert not any("[on: pss, proxy]" in p for p in problems), problems

    before = clusterclass(cp_patch("pss", *readd, replace, enabled_if="{{ .pss }}"))
    problems = ct.check_clusterclass(before, [before, cp_template()], EXPECT).problems
    assert (
        f"controlPlane (KubeadmControlPlaneTemplate cp) [on: pss]: missing drop-in {CONTAINERD}"
        in problems
    )


def test_webhook_allows_only_index_0_or_dash_in_add_and_no_index_in_replace() -> None:
    assert ct.json_patch_problems({"op": "add", "path": CP_FILES + "/-", "value": {}}) == []
    assert ct.json_patch_problems({"op": "add", "path": CP_FILES + "/0", "value": {}}) == []
    assert ct.json_patch_problems({"op": "add", "path": CP_FILES + "/1", "value": {}}) == [
        f"add at '{CP_FILES}/1': arrays take only index 0 (prepend) or - (append)"
    ]
    assert ct.json_patch_problems(
        {"op": "replace", "path": CP_FILES + "/0/content", "value": ""}
    ) == [f"replace at '{CP_FILES}/0/content': no array index allowed"]
    assert ct.json_patch_problems({"op": "add", "path": "/metadata/x", "value": 1}) == [
        "path '/metadata/x' does not start with /spec"
    ]
    assert ct.json_patch_problems(
        {"op": "add", "path": CP_FILES, "value": [], "valueFrom": {"variable": "v"}}
    ) == ["needs exactly one of value and valueFrom"]
    cc = clusterclass(
        cp_patch("bad", {"op": "add", "path": CP_FILES + "/1", "value": TOOL_FILES[0]})
    )
    assert (
        ct.check_clusterclass(cc, [cc, cp_template()], EXPECT)
        .problems[0]
        .startswith("webhook: patch 'bad' definitions[0].jsonPatches[0]: add at")
    )


def test_duplicate_file_paths_are_found() -> None:
    spec = configured(files=[{"path": "/etc/a"}, {"path": "/etc/a"}])
    assert ct.check_template(spec, "linux", EXPECT) == [
        "files: '/etc/a' appears 2 times (CAPI rejects duplicate paths)"
    ]
    twice = configured(files=[dropin(KUBELET)])
    assert ct.check_template(twice, "linux", EXPECT) == [
        f"files: '{KUBELET}' appears 2 times (CAPI rejects duplicate paths)"
    ]


def test_a_failing_json_patch_is_an_error_as_in_capi() -> None:
    cc = clusterclass(cp_patch("p", {"op": "replace", "path": CP_FILES + "-missing", "value": []}))
    outcomes = list(ct.model(cc, [cc, cp_template()]).outcomes())
    failed = [o for o in outcomes if o.enabled == ("p",)]
    assert failed[0].template is None and "CAPI fails to apply" in failed[0].errors[0]


def test_only_the_selected_worker_class_is_patched() -> None:
    wipe = {"op": "replace", "path": "/spec/template/spec/preKubeadmCommands", "value": ["own"]}
    cc = clusterclass(md_patch("gpu", ["gpu-*"], wipe), workers=("gpu-a", "cpu"))
    problems = ct.check_clusterclass(cc, [cc, cp_template(), md_template()], EXPECT).problems
    assert problems and all(p.startswith("machineDeployment gpu-a ") for p in problems), problems


def test_value_from_stand_ins() -> None:
    text = (
        'a: "{{ .builtin.cluster.name }}-x"\n{{- if .on }}\nb: 1\n{{- else }}\nb: 2\n{{- end }}\n'
        "c: [{{ range .l }}{{ . }}{{ end }}]\n"
    )
    assert ct.render_template(text) == 'a: "x-x"\nb: 1\nc: [x]\n'
    assert ct.render_template(
        "{{/* c */}}{{ $v := 1 }}n: {{ .a }}{{ if .b }}-{{ .c }}{{ end }}"
    ) == ("n: x-x")
    assert ct.render_template("a: {{ if .x }}1{{ else if .y }}2{{ else }}3{{ end }}") == "a: 1"
    cc = {
        "spec": {
            "variables": [
                {
                    "name": "files",
                    "schema": {"openAPIV3Schema": {"type": "array", "default": [{"path": "/d"}]}},
                },
                {"name": "n", "schema": {"openAPIV3Schema": {"type": "integer"}}},
            ]
        }
    }
    assert ct.variable_value(cc, "files") == [{"path": "/d"}]
    assert ct.variable_value(cc, "n") == 0
    assert ct.variable_value(cc, "builtin.cluster.name") == "name"
    bad = {"op": "add", "path": CP_FILES, "valueFrom": {"template": "a: [\n"}}
    with pytest.raises(ct.NotModelled):
        ct.value_of(cc, bad)


def test_check_template_linux() -> None:
    assert (
        ct.check_template(configured(preKubeadmCommands=["export HTTP_PROXY=own"]), "linux", EXPECT)
        == []
    )
    assert ct.check_template({}, "linux", EXPECT) == [
        f"missing drop-in {CONTAINERD}",
        f"missing drop-in {KUBELET}",
        "preKubeadmCommands: the tool's commands are missing",
    ]
    own_first = configured()
    own_first["preKubeadmCommands"] = ["echo own", *TOOL_COMMANDS]
    assert ct.check_template(own_first, "linux", EXPECT) == [
        "preKubeadmCommands starts with 'echo own', not with the tool's 8 commands"
    ]
    export_first = configured()
    export_first["preKubeadmCommands"] = ["export HTTP_PROXY=own", *TOOL_COMMANDS]
    assert ct.check_template(export_first, "linux", EXPECT) != []
    doubled = configured(preKubeadmCommands=TOOL_COMMANDS)
    assert ct.check_template(doubled, "linux", EXPECT) == [
        "preKubeadmCommands: the tool's 'export HTTP_PROXY=x' appears again later"
    ]
    swapped = configured()
    swapped["preKubeadmCommands"] = [TOOL_COMMANDS[1], TOOL_COMMANDS[0], *TOOL_COMMANDS[2:]]
    assert ct.check_template(swapped, "linux", EXPECT) != []


def test_check_template_windows() -> None:
    ps = "powershell -NoProfile -NonInteractive -EncodedCommand AAAA"
    windows = {"files": [{"path": "c:/k/x"}], "preKubeadmCommands": [ps, "powershell c:/k/own.ps1"]}
    assert ct.system_of(windows) == "windows"
    assert ct.check_template(windows, "windows", EXPECT) == []
    skip = ct.Expectation(EXPECT.file_paths, EXPECT.command_keys, "skip")
    assert ct.check_template(windows, "windows", skip) == [
        "a PowerShell command of the tool in a Windows spec it should leave alone"
    ]
    linux_in_windows = {
        "files": [{"path": "c:/k/x"}, dropin(CONTAINERD)],
        "preKubeadmCommands": ["systemctl daemon-reload", ps, "powershell c:/k/own.ps1"],
    }
    assert ct.check_template(linux_in_windows, "windows", EXPECT) == [
        f"Linux file(s) in a Windows spec: {CONTAINERD}",
        "Linux command in a Windows spec: 'systemctl daemon-reload'",
        "preKubeadmCommands does not start with the tool's PowerShell command",
    ]
    # the tool's PowerShell command alone does not make a Linux spec Windows
    assert ct.system_of({"preKubeadmCommands": [ps]}) == "linux"


def test_secret_and_envfile_expectations() -> None:
    secret = ct.expectation(NodeSettings(CONTAINERD, KUBELET, credentials="secret"))
    assert secret.file_paths == (CONTAINERD, KUBELET, "/etc/proxy-postrender/proxy.env")
    assert secret.command_keys[-1] == "set -a && . /etc/proxy-postrender/proxy.env && set +a"
    assert secret.windows == "skip"
    assert ct.expectation(NodeSettings(CONTAINERD, None)).file_paths == (CONTAINERD,)


# --- (b) the golden outputs


def _load(path: Path) -> list[Any]:
    return [d for d in libyaml.load_data(path.read_text(encoding="utf-8-sig")) if d is not None]


def _has_clusterclass(case: Case) -> bool:
    """A case with a ClusterClass and kubeadm templates (the model reads kubeadm's lists:
    a class of templates no row covers has nothing of the tool's to keep,
    nodes/uncovered.py; an RKE2 class is checked in tests/test_dialects.py)."""
    if not case.expected_path.exists():
        return False
    docs = [d for d in _load(case.expected_path) if isinstance(d, Mapping)]
    return any(d.get("kind") == "ClusterClass" for d in docs) and any(
        uncovered.covered(api_group(d.get("apiVersion")), str(d.get("kind")))
        and str(d.get("kind")) in ct.SPEC_PATHS
        for d in docs
    )


def _expect(case: Case) -> ct.Expectation | None:
    """The case's profile (case.yaml ``profile``, relative to the case; else the shared one)."""
    meta: dict[str, Any] = {}
    if (case.path / "case.yaml").exists():
        meta = YAML(typ="safe").load((case.path / "case.yaml").read_text()) or {}
    name = meta.get("profile", str(SHARED_PROFILE))
    if name is None:
        pytest.skip("the case runs without a profile file")
    profile = loader.load(str(case.path / name), environ=os.environ)
    if profile.nodes is None:
        return None
    return ct.expectation(profile.nodes, profile.env_vars(), shared=True)


CLASS_CASES = [c for c in load_cases() if not c.exit and _has_clusterclass(c)]


def _check_case(docs: list[Any], expect: ct.Expectation) -> tuple[list[str], int, list[str]]:
    problems: list[str] = []
    not_modelled: list[str] = []
    combinations = 0
    for doc in docs:
        if isinstance(doc, Mapping) and doc.get("kind") == "ClusterClass":
            result = ct.check_clusterclass(doc, docs, expect)
            problems += result.problems
            combinations += result.combinations
            not_modelled += result.not_modelled
    return problems, combinations, not_modelled


def test_golden_cases_with_a_clusterclass_are_found() -> None:
    assert {"capi-clusterclass", "capi-two-clusters"} <= {c.name for c in CLASS_CASES}


@pytest.mark.parametrize("case", CLASS_CASES, ids=lambda c: c.name)
def test_golden_clusterclass_templates_keep_the_proxy_in_every_combination(case: Case) -> None:
    expect = _expect(case)
    assert expect is not None, "a golden ClusterClass case whose profile leaves nodes alone"
    problems, combinations, not_modelled = _check_case(_load(case.expected_path), expect)
    assert problems == []
    # the stand-ins render every valueFrom.template of the golden cases
    assert [n for n in not_modelled if "valueFrom" in n] == []
    # every golden ClusterClass brings its templates along, so the check has work to do
    assert combinations > 0, not_modelled


def _tool_entry(value: Any, expect: ct.Expectation) -> bool:
    if isinstance(value, Mapping):
        return str(value.get("path")) in expect.file_paths
    return ct.command_key(value) in expect.command_keys and is_tool_command(value)


def _strip_tool_patches(docs: list[Any], expect: ct.Expectation, *, move_first: bool) -> bool:
    """Break an output: the tool's own jsonPatches (one entry each) deleted, or moved to the
    front of their definition (before a replace); and its entries taken out of list values."""
    changed = False
    for doc in docs:
        if not (isinstance(doc, dict) and doc.get("kind") == "ClusterClass"):
            continue
        for patch in doc["spec"].get("patches") or []:
            for definition in patch.get("definitions") or []:
                ops = definition.get("jsonPatches") or []
                tool = [op for op in ops if "value" in op and _tool_entry(op["value"], expect)]
                rest = [op for op in ops if op not in tool]
                if not move_first:
                    for op in rest:
                        if isinstance(op.get("value"), list):
                            kept = [v for v in op["value"] if not _tool_entry(v, expect)]
                            changed |= kept != op["value"]
                            op["value"] = kept
                if tool:
                    definition["jsonPatches"] = tool + rest if move_first else rest
                    changed |= definition["jsonPatches"] != ops
    return changed


def _replaces_a_list(docs: list[Any]) -> bool:
    """Whether a ClusterClass has a jsonPatch that sets a kubeadm list or a parent of one."""
    for doc in docs:
        if not (isinstance(doc, Mapping) and doc.get("kind") == "ClusterClass"):
            continue
        for patch in doc["spec"].get("patches") or []:
            for definition in patch.get("definitions") or []:
                pointers = ct.list_pointers(str((definition.get("selector") or {}).get("kind")))
                for op in definition.get("jsonPatches") or []:
                    path = str(op.get("path"))
                    if op.get("op") in ("add", "replace") and any(
                        p == path or p.startswith(path + "/") for p in pointers
                    ):
                        return True
    return False


def _breakable(case: Case, move_first: bool) -> bool:
    """Whether the case's output has tool entries in its ClusterClass patches to break
    (moved before: and a replacing jsonPatch to move them before)."""
    expect = _expect(case)
    if expect is None:
        return False
    broken = copy.deepcopy(_load(case.expected_path))
    if not _strip_tool_patches(broken, expect, move_first=move_first):
        return False
    return not move_first or _replaces_a_list(broken)


BREAKABLE = [
    pytest.param(case, move_first, id=f"{case.name}-{'moved-before' if move_first else 'deleted'}")
    for case in CLASS_CASES
    for move_first in (False, True)
    if _breakable(case, move_first)
]


def test_the_golden_cases_that_cannot_be_broken_are_known() -> None:
    """The cases left out of the next test, each for a reason that a look at the case shows:
    a ClusterClass whose patches hold nothing of the tool's, or no list to move it before."""
    left_out = {
        (case.name, move_first)
        for case in CLASS_CASES
        for move_first in (False, True)
        if not _breakable(case, move_first)
    }
    assert left_out == {
        ("capi-two-clusters", False),  # its ClusterClass has no patches
        ("capi-two-clusters", True),
        ("capi-owner-caren", False),  # external patches only
        ("capi-owner-caren", True),
        ("capi-clusterclass", True),  # literal lists, extended in place: nothing to move
        ("rollout-clusterclass", False),  # its ClusterClass has no patches of its own
        ("rollout-clusterclass", True),
    }


@pytest.mark.parametrize(("case", "move_first"), BREAKABLE)
def test_golden_check_catches_a_broken_output(case: Case, move_first: bool) -> None:
    expect = _expect(case)
    assert expect is not None
    docs = _load(case.expected_path)
    broken = copy.deepcopy(docs)
    assert _strip_tool_patches(broken, expect, move_first=move_first)
    problems, _, _ = _check_case(broken, expect)
    assert any(
        "missing drop-in" in p or "tool's commands" in p or "leading tool commands" in p
        for p in problems
    ), problems


# --- the tool itself on a ClusterClass with a literal replacing list


STREAM = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: cc
spec:
  controlPlane:
    ref:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      name: cp
  workers:
    machineDeployments:
    - class: default-worker
      template:
        bootstrap:
          ref:
            apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
            kind: KubeadmConfigTemplate
            name: md
  patches:
  - name: azureJson
    enabledIf: '{{ .azure }}'
    definitions:
    - selector:
        apiVersion: controlplane.cluster.x-k8s.io/v1beta1
        kind: KubeadmControlPlaneTemplate
        matchResources:
          controlPlane: true
      jsonPatches:
      - op: replace
        path: /spec/template/spec/kubeadmConfigSpec/files
        value:
        - path: /etc/kubernetes/azure.json
          content: '{}'
  - name: workerCommands
    definitions:
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
        matchResources:
          machineDeploymentClass:
            names: ['*']
      jsonPatches:
      - op: add
        path: /spec/template/spec/preKubeadmCommands/-
        value: echo appended
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlaneTemplate
metadata:
  name: cp
spec:
  template:
    spec:
      kubeadmConfigSpec:
        files:
        - path: /etc/own
          content: own
        preKubeadmCommands:
        - export HTTP_PROXY=chart-own
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: md
spec:
  template:
    spec:
      preKubeadmCommands:
      - echo own
"""


def test_the_tools_output_passes_and_a_broken_one_fails() -> None:
    proc = run_cli([str(SHARED_PROFILE)], STREAM.encode())
    assert proc.returncode == 0, proc.stderr.decode()
    docs = [d for d in libyaml.load_data(proc.stdout.decode()) if d is not None]
    expect = _expect_shared()
    problems, combinations, not_modelled = _check_case(docs, expect)
    assert (problems, combinations, not_modelled) == ([], 4, [])
    for move_first in (False, True):
        broken = copy.deepcopy(docs)
        assert _strip_tool_patches(broken, expect, move_first=move_first) is not move_first
        problems, _, _ = _check_case(broken, expect)
        assert problems == (
            []
            if move_first
            else [
                # the tool's own patch has no enabledIf: always on
                f"{CP_LABEL} [on: azureJson, proxy-postrender]: missing drop-in {CONTAINERD}",
                f"{CP_LABEL} [on: azureJson, proxy-postrender]: missing drop-in {KUBELET}",
            ]
        )
    # the input itself: nothing of the tool's anywhere
    raw = [d for d in libyaml.load_data(STREAM) if d is not None]
    raw_problems = _check_case(raw, expect)[0]
    md_label = "machineDeployment default-worker (KubeadmConfigTemplate md)"
    for label, on in [(CP_LABEL, "none"), (CP_LABEL, "azureJson"), (md_label, "none")]:
        assert f"{label} [on: {on}]: missing drop-in {CONTAINERD}" in raw_problems, raw_problems
    assert f"{md_label} [on: workerCommands]: missing drop-in {KUBELET}" in raw_problems


def _expect_shared() -> ct.Expectation:
    profile = loader.load(str(SHARED_PROFILE), environ=os.environ)
    assert profile.nodes is not None
    return ct.expectation(profile.nodes, profile.env_vars(), shared=True)


def test_notes_say_what_the_model_cannot_see() -> None:
    other_version = cp_patch("v2", {"op": "add", "path": CP_COMMANDS + "/-", "value": "x"})
    other_version["definitions"][0]["selector"]["apiVersion"] = (
        "controlplane.cluster.x-k8s.io/v1beta2"
    )
    from_variable = cp_patch(
        "var", {"op": "replace", "path": CP_FILES, "valueFrom": {"variable": "f"}}
    )
    external = {"name": "ext", "external": {"generatePatchesExtension": "gen"}}
    cc = clusterclass(other_version, from_variable, external)
    result = ct.check_clusterclass(cc, [cc, cp_template()], EXPECT)
    assert result.notes == [
        "patch 'v2' definitions[0]: selects KubeadmControlPlaneTemplate "
        f"controlplane.cluster.x-k8s.io/v1beta2, the stream has ['{CP}']",
        f"patch 'var' definitions[0]: replace {CP_FILES} from variable 'f': "
        "the model uses a stand-in value",
    ]
    assert result.not_modelled == [
        "machineDeployment default-worker (KubeadmConfigTemplate md): not in the stream",
        "external patch 'ext'",
    ]
    # the unknown variable's stand-in is "": files becomes a string, which the checker reports
    assert f"{CP_LABEL} [on: var]: files is not a list: ''" in result.problems
    assert ct.check_template(configured(), "linux") == []
