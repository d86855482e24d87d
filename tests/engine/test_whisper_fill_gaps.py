"""The whisper repair's last step: speech a chunk still has no words for is decoded as a clip of its
own and its words join the chunk (`fill_gaps`), with the real tiny.en model on espeak speech."""

from __future__ import annotations

import numpy as np
import pytest

from engine.backends.whisper import WhisperConfig, load_model
from engine.backends.whisper_decode import DecodeOptions, fill_gaps, on_recording, uncovered
from engine.synth.espeak import Espeak, Voice
from engine.types import Chunk, ChunkResult, Recording, Segment, SpeechSegment, Word

RATE = 16_000
FIRST = "Good morning everyone, thank you for coming today."
SECOND = "The budget for the new building is ready now."


@pytest.fixture(scope="module")
def spoken() -> tuple[Recording, list[Word]]:
    """Both sentences, one second of silence before, between and after; espeak's word times."""
    with Espeak() as espeak:
        speech = espeak.synthesize(f"{FIRST} {SECOND}", Voice("en-us+m3", rate=150))
    at = np.arange(round(len(speech.samples) * RATE / speech.sample_rate)) * speech.sample_rate / RATE
    samples = np.interp(at, np.arange(len(speech.samples)), speech.samples).astype(np.float32)
    pad = np.zeros(RATE, np.float32)
    words = [Word(w.start + 1.0, w.end + 1.0, w.text) for w in speech.words]
    return Recording(np.concatenate([pad, samples, pad]), RATE), words


def test_speech_left_without_words_is_decoded_again_and_its_words_join_the_chunk(spoken):
    from faster_whisper import BatchedInferencePipeline

    recording, words = spoken
    chunk = Chunk(0, 0.0, recording.duration, (SpeechSegment(0.9, recording.duration - 0.9),))
    kept = words[: len(FIRST.split())]  # the first sentence only, as a broken decode might give
    relative = tuple(Word(w.start - chunk.start, w.end - chunk.start, w.text) for w in kept)
    broken = ChunkResult(chunk, (Segment(relative[0].start, relative[-1].end, FIRST, words=relative),),
                         raw_text=FIRST)  # fmt: skip
    assert uncovered(chunk, list(relative), 1.0)  # the second sentence has no words
    model = load_model(WhisperConfig(device="cpu", cpu_threads=2))
    options = DecodeOptions(language="en", beam_size=1, batch_size=8, hotwords=None)
    (filled,) = fill_gaps(on_recording(BatchedInferencePipeline(model=model), recording), [broken], options)
    text = " ".join(w.text for s in filled.segments for w in s.words).lower()
    assert text.startswith("good morning") and "budget" in text and "building" in text
    assert "budget" in filled.raw_text.lower()
    times = [w.start for s in filled.segments for w in s.words]
    assert times == sorted(times) and max(times) < chunk.duration
    assert not uncovered(chunk, [w for s in filled.segments for w in s.words], 1.0)
