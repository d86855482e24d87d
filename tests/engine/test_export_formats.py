"""What each export format shows in detail: the Word document's outline (title, facts, speaker list
in the speakers' order, headings a reader navigates by), RTTM and SegLST fields as the scoring tools
read them, whole WebVTT and TXT files, and text cleaned of control characters everywhere."""

from __future__ import annotations

import json

import docx
import pytest

from engine.export import ExportOptions, export, render
from engine.types import Speaker, Transcript, Utterance, Word


def talk(*utterances: Utterance, **fields) -> Transcript:
    fields = {"speakers": (Speaker("A", "Ann"), Speaker("B", "Björn")), "duration": 30.0, **fields}
    return Transcript(utterances, **fields)


def docx_of(transcript: Transcript, tmp_path, **options) -> docx.document.Document:
    (path,) = export(transcript, tmp_path, ["docx"], options=ExportOptions(**options))
    return docx.Document(str(path))


def test_the_word_document_outline_is_title_speakers_then_transcript(tmp_path):
    t = talk(
        Utterance(0.0, 0.6, "Hi.", "B"),  # Björn speaks first, but Ann is listed first among speakers
        Utterance(1.0, 1.6, "Hello.", "A"),
        Utterance(2.0, 2.6, "Yes.", "A"),
        Utterance(3.0, 3.6, "Right.", "A"),
        Utterance(4.0, 6.0, "Who else?", "guest"),  # an id with no entry: listed after the known ones
        source="/calls/weekly sync.wav", model="whisper-tiny.en", language="de",
    )  # fmt: skip
    document = docx_of(t, tmp_path)
    outline = [(p.style.name, p.text) for p in document.paragraphs if p.style.name != "Normal"]
    assert outline == [
        ("Title", "weekly sync"),
        ("Heading 1", "Speakers"),
        ("List Bullet", "Ann — 00:00:01 in 3 utterances"),  # 3 × 0.6 s, not rounded up per line
        ("List Bullet", "Björn — 00:00:00 in 1 utterance"),
        ("List Bullet", "guest — 00:00:02 in 1 utterance"),
        ("Heading 1", "Transcript"),
    ]
    facts = [p.text for p in document.paragraphs[1:4]]
    assert facts == ["Source: weekly sync.wav", "Model: whisper-tiny.en", "Duration: 00:00:30"]
    assert document.core_properties.title == "weekly sync"
    assert document.core_properties.language == "de"
    first = next(p for p in document.paragraphs if p.runs and p.runs[0].bold)
    assert [r.text for r in first.runs] == ["Björn", "  00:00:00\n", "Hi."]
    assert first.runs[1].font.color.rgb == docx.shared.RGBColor(0x80, 0x80, 0x80)  # the time, in grey


def test_a_word_document_without_source_or_speakers_has_the_default_title_and_no_speaker_list(tmp_path):
    document = docx_of(Transcript((Utterance(0.0, 1.0, "Hello there."),), duration=1.0), tmp_path)
    outline = [(p.style.name, p.text) for p in document.paragraphs if p.style.name != "Normal"]
    assert outline == [("Title", "Transcript"), ("Heading 1", "Transcript")]
    assert document.core_properties.title == "Transcript"


def test_rttm_skips_only_lines_without_duration_and_names_the_session_by_default(tmp_path):
    t = talk(
        Utterance(0.0, 0.5, "Short.", "A"),
        Utterance(1.0, 1.0, "", "B"),  # no duration: no RTTM turn
        Utterance(2.0, 3.0, "Later.", "B"),
    )
    text = render(t, "rttm").decode()
    assert text.splitlines() == [
        "SPEAKER transcript 1 0.000 0.500 <NA> <NA> Ann <NA> <NA>",
        "SPEAKER transcript 1 2.000 1.000 <NA> <NA> Björn <NA> <NA>",
    ]


def test_seglst_fields_are_the_ones_meeteval_reads_and_names_stay_readable():
    t = talk(Utterance(1.25, 2.5, "Grüß Gott.", "B"), source="x/Zoë call.flac")
    (segment,) = json.loads(render(t, "seglst"))
    assert segment == {
        "session_id": "Zoë_call", "speaker": "Björn", "start_time": 1.25, "end_time": 2.5,
        "words": "Grüß Gott.",
    }  # fmt: skip
    assert "Björn" in render(t, "seglst").decode()  # written as UTF-8, not \\u escapes
    assert render(talk(), "seglst").decode().strip() == "[]"


def test_a_whole_webvtt_file_reads_as_players_expect():
    t = talk(Utterance(0.0, 1.5, "Hi <all> & welcome.", "A"), Utterance(2.0, 3.0, "Thanks.", None))
    assert render(t, "vtt").decode() == (
        "WEBVTT\n\n"
        "00:00:00.000 --> 00:00:01.500\n<v Ann>Hi &lt;all&gt; &amp; welcome.\n\n"
        "00:00:02.000 --> 00:00:03.000\nThanks.\n\n"
    )


def test_text_export_skips_empty_lines_but_not_what_follows_them():
    t = talk(
        Utterance(0.0, 1.0, "One.", "A"),
        Utterance(1.0, 2.0, "  ", "B"),
        Utterance(3700.0, 3701.0, "Two.", "A"),
    )
    assert render(t, "txt").decode() == "[00:00:00] Ann\nOne.\n\n[01:01:40] Ann\nTwo.\n"


def test_control_characters_and_bare_carriage_returns_never_reach_a_text_format():
    words = (Word(0.0, 0.4, "Ring\x07"), Word(0.5, 0.9, "\x1b[31mthe"), Word(1.0, 1.4, "bell"))
    t = talk(Utterance(0.0, 1.4, "Ring\x07 \x1b[31mthe bell\rnow", "A", words))
    assert "Ring the bell now" in render(t, "txt").decode()
    assert "Ring the bell now" in render(t, "srt").decode()
    assert "\x07" not in render(t, "vtt").decode() and "\x1b" not in render(t, "vtt").decode()


@pytest.mark.parametrize(
    "seconds, stamp", [(0.0, "00:00:00,000"), (3600.0, "01:00:00,000"), (-0.2, "00:00:00,000")]
)
def test_subtitle_times_at_zero_and_whole_hours(seconds, stamp):
    from engine.export.timefmt import clock, srt_time

    assert srt_time(seconds) == stamp
    assert clock(seconds) == stamp[:8]
    assert clock(float("nan")) == "00:00:00"


def test_unknown_or_missing_formats_are_refused_with_the_list_to_choose_from(tmp_path):
    choices = "srt, vtt, txt, json, docx, rttm, seglst"
    with pytest.raises(ValueError, match=rf"^unknown export format doc, pdf; choose from {choices}$"):
        export(talk(), tmp_path, ["txt", " Doc", "pdf"])
    with pytest.raises(ValueError, match=rf"^unknown export format \(none\); choose from {choices}$"):
        export(talk(), tmp_path, [])


def test_where_the_files_go_for_each_kind_of_target(tmp_path):
    t = talk(Utterance(0.0, 1.0, "Hi.", "A"), source="/rec/standup.wav")
    nested = tmp_path / "a" / "b"  # folders created as needed
    assert export(t, nested, ["txt", "srt"]) == [nested / "standup.txt", nested / "standup.srt"]
    assert export(t, tmp_path / "out", ["txt"], stem="talk") == [tmp_path / "out" / "talk.txt"]
    assert export(t, tmp_path / "notes.txt", ["txt"]) == [tmp_path / "notes.txt"]
    named = tmp_path / "day1.seglst.json"  # the longest known suffix is the one taken off
    assert export(t, named, ["seglst", "srt"]) == [tmp_path / "day1.seglst.json", tmp_path / "day1.srt"]
    assert all(p.is_file() for p in (nested / "standup.srt", tmp_path / "day1.srt"))
