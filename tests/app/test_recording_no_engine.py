"""A recording made with no engine to send its audio to (`RecordingController.start(…, connect=None)`):
recording only, so nothing tries to reach an engine and nothing keeps the audio for one."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from qt_helpers import wait_until

from app.recording.controller import RecordingController
from engine.live.sources import FileSource
from tests.app.test_recording_controller import Told, clip


def test_a_recording_without_an_engine_opens_no_live_link_and_no_thread_fails(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # catches: a live link made anyway (its thread fails calling a missing `connect`, and every block
    # captured is kept for a client that never comes)
    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    controller = RecordingController()
    told = Told(controller)
    controller.start(FileSource(clip(tmp_path / "c.flac", 1.0), speed=8), tmp_path / "rec.flac")
    wait_until(lambda: told.caught_up == 1, timeout=10)
    controller.shutdown()
    assert failures == [] and told.failed == [] and told.stopped == [tmp_path / "rec.flac"]
    assert [s.loading for s in told.status] == [False] * len(told.status)
    controller.deleteLater()
    QApplication.processEvents()
