"""Render the window on an hour-long transcript, light and dark, at 1280×800 and 1024×600 (offscreen).

The transcript is the synthetic one `bench/app_edits.py` edits (546 utterances over an hour,
five speakers, word times and probabilities); the audio is synthetic too (noise bursts shaped
like the turns), fed to the window through the worker's own signals as a decoded recording with
its speech regions and 5-minute chunks. A line in the middle is selected, so the word view shows
its words with their times and marks the doubtful ones.

Also prints the contrast table of both themes (`app.theme.contrast_table`, WCAG ratios) as
Markdown, and each screenshot's measured contrast of the table text against its background
(the two most frequent colours of a text cell's pixels), for docs/app.md.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/app_screenshots.py docs
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
    with audio_output():
        render(args.folder)


@contextmanager
def audio_output() -> Iterator[None]:
    """A PulseAudio null sink as the sound card where one can start (the playback box then shows
    what a user with speakers sees), else no sound device (it says playback is unavailable)."""
    from engine.testing.pulse_sink import SinkUnavailable, pointed_here, running_sink

    try:
        with running_sink() as sink, pointed_here(sink.env):
            yield
    except SinkUnavailable as exc:
        print(f"no audio output for the screenshots: {exc}")
        yield


def render(folder_out: Path) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app import commands
    from app import speakers as sp
    from app.envelope import EnvelopePyramid
    from app.jobs import LoadedAudio
    from app.main_window import MainWindow
    from app.settings import SettingsStore
    from app.theme import DARK, LIGHT, contrast_table
    from engine.pipeline import Prepared

    app = QApplication.instance() or QApplication([])
    app.setStyle("Fusion")
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
    folder_out.mkdir(parents=True, exist_ok=True)
    for theme in (LIGHT, DARK):
        window.apply_theme(theme)
        for width, height in ((1280, 800), (1024, 600)):
            window.resize(width, height)
            window.transcript_view.select_row(273)
            window.waveform.show_range(1740.0, 1860.0)
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                app.processEvents()
                time.sleep(0.01)
            out = folder_out / f"app-{theme.name}-{width}x{height}.png"
            image = window.grab()
            image.save(str(out))
            print(f"wrote {out}; table text measured at {measured(window):.2f}:1")
    window.apply_theme(LIGHT)
    print("\n| text | light | ratio | dark | ratio |\n|---|---|---:|---|---:|")
    for (what, ink, back, ratio), (_, dink, dback, dratio) in zip(
        contrast_table(LIGHT), contrast_table(DARK), strict=True
    ):
        print(f"| {what} | {ink} on {back} | {ratio:.2f} | {dink} on {dback} | {dratio:.2f} |")
    window.close()
    shutil.rmtree(folder, ignore_errors=True)  # the window's settings and recovery folder


def measured(window: object) -> float:
    """Contrast of a text cell mid-table (not the selected line), from its rendered pixels: the most
    frequent colour is the background, the darkest/lightest frequent other one the text."""
    from collections import Counter

    from app.speakers import contrast_ratio
    from app.transcript_model import TEXT

    view = window.transcript_view  # type: ignore[attr-defined]
    index = view.filter.index(view.rowAt(view.viewport().height() // 2) + 1, TEXT)
    rect = view.visualRect(index)
    image = view.viewport().grab(rect).toImage()
    counts = Counter(
        image.pixelColor(x, y).name() for x in range(image.width()) for y in range(image.height())
    )
    background = counts.most_common(1)[0][0]
    others = [c for c, n in counts.most_common(12)[1:] if n >= 3]
    return max((contrast_ratio(c, background) for c in others), default=0.0)


if __name__ == "__main__":
    main()
