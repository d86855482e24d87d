"""The tiny model's training clips: the clip spec is part of the recipe (a long-clip and a short-clip
checkpoint never share a cache folder), every clip lasts what its spec says with the spec's turns and
voices, and each reference is chunk-relative — its times say where the clip's own audio speaks. The
long-clip checkpoint (slow: trained on first use) transcribes its clips with their references
through `murmur transcribe`, within the default token budget."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest

from engine.backends.vibevoice.config import SAMPLE_RATE
from engine.testing.clip_spec import ClipSpec
from engine.testing.tiny import LONG_RECIPE, TinyRecipe, read_clips, tiny_trained_model
from engine.testing.tiny_clips import EDGE_S, synthesize_clips


@pytest.fixture
def long_clips():  # made anew for each test (0.7 s), so a mutation run sees each test call it
    return synthesize_clips(LONG_RECIPE.clips, LONG_RECIPE.clip_seed, LONG_RECIPE.clip)


def test_recipes_differing_only_in_clip_length_are_cached_in_different_folders():
    short = TinyRecipe()
    longer = replace(short, clip=replace(short.clip, seconds=(20.0, 40.0)))
    assert longer.key() != short.key()
    assert LONG_RECIPE.key() != short.key()
    assert TinyRecipe().key() == short.key()  # the same recipe finds its cached build again


def test_long_clips_last_20_to_40_seconds_with_the_turns_and_voices_of_their_spec(long_clips):
    assert [c.name for c in long_clips] == ["clip0", "clip1", "clip2"]
    for index, clip in enumerate(long_clips):
        turns, voices = LONG_RECIPE.clip.of(index)
        assert 20.0 <= clip.duration <= 40.0
        assert len(clip.segments) == turns
        speakers = [s.speaker for s in clip.segments]
        assert list(dict.fromkeys(speakers)) == list(range(voices))  # numbered in order of appearance
        assert all(10 <= len(s.text.split()) <= 15 for s in clip.segments)
    assert [len(c.segments) for c in long_clips] == [6, 8, 10]


def test_every_reference_time_is_chunk_relative_and_marks_where_the_clip_speaks(long_clips):
    for clip in long_clips:
        first, last = clip.segments[0], clip.segments[-1]
        assert first.start == EDGE_S and abs(last.end - (clip.duration - EDGE_S)) <= 0.01
        loud = _loudness(clip.samples)
        for seg in clip.segments:  # speech right inside each segment's edges
            assert loud(seg.start, seg.start + 0.15) > 1e-3 and loud(seg.end - 0.15, seg.end) > 1e-3
        for a, b in itertools.pairwise(clip.segments):  # a short silence between turns
            assert 0.29 <= b.start - a.end <= 0.71 and loud(a.end + 0.02, b.start - 0.02) < 1e-4
        assert loud(0.0, first.start - 0.01) < 1e-4


def test_the_same_seed_gives_the_same_clips_and_another_seed_other_ones(long_clips):
    again = synthesize_clips(LONG_RECIPE.clips, LONG_RECIPE.clip_seed, LONG_RECIPE.clip)
    assert [c.target for c in again] == [c.target for c in long_clips]
    assert all(np.array_equal(a.samples, b.samples) for a, b in zip(again, long_clips, strict=True))
    other = synthesize_clips(1, LONG_RECIPE.clip_seed + 1, LONG_RECIPE.clip)
    assert other[0].target != long_clips[0].target


def test_every_clip_peaks_at_half_scale_with_no_turn_repeated(long_clips):
    for clip in long_clips:
        assert clip.samples.dtype == np.float32
        assert float(np.max(np.abs(clip.samples))) == pytest.approx(0.5, abs=1e-6)
        assert len({s.text for s in clip.segments}) == len(clip.segments)


def test_each_reference_is_written_as_the_reply_the_model_learns(long_clips):
    assert long_clips[0].target.startswith('[{"Start":0.05,"End":')  # compact, as VibeVoice-ASR writes
    for clip in long_clips:
        reply = json.loads(clip.target)
        assert [(r["Start"], r["End"], r["Speaker"], r["Content"]) for r in reply] == [
            (s.start, s.end, s.speaker, s.text) for s in clip.segments
        ]


def test_a_clip_draws_distinct_sentences_of_exactly_the_words_its_spec_allows():
    from engine.synth.script import load_corpus

    allowed = {s for s in load_corpus().all_sentences if 14 <= len(s.split()) <= 15}
    assert len(allowed) == 4  # the corpus's 14- and 15-word sentences: a clip of 4 turns takes them all
    (clip,) = synthesize_clips(1, 0, ClipSpec(seconds=(1.0, 90.0), turns=(4,), words=(14, 15)))
    assert {s.text for s in clip.segments} == allowed


def test_the_default_spec_is_the_short_clips_of_two_voices():
    clips = synthesize_clips()
    assert [c.target for c in clips] == [c.target for c in synthesize_clips(3, 0, ClipSpec())]
    assert [len(c.segments) for c in clips] == [2, 3, 2]
    assert all(5.0 <= c.duration <= 9.0 for c in clips)
    assert all({s.speaker for s in c.segments} == {0, 1} for c in clips)


def test_a_spec_no_draw_can_meet_is_refused_with_the_reason():
    with pytest.raises(ValueError, match=r"no clip of 2 turns lasted \(60.0, 90.0\) s"):
        synthesize_clips(1, 0, ClipSpec(seconds=(60.0, 90.0)))
    with pytest.raises(ValueError, match="at most 8 voices"):
        synthesize_clips(1, 0, ClipSpec(voices=(9,)))
    (every_voice,) = synthesize_clips(1, 0, ClipSpec(seconds=(1.0, 60.0), turns=(8,), voices=(8,)))
    assert [s.speaker for s in every_voice.segments] == list(range(8))


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"seconds": (9.0, 5.0)}, r"clip seconds must be a range 0 < low <= high, got \(9.0, 5.0\)"),
     ({"seconds": (0.0, 5.0)}, "clip seconds must be a range"), ({"words": (12, 10)}, "clip words must be"),
     ({"turns": ()}, "at least one turn"), ({"turns": (0,)}, r"at least one turn, got \(0,\)"),
     ({"voices": (1,)}, r"at least 2 voices, got \(1,\)"), ({"voices": ()}, "at least 2 voices")],
)  # fmt: skip
def test_an_impossible_clip_spec_is_a_value_error_that_says_what_is_wrong(fields, message):
    with pytest.raises(ValueError, match=message):
        ClipSpec(**fields)


def test_a_one_turn_clip_of_an_exact_length_is_a_valid_spec():
    spec = ClipSpec(seconds=(6.0, 6.0), turns=(1,), voices=(2,), words=(9, 9))
    assert spec.of(0) == spec.of(5) == (1, 2)


@pytest.mark.slow
def test_the_long_checkpoint_transcribes_each_clip_as_its_reference_through_the_command_line(tmp_path):
    from engine.cli import main

    folder = tiny_trained_model(recipe=LONG_RECIPE)
    assert folder.name == f"vibevoice-tiny-{LONG_RECIPE.key()}"
    assert json.loads((folder / "training.json").read_text())["steps"] > 0
    clips = read_clips(folder)
    files = [str(audio) for audio, _ in clips]
    args = ["transcribe", *files, "--backend", "vibevoice", "--model", str(folder), "--device", "cpu"]
    assert main([*args, "--format", "json", "--out", str(tmp_path), "-q"]) == 0
    for audio, reference in clips:
        written = json.loads((tmp_path / f"{audio.stem}.json").read_text())["utterances"]
        assert [u["text"] for u in written] == [s.text for s in reference]  # the last turn too: no cut-off
        assert [round(u["start"], 2) for u in written] == [s.start for s in reference]
        assert len({u["speaker"] for u in written}) == len({s.speaker for s in reference})


def _loudness(samples: np.ndarray):
    def rms(start: float, end: float) -> float:
        part = samples[round(start * SAMPLE_RATE) : round(end * SAMPLE_RATE)]
        return float(np.sqrt(np.mean(np.square(part, dtype=np.float64)))) if len(part) else 0.0

    return rms


def test_a_recording_is_cut_at_the_pause_nearest_each_share_with_every_turn_in_one_piece(tmp_path):
    from engine.testing.tiny import demo_meeting
    from engine.testing.tiny_clips import recording_clips

    audio = demo_meeting()
    turns = [line.split(maxsplit=5) for line in audio.with_suffix(".stm").read_text().splitlines()]
    first, second = recording_clips(audio, audio.with_suffix(".stm"), 2)
    assert (first.name, second.name) == ("meeting0", "meeting1")
    assert len(first.segments) + len(second.segments) == len(turns)  # no turn lost or cut in two
    cut = first.duration
    assert abs(cut - 124.48 / 2) < 3.0  # the pause nearest the middle
    ends = sorted(float(t[4]) for t in turns if float(t[4]) <= cut)
    starts = sorted(float(t[3]) for t in turns if float(t[3]) >= cut)
    assert ends[-1] < cut < starts[0]  # between two turns, not inside one
    assert second.segments[0].start == round(starts[0] - cut, 2)  # times from the piece's own start
    assert first.segments[0].text == "I'd like to keep this meeting short if we can"
    for piece in (first, second):  # speakers numbered in order of appearance within the piece
        speakers = [s.speaker for s in piece.segments]
        assert list(dict.fromkeys(speakers)) == list(range(len(set(speakers))))
    whole = len(first.samples) + len(second.samples)
    assert whole == pytest.approx(124.48 * SAMPLE_RATE, abs=SAMPLE_RATE * 0.01)
    short = tmp_path / "short.stm"
    short.write_text("short 1 a 0.0 1.0 hello\n")
    with pytest.raises(ValueError, match="1 turns, fewer than 2 pieces"):
        recording_clips(audio, short, 2)
