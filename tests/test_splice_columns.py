"""A new key goes at the column of its mapping's own keys (issue 27, finding 1).

A mapping that merges another in (``<<: {image: busybox}``, or ``<<:`` and a block)
reads the merged pairs first, as key nodes at the merged mapping's places; after
``? `` a key node starts two columns right of the mapping's keys. The splicer and the
cheap proof (:func:`check.proved`) took the mapping's column from its first key node:
the container's ``env`` went into its own ``command`` script, the drop-ins and exports
of a KubeadmConfigTemplate into the chart's ``postKubeadmCommands``, or the output was
not YAML, and the proof vouched for it (exit 0, "injected").

Now the splicer takes the column from the mapping's own first token and a key written
there, and declines where it cannot tell; the proof declines merge keys, complex keys
and any key that is not a plain scalar at its mapping's column (the full re-read runs).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from proxy_postrender import engine, verify
from proxy_postrender.yamltext import check, libyaml, ops, splice
from proxy_postrender.yamltext.ops import AddKey
from proxy_postrender.yamltext.read import nodes_and_data
from proxy_postrender.yamltext.tree import MappingNode
from tests.test_properties import NODES, REQUEST

HEAD = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n"
SCRIPT = "set -e\necho start\nexec sleep 1d\n"
# the container's lines, at column 10 (under "- " at column 8)
INLINE_MERGE = """\
        - name: app
          <<: {image: busybox}
          command:
            - sh
            - -c
            - |
              set -e
              echo start
              exec sleep 1d
"""
MERGE_FIRST = """\
        - <<: {image: busybox}
          name: app
          command:
            - |
              set -e
              echo start
              exec sleep 1d
"""
BLOCK_MERGE = """\
        - <<:
            image: busybox
            imagePullPolicy: Always
          name: app
          command:
            - |
              set -e
              echo start
              exec sleep 1d
"""
BLOCK_MERGE_LAST = """\
        - name: app
          command:
            - |
              set -e
              echo start
              exec sleep 1d
          <<:
            image: busybox
"""
COMPLEX_KEY = """\
        - ? name
          : app
          image: busybox
          command:
            - |
              set -e
              echo start
              exec sleep 1d
"""
COMPLEX_KEY_LAST = """\
        - image: busybox
          command:
            - |
              set -e
              echo start
              exec sleep 1d
          ? name
          : app
"""
CONTAINERS = {
    "inline merge": INLINE_MERGE,
    "merge first": MERGE_FIRST,
    "block merge": BLOCK_MERGE,
    "block merge last": BLOCK_MERGE_LAST,
    "complex key": COMPLEX_KEY,
    "complex key last": COMPLEX_KEY_LAST,
}


def deployment(container: str) -> str:
    return HEAD + "    spec:\n      containers:\n" + container


KUBEADM = """\
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: workers
spec:
  template:
    spec:
      <<: {format: cloud-config}
      joinConfiguration:
        nodeRegistration:
          kubeletExtraArgs:
            cloud-provider: external
      postKubeadmCommands:
        - |
          set -e
          echo done > /var/log/joined
"""
KUBEADM_BLOCK_MERGE = KUBEADM.replace(
    "      <<: {format: cloud-config}\n", "      <<:\n        format: cloud-config\n"
)


def _run(text: str, monkeypatch: pytest.MonkeyPatch, full: bool) -> str:
    if full:
        monkeypatch.setenv(verify.FULL_CHECK, "1")
    else:
        monkeypatch.delenv(verify.FULL_CHECK, raising=False)
    return engine.process(text, REQUEST).text


def _lines_kept(before: str, after: str) -> bool:
    """Whether every line of ``before`` is in ``after``, in order (a splice, not a dump)."""
    found = iter(after.splitlines())
    return all(line in found for line in before.splitlines())


@pytest.mark.parametrize("name", list(CONTAINERS))
def test_a_container_with_a_merge_or_complex_key_gets_env_in_its_mapping(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The env goes into the container, its script stays as it was, and the output is
    the one the full re-read gives (before: the env lines inside the script, or no
    YAML, proved by the cheap check)."""
    text = deployment(CONTAINERS[name])
    out = _run(text, monkeypatch, full=False)
    assert out == _run(text, monkeypatch, full=True)
    (doc,) = libyaml.load_data(out)
    (container,) = doc["spec"]["template"]["spec"]["containers"]
    assert [e["name"] for e in container["env"]] == [n for n, _ in REQUEST.env]
    assert container["command"][-1] == SCRIPT
    assert container["name"] == "app" and container["image"] == "busybox"
    assert engine.process(out, REQUEST).text == out  # nothing left to add


@pytest.mark.parametrize("name", ["inline merge", "merge first", "block merge", "complex key"])
def test_the_splice_keeps_the_document_as_it_was(name: str) -> None:
    """Where the mapping's own last key is a plain one, the new key is spliced (every
    input line kept, the env at the container's column), not dumped."""
    text = deployment(CONTAINERS[name])
    out = engine.process(text, REQUEST).text
    assert _lines_kept(text, out)
    assert "\n          env:\n            - name: HTTP_PROXY\n" in out


@pytest.mark.parametrize("text", [KUBEADM, KUBEADM_BLOCK_MERGE], ids=["inline", "block"])
def test_a_kubeadm_spec_with_a_merge_key_gets_its_drop_ins_and_exports(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drop-ins and the exports go into the KubeadmConfigSpec, the chart's
    ``postKubeadmCommands`` script stays as it was (before: the tool's files and
    commands were lines of that script, run as root on every node)."""
    out = _run(text, monkeypatch, full=False)
    assert out == _run(text, monkeypatch, full=True)
    assert _lines_kept(text, out)
    (doc,) = libyaml.load_data(out)
    spec = doc["spec"]["template"]["spec"]
    assert spec["postKubeadmCommands"] == ["set -e\necho done > /var/log/joined\n"]
    assert spec["format"] == "cloud-config"
    assert [f["path"] for f in spec["files"]] == [NODES.containerd_dropin, NODES.kubelet_dropin]
    assert spec["preKubeadmCommands"][0] == "systemctl daemon-reload"
    assert any(c.startswith("export HTTPS_PROXY=") for c in spec["preKubeadmCommands"])


ENV = [{"name": "HTTP_PROXY", "value": "http://proxy:3128"}]
CONTAINER = ("spec", "template", "spec", "containers", 0)


def _evidence(text: str, op: AddKey) -> tuple[Any, Any]:
    """The node tree of ``text`` and its data with ``op`` made."""
    ((root, data),) = nodes_and_data(text)
    expected = copy.deepcopy(data)
    ops.apply(expected, [op])
    return root, expected


def _first_key_column(text: str, root: Any, op: AddKey) -> int:
    """The column of the first key node of the mapping ``op`` adds to."""
    mapping = splice.resolve(root, op.path)
    assert isinstance(mapping, MappingNode)
    return splice.column(text, mapping.value[0][0].start)


def _old_splice(text: str, root: Any, op: AddKey) -> splice.Edit:
    """The splice the splicer made before the fix: at the column of the first key node,
    after the content of the last pair."""
    col = _first_key_column(text, root, op)
    at = splice.next_line_start(text, splice.content_end(splice.resolve(root, op.path)))
    lines = splice.block_lines({op.key: op.value})
    return splice.Edit(at, at, "".join(" " * col + line + "\n" for line in lines))


@pytest.mark.parametrize("name", list(CONTAINERS))
def test_the_proof_declines_merge_and_complex_keys(name: str) -> None:
    """The cheap proof proves neither the splice made before the fix (at the column of a
    merged key, or of the key after "? ": the full re-read refuses it) nor the right
    one: it leaves both to the full re-read."""
    text = deployment(CONTAINERS[name])
    op = AddKey(CONTAINER, "env", ENV)
    root, expected = _evidence(text, op)
    wrong = _old_splice(text, root, op)
    made = splice.apply_edits(text, [wrong])
    if _first_key_column(text, root, op) != 10:
        assert not verify.equivalent(made, [expected])  # the old splice was wrong
    assert not check.proved(text, made, root, [(op, [wrong])], expected)
    trace: check.Trace = []
    try:
        edits = splice.edits_for(text, root, [op], splice.detect_style(text, root), "\n", trace)
    except splice.Unsupported:
        return  # declined: the round-trip dump writes it
    right = splice.apply_edits(text, edits)
    assert verify.equivalent(right, [expected])
    assert not check.proved(text, right, root, trace, expected)


def test_the_proof_declines_the_kubeadm_splice_at_the_merged_column() -> None:
    """The finding's KubeadmConfigTemplate: the proof vouched for files written into the
    ``postKubeadmCommands`` script."""
    op = AddKey(("spec", "template", "spec"), "files", [{"path": "/etc/x", "content": "y"}])
    root, expected = _evidence(KUBEADM, op)
    wrong = _old_splice(KUBEADM, root, op)
    made = splice.apply_edits(KUBEADM, [wrong])
    assert not verify.equivalent(made, [expected])
    assert not check.proved(KUBEADM, made, root, [(op, [wrong])], expected)


@pytest.mark.parametrize(
    ("text", "path"),
    [
        # a complex key of a mapping whose other keys are plain
        ("? b\n: 2\na: 1\n", ()),
        # a quoted key
        ('a: 1\n"b": 2\n', ()),
        # a plain key that is no string
        ("a: 1\n2: b\n", ()),
    ],
)
def test_the_proof_declines_keys_that_are_not_plain_at_their_column(
    text: str, path: tuple[str, ...]
) -> None:
    """A key that is not a plain scalar at the mapping's own column is not proved, even
    where the splice is right (the full re-read accepts it)."""
    op = AddKey(path, "c", "3")
    root, expected = _evidence(text, op)
    trace: check.Trace = []
    edits = splice.edits_for(text, root, [op], splice.detect_style(text, root), "\n", trace)
    made = splice.apply_edits(text, edits)
    assert made == text + "c: '3'\n" or made == text + 'c: "3"\n'
    assert verify.equivalent(made, [expected])
    assert not check.proved(text, made, root, trace, expected)
    plain = "a: 1\nb: 2\n"
    root, expected = _evidence(plain, op)
    trace = []
    edits = splice.edits_for(plain, root, [op], splice.detect_style(plain, root), "\n", trace)
    assert check.proved(plain, splice.apply_edits(plain, edits), root, trace, expected)


@pytest.mark.parametrize(
    ("text", "merge"),
    [
        ("a:\n  <<: {b: 1}\n", True),
        ("- <<: *x\n", True),
        ("a: {<<: {b: 1}}\n", True),
        ("a: [1, {<<: {b: 1}}]\n", True),
        ("? <<\n: {b: 1}\n", True),
        ("a:\n  << : {b: 1}\n", True),
        ("a: |\n  cat <<EOF\n  x\n  EOF\n", False),
        ("a: x << y\n", False),
        ('a: "<<: b"\n', False),
    ],
)
def test_a_merge_key_is_left_to_the_full_read(text: str, merge: bool) -> None:
    """A document or snippet that may hold a merge key is not proved: the mapping that
    holds it reads the merged pairs as its own, at other places (a heredoc is none)."""
    assert check._odd(text) is merge


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # the mapping's only own key is "<<": its pairs are all merged in
        ("x:\n  - <<: {name: a,\n      image: b}\n", "no key of the mapping's own"),
        # ... one of them written at the mapping's column, but not the last
        ("x:\n  - <<: {\n    name: a, image: b}\n", "the last pair"),
        # a flow collection that goes on after the last pair, at the mapping's column
        ("x:\n  - <<: {name: a,\n    image: b\n    }\n", "more of the collection"),
        # a key after a complex key's value indicator
        ("? k\n: name: a\n", "does not start its line"),
    ],
)
def test_the_splicer_declines_what_it_cannot_place(text: str, reason: str) -> None:
    """Where the column or the end of the mapping's own entries cannot be told, the
    splicer declines (the round-trip dump writes the document, verified in full)."""
    ((root, _),) = libyaml.compose(text)
    path: tuple[Any, ...] = ("x", 0) if text.startswith("x:\n  -") else ("x",)
    if text.startswith("?"):
        path = ("k",)
    with pytest.raises(splice.Unsupported, match=reason):
        splice.edits_for(text, root, [AddKey(path, "env", ENV)], splice.Style(), "\n")


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        ("x: &a\n  name: a\n", ("x",), "x: &a\n  name: a\n  env: v\ny: 2\n"),
        (
            "x: &a !t  # c\n\n  # c\n  name: a\n",
            ("x",),
            "x: &a !t  # c\n\n  # c\n  name: a\n  env: v\ny: 2\n",
        ),
        (  # the first key's own anchor: where the mapping's entries start
            "x:\n  - &a name: a\n    image: b\n",
            ("x", 0),
            "x:\n  - &a name: a\n    image: b\n    env: v\ny: 2\n",
        ),
        (
            "c:\n- &c\n  <<:\n    image: x\n  name: app\n",
            ("c", 0),
            "c:\n- &c\n  <<:\n    image: x\n  name: app\n  env: v\ny: 2\n",
        ),
    ],
)
def test_a_mapping_with_an_anchor_or_tag_takes_the_column_of_its_next_line(
    text: str, path: tuple[Any, ...], expected: str
) -> None:
    """After an anchor or a tag, the mapping's entries start on the next line that holds
    any: its column is theirs (not that of the anchor, nor of a merged key)."""
    text += "y: 2\n"
    ((root, _),) = libyaml.compose(text)
    edits = splice.edits_for(text, root, [AddKey(path, "env", "v")], splice.Style(), "\n")
    assert splice.apply_edits(text, edits) == expected


def test_the_last_pair_decides_which_key_is_read() -> None:
    """A key both merged in and the mapping's own: the own one (after) is read, and is
    the one replaced."""
    text = "a:\n  <<: {b: old}\n  b: mine\n"
    ((root, data),) = libyaml.compose(text)
    assert data == {"a": {"b": "mine"}}
    op = ops.SetValue(("a", "b"), "new")
    made = splice.apply_edits(text, splice.edits_for(text, root, [op], splice.Style(), "\n"))
    assert made == "a:\n  <<: {b: old}\n  b: new\n"
    assert libyaml.load_data(made) == [{"a": {"b": "new"}}]
