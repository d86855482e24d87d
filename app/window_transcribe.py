"""The main window's transcription commands: the settings dialog, transcribe the recording,
transcribe a selection again (the range marked on the waveform, else the selected lines), and
restart the engine process after it stopped (a button on that message, `offer_restart`).

`TranscribeCommands` is mixed into `MainWindow`; it uses only the attributes listed on it."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox

from app.commands import range_bounds
from app.playback_controller import PlaybackController
from app.session import Session
from app.settings import SettingsStore, TranscribeSettings
from app.transcript_model import TranscriptModel
from app.widgets.retranscribe_dialog import RetranscribeDialog
from app.widgets.settings_dialog import SettingsDialog
from app.widgets.transcript_view import TranscriptView
from app.widgets.waveform_view import WaveformView
from app.worker import ENGINE_STOPPED

RESTART = "Restart the engine"


class TranscribeCommands:
    """Transcription commands, for `MainWindow` (a QMainWindow)."""

    store: SettingsStore
    settings: TranscribeSettings
    session: Session
    playback: PlaybackController
    model: TranscriptModel
    waveform: WaveformView
    transcript_view: TranscriptView

    show_message: Callable[[str], None]

    def show_settings(self) -> None:
        dialog = SettingsDialog(self.settings, self)
        if dialog.exec():
            self.set_settings(dialog.settings())

    def set_settings(self, settings: TranscribeSettings) -> None:
        self.settings = settings
        self.store.set_transcribe_settings(settings)

    def transcribe(self) -> bool:
        if self.session.audio is None:
            self.show_message("Open a recording first (Ctrl+O)")
            return False
        self.playback.pause()
        return self.session.transcribe(self.settings)

    def offer_restart(self, box: QMessageBox) -> None:
        """On the message that the engine stopped: a button that starts it again."""
        if box.windowTitle() == ENGINE_STOPPED:
            button = box.addButton(RESTART, QMessageBox.ButtonRole.AcceptRole)
            button.clicked.connect(self.restart_engine)
            box.setDefaultButton(button)

    def restart_engine(self) -> bool:
        return self.session.restart_engine(self.settings)

    def selected_range(self) -> tuple[float, float] | None:
        """The range marked on the waveform, else the span of the selected lines."""
        if self.waveform.marked_range is not None:
            return self.waveform.marked_range
        rows = self.transcript_view.selected_source_rows()
        if not rows:
            return None
        lines = [self.model.utterance(r) for r in rows]
        return min(u.start for u in lines), max(u.end for u in lines)

    def choose_retranscribe(self) -> None:
        span = self.selected_range()
        if span is None or self.session.audio is None:
            self.show_message("Shift+drag on the waveform or select lines to transcribe again")
            return
        start, end = range_bounds(self.model, *span)  # what runs: the whole lines the range cuts
        dialog = RetranscribeDialog(self.settings, start, end, self)
        if dialog.exec():
            self.retranscribe_with(dialog.settings(), start, end)

    def retranscribe_with(self, settings: TranscribeSettings, start: float, end: float) -> bool:
        self.playback.pause()
        return self.session.retranscribe(settings, start, end)
