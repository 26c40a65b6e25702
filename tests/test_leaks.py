"""The leak harness: a proxy password never leaves the process except where the user
asked for it (the manifests on stdout, with inline credentials).

Property-based over password shapes (quotes, backslashes, ``%``, ``$``, backticks,
blanks, non-ASCII, URL delimiters percent-encoded or not) by output modes (``--report``
on stderr and in a file, ``--diff``, the log file, the Helm 4 plugin log and
terminal, KRM results, errors: a bad document after good ones, a bad profile
field, a duplicate profile key, click usage errors, ``patches``, ``noproxy``) by
profile variants (inline, ``${VAR}``, ``fromEnv``, flags, the environment,
``secretRef`` with Secret-backed nodes) over Cluster API, Windows, flow-style and
setter inputs, with or without a final newline.

The property: no text the process writes for people (stderr, log, terminal,
report, diff, KRM results, patches' messages) holds any part of the password in any
spelling; with Secret-backed credentials no manifest does either. Every password
is built around marker words that only it holds (letters and digits, which no
escaper changes), so that finding a marker anywhere, also inside a PowerShell
``-EncodedCommand`` payload, is finding a leak of some spelling of it.

``make test`` runs LEAK_EXAMPLES examples (default 100, about a second); ``make fuzz``
runs many more.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy_postrender.cli import entry, runner
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN

EXAMPLES = int(os.environ.get("LEAK_EXAMPLES", "100"))
LEAK_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

MARKERS = ("Zq7x", "Wv3k", "Jh8p")  # only passwords hold these
PIECES = [
    *"'\"\\%$` é€üä@:/#?[]!&;*=+,~",
    "%41",
    "'\"'",
    '\\"',
    "%%",
    "${",
    "\u00a0",
    "\u2028",
]
# How the password is written into the URL: every character percent-encoded, only what
# Go's net/url cannot take raw (sub-delims such as ' $ & stay), or only the URL's own
# delimiters (quotes, backslashes, backticks and non-ASCII stay raw: the profile is
# refused, and the error must not leak either).
ENCODINGS = {
    "all": "",
    "go": "-._~!$&'()*+,;=",
    "raw": "".join(c for c in map(chr, range(0x21, 0x7F)) if c not in "/?#[]@:%")
    + "é€üä\u00a0\u2028",
}


def encode(password: str, encoding: str) -> str:
    safe = ENCODINGS[encoding]
    return "".join(c if c in safe else quote(c, safe="") for c in password)


HOST = "proxy.corp.example:3128"

DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n"
    "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n"
)
FLOW = (
    '{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "flow"}, "spec": '
    '{"template": {"spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}\n---\n'
    "{apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, "
    "metadata: {name: flow-node}, spec: {files: [], preKubeadmCommands: [echo hi]}}\n"
)
ADDON = (
    "apiVersion: addon.open-cluster-management.io/v1alpha1\nkind: AddOnDeploymentConfig\n"
    "metadata:\n  name: addons\nspec:\n  nodePlacement: {}\n"
)
INPUTS = {
    "deployment": DEPLOYMENT,
    "capi": (GOLDEN / "capi-v1beta1" / "input.yaml").read_text(),
    "windows": (GOLDEN / "capi-windows" / "input.yaml").read_text(),
    "flow": FLOW,
    "setters": ADDON,
}
BAD_DOCUMENT = "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: x}\n"
MALFORMED = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\ndata: [\n"
MODES = (
    "report",
    "report-file",
    "diff",
    "krm",
    "bad-document",
    "bad-field",
    "duplicate-key",
    "usage",
    "patches",
    "noproxy",
)
VARIANTS = ("inline", "var", "from-env", "flags", "environment", "secret")


class Case:
    """One run: a password, how it is given, what the run is asked to do."""

    def __init__(
        self,
        password: str,
        encoding: str,
        variant: str,
        mode: str,
        inputs: list[str],
        final_newline: bool,
        helm4: bool,
    ) -> None:
        self.password = password
        self.userinfo = "build:" + encode(password, encoding)
        self.variant = variant
        self.mode = mode
        self.inputs = inputs
        self.final_newline = final_newline
        self.helm4 = helm4
        port = "99999" if mode == "bad-field" else "3128"
        self.host = HOST.replace("3128", port)
        self.url = f"http://{self.userinfo}@{self.host}"

    def __repr__(self) -> str:
        return (
            f"Case(password={self.password!r}, url={self.url!r}, variant={self.variant!r}, "
            f"mode={self.mode!r}, inputs={self.inputs!r}, final_newline={self.final_newline}, "
            f"helm4={self.helm4})"
        )

    @property
    def secret_mode(self) -> bool:
        return self.variant == "secret"

    def env(self, tmp: Path) -> dict[str, str]:
        env: dict[str, str] = {}
        if self.variant == "var":
            env["PROXY_PW"] = self.userinfo.partition(":")[2]
        if self.variant == "from-env":
            env |= {"PROXY_USER": "build", "PROXY_PASS": self.password}
        if self.variant == "environment":
            env |= {
                "PROXY_POSTRENDER_HTTP_PROXY": self.url,
                "PROXY_POSTRENDER_HTTPS_PROXY": self.url,
            }
        if self.helm4:
            env |= {"HELM_PLUGIN_NAME": "proxy", "XDG_STATE_HOME": str(tmp / "state")}
        else:
            env["PROXY_POSTRENDER_LOG"] = str(tmp / "run.log")
        return env

    def spec(self) -> dict[str, object]:
        url = self.url
        if self.variant == "var":
            url = f"http://build:${{PROXY_PW}}@{self.host}"
        if self.variant == "from-env":
            url = f"http://{self.host}"
        spec: dict[str, object] = {"httpProxy": url, "httpsProxy": url}
        if self.variant == "from-env":
            spec["credentials"] = {"fromEnv": {"user": "PROXY_USER", "password": "PROXY_PASS"}}
        if self.secret_mode:
            spec["credentials"] = {"secretRef": "proxy-credentials"}
            # the Secrets themselves are made elsewhere: no document of the output holds it
            spec["nodes"] = {"credentials": "secret", "createSecret": False}
        if "setters" in self.inputs:
            spec["targets"] = [{"preset": "ocm-addon"}]
        return spec

    def profile(self) -> str | None:
        """The profile file's text (JSON is YAML); None when the values come otherwise."""
        if self.variant in ("flags", "environment") and self.mode != "duplicate-key":
            return None
        profile = {
            "apiVersion": "proxy-postrender.io/v1alpha1",
            "kind": "ProxyProfile",
            "metadata": {"name": "leak"},
            "spec": self.spec(),
        }
        text = json.dumps(profile, indent=1)
        if self.mode == "duplicate-key":  # the parser quotes both values in its message
            inline = json.dumps(self.url)
            text = text.replace('"httpsProxy"', f'"httpProxy": {inline},\n  "httpsProxy"', 1)
        return text

    def stream(self) -> str:
        docs = [INPUTS[name] for name in self.inputs]
        if self.mode == "bad-document":
            docs.append(BAD_DOCUMENT)
        if self.mode == "patches":
            docs.append(MALFORMED)
        text = "---\n".join(docs)
        return text if self.final_newline else text.rstrip("\n")

    def args(self, profile: Path | None) -> list[str]:
        given = [str(profile)] if profile is not None else []
        if self.variant == "flags":
            given += ["--http-proxy", self.url, "--https-proxy", self.url]
        if self.mode == "report":
            return [*given, "--report"]
        if self.mode == "report-file":
            return [*given, "--report=report.txt"]
        if self.mode == "diff":
            return [*given, "--diff", "--report=report.txt"]
        if self.mode == "usage":  # click: "Got unexpected extra arguments (... URL)"
            return [*given, "extra.yaml", self.url]
        if self.mode == "patches":
            return ["patches", *given]
        if self.mode == "noproxy":  # it takes no proxy flags
            return ["noproxy", *given[: profile is not None], "--explain", "--stream", "-"]
        return given


def krm_input(case: Case, profile: str | None) -> str:
    """The stream as a ResourceList, the profile as its functionConfig (block style at
    the top, as kpt writes it; JSON values)."""
    items = [d for d in libyaml.load_data(case.stream()) if isinstance(d, dict)]
    text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
    text += f"items: {json.dumps(items)}\n"
    if profile is not None:
        text += f"functionConfig: {json.dumps(json.loads(profile))}\n"
    return text


class Run:
    def __init__(self, code: int, stdout: str, texts: dict[str, str]) -> None:
        self.code = code
        self.stdout = stdout
        self.texts = texts  # what people read: stderr, logs, terminal, report


def run_in_process(case: Case, tmp: Path) -> Run:
    profile_text = case.profile()
    profile = None
    if profile_text is not None:
        profile = tmp / "profile.yaml"
        profile.write_text(profile_text, encoding="utf-8")
    stdin = case.stream()
    if case.mode == "krm":
        stdin = krm_input(case, profile_text)
        profile = None
    args = case.args(profile)
    out, err = io.BytesIO(), io.StringIO()
    code = 0
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith(("PROXY_", "HELM_", "XDG_STATE"))]:
            patch.delenv(name)
        for name, value in case.env(tmp).items():
            patch.setenv(name, value)
        patch.setattr(runner, "TTY", str(tmp / "tty"), raising=False)
        patch.chdir(tmp)
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        patch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="utf-8"))
        patch.setattr(sys, "stderr", err)
        try:
            entry.main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        sys.stdout.flush()
        stdout = out.getvalue().decode("utf-8", "surrogateescape")
    texts = {"stderr": err.getvalue()}
    for name, path in (
        ("log", tmp / "run.log"),
        ("plugin log", tmp / "state" / "proxy-postrender" / "helm-plugin.log"),
        ("terminal", tmp / "tty"),
        ("report", tmp / "report.txt"),
    ):
        if path.exists():
            texts[name] = path.read_text(encoding="utf-8", errors="surrogateescape")
    return Run(code, stdout, texts)


_ENCODED = re.compile(r"-EncodedCommand\s+([A-Za-z0-9+/=]+)")


def leaked(text: str) -> list[str]:
    """The markers ``text`` holds, also inside PowerShell's base64 payloads."""
    decoded = []
    for match in _ENCODED.finditer(text):
        try:
            decoded.append(base64.b64decode(match.group(1)).decode("utf-16-le", "replace"))
        except ValueError:
            continue
    return [m for m in MARKERS if any(m in t for t in (text, *decoded))]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    parts = [MARKERS[0]]
    for marker in MARKERS[1:]:
        parts += draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3))
        parts.append(marker)
    password = "".join(parts)
    inputs = draw(st.lists(st.sampled_from(sorted(INPUTS)), min_size=1, max_size=3, unique=True))
    return Case(
        password,
        draw(st.sampled_from(sorted(ENCODINGS))),
        draw(st.sampled_from(VARIANTS)),
        draw(st.sampled_from(MODES)),
        inputs,
        draw(st.booleans()),
        draw(st.booleans()),
    )


def check(case: Case, run: Run) -> None:
    for name, text in run.texts.items():
        assert not leaked(text), f"{name} leaks {leaked(text)}:\n{text}"
        assert "Traceback" not in text, text
    shown = run.stdout
    if not case.secret_mode and case.mode in ("report", "report-file", "patches"):
        shown = ""  # manifests (patches are too) with inline credentials: asked for
    elif case.mode == "krm":  # the functionConfig comes back as it came in
        items, _, rest = shown.partition("\nfunctionConfig:")
        shown = (items if case.secret_mode else "") + rest.partition("\nresults:")[2]
    assert not leaked(shown), f"stdout leaks {leaked(shown)}:\n{shown}"


@LEAK_SETTINGS
@given(cases())
def test_no_spelling_of_a_password_leaks(case: Case) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check(case, run_in_process(case, Path(tmp)))


def test_the_harness_sees_a_leak_where_the_user_asked_for_the_password() -> None:
    """The markers do reach the manifests in inline mode: the harness can see them."""
    case = Case("Zq7x'\"\\Wv3k%$Jh8p", "go", "inline", "report", ["capi", "windows"], True, False)
    with tempfile.TemporaryDirectory() as tmp:
        run = run_in_process(case, Path(tmp))
    assert run.code == 0, run.texts
    assert leaked(run.stdout) == list(MARKERS)
    assert "-EncodedCommand" in run.stdout
