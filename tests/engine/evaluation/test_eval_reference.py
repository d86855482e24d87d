"""Reading references: STM, RTTM, SegLST, UEM and Rev NLP files, filtered to one recording."""

from __future__ import annotations

import json

import pytest

from engine.evaluation.reference import (
    ReferenceFileError,
    TextSegment,
    hypothesis_segments,
    parse_nlp,
    parse_rttm,
    parse_seglst,
    parse_stm,
    parse_uem,
)
from engine.types import Transcript, Utterance

TEDLIUM_STM = """\
;; comment line
AimeeMullins_2009P 1 AimeeMullins 17.82 28.81 <o,f0,female> i 'd like to share with you
AimeeMullins_2009P 1 inter_segment_gap 28.81 29.10 <o,f0,female> ignore_time_segment_in_scoring
AimeeMullins_2009P 1 AimeeMullins 29.10 31.00 <o,f0,female> it 's a discovery
"""


def test_stm_label_fields_gap_lines_and_split_clitics_are_handled():
    segments = parse_stm(TEDLIUM_STM, "AimeeMullins_2009P")
    assert [s.text for s in segments] == ["i'd like to share with you", "it's a discovery"]
    assert segments[0] == TextSegment("AimeeMullins", "i'd like to share with you", 17.82, 28.81)


def test_a_multi_recording_stm_is_filtered_to_the_recording():
    text = "EN2002a 1 A 0 1 hello\nEN2002b 1 B 0 1 other\nEN2002a 1 C 1 2 world\n"
    assert [s.text for s in parse_stm(text, "EN2002a")] == ["hello", "world"]
    with pytest.raises(ReferenceFileError, match="not 'ES2004a'"):
        parse_stm(text, "ES2004a")


def test_a_single_recording_file_is_used_whatever_its_session_name():
    assert len(parse_stm("meeting 1 A 0 1 hello\n", "EN2002a")) == 1


def test_rttm_gives_speaker_turns():
    text = "SPEAKER EN2002a 1 0.50 2.25 <NA> <NA> FEE005 <NA> <NA>\nSPKR-INFO EN2002a 1 <NA>\n"
    assert parse_rttm(text, "EN2002a") == [TextSegment("FEE005", "", 0.5, 2.75)]


def test_seglst_is_read_and_bad_entries_are_named():
    entries = [{"session_id": "m", "speaker": "a", "start_time": 1, "end_time": 2, "words": "hi there"}]
    assert parse_seglst(json.dumps(entries), "m") == [TextSegment("a", "hi there", 1.0, 2.0)]
    with pytest.raises(ReferenceFileError, match="lacks"):
        parse_seglst(json.dumps([{"speaker": "a"}]), "m")
    with pytest.raises(ReferenceFileError, match="invalid JSON"):
        parse_seglst("[{", "m")


def test_uem_regions_are_read():
    assert parse_uem("EN2002a 1 10.0 2000.5\n", "EN2002a") == [(10.0, 2000.5)]


def test_a_bad_time_names_the_line():
    with pytest.raises(ReferenceFileError, match="expected a time"):
        parse_stm("m 1 A zero 1 hello\n", "m")


def test_rev_nlp_tokens_become_untimed_speaker_turns():
    text = (
        "token|speaker|ts|endTs|punctuation|case|tags|wer_tags\n"
        "Good|0||||UC|[]|[]\nmorning|0|||.|LC|[]|[]\nThank|1||||UC|[]|[]\nyou|1|||.|LC|[]|[]\n"
    )
    assert parse_nlp(text) == [TextSegment("0", "Good morning."), TextSegment("1", "Thank you.")]


def test_nlp_with_token_times_is_timed():
    text = "token|speaker|ts|endTs|punctuation|case|tags|wer_tags\nHi|0|1.0|1.5||UC|[]|[]\n"
    assert parse_nlp(text)[0].timed


def test_hypothesis_segments_repair_inverted_times_and_name_unknown_speakers():
    transcript = Transcript((Utterance(5.0, 4.0, "hi"), Utterance(6.0, 7.0, "yo", "spk1")))
    assert hypothesis_segments(transcript) == (
        TextSegment("unknown", "hi", 5.0, 5.0),
        TextSegment("spk1", "yo", 6.0, 7.0),
    )
