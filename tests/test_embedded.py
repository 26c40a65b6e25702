"""Issue 31, items 1-3 and 5: targets by name, namespace and labels; fields set inside a
document held as text (an embedded document, base64 or not); the ocm-klusterlet and
kapp-controller presets; the plaintext gate and the redactor see through base64; Flux
patches for such targets."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender.yamltext import libyaml
from tests.e2e import tool
from tests.helpers import GOLDEN, run_cli

KLUSTERLET = GOLDEN / "embedded-ocm-klusterlet"
PROXY = "http://proxy.corp.example:3128"
PROXY_TLS = "http://proxy.corp.example:3129"


def _profile(tmp_path: Path, targets: str, extra: str = "", name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: p}\n"
        f"spec:\n  httpProxy: {PROXY}\n  httpsProxy: {PROXY_TLS}\n"
        f"  noProxy: [internal.corp.example]\n{extra}  targets:\n{targets}"
    )
    return path


def _run(args: list[str], text: str, cwd: Path | None = None) -> str:
    proc = run_cli(args, text.encode(), cwd=cwd)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def _docs(text: str) -> list[Any]:
    return [d for d in libyaml.load_data(text) if d]


def _kubeconfig(secret: Any) -> Any:
    return libyaml.load_data(base64.b64decode(secret["data"]["kubeconfig"]).decode())[0]


def _secret(name: str, kubeconfig: str, namespace: str = "agent", labels: str = "") -> str:
    encoded = base64.b64encode(kubeconfig.encode()).decode()
    return (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: {namespace}\n"
        f"{labels}data:\n  kubeconfig: {encoded}\n"
    )


CA_OWN = "-----BEGIN CERTIFICATE-----\nMIIBhub\n-----END CERTIFICATE-----\n"
KUBECONFIG = f"""\
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {base64.b64encode(CA_OWN.encode()).decode()}
    server: https://hub.example.com:6443
  name: hub
- cluster:
    server: http://plain.example.com:8080
  name: plain
kind: Config
users: []
"""


# --- selecting objects ------------------------------------------------------------------


def test_a_target_by_name_namespace_and_labels_takes_only_those_objects(tmp_path: Path) -> None:
    targets = (
        "    - apiVersion: v1\n      kind: Secret\n      name: hub\n      namespace: agent\n"
        "      selector: {matchLabels: {app: klusterlet}}\n"
        "      embedded: {path: $.data.kubeconfig, format: kubeconfig, encoding: base64}\n"
        "      set: {'$.clusters[*].cluster.proxy-url': proxyForServer}\n"
    )
    labels = "  labels: {app: klusterlet}\n"
    stream = "---\n".join(
        [
            _secret("hub", KUBECONFIG, labels=labels),  # the one
            _secret("hub", KUBECONFIG, namespace="other", labels=labels),  # other namespace
            _secret("hub", KUBECONFIG),  # no label
            _secret("other", KUBECONFIG, labels=labels),  # other name
        ]
    )
    out = _docs(_run([str(_profile(tmp_path, targets))], stream))
    changed = [_kubeconfig(d)["clusters"][0]["cluster"].get("proxy-url") for d in out]
    assert changed == [PROXY_TLS, None, None, None]


def test_every_cluster_entry_gets_the_proxy_for_its_server_s_scheme(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "    - preset: ocm-klusterlet\n")
    out = _run([str(profile)], _secret("bootstrap-hub-kubeconfig", KUBECONFIG))
    clusters = _kubeconfig(_docs(out)[0])["clusters"]
    assert [c["cluster"]["proxy-url"] for c in clusters] == [PROXY_TLS, PROXY]
    report = run_cli([str(profile), "--report"], out.encode()).stderr.decode()
    assert "bootstraps again" not in report  # nothing changed: nothing to say
    stream = _secret("bootstrap-hub-kubeconfig", KUBECONFIG)
    report = run_cli([str(profile), "--report"], stream.encode()).stderr.decode()
    assert "note: the klusterlet bootstraps again when this Secret changes" in report


def test_the_ca_is_appended_once_and_replaced_not_stacked(tmp_path: Path) -> None:
    first_ca = tmp_path / "a.pem"
    first_ca.write_text("-----BEGIN CERTIFICATE-----\nMIIBone\n-----END CERTIFICATE-----\n")
    second_ca = tmp_path / "b.pem"
    second_ca.write_text("-----BEGIN CERTIFICATE-----\nMIIBtwo\n-----END CERTIFICATE-----\n")
    preset = "    - preset: ocm-klusterlet\n"
    one = _profile(tmp_path, preset, "  caBundle: {file: a.pem, workloads: false}\n", "1.yaml")
    two = _profile(tmp_path, preset, "  caBundle: {file: b.pem, workloads: false}\n", "2.yaml")
    stream = _secret("bootstrap-hub-kubeconfig", KUBECONFIG)
    first = _run([str(one)], stream, tmp_path)
    second = _run([str(two)], first, tmp_path)
    bundle = _kubeconfig(_docs(second)[0])["clusters"][0]["cluster"]["certificate-authority-data"]
    assert base64.b64decode(bundle).decode() == CA_OWN + second_ca.read_text()
    assert second == _run([str(two)], stream, tmp_path)  # whatever ran before
    assert _run([str(two), "--remove"], second, tmp_path) == stream


def test_a_json_document_keeps_its_form(tmp_path: Path) -> None:
    config = json.dumps({"registry": {"mirror": "r.example"}, "log": "info"}, indent=2)
    stream = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: agent-config}\ndata:\n"
        f"  config.json: {json.dumps(config)}\n"
    )
    targets = (
        "    - apiVersion: v1\n      kind: ConfigMap\n      name: agent-config\n"
        "      embedded: {path: '$.data[\"config.json\"]', format: json}\n"
        "      set: {$.registry.httpProxy: httpProxy}\n"
    )
    profile = _profile(tmp_path, targets)
    out = _run([str(profile)], stream)
    inner = _docs(out)[0]["data"]["config.json"]
    assert json.loads(inner)["registry"] == {"mirror": "r.example", "httpProxy": PROXY}
    assert _run([str(profile)], out) == out
    assert _run([str(profile), "--remove"], out) == stream


def test_base64_the_tool_would_not_write_back_the_same_is_refused(tmp_path: Path) -> None:
    encoded = base64.encodebytes(KUBECONFIG.encode()).decode().replace("\n", "")[:-2]
    stream = (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: bootstrap-hub-kubeconfig}\n"
        f"data:\n  kubeconfig: {encoded}\n"
    )
    proc = run_cli([str(_profile(tmp_path, "    - preset: ocm-klusterlet\n"))], stream.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    assert "Secret/bootstrap-hub-kubeconfig" in proc.stderr.decode() or (
        "bootstrap-hub-kubeconfig" in proc.stderr.decode()
    )
    assert "data.kubeconfig is not base64" in proc.stderr.decode() or (
        "would not write back the same" in proc.stderr.decode()
    )


def test_two_selecting_entries_that_meet_in_one_place_are_an_error(tmp_path: Path) -> None:
    targets = (
        "    - {apiVersion: v1, kind: Secret, name: s, set: {$.stringData.a: httpProxy}}\n"
        "    - {apiVersion: v1, kind: Secret, namespace: ns, set: {$.stringData.a: httpsProxy}}\n"
    )
    stream = "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns}\n"
    proc = run_cli([str(_profile(tmp_path, targets))], stream.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    said = proc.stderr.decode()
    assert "document 1 (line 1, Secret ns/s)" in said
    assert "$.stringData.a of Secret is in" in said and said.rstrip().endswith("spec.targets[0]")
    # an object only one of them selects gets that one's value
    alone = "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: other}\n"
    assert _docs(_run([str(_profile(tmp_path, targets))], alone))[0]["stringData"] == {"a": PROXY}


# --- passwords inside base64 --------------------------------------------------------------


def test_the_plaintext_gate_sees_a_password_inside_base64(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: p}\n"
        "spec:\n  httpProxy: http://u:s3cr3t-pw@proxy.corp.example:3128\n"
        "  httpsProxy: http://u:s3cr3t-pw@proxy.corp.example:3128\n"
        "  targets:\n    - preset: ocm-klusterlet\n"
    )
    stream = _secret("bootstrap-hub-kubeconfig", KUBECONFIG)
    out = _run([str(profile)], stream)
    assert "s3cr3t-pw" not in out  # (base64: only the decoded text holds it)
    gate = run_cli([str(profile), "--forbid-plaintext-credentials"], stream.encode())
    assert gate.returncode == 1 and gate.stdout == b""
    assert "a URL with a password in clear at line" in gate.stderr.decode()
    diff = run_cli([str(profile), "--diff"], out.encode() + b"---\n" + stream.encode())
    shown = diff.stdout.decode()
    decoded = [base64.b64decode(t).decode("utf-8", "replace") for t in _tokens(shown)]
    assert not any("s3cr3t-pw" in text for text in [shown, *decoded])


def _tokens(text: str) -> list[str]:
    import re

    return re.findall(r"[A-Za-z0-9+/]{40,}={0,2}", text)


# --- Flux patches -------------------------------------------------------------------------


def test_flux_patches_reach_a_secret_by_name_and_its_embedded_document(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "    - preset: ocm-klusterlet\n    - preset: kapp-controller\n")
    render = (KLUSTERLET / "input.yaml").read_text()
    render += "---\n" + (GOLDEN / "targets-kapp-controller" / "input.yaml").read_text()
    proc = run_cli(["patches", str(profile)], render.encode())
    assert proc.returncode == 0, proc.stderr
    (listed,) = libyaml.load_data(proc.stdout.decode())
    assert [(p["target"]["kind"], p["target"]["name"]) for p in listed] == [
        ("Secret", "bootstrap-hub-kubeconfig"),
        ("Secret", "kapp-controller-config"),
    ]
    kubectl = tool("KUBECTL_BIN", "kubectl")
    work = tmp_path / "k"
    work.mkdir()
    (work / "render.yaml").write_text(render)
    (work / "kustomization.yaml").write_text(
        "resources: [render.yaml]\npatches:\n" + proc.stdout.decode()
    )
    applied = subprocess.run(
        [kubectl, "kustomize", str(work)], capture_output=True, text=True, timeout=120, check=False
    )
    assert applied.returncode == 0, applied.stderr
    direct = _docs(_run([str(profile)], render))
    for doc in direct:  # the tool's records are not part of a patch's business
        doc["metadata"].pop("annotations", None)
    patched = _docs(applied.stdout)
    for doc in patched:
        doc["metadata"].pop("annotations", None)
    key = lambda d: (d["kind"], d["metadata"]["name"])  # noqa: E731
    assert sorted(patched, key=key) == sorted(direct, key=key)


@pytest.mark.parametrize("case", ["embedded-ocm-klusterlet", "embedded-ocm-klusterlet-ca"])
def test_the_golden_klusterlet_output_holds_what_the_preset_says(case: str) -> None:
    (secret, other) = _docs((GOLDEN / case / "expected.yaml").read_text())
    (cluster,) = _kubeconfig(secret)["clusters"]
    assert cluster["cluster"]["proxy-url"] == PROXY_TLS
    bundle = base64.b64decode(cluster["cluster"]["certificate-authority-data"]).decode()
    assert bundle.count("BEGIN CERTIFICATE") == (2 if case.endswith("-ca") else 1)
    assert "proxy-url" not in base64.b64decode(other["data"]["kubeconfig"]).decode()


# --- found on upstream renders (OCM klusterlet chart, kapp-controller, kube-prometheus-stack)


def test_a_quoted_base64_field_keeps_its_quotes_and_comes_back_exactly(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "    - preset: ocm-klusterlet\n")
    encoded = base64.b64encode(KUBECONFIG.encode()).decode()
    for quote in ('"', "'"):
        stream = (
            "apiVersion: v1\nkind: Secret\nmetadata: {name: bootstrap-hub-kubeconfig}\n"
            f"data:\n  kubeconfig: {quote}{encoded}{quote}\n"
        )
        out = _run([str(profile)], stream)
        assert f"kubeconfig: {quote}" in out
        assert _run([str(profile), "--remove"], out) == stream


def test_an_empty_value_counts_as_unset(tmp_path: Path) -> None:
    """kapp-controller's own config overlay ships httpProxy: "", which it reads as
    "no proxy" (and clears the variables the tool gave it)."""
    stream = (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: kapp-controller-config}\n"
        'stringData:\n  caCerts: ""\n  httpProxy: ""\n  noProxy: ""\n'
    )
    profile = _profile(tmp_path, "    - preset: kapp-controller\n")
    out = _run([str(profile)], stream)
    (secret,) = _docs(out)
    assert secret["stringData"]["httpProxy"] == PROXY and secret["stringData"]["caCerts"] == ""
    assert _run([str(profile)], out) == out
    assert _run([str(profile), "--remove"], out) == stream


def test_a_secret_s_own_data_counts_as_set(tmp_path: Path) -> None:
    """The API server lays stringData over data: a value in data is the manifest's."""
    stream = (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: kapp-controller-config}\n"
        f"data:\n  httpProxy: {base64.b64encode(b'http://chart:8080').decode()}\n"
    )
    profile = _profile(tmp_path, "    - preset: kapp-controller\n")
    proc = run_cli([str(profile), "--report"], stream.encode())
    (secret,) = _docs(proc.stdout.decode())
    assert "httpProxy" not in secret["stringData"]
    assert "kept (set by the manifest) stringData.httpProxy" in proc.stderr.decode()
    assert _run([str(profile), "--remove"], proc.stdout.decode()) == stream


def test_the_kapp_controller_preset_takes_its_config_map_too(tmp_path: Path) -> None:
    stream = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kapp-controller-config}\ndata: {}\n"
    profile = _profile(tmp_path, "    - preset: kapp-controller\n")
    out = _run([str(profile)], stream)
    assert _docs(out)[0]["data"]["httpsProxy"] == PROXY_TLS
    assert _run([str(profile), "--remove"], out) == stream


def test_an_empty_json_document_gets_json(tmp_path: Path) -> None:
    stream = (
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: docker}\ndata:\n  daemon.json: "{}"\n'
    )
    targets = (
        "    - apiVersion: v1\n      kind: ConfigMap\n      name: docker\n"
        "      embedded: {path: '$.data[\"daemon.json\"]', format: json}\n"
        "      set: {$.proxies.http-proxy: httpProxy}\n"
    )
    profile = _profile(tmp_path, targets)
    out = _run([str(profile)], stream)
    inner = _docs(out)[0]["data"]["daemon.json"]
    assert json.loads(inner) == {"proxies": {"http-proxy": PROXY}}
    assert _run([str(profile), "--remove"], out) == stream


# --- found in review (issue 31) -----------------------------------------------------------


def _values_target(tmp_path: Path) -> Path:
    targets = (
        "    - apiVersion: v1\n      kind: ConfigMap\n      name: cfg\n"
        "      embedded: {path: '$.data[\"values.yaml\"]', format: yaml}\n"
        "      set: {$.proxy.http_proxy: httpProxy}\n"
    )
    return _profile(tmp_path, targets)


@pytest.mark.parametrize(
    "block",
    [
        "|+\n    foo: 1\n\n\n",  # keep: the blank lines are the value's
        "|+\n    foo: 1\n\n    \n  other: x\n",  # ... one of spaces, and a key after it
        "|+\n    foo: 1\n",
        "|-\n    foo: 1\n    bar: 2\n",
    ],
)
def test_a_keep_block_keeps_its_form_and_comes_back_exactly(tmp_path: Path, block: str) -> None:
    """A ``|+`` block went through the round-trip fallback: written double-quoted, and
    --remove gave that back, not the block."""
    stream = (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg}}\ndata:\n  values.yaml: {block}"
    )
    profile = _values_target(tmp_path)
    out = _run([str(profile)], stream)
    assert f"values.yaml: {block[:2]}\n" in out
    assert _docs(out)[0]["data"]["values.yaml"].startswith("foo: 1\n")
    assert _run([str(profile)], out) == out
    assert _run([str(profile), "--remove"], out) == stream


@pytest.mark.parametrize("null", ["", " ~", " null  # none yet"])
def test_a_mapping_made_in_place_of_a_null_comes_back_null(tmp_path: Path, null: str) -> None:
    """``proxy:`` (null) became the tool's mapping, recorded as made by the tool, and
    --remove deleted the key: the manifest's ``proxy:`` was gone."""
    inner = f"foo: 1\nproxy:{null}\nbar: 2\n"
    stream = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata:\n  values.yaml: |\n"
        + "".join(f"    {line}\n" for line in inner.splitlines())
    )
    profile = _values_target(tmp_path)
    out = _run([str(profile)], stream)
    values = libyaml.load_data(_docs(out)[0]["data"]["values.yaml"])[0]
    assert values == {"foo": 1, "proxy": {"http_proxy": PROXY}, "bar": 2}
    assert _run([str(profile)], out) == out
    assert _run([str(profile), "--remove"], out) == stream
    outer = (
        f"apiVersion: example.com/v1\nkind: Agent\nmetadata: {{name: a}}\nspec:\n  proxy:{null}\n"
    )
    agent = _profile(
        tmp_path,
        "    - {apiVersion: example.com/v1, kind: Agent, set: {$.spec.proxy.http: httpProxy}}\n",
        name="agent.yaml",
    )
    out = _run([str(agent)], outer)
    assert _docs(out)[0]["spec"] == {"proxy": {"http": PROXY}}
    assert _run([str(agent), "--remove"], out) == outer


def test_a_field_the_profile_no_longer_sets_is_taken_out(tmp_path: Path) -> None:
    """A field the record held that the changed profile's target no longer names (and a
    caAppended field's CA) stayed, and dropped out of the record: B after A was not B,
    and --remove could not take it out any more."""
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIBone\n-----END CERTIFICATE-----\n")
    embedded = "      embedded: {path: $.data.kubeconfig, format: kubeconfig, encoding: base64}\n"
    head = "    - apiVersion: v1\n      kind: Secret\n      name: bootstrap-hub-kubeconfig\n"
    both = (
        "      set:\n        '$.clusters[*].cluster.proxy-url': proxyForServer\n"
        "        '$.clusters[*].cluster.certificate-authority-data': caAppended\n"
        "        $.preferences.proxy: httpProxy\n"
    )
    one = "      set: {'$.clusters[*].cluster.proxy-url': proxyForServer}\n"
    extra = f"  caBundle: {{file: {ca}, workloads: false}}\n"
    first = _profile(tmp_path, head + embedded + both, extra, "a.yaml")
    second = _profile(tmp_path, head + embedded + one, extra, "b.yaml")
    stream = _secret("bootstrap-hub-kubeconfig", KUBECONFIG)
    after_first = _run([str(first)], stream)
    hub = _kubeconfig(_docs(after_first)[0])["clusters"][0]["cluster"]
    assert "MIIBone" in base64.b64decode(hub["certificate-authority-data"]).decode()
    alone = _run([str(second)], stream)
    assert _run([str(second)], after_first) == alone
    assert _run([str(second), "--remove"], _run([str(second)], after_first)) == stream


def test_the_plaintext_gate_sees_base64_in_base64_and_json_escapes(tmp_path: Path) -> None:
    """A chart's password inside base64 of base64 (a Secret holding a values file that
    holds a kubeconfig), or in a JSON string written with ``\\/`` or ``\\u0040``, passed
    the gate."""
    url = "http://u:s3cr3t-pw@proxy.corp.example:3128"
    once = base64.b64encode(f"proxy-url: {url}\n".encode()).decode()
    twice = base64.b64encode(f"kubeconfig: {once}\n".encode()).decode()
    head = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"
    for body in (
        f"data:\n  values: {twice}\n",
        "stringData:\n  config.json: " + json.dumps(json.dumps({"proxy": url}).replace("/", "\\/")),
        "stringData:\n  config.json: "
        + json.dumps(json.dumps({"proxy": url.replace("@", "\\u0040")})),
    ):
        stream = head + body + "\n"
        gate = run_cli(["--http-proxy", PROXY, "--forbid-plaintext-credentials"], stream.encode())
        assert gate.returncode == 1 and gate.stdout == b"", body
        assert "a URL with a password in clear at line 5" in gate.stderr.decode()
    plain = head + f"data:\n  values: {base64.b64encode(b'no password here, none' * 3).decode()}\n"
    assert (
        run_cli(
            ["--http-proxy", PROXY, "--forbid-plaintext-credentials"], plain.encode()
        ).returncode
        == 0
    )


def test_an_error_in_a_base64_document_does_not_show_its_decoded_content(tmp_path: Path) -> None:
    """The reader's message quotes values (``found duplicate key "token" with value
    ...``): a kubeconfig's token, base64 in the input, reached stderr in clear."""
    stream = _secret("bootstrap-hub-kubeconfig", "token: 1\ntoken: s3cr3t-bootstrap-token\n")
    proc = run_cli([str(_profile(tmp_path, "    - preset: ocm-klusterlet\n"))], stream.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    said = proc.stderr.decode()
    assert "s3cr3t-bootstrap-token" not in said
    assert "data.kubeconfig is not valid kubeconfig: a syntax error at line 2" in said


@pytest.mark.parametrize("clusters", ["{hub: {server: 'https://hub'}}", "hub"])
def test_a_kubeconfig_whose_clusters_is_no_list_is_an_error(tmp_path: Path, clusters: str) -> None:
    """``[*]`` over a mapping or a string set nothing, and the Secret came out unchanged
    without a word, --strict too (a silent no-op)."""
    stream = _secret("bootstrap-hub-kubeconfig", f"apiVersion: v1\nclusters: {clusters}\n")
    profile = _profile(tmp_path, "    - preset: ocm-klusterlet\n")
    proc = run_cli([str(profile)], stream.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    assert "Secret agent/bootstrap-hub-kubeconfig): clusters is not a list" in proc.stderr.decode()
