"""Recording in the main window: the Record action from start to final transcript.

`RecordingFeature(window)` connects the "record", "captions" and "watch" actions and adds the
recording bar (`RecordPanel`, a dock). The Record action first shows the bar, where the microphone
is chosen; Record there (or the action again):
1. asks before replacing unsaved edits and records the chosen microphone (`MicSource`, the choice
   remembered in the settings) into `folder` — beside the open project, else the recordings folder
   setting — as FLAC flushed every ≤ 2 s. Stop shows at once; the device opens on a thread of its
   own, and the new document starts once it has opened (a device that will not open says why and
   leaves the transcript on show as it was);
2. while recording, the waveform grows (`app.recording.live_wave`) with the speech regions, live
   lines enter the table in time order with provisional speakers ("Speaker 1"…), and the
   captions window shows them; the bar shows the level, the elapsed time and any lag;
   The live lines come from the engine the transcriptions use (the app's engine process or the
   Murmur server of the settings), its audio sent as it is captured (`app.recording.live_link`);
3. Stop (or a device failure, after its message) shows at once; once the device and file have
   closed, the file opens with the speech found while recording (not looked for again); once the
   live lines have caught up, the full pipeline runs over it (one undoable step, like Transcribe).
   Lines the user edited while recording are kept (`app.keep_edits`).
Transcribe ▸ Watch Folder… transcribes each new recording in a chosen folder in the background
(`app.recording.watch_folder`); the choice is a setting that survives restarts.
`offer_recovery()` (at start-up) offers to make recordings a crash cut short whole and open them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QStandardPaths, Qt
from PySide6.QtWidgets import QDockWidget, QMessageBox

from app import speakers as sp
from app.keep_edits import keep_edited
from app.recording.captions import CaptionsWindow
from app.recording.controller import DISPLAY_RATE, RecordingController
from app.recording.live_link import Connect
from app.recording.live_wave import LiveWave
from app.recording.panel import RecordPanel
from app.recording.recovery_offer import offer_recovery
from app.recording.watch_folder import FolderWatch
from app.remote_settings import run_pipeline
from app.settings import engine_flags
from engine.errors import RecordingError
from engine.live.flac_writer import new_recording_path
from engine.types import Transcript, Utterance

DEVICE_KEY = "record_device"
FOLDER_KEY = "recordings_folder"
CAPTIONS_THEME_KEY = "captions_theme"


def default_folder() -> Path:
    music = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.MusicLocation)
    return Path(music or Path.home()) / "Murmur Recordings"


class RecordingFeature(QObject):
    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.controller = RecordingController(self)
        self.panel = RecordPanel()
        self.dock = QDockWidget("Recording", window)
        self.dock.setObjectName("recordingDock")
        self.dock.setWidget(self.panel)
        self.dock.setFeatures(QDockWidget.DockWidgetFeature.NoDockWidgetFeatures)
        window.addDockWidget(Qt.DockWidgetArea.TopDockWidgetArea, self.dock)
        self.dock.hide()
        self.captions = CaptionsWindow(str(window.store.value(CAPTIONS_THEME_KEY, "dark")))
        self.produced: set[Utterance] = set()  # live lines as decoded (to tell the user's edits apart)
        self.named: dict[str, tuple[str, float] | None] = {}  # live speaker → known voice and score
        self._final_pending: Path | None = None
        self._caught_up = True
        self._edited: list[Utterance] = []
        self.wave = LiveWave(self.controller.display, DISPLAY_RATE, window.waveform.grow_audio, self)
        self.watch = FolderWatch(window.store, self._watch_pipeline, self)
        self.watch.attach(window.actions_by_name["watch"], window)
        self._connect()

    @property
    def folder(self) -> Path:
        if self.window.projects.path is not None:
            return self.window.projects.path.parent
        return Path(str(self.window.store.value(FOLDER_KEY, str(default_folder()))))

    def _connect(self) -> None:
        a, c, w = self.window.actions_by_name, self.controller, self.window
        a["record"].triggered.connect(self.toggle)
        a["captions"].triggered.connect(self.show_captions)
        self.panel.record_clicked.connect(lambda: self.stop() if self.controller.active else self.start())
        self.panel.pause_toggled.connect(lambda p: c.pause() if p else c.resume())
        self.panel.captions_clicked.connect(self.show_captions)
        self.panel.devices.currentTextChanged.connect(lambda n: n and w.store.set_value(DEVICE_KEY, n))
        c.line.connect(self._on_line)
        c.segment.connect(self._on_segment)
        c.named.connect(self._on_named)
        c.status.connect(self.panel.show_status)
        c.opened.connect(self._on_opened)
        c.refused.connect(self._on_refused)
        c.failed.connect(self._on_failed)
        c.stopped.connect(self._on_stopped)
        c.caught_up.connect(self._on_caught_up)
        for signal in (w.session.busy_changed, w.model.document_changed, w.undo_stack.canUndoChanged):
            signal.connect(self._update)  # after the window's own update_actions
        w.session.busy_changed.connect(lambda busy: busy or self._finalise())
        w.session.transcribed.connect(self._on_transcribed)

    # -- start / stop ------------------------------------------------------------------------------
    def toggle(self) -> None:
        """The Record action: show the recording bar (pick the microphone), then record / stop."""
        if self.controller.active:
            self.stop()
        elif not self.dock.isVisible():
            self.show_bar()
        else:
            self.start()

    def show_bar(self) -> None:
        from engine.live.sources import NO_MICROPHONE

        self._show_devices()
        self.dock.show()
        self.panel.record_button.setFocus()
        found = self.panel.devices.count() > 0
        self.window.show_message("Choose the microphone, then Record (Ctrl+Alt+R)" if found
                                 else NO_MICROPHONE)  # fmt: skip

    def start(self, source: Any = None) -> bool:
        """Record `source` (default: the microphone chosen); False if it cannot (refused later: told)."""
        w = self.window
        if w.session.busy or self.controller.busy:
            w.show_message("Wait for the running job to finish, or cancel it (Esc)")
            return False
        if w.ask_before_closing and not w.undo_stack.isClean() and not w.confirm_discard("recording"):
            return False
        if self.panel.devices.count() == 0:
            self._show_devices()
        try:
            source = source if source is not None else self._microphone()
            path = new_recording_path(self.folder)  # never the file of a recording made this second
            s = w.settings
            self.controller.start(source, path, self._live_engine(), speakers=s.diarizer != "none",
                                  language=s.language or None)  # fmt: skip
        except (RecordingError, ValueError) as exc:
            w.show_error("Cannot record", str(exc))
            return False
        self.panel.set_recording(True)  # shown at once; the device opens on its own thread
        self.dock.show()
        self._refresh()
        w.show_message(f"Opening {source.name}…")
        return True

    def _on_opened(self) -> None:
        w, path = self.window, self.controller.path
        self.produced.clear()
        self.named.clear()
        self._caught_up = False
        w.model.set_document((), (), Transcript(utterances=(), source=str(path)))
        w.undo_stack.clear()
        self._on_segment(None)  # the speech found so far (none, or a first region already closed)
        self.captions.clear()
        self.wave.start()
        self._refresh()
        w.show_message(f"Recording to {path}")

    def _on_refused(self, message: str) -> None:
        self.panel.set_recording(False)
        self._refresh()
        self.window.show_error("Cannot record", message)

    def stop(self) -> None:
        """End the recording. The Record action and the bar say so at once; the device and the file
        close on their own thread, then `_on_stopped` opens the file."""
        if self.controller.stop() is not None:
            self.panel.set_recording(False)
            self._refresh()

    def shutdown(self) -> None:
        self.controller.shutdown()
        self.watch.shutdown()
        self.captions.close()

    def _microphone(self) -> Any:
        from engine.live.sources import MicSource

        return MicSource(self.panel.device_name())

    def _live_engine(self) -> Connect:
        """Where live lines come from: the settings' Murmur server, else the app's engine process."""
        s = self.window.settings
        if s.run_on == "server":
            return lambda: (s.server_url, s.server_key or None)
        engine = self.window.session.runner.worker.engine
        return lambda: engine.ensure(engine_flags(s))

    def _show_devices(self) -> None:
        from engine.live.sources import list_devices

        names = [d.name for d in list_devices()]
        self.panel.set_devices(names, str(self.window.store.value(DEVICE_KEY, "")) or None)

    def _on_stopped(self, path: Path) -> None:
        from engine.live.flac_writer import marker_path

        self.wave.stop()
        self.panel.set_recording(False)
        w, self._final_pending = self.window, None
        if marker_path(path).exists():  # a full disk left it unfinished: recovered later, not opened now
            w.show_message(f"{path.name} is kept for recovery (offered at the next start)")
        elif self.controller.session.capture.seconds == 0:  # stopped before any sound came: no file
            path.unlink(missing_ok=True)
            w.show_message("Nothing was recorded: it was stopped before any sound came")
        else:
            self._final_pending = path
            w.show_message(f"Recorded {path.name}; the transcript catches up, then the full pipeline runs")
            w.session.open_audio(path, w.settings, speech=self.controller.speech())  # not looked for again
        self._refresh()

    def _on_caught_up(self) -> None:
        self._caught_up = True
        self._refresh()
        self._finalise()

    def _finalise(self) -> None:
        """Run the full pipeline once the file is loaded and the live lines have caught up."""
        w, path = self.window, self._final_pending
        audio = w.session.audio
        if path is None or not self._caught_up or w.session.busy or audio is None or audio.path != path:
            return
        self._final_pending = None
        self._edited = [u for u in w.model.utterances if u not in self.produced]
        w.session.transcribe(w.settings)

    def _on_transcribed(self, _transcript: Transcript) -> None:
        edited, self._edited = self._edited, []
        if edited:
            keep_edited(self.window.model, edited)

    def _on_failed(self, message: str) -> None:
        self.window.show_error("Recording stopped" if not self.controller.active else "Live transcription",
                               message)  # fmt: skip
        if not self.controller.active:
            self.stop()

    # -- live news ---------------------------------------------------------------------------------
    def _on_line(self, line: Any) -> None:
        model, u = self.window.model, line.utterance
        if u.speaker is not None and sp.find(model.book, u.speaker) is None:
            model.change_rows({}, sp.with_live_speaker(model.book, u.speaker, self.named.get(u.speaker)))
        self.produced.add(u)
        model.replace_rows(model.insertion_row(u.start), 0, [u])
        name, color = sp.display_name(model.book, u.speaker), sp.display_color(model.book, u.speaker)
        self.captions.add_line(name, color, u.text)

    def _on_named(self, speaker: str, name: str | None, score: float | None) -> None:
        """A known voice recognised (or no longer) in a live speaker: its name in the book."""
        known = None if name is None or score is None else (name, score)
        self.named[speaker] = known
        if sp.find(self.window.model.book, speaker) is not None:
            self.window.model.change_rows({}, sp.with_live_speaker(self.window.model.book, speaker, known))

    def _on_segment(self, _segment: Any) -> None:
        segments = self.controller.session.segments
        self.window.waveform.set_speech([s.start for s in segments], [s.end for s in segments])

    def show_captions(self) -> None:
        self.captions.show()
        self.captions.raise_()

    @property
    def holds_document(self) -> bool:
        """Recording, or its live lines still catching up: nothing may replace the document (the
        window's Open, Transcribe and Re-transcribe stay off; `MainWindow.update_actions` asks)."""
        return self.controller.busy

    def _refresh(self) -> None:
        """The window's actions and the Record action again, after the recording's state changed."""
        self.window.update_actions()
        self._update()

    def _update(self, *_: object) -> None:
        a = self.window.actions_by_name
        idle = not (self.window.session.busy or self.controller.busy)
        a["record"].setEnabled(self.controller.active or idle)
        a["record"].setText("Stop &Recording" if self.controller.active else "&Record…")

    # -- watch folder ------------------------------------------------------------------------------
    def _watch_pipeline(self) -> Any:
        """The watch folder's next file goes to the engine the transcriptions use, with the settings now."""
        return run_pipeline(self.window.settings, self.window.session.runner.worker.engine)

    # -- recovery ----------------------------------------------------------------------------------
    def offer_recovery(self) -> QMessageBox | None:
        """Ask about recordings a crash cut short in the recordings folder (non-blocking)."""
        offer = offer_recovery(self.window, self.folder)
        if offer is None:
            return None
        box, self.recover_button = offer
        return box
