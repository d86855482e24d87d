"""The desktop bundle (`make app-bundle`), built from this checkout with PyInstaller: it carries no
torch, its command line and its app each transcribe the bundled demo with the default backend
well enough, and the app window starts on a recording, loads it (it lands in Open Recent)
and keeps running.

Building takes minutes, so these tests are slow. MURMUR_BUNDLE=dist/Murmur checks a bundle
already built instead of building one into a temporary folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.evaluation.metrics import score_recording
from engine.evaluation.reference import Reference, hypothesis_segments, in_reading_order, parse_stm
from engine.export import read_json

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
STM = ROOT / "resources" / "demo" / "meeting.stm"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("MURMUR_BUNDLE")
    if given:
        return Path(given).resolve()
    work = tmp_path_factory.mktemp("bundle")
    env = {**os.environ, "PY": sys.executable, "DIST": str(work / "dist"), "WORK": str(work / "build")}
    subprocess.run(["bash", "packaging/build.sh"], cwd=ROOT, env=env, check=True, timeout=3600)
    return work / "dist" / "Murmur"


@pytest.fixture()
def user_env(tmp_path: Path) -> dict[str, str]:
    """A user's environment: a fresh home, offscreen, nothing pointing into this checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    home = tmp_path / "home"
    fresh = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    return {**env, **fresh, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1"}


def demo_in(bundle: Path) -> Path:
    return bundle / "_internal" / "resources" / "demo" / "meeting.flac"


def scores(transcript_json: Path) -> tuple[float, float]:
    """(WER, cpWER) of a Murmur JSON transcript of the demo against its reference."""
    reference = Reference("meeting", in_reading_order(parse_stm(STM.read_text(), "meeting")))
    result = score_recording(reference, hypothesis_segments(read_json(transcript_json)))
    assert result.wer is not None and result.cpwer is not None
    return result.wer.rate, result.cpwer.rate


def test_the_default_bundle_carries_no_torch(bundle):
    internal = bundle / "_internal"
    assert (bundle / "murmur-app").is_file() and (bundle / "murmur").is_file()
    assert not (internal / "torch").exists() and not list(internal.glob("libtorch*"))
    assert (internal / "engine" / "speakers" / "ge2e.onnx").is_file()


def test_the_bundled_command_line_transcribes_the_demo_with_speakers(bundle, user_env, tmp_path):
    done = subprocess.run(
        [str(bundle / "murmur"), "transcribe", str(demo_in(bundle)), "--out", str(tmp_path), "-q",
         "--format", "json,txt,srt,vtt,docx,rttm,seglst"],
        capture_output=True, text=True, env=user_env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    wer, cpwer = scores(tmp_path / "meeting.json")
    assert wer <= 0.15 and cpwer <= 0.20, (wer, cpwer)  # measured 0.087 and 0.098
    assert "I'd like to keep this meeting short" in (tmp_path / "meeting.txt").read_text()


def test_the_bundled_app_opens_and_transcribes_the_demo(bundle, user_env, tmp_path):
    done = subprocess.run(
        [str(bundle / "murmur-selftest"), str(tmp_path / "app.json")],
        capture_output=True, text=True, env=user_env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 speakers" in done.stdout
    wer, cpwer = scores(tmp_path / "app.json")
    assert wer <= 0.15 and cpwer <= 0.20, (wer, cpwer)


def opened_recently(home: Path) -> str:
    """The app's remembered settings (where its Open Recent list lives), '' before it writes them."""
    conf = home / ".config" / "Murmur" / "Murmur.conf"
    return conf.read_text(errors="replace") if conf.is_file() else ""


def wait_for_recent(app: subprocess.Popen, home: Path, name: str, timeout: float = 180.0) -> bool:
    """Until the running app lists `name` under Open Recent (written once the recording has loaded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and app.poll() is None:
        if name in opened_recently(home):
            return True
        time.sleep(0.5)
    return False


def test_the_bundled_app_window_starts_on_a_recording(bundle, user_env):
    app = subprocess.Popen(
        [str(bundle / "murmur-app"), str(demo_in(bundle))],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=user_env,
    )  # fmt: skip
    loaded = wait_for_recent(app, Path(user_env["HOME"]), "meeting.flac")
    running = app.poll() is None
    app.terminate()
    output = app.communicate(timeout=30)[0]
    assert loaded, "the recording never loaded (not in Open Recent):\n" + output
    assert running, output
    assert "Traceback" not in output and "error" not in output.lower(), output


def test_vibevoice_in_the_default_bundle_says_what_is_missing(bundle, user_env, tmp_path):
    done = subprocess.run(
        [str(bundle / "murmur"), "transcribe", str(demo_in(bundle)), "--backend", "vibevoice",
         "--out", str(tmp_path)],
        capture_output=True, text=True, env=user_env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1 and "VibeVoice backend needs torch" in done.stderr, done.stderr
