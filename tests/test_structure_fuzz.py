"""Structure-mutation fuzzing of every command over the golden inputs (issue 27, finding 8).

tests/test_fuzz.py mutates characters; this file mutates the objects. Every golden
input (and every golden output, whose ownership records ``--remove`` reads) is read,
one to three of its values are changed in shape (a mapping or list becomes a scalar, a
scalar a mapping or list, a key goes, a type changes, a name or a record gets an odd
string: escapes, surrogate escapes, control characters, line breaks, record syntax),
and the stream is written again, in block style or as JSON. Each mutated stream runs
through one of the command's modes, in this process (``entry.main``, as the leak
harness does: a subprocess costs 50 ms): the filter plain, with ``--remove``,
``--strict`` and ``--report``; ``patches``; ``noproxy check --stream -``.

The property (SPEC 5.4): never "internal error" and never a traceback; the exit code
is 0, 1 or 2; on a non-zero exit nothing on stdout and one line on stderr.

``make test`` runs STRUCTURE_FUZZ_EXAMPLES examples (default 1000, about 10 s of CPU);
``make fuzz`` runs FUZZ_EXAMPLES of them (default 20000).
"""

from __future__ import annotations

import io
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from proxy_postrender.cli import entry
from proxy_postrender.yamltext import libyaml
from tests.golden import load_cases
from tests.helpers import GOLDEN

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", os.environ.get("STRUCTURE_FUZZ_EXAMPLES", "1000")))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FALLBACK_PROXY = ("--http-proxy", "http://proxy.corp.example:3128")
# a stand-in the writer keeps as it is, turned into a lone surrogate afterwards: the
# byte 0xff in the stream (invalid UTF-8, read with surrogateescape)
RAW_BYTE = "RAWBYTE0XFF"


@dataclass(frozen=True)
class Seed:
    name: str
    path: Path  # the case's directory: profiles name files relative to it
    profile: str | None
    args: tuple[str, ...]  # the case's arguments (the profile first, when it has one)
    docs: tuple[Any, ...]


def _seeds() -> list[Seed]:
    seeds = []
    for case in load_cases():
        profile = case.args[0] if case.args and not case.args[0].startswith("-") else None
        for name in ("input.yaml", "expected.yaml"):
            path = case.path / name
            if not path.exists():
                continue
            try:
                docs = libyaml.load_data(path.read_bytes().decode("utf-8-sig"))
            except Exception:  # an input that is no YAML: the byte fuzzer's
                continue
            seeds.append(Seed(f"{case.name}/{name}", case.path, profile, case.args, tuple(docs)))
    return seeds


SEEDS = _seeds()

ODD = [
    "\x1b[31m",
    "\x00",
    "\x07",
    "\t",
    "\n",
    "\r",
    "\u2028",
    "\x85",
    "\ufeff",
    "\u202e",
    "\\",
    '"',
    "'",
    "\\u00",
    "%u00D800",
    "%0A",
    "%",
    ";",
    "=",
    ",",
    ":",
    "#",
    "${HOME}",
    "é",
    "*",
    "0.0.0.0/0",
    "10.0.0.0/8",
    "p0.d0=patches:1",
    "-",
    " ",
    RAW_BYTE,
]
# what a record (the tool's annotations, read by --remove and re-runs) may be given:
# spellings, separators and ClusterClass patch ranges it must refuse or read strictly
RECORD_ODD = [
    "%u00D800",
    "%uD800",
    "%ZZ",
    "%",
    ":_%0",
    "~",
    "+null-env:",
    "+empty-env",
    "p0.d0=patches:1",
    "p0.d00.j0=patches:1",
    "=patches:-1",
    ";",
    "=",
    ",",
    RAW_BYTE,
]
SCALARS: list[Any] = ["x", "", 5, 0, -1, 1.5, True, False, None, "10.0.0.0/8", "*", "null", "[]"]
NAME_KEYS = {"name", "namespace", "generateName", "kind", "apiVersion", "path", "selector"}


def _places(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``data`` (a key of a mapping, an index of a list), depth first."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            found.append((*path, key))
            found.extend(_places(value, (*path, key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found.append((*path, index))
            found.extend(_places(value, (*path, index)))
    return found


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def _odd(rnd: Random, text: str) -> str:
    """``text`` with an odd piece put in (or over it)."""
    piece = rnd.choice(ODD)
    if rnd.random() < 0.5 or not text:
        return piece if rnd.random() < 0.5 else text + piece
    at = rnd.randint(0, len(text))
    return text[:at] + piece + text[at:]


def _changed(rnd: Random, value: Any, key: Any) -> Any:
    """``value`` in another shape or type (or with an odd piece, for a name or a record)."""
    record = isinstance(value, str) and str(key).startswith("proxy-postrender.io/")
    if record and rnd.random() < 0.6:
        parts = str(value).split(";")
        k = rnd.randrange(len(parts))
        piece = rnd.choice(RECORD_ODD)
        if rnd.random() < 0.5:  # as the spelling of the entry's last flag
            flag = rnd.choice(["", ",+null-env", ",+empty-env"]) if "=" in parts[k] else ""
            parts[k] = parts[k].split(":", 1)[0] + flag + ":" + piece
        else:
            at = rnd.randint(0, len(parts[k]))
            parts[k] = parts[k][:at] + piece + parts[k][at:]
        return ";".join(parts)
    if isinstance(value, str) and (key in NAME_KEYS or rnd.random() < 0.3):
        return _odd(rnd, value)
    action = rnd.choice(["scalar", "mapping", "list", "retype"])
    if action == "scalar":
        return rnd.choice(SCALARS)
    if action == "mapping":
        return rnd.choice([{}, {"x": value}, {_odd(rnd, "k"): "v"}])
    if action == "list":
        return rnd.choice([[], [value], ["x", 5], [{"name": _odd(rnd, "n")}]])
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return len(value) if rnd.random() < 0.5 else value == ""
    if isinstance(value, list):
        return {str(i): item for i, item in enumerate(value)}
    if isinstance(value, dict):
        return list(value.values())
    return "x"


def mutate(rnd: Random, docs: list[Any]) -> list[Any]:
    """``docs`` (changed in place) after one to three structural changes, each at a
    place chosen uniformly (hypothesis's own draws favour the first places)."""
    for _ in range(rnd.randint(1, 3)):
        index = rnd.randrange(len(docs))
        places = _places(docs[index])
        if not places:
            docs[index] = rnd.choice(SCALARS)
            continue
        records = [p for p in places if str(p[-1]).startswith("proxy-postrender.io/")]
        # a record (what --remove and re-runs read) a third of the time where there is one
        path = rnd.choice(records if records and rnd.random() < 0.3 else places)
        parent = _at(docs[index], path[:-1])
        step = path[-1]
        action = rnd.choice(["change", "change", "drop", "rename"])
        if action == "drop":
            del parent[step]
        elif action == "rename" and isinstance(parent, dict):
            renamed = _odd(rnd, str(step))
            parent[renamed] = parent.pop(step)
        else:
            parent[step] = _changed(rnd, parent[step], step)
    return docs


_BLOCK = YAML(typ="safe", pure=True)
_BLOCK.default_flow_style = False
_BLOCK.allow_unicode = True


def write(rnd: Random, docs: list[Any]) -> bytes:
    """The stream of ``docs``, each after a ``# Source:`` line, in block style or JSON."""
    as_json = rnd.random() < 0.5
    parts = []
    for index, doc in enumerate(docs):
        parts.append(f"---\n# Source: chart/templates/t{index}.yaml\n")
        if as_json:
            parts.append(json.dumps(doc, ensure_ascii=False) + "\n")
        else:
            buffer = io.StringIO()
            _BLOCK.dump(doc, buffer)
            parts.append(buffer.getvalue())
    text = "".join(parts).replace(RAW_BYTE, "\udcff")
    return text.encode("utf-8", "surrogateescape")


MODES = ("plain", "remove", "strict", "report", "patches", "noproxy-check")


def arguments(seed: Seed, mode: str) -> list[str]:
    proxy = ["--profile", seed.profile] if seed.profile else list(FALLBACK_PROXY)
    if mode == "patches":
        return ["patches", *proxy]
    if mode == "noproxy-check":
        if seed.profile is None:
            return ["noproxy", "check", "--stream", "-", "--value", "10.0.0.0/8,.svc"]
        return ["noproxy", "check", "--stream", "-", *proxy]
    base = list(seed.args) if seed.args else list(FALLBACK_PROXY)
    extra = {"plain": [], "remove": ["--remove"], "strict": ["--strict"], "report": ["--report"]}
    return [*base, *extra[mode]]


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: bytes
    stderr: str


def run_in_process(args: list[str], stdin: bytes, cwd: Path) -> Outcome:
    """``proxy-postrender ARGS`` in this process, as the console script runs it."""
    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8")
    code = 0
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith(("PROXY_", "HELM_", "ARGOCD_"))]:
            patch.delenv(name)
        patch.chdir(cwd)
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        patch.setattr(sys, "stdout", stdout)
        patch.setattr(sys, "stderr", err)
        try:
            entry.main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 99
        except Exception as exc:  # a traceback would reach the user: the property fails
            err.write(f"Traceback: {type(exc).__name__}: {exc}\n")
            code = 99
        stdout.flush()
        written = out.getvalue()
    stdout.detach()
    return Outcome(code, written, err.getvalue())


def check(outcome: Outcome, args: list[str], stream: bytes) -> None:
    """The property of every run (SPEC 5.4)."""
    where = f"\nargs: {args}\nstream: {stream!r}"
    assert "internal error" not in outcome.stderr, outcome.stderr + where
    assert "Traceback" not in outcome.stderr, outcome.stderr + where
    assert outcome.code in (0, 1, 2), f"exit {outcome.code}: {outcome.stderr}{where}"
    if outcome.code:
        assert outcome.stdout == b"", f"stdout on exit {outcome.code}{where}"
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1, f"{len(lines)} lines on stderr: {outcome.stderr}{where}"


@st.composite
def cases(draw: st.DrawFn) -> tuple[Seed, str, bytes]:
    rnd = draw(st.randoms(use_true_random=True))
    seed = rnd.choice(SEEDS)
    docs = mutate(rnd, json.loads(json.dumps(list(seed.docs), default=str)))
    return seed, rnd.choice(MODES), write(rnd, docs)


@SETTINGS
@given(cases())
def test_mutated_structures_never_end_in_an_internal_error(case: tuple[Seed, str, bytes]) -> None:
    seed, mode, stream = case
    args = arguments(seed, mode)
    check(run_in_process(args, stream, seed.path), args, stream)


def test_the_property_refuses_what_it_is_there_to_refuse() -> None:
    """The check catches each way a run can break the contract (and passes a warning)."""
    one_line = "proxy-postrender: error: document 1 (line 1): bad\n"
    broken = [
        Outcome(1, b"", "proxy-postrender: error: internal error (TypeError); please report it\n"),
        Outcome(1, b"", "Traceback: KeyError: 'x'\n"),
        Outcome(3, b"", one_line),
        Outcome(1, b"apiVersion: v1\n", one_line),
        Outcome(2, b"", one_line + one_line),
        Outcome(1, b"", ""),
    ]
    for outcome in broken:
        with pytest.raises(AssertionError):
            check(outcome, [], b"")
    check(Outcome(0, b"apiVersion: v1\n", "warning: a\nwarning: b\n"), [], b"")
    check(Outcome(1, b"", one_line), [], b"")


CA_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        volumeMounts: MOUNTS
      volumes: VOLUMES
"""


@pytest.mark.parametrize(
    ("mounts", "volumes", "says"),
    [
        ("5", "[]", "volumeMounts is not a list"),
        ("[]", "5", "volumes is not a list"),
        ("true", "{a: b}", "volumeMounts is not a list"),
    ],
)
def test_found_a_ca_mount_list_of_another_type_is_a_one_line_error(
    mounts: str, volumes: str, says: str
) -> None:
    """Found by this fuzzer: with caBundle.workloads, ``volumeMounts: 5`` (or ``volumes``)
    ended in "internal error (TypeError)" (pods/workloads.py, _check_mount_free and
    _check_volume_free iterated it)."""
    stream = CA_DEPLOYMENT.replace("MOUNTS", mounts).replace("VOLUMES", volumes).encode()
    args = ["profile.yaml"]
    outcome = run_in_process(args, stream, GOLDEN / "ca-workloads")
    check(outcome, args, stream)
    assert outcome.code == 1
    assert "document 1 (line 1, Deployment shop/web)" in outcome.stderr and says in outcome.stderr
