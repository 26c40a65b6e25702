"""The package's layout: import layers, no circles, docstring-only subpackage faces.

The layers are data: the numbered list in the package docstring
(proxy_postrender/__init__.py). Every import of every module (at the top, in
a function, or for type checkers only) is read from the source and held
against it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import proxy_postrender

PACKAGE = Path(proxy_postrender.__file__).resolve().parent
ROOT = PACKAGE.name
_LAYER_LINE = re.compile(r"^(\d+)\. (.+?) — ", re.M)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layers(doc: str | None = proxy_postrender.__doc__) -> dict[str, int]:
    """unit -> layer, from the package docstring ("pods" for pods/, "engine" for engine.py)."""
    found: dict[str, int] = {}
    for number, names in _LAYER_LINE.findall(doc or ""):
        for name in names.split(", "):
            found[name.strip().rstrip("/")] = int(number)
    return found


def _unit(module: str) -> str:
    """The unit a module belongs to: its subpackage, or the top-level module itself."""
    return module.split(".")[1] if "." in module else ""


def imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the package's modules it imports (anywhere in its code)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parent, base] if base else parent)
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        found.add(f"{base}.{alias.name}")  # a module of a package
                    elif base in modules:
                        found.add(base)
        graph[name] = found - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def violations(graph: dict[str, set[str]], table: dict[str, int]) -> list[str]:
    """Imports that go up a layer or sideways into another unit of the same layer."""
    wrong = []
    for module, targets in sorted(graph.items()):
        if module == ROOT:
            continue
        for target in sorted(targets):
            if target == ROOT:
                continue  # __version__ and TYPE_CHECKING, from anywhere
            here, there = _unit(module), _unit(target)
            if here == there:
                continue
            if table[there] >= table[here]:
                wrong.append(
                    f"{module} (layer {table[here]}) imports {target} (layer {table[there]})"
                )
    return wrong


def test_every_module_has_a_layer() -> None:
    table = layers()
    missing = sorted({_unit(m) for m in _modules() if m != ROOT} - set(table))
    assert not missing, f"add to the layer list in {ROOT}/__init__.py: {missing}"


def test_imports_go_down_the_layers() -> None:
    assert violations(imports(_modules()), layers()) == []


def test_no_import_circles() -> None:
    assert cycles(imports(_modules())) == []


def test_the_checks_catch_what_they_are_there_to_catch() -> None:
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": set()}
    assert cycles(graph) == [["p.a", "p.b", "p.c"]]
    assert cycles({"p.a": {"p.b"}, "p.b": set()}) == []
    table = layers("1. a — x\n2. b, sub/ — y\n2. c — z\n")
    assert table == {"a": 1, "b": 2, "sub": 2, "c": 2}
    assert violations({"p.a": {"p.b"}}, table) == ["p.a (layer 1) imports p.b (layer 2)"]
    assert violations({"p.b": {"p.c"}}, table) == ["p.b (layer 2) imports p.c (layer 2)"]
    assert violations({"p.sub.x": {"p.sub.y", "p.a"}, "p.sub.y": set()}, table) == []


@pytest.mark.parametrize(
    "package", sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py")), ids=str
)
def test_subpackage_faces_are_docstrings_that_name_what_they_may_import(package: str) -> None:
    source = (PACKAGE / package / "__init__.py").read_text(encoding="utf-8")
    body = ast.parse(source).body
    assert len(body) == 1 and isinstance(body[0], ast.Expr), "docstring only: no imports"
    doc = ast.get_docstring(ast.parse(source)) or ""
    match = re.search(r"^May import: (.*?)\.$", doc, re.M | re.S)
    assert match, f"{package}/__init__.py: say what it may import ('May import: ...')"
    said = {name.strip().rstrip("/") for name in match.group(1).replace("\n", " ").split(",")}
    table = layers()
    allowed = {unit for unit, layer in table.items() if layer < table[package]}
    assert said == allowed
