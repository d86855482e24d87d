"""Parsing model replies: every complete segment survives truncation, garbage and damage."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.backends.vibevoice.parsing import parse_reply, parse_speaker, parse_time
from engine.types import Segment

DOCS_REPLY = (
    "assistant\n"
    '[{"Start":0,"End":15.43,"Speaker":0,"Content":"Hello everyone and welcome to the Vibe Voice podcast."},'
    '{"Start":15.43,"End":21.05,"Speaker":1,"Content":"Thanks so much for having me, Alex."}]\n'
)


def test_the_documented_reply_gives_its_two_segments():
    assert parse_reply(DOCS_REPLY, 30.0) == (
        Segment(0.0, 15.43, "Hello everyone and welcome to the Vibe Voice podcast.", 0),
        Segment(15.43, 21.05, "Thanks so much for having me, Alex.", 1),
    )


def test_key_spellings_clock_times_and_speaker_strings_are_understood():
    reply = (
        '[{"Start time":"00:01:02.50","End time":"1:04","Speaker ID":"Speaker 2","Text":"one"},'
        '{"start_time":"65.5","end_time":66,"speaker_id":3,"content":"two"}]'
    )
    assert parse_reply(reply, 120.0) == (Segment(62.5, 64.0, "one", 2), Segment(65.5, 66.0, "two", 3))
    assert parse_time("1:02:03.5") == 3723.5 and parse_time("12.5s") == 12.5 and parse_time("soon") is None
    assert parse_speaker("SPEAKER_07") == 7 and parse_speaker(None) is None and parse_speaker(1.0) == 1


def test_a_reply_cut_off_keeps_its_complete_segments_and_the_partial_text():
    reply = DOCS_REPLY[: DOCS_REPLY.index("having") + 3]
    segments = parse_reply(reply, 30.0)
    assert segments[0] == Segment(0.0, 15.43, "Hello everyone and welcome to the Vibe Voice podcast.", 0)
    partial = segments[1]
    assert partial.text == "Thanks so much for hav" and partial.speaker == 1
    assert partial.start == 15.43 and partial.end == 21.05 and partial.flags == ("partial",)


def test_a_partial_segment_without_an_end_runs_to_the_chunk_end():
    (seg,) = parse_reply('[{"Start":3.5,"Speaker":0,"Content":"and then', 10.0)
    assert (seg.start, seg.end, seg.text) == (3.5, 10.0, "and then")
    assert set(seg.flags) == {"partial", "missing_time"}


def test_bracketed_non_speech_tags_are_kept_in_the_text():
    reply = (
        '[{"Start":0,"End":2,"Speaker":0,"Content":"[Music]"},'
        '{"Start":2,"End":3,"Speaker":1,"Content":"Hi [laughs]"}]'
    )
    assert [s.text for s in parse_reply(reply, 5.0)] == ["[Music]", "Hi [laughs]"]


def test_inverted_and_out_of_range_times_are_flagged_and_repaired_from_neighbours():
    reply = (
        '[{"Start":1,"End":0.5,"Speaker":0,"Content":"a"},{"Start":2,"End":3,"Speaker":0,"Content":"b"},'
        '{"Start":4,"End":99,"Speaker":1,"Content":"c"},{"Start":-1,"End":4.5,"Speaker":1,"Content":"d"}]'
    )
    a, b, c, d = parse_reply(reply, 10.0)
    assert (a.start, a.end, a.flags) == (1.0, 2.0, ("inverted",))  # ends where the next one starts
    assert b.flags == ()
    assert (c.start, c.end, c.flags) == (4.0, 10.0, ("out_of_range",))
    assert (d.start, d.end, d.flags) == (0.0, 4.5, ("out_of_range",))


def test_rounding_just_past_the_chunk_end_is_clamped_without_a_flag():
    (seg,) = parse_reply('[{"Start":9.5,"End":10.004,"Speaker":0,"Content":"end"}]', 10.0)
    assert (seg.end, seg.flags) == (10.0, ())


def test_garbage_missing_commas_and_fences_do_not_hide_segments():
    reply = (
        '```json\n[{"Start":0,"End":1,"Speaker":0,"Content":"a"} '
        '{"Start":1,"End":2,"Speaker":1,"Content":"b"}'
        'garbage!{"Start":2,"End":3,"Speaker":0,"Content":"c"},,]]\n```'
    )
    assert [(s.text, s.flags) for s in parse_reply(reply, 5.0)] == [("a", ()), ("b", ()), ("c", ())]


def test_a_damaged_object_is_read_field_by_field():
    reply = (
        '[{"Start":0,"End":1,"Speaker":0,"Content":"fine"},'
        '{"Start":1,"End":2,Speaker:1,"Content":"damaged"}]'
    )
    fine, damaged = parse_reply(reply, 5.0)
    assert fine.flags == ()
    assert (damaged.start, damaged.end, damaged.text) == (1.0, 2.0, "damaged")
    assert damaged.flags == ("malformed", "missing_speaker") and damaged.speaker == 0


def test_text_without_any_segment_is_kept_as_one_unparsed_segment():
    unparsed = Segment(0.0, 4.0, "hello there", 0, flags=("unparsed", "missing_speaker"))
    assert parse_reply("assistant\nhello there", 4.0) == (unparsed,)
    assert parse_reply("assistant\n[]\n", 4.0) == ()
    assert parse_reply("", 4.0) == ()


# --- properties: generated valid replies, then truncated or damaged ---------------------------------

DURATION = 60.0
CONTENT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
).filter(lambda t: t.strip() == t)


@st.composite
def segments(draw: st.DrawFn) -> list[Segment]:
    count = draw(st.integers(1, 6))
    out = []
    for _ in range(count):
        start = draw(st.integers(0, 5000)) / 100
        end = min(start + draw(st.integers(0, 1000)) / 100, DURATION)
        out.append(Segment(start, end, draw(CONTENT), draw(st.integers(0, 5))))
    return out


def render(segs: list[Segment], ascii_only: bool) -> tuple[str, list[tuple[int, int]]]:
    """A reply in the model's compact format and the [start, end) offset of each object."""
    text, spans = "assistant\n[", []
    for i, s in enumerate(segs):
        item = {"Start": s.start, "End": s.end, "Speaker": s.speaker, "Content": s.text}
        obj = json.dumps(item, ensure_ascii=ascii_only, separators=(",", ":"))
        text += "," if i else ""
        spans.append((len(text), len(text) + len(obj)))
        text += obj
    return text + "]\n", spans


def assert_kept(expected: Segment, got: Segment) -> None:
    assert (got.start, got.end, got.speaker, got.text, got.flags) == (
        expected.start, expected.end, expected.speaker, expected.text, (),
    )


@settings(max_examples=300, deadline=None)
@given(segments(), st.booleans(), st.data())
def test_truncation_anywhere_never_loses_a_complete_segment(segs, ascii_only, data):
    reply, spans = render(segs, ascii_only)
    cut = data.draw(st.integers(0, len(reply)))
    parsed = parse_reply(reply[:cut], DURATION)
    complete = [s for s, (_, end) in zip(segs, spans, strict=True) if end <= cut]
    assert len(parsed) >= len(complete)
    for expected, got in zip(complete, parsed, strict=False):
        assert_kept(expected, got)
    for extra in parsed[len(complete) :]:  # at most the one cut-off segment, with its text so far
        assert extra.flags[0] == "partial" and len(parsed) == len(complete) + 1
        assert segs[len(complete)].text.startswith(extra.text)


@settings(max_examples=300, deadline=None)
@given(segments(), st.booleans(), st.data())
def test_damage_inside_one_segment_never_loses_the_others(segs, ascii_only, data):
    reply, spans = render(segs, ascii_only)
    victim = data.draw(st.integers(0, len(segs) - 1))
    start, end = spans[victim]
    at = data.draw(st.integers(start, end - 1))
    junk = data.draw(st.sampled_from(["", "x", '"', "}", ",", ":", "\\", "]"]))
    damaged = reply[:at] + junk + reply[at + 1 :]
    parsed = parse_reply(damaged, DURATION)
    survivors = [s for i, s in enumerate(segs) if i != victim]
    kept = [(p.start, p.end, p.speaker, p.text) for p in parsed if not p.flags]
    for s in survivors:
        assert (s.start, s.end, s.speaker, s.text) in kept, (damaged, s)


@settings(max_examples=200, deadline=None)
@given(segments(), st.data())
def test_garbage_between_segments_never_loses_one(segs, data):
    reply, spans = render(segs, ascii_only=False)
    junk = st.text(alphabet=st.characters(blacklist_characters="{", blacklist_categories=("Cs",)), max_size=8)
    pieces, previous = [], 0
    for start, end in spans:
        pieces.append(data.draw(junk) if previous else reply[:start])
        pieces.append(reply[start:end])
        previous = end
    parsed = parse_reply("".join(pieces) + data.draw(junk), DURATION)
    assert len(parsed) == len(segs)
    for expected, got in zip(segs, parsed, strict=True):
        assert_kept(expected, got)


def test_a_segment_written_without_a_speaker_gets_its_neighbours_speaker():
    reply = (
        '[{"Start":0,"End":1,"Content":"who said this"},'
        '{"Start":1,"End":2,"Speaker":3,"Content":"me"},'
        '{"Start":2,"End":3,"Content":"and this"}]'
    )
    first, second, third = parse_reply(reply, 5.0)
    assert [first.speaker, second.speaker, third.speaker] == [3, 3, 3]
    assert "missing_speaker" in first.flags and "missing_speaker" not in second.flags
    (alone,) = parse_reply('[{"Start":0,"End":1,"Content":"nobody named"}]', 5.0)
    assert alone.speaker == 0


def test_a_malformed_object_reads_spelled_keys_nulls_and_keeps_the_first_text():
    reply = '[{"Start time": 1.5, "End": null, "Speaker_ID": 2 "Content": "first", "Text": "second"}]'
    (only,) = parse_reply(reply, 5.0)
    assert (only.start, only.end, only.speaker, only.text) == (1.5, 5.0, 2, "first")
    assert only.flags == ("malformed", "missing_time")


def test_a_reply_cut_inside_its_text_keeps_the_words_without_trailing_junk():
    (cut,) = parse_reply('[{"Start": 0, "End": 2, "Speaker": 0, "Content": "and then   \n', 5.0)
    assert (cut.text, cut.flags) == ("and then", ("partial",))
    (one,) = parse_reply('[{"Start": 0, "End": 2, "Speaker": 0, "Content": "x"', 5.0)
    assert one.text == "x"
