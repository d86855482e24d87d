"""`speech-anchor` against replies a speech LLM really writes wrong, at the default settings.

Each case is a 300 s chunk spoken at 2.2–3.0 words per second of speech, 0.4 s pauses between
segments (the VAD's voiced spans leave them out). The reply is real JSON, tokenized by a real
byte-level BPE tokenizer and read token by token by the VibeVoice timestamp reader; the engine's
own row reader turns what it reads into the anchor, with the scheduler's one-step lag, and the
eviction rule of the default `speech-anchor` config decides what each step holds. A segment loses
speech when audio it really covers (not the times it writes) was gone at any step that wrote it.

Cases: timestamps +12 s / +20 s / +40 s ahead, drift ×1.05 / ×1.10, 3 / 4 / 6 wild Starts in a
row, a restart 30 s back with wrong times, overlap written speaker-grouped and End-ordered, a
back-channel written 50 s late, a loop whose fake times advance. The harm meter (what the engine
reports as speech lost) must be non-zero for any case that loses, also at settings weak enough to
lose.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from engine.backends.vibevoice.anchor import speech_anchor
from engine.decode.anchor import RowReaders
from engine.decode.eviction import EvictionConfig
from engine.decode.layout import SpeechRule, speech_at
from engine.testing.tiny import build_tokenizer, tokenizer_corpus

RATE = 7.5  # speech tokens per second (VibeVoice)
CHUNK = 300.0
S = int(CHUNK * RATE)
PAUSE = 0.4  # seconds of silence between segments


@dataclass(frozen=True)
class Said:
    """One segment: the audio it really covers and the times the reply writes for it."""

    start: float
    end: float
    text: str
    written: tuple[float, float]


@cache
def tokenizer():
    return build_tokenizer(tokenizer_corpus(), 512)


@cache
def _words() -> tuple[str, ...]:
    from engine.synth.script import load_corpus

    return tuple(w for s in load_corpus().all_sentences for w in s.split())


def honest(length: float, start: float = 0.2, stop: float = CHUNK - 1) -> list[Said]:
    """Segments of `length` s in order, each speaker at their own pace, times written right."""
    out, t, at, words = [], start, 0, _words()
    while t + length <= stop:
        pace = (2.2, 3.0)[len(out) % 2]
        n = max(1, round(pace * length))
        text = " ".join(words[(at + i) % len(words)] for i in range(n))
        at += n
        out.append(Said(t, t + length, text, (round(t, 2), round(t + length, 2))))
        t += length + PAUSE
    return out


def shifted(segments: list[Said], f: Callable[[float], float]) -> list[Said]:
    return [replace(s, written=(round(f(s.written[0]), 2), round(f(s.written[1]), 2))) for s in segments]


def at(segments: list[Said], seconds: float) -> int:
    return next(i for i, s in enumerate(segments) if s.start >= seconds)


def wild(n: int) -> list[Said]:
    base = honest(1.5)
    i = at(base, 60)
    bad = [replace(s, written=(200.0 + 3 * k, 201.0 + 3 * k)) for k, s in enumerate(base[i : i + n])]
    return [*base[:i], *bad, *base[i + n :]]


def restart() -> list[Said]:
    """At 150 s the model starts over from 120 s, writing its times on from 150 s."""
    base = honest(1.5)
    i, back = at(base, 150), at(base, 120)
    again = [replace(s, written=(s.written[0] + 30, s.written[1] + 30)) for s in base[back:i]]
    return [*base[:i], *again, *base[i:]]


def overlap(order: str) -> list[Said]:
    """Between 100 s and 130 s A speaks in 1.5 s segments while B speaks over it (3 s segments)."""
    base = honest(1.5)
    i, j = at(base, 100), at(base, 130)
    a = base[i:j]
    b = [
        replace(s, start=s.start + 1, end=s.end + 1, written=(s.start + 1, s.end + 1))
        for s in honest(3, 100, 130)
    ]
    if order == "speaker-grouped":
        middle = [*a, *b]
    else:  # End-ordered: B's long segment covers A's short ones
        long_a = Said(a[0].start, a[-1].end, " ".join(s.text for s in a), (a[0].start, a[-1].end))
        middle = sorted([long_a, *b], key=lambda s: s.end)
    return [*base[:i], *middle, *base[j:]]


def back_channel() -> list[Said]:
    base = honest(1.5)
    i = at(base, 150)
    late = Said(100.0, 100.5, "yeah right", (100.0, 100.5))
    return [*base[:i], late, *base[i:]]


def loop() -> list[Said]:
    """At 200 s one segment's text repeats 24 times with times moving on 3 s each."""
    base = honest(1.5)
    i = at(base, 200)
    s = base[i]
    looped = [replace(s, written=(s.start + 3 * k, s.end + 3 * k)) for k in range(24)]
    return [*base[:i], *looped, *base[i + 1 :]]


CASES: dict[str, Callable[[], list[Said]]] = {
    "ahead +12 s (1 s segments)": lambda: shifted(honest(1), lambda t: t + 12),
    "ahead +20 s (3 s segments)": lambda: shifted(honest(3), lambda t: t + 20),
    "ahead +40 s (3 s segments)": lambda: shifted(honest(3), lambda t: t + 40),
    "drift x1.05 (1 s segments)": lambda: shifted(honest(1), lambda t: t * 1.05),
    "drift x1.10 (1.5 s segments)": lambda: shifted(honest(1.5), lambda t: t * 1.10),
    "3 wild Starts": lambda: wild(3),
    "4 wild Starts": lambda: wild(4),
    "6 wild Starts": lambda: wild(6),
    "restart 30 s back, wrong times": restart,
    "overlap, speaker-grouped": lambda: overlap("speaker-grouped"),
    "overlap, End-ordered": lambda: overlap("end-ordered"),
    "back-channel 50 s late": back_channel,
    "loop, advancing fake times": loop,
}


@dataclass(frozen=True)
class Outcome:
    lost: int  # speech tokens a segment needed while it was written but were gone
    meter: int  # what the engine's harm meter reports
    stopped: bool  # the row's anchor stopped (its times ran ahead of its text)
    front: int  # speech index the row kept from at its last step


def replay(segments: list[Said], config: EvictionConfig) -> Outcome:
    """Decode `segments` as a reply, one output token per step, through the real reader."""
    rule = SpeechRule("anchor", sink=config.speech_sink, back=config.look_back, ahead=config.look_ahead)
    reader = RowReaders(1, speech_anchor(tokenizer(), RATE), config.word_rate).reader(
        S, lambda j, a: [(min(rule.sink, S), *speech_at(rule, j, S, a))], (), voiced(segments)
    )
    ids, owner = tokens(segments)
    gone = np.zeros(S, dtype=bool)
    for k, token in enumerate(ids):  # output k is chosen by step k - 1, which held [lo, S)
        lo, _ = speech_at(rule, k - 1, S, reader.anchor_before(k - 1))
        need = segments[owner[k]]
        need_lo, need_hi = max(int(need.start * RATE), rule.sink), min(int(need.end * RATE) + 1, S)
        gone[need_lo : min(lo, need_hi)] = True
        reader.feed(token, k - 1)
    reader.close()
    lo, _ = speech_at(rule, len(ids), S, reader.anchor_before(len(ids)))
    return Outcome(int(gone.sum()), reader.harm.lost_tokens, reader.stopped, lo)


def tokens(segments: list[Said]) -> tuple[list[int], list[int]]:
    """The reply's token ids and, per token, the segment being written (separators: the next one)."""
    objects = [
        json.dumps({"Start": s.written[0], "End": s.written[1], "Speaker": 0, "Content": s.text})
        for s in segments
    ]
    text, ends = "[", []
    for o in objects:
        text += o + ","
        ends.append(len(text) - 1)
    encoded = tokenizer()(text[:-1] + "]", add_special_tokens=False, return_offsets_mapping=True)
    owner = [
        min(int(np.searchsorted(ends, a, side="left")), len(segments) - 1)
        for a, _ in encoded["offset_mapping"]
    ]
    return encoded["input_ids"], owner


def voiced(segments: list[Said]) -> tuple[tuple[int, int], ...]:
    spans = sorted({(int(s.start * RATE), min(int(np.ceil(s.end * RATE)), S)) for s in segments})
    return tuple(spans)


DEFAULT = EvictionConfig(policy="speech-anchor")
WEAK = replace(DEFAULT, look_back=16, word_rate=0.0)  # little look-back, no text check: these lose


# cases that still lose at the default settings: each is named in docs/engine.md with its loss
NAMED = {"back-channel 50 s late": "0.5 s"}
DOCS = Path(__file__).parents[3] / "docs" / "engine.md"


@pytest.mark.parametrize("name", [n for n in CASES if n not in NAMED])
def test_no_adversarial_reply_loses_speech_it_has_not_transcribed(name):
    outcome = replay(CASES[name](), DEFAULT)
    assert outcome.lost == 0, outcome


@pytest.mark.parametrize("name", list(NAMED))
def test_a_case_that_still_loses_is_metered_and_named_with_its_loss_in_the_docs(name):
    outcome = replay(CASES[name](), DEFAULT)
    assert 0 < outcome.lost <= outcome.meter
    assert f"{name}: {NAMED[name]}" in DOCS.read_text(encoding="utf-8")
    assert outcome.lost / RATE <= float(NAMED[name].split()[0]) + 0.1


@pytest.mark.parametrize("name", list(CASES))
def test_the_harm_meter_sees_every_loss_at_settings_that_lose(name):
    outcome = replay(CASES[name](), WEAK)
    assert (outcome.meter > 0) or outcome.lost == 0, outcome


def test_an_honest_reply_still_evicts_and_reports_no_harm():
    outcome = replay(honest(1.5), DEFAULT)
    assert outcome.lost == 0 and outcome.meter == 0 and not outcome.stopped
    assert outcome.front > 250 * RATE  # all but the last segments' audio is gone: memory is saved


def test_times_that_run_ahead_of_the_text_stop_the_row_evicting():
    outcome = replay(CASES["ahead +12 s (1 s segments)"](), DEFAULT)
    assert outcome.stopped and outcome.front <= DEFAULT.speech_sink + 1


def _probe(config: EvictionConfig = DEFAULT) -> None:  # pragma: no cover - a table for tuning
    for name, case in CASES.items():
        print(f"{name:34s} {replay(case(), config)}")
    print(f"{'honest 1.5 s':34s} {replay(honest(1.5), config)}")


if __name__ == "__main__":  # pragma: no cover
    import sys

    _probe(
        replace(
            DEFAULT, **{k: float(v) if "." in v else int(v) for k, v in (a.split("=") for a in sys.argv[1:])}
        )
    )


def test_the_reader_counts_new_words_and_none_for_a_text_it_just_wrote():
    reply = [
        {"Start": 0, "End": 1, "Speaker": 0, "Content": "We should ship it, don't you think?"},
        {"Start": 1, "End": 2, "Speaker": 1, "Content": "Yes."},
        {"Start": 3, "End": 4, "Speaker": 0, "Content": "We should ship it, don't you think?"},
    ]
    tracker = speech_anchor(tokenizer(), RATE)()
    found = tracker.feed(tokenizer()(json.dumps(reply), add_special_tokens=False)["input_ids"])
    assert [s.words for s in found] == [8, 1, 0]
    assert [s.start for s in found] == [0.0, 7.5, 22.5]


def test_the_chunks_vad_speech_becomes_speech_token_spans_from_the_chunks_start():
    from engine.backends.vibevoice.anchor import voiced_spans
    from engine.types import Chunk, SpeechSegment

    speech = (SpeechSegment(12.0, 13.5), SpeechSegment(10.2, 11.0), SpeechSegment(40.0, 45.0))
    chunk = Chunk(0, 10.0, 20.0, speech)
    assert voiced_spans(chunk, (7, 7 + 75)) == ((1, 8), (15, 27))  # past the chunk's end: dropped
    assert voiced_spans(Chunk(0, 10.0, 20.0), (0, 75)) == ()  # no VAD spans: all of it is speech


def test_vad_spans_are_clipped_to_the_chunk_and_empty_ones_dropped():
    from engine.backends.vibevoice.anchor import voiced_spans
    from engine.types import Chunk, SpeechSegment

    early = (SpeechSegment(9.0, 10.6), SpeechSegment(12.0, 12.0))  # starts before the chunk; empty
    assert voiced_spans(Chunk(0, 10.0, 20.0, early), (0, 75)) == ((0, 5),)
    short = (SpeechSegment(10.0, 10.8),)
    assert voiced_spans(Chunk(0, 10.0, 10.8, short), (0, 6)) == ((0, 6),)  # under a second long
    assert voiced_spans(Chunk(0, 10.0, 10.0, (SpeechSegment(10.0, 10.0),)), (0, 0)) == ()


def test_the_segment_still_open_is_read_with_its_times_in_speech_tokens():
    tracker = speech_anchor(tokenizer(), RATE)()
    reply = '[{"Start":0,"End":1.5,"Speaker":0,"Content":"Hi there."},'
    reply += '{"Start":9,"End":12.5,"Speaker":1,"Content":"cut'
    tracker.feed(tokenizer()(reply, add_special_tokens=False)["input_ids"])
    found = tracker.open()
    assert found is not None and (found.start, found.end) == (9 * RATE, 12.5 * RATE)
    closed = speech_anchor(tokenizer(), RATE)()
    closed.feed(tokenizer()(reply.rsplit(",{", 1)[0] + "]", add_special_tokens=False)["input_ids"])
    assert closed.open() is None
