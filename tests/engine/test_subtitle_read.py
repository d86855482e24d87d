"""Subtitles read back for review: what Murmur writes comes back with its times, speakers and text;
foreign files parse; anything else is refused naming the line."""

from __future__ import annotations

import pytest

from engine.errors import TranscriptFormatError
from engine.export import render
from engine.export.subtitle_read import parse_subtitles, read_subtitles
from engine.types import Speaker, Transcript, Utterance

SPOKEN = Transcript(
    (
        Utterance(1.25, 3.5, "Good morning, everyone.", "a"),
        Utterance(3.75, 6.0, "Thanks — shall we start? <now> & then", "b"),
        Utterance(3725.5, 3727.0, "An hour in.", None),
    ),
    (Speaker("a", "Alice"), Speaker("b", "Bob Jones")),
    duration=3728.0,
)


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
def test_what_murmur_writes_reads_back_with_times_speakers_and_text(fmt):
    back = parse_subtitles(render(SPOKEN, fmt).decode())
    assert [(u.start, u.end, u.text) for u in back.utterances] == [
        (u.start, u.end, u.text) for u in SPOKEN.utterances
    ]
    names = [back.speaker_name(u.speaker) for u in back.utterances]
    assert names == ["Alice", "Bob Jones", None]


def test_a_foreign_vtt_with_cue_ids_styles_and_short_times_parses():
    text = (
        "\ufeffWEBVTT - made elsewhere\n\nNOTE a comment\n\nintro\n00:01.000 --> 00:02.500 align:start\n"
        "<v.loud Ann>Hello <i>there</i>\n\n2\n00:00:03.000 --> 00:00:04.000\nsecond line\nwraps here\n"
    )
    back = parse_subtitles(text)
    assert [(u.start, u.end, u.text) for u in back.utterances] == [
        (1.0, 2.5, "Hello there"), (3.0, 4.0, "second line wraps here")
    ]
    assert back.speaker_name(back.utterances[0].speaker) == "Ann" and back.utterances[1].speaker is None


def test_a_colon_inside_a_sentence_is_not_a_speaker():
    text = "1\n00:00:01,000 --> 00:00:02,000\nThe plan for this quarter, in short: more tests.\n"
    (u,) = parse_subtitles(text).utterances
    assert u.speaker is None and u.text.startswith("The plan")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("just some words\n", "no subtitle cues"),
        ("1\n00:00:05,000 --> 00:00:01,000\nbackwards\n", "line 2: the cue ends before it starts"),
        ("1\n00:00:xx,000 --> 00:00:01,000\nbad\n", "line 2: not a subtitle time"),
    ],
)
def test_what_is_not_a_subtitle_file_is_refused_naming_the_line(text, why):
    with pytest.raises(TranscriptFormatError, match=why):
        parse_subtitles(text)


def test_a_file_that_is_not_text_says_which_byte(tmp_path):
    path = tmp_path / "broken.srt"
    path.write_bytes(b"1\n00:00:01,000 --> 00:00:02,000\nbad \xff byte\n")
    with pytest.raises(TranscriptFormatError, match=r"broken.srt is not UTF-8 text \(byte 36\)"):
        read_subtitles(path)


def test_a_file_read_from_disk_keeps_every_cue_and_lasts_until_the_last_one_ends(tmp_path):
    path = tmp_path / "meeting.srt"
    path.write_bytes(b"\xef\xbb\xbf" + render(SPOKEN, "srt"))
    back = read_subtitles(path)
    assert [u.text for u in back.utterances] == [u.text for u in SPOKEN.utterances]
    assert back.duration == 3727.0
    assert back.speakers == (Speaker("S1", "Alice"), Speaker("S2", "Bob Jones"))


def test_windows_and_old_mac_line_endings_read_like_unix_ones():
    unix = "1\n00:00:01,000 --> 00:00:02,000\nAlice: Hello\nthere\n\n2\n00:00:03,000 --> 00:00:04,000\nBye\n"
    for ending in ("\r\n", "\r"):
        back = parse_subtitles(unix.replace("\n", ending))
        said = [(u.start, u.end, u.text) for u in back.utterances]
        assert said == [(1.0, 2.0, "Hello there"), (3.0, 4.0, "Bye")]
        assert back.speaker_name(back.utterances[0].speaker) == "Alice"


def test_a_file_that_starts_with_a_time_after_a_byte_order_mark_parses():
    (u,) = parse_subtitles("\ufeff00:00:01,000 --> 00:00:02,000\nno cue number").utterances
    assert (u.start, u.end, u.text) == (1.0, 2.0, "no cue number")  # the last cue, no newline after it


def test_short_fractions_are_tenths_and_hundredths_and_a_cue_may_last_no_time():
    text = (
        "00:00:01,5 --> 00:00:02,25\nshort\n\n00:00:05.000 --> 00:00:05.000\ninstant\n\n"
        "00:00:06,000 --> 00:00:07,000\n\n"  # a cue without text
    )
    back = parse_subtitles(text)
    assert [(u.start, u.end, u.text) for u in back.utterances] == [
        (1.5, 2.25, "short"), (5.0, 5.0, "instant"), (6.0, 7.0, "")
    ]


def test_a_name_of_four_words_is_a_speaker_and_of_five_is_text():
    text = (
        "00:00:01,000 --> 00:00:02,000\nMary Anne de Vries: hello\n\n"
        "00:00:03,000 --> 00:00:04,000\nthe last thing I said: again\n"
    )
    four, five = parse_subtitles(text).utterances
    assert parse_subtitles(text).speaker_name(four.speaker) == "Mary Anne de Vries" and four.text == "hello"
    assert five.speaker is None and five.text == "the last thing I said: again"


def test_refusals_say_the_file_and_what_is_wrong_word_for_word(tmp_path):
    long_bad = "00:00:01 --> " + "x" * 80
    with pytest.raises(TranscriptFormatError) as bad:
        parse_subtitles(f"1\n{long_bad}\n")
    assert str(bad.value) == f"line 2: not a subtitle time: {long_bad[:60]!r}"
    notes = tmp_path / "notes.srt"
    notes.write_text("just some words\n")
    with pytest.raises(TranscriptFormatError) as empty:
        read_subtitles(notes)
    assert str(empty.value) == "notes.srt: no subtitle cues found (not an SRT or WebVTT file?)"
    with pytest.raises(TranscriptFormatError) as missing:
        read_subtitles(tmp_path / "gone.vtt")
    assert str(missing.value) == f"cannot read {tmp_path / 'gone.vtt'}: No such file or directory"
