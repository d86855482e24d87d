"""The capacity checkpoint's training masks: the speech a transcript has left behind is hidden from
each reply token as `speech-anchor` would evict it, and nothing else is."""

from __future__ import annotations

import re

import pytest
import torch

from engine.testing.tiny_masks import HiddenSpeech, anchors, closed_segments, hidden_speech_mask


def test_an_object_counts_as_closed_from_the_token_that_writes_its_brace():
    # objects close at characters 10 and 20; a token's end is exclusive
    assert closed_segments([5, 10, 11, 20, 21, 30], [10, 20]) == [0, 0, 1, 1, 2, 2]


def test_the_anchor_is_the_earliest_start_of_the_last_three_closed_segments_in_speech_tokens():
    starts = [0.0, 5.0, 2.0, 10.0, 12.0, 14.0]
    assert anchors([0, 2, 3, 4, 5, 6], starts, rate=2.0, recent=3) == [-1, -1, 0, 4, 4, 20]


def test_a_reply_token_no_longer_sees_speech_before_the_anchors_look_back_but_keeps_sinks_and_the_end():
    hidden = HiddenSpeech(look_back=(4, 4), sinks=2, look_ahead=3)
    speech = torch.arange(2, 22)  # 20 speech tokens at positions 2..21
    mask = hidden_speech_mask(30, speech, 25, [-1, 10, 30, -1, -1], hidden, look_back=4)
    assert mask.shape == (30, 30)
    sees = mask == 0
    assert not sees.triu(1).any() and sees.tril().sum() > 0  # causal everywhere
    assert sees[25, 2:22].all()  # no anchor yet: all speech
    assert sees[:25].equal(torch.ones(25, 30, dtype=torch.bool).tril()[:25])  # the prompt is untouched
    row = sees[26, 2:22]  # anchor 10, look-back 4: speech 2..5 hidden, sinks 0..1 kept
    assert row.nonzero()[:, 0].tolist() == [0, 1, *range(6, 20)]
    far = sees[27, 2:22]  # anchor past the end: only the sinks and the last three stay
    assert far.nonzero()[:, 0].tolist() == [0, 1, 17, 18, 19]
    assert sees[27, 22:28].all()  # the prompt's text after the speech and the reply so far stay visible


def test_with_no_sinks_or_look_ahead_a_reply_token_sees_all_speech_until_its_anchor_passes_the_look_back():
    # catches: a token without an anchor losing the first speech token (`limit` set to 1, not 0, for
    # "no anchor"); zero sinks, zero look-ahead, a look-back from 0 or one recent segment refused
    # (`<=` for `<` in the checks); reply rows past the sequence's end indexed (`<=` for `<`)
    hidden = HiddenSpeech(look_back=(0, 2), sinks=0, look_ahead=0, recent=1)
    speech = torch.arange(10)  # 10 speech tokens at positions 0..9, the reply from position 10
    mask = hidden_speech_mask(14, speech, 10, [-1, 1, 6, 20, 5, 5], hidden, look_back=2)
    assert mask.shape == (14, 14)  # the last two anchors belong to tokens past the sequence
    sees = mask == 0
    assert sees[10, :10].all(), "no anchor yet: all speech"
    assert sees[11, :10].all(), "anchor 1 is before its look-back of 2: nothing to hide"
    assert sees[12, :10].nonzero()[:, 0].tolist() == [4, 5, 6, 7, 8, 9]
    assert not sees[13, :10].any(), "anchor past the end: no sinks or look-ahead keep any"
    assert sees[13, 10:14].all()  # the reply so far stays visible


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"look_back": (8, 4)}, "look_back must be a range 0 <= low <= high, got (8, 4)"),
     ({"look_back": (-1, 4)}, "look_back must be a range 0 <= low <= high, got (-1, 4)"),
     ({"sinks": -1}, "sinks and look_ahead must be >= 0 and recent >= 1"),
     ({"look_ahead": -1}, "sinks and look_ahead must be >= 0 and recent >= 1"),
     ({"recent": 0}, "sinks and look_ahead must be >= 0 and recent >= 1")],
)  # fmt: skip
def test_an_impossible_hidden_speech_setting_is_refused_in_its_own_words(fields, message):
    # catches: a reversed look-back range or a negative count accepted; the message's text changed
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        HiddenSpeech(**fields)
