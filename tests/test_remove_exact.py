"""``--remove`` on the output gives back the input byte for byte (SPEC 5, invariant 9) in
the layouts issue 27 found it did not (finding 12), and in those its property test found
next to them.

- A line break other than LF (U+2028, U+2029, NEL, a CR alone), which YAML readers
  (libyaml, go-yaml) take as one: the splicer counted lines from LF alone, put the new
  lines at the wrong column, and the round-trip fallback re-indented the document.
- A block scalar (``hostname: >``) that ends a stream without a final newline, where the
  tool adds a key after it (``volumes`` of ``caBundle.workloads``): a line after it gives
  it a line break, so the fallback wrote ``>-``. The new key now goes before the last
  one; where nothing can go before it (a list's items), the run refuses.
- Blank lines at the end of a kubeadm document (EKS Anywhere writes them) after the
  tool's drop-in files: a block scalar's node takes them in, and deleting the tool's
  files took them along.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from proxy_postrender import engine
from proxy_postrender.errors import InputError
from proxy_postrender.request import Request
from proxy_postrender.yamltext import libyaml
from tests.helpers import GOLDEN, SHARED_PROFILE, run_cli
from tests.test_properties import NODES, REMOVE, REQUEST

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    a: b
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        env:
        - name: A
          value: b
        - name: EMPTY
          value: null
      - name: side
        image: x
        env: null
"""
KUBEADM = """\
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: cp
spec:
  kubeadmConfigSpec:
    preKubeadmCommands:
    - echo hi
    files:
    - path: /x
      content: y
"""
BREAKS = ["\u2028", "\u2029", "\x85", "\r"]


def _round_trip(text: str, request: Request = REQUEST) -> str:
    out = engine.process(text, request).text
    assert engine.process(out, request).text == out
    return engine.process(out, REMOVE).text


@pytest.mark.parametrize("brk", BREAKS, ids=["LS", "PS", "NEL", "CR"])
@pytest.mark.parametrize("doc", [DEPLOYMENT, KUBEADM], ids=["deployment", "kubeadm"])
def test_remove_is_exact_with_another_line_break_at_any_line(doc: str, brk: str) -> None:
    lines = doc.split("\n")
    for at in range(len(lines) - 1):
        text = "\n".join(lines[: at + 1]) + brk + "\n".join(lines[at + 1 :])
        assert _round_trip(text) == text, (at, text)


def test_the_reported_line_separator_after_metadata_is_spliced_and_removed_exactly() -> None:
    # no annotations: the tool adds the key after "name", at the column after the U+2028
    text = DEPLOYMENT.replace("metadata:\n", "metadata:\u2028", 1).replace(
        "  annotations:\n    a: b\n", ""
    )
    proc = run_cli([str(SHARED_PROFILE)], text.encode())
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert "metadata:\u2028  name: web\n" in out  # spliced, not re-indented
    back = run_cli([str(SHARED_PROFILE), "--remove"], proc.stdout)
    assert back.returncode == 0, back.stderr
    assert back.stdout == text.encode()


def test_an_empty_value_ended_by_a_line_separator_comes_back_as_written() -> None:
    text = DEPLOYMENT.replace("env: null\n", "env: ~\u2028        args: [x]\n")
    assert _round_trip(text) == text


def _ca_case(tmp_path: Path) -> Path:
    for name in ("profile.yaml", "corp-ca.pem"):
        shutil.copy(GOLDEN / "ca-workloads" / name, tmp_path / name)
    return tmp_path


HOSTNAME_LAST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
      hostname: >
        foo"""


@pytest.mark.parametrize("header", [">", "|", "|+", ">2"])
def test_a_final_block_scalar_without_a_final_newline_survives_ca_workloads(
    tmp_path: Path, header: str
) -> None:
    case = _ca_case(tmp_path)
    text = HOSTNAME_LAST.replace("hostname: >", f"hostname: {header}")
    proc = run_cli(["profile.yaml"], text.encode(), cwd=case)
    assert proc.returncode == 0, proc.stderr
    assert f"hostname: {header}\n        foo\n---" in proc.stdout.decode()
    back = run_cli(["profile.yaml", "--remove"], proc.stdout, cwd=case)
    assert back.returncode == 0, back.stderr
    assert back.stdout == text.encode()


def test_items_after_a_final_block_scalar_are_refused_not_rewritten() -> None:
    """Env entries go after the last one, a block scalar that ends the stream: no place
    keeps its value and its ``>``; the run fails naming the document."""
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
        "  - name: app\n    image: nginx\n    env:\n    - name: A\n      value: >\n        foo"
    )
    with pytest.raises(InputError, match=r"block scalar .* without a final newline"):
        engine.process(text, REQUEST)
    proc = run_cli([str(SHARED_PROFILE)], text.encode())
    assert proc.returncode == 1 and proc.stdout == b""
    (line,) = proc.stderr.decode().splitlines()
    assert "document 1 (line 1, Pod p)" in line and "end the document with a newline" in line


# EKS Anywhere's generated KubeadmControlPlane: preKubeadmCommands before files, and
# blank lines before the next document
EKSA = """\
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlane
metadata:
  name: mgmt
  namespace: eksa-system
spec:
  kubeadmConfigSpec:
    preKubeadmCommands:
    - hostname "{{ ds.meta_data.hostname }}"
    - echo "::1         ipv6-localhost ipv6-loopback" >/etc/hosts
    files:
    - content: |
        apiVersion: v1
        kind: Pod
      owner: root:root
      path: /etc/kubernetes/manifests/kube-vip.yaml
    users:
    - name: ec2-user
{tail}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: after
"""


@pytest.mark.parametrize("tail", ["", "\n", "\n\n", "  \n"], ids=["none", "one", "two", "spaces"])
@pytest.mark.parametrize("users", [True, False], ids=["users-last", "files-last"])
def test_blank_lines_after_a_kubeadm_spec_survive_remove(tail: str, users: bool) -> None:
    text = EKSA.replace("{tail}\n", tail)
    if not users:
        text = text.replace("    users:\n    - name: ec2-user\n", "")
    proc = run_cli([str(SHARED_PROFILE)], text.encode())
    assert proc.returncode == 0, proc.stderr
    back = run_cli([str(SHARED_PROFILE), "--remove"], proc.stdout)
    assert back.returncode == 0, back.stderr
    assert back.stdout.decode() == text


CHANGED = Request(
    env=(("HTTP_PROXY", "http://other:8080"), ("http_proxy", "http://other:8080")), nodes=NODES
)


@pytest.mark.parametrize("end", ["", "\n\n"], ids=["no-final-newline", "blank-line"])
def test_a_changed_profile_replaces_drop_ins_at_the_end_of_the_text(end: str) -> None:
    """Found by the property test once it wrote these layouts: the tool's drop-ins end the
    text; the deleted ones took one line break too few (no final newline) or the new ones
    went after the blank line (blank line)."""
    text = KUBEADM.replace("    files:\n    - path: /x\n      content: y\n", "").rstrip("\n")
    text += end
    out = engine.process(text, REQUEST).text
    assert engine.process(out, CHANGED).text == engine.process(text, CHANGED).text
    assert engine.process(out, REMOVE).text == text


# a literal block scalar that ends a container: its last lines hold only spaces, more
# of them (8) than its indentation (6), so they are its content ("foo\n  \n"); the
# blank line after them holds fewer (2), and is no content of it
SPACES_IN_SCALAR = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
    "  - name: c\n    image: busybox\n    args: |\n      foo\n        \n  \n"
    "  - name: d\n    image: busybox\n"
)


@pytest.mark.parametrize("final_newline", [True, False])
def test_lines_of_spaces_that_are_a_scalars_content_stay_in_it(final_newline: bool) -> None:
    """Found in review: lines of white space after a block scalar were all taken for the
    input's blank lines, so the tool's lines went into the scalar (its value changed,
    the document was dumped, or refused without a final newline). Lines of more spaces
    than the scalar's indentation are its content: the new lines go after them, and
    only before the lines that are blank."""
    # without a final newline: the scalar ends the text, its last line of spaces too
    text = SPACES_IN_SCALAR if final_newline else SPACES_IN_SCALAR.split("  \n  - name: d")[0]
    result = engine.process(text, REQUEST)
    assert [o.method for o in result.changed] == ["splice"]
    out = result.text
    (doc,) = libyaml.load_data(out)
    assert doc["spec"]["containers"][0]["args"] == "foo\n  \n"  # as in the input
    assert libyaml.load_data(text)[0]["spec"]["containers"][0]["args"] == "foo\n  \n"
    if final_newline:
        assert "    args: |\n      foo\n        \n    env:\n" in out
    back = engine.process(out, REMOVE)
    assert back.text == text


@pytest.mark.parametrize("header", [">", "|-", "|"])
def test_a_crlf_document_that_ends_the_stream_comes_back_exactly(
    tmp_path: Path, header: str
) -> None:
    """Found in an adversarial test: a CR LF document at the end of an unterminated
    stream got the tool's documents after an LF, and ``--remove`` left its last line
    ending in a CR. The tool's line break before its documents is now the document's."""
    case = _ca_case(tmp_path)
    text = HOSTNAME_LAST.replace("hostname: >", f"hostname: {header}").replace("\n", "\r\n")
    proc = run_cli(["profile.yaml"], text.encode(), cwd=case)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert "\r\n---\napiVersion: v1\nkind: ConfigMap" in out
    assert "\n---" not in out.replace("\r\n---", "")
    again = run_cli(["profile.yaml"], proc.stdout, cwd=case)
    assert again.stdout == proc.stdout
    back = run_cli(["profile.yaml", "--remove"], proc.stdout, cwd=case)
    assert back.returncode == 0, back.stderr
    assert back.stdout == text.encode()


@pytest.mark.parametrize("limit", [None, 1])
def test_the_output_takes_back_the_line_break_it_gave(limit: int | None) -> None:
    """In memory and in its file: the line break the tool writes before its documents
    is the text's own, and dropping it takes it whole (a CR alone at the end of an LF
    text is the input's, and stays)."""
    from proxy_postrender.yamltext import spool

    for text, expected in (("a: 1\r\nb: 2", "\r\n"), ("a: 1\nb: 2", "\n"), ("b: 2", "\n")):
        with spool.Output(memory_limit=limit) as out:
            out.write(text)
            assert out.line_break() == expected
            out.write(expected)
            out.drop_final_newline()
            assert "".join(s.text for s in out.segments()) == text
    with spool.Output(memory_limit=limit) as out:
        out.write("a: 1\nb: 2\r")
        out.write("\n")
        out.drop_final_newline()
        assert "".join(s.text for s in out.segments()) == "a: 1\nb: 2\r"


@pytest.mark.parametrize(
    "text",
    [
        # found by the property test_changed_profile_replaces_only_what_was_injected
        "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: a\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: a\n        image: x\n"
        "        env: null\u2028        workingDir: |\n          /srv",
        "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\u2028kind: KubeadmControlPlane\n"
        "metadata:\n  name: a\nspec:\n  kubeadmConfigSpec:\n    format: cloud-config",
    ],
)
def test_a_changed_profile_keeps_the_inputs_other_line_breaks(text: str) -> None:
    """The tool's last lines before an input's LS took it along when a changed profile
    deleted them (the LS became an LF), or the run was refused; now the LF before them
    goes, and the result is what the new profile gives the input."""
    changed = Request(env=(("HTTP_PROXY", "http://other:8080"),), nodes=NODES)
    out = engine.process(text, REQUEST).text
    assert engine.process(out, changed).text == engine.process(text, changed).text
    assert engine.process(out, REMOVE).text == text


@pytest.mark.parametrize("null", ["null", "~", "Null", "NULL", "null  # none yet", "~\n"])
@pytest.mark.parametrize("kind", ["KubeadmConfigTemplate", "KThreesConfigTemplate"])
def test_a_null_level_the_tool_filled_comes_back_as_it_was_written(null: str, kind: str) -> None:
    """``spec: null`` came back as ``spec:`` (the record said only that it was null): the
    upstream K3s docker quickstart ships one; the record now keeps the spelling."""
    version = "v1beta1" if kind.startswith("Kubeadm") else "v1beta2"
    text = (
        f"apiVersion: bootstrap.cluster.x-k8s.io/{version}\nkind: {kind}\n"
        f"metadata:\n  name: w\nspec:\n  template:\n    spec: {null}"
    )
    out = engine.process(text, REQUEST).text
    assert out != text
    assert engine.process(out, REMOVE).text == text
