"""The `voices` speaker setting, its `--voices [PATH]` flag, and the score a transcript file keeps."""

from __future__ import annotations

import json

import pytest

from engine.cli import build_parser
from engine.cli.option_args import recipe_of
from engine.errors import TranscriptFormatError
from engine.export.json_format import transcript_dict, transcript_from_dict
from engine.speakers import DEFAULT_VOICES, SpeakerConfig
from engine.speakers.embedded import EmbeddedDiarizer
from engine.speakers.embedding import SpeakerEncoder
from engine.types import Speaker, Transcript, Utterance
from engine.voices import create_recogniser, library_path


def speaker_config(args):
    return recipe_of(args, "transcribe").pipeline.speakers


def test_the_flag_alone_means_the_default_library_and_a_value_names_another():
    parse = build_parser().parse_args
    assert speaker_config(parse(["transcribe", "a.flac"])).voices is None
    assert speaker_config(parse(["transcribe", "a.flac", "--voices"])).voices == DEFAULT_VOICES
    assert speaker_config(parse(["transcribe", "a.flac", "--voices=team.sqlite"])).voices == "team.sqlite"


def test_the_setting_names_the_library_file(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert library_path(DEFAULT_VOICES) == tmp_path / "murmur" / "voices.sqlite"
    assert library_path("team.sqlite").name == "team.sqlite"
    assert create_recogniser(SpeakerConfig()) is None
    recogniser = create_recogniser(SpeakerConfig(voices="team.sqlite"))
    assert recogniser is not None and recogniser.library.path.name == "team.sqlite"
    assert not (tmp_path / "murmur").exists()


def test_recognition_shares_the_embedded_diarizers_encoder_and_has_its_own_otherwise():
    diarizer = EmbeddedDiarizer()
    shared = create_recogniser(SpeakerConfig(voices="v.sqlite"), diarizer)
    assert shared.embedder.encoder is diarizer.encoder
    for other in (object(), type("Other", (), {"encoder": "a pyannote model"})()):
        own = create_recogniser(SpeakerConfig(voices="v.sqlite", diarizer="pyannote"), other)
        assert (
            isinstance(own.embedder.encoder, SpeakerEncoder) and own.embedder.model.name == "resemblyzer-ge2e"
        )


@pytest.mark.parametrize("settings", [{"voices": "  "}, {"voices": "v.sqlite", "diarizer": "none"}])
def test_a_library_without_a_path_or_without_a_diarizer_is_refused(settings):
    with pytest.raises(ValueError):
        SpeakerConfig(**settings)


def test_a_transcript_file_keeps_the_score_of_recognised_names_only():
    speakers = (Speaker("S1", "Alice", 0.9432), Speaker("S2", "Speaker 2"))
    t = Transcript((Utterance(0.0, 1.0, "hi", "S1"), Utterance(1.0, 2.0, "yes", "S2")), speakers, 2.0)
    data = transcript_dict(t)
    assert data["speakers"] == [
        {"id": "S1", "name": "Alice", "score": 0.9432},
        {"id": "S2", "name": "Speaker 2"},
    ]
    assert transcript_from_dict(json.loads(json.dumps(data))).speakers == speakers
    data["speakers"][0]["score"] = "high"
    with pytest.raises(TranscriptFormatError, match=r"speakers\[0\]\.score: expected a number"):
        transcript_from_dict(data)
