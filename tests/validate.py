"""Schema-check manifest files: ``python -m tests.validate FILE...``.

Uses kubeconform when it is on PATH, else kubernetes-validate (strict: unknown
fields are errors). Kinds without a bundled schema (custom resources) are
reported as skipped, not as valid.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import Any

from proxy_postrender.objects import walk_objects
from proxy_postrender.yamltext import libyaml

KUBERNETES_VERSION = "1.32.0"


def schema_errors(doc: Any) -> list[str]:
    """Validation errors of one object ([] when valid); raises LookupError without a schema."""
    import kubernetes_validate

    try:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.SchemaNotFoundError as exc:
        raise LookupError(str(exc)) from None
    except kubernetes_validate.ValidationError as exc:
        return [str(exc).splitlines()[0]]
    return []


def main(paths: list[str]) -> int:
    if shutil.which("kubeconform"):
        return subprocess.call(
            [
                "kubeconform",
                "-strict",
                "-summary",
                "-kubernetes-version",
                KUBERNETES_VERSION,
                *paths,
            ]
        )
    failed = 0
    for path in paths:
        with open(path, encoding="utf-8-sig") as handle:
            docs = [obj for doc in libyaml.load_data(handle.read()) for _, obj in walk_objects(doc)]
        for index, doc in enumerate(docs, 1):
            if not isinstance(doc, dict):
                continue
            name = (doc.get("metadata") or {}).get("name")
            label = f"{path}: document {index} ({doc.get('kind')} {name})"
            try:
                errors = schema_errors(doc)
            except LookupError:
                print(f"{label}: skipped (no schema)")
                continue
            for error in errors:
                failed += 1
                print(f"{label}: {error}")
    print(f"kubernetes-validate {KUBERNETES_VERSION}: {failed} invalid")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
