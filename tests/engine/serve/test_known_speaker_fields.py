"""Known speakers and diarized_json in process: the reference fields checked one by one (counts,
names, data URLs, lengths at their bounds), OpenAI's letters for unknown speakers, and where a
diarized stream puts its segment events."""

from __future__ import annotations

import base64
import io
import tempfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.serve.events import ClientStream
from engine.serve.formats import diarized, speaker_letters
from engine.serve.known_speakers import known_speakers, refusal
from engine.serve.openai_errors import ApiError
from engine.types import Speaker, Transcript, Utterance

RATE = 16000


def clip(seconds: float, fmt: str = "WAV", mime: str = "audio/wav", rate: int = RATE) -> str:
    buffer = io.BytesIO()
    tone = 0.1 * np.sin(np.arange(round(seconds * rate)) * 0.05).astype(np.float32)
    sf.write(buffer, tone, rate, format=fmt, subtype="PCM_16")
    return f"data:{mime};base64," + base64.b64encode(buffer.getvalue()).decode()


def refused(names: list[str], references: list[str]) -> ApiError:
    with pytest.raises(ApiError) as error:
        known_speakers(names, references)
    assert error.value.status == 400
    return error.value


def left_references() -> list[Path]:
    return sorted(Path(tempfile.gettempdir()).glob("reference-*"))


def test_nothing_sent_is_no_known_speakers():
    assert known_speakers([], []) is None


def test_four_clips_of_two_to_ten_seconds_are_taken_in_order_at_the_encoders_rate():
    got = known_speakers([" Ann ", "Bo", "Cy", "Di"],
                         [clip(2.0), clip(10.0), clip(3.0, "FLAC", "audio/flac", 44100),
                          clip(4.0, mime="application/octet-stream")])  # fmt: skip
    assert got is not None and got.names == ("Ann", "Bo", "Cy", "Di")
    assert [round(c.duration, 2) for c in got.clips] == [2.0, 10.0, 3.0, 4.0]
    assert {c.sample_rate for c in got.clips} == {RATE}
    assert left_references() == []  # the temporary file of each clip is gone


def test_counts_names_and_clips_are_refused_by_the_field_at_fault():
    five = refused(list("abcde"), [clip(3.0)] * 5)
    assert five.param == "known_speaker_references" and "at most 4" in five.message
    assert refused(["a", "b"], [clip(3.0)]).param == "known_speaker_names"
    assert refused([], [clip(3.0)]).param == "known_speaker_names"
    twice = refused(["Ann", "ann"], [clip(3.0), clip(3.0)])
    assert twice.param == "known_speaker_names" and "different" in twice.message
    assert "[1]" in refused(["Ann", " "], [clip(3.0), clip(3.0)]).message  # which name is wrong
    short, long = refused(["a"], [clip(1.99)]), refused(["a"], [clip(10.01)])
    assert (short.param, long.param) == ("known_speaker_references", "known_speaker_references")
    assert "1.99 s long" in short.message and "10.01 s long" in long.message
    assert "base64" in refused(["a"], ["data:audio/wav,plain"]).message
    assert "not valid base64" in refused(["a"], ["data:audio/wav;base64,***"]).message
    junk = "data:audio/wav;base64," + base64.b64encode(b"\0not audio" * 50).decode()
    assert "[0] could not be decoded" in refused(["a"], [junk]).message
    assert left_references() == []


def test_speakers_asked_of_a_request_without_diarization_are_refused():
    known = known_speakers(["a"], [clip(3.0)])
    assert refusal(known, "json", False, "embedded").param == "known_speaker_references"
    assert refusal(known, "json", None, "none").param == "known_speaker_references"
    assert refusal(None, "diarized_json", False, "embedded").param == "response_format"
    assert refusal(None, "json", False, "embedded") is None
    assert refusal(known, "diarized_json", True, "none") is None  # asked for: the server's diarizer
    assert refusal(known, "diarized_json", None, "embedded") is None


def transcript(*speakers: Speaker, order: tuple[str | None, ...]) -> Transcript:
    utterances = tuple(Utterance(float(i), i + 0.5, f"w{i}", s) for i, s in enumerate(order))
    return Transcript(utterances, speakers, len(order))


def test_recognised_speakers_keep_their_names_and_the_others_get_letters_by_first_turn():
    t = transcript(Speaker("S1", "Speaker 1"), Speaker("S2", "Ann", 0.95), Speaker("S3", "Speaker 3"),
                   Speaker("S4", "Bo"), order=("S3", "S2", "S1", "S3", "S4", None))  # fmt: skip
    # Bo's name was typed, not recognised: a letter, as OpenAI gives every speaker it does not know
    assert speaker_letters(t) == {"S3": "A", "S2": "Ann", "S1": "B", "S4": "C", None: "D"}
    many = transcript(*(Speaker(f"S{i}", f"Speaker {i}") for i in range(28)),
                      order=tuple(f"S{i}" for i in range(28)))  # fmt: skip
    assert list(speaker_letters(many).values())[24:] == ["Y", "Z", "AA", "AB"]


def test_a_diarized_body_is_openais_shape():
    t = transcript(Speaker("S1", "Speaker 1"), Speaker("S2", "Ann", 0.9), order=("S1", "S2"))
    body = diarized(t)
    assert list(body) == ["task", "duration", "text", "segments", "usage"]
    assert body["segments"][1] == {"type": "transcript.text.segment", "id": "seg_1", "start": 1.0,
                                   "end": 1.5, "text": "w1", "speaker": "Ann"}  # fmt: skip
    assert body["usage"] == {"type": "duration", "seconds": 2}


def test_a_diarized_stream_sends_its_segments_after_the_last_delta_and_before_done():
    segments = [{"type": "transcript.text.segment", "id": "seg_0"}]
    view = ClientStream(False, lambda: segments)
    first = view.show({"type": "transcript.text.delta", "lines": [{"text": "Hello"}]})
    last = view.show({"type": "transcript.text.done", "text": "Hello there", "usage": {}})
    kinds = [e["type"] for e in first + last]
    assert kinds == ["transcript.text.delta", "transcript.text.delta", "transcript.text.segment",
                     "transcript.text.done"]  # fmt: skip
    plain = ClientStream(False).show({"type": "transcript.text.done", "text": "", "usage": {}})
    assert [e["type"] for e in plain] == ["transcript.text.done"]


def test_each_refusal_names_its_field_and_says_what_is_wrong_word_for_word():
    def said(names, references) -> tuple[str | None, str]:
        error = refused(names, references)
        return error.param, error.message

    counts = "give one name per reference: 2 known_speaker_names for 1 known_speaker_references"
    assert said(["a", "b"], [clip(3.0)]) == ("known_speaker_names", counts)
    assert said(["Ann", ""], [clip(3.0), clip(3.0)])[0] == "known_speaker_names"
    assert said(["Ann", ""], [clip(3.0), clip(3.0)])[1].startswith("known_speaker_names[1]: ")
    url = "known_speaker_references[0] must be a data URL with base64 audio (data:audio/wav;base64,...)"
    for bad in ["data:audio/wav,plain", "audio/wav;base64,AAAA", "data:audio/wav;base64"]:
        assert said(["a"], [bad]) == ("known_speaker_references", url), bad
    assert said(["a"], ["data:audio/wav;base64,***"]) == ("known_speaker_references",
                                                          "known_speaker_references[0] is not valid base64")
    junk = "data:audio/wav;base64," + base64.b64encode(b"\0not audio" * 50).decode()
    assert said(["a"], [junk]) == ("known_speaker_references",
                                   "known_speaker_references[0] could not be decoded as audio")
    assert said(["a"], [clip(1.5)]) == ("known_speaker_references",
                                        "known_speaker_references[0] is 1.50 s long; a reference is 2–10 s")


def test_a_refusal_for_speakers_without_diarization_says_so():
    known = known_speakers(["a"], [clip(3.0)])
    off = refusal(known, "json", False, "embedded")
    assert off.message == "known_speaker_references needs diarization, which is off for this request"
    fmt = refusal(None, "diarized_json", False, "embedded")
    assert fmt.message == "diarized_json needs diarization, which is off for this request"
