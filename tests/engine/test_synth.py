"""Synthetic meetings: espeak word times, seeded layout, references that parse and match the demo."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import meeteval
import numpy as np
import pytest
import soundfile as sf
from meeteval.io import STM, SegLST
from pyannote.database.util import load_rttm

from engine.synth import ROSTER, Espeak, MeetingConfig, SyntheticMeeting, Voice, build_meeting
from engine.synth.__main__ import build_parser, config_from_args, main
from engine.synth.references import SUFFIXES, render_references, write_meeting
from engine.synth.script import BACKCHANNELS, load_corpus

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


@pytest.fixture(scope="module")
def espeak() -> Iterator[Espeak]:
    with Espeak() as synthesiser:
        yield synthesiser


@pytest.fixture(scope="module")
def meeting() -> SyntheticMeeting:
    return build_meeting(MeetingConfig(speakers=4, duration_s=120.0, seed=11, overlap_rate=0.2))


def _power(samples: np.ndarray) -> float:
    return float(np.mean(np.square(samples, dtype=np.float64))) if len(samples) else 0.0


def _speech_mask(meeting: SyntheticMeeting, margin: float = 0.0) -> np.ndarray:
    mask = np.zeros(len(meeting.samples), dtype=bool)
    rate = meeting.sample_rate
    for turn in meeting.turns:
        mask[max(round((turn.start - margin) * rate), 0) : round((turn.end + margin) * rate)] = True
    return mask


# --- espeak ---------------------------------------------------------------------------------------


def test_word_times_lie_inside_the_audio_and_increase(espeak: Espeak) -> None:
    speech = espeak.synthesize("Good morning everyone, let's review the budget. Fine?", Voice("en-us+m3"))
    expected = ["Good", "morning", "everyone", "let's", "review", "the", "budget", "Fine"]
    assert [w.text for w in speech.words] == expected
    for before, after in zip(speech.words, speech.words[1:], strict=False):
        assert before.start < before.end <= after.start < after.end
    assert speech.words[0].start >= 0.0 and speech.words[-1].end <= speech.duration
    assert speech.samples.dtype == np.float32 and speech.sample_rate == 22050


def test_pauses_after_sentences_belong_to_no_word(espeak: Espeak) -> None:
    speech = espeak.synthesize("Yes. Right.", Voice("en+f2"))
    yes, right = speech.words
    assert right.start - yes.end > 0.15  # espeak pauses between sentences
    rate = speech.sample_rate
    pause = speech.samples[round(yes.end * rate) + 1 : round(right.start * rate) - 1]
    assert np.max(np.abs(pause)) <= 8 / 32768  # below -72 dBFS


def test_pairs_espeak_speaks_as_one_entry_still_get_a_time_per_word(espeak: Espeak) -> None:
    # espeak reports one WORD event for "There are" and for "has been"
    speech = espeak.synthesize("There are three things the team has been working on.", Voice("en-us+f4"))
    assert len(speech.words) == 10
    starts = [w.start for w in speech.words]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    assert all(w.end - w.start > 0.03 for w in speech.words)


def test_text_that_would_corrupt_the_reference_is_refused(espeak: Espeak) -> None:
    for text in ("We need a follow-up.", "It costs 10 dollars.", "   "):
        with pytest.raises(ValueError):
            espeak.synthesize(text, Voice("en+f2"))


def test_a_voice_name_espeak_does_not_know_is_refused(espeak: Espeak) -> None:
    with pytest.raises(ValueError, match="en-gb\\+f2"):
        espeak.synthesize("Hello there.", Voice("en-gb+f2"))


def test_a_fresh_synthesiser_repeats_itself_sample_for_sample(espeak: Espeak) -> None:
    espeak.synthesize("Something else first.", Voice("en-us+m3"))  # state a fresh copy does not see
    calls = [("We lost about a week.", Voice("en+f2")), ("Can we delay it?", Voice("en-us+m3"))]
    with Espeak() as first, Espeak() as second:
        for text, voice in calls:
            a, b = first.synthesize(text, voice), second.synthesize(text, voice)
            assert np.array_equal(a.samples, b.samples) and a.words == b.words
    with pytest.raises(RuntimeError, match="closed"):
        first.synthesize("Hello.", Voice("en+f2"))


def test_every_corpus_sentence_gets_a_timed_word_for_every_token(espeak: Espeak) -> None:
    corpus = load_corpus()
    sentences = corpus.all_sentences + BACKCHANNELS
    assert len(set(corpus.all_sentences)) >= 300
    assert not any(re.search(r"[0-9\-]", s) for s in sentences)
    for index, sentence in enumerate(sentences):
        voice = ROSTER[index % len(ROSTER)].voice
        words = espeak.synthesize(sentence, voice).words
        assert len(words) == len(sentence.split()), sentence
        assert all(w.end > w.start for w in words), sentence


# --- meetings -------------------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_meeting(meeting: SyntheticMeeting) -> None:
    again = build_meeting(meeting.config)
    assert render_references(again) == render_references(meeting)
    assert np.array_equal(again.samples, meeting.samples)


def test_another_seed_gives_another_meeting(meeting: SyntheticMeeting) -> None:
    other = build_meeting(MeetingConfig(speakers=4, duration_s=120.0, seed=12, overlap_rate=0.2))
    assert [t.text for t in other.turns] != [t.text for t in meeting.turns]


@pytest.mark.parametrize(("speakers", "duration_s"), [(1, 60.0), (3, 90.0), (8, 240.0)])
def test_speaker_count_and_duration_are_honoured(speakers: int, duration_s: float) -> None:
    meeting = build_meeting(MeetingConfig(speakers=speakers, duration_s=duration_s, seed=5))
    assert abs(meeting.duration - duration_s) <= 0.1 * duration_s
    assert {t.speaker for t in meeting.turns} == {p.id for p in meeting.participants}
    assert len(meeting.participants) == speakers
    assert len({p.voice for p in meeting.participants}) == speakers
    assert meeting.turns[-1].end <= meeting.duration


def test_word_times_lie_inside_the_meeting_and_increase(meeting: SyntheticMeeting) -> None:
    for turn in meeting.turns:
        assert turn.words and turn.start == turn.words[0].start and turn.end == turn.words[-1].end
        assert turn.text == " ".join(w.text for w in turn.words)
        for before, after in zip(turn.words, turn.words[1:], strict=False):
            assert before.start < before.end <= after.start
    assert all(0.0 < t.start < t.end <= meeting.duration for t in meeting.turns)
    starts = [t.start for t in meeting.turns]
    assert starts == sorted(starts)


def test_turns_follow_each_other_after_short_gaps(meeting: SyntheticMeeting) -> None:
    overlapped = {j for _, j in meeting.overlaps()}
    gaps = [
        b.start - max(t.end for t in meeting.turns[:j])
        for j, b in enumerate(meeting.turns)
        if j > 0 and j not in overlapped
    ]
    assert min(gaps) >= 0.2 - 1e-6 and max(gaps) <= 1.5 + 1e-6
    assert any(t.text in {b.rstrip(".") for b in BACKCHANNELS} for t in meeting.turns)
    assert max(len(t.words) for t in meeting.turns) >= 25  # some turns run to several sentences


def test_overlaps_appear_when_asked_and_never_three_voices_at_once(
    meeting: SyntheticMeeting,
) -> None:
    pairs = meeting.overlaps()
    assert len(pairs) >= 2
    for i, j in pairs:
        first, second = meeting.turns[i], meeting.turns[j]
        assert first.speaker != second.speaker
        assert first.end - second.start >= 0.3
    assert all(j == i + 1 for i, j in pairs)  # a turn overlaps only its neighbours
    assert len({i for i, _ in pairs}) == len(pairs)  # so never three voices at once
    quiet = build_meeting(MeetingConfig(speakers=4, duration_s=120.0, seed=11, overlap_rate=0.0))
    assert quiet.overlaps() == ()


def test_speech_is_where_the_references_say(meeting: SyntheticMeeting) -> None:
    inside = _power(meeting.samples[_speech_mask(meeting)])
    outside = _power(meeting.samples[~_speech_mask(meeting, margin=0.05)])
    assert inside > 1e-3 and outside < inside * 1e-6  # clean audio: gaps are silent
    rate = meeting.sample_rate
    words = [w for t in meeting.turns for w in t.words]
    quiet = [
        w
        for w in words
        if _power(meeting.samples[round(w.start * rate) : round(w.end * rate)]) < inside * 1e-3
    ]
    assert len(quiet) <= 0.01 * len(words)


def test_noise_and_reverberation_change_the_audio_not_the_references(meeting: SyntheticMeeting) -> None:
    settings = {"speakers": 4, "duration_s": 120.0, "seed": 11, "overlap_rate": 0.2}
    noisy = build_meeting(MeetingConfig(**settings, snr_db=20.0))  # type: ignore[arg-type]
    echoing = build_meeting(MeetingConfig(**settings, rt60_s=0.5))  # type: ignore[arg-type]
    assert render_references(noisy) == render_references(echoing) == render_references(meeting)

    speech, gaps = _speech_mask(meeting), ~_speech_mask(meeting, margin=0.05)
    snr = 10 * np.log10(_power(noisy.samples[speech]) / _power(noisy.samples[gaps]))
    assert 18.0 < snr < 22.0
    clean_gaps = _power(meeting.samples[gaps])
    assert _power(echoing.samples[gaps]) > 1e3 * max(clean_gaps, 1e-12)  # reverberant tails fill the gaps
    assert 0.7 < _power(echoing.samples) / _power(meeting.samples) < 1.4


def test_audio_comes_at_the_requested_rate() -> None:
    meeting = build_meeting(MeetingConfig(speakers=2, duration_s=60.0, seed=2, sample_rate=8000))
    assert meeting.samples.dtype == np.float32 and meeting.samples.ndim == 1
    assert abs(len(meeting.samples) / 8000 - meeting.duration) < 1e-9 and meeting.duration >= 60.0
    assert meeting.recording().sample_rate == 8000
    assert meeting.transcript().speakers[0].name == "Alice"


@pytest.mark.parametrize(
    "changes",
    [
        {"speakers": 0},
        {"speakers": 9},
        {"seed": -1},
        {"duration_s": 30.0},
        {"duration_s": 4000.0},
        {"overlap_rate": 0.9},
        {"snr_db": 200.0},
        {"rt60_s": 0.0},
        {"gap_s": (1.0, 0.5)},
        {"session_id": "two words"},
    ],
)
def test_impossible_configs_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        MeetingConfig(**changes)  # type: ignore[arg-type]


# --- references and the command line --------------------------------------------------------------


def test_written_references_parse_back(meeting: SyntheticMeeting, tmp_path: Path) -> None:
    paths = write_meeting(meeting, tmp_path / "out" / "m")
    assert [p.name for p in paths] == ["m.flac", *("m" + s for s in SUFFIXES)]
    words = sum(len(t.words) for t in meeting.turns)
    speakers = {p.id for p in meeting.participants}

    utterances = SegLST.load(paths[3])
    assert len(utterances) == len(meeting.turns)
    assert {s["speaker"] for s in utterances} == speakers
    assert {s["session_id"] for s in utterances} == {"meeting"}
    assert len(SegLST.load(paths[4])) == words
    stm = STM.load(paths[2]).to_seglst()
    assert " ".join(s["words"] for s in stm) == " ".join(t.text for t in meeting.turns)

    annotation = load_rttm(paths[1])["meeting"]
    assert set(annotation.labels()) == speakers
    expected = sum(t.end - t.start for t in meeting.turns)
    assert abs(sum(s.duration for s in annotation.itersegments()) - expected) < 0.01 * len(meeting.turns)

    audio, rate = sf.read(paths[0], dtype="float32")
    assert rate == 16000 and audio.ndim == 1 and len(audio) == len(meeting.samples)
    assert np.max(np.abs(audio - meeting.samples)) < 2.0 / 32768


def test_utterance_and_word_files_hold_the_same_words(meeting: SyntheticMeeting) -> None:
    files = render_references(meeting)
    utterances = SegLST.parse(files[".seglst.json"])
    words = SegLST.parse(files[".words.json"])
    result = meeteval.wer.cpwer(utterances, words)["meeting"]
    assert result.errors == 0 and result.length == sum(len(t.words) for t in meeting.turns)


def test_command_line_writes_audio_and_references(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stem = tmp_path / "call"
    assert main([str(stem), "--speakers", "2", "--minutes", "1", "--seed", "3", "--snr-db", "30"]) == 0
    for suffix in (".flac", *SUFFIXES):
        assert stem.with_name("call" + suffix).stat().st_size > 0
    assert "2 speakers" in capsys.readouterr().out
    assert "SPEAKER call 1 " in stem.with_name("call.rttm").read_text()


def test_command_line_rejects_impossible_options(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path / "x"), "--speakers", "9"])
    assert exit_info.value.code == 2
    assert not (tmp_path / "x.flac").exists()


# --- the bundled demo -----------------------------------------------------------------------------


def _demo_config() -> MeetingConfig:
    readme = (DEMO / "README.md").read_text()
    command = next(line.strip() for line in readme.splitlines() if "python -m engine.synth" in line)
    argv = shlex.split(command)
    return config_from_args(build_parser().parse_args(argv[argv.index("engine.synth") + 1 :]))


def test_demo_references_match_a_fresh_generation(espeak: Espeak, tmp_path: Path) -> None:
    # The README's own command, in a fresh interpreter: espeak-ng draws breath noise from libc's
    # process-wide rand(), so a thread left running by an earlier test in this process could shift it.
    readme = (DEMO / "README.md").read_text()
    recorded = re.search(r"espeak-ng (\d+\.\d+)", readme)
    assert recorded is not None
    if espeak.version != recorded.group(1):
        pytest.skip(f"the demo was made with espeak-ng {recorded.group(1)}, this is {espeak.version}")
    command = next(line.strip() for line in readme.splitlines() if "python -m engine.synth" in line)
    argv = shlex.split(command)
    argv[argv.index("engine.synth") + 1] = str(tmp_path / "meeting")
    subprocess.run([sys.executable, *argv[1:]], check=True, cwd=DEMO.parents[1], capture_output=True)
    for suffix in SUFFIXES:
        assert (tmp_path / f"meeting{suffix}").read_text() == (DEMO / f"meeting{suffix}").read_text(), suffix
    audio, rate = sf.read(DEMO / "meeting.flac", dtype="float32")
    fresh, fresh_rate = sf.read(tmp_path / "meeting.flac", dtype="float32")
    assert rate == fresh_rate == 16000 and audio.shape == fresh.shape
    assert np.max(np.abs(audio - fresh)) < 2.0 / 32768


def test_demo_is_a_short_multi_speaker_meeting_with_one_overlap() -> None:
    config = _demo_config()
    assert 3 <= config.speakers <= 4 and config.rt60_s is None and config.snr_db is not None
    meeting = build_meeting(config)
    assert 90.0 <= meeting.duration <= 150.0
    ((i, j),) = meeting.overlaps()
    assert meeting.turns[i].end - meeting.turns[j].start >= 0.5
    assert (DEMO / "meeting.flac").stat().st_size < 5_000_000
    assert sf.info(str(DEMO / "meeting.flac")).channels == 1
