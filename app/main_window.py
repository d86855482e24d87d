"""The main window: layout and wiring only; behaviour lives in the controllers it connects.

Top: the waveform with the speaker lanes, in a splitter whose default share is at most
`WAVEFORM_SHARE` of the height (`app.window_layout.Panes`). Below: the progress panel (while
a job runs), the find/filter bar, the transcript table (or, before there is one, the start-here
drop zone) and the words of the selected line; beside them, in a scrolling column, the speaker
panel and the playback box (`app.window_layout`). File commands (`app.window_files`) and
transcription commands (`app.window_transcribe`) are mixed in from their own modules. Errors
appear in a window-modal dialog (`last_dialog`) that never closes the window or loses edits. The
controllers get only what they need (`ProjectHost`, explicit widgets), so no module imports this
one but `app.__main__`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtGui import QCloseEvent, QColor, QResizeEvent, QUndoStack
from PySide6.QtWidgets import QMainWindow, QMessageBox, QStackedWidget, QToolBar, QWidget

from app.actions import build_actions
from app.editing import NUDGE, EditActions, ask
from app.heap import HeapSettler
from app.main_menus import build_menus, build_toolbar
from app.playback_controller import PlaybackController
from app.project_controller import ProjectController
from app.recording.feature import RecordingFeature
from app.review_tools import connect_review_tools
from app.session import Session
from app.settings import SettingsStore, TranscribeSettings
from app.sync import SKIP, ViewSync
from app.theme import LIGHT, Theme, apply
from app.transcript_model import TranscriptModel
from app.voice_tools import VoiceTools
from app.widgets.drop_zone import DropZone
from app.widgets.find_bar import FindBar
from app.widgets.playback_box import PlaybackBox
from app.widgets.progress_panel import ProgressPanel
from app.widgets.shortcuts_dialog import ShortcutsDialog
from app.widgets.speaker_panel import SpeakerPanel
from app.widgets.transcript_view import TranscriptView
from app.widgets.waveform_view import WaveformView
from app.widgets.word_view import WordView
from app.window_files import FileCommands
from app.window_layout import Panes, compose
from app.window_transcribe import TranscribeCommands


def default_recovery_dir() -> Path:
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".murmur") / "recovery"


class MainWindow(FileCommands, TranscribeCommands, QMainWindow):
    def __init__(self, store: SettingsStore | None = None, recovery_dir: Path | None = None,
                 autosave_ms: int = 30_000) -> None:  # fmt: skip
        super().__init__()
        self.store = store or SettingsStore()
        self.settings: TranscribeSettings = self.store.transcribe_settings()
        self.ask_before_closing = True
        self.last_dialog: QWidget | None = None
        self.theme = LIGHT
        self.undo_stack = QUndoStack(self)
        self.model = TranscriptModel(self.undo_stack, self)
        self.session = Session(self.model, self)
        self.playback = PlaybackController(self)
        self.projects = ProjectController(self, recovery_dir or default_recovery_dir(), autosave_ms)
        self._pending_recent: Path | None = None
        self.heap = HeapSettler(self)
        self._build_widgets()
        self.actions_by_name = build_actions(self)
        self.panes = Panes(self.splitter, self.word_view, self.actions_by_name["toggle_waveform"])
        self.edit = EditActions(self.model, self.transcript_view, lambda: self.playback.position,
                                self.playback.seek, self)  # fmt: skip
        self.recent = build_menus(self.menuBar(), self.actions_by_name)
        self.recent_menu = self.recent.menu
        self.recent.show_files(self.store.recent_files())
        toolbar = QToolBar("Main toolbar")
        self.addToolBar(toolbar)
        build_toolbar(toolbar, self.actions_by_name)
        self.sync = ViewSync(self.session, self.model, self.transcript_view, self.waveform, self.playback,
                             self.playback_box, self.actions_by_name)  # fmt: skip
        self._connect()
        self.recording = RecordingFeature(self)  # the Record action, its bar, live lines, captions
        self.setAcceptDrops(True)
        self.setAccessibleName("Murmur")
        self.setObjectName("MurmurMain")
        self.resize(1360, 860)
        self._update_title()
        self.update_actions()

    def dialog_parent(self) -> QWidget:
        return self

    def _build_widgets(self) -> None:
        self.waveform = WaveformView()
        self.transcript_view = TranscriptView(self.model)
        self.find_bar = FindBar(self.model, self.transcript_view)
        self.speaker_panel = SpeakerPanel(self.model)
        self.progress_panel = ProgressPanel()
        self.word_view = WordView()
        self.drop_zone = DropZone()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.drop_zone)
        self.stack.addWidget(self.transcript_view)
        self.playback_box = PlaybackBox()
        self.speed_box, self.position_label = self.playback_box.speed, self.playback_box.position_label
        self.playback_note = self.playback_box.note
        main = (self.progress_panel, self.find_bar, self.stack, self.word_view)
        self.splitter = compose(self.waveform, main, (self.speaker_panel, self.playback_box))
        self.setCentralWidget(self.splitter)

    def _connect(self) -> None:
        a, sync = self.actions_by_name, self.sync
        handlers = {
            "open": self.choose_file, "save": self.save, "save_as": self.save_as, "export": self.show_export,
            "quit": self.close, "undo": self.undo_stack.undo, "redo": self.undo_stack.redo,
            "find": self.focus_find, "find_next": self.find_bar.find_next,
            "find_previous": self.find_bar.find_previous, "replace": self.find_bar.show_replace,
            "split": self.edit.split, "merge": self.edit.merge, "delete_lines": self.edit.delete_lines,
            "insert_line": self.edit.insert_line, "merge_same": self.edit.merge_same_speaker,
            "go_to_time": lambda: ask(self, "Go to time", "Time (h:mm:ss)", self.edit.go_to),
            "shift_times": lambda: ask(self, "Shift all times", "Seconds or h:mm:ss, − for earlier",
                                       self.edit.shift_times),
            "start_earlier": lambda: self.edit.nudge("start", -NUDGE),
            "start_later": lambda: self.edit.nudge("start", NUDGE),
            "end_earlier": lambda: self.edit.nudge("end", -NUDGE),
            "end_later": lambda: self.edit.nudge("end", NUDGE),
            "set_start": lambda: self.edit.set_at_playhead("start"),
            "set_end": lambda: self.edit.set_at_playhead("end"), "play_line": sync.play_line,
            "next_misspelling": lambda: self.edit.next_misspelling(self.spelling),
            "new_speaker": self.edit.new_speaker, "unassign": lambda: self.edit.assign(0),
            "transcribe": self.transcribe, "retranscribe": self.choose_retranscribe,
            "cancel": self.session.cancel, "settings": self.show_settings,
            "play": self.playback.toggle, "play_selection": sync.play_selection,
            "skip_back": lambda: sync.skip(-SKIP), "skip_forward": lambda: sync.skip(SKIP),
            "slower": lambda: self.playback_box.step_speed(-1),
            "faster": lambda: self.playback_box.step_speed(1),
            "zoom_in": lambda: self.waveform.zoom(2.0), "zoom_out": lambda: self.waveform.zoom(0.5),
            "zoom_fit": self.waveform.show_all, "focus_waveform": self.waveform.setFocus,
            "toggle_waveform": self.panes.show_waveform,
            "focus_transcript": self.focus_transcript,
            "focus_speakers": self.speaker_panel.list.setFocus,
            "shortcuts": self.show_shortcuts, "about": self.show_about,
        }  # fmt: skip
        for n in range(1, 10):
            handlers[f"speaker_{n}"] = lambda _=False, n=n: self.edit.assign(n)
        for name, handler in handlers.items():
            a[name].triggered.connect(handler)
        self.spelling = connect_review_tools(self)
        self.voices = VoiceTools(self)  # Known Voices…, Remember This Voice…, Not <name>
        stack = self.undo_stack
        for signal in (stack.canUndoChanged, stack.canRedoChanged, stack.indexChanged):
            signal.connect(self.update_actions)
        self.session.editor = self.transcript_view  # a line being typed: waited for, then kept
        self.undo_stack.cleanChanged.connect(self._update_title)
        self.projects.path_changed.connect(self._update_title)
        for source in (self.session, self.projects):
            source.error.connect(self.show_error)
            source.message.connect(self.show_message)
        for source in (self.edit, self.find_bar, self.speaker_panel, self.sync):
            source.message.connect(self.show_message)
        self.model.edit_refused.connect(self.show_message)
        self.session.busy_changed.connect(self._on_busy)
        self.session.job_started.connect(self.progress_panel.start)
        self.session.progress.connect(self.progress_panel.update_progress)
        self.session.audio_ready.connect(self._on_audio_ready)
        self.session.error.connect(lambda *_: setattr(self, "_pending_recent", None))
        self.progress_panel.cancel_requested.connect(self.session.cancel)
        self.session.cancelling_started.connect(self.progress_panel.show_cancelling)
        self.session.cancelling_started.connect(self.update_actions)
        self.model.document_changed.connect(self.update_actions)
        self.model.document_changed.connect(self.heap.poke)  # full GC passes skip the settled document
        self.model.modelReset.connect(self._show_table_or_start)
        self.model.rowsInserted.connect(self._show_table_or_start)
        self.transcript_view.row_selected.connect(
            lambda r: self.word_view.show_utterance(self.model.utterance(r))
        )
        self.word_view.word_clicked.connect(self.playback.seek)
        self.playback.position_changed.connect(self.word_view.show_playhead)
        self.recent.chosen.connect(self.open_path)
        self.recent.cleared.connect(lambda: self.store.clear_recent_files())
        self.drop_zone.open_requested.connect(self.choose_file)
        self.drop_zone.transcribe_requested.connect(self.transcribe)

    # -- layout ---------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.panes.fit(self.height())

    def _show_table_or_start(self, *_: object) -> None:
        has_rows = self.model.rowCount() > 0
        self.drop_zone.set_state(self.session.audio is not None)
        self.stack.setCurrentWidget(self.transcript_view if has_rows else self.drop_zone)

    # -- feedback ---------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    def show_error(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setAccessibleName(title)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        self.offer_restart(box)  # the engine stopped: a button restarts it
        self.last_dialog = box
        box.open()

    def show_shortcuts(self) -> None:
        dialog = ShortcutsDialog(self)
        self.last_dialog = dialog
        dialog.open()

    def show_about(self) -> None:
        QMessageBox.about(self, "About Murmur", "<b>Murmur</b><br>Long-form, speaker-attributed "
                          "transcription that runs on your own computer.")  # fmt: skip

    def apply_theme(self, theme: Theme) -> None:
        """Every colour of the window (and the application's palette and style sheet) in `theme`."""
        apply(theme)
        self.theme, swap = theme, theme.swap
        self.model.time_ink, self.model.tint = QColor(swap("#5B6670")), QColor(swap("#FFF1C2"))
        self.speaker_panel.list.itemDelegate().ink = QColor(swap("#5B6670"))  # type: ignore[attr-defined]
        self.word_view.set_theme(swap)
        self.waveform.set_theme(swap)
        self.transcript_view.viewport().update()

    def focus_transcript(self) -> None:
        has_rows = self.stack.currentWidget() is self.transcript_view
        (self.transcript_view if has_rows else self.drop_zone.button).setFocus()

    def focus_find(self) -> None:
        self.find_bar.find_edit.setFocus()
        self.find_bar.find_edit.selectAll()

    def _on_busy(self, busy: bool) -> None:
        if not busy:
            self.progress_panel.finish()
        self.update_actions()

    def update_actions(self, *_: object) -> None:
        a, busy, locked = self.actions_by_name, self.session.busy, self.session.locks_edits
        has_rows, has_audio = self.model.rowCount() > 0, self.session.audio is not None
        editable = has_rows and not self.model.read_only
        recording = self.recording.holds_document  # nothing replaces a recording's lines till final
        a["undo"].setEnabled(self.undo_stack.canUndo() and self.session.may_undo())
        a["redo"].setEnabled(self.undo_stack.canRedo() and self.session.may_edit())
        a["transcribe"].setEnabled(has_audio and not busy and not recording)
        a["retranscribe"].setEnabled(has_audio and not busy and not recording)
        a["cancel"].setEnabled(locked)
        a["open"].setEnabled(not busy and not recording)
        a["export"].setEnabled(has_rows and not locked)
        for name in ("split", "merge", "start_earlier", "start_later", "end_earlier", "end_later",
                     "set_start", "set_end", "delete_lines", "merge_same", "shift_times"):  # fmt: skip
            a[name].setEnabled(editable)
        a["unassign"].setEnabled(editable)
        a["insert_line"].setEnabled(not self.model.read_only and self.session.may_edit())
        a["go_to_time"].setEnabled(has_rows or has_audio)
        for n in range(1, 10):
            info = self.model.book[n - 1] if n <= len(self.model.book) else None
            a[f"speaker_{n}"].setEnabled(editable and info is not None)
            a[f"speaker_{n}"].setText(f"Assign to {info.name}" if info else f"Assign Speaker {n}")
        self.sync.update_playback_actions()

    def _update_title(self, *_: object) -> None:
        name = self.projects.path.name if self.projects.path else "Untitled"
        self.setWindowTitle(f"{name}[*] — Murmur")
        self.setWindowModified(not self.undo_stack.isClean())

    # -- closing -----------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.ask_before_closing and not self.undo_stack.isClean() and not self.confirm_discard("closing"):
            event.ignore()
            return
        self.playback.stop()
        self.voices.shutdown()  # the voices being remembered are stored first
        self.recording.shutdown()
        self.session.shutdown()
        self.projects.close()
        self.heap.release()
        event.accept()

    def confirm_discard(self, doing: str) -> bool:
        """Ask to save unsaved edits before `doing` something that replaces them; False: stop."""
        buttons = QMessageBox.StandardButton
        choices = buttons.Save | buttons.Discard | buttons.Cancel
        answer = QMessageBox.question(self, "Unsaved changes", f"Save the project before {doing}?", choices)
        if answer == buttons.Save:
            return self.save()
        return answer == buttons.Discard
