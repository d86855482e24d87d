"""Settings changed between opening a recording and pressing Transcribe are the ones used: the
chunk plan is made again with the new chunk size, and the plan the window shows follows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf
from qt_helpers import open_demo, wait_until

from app.settings import TranscribeSettings
from engine.synth.espeak import Espeak, Voice

RATE = 16_000
LINES = ("We will open the meeting now.", "The budget is ready for review.", "Thank you all for coming.")


def meeting(path: Path) -> Path:
    """Three sentences, at 1 s, 13 s and 25 s of a 36 s recording."""
    samples = np.zeros(36 * RATE, np.float32)
    with Espeak() as espeak:
        for line, at in zip(LINES, (1, 13, 25), strict=True):
            speech = espeak.synthesize(line, Voice("en-us+m3", rate=160))
            n = round(len(speech.samples) * RATE / speech.sample_rate)
            spoken = np.interp(np.arange(n) * speech.sample_rate / RATE, np.arange(len(speech.samples)),
                               speech.samples)  # fmt: skip
            samples[at * RATE : at * RATE + n] = spoken
    sf.write(path, samples, RATE)
    return path


def test_a_chunk_size_changed_after_opening_is_used_by_transcribe(make_window, tmp_path):
    window = make_window()
    open_demo(window, meeting(tmp_path / "meeting.wav"))
    opened = window.session.prepared.chunks
    assert max(c.duration for c in opened) > 10  # the default packs the sentences together
    window.set_settings(TranscribeSettings(chunk_seconds=8.0))
    assert window.transcribe()
    wait_until(lambda: not window.session.busy, timeout=180)
    replanned = window.session.prepared.chunks
    assert len(replanned) == 3 and all(c.duration <= 8.0 for c in replanned)
    assert window.model.meta.chunks == tuple(replanned)  # the plan shown is the plan used
    text = " ".join(window.model.utterance(i).text for i in range(window.model.rowCount())).lower()
    assert "budget" in text and "thank you" in text
