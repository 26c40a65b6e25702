"""spec.caBundle.mode: the workloads' CA ConfigMap merged with certifi's public roots
(the default) or the proxy's CA alone (replace).

The end-to-end part runs two HTTPS servers on 127.0.0.1, one signed by a test
"corporate" CA (the TLS-intercepting proxy's) and one by a test "public-style" CA,
and points real clients at the bundle a pod would mount: Python's ssl/urllib,
requests, curl, Go and Node (each when it is on this machine). The real public
roots cannot sign a local server, so the bundle of that part is made by the tool's
own merge with the public-style CA standing in for certifi's set
(``generated.public_roots`` replaced); the CLI tests check that the real ConfigMap
holds certifi's roots verbatim.
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import certifi
import pytest
from ruamel.yaml import YAML

from proxy_postrender import generated
from tests.helpers import GOLDEN, run_cli

CASE = GOLDEN / "ca-merged"
CORP_PEM = (CASE / "corp-ca.pem").read_text()
BLOCK = re.compile(r"-----BEGIN CERTIFICATE-----\n.*?-----END CERTIFICATE-----\n", re.S)
MIB = 1024 * 1024
LAST_APPLIED_LIMIT = 262144  # all annotations of an object (kubectl's client-side apply)

PROFILE = """\
apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata:
  name: intercepting
spec:
  httpProxy: http://proxy.corp.example:3128
  caBundle:
    file: {ca}
    workloads: true
{mode}"""

STREAM = b"""\
apiVersion: v1
kind: Pod
metadata:
  name: app
  namespace: shop
spec:
  containers:
  - name: app
    image: app
"""


def _profile(tmp_path: Path, mode: str | None) -> Path:
    line = f"    mode: {mode}\n" if mode else ""
    path = tmp_path / "profile.yaml"
    path.write_text(PROFILE.format(ca=CASE / "corp-ca.pem", mode=line))
    return path


def _config_map(output: bytes) -> dict[str, object]:
    docs = list(YAML(typ="safe").load_all(output.decode()))
    (found,) = [d for d in docs if d and d.get("kind") == "ConfigMap"]
    assert isinstance(found, dict)
    return found


def _run(tmp_path: Path, mode: str | None, stdin: bytes = STREAM) -> bytes:
    proc = run_cli([str(_profile(tmp_path, mode))], stdin)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


# ---------------------------------------------------------------- the ConfigMap


def test_merged_is_the_default_and_holds_certifi_roots_verbatim(tmp_path: Path) -> None:
    config_map = _config_map(_run(tmp_path, None))
    bundle = config_map["data"]["ca.crt"]  # type: ignore[index]
    annotations = config_map["metadata"]["annotations"]  # type: ignore[index]
    assert annotations[generated.CA_ROOTS] == f"certifi-{certifi.__version__}"
    roots = "".join(BLOCK.findall(certifi.contents()))
    assert bundle == f"{CORP_PEM}# public roots: certifi-{certifi.__version__}\n{roots}"
    assert len(BLOCK.findall(bundle)) == 1 + len(BLOCK.findall(certifi.contents()))


def test_replace_mode_is_the_ca_alone(tmp_path: Path) -> None:
    config_map = _config_map(_run(tmp_path, "replace"))
    assert config_map["data"] == {"ca.crt": CORP_PEM}
    annotations = config_map["metadata"]["annotations"]  # type: ignore[index]
    assert generated.CA_ROOTS not in annotations


def test_merged_output_is_deterministic_idempotent_and_removable(tmp_path: Path) -> None:
    once = _run(tmp_path, "merged")
    assert _run(tmp_path, "merged") == once
    assert _run(tmp_path, "merged", once) == once  # the earlier ConfigMap is made anew
    removed = run_cli(["--remove"], once)
    assert removed.returncode == 0 and removed.stdout == run_cli(["--remove"], STREAM).stdout


def test_replace_after_merged_rewrites_the_config_map(tmp_path: Path) -> None:
    merged = _run(tmp_path, "merged")
    assert _run(tmp_path, "replace", merged) == _run(tmp_path, "replace")


def test_a_newer_certifi_rewrites_the_config_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a re-run with another certifi gives: the new roots and annotation (the old
    ConfigMap goes as any earlier generated object does)."""
    monkeypatch.setattr(generated, "public_roots", lambda: ("2099.1.1", CORP_PEM))
    bundle, notes = generated.ca_bundle("X\n", merged=True)
    assert bundle == f"X\n# public roots: certifi-2099.1.1\n{CORP_PEM}"
    assert notes == ((generated.CA_ROOTS, "certifi-2099.1.1"),)


def test_merged_config_map_size(tmp_path: Path) -> None:
    """Well under a ConfigMap's 1 MiB, and under the 256 KiB that kubectl's client-side
    apply (Argo CD's default) needs for its last-applied annotation (docs/profile.md)."""
    output = _run(tmp_path, "merged")
    start = output.index(b"---\napiVersion: v1\nkind: ConfigMap")
    document = output[start:]
    assert len(document) < LAST_APPLIED_LIMIT < MIB


def test_certifi_is_imported_only_when_a_merged_bundle_is_written(tmp_path: Path) -> None:
    def imported(mode: str | None, stdin: bytes) -> bool:
        proc = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "proxy_postrender",
                str(_profile(tmp_path, mode)),
            ],
            input=stdin,
            capture_output=True,
            check=True,
        )
        return bool(re.search(rb"\|\s+certifi\n", proc.stderr))

    assert imported(None, STREAM)
    assert not imported("replace", STREAM)
    assert not imported(None, b"apiVersion: v1\nkind: Service\nmetadata: {name: s}\n")


# ---------------------------------------------------------------- end to end over TLS


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_ca(directory: Path, name: str) -> None:
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-subj", f"/CN={name} test CA", "-keyout", f"{name}-ca.key", "-out", f"{name}-ca.pem",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=directory,
    )  # fmt: skip


def _make_server_cert(directory: Path, name: str) -> None:
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name} server",
        "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=directory,
    )  # fmt: skip
    (directory / f"{name}.ext").write_text(
        "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n"
    )
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{name}-ca.pem",
        "-CAkey", f"{name}-ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=directory,
    )  # fmt: skip


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # the handler's API
        body = self.server.server_name.encode()  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Servers:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.urls: dict[str, str] = {}
        self._servers: list[http.server.ThreadingHTTPServer] = []

    def start(self, name: str) -> None:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
        server.server_name = name
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.directory / f"{name}.pem", self.directory / f"{name}.key")
        server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self._servers.append(server)
        self.urls[name] = f"https://127.0.0.1:{server.server_address[1]}/"

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """Two loopback HTTPS servers, ``corp`` and ``public``, each signed by its own CA;
    and the bundles of both modes, made by the tool's merge."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the test CAs")
    directory = tmp_path_factory.mktemp("tls")
    for name in ("corp", "public"):
        _make_ca(directory, name)
        _make_server_cert(directory, name)
    corp = (directory / "corp-ca.pem").read_text()
    public = (directory / "public-ca.pem").read_text()
    patch = pytest.MonkeyPatch()
    patch.setattr(generated, "public_roots", lambda: ("stand-in", public))
    try:
        merged, notes = generated.ca_bundle(corp, merged=True)
    finally:
        patch.undo()
    assert notes == ((generated.CA_ROOTS, "certifi-stand-in"),)
    replaced, _ = generated.ca_bundle(corp, merged=False)
    (directory / "merged.crt").write_text(merged)
    (directory / "replace.crt").write_text(replaced)
    servers = _Servers(directory)
    servers.start("corp")
    servers.start("public")
    try:
        yield directory, servers.urls
    finally:
        servers.stop()


def _client_env(bundle: Path) -> dict[str, str]:
    """The variables a pod gets (the default caBundle.env), and no proxy."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
        and not k.startswith(("SSL_CERT", "REQUESTS_CA", "CURL_CA", "NODE_EXTRA"))
    }
    env.update(
        SSL_CERT_FILE=str(bundle),
        REQUESTS_CA_BUNDLE=str(bundle),
        NODE_EXTRA_CA_CERTS=str(bundle),
        NO_PROXY="127.0.0.1",
    )
    return env


PY_URLLIB = "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10).read()"
PY_REQUESTS = "import sys, requests; requests.get(sys.argv[1], timeout=10).raise_for_status()"
NODE = (
    "require('https').get(process.argv[1], r => process.exit(r.statusCode === 200 ? 0 : 3))"
    ".on('error', e => { console.error(e.message); process.exit(2) })"
)
GO = """\
package main

import (
	"net/http"
	"os"
)

func main() {
	resp, err := http.Get(os.Args[1])
	if err != nil {
		println(err.Error())
		os.Exit(2)
	}
	resp.Body.Close()
}
"""


def _command(client: str, directory: Path) -> list[str]:
    if client == "python-ssl":
        return [sys.executable, "-c", PY_URLLIB]
    if client == "requests":
        pytest.importorskip("requests")
        return [sys.executable, "-c", PY_REQUESTS]
    if client == "curl":
        return [_need("curl"), "-sS", "-o", os.devnull]
    if client == "node":
        return [_need("node"), "-e", NODE]
    binary = directory / "goget"
    if not binary.exists():
        (directory / "goget.go").write_text(GO)
        env = dict(os.environ, GOCACHE=str(directory / "gocache"), GO111MODULE="off")
        go = [_need("go"), "build", "-o", str(binary), str(directory / "goget.go")]
        subprocess.run(go, env=env, check=True, capture_output=True)
    return [str(binary)]


def _need(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        pytest.skip(f"{program} is not on PATH")
    return found


def _reaches(client: str, bundle: str, tls: tuple[Path, dict[str, str]]) -> set[str]:
    directory, urls = tls
    command = _command(client, directory)
    env = _client_env(directory / bundle)
    reached = set()
    for name, url in urls.items():
        proc = subprocess.run([*command, url], env=env, capture_output=True, timeout=60)
        if proc.returncode == 0:
            reached.add(name)
    return reached


CLIENTS = ["python-ssl", "requests", "curl", "go", "node"]


@pytest.mark.parametrize("client", CLIENTS)
def test_merged_bundle_reaches_both_servers(client: str, tls: tuple[Path, dict[str, str]]) -> None:
    assert _reaches(client, "merged.crt", tls) == {"corp", "public"}


@pytest.mark.parametrize("client", CLIENTS)
def test_replace_bundle_reaches_only_the_corporate_server(
    client: str, tls: tuple[Path, dict[str, str]]
) -> None:
    assert _reaches(client, "replace.crt", tls) == {"corp"}


def test_clients_refuse_both_servers_without_the_bundle(tls: tuple[Path, dict[str, str]]) -> None:
    """The control: the test CAs are in no default trust store."""
    directory, _ = tls
    (directory / "empty.crt").write_text("")
    assert _reaches("python-ssl", "empty.crt", tls) == set()


@pytest.mark.parametrize(
    ("client", "expected"),
    [("python-ssl", {"corp", "public"}), ("go", {"corp", "public"}), ("curl", {"public"})],
)
def test_ssl_cert_dir_next_to_ssl_cert_file(
    client: str, expected: set[str], tls: tuple[Path, dict[str, str]]
) -> None:
    """What docs/profile.md says of SSL_CERT_DIR: Python's ssl (OpenSSL) and Go read
    SSL_CERT_FILE *and* a hashed directory (SSL_CERT_DIR, else the default one), so an
    image whose /etc/ssl/certs is hashed keeps those roots even in replace mode; the curl
    tool reads SSL_CERT_DIR *instead of* SSL_CERT_FILE when both are set (CURL_CA_BUNDLE
    before either), which is why the tool does not set SSL_CERT_DIR."""
    directory, urls = tls
    hashed = directory / "hashed"
    if not hashed.exists():
        hashed.mkdir()
        shutil.copy(directory / "public-ca.pem", hashed / "public.pem")
        subprocess.run(["openssl", "rehash", str(hashed)], check=True, capture_output=True)
    command = _command(client, directory)
    env = dict(_client_env(directory / "replace.crt"), SSL_CERT_DIR=str(hashed))
    reached = {
        name
        for name, url in urls.items()
        if subprocess.run([*command, url], env=env, capture_output=True).returncode == 0
    }
    assert reached == expected
