"""Proxy URLs as Go reads them: the tool accepts a URL exactly when Go's net/http
(containerd, kubelet and kubeadm are Go programs) takes the proxy it names.

Go's ``ProxyFromEnvironment`` re-reads a value that ``url.Parse`` refuses with
``http://`` in front, so a raw ``"``, backslash, backtick, non-ASCII character
or stray ``%`` in the user-info gives another proxy (host ``http``) or none.
tests/gourl/main.go asks the real net/http of the Go toolchain that ``make
test`` installs, one process per URL (net/http reads the environment once);
the binary is built once and cached under .cache/gourl/. A missing Go fails
these tests, never skips them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy_postrender.errors import ProfileError
from proxy_postrender.profile import loader
from proxy_postrender.profile.check import validate_proxy_url
from proxy_postrender.redact import userinfo
from tests.helpers import go_binary

SOURCE = Path(__file__).resolve().parent / "gourl" / "main.go"
HOST = "proxy.corp.example"
PORT = "3128"

# (scheme, user, has a password, password, host, port), as bytes where Go keeps bytes
Reading = tuple[str, bytes, bool, bytes, str, str]


@pytest.fixture(scope="module")
def go_proxy() -> Path:
    """The gourl binary (tests.helpers.go_binary)."""
    return go_binary(SOURCE, "gourl")


def go_readings(binary: Path, urls: list[str]) -> list[Reading | str]:
    """What net/http takes from HTTPS_PROXY=url: a Reading, "none" or "error"."""
    lines = "".join(url.encode("utf-8").hex() + "\n" for url in urls)
    out = subprocess.run(
        [str(binary)], input=lines, capture_output=True, text=True, check=True
    ).stdout
    readings: list[Reading | str] = []
    for line in out.splitlines():
        fields = line.split()
        if fields[0] != "proxy":
            readings.append(fields[0])
            continue
        scheme, user, has_password, password, host, port = fields[1:]

        def text(field: str) -> bytes:
            return bytes.fromhex(field[1:])

        readings.append(
            (
                text(scheme).decode(),
                text(user),
                has_password == "true",
                text(password),
                text(host).decode("utf-8", "replace"),
                text(port).decode(),
            )
        )
    assert len(readings) == len(urls)
    return readings


def meant(url: str) -> Reading:
    """The proxy a URL names, as the tool reads it: the user-info up to the last '@',
    split at its first ':', each part percent-decoded."""
    info = userinfo(url) or ""
    user, colon, password = info.partition(":")
    return ("http", unquote_to_bytes(user), bool(colon), unquote_to_bytes(password), HOST, PORT)


def accepts(url: str) -> bool:
    try:
        validate_proxy_url(url, "spec.httpsProxy")
    except ProfileError:
        return False
    return True


def disagreements(binary: Path, infos: list[str]) -> list[str]:
    """User-infos on which the tool and Go disagree: accepted, but Go takes another proxy;
    or refused, though Go reads it right (allowed only for a raw '@', which curl reads
    differently: it ends the user-info at the first '@')."""
    urls = [f"http://{info}@{HOST}:{PORT}" for info in infos]
    wrong = []
    for info, url, read in zip(infos, urls, go_readings(binary, urls), strict=True):
        go_right = read == meant(url)
        if accepts(url) != go_right and not (go_right and "@" in info):
            wrong.append(f"{info!r}: tool {'accepts' if accepts(url) else 'refuses'}, go {read}")
    return wrong


PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
PIECES = st.one_of(
    PRINTABLE,
    PRINTABLE,
    st.from_regex(r"%[0-9A-Fa-f]{2}", fullmatch=True),
    st.sampled_from(["%", "%z", "%zz", "%4", "%4g", "%%", "%%41", "%25"]),
    st.characters(min_codepoint=0x80, max_codepoint=0x10FFFF, exclude_categories=["Cs"]),
    st.sampled_from(["p", "user", "s3cr3t", ":"]),
)
USERINFO = st.lists(PIECES, min_size=1, max_size=12).map("".join)


@settings(max_examples=25, deadline=None)
@given(st.lists(USERINFO, min_size=20, max_size=20))
def test_the_tool_accepts_a_user_info_exactly_when_go_reads_it_back(
    go_proxy: Path, infos: list[str]
) -> None:
    wrong = disagreements(go_proxy, infos)
    assert not wrong, "\n".join(wrong)


# Every printable ASCII character and a few others, alone in the password and in the
# user name, raw and percent-encoded: the fixed part of the agreement.
SINGLE = [chr(c) for c in range(0x20, 0x7F)] + ["é", "\u00a0", "中", "\U0001f511"]
FIXED = [
    *(f"u:a{ch}b" for ch in SINGLE),
    *(f"a{ch}b:p" for ch in SINGLE),
    *(f"u:{quote(ch, safe='')}" for ch in SINGLE),
    *["u:%", "u:%zz", "u:%4", "u:%%", "u:%25%", "u:100%", "u:%7B%7B", "u:%00", "u:%FF"],
    'build:p%40ss"w\\rd$`x`%%',  # the former docs and golden passwords: Go misreads them
    'build:p%40ss"w\\rd',
    "build:it's%25",
]


def test_the_tool_and_go_agree_on_single_characters_and_escapes(go_proxy: Path) -> None:
    wrong = disagreements(go_proxy, FIXED)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ('http://u:p"w@proxy:3128', "the password holds '\"' (percent-encode it as %22)"),
        ("http://u:p\\w@proxy:3128", "the password holds '\\' (percent-encode it as %5C)"),
        ("http://u:p`w@proxy:3128", "the password holds '`' (percent-encode it as %60)"),
        ("http://us<r:pw@proxy:3128", "the user name holds '<' (percent-encode it as %3C)"),
        ("http://u:pé@proxy:3128", "non-ASCII character (percent-encode its UTF-8 bytes"),
        ("http://u:p%zz@proxy:3128", "a '%' that starts no %XX escape (write '%' as %25)"),
        ("http://u:100%@proxy:3128", "a '%' that starts no %XX escape"),
        ("http://u:pw@proxé:3128", "the host must be ASCII"),
        ("http://u:pw@pro$xy:3128", "the host is not a host name or an IP address"),
        ("http://u:pw@[fe80::1%25eth0]:3128", "the host is not a host name or an IP address"),
    ],
)
def test_urls_go_would_misread_are_refused_without_the_password(url: str, reason: str) -> None:
    with pytest.raises(ProfileError) as info:
        validate_proxy_url(url, "spec.httpsProxy")
    message = str(info.value)
    assert reason in message and "\n" not in message
    assert "pw" not in message and "p%zz" not in message and "100" not in message
    assert "Go programs" in message or "host" in message


@pytest.mark.parametrize(
    "url",
    [
        "http://proxy.corp.example:3128",
        "HTTP://Proxy.Corp.Example:3128/",
        "http://u:p@10.0.0.1:8080",
        "http://u:p@[fd00::1]:3128",
        "https://u:p@proxy_1.corp.example",
        "http://:p@proxy:3128",
        "http://u@proxy:3128",
    ],
)
def test_hosts_and_ports_the_tool_accepts_are_read_the_same_by_go(go_proxy: Path, url: str) -> None:
    assert accepts(url)
    parts = urlsplit(url)
    info = userinfo(url)
    user, colon, password = (info or "").partition(":")
    want = (
        "http" if parts.scheme == "http" else "https",
        unquote_to_bytes(user),
        bool(colon),
        unquote_to_bytes(password),
        parts.hostname,
        str(parts.port or ""),
    )
    read = go_readings(go_proxy, [url])[0]
    assert read != "none" and read != "error"
    assert (read[0], read[1], read[2], read[3], read[4].lower(), read[5]) == want


def test_credentials_from_env_are_encoded_so_that_go_reads_them(go_proxy: Path) -> None:
    password = 'p@ss:"w\\rd`$ é%zz{{x}}'
    profile = {
        "apiVersion": "proxy-postrender.io/v1alpha1",
        "kind": "ProxyProfile",
        "metadata": {"name": "p"},
        "spec": {
            "httpsProxy": f"http://{HOST}:{PORT}",
            "credentials": {"fromEnv": {"user": "PU", "password": "PP"}},
        },
    }
    environ = {"PU": "bu ild", "PP": password}
    url = loader.from_object(profile, "profile", environ).https_proxy
    assert url is not None
    read = go_readings(go_proxy, [url])[0]
    assert read == ("http", b"bu ild", True, password.encode(), HOST, PORT)


def test_a_raw_at_sign_is_refused_because_curl_cannot_read_it(go_proxy: Path) -> None:
    """The one place where the tool refuses what Go reads right: curl (in the pods)
    refuses a proxy URL with a second raw '@'."""
    curl = shutil.which("curl")
    if curl is None:
        pytest.fail("curl is not installed (make test installs it)")
    url = "http://u:p@w@127.0.0.1:9"
    proc = subprocess.run(
        [curl, "-q", "-sS", "-x", url, "http://example.invalid/"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 5 and "Unsupported proxy syntax" in proc.stderr
    assert go_readings(go_proxy, [url])[0] == ("http", b"u", True, b"p@w", "127.0.0.1", "9")
    assert not accepts(url)
