"""Speaker book: names, colours, merging and the waveform lanes built from it."""

from __future__ import annotations

import pytest

from app import speakers as sp
from engine.types import Speaker, Transcript, Utterance


def transcript() -> Transcript:
    utterances = (Utterance(0, 1, "a", "s1"), Utterance(1, 2, "b", "s2"), Utterance(2, 3, "c", None),
                  Utterance(3, 4, "d", "s3"))  # fmt: skip
    return Transcript(utterances, speakers=(Speaker("s1", "Alice"), Speaker("s2", "Bob")))


def test_book_lists_known_and_orphan_speakers_with_distinct_colours():
    book = sp.book_from_transcript(transcript(), {"s2": "#123456"})
    assert [(s.id, s.name) for s in book] == [("s1", "Alice"), ("s2", "Bob"), ("s3", "s3")]
    assert book[1].color == "#123456" and book[0].color != book[2].color


def test_rename_propagates_to_the_engine_speakers_used_by_exports():
    book = sp.rename(sp.book_from_transcript(transcript()), "s1", "  Dr.  Ann Lee ")
    assert sp.engine_speakers(book)[0] == Speaker("s1", "Dr. Ann Lee")
    with pytest.raises(ValueError, match="already"):
        sp.rename(book, "s2", "Dr. Ann Lee")
    with pytest.raises(ValueError, match="empty"):
        sp.rename(book, "s2", " ")


def test_merging_speakers_moves_their_utterances_and_drops_them():
    t = transcript()
    book, utterances = sp.merge_speakers(sp.book_from_transcript(t), t.utterances, ["s2", "s3"], "s1")
    assert [s.id for s in book] == ["s1"]
    assert [u.speaker for u in utterances] == ["s1", "s1", None, "s1"]


def test_new_speakers_get_fresh_ids_and_names():
    book, info = sp.add_speaker(sp.book_from_transcript(transcript()))
    assert info.id not in {"s1", "s2", "s3"} and info.name == "Speaker 4" and book[-1] == info


def test_unassigned_utterances_get_a_neutral_name_colour_and_lane():
    t = transcript()
    book = sp.book_from_transcript(t)
    assert sp.display_name(book, None) == sp.UNASSIGNED_NAME
    assert sp.display_color(book, None) == sp.UNASSIGNED_COLOR
    lanes = sp.speaker_lanes(book, t.utterances)
    assert [lane.name for lane in lanes] == ["Alice", "Bob", "s3", sp.UNASSIGNED_NAME]
    assert lanes[-1].starts == (2,)


def test_talk_time_sums_per_speaker():
    assert sp.talk_time(transcript().utterances) == {"s1": 1, "s2": 1, None: 1, "s3": 1}


def test_colours_must_be_hex():
    with pytest.raises(ValueError, match="RRGGBB"):
        sp.SpeakerInfo("x", "X", "red")


def test_every_chip_colour_has_readable_text_by_wcag():
    for color in (*sp.PALETTE, sp.UNASSIGNED_COLOR):
        ink = sp.chip_text_color(color)
        assert ink in ("#000000", "#FFFFFF")
        assert sp.contrast_ratio(color, ink) >= 4.5, color


def test_contrast_ratio_matches_the_wcag_reference_values():
    assert sp.contrast_ratio("#FFFFFF", "#000000") == pytest.approx(21.0)
    assert sp.contrast_ratio("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)


def test_a_new_speaker_never_takes_a_colour_in_use_while_others_are_free():
    book: sp.SpeakerBook = ()
    for _ in range(4):
        book, _info = sp.add_speaker(book)
    merged, _ = sp.merge_speakers(book, (), [book[2].id], book[0].id)  # 3 speakers, 4 colours were used
    grown, info = sp.add_speaker(merged)
    assert info.color not in {s.color for s in merged}
    while len(grown) < len(sp.PALETTE):
        grown, info = sp.add_speaker(grown)
        assert [s.color for s in grown].count(info.color) == 1


def test_a_finished_run_gives_new_speakers_colours_nobody_kept():
    transcript = Transcript((Utterance(0, 1, "a", "x"), Utterance(1, 2, "b", "y")), (), duration=2.0)
    book = sp.book_from_transcript(transcript, {"y": sp.PALETTE[0]})
    assert [s.color for s in book] == [sp.PALETTE[1], sp.PALETTE[0]] and [s.id for s in book] == ["x", "y"]


def test_a_live_speaker_joins_as_speaker_n_and_takes_a_recognised_name_unless_the_user_named_it():
    # catches: a live speaker numbered by the wrong count, a recognised name put on a speaker the
    # user had named while recording, or a withdrawn name left in place
    book = sp.with_live_speaker((), "S1")
    book = sp.with_live_speaker(book, "S2", ("Bob", 0.93))
    assert [(s.id, s.name, s.score) for s in book] == [("S1", "Speaker 1", None), ("S2", "Bob", 0.93)]
    assert sp.with_live_speaker(book, "S2")[1].name == "Speaker 2"  # the name no longer stands
    typed = sp.rename(book, "S1", "Chair")
    assert sp.with_live_speaker(typed, "S1", ("Carol", 0.95)) == typed
    assert sp.with_live_speaker(book, None) == book
    assert book[0].color != book[1].color
