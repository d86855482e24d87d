"""Text normalisation: the paper's Appendix D (default), Whisper's English normaliser, none."""

from __future__ import annotations

import pytest

from engine.evaluation.normalize import NORMALIZERS, get_normalizer


@pytest.fixture
def murmur():
    return get_normalizer("murmur")


def test_murmur_lowercases_and_strips_punctuation(murmur):
    assert murmur("Hello, World! How's it going?") == "hello world how's it going"


def test_murmur_drops_fillers_of_any_length(murmur):
    assert murmur("Um, so uhh I think, hmm, mhm yes. Ummm.") == "so i think yes"


def test_murmur_drops_bracketed_tags_with_their_words(murmur):
    assert murmur("[Human Sounds] Right [Laughter] then <unk> okay") == "right then okay"


def test_murmur_keeps_digits_and_does_not_rewrite_words(murmur):
    # no number, contraction or spelling normalisation: "oh" and "colour" stay as they are
    assert murmur("Oh, the colour won't fade in 2020.") == "oh the colour won't fade in 2020"


def test_filler_letters_inside_words_survive(murmur):
    assert murmur("Umbrella humming hmmm album") == "umbrella humming album"


def test_whisper_normaliser_expands_contractions_and_numbers():
    whisper = get_normalizer("whisper")
    assert whisper.name.startswith("whisper")
    assert whisper("I won't pay twenty dollars, um, [noise] OK?") == "i will not pay $20 ok"


def test_none_only_collapses_whitespace():
    assert get_normalizer("none")("  Hello,\n  World ") == "Hello, World"


def test_unknown_normaliser_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=", ".join(NORMALIZERS)):
        get_normalizer("nope")
