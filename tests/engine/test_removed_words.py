"""Speech is never deleted silently: a sentence said again minutes later survives, and every
clean-up step reports what it removed (JSON export and `--profile`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.export import export, read_json
from engine.pipeline import Pipeline, PipelineConfig
from engine.stitching import StitchConfig, removals, stitch
from engine.synth.espeak import Espeak, Voice
from engine.types import Chunk, ChunkResult, Removed, Segment

ROOT = Path(__file__).resolve().parents[2]
SENTENCE = "I didn't know you were there."
RATE = 16_000


def result(index: int, start: float, end: float, *segments: Segment) -> ChunkResult:
    return ChunkResult(chunk=Chunk(index, start, end), segments=segments)


def test_the_same_sentence_in_two_chunks_minutes_apart_is_kept_twice():
    first = result(0, 59.77, 61.77, Segment(0.03, 1.73, SENTENCE, 0))  # the chunks VAD plans for it
    second = result(1, 359.77, 361.77, Segment(0.03, 1.73, SENTENCE, 0))
    texts = [u.text for u in stitch([first, second])]
    assert texts == [SENTENCE, SENTENCE]
    assert removals([first, second], stitch([first, second])) == Removed()


def test_adjacent_chunks_whose_repeat_lies_far_from_the_tail_in_time_keep_it():
    first = result(0, 0.0, 30.0, Segment(24.0, 27.1, "we should ship it now", 0))
    second = result(1, 30.2, 60.0, Segment(3.0, 5.0, "we should ship it now", 0))  # 6 s later
    assert len(stitch([first, second], config=StitchConfig(dedup_seconds=3.0))) == 2


def test_a_real_boundary_repeat_is_removed_and_counted():
    first = result(0, 0.0, 30.0, Segment(26.0, 29.8, "Next week then, fine.", 0))
    second = result(
        1, 30.2, 60.0, Segment(0.0, 1.5, "next week then fine", 0), Segment(2.0, 4.0, "Agreed.", 0)
    )
    utterances = stitch([first, second])
    assert "next week then fine" not in [u.text for u in utterances]
    assert removals([first, second], utterances).boundary_words == 4


def test_the_json_export_keeps_what_was_removed(tmp_path: Path):
    first = result(0, 0.0, 30.0, Segment(26.0, 29.8, "Next week then, fine.", 0))
    second = result(1, 30.2, 60.0, Segment(0.0, 1.5, "next week then fine", 0))
    from engine.types import Transcript

    utterances = stitch([first, second])
    transcript = Transcript(utterances, removed=removals([first, second], utterances))
    (path,) = export(transcript, tmp_path, ["json"], stem="t")
    assert json.loads(path.read_text())["removed"]["boundary_words"] == 4
    assert read_json(path).removed.boundary_words == 4


def _blocks(path: Path, count: int) -> Path:
    """`count` identical 300 s blocks, each silent but for one sentence at 60 s (espeak, 16 kHz)."""
    with Espeak() as espeak:
        speech = espeak.synthesize(SENTENCE, Voice("en-us+m3", rate=150))
    spoken = np.interp(
        np.arange(round(len(speech.samples) * RATE / speech.sample_rate)) * speech.sample_rate / RATE,
        np.arange(len(speech.samples)),
        speech.samples,
    ).astype(np.float32)
    block = np.zeros(300 * RATE, dtype=np.float32)
    block[60 * RATE : 60 * RATE + len(spoken)] = spoken
    with sf.SoundFile(path, "w", RATE, 1) as f:
        for _ in range(count):
            f.write(block)
    return path


@pytest.fixture(scope="module")
def two_blocks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _blocks(tmp_path_factory.mktemp("blocks") / "two_blocks.flac", 2)


def _said(text: str) -> int:
    return text.lower().count("know you were there")


def test_a_sentence_repeated_five_minutes_later_survives_and_nothing_is_removed(two_blocks: Path):
    pipeline = Pipeline.create("whisper", PipelineConfig(), device="cpu")
    transcript = pipeline.run(two_blocks)
    assert _said(transcript.text) == 2, transcript.text
    assert [round(u.start) // 300 for u in transcript.utterances] == [0, 1]
    assert transcript.removed == Removed()  # clean speech: no step removed anything


@pytest.mark.slow
def test_a_sentence_said_every_five_minutes_for_three_hours_is_kept_all_36_times(tmp_path: Path):
    """The report's 3-hour file: 36 islands of the same sentence, 5 minutes apart."""
    path = _blocks(tmp_path / "three_hours.flac", 36)
    transcript = Pipeline.create("whisper", PipelineConfig(), device="cpu").run(path)
    assert transcript.duration == pytest.approx(3 * 3600, abs=1)
    assert _said(transcript.text) == 36, transcript.text
    assert sorted({round(u.start) // 300 for u in transcript.utterances}) == list(range(36))
    assert transcript.removed == Removed()


def test_profile_reports_what_each_step_removed(two_blocks: Path, tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "engine", "transcribe", str(two_blocks), "--out", str(tmp_path)]
    done = subprocess.run(
        [*cmd, "--format", "json", "--profile", "-q"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "removed: boundary repeats 0 words · merge 0 words" in done.stderr
    saved = json.loads((tmp_path / "two_blocks.json").read_text())
    assert saved["removed"] == {
        "boundary_words": 0,
        "merge_words": 0,
        "rollback_tokens": 0,
        "salvage_tokens": 0,
    }
    assert _said(" ".join(u["text"] for u in saved["utterances"])) == 2


def test_removals_add_up_the_loop_tokens_of_every_chunk_and_follow_the_inversion_rule():
    from dataclasses import replace as with_

    from engine.types import GenerationStats

    a = with_(result(0, 0.0, 10.0, Segment(1.0, 2.0, "one two three", 0), Segment(5.0, 4.0, "four five", 0)),
              stats=GenerationStats(rolled_back_tokens=5, salvage_dropped_tokens=2))  # fmt: skip
    b = with_(result(1, 40.0, 50.0, Segment(1.0, 2.0, "six", 0)), stats=GenerationStats(rolled_back_tokens=1))
    drop = StitchConfig(inversions="drop")
    assert removals([a, b], stitch([a, b], config=drop), drop) == Removed(rollback_tokens=6, salvage_tokens=2)
    assert removals([a, b], stitch([a, b])) == Removed(rollback_tokens=6, salvage_tokens=2)
