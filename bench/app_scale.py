"""The review loop on a three-hour recording: how long the window's GUI thread stalls (offscreen).

Builds a synthetic three-hour recording (16 kHz; noise bursts where people speak, near the
playhead) and transcript (2,001 utterances with word times, six speakers, as in the review), shows
them in a `MainWindow` with the app's style sheet and its real autosave interval (30 s), then:

- Space-to-sound: from pressing Play to the first audio callback (a real PortAudio stream; on
  Linux without a sound card, ALSA's null device), and the GUI block of the press itself;
- the longest GUI stall during `--play-seconds` of playback, and how far the playhead moved;
- the longest stall from an autosave tick until its file is written, and during Ctrl+S;
- each edit kind (worst of `--repeat`), Replace All over ≥ 1,000 rows, and its undo.

Without a sound card (this machine), the audio callbacks run on a thread at real-time pace
(`PacedStream`); the player's callback and its lock are the app's own.

A stall is the longest single `processEvents()` (or action plus its `processEvents()`), plus how
late the GUI thread got back from the short pause after it (waiting for the interpreter while
another thread holds it, or for a core): the time the window could not react. Prints each with
the target (≤ 50 ms; Replace All ≤ 250 ms) and ends with `worst stall: N ms (WHAT)`, the largest
stall outside Replace All.

    QT_QPA_PLATFORM=offscreen PYTHONPATH=. .venv/bin/python bench/app_scale.py

(`PYTHONPATH=.`: measure this checkout's `app`, not the one the venv's editable install names.)
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_edits import synthetic_transcript

from engine.types import Chunk, Recording, SpeechSegment, Transcript

RATE = 16_000
HOURS3 = 3 * 3600.0
PLAY_FROM = 5400.0  # the middle of the recording
PAUSE = 0.002  # seconds the measuring loop sleeps between turns of the event loop


def null_audio_device(folder: Path) -> bool:
    """Point ALSA at its null device (before PortAudio starts) where there is no sound card;
    True when it did."""
    cards = Path("/proc/asound/cards")
    if sys.platform != "linux" or (cards.exists() and "no soundcards" not in cards.read_text()):
        return False
    (folder / ".asoundrc").write_text("pcm.!default { type null }\nctl.!default { type hw card 0 }\n")
    os.environ["HOME"] = str(folder)
    return True


class PacedStream:
    """An output stream that calls back every 512 frames at the recording's pace, on its own
    thread, as a sound card's PortAudio stream does. ALSA's null device calls back as fast as
    the CPU allows (hours of audio in seconds), which measures nothing a user meets."""

    def __init__(self, samplerate: float, channels: int, dtype: str, callback: Callable[..., None]) -> None:
        import threading

        self.rate, self.callback, self.active = samplerate, callback, False
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.active = True
        self._thread.start()

    def stop(self) -> None:
        self.active = False
        if self._thread.is_alive():
            self._thread.join()

    def close(self) -> None:
        self.stop()

    def _run(self) -> None:
        import sounddevice

        frames, due = 512, time.perf_counter()
        out = np.zeros((frames, 1), np.float32)  # (frames, channels)
        while self.active:
            try:
                self.callback(out, frames, None, None)
            except sounddevice.CallbackStop:
                self.active = False
                return
            due += frames / self.rate
            time.sleep(max(due - time.perf_counter(), 0.0))


def synthetic_audio(transcript: Transcript, around: float, seconds: float, seed: int = 3) -> Recording:
    """Three hours of silence with speech-like noise in the lines near `around` (the rest of the
    array is never written, so it costs no memory)."""
    rng = np.random.default_rng(seed)
    samples = np.zeros(int(transcript.duration * RATE), dtype=np.float32)  # (T,)
    for u in transcript.utterances:
        if around - 10 <= u.start <= around + seconds + 10:
            a, b = int(u.start * RATE), int(u.end * RATE)
            samples[a:b] = (rng.standard_normal(b - a) * 0.2).astype(np.float32)
    return Recording(samples, RATE, Path("meeting.flac"))


class Clock:
    """Runs the event loop and keeps the longest single block, and the GUI thread's CPU time in
    it (`cpu`): on a loaded machine the wall time also holds other processes' turns."""

    def __init__(self, app: object) -> None:
        self.app = app
        self.cpu = 0.0  # CPU seconds of the longest block of the last measurement

    def _block(
        self, action: Callable[[], object], after: Callable[[], object] = lambda: None
    ) -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.thread_time()
        action()
        self.app.processEvents()  # type: ignore[attr-defined]
        after()
        return time.perf_counter() - t0, time.thread_time() - c0

    def act(self, action: Callable[[], object]) -> float:
        wall, self.cpu = self._block(action)
        return wall

    def run(self, seconds: float = 0.0, until: Callable[[], bool] | None = None, limit: float = 120) -> float:
        """Spin for `seconds`, or until `until()` holds (at most `limit` s); the longest block.
        A block is one `processEvents()` plus how late the thread got back from its pause after
        it: waiting there for the interpreter (another thread holding the GIL, a garbage
        collection on another thread) or for a core is time the window could not react, too."""
        worst, cpu, start = 0.0, 0.0, time.perf_counter()
        while True:
            elapsed = time.perf_counter() - start
            if (until is None and elapsed >= seconds) or (until is not None and (until() or elapsed > limit)):
                self.cpu = cpu
                return worst
            wall, used = self._block(lambda: None, lambda: time.sleep(PAUSE))
            if wall - PAUSE > worst:
                worst, cpu = wall - PAUSE, used


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2001)
    ap.add_argument("--play-seconds", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="murmur-scale-"))
    if null_audio_device(folder):
        import sounddevice

        sounddevice.OutputStream = PacedStream  # type: ignore[misc]
        print("no sound card: audio callbacks paced in real time on a thread (see PacedStream)")

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app import commands
    from app import speakers as sp
    from app.envelope import EnvelopePyramid
    from app.main_window import MainWindow
    from app.resources import style_sheet
    from app.settings import SettingsStore
    from app.transcript_model import TEXT
    from app.worker import LoadedAudio
    from engine.pipeline import Prepared

    app = QApplication.instance() or QApplication([])
    app.setStyleSheet(style_sheet())
    store = SettingsStore(QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(store, folder / "recovery")  # the real autosave interval
    window.ask_before_closing = False
    window.resize(1280, 800)
    window.show()
    clock = Clock(app)
    transcript = synthetic_transcript(seconds=HOURS3, count=args.rows, seed=5)
    recording = synthetic_audio(transcript, PLAY_FROM, args.play_seconds)
    speech = tuple(SpeechSegment(u.start, u.end) for u in transcript.utterances)
    chunks = tuple(Chunk(i, i * 25.0, min((i + 1) * 25.0, HOURS3)) for i in range(int(HOURS3 // 25)))
    worker = window.session.runner.worker
    worker.audio_loaded.emit(
        LoadedAudio(Path("meeting.flac"), recording, EnvelopePyramid.build(recording.samples, RATE))
    )
    worker.prepared.emit(Prepared(recording, speech, chunks))
    meta = Transcript(
        transcript.utterances, transcript.speakers, duration=HOURS3, chunks=chunks, source="meeting.flac"
    )
    commands.set_document(window.model, meta, sp.book_from_transcript(transcript), "Transcribe")
    window.undo_stack.setClean()
    clock.run(1.0)
    interval = window.projects.timer.interval()
    print(
        f"{window.model.rowCount()} lines over 3:00:00; autosave every {interval / 1000:g} s (the app's own)"
    )
    model, view, actions, rng = window.model, window.transcript_view, window.actions_by_name, random.Random(2)

    stalls: dict[str, tuple[float, float]] = {}  # what → (wall, GUI-thread CPU) of its longest block

    def keep(name: str, wall: float) -> None:
        if wall >= stalls.get(name, (-1.0, 0.0))[0]:
            stalls[name] = (wall, clock.cpu)

    # -- playback ---------------------------------------------------------------------------
    reason = window.playback.reason
    if reason is None and window.playback.player is not None:
        heard: list[float] = []
        player = window.playback.player
        callback = player._callback

        def first_callback(*a: object) -> None:
            if not heard:
                heard.append(time.perf_counter())
            callback(*a)

        player._callback = first_callback  # type: ignore[method-assign]
        window.playback.seek(PLAY_FROM)
        view.select_row(model.nearest_row(PLAY_FROM) or 0)
        clock.run(0.3)
        pressed = time.perf_counter()
        keep("play (Space)", clock.act(actions["play"].trigger))
        clock.run(until=lambda: bool(heard), limit=10)
        latency = (heard[0] - pressed) if heard else float("nan")
        keep(f"{args.play_seconds:g} s of playback", clock.run(args.play_seconds))
        moved = player.position - PLAY_FROM
        keep("pause (Space)", clock.act(actions["play"].trigger))
        print(f"Space-to-sound: {latency * 1000:.0f} ms; the playhead moved {moved:.1f} s in "
              f"{args.play_seconds:g} s")  # fmt: skip
    else:
        print(f"playback not measured: {reason}")

    # -- autosave and save ---------------------------------------------------------------------
    projects = window.projects
    ticks: list[float] = []
    projects.timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    for row in (10, 11):  # two ticks: the first may come at once, the second a whole interval later
        commands.edit_text(model, row, model.utterance(row).text + " (edited)")
        ticks.clear()
        clock.run(until=lambda: bool(ticks), limit=interval / 1000 + 5)
        keep("autosave (tick until written)", clock.run(until=lambda: not projects.writer.busy, limit=30))
    projects.path = folder / "meeting.murmur"
    commands.edit_text(model, 12, model.utterance(12).text + " (edited)")
    pressed = time.perf_counter()
    keep("save (Ctrl+S, until written)", clock.act(actions["save"].trigger))
    keep("save (Ctrl+S, until written)", clock.run(until=lambda: not projects.writer.busy, limit=30))
    size = projects.path.stat().st_size / 2**20
    print(f"Ctrl+S: {size:.1f} MB written in {time.perf_counter() - pressed:.2f} s on the writer's thread")

    # -- edits ----------------------------------------------------------------------------------
    def worst(name: str, action: Callable[[], object], setup: Callable[[], object] | None = None) -> None:
        for _ in range(args.repeat):
            if setup is not None:
                setup()
                clock.run(0.1)
            keep(name, clock.act(action))
            keep(name, clock.run(0.1))

    def select_random() -> None:
        view.select_row(rng.randrange(model.rowCount() - 2))

    def text_edit() -> None:
        row = rng.randrange(model.rowCount())
        model.setData(model.index(row, TEXT), model.utterance(row).text + " indeed")

    worst("text edit", text_edit)
    worst("speaker change (Ctrl+2)", actions["speaker_2"].trigger, select_random)
    worst("split (Ctrl+K)", actions["split"].trigger, select_random)
    worst("merge (Ctrl+J)", actions["merge"].trigger, select_random)
    worst("delete a line (Del)", actions["delete_lines"].trigger, select_random)
    insert = lambda: (actions["insert_line"].trigger(), view.commit_open_editor())  # noqa: E731
    worst("insert an empty line", insert, select_random)
    worst("rename a speaker", lambda: commands.rename_speaker(model, "S1", f"Alice {rng.random():.4f}"))
    worst("undo one edit", window.undo_stack.undo)
    worst("find next (F3)", actions["find_next"].trigger, lambda: window.find_bar.find_edit.setText("budget"))
    bulk: dict[str, tuple[float, float]] = {}
    for name, action in (("shift all times", lambda: window.edit.shift_times("0.5")),
                         ("undo shift all times", window.undo_stack.undo),
                         ("merge same-speaker lines", actions["merge_same"].trigger),
                         ("undo merge same-speaker lines", window.undo_stack.undo)):  # fmt: skip
        keep(name, clock.act(action))
        keep(name, clock.run(0.2))
    bar = window.find_bar
    bar.find_edit.setText("the")
    bar.replace_edit.setText("THE")
    rows = sum(1 for u in model.utterances if "the" in u.text.lower())
    replacing = {f"Replace All ({rows} rows)": bar.replace_every, "undo Replace All": window.undo_stack.undo}
    for name, action in replacing.items():
        wall = clock.act(action)
        cpu = clock.cpu
        after = clock.run(0.2)
        bulk[name] = (wall, cpu) if wall >= after else (after, clock.cpu)

    print(f"{'what':44s} {'worst stall':>12s} {'its CPU':>10s}  target")
    for table, target in ((stalls, 0.05), (bulk, 0.25)):
        for name, (wall, cpu) in table.items():
            verdict = f"{'ok' if wall <= target else 'OVER'} (≤ {target * 1000:g} ms)"
            print(f"{name:44s} {wall * 1000:9.1f} ms {cpu * 1000:7.1f} ms  {verdict}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average while measuring: {load:.1f} on {os.cpu_count()} cores")
    name, (wall, _) = max(stalls.items(), key=lambda kv: kv[1][0])
    window.close()
    print(f"worst stall: {wall * 1000:.0f} ms ({name})")


if __name__ == "__main__":
    main()
