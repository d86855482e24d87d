"""Whisper's two qualities: broken batched chunks are found and repaired; accurate decodes in order."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from engine.backends.whisper import WhisperBackend, WhisperConfig
from engine.backends.whisper_checks import compression_ratio, problems, uncovered
from engine.backends.whisper_decode import DecodeOptions, batch_plan, decode_accurate
from engine.types import Chunk, ChunkResult, Recording, Segment, SpeechSegment, Word

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "meeting.flac"


def _result(words: list[tuple[float, float]], text: str = "", speech=((10.0, 30.0),)) -> ChunkResult:
    chunk = Chunk(0, 10.0, 30.0, tuple(SpeechSegment(a, b) for a, b in speech))
    ws = tuple(Word(a, b, "word") for a, b in words)
    return ChunkResult(chunk, (Segment(0.0, 20.0, "x", words=ws),) if ws else (), raw_text=text)


def _spread(start: float, end: float, rate: float = 3.0) -> list[tuple[float, float]]:
    n = int((end - start) * rate)
    return [(start + i / rate, start + (i + 0.8) / rate) for i in range(n)]


def test_a_fully_transcribed_chunk_has_no_problems():
    result = _result(_spread(0.0, 20.0), "a plain sentence about the budget and the plan")
    assert problems(result, 1.0, typical=3.0) == ()


def test_a_chunk_whose_tail_was_dropped_has_a_gap():
    result = _result(_spread(0.0, 8.0))
    assert uncovered(result.chunk, [w for s in result.segments for w in s.words], 1.0) == [
        pytest.approx((8.0 - 1 / 3 + 0.8 / 3 + 0.25, 20.0))
    ]
    assert "gap" in problems(result, 1.0, typical=None)


def test_silence_between_speech_is_not_a_gap():
    result = _result(_spread(0.0, 5.0) + _spread(12.0, 20.0), speech=((10.0, 15.0), (22.0, 30.0)))
    assert problems(result, 1.0, typical=3.0) == ()


def test_words_stretched_over_skipped_speech_are_sparse():
    stretched = [(i * 2.0, i * 2.0 + 1.9) for i in range(10)]  # 10 words over 20 s: a skip
    assert problems(_result(stretched), 1.0, typical=3.0) == ("sparse",)


def test_a_repetition_loop_is_recognised():
    looping = "I don't think we can afford to have a need" + " to have a need" * 30
    plain = "We saved a lot of money by moving to the new provider."
    assert compression_ratio(looping) > 2.4 > compression_ratio(plain)
    assert "loop" in problems(_result(_spread(0.0, 20.0), looping), 1.0, typical=3.0)


class _Sequential:
    """faster-whisper's sequential `transcribe` as the repair sees it: one segment per clip, decoded
    by a window starting at the clip's first frame, its words aligned `early` seconds before it."""

    def __init__(self, early: float) -> None:
        self.early = early
        self.given = 0  # samples of audio given to the last call

    def transcribe(self, samples, clip_timestamps, **_options):
        self.given = len(samples)
        bounds = list(zip(clip_timestamps[::2], clip_timestamps[1::2], strict=True))
        segments = []
        for k, (a, b) in enumerate(bounds):
            start = a - self.early
            words = [
                SimpleNamespace(start=start + i, end=start + i + 0.8, word=f" clip{k}w{i}", probability=0.9)
                for i in range(int(b - a))
            ]
            text = "".join(w.word for w in words)
            segments.append(SimpleNamespace(seek=round(a * 100), start=start, end=b, text=text, words=words,
                                            tokens=[0] * len(words)))  # fmt: skip
        return iter(segments), SimpleNamespace(language="en")  # faster-whisper's TranscriptionInfo


def test_a_repaired_chunk_keeps_its_own_words_when_they_align_before_its_start():
    """Chunks cut at a short pause touch; a repair's words aligned a little before the later
    chunk's start still belong to it, not to the chunk before (that doubled the text)."""
    first = Chunk(0, 0.154, 25.184, (SpeechSegment(0.154, 25.184),))
    second = Chunk(1, 25.184, 49.68, (SpeechSegment(25.184, 49.68),))
    recording = Recording(np.zeros(50 * 16000, dtype=np.float32), 16000)
    options = DecodeOptions(language="en", beam_size=1, batch_size=8, hotwords=None)
    model = _Sequential(early=0.15)
    results = list(decode_accurate(model, recording, [first, second], options, joined=False))
    texts = [" ".join(w.text for s in r.segments for w in s.words) for r in results]
    assert texts[0].split() == [f"clip0w{i}" for i in range(25)]
    assert texts[1].split() == [f"clip1w{i}" for i in range(24)]


def test_batches_grow_from_one_chunk_so_the_first_lines_come_early():
    plan = batch_plan(25, 8)
    assert [len(r) for r in plan] == [1, 2, 4, 8, 8, 2]
    assert [i for r in plan for i in r] == list(range(25))
    assert batch_plan(0, 8) == [] and [len(r) for r in batch_plan(3, 1)] == [1, 1, 1]


def test_a_repair_in_a_long_recording_decodes_only_the_audio_around_its_chunk():
    """faster-whisper computes the features of all the audio it is given: a repair gets its
    chunk's audio (and a second either side), and its words still come back in recording time."""
    chunk = Chunk(7, 1800.25, 1820.25, (SpeechSegment(1800.25, 1820.25),))
    recording = Recording(np.zeros(3600 * 16000, dtype=np.float32), 16000)  # an hour
    options = DecodeOptions(language="en", beam_size=1, batch_size=8, hotwords=None)
    model = _Sequential(early=0.0)
    [result] = decode_accurate(model, recording, [chunk], options, joined=False)
    assert model.given <= 22.5 * 16000
    words = [w for s in result.segments for w in s.words]
    assert [w.text for w in words] == [f"clip0w{i}" for i in range(20)]
    assert words[0].start == pytest.approx(0.0) and words[-1].end == pytest.approx(19.8)  # chunk time


def test_quality_must_be_fast_or_accurate():
    with pytest.raises(ValueError, match="quality"):
        WhisperConfig(quality="best")


@pytest.mark.slow
@pytest.mark.parametrize("quality", ["fast", "accurate"])
def test_both_qualities_transcribe_the_demos_first_minute_with_word_times(quality):
    from engine.audio.io import load_audio
    from engine.audio.vad import SileroVad
    from engine.types import Recording

    full = load_audio(DEMO, 16000)
    recording = Recording(full.samples[: 58 * 16000], 16000)
    speech = SileroVad().detect(recording)
    chunks = [Chunk(0, 0.0, 29.0, tuple(s for s in speech if s.end <= 29.0)),
              Chunk(1, 29.0, 58.0, tuple(s for s in speech if s.start >= 29.0))]  # fmt: skip
    backend = WhisperBackend(WhisperConfig(quality=quality, cpu_threads=2))
    results = list(backend.transcribe(recording, chunks))
    assert [r.chunk.index for r in results] == [0, 1]
    words = [w for r in results for s in r.segments for w in s.words]
    assert len(words) > 120  # the first 58 s hold about 165 reference words
    assert all(0 <= w.start <= w.end <= r.chunk.duration + 0.5 for r in results for s in r.segments
               for w in s.words)  # fmt: skip
    assert "conference" in " ".join(r.raw_text.lower() for r in results)
