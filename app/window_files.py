"""The main window's file commands: open a recording, a project or a transcript the engine wrote
(JSON, SRT, WebVTT, with its recording; dialog, command line, drag and drop, Open Recent), save,
save as, export (asking before replacing files).

`FileCommands` is mixed into `MainWindow`; it uses only the attributes listed on it, which the
window creates. Only files that opened enter Open Recent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QDragEnterEvent, QDropEvent, QUndoStack
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.main_menus import RecentMenu
from app.project import SUFFIX, Project, audio_ref
from app.project_controller import ProjectController
from app.session import Session
from app.settings import SettingsStore, TranscribeSettings
from app.speakers import book_from_transcript
from app.stream_choice import choose_stream
from app.transcript_files import TRANSCRIPT_SUFFIXES, read_transcript_file, recording_for
from app.transcript_model import TranscriptModel
from app.widgets.export_dialog import ExportDialog, ExportRequest
from engine.types import Transcript


def existing_outputs(transcript: Transcript, request: ExportRequest) -> list[Path]:
    """The files an export would overwrite."""
    from engine.export import output_paths

    return [p for p in output_paths(transcript, request.target, list(request.formats)) if p.exists()]


def ask_overwrite(parent: QWidget, paths: list[Path]) -> bool:
    """True when the user agrees to replace `paths`."""
    names = "\n".join(f"  {p.name}" for p in paths[:8]) + ("\n  …" if len(paths) > 8 else "")
    answer = QMessageBox.question(
        parent, "Replace existing files?",
        f"These files already exist in {paths[0].parent}:\n{names}\n\nReplace them?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No,
    )  # fmt: skip
    return answer == QMessageBox.StandardButton.Yes


class FileCommands:
    """Opening, saving and exporting, for `MainWindow` (a QMainWindow)."""

    store: SettingsStore
    settings: TranscribeSettings
    session: Session
    projects: ProjectController
    model: TranscriptModel
    recent: RecentMenu
    _pending_recent: Path | None
    ask_before_closing: bool
    undo_stack: QUndoStack
    confirm_discard: Callable[[str], bool]

    show_message: Callable[[str], None]
    show_error: Callable[[str, str], None]
    _show_table_or_start: Callable[[], None]

    def choose_file(self) -> None:
        from engine.audio.io import SUPPORTED_EXTENSIONS

        audio = " ".join(f"*{e}" for e in sorted(SUPPORTED_EXTENSIONS))
        written = " ".join(f"*{e}" for e in TRANSCRIPT_SUFFIXES)
        filters = (f"Recordings, projects and transcripts (*{SUFFIX} {audio} {written});;"
                   f"Murmur projects (*{SUFFIX});;Transcripts ({written});;All files (*)")  # fmt: skip
        start = str(self.store.value("last_folder", str(Path.home())))
        parent = self if isinstance(self, QWidget) else None
        path, _ = QFileDialog.getOpenFileName(parent, "Open a recording or project", start, filters)
        if path:
            self.open_path(Path(path))

    def open_path(self, path: Path) -> bool:
        """Open a recording (decoded in the background) or a project file."""
        path = Path(path)
        if self.recording.controller.busy:  # recording, or its live lines still catching up
            self.show_message("Stop the recording first (Ctrl+Alt+R)")
            return False
        if self.session.busy:
            self.show_message("Wait for the running job to finish, or cancel it (Esc)")
            return False
        self.store.set_value("last_folder", str(path.parent))
        if path.suffix == SUFFIX or path.suffix.lower() in TRANSCRIPT_SUFFIXES:
            opened = self.projects.open(path) if path.suffix == SUFFIX else self._open_transcript(path)
            if opened:
                self._add_recent(path)
            return opened
        chosen, stream = choose_stream(self if isinstance(self, QWidget) else None, path)
        if not chosen:
            return False
        self._pending_recent = path
        return self.projects.start_new(path) and self.session.open_audio(path, self.settings, stream=stream)

    def _open_transcript(self, path: Path) -> bool:
        """Show a transcript file for review and editing, with its recording when it can be found
        (else the user is asked where it is); saving makes a project of it."""
        from engine.errors import TranscriptFormatError

        if self.ask_before_closing and not self.undo_stack.isClean() and not self.confirm_discard("opening"):
            return False
        try:
            transcript = read_transcript_file(path)
        except TranscriptFormatError as exc:
            self.show_error("Cannot open this transcript", str(exc))
            return False
        audio = recording_for(path, transcript)
        if audio is None:
            parent = self if isinstance(self, QWidget) else None
            chosen, _ = QFileDialog.getOpenFileName(parent, f"Where is the recording of {path.name}?",
                                                    str(path.parent))  # fmt: skip
            audio = Path(chosen) if chosen else None
        ref = audio_ref(audio, None, transcript.duration) if audio is not None else None
        self.projects.apply(Project(ref, transcript, book_from_transcript(transcript)), audio)
        self.projects.detach()
        self.show_message(f"Opened {path.name} for review; Save makes a project of it")
        return True

    def _on_audio_ready(self, audio: object) -> None:
        path = getattr(audio, "path", None)
        if path is not None and path == self._pending_recent:
            self._add_recent(path)
        self._pending_recent = None
        self._show_table_or_start()

    def _add_recent(self, path: Path) -> None:
        self.recent.show_files(self.store.add_recent_file(str(path)))

    def save(self) -> bool:
        """Save to the project's own file; ask where (Save As) when it has none or it cannot be written."""
        problem = self.projects.save_in_place_problem()
        if problem is None:
            return self.projects.save()
        if self.projects.path is not None:
            self.show_message(f"Cannot save to {self.projects.path} ({problem}); choose where to save")
        return self.save_as()

    def save_as(self) -> bool:
        audio, own = self.session.audio, self.projects.path
        suggestion = audio.path.with_suffix(SUFFIX) if audio else Path.home() / f"transcript{SUFFIX}"
        if own is not None and own.name and own.parent.is_dir():
            suggestion = own
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

    # -- drag and drop ----------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            self.open_path(Path(urls[0].toLocalFile()))
            event.acceptProposedAction()
