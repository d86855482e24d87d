"""Training the tiny VibeVoice-ASR model from scratch: it ends replying with each clip's reference,
as the pipeline reads it, or says that it did not learn its targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.backends.vibevoice import VibeVoiceBackend, VibeVoiceConfig
from engine.pipeline import Pipeline
from engine.testing.tiny import TinyRecipe, read_clips, tiny_trained_model
from engine.types import FinishReason


def test_a_tiny_model_trained_from_scratch_transcribes_each_of_its_clips_as_its_reference(tmp_path: Path):
    # catches: the optimiser given the encoders' parameters instead of the others (nothing learns:
    # the step limit is reached), no report returned, the report's fields renamed
    folder = tiny_trained_model(tmp_path)
    report = json.loads((folder / "training.json").read_text())
    assert 0 < report["steps"] < TinyRecipe().max_steps and report["seconds"] >= 0
    assert report["loss"] == report["loss"]  # a number, not NaN
    clips = read_clips(folder)
    assert len(clips) == TinyRecipe().clips
    pipeline = Pipeline(VibeVoiceBackend(VibeVoiceConfig(model=str(folder), device="cpu")))
    for audio, reference in clips:
        (result,) = pipeline.infer(pipeline.prepare(audio), lambda p: None, None)
        assert result.finish_reason is FinishReason.EOS, result.raw_text
        assert [(s.text, s.speaker) for s in result.segments] == [(r.text, r.speaker) for r in reference]
        assert [round(s.start, 2) for s in result.segments] == [r.start for r in reference]


def test_a_model_that_cannot_learn_its_targets_in_the_steps_allowed_is_an_error_that_says_so(tmp_path: Path):
    # catches: training that returns a model that has not learned (the step limit not enforced)
    with pytest.raises(RuntimeError, match=r"^the tiny model did not learn its targets in 2 steps$"):
        tiny_trained_model(tmp_path, TinyRecipe(max_steps=2))
    assert not list(tmp_path.glob("vibevoice-tiny-*")), "no checkpoint is left as if it were trained"


def test_a_model_trained_also_with_the_speech_behind_its_transcript_hidden_still_replies_exactly(
    tmp_path: Path,
):
    # catches: the hidden passes' mask asked for with an argument missing or wrong (a crash)
    from engine.testing.tiny_masks import HiddenSpeech

    recipe = TinyRecipe(hidden=HiddenSpeech(look_back=(4, 8), sinks=2, look_ahead=8, recent=1))
    folder = tiny_trained_model(tmp_path, recipe)
    pipeline = Pipeline(VibeVoiceBackend(VibeVoiceConfig(model=str(folder), device="cpu")))
    for audio, reference in read_clips(folder):
        (result,) = pipeline.infer(pipeline.prepare(audio), lambda p: None, None)
        assert [s.text for s in result.segments] == [r.text for r in reference]
