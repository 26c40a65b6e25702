"""The option tables and what they give: the generic validator's messages, the
JSON Schema and the field reference (fresh, valid, and in agreement with the tool)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from proxy_postrender.errors import ProfileError
from proxy_postrender.profile import check, loader, reference, schema, tables
from proxy_postrender.profile.options import Section
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN

ROOT = Path(__file__).resolve().parents[1]
VALIDATOR = jsonschema.Draft7Validator(json.loads(schema.text()))


def _schema_errors(obj: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(obj)
    ]


# --- (a) the generated files are fresh -------------------------------------------------


@pytest.mark.parametrize("path", schema.COPIES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_checked_in_schema_is_fresh(path: Path) -> None:
    assert path.read_text(encoding="utf-8") == schema.generated_text(), "stale: run make docs"


def test_the_field_reference_in_docs_is_fresh() -> None:
    current = reference.DOCS.read_text(encoding="utf-8")
    assert reference.splice(current) == current, "stale: run make docs"


def test_the_schema_command_prints_the_shipped_schema() -> None:
    assert json.loads(schema.text()) == schema.generate()
    jsonschema.Draft7Validator.check_schema(json.loads(schema.text()))


def test_the_reference_has_one_unbroken_table_per_section() -> None:
    block = reference.markdown()
    for section in tables.sections():
        rows = re.search(
            rf"^### {re.escape(reference.heading(section))}\n\n(?:.*\n\n)?((?:\|.*\|\n)+)\n",
            block,
            re.M,
        )
        assert rows, section.name
        fields = re.findall(r"^\| `([^`]+)` \|", rows.group(1), re.M)
        assert fields == [reference._path(section, o) for o in section.options]


def test_every_field_is_described_checked_and_in_the_schema() -> None:
    generated = schema.generate()
    for section in tables.sections():
        properties = (
            generated["properties"]
            if section is tables.PROFILE
            else generated["definitions"][schema._name(section)]["properties"]
        )
        assert list(properties) == [o.name for o in section.options]
        for option in section.options:
            assert option.doc.strip(), f"{section.name}.{option.name}"
            assert reference.kind_words(option)
            checked_by_hand = option.kind.name in ("const", "jsonpath", "setters")
            assert checked_by_hand or option.kind.name in check._CHECKS


def test_the_tool_does_not_import_the_schema_machinery() -> None:
    code = (
        "import sys\n"
        "import proxy_postrender.engine, proxy_postrender.cli.runner\n"
        "before = set(sys.modules)\n"
        "from proxy_postrender.profile import loader\n"
        "loader.load('fixtures/demo/profile.yaml', environ={})\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    new = proc.stdout.split()
    assert [m for m in new if m.split(".")[0] in ("json", "jsonschema")] == []
    assert "proxy_postrender.profile.schema" not in new
    assert "proxy_postrender.profile.reference" not in new


# --- (b) every profile the project shows validates, with the schema and the tool -------

# profiles that are wrong on purpose: refused by both (test below)
INVALID = {
    "fixtures/golden/err-unknown-profile-field/profile.yaml",
    "fixtures/golden/err-noproxy-whole-range-profile/profile.yaml",
    "fixtures/golden/err-fleet-entry-without-match/profile.yaml",
}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _fenced_yaml(text: str) -> list[str]:
    return re.findall(r"^```ya?ml\n(.*?)^```", text, re.M | re.S)


def _profiles() -> list[tuple[str, int, Any]]:
    """(file, index, object) of every ProxyProfile in docs, README, fixtures and deploy."""
    found: list[tuple[str, int, Any]] = []
    markdown = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    yaml_files = [
        p
        for folder in ("fixtures", "deploy")
        for p in sorted((ROOT / folder).rglob("*.y*ml"))
        if "kind: ProxyProfile" in p.read_text(encoding="utf-8-sig", errors="replace")
    ]
    for path in markdown + yaml_files:
        text = path.read_text(encoding="utf-8-sig")
        blocks = _fenced_yaml(text) if path.suffix == ".md" else [text]
        index = 0
        for block in blocks:
            if "kind: ProxyProfile" not in block:
                continue
            for obj in libyaml.load_data(block):
                if isinstance(obj, dict) and obj.get("kind") == "ProxyProfile":
                    found.append((str(path.relative_to(ROOT)), index, obj))
                    index += 1
    return found


PROFILES = _profiles()


def _environ(obj: Any) -> dict[str, str]:
    """A value for every variable the profile reads (``${VAR}``, ``fromEnv``)."""
    names = set(_VAR.findall(json.dumps(obj)))
    credentials = (obj.get("spec") or {}).get("credentials") or {}
    names |= set((credentials.get("fromEnv") or {}).values())
    return {name: "s3cret" for name in names}


def test_the_project_shows_profiles_of_each_kind_of_source() -> None:
    sources = {file.split("/")[0] for file, _, _ in PROFILES}
    assert {"README.md", "docs", "fixtures"} <= sources
    assert len(PROFILES) > 20


@pytest.mark.parametrize(
    ("file", "index", "obj"), PROFILES, ids=[f"{f}#{i}" for f, i, _ in PROFILES]
)
def test_every_shown_profile_validates_with_the_schema_and_the_tool(
    file: str, index: int, obj: Any
) -> None:
    errors = _schema_errors(obj)
    try:
        loader.from_object(obj, file, _environ(obj), base=str((ROOT / file).parent))
    except ProfileError as exc:
        refused: str | None = str(exc)
    else:
        refused = None
    if file in INVALID:
        assert refused and errors, (refused, errors)
    else:
        assert errors == []
        assert refused is None


# --- (c) invalid profiles: refused by the tool, and by the schema where it can say so ----

HEAD = (
    "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: t}\n"
    "spec:\n  httpProxy: http://proxy:3128\n"
)
ENV = {"U": "u"}

# why the schema accepts some of them: what it cannot state
CROSS = "a rule between field values that JSON Schema cannot state"
ENVIRONMENT = "depends on the environment the tool runs in"
FILES = "depends on files the tool reads"
SYNTAX = "the exact syntax of NO_PROXY entries and JSONPaths is the tool's"
VARIABLES = "a free-form string may hold ${ (the tool refuses a reference outside the URLs)"

# (id, YAML after HEAD (or a whole profile), part of the tool's message, why the schema
# accepts it or None). Derived from the error tests in test_units, test_selection,
# test_credentials and test_noproxy, and the err-* fixtures.
INVALID_PROFILES: list[tuple[str, str, str, str | None]] = [
    ("url-scheme", "  httpsProxy: proxy:3128\n", "needs a scheme", None),
    ("url-socks", "  httpsProxy: socks5://proxy:1080\n", "scheme must be http or https", None),
    ("url-host", "  httpsProxy: 'http://'\n", "has no host", None),
    ("url-port", "  httpsProxy: http://proxy:99999\n", "invalid port", None),
    ("url-path", "  httpsProxy: http://proxy:3128/path\n", "must not have a path", None),
    ("url-space", "  httpsProxy: 'http://pro xy:3128'\n", "whitespace", None),
    ("url-braces", "  httpsProxy: http://u:pa{{ss@proxy:3128\n", "percent-encode them", None),
    ("url-escape", "  httpsProxy: http://u:p$${X}@proxy:3128\n", "percent-encode", None),
    ("url-hunter2", "  httpsProxy: http://user:HUNTER2@proxy:notaport\n", "invalid port", None),
    ("url-user-@", "  httpsProxy: http://u:p@w@proxy:1\n", "(percent-encode: %40)", None),
    ("url-go-quote", "  httpsProxy: 'http://u:p\"w@proxy:1'\n", "percent-encode it as %22", None),
    ("url-go-escape", "  httpsProxy: http://u:p%zz@proxy:1\n", "starts no %XX escape", None),
    ("url-go-host", "  httpsProxy: http://u:p@pro$xy:1\n", "not a host name", None),
    (
        "no-proxy-at-all",
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nspec: {httpProxy: null}\n",
        "httpProxy or spec.httpsProxy is required",
        None,
    ),
    # issue 28: per-cluster entries
    ("cluster-no-match", "  clusters:\n  - httpProxy: http://p:1\n", "match", None),
    ("cluster-empty-match", "  clusters:\n  - match: {names: []}\n", "give names or labels", None),
    (
        "cluster-name",
        "  clusters:\n  - match: {names: [Edge_1]}\n",
        "is not [NAMESPACE/]NAME",
        None,
    ),
    (
        "cluster-url",
        "  clusters:\n  - match: {names: [a]}\n    httpsProxy: socks5://p:1\n",
        "scheme must be http or https",
        None,
    ),
    (
        "clusters-field",
        "  clusters:\n  - match: {names: [a]}\n    noproxy: [x]\n",
        "(did you mean noProxy?)",
        None,
    ),
    (
        "cluster-nodes-field",
        "  clusters:\n  - match: {names: [a]}\n    nodes: {layout: envfile}\n",
        "unknown field(s) layout",
        None,
    ),
    ("on-conflict", "  onConflict: replace\n", "onConflict: 'replace' is not one of", None),
    ("unknown-field", "  noproxy: [example.com]\n", "(did you mean noProxy?)", None),
    ("cidr", "  cluster:\n    podCIDRs: [10.0.0.0/33]\n", "not a valid CIDR", None),
    # issue 28: a /0 was every address of its family (1.2.3.4/0 became 0.0.0.0/0)
    ("no-proxy-v4-slash-0", "  noProxy: [a.example, 1.2.3.4/0]\n", "write '*' if", None),
    ("no-proxy-v6-slash-0", "  noProxy: 'a.example,::/0'\n", "every IPv6 address", None),
    ("cidr-slash-00", "  cluster:\n    nodeCIDRs: [10.0.0.0/00]\n", "a /0 CIDR", None),
    ("service-cidr", "  cluster:\n    serviceCIDRs: [example.com]\n", "is not a CIDR", None),
    ("domain", "  cluster:\n    domain: 10.0.0.1\n", "'10.0.0.1' is not a host name", None),
    ("cluster-field", "  cluster:\n    podCidrs: []\n", "(did you mean podCIDRs?)", None),
    ("preset", "  noProxyPresets: [loopback, azur]\n", "unknown preset(s) azur", None),
    ("style", "  noProxyStyle: wget\n", "'wget' is not one of portable, exact", None),
    ("discovery", "  noProxyDiscovery: 'yes'\n", "must be true or false", None),
    ("no-proxy-entry", "  noProxy: [a..b]\n", "NO_PROXY entry 'a..b'", None),
    ("no-proxy-port", "  noProxy: 'x.com:0'\n", "port '0' is not 1-65535", None),
    ("no-proxy-v6", "  noProxy: ['[fd00::1']\n", "missing ']'", None),
    ("no-proxy-v6-junk", "  noProxy: ['1:2:']\n", "NO_PROXY entry '1:2:'", SYNTAX),
    (
        "drop-in-form",
        "  nodes:\n    kubeletDropIn: /etc/systemd/system/kubelet.service.d/proxy.txt\n",
        "UNIT.d/NAME.conf",
        None,
    ),
    (
        "paths-differ",
        "  nodes:\n    envFile: /etc/systemd/system/containerd.service.d/http-proxy.conf\n",
        "must differ",
        CROSS,
    ),
    ("layout", "  nodes:\n    layout: sideways\n", "layout", None),
    ("windows", "  nodes:\n    windows: maybe\n", "windows", None),
    ("node-credentials", "  nodes:\n    credentials: vault\n", "credentials", None),
    ("secret-name", "  nodes:\n    secretName: Not_A_Name\n", "secretName", None),
    ("rule-not-mapping", "  workloads:\n    include: [x]\n", "include[0]: must be a mapping", None),
    ("rule-field", "  workloads:\n    include: {kind: [Pod]}\n", "unknown field(s) kind", None),
    (
        "operator",
        "  workloads:\n    exclude: {selector: {matchExpressions: [{key: a, operator: Is}]}}\n",
        "operator",
        None,
    ),
    (
        "operator-values",
        "  workloads:\n    exclude: {selector: {matchExpressions: [{key: a, operator: In}]}}\n",
        "needs at least",
        None,
    ),
    (
        "exists-values",
        "  workloads:\n    exclude: {selector: {matchExpressions: "
        "[{key: a, operator: Exists, values: [x]}]}}\n",
        "takes no values",
        None,
    ),
    (
        "containers",
        "  workloads:\n    containers: [app]\n",
        "containers: must be a mapping with include/exclude",
        None,
    ),
    (
        "both-cases-off",
        "  workloads:\n    upperCase: false\n    lowerCase: false\n",
        "cannot both be false",
        None,
    ),
    (
        "extra-env-name",
        "  workloads:\n    extraEnv: [{name: 'A B', value: x}]\n",
        "is not an environment variable name",
        None,
    ),
    (
        "extra-env-shape",
        "  workloads:\n    extraEnv: [{name: A}]\n",
        "must be a mapping with name and value",
        None,
    ),
    (
        "extra-env-reserved",
        "  workloads:\n    extraEnv: [{name: http_proxy, value: x}]\n",
        "sets itself",
        None,
    ),
    (
        "extra-env-twice",
        "  workloads:\n    extraEnv: [{name: A, value: '1'}, {name: A, value: '2'}]\n",
        "twice",
        CROSS,
    ),
    ("init-containers", "  workloads:\n    initContainers: 'no'\n", "must be true or false", None),
    ("create-secret", "  credentials:\n    createSecret: true\n", "needs secretRef", None),
    (
        "create-and-forbid",
        "  credentials:\n    secretRef: s\n    createSecret: true\n    forbidPlaintext: true\n",
        "forbidPlaintext forbids",
        None,
    ),
    ("secret-ref", "  credentials:\n    secretRef: Not_A_Name\n", "name of a Secret", None),
    ("from-env-shape", "  credentials:\n    fromEnv: {user: U}\n", "fromEnv.password", None),
    (
        "from-env-unset",
        "  credentials:\n    fromEnv: {user: U, password: PP}\n",
        "environment variable PP is not set",
        ENVIRONMENT,
    ),
    (
        "from-env-and-user",
        "  httpsProxy: http://me@proxy:1\n  credentials:\n    fromEnv: {user: U, password: U}\n",
        "the URL has a user already",
        None,
    ),
    ("variable-unset", "  httpsProxy: http://u:${NOPE}@proxy:1\n", "NOPE is not set", ENVIRONMENT),
    (
        "variable-extra-env",
        "  workloads:\n    extraEnv: [{name: A, value: '${U}'}]\n",
        "extraEnv[0].value: '${U}' is not expanded here",
        VARIABLES,
    ),
    ("variable-no-proxy", "  noProxy: ['${U}']\n", "noProxy[0]: '${U}' is not expanded", None),
    ("ca-pem", "  caBundle: {pem: 'not a certificate'}\n", "no PEM certificate", None),
    ("ca-file", "  caBundle: {file: missing.pem}\n", "cannot read", FILES),
    ("ca-none", "  caBundle: {}\n", "give the CA as file or as pem", None),
    ("ca-both", "  caBundle: {pem: x, file: y}\n", "give the CA as file or as pem", None),
    (
        "ca-mount",
        "  caBundle: {file: ca.pem, mountPath: relative}\n",
        "mountPath: must be an absolute",
        None,
    ),
    ("ca-env", "  caBundle: {file: ca.pem, env: ['A B']}\n", "env: must be a list", None),
    (
        "ca-env-clash",
        "  caBundle: {file: ca.pem, workloads: true}\n"
        "  workloads:\n    extraEnv: [{name: SSL_CERT_FILE, value: x}]\n",
        "which spec.caBundle.env sets too",
        CROSS,
    ),
    (
        "target-built-in",
        "  targets:\n  - {apiVersion: apps/v1, kind: Deployment, podTemplate: $.spec.template}\n",
        "built-in",
        "the built-in kinds live in the target table, not in the schema",
    ),
    ("target-preset", "  targets:\n  - {preset: ocm}\n", "'ocm' is not one of ocm-addon", None),
    # (a list or mapping as the name was an internal error, TypeError)
    ("target-preset-list", "  targets:\n  - {preset: [ocm-addon]}\n", "is not one of", None),
    (
        "target-labels-bool",  # (was read as "True": never a label's "true", a silent no-op)
        "  targets:\n  - {apiVersion: v1, kind: Secret, selector: {matchLabels: {app: true}},"
        " set: {$.stringData.a: httpProxy}}\n",
        "matchLabels: must map label keys to string values",
        None,
    ),
    ("target-shape", "  targets:\n  - {apiVersion: x/v1, kind: Y}\n", "give podTemplate", None),
    (
        "target-value",
        "  targets:\n  - {apiVersion: x/v1, kind: Y, set: {$.spec.a: password}}\n",
        "'password' is not one",
        None,
    ),
    (
        "target-wildcard",
        "  targets:\n  - {apiVersion: x/v1, kind: Y, podTemplate: '$.spec[*]'}\n",
        "names every item of a list, not one place",
        None,
    ),
    (
        "target-metadata",
        "  targets:\n  - {apiVersion: x/v1, kind: Y, set: {$.metadata.labels.p: httpProxy}}\n",
        "not the object's content",
        None,
    ),
    (
        "target-jsonpath",
        "  targets:\n  - {apiVersion: x/v1, kind: Y, podTemplate: 'spec['}\n",
        "spec.targets[0]",
        SYNTAX,
    ),
    (
        "spec-not-mapping",
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: t}\n"
        "spec: []\n",
        "spec must be a mapping",
        None,
    ),
    (
        "api-version",
        "apiVersion: proxy-postrender.io/v1\nkind: ProxyProfile\nspec: {httpProxy: 'http://p:1'}\n",
        "expected apiVersion proxy-postrender.io/v1alpha1",
        None,
    ),
    ("top-field", "status: {}\n", "unknown field(s) status", None),
]


@pytest.mark.parametrize(
    ("body", "message", "why"),
    [c[1:] for c in INVALID_PROFILES],
    ids=[c[0] for c in INVALID_PROFILES],
)
def test_invalid_profiles_are_refused_by_the_tool_and_the_schema(
    tmp_path: Path, body: str, message: str, why: str | None
) -> None:
    text = body if body.startswith("apiVersion:") else HEAD + body
    (tmp_path / "ca.pem").write_text((GOLDEN / "ca-workloads" / "corp-ca.pem").read_text())
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(ProfileError) as info:
        loader.load(str(path), environ=ENV)
    assert message in str(info.value)
    errors = _schema_errors(libyaml.load_data(text)[0])
    if why is None:
        assert errors, "the schema accepts it"
    else:
        assert errors == [], f"the schema now refuses it ({why}): move it up"


def test_the_invalid_fixture_is_one_of_them() -> None:
    text = (GOLDEN / "err-unknown-profile-field" / "profile.yaml").read_text()
    assert "noproxy: [example.com]" in text


# --- (d) the generic validator: "did you mean" and the messages of each kind -----------


def _sections_with_key_hints() -> list[Section]:
    return [s for s in tables.sections() if not (s.messages and "keys" in s.messages)]


@pytest.mark.parametrize("section", _sections_with_key_hints(), ids=lambda s: s.name or "top")
def test_a_field_in_the_wrong_case_is_named_in_a_hint(section: Section) -> None:
    for option in section.options:
        wrong = option.name.upper() if option.name != option.name.upper() else option.name.lower()
        with pytest.raises(ProfileError) as info:
            check.mapping(section, {wrong: 1}, "w")
        allowed = ", ".join(sorted(section.names))
        assert str(info.value) == (
            f"w: unknown field(s) {wrong} (did you mean {option.name}?) (allowed: {allowed})"
        )


def test_hints_are_given_for_the_fields_that_have_one() -> None:
    with pytest.raises(ProfileError) as info:
        check.mapping(tables.CONTAINERS, {"Include": [], "bogus": 1, "EXCLUDE": []}, "w")
    assert str(info.value) == (
        "w: unknown field(s) EXCLUDE, Include, bogus (did you mean exclude, include?) "
        "(allowed: exclude, include)"
    )
    with pytest.raises(ProfileError) as info:
        check.mapping(tables.CONTAINERS, {"includes": []}, "w")
    assert str(info.value) == "w: unknown field(s) includes (allowed: exclude, include)"


# The exact messages, one or more per kind of field (as the hand-written checks said them).
MESSAGES = [
    ("  noProxyDiscovery: 1\n", "spec.noProxyDiscovery: must be true or false"),
    ("  httpsProxy: 5\n", "spec.httpsProxy: must be a string"),
    ("  noProxy: 5\n", "spec.noProxy: must be a list or a comma-separated string"),
    ("  noProxy: [a, 1]\n", "spec.noProxy: every entry must be a string"),
    ("  noProxy: 'a b'\n", "spec.noProxy: NO_PROXY entry 'a b' contains whitespace"),
    ("  noProxyPresets: loopback\n", "spec.noProxyPresets: must be a list of preset names"),
    (
        "  noProxyPresets: [x, y]\n",
        "spec.noProxyPresets: unknown preset(s) x, y "
        "(known: loopback, kubernetes, aws, azure, gcp, openstack, services)",
    ),
    ("  onConflict: null\n", "spec.onConflict: None is not one of keep, override, fail"),
    ("  cluster: 5\n", "spec.cluster: must be a mapping"),
    (
        "  cluster: {podCIDRs: 5}\n",
        "spec.cluster.podCIDRs: must be a list of strings or a comma-separated string",
    ),
    (
        "  cluster: {apiServer: '10.0.0.0/8'}\n",
        "spec.cluster.apiServer: '10.0.0.0/8' is not an IP address or a host name",
    ),
    ("  cluster: {domain: 5}\n", "spec.cluster.domain: must be a string"),
    (
        "  cluster: {controlPlaneEndpoint: ''}\n",
        "spec.cluster.controlPlaneEndpoint: must be a host name or address, optionally with a port",
    ),
    (
        "  cluster: {controlPlaneEndpoint: .svc}\n",
        "spec.cluster.controlPlaneEndpoint: '.svc' is not a host name or address",
    ),
    (
        "  nodes: {containerdDropIn: /etc/x.d/../a.conf}\n",
        "spec.nodes.containerdDropIn: must be an absolute path of plain characters",
    ),
    ("  nodes: {secretName: '" + "a" * 254 + "'}\n", "spec.nodes.secretName: must be a Kubernetes"),
    ("  nodes: {enabled: null}\n", "spec.nodes.enabled: must be true or false"),
    ("  workloads: {include: x}\n", "spec.workloads.include: must be a rule (a mapping) or a list"),
    ("  workloads: {include: {kinds: [Pod, '']}}\n", "include.kinds: must be a list of non-empty"),
    (
        "  workloads: {include: {selector: {matchLabels: {a: 1}}}}\n",
        "spec.workloads.include.selector.matchLabels: must map label keys to string values",
    ),
    (
        "  workloads: {exclude: [{selector: {matchExpressions: [{operator: In, values: [x]}]}}]}\n",
        "spec.workloads.exclude[0].selector.matchExpressions[0].key: must be a label key",
    ),
    ("  workloads: {extraEnv: abc}\n", "spec.workloads.extraEnv[0]: must be a mapping with name"),
    ("  workloads: {extraEnv: 5}\n", "spec.workloads.extraEnv: must be a list"),
    ("  workloads: {extraEnv: [{name: A, value: 1}]}\n", "extraEnv[0].value: must be a string"),
    ("  credentials: {fromEnv: x}\n", "fromEnv: must be a mapping with user and password"),
    ("  credentials: {fromEnv: {user: 1A, password: U}}\n", "fromEnv.user: must name an"),
    ("  credentials: {createSecret: null}\n", "credentials.createSecret: must be true or false"),
    ("  caBundle: {file: 5}\n", "spec.caBundle.file: must be a path"),
    ("  caBundle: {pem: 5}\n", "spec.caBundle.pem: must be PEM text"),
    ("  caBundle: {file: ca.pem, configMapName: X}\n", "configMapName: must be a ConfigMap name"),
    ("  caBundle: {file: ca.pem, env: null}\n", "env: must be a list of environment variable"),
    ("  httpsProxy: '${bad name}'\n", "spec.httpsProxy: '${bad name}' is not a valid variable"),
]


@pytest.mark.parametrize(("body", "message"), MESSAGES, ids=[m[1][:50] for m in MESSAGES])
def test_the_messages_of_each_kind(tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / "ca.pem").write_text((GOLDEN / "ca-workloads" / "corp-ca.pem").read_text())
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + body)
    with pytest.raises(ProfileError) as info:
        loader.load(str(path), environ=ENV)
    assert str(info.value).startswith(f"profile {path} (t): ")
    assert message in str(info.value)


def test_nodes_switched_off_are_not_read_further() -> None:
    values = check.read(tables.NODES, {"enabled": False, "layout": "x"}, "w", check.Context({}))
    assert values == {"enabled": False}
