"""What the transcript area shows before there is a transcript: where to start.

Without a recording: "Drop a recording here" with an Open button. With a recording but no
transcript: the Transcribe hint and button. `set_state(has_audio)` switches between the two.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget


class DropZone(QWidget):
    open_requested = Signal()
    transcribe_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dropZone")
        self.setAccessibleName("Start here")
        self.title = QLabel("")
        self.title.setObjectName("dropTitle")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint = QLabel("")
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.button = QPushButton("")
        self.button.setObjectName("primaryButton")
        self.button.clicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        for w in (self.title, self.hint):
            layout.addWidget(w)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignCenter)
        layout.addStretch(1)
        self.has_audio: bool | None = None
        self.set_state(False)

    def set_state(self, has_audio: bool) -> None:
        if has_audio == self.has_audio:  # called on every row insert: only a change relabels
            return
        self.has_audio = has_audio
        if has_audio:
            self.title.setText("Ready to transcribe")
            self.hint.setText("Press Transcribe (Ctrl+R) to turn the recording into an editable, "
                              "speaker-labelled transcript. Transcribe ▸ Settings (Ctrl+,) "
                              "picks the model.")  # fmt: skip
            self.button.setText("Transcribe")
        else:
            self.title.setText("Drop a recording here")
            self.hint.setText("or open one (Ctrl+O): audio or video files, or a saved .murmur project. "
                              "Then press Transcribe (Ctrl+R).")  # fmt: skip
            self.button.setText("Open…")
        self.button.setAccessibleName(self.button.text())

    def _clicked(self) -> None:
        (self.transcribe_requested if self.has_audio else self.open_requested).emit()
