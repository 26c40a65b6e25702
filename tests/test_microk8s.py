"""The MicroK8s row (proxy_postrender/dialects.py) and the "field setter" writer.

MicroK8sConfig(Template) and MicroK8sControlPlane take the proxy in their own
``initConfiguration`` fields (httpProxy, httpsProxy, noProxy; snapstoreHTTPProxy and
snapstoreHTTPSProxy for snapd): the tool sets them, records what each held before, and
``--remove`` gives the input back byte for byte. No ``contentFrom``: secret mode is
refused; a value MicroK8s' bootstrap shell line would change is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proxy_postrender import dialects, engine
from proxy_postrender.errors import InputError
from proxy_postrender.nodes import writers
from proxy_postrender.profile import loader
from proxy_postrender.profile.request import to_request
from proxy_postrender.request import Request
from proxy_postrender.structs import replace
from proxy_postrender.yamltext.ops import AddKey, DeleteKey, SetValue
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

REQUEST = to_request(loader.load(str(SHARED_PROFILE), environ={}))
REMOVE = replace(REQUEST, env=())


def _nodes(**changes: str) -> Request:
    """REQUEST with ``changes`` to its node settings."""
    assert REQUEST.nodes is not None
    return replace(REQUEST, nodes=replace(REQUEST.nodes, **changes))


PROXY = "http://proxy.corp.example:3128"

_CONFIG = """\
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: MicroK8sConfig
metadata:
  name: worker-0
  namespace: default
spec:
{spec}
"""


def _run(spec: str, request: Request = REQUEST) -> str:
    return engine.process(_CONFIG.format(spec=spec), request).text


def _round_trip(spec: str) -> str:
    """The output for ``spec``; a second run changes nothing and --remove gives the input."""
    text = _CONFIG.format(spec=spec)
    out = engine.process(text, REQUEST).text
    assert engine.process(out, REQUEST).text == out
    assert engine.process(out, REMOVE).text == text
    return out


# --- the writer ----------------------------------------------------------------------------


def test_field_setter_adds_absent_fields_and_records_them() -> None:
    plan = writers.plan_fields(
        {"addons": ["dns"]}, ("spec",), "spec", {}, [("httpProxy", PROXY)], "keep"
    )
    assert plan.ops == [AddKey(("spec",), "httpProxy", PROXY)]
    assert plan.entries == ["field=httpProxy"]


def test_field_setter_keeps_overrides_or_refuses_a_manifest_value() -> None:
    spec = {"httpProxy": "http://other:8080"}
    keep = writers.plan_fields(spec, ("spec",), "spec", {}, [("httpProxy", PROXY)], "keep")
    assert (keep.ops, keep.entries, keep.kept) == ([], [], ["httpProxy"])
    over = writers.plan_fields(spec, ("spec",), "spec", {}, [("httpProxy", PROXY)], "override")
    assert over.ops == [SetValue(("spec", "httpProxy"), PROXY)]
    assert over.entries == ["field=httpProxy:was:http%3A%2F%2Fother%3A8080"]
    with pytest.raises(InputError, match=r"spec.httpProxy is already set \(onConflict: fail\)"):
        writers.plan_fields(spec, ("spec",), "spec", {}, [("httpProxy", PROXY)], "fail")


def test_field_setter_gives_back_what_each_owned_field_held() -> None:
    owned = writers.parse_fields(
        ["field=httpProxy", "field=noProxy:null:_~", "field=httpsProxy:was:http%3A%2F%2Fo"]
    )
    spec = {"httpProxy": PROXY, "noProxy": "x", "httpsProxy": PROXY}
    plan = writers.plan_fields(spec, ("spec",), "spec", owned, [], "keep")
    assert plan.ops == [
        DeleteKey(("spec", "httpProxy")),
        SetValue(("spec", "noProxy"), None, " ~"),
        SetValue(("spec", "httpsProxy"), "http://o"),
    ]


@pytest.mark.parametrize("entry", ["field=", "field=a:maybe", "field=a:was", "field=a:null:%4"])
def test_field_setter_refuses_a_malformed_entry(entry: str) -> None:
    with pytest.raises(InputError, match="malformed"):
        writers.parse_fields([entry])


# --- the row, through the engine -----------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        "  initConfiguration:\n    addons: [dns]",  # fields added next to the manifest's
        "  initConfiguration: {}",  # filled, and "{}" given back
        "  initConfiguration:",  # null: created, and null given back
        "  clusterConfiguration:\n    portCompatibilityRemap: true",  # absent: created
        "  initConfiguration:\n    httpProxy: ~\n    noProxy: null  # none\n    riskLevel: edge",
    ],
)
def test_round_trip_is_idempotent_and_remove_is_exact(spec: str) -> None:
    out = _round_trip(spec)
    assert f"snapstoreHTTPProxy: {PROXY}" in out
    assert "proxy-postrender.io/node-bootstrap: field=httpProxy" in out


def test_a_spec_with_its_own_proxy_round_trips_unchanged() -> None:
    out = _round_trip("  initConfiguration:\n    httpsProxy: http://own.example:8080")
    assert "field=" not in out and "httpsProxy: http://own.example:8080" in out


def test_a_manifest_value_is_kept_and_said() -> None:
    """A spec that sets one proxy field itself keeps them all (onConflict: keep): the
    profile's proxy for the other fields would give its nodes two proxies."""
    spec = "  initConfiguration:\n    httpsProxy: http://own.example:8080"
    out = _run(spec)
    assert "httpsProxy: http://own.example:8080" in out
    assert f"httpProxy: {PROXY}" not in out and "snapstoreHTTPProxy" not in out
    assert "field=" not in out  # nothing of the tool's: --remove leaves it
    proc = run_cli([str(SHARED_PROFILE), "--report"], _CONFIG.format(spec=spec).encode())
    assert "sets httpsProxy itself: the tool leaves all of its proxy fields" in (
        proc.stderr.decode()
    )


def test_override_is_given_back_on_remove() -> None:
    text = _CONFIG.format(spec="  initConfiguration:\n    httpProxy: http://own.example:8080")
    request = _nodes(on_conflict="override")
    out = engine.process(text, request).text
    assert f"httpProxy: {PROXY}" in out
    assert engine.process(out, REMOVE).text == text


def test_secret_mode_is_refused_in_one_line() -> None:
    request = _nodes(credentials="secret")
    with pytest.raises(InputError, match="secret is not supported for microk8s nodes"):
        _run("  initConfiguration: {}", request)


@pytest.mark.parametrize("char", ["$", "`", "\u00e9"])
def test_a_value_the_bootstrap_shell_would_change_is_refused(char: str) -> None:
    url = f"http://user:pa{char}s@proxy.corp.example:3128"
    env = tuple((n, url if n.endswith("_PROXY") and n != "NO_PROXY" else v) for n, v in REQUEST.env)
    with pytest.raises(InputError, match="percent-encode it in the URL"):
        _run("  initConfiguration: {}", replace(REQUEST, env=env))


def test_a_required_level_is_not_made_up() -> None:
    text = "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: MicroK8sConfigTemplate\n"
    text += "metadata:\n  name: t\nspec: {}\n"
    with pytest.raises(InputError, match=r"spec\.template is missing, and the MicroK8sConfig"):
        engine.process(text, REQUEST)


def test_report_says_containerd_only_and_snapd() -> None:
    proc = run_cli(
        [str(SHARED_PROFILE), "--report"], (GOLDEN / "capi-microk8s" / "input.yaml").read_bytes()
    )
    assert proc.returncode == 0, proc.stderr
    report = proc.stderr.decode()
    assert report.count("note: MicroK8s gives httpProxy/httpsProxy/noProxy to its containerd") == 2
    assert report.count("note: snapstoreHTTPProxy/snapstoreHTTPSProxy are snapd's proxy") == 2
    assert "fields set: spec.controlPlaneConfig.initConfiguration.httpProxy" in report


def test_the_row() -> None:
    row = dialects.MICROK8S
    assert row.writers == (dialects.FIELD_SETTER,)
    assert {k.kind for k in row.kinds} == {
        "MicroK8sConfig",
        "MicroK8sConfigTemplate",
        "MicroK8sControlPlane",
    }
    assert dict(row.fields)["snapstoreHTTPSProxy"] == "HTTPS_PROXY"
    assert "MicroK8sConfigTemplate" not in dialects.TEMPLATE_KINDS  # no ClusterClass lists


@pytest.mark.parametrize("password", ["Zq7xpw", "Zq7x%40%22p%25w", "Zq7x_~+.-!$&'()*,;="])
def test_diff_masks_the_manifest_password_an_override_recorded(password: str) -> None:
    """A manifest's own proxy URL that onConflict: override replaced is kept in the
    record (``field=httpProxy:was:``, record-escaped) so that --remove gives it back:
    --diff masks its password there as in the value itself."""
    own = f"http://olduser:{password}@own.example:8080"
    text = _CONFIG.format(spec=f"  initConfiguration:\n    httpProxy: {json.dumps(own)}")
    proc = run_cli([str(SHARED_PROFILE), "--on-conflict", "override", "--diff"], text.encode())
    assert proc.returncode == 1, proc.stderr  # --diff: changes to make
    shown = proc.stdout.decode() + proc.stderr.decode()
    assert "field=httpProxy:was:http%3A%2F%2F***%40own.example%3A8080" in shown
    assert "Zq7x" not in shown


@pytest.mark.parametrize("password", ["Zq7xpw", "Zq7x%40%22p%25w", "Zq7x_~+.-!$&'()*,;="])
def test_the_redactor_masks_a_record_escaped_url(password: str) -> None:
    from proxy_postrender import record
    from proxy_postrender.redact import Redactor

    entry = "field=httpProxy:was:" + record.escape(f"http://u:{password}@own.example:8080")
    masked = Redactor().redact(f"annotation: {entry};field=noProxy")
    want = "field=httpProxy:was:http%3A%2F%2F***%40own.example%3A8080;field=noProxy"
    assert masked == f"annotation: {want}"


def test_the_ca_it_cannot_install_is_said_not_dropped_in_silence(tmp_path: Path) -> None:
    """No MicroK8s field takes a CA: with spec.caBundle (nodes: true by default) the
    report says the nodes do not get it, as for Talos, instead of nothing."""
    (tmp_path / "ca.pem").write_bytes((GOLDEN / "ca-nodes" / "corp-ca.pem").read_bytes())
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        SHARED_PROFILE.read_text().rstrip("\n") + "\n  caBundle:\n    file: ca.pem\n"
    )
    proc = run_cli(
        [str(profile), "--report"], (GOLDEN / "capi-microk8s" / "input.yaml").read_bytes()
    )
    assert proc.returncode == 0, proc.stderr
    note = "note: the proxy's CA (spec.caBundle) is not installed on microk8s nodes"
    assert proc.stderr.decode().count(note) == 2
