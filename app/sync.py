"""Keeps the window's views in step: waveform ↔ transcript ↔ playback.

- a loaded recording goes to the waveform and the player; the plan (speech, chunks) to the waveform;
- every document change redraws the speaker lanes;
- selecting an utterance shows it on the waveform; clicking the waveform selects the utterance
  there (or the nearest) and moves the playhead; double-clicking plays from there;
- while audio plays, the playhead moves, the utterance under it is tinted and kept in view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox

from app import speakers as sp
from app.actions import shortcut_table
from app.main_menus import SPEEDS
from app.resources import icon
from app.timeline import format_time

if TYPE_CHECKING:
    from app.main_window import MainWindow
    from app.worker import LoadedAudio


class ViewSync:
    def __init__(self, window: MainWindow) -> None:
        self.w = window
        w = window
        w.session.audio_ready.connect(self.on_audio)
        w.session.plan_ready.connect(self.on_plan)
        w.model.document_changed.connect(self.refresh_lanes)
        w.transcript_view.row_selected.connect(self.on_row_selected)
        w.waveform.clicked.connect(self.on_waveform_click)
        w.waveform.activated.connect(lambda t: w.playback.play(t))
        w.playback.position_changed.connect(self.on_position)
        w.playback.state_changed.connect(lambda _: self.update_playback_actions())
        w.playback.failed.connect(w.show_message)
        w.speed_box.currentIndexChanged.connect(lambda _: w.playback.set_speed(w.speed_box.currentData()))

    def on_audio(self, audio: LoadedAudio) -> None:
        w = self.w
        w.waveform.set_audio(audio.envelope)
        w.waveform.set_speech([], [])
        w.waveform.set_chunks([])
        w.playback.set_audio(audio.recording.samples, audio.recording.sample_rate)
        w.waveform.set_playhead(0.0)
        self.refresh_lanes()
        w.update_actions()
        w.show_message(f"Opened {audio.path.name} ({format_time(audio.recording.duration, 0)})")

    def on_plan(self, prepared: object) -> None:
        speech = getattr(prepared, "speech", ())
        chunks = getattr(prepared, "chunks", ())
        self.w.waveform.set_speech([s.start for s in speech], [s.end for s in speech])
        self.w.waveform.set_chunks([(c.index, c.start, c.end) for c in chunks])

    def refresh_lanes(self) -> None:
        w = self.w
        w.waveform.set_lanes(sp.speaker_lanes(w.model.book, w.model.utterances) if w.model.rowCount() else [])
        if w.model.meta.chunks and w.session.prepared is None:
            w.waveform.set_chunks([(c.index, c.start, c.end) for c in w.model.meta.chunks])

    def on_row_selected(self, row: int) -> None:
        u = self.w.model.utterance(row)
        self.w.waveform.set_selection(u.start, u.end)
        self.w.waveform.ensure_visible(u.start, u.end)

    def on_waveform_click(self, t: float) -> None:
        w = self.w
        w.playback.seek(t)
        row = w.model.nearest_row(t)
        if row is not None:
            w.transcript_view.select_row(row)

    def on_position(self, t: float) -> None:
        w = self.w
        w.waveform.set_playhead(t)
        w.position_label.setText(format_time(t))
        row = w.model.row_at(t)
        w.model.set_current_row(row)
        if w.playback.playing:
            x0, x1 = w.waveform.visible_range()
            if not x0 <= t <= x1:
                w.waveform.show_range(t, t + (x1 - x0))
            if row is not None:
                index = w.transcript_view.filter.mapFromSource(w.model.index(row, 0))
                if index.isValid():
                    w.transcript_view.scrollTo(index)

    def play_selection(self) -> None:
        row = self.w.transcript_view.current_source_row()
        if row is not None:
            self.w.playback.play(self.w.model.utterance(row).start)

    def step_speed(self, direction: int) -> None:
        box = self.w.speed_box
        box.setCurrentIndex(min(max(box.currentIndex() + direction, 0), len(SPEEDS) - 1))

    def update_playback_actions(self) -> None:
        w = self.w
        reason = w.playback.reason
        has_audio = w.playback.player is not None
        for name in ("play", "play_selection", "slower", "faster"):
            action = w.actions_by_name[name]
            action.setEnabled(reason is None and has_audio)
            base = action.property("baseToolTip")
            action.setToolTip(f"{base}. {reason}" if reason else base)
        playing = w.playback.playing
        w.actions_by_name["play"].setText("&Pause" if playing else "&Play")
        w.actions_by_name["play"].setIcon(icon("pause" if playing else "play"))
        w.playback_note.setText(reason or "")
        w.speed_box.setEnabled(reason is None)

    def show_shortcuts(self) -> None:
        rows = "".join(
            f"<tr><td>{m}</td><td>{c}</td><td><b>{k}</b></td></tr>" for m, c, k in shortcut_table()
        )
        table = f"<table cellspacing=4>{rows}</table>"
        close = QMessageBox.StandardButton.Close
        box = QMessageBox(QMessageBox.Icon.NoIcon, "Keyboard shortcuts", table, close, self.w)
        box.setAccessibleName("Keyboard shortcuts")
        self.w.last_dialog = box
        box.open()

    def show_about(self) -> None:
        QMessageBox.about(self.w, "About Murmur", "<b>Murmur</b><br>Long-form, speaker-attributed "
                          "transcription that runs on your own computer.")  # fmt: skip
