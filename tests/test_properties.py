"""Property tests of the SPEC §5 invariants over generated manifest streams."""

from __future__ import annotations

import difflib
import re
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from proxy_postrender import dialects, engine, targets
from proxy_postrender.nodes import kubeadm
from proxy_postrender.objects import group_kind
from proxy_postrender.request import Request
from proxy_postrender.structs import replace
from proxy_postrender.yamltext import libyaml, scalars, stream
from tests.e2e import PROXY_VARS, containers, env_names

ENV = (
    ("HTTP_PROXY", "http://proxy.corp.example:3128"),
    ("HTTPS_PROXY", "http://user:p%40ss@proxy.corp.example:3128"),
    ("NO_PROXY", ".svc,10.0.0.0/8,localhost"),
)
NODES = kubeadm.NodeSettings("/etc/systemd/system/containerd.service.d/http-proxy.conf", "/k.conf")
REQUEST = Request(
    env=(*ENV, *((n.lower(), v) for n, v in ENV)), nodes=replace(NODES, password=True)
)
REMOVE = Request(env=())

NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True)
TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufeff\x85\u2028\u2029"),
    max_size=20,
)


class Empty(str):
    """An empty or null value, spelled as the text after its key's colon."""


# The empty or null collections charts write and the tool fills: "env:", "env: []",
# "annotations: {}", "annotations:" with "{}" on the next line...
NO_VALUE, NULL, TILDE, EMPTY_LIST, EMPTY_MAP, MAP_ON_ITS_LINE = (
    Empty(""),
    Empty(" null"),
    Empty(" ~"),
    Empty(" []"),
    Empty(" {}"),
    Empty("\n{}"),
)
# ...and the other ways YAML spells them: every one comes back byte for byte (the
# record keeps the text after the key's colon when it is not the plain one).
NULLS = [Empty(t) for t in (" Null", " NULL", "  ~", "\n~", "\nnull")]
LISTS = [Empty(t) for t in ("\n[]", "  []", " [ ]", "\n[ ]")]
MAPS = [Empty(t) for t in ("  {}", " { }", "\n{ }")]


class Emitter:
    """Block-style YAML text with the indentation, quoting and comments chosen by hypothesis."""

    def __init__(self, draw: Any, map_indent: int, seq_offset: int) -> None:
        self.draw, self.map_indent, self.seq_offset = draw, map_indent, seq_offset

    def scalar(self, value: Any) -> str:
        text = str(value)
        style = self.draw(st.sampled_from(["render", "double", "single"]))
        if style == "single" and "'" not in text and text.isprintable():
            return "'" + text + "'"
        if style == "double":
            return scalars.render(text) if scalars.render(text).startswith('"') else f'"{text}"'
        return scalars.render(text)

    def comment(self) -> str:
        return "  # " + self.draw(NAMES) if self.draw(st.booleans()) else ""

    def block(self, value: Any, indent: int) -> list[str]:
        pad = " " * indent
        lines: list[str] = []
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, Empty):
                    head, _, own_line = item.partition("\n")
                    lines.append(f"{pad}{key}:{head}{self.comment()}")
                    if own_line:
                        token = " " * (indent + self.map_indent) + own_line
                        lines.append(token + self.comment())
                    continue
                if isinstance(item, dict) and item:
                    lines.append(f"{pad}{key}:{self.comment()}")
                    lines += self.block(item, indent + self.map_indent)
                elif isinstance(item, list) and item:
                    lines.append(f"{pad}{key}:")
                    lines += self.block(item, indent + self.seq_offset)
                elif isinstance(item, str) and "\n" in item:
                    lines.append(f"{pad}{key}: |")
                    lines += [" " * (indent + self.map_indent) + part for part in item.splitlines()]
                else:
                    lines.append(f"{pad}{key}: {self.scalar(item)}{self.comment()}")
            return lines
        for element in value:
            if isinstance(element, str) and "\n" in element:
                lines.append(f"{pad}- |")
                lines += [" " * (indent + 2) + part for part in element.splitlines()]
                continue
            if not isinstance(element, dict | list):
                lines.append(f"{pad}- {self.scalar(element)}")
                continue
            inner = self.block(element, indent + 2)
            lines.append(pad + "- " + inner[0][indent + 2 :])
            lines += inner[1:]
        return lines


@st.composite
def workload(draw: Any) -> dict[str, Any]:
    target = draw(st.sampled_from(targets.BUILT_IN.of_planner(targets.PODS)))
    group, kind, paths = target.group, target.kind, target.paths
    names = draw(st.lists(NAMES, min_size=1, max_size=3, unique=True))
    pod_containers = []
    for name in names:
        container: dict[str, Any] = {"name": name, "image": "registry.example/" + name + ":1.0"}
        env = draw(
            st.lists(
                st.tuples(st.sampled_from(["FOO", "BAR", "HTTP_PROXY", "no_proxy"]), TEXT),
                max_size=3,
                unique_by=lambda t: t[0],
            )
        )
        if env:
            container["env"] = [{"name": n, "value": v} for n, v in env]
        else:
            empty = draw(st.sampled_from([None, NO_VALUE, NULL, TILDE, EMPTY_LIST, *NULLS, *LISTS]))
            if empty is not None:
                container["env"] = empty
        if draw(st.booleans()):
            container["args"] = ["--flag", "line one\nline two\n---\n"]
        if draw(st.booleans()):  # a block scalar last: a new key goes before it at the end
            container["workingDir"] = draw(st.sampled_from(["/srv\n", "/srv\n/x\n", "a b"]))
        pod_containers.append(container)
    pod_spec: dict[str, Any] = {"containers": pod_containers}
    if draw(st.booleans()):
        pod_spec = {
            "initContainers": [{"name": "init-" + names[0], "image": "busybox"}],
            **pod_spec,
        }
    obj: dict[str, Any] = {
        "apiVersion": f"{group}/v1" if group else "v1",
        "kind": kind,
        "metadata": {"name": draw(NAMES)},
    }
    annotations = draw(
        st.sampled_from(
            ["entry", None, NO_VALUE, NULL, EMPTY_MAP, MAP_ON_ITS_LINE, "metadata", *NULLS, *MAPS]
        )
    )
    if annotations == "entry":
        obj["metadata"]["annotations"] = {"a.example/x": draw(TEXT) or "v"}
    elif annotations == "metadata":  # "metadata:" or "metadata: {}" (no name)
        obj["metadata"] = draw(st.sampled_from([NO_VALUE, EMPTY_MAP, MAP_ON_ITS_LINE, *MAPS]))
    elif annotations is not None:
        obj["metadata"]["annotations"] = annotations
    node = obj
    for step in paths[0][:-1]:
        node = node.setdefault(step, {})
    node[paths[0][-1]] = pod_spec
    return obj


@st.composite
def kubeadm_object(draw: Any) -> dict[str, Any]:
    target = draw(st.sampled_from(targets.BUILT_IN.of_planner(targets.KUBEADM)))
    group, kind, spec_path = target.group, target.kind, target.paths[0]
    spec: dict[str, Any] = {}
    linux = TEXT.filter(
        lambda t: t.strip() == t and t and not kubeadm.is_windows({"preKubeadmCommands": [t]})
    )
    commands = draw(st.lists(linux, max_size=3))
    if commands:
        spec["preKubeadmCommands"] = commands
    if draw(st.booleans()):
        spec["files"] = [{"path": "/etc/x-" + draw(NAMES), "content": draw(TEXT) or "c"}]
    if draw(st.booleans()) or not spec:
        spec["format"] = draw(st.sampled_from(["cloud-config", "ignition"]))
    obj: dict[str, Any] = {
        "apiVersion": f"{group}/{draw(st.sampled_from(['v1beta1', 'v1beta2']))}",
        "kind": kind,
        "metadata": {"name": draw(NAMES)},
    }
    node = obj
    for step in spec_path[:-1]:
        node = node.setdefault(step, {})
    node[spec_path[-1]] = spec
    return obj


@st.composite
def other(draw: Any) -> dict[str, Any]:
    data = draw(st.dictionaries(NAMES, TEXT | st.just("a\n---\nkind: Deployment\n"), max_size=4))
    return {
        "apiVersion": "v1",
        "kind": draw(st.sampled_from(["ConfigMap", "Secret", "Service"])),
        "metadata": {"name": draw(NAMES)},
        "data": data,
    }


UNICODE = st.text(st.sampled_from("aé漢字😀ß ñ-_"), min_size=1, max_size=8)


@st.composite
def wild(draw: Any) -> str:
    """Raw text of a document that is no target, in the forms YAML allows."""
    word = draw(UNICODE).replace("'", "")
    form = draw(st.sampled_from(["anchors", "tags", "flow", "comments", "end", "directive"]))
    head = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: wild}\n"
    if form == "anchors":
        return head + f"data:\n  a: &x '{word}'\n  b: *x\n"
    if form == "tags":
        return head + f"data:\n  ref: !Ref '{word}'\n  sub: !Sub x\n"
    if form == "flow":
        return (
            "{apiVersion: v1, kind: ConfigMap, metadata: {name: f}, data: {a: "
            + repr(word)
            + "}}\n"
        )
    if form == "comments":
        return "# only a comment here\n# and another\n"
    if form == "end":
        return head + f"data: {{a: '{word}'}}\n...\n"
    return "%YAML 1.2\n---\n" + head + f"data: {{a: '{word}'}}\n"


ANCHORED = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: anchored\n  labels: &labels\n"
    "    app: web\nspec:\n  selector:\n    matchLabels: *labels\n  template:\n"
    "    metadata:\n      labels: *labels\n    spec:\n      containers:\n      - name: app\n"
    "        image: nginx\n"
)


# The line breaks YAML reads besides LF (finding 12: U+2028 after "metadata:" sent the
# document to the round-trip fallback, whose re-indented output --remove could not undo)
OTHER_BREAKS = ("\u2028", "\u2029", "\x85", "\r")


def _joined(draw: Any, lines: list[str]) -> str:
    """The lines of one document, one line break of them (at most) another kind."""
    text = "\n".join(lines)
    if len(lines) > 1 and draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(lines) - 2))
        text = "\n".join(lines[: at + 1]) + draw(st.sampled_from(OTHER_BREAKS))
        text += "\n".join(lines[at + 1 :])
    # blank lines at the end of a document (EKS Anywhere writes them after its kubeadm
    # specs): the tool's lines go before them, and --remove leaves them
    blank: str = draw(st.sampled_from(["", "", "\n", "\n\n", "  \n"]))
    return text + "\n" + blank


@st.composite
def streams(draw: Any) -> str:
    emitter = Emitter(draw, draw(st.sampled_from([2, 4])), draw(st.sampled_from([0, 2, 4])))
    parts = []
    objects = draw(st.lists(workload() | kubeadm_object() | other(), min_size=1, max_size=6))
    for index, obj in enumerate(objects):
        separator = draw(
            st.sampled_from(["---\n", "---\n# Source: c/templates/x.yaml\n", "--- # c\n"])
        )
        if index or draw(st.booleans()):
            parts.append(separator)
        if draw(st.booleans()):
            parts.append("---\n# Source: c/templates/empty.yaml\n")
        parts.append(_joined(draw, emitter.block(obj, 0)))
    for _ in range(draw(st.integers(0, 2))):
        piece = draw(wild() | st.just(ANCHORED))
        if piece.startswith("%YAML"):
            parts.append("\n" if parts and not parts[-1].endswith("\n") else "")
            parts.append(piece)
        else:
            parts.append("---\n" + piece)
    text = "".join(parts)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    # no final newline: a block scalar may end the stream
    return text.rstrip("\r\n") if draw(st.integers(0, 3)) == 0 else text


def _is_target(segment: stream.Segment) -> bool:
    """Whether the segment holds a target (its kind as read: a line break other than LF
    before ``kind:`` hides it from the first look)."""
    if segment.sniff_kind() in targets.BUILT_IN.kinds:
        return True
    if not segment.has_content():
        return False
    docs = libyaml.load_data(segment.text)
    return any(isinstance(d, dict) and d.get("kind") in targets.BUILT_IN.kinds for d in docs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams())
def test_invariants(text: str) -> None:
    out = engine.process(text, REQUEST).text
    # the output parses, with every document in its place
    before, after = libyaml.load_data(text), libyaml.load_data(out)
    assert len(before) == len(after)
    # documents that are not targets are byte-identical
    in_segments, out_segments = stream.split(text), stream.split(out)
    assert len(in_segments) == len(out_segments)
    for seg_in, seg_out in zip(in_segments, out_segments, strict=True):
        if not _is_target(seg_in):
            assert seg_out.text == seg_in.text
    # every container has every variable; the manifest's own values are kept
    for doc_in, doc_out in zip(before, after, strict=True):
        for (where, c_in), (_, c_out) in zip(containers(doc_in), containers(doc_out), strict=True):
            assert set(PROXY_VARS) <= set(env_names(c_out)), where
            for item in c_in.get("env") or []:
                if _merged_no_proxy(item, c_out["env"]):
                    continue  # the manifest's NO_PROXY entries first, then the profile's
                assert item in c_out["env"]
    # kubeadm specs: both drop-ins once, the tool's commands first, the manifest's after
    for doc_in, doc_out in zip(before, after, strict=True):
        found = targets.BUILT_IN.paths(doc_in, targets.KUBEADM) if isinstance(doc_in, dict) else ()
        path = found[0] if found else None
        if path is None:
            continue
        spec_in, spec_out = doc_in, doc_out
        for step in path:
            spec_in, spec_out = spec_in[step], spec_out[step]
        # in the lists of the kind's dialect row (kubeadm, EKS, ...)
        found_row = dialects.of_kind(*group_kind(doc_in))
        assert found_row is not None
        dialect, row = found_row
        if dialects.FILE_LIST not in dialect.writers or dialect.units:
            # a config patch (Talos), fields (MicroK8s) or a k0s unit's drop-in: their own
            # tests (test_talos, test_microk8s, test_k0smotron) say what they get; the
            # second pass and the removal below hold for them too
            continue
        files_key, commands_key = dialect.list_keys
        commands_in = spec_in.get(commands_key) or []
        if dialect.env_files:  # RKE2, K3s: the unit env file (K3s: none inline), exports
            paths = [f["path"] for f in spec_out.get(files_key) or []]
            wanted = 1 if dialect.env_file_inline else 0
            assert paths.count(dialect.env_files[row.level]) == wanted
            assert spec_out[commands_key][0].startswith("export HTTP_PROXY=")
            assert spec_out[commands_key][6:] == commands_in
            continue
        paths = [f["path"] for f in spec_out[files_key]]
        assert paths.count(NODES.containerd_dropin) == paths.count("/k.conf") == 1
        assert spec_out[commands_key][0] == "systemctl daemon-reload"
        assert spec_out[commands_key][8:] == commands_in
    # the first run only adds lines, but for those that hold an empty value it fills
    assert _removed_lines(text, out) <= _empty_value_lines(text) | _no_proxy_lines(text)
    # a second pass changes nothing; removal gives back the input byte for byte
    assert engine.process(out, REQUEST).text == out
    assert engine.process(out, REMOVE).text == text


def _merged_no_proxy(item: Any, env_out: list[Any]) -> bool:
    """Whether ``item`` is a NO_PROXY of the manifest that the output holds merged (keep):
    its entries first, each once, then the profile's (issue 31)."""
    from proxy_postrender.noproxy import syntax

    if not (isinstance(item, dict) and item.get("name") in ("NO_PROXY", "no_proxy")):
        return False
    if set(item) != {"name", "value"} or not isinstance(item["value"], str) or not item["value"]:
        return False
    (out,) = [i for i in env_out if i.get("name") == item["name"]][:1] or [None]
    if out is None or not isinstance(out.get("value"), str):
        return False
    mine = list(dict.fromkeys(e.lower() for e in syntax.split_value(item["value"])))
    got = [e.lower() for e in syntax.split_value(out["value"])]
    return got[: len(mine)] == mine


def _no_proxy_lines(text: str) -> set[str]:
    """The lines that hold a NO_PROXY value (or its line before, the name's)."""
    lines = text.splitlines()
    return {
        line
        for i, line in enumerate(lines)
        if any(n in "\n".join(lines[max(0, i - 2) : i + 1]) for n in ("NO_PROXY", "no_proxy"))
    }


def _removed_lines(before: str, after: str) -> set[str]:
    """The lines of ``before`` that ``after`` does not keep (or changes)."""
    a, b = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return {
        line
        for tag, i1, i2, _, _ in matcher.get_opcodes()
        if tag in ("delete", "replace")
        for line in a[i1:i2]
    }


def _empty_value_lines(text: str) -> set[str]:
    """Lines whose value is an empty or null collection (a comment may follow)."""
    return {line for line in text.splitlines() if _EMPTY_TOKEN.search(line)}


_EMPTY_TOKEN = re.compile(r"(?:^|:)[ \t]*(?:\{ *\}|\[ *\]|null|Null|NULL|~)[ \t]*(?:#.*)?\r?$")


# kinds whose spec the API server keeps immutable (Talos): a changed profile is refused
# for them by design (tests/test_talos.py), not replaced
_IMMUTABLE_KINDS = [row.kind for d in dialects.DIALECTS for row in d.kinds if row.immutable]
# kinds of rows that cannot read a Secret (a config patch, fields): secret mode is refused
_NO_SECRET_KINDS = [
    row.kind for d in dialects.DIALECTS if dialects.FILE_LIST not in d.writers for row in d.kinds
]


def _holds_kind(text: str, kinds: list[str]) -> bool:
    return any(re.search(rf"kind:\s*[\"']?{kind}\b", text) for kind in kinds)


@settings(max_examples=50, deadline=None)
@given(streams(), st.sampled_from(["http://other:8080", "http://u:%25x@h:1"]))
def test_changed_profile_replaces_only_what_was_injected(text: str, new_proxy: str) -> None:
    assume(not _holds_kind(text, _IMMUTABLE_KINDS))
    out = engine.process(text, REQUEST).text
    changed = Request(env=(("HTTP_PROXY", new_proxy), ("http_proxy", new_proxy)), nodes=NODES)
    again = engine.process(out, changed).text
    # byte for byte the same as injecting the new profile into the original
    assert again == engine.process(text, changed).text


PASSWORDS = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters="{}"),
    min_size=6,
    max_size=16,
).filter(lambda p: p.strip() and len(set(p)) > 3)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(streams(), PASSWORDS)
def test_with_a_secret_reference_no_password_reaches_the_output(text: str, password: str) -> None:
    from urllib.parse import quote

    assume(not _holds_kind(text, _NO_SECRET_KINDS))
    from proxy_postrender.pods.selection import WorkloadSettings

    def run(secret: str) -> str:
        url = f"http://build:{quote(secret, safe='')}@proxy.corp.example:3128"
        env = (("HTTP_PROXY", url), ("HTTPS_PROXY", url), ("NO_PROXY", ".svc"))
        request = Request(
            env=(*env, *((n.lower(), v) for n, v in env)),
            nodes=kubeadm.NodeSettings(
                "/etc/systemd/system/containerd.service.d/http-proxy.conf",
                None,
                credentials="secret",
                create_secret=False,
                password=True,
            ),
            pods=WorkloadSettings(secret_ref="proxy-credentials"),
        )
        return engine.process(text, request).text

    out = run(password)
    # A password can be a substring of text the tool writes anyway ("bootst" in
    # "node-bootstrap"): count it in runs with passwords of other characters. Their
    # quoted forms ("%C3%A9") hold ASCII too, so two of them: none is in both.
    others = [run(char * len(password)) for char in ("\u00e9", "\u00fc")]
    for form in {password, quote(password, safe=""), quote(password, safe="").replace("%", "%%")}:
        assert out.count(form) <= min(other.count(form) for other in others)
