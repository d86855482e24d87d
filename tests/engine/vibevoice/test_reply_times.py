"""The VibeVoice reply reader at its edges: segment times in speech tokens, the words each segment
adds (none for a recent repeat), the segment still open when the row ends, the chunk's VAD speech
as speech-token spans, and one decode per token id. Each test feeds real reply text through
`TimestampTracker` with a character tokenizer, so a wrong key, a wrong end of the text or a missing
clamp shows as different times or words."""

from __future__ import annotations

import json
from types import SimpleNamespace

from engine.backends.vibevoice.anchor import (
    REPEATS,
    TimestampTracker,
    TokenText,
    speech_anchor,
    speech_token_rate,
    voiced_spans,
)
from engine.decode.api import SegmentTimes
from engine.types import Chunk, SpeechSegment


def test_the_speech_token_rate_is_the_sample_rate_over_the_hop():
    config = SimpleNamespace(acoustic_tokenizer_encoder_config=SimpleNamespace(hop_length="3200"))
    assert speech_token_rate(config) == 7.5
    assert speech_token_rate(config, sample_rate=16000) == 5.0


class CharTokenizer:
    """Token id i is the character chr(i); decoding is counted."""

    def __init__(self):
        self.calls = 0

    def decode(self, ids, skip_special_tokens, clean_up_tokenization_spaces):
        self.calls += 1
        return "".join(chr(i) for i in ids)


def ids(text: str) -> list[int]:
    return [ord(c) for c in text]


def test_each_tokens_text_is_decoded_once_and_shared_by_every_row():
    tokenizer = CharTokenizer()
    make = speech_anchor(tokenizer, 7.5)
    one, two = make(), make()
    assert one.text is two.text and one.tokens_per_second == 7.5
    one.feed(ids("aab"))
    two.feed(ids("ba"))
    assert tokenizer.calls == 2 and TokenText(tokenizer)(ord("z")) == "z"


def test_the_reader_reports_times_in_speech_tokens_and_keeps_the_text_after_the_last_object():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 7.5)
    reply = '[{"Start": 2, "End": "4.0", "Content": "Hello there"}, {"Start_time": 6'
    assert tracker.feed(ids(reply[:20])) == []
    found = tracker.feed(ids(reply[20:]))
    assert found == [SegmentTimes(15.0, 30.0, 2)]
    assert tracker.pending == ', {"Start_time": 6'
    assert tracker.feed(ids(', "end time": 8, "Text": "again"}')) == [SegmentTimes(45.0, 60.0, 1)]
    assert tracker.pending == ""


def test_a_text_one_of_the_recent_segments_had_adds_no_words():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    texts = ["Yes, right.", "yes right", "no", "", "YES  right!"]
    found = [tracker.feed(ids(json_segment(t)))[0].words for t in texts]
    assert found == [2, 0, 1, 0, 0]


def json_segment(text: str, start: float = 1.0) -> str:
    return json.dumps({"Start": start, "End": start + 1, "Content": text})


def test_content_is_read_before_text_and_a_missing_time_is_none():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    both = '{"Start": "x", "Content": "one two", "Text": "three"}'
    assert tracker.feed(ids(both)) == [SegmentTimes(None, None, 2)]
    number = '{"StartTime": 3, "Content": 5, "Text": "four five six"}'
    assert tracker.feed(ids(number)) == [SegmentTimes(3.0, None, 3)]


def test_the_segment_being_written_is_read_when_the_row_ends():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 2.0)
    tracker.feed(ids('[{"Start": 1, "End": 2, "Content": "a"}, {"Start": 3, "End": 5, "Content": "b c'))
    assert tracker.open() == SegmentTimes(6.0, 10.0)
    closed = TimestampTracker(TokenText(CharTokenizer()), 2.0)
    closed.feed(ids('{"Start": 1, "End": 2, "Content": "a"}'))
    assert closed.open() is None
    bare = TimestampTracker(TokenText(CharTokenizer()), 2.0)
    bare.feed(ids('{"Start": 3'))
    assert bare.open() is None  # no words yet: the transcript keeps nothing of it


def chunk(start: float, end: float, speech: list[tuple[float, float]]) -> Chunk:
    return Chunk(index=0, start=start, end=end, speech=tuple(SpeechSegment(a, b) for a, b in speech))


def test_vad_speech_maps_to_the_tokens_it_touches_clipped_to_the_chunk():
    speech = [(15.05, 16.0), (9.0, 11.0), (19.5, 25.0), (12.0, 12.0)]
    spans = voiced_spans(chunk(10.0, 20.0, speech), (4, 104))
    assert spans == ((0, 10), (50, 60), (95, 100))
    assert voiced_spans(chunk(10.0, 10.0, [(10.0, 11.0)]), (0, 0)) == ()


def test_a_segment_without_text_adds_no_words():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    assert tracker.feed(ids('{"Start": 1, "End": 2, "Speaker": 0}')) == [SegmentTimes(1.0, 2.0, 0)]


def test_a_text_written_long_ago_counts_again():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    texts = [f"segment {i}" for i in range(REPEATS)]
    for text in texts:
        tracker.feed(ids(json_segment(text)))
    assert tracker.feed(ids(json_segment(texts[0])))[0].words == 0  # within the last REPEATS
    tracker.feed(ids(json_segment("one more")))
    assert tracker.feed(ids(json_segment(texts[1])))[0].words == 0
    tracker.feed(ids(json_segment("and more")))
    assert tracker.feed(ids(json_segment(texts[0])))[0].words == 2  # pushed out: new again


def test_a_segment_is_reported_on_the_token_that_closes_it():
    tracker = TimestampTracker(TokenText(CharTokenizer()), 1.0)
    reply = json_segment("a b")
    found = [tracker.feed([token]) for token in ids(reply)]
    assert [i for i, f in enumerate(found) if f] == [len(reply) - 1]


def test_a_short_chunks_vad_speech_still_maps_and_a_chunk_without_duration_has_none():
    assert voiced_spans(chunk(10.0, 10.5, [(10.0, 10.25)]), (0, 4)) == ((0, 2),)
    assert voiced_spans(chunk(10.0, 10.0, [(10.0, 11.0)]), (0, 50)) == ()
