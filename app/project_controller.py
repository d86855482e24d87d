"""Saving, opening, autosaving and recovering projects for the window.

`ProjectController` turns the window's state (model, loaded audio, settings) into a `Project`
and back. Saving and autosaving take an immutable snapshot on the GUI thread (milliseconds) and
write it on `ProjectWriter`'s thread, so neither stalls the window however long the transcript.
Saving marks the undo stack clean (again modified if the write fails); opening resets it. Every
`autosave_ms` (30 s by default) unsaved edits are written to this session's recovery file, which
a clean save or a clean exit removes; `pending()` lists files left by sessions that crashed and
`set_aside()` moves those that cannot be restored out of the way. An audio file that moved is found
next to the project, or the user is asked to locate it; if it is not found, the link is kept as it
was, so a save does not lose it. A project with bytes that are not UTF-8 is opened, if the user
agrees, as far as it reads (marked unsaved).

The controller sees the window only through `ProjectHost`, the few things it needs (the session,
the model and its undo stack, the settings, the discard question, a parent for dialogs), so the
dependency runs one way: the window imports this module, never the reverse.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QWidget

from app.file_guard import AutosaveNotice, DiskStamp, save_problem
from app.project import (
    SUFFIX,
    AudioRef,
    Project,
    ProjectError,
    ProjectTextError,
    audio_ref,
    load_project,
    resolve_audio,
    save_project,
)
from app.project_questions import open_what_can_be_read, save_over_changes, where_is
from app.project_recovery import Recovery, RecoveryStore
from app.project_writer import ProjectWriter
from app.settings import TranscribeSettings
from app.speakers import book_from_transcript
from engine.types import Transcript

if TYPE_CHECKING:
    from app.jobs import LoadedAudio
    from app.session import Session
    from app.transcript_model import TranscriptModel


class ProjectHost(Protocol):
    """What the project controller uses of the window."""

    session: Session
    model: TranscriptModel
    undo_stack: QUndoStack
    settings: TranscribeSettings
    ask_before_closing: bool

    def confirm_discard(self, doing: str) -> bool: ...

    def dialog_parent(self) -> QWidget: ...


class ProjectController(QObject):
    message = Signal(str)
    error = Signal(str, str)
    path_changed = Signal()

    def __init__(self, window: ProjectHost, recovery_dir: Path, autosave_ms: int) -> None:
        super().__init__(window.dialog_parent())
        self.window = window
        self.path: Path | None = None
        self.recovery = RecoveryStore(recovery_dir)
        self.writer = ProjectWriter(self)
        self._autosaved_index = 0
        self.timer = QTimer(self)
        self.timer.setInterval(autosave_ms)
        self.timer.timeout.connect(self.autosave)
        self.timer.start()
        self._replace_on_load: Path | None = None
        self._unfound: AudioRef | None = None  # the link to a recording the open project could not find
        self._stamp: DiskStamp | None = None  # the project file as this window last read or wrote it
        self._autosave_notice = AutosaveNotice()
        window.session.audio_ready.connect(self._on_audio)
        window.session.error.connect(self._on_error)

    # -- a new recording starts a new document ---------------------------------------------
    def start_new(self, audio: Path) -> bool:
        """Before another recording opens: offer to save unsaved edits (False: the user cancelled).
        The document is replaced only once the recording has loaded; a failure keeps it."""
        w = self.window
        current = w.session.audio
        if current is not None and current.path == audio:
            return True
        if (
            w.ask_before_closing
            and not w.undo_stack.isClean()
            and not w.confirm_discard("opening another recording")
        ):
            return False
        self._replace_on_load = audio
        return True

    def _on_audio(self, audio: LoadedAudio) -> None:
        if self._replace_on_load != audio.path:
            return
        self._replace_on_load = None
        w = self.window
        meta = Transcript(utterances=(), duration=audio.recording.duration, source=str(audio.path))
        w.model.set_document((), (), meta)
        w.undo_stack.clear()
        self.path, self._unfound = None, None
        self.writer.submit(self.recovery.discard)
        self.path_changed.emit()

    def _on_error(self, *_: object) -> None:
        self._replace_on_load = None

    # -- state ↔ project -------------------------------------------------------------------
    def snapshot(self) -> Callable[[], Project]:
        """The project as it is now (references to immutable data, taken in well under a
        millisecond), built into a `Project` when called: on the writer's thread."""
        w = self.window
        audio = w.session.audio
        path = audio.path if audio is not None else w.session.pending_path
        duration = audio.recording.duration if audio is not None else w.model.meta.duration
        stream = audio.stream if audio is not None else w.session.pending_stream
        prepared = w.session.prepared
        transcript = w.model.transcript_later() if w.model.rowCount() or w.model.meta.chunks else None
        ref = self._unfound if path is None else audio_ref(path, self.path, duration, stream)
        project = Project(
            audio=ref,
            speakers=w.model.book,
            settings=w.settings.to_dict(),
            speech=tuple(prepared.speech) if prepared is not None else (),
            chunks=tuple(prepared.chunks) if prepared is not None else (),
        )
        return lambda: project if transcript is None else replace(project, transcript=transcript())

    def save(self, path: Path | None = None) -> bool:
        """Save to `path` (default: the project's own): a snapshot now, written on the writer's
        thread; the window counts as saved at once ("Saving…", then "Saved") and is marked
        modified again if the write fails (with an error). False when there is nowhere to save."""
        if (path := path or self.path) is None or not path.name:
            return False
        if path.suffix != SUFFIX:
            path = path.with_name(path.name + SUFFIX)
        changed = path == self.path and self._stamp is not None and not self.writer.busy
        if changed and self._stamp.changed(path) and not save_over_changes(self.window.dialog_parent(), path):
            return False
        project, previous, recovery = self.snapshot(), self.path, self.recovery

        def write() -> None:
            save_project(project(), path)
            recovery.discard()  # only once the project is safely on disk

        self.writer.submit(write, lambda error: self._saved(path, previous, error))
        self.path = path
        self.window.undo_stack.setClean()
        self.path_changed.emit()
        self.message.emit(f"Saving {path.name}…")
        return True

    def save_in_place_problem(self) -> str | None:
        """Why Save cannot write the project's own file (None: it can); the window asks where
        to save instead. A recovered project's path may be `/` or a folder since made read-only."""
        return "the project has not been saved yet" if self.path is None else save_problem(self.path)

    def _saved(self, path: Path, previous: Path | None, error: Exception | None) -> None:
        if error is None:
            self._stamp = DiskStamp.of(path)  # what this window wrote is what it last saw
            self.message.emit(f"Saved {path.name}")
            return
        if self.path == path:
            self.path = previous
        self.window.undo_stack.resetClean()  # nothing was saved: the edits are unsaved again
        self.path_changed.emit()
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        self.error.emit("Could not save the project", f"{path}: {reason}\n\nYour edits are still open; "
                        "use File ▸ Save As… to save them elsewhere.")  # fmt: skip

    def open(self, path: Path, audio: Path | None = None) -> bool:
        """Open a project; `audio` overrides where its recording is (relinking). Unsaved edits are
        offered for saving first (False: the user cancelled)."""
        w = self.window
        if w.ask_before_closing and not w.undo_stack.isClean() and not w.confirm_discard("opening a project"):
            return False
        repaired = False
        try:
            project = load_project(path)
        except ProjectTextError as exc:
            if not open_what_can_be_read(self.window.dialog_parent(), str(exc)):
                return False
            project, repaired = exc.salvage, True
        except ProjectError as exc:
            self.error.emit("Cannot open this project", str(exc))
            return False
        self.apply(project, audio or self._find_audio(path, project.audio))
        self.path, self._stamp = path, DiskStamp.of(path)  # bound to the file only once shown
        self.window.undo_stack.clear()
        self.window.undo_stack.setClean()
        if repaired:
            self.window.undo_stack.resetClean()  # the file on disk still holds the damage until saved
        self._autosaved_index = 0
        self.path_changed.emit()
        return True

    def detach(self) -> None:
        """What is shown belongs to no project file yet (a transcript opened for review)."""
        self.path, self._stamp = None, None
        self.window.undo_stack.clear()
        self._autosaved_index = 0
        self.path_changed.emit()

    def apply(self, project: Project, audio: Path | None) -> None:
        """Show `project` in the window and start loading its recording (when there is one)."""
        w = self.window
        w.settings = TranscribeSettings.from_dict(project.settings) if project.settings else w.settings
        transcript = project.transcript
        if transcript is not None:
            colors = {s.id: s.color for s in project.speakers}
            book = project.speakers or book_from_transcript(transcript, colors)
            w.model.set_document(transcript.utterances, book, transcript)
        else:
            w.model.set_document((), project.speakers, w.model.meta)
        self._unfound = None
        if audio is not None:
            stream = project.audio.stream if project.audio is not None else None
            w.session.open_audio(audio, w.settings, project.speech or None, project.chunks, stream)
        elif project.audio is not None:
            self._unfound = project.audio  # saved as it was, so the link is not lost
            self.error.emit("Recording not found", f"{project.audio.path} could not be found. The transcript "
                            "is open; open the recording again to see the waveform and play it.")  # fmt: skip

    def _find_audio(self, path: Path, ref: AudioRef | None) -> Path | None:
        if ref is None:
            return None
        return resolve_audio(path, ref) or self.locate_audio(ref)

    def locate_audio(self, ref: AudioRef) -> Path | None:
        return where_is(self.window.dialog_parent(), ref)

    # -- autosave and recovery -------------------------------------------------------------
    def autosave(self) -> bool:
        """Write unsaved edits to the recovery file (a snapshot now, written on the writer's
        thread); False when there is nothing new to write."""
        stack = self.window.undo_stack
        if stack.isClean() or stack.index() == self._autosaved_index:
            return False
        project, path, index = self.snapshot(), self.path, stack.index()
        previous, self._autosaved_index = self._autosaved_index, index
        self.writer.submit(lambda: self.recovery.write(project(), path),
                           lambda error: self._autosaved(previous, index, error))  # fmt: skip
        return True

    def _autosaved(self, previous: int, index: int, error: Exception | None) -> None:
        if error is None:
            return
        if self._autosaved_index == index:
            self._autosaved_index = previous  # try again at the next tick
        if not isinstance(error, OSError):
            return
        told = self._autosave_notice.first(self.recovery.folder, error)
        if told is not None:
            self.error.emit("Crash protection is off", told)

    def pending(self) -> list[Recovery]:
        return self.recovery.pending()

    def set_aside(self) -> list[tuple[Path, str]]:
        """Move ended sessions' autosaves that cannot be restored aside: (where each is, why)."""
        return self.recovery.set_aside()

    def restore(self, recovery: Recovery) -> None:
        ref = recovery.project.audio
        anchor = recovery.project_path or recovery.path
        audio = resolve_audio(anchor, ref) if ref is not None else None
        self.path = recovery.project_path
        self.apply(recovery.project, audio)
        self.window.undo_stack.clear()
        self.window.undo_stack.resetClean()  # restored edits are unsaved
        self.writer.wait()
        recovery.path.replace(self.recovery.path)  # still recoverable until saved or autosaved anew
        self._autosaved_index = -1
        self.path_changed.emit()
        self.message.emit("Restored unsaved work from the last session")

    def wait(self) -> None:
        """Finish the saves and autosaves still being written (and report them)."""
        self.writer.wait()

    def close(self) -> None:
        self.timer.stop()
        self.writer.submit(self.recovery.discard)
        self.writer.shutdown()
