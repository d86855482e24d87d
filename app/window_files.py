"""The main window's file commands: open a recording or project (dialog, command line, drag and
drop, Open Recent), save, save as, export (asking before replacing files).

`FileCommands` is mixed into `MainWindow`; it uses only the attributes listed on it, which the
window creates. Only files that opened enter Open Recent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from app.main_menus import RecentMenu
from app.project import SUFFIX
from app.project_controller import ProjectController
from app.session import Session
from app.settings import SettingsStore, TranscribeSettings
from app.stream_choice import choose_stream
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

    show_message: Callable[[str], None]
    show_error: Callable[[str, str], None]
    _show_table_or_start: Callable[[], None]

    def choose_file(self) -> None:
        from engine.audio.io import SUPPORTED_EXTENSIONS

        audio = " ".join(f"*{e}" for e in sorted(SUPPORTED_EXTENSIONS))
        filters = f"Recordings and projects (*{SUFFIX} {audio});;Murmur projects (*{SUFFIX});;All files (*)"
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
        if path.suffix == SUFFIX:
            opened = self.projects.open(path)
            if opened:
                self._add_recent(path)
            return opened
        chosen, stream = choose_stream(self if isinstance(self, QWidget) else None, path)
        if not chosen:
            return False
        self._pending_recent = path
        return self.projects.start_new(path) and self.session.open_audio(path, self.settings, stream=stream)

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
