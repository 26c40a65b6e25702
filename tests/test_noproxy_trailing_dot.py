"""Names written fully qualified (``cluster.local.``), and the aws and gcp presets.

The client models are checked against curl, wget and Go's net/http on the same
rows in test_client_programs.py (TRAILING_DOT_CASES); Python requests here.
"""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import requests.utils

from proxy_postrender.noproxy import advice, clients, presets, scope, syntax
from proxy_postrender.noproxy.scope import NoProxyConfig
from tests.test_client_programs import TRAILING_DOT_CASES

K8S = "kubernetes.default.svc.cluster.local"

# (NO_PROXY, destination, go, curl, python, wget): True = direct, as measured with
# curl 7.88.1, GNU Wget 1.21.3, Go 1.19.8's net/http and requests 2.34.2.
TABLE = [
    ("cluster.local.", K8S, False, True, False, False),
    ("cluster.local.", K8S + ".", True, True, True, True),
    ("cluster.local", K8S + ".", False, True, False, False),
    ("cluster.local.", "cluster.local", False, True, False, False),
    (".cluster.local.", "cluster.local.", False, True, True, False),
    (".svc.cluster.local.", K8S, False, True, False, False),
    (".svc.cluster.local.", K8S + ".", True, True, True, True),
    ("*.cluster.local.", K8S + ".", True, False, False, False),
    ("metadata.google.internal", "metadata.google.internal.", False, True, False, False),
    ("metadata.google.internal.", "metadata.google.internal", False, True, False, False),
    (
        "metadata.google.internal,metadata.google.internal.",
        "metadata.google.internal.",
        True,
        True,
        True,
        True,
    ),
    ("svc.cluster.local.:443", "svc.cluster.local.:443", True, False, True, False),
    # an empty entry matches every name that ends in a dot, for wget
    ("cluster.local.,", "metadata.google.internal.", False, False, False, True),
]


@pytest.mark.parametrize(("value", "dest", "go", "curl", "requests", "wget"), TABLE)
def test_each_client_reads_a_final_dot_its_own_way(
    value: str, dest: str, go: bool, curl: bool, requests: bool, wget: bool
) -> None:
    decided = clients.decide(value, clients.parse_destination(dest))
    assert decided == {"go": go, "curl": curl, "requests": requests, "wget": wget}


@contextmanager
def _no_proxy(value: str) -> Iterator[None]:
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.lower().endswith("_proxy")}
    os.environ["no_proxy"] = value
    try:
        yield
    finally:
        os.environ.pop("no_proxy", None)
        os.environ.update(saved)


@pytest.mark.parametrize(("value", "url"), TRAILING_DOT_CASES)
def test_python_model_matches_requests_on_final_dots(value: str, url: str) -> None:
    dest = clients.parse_destination(url)
    with _no_proxy(value):
        real = bool(requests.utils.should_bypass_proxies(url, None))
    assert clients.requests_direct(value, dest) == real
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    assert clients._urllib_bypass(value, dest.host) == bool(bypass(dest.host, {"no": value}))


@pytest.mark.parametrize(
    ("raw", "text", "kind"),
    [
        ("Cluster.Local.", "cluster.local.", "domain"),
        (".svc.cluster.local.", ".svc.cluster.local.", "suffix"),
        ("*.cluster.local.", ".cluster.local.", "suffix"),
        ("api.corp.example.:6443", "api.corp.example.:6443", "domain"),
    ],
)
def test_a_final_dot_is_kept(raw: str, text: str, kind: str) -> None:
    entry = syntax.parse_entry(raw)
    assert (entry.text, entry.kind) == (text, kind)
    assert syntax.is_fully_qualified(entry)
    plain = syntax.without_final_dot(entry)
    assert plain.text == text.replace(".:", ":").rstrip(".")
    assert not syntax.is_fully_qualified(plain)
    assert syntax.parse_entry(plain.text) == plain


@pytest.mark.parametrize("raw", [".", "..", "a..", "cluster.local..", "*."])
def test_dots_alone_are_no_entries(raw: str) -> None:
    with pytest.raises(syntax.NoProxyEntryError):
        syntax.parse_entry(raw)


def test_both_forms_are_distinct_entries_and_both_are_kept() -> None:
    entries = syntax.normalise(["cluster.local.", "cluster.local", "Cluster.Local."])
    assert syntax.join(entries) == "cluster.local.,cluster.local"


def test_portable_style_adds_the_bare_domain_with_its_dot() -> None:
    entries = (syntax.parse_entry(".svc.cluster.local."),)
    texts = [s.entry.text for s in scope.build(NoProxyConfig(entries=entries, presets=()))]
    assert texts == ["svc.cluster.local.", ".svc.cluster.local."]


def _warnings(*raws: str) -> list[str]:
    items = [syntax.Sourced(syntax.parse_entry(raw), ("spec.noProxy",)) for raw in raws]
    found = advice.for_list(items, NoProxyConfig())
    return [w for w in found if "ends in a dot" in w]


def test_a_fully_qualified_entry_without_its_plain_form_is_advised() -> None:
    [warning] = _warnings("corp.example.")
    assert warning.startswith("corp.example. ends in a dot: Go, Python, wget, Java and Node.js")
    assert "add corp.example for names written without it" in warning
    both = _warnings(".svc.cluster.local.", "svc.cluster.local.")
    assert ["add .svc.cluster.local " in w for w in both] == [True, False]
    assert ["add svc.cluster.local " in w for w in both] == [False, True]
    [warning] = _warnings("svc.cluster.local.:443")
    assert "add svc.cluster.local:443 for names" in warning


@pytest.mark.parametrize(
    "raws",
    [
        ("corp.example.", "corp.example"),
        ("metadata.google.internal.", "google.internal"),
        (".svc.cluster.local.", "cluster.local"),
        (".svc.cluster.local.", ".cluster.local"),
        ("svc.cluster.local.", ".cluster.local"),
        ("cluster.local",),
    ],
)
def test_a_plain_form_listed_or_covered_silences_the_advice(raws: tuple[str, ...]) -> None:
    assert _warnings(*raws) == []


def test_the_default_presets_need_no_advice() -> None:
    built = scope.build(NoProxyConfig(presets=("loopback", "kubernetes", "gcp", "aws")))
    assert [w for w in advice.for_list(built, NoProxyConfig()) if "ends in a dot" in w] == []


def test_gcp_lists_the_metadata_server_in_both_forms() -> None:
    gcp = presets.preset_entries("gcp", "")
    assert gcp.index("metadata.google.internal") + 1 == gcp.index("metadata.google.internal.")
    for host in ("metadata.google.internal", "metadata.google.internal."):
        dest = clients.parse_destination(f"http://{host}/computeMetadata/v1/")
        assert clients.decide(",".join(gcp), dest) == dict.fromkeys(clients.CLIENTS, True)


@pytest.mark.parametrize(
    "host",
    [
        "ip-10-0-1-5.eu-west-1.compute.internal",
        "ip-10-0-1-5.ec2.internal",  # us-east-1
        "ip-10-0-1-5.us-gov-west-1.compute.internal",
    ],
)
def test_aws_covers_the_private_dns_names_of_instances(host: str) -> None:
    value = ",".join(presets.preset_entries("aws", ""))
    decided = clients.decide(value, clients.parse_destination(f"https://{host}:10250"))
    assert decided == dict.fromkeys(clients.CLIENTS, True)


def test_aws_cannot_know_load_balancer_names() -> None:
    value = ",".join(presets.preset_entries("aws", ""))
    elb = clients.parse_destination("https://alpha-apiserver-123.eu-west-1.elb.amazonaws.com:6443")
    assert clients.decide(value, elb) == dict.fromkeys(clients.CLIENTS, False)


def test_a_fully_qualified_cluster_domain_gives_plain_preset_entries() -> None:
    assert presets.preset_entries("kubernetes", "corp.local.")[-2:] == ("corp.local", ".corp.local")
