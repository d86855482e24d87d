"""Transcripts with impossible times or characters a format cannot hold: refused or cleaned, never
written as `nan` or as bytes a subtitle player, XML parser or terminal chokes on."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import xml.dom.minidom
from pathlib import Path

import pytest

from engine.errors import TranscriptFormatError
from engine.export import FORMATS, export, read_json, render
from engine.types import Speaker, Transcript, Utterance


def saved(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    return path


def transcript_json(start: str = "1.0", end: str = "2.0", duration: str = "10.0", text: str = '"hi"') -> str:
    return (
        '{"format": "murmur-transcript", "version": 1, "duration": ' + duration + ', "utterances": ['
        '{"start": ' + start + ', "end": ' + end + ', "text": ' + text + ', "speaker": null}]}'
    )


@pytest.mark.parametrize(
    ("start", "end", "duration"),
    [("NaN", "2", "10"), ("1", "Infinity", "10"), ("-Infinity", "2", "10"), ("1e308", "1e308", "10"),
     ("1", "2", "1e400"), ("1", "2", "NaN")],
)  # fmt: skip
def test_reading_a_transcript_with_impossible_times_is_refused(tmp_path, start, end, duration):
    with pytest.raises(TranscriptFormatError, match=r"time|number|range"):
        read_json(saved(tmp_path, transcript_json(start, end, duration)))


def test_reading_a_transcript_with_a_lone_surrogate_is_refused(tmp_path):
    with pytest.raises(TranscriptFormatError, match="character"):
        read_json(saved(tmp_path, transcript_json(text='"bad \\ud800 text"')))


def test_a_transcript_with_nan_times_is_never_exported(tmp_path):
    bad = Transcript((Utterance(math.nan, 2.0, "hello", "S1"),), (Speaker("S1", "Ann"),), duration=3.0)
    for fmt in FORMATS:
        with pytest.raises(ValueError, match="not a finite time"):
            render(bad, fmt)
    with pytest.raises(ValueError):
        export(bad, tmp_path / "out", ["srt", "rttm", "txt"])
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


NASTY = "a\x1b[31mred\x1b[0m b\x07e\x00l\x0bl \x7fdel\x9b c\ufffe\uffffz"


def nasty_transcript() -> Transcript:
    speakers = (Speaker("S1", "Dr.\nAnn\r\nLee\x1b]0;pwned\x07"),)
    utterances = (Utterance(0.5, 2.0, NASTY, "S1"), Utterance(2.5, 4.0, "line one\nline two", "S1"))
    return Transcript(utterances, speakers, duration=5.0, source="/x/talk.wav")


CONTROL = [chr(c) for c in [*range(0, 9), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)]] + [
    "\ufffe", "\uffff"
]  # fmt: skip


@pytest.mark.parametrize("fmt", ["srt", "vtt", "txt", "rttm"])
def test_text_formats_hold_no_control_or_xml_invalid_characters(fmt):
    text = render(nasty_transcript(), fmt).decode("utf-8")
    assert not [c for c in CONTROL if c in text], repr(text)
    assert "[31m" not in text and "pwned" not in text
    assert fmt == "rttm" or ("ared b" in text and "del" in text)


def test_a_speaker_name_with_newlines_stays_on_one_line_where_a_format_needs_it():
    t = nasty_transcript()
    rttm = render(t, "rttm").decode()
    assert [len(line.split()) for line in rttm.splitlines()] == [10, 10]
    assert "Dr._Ann_Lee" in rttm
    srt = render(t, "srt").decode()
    assert "Dr. Ann Lee: a" in srt.replace("\n", " ")
    txt = render(t, "txt").decode().splitlines()
    assert txt[0].endswith("Dr. Ann Lee") and txt[1].startswith("ared")


def test_vtt_cue_text_is_well_formed_markup():
    vtt = render(nasty_transcript(), "vtt").decode()
    for block in vtt.strip().split("\n\n")[1:]:
        body = re.sub(r"<v [^>]*>", "", block.split("\n", 1)[1])
        xml.dom.minidom.parseString(f"<c>{body}</c>")  # raises on a character XML cannot hold


def test_the_json_keeps_every_character_and_reads_back_equal(tmp_path):
    t = nasty_transcript()
    path = export(t, tmp_path, ["json"])[0]
    assert read_json(path) == dataclasses.replace(t, source="talk.wav")  # exports name no folders
    assert json.loads(path.read_text(encoding="utf-8"))["utterances"][0]["text"] == NASTY
