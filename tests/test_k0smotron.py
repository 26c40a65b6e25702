"""The k0smotron row (proxy_postrender/dialects.py) and its formats (nodes/k0s.py).

K0sWorkerConfig(Template), K0sControllerConfig and K0sControlPlane(Template) get a
systemd drop-in for the k0s unit (k0sworker / k0scontroller) in ``files`` (no
``owner``; ``contentFrom.secretRef`` in secret mode) and the exports first in the
command list of their API version (v1beta1 ``preStartCommands``, v1beta2
``preK0sCommands``). Ignition: the drop-in for k0s-bootstrap.service too, no exports;
PowerShell (Windows) is refused; a value Jinja would read is refused for cloud-init.
"""

from __future__ import annotations

import pytest

from proxy_postrender import dialects, engine
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import k0s
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from proxy_postrender.structs import replace
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

REQUEST = to_request(loader.load(str(SHARED_PROFILE), environ={}))
REMOVE = replace(REQUEST, env=())

_WORKER = """\
apiVersion: bootstrap.cluster.x-k8s.io/{version}
kind: K0sWorkerConfig
metadata:
  name: w
  namespace: default
spec:
{spec}
"""


def _run(version: str, spec: str) -> str:
    text = _WORKER.format(version=version, spec=spec)
    out = engine.process(text, REQUEST).text
    assert engine.process(out, REQUEST).text == out  # idempotent
    assert engine.process(out, REMOVE).text == text  # --remove exact
    return out


def test_the_command_list_is_read_per_api_version() -> None:
    v1 = _run("v1beta1", "  version: v1.32.2+k0s.0")
    v2 = _run("v1beta2", "  version: v1.32.2+k0s.0")
    assert "preStartCommands:\n    - export HTTP_PROXY=" in v1 and "preK0sCommands" not in v1
    assert "preK0sCommands:\n    - export HTTP_PROXY=" in v2 and "preStartCommands" not in v2
    for out in (v1, v2):
        assert "path: /etc/systemd/system/k0sworker.service.d/http-proxy.conf" in out
        assert "owner:" not in out  # k0smotron's file items have none
        assert "systemctl" not in out  # no containerd to restart: k0s is not installed yet


def test_a_control_plane_gets_the_controller_units_drop_in() -> None:
    (control_plane,) = [k for k in dialects.K0SMOTRON.kinds if k.kind == "K0sControlPlane"]
    assert dialects.K0SMOTRON.units[control_plane.level] == "k0scontroller"
    out = (GOLDEN / "capi-k0smotron" / "expected.yaml").read_text()
    assert "/etc/systemd/system/k0scontroller.service.d/http-proxy.conf" in out


@pytest.mark.parametrize(
    ("version", "spec"),
    [
        ("v1beta1", "  ignition:\n    variant: flatcar"),
        ("v1beta2", "  provisioner:\n    type: ignition"),
    ],
)
def test_ignition_gets_the_bootstrap_units_drop_in_and_no_export(version: str, spec: str) -> None:
    out = _run(version, spec)
    assert f"path: {k0s.BOOTSTRAP_DROPIN}" in out
    assert "export " not in out


@pytest.mark.parametrize(
    "spec",
    ["  provisioner:\n    type: powershell", "  provisioner:\n    platform: windows"],
)
def test_windows_nodes_are_refused(spec: str) -> None:
    with pytest.raises(InputError, match=r"PowerShell|cloud-config and ignition"):
        engine.process(_WORKER.format(version="v1beta2", spec=spec), REQUEST)


def test_a_value_jinja_would_read_is_refused() -> None:
    url = "http://u:a{{b}}@proxy.corp.example:3128"
    env = tuple((n, url if n in ("HTTP_PROXY", "http_proxy") else v) for n, v in REQUEST.env)
    with pytest.raises(InputError, match="Jinja"):
        engine.process(_WORKER.format(version="v1beta2", spec="  {}"), replace(REQUEST, env=env))


def test_secret_mode_uses_secret_ref() -> None:
    out = (GOLDEN / "capi-k0smotron-secret" / "expected.yaml").read_text()
    assert "contentFrom:\n          secretRef:\n            name: k0s-demo-systemd-proxy" in out
    assert "contentFrom:\n          secret:" not in out


def test_report_says_k0s_adds_no_cluster_ranges() -> None:
    text = (GOLDEN / "capi-k0smotron" / "input.yaml").read_bytes()
    proc = run_cli([str(SHARED_PROFILE), "--report"], text)
    assert proc.returncode == 0, proc.stderr
    report = proc.stderr.decode()
    assert report.count("note: k0s adds no cluster ranges to NO_PROXY") == 3
    assert "preStartCommands: 6 commands in front" in report
    assert "preK0sCommands: 6 commands in front" in report


def test_the_row() -> None:
    row = dialects.K0SMOTRON
    assert row.at("bootstrap.cluster.x-k8s.io/v1beta1").commands_key == "preStartCommands"
    assert row.at("bootstrap.cluster.x-k8s.io/v1beta2").commands_key == "preK0sCommands"
    assert (row.file_owner, row.secret_source, row.restart) == (False, "secretRef", "")
    kinds = {k.kind for k in row.kinds}
    assert "K0smotronControlPlane" not in kinds  # pods: nothing to write
    # no ClusterClass planning for k0smotron's templates (their lists differ by version)
    assert not kinds & dialects.TEMPLATE_KINDS


def test_a_template_a_cluster_class_names_is_refused_for_rows_without_a_class_patch() -> None:
    """k0smotron and MicroK8s have no class patch: a template a ClusterClass of the stream
    names would get value-free entries reading a file nothing writes (k0s), or one
    cluster's values for all (MicroK8s). Both are refused, naming the class."""
    text = (GOLDEN / "err-capi-k0s-clusterclass" / "input.yaml").read_text()
    k0s = run_cli([str(SHARED_PROFILE)], text.encode())
    assert k0s.returncode == 1 and k0s.stdout == b""
    assert b"a template of ClusterClass default/k0s-class" in k0s.stderr
    mk8s = text.replace("K0sWorkerConfigTemplate", "MicroK8sConfigTemplate").replace(
        "bootstrap.cluster.x-k8s.io/v1beta2", "bootstrap.cluster.x-k8s.io/v1beta1"
    )
    proc = run_cli([str(SHARED_PROFILE)], mk8s.encode())
    assert proc.returncode == 1 and b"a microk8s ClusterClass" in proc.stderr
