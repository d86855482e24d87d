"""Architecture boundaries: the engine never imports Qt; the app never imports torch, transformers
or pyannote at module import time (only inside functions, so the window opens fast); importing
the app's modules really does not load torch; and no engine or app module passes 300 lines."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QT = ("PySide6", "PyQt5", "PyQt6", "pyqtgraph", "shiboken6")
HEAVY = ("torch", "torchaudio", "transformers", "pyannote", "faster_whisper", "ctranslate2")


def _imports(tree: ast.AST, top_level_only: bool) -> list[tuple[int, str]]:
    found = []
    nodes = ast.iter_child_nodes(tree) if top_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif top_level_only and isinstance(node, ast.If | ast.Try | ast.With):
            found += _imports(node, top_level_only=True)  # conditional imports still run at import
    return found


def _violations(package: str, banned: tuple[str, ...], top_level_only: bool) -> list[str]:
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, name in _imports(tree, top_level_only):
            if name.split(".")[0] in banned:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return bad


def test_engine_never_imports_qt():
    assert _violations("engine", QT, top_level_only=False) == []


def test_app_modules_do_not_import_torch_or_transformers_at_import_time():
    assert _violations("app", HEAVY, top_level_only=True) == []


def test_importing_every_app_module_leaves_torch_unloaded():
    modules = [
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in sorted((ROOT / "app").rglob("*.py"))
        if p.name != "__main__.py"
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted(m for m in {list(HEAVY)!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_opening_a_recording_in_the_window_does_not_import_scipy():
    """The window decodes and plans with `engine.pipeline` on a thread of its own process: an
    import of scipy there (2 s of module code) held the interpreter the window draws with."""
    code = "import sys, app.main_window, app.worker, engine.pipeline\nprint('scipy' in sys.modules)\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_saving_a_project_does_not_import_python_docx():
    """The autosave writes a project's JSON through `engine.export` on the window's process; the
    package loading python-docx with its exporters held the interpreter about 0.1 s mid-recording.
    Catches: `import docx` at the top of `engine/export/document.py` again."""
    code = ("import sys, app.project, app.project_recovery, app.project_writer, engine.export\n"
            "print('docx' in sys.modules)\n")  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": ""},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_every_engine_and_app_module_stays_within_300_lines():
    modules = [p for package in ("engine", "app") for p in sorted((ROOT / package).rglob("*.py"))]
    lengths = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in modules}
    long = {name: n for name, n in lengths.items() if n > 300}
    assert long == {}  # split a longer module by meaning (one class per file; small pure functions)
