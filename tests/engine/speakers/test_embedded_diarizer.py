"""The embedded diarizer (GE2E windows + spectral clustering) on real and synthetic meetings.

DER is pyannote.metrics' `DiarizationErrorRate(collar=0.25, skip_overlap=False)`: a 0.25 s total
collar around each reference boundary (±0.125 s), overlapped speech scored (the embedded diarizer
never outputs overlap, so an overlap costs its shorter side as missed speech).
"""

from __future__ import annotations

import itertools
import threading

import pytest
from speaker_sim import RefTurn, der

from engine.audio.resample import resample
from engine.audio.vad import SileroVad
from engine.errors import Cancelled
from engine.speakers.diarization import SpeakerCount
from engine.synth import MeetingConfig, build_meeting
from engine.types import Recording


def hypothesis(diarization) -> list[tuple[float, float, str]]:
    return [(t.start, t.end, t.speaker) for t in diarization.turns]


def test_the_demo_is_diarized_into_its_four_speakers(demo_diarization, demo_turns):
    error = der(demo_turns, hypothesis(demo_diarization))
    print(f"demo DER {error:.4f}, {len(demo_diarization.speakers)} speakers found")
    assert len(demo_diarization.speakers) == 4
    assert error < 0.05


def test_a_24khz_recording_gives_the_same_speakers(diarizer, demo, demo_speech, demo_turns):
    recording = Recording(resample(demo.samples, 16000, 24000), 24000)
    diarization = diarizer.diarize(recording, demo_speech, SpeakerCount(exact=4))
    error = der(demo_turns, hypothesis(diarization))
    print(f"demo at 24 kHz, 4 speakers given: DER {error:.4f}")
    assert error < 0.05


def test_speaker_bounds_are_respected(diarizer, demo, demo_speech):
    assert len(diarizer.diarize(demo, demo_speech, SpeakerCount(maximum=2)).speakers) == 2
    assert len(diarizer.diarize(demo, demo_speech, SpeakerCount(exact=1)).speakers) == 1


def test_turns_lie_inside_speech_and_never_overlap(demo_diarization, demo_speech):
    turns = demo_diarization.turns
    assert all(a.end <= b.start + 1e-9 for a, b in itertools.pairwise(turns))
    assert all(any(s.start - 1e-6 <= t.start and t.end <= s.end + 1e-6 for s in demo_speech) for t in turns)


def test_progress_is_reported_and_cancel_stops_the_work(diarizer, demo, demo_speech):
    seen: list[tuple[float, float]] = []
    cancel = threading.Event()

    def on_progress(done: float, total: float) -> None:
        seen.append((done, total))
        cancel.set()

    with pytest.raises(Cancelled):
        diarizer.diarize(demo, demo_speech, None, on_progress, cancel)
    assert seen and seen[0][1] == pytest.approx(sum(s.duration for s in demo_speech))


def test_no_speech_means_no_turns(diarizer, demo):
    assert diarizer.diarize(demo, []).turns == ()


@pytest.mark.slow
def test_a_ten_minute_meeting_of_five_people(diarizer):
    meeting = build_meeting(MeetingConfig(speakers=5, duration_s=600, seed=7, snr_db=30))
    recording = Recording(meeting.samples, meeting.sample_rate)
    diarization = diarizer.diarize(recording, SileroVad().detect(recording))
    turns = [RefTurn(t.speaker, t.start, t.end, t.text) for t in meeting.turns]
    error = der(turns, hypothesis(diarization))
    print(f"10-minute 5-speaker meeting: DER {error:.4f}, {len(diarization.speakers)} speakers found")
    assert error < 0.25
