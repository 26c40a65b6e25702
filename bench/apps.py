"""Issue 33: start-up, and many small apps (an Argo CD repo-server or a Flux controller
renders hundreds of small applications, one process each).

- ``startup``: one one-Deployment app's render through each build against
  ``python -c pass`` of the same interpreter, CPU time (user + system, from
  ``os.wait4``) of interleaved runs, and, with valgrind installed, the instruction
  counts of the same runs (``callgrind``, ``PYTHONHASHSEED=0``), which are stable
  where CPU time is not (target 1: pure build ≤ 10 ms above ``python -c pass``).
- ``apps``: 100 one-Deployment apps, ``helm template | proxy-postrender`` each, against
  ``helm template`` of each alone; each case is one shell loop over the 100 apps, its
  CPU time that of the shell and every process it waited for; the cases interleaved,
  the ratio of the medians (target 2: ≤ 1.3).

``run.py`` calls :func:`run` (``make bench``); ``python bench/apps.py`` runs it alone
with ``HELM3_BIN``, the ``proxy-postrender`` of the running venv and
``PROXY_POSTRENDER_COMPILED`` when set. Settings: ``BENCH_APPS`` (100),
``BENCH_APPS_RUNS`` (5), ``BENCH_STARTUP_RUNS`` (21), ``BENCH_CALLGRIND`` (1: count
instructions when valgrind is there; 0: never).
"""

from __future__ import annotations

import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen

ROOT = Path(__file__).resolve().parent.parent
PROFILE = ROOT / "fixtures" / "golden" / "profile.yaml"


@dataclass(frozen=True)
class Build:
    name: str  # "pure" or "compiled"
    script: str  # the console script
    env: Mapping[str, str]

    @property
    def python(self) -> str:
        return str(Path(self.script).parent / "python")


@dataclass(frozen=True)
class Figures:
    startup_ms: dict[str, float]  # case -> median CPU ms
    instructions: dict[str, float]  # case -> millions (empty without valgrind)
    apps_s: dict[str, float]  # case -> median CPU s of the 100-app loop
    apps: int
    runs: int


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


def cpu_seconds(argv: Sequence[str], env: Mapping[str, str], stdin: Path | None) -> float:
    """User + system CPU of ``argv`` and of every process it waited for."""
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        proc = subprocess.Popen(list(argv), stdin=source, stdout=subprocess.DEVNULL, env=dict(env))
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def instructions(argv: Sequence[str], env: Mapping[str, str], stdin: Path | None) -> float:
    """Millions of instructions of ``argv`` under callgrind (``PYTHONHASHSEED=0``)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
            proc = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                stdin=source,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                env={**env, "PYTHONHASHSEED": "0"},
                check=False,
            )
    for line in proc.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1]) / 1e6
    raise SystemExit(f"callgrind of {' '.join(argv)}: {proc.stderr[-2000:]}")


def _medians(
    cases: Mapping[str, tuple[Sequence[str], Mapping[str, str], Path | None]], runs: int
) -> dict[str, float]:
    """Interleaved CPU seconds of each case, medians of ``runs`` after one warm-up."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for round_no in range(runs + 1):
        for name, (argv, env, stdin) in cases.items():
            seconds = cpu_seconds(argv, env, stdin)
            if round_no:
                samples[name].append(seconds)
    return {name: statistics.median(found) for name, found in samples.items()}


def _loop(helm: str, chart: Path, apps: int, script: str | None) -> list[str]:
    """A shell loop: ``helm template`` of each app, through ``script`` when given."""
    pipe = f" | {shlex.quote(script)} {shlex.quote(str(PROFILE))}" if script else ""
    body = f"{shlex.quote(helm)} template app$i {shlex.quote(str(chart))}{pipe} >/dev/null"
    return ["bash", "-c", f"set -eo pipefail; for i in $(seq 1 {apps}); do {body}; done"]


def run(helm: str, builds: Sequence[Build], helm_env: Mapping[str, str], tmp: Path) -> Figures:
    quick = os.environ.get("BENCH_QUICK", "").strip() not in ("", "0")
    apps = _env_int("BENCH_APPS", 20 if quick else 100)
    runs = _env_int("BENCH_APPS_RUNS", 2 if quick else 5)
    startup_runs = _env_int("BENCH_STARTUP_RUNS", 5 if quick else 21)
    chart = gen.write_chart(tmp / "app-chart", 1)
    app = tmp / "app.yaml"
    app.write_text(
        subprocess.run(
            [helm, "template", "app1", str(chart)],
            env=dict(helm_env),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    startup: dict[str, tuple[Sequence[str], Mapping[str, str], Path | None]] = {}
    for build in builds:
        startup[f"python -c pass ({build.name})"] = ([build.python, "-c", "pass"], build.env, None)
        startup[f"one app, {build.name} build"] = ([build.script, str(PROFILE)], build.env, app)
    counted: dict[str, float] = {}
    if os.environ.get("BENCH_CALLGRIND", "1") != "0" and shutil.which("valgrind"):
        for build in builds:
            counted[f"python -c pass ({build.name})"] = instructions(
                [build.python, "-c", "pass"], build.env, None
            )
            counted[f"empty input, {build.name} build"] = instructions(
                [build.script, str(PROFILE)], build.env, None
            )
            counted[f"one app, {build.name} build"] = instructions(
                [build.script, str(PROFILE)], build.env, app
            )
    loops: dict[str, tuple[Sequence[str], Mapping[str, str], Path | None]] = {
        "helm template alone": (_loop(helm, chart, apps, None), helm_env, None)
    }
    for build in builds:
        env = {**helm_env, **build.env}
        if "PYTHONPATH" not in build.env:
            env.pop("PYTHONPATH", None)
        loops[f"helm template | {build.name} build"] = (
            _loop(helm, chart, apps, build.script),
            env,
            None,
        )
    print(f"  start-up: {len(startup)} cases x {startup_runs} runs", flush=True)
    startup_ms = {k: v * 1000 for k, v in _medians(startup, startup_runs).items()}
    print(f"  {apps} apps: {len(loops)} cases x {runs} runs", flush=True)
    apps_s = _medians(loops, runs)
    return Figures(startup_ms, counted, apps_s, apps, runs)


def report(figures: Figures, builds: Sequence[Build]) -> list[tuple[str, str, str, bool | None]]:
    """Print the tables; the target rows (name, figure, goal, met)."""
    print("\n== issue 33: start-up (one one-Deployment app; CPU ms, medians) ==")
    for name, ms in figures.startup_ms.items():
        count = figures.instructions.get(name)
        print(f"  {name:34s} {ms:7.1f} ms" + (f"  {count:8.1f} M instr" if count else ""))
    for name, count in figures.instructions.items():
        if name not in figures.startup_ms:
            print(f"  {name:34s} {'':10s}  {count:8.1f} M instr")
    title = f"{figures.apps} one-Deployment apps (CPU s, medians of {figures.runs})"
    print(f"\n== issue 33: {title} ==")
    for name, seconds in figures.apps_s.items():
        print(f"  {name:34s} {seconds:7.2f} s")
    rows: list[tuple[str, str, str, bool | None]] = []
    for build in builds:
        bare = figures.startup_ms[f"python -c pass ({build.name})"]
        one = figures.startup_ms[f"one app, {build.name} build"]
        figure = f"{one - bare:.1f} ms CPU ({one:.1f} - {bare:.1f})"
        count = figures.instructions.get(f"one app, {build.name} build")
        if count:
            base = figures.instructions[f"python -c pass ({build.name})"]
            figure += f"; {count - base:.0f} M instr ({count:.0f} - {base:.0f})"
        goal = build.name == "pure"
        rows.append(
            (
                f"33-1 start-up, {build.name} build: one app - python -c pass",
                figure,
                "<= 10 ms" if goal else "",
                one - bare <= 10 if goal else None,
            )
        )
    helm = figures.apps_s["helm template alone"]
    for build in builds:
        both = figures.apps_s[f"helm template | {build.name} build"]
        rows.append(
            (
                f"33-2 {figures.apps} apps, {build.name} build: helm | pp / helm alone",
                f"{both / helm:.2f} x ({both:.2f} s / {helm:.2f} s CPU)",
                "<= 1.3",
                both / helm <= 1.3,
            )
        )
    return rows


def main() -> None:
    helm = os.environ.get("HELM3_BIN") or str(ROOT / ".cache" / "tools" / "helm3" / "helm")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROXY_POSTRENDER")}
    builds = [Build("pure", str(Path(sys.executable).parent / "proxy-postrender"), env)]
    compiled = os.environ.get("PROXY_POSTRENDER_COMPILED", "").strip()
    if compiled:
        builds.append(
            Build("compiled", compiled, {k: v for k, v in env.items() if k != "PYTHONPATH"})
        )
    with tempfile.TemporaryDirectory(prefix="proxy-apps-") as name:
        figures = run(helm, builds, env, Path(name))
    for row in report(figures, builds):
        mark = "" if row[3] is None else ("PASS" if row[3] else "FAIL")
        print(f"  {row[0]:58s} {row[1]:44s} {row[2]:9s} {mark}")


if __name__ == "__main__":
    main()
