"""Golden cases under fixtures/golden/<case>/.

Each case holds ``input.yaml`` and either ``expected.yaml`` (success) or an
``exit``/``stderr`` pair in ``case.yaml``. ``case.yaml`` may also set
``profile`` (a file in the case, or null for none; default the shared
fixtures/golden/profile.yaml), ``args`` (appended) and ``removeRestores``
(``bytes``, ``semantic`` or ``none``: what ``--remove`` on the output gives
back compared with ``--remove`` on the input) and ``warns`` (for a success: one
substring per warning line the run prints on stderr, in order; default none).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.helpers import GOLDEN, SHARED_PROFILE


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    args: tuple[str, ...]
    exit: int
    stderr: str | None
    remove_restores: str
    remove_args: tuple[str, ...] = ()  # kinds only a profile names need it to be removed
    warns: tuple[str, ...] = ()  # a substring of each warning line on stderr, in order

    @property
    def input(self) -> bytes:
        return (self.path / "input.yaml").read_bytes()

    @property
    def expected_path(self) -> Path:
        return self.path / "expected.yaml"


def load_cases() -> list[Case]:
    cases = []
    for directory in sorted(p for p in GOLDEN.iterdir() if p.is_dir()):
        meta: dict[str, Any] = {}
        if (directory / "case.yaml").exists():
            meta = YAML(typ="safe").load((directory / "case.yaml").read_text()) or {}
        profile = meta.get("profile", str(SHARED_PROFILE))
        args = ([profile] if profile else []) + [str(a) for a in meta.get("args", [])]
        cases.append(
            Case(
                name=directory.name,
                path=directory,
                args=tuple(args),
                exit=int(meta.get("exit", 0)),
                stderr=meta.get("stderr"),
                remove_restores=str(meta.get("removeRestores", "bytes")),
                remove_args=tuple(str(a) for a in meta.get("removeArgs", [])),
                warns=tuple(str(w) for w in meta.get("warns", [])),
            )
        )
    return cases
