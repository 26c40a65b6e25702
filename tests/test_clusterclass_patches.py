"""ClusterClass patches that set a whole kubeadm list: the tool's follow-up patches.

The golden cases capi-clusterclass-{pss,replace,ignition} show the output; these
tests pin the rules around it: where the follow-ups go, how a changed profile or
ClusterClass rewrites them, what ``--remove`` takes out, and which values are
refused.
"""

from __future__ import annotations

from typing import Any

import pytest

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import clusterclass, kubeadm
from proxy_postrender.request import Request
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN

ENV_A = (("HTTP_PROXY", "http://a:1"), ("HTTPS_PROXY", "http://a:1"), ("NO_PROXY", ".svc"))
ENV_B = (("HTTP_PROXY", "http://b:2"), ("HTTPS_PROXY", "http://b:2"), ("NO_PROXY", ".local"))
CONTAINERD = "/etc/systemd/system/containerd.service.d/http-proxy.conf"
KUBELET = "/etc/systemd/system/kubelet.service.d/http-proxy.conf"
BOTH = kubeadm.NodeSettings(CONTAINERD, KUBELET)
CONTAINERD_ONLY = kubeadm.NodeSettings(CONTAINERD, None)

# one definition: a list from a template, then a literal list, then an append
MIXED = """\
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata:
  name: mixed
spec:
  patches:
  - name: worker
    definitions:
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
        kind: KubeadmConfigTemplate
        matchResources:
          machineDeploymentClass:
            names: [worker]
      jsonPatches:
      - op: replace
        path: /spec/template/spec/files
        valueFrom:
          template: |
            - path: /etc/worker.conf
              content: "{{ .worker }}"
      - op: replace
        path: /spec/template/spec/preKubeadmCommands
        value:
        - echo first
      - op: add
        path: /spec/template/spec/postKubeadmCommands/-
        value: echo done
"""


def _json_patches(text: str, definition: int = 0) -> list[dict[str, Any]]:
    doc = libyaml.load_data(text)[0]
    result: list[dict[str, Any]] = doc["spec"]["patches"][0]["definitions"][definition][
        "jsonPatches"
    ]
    return result


def _run(text: str, env: Any = ENV_A, nodes: kubeadm.NodeSettings = BOTH) -> str:
    return engine.process(text, Request(env=env, nodes=nodes)).text


def test_follow_ups_come_right_after_the_replacing_patch_and_before_the_next() -> None:
    patches = _json_patches(_run(MIXED))
    assert [(p["op"], p["path"]) for p in patches[:3]] == [
        ("replace", "/spec/template/spec/files"),
        ("add", "/spec/template/spec/files/-"),
        ("add", "/spec/template/spec/files/-"),
    ]
    assert [p["value"]["path"] for p in patches[1:3]] == [CONTAINERD, KUBELET]
    # the literal list that follows is extended in place: the tool's commands first
    assert patches[3]["path"] == "/spec/template/spec/preKubeadmCommands"
    assert patches[3]["value"][-1] == "echo first"
    assert patches[3]["value"][0] == "systemctl daemon-reload"
    assert patches[4]["path"] == "/spec/template/spec/postKubeadmCommands/-"


def test_the_record_counts_indices_as_the_output_has_them() -> None:
    out = _run(MIXED)
    record = libyaml.load_data(out)[0]["metadata"]["annotations"][kubeadm.ANNOTATION]
    # the follow-ups are jsonPatches[1:3]; the literal list moved from index 1 to 3
    assert record.split(";")[0] == "p0.d0.j1=patches:2"
    assert record.split(";")[1].startswith("p0.d0.j3=commands:")


def test_a_changed_profile_rewrites_only_the_tools_patches() -> None:
    first = _run(MIXED, ENV_A, BOTH)
    second = _run(first, ENV_B, CONTAINERD_ONLY)
    assert second == _run(MIXED, ENV_B, CONTAINERD_ONLY)
    assert "http://a:1" not in second
    patches = _json_patches(second)
    assert [p["path"] for p in patches[:2]] == [
        "/spec/template/spec/files",
        "/spec/template/spec/files/-",
    ]
    assert patches[2]["path"] == "/spec/template/spec/preKubeadmCommands"
    assert engine.process(second, Request(env=())).text == MIXED
    # and back again, with the count growing
    assert _run(second, ENV_A, BOTH) == first


@pytest.mark.parametrize(
    "case", ["capi-clusterclass-pss", "capi-clusterclass-replace", "capi-clusterclass-ignition"]
)
def test_commands_follow_ups_put_the_tools_commands_first_in_order(case: str) -> None:
    text = (GOLDEN / case / "input.yaml").read_text()
    out = _run(text)
    doc = libyaml.load_data(out)[0]
    for patch in doc["spec"]["patches"]:
        for definition in patch["definitions"]:
            commands = [
                p["value"] for p in definition["jsonPatches"] if str(p["path"]).endswith("/0")
            ]
            if not commands:
                continue
            # added at index 0 one after the other: they end up in reverse order; a
            # class's templates carry no value: the env file's commands (nodes/classvars.py)
            linux = kubeadm.desired_commands(
                _env_of(doc), kubeadm.NodeSettings(CONTAINERD, KUBELET), shared=True
            )
            assert list(reversed(commands)) == linux or (
                len(commands) == 1 and commands[0].startswith("powershell ")
            )


def _env_of(doc: Any) -> Any:
    """ENV_A as the nodes of a ClusterClass without a Cluster get it."""
    return ENV_A


def test_an_edited_tool_patch_is_an_error() -> None:
    out = _run(MIXED)
    edited = out.replace("path: /spec/template/spec/files/-", "path: /spec/template/spec/x/-", 1)
    with pytest.raises(InputError, match=r"jsonPatches\[1:3\].* are not all its patches"):
        _run(edited)


def test_patches_no_longer_needed_are_taken_out() -> None:
    """The ClusterClass changed under the record: the list now comes as a literal."""
    out = _run(MIXED)
    literal = out.replace(
        "        valueFrom:\n          template: |\n"
        '            - path: /etc/worker.conf\n              content: "{{ .worker }}"\n',
        "        value:\n        - path: /etc/worker.conf\n          content: plain\n",
    )
    assert literal != out
    fresh_input = MIXED.replace(
        "        valueFrom:\n          template: |\n"
        '            - path: /etc/worker.conf\n              content: "{{ .worker }}"\n',
        "        value:\n        - path: /etc/worker.conf\n          content: plain\n",
    )
    again = _run(literal)
    assert again == _run(fresh_input)
    assert all(p["path"] != "/spec/template/spec/files/-" for p in _json_patches(again))


def test_a_windows_list_gets_no_linux_entries_and_a_linux_list_no_powershell() -> None:
    out = _run((GOLDEN / "capi-clusterclass-replace" / "input.yaml").read_text())
    doc = libyaml.load_data(out)[0]
    by_name = {p["name"]: p["definitions"][0]["jsonPatches"] for p in doc["spec"]["patches"]}
    assert len(by_name["windowsCloudConfig"]) == 1  # files on Windows: nothing to add
    temp = by_name["windowsTempFolder"]
    assert [p["path"] for p in temp] == [
        "/spec/template/spec/files/-",
        "/spec/template/spec/preKubeadmCommands",
        "/spec/template/spec/preKubeadmCommands/0",
    ]
    assert temp[2]["value"].startswith("powershell -NoProfile")
    assert "powershell" not in str(by_name["linuxCloudConfig"])


def test_secret_mode_follow_ups_need_a_secret_name() -> None:
    nodes = kubeadm.NodeSettings(CONTAINERD, KUBELET, credentials="secret")
    with pytest.raises(InputError, match=r"set spec\.nodes\.secretName"):
        _run(MIXED, nodes=nodes)
    named = kubeadm.NodeSettings(CONTAINERD, KUBELET, credentials="secret", secret_name="proxy")
    patches = _json_patches(_run(MIXED, nodes=named))
    assert patches[1]["value"]["contentFrom"] == {
        "secret": {"name": "proxy", "key": "containerd-http-proxy.conf"}
    }
    assert "http://a:1" not in str(patches)


@pytest.mark.parametrize(
    ("template", "kinds"),
    [
        ("files:\n- path: /a\npreKubeadmCommands: []\nformat: ignition\n", None),
        ("format: ignition\nfiles:\n", {"format": "other", "files": "null"}),
        ("files: ~\nignition:\n  x: |\n    {{- if .a }}\n", {"files": "null", "ignition": "other"}),
        ('"files":\n  - path: /a\n', {"files": "list"}),
        # a nested line that reads like a top-level key comes first: each key looks below
        # itself (the search for the key's line once found the nested one)
        ("a:\n  files:\n    x: 1\nfiles:\n- path: /a\n", {"a": "other", "files": "list"}),
    ],
)
def test_template_keys_are_read_from_the_top_level(
    template: str, kinds: dict[str, str] | None
) -> None:
    expected = kinds or {"files": "list", "preKubeadmCommands": "list", "format": "other"}
    assert clusterclass._template_keys(template) == expected


@pytest.mark.parametrize(
    "template",
    [
        "format: x\n{{ if .a }}\nfiles: []\n{{ end }}\n",
        "{{- range .files }}\n- path: {{ . }}\n{{- end }}\n",
        "files:\n{{- if .a }}\n- path: /a\n{{- end }}\n",
        "[not, a, mapping]\n",
    ],
)
def test_templates_whose_keys_a_condition_guards_cannot_be_read(template: str) -> None:
    with pytest.raises(clusterclass._Unreadable):
        clusterclass._template_keys(template)
