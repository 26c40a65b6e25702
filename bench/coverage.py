"""How many documents the fast block reader reads, and why it declines the others.

``python bench/coverage.py`` renders the charts of ``fixtures/`` and ``bench/``
(Helm 3 from $HELM3_BIN, .cache/tools/helm3/helm or PATH; without Helm, the stored
demo render and the golden inputs only), runs the filter on each in this process with
the shared golden profile and prints, per chart, the target documents, the share read
by the block reader (the rest go through libyaml and, for some, ruamel.yaml's
constructor), the same for the check that reads the spliced output back, and the
reasons the reader gave for declining. ``make bench`` prints the same table for its
workloads (``bench/run.py``). Counting is deterministic: no timing here.

Options: ``--json`` (one JSON object instead of the table), ``--size N`` (Deployments
of the bench charts, default 500), ``NAME=FILE`` (count these streams instead).
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
PROFILE = FIXTURES / "golden" / "profile.yaml"
TARGET_SHARE = 0.99  # of target documents on the fast path, bench charts (issue 21)


@dataclass
class Coverage:
    """Counts of one chart: (what, how) -> documents (see ``read.COUNTS``)."""

    name: str
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    bench: bool = False  # one of the bench charts the target applies to

    def total(self, what: str) -> int:
        return sum(n for (w, _), n in self.counts.items() if w == what)

    def fast(self, what: str) -> int:
        return self.counts.get((what, "fast"), 0)

    def share(self, what: str) -> float | None:
        total = self.total(what)
        return self.fast(what) / total if total else None

    def reasons(self, what: str) -> list[tuple[str, int]]:
        found = [(how, n) for (w, how), n in self.counts.items() if w == what and how != "fast"]
        return sorted(found, key=lambda item: (-item[1], item[0]))

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "bench": self.bench,
            "counts": [[what, how, n] for (what, how), n in sorted(self.counts.items())],
        }


def run_filter(data: bytes, argv: Sequence[str]) -> None:
    """The command's entry point in this process, stdin and stdout in memory (an error
    exit is counted as far as it got)."""
    from proxy_postrender.cli import entry

    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, io.StringIO()
    try:
        entry.main(list(argv))
    except SystemExit:
        pass
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def count(name: str, runs: Sequence[tuple[bytes, Sequence[str]]], *, bench: bool) -> Coverage:
    """Run the filter on each (input, argv) and count what the readers did."""
    from proxy_postrender.yamltext import read

    coverage = Coverage(name, bench=bench)
    read.COUNTS = coverage.counts
    try:
        for data, argv in runs:
            run_filter(data, argv)
    finally:
        read.COUNTS = None
    return coverage


def render(helm: str, chart: Path) -> bytes:
    proc = subprocess.run(
        [helm, "template", "rel", str(chart)], capture_output=True, check=True, timeout=300
    )
    return proc.stdout


def golden_runs() -> list[tuple[bytes, list[str]]]:
    """Every golden case's input with its own profile and arguments."""
    runs = []
    for case in sorted(p for p in (FIXTURES / "golden").iterdir() if p.is_dir()):
        meta: dict[str, object] = {}
        if (case / "case.yaml").exists():
            from ruamel.yaml import YAML

            meta = YAML(typ="safe").load((case / "case.yaml").read_text()) or {}
        profile = meta.get("profile", str(PROFILE))
        args = [str(profile)] if profile else []
        extra = meta.get("args", [])
        args += [str(a) for a in extra] if isinstance(extra, list) else []
        runs.append(((case / "input.yaml").read_bytes(), args))
    return runs


def charts(size: int) -> Iterator[tuple[str, list[tuple[bytes, list[str]]], bool]]:
    """(name, runs, whether the 99 % target applies) for every chart of the repository."""
    profile = [str(PROFILE)]
    helm = gen.helm3()
    if helm is None:
        print("no Helm 3 (make helm, or HELM3_BIN): the bench charts are left out", file=sys.stderr)
        demo = (FIXTURES / "demo" / "rendered.yaml").read_bytes()
        yield "demo (stored render)", [(demo, profile)], False
    else:
        with tempfile.TemporaryDirectory(prefix="proxy-coverage-") as name:
            tmp = Path(name)
            yield (
                "fixtures/charts/demo",
                [(render(helm, FIXTURES / "charts" / "demo"), profile)],
                False,
            )
            made = [
                ("bench dense", gen.write_chart(tmp / "dense", size)),
                ("bench flow items", gen.write_flow_items_chart(tmp / "flow-items", size)),
                ("bench capi", gen.write_capi_chart(tmp / "capi", max(1, size // 10))),
                ("bench tiny", gen.write_tiny_chart(tmp / "tiny")),
            ]
            for label, chart in made:
                yield label, [(render(helm, chart), profile)], True
    for path in sorted((FIXTURES / "capi-owners").glob("*.yaml")):
        yield f"fixtures/capi-owners/{path.name}", [(path.read_bytes(), profile)], False
    yield "fixtures/golden (every case)", golden_runs(), False


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f} %"


def print_table(found: Sequence[Coverage], indent: str = "") -> None:
    head = f"{'chart':38} {'targets':>8} {'fast':>8} {'check reads':>12} {'fast':>8}"
    print(f"{indent}{head}  declined, by reason")
    for item in found:
        reasons = item.reasons("target")
        shown = "; ".join(f"{how.removeprefix('declined: ')} ({n})" for how, n in reasons[:4])
        if len(reasons) > 4:
            shown += f"; {len(reasons) - 4} more"
        print(
            f"{indent}{item.name:38} {item.total('target'):>8} "
            f"{_percent(item.share('target')):>8} {item.total('check'):>12} "
            f"{_percent(item.share('check')):>8}  {shown or '-'}"
        )
    checks = [r for item in found for r in item.reasons("check")]
    if checks:
        merged: dict[str, int] = {}
        for how, n in checks:
            merged[how] = merged.get(how, 0) + n
        shown = "; ".join(f"{h.removeprefix('declined: ')} ({n})" for h, n in merged.items())
        print(f"{indent}check reads declined: {shown}")


def below_target(found: Sequence[Coverage]) -> list[str]:
    """The bench charts whose target documents are read on the fast path less than the
    target share of the time."""
    return [
        item.name
        for item in found
        if item.bench and (item.share("target") or 0.0) < TARGET_SHARE and item.total("target")
    ]


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="one JSON object, no table")
    parser.add_argument("--size", type=int, default=500, help="Deployments of the bench charts")
    parser.add_argument("streams", nargs="*", metavar="NAME=FILE", help="count these streams")
    args = parser.parse_args(argv)
    found: list[Coverage] = []
    if args.streams:
        for item in args.streams:
            name, sep, path = item.partition("=")
            if not sep:
                parser.error(f"expected NAME=FILE, got {item!r}")
            runs = [(Path(path).read_bytes(), [str(PROFILE)])]
            found.append(count(name, runs, bench=name.startswith("bench")))
    else:
        for name, runs, bench in charts(args.size):
            found.append(count(name, runs, bench=bench))
    if args.json:
        print(json.dumps({"target_share": TARGET_SHARE, "charts": [c.as_json() for c in found]}))
    else:
        print_table(found)
        missed = below_target(found)
        goal = f"{100 * TARGET_SHARE:.0f} %"
        print(
            f"bench charts under {goal}: {', '.join(missed)}"
            if missed
            else f"bench charts: all >= {goal}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
