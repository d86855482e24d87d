"""Each project field is checked on its own, and a bad one is named in words a user can act on."""

from __future__ import annotations

import re

import pytest

from app.project_fields import audio_fields, number, pair, settings_from, speakers_from, typed

A = {"path": "/a.wav"}
WHOLE = "audio.size: expected a whole number"
TERMS = "settings.context: expected a list of terms, found"
BAD = [
    (lambda: typed({}, "speakers", list), ValueError, "speakers: missing"),
    (lambda: typed({"x": 5}, "x", list), TypeError, "x: expected list, found int"),
    (lambda: typed({"x": True}, "x", int), TypeError, "x: expected int, found bool"),
    (lambda: number("a", "speech[0]"), TypeError, "speech[0]: expected a number, found str"),
    (lambda: pair([1], "speech[0]"), TypeError, "speech[0]: expected [start, end]"),
    (lambda: pair("ab", "speech[1]"), TypeError, "speech[1]: expected [start, end]"),
    (lambda: pair(["a", 1], "chunks[2]"), TypeError, "chunks[2]: expected a number, found str"),
    (lambda: audio_fields([1]), TypeError, "audio: expected an object, found list"),
    (lambda: audio_fields({"path": "/a.wav", "relative": 5}), TypeError, "audio.relative: expected a path"),
    (lambda: audio_fields({**A, "size": "big"}), TypeError, WHOLE),
    (lambda: audio_fields({**A, "size": True}), TypeError, WHOLE),
    (lambda: audio_fields({**A, "duration": "x"}), TypeError, "audio.duration: expected a number, found str"),
    (lambda: audio_fields({"relative": "a.wav"}), ValueError, "path: missing"),
    (lambda: audio_fields({**A, "stream": -1}), TypeError, "audio.stream: expected an audio stream number"),
    (lambda: audio_fields({**A, "stream": True}), TypeError, "audio.stream: expected an audio stream number"),
    (lambda: speakers_from([5]), TypeError, "speakers[0]: expected an object"),
    (lambda: speakers_from([{"id": "S1", "name": 5}]), TypeError, "speakers[0]: needs a text id and name"),
    (lambda: speakers_from([{"id": "", "name": "Ann"}]), TypeError, "speakers[0]: needs a text id and name"),
    (lambda: settings_from([1]), TypeError, "settings: expected an object, found list"),
    (lambda: settings_from({"context": 5}), TypeError, f"{TERMS} int"),
    (lambda: settings_from({"context": ["a", 2]}), TypeError, f"{TERMS} list"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "error", "message"), BAD)
def test_a_bad_field_is_named_with_what_was_expected(call, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        call()


def test_good_fields_come_back_as_values_and_optional_ones_default():
    assert typed({"x": None}, "x", list, []) == [] and typed({}, "x", list, []) == []
    assert audio_fields({"path": "/a.wav", "relative": "a.wav", "size": 12, "duration": 3, "stream": 1}) == (
        "/a.wav", "a.wav", 12, 3.0, 1,
    )  # fmt: skip
    assert audio_fields({"path": "/a.wav"}) == ("/a.wav", None, None, 0.0, None)
    assert audio_fields(None) is None
    assert pair([1, 2.5], "w") == (1.0, 2.5)
    assert settings_from(None) == {} and settings_from({"context": ["a"]}) == {"context": ["a"]}
    (ann,) = speakers_from([{"id": "S1", "name": "Ann", "color": "#12AB34"}])
    assert (ann.id, ann.name, ann.color) == ("S1", "Ann", "#12AB34")
