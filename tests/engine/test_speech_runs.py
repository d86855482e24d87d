"""Speech segments drawn from VAD probabilities match silero-vad's own drawing, without torch."""

import subprocess
import sys

import numpy as np
import pytest

from engine.audio.speech_runs import FRAME, speech_runs


def _probabilities(seed: int, n: int = 4000) -> list[float]:
    rng = np.random.default_rng(seed)
    walk = np.convolve(rng.normal(size=n), np.ones(12) / 12, "same")  # slow swings through 0.5
    return (1 / (1 + np.exp(-6 * walk))).tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("speech", "silence", "pad"), [(250, 500, 30), (0, 160, 400), (250, 100, 200)])
def test_segments_equal_silero_vads_own(seed, speech, silence, pad):
    from silero_vad.utils_vad import get_speech_timestamps_from_probs

    probs = _probabilities(seed)
    n = len(probs) * FRAME - 100
    theirs = get_speech_timestamps_from_probs(
        probs, threshold=0.5, min_speech_duration_ms=speech, min_silence_duration_ms=silence,
        speech_pad_ms=pad, audio_length_samples=n,
    )  # fmt: skip
    ours = speech_runs(probs, n, 0.5, speech, silence, pad)
    assert len(ours) > 5
    assert ours == [(s["start"], s["end"]) for s in theirs]


def test_finding_speech_does_not_import_torch():
    code = (
        "import sys, numpy as np\n"
        "from engine.audio.vad import SileroVad\n"
        "from engine.types import Recording\n"
        "t = np.arange(32000) / 16000\n"
        "audio = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)\n"
        "SileroVad().detect(Recording(audio, 16000))\n"
        "import engine.pipeline\n"
        "print('torch' in sys.modules, 'scipy.signal' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
