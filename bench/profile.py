"""Where the time goes: ``make bench-profile`` (or ``python bench/profile.py WHAT``).

WHAT is one of:

- ``dense``: the 500-Deployment chart rendered by Helm 3 (every Deployment changed);
- ``passthrough``: ~10 MB of big CRDs (nothing to change);
- ``capi``: 50 Cluster API clusters rendered by Helm 3;
- ``importtime``: ``python -X importtime`` of the console script on a tiny stream
  (the cold start), top imports by cumulative time;
- ``all``: each of the above.

The engine runs in this process under cProfile, through the command's own
entry point (``proxy_postrender.cli.entry.main`` with stdin and stdout swapped for
memory buffers), once untimed first so that imports and one-time set-up are
not counted. Prints the wall time with and without the profiler and the top
functions by cumulative and by own time.

Options: ``--size N`` (Deployments, CRD bytes or clusters), ``--top N``
(default 30), ``--input FILE`` (profile that stream instead).
Helm 3 comes from $HELM3_BIN, .cache/tools/helm3/helm (``make helm``) or PATH.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen

ROOT = Path(__file__).resolve().parent.parent
PROFILE = ROOT / "fixtures" / "golden" / "profile.yaml"
DEFAULT_SIZE = {"dense": 500, "passthrough": 10_000_000, "capi": 50}


def _cprofile() -> ModuleType:
    """The standard library's cProfile. It imports ``profile``, which from here would be this
    very file (the script's directory comes first on sys.path): hide that directory."""
    here = str(Path(__file__).resolve().parent)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    try:
        return importlib.import_module("cProfile")
    finally:
        sys.path[:] = saved


def render(chart: Path) -> bytes:
    helm = gen.helm3()
    if helm is None:
        raise SystemExit("no Helm 3: run `make helm` or set HELM3_BIN")
    return subprocess.run(
        [helm, "template", "rel", str(chart)], capture_output=True, check=True
    ).stdout


def make_input(what: str, size: int, tmp: Path) -> bytes:
    if what == "dense":
        return render(gen.write_chart(tmp / "dense", size))
    if what == "capi":
        return render(gen.write_capi_chart(tmp / "capi", size))
    if what == "passthrough":
        return gen.write_crd_stream(tmp / "crds.yaml", size).read_bytes()
    raise SystemExit(f"unknown input {what!r}")


def run_cli(data: bytes, argv: list[str]) -> bytes:
    """The command's entry point in this process, stdin and stdout in memory."""
    from proxy_postrender.cli import entry

    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    out = io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8")
    saved = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = stdin, stdout
    try:
        entry.main(argv)
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
    finally:
        sys.stdin, sys.stdout = saved
    stdout.flush()
    return out.getvalue()


def profile_stream(label: str, data: bytes, top: int) -> None:
    argv = [str(PROFILE)]
    output = run_cli(data, argv)  # imports, caches: not what we measure
    start = time.perf_counter()
    run_cli(data, argv)
    plain = time.perf_counter() - start
    profiler = _cprofile().Profile()
    start = time.perf_counter()
    profiler.runcall(run_cli, data, argv)
    profiled = time.perf_counter() - start
    print(f"== {label}: {len(data) / 1e6:.2f} MB in, {len(output) / 1e6:.2f} MB out")
    print(
        f"   in-process (no start-up, no imports): {plain:.3f} s; under cProfile {profiled:.3f} s"
    )
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.strip_dirs()
    print(f"-- top {top} by cumulative time")
    stats.sort_stats(pstats.SortKey.CUMULATIVE).print_stats(top)
    print(f"-- top {min(top, 15)} by own time")
    stats.sort_stats(pstats.SortKey.TIME).print_stats(min(top, 15))


IMPORT_LINE = re.compile(r"^import time:\s+(\d+)\s*\|\s*(\d+)\s*\|( *)(\S+)")


def import_times(runs: int = 5, top: int = 15) -> None:
    """``python -X importtime`` of the console script on a two-document stream."""
    script = Path(sys.executable).parent / "proxy-postrender"
    tiny = (gen.stream_document(0) + gen.stream_document(1)).encode()
    per_module: dict[str, list[int]] = {}
    top_level: list[int] = []
    walls: list[float] = []
    bare: list[float] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROXY_POSTRENDER")}
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", str(script), str(PROFILE)],
            input=tiny,
            capture_output=True,
            check=True,
            env=env,
        )
        walls.append(time.perf_counter() - start)
        total = 0
        for line in proc.stderr.decode().splitlines():
            match = IMPORT_LINE.match(line)
            if not match:
                continue
            cumulative, depth, name = int(match[2]), len(match[3]), match[4]
            per_module.setdefault(name, []).append(cumulative)
            if depth == 1:
                total += cumulative
        top_level.append(total)
    wall = statistics.median(walls)
    print(f"== cold start: {script.name} on a 2-document stream, median of {runs}")
    print(
        f"   whole process {wall * 1000:.0f} ms (with -X importtime), python -c pass "
        f"{statistics.median(bare) * 1000:.0f} ms, "
        f"all imports {statistics.median(top_level) / 1000:.0f} ms"
    )
    ranked = sorted(per_module.items(), key=lambda item: -statistics.median(item[1]))
    print(f"-- top {top} imports by cumulative time (ms; nested imports count in their parents)")
    for name, values in ranked[:top]:
        print(f"   {statistics.median(values) / 1000:8.1f}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["dense", "passthrough", "capi", "importtime", "all"])
    parser.add_argument("--size", type=int, help="Deployments, CRD bytes or clusters")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--input", type=Path, help="profile this stream instead")
    args = parser.parse_args()
    os.environ.pop("PROXY_POSTRENDER_PROFILE", None)
    if args.input is not None:
        profile_stream(str(args.input), args.input.read_bytes(), args.top)
        return
    kinds = ["dense", "passthrough", "capi"] if args.what == "all" else [args.what]
    if args.what == "importtime":
        kinds = []
    with tempfile.TemporaryDirectory(prefix="proxy-profile-") as name:
        for what in kinds:
            size = args.size or DEFAULT_SIZE[what]
            profile_stream(f"{what} ({size})", make_input(what, size, Path(name)), args.top)
            print()
    if args.what in ("importtime", "all"):
        import_times(top=15)


if __name__ == "__main__":
    main()
