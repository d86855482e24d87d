"""The main window: layout and wiring only; behaviour lives in the controllers it connects.

Top: the waveform with the speaker lanes, in a splitter whose default share is at most
`WAVEFORM_SHARE` of the height (the transcript is the main pane). Below: the progress panel (while a
job runs), the find/filter bar, the transcript table (or, before there is one, the start-here
drop zone) and the words of the selected line; beside them, in a scrolling column, the speaker
panel and the playback box. Recordings and projects open from the menu, the toolbar, drag and
drop, the recent-files menu or `open_path` (the command line); only files that opened enter Open
Recent. Errors appear in a window-modal dialog (`last_dialog`) that never closes the window or
loses edits. The controllers get only what they need (`ProjectHost`, explicit widgets), so no
module imports this one but `app.__main__`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QResizeEvent, QUndoStack
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox, QStackedWidget, QToolBar, QWidget

from app.actions import build_actions
from app.editing import NUDGE, EditActions
from app.main_menus import build_menus, build_toolbar
from app.playback_controller import PlaybackController
from app.project import SUFFIX
from app.project_controller import ProjectController
from app.session import Session
from app.settings import SettingsStore, TranscribeSettings
from app.sync import SKIP, ViewSync
from app.transcript_model import TranscriptModel
from app.widgets.drop_zone import DropZone
from app.widgets.export_dialog import ExportDialog, ExportRequest
from app.widgets.find_bar import FindBar
from app.widgets.playback_box import PlaybackBox
from app.widgets.progress_panel import ProgressPanel
from app.widgets.settings_dialog import SettingsDialog
from app.widgets.shortcuts_dialog import ShortcutsDialog
from app.widgets.speaker_panel import SpeakerPanel
from app.widgets.transcript_view import TranscriptView
from app.widgets.waveform_view import WaveformView
from app.widgets.word_view import WordView
from app.window_files import ask_overwrite, compose, existing_outputs

WAVEFORM_SHARE = 0.3  # of the splitter's height, until the user drags the handle


def default_recovery_dir() -> Path:
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".murmur") / "recovery"


class MainWindow(QMainWindow):
    def __init__(self, store: SettingsStore | None = None, recovery_dir: Path | None = None,
                 autosave_ms: int = 30_000) -> None:  # fmt: skip
        super().__init__()
        self.store = store or SettingsStore()
        self.settings: TranscribeSettings = self.store.transcribe_settings()
        self.ask_before_closing = True
        self.last_dialog: QWidget | None = None
        self.undo_stack = QUndoStack(self)
        self.model = TranscriptModel(self.undo_stack, self)
        self.session = Session(self.model, self)
        self.playback = PlaybackController(self)
        self.projects = ProjectController(self, recovery_dir or default_recovery_dir(), autosave_ms)
        self._pending_recent: Path | None = None
        self._build_widgets()
        self.actions_by_name = build_actions(self)
        self.edit = EditActions(self.model, self.transcript_view, lambda: self.playback.position, self)
        self.recent = build_menus(self.menuBar(), self.actions_by_name)
        self.recent_menu = self.recent.menu
        self.recent.show_files(self.store.recent_files())
        toolbar = QToolBar("Main toolbar")
        self.addToolBar(toolbar)
        build_toolbar(toolbar, self.actions_by_name)
        self.sync = ViewSync(self.session, self.model, self.transcript_view, self.waveform, self.playback,
                             self.playback_box, self.actions_by_name)  # fmt: skip
        self._connect()
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
        self._splitter_moved = False
        self.splitter.splitterMoved.connect(lambda *_: setattr(self, "_splitter_moved", True))
        self.setCentralWidget(self.splitter)

    def _connect(self) -> None:
        a, sync = self.actions_by_name, self.sync
        handlers = {
            "open": self.choose_file, "save": self.save, "save_as": self.save_as, "export": self.show_export,
            "quit": self.close, "undo": self.undo_stack.undo, "redo": self.undo_stack.redo,
            "find": self.focus_find, "find_next": self.find_bar.find_next,
            "find_previous": self.find_bar.find_previous, "replace": self.find_bar.show_replace,
            "split": self.edit.split, "merge": self.edit.merge,
            "start_earlier": lambda: self.edit.nudge("start", -NUDGE),
            "start_later": lambda: self.edit.nudge("start", NUDGE),
            "end_earlier": lambda: self.edit.nudge("end", -NUDGE),
            "end_later": lambda: self.edit.nudge("end", NUDGE),
            "new_speaker": self.edit.new_speaker, "unassign": lambda: self.edit.assign(0),
            "transcribe": self.transcribe, "retranscribe": self.choose_retranscribe,
            "cancel": self.session.cancel, "settings": self.show_settings,
            "play": self.playback.toggle, "play_selection": sync.play_selection,
            "skip_back": lambda: sync.skip(-SKIP), "skip_forward": lambda: sync.skip(SKIP),
            "slower": lambda: self.playback_box.step_speed(-1),
            "faster": lambda: self.playback_box.step_speed(1),
            "zoom_in": lambda: self.waveform.zoom(2.0), "zoom_out": lambda: self.waveform.zoom(0.5),
            "zoom_fit": self.waveform.show_all, "focus_waveform": self.waveform.setFocus,
            "focus_transcript": self.focus_transcript,
            "focus_speakers": self.speaker_panel.list.setFocus,
            "shortcuts": self.show_shortcuts, "about": self.show_about,
        }  # fmt: skip
        for n in range(1, 10):
            handlers[f"speaker_{n}"] = lambda _=False, n=n: self.edit.assign(n)
        for name, handler in handlers.items():
            a[name].triggered.connect(handler)
        self.undo_stack.canUndoChanged.connect(self.update_actions)
        self.undo_stack.canRedoChanged.connect(self.update_actions)
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
        self.model.document_changed.connect(self.update_actions)
        self.model.modelReset.connect(self._show_table_or_start)
        self.model.rowsInserted.connect(self._show_table_or_start)
        self.transcript_view.row_selected.connect(
            lambda r: self.word_view.show_utterance(self.model.utterance(r))
        )
        self.word_view.word_clicked.connect(self.playback.seek)
        self.recent.chosen.connect(self.open_path)
        self.recent.cleared.connect(lambda: self.store.clear_recent_files())
        self.drop_zone.open_requested.connect(self.choose_file)
        self.drop_zone.transcribe_requested.connect(self.transcribe)

    # -- layout ---------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if not self._splitter_moved:
            height = max(self.splitter.height(), 1)
            top = max(self.waveform.minimumHeight(), int(height * WAVEFORM_SHARE))
            self.splitter.setSizes([top, height - top])

    def _show_table_or_start(self, *_: object) -> None:
        has_rows = self.model.rowCount() > 0
        self.drop_zone.set_state(self.session.audio is not None)
        self.stack.setCurrentWidget(self.transcript_view if has_rows else self.drop_zone)

    # -- files ------------------------------------------------------------------------------
    def choose_file(self) -> None:
        from engine.audio.io import SUPPORTED_EXTENSIONS

        audio = " ".join(f"*{e}" for e in sorted(SUPPORTED_EXTENSIONS))
        filters = f"Recordings and projects (*{SUFFIX} {audio});;Murmur projects (*{SUFFIX});;All files (*)"
        start = str(self.store.value("last_folder", str(Path.home())))
        path, _ = QFileDialog.getOpenFileName(self, "Open a recording or project", start, filters)
        if path:
            self.open_path(Path(path))

    def open_path(self, path: Path) -> bool:
        """Open a recording (decoded in the background) or a project file."""
        path = Path(path)
        if self.session.busy:
            self.show_message("Wait for the running job to finish, or cancel it (Esc)")
            return False
        self.store.set_value("last_folder", str(path.parent))
        if path.suffix == SUFFIX:
            opened = self.projects.open(path)
            if opened:
                self._add_recent(path)
            return opened
        self._pending_recent = path
        return self.projects.start_new(path) and self.session.open_audio(path, self.settings)

    def _on_audio_ready(self, audio: object) -> None:
        path = getattr(audio, "path", None)
        if path is not None and path == self._pending_recent:
            self._add_recent(path)
        self._pending_recent = None
        self._show_table_or_start()

    def _add_recent(self, path: Path) -> None:
        self.recent.show_files(self.store.add_recent_file(str(path)))

    def save(self) -> bool:
        return self.projects.save() if self.projects.path else self.save_as()

    def save_as(self) -> bool:
        audio = self.session.audio
        suggestion = audio.path.with_suffix(SUFFIX) if audio else Path.home() / f"transcript{SUFFIX}"
        path, _ = QFileDialog.getSaveFileName(
            self, "Save project", str(suggestion), f"Murmur project (*{SUFFIX})"
        )
        return bool(path) and self.projects.save(Path(path))

    def show_export(self) -> None:
        audio = self.session.audio
        folder = audio.path.parent if audio else Path.home()
        name = audio.path.stem if audio else "transcript"
        dialog = ExportDialog(folder, name, self.store.export_choices(), self)
        if dialog.exec():
            self.export_with(dialog.request())

    def export_with(self, request: ExportRequest) -> list[Path]:
        from engine.export import export

        transcript = self.model.transcript()
        existing = existing_outputs(transcript, request)
        if existing and not ask_overwrite(self, existing):
            self.show_message("Export cancelled; no file was changed")
            return []
        try:
            written = export(transcript, request.target, request.formats, request.options)
        except (OSError, ValueError) as exc:
            self.show_error("Export failed", str(exc))
            return []
        self.store.set_export_choices(request.to_dict())
        self.show_message(f"Exported {', '.join(p.name for p in written)} to {request.target.parent}")
        return written

    # -- transcription ----------------------------------------------------------------------
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

    def selected_range(self) -> tuple[float, float] | None:
        """The range marked on the waveform, else the span of the selected lines."""
        if self.waveform.range is not None:
            return self.waveform.range
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
        dialog = SettingsDialog(self.settings, self)
        dialog.setWindowTitle("Transcribe the selection again with…")
        if dialog.exec():
            self.retranscribe_with(dialog.settings(), *span)

    def retranscribe_with(self, settings: TranscribeSettings, start: float, end: float) -> bool:
        self.playback.pause()
        return self.session.retranscribe(settings, start, end)

    # -- feedback ---------------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    def show_error(self, title: str, text: str) -> None:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setAccessibleName(title)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        self.last_dialog = box
        box.open()

    def show_shortcuts(self) -> None:
        dialog = ShortcutsDialog(self)
        self.last_dialog = dialog
        dialog.open()

    def show_about(self) -> None:
        QMessageBox.about(self, "About Murmur", "<b>Murmur</b><br>Long-form, speaker-attributed "
                          "transcription that runs on your own computer.")  # fmt: skip

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
        a, busy = self.actions_by_name, self.session.busy
        has_rows, has_audio = self.model.rowCount() > 0, self.session.audio is not None
        editable = has_rows and not self.model.read_only
        a["undo"].setEnabled(self.undo_stack.canUndo() and not busy)
        a["redo"].setEnabled(self.undo_stack.canRedo() and not busy)
        a["transcribe"].setEnabled(has_audio and not busy)
        a["retranscribe"].setEnabled(has_audio and not busy)
        a["cancel"].setEnabled(busy)
        a["open"].setEnabled(not busy)
        a["export"].setEnabled(has_rows and not busy)
        for name in ("split", "merge", "start_earlier", "start_later", "end_earlier", "end_later"):
            a[name].setEnabled(editable)
        a["unassign"].setEnabled(editable)
        for n in range(1, 10):
            info = self.model.book[n - 1] if n <= len(self.model.book) else None
            a[f"speaker_{n}"].setEnabled(editable and info is not None)
            a[f"speaker_{n}"].setText(f"Assign to {info.name}" if info else f"Assign Speaker {n}")
        self.sync.update_playback_actions()

    def _update_title(self, *_: object) -> None:
        name = self.projects.path.name if self.projects.path else "Untitled"
        self.setWindowTitle(f"{name}[*] — Murmur")
        self.setWindowModified(not self.undo_stack.isClean())

    # -- drag and drop, closing --------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            self.open_path(Path(urls[0].toLocalFile()))
            event.acceptProposedAction()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.ask_before_closing and not self.undo_stack.isClean() and not self.confirm_discard("closing"):
            event.ignore()
            return
        self.playback.stop()
        self.session.shutdown()
        self.projects.close()
        event.accept()

    def confirm_discard(self, doing: str) -> bool:
        """Ask to save unsaved edits before `doing` something that replaces them; False: stop."""
        buttons = QMessageBox.StandardButton
        choices = buttons.Save | buttons.Discard | buttons.Cancel
        answer = QMessageBox.question(self, "Unsaved changes", f"Save the project before {doing}?", choices)
        if answer == buttons.Save:
            return self.save()
        return answer == buttons.Discard
