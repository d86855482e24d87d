"""How long the window's GUI thread stalls while a reviewer edits, as the user meets it (offscreen,
real audio): a three-hour transcript played back, edits while the engine transcribes a ten-minute
file, and edits while recording with live lines.

Audio goes through real PortAudio into a PulseAudio null sink (`engine.testing.pulse_sink`; the
sink consumes audio in real time, as a sound card does), and recording reads the sink's monitor.
Stalls are measured by `app_stalls`: a 5 ms heartbeat timer on the GUI thread (its largest gap
minus the interval) and each key's time from the press to the window's next paint. Keys are real
key events on the real window (`QTest.keyClick`: shortcuts, line editor and all).

1. `3 h transcript`: a synthetic three-hour recording and 2,001 lines (`app_edits`), the app's
   real autosave interval; Space plays (Space-to-sound: to the first audio callback); while it
   plays, edit rounds (F2, a word typed, Return; Ctrl+K; Ctrl+J; Ctrl+2; Ctrl+Z); Space pauses (the
   player aborts the stream), Space plays again; an autosave until written; Ctrl+S until written.
2. `transcribe 10 min`: the demo meeting five times over (10.4 min) opened through the window,
   F5 (the app's Transcribe action and worker, whatever runs the engine), and edit rounds and
   Space/Space until the run lands; one more round after it. The table stays editable while the
   run's lines arrive (`app.run_edits`); the bench counts how many edits changed the document.
3. `record with live lines`: Ctrl+Alt+R (the recording bar; the `pulse` device, the sink's
   monitor), Ctrl+Alt+R again to record while `paplay` plays the demo into the sink; edit rounds
   on the live lines as they come; Ctrl+Alt+R to stop; rounds while the lines catch up and the
   final run goes over the file.

Prints per scenario its worst heartbeat stall (and what was going on), each key's worst time to
show, the load average before and after, and as its last line `worst stall: N ms (WHAT)` over all
of them. Bulk edits (Replace All, shift all times) are timed by bench/app_edits.py.

    QT_QPA_PLATFORM=offscreen PYTHONPATH=. .venv/bin/python bench/app_scale.py [--only transcribe]

(`PYTHONPATH=.`: measure this checkout's `app`, not the one the venv's editable install names.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_edits import synthetic_transcript
from app_live import repeated_demo
from app_responsiveness import bench_window
from app_stalls import Edits, Heartbeat, K, M, load, report, spin, spin_until

from engine.testing.pulse_sink import SINK, pointed_here, running_sink
from engine.types import Chunk, Recording, SpeechSegment, Transcript

RATE = 16_000
HOURS3 = 3 * 3600.0
PLAY_FROM = 5400.0  # the middle of the recording
DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo" / "meeting.flac"


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


def show_three_hours(window, rows: int, seconds: float) -> None:
    """The synthetic recording and transcript in `window`, as a finished run leaves them."""
    from app import commands
    from app import speakers as sp
    from app.envelope import EnvelopePyramid
    from app.jobs import LoadedAudio
    from engine.pipeline import Prepared

    transcript = synthetic_transcript(seconds=HOURS3, count=rows, seed=5)
    recording = synthetic_audio(transcript, PLAY_FROM, seconds)
    speech = tuple(SpeechSegment(u.start, u.end) for u in transcript.utterances)
    chunks = tuple(Chunk(i, i * 25.0, min((i + 1) * 25.0, HOURS3)) for i in range(int(HOURS3 // 25)))
    worker = window.session.runner.worker
    pyramid = EnvelopePyramid.build(recording.samples, RATE)
    worker.audio_loaded.emit(LoadedAudio(Path("meeting.flac"), recording, pyramid))
    worker.prepared.emit(Prepared(recording, speech, chunks))
    meta = Transcript(transcript.utterances, transcript.speakers, duration=HOURS3, chunks=chunks,
                      source="meeting.flac")  # fmt: skip
    commands.set_document(window.model, meta, sp.book_from_transcript(transcript), "Transcribe")
    window.undo_stack.setClean()


def shown_window(folder: Path):
    """A main window at 1280×800, shown and active (keys reach its shortcuts)."""
    window = bench_window(folder, 1280, 800)
    window.activateWindow()
    spin(0.5)
    return window


def three_hours(folder: Path, beat, args) -> None:
    from app import commands

    window = shown_window(folder)
    window.projects.timer.setInterval(30_000)  # the app's own autosave interval
    show_three_hours(window, args.rows, args.play_seconds)
    spin(1.0)
    edits, playback, model = Edits(window, beat), window.playback, window.model
    if playback.reason is not None or playback.player is None:
        print(f"[3 h transcript] playback not measured: {playback.reason}")
        window.close()
        return
    heard: list[float] = []
    source = playback.player._source  # read by the device's callback (the stream is opened ahead, so
    read = source.read  # its callback is bound before this: hook what the callback calls)

    def first_read(frames: int) -> np.ndarray:
        if not heard:
            heard.append(time.perf_counter())
        return read(frames)

    source.read = first_read  # type: ignore[method-assign]
    playback.seek(PLAY_FROM)
    row = model.nearest_row(PLAY_FROM) or 0
    window.transcript_view.select_row(row)
    with beat.measuring("3 h transcript"):
        pressed = time.perf_counter()
        edits.press("play (Space)", K.Key_Space)
        spin_until(lambda: bool(heard), 10)
        latency = (heard[0] - pressed) * 1000 if heard else float("nan")
        started, moved_from = time.monotonic(), playback.position
        while time.monotonic() - started < args.play_seconds:
            edits.round(model.nearest_row(playback.position) or row)
            beat.doing = "playing"
            spin(0.5)
        moved = playback.position - moved_from
        edits.press("pause (Space)", K.Key_Space)
        beat.doing = "paused"
        spin(0.5)
        edits.press("play again (Space)", K.Key_Space)
        beat.doing = "playing"
        spin(2.0)
        edits.press("pause (Space)", K.Key_Space)
        print(f"[3 h transcript] Space-to-sound {latency:.0f} ms; the playhead moved {moved:.1f} s in "
              f"{args.play_seconds:g} s of edit rounds")  # fmt: skip
        projects = window.projects
        ticks: list[float] = []
        projects.timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
        commands.edit_text(model, 10, model.utterance(10).text + " (edited)")
        beat.doing = "autosave (tick until written)"
        spin_until(lambda: bool(ticks), projects.timer.interval() / 1000 + 5)
        spin_until(lambda: not projects.writer.busy, 30)
        projects.path = folder / "meeting.murmur"
        commands.edit_text(model, 12, model.utterance(12).text + " (edited)")
        edits.press("save (Ctrl+S)", K.Key_S, M.ControlModifier)
        beat.doing = "save (Ctrl+S, until written)"
        spin_until(lambda: not projects.writer.busy, 30)
    window.close()


def transcribe_ten_minutes(folder: Path, beat, args) -> None:
    window = shown_window(folder)
    path = repeated_demo(folder, 5)
    edits, session = Edits(window, beat), window.session
    with beat.measuring("transcribe 10 min"):
        beat.doing = "opening the file (decode, plan)"
        window.open_path(path)
        spin_until(lambda: not session.busy and session.prepared is not None, 600)
        window.transcript_view.setFocus()
        edits.press("transcribe (F5)", K.Key_F5, took=lambda: session.busy)
        began, rounds = time.monotonic(), 0
        while session.busy and time.monotonic() - began < 1200:
            rows = window.model.rowCount()
            if rows >= 2:
                edits.round(rounds * 7 % (rows - 1))
                rounds += 1
            edits.press("play (Space)", K.Key_Space)
            beat.doing = "engine transcribing"
            spin(0.5)
            edits.press("pause (Space)", K.Key_Space)
            beat.doing = "engine transcribing"
            spin(0.5)
        took = time.monotonic() - began
        beat.doing = "after the run"
        edits.round(3)
    print(f"[transcribe 10 min] {path.name}: {session.prepared.recording.duration:.0f} s transcribed in "
          f"{took:.0f} s, {window.model.rowCount()} lines; {rounds} edit rounds during the run")  # fmt: skip
    window.close()


def record_live(folder: Path, beat, env: dict[str, str]) -> None:
    window = shown_window(folder)
    window.store.set_value("recordings_folder", str(folder / "recordings"))
    feature, edits, view = window.recording, Edits(window, beat), window.transcript_view
    finished: list[object] = []
    window.session.transcribed.connect(finished.append)
    record = (K.Key_R, M.ControlModifier | M.AltModifier)
    try:
        with beat.measuring("record with live lines"):
            edits.press("show the recording bar (Ctrl+Alt+R)", *record, took=feature.dock.isVisible)
            names = [feature.panel.devices.itemText(i) for i in range(feature.panel.devices.count())]
            chosen = next((n for n in names if n.startswith("pulse")), None)
            if chosen is None:
                print(f"[record with live lines] no pulse input device among {names}")
                return
            feature.panel.devices.setCurrentText(chosen)
            edits.press("record (Ctrl+Alt+R)", *record, took=lambda: feature.controller.active)
            session = feature.controller.session
            if session is None:
                print("[record with live lines] recording did not start")
                return
            beat.doing = "starting the engine's live stream"
            link = feature.controller.link
            spin_until(lambda: link is None or not link.connecting, 120)
            player = subprocess.Popen(["paplay", f"--device={SINK}", str(DEMO)], env=env)
            rounds = 0
            while player.poll() is None:
                if window.model.rowCount() >= 2:
                    edits.round(max(window.model.rowCount() - 2, 0))
                    rounds += 1
                beat.doing = "recording, live lines arriving"
                spin(0.5)
            spin(8.0)  # the last turn's line
            lines = window.model.rowCount()
            view.setFocus()
            edits.press("stop (Ctrl+Alt+R)", *record, took=lambda: not feature.controller.active)
            deadline = time.monotonic() + 600
            while not finished and time.monotonic() < deadline:
                edits.round(1)
                beat.doing = "catching up, then the final run"
                spin(1.0)
        print(f"[record with live lines] {lines} live lines while recording the demo; {rounds} edit rounds "
              f"while recording; final run {'landed' if finished else 'did not land'}")  # fmt: skip
    finally:
        window.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2001)
    ap.add_argument("--play-seconds", type=float, default=30.0)
    ap.add_argument("--only", choices=("scale", "transcribe", "record"), default=None)
    args = ap.parse_args()
    before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="murmur-scale-") as tmp, running_sink() as sink, \
            pointed_here(sink.env):  # fmt: skip
        from PySide6.QtWidgets import QApplication

        from app.resources import style_sheet

        app = QApplication.instance() or QApplication([])
        app.setStyleSheet(style_sheet())
        print(f"load average before: {load()}")
        beat, folder = Heartbeat(), Path(tmp)
        for name, run in (("scale", lambda: three_hours(folder / "a", beat, args)),
                          ("transcribe", lambda: transcribe_ten_minutes(folder / "b", beat, args)),
                          ("record", lambda: record_live(folder / "c", beat, sink.env))):  # fmt: skip
            if args.only in (None, name):
                (folder / {"scale": "a", "transcribe": "b", "record": "c"}[name]).mkdir()
                run()
                app.processEvents()
        worst, what = report(beat)
    print(f"load average before: {before[0]:.2f}, after: {load()}")
    print(f"worst stall: {worst * 1000:.0f} ms ({what})")


if __name__ == "__main__":
    main()
