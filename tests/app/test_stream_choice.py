"""Opening a file with several audio streams: the app names them and transcribes the one picked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QInputDialog
from qt_helpers import two_stream_file, wait_until


@pytest.fixture(scope="module")
def two_streams(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return two_stream_file(tmp_path_factory.mktemp("streams"))


def answer_stream_question(pick: int | None, seen: dict[str, object]) -> None:
    """When the question shows, note what it says and pick stream `pick` (None: cancel)."""

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QInputDialog):
            QTimer.singleShot(20, answer)
            return
        seen["question"], seen["items"] = dialog.labelText(), dialog.comboBoxItems()
        seen["preselected"] = dialog.textValue()
        if pick is None:
            dialog.reject()
        else:
            dialog.setTextValue(dialog.comboBoxItems()[pick])
            dialog.accept()

    QTimer.singleShot(0, answer)


def test_the_picked_stream_is_shown_and_transcribed(make_window, two_streams):
    window = make_window()
    seen: dict[str, object] = {}
    answer_stream_question(1, seen)
    assert window.open_path(two_streams)
    assert "has 2 audio streams" in str(seen["question"])
    items = seen["items"]
    assert isinstance(items, list) and len(items) == 2
    assert items[0].startswith("#0") and "default" in items[0] and items[1].startswith("#1")
    assert seen["preselected"] == items[0]
    wait_until(lambda: not window.session.busy and window.session.prepared is not None, 120)
    samples = window.session.audio.recording.samples
    assert float(np.sqrt(np.mean(samples**2))) > 0.01, "the silent default stream was loaded"
    assert window.session.prepared.speech, "no speech found in the picked stream"
    finished: list[object] = []
    window.session.transcribed.connect(finished.append)
    assert window.transcribe()
    wait_until(lambda: bool(finished) and not window.session.busy, 300)
    assert "meeting" in finished[0].text.lower()


def test_cancelling_the_question_opens_nothing(make_window, two_streams):
    window = make_window()
    seen: dict[str, object] = {}
    answer_stream_question(None, seen)
    assert not window.open_path(two_streams)
    assert "question" in seen
    assert window.session.audio is None and not window.session.busy


def test_a_saved_project_reopens_the_stream_that_was_picked(make_window, two_streams, tmp_path):
    window = make_window()
    answer_stream_question(1, {})
    assert window.open_path(two_streams)
    wait_until(lambda: not window.session.busy and window.session.prepared is not None, 120)
    project = tmp_path / "two.murmur"
    assert window.projects.save(project)
    window.projects.writer.wait()
    reopened = make_window()
    assert reopened.open_path(project)  # a project asks nothing: it knows its stream
    wait_until(lambda: not reopened.session.busy and reopened.session.audio is not None, 120)
    samples = reopened.session.audio.recording.samples
    assert float(np.sqrt(np.mean(samples**2))) > 0.01, "the project reopened the silent default stream"
