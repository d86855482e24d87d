"""Keeps the views in step: waveform ↔ transcript ↔ playback (no reference to the window).

- a loaded recording goes to the waveform and the player; the plan (speech, chunks) to the waveform;
- a change of turns updates only the lanes of the speakers it names (`turns_changed`); a change of
  the speaker book re-orders, renames and recolours lanes without recomputing the others' turns;
- selecting an utterance shows it on the waveform and moves the playhead to its start; while a
  line is edited, moving the caret onto a word moves the playhead to that word; clicking the
  waveform selects the utterance there (or the nearest) and moves the playhead; double-clicking
  plays from there; Back / Forward 5 s move the playhead;
- while audio plays, the playhead moves, the utterance under it is tinted and, while following,
  kept in view (only while no line is being edited: an open editor is never scrolled away, closed
  or refilled). Scrolling the transcript or selecting another line while playing stops following
  (`following_changed(False)`) until the user asks again (`set_following(True)`);
- Play Line plays the selected line and stops at its end; with looping on it starts it again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction

from app import speakers as sp
from app.edits import word_at
from app.playback_controller import PlaybackController
from app.resources import icon
from app.timeline import format_time
from app.transcript_model import TranscriptModel
from app.widgets.playback_box import PlaybackBox
from app.widgets.transcript_view import TranscriptView
from app.widgets.waveform_view import WaveformView

if TYPE_CHECKING:
    from app.jobs import LoadedAudio
    from app.session import Session

SKIP = 5.0  # seconds per Back / Forward


class ViewSync(QObject):
    message = Signal(str)
    following_changed = Signal(bool)

    def __init__(self, session: Session, model: TranscriptModel, view: TranscriptView,
                 waveform: WaveformView, playback: PlaybackController, box: PlaybackBox,
                 actions: dict[str, QAction]) -> None:  # fmt: skip
        super().__init__(session)
        self.session, self.model, self.view, self.waveform = session, model, view, waveform
        self.playback, self.box, self.actions = playback, box, actions
        self._lanes: dict[str | None, sp.Lane] = {}
        self._showing_playing: bool | None = None
        self._seeking = False
        self.following = True
        self.looping = False
        self._line: tuple[float, float] | None = None  # the span Play Line stops (or loops) at
        session.audio_ready.connect(self.on_audio)
        session.plan_ready.connect(self.on_plan)
        model.turns_changed.connect(self.update_lanes)
        model.speakers_changed.connect(lambda: self.update_lanes(frozenset()))
        view.row_selected.connect(self.on_row_selected)
        view.caret_moved.connect(self.on_caret)
        view.verticalScrollBar().actionTriggered.connect(self._on_user_scroll)  # never emitted by code
        waveform.clicked.connect(self.on_waveform_click)
        waveform.activated.connect(lambda t: playback.play(t))
        playback.position_changed.connect(self.on_position)
        playback.state_changed.connect(self._on_state)
        playback.failed.connect(self.message)
        box.speed.currentIndexChanged.connect(lambda _: playback.set_speed(box.speed.currentData()))

    def _on_state(self, playing: bool) -> None:
        if not playing and not self.looping:
            self._line = None  # a pause ends Play Line; Play again plays on
        self.update_playback_actions()

    def on_audio(self, audio: LoadedAudio) -> None:
        self.waveform.set_audio(audio.envelope)
        self.waveform.set_speech([], [])
        self.waveform.set_chunks([])
        self.waveform.set_range(None)
        self.playback.set_audio(audio.recording.samples, audio.recording.sample_rate)
        self.waveform.set_playhead(0.0)
        self.update_lanes(None)
        self.update_playback_actions()
        self.message.emit(f"Opened {audio.path.name} ({format_time(audio.recording.duration, 0)})")

    def on_plan(self, prepared: object) -> None:
        speech = getattr(prepared, "speech", ())
        chunks = getattr(prepared, "chunks", ())
        self.waveform.set_speech([s.start for s in speech], [s.end for s in speech])
        self.waveform.set_chunks([(c.index, c.start, c.end) for c in chunks])

    def update_lanes(self, ids: frozenset[str | None] | None) -> None:
        """Lanes for the book's speakers; only those in `ids` (all when None) get new turns."""
        m = self.model
        if ids is None:
            self._lanes = {lane.key: lane for lane in sp.speaker_lanes(m.book, m.utterances)}
        else:
            for sid in ids:
                self._lanes.pop(sid, None)
        lanes = []
        for info in m.book:
            lane = self._lanes.get(info.id)
            if lane is None or (lane.name, lane.color) != (info.name, info.color):
                starts, ends = (lane.starts, lane.ends) if lane is not None else m.turns(info.id)
                lane = sp.Lane(info.name, info.color, starts, ends, info.id)
            lanes.append(lane)
        if None in m.stats():
            lane = self._lanes.get(None) or sp.Lane(sp.UNASSIGNED_NAME, sp.UNASSIGNED_COLOR, *m.turns(None))
            lanes.append(lane)
        self._lanes = {lane.key: lane for lane in lanes}
        self.waveform.set_lanes(lanes if m.rowCount() else [])
        if m.meta.chunks and self.session.prepared is None:
            self.waveform.set_chunks([(c.index, c.start, c.end) for c in m.meta.chunks])

    def set_following(self, on: bool) -> None:
        if on != self.following:
            self.following = on
            self.following_changed.emit(on)
            if on:
                self.on_position(self.playback.position)

    def _stop_following(self) -> None:
        if self.playback.playing and self.following:
            self.set_following(False)
            self.message.emit("Stopped following the playhead (Ctrl+Shift+L follows it again)")

    def _on_user_scroll(self, _action: int) -> None:
        self._stop_following()

    def on_row_selected(self, row: int) -> None:
        if row != self.model.row_at(self.playback.position):
            self._stop_following()
        u = self.model.utterance(row)
        self.waveform.set_selection(u.start, u.end)
        self.waveform.ensure_visible(u.start, u.end)
        if not self.playback.playing:
            self.playback.seek(u.start)

    def on_caret(self, row: int, position: int) -> None:
        word = word_at(self.model.utterance(row), position)
        if word is not None and not self.playback.playing and not self._seeking:
            self._seeking = True  # a seek repaints lines; nothing it causes may seek again
            try:
                self.playback.seek(word.start)
            finally:
                self._seeking = False
        self.following = True
        self.looping = False
        self._line: tuple[float, float] | None = None  # the span Play Line stops (or loops) at

    def on_waveform_click(self, t: float) -> None:
        row = self.model.nearest_row(t)
        if row is not None:
            self.view.select_row(row)
        self.playback.seek(t)

    def skip(self, seconds: float) -> None:
        duration = self.waveform.duration
        t = min(max(self.playback.position + seconds, 0.0), duration) if duration else 0.0
        if self.playback.playing:
            self.playback.play(t)
        else:
            self.playback.seek(t)

    def on_position(self, t: float) -> None:
        self.waveform.set_playhead(t)
        self.box.position_label.setText(format_time(t))
        row = self.model.row_at(t)
        self.model.set_current_row(row)
        if self._line is not None and self.playback.playing and t >= self._line[1]:
            self._line_ended()
            return
        if self.playback.playing and self.following:
            x0, x1 = self.waveform.visible_range()
            if not x0 <= t <= x1:
                self.waveform.show_range(t, t + (x1 - x0))
            if row is not None and self.view.row_delegate.editor is None:  # never move an open editor
                index = self.view.filter.mapFromSource(self.model.index(row, 0))
                if index.isValid():
                    self.view.scrollTo(index)

    def play_selection(self) -> None:
        row = self.view.current_source_row()
        if row is not None:
            self._line = None
            self.playback.play(self.model.utterance(row).start)

    def play_line(self) -> None:
        """Play the selected line from its start to its end (again and again while looping)."""
        row = self.view.current_source_row()
        if row is None:
            self.message.emit("Select an utterance first")
            return
        u = self.model.utterance(row)
        self._line = (u.start, u.end)
        self.playback.play(u.start)

    def set_looping(self, on: bool) -> None:
        self.looping = on
        if on and not self.playback.playing:
            self.play_line()

    def _line_ended(self) -> None:
        start, end = self._line or (0.0, 0.0)
        if self.looping:
            self.playback.play(start)
        else:
            self._line = None
            self.playback.pause()
            self.playback.seek(end)

    def update_playback_actions(self) -> None:
        reason = self.playback.reason
        has_audio = self.playback.player is not None
        for name in ("play", "play_selection", "slower", "faster"):
            action = self.actions[name]
            action.setEnabled(reason is None and has_audio)
            base = action.property("baseToolTip")
            action.setToolTip(f"{base}. {reason}" if reason else base)
        for name in ("skip_back", "skip_forward"):  # the playhead moves without a sound device too
            self.actions[name].setEnabled(has_audio)
        playing = self.playback.playing
        if playing != self._showing_playing:  # icons load from SVG: only when the state flips
            self._showing_playing = playing
            self.actions["play"].setText("&Pause" if playing else "&Play")
            self.actions["play"].setIcon(icon("pause" if playing else "play"))
        self.box.note.setText(reason or "")
        self.box.speed.setEnabled(reason is None)
