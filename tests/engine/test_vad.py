"""Voice-activity detection finds the demo meeting's speech, at any input rate, and can be cancelled."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from engine.audio.io import load_audio
from engine.audio.speech_runs import speech_runs
from engine.audio.vad import PyannoteVad, SileroVad, VadConfig
from engine.errors import Cancelled
from engine.types import Recording, SpeechSegment

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo"


def reference_speech(rttm: Path) -> list[SpeechSegment]:
    turns = []
    for line in rttm.read_text().splitlines():
        f = line.split()
        if f and f[0] == "SPEAKER":
            turns.append(SpeechSegment(float(f[3]), float(f[3]) + float(f[4])))
    return turns


def frame_mask(segments: list[SpeechSegment], duration: float, step: float = 0.01) -> np.ndarray:
    mask = np.zeros(int(np.ceil(duration / step)), bool)
    for s in segments:
        mask[int(s.start / step) : int(np.ceil(s.end / step))] = True
    return mask


@pytest.fixture(scope="module")
def demo16k() -> Recording:
    return load_audio(DEMO / "meeting.flac", 16000)


@pytest.mark.parametrize("rate", [16000, 24000])
def test_vad_marks_the_demo_meeting_speech_frame_accurately(rate):
    recording = load_audio(DEMO / "meeting.flac", rate)
    found = SileroVad().detect(recording)
    ref = frame_mask(reference_speech(DEMO / "meeting.rttm"), recording.duration)
    hyp = frame_mask(found, recording.duration)[: len(ref)]
    accuracy = float(np.mean(ref == hyp))
    assert accuracy >= 0.9, f"frame accuracy {accuracy:.3f}"
    assert found == sorted(found)


def test_vad_defaults_are_500_ms_of_silence_and_250_ms_of_speech():
    cfg = VadConfig()
    assert (cfg.min_silence_ms, cfg.min_speech_ms) == (500, 250)


def test_speech_probabilities_do_not_depend_on_the_vad_thread_count(demo16k):
    one = SileroVad(VadConfig(threads=1)).speech_probabilities(demo16k)
    two = SileroVad(VadConfig(threads=2)).speech_probabilities(demo16k)
    assert len(one) == -(-len(demo16k.samples) // 512)  # one per 32 ms frame, the last one padded
    np.testing.assert_array_equal(one, two)


def test_speech_probabilities_do_not_depend_on_the_block_length(demo16k, monkeypatch):
    whole = SileroVad().speech_probabilities(demo16k)  # 60 s blocks
    monkeypatch.setattr("engine.audio.vad.BLOCK_FRAMES", 100)  # 3.2 s blocks: the state carries over
    np.testing.assert_array_equal(SileroVad().speech_probabilities(demo16k), whole)


def test_vad_threads_must_not_be_negative():
    with pytest.raises(ValueError, match="threads"):
        VadConfig(threads=-1)


def test_silence_has_no_speech():
    assert SileroVad().detect(Recording(np.zeros(16000 * 5, np.float32), 16000)) == []


def test_vad_reports_progress_and_stops_when_cancelled(demo16k):
    seen: list[tuple[float, float]] = []
    SileroVad().detect(demo16k, on_progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == pytest.approx(demo16k.duration)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        SileroVad().detect(demo16k, cancel=cancel)


def test_a_pyannote_vad_pipeline_object_is_accepted(demo16k):
    """The pyannote path runs the real pyannote pipeline code on the in-memory waveform
    (randomly initialised weights: the hub is not reachable, so only the wiring is checked)."""
    import torch
    from pyannote.audio.core.task import Problem, Resolution, Specifications
    from pyannote.audio.models.segmentation import PyanNet
    from pyannote.audio.pipelines import VoiceActivityDetection

    torch.manual_seed(0)
    model = PyanNet(sincnet={"stride": 10})
    model.specifications = Specifications(
        problem=Problem.BINARY_CLASSIFICATION, resolution=Resolution.FRAME, duration=5.0, classes=["speech"]
    )
    model.build()
    pipeline = VoiceActivityDetection(segmentation=model)
    pipeline.instantiate({"onset": 0.5, "offset": 0.5, "min_duration_on": 0.0, "min_duration_off": 0.0})
    found = PyannoteVad(pipeline).detect(demo16k)
    assert all(0 <= s.start <= s.end <= demo16k.duration for s in found)
    assert found == sorted(found)


@pytest.fixture(scope="module")
def demo_probs(demo16k) -> list[float]:
    return SileroVad().speech_probabilities(demo16k).tolist()


@pytest.mark.parametrize(
    ("threshold", "min_speech_ms", "min_silence_ms", "pad_ms"),
    [(0.5, 250, 500, 30), (0.3, 0, 100, 200), (0.8, 1000, 0, 0)],
)
def test_speech_segments_match_silero_s_own_rule_without_needing_torch(
    demo16k, demo_probs, threshold, min_speech_ms, min_silence_ms, pad_ms
):
    from silero_vad.utils_vad import get_speech_timestamps_from_probs

    rng = np.random.default_rng(0)
    flicker = np.repeat(rng.random(300), rng.integers(1, 80, 300)).tolist()  # runs of random levels
    for probs, samples in ((demo_probs, len(demo16k.samples)), (flicker, len(flicker) * 512 - 100)):
        ours = speech_runs(probs, samples, threshold, min_speech_ms, min_silence_ms, pad_ms)
        silero = get_speech_timestamps_from_probs(
            probs, 16000, threshold, min_speech_ms, min_silence_duration_ms=min_silence_ms,
            speech_pad_ms=pad_ms, audio_length_samples=samples,
        )  # fmt: skip
        assert ours == [(t["start"], t["end"]) for t in silero] and len(ours) > 1



def test_pauses_inside_speech_lie_in_the_detected_speech_and_segments_are_unchanged(demo16k):
    vad = SileroVad()
    speech, pauses = vad.detect_with_pauses(demo16k)
    assert speech == vad.detect(demo16k)  # the diarizer's segments do not change
    inside = [p for p in pauses if any(s.start < p < s.end for s in speech)]
    assert len(inside) >= 10  # the demo's turns hold many short pauses the 500 ms rule does not cut
    assert pauses == sorted(pauses)
