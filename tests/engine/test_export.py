"""Exports: every format carries the speakers' display names and the text; JSON reads back equal;
subtitles come in readable, well-timed cues; RTTM and SegLST load in the scoring tools; a failed
or cancelled export never leaves a half-written file."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import threading
from itertools import pairwise

import docx
import meeteval
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from meeteval.io import SegLST
from pyannote.database.util import load_rttm

from engine.errors import Cancelled, TranscriptFormatError
from engine.export import FORMATS, CueLayout, ExportOptions, export, read_json, render
from engine.export.base import without_folders
from engine.export.cues import split_utterance
from engine.export.json_format import transcript_dict
from engine.export.timefmt import clock, srt_time, vtt_time
from engine.finite import MAX_SECONDS
from engine.types import Chunk, Speaker, SpeechSegment, Transcript, Utterance, Word

LONG = (
    "Welcome everyone to the quarterly planning meeting. Today we will go through the roadmap, "
    "the budget for next year and the hiring plan, and then we will leave some time for questions."
)


def _timed_words(text: str, start: float, pace: float = 0.4) -> tuple[Word, ...]:
    return tuple(Word(start + i * pace, start + i * pace + 0.3, f" {w}") for i, w in enumerate(text.split()))


def meeting() -> Transcript:
    """Two named speakers, one unlabelled utterance, a long utterance with and one without words."""
    return Transcript(
        utterances=(
            Utterance(0.5, 12.0, LONG, "S1"),
            Utterance(12.5, 14.0, "Thanks, Alice.", "S2"),
            Utterance(14.2, 16.0, "Can everyone hear me?", None),
            Utterance(16.5, 29.3, LONG, "S2", words=_timed_words(LONG, 16.5)),
            Utterance(62.0, 64.5, "Let us start with the roadmap.", "S1"),
        ),
        speakers=(Speaker("S1", "Alice"), Speaker("S2", "Bob Stone")),
        duration=65.0,
        source="/recordings/team meeting.wav",
        model="whisper-tiny.en",
        chunks=(Chunk(0, 0.0, 65.0, (SpeechSegment(0.5, 29.3), SpeechSegment(62.0, 64.5))),),
    )


def _srt_cues(text: str) -> list[tuple[int, float, float, list[str]]]:
    """(number, start, end, lines) of every cue of an SRT file."""
    stamp = r"(\d+):(\d\d):(\d\d),(\d{3})"
    cues = []
    for block in text.strip().split("\n\n"):
        number, timing, *lines = block.split("\n")
        m = re.fullmatch(f"{stamp} --> {stamp}", timing)
        assert m, timing
        h1, m1, s1, ms1, h2, m2, s2, ms2 = map(int, m.groups())
        start, end = h1 * 3600 + m1 * 60 + s1 + ms1 / 1000, h2 * 3600 + m2 * 60 + s2 + ms2 / 1000
        cues.append((int(number), start, end, lines))
    return cues


# ---------------------------------------------------------------- time stamps


def test_time_stamps_are_spelled_as_each_format_expects():
    assert srt_time(3723.5) == "01:02:03,500"
    assert vtt_time(3723.5) == "01:02:03.500"
    assert srt_time(0.9996) == "00:00:01,000"
    assert clock(62.9) == "00:01:02"
    assert clock(-3.0) == srt_time(-3.0)[:8] == "00:00:00"
    assert srt_time(100 * 3600) == "100:00:00,000"


# ---------------------------------------------------------------- JSON


finite = st.floats(-MAX_SECONDS, MAX_SECONDS)  # times a transcript can hold (engine.finite)
probability = st.none() | st.floats(allow_nan=False, allow_infinity=False)
words = st.builds(Word, finite, finite, st.text(), probability)
utterances = st.builds(
    Utterance,
    finite,
    finite,
    st.text(),
    st.none() | st.text(max_size=4),
    st.lists(words, max_size=4).map(tuple),
)
speech = st.tuples(st.floats(0, 1e6), st.floats(0, 1e6)).map(lambda p: SpeechSegment(min(p), max(p)))
chunks = st.builds(Chunk, st.integers(), finite, finite, st.lists(speech, max_size=3).map(tuple))
transcripts = st.builds(
    Transcript,
    utterances=st.lists(utterances, max_size=6).map(tuple),
    speakers=st.lists(st.builds(Speaker, st.text(max_size=4), st.text()), max_size=3).map(tuple),
    duration=finite,
    source=st.none() | st.text(),
    model=st.none() | st.text(),
    language=st.text(max_size=5),
    chunks=st.lists(chunks, max_size=3).map(tuple),
)


@settings(max_examples=150, deadline=None)
@given(transcript=transcripts)
def test_json_reads_back_an_equal_transcript(transcript, tmp_path_factory):
    path = tmp_path_factory.mktemp("json") / "t.json"
    export(transcript, path, ["json"])
    assert read_json(path) == without_folders(transcript)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_no_format_reveals_the_folders_the_recording_is_kept_in(fmt, tmp_path):
    t = dataclasses.replace(meeting(), source="/home/zoe.private/clients/acme/team meeting.wav")
    (path,) = export(t, tmp_path, [fmt])
    if fmt == "docx":
        data = "\n".join(p.text for p in docx.Document(str(path)).paragraphs)
        assert "Source: team meeting.wav" in data
    else:
        data = path.read_text(encoding="utf-8")
    assert "zoe.private" not in data and "acme" not in data
    windows = dataclasses.replace(t, source=r"C:\Users\zoe.private\team meeting.wav")
    assert without_folders(windows).source == "team meeting.wav"


def test_the_json_formats_data_is_what_its_file_holds():
    t = meeting()
    assert transcript_dict(t) == json.loads(render(t, "json"))


def test_json_file_names_its_format_and_version(tmp_path):
    (path,) = export(meeting(), tmp_path, ["json"])
    data = json.loads(path.read_text(encoding="utf-8"))
    assert (data["format"], data["version"]) == ("murmur-transcript", 1)
    assert data["speakers"] == [{"id": "S1", "name": "Alice"}, {"id": "S2", "name": "Bob Stone"}]


HEADER = '{"format": "murmur-transcript", "version": 1'


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("this is not json", "not valid JSON"),
        ('[{"session_id": "x"}]', "murmur-transcript"),
        ('{"format": "murmur-transcript", "version": 7, "utterances": []}', "newer Murmur"),
        (f'{HEADER}, "utterances": [{{"start": "0"}}]}}', "utterances[0].start"),
        (f'{HEADER}, "utterances": [{{"start": 0, "end": 1}}]}}', "utterances[0].text"),
        (f'{HEADER}, "chunks": [{{"index": 0, "start": 0, "end": 1, "speech": [[2, 1]]}}]}}', "speech[0]"),
    ],
)
def test_reading_a_foreign_or_broken_file_says_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "broken.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TranscriptFormatError, match=re.escape(message)) as caught:
        read_json(path)
    assert str(path) in str(caught.value)


def test_reading_a_missing_transcript_is_a_user_error(tmp_path):
    with pytest.raises(TranscriptFormatError, match="cannot read transcript"):
        read_json(tmp_path / "nowhere.json")


# ---------------------------------------------------------------- subtitles


def test_srt_cues_are_numbered_ordered_readable_and_keep_every_word():
    cues = _srt_cues(render(meeting(), "srt").decode())

    assert [n for n, *_ in cues] == list(range(1, len(cues) + 1))
    assert all(a[1] <= b[1] for a, b in pairwise(cues))
    assert all(len(lines) <= 2 and all(len(line) <= 42 for line in lines) for *_, lines in cues)
    assert all(end - start <= 7.0 + 1e-3 for _, start, end, _ in cues)
    # each long utterance (190 characters) needs at least three cues, every short one exactly one
    assert len(cues) >= 3 + 1 + 1 + 3 + 1
    texts = [" ".join(lines) for *_, lines in cues]
    alice = " ".join(t.removeprefix("Alice: ") for t in texts if t.startswith("Alice: "))
    assert alice == f"{LONG} Let us start with the roadmap."
    assert "Can everyone hear me?" in texts  # no speaker: no label
    bob = " ".join(t.removeprefix("Bob Stone: ") for t in texts if t.startswith("Bob Stone: "))
    assert bob == f"Thanks, Alice. {LONG}"
    assert len(texts) == sum(t.startswith(("Alice: ", "Bob Stone: ")) for t in texts) + 1


def test_split_cues_follow_word_timings_when_present():
    u = meeting().utterances[3]
    cues = split_utterance(u, CueLayout())
    starts, ends = {w.start for w in u.words}, {w.end for w in u.words}
    assert len(cues) >= 3
    assert all(c.start in starts and c.end in ends for c in cues)
    assert cues[0].start == u.words[0].start and cues[-1].end == u.words[-1].end


def test_split_cues_share_time_by_characters_without_words():
    u = meeting().utterances[0]
    cues = split_utterance(u, CueLayout())
    assert cues[0].start == u.start and cues[-1].end == pytest.approx(u.end)
    assert all(a.end == pytest.approx(b.start) for a, b in pairwise(cues))
    # a cue's share of the time follows its share of the characters
    chars = [len(" ".join(c.lines)) for c in cues]
    for cue, n in zip(cues, chars, strict=True):
        assert (cue.end - cue.start) / u.duration == pytest.approx(n / sum(chars), abs=0.03)


@settings(max_examples=150, deadline=None)
@given(
    text=st.lists(st.text("abcdefghij,.?", min_size=1, max_size=60), min_size=1, max_size=60).map(" ".join),
    seconds=st.floats(0.5, 120),
    prefix=st.sampled_from(["", "Alice:", "Bob Stone:"]),
)
def test_any_utterance_splits_into_cues_within_the_limits(text, seconds, prefix):
    layout = CueLayout()
    cues = split_utterance(Utterance(10.0, 10.0 + seconds, text), layout, prefix)
    shown = []
    for cue in cues:
        assert 1 <= len(cue.lines) <= layout.max_lines
        assert all(len(line) <= layout.max_chars for line in cue.lines)
        words = " ".join(cue.lines).removeprefix(prefix).split()
        assert cue.end - cue.start <= layout.max_seconds + 1e-9 or len(words) == 1
        shown.extend(words)
    assert "".join(shown) == "".join(text.split())  # nothing lost; over-long words are cut
    assert all(a.end <= b.start + 1e-9 for a, b in pairwise(cues))


def test_vtt_names_speakers_as_voices_and_escapes_markup():
    markup = Utterance(70, 72, "a <b> & c", "S1")
    t = dataclasses.replace(meeting(), utterances=(*meeting().utterances, markup))
    text = render(t, "vtt").decode()
    assert text.startswith("WEBVTT\n\n")
    assert "<v Alice>Welcome everyone" in text and "<v Bob Stone>Thanks, Alice." in text
    assert "\nCan everyone hear me?\n" in text
    assert "<v Alice>a &lt;b&gt; &amp; c" in text
    assert re.search(r"\n00:00:00\.500 --> \d\d:\d\d:\d\d\.\d{3}\n", text)


# ---------------------------------------------------------------- reading formats


def test_txt_has_time_and_speaker_headers_and_can_drop_times():
    text = render(meeting(), "txt").decode()
    assert text.startswith(f"[00:00:00] Alice\n{LONG}\n\n[00:00:12] Bob Stone\nThanks, Alice.\n\n")
    assert "\n[00:00:14]\nCan everyone hear me?\n" in text
    plain = render(meeting(), "txt", ExportOptions(timestamps=False)).decode()
    assert "[" not in plain and plain.startswith(f"Alice\n{LONG}\n\nBob Stone\n")


def test_merging_speakers_joins_consecutive_turns_only():
    turns = (Utterance(0, 1, "One.", "S1"), Utterance(1, 2, "Two.", "S1"), Utterance(2, 3, "Three.", "S2"))
    t = dataclasses.replace(meeting(), utterances=turns)
    text = render(t, "txt", ExportOptions(merge_speakers=True)).decode()
    assert text == "[00:00:00] Alice\nOne. Two.\n\n[00:00:02] Bob Stone\nThree.\n"


def test_docx_shows_title_speakers_bold_names_times_and_texts(tmp_path):
    (path,) = export(meeting(), tmp_path, ["docx"])
    document = docx.Document(str(path))
    paragraphs = document.paragraphs
    assert paragraphs[0].text == "team meeting"
    body = "\n".join(p.text for p in paragraphs)
    assert "Source: team meeting.wav" in body and "Duration: 00:01:05" in body
    assert "Alice — 00:00:14 in 2 utterances" in body and "Bob Stone — 00:00:14 in 2 utterances" in body
    turns = [p for p in paragraphs if p.runs and p.runs[0].bold]
    assert [p.runs[0].text for p in turns] == ["Alice", "Bob Stone", "Bob Stone", "Alice"]
    assert turns[0].text == f"Alice  00:00:00\n{LONG}"
    assert any(p.text == "00:00:14\nCan everyone hear me?" for p in paragraphs)


# ---------------------------------------------------------------- scoring formats


def test_rttm_loads_in_pyannote_with_each_speakers_speech_time(tmp_path):
    (path,) = export(meeting(), tmp_path, ["rttm"])
    annotation = load_rttm(str(path))["team_meeting"]
    assert annotation.label_duration("Alice") == pytest.approx(11.5 + 2.5, abs=2e-3)
    assert annotation.label_duration("Bob_Stone") == pytest.approx(1.5 + 12.8, abs=2e-3)
    assert annotation.label_duration("unknown") == pytest.approx(1.8, abs=2e-3)


def test_seglst_loads_in_meeteval(tmp_path):
    pytest.importorskip("simplejson", reason="meeteval's SegLST.load needs simplejson")
    (path,) = export(meeting(), tmp_path, ["seglst"])
    segments = SegLST.load(path)
    assert len(segments) == len(meeting().utterances)
    assert {s["session_id"] for s in segments} == {"team_meeting"}
    assert [s["speaker"] for s in segments] == ["Alice", "Bob Stone", "unknown", "Bob Stone", "Alice"]
    assert segments[1]["words"] == "Thanks, Alice." and float(segments[3]["end_time"]) == 29.3


def test_seglst_scores_in_meeteval_with_speakers_and_words_kept():
    reference = meeting()
    changed = Utterance(12.5, 14.0, "Thanks, Alex.", "S2")
    hypothesis = dataclasses.replace(
        reference, utterances=(*reference.utterances[:1], changed, *reference.utterances[2:])
    )
    ref, hyp = (SegLST(json.loads(render(t, "seglst"))) for t in (reference, hypothesis))
    score = meeteval.wer.cpwer(ref, hyp)["team_meeting"]
    assert (score.errors, score.length, score.scored_speaker) == (1, len(reference.text.split()), 3)


def test_a_renamed_speaker_appears_under_the_new_name_everywhere():
    speakers = (Speaker("S1", "Dr Ada Lovelace"), Speaker("S2", "Bob Stone"))
    renamed = dataclasses.replace(meeting(), speakers=speakers)
    for fmt in FORMATS:
        data = render(renamed, fmt)
        if fmt == "docx":
            data = "\n".join(p.text for p in docx.Document(io.BytesIO(data)).paragraphs).encode()
        text = data.decode()
        expected = "Dr_Ada_Lovelace" if fmt == "rttm" else "Dr Ada Lovelace"
        assert expected in text, fmt
        assert "Alice" not in text.replace("Thanks, Alice.", ""), fmt


# ---------------------------------------------------------------- files


def test_export_names_files_after_the_source_in_a_folder(tmp_path):
    paths = export(meeting(), tmp_path / "out", FORMATS)
    names = sorted(p.name for p in paths)
    assert names == sorted(f"team meeting{e.suffix}" for e in FORMATS.values())
    assert all(p.stat().st_size > 0 for p in paths)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == names


def test_export_to_a_file_path_swaps_format_suffixes(tmp_path):
    paths = export(meeting(), tmp_path / "talk.srt", ["srt", "seglst", "json"])
    assert [p.name for p in paths] == ["talk.srt", "talk.seglst.json", "talk.json"]
    assert export(meeting(), tmp_path / "notes.text", ["txt"]) == [tmp_path / "notes.text"]


def test_unknown_format_is_refused_before_writing(tmp_path):
    with pytest.raises(ValueError, match="pdf"):
        export(meeting(), tmp_path, ["txt", "pdf"])
    assert list(tmp_path.iterdir()) == []


def test_a_failing_export_leaves_the_old_file_untouched_and_no_debris(tmp_path):
    target = tmp_path / "talk.json"
    target.write_text("previous version", encoding="utf-8")
    broken = dataclasses.replace(
        meeting(), utterances=(*meeting().utterances, Utterance(70.0, float("nan"), "bad time"))
    )
    with pytest.raises(ValueError):
        export(broken, target, ["json"])  # fails after most of the file was streamed
    assert target.read_text(encoding="utf-8") == "previous version"
    assert [p.name for p in tmp_path.iterdir()] == ["talk.json"]


def test_a_cancelled_export_writes_nothing(tmp_path):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        export(meeting(), tmp_path, ["srt", "docx"], cancel=cancel)
    assert list(tmp_path.iterdir()) == []


def test_options_are_validated():
    with pytest.raises(ValueError, match="timestamps"):
        ExportOptions(timestamps="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        CueLayout(max_chars=3)
    with pytest.raises(ValueError):
        CueLayout(max_seconds=0)


def test_names_and_texts_outside_ascii_survive_every_text_format(tmp_path):
    t = dataclasses.replace(meeting(), speakers=(Speaker("S1", "Zoë"), Speaker("S2", "李雷")))
    for path in export(t, tmp_path, ["srt", "vtt", "txt", "rttm", "seglst"]):
        text = path.read_text(encoding="utf-8")
        assert "Zoë" in text and "李雷" in text, path.name
