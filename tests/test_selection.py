"""Workload targeting: rules, label selectors, annotations, container choice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from proxy_postrender.errors import ProfileError
from proxy_postrender.pods.java import java_tool_options
from proxy_postrender.pods.selection import Criteria, LabelSelector, Requirement, WorkloadSettings
from proxy_postrender.profile import loader
from proxy_postrender.yamltext import libyaml

LABELS = {"app": "web", "tier": "front"}


@pytest.mark.parametrize(
    ("requirement", "matches"),
    [
        (Requirement("app", "In", ("web", "api")), True),
        (Requirement("app", "In", ("api",)), False),
        (Requirement("missing", "In", ("x",)), False),
        (Requirement("app", "NotIn", ("api",)), True),
        (Requirement("app", "NotIn", ("web",)), False),
        (Requirement("missing", "NotIn", ("x",)), True),  # as in Kubernetes
        (Requirement("tier", "Exists"), True),
        (Requirement("missing", "Exists"), False),
        (Requirement("missing", "DoesNotExist"), True),
        (Requirement("app", "DoesNotExist"), False),
    ],
)
def test_label_selector_has_kubernetes_semantics(requirement: Requirement, matches: bool) -> None:
    assert LabelSelector(expressions=(requirement,)).matches(LABELS) is matches
    both = LabelSelector(match_labels=(("app", "web"),), expressions=(requirement,))
    assert both.matches(LABELS) is matches
    assert not LabelSelector(match_labels=(("app", "api"),)).matches(LABELS)


def _obj(kind: str = "Deployment", name: str = "web", namespace: str | None = None) -> Any:
    metadata: dict[str, Any] = {"name": name, "labels": dict(LABELS)}
    if namespace:
        metadata["namespace"] = namespace
    return {"kind": kind, "metadata": metadata, "spec": {"template": {"spec": {}}}}


def test_rules_any_include_matches_and_any_exclude_excludes() -> None:
    settings = WorkloadSettings(
        include=(Criteria(kinds=("Deployment",)), Criteria(namespaces=("ops-*",))),
        exclude=(Criteria(names=("*-debug",)),),
        namespace="default",
    )
    assert settings.object_choice(_obj()) is None
    assert settings.object_choice(_obj("Job", namespace="ops-1")) is None
    assert settings.object_choice(_obj("Job")) == "matched by no spec.workloads.include rule"
    assert settings.object_choice(_obj(name="web-debug")) == "matched by spec.workloads.exclude[0]"


def test_an_unknown_namespace_never_matches_a_namespace_rule() -> None:
    settings = WorkloadSettings(include=(Criteria(namespaces=("*",)),))
    reason = settings.object_choice(_obj())
    assert reason is not None and "--namespace" in reason
    assert (
        WorkloadSettings(include=(Criteria(namespaces=("*",)),), namespace="x").object_choice(
            _obj()
        )
        is None
    )


def test_containers_by_glob_and_init_switch() -> None:
    settings = WorkloadSettings(
        containers=("app*", "init"), exclude_containers=("app-debug",), init_containers=False
    )
    assert settings.container_choice("app", init=False)
    assert not settings.container_choice("app-debug", init=False)
    assert not settings.container_choice("init", init=True)
    assert not settings.container_choice("sidecar", init=False)


def test_wanted_variables_follow_the_case_switches_and_add_extras() -> None:
    env = (("HTTP_PROXY", "http://p:1"), ("NO_PROXY", ".svc"), ("http_proxy", "http://p:1"))
    upper = WorkloadSettings(lower_case=False, extra_env=(("X", "1"),))
    assert upper.wanted(env) == (("HTTP_PROXY", "http://p:1"), ("NO_PROXY", ".svc"), ("X", "1"))
    assert WorkloadSettings(upper_case=False).wanted(env) == (("http_proxy", "http://p:1"),)
    assert upper.wanted(()) == ()  # removal wants nothing, extras included


def test_java_tool_options_translate_the_proxy_and_no_proxy() -> None:
    options = java_tool_options(
        {
            "HTTP_PROXY": "http://user:pw@proxy:3128",
            "HTTPS_PROXY": "https://[fd00::1]",
            "NO_PROXY": "example.com,.svc,10.0.0.0/8,10.0.0.0/12,10.1.2.3,host:8080,::1",
        }
    )
    # CIDRs left out (a pattern would match names); IPv6 in brackets (the JVM's form)
    assert options == (
        "-Dhttp.proxyHost=proxy -Dhttp.proxyPort=3128 -Dhttps.proxyHost=[fd00::1] "
        "-Dhttps.proxyPort=443 "
        "-Dhttp.nonProxyHosts=example.com|*.example.com|*.svc|10.1.2.3|[::1]"
    )
    assert "pw" not in options and "user" not in options
    assert java_tool_options({"NO_PROXY": "x"}) == ""


HEAD = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: t}\n"
    "spec:\n  httpProxy: http://p:1\n  workloads:\n"
)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("    include: [x]\n", "spec.workloads.include[0]: must be a mapping"),
        ("    include: {kind: [Pod]}\n", "unknown field(s) kind"),
        ("    exclude: {selector: {matchExpressions: [{key: a, operator: Is}]}}\n", "operator"),
        (
            "    exclude: {selector: {matchExpressions: [{key: a, operator: In}]}}\n",
            "needs at least",
        ),
        ("    containers: [app]\n", "containers: must be a mapping with include/exclude"),
        ("    upperCase: false\n    lowerCase: false\n", "cannot both be false"),
        ("    extraEnv: [{name: 'A B', value: x}]\n", "is not an environment variable name"),
        ("    initContainers: 'no'\n", "initContainers: must be true or false"),
    ],
)
def test_bad_workloads_sections_are_named(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + body)
    with pytest.raises(ProfileError, match=r"spec\.workloads") as info:
        loader.load(str(path), environ={})
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("$.spec.template", ("spec", "template")),
        ("spec.workers[1].template", ("spec", "workers", 1, "template")),
    ],
)
def test_jsonpaths_name_one_place(path: str, expected: tuple[str | int, ...]) -> None:
    from proxy_postrender.targets import parse_path

    assert parse_path(path) == expected


def test_a_wildcard_is_every_item_of_a_list() -> None:
    from proxy_postrender.targets import ANY, parse_path

    assert parse_path("$.clusters[*].cluster.proxy-url") == (
        "clusters",
        ANY,
        "cluster",
        "proxy-url",
    )


@pytest.mark.parametrize("path", ["$.spec[1:3]", "$..template", "$", "spec["])
def test_jsonpaths_that_name_many_places_or_none_are_refused(path: str) -> None:
    from proxy_postrender.targets import PathError, parse_path

    with pytest.raises(PathError):
        parse_path(path)


TARGET_HEAD = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: t}\n"
    "spec:\n  httpProxy: http://p:1\n  targets:\n"
)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("  - {apiVersion: apps/v1, kind: Deployment, podTemplate: $.spec.template}\n", "built-in"),
        ("  - {preset: ocm}\n", "'ocm' is not one of ocm-addon"),
        ("  - {apiVersion: x/v1, kind: Y}\n", "give podTemplate or set"),
        ("  - {apiVersion: x/v1, kind: Y, set: {$.spec.a: password}}\n", "'password' is not one"),
        (
            "  - {apiVersion: x/v1, kind: Y, podTemplate: '$.spec[*]'}\n",
            "names every item of a list, not one place",
        ),
        (
            "  - {apiVersion: x/v1, kind: Y, podTemplate: '$.spec[1:3]'}\n",
            "only fields and indexes",
        ),
    ],
)
def test_bad_targets_are_named(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(TARGET_HEAD + body)
    with pytest.raises(ProfileError, match=r"spec\.targets\[0\]") as info:
        loader.load(str(path), environ={})
    assert message in str(info.value)


def test_field_setters_follow_on_conflict() -> None:
    from proxy_postrender.errors import InputError
    from proxy_postrender.fields.setters import FieldSettings, plan
    from proxy_postrender.noproxy.environments import ObjectEnv
    from proxy_postrender.targets import FIELDS, Target

    obj: Any = {"kind": "X", "metadata": {"name": "x"}, "spec": {"proxy": {"http": "mine"}}}
    target = Target("", "X", FIELDS, fields=((("spec", "proxy", "http"), "httpProxy"),))
    env = ObjectEnv((("HTTP_PROXY", "http://p:1"),))
    assert plan(obj, (), target, env, FieldSettings("keep")).kept == ["spec.proxy.http"]
    assert plan(obj, (), target, env, FieldSettings("override")).set == ["spec.proxy.http"]
    with pytest.raises(InputError, match="already set"):
        plan(obj, (), target, env, FieldSettings("fail"))


CUSTOM = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: t}\n"
    "spec:\n  httpProxy: http://p:1\n  noProxyPresets: []\n  targets:\n"
    "  - {apiVersion: example.com/v1, kind: Runner, podTemplate: '$.spec.jobs[1].pod'}\n"
    "  - {apiVersion: example.com/v1, kind: Agent, set: {$.spec.proxy.http: httpProxy,"
    " '$.spec.env[0].value': httpProxy}}\n"
)
RUNNER = (
    "apiVersion: example.com/v1\nkind: Runner\nmetadata: {name: r}\nspec:\n  jobs:\n"
    "  - {name: a}\n  - name: b\n    pod:\n      metadata:\n        annotations: {}\n"
    "      spec:\n        containers:\n        - {name: c, image: x}\n"
)
AGENT = (
    "apiVersion: example.com/v1\nkind: Agent\nmetadata: {name: a}\nspec:\n"
    "  env:\n  - {name: P, value: old}\n"
)


def test_custom_targets_through_list_indexes_and_their_removal(tmp_path: Path) -> None:
    from tests.helpers import run_cli

    path = tmp_path / "p.yaml"
    path.write_text(CUSTOM)
    stream = (RUNNER + "---\n" + AGENT).encode()
    out = run_cli([str(path), "--on-conflict", "override"], stream)
    assert out.returncode == 0, out.stderr
    docs = libyaml.load_data(out.stdout.decode())
    assert docs[0]["spec"]["jobs"][1]["pod"]["spec"]["containers"][0]["env"]
    assert docs[1]["spec"]["proxy"] == {"http": "http://p:1"}
    assert docs[1]["spec"]["env"][0]["value"] == "http://p:1"
    # without the profile the tool cannot know these kinds: it says so
    blind = run_cli(["--remove"], out.stdout)
    assert blind.returncode == 1 and b"pass that profile with --remove" in blind.stderr
    removed = run_cli([str(path), "--remove"], out.stdout)
    assert removed.returncode == 0, removed.stderr
    again = libyaml.load_data(removed.stdout.decode())
    assert "proxy" not in again[1]["spec"]
    opted = RUNNER.replace("annotations: {}", "annotations: {proxy-postrender.io/inject: 'false'}")
    skipped = run_cli([str(path)], opted.encode())
    assert b"env" not in skipped.stdout


def test_a_setter_into_metadata_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        CUSTOM.split("  targets:\n")[0]
        + "  targets:\n  - {apiVersion: x/v1, kind: Y, set: {$.metadata.labels.p: httpProxy}}\n"
    )
    with pytest.raises(ProfileError, match="not the object's content"):
        loader.load(str(path), environ={})


CA_CASE = Path(__file__).resolve().parent.parent / "fixtures" / "golden" / "ca-workloads"


def test_the_proxy_ca_volume_and_mount_are_spliced_like_the_env() -> None:
    """caBundle.workloads sent every changed workload through the round-trip dump ('...'
    markers dropped, comments moved, indentless lists re-indented, --remove not exact):
    a mount's ``readOnly: true`` was written as the string "True", which did not verify."""
    from tests.helpers import run_cli

    text = (
        b"# a comment that stays\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p   # here\n"
        b"spec:\n  containers:\n  - name: app\n    image: x\n    volumeMounts:\n"
        b"    - name: data\n      mountPath: /data\n  volumes:\n  - name: data\n"
        b"    emptyDir: {}\n...\n"
    )
    profile = str(CA_CASE / "profile.yaml")
    proc = run_cli([profile, "--report"], text, cwd=CA_CASE)
    assert proc.returncode == 0, proc.stderr
    assert b"round-trip" not in proc.stderr
    out = proc.stdout
    assert out.startswith(b"# a comment that stays\n") and b"name: p   # here\n" in out
    assert b"\n...\n" in out and b"\n  - name: app\n" in out
    assert b"      readOnly: true\n" in out
    again = run_cli([profile], out, cwd=CA_CASE)
    assert again.stdout.startswith(out)  # idempotent (the ConfigMap is made anew after it)
    removed = run_cli([profile, "--remove"], out, cwd=CA_CASE)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == text


@pytest.mark.parametrize("name", ["a;b", "a=b", "a,b"])
def test_a_container_name_the_record_cannot_hold_is_refused(name: str) -> None:
    """``container=VAR,VAR;other=VAR``: such a name made a record the tool could not read
    back. Kubernetes takes only DNS labels as container names, so none is valid."""
    from tests.helpers import SHARED_PROFILE, run_cli

    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
        f"  - name: ok\n  - name: '{name}'\n"
    ).encode()
    proc = run_cli([str(SHARED_PROFILE)], text)
    assert proc.returncode == 1 and proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert f"spec.containers[1] is named '{name}', which is no valid container name" in line
    excluded = run_cli([str(SHARED_PROFILE), "--remove"], text)
    assert excluded.returncode == 0 and excluded.stdout == text  # nothing recorded: no harm
