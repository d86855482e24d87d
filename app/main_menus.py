"""Menus, toolbar and the playback box of the main window, built from `app.actions`.

Kept apart from the window so that the window module holds wiring only. Every menu item shows its
shortcut; the toolbar is keyboard-focusable and every control has an accessible name.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QToolBar, QToolButton, QVBoxLayout

from app.actions import ACTIONS, MENUS

if TYPE_CHECKING:
    from app.main_window import MainWindow

TOOLBAR = ("open", "save", "export", None, "transcribe", "cancel", "settings", None,
           "undo", "redo", None, "play", "zoom_in", "zoom_out", "zoom_fit")  # fmt: skip
SEPARATE_BEFORE = ("quit", "undo", "split", "transcribe", "zoom_in", "slower", "speaker_1")
SPEEDS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)


def build_menus(window: MainWindow) -> None:
    bar = window.menuBar()
    menus = {name: bar.addMenu(f"&{name}") for name in MENUS}
    for spec in ACTIONS:
        menu = menus[spec.menu]
        if spec.name == "save":
            window.recent_menu = menus["File"].addMenu("Open &Recent")
            window.recent_menu.setAccessibleName("Recent files")
            refresh_recent(window, window.store.recent_files())
        if spec.name in SEPARATE_BEFORE and menu.actions():
            menu.addSeparator()
        menu.addAction(window.actions_by_name[spec.name])


def refresh_recent(window: MainWindow, files: list[str]) -> None:
    menu = window.recent_menu
    menu.clear()
    for i, path in enumerate(files):
        action = menu.addAction(f"&{i + 1} {Path(path).name}" if i < 9 else Path(path).name)
        action.setToolTip(path)
        action.setStatusTip(path)
        action.triggered.connect(lambda _=False, p=path: window.open_path(Path(p)))
    if files:
        menu.addSeparator()
        clear = menu.addAction("Clear Recent Files")
        clear.triggered.connect(lambda: (window.store.clear_recent_files(), refresh_recent(window, [])))
    menu.setEnabled(bool(files))


def build_toolbar(window: MainWindow) -> None:
    toolbar = QToolBar("Main toolbar")
    toolbar.setObjectName("mainToolbar")
    toolbar.setAccessibleName("Main toolbar")
    toolbar.setIconSize(QSize(20, 20))
    toolbar.setMovable(False)
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    window.addToolBar(toolbar)
    for name in TOOLBAR:
        if name is None:
            toolbar.addSeparator()
            continue
        action = window.actions_by_name[name]
        toolbar.addAction(action)
        button = toolbar.widgetForAction(action)
        if isinstance(button, QToolButton):
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
            button.setAccessibleName(action.text().replace("&", "").rstrip("…"))
            if name not in ("open", "transcribe", "export", "play"):
                button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)


def playback_box(window: MainWindow, layout: QVBoxLayout) -> QComboBox:
    title = QLabel("Playback")
    title.setObjectName("panelTitle")
    window.position_label = QLabel("0:00.0")
    window.position_label.setObjectName("positionLabel")
    window.position_label.setAccessibleName("Playback position")
    speed = QComboBox()
    for s in SPEEDS:
        speed.addItem(f"{s:g}×", s)
    speed.setCurrentIndex(SPEEDS.index(1.0))
    speed.setAccessibleName("Playback speed")
    speed.setToolTip("Playback speed (Ctrl+[ slower, Ctrl+] faster)")
    window.playback_note = QLabel("")
    window.playback_note.setObjectName("noteLabel")
    window.playback_note.setWordWrap(True)
    row = QHBoxLayout()
    row.addWidget(window.position_label, 1)
    row.addWidget(QLabel("Speed"))
    row.addWidget(speed)
    layout.addWidget(title)
    layout.addLayout(row)
    layout.addWidget(window.playback_note)
    return speed
