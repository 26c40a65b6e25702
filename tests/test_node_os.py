"""Which operating system a kubeadm bootstrap configures (issue 27, findings 3 and 6), and
the one-line errors for kubeadm lists of the wrong shape (issue 27, finding 8).

One rule (``proxy_postrender/nodes/nodeos.py``) serves the kubeadm planner, the
ClusterClass planner and the owners' watch: what a spec writes where the operating
system shows decides, never a mention of PowerShell or of a drive letter.
"""

from __future__ import annotations

from typing import Any

import pytest

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import kubeadm, nodeos
from proxy_postrender.request import Request
from proxy_postrender.yamltext import libyaml
from tests.helpers import SHARED_PROFILE, run_cli

CONTAINERD = "/etc/systemd/system/containerd.service.d/http-proxy.conf"
KUBELET = "/etc/systemd/system/kubelet.service.d/http-proxy.conf"
ENV = (("HTTP_PROXY", "http://p:1"), ("HTTPS_PROXY", "http://p:1"), ("NO_PROXY", ".svc"))
REQUEST = Request(env=ENV, nodes=kubeadm.NodeSettings(CONTAINERD, KUBELET))
POWERSHELL = "powershell -NoProfile -NonInteractive -EncodedCommand "

KCT = """\
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: md
  namespace: ns1
spec:
  template:
    spec:
{body}"""


def _kct(body: str) -> str:
    return KCT.format(body="".join(f"      {line}\n" for line in body.splitlines()))


def _spec(text: str) -> dict[str, Any]:
    spec: dict[str, Any] = libyaml.load_data(text)[0]["spec"]["template"]["spec"]
    return spec


def _is_linux_output(spec: dict[str, Any]) -> bool:
    paths = [f["path"] for f in spec.get("files", [])]
    commands = spec["preKubeadmCommands"]
    return CONTAINERD in paths and commands[0] == "systemctl daemon-reload"


# Linux templates that merely mention PowerShell or a drive letter: each was read as
# Windows before (no drop-ins, no exports, a PowerShell command first)
LINUX_MENTIONS = {
    "pwsh-in-post": "postKubeadmCommands:\n- pwsh -File /opt/report.ps1",
    "install-then-pwsh": (
        "preKubeadmCommands:\n- apt-get install -y powershell\n- pwsh -Command Get-Date"
    ),
    "pwsh-script-in-pre": "preKubeadmCommands:\n- pwsh /usr/local/bin/prepare.ps1",
    "motd": "files:\n- path: /etc/motd\n  content: 'admins: pwsh, C:/ is Windows'",
}


@pytest.mark.parametrize("case", sorted(LINUX_MENTIONS))
def test_a_linux_template_that_mentions_powershell_gets_the_linux_entries(case: str) -> None:
    out = engine.process(_kct(LINUX_MENTIONS[case]), REQUEST).text
    spec = _spec(out)
    assert _is_linux_output(spec), spec
    assert POWERSHELL not in out


# Real Windows templates (shapes from cluster-api-provider-azure and -vsphere): each sign
# alone makes the template Windows
WINDOWS_SIGNS = {
    "file-on-a-drive": "files:\n- path: c:/k/azure.json\n  content: x",
    "backslash-drive": "files:\n- path: 'C:\\k\\antrea\\start.ps1'\n  content: x",
    "powershell": "preKubeadmCommands:\n- powershell c:/create-external-network.ps1",
    "powershell-exe": "preKubeadmCommands:\n- powershell.exe -Command Get-Date",
    "nssm-after": "postKubeadmCommands:\n- nssm set kubelet start SERVICE_AUTO_START",
    "pwsh-on-a-drive": "postKubeadmCommands:\n- pwsh C:/defender-exclude-calico.ps1",
    "program-on-a-drive": "preKubeadmCommands:\n- C:/k/prepare.exe --now",
    "named-pipe": (
        "joinConfiguration:\n  nodeRegistration:\n"
        "    criSocket: npipe:////./pipe/containerd-containerd"
    ),
    "kubelet-args-v1beta1": (
        "joinConfiguration:\n  nodeRegistration:\n"
        "    kubeletExtraArgs:\n      cloud-config: c:/k/azure.json"
    ),
    "kubelet-args-v1beta2": (
        "joinConfiguration:\n  nodeRegistration:\n"
        "    kubeletExtraArgs:\n    - name: cloud-config\n      value: c:/k/azure.json"
    ),
}


@pytest.mark.parametrize("case", sorted(WINDOWS_SIGNS))
def test_a_windows_sign_makes_a_windows_template(case: str) -> None:
    out = engine.process(_kct(WINDOWS_SIGNS[case]), REQUEST).text
    spec = _spec(out)
    assert spec["preKubeadmCommands"][0].startswith(POWERSHELL)
    assert "systemctl" not in out and CONTAINERD not in out
    assert engine.process(out, REQUEST).text == out  # the tool's command counts for neither


def test_the_rule_reads_programs_not_mentions() -> None:
    sign = nodeos.command_sign
    assert sign("pwsh -File /opt/x.ps1") is None  # pwsh runs on Linux too
    assert sign("pwsh -File C:/x.ps1") == "windows"
    assert sign("apt-get install -y powershell") == "linux"
    assert sign("echo powershell C:/ > /etc/motd") is None
    assert sign("/opt/tools/setup.ps1") == "linux"  # an absolute POSIX path
    assert sign("#!/bin/bash\nset -e\npowershell x") == "linux"
    assert sign('"C:\\Program Files\\x.exe" /q') == "windows"
    assert sign("  POWERSHELL.EXE -c x") == "windows"
    assert nodeos.path_sign("k/x") is None
    # found by an adversarial test: a Windows template of bare cmdlets showed no sign
    assert sign("New-Item -ItemType Directory -Force -Path C:/k") == "windows"
    assert sign("Set-ItemProperty -Path HKLM:/x -Name y -Value 1") == "windows"
    assert sign('& "C:/k/StartKubelet.ps1"') == "windows"
    assert sign("& ./x.ps1") is None
    assert sign("new-item x") is None and sign("Set-up.sh") is None


def test_a_template_with_windows_and_linux_signs_is_refused_naming_it() -> None:
    text = _kct("files:\n- path: c:/k/azure.json\n  content: x\n- path: /etc/motd\n  content: y")
    proc = run_cli([str(SHARED_PROFILE)], text.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert line.startswith(
        "proxy-postrender: error: document 1 (line 1, KubeadmConfigTemplate ns1/md): "
        "cannot tell whether spec.template.spec configures Windows or Linux nodes: "
        "files[0].path c:/k/azure.json is Windows, files[1].path /etc/motd is Linux"
    )


def test_the_tools_own_files_count_for_neither() -> None:
    """A spec that the tool configured for Linux and that since gained a Windows path is
    Windows, not a contradiction: the tool's drop-ins are not the chart's."""
    linux = engine.process(_kct("preKubeadmCommands:\n- echo hi"), REQUEST).text
    windows = linux.replace("- echo hi", "- powershell c:/k/x.ps1")
    spec = _spec(engine.process(windows, REQUEST).text)
    assert spec["preKubeadmCommands"][0].startswith(POWERSHELL)
    assert spec.get("files", []) == []


CLUSTERCLASS = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: cloud
  namespace: ns1
spec:
  patches:
  - name: workerFiles
    definitions:
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
        matchResources:
          machineDeploymentClass:
            names: [worker]
      jsonPatches:
      - op: replace
        path: /spec/template/spec/{list}
        valueFrom:
          template: |
{template}"""


def _clusterclass(template: str, key: str = "files") -> str:
    body = "".join(f"            {line}\n" for line in template.splitlines())
    return CLUSTERCLASS.format(list=key, template=body)


def _follow_ups(text: str) -> list[dict[str, Any]]:
    out = engine.process(text, REQUEST).text
    doc = libyaml.load_data(out)[0]
    patches: list[dict[str, Any]] = doc["spec"]["patches"][0]["definitions"][0]["jsonPatches"]
    return patches[1:]


# Linux patch values that mention PowerShell or a drive letter: each lost its follow-ups
# (the Linux workers lost their drop-ins when the topology reconciled)
LINUX_PATCHES = {
    "motd": ("files", "- path: /etc/motd\n  content: |\n    Use pwsh, not C:/ paths."),
    "comment": ("files", "# like c:/k/azure.json on Windows\n- path: /etc/kubernetes/a.json"),
    "install": ("preKubeadmCommands", "- apt-get install -y powershell\n- echo {{ .x }}"),
    "pwsh": ("preKubeadmCommands", "- pwsh -File /opt/report.ps1"),
    "unreadable-no-mention": ("files", "- path: /etc/a\n  content: {{ .x | nindent 4 }}: :"),
}


@pytest.mark.parametrize("case", sorted(LINUX_PATCHES))
def test_a_linux_patch_that_mentions_powershell_gets_its_follow_ups(case: str) -> None:
    key, template = LINUX_PATCHES[case]
    follow = _follow_ups(_clusterclass(template, key))
    assert follow, "no follow-up patches: read as Windows"
    if key == "files":
        assert [p["value"]["path"] for p in follow] == [CONTAINERD, KUBELET]
    else:
        assert follow[-1]["value"] == "systemctl daemon-reload"
        assert not any(str(p["value"]).startswith(POWERSHELL) for p in follow)


def test_a_windows_patch_still_gets_the_powershell_command_only() -> None:
    text = _clusterclass("- powershell C:/create-temp-folder.ps1", "preKubeadmCommands")
    (follow,) = _follow_ups(text)
    assert follow["path"] == "/spec/template/spec/preKubeadmCommands/0"
    assert follow["value"].startswith(POWERSHELL)
    assert _follow_ups(_clusterclass("- path: c:/k/cloud.json\n  content: x")) == []


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        (
            "- path: c:/k/cloud.json\n- path: /etc/motd",
            "files[0].path c:/k/cloud.json is Windows, files[1].path /etc/motd is Linux",
        ),
        (
            "- path: /etc/a\n  content: {{ .x }}: powershell: :",
            "its template mentions 'powershell' but is not YAML the tool can read",
        ),
    ],
)
def test_a_patch_whose_system_cannot_be_told_is_refused_naming_it(
    template: str, reason: str
) -> None:
    proc = run_cli([str(SHARED_PROFILE)], _clusterclass(template).encode())
    assert proc.returncode == 1 and proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert line.startswith(
        "proxy-postrender: error: document 1 (line 1, ClusterClass ns1/cloud): cannot tell "
        "whether the value of ClusterClass patch 'workerFiles' "
        "(spec.patches[0].definitions[0].jsonPatches[0]) configures Windows or Linux nodes: "
    )
    assert reason in line


# kubeadm lists of the wrong shape: each ended in "internal error (TypeError)" before
WRONG_SHAPES = {
    "preKubeadmCommands: 5": "spec.template.spec.preKubeadmCommands is not a list",
    "postKubeadmCommands: 5": "spec.template.spec.postKubeadmCommands is not a list",
    "files: 5": "spec.template.spec.files is not a list",
    "files: {path: /etc/a}": "spec.template.spec.files is not a list",
    "files: [5]": "spec.template.spec.files[0] is not a mapping",
    "postKubeadmCommands: echo": "spec.template.spec.postKubeadmCommands is not a list",
}


@pytest.mark.parametrize("body", sorted(WRONG_SHAPES))
def test_a_kubeadm_list_of_the_wrong_shape_is_a_one_line_error(body: str) -> None:
    proc = run_cli([str(SHARED_PROFILE)], _kct(body).encode())
    assert proc.returncode == 1 and proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert line == (
        "proxy-postrender: error: document 1 (line 1, KubeadmConfigTemplate ns1/md): "
        + WRONG_SHAPES[body]
    )


def test_a_literal_patch_list_of_the_wrong_shape_is_a_one_line_error() -> None:
    text = _clusterclass("- x", "preKubeadmCommands").replace(
        "        valueFrom:\n          template: |\n            - x\n", "        value: 5\n"
    )
    proc = run_cli([str(SHARED_PROFILE)], text.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert line.endswith("spec.patches[0].definitions[0].jsonPatches[0].value is not a list")
    assert "document 1 (line 1, ClusterClass ns1/cloud)" in line


def test_the_rule_refuses_in_the_planner_as_an_input_error() -> None:
    spec = {"files": [{"path": "c:/k/a"}], "preKubeadmCommands": ["systemctl restart x"]}
    with pytest.raises(InputError, match="preKubeadmCommands\\[0\\] runs systemctl is Linux"):
        kubeadm.is_windows(spec, "spec")
    spec["preKubeadmCommands"] = ["systemctl daemon-reload"]  # the tool's own: neither
    assert kubeadm.is_windows(spec, "spec")
