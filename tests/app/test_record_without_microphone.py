"""Record on a machine with no microphone: one sentence that says what to do, no PortAudio code."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox
from qt_helpers import make_store, wait_until

from engine.live.sources import NO_MICROPHONE, list_devices


def test_record_without_a_microphone_says_so_in_a_sentence(make_window, tmp_path):
    if list_devices():
        pytest.skip("this machine has an input device")
    store = make_store(tmp_path)
    store.set_value("recordings_folder", str(tmp_path / "recordings"))
    window = make_window(store=store)
    window.actions_by_name["record"].trigger()  # the recording bar: it says there is none to choose
    assert window.statusBar().currentMessage() == NO_MICROPHONE
    window.actions_by_name["record"].trigger()  # Record anyway
    wait_until(lambda: isinstance(window.last_dialog, QMessageBox) and window.last_dialog.isVisible(), 10)
    assert window.last_dialog.windowTitle() == "Cannot record"
    assert window.last_dialog.text() == NO_MICROPHONE
    assert not list(tmp_path.rglob("*.flac")), "nothing is left behind"
