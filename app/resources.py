"""Where the app finds its icons, style sheet and demo files, in a checkout and in a frozen build.

`resource_path("icons", "open.svg")` resolves under the repository's `resources/` folder, or under
the bundle folder a PyInstaller build unpacks to (`sys._MEIPASS`). `icon(name)` loads an SVG icon
(an empty icon if it is missing, never an error); `style_sheet()` the light theme.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtGui import QIcon


def resources_root() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parents[1] / "resources"


def resource_path(*parts: str) -> Path:
    return resources_root().joinpath(*parts)


def icon(name: str) -> QIcon:
    path = resource_path("icons", f"{name}.svg")
    return QIcon(str(path)) if path.exists() else QIcon()


def style_sheet() -> str:
    """The style sheet, with `%ICONS%` pointing at the icon folder (for check marks and the like).
    It sets both text and background of every input, so a dark system palette stays readable."""
    path = resource_path("murmur.qss")
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return text.replace("%ICONS%", resource_path("icons").as_posix())
