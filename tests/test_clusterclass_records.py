"""The ClusterClass record read strictly, the follow-up patches the tool deletes only
when they are verifiably its own, and the planner's work linear in its input (issue 27,
findings 4, 8 and 9)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from collections.abc import Callable
from typing import Any

import pytest

from bench import gen
from proxy_postrender import engine, record
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import ccowned, clusterclass, kubeadm
from proxy_postrender.plans import SecretRef
from proxy_postrender.request import Request
from proxy_postrender.yamltext import libyaml
from tests.helpers import SHARED_PROFILE

ENV = (("HTTP_PROXY", "http://a:1"), ("HTTPS_PROXY", "http://a:1"), ("NO_PROXY", ".svc"))
NODES = kubeadm.NodeSettings(
    "/etc/systemd/system/containerd.service.d/http-proxy.conf",
    "/etc/systemd/system/kubelet.service.d/http-proxy.conf",
)

# a patch that replaces the files from a template, then one of the chart's own appends
CHART = """\
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: cc
spec:
  patches:
  - name: p
    definitions:
    - selector:
        apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
        kind: KubeadmConfigTemplate
      jsonPatches:
      - op: replace
        path: /spec/template/spec/files
        valueFrom:
          template: |
            - path: /etc/x
              content: y
      - op: add
        path: /spec/template/spec/files/-
        value:
          path: /etc/chart.conf
          owner: root:root
          permissions: "0640"
          content: |
            [Service]
            Environment="FOO=bar"
"""


_SELECT = "selector: {kind: KubeadmConfigTemplate}"
_FILES = "/spec/template/spec/files"
_COMMANDS = "/spec/template/spec/preKubeadmCommands"
_DEFINITION = CHART[: CHART.index("    - selector:")] + "    - {}\n"


def _with_record(text: str, value: str) -> str:
    """``text`` whose record says ``value``."""
    line = f"{kubeadm.ANNOTATION}: {json.dumps(value)}"
    if kubeadm.ANNOTATION in text:
        return re.sub(f"{kubeadm.ANNOTATION}: .*", lambda _: line, text)
    annotation = f"  annotations:\n    {line}\n"
    return text.replace("  name: cc\n", "  name: cc\n" + annotation, 1)


def _run(text: str, env: Any = ENV) -> str:
    return engine.process(text, Request(env=env, nodes=NODES)).text


def _json_patches(text: str) -> list[Any]:
    result: list[Any] = libyaml.load_data(text)[0]["spec"]["patches"][0]["definitions"][0][
        "jsonPatches"
    ]
    return result


# ------------------------------------------------------------------ finding 9: strict records


@pytest.mark.parametrize(
    "value",
    [
        "p0.d00.j0=patches:1",  # zero-padded: once read as p0.d0.j0, the chart's own patch
        "p0.d0.j01=patches:1",
        "p00.d0.j1=patches:1",
        "p0.d0.j1=patches:01",
        "p0.d0.j1=patches:+1",
        "p0.d0.j1=patches:0",
        "p0.d0.j1=patches:\u0661",  # a digit to str.isdigit, not to the tool
        "p0.d0.j1=commands:\u0661",
        "p0.d0=patches:1",
        "p0.d0.j1=patches:1;p0.d0.j1=patches:1",
        "p0.d0.j1=patches:2;p0.d0.j2=patches:1",  # overlapping ranges
        "p0.d0.j1=files:",
        "p0.d0.j1=files:/a,,/b",
        "empty=p0.d0.j1,x",
        "empty=",
    ],
)
def test_a_malformed_record_is_an_error_and_deletes_nothing(value: str) -> None:
    text = _with_record(_run(CHART), value)
    for env in (ENV, ()):  # injecting, and --remove
        with pytest.raises(InputError, match="is malformed near"):
            _run(text, env)


def test_a_record_over_the_charts_own_patches_is_refused_not_obeyed() -> None:
    # the replacing patch itself, and the chart's own append (the tool's shape of patch,
    # add to files/-, but not a file the tool writes)
    for value in ("p0.d0.j0=patches:1", "p0.d0.j1=patches:1"):
        text = _with_record(CHART, value)
        for env in (ENV, ()):
            with pytest.raises(InputError, match=r"jsonPatches\[\d:\d\], recorded in .* not all"):
                _run(text, env)


def test_a_record_of_patches_that_are_not_there_is_refused_naming_the_range() -> None:
    out = _run(CHART)
    assert f"{kubeadm.ANNOTATION}: p0.d0.j1=patches:2" in out
    for value in ("p0.d3.j1=patches:2", "p2.d0.j0=patches:1", "p0.d0.j5=patches:1"):
        text = out.replace("p0.d0.j1=patches:2", value)
        for env in (ENV, ()):
            with pytest.raises(InputError, match=r"jsonPatches\[\d:\d\], recorded in"):
                _run(text, env)


def test_the_tools_own_follow_ups_are_still_replaced_and_removed() -> None:
    out = _run(CHART)
    patches = _json_patches(out)
    assert [p["path"] for p in patches] == [
        "/spec/template/spec/files",
        *["/spec/template/spec/files/-"] * 3,
    ]
    assert patches[3]["value"]["path"] == "/etc/chart.conf"  # the chart's, after the tool's
    assert _run(out) == out
    other = (("HTTP_PROXY", "http://b:2"), ("HTTPS_PROXY", "http://b:2"))
    assert _run(out, other) == _run(CHART, other)
    assert _run(out, ()) == CHART


@pytest.mark.parametrize(
    ("path", "value", "tools"),
    [
        ("/spec/template/spec/files/-", {"path": "/etc/proxy-postrender/proxy-ca.crt"}, False),
        ("/spec/template/spec/preKubeadmCommands/0", "echo hi", False),
        ("/spec/template/spec/preKubeadmCommands/0", "systemctl daemon-reload", True),
        ("/spec/template/spec/preKubeadmCommands/-", "systemctl daemon-reload", False),
        ("/spec/template/spec/files/0", None, False),
        ("/spec/template/spec/files", [], False),
        ("/spec/template/spec/preKubeadmCommands", ["export HTTP_PROXY=x"], True),
        ("/spec/template/spec/preKubeadmCommands", ["export HTTP_PROXY=x", "ls"], False),
    ],
)
def test_only_patches_of_the_tools_shape_count_as_its_own(
    path: str, value: Any, tools: bool
) -> None:
    pointers = clusterclass.LIST_POINTERS["KubeadmConfigTemplate"]
    if value is None:  # a file the tool writes, at an index it never uses
        value = kubeadm.desired_files(NODES, ENV)[0]
    patch = {"op": "add", "path": path, "value": value}
    assert ccowned.is_tool_patch(patch, pointers) is tools


def test_every_file_the_tool_writes_has_the_tools_shape() -> None:
    with_ca = kubeadm.NodeSettings(NODES.containerd_dropin, None, ca_bundle="-----BEGIN x")
    envfile = kubeadm.NodeSettings(NODES.containerd_dropin, None, layout="envfile")
    secret = SecretRef("proxy", None, None)
    files = [
        *kubeadm.desired_files(NODES, ENV),
        *kubeadm.desired_files(with_ca, ENV),
        *kubeadm.desired_files(envfile, ENV),
        *kubeadm.desired_files(NODES, ENV, secret),
        *kubeadm.desired_files(envfile, ENV, secret),
    ]
    assert len(files) == 11 and all(ccowned.is_tool_file(f) for f in files)
    chart = {"path": "/etc/a.conf", "owner": "root:root", "permissions": "0640"}
    assert not ccowned.is_tool_file({**chart, "content": '[Service]\nEnvironment="FOO=1"\n'})
    assert not ccowned.is_tool_file({**chart, "content": "HTTP_PROXY=x\nrm -rf /\n"})


# ------------------------------------------------------------------ finding 8: one-line errors


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ("selector: x\njsonPatches: []", r"definitions\[0\]\.selector is not a mapping"),
        ("selector: [KubeadmConfigTemplate]", r"definitions\[0\]\.selector is not a mapping"),
        ("selector: {kind: KubeadmConfigTemplate}\njsonPatches: 5", r"jsonPatches is not a list"),
        (f"{_SELECT}\njsonPatches:\n- {{op: add, path: {_FILES}, valueFrom: x}}", "neither"),
        (f"{_SELECT}\njsonPatches:\n- {{op: add, path: {_FILES}}}", "neither"),
        (
            f"{_SELECT}\njsonPatches:\n- {{op: add, path: {_FILES}, valueFrom: {{template: [1]}}}}",
            r"valueFrom\.template is not a string",
        ),
        (
            f"{_SELECT}\njsonPatches:\n- {{op: add, path: {_FILES}, value: 5}}",
            r"jsonPatches\[0\]\.value is not a list",
        ),
        (
            f"{_SELECT}\njsonPatches:\n- {{op: add, path: {_COMMANDS}, value: 5}}",
            r"jsonPatches\[0\]\.value is not a list",
        ),
    ],
)
def test_malformed_patch_definitions_are_one_line_errors(definition: str, message: str) -> None:
    text = _DEFINITION.format(definition.replace("\n", "\n      "))
    for env in (ENV, ()):
        if env == () and "selector" not in message and "value is" not in message:
            continue  # removing: a template is never read
        with pytest.raises(InputError, match=message):
            _run(text, env)


@pytest.mark.parametrize(
    "spelled",
    ["%u00D800", "%u00DFFF", "%u110000", "%41", "%0a", "%+A", "%u00_0FF", "%u0000FF", "%"],
)
def test_a_record_spelling_is_read_strictly(spelled: str) -> None:
    with pytest.raises(InputError, match="malformed spelling in a record"):
        record.unescape(spelled)


def test_every_spelling_the_tool_writes_reads_back() -> None:
    for text in ("", " ~", "\n  {}", "\u2028[]", "\U0001f600 x", "%_/", "\x00\xff\u0100"):
        assert record.unescape(record.escape(text)) == text


def test_remove_with_a_lone_surrogate_in_a_record_names_the_document() -> None:
    out = _run(CHART)
    text = out.replace("p0.d0.j1=patches:2", "p0.d0.j1=patches:2;~annotations:%u00D800")
    proc = subprocess.run(
        [sys.executable, "-m", "proxy_postrender", str(SHARED_PROFILE), "--remove"],
        input=text.encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 1 and proc.stdout == b"", lines
    assert len(lines) == 1 and lines[0].startswith("proxy-postrender: error: document 1 ")
    assert "malformed spelling in a record: '%u00D800'" in lines[0]


# ------------------------------------------------------------------ finding 4: linear work


def _lines_run(call: Callable[[], object], modules: tuple[types.ModuleType, ...]) -> int:
    """How many lines of ``modules`` ``call`` executes (sys.settrace line events): the
    planner's work, counted, not timed."""
    files = {m.__file__ for m in modules}
    count = 0

    def local(frame: types.FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: types.FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename in files else None

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def _linear(work: Callable[[int], int], n: int) -> None:
    """The work for 4n is about 4 times the work for n (quadratic: 16 times)."""
    small, large = work(n), work(4 * n)
    assert small > 0  # the pure build: the lines are seen
    assert large <= 4.5 * small, (small, large)


@pytest.mark.build("pure")  # line events come from Python code only
def test_reading_a_templates_keys_is_linear_in_its_keys() -> None:
    def work(keys: int) -> int:
        text = "".join(f"key{i}:\n  value: '{{{{ .v }}}}'\n" for i in range(keys))
        return _lines_run(lambda: clusterclass._template_keys(text), (clusterclass,))

    _linear(work, 100)


@pytest.mark.build("pure")
def test_planning_many_recorded_definitions_is_linear_in_them() -> None:
    def work(definitions: int) -> int:
        head = len(gen.clusterclass_definitions(0))  # no definition
        unit = len(gen.clusterclass_definitions(head + 1)) - head  # one of each kind
        text = gen.clusterclass_definitions(head + (definitions - 1) * unit + 1)
        out = _run(text)  # the tool's output: two record entries per kubeadm definition
        found = text.count("path: /spec/template/spec/files\n")  # longer indices: one less
        assert out.count("=patches:2") == found and abs(found - definitions) <= 1
        return _lines_run(lambda: _run(out), (clusterclass, ccowned))

    _linear(work, 20)
