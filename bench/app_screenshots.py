"""Render the window on an hour-long transcript at 1440×900 and 1024×640 (offscreen) for docs/.

The transcript is the synthetic one `bench/app_edits.py` edits (546 utterances over an hour,
five speakers, word times and probabilities); the audio is synthetic too (noise bursts shaped
like the turns), fed to the window through the worker's own signals as a decoded recording with
its speech regions and 5-minute chunks. A line in the middle is selected, so the word view shows
its words with their times and marks the doubtful ones.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/app_screenshots.py docs
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_edits import synthetic_transcript

from engine.types import Chunk, Recording, SpeechSegment, Transcript

RATE = 8000


def synthetic_audio(transcript: Transcript, seed: int = 3) -> Recording:
    """Noise bursts where the utterances are, each with a syllable-like amplitude wobble."""
    rng = np.random.default_rng(seed)
    samples = np.zeros(int(transcript.duration * RATE), dtype=np.float32)
    for u in transcript.utterances:
        a, b = int(u.start * RATE), int(u.end * RATE)
        t = np.arange(b - a) / RATE
        wobble = 0.35 + 0.3 * np.abs(np.sin(2 * np.pi * 3.1 * t + rng.uniform(0, 6)))
        samples[a:b] = (rng.standard_normal(b - a) * wobble * rng.uniform(0.4, 0.9)).astype(np.float32) / 3
    return Recording(samples, RATE, Path("meeting.flac"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    args = ap.parse_args()

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app import commands
    from app import speakers as sp
    from app.envelope import EnvelopePyramid
    from app.main_window import MainWindow
    from app.resources import style_sheet
    from app.settings import SettingsStore
    from app.worker import LoadedAudio
    from engine.pipeline import Prepared

    app = QApplication.instance() or QApplication([])
    app.setStyleSheet(style_sheet())
    folder = Path(tempfile.mkdtemp(prefix="murmur-shots-"))
    store = SettingsStore(QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(store, folder / "recovery", autosave_ms=3_600_000)
    window.ask_before_closing = False
    transcript = synthetic_transcript(seconds=3600.0, count=546, speakers=5, seed=4)
    recording = synthetic_audio(transcript)
    speech = tuple(SpeechSegment(u.start, u.end) for u in transcript.utterances)
    chunks = tuple(Chunk(i, i * 300.0, min((i + 1) * 300.0, 3600.0)) for i in range(12))
    worker = window.session.runner.worker
    worker.audio_loaded.emit(
        LoadedAudio(Path("meeting.flac"), recording, EnvelopePyramid.build(recording.samples, RATE))
    )
    worker.prepared.emit(Prepared(recording, speech, chunks))
    meta = Transcript(
        transcript.utterances, transcript.speakers, duration=3600.0, chunks=chunks, model="whisper"
    )
    commands.set_document(window.model, meta, sp.book_from_transcript(transcript), "Transcribe")
    window.show()
    args.folder.mkdir(parents=True, exist_ok=True)
    for width, height in ((1440, 900), (1024, 640)):
        window.resize(width, height)
        window.transcript_view.select_row(273)
        window.waveform.show_range(1740.0, 1860.0)
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)
        out = args.folder / f"app-hour-{width}x{height}.png"
        window.grab().save(str(out))
        print("wrote", out)
    window.close()


if __name__ == "__main__":
    main()
