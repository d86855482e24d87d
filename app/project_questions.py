"""The questions opening and saving a project asks the user, each a small function of its parent
window: save over a file changed on disk, open a damaged project as far as it can be read, where a
recording that moved is now. Each returns the answer; none changes anything itself."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.project import AudioRef

BUTTONS = QMessageBox.StandardButton


def save_over_changes(parent: QWidget, path: Path) -> bool:
    """Ask before saving over a project file something else changed since it was opened."""
    answer = QMessageBox.question(
        parent, "Project changed on disk",
        f"{path.name} was changed on disk since you opened it (another window or program). "
        "Save over those changes?", BUTTONS.Save | BUTTONS.Cancel, BUTTONS.Cancel,
    )  # fmt: skip
    return answer == BUTTONS.Save


def open_what_can_be_read(parent: QWidget, damage: str) -> bool:
    """Ask whether to open a project as far as it can be read (the file stays as it is)."""
    answer = QMessageBox.question(
        parent, "Open what can be read?",
        f"{damage}.\n\nOpen the project with those bytes shown as \ufffd? The file is not "
        "changed until you save it.", BUTTONS.Open | BUTTONS.Cancel, BUTTONS.Open,
    )  # fmt: skip
    return answer == BUTTONS.Open


def where_is(parent: QWidget, ref: AudioRef) -> Path | None:
    """The recording `ref` names, found by the user (None: they cancelled)."""
    name, folder = Path(ref.path).name, str(Path(ref.path).parent)
    chosen, _ = QFileDialog.getOpenFileName(parent, f"Where is {name}?", folder)
    return Path(chosen) if chosen else None
