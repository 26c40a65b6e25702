"""Regenerate expected.yaml of successful golden cases: ``python -m tests.update_golden [CASE...]``
(every case when none is named).

Review the diff of fixtures/golden before committing: a golden file is only
as good as the human who read it.
"""

from __future__ import annotations

import sys

from tests.golden import load_cases
from tests.helpers import run_cli


def main(names: list[str]) -> None:
    cases = load_cases()
    unknown = set(names) - {case.name for case in cases}
    if unknown:
        raise SystemExit(f"no golden case named {', '.join(sorted(unknown))}")
    for case in cases:
        if case.exit or (names and case.name not in names):
            continue
        proc = run_cli(case.args, case.input, cwd=case.path)
        if proc.returncode != 0:
            raise SystemExit(f"{case.name}: exit {proc.returncode}: {proc.stderr.decode()}")
        case.expected_path.write_bytes(proc.stdout)
        print(f"updated {case.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
