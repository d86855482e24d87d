"""The limits on a server's reply: its byte cap, the token budget, odd usage counts, loops."""

from __future__ import annotations

from engine.backends.vibevoice.reply_guard import (
    BYTES_PER_TOKEN,
    OVERHEAD_BYTES,
    count,
    guarded,
    over_budget,
    reply_cap,
)
from engine.types import FinishReason, Segment


def seg(text: str, speaker: int | None = 0, at: float = 0.0) -> Segment:
    return Segment(at, at + 1.0, text, speaker)


def test_the_reply_cap_grows_with_the_token_budget():
    assert reply_cap(0) == reply_cap(-5) == OVERHEAD_BYTES == 65_536
    assert reply_cap(100) == 65_536 + 100 * BYTES_PER_TOKEN == 68_736
    assert reply_cap(32_768) == 65_536 + 32 * 32_768


def test_a_reply_may_exceed_its_budget_by_a_stop_token_or_two_not_more():
    assert not over_budget(1_000, 1_000)
    assert not over_budget(1_066, 1_000)  # 5 % and 16 tokens of slack
    assert over_budget(1_067, 1_000)
    assert over_budget(17, 0) and not over_budget(16, 0)


def test_only_plain_non_negative_integers_count_as_tokens():
    assert [count(v) for v in (0, 5, 999_999_999)] == [0, 5, 999_999_999]
    assert [count(v) for v in (-1, 10**9, True, 5.0, float("inf"), [1], "7", None)] == [0] * 8


def test_three_repeats_are_speech_four_are_a_loop_cut_after_the_first_repeat():
    said = [seg("Yes."), seg("yes"), seg("YES!")]
    assert guarded(said, 1_000) == (tuple(said), None)
    looping = [seg("Hello there."), *[seg("again and again", at=i) for i in range(6)], seg("end")]
    kept, why = guarded(looping, 1_000)
    assert why is FinishReason.LOOP
    assert [s.text for s in kept] == ["Hello there.", "again and again", "again and again"]


def test_the_same_words_from_different_speakers_are_no_loop():
    turns = [seg("okay", speaker=i % 2) for i in range(8)]
    assert guarded(turns, 1_000) == (tuple(turns), None)


def test_segments_past_what_the_budget_can_hold_are_cut():
    many = [seg(f"line {i}") for i in range(10)]
    kept, why = guarded(many, 40)  # 8 tokens a segment at least: 5 fit
    assert why is FinishReason.LENGTH and [s.text for s in kept] == [f"line {i}" for i in range(5)]
    assert guarded(many, 80) == (tuple(many), None)
    assert guarded(many, 3)[0] == (many[0],)  # always at least one
