"""A real proxy (squid) and the real HTTP clients, in a private network and mount namespace.

``observe(scenarios, programs)`` runs this file inside ``unshare -n -m`` (root only:
squid drops its privileges to the ``proxy`` user) where only ``lo`` exists, every IPv4
address is local, and a generated hosts file is bind-mounted over ``/etc/hosts`` so
that the destinations and the proxy have names (Go never sends a loopback address or
``localhost`` through a proxy; squid, glibc, Go and the JVM all read ``/etc/hosts``).
Nothing leaves the machine.

Inside: HTTP servers on ports 80, 8080 and 9090 of every address answer 200 and
record each request and its ``Via`` header; squid listens on 127.0.0.1:3128 (open)
and 127.0.0.1:3129 (Basic auth: ``basic_ncsa_auth`` with an ``openssl passwd -apr1``
file), with no cache, logging every request with the port and user to its access.log.
Each client fetches each destination once per scenario with the scenario's
environment, on a path that names both (``/<scenario>/<client>/<destination>``).
A request is "proxy" when squid logged it, "direct" when the destination server saw
it without squid's ``Via``, "failed" when neither (the client gave up).

The same file is the Python clients (``squidlab.py fetch requests|urllib URL...``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

USER = "build"
PASSWORD = "p@ss#w%rd'x"  # what the tool's fromEnv percent-encodes
PROXY_HOST = "proxy.lab"
OPEN_PORT = 3128
AUTH_PORT = 3129
# open, but CONNECT only to port 443, as Debian's default squid.conf has it
STRICT_PORT = 3130
# the names the lab's /etc/hosts gives (every 10.x address is local in the lab)
HOSTS = {
    PROXY_HOST: "127.0.0.1",
    "app.corp.example": "10.20.0.1",
    "corp.example": "10.20.0.2",
    "xcorp.example": "10.20.0.3",
    "plain.example": "10.21.0.1",
    "sub.plain.example": "10.21.0.2",
    "db.internal": "10.22.0.1",
    "www.example.org": "10.30.0.1",
    "in-cidr.example": "10.40.0.8",
}
SERVER_PORTS = (80, 8080, 9090)
SQUID = "/usr/sbin/squid"
NCSA_AUTH = "/usr/lib/squid/basic_ncsa_auth"
TIMEOUT = 5
# squid connects to the destinations from this address: the servers tell its
# connections (forwarded requests and CONNECT tunnels) from the clients' own
SQUID_SOURCE = "127.0.0.2"


def observe(scenarios: Sequence[Mapping[str, Any]], programs: Mapping[str, str]) -> dict[str, Any]:
    """Run the lab. Each scenario: {"name", "env": the variables a container gets,
    "urls": destinations, "clients"}; programs: where the built clients are (go,
    node_fetch, node_modules, java_fetch). Returns {"requests": [{scenario, client, url,
    route, and for "proxy": port, user, status, code, method}], "connects": squid's
    CONNECT lines, "seconds": per client}."""
    if os.geteuid() != 0:
        raise RuntimeError("the squid lab runs as root (squid drops privileges to 'proxy')")
    from tests.clientlab import in_namespace  # (this file also runs alone, in the namespace)

    payload = {"scenarios": list(scenarios), "programs": dict(programs)}
    result: dict[str, Any] = in_namespace(
        ["-n", "-m"], [__file__, "lab"], payload, 300, "squid lab"
    )
    return result


# --- inside the namespace ---------------------------------------------------------


class _Seen:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        # path -> (Via header, the peer's address and port)
        self.requests: dict[str, tuple[str, str, int]] = {}

    def add(self, path: str, via: str, peer: tuple[str, int]) -> None:
        with self.lock:
            self.requests[path] = (via, peer[0], peer[1])


def _servers(seen: _Seen) -> list[ThreadingHTTPServer]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            seen.add(self.path, self.headers.get("Via", ""), self.client_address[:2])
            body = b"ok\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    servers = []
    for port in SERVER_PORTS:
        server = ThreadingHTTPServer(("0.0.0.0", port), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    return servers


def _squid_conf(tmp: Path) -> str:
    return f"""\
http_port 127.0.0.1:{OPEN_PORT} name=open
http_port 127.0.0.1:{AUTH_PORT} name=auth
http_port 127.0.0.1:{STRICT_PORT} name=strict
visible_hostname squidlab
auth_param basic program {NCSA_AUTH} {tmp}/passwd
auth_param basic realm squidlab
auth_param basic children 2
acl open_port myportname open
acl auth_port myportname auth
acl authed proxy_auth REQUIRED
acl strict_port myportname strict
acl SSL_ports port 443
acl CONNECT method CONNECT
http_access deny strict_port CONNECT !SSL_ports
http_access allow strict_port
http_access allow open_port
http_access allow auth_port authed
http_access deny all
cache deny all
logformat lab %>lp %<lp %un %>Hs %Ss %rm %ru
tcp_outgoing_address {SQUID_SOURCE}
access_log stdio:{tmp}/access.log lab
cache_log {tmp}/cache.log
pid_filename none
coredump_dir {tmp}
pinger_enable off
dns_nameservers 127.0.0.1
shutdown_lifetime 0 seconds
cache_effective_user proxy
"""


def _start_squid(tmp: Path) -> subprocess.Popen[bytes]:
    hashed = subprocess.run(
        ["openssl", "passwd", "-apr1", "-stdin"],
        input=PASSWORD,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (tmp / "passwd").write_text(f"{USER}:{hashed}\n")
    (tmp / "squid.conf").write_text(_squid_conf(tmp))
    for path in (tmp, *tmp.iterdir()):
        shutil.chown(path, "proxy", "proxy")
    squid = subprocess.Popen([SQUID, "-N", "-f", str(tmp / "squid.conf")])
    deadline = time.monotonic() + 20
    for port in (OPEN_PORT, AUTH_PORT, STRICT_PORT):
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if squid.poll() is not None or time.monotonic() > deadline:
                    log = (tmp / "cache.log").read_text(errors="replace")
                    raise SystemExit(f"squid did not start:\n{log[-2000:]}") from None
                time.sleep(0.05)
    return squid


def _network(hosts_file: Path) -> None:
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True)
    names = [line.split(":")[1].strip() for line in links.stdout.splitlines() if line.strip()]
    if names != ["lo"]:
        raise SystemExit(f"not a private network namespace (links: {names})")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(
        ["ip", "route", "add", "local", "0.0.0.0/0", "dev", "lo", "table", "local"], check=True
    )
    lines = ["127.0.0.1 localhost"] + [f"{ip} {name}" for name, ip in HOSTS.items()]
    hosts_file.write_text("\n".join(lines) + "\n")
    hosts_file.chmod(0o644)
    # a private mount namespace (unshare -m makes its mounts private): only we see it
    subprocess.run(["mount", "--bind", str(hosts_file), "/etc/hosts"], check=True)


def _commands(client: str, urls: list[str], programs: Mapping[str, str]) -> list[list[str]]:
    """The command lines that make ``client`` fetch ``urls``: one per URL for the
    command-line programs, one process for all URLs otherwise (Go reads the
    environment once per process)."""
    if client == "curl":
        return [["curl", "-q", "-sS", "-o", "/dev/null", "-m", str(TIMEOUT), u] for u in urls]
    if client == "wget":
        wget = ["wget", "--no-config", "-q", "-O", "/dev/null", "--tries=1"]
        return [[*wget, f"--timeout={TIMEOUT}", u] for u in urls]
    if client == "go":
        return [[programs["go"], *urls]]
    if client in ("requests", "urllib"):
        return [[sys.executable, __file__, "fetch", client, *urls]]
    if client in ("undici", "proxy-from-env"):
        return [["node", programs["node_fetch"], client, programs["node_modules"], *urls]]
    raise SystemExit(f"unknown client {client}")


def _java_command(batch: list[tuple[str, str]], programs: Mapping[str, str]) -> list[str]:
    """One JVM for both Java APIs (java = HttpURLConnection, java-httpclient =
    java.net.http.HttpClient): ``API=URL`` arguments."""
    api = {"java": "urlconnection", "java-httpclient": "httpclient"}
    args = [f"{api[client]}={url}" for client, url in batch]
    return ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", programs["java_fetch"], *args]


def _run_scenario(
    index: int, scenario: Mapping[str, Any], programs: Mapping[str, str], seconds: dict[str, float]
) -> None:
    """Each client fetches the scenario's URLs with its environment; ``seconds`` adds
    up the time each client took."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy") and k != "JAVA_TOOL_OPTIONS"
    }
    env = dict(base, **scenario["env"])
    java: list[tuple[str, str]] = []
    for client in scenario["clients"]:
        urls = [_tagged(url, index, client, n) for n, url in enumerate(scenario["urls"])]
        if client.startswith("java"):
            java += [(client, url) for url in urls]
            continue
        started = time.monotonic()
        for command in _commands(client, urls, programs):
            subprocess.run(command, env=env, capture_output=True, timeout=120, check=False)
        seconds[client] = seconds.get(client, 0) + time.monotonic() - started
    if java:
        started = time.monotonic()
        proc = subprocess.run(
            _java_command(java, programs), env=env, capture_output=True, timeout=120, check=False
        )
        seconds["java"] = seconds.get("java", 0) + time.monotonic() - started
        if proc.returncode != 0:
            raise SystemExit(f"java failed: {proc.stderr.decode(errors='replace')}")


def _tagged(url: str, scenario: int, client: str, n: int) -> str:
    return f"{url.rstrip('/')}/s{scenario}/{client}/{n}"


def _squid_log(
    path: Path,
) -> tuple[dict[str, dict[str, str]], dict[int, dict[str, str]], list[dict[str, str]]]:
    """access.log: forwarded requests by the path of their URL, CONNECT tunnels by the
    port squid connected from (what the destination server saw as its peer's), and
    every CONNECT line (refused ones have no such port)."""
    by_path, tunnels, connects = {}, {}, []
    for line in path.read_text().splitlines():
        port, out_port, user, status, code, method, url = line.split(" ", 6)
        entry = {"port": port, "user": user, "status": status, "code": code, "method": method}
        if method == "CONNECT":
            connects.append(dict(entry, url=url))
        if method == "CONNECT" and out_port.isdigit():
            tunnels[int(out_port)] = entry
        elif "://" in url:
            by_path["/" + url.split("://", 1)[1].split("/", 1)[1]] = entry
        # else a connection without a request (the start-up probe)
    return by_path, tunnels, connects


def _observed(
    path: str,
    seen: _Seen,
    by_path: Mapping[str, Mapping[str, str]],
    tunnels: Mapping[int, Mapping[str, str]],
) -> dict[str, str]:
    """Where one request went: "proxy" (with squid's port, user, status and method),
    "direct" (the server saw the client itself) or "failed" (no one saw it)."""
    logged = by_path.get(path)
    if path not in seen.requests:
        if logged is None:
            return {"route": "failed"}
        return {"route": "proxy", **logged}  # refused by squid (407) or not delivered
    via, peer, peer_port = seen.requests[path]
    if peer != SQUID_SOURCE:
        if logged is not None or via:
            raise SystemExit(f"{path}: from {peer} (not squid), yet via {via!r} / logged")
        return {"route": "direct"}
    entry = logged if logged is not None else tunnels.get(peer_port)
    if entry is None:
        raise SystemExit(f"{path}: came from squid, which did not log it")
    if entry["method"] != "CONNECT" and not via:
        raise SystemExit(f"{path}: forwarded by squid without its Via header")
    return {"route": "proxy", **entry}


def _results(
    request: Mapping[str, Any],
    seen: _Seen,
    by_path: Mapping[str, Mapping[str, str]],
    tunnels: Mapping[int, Mapping[str, str]],
) -> list[dict[str, str]]:
    results = []
    for index, scenario in enumerate(request["scenarios"]):
        for client in scenario["clients"]:
            for n, url in enumerate(scenario["urls"]):
                path = "/" + _tagged(url, index, client, n).split("://", 1)[1].split("/", 1)[1]
                row = {"scenario": scenario["name"], "client": client, "url": url}
                row.update(_observed(path, seen, by_path, tunnels))
                results.append(row)
    return results


def _lab() -> None:
    request = json.load(sys.stdin)
    tmp = Path(tempfile.mkdtemp(prefix="squidlab-"))
    seconds: dict[str, float] = {}
    started = time.monotonic()
    try:
        _network(tmp / "hosts")
        seen = _Seen()
        servers = _servers(seen)
        squid = _start_squid(tmp)
        try:
            for index, scenario in enumerate(request["scenarios"]):
                _run_scenario(index, scenario, request["programs"], seconds)
        finally:
            squid.terminate()
            squid.wait(timeout=30)
        for server in servers:
            server.shutdown()
        seconds["squid start and stop, servers"] = (
            time.monotonic() - started - sum(seconds.values())
        )
        by_path, tunnels, connects = _squid_log(tmp / "access.log")
        results = _results(request, seen, by_path, tunnels)
        json.dump({"requests": results, "connects": connects, "seconds": seconds}, sys.stdout)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- the Python clients ------------------------------------------------------------


def _fetch(client: str, urls: list[str]) -> None:
    for url in urls:
        try:
            if client == "requests":
                import requests

                requests.get(url, timeout=TIMEOUT)
            else:
                import urllib.request

                urllib.request.urlopen(url, timeout=TIMEOUT).read()
        except Exception as error:  # a 407 is an answer here
            print(f"{url}: {error}", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1] == "lab":
        _lab()
    else:
        _fetch(sys.argv[2], sys.argv[3:])
