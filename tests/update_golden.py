"""Regenerate expected.yaml of every successful golden case: ``python -m tests.update_golden``.

Review the diff of fixtures/golden before committing: a golden file is only
as good as the human who read it.
"""

from __future__ import annotations

from tests.golden import load_cases
from tests.helpers import run_cli


def main() -> None:
    for case in load_cases():
        if case.exit:
            continue
        proc = run_cli(case.args, case.input, cwd=case.path)
        if proc.returncode != 0:
            raise SystemExit(f"{case.name}: exit {proc.returncode}: {proc.stderr.decode()}")
        case.expected_path.write_bytes(proc.stdout)
        print(f"updated {case.name}")


if __name__ == "__main__":
    main()
