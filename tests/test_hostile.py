"""Hostile proxy values: each lands exactly everywhere the tool writes it, or is refused
with a clear error and nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from proxy_postrender import targets
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN, run_cli
from tests.test_node_bootstrap import bash_values, systemd_unquote_environment

HOSTILE_PASSWORDS = [
    "p%ss",
    "$HOME",
    "it's",
    'say "hi"',
    "back\\slash",
    "a@b:c/d#e",
    "`id`",
    "100%",
]
URLS = [
    *(f"http://u:{quote(p, safe='')}@proxy.corp.example:3128" for p in HOSTILE_PASSWORDS),
    "http://user%40corp:pw@proxy.corp.example:3128",  # a user name with @, encoded
    "http://[fd00::1]:3128",  # an IPv6 proxy
    "http://u:p%25%24%27@[fd00::1]:8080",
]


def _profile(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(
        "apiVersion: proxy-postrender.io/v1alpha1\nkind: ProxyProfile\nmetadata: {name: h}\n"
        f"spec:\n  httpProxy: '{url.replace(chr(39), chr(39) * 2)}'\n  noProxyPresets: []\n"
    )
    return path


@pytest.mark.parametrize("url", URLS)
def test_hostile_values_land_exactly(tmp_path: Path, url: str) -> None:
    stream = (GOLDEN / "capi-v1beta1" / "input.yaml").read_bytes() + (
        b"---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n"
    )
    proc = run_cli([str(_profile(tmp_path, url))], stream)
    assert proc.returncode == 0, proc.stderr
    docs = libyaml.load_data(proc.stdout.decode())
    pod = docs[-1]
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert env["HTTP_PROXY"] == env["http_proxy"] == url  # YAML reads it back exactly
    for doc in docs:
        found = targets.BUILT_IN.paths(doc, targets.KUBEADM) if isinstance(doc, dict) else ()
        path = found[0] if found else None
        if path is None:
            continue
        spec: Any = doc
        for step in path:
            spec = spec[step]
        dropin = next(f for f in spec["files"] if f["path"].endswith("http-proxy.conf"))
        values = dict(
            systemd_unquote_environment(line) for line in dropin["content"].splitlines()[1:]
        )
        assert values["HTTP_PROXY"] == url  # as systemd reads it
        exports = [c for c in spec["preKubeadmCommands"] if c.startswith("export ")]
        assert bash_values(exports, ["HTTP_PROXY", "http_proxy"]) == [url, url]  # as bash reads it


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://u:p\nx@proxy:3128", "whitespace"),
        ("http://u:p\x01x@proxy:3128", "control character"),
        ("http://u:{{x}}@proxy:3128", "percent-encode them"),
        ("http://user@corp:pw@proxy:3128", "percent-encode them"),
        ("http://u:pw@proxy:3128/path", "must not have a path"),
    ],
)
def test_values_that_cannot_land_safely_are_refused(tmp_path: Path, url: str, message: str) -> None:
    proc = run_cli(["--http-proxy", url], b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    assert proc.returncode == 2 and proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert "pw" not in lines[0]
