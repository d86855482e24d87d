"""The window's modules depend one way: only the entry point imports the window, and the
controllers and widgets never import it back (not even for type hints)."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_only_the_entry_point_imports_the_main_window():
    importers = sorted(str(p.relative_to(APP)) for p in APP.rglob("*.py") if "app.main_window" in _imports(p))
    assert importers == ["__main__.py"]


def _app_graph() -> dict[str, set[str]]:
    """Module → the app modules it imports anywhere (in functions and type-checking blocks too)."""
    graph = {}
    for path in APP.rglob("*.py"):
        name = ".".join(("app", *path.relative_to(APP).with_suffix("").parts)).removesuffix(".__init__")
        graph[name] = {m for m in _imports(path) if m.startswith("app.") or m == "app"}
    for name, deps in graph.items():  # "from app import commands" names the module app.commands
        text = (APP / Path(*name.split(".")[1:])).with_suffix(".py")
        if text.exists():
            for node in ast.walk(ast.parse(text.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "app":
                    deps |= {f"app.{a.name}" for a in node.names}
        deps.discard("app")
    return graph


def test_no_two_app_modules_import_each_other_even_for_type_hints():
    graph = _app_graph()

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for dep in graph.get(start, ()):
            if dep == goal or (dep not in seen and (seen.add(dep) or reaches(dep, goal, seen))):
                return True
        return False

    circles = sorted(name for name in graph if reaches(name, name, set()))
    assert circles == []


def test_every_app_module_stays_under_300_lines():
    long = {str(p.relative_to(APP)): n for p in APP.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300}  # fmt: skip
    assert long == {}
