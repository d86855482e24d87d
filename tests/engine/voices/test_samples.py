"""What a voice sample may hold, and a person's centroid per embedding model."""

from __future__ import annotations

import numpy as np
import pytest

from engine.voices import EmbeddingModel, KnownVoice, VoiceSample
from engine.voices.samples import check_name

GE2E = EmbeddingModel("resemblyzer-ge2e", "1", 3)
OTHER = EmbeddingModel("resemblyzer-ge2e", "2", 3)


def test_a_sample_is_stored_at_unit_length():
    s = VoiceSample(np.array([3.0, 0.0, 4.0]), GE2E, "a.flac", 0.0, 5.0)
    np.testing.assert_allclose(s.vector, [0.6, 0.0, 0.8], rtol=1e-6)
    assert s.vector.dtype == np.float32


@pytest.mark.parametrize(
    ("vector", "start", "end"),
    [
        ([1.0, 0.0], 0.0, 1.0),  # another dimension than the model's
        ([0.0, 0.0, 0.0], 0.0, 1.0),  # no direction
        ([np.nan, 1.0, 0.0], 0.0, 1.0),
        ([1.0, 0.0, 0.0], 2.0, 1.0),  # ends before it starts
        ([1.0, 0.0, 0.0], -1.0, 1.0),
        ([1.0, 0.0, 0.0], 1.0, None),  # half a time range
    ],
)
def test_impossible_samples_are_refused(vector, start, end):
    with pytest.raises(ValueError):
        VoiceSample(np.array(vector), GE2E, "a.flac", start, end)


@pytest.mark.parametrize(
    ("stream", "channel", "said"),
    [
        (-1, None, "a sample's audio stream is a number from 0, got -1"),
        (None, -1, "a sample's channel is a number from 0, got -1"),
        (True, None, "a sample's audio stream is a number from 0, got True"),
        (None, 1.0, "a sample's channel is a number from 0, got 1.0"),
        ("1", None, "a sample's audio stream is a number from 0, got '1'"),
    ],
)
def test_a_stream_or_channel_that_is_no_number_from_0_is_refused(stream, channel, said):
    with pytest.raises(ValueError) as refused:
        VoiceSample(np.array([1.0, 0.0, 0.0]), GE2E, "a.flac", 0.0, 1.0, stream=stream, channel=channel)
    assert str(refused.value) == said
    kept = VoiceSample(np.array([1.0, 0.0, 0.0]), GE2E, "a.flac", 0.0, 1.0, stream=0, channel=0)
    assert (kept.stream, kept.channel) == (0, 0)


def test_a_sample_without_a_time_range_is_allowed():
    assert VoiceSample(np.array([1.0, 0.0, 0.0]), GE2E).start is None


@pytest.mark.parametrize(("name", "version", "dim"), [("", "1", 3), ("m", "", 3), ("m", "1", 0)])
def test_an_embedding_model_needs_a_name_a_version_and_a_dimension(name, version, dim):
    with pytest.raises(ValueError):
        EmbeddingModel(name, version, dim)


def test_a_centroid_averages_only_the_samples_of_the_model_asked_for():
    voice = KnownVoice("Alice", (
        VoiceSample(np.array([1.0, 0.0, 0.0]), GE2E),
        VoiceSample(np.array([0.0, 1.0, 0.0]), GE2E),
        VoiceSample(np.array([0.0, 0.0, 1.0]), OTHER),
    ))  # fmt: skip
    np.testing.assert_allclose(voice.centroid(GE2E), [2**-0.5, 2**-0.5, 0.0], rtol=1e-6)
    np.testing.assert_allclose(voice.centroid(OTHER), [0.0, 0.0, 1.0])
    assert voice.centroid(EmbeddingModel("x", "1", 3)) is None
    assert voice.models() == (GE2E, OTHER)
    assert str(OTHER) == "resemblyzer-ge2e 2"


@pytest.mark.parametrize(
    ("vector", "start", "end", "message"),
    [
        ([1.0, 0.0], 0.0, 1.0, "a resemblyzer-ge2e 1 embedding has 3 values, got 2"),
        ([0.0, 0.0, 0.0], 0.0, 1.0, "a voice embedding must be finite and non-zero"),
        ([np.inf, 1.0, 0.0], 0.0, 1.0, "a voice embedding must be finite and non-zero"),
        ([1.0, 0.0, 0.0], 2.0, 1.0, "invalid time range [2.0, 1.0]"),
        ([1.0, 0.0, 0.0], None, 1.0, "invalid time range [None, 1.0]"),
    ],
)
def test_an_impossible_sample_says_what_is_wrong_with_it(vector, start, end, message):
    with pytest.raises(ValueError) as refused:
        VoiceSample(np.array(vector), GE2E, "a.flac", start, end)
    assert str(refused.value) == message


def test_a_sample_of_one_instant_from_the_start_and_a_row_shaped_embedding_are_kept():
    instant = VoiceSample(np.array([[0.0, 3.0, 4.0]]), GE2E, "a.flac", 0.0, 0.0)  # (1, 3): a batch's row
    assert (instant.start, instant.end) == (0.0, 0.0)
    np.testing.assert_allclose(instant.vector, [0.0, 0.6, 0.8], rtol=1e-6)


def test_an_embedding_model_of_one_dimension_is_allowed_and_a_model_without_one_says_so():
    assert EmbeddingModel("m", "1", 1).dim == 1
    with pytest.raises(ValueError) as refused:
        EmbeddingModel("m", "1", 0)
    assert str(refused.value) == "an embedding model needs a name, a version and a dimension: m 1"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("  ", "a voice needs a name"),
        ("x" * 101, "a voice's name has at most 100 characters, got 101"),
        ("Ann\tLee", "a voice's name cannot hold control characters"),
        ("Ann\x7fLee", "a voice's name cannot hold control characters"),
        (" Speaker 3 ", "'Speaker 3' looks like an unnamed speaker's label; give the person's name"),
    ],
)
def test_a_refused_name_says_why(name, message):
    with pytest.raises(ValueError) as refused:
        check_name(name)
    assert str(refused.value) == message


@pytest.mark.parametrize("name", ["Mary Ann", "x" * 100, "O'Brien ~ Zoë", "Speaker 3 Jones"])
def test_names_with_spaces_up_to_100_characters_and_any_printable_letter_are_kept(name):
    assert check_name(f"  {name} ") == name
