"""JSON read a value at a time (`engine.remote.pieces`): the same value and the same errors as
`json.loads`, for the server's events and its megabyte transcripts."""

from __future__ import annotations

import json

import pytest

from engine.export.json_format import transcript_dict
from engine.remote import pieces
from engine.types import Speaker, Transcript, Utterance, Word

DOCUMENTS = [
    '{"type": "transcript.text.done", "murmur": {"utterances": [{"start": 0.5, "words": []}], "x": null}}',
    ' \n{ "a" : [ 1 , 2.5e3 , "três" , true , null , [ ] , { } ] , "b" : { "c" : [ [ [ 1 ] ] ] } }\n ',
    "[]",
    "{}",
    '"just a string"',
    "-0.0",
    '[{"k": 1, "k": 2}]',  # a repeated key: the last one, as json.loads
    '{"a":1,"b":[1,2],"c":{},"d":[{},[],{"e":[]}]}',  # no spaces: nothing after a delimiter to skip
    '{"nan": NaN, "inf": -Infinity}',
    '{"escaped \\"key\\"": "line\\nbreak \\u00e9"}',
]


@pytest.mark.parametrize("text", DOCUMENTS)
@pytest.mark.parametrize("depth", [0, 1, 4, 10])
def test_a_document_reads_as_json_loads_reads_it(text, depth):
    assert repr(pieces.loads(text, depth)) == repr(json.loads(text))


def test_a_transcript_as_the_server_sends_it_reads_whole():
    words = tuple(Word(i * 0.5, i * 0.5 + 0.4, f"w{i}", 0.9) for i in range(6))
    lines = tuple(Utterance(i * 3.0, i * 3.0 + 2.9, "w0 w1 w2", "S1", words) for i in range(50))
    event = {
        "type": "transcript.text.done",
        "murmur": transcript_dict(Transcript(lines, (Speaker("S1", "Ann"),))),
    }
    text = json.dumps(event)
    assert pieces.loads(text) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1,}',
        '{"a" 1}',
        '{"a": 1 "b": 2}',
        "[1 2]",
        "[1,]",
        '{"a": [1, 2}',
        "{a: 1}",
        "[1] [2]",
        "",
        "[",
        '{"a":',
    ],
)
def test_invalid_json_is_refused_as_json_loads_refuses_it(text):
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        pieces.loads(text)


def test_no_single_call_parses_more_than_about_one_line_of_a_long_transcript(monkeypatch):
    """What keeps the window answering: the decoder is called on a line at a time, never on the
    whole event (one call holds the interpreter for as long as it takes)."""
    words = tuple(Word(i * 0.5, i * 0.5 + 0.4, f"w{i}", 0.9) for i in range(12))
    lines = tuple(Utterance(i * 7.0, i * 7.0 + 6.0, "a line of words", "S1", words) for i in range(200))
    text = json.dumps({"type": "transcript.text.done", "murmur": transcript_dict(Transcript(lines))})
    line = len(json.dumps(transcript_dict(Transcript(lines))["utterances"][0]))
    longest = [0]

    class Measured(json.JSONDecoder):
        def raw_decode(self, s, idx=0):
            value, end = super().raw_decode(s, idx)
            longest[0] = max(longest[0], end - idx)
            return value, end

    monkeypatch.setattr(pieces, "_DECODER", Measured())
    assert pieces.loads(text) == json.loads(text)
    assert longest[0] <= line, f"one call parsed {longest[0]} characters; a line is {line}"
