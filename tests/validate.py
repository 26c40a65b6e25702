"""Schema-check manifest files: ``python -m tests.validate FILE...``.

Cluster API objects of the kinds and versions in ``tests/capi/schemas`` (JSON
Schemas generated from the upstream CRDs) are always checked against those
schemas, by ``tests.capi.validate``. Every other object goes to kubeconform
when it is on PATH (``-strict``; the Cluster API kinds are passed to ``-skip``
so that the same checker judges them in both branches, and kinds without a
schema are reported as skipped), else to kubernetes-validate (strict: unknown
fields are errors). Kinds without a schema (other custom resources) are
reported as skipped, not as valid.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import Any

from proxy_postrender.objects import walk_objects
from proxy_postrender.yamltext import libyaml
from tests.capi.validate import capi_errors, covered, is_capi

KUBERNETES_VERSION = "1.32.0"


def schema_errors(doc: Any) -> list[str]:
    """kubernetes-validate's errors of one object ([] when valid); raises LookupError
    without a schema (every custom resource: see ``object_errors``)."""
    import kubernetes_validate

    try:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.SchemaNotFoundError as exc:
        raise LookupError(str(exc)) from None
    except kubernetes_validate.ValidationError as exc:
        return [str(exc).splitlines()[0]]
    return []


def object_errors(doc: Any) -> list[str]:
    """Errors of one object with our Cluster API schemas or kubernetes-validate;
    raises LookupError without a schema."""
    return capi_errors(doc) if is_capi(doc) else schema_errors(doc)


def _documents(path: str) -> list[Any]:
    with open(path, encoding="utf-8-sig") as handle:
        return [obj for doc in libyaml.load_data(handle.read()) for _, obj in walk_objects(doc)]


def _check(paths: list[str], *, capi_only: bool) -> tuple[int, int]:
    """Print each invalid or skipped object; return (objects checked, errors)."""
    checked = failed = 0
    for path in paths:
        for index, doc in enumerate(_documents(path), 1):
            if not isinstance(doc, dict) or (capi_only and not is_capi(doc)):
                continue
            name = (doc.get("metadata") or {}).get("name")
            label = f"{path}: document {index} ({doc.get('kind')} {name})"
            try:
                errors = object_errors(doc)
            except LookupError:
                print(f"{label}: skipped (no schema)")
                continue
            checked += 1
            for error in errors:
                failed += 1
                print(f"{label}: {error}")
    return checked, failed


def kubeconform_command(paths: list[str]) -> list[str]:
    """kubeconform for everything but the Cluster API kinds that have our schemas.

    No core Kubernetes kind has the name of one of them, so skipping by kind
    name hides nothing kubeconform could check.
    """
    kinds = sorted({kind for _, kind in covered()})
    return [
        "kubeconform",
        "-strict",
        "-summary",
        "-ignore-missing-schemas",
        "-kubernetes-version",
        KUBERNETES_VERSION,
        "-skip",
        ",".join(kinds),
        *paths,
    ]


def main(paths: list[str]) -> int:
    if shutil.which("kubeconform"):
        status = subprocess.call(kubeconform_command(paths))
        checked, failed = _check(paths, capi_only=True)
        print(f"cluster-api schemas: {checked} checked, {failed} errors")
        return 1 if status or failed else 0
    checked, failed = _check(paths, capi_only=False)
    print(
        f"kubernetes-validate {KUBERNETES_VERSION} and cluster-api schemas: "
        f"{checked} checked, {failed} errors"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
