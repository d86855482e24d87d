"""The engine's modules import each other without circles (lazy imports inside functions count),
lower layers never import upward (audio never imports backends); module length is held in
tests/test_boundaries.py."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def module_name(path: Path) -> str:
    parts = path.relative_to(ENGINE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, set[str]]:
    """Each engine module → the engine modules it imports anywhere in its body (packages resolved)."""
    modules = {module_name(p): p for p in ENGINE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in modules else node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
        graph[name] = {m for m in found if m in modules and m != name and not name.startswith(m + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_engine_modules_import_each_other_without_circles():
    graph = {k: {m for m in v if not m.endswith("__init__")} for k, v in imports().items()}
    packages = {m for m in graph if (ENGINE.parent / m.replace(".", "/") / "__init__.py").exists()}
    plain = {
        k: v - packages for k, v in graph.items() if k not in packages
    }  # a package's re-exports are no circle
    assert cycles(plain) == []


def test_audio_never_imports_the_backends():
    upward = {m: sorted(d for d in deps if d.startswith("engine.backends")) for m, deps in imports().items()}
    assert {m: d for m, d in upward.items() if m.startswith("engine.audio") and d} == {}

