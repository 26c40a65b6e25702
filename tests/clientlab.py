"""Watch real curl and wget choose between the proxy and a direct connection, offline.

``observe(cases)`` runs this file inside a private network namespace (``unshare
-n``; ``-rn`` when not root) where only ``lo`` exists and every IPv4 and IPv6
address is local, so no packet leaves the machine whatever a client dials. A
listener on 127.0.0.1:3128 plays the proxy: a request that reaches it went
through the proxy; one that does not went direct (a direct attempt at an
address is refused at once, a name fails to resolve at once).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

PROXY = "http://127.0.0.1:3128"
COMMANDS = {
    "curl": ["curl", "-q", "-sS", "-k", "-o", "/dev/null", "--connect-timeout", "2", "-m", "3"],
    "wget": ["wget", "--no-config", "-q", "-O", "/dev/null", "--tries=1", "--timeout=2"],
}


def observe(cases: Sequence[tuple[str, str]], clients: Sequence[str]) -> list[dict[str, bool]]:
    """For each (NO_PROXY, URL): {client: went direct} for the real programs."""
    flag = "-n" if os.geteuid() == 0 else "-rn"
    payload = {"cases": list(cases), "clients": list(clients)}
    result: list[dict[str, bool]] = in_namespace([flag], [__file__], payload, 600, "client lab")
    return result


def in_namespace(
    unshare: Sequence[str], argv: Sequence[str], payload: Any, timeout: float, what: str
) -> Any:
    """``python ARGV`` under ``unshare UNSHARE``, ``payload`` as JSON on its stdin: what it
    printed as JSON (a lab's observations), or a RuntimeError naming ``what``."""
    proc = subprocess.run(
        ["unshare", *unshare, "--", sys.executable, *argv],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)


class _Proxy:
    def __init__(self) -> None:
        self.seen = 0
        self.lock = threading.Lock()
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 3128))
        self.server.listen(16)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            conn, _ = self.server.accept()
            with self.lock:
                self.seen += 1
            try:
                conn.settimeout(2)
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            except OSError:
                pass
            finally:
                conn.close()

    def count(self) -> int:
        with self.lock:
            return self.seen


def _inside() -> None:
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True)
    names = [line.split(":")[1].strip() for line in links.stdout.splitlines() if line.strip()]
    if names != ["lo"]:
        raise SystemExit(f"not a private network namespace (links: {names})")
    for command in (
        ["ip", "link", "set", "lo", "up"],
        ["ip", "route", "add", "local", "0.0.0.0/0", "dev", "lo", "table", "local"],
        ["ip", "-6", "route", "add", "local", "::/0", "dev", "lo", "table", "local"],
    ):
        subprocess.run(command, check=True)
    request = json.load(sys.stdin)
    proxy = _Proxy()
    results = []
    base = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    for no_proxy, url in request["cases"]:
        env = dict(base, no_proxy=no_proxy, NO_PROXY=no_proxy)
        for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            env[name] = PROXY
        row = {}
        for client in request["clients"]:
            before = proxy.count()
            subprocess.run([*COMMANDS[client], url], env=env, capture_output=True, check=False)
            # the proxy answers before the client exits: its count is final here
            row[client] = proxy.count() == before
        results.append(row)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    _inside()
