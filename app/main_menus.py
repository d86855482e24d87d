"""Menus, the recent-files menu and the toolbar of the main window, built from `app.actions`.

Nothing here knows the window: `build_menus` takes a menu bar and the actions by name,
`RecentMenu` owns the Open Recent menu and says which file was chosen (`chosen(path)`), and
`build_toolbar` fills a toolbar. Every menu item shows its shortcut; the toolbar is
keyboard-focusable and every control has an accessible name.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMenuBar, QToolBar, QToolButton

from app.actions import ACTIONS, MENUS

TOOLBAR = ("open", "save", "export", None, "record", "transcribe", "retranscribe", "cancel", "settings", None,
           "undo", "redo", None, "play", "zoom_in", "zoom_out", "zoom_fit")  # fmt: skip
SEPARATE_BEFORE = ("quit", "undo", "split", "delete_lines", "go_to_time", "start_earlier", "transcribe",
                   "zoom_in", "slower", "skip_back", "speaker_1")  # fmt: skip


class RecentMenu(QObject):
    """File ▸ Open Recent: lists `files`, emits `chosen(path)` and `cleared()`."""

    chosen = Signal(Path)
    cleared = Signal()

    def __init__(self, menu: QMenu) -> None:
        super().__init__(menu)
        self.menu = menu
        menu.setAccessibleName("Recent files")

    def show_files(self, files: list[str]) -> None:
        menu = self.menu
        menu.clear()
        for i, path in enumerate(files):
            action = menu.addAction(f"&{i + 1} {Path(path).name}" if i < 9 else Path(path).name)
            action.setToolTip(path)
            action.setStatusTip(path)
            action.triggered.connect(lambda _=False, p=path: self.chosen.emit(Path(p)))
        if files:
            menu.addSeparator()
            clear = menu.addAction("Clear Recent Files")
            clear.triggered.connect(lambda: (self.cleared.emit(), self.show_files([])))
        menu.setEnabled(bool(files))


def build_menus(bar: QMenuBar, actions: dict[str, QAction]) -> RecentMenu:
    """Every action in its menu; returns the recent-files menu (placed before Save)."""
    menus = {name: bar.addMenu(f"&{name}") for name in MENUS}
    recent: RecentMenu | None = None
    for spec in ACTIONS:
        menu = menus[spec.menu]
        if spec.name == "save":
            recent = RecentMenu(menus["File"].addMenu("Open &Recent"))
        if spec.name in SEPARATE_BEFORE and menu.actions():
            menu.addSeparator()
        menu.addAction(actions[spec.name])
    if recent is None:
        raise ValueError("the action table has no 'save' entry to place Open Recent before")
    return recent


def build_toolbar(toolbar: QToolBar, actions: dict[str, QAction]) -> None:
    toolbar.setObjectName("mainToolbar")
    toolbar.setAccessibleName("Main toolbar")
    toolbar.setIconSize(QSize(20, 20))
    toolbar.setMovable(False)
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for name in TOOLBAR:
        if name is None:
            toolbar.addSeparator()
            continue
        action = actions[name]
        toolbar.addAction(action)
        button = toolbar.widgetForAction(action)
        if isinstance(button, QToolButton):
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            button.setAccessibleName(action.text().replace("&", "").rstrip("…"))
            if name not in ("open", "transcribe", "export", "play"):
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
