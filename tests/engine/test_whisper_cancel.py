"""A cancel takes effect inside one batched whisper decode, not only between batches; and the CPU
batch cap is a validated option."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import soundfile as sf

from engine.backends.whisper import WhisperConfig, load_model
from engine.backends.whisper_decode import DecodeOptions, decode_fast
from engine.errors import Cancelled
from engine.types import Chunk, Recording, SpeechSegment

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "meeting.flac"


class CancelAfterLooks(threading.Event):
    """The user's cancel, pressed once the decoder has looked at it `looks` times."""

    def __init__(self, looks: int) -> None:
        super().__init__()
        self.looks = looks

    def is_set(self) -> bool:
        self.looks -= 1
        return self.looks < 0 or super().is_set()


def test_a_cancel_during_a_batchs_encoder_stops_it_before_any_text_is_generated():
    samples, rate = sf.read(DEMO, dtype="float32", frames=16_000 * 30)
    recording = Recording(samples, rate)
    chunks = [Chunk(k, a, a + 14.0, (SpeechSegment(a, a + 14.0),)) for k, a in enumerate((0.0, 15.0))]
    model = load_model(WhisperConfig(device="cpu", cpu_threads=2))
    options = DecodeOptions(language="en", beam_size=1, batch_size=8, hotwords=None)
    decoded = []
    with pytest.raises(Cancelled):  # pressed after the batch started: its encoder ran, nothing else
        for result in decode_fast(model, recording, chunks, options, CancelAfterLooks(1)):
            decoded.append(result)
    assert decoded == []


def test_the_cpu_batch_cap_is_none_or_a_positive_count():
    assert WhisperConfig().cpu_batch_cap == 2  # on a CPU, calls of 2 side by side beat one call of 8
    with pytest.raises(ValueError, match="CPU batch cap"):
        WhisperConfig(cpu_batch_cap=-1)
    with pytest.raises(ValueError, match="threads and lanes"):
        WhisperConfig(cpu_lanes=-1)
