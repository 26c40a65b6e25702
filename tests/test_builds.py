"""The two builds: pure Python (the source tree) and compiled (mypyc, docs/compiled.md).

- No compiled extension ever sits in the source tree, where Python would import it
  before the edited ``.py`` next to it (any run).
- The compiled build writes the same bytes as the pure one, and exits and reports the
  same, on every golden fixture and on the benchmark charts rendered by Helm (run by
  ``make test-compiled``, which installs both: .venv and .venv-compiled).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from tests.golden import Case, load_cases
from tests.helpers import ROOT

PACKAGE = ROOT / "proxy_postrender"
SCRIPTS = {
    "pure": ROOT / ".venv" / "bin" / "proxy-postrender",
    "compiled": ROOT / ".venv-compiled" / "bin" / "proxy-postrender",
}
VERSIONS = {"pure": "pure Python", "compiled": "compiled with mypyc"}
PROFILE = ROOT / "fixtures" / "golden" / "profile.yaml"

# needs both builds installed: make test-compiled runs these (tests/conftest.py)
both_builds = pytest.mark.build("compiled")


def test_no_compiled_extension_sits_in_the_source_tree() -> None:
    found = sorted(
        str(path.relative_to(ROOT))
        for pattern in ("*.so", "*.pyd")
        for path in PACKAGE.rglob(pattern)
    )
    assert not found, (
        f"compiled extensions in the source tree shadow the edited sources: {found}; "
        "delete them (the compiled build belongs in .venv-compiled: make test-compiled)"
    )


def _run(build: str, args: list[str], stdin: bytes, cwd: Path) -> tuple[int, bytes, bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROXY_POSTRENDER", "HELM_"))}
    proc = subprocess.run(
        [str(SCRIPTS[build]), *args],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def builds() -> None:
    """Both console scripts exist and each runs the build it is named for."""
    for build, script in SCRIPTS.items():
        assert script.exists(), f"{script} missing: make test-compiled installs both builds"
        code, out, err = _run(build, ["--version"], b"", ROOT)
        assert (code, out.decode()) == (0, f"proxy-postrender 0.1.0 ({VERSIONS[build]})\n"), err


def _same(args: list[str], stdin: bytes, cwd: Path) -> None:
    pure = _run("pure", args, stdin, cwd)
    compiled = _run("compiled", args, stdin, cwd)
    assert compiled[0] == pure[0], (compiled[2], pure[2])
    assert compiled[2] == pure[2]  # stderr: the same messages and reports
    assert compiled[1] == pure[1]  # stdout, byte for byte


@both_builds
@pytest.mark.parametrize("case", load_cases(), ids=lambda c: c.name)
def test_golden_fixture_gives_the_same_bytes_in_both_builds(builds: None, case: Case) -> None:
    _same(list(case.args), case.input, case.path)
    if not case.exit:
        _same(list(case.args), case.expected_path.read_bytes(), case.path)  # idempotence
        _same(["--remove", *case.remove_args], case.expected_path.read_bytes(), case.path)


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_gen", ROOT / "bench" / "gen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# the charts of `make bench` at its default sizes (bench/run.py)
CHARTS = {
    "dense": lambda gen, d: gen.write_chart(d, 500),
    "flow-items": lambda gen, d: gen.write_flow_items_chart(d, 500),
    "crds": lambda gen, d: gen.write_crd_chart(d, 10 * 1024 * 1024),
    "capi": lambda gen, d: gen.write_capi_chart(d, 50),
    "tiny": lambda gen, d: gen.write_tiny_chart(d),
}


@both_builds
@pytest.mark.parametrize("name", sorted(CHARTS))
def test_bench_chart_gives_the_same_bytes_in_both_builds(
    builds: None, name: str, tmp_path: Path
) -> None:
    helm = os.environ.get("HELM3_BIN") or str(ROOT / ".cache" / "tools" / "helm3" / "helm")
    chart = CHARTS[name](_gen(), tmp_path / "chart")
    env = {
        **os.environ,
        **{f"HELM_{v}_HOME": str(tmp_path / v.lower()) for v in ("DATA", "CONFIG", "CACHE")},
    }
    rendered = subprocess.run(
        [helm, "template", "rel", str(chart)], capture_output=True, env=env, check=True
    ).stdout
    assert rendered.count(b"\n---") >= 1
    _same([str(PROFILE), "--report"], rendered, tmp_path)


def _compiled_modules() -> list[Path]:
    """The modules the compiled build compiles: pyproject.toml's compile-exclude is the
    one list of those left out."""
    import fnmatch
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    hook = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]
    excluded: list[str] = hook["compile-exclude"]
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if not any(fnmatch.fnmatchcase(path.relative_to(ROOT).as_posix(), p) for p in excluded)
    ]


def test_most_of_the_package_is_compiled() -> None:
    compiled = {p.relative_to(PACKAGE).as_posix() for p in _compiled_modules()}
    assert {"engine.py", "yamltext/blockread.py", "yamltext/splice.py", "planners.py"} <= compiled
    assert len(compiled) >= 40


def _scopes(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_compiled_modules_keep_mypyc_rules() -> None:
    """What mypyc compiles differently from Python, found in this package:

    - one name bound by two ``except`` clauses of a function to two exception types:
      compiled, the name keeps the first type and the second clause raises TypeError;
    - a class attribute annotated with (only) a class defined later in the module: compiled,
      a record class (not native) evaluates its annotations, and the class does not exist
      yet (a segmentation fault at import)."""
    problems = []
    for path in _compiled_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT)
        for scope in _scopes(tree):
            bound: dict[str, set[str]] = {}
            for node in ast.walk(scope):
                if isinstance(node, ast.ExceptHandler) and node.name and node.type:
                    bound.setdefault(node.name, set()).add(ast.unparse(node.type))
            problems += [
                f"{where}: {getattr(scope, 'name', '?')}: except ... as {name}: {sorted(types)}"
                for name, types in bound.items()
                if len(types) > 1
            ]
        defined = {n.name: n.lineno for n in tree.body if isinstance(n, ast.ClassDef)}
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for stmt in cls.body:
                if not isinstance(stmt, ast.AnnAssign):
                    continue
                # a bare class name (`X | None`, `list[X]` are not evaluated as X)
                name = stmt.annotation.id if isinstance(stmt.annotation, ast.Name) else ""
                if defined.get(name, 0) > cls.lineno:
                    problems.append(
                        f"{where}:{stmt.lineno}: {cls.name} names {name}, defined later"
                    )
    assert not problems, "\n".join(problems)


def _plugin_copy(where: Path) -> Path:
    """What `helm plugin install` of this checkout gives the hook (bench/run.py copies
    the same)."""
    import shutil

    plugin = where / "proxy-postrender"
    plugin.mkdir()
    for name in ("pyproject.toml", "hatch_build.py", "README.md", "plugin.yaml"):
        shutil.copy(ROOT / name, plugin / name)
    for name in ("proxy_postrender", "plugin"):
        shutil.copytree(ROOT / name, plugin / name, ignore=shutil.ignore_patterns("__pycache__"))
    return plugin


@pytest.mark.build("pure")  # the pure run tests the fallback
def test_plugin_install_hook_falls_back_to_pure_python_without_a_compiler(
    tmp_path: Path,
) -> None:
    """No C compiler: the hook builds pure Python and says so in one line (with a
    compiler the hook compiles: the Helm 4 tests of make test-compiled install so)."""
    plugin = _plugin_copy(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROXY_POSTRENDER")}
    env.update(HELM_PLUGIN_DIR=str(plugin), CC="no-such-cc --version")
    proc = subprocess.run(
        ["sh", str(plugin / "plugin" / "install.sh"), "install"],
        capture_output=True,
        env=env,
        timeout=600,
        check=False,
    )
    said = proc.stderr.decode()
    assert proc.returncode == 0, said
    builds = [line for line in said.splitlines() if ": build: " in line]
    assert builds == [
        "proxy plugin (install): build: pure Python (no C compiler ('no-such-cc' not found))"
    ], said
    version = subprocess.run(
        [str(plugin / ".plugin-venv" / "bin" / "proxy-postrender"), "--version"],
        capture_output=True,
        check=True,
    )
    assert version.stdout == b"proxy-postrender 0.1.0 (pure Python)\n"
    assert not list((plugin / "proxy_postrender").rglob("*.so"))  # built in a scratch copy
