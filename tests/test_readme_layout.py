"""The README's module map names every package and top-level module of the engine and every part
of the app, and names nothing that is not there (a new package, or a moved one, updates it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _layout() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## Layout", 1)[1].split("\n## ", 1)[0]


def _parts(folder: str) -> set[str]:
    base = ROOT / folder
    packages = {f"{folder}/{p.name}/" for p in base.iterdir() if (p / "__init__.py").exists()}
    modules = {f"{folder}/{p.name}" for p in base.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return packages | modules


def test_the_module_map_names_every_engine_package_and_module():
    named = set(re.findall(r"`((?:engine|app)/[^`]*)`", _layout()))
    assert sorted(_parts("engine") - named) == []


def test_the_module_map_names_every_app_folder_and_only_paths_that_exist():
    layout = _layout()
    app_folders = {p for p in _parts("app") if p.endswith("/")}
    assert all(f"`{p.removeprefix('app/')}`" in layout or f"`{p}`" in layout for p in app_folders)
    named = set(re.findall(r"`((?:engine|app|bench|docs|resources)/[^`]*)`", layout))
    assert sorted(p for p in named if not (ROOT / p).exists()) == []
