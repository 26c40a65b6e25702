"""The KRM function contract, through the console script."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from proxy_postrender.noproxy.coverage import NODE_ADDRESSES_UNKNOWN
from proxy_postrender.yamltext import libyaml
from tests.e2e import PROXY_VARS
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

ANNOTATIONS = (
    "      config.kubernetes.io/index: '0'\n"
    "      internal.config.kubernetes.io/path: deploy.yaml\n"
    "      kustomize.config.k8s.io/id: |\n        kind: Deployment\n        name: web\n"
    "      config.kubernetes.io/previousNames: web-old\n"
)


def _resource_list(items: str, config: str | None) -> bytes:
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:" + items
    if config is not None:
        text += "functionConfig:\n" + "".join("  " + line + "\n" for line in config.splitlines())
    return text.encode()


DEPLOY_ITEM = (
    "\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: web\n    annotations:\n"
    + ANNOTATIONS
    + "  spec:\n    template:\n      spec:\n        containers:\n        - name: app  # main\n"
    "          image: nginx\n"
)
OTHER_ITEM = "\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: svc\n"


def _out(proc: Any) -> Any:
    (doc,) = libyaml.load_data(proc.stdout.decode())
    return doc


def test_items_are_transformed_and_every_annotation_kept() -> None:
    proc = run_cli([], _resource_list(DEPLOY_ITEM + OTHER_ITEM, SHARED_PROFILE.read_text()))
    assert proc.returncode == 0, proc.stderr
    assert b"# main" in proc.stdout
    out = _out(proc)
    deploy, service = out["items"]
    annotations = deploy["metadata"]["annotations"]
    assert annotations["kustomize.config.k8s.io/id"] == "kind: Deployment\nname: web\n"
    assert annotations["config.kubernetes.io/previousNames"] == "web-old"
    assert annotations["internal.config.kubernetes.io/path"] == "deploy.yaml"
    env = deploy["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == list(PROXY_VARS)
    assert service == {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}
    (info,) = [r for r in out["results"] if "resourceRef" in r]
    assert info["resourceRef"] == {"kind": "Deployment", "name": "web"}
    assert out["functionConfig"]["kind"] == "ProxyProfile"


def test_a_configmap_function_config_carries_the_basic_fields() -> None:
    config = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fn}\ndata:\n  httpProxy: http://p:1\n"
    )
    out = _out(run_cli([], _resource_list(DEPLOY_ITEM, config)))
    env = out["items"][0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["HTTP_PROXY", "NO_PROXY", "http_proxy", "no_proxy"]
    bad = config + "  caBundle: x\n"
    proc = run_cli([], _resource_list(DEPLOY_ITEM, bad))
    assert proc.returncode == 2
    assert b"unknown key(s) caBundle" in proc.stderr


def test_an_error_returns_the_items_unchanged_with_an_error_result() -> None:
    broken = OTHER_ITEM + "\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n"
    broken += "    containers: nope\n"
    proc = run_cli([], _resource_list(DEPLOY_ITEM + broken, SHARED_PROFILE.read_text()))
    assert proc.returncode == 1
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and "spec.containers is not a list" in lines[0]
    out = _out(proc)
    assert len(out["items"]) == 3
    assert "env" not in out["items"][0]["spec"]["template"]["spec"]["containers"][0]
    (result,) = out["results"]
    assert result["severity"] == "error" and "spec.containers is not a list" in result["message"]


def test_no_profile_anywhere_is_an_error_result() -> None:
    proc = run_cli([], _resource_list(DEPLOY_ITEM, None))
    assert proc.returncode == 2
    assert b"no profile" in proc.stderr
    assert len(_out(proc)["items"]) == 1


def test_the_profile_argument_serves_when_there_is_no_function_config() -> None:
    proc = run_cli([str(SHARED_PROFILE)], _resource_list(DEPLOY_ITEM, None))
    assert proc.returncode == 0, proc.stderr
    assert "env" in _out(proc)["items"][0]["spec"]["template"]["spec"]["containers"][0]


def test_empty_items_stay_empty_and_removal_works() -> None:
    out = _out(run_cli([], _resource_list(" []\n", SHARED_PROFILE.read_text())))
    assert out["items"] == []
    injected = run_cli([], _resource_list(DEPLOY_ITEM, SHARED_PROFILE.read_text())).stdout
    removed = run_cli(["--remove"], injected)
    assert removed.returncode == 0, removed.stderr
    item = _out(removed)["items"][0]
    assert "env" not in item["spec"]["template"]["spec"]["containers"][0]
    assert "proxy-postrender.io/injected" not in item["metadata"]["annotations"]


def test_an_empty_configmap_from_kpt_means_no_function_config() -> None:
    empty = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: function-input}\ndata: {}\n"
    proc = run_cli([str(SHARED_PROFILE)], _resource_list(DEPLOY_ITEM, empty))
    assert proc.returncode == 0, proc.stderr
    removed = run_cli(["--remove"], _resource_list(DEPLOY_ITEM, empty))
    assert removed.returncode == 0, removed.stderr


def test_secret_mode_items_may_gain_the_generated_secret(tmp_path: Any) -> None:
    from tests.helpers import GOLDEN

    profile = tmp_path / "p.yaml"
    profile.write_text(SHARED_PROFILE.read_text() + "  nodes:\n    credentials: secret\n")
    docs = list(libyaml.load_data((GOLDEN / "capi-v1beta1" / "input.yaml").read_text()))

    items = "".join("\n- " + json.dumps(d) for d in docs if isinstance(d, dict))
    first = run_cli([str(profile)], _resource_list(items, None))
    assert first.returncode == 0, first.stderr
    out = _out(first)
    from tests.capi.validate import assert_no_new_capi_errors  # issue 18: real CRD schemas

    assert_no_new_capi_errors(_resource_list(items, None), first.stdout)
    kinds = [item["kind"] for item in out["items"]]
    secrets = kinds.count("Secret")
    assert secrets >= 1 and len(kinds) == len(docs) + secrets
    second = run_cli([str(profile)], first.stdout)
    assert second.returncode == 0, second.stderr
    assert _out(second)["items"] == out["items"]
    removed = run_cli(["--remove"], first.stdout)
    assert removed.returncode == 0, removed.stderr
    assert "Secret" not in [item["kind"] for item in _out(removed)["items"]]


def _refused(proc: Any, message: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and message in lines[0], lines


def test_a_recursive_alias_in_an_item_is_refused_not_turned_into_null() -> None:
    """The round-trip reader takes ``&a [*a]`` and wrote it back as ``[null]``."""
    item = "\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: &a [*a]\n"
    proc = run_cli([], _resource_list(OTHER_ITEM + item, SHARED_PROFILE.read_text()))
    _refused(proc, "a recursive alias")


def test_an_item_nested_too_deeply_is_refused_in_one_line() -> None:
    """It stopped the round-trip reader with an internal error (RecursionError)."""
    deep = "[" * 5000 + "]" * 5000
    item = f"\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: c}}\n  x: {deep}\n"
    proc = run_cli([], _resource_list(item, SHARED_PROFILE.read_text()))
    _refused(proc, "nested too deeply (more than 200 levels)")


def test_an_item_as_deep_as_a_document_may_be_is_read() -> None:
    deep = "[" * 198 + "]" * 198  # the item's mapping and x's list: 200 levels in the item
    item = f"\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: c}}\n  x: {deep}\n"
    proc = run_cli([], _resource_list(item, SHARED_PROFILE.read_text()))
    assert proc.returncode == 0, proc.stderr


def test_a_resource_list_the_text_path_cannot_cut_is_bounded() -> None:
    """Flow-style items go through the round-trip reader and dumper (some 200
    microseconds per node): beyond its bound, one line instead of minutes of work."""
    from proxy_postrender.cli import krm

    zeros = ", ".join(["0"] * krm.ROUNDTRIP_MAX_NODES)
    item = "\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, x: [" + zeros + "]}\n"
    proc = run_cli([], _resource_list(item, SHARED_PROFILE.read_text()))
    _refused(proc, f"more than {krm.ROUNDTRIP_MAX_NODES} nodes")


def test_a_float_without_a_dot_prints_no_warning() -> None:
    item = DEPLOY_ITEM.replace("  name: web\n", "  name: web\n    labels: {scale: 1e3}\n", 1)
    proc = run_cli([], _resource_list(item, SHARED_PROFILE.read_text()))
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert _out(proc)["items"][0]["metadata"]["labels"]["scale"] == 1000.0


def _no_round_trip(*_: Any) -> Any:
    raise AssertionError("the round-trip path ran")


def test_items_are_edited_as_text_and_the_rest_stays_byte_for_byte(monkeypatch: Any) -> None:
    """The ResourceList is not re-dumped: comments, quoting and layout of every item the
    tool does not change stay as they were, and so does everything around the items.
    (It was read and written whole by ruamel.yaml's pure-Python round trip: some 200
    microseconds per node.)"""
    from proxy_postrender.cli import krm
    from tests.test_properties import REMOVE, REQUEST

    service = (
        "\n# the Service is left alone\n- apiVersion: v1   # keep me\n  kind: Service\n"
        "  metadata: {name: svc, labels: {'a': \"b\"}}\n  spec:\n    ports:\n    - port: 80\n"
    )
    text = _resource_list(DEPLOY_ITEM + service, None).decode()
    text = text.replace("items:", "# before the items\nitems:  # a comment\n")
    text += "results:\n- message: from an earlier function\n  severity: info\n"
    monkeypatch.setattr(krm, "_run_roundtrip", _no_round_trip)
    outcome = krm.run(text, lambda config: REQUEST)
    assert outcome.error is None
    out = outcome.text
    head = out.partition("- apiVersion: apps/v1\n")[0]
    assert head == text.partition("- apiVersion: apps/v1\n")[0]
    assert service in out
    assert "from an earlier function" not in out
    (data,) = libyaml.load_data(out)
    env = data["items"][0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == list(PROXY_VARS)
    assert "          image: nginx\n" in out  # the item's own indentation
    again = krm.run(out, lambda config: REQUEST).text
    assert again.partition("results:")[0] == out.partition("results:")[0]
    removed = krm.run(out, lambda config: REMOVE).text
    assert removed.partition("results:")[0] == text.partition("results:")[0]


def test_an_error_leaves_the_items_as_they_came_in_text_too(monkeypatch: Any) -> None:
    from proxy_postrender.cli import krm
    from tests.test_properties import REQUEST

    broken = "\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n    containers: 1\n"
    text = _resource_list(DEPLOY_ITEM + broken, None).decode()
    monkeypatch.setattr(krm, "_run_roundtrip", _no_round_trip)
    outcome = krm.run(text, lambda config: REQUEST)
    assert outcome.error is not None
    assert outcome.text.startswith(text)
    (data,) = libyaml.load_data(outcome.text)
    assert data["results"][0]["severity"] == "error"


def test_block_items_gain_the_generated_secret_and_lose_it_on_removal(tmp_path: Any) -> None:
    from tests.helpers import GOLDEN

    profile = tmp_path / "p.yaml"
    profile.write_text(SHARED_PROFILE.read_text() + "  nodes:\n    credentials: secret\n")
    docs = [
        d
        for d in (GOLDEN / "capi-v1beta1" / "input.yaml").read_text().split("---\n")
        if "kind:" in d
    ]
    items = "".join(
        "\n- " + "\n  ".join(line for line in d.strip("\n").split("\n")).replace("\n  \n", "\n\n")
        for d in docs
    )
    text = _resource_list(items + "\n", None)
    first = run_cli([str(profile)], text)
    assert first.returncode == 0, first.stderr
    from tests.capi.validate import assert_no_new_capi_errors  # issue 18: real CRD schemas

    assert_no_new_capi_errors(text, first.stdout)
    kinds = [item["kind"] for item in _out(first)["items"]]
    assert kinds.count("Secret") >= 1 and len(kinds) == len(docs) + kinds.count("Secret")
    second = run_cli([str(profile)], first.stdout)
    assert second.stdout.partition(b"\nresults:")[0] == first.stdout.partition(b"\nresults:")[0]
    removed = run_cli([str(profile), "--remove"], first.stdout)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.partition(b"\nresults:")[0] == text.rstrip(b"\n")


def test_a_comment_after_a_block_scalar_stays_a_comment() -> None:
    """ruamel.yaml's round trip moved the comment into the block scalar above it: the
    container's script changed. Edited as text, the item keeps its data."""
    from tests.helpers import GOLDEN

    lines = (GOLDEN / "block-scalar-tail" / "input.yaml").read_text().rstrip("\n").split("\n")
    item = "\n- " + lines[0] + "".join("\n" + ("  " + line if line else "") for line in lines[1:])
    text = _resource_list(item + "\n", SHARED_PROFILE.read_text())
    proc = run_cli([], text)
    assert proc.returncode == 0, proc.stderr
    (before,) = libyaml.load_data(text.decode())
    container = _out(proc)["items"][0]["spec"]["template"]["spec"]["containers"][0]
    assert (
        container["args"] == before["items"][0]["spec"]["template"]["spec"]["containers"][0]["args"]
    )
    assert b"\n            # a comment after the block scalar\n" in proc.stdout


# --- issue 27 finding 5: a functionConfig is the input's, not the operator's -------------

TOKEN = "glpat-Zq7xLeakMe"  # what a CI job's CI_DEPLOY_TOKEN holds
CA = Path(__file__).parent.parent / "fixtures" / "golden" / "ca-workloads" / "corp-ca.pem"


def _config(spec: str) -> str:
    return (
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: base}\n"
        "spec:\n  httpProxy: http://proxy.corp.example:3128\n" + spec
    )


def _profile_refused(proc: Any, field: str, *words: str) -> None:
    """Exit 2, one line naming the field, the items back as they came, no token anywhere."""
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.decode().splitlines()
    assert field in line and all(word in line for word in words), line
    out = _out(proc)
    assert "env" not in out["items"][0]["spec"]["template"]["spec"]["containers"][0]
    assert TOKEN.encode() not in proc.stdout + proc.stderr


def test_a_function_config_puts_no_environment_variable_into_the_manifests() -> None:
    """``${CI_DEPLOY_TOKEN}`` in extraEnv expanded into the base's Deployment: refused,
    whatever the permission, because extraEnv expands nothing."""
    config = _config(
        "  workloads:\n    extraEnv:\n    - {name: TOKEN, value: '${CI_DEPLOY_TOKEN}'}\n"
    )
    for allow in ({}, {"PROXY_POSTRENDER_ALLOW_ENV": "1"}):
        env = {"CI_DEPLOY_TOKEN": TOKEN, **allow}
        proc = run_cli([], _resource_list(DEPLOY_ITEM, config), env=env)
        _profile_refused(
            proc,
            "functionConfig: spec.workloads.extraEnv[0].value: '${CI_DEPLOY_TOKEN}' is not "
            "expanded here",
            "only spec.httpProxy, spec.httpsProxy, spec.clusters[].httpProxy and",
        )
    # a literal ${ is still written with $${
    literal = _config("  workloads:\n    extraEnv:\n    - {name: A, value: '$${HOME}'}\n")
    out = _out(run_cli([], _resource_list(DEPLOY_ITEM, literal)))
    env_vars = out["items"][0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "A", "value": "${HOME}"} in env_vars


def test_a_function_config_reads_the_environment_only_when_the_user_allows_it() -> None:
    by_reference = _config("").replace(
        "http://proxy.corp", "http://build:${CI_DEPLOY_TOKEN}@proxy.corp"
    )
    from_env = _config("  credentials:\n    fromEnv: {user: USER, password: CI_DEPLOY_TOKEN}\n")
    how = "allow it with --allow-env or PROXY_POSTRENDER_ALLOW_ENV=1"
    env = {"CI_DEPLOY_TOKEN": TOKEN, "USER": "build"}
    for config, field in (
        (by_reference, "functionConfig: spec.httpProxy: '${CI_DEPLOY_TOKEN}': "),
        (from_env, "functionConfig: spec.credentials.fromEnv.user: "),
    ):
        proc = run_cli([], _resource_list(DEPLOY_ITEM, config), env=env)
        _profile_refused(proc, field, "comes with the input (a KRM functionConfig)", how)
        allowed: list[tuple[list[str], dict[str, str]]] = [
            ([], {"PROXY_POSTRENDER_ALLOW_ENV": "1"}),
            (["--allow-env"], {}),
        ]
        for args, more in allowed:
            proc = run_cli(args, _resource_list(DEPLOY_ITEM, config), env={**env, **more})
            assert proc.returncode == 0, proc.stderr
            assert f"http://build:{TOKEN}@proxy.corp.example:3128".encode() in proc.stdout
    bad = run_cli(
        [], _resource_list(DEPLOY_ITEM, by_reference), env={"PROXY_POSTRENDER_ALLOW_ENV": "y"}
    )
    assert bad.returncode == 2 and b"PROXY_POSTRENDER_ALLOW_ENV must be 1" in bad.stderr


def test_a_function_config_reads_ca_files_only_in_the_working_directory(tmp_path: Path) -> None:
    work, outside = tmp_path / "pkg", tmp_path / "elsewhere"
    (work / "certs").mkdir(parents=True)
    outside.mkdir()
    shutil.copy(CA, outside / "ca.pem")
    shutil.copy(CA, work / "certs" / "ca.pem")
    (work / "link.pem").symlink_to(outside / "ca.pem")
    for name in ("../elsewhere/ca.pem", str(outside / "ca.pem"), "link.pem"):
        config = _config(f"  caBundle: {{file: '{name}', workloads: true}}\n")
        proc = run_cli([], _resource_list(DEPLOY_ITEM, config), cwd=work)
        _profile_refused(
            proc, f"functionConfig: spec.caBundle.file: '{name}' is outside {work}", "reads files"
        )
    config = _config("  caBundle: {file: certs/ca.pem, workloads: true}\n")
    proc = run_cli([], _resource_list(DEPLOY_ITEM, config), cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "ConfigMap" in [item["kind"] for item in _out(proc)["items"]]


def test_the_node_addresses_finding_names_the_control_plane() -> None:
    # issue 28 item 5 review: the finding about a control plane carries its resourceRef
    text = (GOLDEN / "infra-node-addresses-unknown" / "input.yaml").read_text()
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    items = "".join(
        "\n- " + doc.strip().replace("\n", "\n  ") for doc in "\n".join(lines).split("---\n")
    )
    proc = run_cli([], _resource_list(items + "\n", SHARED_PROFILE.read_text()))
    assert proc.returncode == 0, proc.stderr
    results = _out(proc)["results"]
    (found,) = [r for r in results if r.get("tags", {}).get("code") == NODE_ADDRESSES_UNKNOWN]
    assert found["tags"]["strict"] == "false"
    assert found["resourceRef"] == {
        "kind": "KubeadmControlPlane",
        "name": "aws-1-control-plane",
        "namespace": "fleet",
    }


def test_an_item_that_is_no_object_is_named_in_the_error() -> None:
    """A null, a scalar or a list among the items (block or flow style, the text and the
    round-trip paths) is an error naming the item, not a count that came out wrong."""
    config = SHARED_PROFILE.read_text()
    for items, what in (
        (OTHER_ITEM + "\n- null\n", "item 2 is null"),
        (OTHER_ITEM + "\n- just-a-word\n", "item 2 is a scalar"),
        (" [null]\n", "item 1 is null"),
        (" [[1, 2]]\n", "item 1 is a list"),
    ):
        proc = run_cli([], stdin=_resource_list(items, config))
        assert proc.returncode == 1, proc.stderr
        assert f"ResourceList: {what}, not a Kubernetes object" in proc.stderr.decode()
        assert "came out" not in proc.stderr.decode()
