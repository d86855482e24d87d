"""Whisper's two qualities: broken batched chunks are found and repaired; accurate decodes in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.backends.whisper import WhisperBackend, WhisperConfig
from engine.backends.whisper_checks import compression_ratio, problems, uncovered
from engine.backends.whisper_decode import batch_plan
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


def test_batches_grow_from_one_chunk_so_a_watcher_sees_the_first_lines_early():
    plan = batch_plan(25, 8, ramp=True)
    assert [len(r) for r in plan] == [1, 2, 4, 8, 8, 2]
    assert [i for r in plan for i in r] == list(range(25))
    assert batch_plan(0, 8, ramp=True) == [] and [len(r) for r in batch_plan(3, 1, ramp=True)] == [1, 1, 1]


def test_a_run_nobody_watches_decodes_full_batches():
    plan = batch_plan(15, 8)
    assert [len(r) for r in plan] == [8, 7]
    assert [i for r in plan for i in r] == list(range(15))


def test_quality_must_be_fast_or_accurate():
    with pytest.raises(ValueError, match="quality"):
        WhisperConfig(quality="best")


@pytest.mark.slow
@pytest.mark.parametrize("quality", ["fast", "accurate"])
def test_both_qualities_transcribe_the_demos_first_minute_with_word_times(quality):
    from engine.audio.io import load_audio
    from engine.audio.vad import SileroVad

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
