"""One recording's life in the window: open it, show its plan, transcribe it, keep the edits safe.

`Session` drives the `RunController` and the `TranscriptModel`:
- `open_audio(path)` decodes off the GUI thread (`audio_ready`, then `plan_ready` with speech and
  chunks); a file that fails to decode ends in `error(title, message)` and leaves the previous
  recording and transcript in place.
- `transcribe(settings)` snapshots the document and fills the table with live results while it
  stays editable (`app.run_edits`: each finished chunk's lines are inserted where they belong,
  never a relayout of the rows already shown; Undo stops at the run's start). On success the
  stitched result replaces the document as one undoable step (the view keeps the selected moment
  and the scroll position), so undo brings back what was there before. Lines the user edited —
  before the run, since the engine produced them (`produced`), or during it — are kept as the user
  left them, by the rule of `app.keep_edits`, in that same step; the names the user gave speakers
  go to the new speakers that took their place (`app.carry_names`). On failure the snapshot is
  restored (a first transcription keeps what was finished), with the lines edited during the run
  over it, as one undoable step; on cancel the same happens at once (`cancel`), while the decoder
  finishes the batch it is on in the background ("Cancelling…") and its late results are dropped.
- `retranscribe(settings, start, end)` runs the pipeline with other settings on [start, end]
  only and replaces the lines there as one undoable step, its speakers matched to the existing
  ones (`engine.retranscribe`; new ones join the book). The table stays editable meanwhile: a
  line changed in the range is kept over the new lines (`app.range_edits`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from app import commands
from app.carry_names import named_book
from app.jobs import EngineJob, LoadedAudio, LoadJob, RangeJob, TranscribeJob
from app.keep_edits import overlaid, with_edited, with_speakers
from app.range_edits import RangeEdits
from app.run_edits import RunEdits
from app.settings import TranscribeSettings
from app.timeline import format_time
from app.transcript_model import TranscriptModel
from app.typed_line import LineEditor, TypedLine, close_typed, reopen_typed
from app.worker import RunController
from engine.types import Chunk, ChunkResult, SpeechSegment, Transcript, Utterance

if TYPE_CHECKING:
    from engine.retranscribe import RangeResult


class Session(QObject):
    audio_ready = Signal(object)  # LoadedAudio
    plan_ready = Signal(object)  # engine.pipeline.Prepared
    busy_changed = Signal(bool)
    job_started = Signal(str, str)  # what the progress panel should say first, the kind of job
    progress = Signal(object)
    message = Signal(str)
    error = Signal(str, str)
    transcribed = Signal(object)  # Transcript
    retranscribed = Signal(int, int)  # first row, number of rows that replaced the range
    cancelling_started = Signal()  # Cancel was asked for; the job is stopping

    def __init__(self, model: TranscriptModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.runner = RunController(self)
        self.audio: LoadedAudio | None = None
        self.prepared: Any = None
        self.pending_path: Path | None = None
        self.pending_stream: int | None = None  # the audio stream of `pending_path` being opened
        self._snapshot: commands.Document | None = None
        self._partials: list[ChunkResult] = []
        self._waiting: list[tuple[Utterance, ...]] = []  # chunks' lines not shown yet (a line is edited)
        self.run_edits = RunEdits(model)
        self.range_edits = RangeEdits(model)
        self.editor: LineEditor | None = None  # the table's view (set by the window)
        self._retry = QTimer(self, singleShot=True, interval=200)
        self._retry.timeout.connect(self._show_waiting)
        self._produced: set[Utterance] = set()  # lines as the engine gave them, since the file opened
        self._job = ""
        self.cancelling = False
        worker = self.runner.worker
        worker.progress.connect(self.progress)
        worker.audio_loaded.connect(self._on_audio)
        worker.prepared.connect(self._on_prepared)
        worker.partial.connect(self._on_partial)
        worker.finished.connect(self._on_finished)
        worker.range_done.connect(self._on_range)
        worker.failed.connect(self._on_failed)
        worker.engine_ready.connect(self.message)
        worker.cancelled.connect(self._on_cancelled)
        worker.idle.connect(self._on_idle)
        self.runner.settled.connect(self._on_settled)

    @property
    def busy(self) -> bool:
        return self.runner.busy

    @property
    def locks_edits(self) -> bool:
        """A job runs that may still change the transcript (not one being cancelled)."""
        return self.busy and not self.cancelling

    def may_edit(self) -> bool:
        """Edits may go on the undo stack: no job locks them, or a transcription runs (whole or a
        range: `RunEdits`, `RangeEdits`)."""
        return not self.locks_edits or self.run_edits.running or self.range_edits.running

    def may_undo(self) -> bool:
        return self.may_edit() and self.run_edits.may_undo() and self.range_edits.may_undo()

    def _on_idle(self) -> None:
        self.cancelling = False

    def _on_settled(self) -> None:  # the job's outcome is in: who waits for a free session may go on
        if not self.busy:  # unless a handler of the outcome started one already
            self.busy_changed.emit(False)

    def open_audio(
        self,
        path: Path,
        settings: TranscribeSettings,
        speech: tuple[SpeechSegment, ...] | None = None,
        chunks: tuple[Chunk, ...] = (),
        stream: int | None = None,
    ) -> bool:
        if not self.runner.start(LoadJob(path, settings, speech, chunks, stream)):
            return False
        self._job, self.pending_path, self.pending_stream = "load", path, stream
        self.busy_changed.emit(True)
        self.job_started.emit(f"Opening {path.name}", "load")
        return True

    def transcribe(self, settings: TranscribeSettings) -> bool:
        if self.audio is None or not self.runner.start(TranscribeJob(settings)):
            return False
        self._job = "transcribe"
        self._snapshot = commands.current_document(self.model)
        self._partials, self._waiting = [], []
        self.run_edits.begin(self._produced)
        self.busy_changed.emit(True)
        self.job_started.emit("Starting transcription", "transcribe")
        return True

    def retranscribe(self, settings: TranscribeSettings, start: float, end: float) -> bool:
        """Transcribe [start, end] again with `settings` (widened to whole lines it cuts)."""
        if self.audio is None:
            return False
        start, end = commands.range_bounds(self.model, start, end)
        existing = self.model.utterances
        if not self.runner.start(RangeJob(settings, start, end, existing)):
            return False
        self._job = "range"
        self.range_edits.begin()
        self.busy_changed.emit(True)
        self.job_started.emit(f"Transcribing {format_time(start)}–{format_time(end)} again", "transcribe")
        return True

    def restart_engine(self, settings: TranscribeSettings) -> bool:
        """Start the engine process again (after it stopped), in the background."""
        if not self.runner.start(EngineJob(settings)):
            return False
        self._job = "engine"
        self.busy_changed.emit(True)
        self.job_started.emit("Starting the engine", "load")
        return True

    def cancel(self) -> None:
        """Stop the running job. A transcription gives the transcript back at once (the snapshot,
        or the chunks finished so far on a first run) and says "Cancelling…" until the decoder,
        which cannot stop inside a batch, has finished the one it is on; its late results are
        dropped."""
        if not self.busy or self.cancelling:
            return
        self.runner.cancel()
        self.cancelling = True
        self.cancelling_started.emit()
        if self._job == "transcribe":
            kept = self._keep_partial("cancelled")
            self._job = "cancelled"
            self.message.emit("Cancelling… " + (kept or "Your transcript is unchanged."))

    def shutdown(self) -> None:
        self.runner.shutdown()

    # -- worker results --------------------------------------------------------------------
    def _on_audio(self, audio: LoadedAudio) -> None:
        self.audio = audio
        self._produced = set()
        self.audio_ready.emit(audio)

    def _on_prepared(self, prepared: Any) -> None:
        self.prepared = prepared
        self.plan_ready.emit(prepared)

    def _on_partial(self, result: ChunkResult) -> None:
        from engine.stitching import stitch

        if self._job != "transcribe":  # also after a cancel: late results are dropped
            return
        if not self._partials:
            self.model.meta = self._meta()
        self._partials.append(result)
        self._waiting.append(tuple(stitch([result])))
        self._show_waiting()

    def _show_waiting(self) -> None:
        """Chunks' lines in the table, in the order they came; later while a line is edited."""
        while self._waiting and self._job == "transcribe":
            if not self.run_edits.add(self._waiting[0], self.editor is not None and self.editor.is_editing()):
                self._retry.start()
                return
            self._waiting.pop(0)

    def _finish_editing(self) -> TypedLine | None:
        return close_typed(self.editor, self.model)

    def _meta(self) -> Transcript:
        duration = self.audio.recording.duration if self.audio else 0.0
        chunks = tuple(self.prepared.chunks) if self.prepared is not None else ()
        source = str(self.audio.path) if self.audio else None
        return Transcript(utterances=(), duration=duration, source=source, chunks=chunks)

    def _restore(self) -> None:
        if (s := self._snapshot) is not None:
            self.model.set_document(s.utterances, s.book, s.meta)

    def _on_finished(self, transcript: Transcript) -> None:
        if self._job == "cancelled":  # finished before it saw the cancel: what was kept stays
            self.message.emit("Transcription cancelled")
            return
        typed = self._finish_editing()  # a line being typed is one of the user's lines, not lost in the swap
        live, count = (self.model.rowCount() if self._partials else 0), len(transcript.utterances)
        edited, self._waiting = self.run_edits.settle(), []
        book, names = named_book(transcript, self._snapshot, self.model.book)  # the user's names carried
        self._produced = set(transcript.utterances)
        if edited:
            utterances, book = with_edited(transcript.utterances, book, edited)
            transcript = replace(transcript, utterances=utterances)
        commands.set_document(self.model, transcript, book, "Transcribe", before=self._snapshot)
        reopen_typed(self.editor, self.model, typed)
        joined = (f": the {live} live lines were joined across chunk edges, speakers matched across "
                  "the recording" if live and live != count else "")  # fmt: skip
        kept = f"; {len(edited)} line(s) you edited were kept (Undo: the transcript before)" if edited else ""
        kept += f"; names kept: {', '.join(names)}" if names else ""
        self.message.emit(f"Transcribed {count} utterances with {transcript.model}{joined}{kept}")
        self.transcribed.emit(transcript)

    def _on_range(self, result: RangeResult) -> None:
        self._produced.update(result.utterances)
        typed = self._finish_editing()  # a line being typed is kept like the others the user changed
        mine = self.range_edits.edited(result.start, result.end)
        self.range_edits.end()
        first, count = commands.replace_range(self.model, result, lambda new: overlaid(new, mine))
        reopen_typed(self.editor, self.model, typed)
        kept = f"; {len(mine)} line(s) you edited meanwhile were kept" if mine else ""
        self.message.emit(f"Transcribed {format_time(result.start)}–{format_time(result.end)} again: "
                          f"{count} line(s) with {result.model}{kept}")  # fmt: skip
        self.retranscribed.emit(first, count)

    def _on_failed(self, title: str, text: str) -> None:
        self.range_edits.end()
        if self._job == "cancelled":
            return
        if self._job == "transcribe":
            kept = self._keep_partial("failed")
            text += "\n\n" + (kept or "Your transcript and edits are unchanged.")
        self.error.emit(title, text)

    def _on_cancelled(self) -> None:
        self.range_edits.end()
        if self._job == "cancelled":
            self.message.emit("Transcription cancelled; the finished work was kept")
        elif self._job == "transcribe":
            kept = self._keep_partial("cancelled")
            self.message.emit("Transcription cancelled. " + (kept or "Your transcript is unchanged."))
        else:
            self.message.emit("Transcribing again cancelled" if self._job == "range" else "Opening cancelled")

    def _keep_partial(self, why: str) -> str:
        """Restore the snapshot; a first transcription keeps its finished chunks; lines edited
        during the run go over either (one undoable step)."""
        typed = self._finish_editing()
        before = set(self._snapshot.utterances) if self._snapshot is not None else set()
        mine, self._waiting = [u for u in self.run_edits.settle() if u not in before], []
        self._restore()
        said = ""
        base = self.model.utterances
        if not base and self._partials:
            from engine.stitching import stitch

            base = tuple(stitch(sorted(self._partials, key=lambda r: r.chunk.index)))
            self._produced.update(base)
            said = f"The {len(self._partials)} chunk(s) finished before it {why} were kept."
        if said or mine:
            text = f"Partial transcript ({why})" if said else f"Keep lines edited during the run ({why})"
            utterances = overlaid(base, mine)
            meta = replace(self._meta() if said else self.model.meta, utterances=utterances)
            commands.set_document(self.model, meta, with_speakers(self.model.book, utterances), text)
        if mine:
            said += f" {len(mine)} line(s) you edited during the run were kept."
        reopen_typed(self.editor, self.model, typed)
        return said.strip()
