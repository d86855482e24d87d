"""The edges of the server's OpenAI face, in process: the diarized body's fixed fields, the codes of
values Murmur does not offer, the speaker counts at their bounds, and a translation's formats."""

from __future__ import annotations

import json

import pytest

from engine.serve.formats import render_response
from engine.serve.openai_errors import ApiError
from engine.serve.params import transcription_request, translation_request
from engine.types import Transcript, Utterance

TRANSCRIPT = Transcript(
    utterances=(Utterance(0.5, 2.0, "Hello there.", "S1"),), duration=12.20049, model="m", language="en"
)


def test_a_diarized_json_body_says_transcribe_and_gives_its_duration_to_the_millisecond():
    body = json.loads(render_response(TRANSCRIPT, "diarized_json")[0])
    assert (body["task"], body["duration"], body["text"]) == ("transcribe", 12.2, "Hello there.")
    assert json.loads(render_response(TRANSCRIPT, "verbose_json")[0])["task"] == "transcribe"  # unless told


def test_a_chunking_strategy_or_diarizer_murmur_does_not_offer_is_an_unsupported_value():
    codes = {}
    for name, value in (("chunking_strategy", "server_vad"), ("diarizer", "fast")):
        with pytest.raises(ApiError) as refused:
            transcription_request({name: [value]})
        codes[name] = (refused.value.param, refused.value.code)
    assert codes == {
        "chunking_strategy": ("chunking_strategy", "unsupported_value"),
        "diarizer": ("diarizer", "unsupported_value"),
    }


def test_one_speaker_and_thirty_two_speakers_are_taken_as_counts():
    one = transcription_request({"num_speakers": ["1"], "min_speakers": ["1"], "max_speakers": ["32"]})
    assert (one.options.num_speakers, one.options.min_speakers, one.options.max_speakers) == (1, 1, 32)
    assert transcription_request({"num_speakers": ["32"]}).options.num_speakers == 32


def test_a_translation_asking_for_diarized_json_is_refused_as_unsupported():
    with pytest.raises(ApiError) as refused:
        translation_request({"response_format": ["diarized_json"]})
    answer = refused.value.response()
    assert answer.status_code == 400
    assert json.loads(answer.body) == {
        "error": {
            "message": "translations have no diarized_json",
            "type": "invalid_request_error",
            "param": "response_format",
            "code": "unsupported_value",
        }
    }
    assert translation_request({"response_format": ["verbose_json"]}).fmt == "verbose_json"
