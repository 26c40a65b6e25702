"""The bad-input catalogue: each input gives correct pass-through or a one-line error
naming the document, exit 1 and nothing on stdout, within bounded time and memory."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from proxy_postrender.yamltext import libyaml
from tests.e2e import PROXY_VARS
from tests.helpers import SHARED_PROFILE

HERE = Path(__file__).resolve().parent / "bad_inputs"
CATALOGUE: dict[str, Any] = YAML(typ="safe").load((HERE / "catalogue.yaml").read_text())
MEMORY_LIMIT = 1024 * 1024 * 1024  # address space of the process under test
TIME_LIMIT = 60  # seconds, far above what any input here takes


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _run(data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "proxy_postrender", str(SHARED_PROFILE)],
        input=data,
        capture_output=True,
        timeout=TIME_LIMIT,
        preexec_fn=_limited,
        check=False,
    )


def _check(data: bytes, expect: Any) -> None:
    proc = _run(data)
    if expect == "idempotent":  # processed into YAML, and a second pass changes nothing
        assert proc.returncode == 0, proc.stderr
        libyaml.load_data(proc.stdout.decode())
        again = _run(proc.stdout)
        assert again.returncode == 0 and again.stdout == proc.stdout
        return
    if expect == "passthrough":
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == data
    elif expect == "injected":
        assert proc.returncode == 0, proc.stderr
        containers = libyaml.load_data(proc.stdout.decode())[0]["spec"]["template"]["spec"]
        names = [e["name"] for e in containers["containers"][0]["env"]]
        assert names == list(PROXY_VARS)
    else:
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout == b""
        lines = proc.stderr.decode().splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith("proxy-postrender: error: document ")
        assert expect["error"] in lines[0]


def test_the_catalogue_lists_every_file() -> None:
    files = {p.name for p in HERE.glob("*.yaml")} - {"catalogue.yaml"}
    assert files == set(CATALOGUE)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_bad_input(name: str) -> None:
    _check((HERE / name).read_bytes(), CATALOGUE[name])


@pytest.mark.parametrize("line_break", ["\r", "\x85", "\u2028", "\u2029"])
def test_a_line_break_other_than_lf_gives_yaml_or_a_refusal(line_break: str) -> None:
    """YAML reads a CR alone, NEL, LS and PS as line breaks. The splice counts columns
    from LF, and the check that proves a splice from its edits cannot vouch for such a
    text: it is read back in full, which refuses the wrong splice (exit 0 with output
    that did not parse, before)."""
    data = (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:{line_break}  name: web\n"
        "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n"
    ).encode()
    proc = _run(data)
    if proc.returncode == 0:
        doc = libyaml.load_data(proc.stdout.decode())[0]
        assert doc["metadata"]["name"] == "web"
        assert "proxy-postrender.io/injected" in doc["metadata"]["annotations"]
        return
    _check(data, {"error": "could not apply the change without altering other content"})


BLOB = "x" * (50 * 1024 * 1024)


def test_a_50_mib_document_that_is_no_target_passes_through() -> None:
    data = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata:\n  blob: {BLOB}\n"
    _check(data.encode(), "passthrough")


def test_a_50_mib_target_is_refused_before_it_is_parsed() -> None:
    data = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: big\n  annotations:\n"
        f"    blob: {BLOB}\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n"
    )
    _check(data.encode(), {"error": "the document is 50.0 MiB"})


def test_a_json_document_over_the_size_cap_is_refused_for_what_it_is() -> None:
    """Its kind shows only when it is parsed: the tool does not know it is a target."""
    data = '{"apiVersion": "v1", "kind": "ConfigMap", "data": {"blob": "' + BLOB + '"}}\n'
    _check(data.encode(), {"error": "its kind shows only when it is parsed"})


def test_a_document_nested_a_million_levels_deep_is_refused_not_crashed() -> None:
    """libyaml's composer recursed in C until the process crashed (exit -11, no message)."""
    data = '{"kind": "ConfigMap", "x": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}\n"
    _check(data.encode(), {"error": "nested too deeply (more than 200 levels)"})


def test_a_document_over_the_node_bound_is_refused() -> None:
    """A million nodes and one: far more than the API server's 3 MiB hold in practice."""
    data = '{"kind": "Deployment", "x": [' + ",".join(["0"] * 1_000_000) + "]}\n"
    _check(data.encode(), {"error": "the document has more than 1000000 nodes"})


@pytest.mark.parametrize(
    "layout",
    [
        "  annotations:\n    scale: 1e3\n",  # the fast reader
        "  annotations: {scale: 1e3, tags: [2E-5]}\n",  # flow: the event reader
        "  annotations: {scale: 1e3}\n  labels: &a {x: 1e1}\n  also: *a\n",  # the composer
    ],
)
def test_a_float_without_a_dot_prints_no_warning_and_keeps_its_value(layout: str) -> None:
    data = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n" + layout + "spec:\n"
        "  containers:\n  - name: a\n"
    ).encode()
    proc = _run(data)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    out = libyaml.load_data(proc.stdout.decode())[0]
    assert out["metadata"]["annotations"]["scale"] == 1000.0
    assert b"1e3" in proc.stdout
