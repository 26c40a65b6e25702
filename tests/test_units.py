"""Unit tests: NO_PROXY entries, scalar rendering, profile validation, stream splitting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from proxy_postrender.errors import ProfileError
from proxy_postrender.noproxy import syntax
from proxy_postrender.profile import expand, loader, records
from proxy_postrender.yamltext import scalars, stream


@pytest.mark.parametrize(
    ("raw", "text", "kind"),
    [
        ("Example.COM", "example.com", "domain"),
        (" .svc ", ".svc", "suffix"),
        ("*.corp.example", ".corp.example", "suffix"),
        ("10.0.0.0/8", "10.0.0.0/8", "cidr"),
        ("10.1.2.3/8", "10.0.0.0/8", "cidr"),
        ("fd00::/8", "fd00::/8", "cidr"),
        ("192.168.0.1", "192.168.0.1", "ip"),
        ("::1", "::1", "ip"),
        ("[fd00::1]:8443", "[fd00::1]:8443", "ip"),
        ("registry.local:5000", "registry.local:5000", "domain"),
        ("*", "*", "wildcard"),
        ("my_host", "my_host", "domain"),
    ],
)
def test_noproxy_entries(raw: str, text: str, kind: str) -> None:
    entry = syntax.parse_entry(raw)
    assert (entry.text, entry.kind) == (text, kind)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "a b",
        "http://x",
        "x:0",
        "x:70000",
        "-bad.com",
        "10.0.0.0/33",
        "[fd00::1",
        "*.",
        "10.0.0.0/8:80",
        "a..b",
    ],
)
def test_noproxy_rejects(raw: str) -> None:
    with pytest.raises(syntax.NoProxyEntryError):
        syntax.parse_entry(raw)


def test_noproxy_dedupes_in_order() -> None:
    entries = syntax.normalise(syntax.split_value("b.com, a.com,B.com,, *.c.com,.c.com"))
    assert syntax.join(entries) == "b.com,a.com,.c.com"


@given(st.text())
def test_scalar_rendering_reads_back_exactly(value: str) -> None:
    # surrogates cannot be written as UTF-8 at all
    value = value.encode("utf-8", "replace").decode("utf-8")
    rendered = scalars.render(value)
    loaded = YAML(typ="safe").load(f"key: {rendered}\n")
    assert loaded == {"key": value}


@pytest.mark.parametrize(
    "value", ["true", "No", "null", "1234", "1:20", "0x1F", ".svc", "a: b", "#x", "x #y"]
)
def test_scalar_rendering_quotes_ambiguous_values(value: str) -> None:
    assert scalars.render(value).startswith('"')


def test_scalar_rendering_keeps_urls_plain() -> None:
    assert scalars.render("http://proxy.corp.example:3128") == "http://proxy.corp.example:3128"


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return str(path)


BASE = """apiVersion: proxy-postrender.io/v1alpha1
kind: ProxyProfile
metadata:
  name: {name}
spec:
  httpProxy: {url}
"""


def test_profile_env_expansion(tmp_path: Path) -> None:
    path = _write(tmp_path, BASE.format(name="a", url="http://u:${PW}@proxy:3128"))
    loaded = loader.load(path, environ={"PW": "s3cr%40t"})
    assert loaded.http_proxy == "http://u:s3cr%40t@proxy:3128"
    assert loaded.env_vars()[0] == ("HTTP_PROXY", "http://u:s3cr%40t@proxy:3128")
    assert [n for n, _ in loaded.env_vars()] == ["HTTP_PROXY", "NO_PROXY", "http_proxy", "no_proxy"]


def test_profile_escaped_dollar(tmp_path: Path) -> None:
    assert expand.expand_vars("a$${X}b${Y}", "w", {"Y": "y"}) == "a${X}by"
    # the escape leaves literal braces, which a proxy URL may not hold
    path = _write(tmp_path, BASE.format(name="a", url="http://u:p$${X}@proxy:3128"))
    with pytest.raises(ProfileError, match="percent-encode"):
        loader.load(path, environ={})


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("proxy:3128", "needs a scheme"),
        ("socks5://proxy:1080", "scheme must be http or https"),
        ("http://", "has no host"),
        ("http://proxy:99999", "invalid port"),
        ("http://proxy:3128/path", "must not have a path"),
        ("'http://pro xy:3128'", "whitespace"),
    ],
)
def test_profile_rejects_bad_urls(tmp_path: Path, url: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message) as info:
        loader.load(_write(tmp_path, BASE.format(name="a", url=url)), environ={})
    assert "spec.httpProxy" in str(info.value)


def test_profile_bad_url_never_shows_password(tmp_path: Path) -> None:
    path = _write(tmp_path, BASE.format(name="a", url="http://user:HUNTER2@proxy:notaport"))
    with pytest.raises(ProfileError) as info:
        loader.load(path, environ={})
    assert "HUNTER2" not in str(info.value)


def test_profile_selection(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        BASE.format(name="a", url="http://a:1") + "---\n" + BASE.format(name="b", url="http://b:2"),
    )
    with pytest.raises(ProfileError, match="pick one with --profile-name"):
        loader.load(path, environ={})
    assert loader.load(path, profile_name="b", environ={}).http_proxy == "http://b:2"
    with pytest.raises(ProfileError, match="no ProxyProfile named 'c'"):
        loader.load(path, profile_name="c", environ={})


def test_profile_flags_override_and_replace(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        BASE.format(name="a", url="http://a:1") + "  noProxy: [x.com]\n  noProxyPresets: []\n",
    )
    overrides = records.Overrides(http_proxy="http://b:2", no_proxy="y.com,z.com")
    loaded = loader.load(path, overrides=overrides, environ={})
    assert loaded.http_proxy == "http://b:2"
    assert syntax.join(item.entry for item in loaded.no_proxy()) == "y.com,.y.com,z.com,.z.com"
    flags_only = loader.load(
        None, overrides=records.Overrides(https_proxy="http://c:3"), environ={}
    )
    assert flags_only.http_proxy is None and flags_only.https_proxy == "http://c:3"


def test_profile_requires_a_proxy(tmp_path: Path) -> None:
    path = _write(tmp_path, BASE.format(name="a", url="null"))
    with pytest.raises(ProfileError, match=r"httpProxy or spec\.httpsProxy is required"):
        loader.load(path, environ={})
    with pytest.raises(ProfileError, match="no profile"):
        loader.load(None, environ={})


def test_profile_rejects_wrong_kind_and_bad_conflict_mode(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="no object of kind ProxyProfile"):
        loader.load(_write(tmp_path, "apiVersion: v1\nkind: ConfigMap\n"), environ={})
    bad = BASE.format(name="a", url="http://a:1") + "  onConflict: replace\n"
    with pytest.raises(ProfileError, match="onConflict"):
        loader.load(_write(tmp_path, bad), environ={})


@given(
    st.lists(
        st.sampled_from(
            [
                "---\n",
                "--- # c\n",
                "a: 1\n",
                "# comment\n",
                "b: |\n  ---x\n",
                "%YAML 1.1\n",
                "...\n",
                "\r\n",
                "kind: Deployment\n",
                " ---\n",
                "----\n",
            ]
        ),
        max_size=30,
    )
)
def test_split_is_lossless(lines: list[str]) -> None:
    text = "".join(lines)
    assert "".join(segment.text for segment in stream.split(text)) == text


def test_sniff_kind() -> None:
    assert stream.Segment("---\nkind: Secret # x\n", 0, 1).sniff_kind() == "Secret"
    assert stream.Segment("kind: 'Secret'\n", 0, 1).sniff_kind() == "Secret"
    assert stream.Segment("  kind: Secret\n", 0, 1).sniff_kind() is None
    assert stream.Segment("{kind: Secret}\n", 0, 1).sniff_kind() is None
    assert stream.Segment("kind: A\nkind: B\n", 0, 1).sniff_kind() is None


# The definition the substring search in stream._kind_values keeps: every top-level
# kind key line (plain or quoted) and what follows its ':' to the end of the line.
_KIND_KEY = r"""(?:kind|"kind"|'kind')[ \t]*:(.*)"""


def _kind_values_by_pattern(text: str) -> list[str]:
    import re

    first = re.match(_KIND_KEY, text)
    return ([first.group(1)] if first else []) + re.findall("\n" + _KIND_KEY, text)


_KIND_PIECES = ["kind", '"kind"', "'kind'", "kinds", ":", " ", "\t", "\n", "\r", "x", "#", "'"]


@given(st.lists(st.sampled_from(_KIND_PIECES), max_size=30))
def test_kind_values_match_the_pattern(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert stream._kind_values(text) == _kind_values_by_pattern(text)


@pytest.mark.parametrize(
    "text",
    [
        "kind: A\n",
        "kind:\n",
        "kind :A",
        "kind\t: A\r\n'kind': B\n\"kind\":C",
        "x\nkind: A\n  kind: B\nkinds: C\nkind",
        "---\nkind: Secret # x\n",
    ],
)
def test_kind_values_on_chosen_texts(text: str) -> None:
    assert stream._kind_values(text) == _kind_values_by_pattern(text)


@given(st.text(max_size=40))
def test_literal_block_scalars_read_back_exactly(value: str) -> None:
    from proxy_postrender.yamltext.splice import Style, _block

    value = value.encode("utf-8", "replace").decode("utf-8")
    text = "\n".join(_block({"k": value}, 0, Style())) + "\n"
    assert YAML(typ="safe").load(text) == {"k": value}


@given(st.text(max_size=30))
def test_block_scalar_rendering_reads_back_exactly(value: str) -> None:
    value = value.encode("utf-8", "replace").decode("utf-8")
    loaded = YAML(typ="safe").load(f"list:\n- {scalars.render_block(value)}\n")
    assert loaded == {"list": [value]}


def test_block_rendering_keeps_commands_and_paths_plain() -> None:
    for value in ["systemctl daemon-reload", "/etc/x.conf", "a [b] $(c) && d; e"]:
        assert scalars.render_block(value) == value
    for value in ["yes", "a: b", "a #b", "- x", "'q'", "1 2", ".5", "x "]:
        assert scalars.render_block(value) != value


def test_profile_rejects_braces_that_cloud_init_would_expand(tmp_path: Path) -> None:
    path = _write(tmp_path, BASE.format(name="a", url="http://u:pa{{ss@proxy:3128"))
    with pytest.raises(ProfileError, match="percent-encode them"):
        loader.load(path, environ={})


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ("kubeletDropIn: /etc/systemd/system/kubelet.service.d/proxy.txt", "UNIT.d/NAME.conf"),
        ("envFile: /etc/systemd/system/containerd.service.d/http-proxy.conf", "must differ"),
        ("layout: sideways", "layout"),
        ("windows: maybe", "windows"),
        ("credentials: vault", "credentials"),
        ("secretName: Not_A_Name", "secretName"),
    ],
)
def test_profile_rejects_bad_node_settings(tmp_path: Path, nodes: str, message: str) -> None:
    text = BASE.format(name="a", url="http://proxy:3128") + f"  nodes:\n    {nodes}\n"
    with pytest.raises(ProfileError, match=message):
        loader.load(_write(tmp_path, text), environ={})


_STREAM_LINES = st.sampled_from(
    ["---", "--- # c", "----", " ---", "---x", "%YAML 1.2", "# c", "", "a: 1", "- b", "é: ü"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_STREAM_LINES, max_size=30), st.booleans(), st.integers(1, 12))
def test_splitting_chunks_gives_the_segments_of_the_whole(
    lines: list[str], final_newline: bool, size: int
) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    expected = [(s.text, s.offset, s.line) for s in stream.split(text)]
    assert [(s.text, s.offset, s.line) for s in stream.split_chunks(chunks)] == expected


# The splicer's cache of rendered lines (splice._rendered): a value that renders
# differently never gets another one's lines, whatever was rendered before it.
_LOOKALIKES: list[Any] = [
    {"a": True},
    {"a": 1},
    {"a": "1"},
    {"a": "true"},
    {"a": None},
    {"a": [1]},
    {"a": [True]},
    {"a": {"b": 1}},
    {"a": "x\n"},
    {"1": 1},
]


@pytest.mark.parametrize("literal", [True, False])
def test_rendered_lines_are_those_of_the_value_rendered(literal: bool) -> None:
    from proxy_postrender.yamltext import splice

    style = splice.Style(literal=literal)
    splice._RENDERED.clear()
    for _ in range(2):  # the second round from the cache
        for value in _LOOKALIKES:
            for column in (0, 2):
                assert splice._rendered(value, column, 0, style) == tuple(
                    splice._block(value, column, style)
                )
        items = tuple(_LOOKALIKES)
        expected = [line for item in items for line in splice._item(item, 4, 2, style)]
        assert splice._rendered(items, 4, 2, style) == tuple(expected)
        assert splice._rendered(items, 4, 4, style) != tuple(expected)


def test_a_value_without_a_rendering_is_refused_after_a_lookalike_was_rendered() -> None:
    from proxy_postrender.yamltext import splice

    style = splice.Style()
    assert splice._rendered({"a": [1, 2]}, 0, 0, style) == ("a:", "  - 1", "  - 2")
    with pytest.raises(splice.Unsupported):
        splice._rendered({"a": (1, 2)}, 0, 0, style)  # a tuple is not a list
    with pytest.raises(splice.Unsupported):
        splice._rendered({"a": 1.5}, 0, 0, style)
