"""Qt side of playback: play/pause/seek/speed actions around `app.playback.Player`.

`PlaybackController` tells whether playback can work here (`reason`, None when it can), polls the
player's position about 30 times a second while playing (`position_changed(seconds)`), and
reports `state_changed(playing)`. Without an audio device every method is a harmless no-op and
`reason` says why, for the status bar and the disabled actions' tooltips.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from app.playback import PlaybackError, Player, unavailable_reason

POLL_MS = 33


class PlaybackController(QObject):
    position_changed = Signal(float)
    state_changed = Signal(bool)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.reason: str | None = unavailable_reason()
        self.player: Player | None = None
        self.position = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)
        self._speed = 1.0

    @property
    def available(self) -> bool:
        return self.reason is None and self.player is not None

    @property
    def playing(self) -> bool:
        return self.player is not None and self.player.playing

    def set_audio(self, samples: np.ndarray | None, sample_rate: int = 16000) -> None:
        self.stop()
        self.player = None if samples is None else Player(samples, sample_rate)
        if self.player is not None:
            self.player.set_speed(self._speed)
            if self.reason is None:
                self.player.prepare()  # the device opens while the window shows the recording
        self.position = 0.0

    def play(self, at: float | None = None) -> None:
        if self.player is None or self.reason is not None:
            if self.reason:
                self.failed.emit(self.reason)
            return
        try:
            self.player.play(self.position if at is None else at)
        except PlaybackError as exc:
            self.failed.emit(str(exc))
            return
        self._timer.start()
        self.state_changed.emit(True)

    def pause(self) -> None:
        if self.player is not None and self.player.playing:
            self.player.pause()
            self.position = self.player.position
        self._timer.stop()
        self.state_changed.emit(False)

    def toggle(self) -> None:
        self.pause() if self.playing else self.play()

    def stop(self) -> None:
        if self.player is not None:
            self.player.close()
        self._timer.stop()

    def seek(self, seconds: float) -> None:
        self.position = max(seconds, 0.0)
        if self.player is not None:
            self.player.seek(self.position)
        self.position_changed.emit(self.position)

    def set_speed(self, speed: float) -> None:
        self._speed = speed
        if self.player is not None:
            self.player.set_speed(speed)

    def _poll(self) -> None:
        if self.player is None:
            return
        self.position = self.player.position
        self.position_changed.emit(self.position)
        if not self.player.playing:
            self._timer.stop()
            self.player.pause()
            self.state_changed.emit(False)
