"""Running on a Murmur server: the app against a live `murmur serve` subprocess (whisper tiny.en).

Settings → Run on → A Murmur server, Test connection, then Transcribe (live lines, the server's
transcript and model), Cancel, and Re-transcribe Selection, all through the real worker thread."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from qt_helpers import open_demo, wait_until

from app.settings import TranscribeSettings
from app.widgets.settings_dialog import SettingsDialog
from engine.audio.io import load_audio
from engine.pipeline import Pipeline, PipelineConfig
from engine.speakers import SpeakerConfig
from tests.engine.serve.conftest import ROOT, server, write_flac


@pytest.fixture(scope="module")
def served():
    with server("--diarizer", "none") as s:
        yield s


@pytest.fixture(scope="module")
def recording_path(tmp_path_factory):
    """The first 40 s of the demo meeting (16 kHz mono FLAC, so what goes up is the same audio)."""
    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    return write_flac(tmp_path_factory.mktemp("remote") / "meeting40.flac", demo.samples[: 40 * 16000])


@pytest.fixture(scope="module")
def local_text(recording_path):
    config = PipelineConfig(speakers=SpeakerConfig(diarizer="none"))
    return Pipeline.create("whisper", config).run(recording_path).text


def remote_settings(url: str) -> TranscribeSettings:
    return TranscribeSettings(run_on="server", server_url=url)


def test_the_settings_dialog_tests_the_connection_and_chooses_the_server(qtbot, served):
    dialog = SettingsDialog(TranscribeSettings())
    qtbot.addWidget(dialog)
    dialog.show()
    section = dialog.run_on
    assert not section.url.isEnabled()
    qtbot.mouseClick(section.server, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(section.url, served.url)
    qtbot.mouseClick(section.test, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: section.status.text().startswith("Connected"), timeout=20000)
    assert "faster-whisper tiny.en" in section.status.text() and "0 job(s) running" in section.status.text()
    settings = dialog.settings()
    assert (settings.run_on, settings.server_url) == ("server", served.url)
    section.url.setText("http://127.0.0.1:1")
    qtbot.mouseClick(section.test, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: section.status.text().startswith("Cannot connect"), timeout=20000)


def test_transcribe_cancel_and_retranscribe_a_selection_on_the_server(make_window, served, recording_path,
                                                                      local_text):  # fmt: skip
    window = make_window()
    window.set_settings(remote_settings(served.url))
    open_demo(window, recording_path)
    live: list[int] = []
    window.session.runner.worker.partial.connect(lambda _: live.append(window.model.rowCount()))

    # cancel: the job on the server is cancelled too, the window is unchanged
    seen: list[tuple[str, str]] = []
    shown: list[object] = []
    window.session.progress.connect(lambda p: seen.append((p.stage.value, p.detail)))
    window.session.progress.connect(shown.append)
    assert window.transcribe()
    wait_until(lambda: any(stage == "vad" for stage, _ in seen), timeout=120)
    window.session.cancel()
    wait_until(lambda: not window.session.busy, timeout=60)
    assert window.model.rowCount() == 0
    wait_until(lambda: json.loads(served.get("/health")[1])["jobs_active"] == 0, timeout=60)
    assert served.metrics()['murmur_jobs_total{state="cancelled"}'] >= 1

    # transcribe: live lines, then the server's transcript, recorded with its model and address
    live.clear()
    assert window.transcribe()
    wait_until(lambda: not window.session.busy, timeout=300)
    transcript = window.model.transcript()
    assert transcript.text == local_text
    assert live  # lines appeared while the server worked
    assert ("load", "uploading") in seen  # the upload has its own progress
    duration = window.session.audio.recording.duration
    for p in shown:  # the panel reads "Decoding audio — 1:02 of 2:04", "chunk 3 of 5": never bytes or lines
        assert 0 <= p.completed <= p.total, p
        if p.stage.value == "load":
            assert p.total <= duration + 1, f"upload progress in bytes, not seconds: {p}"
    assert window.model.meta.model == f"faster-whisper tiny.en at {served.url}"

    # re-transcribe a selection: the lines of that range come back from the server, one undoable step
    before = window.model.utterances
    window.transcript_view.select_row(1)
    start, end = window.selected_range()
    assert window.retranscribe_with(remote_settings(served.url), start, end)
    wait_until(lambda: not window.session.busy, timeout=300)
    after = window.model.utterances
    assert "again" in window.undo_stack.undoText()
    assert after[0] == before[0] and after[-1] == before[-1]
    new = [u for u in after if u not in before]
    assert all(start - 0.5 <= u.start and u.end <= end + 0.5 for u in new)
    window.undo_stack.undo()
    assert window.model.utterances == before


@pytest.mark.slow
def test_a_server_killed_mid_run_is_a_clear_message_and_the_lines_received_are_kept(make_window, tmp_path):
    demo = load_audio(ROOT / "resources" / "demo" / "meeting.flac", 16000)
    path = write_flac(tmp_path / "meeting70.flac", demo.samples[: 70 * 16000])  # three chunks
    with server("--diarizer", "none", "--batch-size", "1") as s:  # one chunk at a time
        window = make_window()
        window.set_settings(remote_settings(s.url))
        open_demo(window, path)
        window.session.runner.worker.partial.connect(lambda _: s.process.kill())
        assert window.transcribe()
        wait_until(lambda: not window.session.busy, timeout=300)
    dialog = window.last_dialog
    assert dialog is not None and "Murmur server" in dialog.text() and "kept" in dialog.text()
    assert window.model.rowCount() > 0  # the lines of the chunk that arrived before the server died


def test_the_server_key_is_remembered_but_never_written_into_projects(tmp_path):
    from qt_helpers import make_store

    settings = TranscribeSettings(run_on="server", server_url="http://gpu:8000", server_key="secret-key-123")
    assert "server_key" not in settings.to_dict() and "secret-key-123" not in json.dumps(settings.to_dict())
    make_store(tmp_path).set_transcribe_settings(settings)
    assert make_store(tmp_path).transcribe_settings() == settings  # a fresh store reads it back
