"""How long Remember This Voice… holds the window's GUI thread, then and now (offscreen, the demo).

Opens the demo meeting in a `MainWindow`, shows its reference turns as the transcript (the
speakers of `resources/demo/meeting.rttm`) and remembers the voice of the speaker with the most
speech into a library in a temporary data folder, twice per try:

- "on the GUI thread": `app.known_voices.remember` called from the GUI thread, as the window did
  before (the encoder loaded beforehand, so both ways embed with a warm encoder);
- "worker thread": the window's own path (`VoiceTools.remember`), which snapshots the transcript,
  hands the job to its worker and returns; the event loop runs until the result has arrived (its
  first job, which loads the encoder on the worker, is shown apart).

A 5 ms GUI-thread heartbeat (`bench/app_stalls.Heartbeat`) gives the longest time the window could
not react during each; also printed: the request's own time on the GUI thread and the job's wall
time. `--repeat N` tries (the worst of each is printed).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/remember_voice.py
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"


def reference_transcript():
    from engine.pipeline import default_speakers
    from engine.types import Transcript, Utterance

    turns = []
    for line in (ROOT / "resources" / "demo" / "meeting.rttm").read_text().splitlines():
        fields = line.split()
        start, length, who = float(fields[3]), float(fields[4]), fields[7]
        turns.append(Utterance(start, start + length, who, who))
    ids = {who: f"S{i + 1}" for i, who in enumerate(dict.fromkeys(u.speaker for u in turns))}
    turns = [Utterance(u.start, u.end, u.text, ids[u.speaker]) for u in turns]
    return Transcript(tuple(turns), default_speakers(turns), 124.0, source=str(DEMO))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    folder = Path(tempfile.mkdtemp(prefix="remember-bench"))
    os.environ["XDG_DATA_HOME"] = str(folder / "data")

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app import commands
    from app import speakers as sp
    from app.known_voices import remember, user_library
    from app.main_window import MainWindow
    from app.settings import SettingsStore
    from bench.app_stalls import Heartbeat, spin, spin_until
    from engine.voices import VoiceEmbedder

    app = QApplication.instance() or QApplication([])
    store = SettingsStore(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(store, folder / "recovery", autosave_ms=600_000)
    window.ask_before_closing = False
    window.show()
    window.open_path(DEMO)
    spin_until(lambda: not window.session.busy and window.session.audio is not None, 300)
    transcript = reference_transcript()
    commands.set_document(window.model, transcript, sp.book_from_transcript(transcript), "Show")
    talk = sp.talk_time(transcript.utterances)
    speaker = max(talk, key=lambda sid: talk[sid] or 0.0)
    embedder = VoiceEmbedder()
    beat, worst = Heartbeat(), {}

    def note(what: str, seconds: float) -> None:
        worst[what] = max(worst.get(what, 0.0), seconds)

    with beat.measuring("worker thread, first job (loads the encoder)"):
        t0 = time.perf_counter()
        window.voices.remember(speaker, "First")
        spin_until(lambda: not window.voices.busy, 300)
        note("worker thread, first job: until its result", time.perf_counter() - t0)

    for n in range(args.repeat):
        with beat.measuring("on the GUI thread"):
            t0 = time.perf_counter()
            audio = window.session.audio.recording
            remember(user_library(), window.model.transcript(), speaker, audio, f"Before {n}", embedder)
            note("on the GUI thread: the job", time.perf_counter() - t0)
            spin(0.02)  # the heartbeat's late tick, the stall the call caused, is counted here
        with beat.measuring("worker thread"):
            t0 = time.perf_counter()
            window.voices.remember(speaker, f"Now {n}")
            note("worker thread: the request on the GUI thread", time.perf_counter() - t0)
            spin_until(lambda: not window.voices.busy, 300)
            note("worker thread: the job, until its result", time.perf_counter() - t0)
    load = os.getloadavg()[0]
    print(f"speaker {speaker}: {talk[speaker]:.1f} s of speech; {args.repeat} tries; load {load:.2f}")
    for scenario, (late, _what) in beat.worst.items():
        print(f"{scenario:>50}: longest GUI-thread stall {late * 1000:8.1f} ms")
    for what, seconds in worst.items():
        print(f"{what:>50}: {seconds * 1000:8.1f} ms")
    window.close()
    del app


if __name__ == "__main__":
    main()
