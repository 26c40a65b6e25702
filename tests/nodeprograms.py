"""Run a node's bootstrap output through the real programs: cloud-init, sh, bash, systemd.

Used by tests/test_node_programs.py. A node here is one bootstrap object of the tool's
output (a KubeadmConfig, an RKE2ConfigTemplate, ...): its files (``contentFrom``
resolved from the Secret in the same output) and its commands, of which the first
``tool_commands`` are the tool's (the "command prefix" writer).

- cloud-init: ``cloud-init devel render`` (the Jinja pass cloud-init makes over user
  data that starts with ``## template: jinja``, as Cluster API's does) and then
  ``cloud-init schema --config-file`` on what it rendered; its own ``write_files``
  (``cloudinit.config.cc_write_files``) writes the files into a temporary root, and its
  own ``util.shellify`` makes the runcmd script (``#!/bin/sh``: dash on Debian/Ubuntu).
- sh and bash run the tool's commands from that script (file paths moved under the
  root; ``systemctl`` and ``sleep`` are stubs that do nothing) and print the variables.
- systemd: ``systemd-analyze verify`` on stand-in units with the drop-ins, and
  ``systemd --test --system`` (as nobody: systemd refuses test mode as root) dumps each
  unit with its ``Environment=`` values as systemd parsed them.

A missing program fails the tests that need it (``require``), in CI and elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from proxy_postrender import dialects
from tests import cloudconfig

ANNOTATION = "proxy-postrender.io/node-bootstrap"
SYSTEMD = "/lib/systemd/systemd"
NOBODY = "65534"
# cloud-init's own functions, run by the system's Python (the Debian package's), once
# for all the nodes of an output: the Jinja pass of its user-data handler (what
# `cloud-init devel render` runs), the schema check of `cloud-init schema --config-file`,
# the write_files module, and the runcmd module's shellify
SESSION = r"""
import json, os, sys
from cloudinit import util
from cloudinit.config import cc_write_files
from cloudinit.config.schema import get_schema, validate_cloudconfig_file
from cloudinit.handlers.jinja_template import render_jinja_payload_from_file
out, schema = [], get_schema()
for job in json.load(sys.stdin):
    root, files, commands = job["root"], job["files"], job["commands"]
    os.makedirs(root)
    result = {}
    if job["user_data"] is not None:
        rendered = render_jinja_payload_from_file(
            job["user_data"], root + "/user-data", job["instance"])
        util.write_file(root + "/rendered", rendered)
        validate_cloudconfig_file(root + "/rendered", schema)
        config = util.load_yaml(rendered)
        files = config["write_files"][: len(files)]
        commands = config["runcmd"][: len(commands)]
        result["rendered"] = rendered
    cc_write_files.write_files(
        "write_files", [dict(f, path=root + f["path"]) for f in files], "root:root")
    util.write_file(root + "/runcmd", util.shellify(commands), 0o700)
    out.append(dict(result, files=files, commands=commands))
json.dump(out, sys.stdout)
"""
INSTANCE = {"ds": {"meta_data": {"hostname": "node-1"}}}


def require(program: str) -> str:
    """The path of ``program``; a failure (never a skip) when it is missing."""
    found = shutil.which(program) or (program if os.access(program, os.X_OK) else None)
    if found is None:
        pytest.fail(f"{program} is missing: tools/install-clients.sh installs it (make test)")
    return found


class Node:
    """One bootstrap object's files, commands and the number of the tool's commands."""

    def __init__(self, doc: Mapping[str, Any], secrets: Mapping[Any, Any]) -> None:
        meta = doc["metadata"]
        found = dialects.of_kind(doc["apiVersion"].split("/")[0], doc["kind"])
        assert found is not None, doc["kind"]
        dialect = found[0].at(doc["apiVersion"])
        spec: Any = doc
        for step in found[1].spec_path:
            spec = spec[step]
        self.label = f"{doc['kind']} {meta['name']}"
        self.kind = doc["kind"]
        self.dialect = dialect.name
        self.spec: Mapping[str, Any] = spec
        self.namespace = meta.get("namespace", "default")
        self.secrets = secrets
        self.files = cloudconfig.resolve_files(
            spec.get(dialect.files_key) or [], self.namespace, secrets, dialect.secret_source
        )
        self.commands: list[str] = list(spec.get(dialect.commands_key) or [])
        record = (meta.get("annotations") or {})[ANNOTATION]
        count = re.search(r"commands=(\d+)", record)
        self.tool_commands = int(count.group(1)) if count else 0
        named = re.search(r"files=([^;]+)", record)
        self.tool_files: list[str] = named.group(1).split(",") if named else []


def nodes_of(docs: Sequence[Any]) -> list[Node]:
    """The bootstrap objects the tool wrote files or commands into, in cloud-config format."""
    secrets = cloudconfig.secrets_in(docs)
    found = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        annotations = (doc.get("metadata") or {}).get("annotations") or {}
        if ANNOTATION not in annotations:
            continue
        if dialects.of_kind(doc["apiVersion"].split("/")[0], doc["kind"]) is None:
            continue
        node = Node(doc, secrets)
        if (node.files or node.tool_commands) and node.spec.get("format") in (None, "cloud-config"):
            found.append(node)
    return found


def render_with_the_cli(user_data: str, work: Path) -> str:
    """``cloud-init devel render`` of the user data, then ``cloud-init schema
    --config-file`` of what it rendered (which must be valid); the rendered text."""
    source, rendered, instance = work / "user-data", work / "rendered", work / "instance.json"
    source.write_text(user_data)
    instance.write_text(json.dumps(INSTANCE))
    proc = subprocess.run(
        [require("cloud-init"), "devel", "render", "-i", str(instance), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("#cloud-config\n"), proc.stderr
    rendered.write_text(proc.stdout)
    check = subprocess.run(
        [require("cloud-init"), "schema", "--config-file", str(rendered)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0 and "Valid cloud-config" in check.stdout, check.stderr
    return proc.stdout


def cloud_init(jobs: Sequence[Mapping[str, Any]], work: Path) -> list[dict[str, Any]]:
    """Each job ({"root", "user_data" or None, "files", "commands"}) through cloud-init:
    the user data rendered and validated, and the files and commands taken from it; the
    files written under the root and the commands' runcmd script at root/runcmd. The
    results: {"files", "commands"} as cloud-init read them, "rendered" with user data."""
    instance = work / "instance.json"
    instance.write_text(json.dumps(INSTANCE))
    proc = subprocess.run(
        [require("/usr/bin/python3"), "-c", SESSION],
        input=json.dumps([dict(job, instance=str(instance)) for job in jobs]),
        text=True,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    results: list[dict[str, Any]] = json.loads(proc.stdout)
    return results


def run_script(
    script: str, root: Path, moved: Sequence[str], shell: str, names: Sequence[str]
) -> dict[str, str]:
    """Run a runcmd script in ``shell`` with the ``moved`` paths under ``root`` and the
    stubs first on PATH; the variables ``names`` as the shell has them at the end."""
    stubs = root / "stubs"
    stubs.mkdir(exist_ok=True)
    for stub in ("systemctl", "sleep"):
        (stubs / stub).write_text("#!/bin/sh\nexit 0\n")
        (stubs / stub).chmod(0o755)
    for path in sorted(moved, key=len, reverse=True):
        script = script.replace(path, f"{root}{path}")
    script += "".join(f'printf "%s\\0" "${{{n}-unset}}"\n' for n in names)
    proc = subprocess.run(
        [require(shell), "-c", script, shell],
        capture_output=True,
        env={"PATH": f"{stubs}:/usr/bin:/bin", "HOME": "/root"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return dict(zip(names, proc.stdout.decode().split("\0")[:-1], strict=True))


STAND_IN = "[Unit]\nDescription=stand-in\nDefaultDependencies=no\n[Service]\nType=oneshot\n"
STAND_IN += "ExecStart=/bin/true\n"
UNIT_DIRS = ("etc/systemd/system", "usr/lib/systemd/system", "lib/systemd/system")


def systemd_units(root: Path) -> dict[str, dict[str, Any]]:
    """unit -> {"Environment": {name: value}, "EnvironmentFile": [...]} as systemd reads
    the drop-ins under ``root`` (copied to a directory nobody can read, each unit dir in
    the search path, a stand-in unit beside them); ``systemd-analyze verify`` must accept
    every unit without a word."""
    with tempfile.TemporaryDirectory(prefix="pp-systemd-") as name:
        work = Path(name)
        dirs = [work / d for d in UNIT_DIRS if (root / d).is_dir()]
        for d in dirs:
            shutil.copytree(root / d.relative_to(work), d)
        units = sorted({p.name[: -len(".d")] for d in dirs for p in d.glob("*.service.d")})
        for unit in units:
            (dirs[0] / unit).write_text(STAND_IN)
        (work / "none").mkdir()
        for path in [work, *work.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
        env["SYSTEMD_UNIT_PATH"] = ":".join(str(d) for d in dirs)
        found: dict[str, dict[str, Any]] = {}
        for unit in units:
            verify = subprocess.run(
                [require("systemd-analyze"), "verify", "--man=no", unit],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            assert (verify.returncode, verify.stdout + verify.stderr) == (0, ""), verify.stderr
            found[unit] = dump(unit, env | {"SYSTEMD_GENERATOR_PATH": str(work / "none")})
        return found


def dump(unit: str, env: Mapping[str, str]) -> dict[str, Any]:
    """``systemd --test`` for one unit, as nobody: its Environment and EnvironmentFile."""
    proc = subprocess.run(
        [
            *(require("setpriv"), f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"),
            *(require(SYSTEMD), "--test", "--system", f"--unit={unit}", "--no-pager"),
        ],
        capture_output=True,
        text=True,
        env={**env, "SYSTEMD_ENVIRONMENT_GENERATOR_PATH": env["SYSTEMD_GENERATOR_PATH"]},
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    block = proc.stdout.split(f"-> Unit {unit}:\n", 1)[1].split("\t-> Unit ", 1)[0]
    values: dict[str, str] = {}
    files: list[str] = []
    for line in block.split("\n"):
        line = line.strip("\t")
        if line.startswith("Environment: "):
            name, _, value = line[len("Environment: ") :].partition("=")
            values[name] = value
        elif line.startswith("EnvironmentFile: "):
            files.append(line[len("EnvironmentFile: ") :])
    return {"Environment": values, "EnvironmentFile": files}
