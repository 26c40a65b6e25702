"""The NO_PROXY engine: entry model, merge order, presets, discovery, client models."""

from __future__ import annotations

import ipaddress
import os
import re
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import pytest
import requests.utils
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy_postrender.errors import InputError
from proxy_postrender.nodes import kubeadm
from proxy_postrender.noproxy import advice, clients, discovery, scope, syntax
from proxy_postrender.noproxy.scope import ClusterNetwork, NoProxyConfig
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli

# (NO_PROXY, destination, go, curl, python, wget): True = direct.
# Go's rules are the documented ones (golang.org/x/net/http/httpproxy, seed 003);
# the curl, Python and wget columns are also checked against the real programs
# in test_client_programs.py.
TABLE = [
    ("foo.com", "foo.com", True, True, True, True),
    ("foo.com", "bar.foo.com", True, True, True, True),
    ("foo.com", "barfoo.com", False, False, False, False),
    (".foo.com", "foo.com", False, True, True, False),
    (".foo.com", "a.foo.com", True, True, True, True),
    ("*.foo.com", "a.foo.com", True, False, False, False),
    ("*", "anything.example", True, True, True, False),
    ("*,other.example", "anything.example", True, False, False, False),
    ("10.0.0.0/8", "10.1.2.3", True, True, True, False),
    ("10.0.0.0/8", "kubernetes", False, False, False, False),
    ("10.96.0.1", "10.96.0.1", True, True, True, True),
    ("10.96.0.1", "10.96.0.10", False, False, False, False),
    ("foo.com:8080", "foo.com:8080", True, False, True, False),
    ("foo.com:8080", "foo.com:443", False, False, False, False),
    ("", "localhost", True, False, False, False),
    ("", "127.0.0.1", True, False, False, False),
    ("FOO.com", "foo.com", True, True, True, True),
    ("cluster.local", "kubernetes.default.svc.cluster.local", True, True, True, True),
    (".svc", "kubernetes.default", False, False, False, False),
    (".svc", "kubernetes.default.svc", True, True, True, True),
    ("169.254.169.254", "http://169.254.169.254/", True, True, True, True),
    ("example.com.", "example.com", False, True, False, False),
    ("fd00::/8", "[fd00::1]:443", True, False, False, False),
    ("fd00::1", "[fd00::1]:443", True, True, True, True),
    ("0.1", "10.96.0.1", False, False, True, True),
]


@pytest.mark.parametrize(("value", "dest", "go", "curl", "requests", "wget"), TABLE)
def test_client_rules(
    value: str, dest: str, go: bool, curl: bool, requests: bool, wget: bool
) -> None:
    got = clients.decide(value, clients.parse_destination(dest))
    assert got == {"go": go, "curl": curl, "requests": requests, "wget": wget}


@contextmanager
def _env(no_proxy: str) -> Iterator[None]:
    saved = {k: v for k, v in os.environ.items() if k.lower().endswith("_proxy")}
    for key in saved:
        del os.environ[key]
    os.environ["no_proxy"] = no_proxy
    os.environ["http_proxy"] = os.environ["https_proxy"] = "http://proxy.invalid:3128"
    try:
        yield
    finally:
        for key in [k for k in os.environ if k.lower().endswith("_proxy")]:
            del os.environ[key]
        os.environ.update(saved)


def _real_python(no_proxy: str, dest: clients.Destination) -> bool:
    host = f"[{dest.host}]" if ":" in dest.host else dest.host
    port = f":{dest.port}" if dest.explicit_port else ""
    with _env(no_proxy):
        return bool(requests.utils.should_bypass_proxies(f"{dest.scheme}://{host}{port}/", None))


@pytest.mark.parametrize(("value", "dest"), [(row[0], row[1]) for row in TABLE])
def test_python_model_matches_requests(value: str, dest: str) -> None:
    destination = clients.parse_destination(dest)
    assert clients.requests_direct(value, destination) == _real_python(value, destination)


@pytest.mark.parametrize(
    "value", ["corp.example,.corp.example", "fd00::1,[fd00::1]", "[fd00::1]", "::1,[::1]"]
)
@pytest.mark.parametrize(
    "dest", ["corp.example", "www.corp.example:8443", "[fd00::1]", "[fd00::1]:443", "[::1]:8080"]
)
def test_python_model_matches_requests_on_what_the_portable_style_adds(
    value: str, dest: str
) -> None:
    destination = clients.parse_destination(dest)
    assert clients.requests_direct(value, destination) == _real_python(value, destination)


LABELS = st.sampled_from(["foo", "bar", "svc", "cluster", "local", "example", "a", "b-1"])
DOMAINS = st.lists(LABELS, min_size=1, max_size=4).map(".".join)
IPV4 = st.tuples(*[st.sampled_from([0, 1, 10, 96, 127, 169, 254]) for _ in range(4)]).map(
    lambda t: ".".join(map(str, t))
)
IPV6 = st.sampled_from(["::1", "fd00::1", "fd00:ec2::254", "2001:db8::5"])
PORTS = st.sampled_from(["", ":80", ":443", ":8080"])
ENTRY = st.one_of(
    DOMAINS,
    DOMAINS.map(lambda d: "." + d),
    DOMAINS.map(lambda d: "*." + d),
    DOMAINS.map(lambda d: d.upper()),
    IPV4,
    st.tuples(IPV4, st.sampled_from([8, 12, 16, 24, 32])).map(lambda t: f"{t[0]}/{t[1]}"),
    IPV6,
    st.sampled_from(["fd00::/8", "2001:db8::/32"]),
    st.tuples(DOMAINS, PORTS).map("".join),
    st.just("*"),
)
VALUES = st.lists(st.tuples(ENTRY, st.sampled_from([",", ", ", " ,", ",,"])), max_size=5).map(
    lambda items: "".join(e + sep for e, sep in items).rstrip(", ")
)
DESTS = st.one_of(
    st.tuples(DOMAINS, PORTS).map("".join),
    st.tuples(IPV4, PORTS).map("".join),
    st.tuples(IPV6, PORTS).map(lambda t: f"[{t[0]}]{t[1]}"),
    st.just("localhost"),
)


@settings(max_examples=400, deadline=None)
@given(VALUES, DESTS)
def test_python_model_matches_requests_on_generated_values(value: str, dest: str) -> None:
    destination = clients.parse_destination(dest)
    assert clients.requests_direct(value, destination) == _real_python(value, destination)


@settings(max_examples=300, deadline=None)
@given(VALUES, DESTS)
def test_urllib_alone_agrees_where_requests_defers_to_it(value: str, dest: str) -> None:
    """The stdlib half of the Python model is urllib's own function."""
    destination = clients.parse_destination(dest)
    with _env(value):
        bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
        real = bool(bypass(destination.host))
    assert clients._urllib_bypass(value, destination.host) == real


# --- entry model and merge ---------------------------------------------------


@settings(max_examples=300)
@given(ENTRY.filter(lambda e: e.strip() != ""))
def test_normalisation_is_idempotent(raw: str) -> None:
    try:
        entry = syntax.parse_entry(raw)
    except syntax.NoProxyEntryError:
        return
    again = syntax.parse_entry(entry.text)
    assert again == entry


GROUPS = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.lists(ENTRY, max_size=4)), max_size=4
)


def _parse_all(groups: list[tuple[str, list[str]]]) -> list[tuple[str, list[syntax.NoProxyEntry]]]:
    parsed = []
    for source, raws in groups:
        entries = []
        for raw in raws:
            with suppress(syntax.NoProxyEntryError):
                entries.append(syntax.parse_entry(raw))
        parsed.append((source, entries))
    return parsed


@given(GROUPS)
def test_merge_keeps_first_places_and_every_source(groups: list[tuple[str, list[str]]]) -> None:
    parsed = _parse_all(groups)
    merged = syntax.merge(parsed)
    flat = [(source, e.text) for source, entries in parsed for e in entries]
    assert [m.entry.text for m in merged] == list(dict.fromkeys(text for _, text in flat))
    for item in merged:
        assert list(item.sources) == list(
            dict.fromkeys(s for s, text in flat if text == item.entry.text)
        )
    # stable: merging the merged list again changes nothing
    again = syntax.merge([("x", [m.entry for m in merged])])
    assert [m.entry for m in again] == [m.entry for m in merged]


@settings(max_examples=200)
@given(st.lists(ENTRY, max_size=6), st.sampled_from(scope.STYLES))
def test_every_profile_entry_is_kept_or_reported(raws: list[str], style: str) -> None:
    entries = tuple(e for _, group in _parse_all([("p", raws)]) for e in group)
    built = scope.build(NoProxyConfig(entries=entries, presets=(), style=style))
    texts = {item.entry.text for item in built}
    if style == "portable" and "*" in texts:
        assert len(built) == 1
        if len({e.text for e in entries}) > 1:
            assert any("dropped" in s for s in built[0].sources)
        return
    assert {e.text for e in entries} <= texts
    for item in built:
        assert item.sources, item


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("exa mple.com", "contains whitespace"),
        ("10.0.0.0/33", "not a valid CIDR"),
        ("foo.com:0", "port"),
        ("[fd00::1", "missing ']'"),
        ("-bad-.com", "not a domain"),
    ],
)
def test_bad_entries_are_named(raw: str, message: str) -> None:
    with pytest.raises(syntax.NoProxyEntryError, match=message) as info:
        syntax.parse_entry(raw)
    assert raw.strip() in str(info.value)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("fe80::1%{{ds.meta_data.x}}", "zone ID is an interface name"),
        ("[fe80::1%{#x#}]", "zone ID is an interface name"),
        ("[fe80::1%{{x}}]:8080", "zone ID is an interface name"),
        ("fe80::1%a\x01", "zone ID is an interface name"),
        ("fe80::1%$(reboot)", "zone ID is an interface name"),
        ("fe80::1%a-very-long-zone-name", "zone ID is an interface name"),
        ("fd00::%eth0/64", "a CIDR takes no zone ID"),
        ("fd00::%{{x}}/64", "a CIDR takes no zone ID"),
        ("a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 63, "not a domain"),
    ],
)
def test_zone_ids_and_names_are_only_what_they_can_be(raw: str, message: str) -> None:
    with pytest.raises(syntax.NoProxyEntryError, match=message):
        syntax.parse_entry(raw)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("fe80::1%eth0", "fe80::1%eth0"),
        ("FE80::1%ETH0.100", "fe80::1%eth0.100"),
        ("[fe80::1%12]:8080", "[fe80::1%12]:8080"),
        ("a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 61, None),
    ],
)
def test_zone_ids_and_long_names_that_can_be_are_kept(raw: str, text: str | None) -> None:
    assert syntax.parse_entry(raw).text == (text or raw)


@pytest.mark.parametrize("raw", ["0.0.0.0/0", "1.2.3.4/0", "10.0.0.0/00", "::/0", "fd00::1/0"])
def test_a_whole_range_cidr_is_refused_not_widened(raw: str) -> None:
    """``1.2.3.4/0`` became ``0.0.0.0/0``: every IPv4 address, which Go sends direct
    (curl and Python keep the proxy). Refused, saying that ``*`` is the entry for
    "no proxy for anything"."""
    with pytest.raises(syntax.WholeRangeError) as info:
        syntax.parse_entry(raw)
    message = str(info.value)
    assert f"NO_PROXY entry {raw!r}: a /0 CIDR is every IPv" in message
    assert "write '*' if the proxy is meant to be off for every host" in message
    # what the message says, by the client models (checked against the real programs)
    v4 = clients.parse_destination("203.0.113.9:443")
    assert clients.go_direct(raw, v4) is (":" not in raw)
    assert not clients.curl_direct(raw, v4) and not clients.requests_direct(raw, v4)
    assert not clients.urllib_direct(raw, v4)


@given(st.ip_addresses(), st.integers(1, 128))
def test_a_cidr_with_host_bits_is_reduced_to_its_own_network_never_wider(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, prefix: int
) -> None:
    """``10.1.2.3/8`` is written ``10.0.0.0/8``: the same network, as Go, curl and
    Python read it (they mask the address too); only /0 would widen, and is refused."""
    prefix = min(prefix, address.max_prefixlen)
    network = ipaddress.ip_network(syntax.parse_entry(f"{address}/{prefix}").text)
    assert network.prefixlen == prefix and address in network


def test_report_says_how_clients_read_an_address_with_a_zone() -> None:
    pod = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
    proc = run_cli(["--http-proxy", "http://p:1", "--no-proxy", "fe80::1%eth0", "--report"], pod)
    assert proc.returncode == 0, proc.stderr
    assert "fe80::1%eth0: Go matches an address with a zone ID only in URLs" in (
        proc.stderr.decode()
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"controlPlaneEndpoint": {"host": "fe80::1%{{x}}"}},
            "spec.controlPlaneEndpoint.host: 'fe80::1%{{x}}' is not a host name or an IP",
        ),
        (
            {"controlPlaneEndpoint": {"host": "api.example:6443"}},
            "spec.controlPlaneEndpoint.host: 'api.example:6443' is not a host name",
        ),
        (
            {"clusterNetwork": {"pods": {"cidrBlocks": ["10.0.0.0/8", "example.com"]}}},
            "spec.clusterNetwork.pods.cidrBlocks[1]: 'example.com' is not a CIDR or an IP",
        ),
        (
            {"clusterNetwork": {"serviceDomain": "10.0.0.1"}},
            "spec.clusterNetwork.serviceDomain: '10.0.0.1' is not a domain name",
        ),
        (  # issue 28: it became 0.0.0.0/0 in the nodes' NO_PROXY, every IPv4 address
            {"clusterNetwork": {"pods": {"cidrBlocks": ["10.244.0.0/16", "10.244.0.0/0"]}}},
            "spec.clusterNetwork.pods.cidrBlocks[1]: '10.244.0.0/0': a /0 CIDR is every IPv4",
        ),
        (
            {"clusterNetwork": {"services": {"cidrBlocks": ["::/0"]}}},
            "spec.clusterNetwork.services.cidrBlocks[0]: '::/0': a /0 CIDR is every IPv6",
        ),
    ],
)
def test_cluster_values_that_are_no_entries_are_errors(spec: Any, message: str) -> None:
    cluster = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "spec": spec}
    with pytest.raises(InputError) as info:
        discovery.discover([{**cluster, "metadata": {"name": "c"}}])
    assert message in str(info.value) and "\n" not in str(info.value)


def test_cluster_values_are_normalised_as_entries() -> None:
    cluster = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "c"},
        "spec": {
            "clusterNetwork": {
                "pods": {"cidrBlocks": ["10.1.2.3/16"]},
                "serviceDomain": "Corp.Local.",
            },
            "controlPlaneEndpoint": {"host": "FD00:0::10"},
        },
    }
    net = discovery.discover([cluster]).clusters[("", "c")]
    assert (net.pods, net.domain, net.endpoint) == (("10.1.0.0/16",), "corp.local", "fd00::10")


def _cluster(name: str, namespace: str | None, pods: str) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": metadata,
        "spec": {"clusterNetwork": {"pods": {"cidrBlocks": [pods]}}},
    }


@pytest.mark.parametrize(
    ("second", "namespace"),
    [("team", None), (None, "team")],
    ids=["same-namespace", "namespace-from-flag"],
)
def test_a_cluster_twice_in_one_stream_is_an_error(second: str | None, namespace: str) -> None:
    """The last one won, silently: the nodes of the first got the second's networks."""
    objects = [_cluster("c", "team", "10.1.0.0/16"), _cluster("c", second, "10.2.0.0/16")]
    with pytest.raises(InputError, match=r"Cluster team/c is in the stream twice"):
        discovery.discover(objects, namespace=namespace)


def test_clusters_of_one_name_in_two_namespaces_are_two_clusters() -> None:
    objects = [_cluster("c", "a", "10.1.0.0/16"), _cluster("c", "b", "10.2.0.0/16")]
    index = discovery.discover(objects)
    assert [net.pods for net in index.clusters.values()] == [("10.1.0.0/16",), ("10.2.0.0/16",)]


def test_noproxy_refuses_a_cluster_twice_naming_both_documents() -> None:
    data = (GOLDEN / "err-capi-cluster-twice" / "input.yaml").read_bytes()
    proc = run_cli(["noproxy", str(SHARED_PROFILE), "--stream", "-"], data)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1, err
    assert err.startswith(
        "proxy-postrender: error: document 3 (line 28, Cluster team-a/alpha): "
        "Cluster team-a/alpha is in the stream twice (the first is document 1, line 1)"
    ), err


# --- sources and presets -------------------------------------------------------


def _texts(config: NoProxyConfig, nets: tuple[ClusterNetwork, ...] = ()) -> list[str]:
    return [item.entry.text for item in scope.build(config, nets)]


def test_sources_merge_in_documented_order() -> None:
    config = NoProxyConfig(
        entries=(syntax.parse_entry("corp.example"),),
        cluster=ClusterNetwork(
            "spec.cluster",
            pods=("10.244.0.0/16",),
            services=("10.96.0.0/12",),
            domain="k8s.corp",
            endpoint="api.corp.example",
            nodes=("192.168.10.0/24",),
        ),
        presets=("loopback", "kubernetes", "gcp"),
        style="exact",
    )
    assert _texts(config) == [
        "corp.example",
        "10.244.0.0/16",
        "10.96.0.0/12",
        "10.96.0.1",  # the apiserver ClusterIP: the first service address
        "api.corp.example",
        "192.168.10.0/24",
        "localhost",
        "127.0.0.1",
        "::1",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        ".svc",
        "k8s.corp",
        ".k8s.corp",
        "169.254.169.254",
        "metadata.google.internal",
        "metadata.google.internal.",
        "metadata",
    ]


def test_portable_style_adds_bare_domains_and_collapses_wildcards() -> None:
    entries = tuple(syntax.parse_entry(e) for e in [".corp.example", ".svc", "x.org"])
    assert _texts(NoProxyConfig(entries=entries, presets=())) == [
        "corp.example",
        ".corp.example",
        ".svc",
        "x.org",
        ".x.org",  # the subdomains, for proxy-from-env
    ]
    wild = (*entries, syntax.parse_entry("*"))
    assert _texts(NoProxyConfig(entries=wild, presets=())) == ["*"]
    assert _texts(NoProxyConfig(entries=wild, presets=(), style="exact"))[-1] == "*"


def test_portable_style_adds_what_the_node_clients_need() -> None:
    """proxy-from-env matches a name entry exactly, so the subdomains are added (unless a
    listed suffix covers them, or the name is one label); undici and proxy-from-env
    compare an IPv6 host in brackets, so the bracketed twin follows each address."""
    raw = ["corp.example", "a.b.corp.example", "k8s", "fd00::1", "fe80::1%eth0", "example.org:8080"]
    config = NoProxyConfig(entries=tuple(syntax.parse_entry(e) for e in raw), presets=())
    assert _texts(config) == [
        "corp.example",
        ".corp.example",  # also covers a.b.corp.example's subdomains
        "a.b.corp.example",
        "k8s",
        "fd00::1",
        "[fd00::1]",
        "fe80::1%eth0",  # a zone has no bracketed form the Node.js clients match
        "example.org:8080",
    ]
    exact = NoProxyConfig(entries=config.entries, presets=(), style="exact")
    assert _texts(exact) == raw
    loopback = NoProxyConfig(presets=("loopback",))
    assert _texts(loopback) == ["localhost", "127.0.0.1", "::1", "[::1]"]


PORTABLE_HOSTS = ["corp.example", "www.corp.example", "a.b.corp.example", "xcorp.example"]
PORTABLE_HOSTS += ["svc.ns.svc", "ns.svc", "x.k8s.corp", "k8s.corp", "[fd00::1]", "[fd00::2]"]
PORTABLE_HOSTS += ["[::1]", "localhost", "127.0.0.1", "api.internal", "internal", "10.1.2.3"]


@pytest.mark.parametrize(
    "raw",
    [
        "corp.example",
        ".corp.example",
        "*.corp.example",
        "corp.example,k8s.corp",
        ".k8s.corp,fd00::1",
        "[fd00::1],api.internal",
        "10.1.2.3,a.b.corp.example",
    ],
)
def test_the_portable_style_makes_every_client_agree_on_names_and_addresses(raw: str) -> None:
    """Without CIDRs, ports, zones or final dots, the portable list is read the same way
    by all nine client models (the exact one is not: that is what the style is for)."""
    entries = tuple(syntax.parse_entry(e) for e in raw.split(","))
    value = ",".join(_texts(NoProxyConfig(entries=entries, presets=("loopback",))))
    for host in PORTABLE_HOSTS:
        for url in (f"http://{host}/", f"https://{host}:8443/"):
            answers = clients.decide_all(value, clients.parse_destination(url))
            assert len(set(answers.values())) == 1, (value, url, answers)
    exact = ",".join(_texts(NoProxyConfig(entries=entries, presets=("loopback",), style="exact")))
    disagreements = [
        host
        for host in PORTABLE_HOSTS
        if len(set(clients.decide_all(exact, clients.parse_destination(host)).values())) > 1
    ]
    assert disagreements, exact


def test_an_explicit_apiserver_address_replaces_the_derived_one() -> None:
    net = ClusterNetwork("spec.cluster", services=("172.20.0.0/16",), api_server=("172.20.0.10",))
    assert _texts(NoProxyConfig(cluster=net, presets=())) == ["172.20.0.0/16", "172.20.0.10"]


# --- discovery -------------------------------------------------------------------


def _objects(path: str) -> list[Any]:
    return [d for d in libyaml.load_data((GOLDEN / path).read_text()) if isinstance(d, dict)]


def _by_name(objects: list[Any], kind: str, name: str) -> Any:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def test_discovery_reads_both_api_versions_and_the_infrastructure_cluster() -> None:
    objects = _objects("capi-two-clusters/input.yaml")
    index = discovery.discover(objects)
    alpha = index.clusters[("team-a", "alpha")]
    assert alpha.pods == ("10.244.0.0/16",) and alpha.services == ("10.96.0.0/12",)
    assert alpha.domain == "alpha.local" and alpha.endpoint == "api.alpha.example"
    assert alpha.presets == ("aws",)
    beta = index.clusters[("team-b", "beta")]
    assert beta.endpoint == "10.0.5.10"  # from the VSphereCluster it references
    assert beta.presets == ()
    gamma = index.clusters[("team-b", "gamma")]
    assert gamma.presets == ("gcp",)  # the ClusterClass's GCPClusterTemplate


@pytest.mark.parametrize(
    ("kind", "name", "cluster", "how"),
    [
        (
            "KubeadmControlPlane",
            "alpha-control-plane",
            "alpha",
            "referenced by Cluster team-a/alpha",
        ),
        ("KubeadmConfigTemplate", "alpha-md-0", "alpha", "MachineDeployment team-a/alpha-md-0"),
        ("KubeadmControlPlane", "beta-control-plane", "beta", "cluster-name label"),
        ("KubeadmControlPlaneTemplate", "quick-start-control-plane", "gamma", "ClusterClass"),
    ],
)
def test_each_kubeadm_object_is_matched_to_its_cluster(
    kind: str, name: str, cluster: str, how: str
) -> None:
    objects = _objects("capi-two-clusters/input.yaml")
    nets, reason = discovery.discover(objects).networks_for(_by_name(objects, kind, name))
    assert [net.label.rsplit("/", 1)[-1] for net in nets] == [cluster]
    assert reason is not None and how in reason


def test_unmatched_objects_get_no_cluster_and_say_why() -> None:
    objects = _objects("capi-two-clusters/input.yaml")
    stray: dict[str, Any] = {
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmConfigTemplate",
        "metadata": {"name": "stray", "namespace": "team-b"},
    }
    nets, reason = discovery.discover(objects).networks_for(stray)
    assert nets == [] and reason is not None and "label it" in reason
    labelled = {
        **stray,
        "metadata": {**stray["metadata"], "labels": {discovery.CLUSTER_NAME_LABEL: "zeta"}},
    }
    nets, reason = discovery.discover(objects).networks_for(labelled)
    assert nets == [] and reason is not None and "zeta, not in the stream" in reason


def test_template_variables_are_not_taken_for_networks() -> None:
    cluster = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "c"},
        "spec": {
            "clusterNetwork": {"pods": {"cidrBlocks": ["${POD_CIDR}", "10.1.0.0/16"]}},
            "controlPlaneEndpoint": {"host": "${CONTROL_PLANE_ENDPOINT_IP}"},
        },
    }
    net = discovery.discover([cluster]).clusters[("", "c")]
    assert net.pods == ("10.1.0.0/16",) and net.endpoint is None
    assert net.left_out == (
        "Cluster c spec.controlPlaneEndpoint.host ('${CONTROL_PLANE_ENDPOINT_IP}')",
        "Cluster c spec.clusterNetwork.pods.cidrBlocks[0] ('${POD_CIDR}')",
    )


def _export_value(doc: Any) -> str:
    """The value of the first ``export NO_PROXY=`` line of a kubeadm object (quoted when
    it holds a character the shell would expand, such as the brackets of ``[::1]``)."""
    found = re.search(r"export NO_PROXY='?([^'\"\s]+)", str(doc))
    assert found, doc["metadata"]["name"]
    return found.group(1)


def test_two_clusters_get_two_no_proxy_values_in_the_output() -> None:
    out = (GOLDEN / "capi-two-clusters" / "expected.yaml").read_text()
    values = {}
    topology = {}
    for doc in libyaml.load_data(out):
        if isinstance(doc, dict) and doc["kind"] == "Cluster" and "topology" in doc["spec"]:
            topology[doc["metadata"]["name"]] = doc["spec"]["topology"]["variables"][-1]
        elif isinstance(doc, dict) and doc["kind"].startswith("Kubeadm"):
            if doc["metadata"]["name"] == "quick-start-control-plane":
                continue  # a ClusterClass's: no cluster's values (checked below)
            # a renamed template by the name it had (its record keeps it: rollout/)
            record = doc["metadata"].get("annotations", {}).get(kubeadm.ANNOTATION, "")
            named = re.search(r"(?:^|;)name=([^;]+)", record)
            name = named.group(1) if named else doc["metadata"]["name"]
            values[name] = _export_value(doc).split(",")
    alpha, beta = values["alpha-control-plane"], values["beta-control-plane"]
    assert values["alpha-md-0"] == alpha
    assert {
        "10.244.0.0/16",
        "10.96.0.0/12",
        "10.96.0.1",
        "api.alpha.example",
        "alpha.local",
    } <= set(alpha)
    assert {"169.254.169.254", "fd00:ec2::254"} <= set(alpha)
    assert {"192.168.0.0/16", "172.20.0.0/16", "172.20.0.1", "10.0.5.10"} <= set(beta)
    assert not {"10.244.0.0/16", "alpha.local"} & set(beta)
    # the topology Cluster gamma's own networks are in its value of the class's variable,
    # not in the class's template (invariant 11)
    assert topology["gamma"]["name"] == "proxyPostrender"
    assert "10.10.0.0/16" in topology["gamma"]["value"]["noProxy"]
    assert "10.10.0.0/16" not in out.split("name: quick-start-control-plane")[1].split("---")[0]


# --- the noproxy commands ------------------------------------------------------

TWO_CLUSTERS = (GOLDEN / "capi-two-clusters" / "input.yaml").read_bytes()


def _exported(kind_name: str) -> str:
    out = (GOLDEN / "capi-two-clusters" / "expected.yaml").read_text()
    for doc in libyaml.load_data(out):
        if isinstance(doc, dict) and doc["metadata"]["name"] == kind_name:
            return _export_value(doc)
    raise AssertionError(kind_name)


def test_noproxy_prints_one_value_per_scope_and_matches_what_is_written() -> None:
    proc = run_cli(["noproxy", str(SHARED_PROFILE), "--stream", "-"], TWO_CLUSTERS)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert [line.split(": ")[0] for line in lines] == [
        "workloads",
        "Cluster team-a/alpha",
        "Cluster team-b/beta",
        "Cluster team-b/gamma",
    ]
    assert lines[1].split(": ", 1)[1] == _exported("alpha-control-plane")
    assert lines[2].split(": ", 1)[1] == _exported("beta-control-plane")
    one = run_cli(
        ["noproxy", "--profile", str(SHARED_PROFILE), "--cluster", "team-b/beta", "--stream", "-"],
        TWO_CLUSTERS,
    )
    assert one.stdout.decode() == _exported("beta-control-plane") + "\n"


def test_noproxy_without_a_profile_uses_the_flags_and_default_presets() -> None:
    proc = run_cli(["noproxy", "--no-proxy", " Example.COM , *.corp.example"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode().strip() == (
        "example.com,.example.com,corp.example,.corp.example,localhost,127.0.0.1,::1,[::1],"
        "kubernetes,kubernetes.default,kubernetes.default.svc,.svc,cluster.local,.cluster.local"
    )


def test_noproxy_explain_names_every_source() -> None:
    proc = run_cli(
        ["noproxy", str(SHARED_PROFILE), "--explain", "--cluster", "alpha", "--stream", "-"],
        TWO_CLUSTERS,
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    lines = text.splitlines()[2:]
    rows = {line.split()[0]: line for line in lines if not line.startswith(("warning:", "note:"))}
    assert "spec.noProxy" in rows["internal.corp.example"]
    assert "Cluster team-a/alpha pod CIDRs" in rows["10.244.0.0/16"]
    assert "first service address" in rows["10.96.0.1"]
    assert "preset aws (AWSCluster of Cluster team-a/alpha)" in rows["fd00:ec2::254"]
    assert "wget ignores it" in rows["10.96.0.0/12"]
    assert "warning: .svc matches" in text
    assert "note: CIDRs cannot be made portable: wget, Java, undici and proxy-from-env" in text
    assert "[fd00:ec2::254]" in rows and "portable style" in rows["[fd00:ec2::254]"]
    assert set(rows) == set(_exported("alpha-control-plane").split(","))


def test_noproxy_check_flags_disagreements() -> None:
    args = ["noproxy", "check", "--value", ".example.com,10.0.0.0/8", "example.com", "10.1.2.3"]
    proc = run_cli(args)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert lines[:2] == ["NO_PROXY=.example.com,10.0.0.0/8", "# the value given with --value"]
    assert lines[4].split()[:5] == ["example.com:443", "PROXY", "direct", "direct", "PROXY"]
    assert "<- clients disagree" in lines[4]
    assert lines[5].split()[:5] == ["10.1.2.3:443", "direct", "direct", "direct", "PROXY"]
    assert run_cli([*args, "--strict"]).returncode == 1
    # without wget and Go, the CIDR row agrees but the suffix row does not
    assert run_cli([*args, "--strict", "--clients", "curl,python"]).returncode == 0
    assert run_cli([*args[:-1], "--strict", "--clients", "go,curl"]).returncode == 1
    assert run_cli([*args, "--clients", "lynx"]).returncode == 2
    agreed = run_cli(["noproxy", "check", "--value", "example.com", "example.com", "--strict"])
    assert agreed.returncode == 0


def test_noproxy_check_defaults_to_the_cluster_destinations() -> None:
    args = ["noproxy", "check", "--profile", str(SHARED_PROFILE), "--stream", "-"]
    proc = run_cli([*args, "--cluster", "beta"], TWO_CLUSTERS)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert lines[1] == "# NO_PROXY of Cluster team-b/beta"
    rows = {line.split()[0]: line for line in lines[4:] if line}
    assert "kubernetes.default.svc:443" in rows
    assert "172.20.0.1:443" in rows  # beta's apiserver ClusterIP
    assert "192.168.0.10:8080" in rows  # a pod IP in beta's pod CIDR
    assert "my-service.my-namespace.svc.cluster.local:443" in rows
    assert rows["169.254.169.254:80"].split()[1:5] == ["PROXY"] * 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["noproxy", "--no-proxy", "a b"], "contains whitespace"),
        (["noproxy", "--cluster", "nope"], "cluster 'nope' is not in the stream"),
        (["noproxy", "check", "--value", "x", "http://"], "destination 'http://'"),
        (["noproxy", "--profile-name", "x"], "--profile-name needs a profile file"),
    ],
)
def test_noproxy_errors_are_one_line(args: list[str], message: str) -> None:
    proc = run_cli(args, b"")
    assert proc.returncode == 2 and proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and message in lines[0], lines


# --- the profile's NO_PROXY fields ------------------------------------------------

PROFILE_HEAD = """apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata: {name: t}
spec:
  httpProxy: http://proxy:3128
"""


def _load(tmp_path: Any, body: str, environ: dict[str, str] | None = None) -> Any:
    from proxy_postrender.profile import loader

    path = tmp_path / "p.yaml"
    path.write_text(PROFILE_HEAD + body)
    return loader.load(str(path), environ=environ or {})


def test_profile_cluster_section_reaches_no_proxy(tmp_path: Any) -> None:
    loaded = _load(
        tmp_path,
        "  noProxyPresets: [aws]\n  noProxyStyle: exact\n  cluster:\n"
        "    podCIDRs: 10.244.0.0/16,10.245.0.0/16\n    serviceCIDRs: [10.96.0.0/12]\n"
        "    controlPlaneEndpoint: '[fd00::10]:6443'\n    domain: K8S.Corp.\n",
    )
    assert [item.entry.text for item in loaded.no_proxy()] == [
        "10.244.0.0/16",
        "10.245.0.0/16",
        "10.96.0.0/12",
        "10.96.0.1",
        "fd00::10",
        "169.254.169.254",
        "fd00:ec2::254",
        "compute.internal",
        ".compute.internal",
        "ec2.internal",
        ".ec2.internal",
        "169.254.170.2",
        "169.254.170.23",
        "fd00:ec2::23",
    ]
    assert loaded.no_proxy_config.cluster.domain == "k8s.corp"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("  cluster:\n    podCIDRs: [10.0.0.0/33]\n", "spec.cluster.podCIDRs: NO_PROXY entry"),
        ("  cluster:\n    serviceCIDRs: [example.com]\n", "is not a CIDR or an IP address"),
        (
            "  cluster:\n    domain: 10.0.0.1\n",
            "spec.cluster.domain: '10.0.0.1' is not a host name",
        ),
        ("  cluster:\n    podCidrs: []\n", "unknown field(s) podCidrs (did you mean podCIDRs?)"),
        ("  noProxyPresets: [loopback, azur]\n", "unknown preset(s) azur"),
        ("  noProxyStyle: wget\n", "spec.noProxyStyle: 'wget' is not one of portable, exact"),
        ("  noProxyDiscovery: 'yes'\n", "spec.noProxyDiscovery: must be true or false"),
    ],
)
def test_profile_no_proxy_fields_are_validated(tmp_path: Any, body: str, message: str) -> None:
    from proxy_postrender.errors import ProfileError

    with pytest.raises(ProfileError) as info:
        _load(tmp_path, body)
    assert message in str(info.value)


def test_report_warns_about_classic_mistakes() -> None:
    pod = (
        b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
        b"    image: x\n    env:\n    - {name: NO_PROXY, value: 'a.com b.com'}\n"
        b"    - {name: no_proxy, value: a.com}\n"
    )
    proc = run_cli(["--http-proxy", "http://p:1", "--no-proxy", ".svc,10.96.0.1", "--report"], pod)
    assert proc.returncode == 0, proc.stderr
    report = proc.stderr.decode()
    assert "warning a: NO_PROXY holds whitespace inside an entry" in report
    # (the two are merged with the profile's into one list, keep: they no longer differ)
    assert "merged a: NO_PROXY, no_proxy" in report
    assert "NO_PROXY and no_proxy differ" not in report
    assert ".svc matches NAME.NAMESPACE.svc only" in report
    assert "10.96.0.1 is listed as an address, but no service CIDR is known" in report
    assert "no pod CIDR is known" in report


def test_report_warns_when_a_cluster_endpoint_is_not_in_the_stream() -> None:
    stream = (
        b"apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: c}\n"
        b"spec:\n  clusterNetwork:\n    pods: {cidrBlocks: [10.1.0.0/16]}\n---\n"
        b"apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: KubeadmConfigTemplate\n"
        b"metadata: {name: w}\nspec:\n  template:\n    spec: {}\n"
    )
    proc = run_cli([str(SHARED_PROFILE), "--report"], stream)
    assert proc.returncode == 0, proc.stderr
    report = proc.stderr.decode()
    assert "NO_PROXY for Cluster c (the only Cluster in the stream)" in report
    assert "the control-plane endpoint of Cluster c is not in the stream" in report
    # the Cluster names no services: kubeadm's default and its apiserver ClusterIP
    assert b"10.1.0.0/16,10.96.0.0/12,10.96.0.1" in proc.stdout


# --- what the Node.js clients read differently: exact-style warnings, unportable notes --


def _advice(style: str, *raws: str) -> list[str]:
    items = [syntax.Sourced(syntax.parse_entry(raw), ("spec.noProxy",)) for raw in raws]
    built = scope.portable(items) if style == "portable" else items
    return advice.for_list(built, NoProxyConfig(style=style))


def test_the_exact_style_warns_where_the_node_clients_read_the_list_differently() -> None:
    # fe80::1%eth0: no bracketed form (the portable style adds none), so no warning
    raws = ("corp.example", "a.k8s.corp", ".k8s.corp", "k8s", "fd00::1", "fe80::1%eth0", "10.0.0.1")
    node = [w for w in _advice("exact", *raws) if "Node.js" in w or "proxy-from-env" in w]
    assert node == [
        "corp.example: proxy-from-env (axios) matches this name only, not its subdomains "
        "(add .corp.example, or use noProxyStyle: portable)",
        "fd00::1: undici and proxy-from-env (Node.js) match an IPv6 host only written in "
        "brackets, which noProxyStyle: portable adds ([fd00::1])",
    ]
    assert not [w for w in _advice("portable", *raws) if "proxy-from-env" in w]


def test_cidrs_are_a_note_once_per_list_and_name_the_clients_that_ignore_them() -> None:
    items = [
        syntax.Sourced(syntax.parse_entry(raw), ("spec.noProxy",))
        for raw in ("10.0.0.0/8", "10.96.0.0/12", "fd00::/8", "a.example")
    ]
    assert advice.unportable(items) == [
        "CIDRs cannot be made portable: wget, Java, undici and proxy-from-env (Node.js) "
        "ignore 10.0.0.0/8, 10.96.0.0/12: they reach those addresses through the proxy "
        "unless the address itself is listed (host names are read alike)"
    ]
    single = [*items, syntax.Sourced(syntax.parse_entry("10.1.2.3/32"), ("spec.noProxy",))]
    assert (
        "(Java also 10.0.0.0/8, 10.96.0.0/12: the JVM has no form for a network)"
        in (advice.unportable(single)[0])
    )
    assert advice.unportable(items[2:]) == []  # IPv6 CIDRs are a warning of for_list
    wildcard = [*items, syntax.Sourced(syntax.parse_entry("*"), ("spec.noProxy",))]
    assert advice.unportable(wildcard) == []  # '*': nothing goes through the proxy


def test_report_and_krm_give_the_cidr_note_as_a_note_not_a_warning() -> None:
    demo = GOLDEN.parent / "demo"
    report = run_cli(
        ["--profile", str(demo / "profile.yaml"), "--report"],
        (demo / "rendered.yaml").read_bytes(),
    )
    assert report.returncode == 0, report.stderr
    lines = report.stderr.decode().splitlines()
    notes = [line for line in lines if "cannot be made portable" in line]
    assert notes == [
        "  note NO_PROXY (workloads): CIDRs cannot be made portable: wget, Java, undici and "
        "proxy-from-env (Node.js) ignore 10.0.0.0/8, 10.244.0.0/16, 10.96.0.0/12: they reach "
        "those addresses through the proxy unless the address itself is listed (host names "
        "are read alike)"
    ]
    names_only = run_cli(
        ["--http-proxy", "http://p:1", "--no-proxy", "a.example", "--report"],
        (demo / "rendered.yaml").read_bytes(),
    )
    assert names_only.returncode == 0 and b"cannot be made portable" not in names_only.stderr
    items = (
        "\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: web\n  spec:\n"
        "    template:\n      spec:\n        containers:\n        - name: app\n"
    )
    resource_list = (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:"
        + items
        + "functionConfig:\n"
        + "".join("  " + line + "\n" for line in (demo / "profile.yaml").read_text().splitlines())
    )
    krm = run_cli([], resource_list.encode())
    assert krm.returncode == 0, krm.stderr
    (out,) = libyaml.load_data(krm.stdout.decode())
    found = [r for r in out["results"] if "cannot be made portable" in r["message"]]
    assert [r["severity"] for r in found] == ["info"]
