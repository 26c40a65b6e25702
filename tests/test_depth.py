"""The nesting bound (issue 21, item 3): a target nested deeper than MAX_DEPTH levels is
refused with the tool's one-line error (exit 1, nothing on stdout), whatever its
layout and whichever reader reads it (the fast block reader, libyaml's event reader, the
composer for anchors, the KRM path); one at the bound is processed. Never a crash or
a RecursionError."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from proxy_postrender.yamltext import libyaml
from proxy_postrender.yamltext.errors import MAX_DEPTH
from proxy_postrender.yamltext.splice import Style
from tests.helpers import SHARED_PROFILE, run_cli

HEAD = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: deep\n"
    "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n"
)


def _flow_seq(levels: int) -> str:
    return "x: " + "[" * levels + "]" * levels + "\n"


def _flow_map(levels: int) -> str:
    return "x: " + "{a: " * levels + "1" + "}" * levels + "\n"


def _block_map(levels: int) -> str:
    return (
        "x:\n"
        + "".join(" " * (i + 1) + "k:\n" for i in range(levels - 1))
        + (" " * levels + "z: 1\n")
    )


def _block_seq(levels: int) -> str:
    return (
        "x:\n"
        + "".join(" " * (i + 1) + "-\n" for i in range(levels - 1))
        + (" " * levels + "- 1\n")
    )


def _compact_seq(levels: int) -> str:
    return "x:\n  " + "- " * levels + "1\n"


# each gives the key "x" of the root mapping (one level) holding ``levels`` collections
FORMS: dict[str, Callable[[int], str]] = {
    "flow sequences": _flow_seq,
    "flow mappings": _flow_map,
    "block mappings": _block_map,
    "block sequences": _block_seq,
    "compact block sequences": _compact_seq,
}
# how the document reaches a reader: as written (the fast block reader for block forms,
# libyaml's event reader where it declines), with CRLF (the fast reader declines every
# CRLF text), with an anchor (libyaml's composer and ruamel.yaml's constructor)
VARIANTS: dict[str, Callable[[str], str]] = {
    "as written": lambda text: text,
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "anchor": lambda text: text.replace("kind: Deployment", "kind: &k Deployment"),
}
MESSAGE = f"the document is nested too deeply (more than {MAX_DEPTH} levels)"


def _document(form: str, variant: str, levels: int) -> bytes:
    return VARIANTS[variant](HEAD + FORMS[form](levels)).encode()


def _refused(stdin: bytes, args: list[str] | None = None) -> None:
    proc = run_cli([str(SHARED_PROFILE)] if args is None else args, stdin)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("proxy-postrender: error: document 1 "), lines
    assert MESSAGE in lines[0], lines


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_target_one_level_past_the_bound_is_refused_and_one_at_it_is_read(
    form: str, variant: str
) -> None:
    at_bound = _document(form, variant, MAX_DEPTH - 1)  # the root mapping is one level
    proc = run_cli([str(SHARED_PROFILE)], at_bound)
    assert proc.returncode == 0, proc.stderr
    out = libyaml.load_data(proc.stdout.decode())[0]
    assert [e["name"] for e in out["spec"]["template"]["spec"]["containers"][0]["env"]][:1] == [
        "HTTP_PROXY"
    ]
    _refused(_document(form, variant, MAX_DEPTH))


@pytest.mark.parametrize(
    ("form", "levels"),
    [
        ("flow sequences", 10_000),
        ("flow mappings", 10_000),
        ("compact block sequences", 10_000),
        # indentation grows with the depth: 2 000 levels take 2 MB (under the 8 MiB cap)
        ("block mappings", 2_000),
        ("block sequences", 2_000),
    ],
)
def test_thousands_of_levels_give_the_one_line_error(form: str, levels: int) -> None:
    _refused(_document(form, "as written", levels))


def test_a_resource_list_item_nested_thousands_of_levels_in_block_style_is_refused() -> None:
    item = "\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  x:\n    "
    text = (
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:"
        + item
        + "- " * 10_000
        + "1\n"
        + "functionConfig:\n"
        + "".join("  " + line + "\n" for line in SHARED_PROFILE.read_text().splitlines())
    )
    proc = run_cli([], text.encode())
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and MESSAGE in lines[0], lines


def test_the_round_trip_fallback_reads_and_writes_a_document_at_the_bound() -> None:
    """Why the bound is not higher: ruamel.yaml's pure-Python composer and representer,
    which the fallback dump uses, recurse once or more a level and stopped at about 245
    levels under Python's default recursion limit. At the bound they must still work."""
    # the root, MAX_DEPTH - 2 mappings, and the list
    text = "a:\n" + "".join(" " * (i + 1) + "k:\n" for i in range(MAX_DEPTH - 3))
    text += " " * (MAX_DEPTH - 2) + "z: [1]\n"
    out = libyaml.roundtrip(text, [[]], Style(), "\n")
    assert json.dumps(libyaml.load_data(out)) == json.dumps(libyaml.load_data(text))
