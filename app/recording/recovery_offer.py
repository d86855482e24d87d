"""The start-up question about a recording a crash cut short, and what answering it does.

`offer_recovery(window, folder)` looks for cut-short recordings in `folder`
(`engine.live.recovery.find_partial`); for the newest it opens a window-modal, non-blocking
question (kept as `window.last_dialog`). Recover makes the file whole (`recover`), says how many
seconds were kept and opens it; Not Now leaves it to be offered again. Returns the box and its
Recover button, or None when there is nothing to recover.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QMessageBox

from engine.errors import RecordingError


def offer_recovery(window: Any, folder: Path) -> tuple[QMessageBox, QAbstractButton] | None:
    from engine.live.recovery import find_partial

    partial = find_partial(folder)
    if not partial:
        return None
    newest = partial[0]
    box = QMessageBox(QMessageBox.Icon.Question, "Recover a recording?",
                      f"The recording {newest.audio.name} was cut short (Murmur or the computer "
                      "stopped while recording). Recover what was recorded and open it?",
                      parent=window)  # fmt: skip
    box.setAccessibleName("Recover a recording?")
    recover_button = box.addButton("Recover", QMessageBox.ButtonRole.AcceptRole)
    box.addButton("Not Now", QMessageBox.ButtonRole.RejectRole)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.buttonClicked.connect(lambda b: _recover(window, newest) if b is recover_button else None)
    window.last_dialog = box
    box.open()
    return box, recover_button


def _recover(window: Any, partial: Any) -> None:
    from engine.live.recovery import recover

    try:
        seconds = recover(partial)
    except RecordingError as exc:
        window.show_error("Cannot recover the recording", str(exc))
        return
    window.show_message(f"Recovered {seconds:.0f} s of {partial.audio.name}")
    window.open_path(partial.audio)
