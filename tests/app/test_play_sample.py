"""Play Sample in the Known Voices window, by clicks: a sample from a recording that is not the open
one is decoded from its file (just the sample's time range) when that file is beside the open
recording or among the recent files, and a recording that is gone is said so in one sentence.
The library and the recordings are real files in a temporary folder."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from qt_helpers import DEMO, run_window_on_sink, wait_until

from app.sample_player import sample_places
from engine.voices import EmbeddingModel, VoiceLibrary, VoiceSample, library_path

ROOT = Path(__file__).resolve().parents[2]
GE2E = EmbeddingModel("resemblyzer-ge2e", "1", 256)
START, END = 30.8, 39.9


def store_carol() -> VoiceLibrary:
    """Carol's voice in the user's library, her sample from 30.8–39.9 s of a recording called meeting.flac."""
    library = VoiceLibrary(library_path(None))
    vector = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    library.add("Carol", [VoiceSample(vector, GE2E, "meeting.flac", START, END)])
    return library


@pytest.fixture
def library(tmp_path, monkeypatch) -> VoiceLibrary:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return store_carol()


def recording(path: Path) -> Path:
    """Another meeting: five seconds of a tone."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tone = 0.2 * np.sin(2 * np.pi * 220 * np.arange(16000 * 5) / 16000)
    sf.write(path, tone.astype(np.float32), 16000, format="FLAC", subtype="PCM_16")
    return path


def open_recording(window, path: Path) -> None:
    assert window.open_path(path)
    wait_until(lambda: not window.session.busy and window.session.audio is not None, timeout=120)


def play_carol(window) -> str:
    window.actions_by_name["known_voices"].trigger()
    dialog = window.voices.dialog
    dialog.list.setCurrentRow(0)
    QTest.mouseClick(dialog.play_button, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    return dialog.status.text()


def demo_range() -> np.ndarray:
    full, rate = sf.read(DEMO, dtype="float32")
    return full[round(START * rate) : round(END * rate)]


def playing_or_no_device(window, status: str, from_file: str) -> bool:
    """What the status line says when the clip was handed to playback: it plays, or this machine
    has no sound device (then the reason, as everywhere in the window)."""
    return status in (f"Playing Carol from {from_file} ({START:.1f}–{END:.1f} s)", window.playback.reason)


def test_a_sample_from_a_recording_beside_the_open_one_plays_from_its_file(make_window, library, tmp_path):
    # catches: Play Sample refusing because another recording is open, or the wrong range decoded
    folder = tmp_path / "meetings"
    open_recording(window := make_window(), recording(folder / "tuesday.flac"))
    shutil.copy(DEMO, folder / "meeting.flac")
    status = play_carol(window)
    assert playing_or_no_device(window, status, "meeting.flac"), status
    np.testing.assert_array_equal(window.voices.samples.clip.samples, demo_range())


def test_a_sample_from_a_recent_file_elsewhere_plays_from_that_file(make_window, library, tmp_path):
    # catches: only the open recording's folder searched, never the recent files
    elsewhere = tmp_path / "archive" / "meeting.flac"
    elsewhere.parent.mkdir()
    shutil.copy(DEMO, elsewhere)
    window = make_window()
    window.store.add_recent_file(str(elsewhere))
    open_recording(window, recording(tmp_path / "meetings" / "tuesday.flac"))
    status = play_carol(window)
    assert playing_or_no_device(window, status, "meeting.flac"), status
    assert window.voices.samples.clip.source == elsewhere


def test_a_recording_that_is_gone_is_said_in_one_sentence(make_window, library, tmp_path):
    # catches: a crash or a silent nothing when the sample's file is not on this computer any more
    window = make_window()
    window.store.add_recent_file(str(tmp_path / "archive" / "meeting.flac"))  # since deleted
    open_recording(window, recording(tmp_path / "meetings" / "tuesday.flac"))
    status = play_carol(window)
    assert status == ("meeting.flac, the recording Carol's sample came from, is neither beside the open "
                      "recording or project nor among the recent files any more")  # fmt: skip
    assert window.voices.samples.clip is None


def stereo_meeting(path: Path) -> tuple[Path, np.ndarray]:
    """Five seconds of 440 Hz on the left and 660 Hz on the right: (path, the right side)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(16000 * 5) / 16000
    left, right = (0.3 * np.sin(2 * np.pi * hz * t).astype(np.float32) for hz in (440, 660))
    sf.write(path, np.stack([left, right], axis=1), 16000, subtype="FLOAT")
    return path, right


@pytest.mark.parametrize("channel", [1, None])
def test_a_sample_from_one_side_of_the_open_stereo_recording_plays_that_side_not_the_mix(
    make_window, tmp_path, monkeypatch, channel
):
    # catches: the open recording's playback (its mix) used for a sample taken from one of its channels
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path, right = stereo_meeting(tmp_path / "meetings" / "stereo.wav")
    vector = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    VoiceLibrary(library_path(None)).add(
        "Carol", [VoiceSample(vector, GE2E, "stereo.wav", 1.0, 3.0, channel=channel)]
    )
    open_recording(window := make_window(), path)  # opened as the mix of its two sides
    status = play_carol(window)
    clip = window.voices.samples.clip
    reason = window.playback.reason  # this machine's sound device missing: said instead of "Playing"
    if channel is None:  # the sample is the open recording as it is heard: its own playback plays it
        assert clip is None
        assert status == (reason or "Playing Carol from stereo.wav at 1.0 s"), status
        return
    assert status == (reason or "Playing Carol from stereo.wav (1.0–3.0 s)"), status
    assert clip is not None and clip.channel == 1
    np.testing.assert_allclose(clip.samples, right[16000 : 3 * 16000], atol=1e-6)


def test_a_sample_that_does_not_say_its_recording_is_said_so(make_window, tmp_path, monkeypatch):
    # catches: a sample with a time range but no recording looked for under an empty name
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    vector = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    VoiceLibrary(library_path(None)).add("Carol", [VoiceSample(vector, GE2E, None, 1.0, 3.0)])
    window = make_window()
    window.store.add_recent_file(str(recording(tmp_path / "meetings" / "tuesday.flac")))
    assert play_carol(window) == "Carol's sample does not say which part of which recording it came from"


def test_the_places_a_recording_is_looked_for_come_in_order_without_repeats(tmp_path):
    # catches: a recent file of another name taken for the recording itself
    open_one, project = tmp_path / "a" / "tuesday.flac", tmp_path / "p" / "notes.murmur"
    recent = [str(tmp_path / "b" / "meeting.flac"), str(tmp_path / "c" / "monday.flac"), str(open_one)]
    assert sample_places("meeting.flac", open_one, project, recent) == [
        tmp_path / "a" / "meeting.flac", tmp_path / "p" / "meeting.flac", tmp_path / "b" / "meeting.flac",
        tmp_path / "c" / "meeting.flac"]  # fmt: skip


SCRIPT = textwrap.dedent(r"""
    import json, os, shutil, sys, time
    from pathlib import Path
    from PySide6.QtWidgets import QApplication
    sys.path.insert(0, "tests/app")
    from qt_helpers import DEMO, make_store, wait_until
    from test_play_sample import open_recording, play_carol, recording, store_carol
    from app.main_window import MainWindow

    app = QApplication([])
    folder = Path(sys.argv[1])
    os.environ["XDG_DATA_HOME"] = str(folder / "data")
    store_carol()
    window = MainWindow(store=make_store(folder), recovery_dir=folder / "recovery")
    window.ask_before_closing = False
    window.show()
    open_recording(window, recording(folder / "meetings" / "tuesday.flac"))
    shutil.copy(DEMO, folder / "meetings" / "meeting.flac")
    status = play_carol(window)
    samples = window.voices.samples
    wait_until(lambda: samples.position > 1.0, timeout=20)  # a second of the clip heard
    out = {"reason": window.playback.reason, "status": status, "playing": samples.playing,
           "open_one_playing": window.playback.playing}
    window.close()
    out["after_close"] = samples.playing
    print(json.dumps(out))
""")


def test_a_sample_from_another_recording_is_heard_on_a_real_sound_device(tmp_path):
    # catches: the clip decoded but never handed to a player, or left playing after the window closed
    out = run_window_on_sink(SCRIPT, tmp_path)
    assert out["status"] == f"Playing Carol from meeting.flac ({START:.1f}–{END:.1f} s)"
    assert out["playing"] and not out["open_one_playing"] and not out["after_close"]
