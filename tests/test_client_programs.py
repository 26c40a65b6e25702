"""The client models against the real programs: curl, wget, Go's net/http, urllib,
requests, Java and the Node.js packages.

curl and wget run inside a private network namespace (tests/clientlab.py);
Go's decision comes from http.ProxyFromEnvironment in a small program built
here with the Go toolchain that `make test` installs. urllib's ProxyHandler
and requests run in-process (requests' generated values: test_noproxy.py). The
curl test checks the column that names the machine's curl; curl 8.9-8.17
("curl-8.9") cannot run here (Debian 12 gives 7.88.1). A missing program fails
these tests, never skips.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy_postrender.noproxy import clients
from tests import clientlab
from tests.test_noproxy import DESTS, TABLE, VALUES

HERE = Path(__file__).resolve().parent


def _cases() -> list[tuple[str, str]]:
    """The table of test_noproxy plus a fixed, seeded mix of entries and destinations."""
    labels = ["foo", "bar", "svc", "local", "example", "b-1"]
    rng = random.Random(2026)

    def domain() -> str:
        return ".".join(rng.choice(labels) for _ in range(rng.randint(1, 3)))

    def entry() -> str:
        shape = rng.randrange(9)
        if shape == 0:
            return "." + domain()
        if shape == 1:
            return "*." + domain()
        if shape == 2:
            return rng.choice(["10.0.0.0/8", "10.96.0.0/12", "192.168.0.0/16", "10.1.2.3"])
        if shape == 3:
            return rng.choice(["fd00::/8", "fd00::1", "::1", "[fd00::1]:8080"])
        if shape == 4:
            return domain() + rng.choice([":80", ":443", ":8080"])
        if shape == 5:
            return rng.choice(["*", "localhost", "127.0.0.1"])
        if shape == 6:
            return domain().upper()
        return domain()

    def near(entry: str) -> str:
        """A host that an entry may or may not match: itself, a subdomain, a look-alike."""
        if entry.startswith("["):
            entry = entry[1 : entry.index("]")]
        host = entry.split(":")[0] if entry.count(":") == 1 else entry
        host = host.lstrip("*").lstrip(".").lower()
        if "/" in host:
            return rng.choice(["10.1.2.3", "10.96.0.1", "192.168.5.5", "[fd00::1]"])
        if ":" in host or host.startswith("["):
            return "[" + host.strip("[]") + "]"
        return rng.choice([host, "www." + host, "x" + host, host + "."])

    def destination(entries: list[str]) -> str:
        scheme = rng.choice(["http", "https"])
        port = rng.choice(["", ":8080", ":80", ":443"])
        host = rng.choice(
            [domain(), "10.1.2.3", "10.96.0.1", "[fd00::1]", "localhost"]
            + [near(e) for e in entries] * 3
        )
        return f"{scheme}://{host}{port}/"

    cases = []
    for value, dest, *_ in TABLE:
        parsed = clients.parse_destination(dest)
        host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
        cases.append((value, f"{parsed.scheme}://{host}:{parsed.port}/"))
    for _ in range(160):
        separator = rng.choice([",", ", ", ",,"])
        entries = [entry() for _ in range(rng.randint(1, 4))]
        cases.append((separator.join(entries), destination(entries)))
    return cases


# Names written fully qualified, in entries and in destinations: curl drops one final
# dot of each, Go, Python and wget compare them as written.
TRAILING_DOT_ENTRIES = [
    "cluster.local.",
    ".cluster.local.",
    ".svc.cluster.local.",
    "*.cluster.local.",
    "cluster.local",
    ".cluster.local",
    "metadata.google.internal.",
    "metadata.google.internal",
    "metadata.google.internal,metadata.google.internal.",
    "svc.cluster.local.:443",
    "local.",
    "cluster.local.,",
]
TRAILING_DOT_DESTINATIONS = [
    "https://kubernetes.default.svc.cluster.local/",
    "https://kubernetes.default.svc.cluster.local./",
    "http://cluster.local.:8080/",
    "http://cluster.local/",
    "http://metadata.google.internal/",
    "http://metadata.google.internal./",
    "https://svc.cluster.local.:443/",
]
TRAILING_DOT_CASES = [(v, d) for v in TRAILING_DOT_ENTRIES for d in TRAILING_DOT_DESTINATIONS]

# What the portable style writes for the Node.js clients (a name and its subdomains, an
# IPv6 address and its bracketed twin), asked of every real program: the additions
# must not change what the other clients decide.
PORTABLE_ENTRIES = [
    "corp.example,.corp.example",
    "fd00::1,[fd00::1]",
    "[fd00::1]",
    "::1,[::1]",
    "[::1]",
    "localhost,127.0.0.1,::1,[::1]",
]
PORTABLE_DESTINATIONS = [
    "http://corp.example/",
    "https://www.corp.example:8443/",
    "http://xcorp.example/",
    "http://[fd00::1]/",
    "https://[fd00::1]:8443/",
    "http://[fd00::2]/",
    "http://[::1]:8080/",
]
PORTABLE_CASES = [(v, d) for v in PORTABLE_ENTRIES for d in PORTABLE_DESTINATIONS]

CASES = _cases() + TRAILING_DOT_CASES + PORTABLE_CASES

# Blanks between entries: curl 7.87-8.8 read them as separators, 8.9-8.17 stop the list
# at the first blank not followed by a comma; Go, wget and urllib trim each entry.
BLANK_ENTRIES = [
    "foo.example bar.example",
    "foo.example bar.example,baz.example",
    "foo.example ,bar.example",
    "foo.example, bar.example",
    " foo.example",
    "foo.example\tbar.example",
    "10.0.0.0/8 192.168.0.0/16",
    ",, foo.example  ,bar.example baz.example",
]
BLANK_DESTINATIONS = [
    "http://foo.example/",
    "http://bar.example/",
    "https://www.baz.example/",
    "http://192.168.5.5/",
    "http://10.1.2.3/",
]
BLANK_CASES = [(v, d) for v in BLANK_ENTRIES for d in BLANK_DESTINATIONS]

# Internationalised names (Go converts the host and each name entry to A-labels)
IDN_ENTRIES = [
    "xn--fsq092h.com",
    "示例.com",
    ".示例.com",
    "*.示例.com",
    "bücher.example",
    "BÜCHER.example:8080",
    "xn--bcher-kva.example",
    "straße.de",
    "a_b.示例.com",
    "示例。com",
    "-示例.com",
    "www.xn--fsq092h.示例",
]
IDN_DESTINATIONS = [
    "https://www.示例.com/",
    "https://示例.com/",
    "https://www.xn--fsq092h.com/",
    "http://xn--fsq092h.com/",
    "http://bücher.example:8080/",
    "http://www.xn--bcher-kva.example/",
    "http://xn--strae-oqa.de/",
    "http://strasse.de/",
    "http://a_b.xn--fsq092h.com/",
    "https://\uff37\uff37\uff37.示例.com/",  # fullwidth WWW
    "http://www.-示例.com/",
    "http://www.xn---com-ns9h.com/",
    "http://www.xn--fsq092h.xn--fsq092h/",
    "http://x.www.xn--fsq092h.示例/",
]
IDN_CASES = [(v, d) for v in IDN_ENTRIES for d in IDN_DESTINATIONS]


def curl_column() -> str:
    """The column that names the machine's curl (Debian 12 gives 7.88.1)."""
    out = subprocess.run(["curl", "--version"], capture_output=True, text=True, check=True)
    version = tuple(int(n) for n in out.stdout.split()[1].split(".")[:2])
    if (7, 87) <= version < (8, 9):
        return "curl"
    if (8, 9) <= version < (8, 18):
        return "curl-8.9"
    pytest.fail(f"no model of curl {version} (the columns are 7.87-8.8 and 8.9-8.17)")


def _require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        pytest.fail(f"{program} is not installed (make test installs it)")
    return path


def test_curl_and_wget_models_match_the_real_programs() -> None:
    for program in ("curl", "wget", "unshare", "ip"):
        _require(program)
    cases = CASES + BLANK_CASES + IDN_CASES
    observed = clientlab.observe(cases, ["curl", "wget"])
    rules = {**clients.RULES, **clients.EXTRA_RULES}
    column = curl_column()
    wrong = []
    for (value, url), real in zip(cases, observed, strict=True):
        dest = clients.parse_destination(url)
        # curl refuses a host libidn2 cannot convert (exit 3): neither direct nor proxy
        refused = clients.idna_ascii(dest.host) is None
        for client in ("curl", "wget") if not refused else ("wget",):
            model = rules[column if client == "curl" else client](value, dest)
            if model != real[client]:
                wrong.append(
                    f"{client}: NO_PROXY={value!r} {url}: model {model}, real {real[client]}"
                )
    assert not wrong, "\n".join(wrong)


def real_urllib(no_proxy: str, url: str) -> bool:
    """What urllib.request.urlopen does: its ProxyHandler (built from the environment, as
    build_opener builds it) either leaves the Request alone (direct) or points it at the
    proxy. No connection is made."""
    saved = {k: v for k, v in os.environ.items() if k.lower().endswith("_proxy")}
    for key in saved:
        del os.environ[key]
    os.environ.update(no_proxy=no_proxy, http_proxy=clientlab.PROXY, https_proxy=clientlab.PROXY)
    try:
        handler = urllib.request.ProxyHandler()
        request = urllib.request.Request(url)
        host = request.host
        getattr(handler, f"{request.type}_open")(request)
    finally:
        for key in [k for k in os.environ if k.lower().endswith("_proxy")]:
            del os.environ[key]
        os.environ.update(saved)
    return request.host == host


def test_urllib_model_matches_urlopen() -> None:
    wrong = []
    for value, url in CASES + BLANK_CASES + IDN_CASES:
        model = clients.urllib_direct(value, clients.parse_destination(url))
        if model != real_urllib(value, url):
            wrong.append(f"NO_PROXY={value!r} {url}: model {model}, urllib says {not model}")
    assert not wrong, "\n".join(wrong)


def test_requests_model_matches_requests_on_blanks_and_idn() -> None:
    """The generated values are checked in test_noproxy; these add blanks and
    internationalised names (requests compares both as written)."""
    import requests.utils

    wrong = []
    for value, url in BLANK_CASES + IDN_CASES:
        saved = {k: v for k, v in os.environ.items() if k.lower().endswith("_proxy")}
        for key in saved:
            del os.environ[key]
        os.environ.update(no_proxy=value, http_proxy=clientlab.PROXY, https_proxy=clientlab.PROXY)
        try:
            real = bool(requests.utils.should_bypass_proxies(url, None))
        finally:
            for key in [k for k in os.environ if k.lower().endswith("_proxy")]:
                del os.environ[key]
            os.environ.update(saved)
        if clients.requests_direct(value, clients.parse_destination(url)) != real:
            wrong.append(f"NO_PROXY={value!r} {url}: requests says direct={real}")
    assert not wrong, "\n".join(wrong)


@settings(max_examples=400, deadline=None)
@given(VALUES, DESTS, st.sampled_from(["http", "https"]))
def test_urllib_model_matches_urlopen_on_generated_values(
    value: str, dest: str, scheme: str
) -> None:
    url = f"{scheme}://{dest}/"
    assert clients.urllib_direct(value, clients.parse_destination(url)) == real_urllib(value, url)


def test_urllib_ignores_cidrs_and_unbracketed_ipv6_where_requests_does_not() -> None:
    """Issue 28 item 7: requests (the former "python" column) goes direct for a CIDR,
    urlopen through the proxy; both as the real libraries decide."""
    for value, url, requests_direct, urllib_direct in [
        ("10.0.0.0/8", "http://10.1.2.3/", True, False),
        ("fd00::1", "http://[fd00::1]/", True, False),
        ("[fd00::1]", "http://[fd00::1]/", False, True),
        ("corp.example:8080", "http://corp.example:8080/", True, True),
        ("corp.example:8080", "http://corp.example/", False, False),
    ]:
        dest = clients.parse_destination(url)
        decided = clients.decide_all(value, dest)
        assert (decided["requests"], decided["urllib"]) == (requests_direct, urllib_direct)
        assert real_urllib(value, url) == urllib_direct, (value, url)


def test_curl_columns_differ_on_blanks_as_curl_lib_noproxy_c_does() -> None:
    """curl 7.87-8.8 ("curl") split on blanks; 8.9-8.17 ("curl-8.9") end the list at a
    blank not followed by a comma (lib/noproxy.c since commit e78913e6). Only the
    machine's curl can run (test_curl_and_wget_models_match_the_real_programs)."""
    cases = {
        ("foo.example bar.example", "http://bar.example/"): (True, False),
        ("foo.example bar.example", "http://foo.example/"): (True, True),
        ("foo.example bar.example,baz.example", "http://baz.example/"): (True, False),
        ("foo.example , bar.example", "http://bar.example/"): (True, True),
        (",, foo.example  ,bar.example baz.example", "http://baz.example/"): (True, False),
        ("10.0.0.0/8\t192.168.0.0/16", "http://192.168.5.5/"): (True, False),
    }
    for (value, url), expected in cases.items():
        decided = clients.decide_all(value, clients.parse_destination(url))
        assert (decided["curl"], decided["curl-8.9"]) == expected, (value, url)


def test_go_converts_internationalised_names_as_net_http_does() -> None:
    """Issue 28 item 7: an A-label entry matches the U-label host and back
    (test_go_model_matches_net_http checks IDN_CASES against real net/http)."""
    for value, url in [
        ("xn--fsq092h.com", "https://www.示例.com/"),
        ("示例.com", "https://www.xn--fsq092h.com/"),
        (".示例.com", "https://www.示例.com/"),
    ]:
        assert clients.go_direct(value, clients.parse_destination(url)), (value, url)


@pytest.fixture(scope="module")
def go_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = _require("go")
    out = tmp_path_factory.mktemp("goclient") / "goclient"
    env = dict(os.environ, GOCACHE=str(out.parent / "cache"), GO111MODULE="off", GOFLAGS="")
    subprocess.run(
        [go, "build", "-o", str(out), str(HERE / "goclient" / "main.go")], env=env, check=True
    )
    return out


def _go_version() -> str:
    return subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout


def _old_go_name_match(value: str, dest: clients.Destination) -> bool:
    """Go releases that vendor x/net before v0.36.0 also match name entries against
    addresses as text (NO_PROXY=0.1 sends 10.96.0.1 direct); the model follows x/net now."""
    if dest.ip is None:
        return False
    for raw in value.split(","):
        entry = raw.strip().lower()
        port = ""
        if entry.count(":") == 1 and not entry.startswith("["):
            entry, port = entry.split(":")
        if not entry or "/" in entry or port not in ("", str(dest.port)):
            continue
        bare = entry[2:] if entry.startswith("*.") else entry.lstrip(".")
        exact = dest.host == bare and not entry.startswith((".", "*."))
        if exact or dest.host.endswith("." + bare):
            return True
    return False


def test_go_model_matches_net_http(go_client: Path) -> None:
    by_value: dict[str, list[str]] = {}
    for value, url in CASES + BLANK_CASES + IDN_CASES:
        by_value.setdefault(value, []).append(url)
    old = "go1.19" in _go_version() or "go1.2" in _go_version()
    wrong = []
    base = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    base.pop("REQUEST_METHOD", None)
    for value, urls in by_value.items():
        env = dict(base, NO_PROXY=value, HTTP_PROXY=clientlab.PROXY, HTTPS_PROXY=clientlab.PROXY)
        out = subprocess.run(
            [str(go_client), *urls], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for url, real in zip(urls, out, strict=True):
            dest = clients.parse_destination(url)
            model = clients.go_direct(value, dest)
            if old and _old_go_name_match(value, dest):
                model = True
            if model != (real == "direct"):
                wrong.append(f"NO_PROXY={value!r} {url}: model {model}, go says {real}")
    assert not wrong, "\n".join(wrong)


# Java: what pods/java.py writes from NO_PROXY, read by a real JVM's ProxySelector.
JAVA_ENTRIES = [
    "*.corp.example",
    "corp.example",
    ".corp.example",
    "CORP.example",
    "10.1.2.3",
    "10.0.0.0/8,192.168.0.0/16",
    "0.0.0.0/0",
    "10.1.2.3/32,fd00::1/128,10.1.2.0/24",
    "fd00::1",
    "[fd00::1]",
    "fd00::/8",
    "*",
    "corp.example:8080",
    "",
    "corp.example,",
]
JAVA_DESTINATIONS = [
    "https://corp.example/",
    "https://a.corp.example:8443/",
    "http://a.b.corp.example/",
    "http://xcorp.example/",
    "http://10.1.2.3/",
    "http://10.1.2.30/",
    "http://192.168.5.5:8080/",
    "http://[fd00::1]/",
    "https://[::1]/",
    "http://127.0.0.9/",
    "http://localhost:8080/",
    # names that a CIDR written as a prefix pattern (10.*) would send direct
    "http://10.evil.example/",
    "http://192.168.evil.example/",
    "http://10.1.2.evil.example/",
    "https://example.org/",
]
JAVA_CASES = [(v, d) for v in JAVA_ENTRIES for d in JAVA_DESTINATIONS]
OLD_CIDR_PATTERNS = ["10.*", "*"]


def test_java_model_matches_the_jvm() -> None:
    """One JVM (a single-file source launch, JDK 11+) answers every case: the default
    ProxySelector reads http.nonProxyHosts at each select(), so no restart is needed."""
    java = _require("java")
    lines = []
    cases = CASES + JAVA_CASES
    for value, url in cases:
        hosts = clients.java_non_proxy_hosts(value)
        assert hosts is None or ("\t" not in hosts and "\n" not in hosts)
        lines.append(f"unset\t\t{url}" if hosts is None else f"set\t{hosts}\t{url}")
    # what the tool wrote for 10.0.0.0/8 and 0.0.0.0/0 before issue 27 (finding 7)
    lines += [f"set\t{old}\thttp://10.evil.example/" for old in OLD_CIDR_PATTERNS]
    proc = subprocess.run(
        [java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", str(HERE / "javaclient" / "Check.java")],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split()
    assert len(out) == len(cases) + len(OLD_CIDR_PATTERNS), proc.stderr
    # the JVM matches those patterns against names: that is why no CIDR becomes one now
    assert out[len(cases) :] == ["direct"] * len(OLD_CIDR_PATTERNS)
    out = out[: len(cases)]
    answers = dict(zip(cases, out, strict=True))
    assert answers[("10.0.0.0/8,192.168.0.0/16", "http://10.evil.example/")] == "proxy"
    assert answers[("0.0.0.0/0", "http://10.evil.example/")] == "proxy"
    wrong = []
    for (value, url), real in zip(cases, out, strict=True):
        model = clients.java_direct(value, clients.parse_destination(url))
        if model != (real == "direct"):
            hosts = clients.java_non_proxy_hosts(value)
            wrong.append(
                f"NO_PROXY={value!r} (nonProxyHosts={hosts!r}) {url}: model {model}, {real}"
            )
    assert not wrong, "\n".join(wrong)


# Node.js: undici and proxy-from-env from the npm registry (tools/install-node-clients.sh,
# which `make test` runs), asked by tests/nodeclient/decide.mjs with the machine's node.
NODE_MODULES = Path(os.environ.get("NODE_CLIENTS_DIR", HERE.parent / ".cache" / "node-clients"))


@pytest.mark.parametrize("client", clients.NODE_CLIENTS)
def test_node_models_match_the_real_packages(client: str) -> None:
    node = _require("node")
    if not (NODE_MODULES / "node_modules" / client / "package.json").is_file():
        pytest.fail(f"{client} is not in {NODE_MODULES} (make test installs it)")
    proc = subprocess.run(
        [node, str(HERE / "nodeclient" / "decide.mjs"), client, str(NODE_MODULES)],
        input=json.dumps(CASES),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert len(out) == len(CASES)
    wrong = []
    for (value, url), real in zip(CASES, out, strict=True):
        dest = clients.parse_destination(url)
        if real == "invalid":
            if clients.node_host(dest) is not None:
                wrong.append(f"{url}: WHATWG URL rejects it, the model does not")
            continue
        model = clients.NODE_RULES[client](value, dest)
        if model != (real == "direct"):
            wrong.append(f"NO_PROXY={value!r} {url}: model {model}, {client} says {real}")
    assert not wrong, "\n".join(wrong)


def test_a_cidr_never_sends_a_name_direct_through_java() -> None:
    """Issue 27, finding 7: 10.0.0.0/8 was written as 10.*, which the JVM also matches
    against the name 10.evil.example, and 0.0.0.0/0 as *. A CIDR now becomes no pattern
    (one of a single address becomes that address); test_java_model_matches_the_jvm
    checks these very cases against a real JVM."""
    assert clients.java_non_proxy_hosts("10.0.0.0/8,192.168.0.0/16") is None
    assert clients.java_non_proxy_hosts("0.0.0.0/0") is None
    assert clients.java_non_proxy_hosts("10.1.2.3/32,fd00::1/128") == "10.1.2.3|[fd00::1]"
    for value in ("10.0.0.0/8", "0.0.0.0/0", "10.0.0.0/8,192.168.0.0/16", "10.1.2.0/24"):
        for url in ("http://10.evil.example/", "http://10.1.2.evil.example/"):
            assert not clients.java_direct(value, clients.parse_destination(url)), (value, url)
    for value, url in JAVA_CASES:  # but NO_PROXY's own '*', which means everything
        dest = clients.parse_destination(url)
        if value != "*" and "evil" in dest.host:
            assert not clients.java_direct(value, dest), (value, url)


def test_java_model_converts_no_proxy_as_java_tool_options_does() -> None:
    from proxy_postrender.pods.java import java_tool_options

    for value, _ in CASES + JAVA_CASES:
        options = java_tool_options({"HTTP_PROXY": "http://proxy.invalid:3128", "NO_PROXY": value})
        option = "-Dhttp.nonProxyHosts="
        written = options[options.index(option) + len(option) :] if option in options else None
        assert clients.java_non_proxy_hosts(value) == written, value


def test_strict_can_count_the_extra_clients() -> None:
    """--clients takes the columns beyond the default four: a CIDR that Java (which gets
    no pattern for a network) and the Node packages ignore is a disagreement once they
    count."""
    from tests.helpers import run_cli

    args = ["noproxy", "check", "--no-proxy", "10.0.0.0/12", "--strict", "10.1.2.3"]
    assert run_cli([*args, "--clients", "go,curl,python"]).returncode == 0
    for extra in ("java", "undici", "proxy-from-env"):
        proc = run_cli([*args, "--clients", f"go,{extra}"])
        assert proc.returncode == 1, (extra, proc.stderr)
    unknown = run_cli([*args, "--clients", "go,ruby"])
    assert unknown.returncode == 2 and b"unknown ruby" in unknown.stderr


def test_check_names_requests_and_urllib_and_both_curl_series() -> None:
    """The former "python" column is "requests" (--clients still takes "python"), and
    urllib and curl 8.9-8.17 are columns outside the default --strict set."""
    from tests.helpers import run_cli

    args = ["noproxy", "check", "--value", "10.0.0.0/8 192.168.0.0/16", "192.168.5.5"]
    proc = run_cli(args)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    header = lines[3].split()
    assert header[:5] == ["destination", "go", "curl", "requests", "wget"]
    assert {"curl-8.9", "urllib"} <= set(header)
    row = dict(zip(header[1:], lines[4].split()[1:], strict=False))
    assert (row["curl"], row["curl-8.9"], row["urllib"]) == ("direct", "PROXY", "PROXY")
    assert "curl = curl 7.87-8.8" in lines[-1] and "curl-8.9 = curl 8.9-8.17" in lines[-1]
    for names in ("go,python", "go,requests"):
        assert run_cli([*args, "--strict", "--clients", names]).returncode == 0, names
    for names in ("curl,curl-8.9", "curl,urllib"):
        assert run_cli([*args, "--strict", "--clients", names]).returncode == 1, names
