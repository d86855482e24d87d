"""The playback box beside the transcript: position and speed, the follow-playhead toggle below
them, and why playback is off (if it is). Narrow enough that the side panel fits a 1024 px window."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

SPEEDS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)


class PlaybackBox(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        title = QLabel("Playback")
        title.setObjectName("panelTitle")
        self.position_label = QLabel("0:00.0")
        self.position_label.setObjectName("positionLabel")
        self.position_label.setAccessibleName("Playback position")
        self.speed = QComboBox()
        for s in SPEEDS:
            self.speed.addItem(f"{s:g}×", s)
        self.speed.setCurrentIndex(SPEEDS.index(1.0))
        self.speed.setAccessibleName("Playback speed")
        self.speed.setToolTip("Playback speed (Ctrl+[ slower, Ctrl+] faster)")
        self.follow = QToolButton()  # shows the window's Follow Playhead action
        self.follow.setAccessibleName("Follow playhead")
        self.note = QLabel("")
        self.note.setObjectName("noteLabel")
        self.note.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.position_label, 1)
        row.addWidget(QLabel("Speed"))
        row.addWidget(self.speed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addLayout(row)
        # a row of its own: beside the speed it pushed the panel off a 1024 px window
        layout.addWidget(self.follow)
        layout.addWidget(self.note)

    def step_speed(self, direction: int) -> None:
        self.speed.setCurrentIndex(min(max(self.speed.currentIndex() + direction, 0), len(SPEEDS) - 1))
