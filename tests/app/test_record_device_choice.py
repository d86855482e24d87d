"""The microphone the recording bar remembers, across starts of the window."""

from __future__ import annotations

from pathlib import Path

from qt_helpers import make_store


def test_a_remembered_microphone_missing_at_one_start_is_chosen_again_when_it_is_back(
    make_window, tmp_path: Path
):
    store = make_store(tmp_path)
    store.set_value("record_device", "USB headset")
    w = make_window(store=store)
    w.recording.panel.set_devices(["Built-in"], str(store.value("record_device", "")))  # unplugged
    assert w.recording.panel.device_name() == "Built-in"
    again = make_window(store=store)
    again.recording.panel.set_devices(["Built-in", "USB headset"], str(store.value("record_device", "")))
    assert again.recording.panel.device_name() == "USB headset"
