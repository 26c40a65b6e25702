"""A real proxy: squid, and the real clients run with the environment the tool generated.

A Deployment is rendered with proxy-postrender (JAVA_TOOL_OPTIONS on) three ways: no
credentials (squid's open port), the user and a password with ``@``, ``#``, ``%`` and
``'`` from ``spec.credentials.fromEnv`` written inline in the env values (squid's
Basic-auth port), and the same held in the Secret the tool generates (the
``secretKeyRef`` entries resolved from that Secret of the same output). curl, wget,
Go's net/http, Python requests and urllib, Node.js undici and proxy-from-env, and
Java's HttpURLConnection and HttpClient then fetch destinations in and out of that
NO_PROXY inside tests/squidlab.py's namespaces; squid's access.log and the destination
servers say which requests went through the proxy (with which user) and which went
direct, and each is compared with ``noproxy check``'s prediction for that client.
The observed table is the one in docs/noproxy.md ("A real proxy"): this test fails
when they differ (``UPDATE_SQUID_TABLE=1`` rewrites it). A missing program fails the
test, never skips it.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests import squidlab
from tests.helpers import ROOT, go_binary, run_cli
from tests.test_client_programs import curl_column

HERE = Path(__file__).resolve().parent
NODE_MODULES = Path(os.environ.get("NODE_CLIENTS_DIR", ROOT / ".cache" / "node-clients"))
DOCS = ROOT / "docs" / "noproxy.md"

NO_PROXY = [".corp.example", "plain.example", "db.internal:8080", "10.40.0.0/16"]
# (destination, why it is there)
DESTINATIONS = [
    ("http://app.corp.example/", "`.corp.example`"),
    ("http://corp.example/", "`.corp.example` (the tool adds `corp.example`)"),
    ("http://xcorp.example/", "look-alike of `corp.example`"),
    ("http://plain.example/", "`plain.example`"),
    ("http://sub.plain.example/", "subdomain of `plain.example`"),
    ("http://db.internal:8080/", "`db.internal:8080`"),
    ("http://db.internal:9090/", "`db.internal:8080`, other port"),
    ("http://10.40.0.7/", "`10.40.0.0/16`"),
    ("http://in-cidr.example/", "a name whose address (10.40.0.8) is in `10.40.0.0/16`"),
    ("http://10.50.0.7/", "outside every entry"),
    ("http://www.example.org/", "outside every entry"),
]
CLIENTS = [
    "curl",
    "wget",
    "go",
    "requests",
    "urllib",
    "undici",
    "proxy-from-env",
    "java",
    "java-httpclient",
]
PROFILE = """\
apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata:
  name: squidlab
spec:
  httpProxy: http://proxy.lab:{port}
  httpsProxy: http://proxy.lab:{port}
  noProxy: "{no_proxy}"
  workloads:
    javaToolOptions: true
{credentials}"""
FROM_ENV = """\
  credentials:
    fromEnv: {user: PROXY_USER, password: PROXY_PASSWORD}
"""
SECRET = FROM_ENV + "    secretRef: squidlab-proxy\n    createSecret: true\n"
DEPLOYMENT = b"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: lab
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: busybox
"""
# (scenario, squid port, profile credentials block, user squid should log)
SCENARIOS = [
    ("open port, inline values", squidlab.OPEN_PORT, "", "-"),
    ("auth port, inline values", squidlab.AUTH_PORT, FROM_ENV, squidlab.USER),
    ("auth port, Secret", squidlab.AUTH_PORT, SECRET, squidlab.USER),
]
# Debian's default squid.conf allows CONNECT to port 443 only: the port that does so
STRICT = "open port, CONNECT to 443 only"
STRICT_URL = "http://www.example.org/"
# the auth port with a wrong password: squid refuses it, so its 200s prove the right one
WRONG = "auth port, wrong password"
TABLE_START = "<!-- squid table: tests/test_squid.py writes it from what it observed -->"
TABLE_END = "<!-- end of squid table -->"


def _require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        pytest.fail(f"{program} is not installed (make test installs it: tools/install-clients.sh)")
    return path


def container_env(profile: str, tmp_path: Path) -> tuple[dict[str, str], set[str]]:
    """The env of the rendered Deployment's container, ``secretKeyRef`` entries
    resolved from the Secret of the same output; and the names that came from it."""
    from ruamel.yaml import YAML

    path = tmp_path / "profile.yaml"
    path.write_text(profile)
    secrets = {"PROXY_USER": squidlab.USER, "PROXY_PASSWORD": squidlab.PASSWORD}
    proc = run_cli([str(path)], DEPLOYMENT, env=secrets)
    assert proc.returncode == 0, proc.stderr
    docs = list(YAML(typ="safe").load_all(proc.stdout))
    data = {
        (d["metadata"]["name"], key): value
        for d in docs
        if d["kind"] == "Secret"
        for key, value in d["stringData"].items()
    }
    (deployment,) = (d for d in docs if d["kind"] == "Deployment")
    env, from_secret = {}, set()
    for entry in deployment["spec"]["template"]["spec"]["containers"][0]["env"]:
        if "value" in entry:
            env[entry["name"]] = entry["value"]
        else:
            ref = entry["valueFrom"]["secretKeyRef"]
            env[entry["name"]] = data[(ref["name"], ref["key"])]
            from_secret.add(entry["name"])
    return env, from_secret


def predictions(no_proxy: str) -> dict[tuple[str, str], str]:
    """``noproxy check --value``'s table: {(url, column): "direct" or "proxy"}."""
    urls = [url for url, _ in DESTINATIONS]
    proc = run_cli(["noproxy", "check", "--value", no_proxy, *urls])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("destination "))
    header = lines[start].split()
    result = {}
    for url, line in zip(urls, lines[start + 1 : start + 1 + len(urls)], strict=True):
        cells = line.split()
        host = url.split("://")[1].rstrip("/")
        assert cells[0] == (host if ":" in host else host + ":80"), (url, line)
        for column, cell in zip(header[1:], cells[1:], strict=False):
            result[(url, column)] = cell.lower()
    return result


def _programs() -> dict[str, str]:
    for program in ("openssl", "curl", "wget", "node", "java", "unshare", "ip", "mount"):
        _require(program)
    for path in (squidlab.SQUID, squidlab.NCSA_AUTH):
        if not Path(path).is_file():
            pytest.fail(f"{path} is missing: squid is not installed (tools/install-clients.sh)")
    for client in ("undici", "proxy-from-env"):
        if not (NODE_MODULES / "node_modules" / client / "package.json").is_file():
            pytest.fail(f"{client} is not in {NODE_MODULES} (make test installs it)")
    return {
        "go": str(go_binary(HERE / "gofetch" / "main.go", "gofetch")),
        "node_fetch": str(HERE / "nodeclient" / "fetch.mjs"),
        "node_modules": str(NODE_MODULES),
        "java_fetch": str(HERE / "javaclient" / "Fetch.java"),
    }


def _column(client: str) -> str:
    return {"curl": curl_column(), "java-httpclient": "java"}.get(client, client)


def _check_request(row: Mapping[str, str], predicted: str, user: str) -> str | None:
    """What is wrong with one observed request, or None."""
    where = f"{row['scenario']}: {row['client']} {row['url']}"
    if row["route"] != predicted:
        return f"{where}: went {row['route']}, noproxy check says {predicted}"
    if row["route"] == "direct":
        return None
    port = str(squidlab.OPEN_PORT if user == "-" else squidlab.AUTH_PORT)
    # the JVM gets no proxy password: no system property carries one
    java_auth = row["client"].startswith("java") and user != "-"
    expected = ("-", "407") if java_auth else (user, "200")
    if (row["port"], row["user"], row["status"]) != (port, *expected):
        return f"{where}: squid logged port {row['port']} user {row['user']} {row['status']}"
    return None


def markdown_table(rows: list[dict[str, str]], no_proxy: str) -> str:
    """Destination x client: where the requests went (the same in the three scenarios,
    and what noproxy check predicts, or the test fails first); then, per client, what
    squid logged for its proxied requests in each scenario."""
    routes = {(r["url"], r["client"]): r["route"] for r in rows}
    head = "| destination | matched by | " + " | ".join(CLIENTS) + " |"
    lines = [f"NO_PROXY as rendered: `{no_proxy}`", "", head, "|" + "---|" * (len(CLIENTS) + 2)]
    for url, why in DESTINATIONS:
        cells = [routes[(url, c)] for c in CLIENTS]
        lines.append(f"| `{url}` | {why} | " + " | ".join(cells) + " |")
    names = [name for name, *_ in SCENARIOS]
    lines += ["", "| client | request to squid | " + " | ".join(names) + " |"]
    lines.append("|" + "---|" * (len(names) + 2))
    for client in CLIENTS:
        proxied = [r for r in rows if r["client"] == client and r["route"] == "proxy"]
        methods = " / ".join(sorted({r["method"] for r in proxied}))
        cells = []
        for name in names:
            seen = {(r["status"], r["user"]) for r in proxied if r["scenario"] == name}
            cells.append(
                " / ".join(f"{st}, {'no user' if u == '-' else f'`{u}`'}" for st, u in sorted(seen))
            )
        lines.append(f"| {client} | {methods} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _controls(observed: Mapping[str, Any]) -> None:
    """squid refuses a wrong password (407, the user logged); and undici asks for a
    CONNECT tunnel to port 80 for an http:// URL, which a squid that allows CONNECT to
    443 only refuses (403), where curl's request passes."""
    (wrong,) = [r for r in observed["requests"] if r["scenario"] == WRONG]
    assert (wrong["route"], wrong["status"], wrong["user"]) == ("proxy", "407", "build"), wrong
    strict = {r["client"]: r for r in observed["requests"] if r["scenario"] == STRICT}
    assert strict["curl"]["route"] == "proxy" and strict["curl"]["status"] == "200", strict
    assert strict["undici"]["route"] == "failed", strict
    port = str(squidlab.STRICT_PORT)
    refused = [c for c in observed["connects"] if c["port"] == port]
    assert [(c["url"], c["status"]) for c in refused] == [("www.example.org:80", "403")]


def _docs_block(text: str) -> tuple[int, int]:
    return text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)


def _docs_table(table: str) -> None:
    text = DOCS.read_text()
    start, end = _docs_block(text)
    block = f"\n{table}\n"
    if text[start:end] != block and os.environ.get("UPDATE_SQUID_TABLE") == "1":
        DOCS.write_text(text[:start] + block + text[end:])
        text = DOCS.read_text()
        start, end = _docs_block(text)
    assert text[start:end] == block, f"docs/noproxy.md's squid table is not:\n{table}"


def _scenarios(tmp_path: Path) -> list[dict[str, Any]]:
    """The lab's scenarios, each with the env a container of the rendered Deployment
    gets; then the controls: STRICT's (curl and undici) and WRONG's (curl), one
    destination each."""
    no_proxy = ",".join(NO_PROXY)
    urls = [url for url, _ in DESTINATIONS]
    scenarios: list[dict[str, Any]] = []
    proxy_names = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}
    for name, port, credentials, user in SCENARIOS:
        profile = PROFILE.format(port=port, no_proxy=no_proxy, credentials=credentials)
        env, from_secret = container_env(profile, tmp_path)
        assert from_secret == (proxy_names if "secretRef" in credentials else set()), name
        if user != "-":  # the password is in the URLs, percent-encoded as it must be
            assert squidlab.PASSWORD not in env["HTTP_PROXY"] and "%40" in env["HTTP_PROXY"]
        assert "-Dhttp.nonProxyHosts=" in env["JAVA_TOOL_OPTIONS"]
        scenarios.append({"name": name, "env": env, "urls": urls, "clients": CLIENTS})
    strict = PROFILE.format(port=squidlab.STRICT_PORT, no_proxy=no_proxy, credentials="")
    env = container_env(strict, tmp_path)[0]
    scenarios.append(
        {"name": STRICT, "env": env, "urls": [STRICT_URL], "clients": ["curl", "undici"]}
    )
    wrong = {k: v.replace("%40", "%41") for k, v in scenarios[1]["env"].items()}
    scenarios.append({"name": WRONG, "env": wrong, "urls": [STRICT_URL], "clients": ["curl"]})
    return scenarios


def _mismatches(
    rows: list[dict[str, Any]], predicted: Mapping[tuple[str, str], str], curl_as: str = "curl"
) -> list[str]:
    """Every request that did not go where the prediction says (``curl_as``: the
    column curl's requests are compared with)."""
    users = {name: user for name, _, _, user in SCENARIOS}
    wrong = []
    for row in rows:
        column = _column(row["client"]) if row["client"] != "curl" else curl_as
        problem = _check_request(row, predicted[(row["url"], column)], users[row["scenario"]])
        if problem:
            wrong.append(problem)
    return wrong


def test_real_clients_through_squid_go_where_noproxy_check_says(tmp_path: Path) -> None:
    started = time.monotonic()
    programs = _programs()
    scenarios = _scenarios(tmp_path)
    value = scenarios[0]["env"]["NO_PROXY"]
    assert all(s["env"]["NO_PROXY"] == s["env"]["no_proxy"] == value for s in scenarios)
    predicted = predictions(value)
    observed = squidlab.observe(scenarios, programs)
    _controls(observed)
    rows = [r for r in observed["requests"] if r["scenario"] not in (STRICT, WRONG)]
    assert len(rows) == len(SCENARIOS) * len(CLIENTS) * len(DESTINATIONS)
    wrong = _mismatches(rows, predicted, curl_column())
    assert not wrong, "\n".join(wrong)
    # the comparison tells the clients apart: curl's requests disagree with wget's column
    swapped = _mismatches([r for r in rows if r["client"] == "curl"], predicted, "wget")
    assert len(swapped) == len(SCENARIOS) and all("10.40.0.7" in w for w in swapped), swapped
    # the proxy really was in the way, and really asked for the password
    assert {r["route"] for r in rows} == {"proxy", "direct"}
    assert any(r["status"] == "407" for r in rows if r["route"] == "proxy")
    _docs_table(markdown_table(rows, value))
    spent = ", ".join(f"{k} {v:.1f}" for k, v in observed["seconds"].items())
    print(f"squid lab: {len(rows)} requests in {time.monotonic() - started:.1f} s ({spent})")


def _render_warnings(profile: str, tmp_path: Path, *flags: str) -> list[str]:
    path = tmp_path / "profile.yaml"
    path.write_text(profile)
    secrets = {"PROXY_USER": squidlab.USER, "PROXY_PASSWORD": squidlab.PASSWORD}
    proc = run_cli([str(path), *flags], DEPLOYMENT, env=secrets)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stderr.decode().splitlines() if "warning" in line]


def test_the_port_entry_warning_names_every_client_that_ignores_it(tmp_path: Path) -> None:
    """Seen through squid (the table above): curl, wget and both Java APIs send
    db.internal:8080 through the proxy despite NO_PROXY's db.internal:8080 (the tool
    writes no nonProxyHosts pattern for it); the warning named curl and wget only."""
    from proxy_postrender.noproxy import clients

    dest = clients.parse_destination("http://db.internal:8080/")
    decided = clients.decide_all("db.internal:8080", dest)
    assert {c for c, direct in decided.items() if not direct} == {
        "curl",
        "curl-8.9",
        "wget",
        "java",
    }
    profile = PROFILE.format(port=squidlab.OPEN_PORT, no_proxy=",".join(NO_PROXY), credentials="")
    (line,) = [w for w in _render_warnings(profile, tmp_path, "--report") if "db.internal" in w]
    assert "curl, wget and Java (JAVA_TOOL_OPTIONS) ignore entries with a port" in line, line


def test_jvms_are_told_that_they_get_no_proxy_password(tmp_path: Path) -> None:
    """Seen through squid: with javaToolOptions and a proxy user and password (inline
    or in the Secret), the JVM's requests get 407, as no system property carries a
    proxy password. The run says so on stderr (as for an httpProxy alone); without
    credentials or without javaToolOptions it does not."""
    said = "JAVA_TOOL_OPTIONS carries no proxy user or password"
    for _, port, credentials, user in SCENARIOS:
        profile = PROFILE.format(port=port, no_proxy="corp.example", credentials=credentials)
        found = [w for w in _render_warnings(profile, tmp_path) if said in w]
        assert len(found) == (0 if user == "-" else 1), (credentials, found)
        without = profile.replace("javaToolOptions: true", "javaToolOptions: false")
        assert not [w for w in _render_warnings(without, tmp_path) if said in w]
