"""Benchmarks: ``make bench``. Prints medians and ratios against baselines run in the same process.

Measured here (issue 2 scope): a chart of 500 Deployments (3 containers each)
rendered by real Helm 3 with and without the post-renderer, the filter alone
on the rendered stream, ``cat`` and a bare Python start-up, interleaved.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen import write_chart

ROOT = Path(__file__).resolve().parent.parent
PROFILE = ROOT / "fixtures" / "golden" / "profile.yaml"
RUNS = int(os.environ.get("BENCH_RUNS", "7"))


def timed(args: Sequence[str], stdin: bytes | None = None) -> Callable[[], float]:
    def once() -> float:
        start = time.perf_counter()
        proc = subprocess.run(list(args), input=stdin, capture_output=True, check=False)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{args[0]} failed: {proc.stderr.decode()[:500]}")
        return elapsed

    return once


def main() -> None:
    helm3 = os.environ.get("HELM3_BIN") or "helm"
    script = str(Path(sys.executable).parent / "proxy-postrender")
    with tempfile.TemporaryDirectory() as tmp:
        chart = write_chart(Path(tmp) / "bench", 500)
        rendered = subprocess.run(
            [helm3, "template", "rel", str(chart)], capture_output=True, check=True
        ).stdout
        out = subprocess.run(
            [script, str(PROFILE)], input=rendered, capture_output=True, check=True
        ).stdout
        cases: dict[str, Callable[[], float]] = {
            "python -c pass": timed([sys.executable, "-c", "pass"]),
            "cat": timed(["cat"], rendered),
            "helm template (Helm 3)": timed([helm3, "template", "rel", str(chart)]),
            "helm template + post-renderer": timed(
                [
                    helm3,
                    "template",
                    "rel",
                    str(chart),
                    "--post-renderer",
                    script,
                    "--post-renderer-args",
                    str(PROFILE),
                ]
            ),
            "proxy-postrender alone": timed([script, str(PROFILE)], rendered),
            "proxy-postrender, second pass": timed([script, str(PROFILE)], out),
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(RUNS):  # interleaved, so that drift hits every case alike
            for name, once in cases.items():
                samples[name].append(once())
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["helm template (Helm 3)"]
    print(
        f"500 Deployments x 3 containers: {len(rendered) / 1024:.0f} KB rendered, "
        f"{len(out) / 1024:.0f} KB out (+{(len(out) - len(rendered)) / len(rendered):.0%}); "
        f"median of {RUNS} interleaved runs"
    )
    print(f"{'case':34} {'median s':>9} {'x helm template':>16}")
    for name, value in medians.items():
        print(f"{name:34} {value:9.3f} {value / base:16.2f}")
    overhead = medians["helm template + post-renderer"] - base
    print(
        f"post-renderer overhead on helm template: {overhead:.3f} s "
        f"({overhead / base:.2f} x helm template)"
    )


if __name__ == "__main__":
    main()
