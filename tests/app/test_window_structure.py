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
