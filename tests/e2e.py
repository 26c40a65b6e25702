"""Helpers for end-to-end tests against real external tools."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from proxy_postrender import targets
from proxy_postrender.objects import walk_objects
from proxy_postrender.pods.workloads import CONTAINER_LISTS
from proxy_postrender.yamltext import libyaml
from tests.helpers import ROOT

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")


def tool(env_var: str, name: str) -> str:
    """Path of a required tool; fails (never skips) when it is missing."""
    path = os.environ.get(env_var) or shutil.which(name)
    assert path and os.access(path, os.X_OK), (
        f"{name} is required: run the tests through `make test` (it installs it) or set {env_var}"
    )
    return path


def console_script() -> str:
    script = Path(sys.executable).parent / "proxy-postrender"
    assert script.exists(), "install the package (make test does) so the console script exists"
    return str(script)


def run(
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("PROXY_POSTRENDER")}
    full_env.update(env or {})
    return subprocess.run(
        list(args),
        input=stdin,
        capture_output=True,
        env=full_env,
        cwd=cwd or ROOT,
        timeout=600,
        check=False,
    )


def containers(doc: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(object name/container name, container) for every container of every workload."""
    for _, obj in walk_objects(doc):
        for spec_path in targets.BUILT_IN.paths(obj, targets.PODS):
            spec: Any = obj
            for step in spec_path:
                spec = spec.get(step) if isinstance(spec, Mapping) else None
            if not isinstance(spec, Mapping):
                continue
            for key in CONTAINER_LISTS:
                for container in spec.get(key) or []:
                    name = (obj.get("metadata") or {}).get("name")
                    yield f"{obj['kind']}/{name}/{container['name']}", container


def env_names(container: Mapping[str, Any]) -> list[str]:
    return [item["name"] for item in container.get("env") or []]


def is_hook(doc: Any) -> bool:
    annotations = (doc.get("metadata") or {}).get("annotations") or {}
    return "helm.sh/hook" in annotations


def assert_all_injected(stream_text: str, *, hooks: bool = True) -> int:
    """Every workload container carries all six variables; return how many containers.

    With ``hooks=False`` (Helm 3, which appends hooks after post-rendering),
    hook objects are checked to be untouched instead.
    """
    count = 0
    for doc in libyaml.load_data(stream_text):
        if not hooks and is_hook(doc):
            for where, container in containers(doc):
                assert not set(PROXY_VARS) & set(env_names(container)), where
            continue
        for where, container in containers(doc):
            missing = set(PROXY_VARS) - set(env_names(container))
            assert not missing, f"{where} lacks {sorted(missing)}"
            count += 1
    return count


def documents(stream_text: str) -> list[str]:
    """Raw document texts, split the way a reader splits them."""
    from proxy_postrender.yamltext import stream

    return [s.text for s in stream.split(stream_text) if s.has_content()]
