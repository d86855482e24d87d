"""Keyboard and screen-reader access: every command in a menu with its shortcut, every control named,
and playback that explains itself when there is no audio device."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QWidget
from qt_helpers import open_demo

from app.actions import ACTIONS, shortcut_table
from app.playback import unavailable_reason
from engine.types import Utterance


def test_every_command_is_in_a_menu_and_shows_its_shortcut(make_window):
    window = make_window()
    in_menus = {a.objectName() for menu in window.menuBar().findChildren(type(window.recent_menu))
                for a in menu.actions()}  # fmt: skip
    for spec in ACTIONS:
        action = window.actions_by_name[spec.name]
        assert spec.name in in_menus, spec.name
        if spec.name != "about":
            assert not action.shortcut().isEmpty(), spec.name
            assert action.shortcut().toString(QKeySequence.SequenceFormat.NativeText) in action.toolTip()
    assert len(shortcut_table()) == len(ACTIONS) - 1


def test_no_two_commands_share_a_shortcut():
    keys = [k.strip() for _, _, ks in shortcut_table() for k in ks.split(", ")]
    assert len(keys) == len(set(keys))


def test_every_focusable_control_has_an_accessible_name(make_window):
    window = make_window()
    open_demo(window)
    missing = [
        f"{type(w).__name__} in {type(w.parent()).__name__}"
        for w in window.findChildren(QWidget)
        if w.isVisible() and w.focusPolicy() != Qt.FocusPolicy.NoFocus and not w.accessibleName()
    ]
    assert missing == []


def test_focus_moves_between_panes_by_keyboard(make_window, qtbot):
    window = make_window()
    window.activateWindow()
    window.actions_by_name["focus_waveform"].trigger()
    assert window.waveform.hasFocus() or window.focusWidget() is window.waveform
    window.actions_by_name["focus_transcript"].trigger()
    assert window.focusWidget() is window.drop_zone.button  # nothing to read yet: where to start
    window.model.set_document([Utterance(0.0, 1.0, "Hello.")], (), window.model.meta)
    window.actions_by_name["focus_transcript"].trigger()
    assert window.focusWidget() is window.transcript_view


def test_without_an_audio_device_playback_is_disabled_and_says_why(make_window):
    reason = unavailable_reason()
    window = make_window()
    open_demo(window)
    play = window.actions_by_name["play"]
    if reason is None:
        assert play.isEnabled()
        return
    assert not play.isEnabled() and play.toolTip().endswith(reason)
    assert window.playback_note.text() == reason
    assert window.actions_by_name["transcribe"].isEnabled(), "everything else still works"
