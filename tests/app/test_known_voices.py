"""Known voices in the window, by clicks and keys: remember a speaker's voice from one meeting's
transcript, rename / merge / delete in the Known Voices window, transcribe another meeting with
Known voices on and see the name (with its similarity), undo a wrong one in one click, and a
deleted voice is never named again. The library lives in a temporary data folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QCheckBox, QMenu, QMessageBox
from qt_helpers import answer_next_input, show_transcript, wait_until

from app.settings import TranscribeSettings
from app.widgets.settings_dialog import SettingsDialog
from engine.pipeline import default_speakers
from engine.synth import ROSTER, MeetingConfig, SyntheticMeeting, build_meeting
from engine.types import Transcript, Utterance
from engine.voices import VoiceLibrary, library_path

PEOPLE = {p.id: p for p in ROSTER}


def meeting(seed: int, *ids: str) -> SyntheticMeeting:
    cast = tuple(PEOPLE[i] for i in ids)
    config = MeetingConfig(len(cast), 60.0, seed, cast=cast, sample_rate=16000, session_id=f"m{seed}")
    return build_meeting(config)


def write(m: SyntheticMeeting, folder: Path) -> Path:
    path = folder / f"{m.config.session_id}.flac"
    sf.write(path, m.recording().samples, 16000, format="FLAC", subtype="PCM_16")
    return path


def as_found(m: SyntheticMeeting) -> Transcript:
    """The meeting as a diarized transcript: "S1", "S2"… by first turn, default names."""
    ids = {p: f"S{i + 1}" for i, p in enumerate(dict.fromkeys(u.speaker for u in m.turns))}
    turns = tuple(Utterance(u.start, u.end, u.text, ids[u.speaker]) for u in m.turns)
    return Transcript(turns, default_speakers(turns), m.duration)


def who(m: SyntheticMeeting, person: str) -> str:
    return f"S{list(dict.fromkeys(u.speaker for u in m.turns)).index(person) + 1}"


@pytest.fixture
def data_home(tmp_path, monkeypatch) -> VoiceLibrary:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return VoiceLibrary(library_path(None))


def choose_in_menu(window, speaker_id: str, label: str) -> None:
    """Right-click the speaker in the panel and pick `label` from its menu with the keyboard."""
    panel = window.speaker_panel
    item = panel.item_for(speaker_id)
    at = panel.list.visualItemRect(item).center()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at, panel.list.viewport().mapToGlobal(at))
    QApplication.sendEvent(panel.list.viewport(), event)
    wait_until(lambda: isinstance(QApplication.activePopupWidget(), QMenu), timeout=5)
    menu = QApplication.activePopupWidget()
    labels = [a.text() for a in menu.actions()]
    menu.setActiveAction(menu.actions()[labels.index(label)])
    from PySide6.QtTest import QTest

    QTest.keyClick(menu, Qt.Key.Key_Return)
    QApplication.processEvents()


def remember(window, speaker_id: str, name: str) -> None:
    """Remember This Voice… from the panel's menu, and wait for the voice to be stored."""
    answer_next_input(name)
    choose_in_menu(window, speaker_id, "Remember This Voice…")
    wait_until(lambda: not window.voices.busy, timeout=120)


def open_recording(window, path: Path) -> None:
    assert window.open_path(path)
    wait_until(lambda: not window.session.busy and window.session.audio is not None, timeout=120)


def click(button) -> None:
    from PySide6.QtTest import QTest

    QTest.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))


def select(dialog, name: str) -> None:
    names = [dialog.list.item(i).text().split(" — ")[0] for i in range(dialog.list.count())]
    dialog.list.setCurrentRow(names.index(name))


def test_the_known_voices_row_of_the_settings_turns_on_naming_from_the_users_library(qtbot):
    dialog = SettingsDialog(TranscribeSettings())
    qtbot.addWidget(dialog)
    box = dialog.editors["known_voices"]
    assert isinstance(box, QCheckBox) and not box.isChecked()
    click(box)
    chosen = dialog.settings()
    assert chosen.known_voices and chosen.option_values()["voices"] == ":default:"
    from app.settings import engine_arguments

    assert engine_arguments(chosen)[1].speakers.voices == ":default:"
    assert engine_arguments(TranscribeSettings())[1].speakers.voices is None


def test_a_remembered_voice_is_named_in_the_next_meeting_and_a_deleted_one_never(
    make_window, data_home, tmp_path, answers
):
    monday, tuesday = meeting(11, "alice", "bob", "carol"), meeting(12, "carol", "frank", "alice", "henry")
    window = make_window()
    open_recording(window, write(monday, tmp_path))
    show_transcript(window, as_found(monday))
    remember(window, who(monday, "alice"), "Alice")
    assert "Remembered Alice" in window.statusBar().currentMessage()
    remember(window, who(monday, "alice"), "Ally")  # the same voice twice, merged below
    remember(window, who(monday, "carol"), "Carol")
    remember(window, who(monday, "bob"), "Bob")
    assert sorted(v.name for v in data_home.voices()) == ["Alice", "Ally", "Bob", "Carol"]

    window.actions_by_name["known_voices"].trigger()
    dialog = window.voices.dialog
    assert dialog.list.item(0).text().startswith("Alice — 1 sample") and dialog.list.count() == 4
    select(dialog, "Ally")
    answer_next_input("Alice")
    click(dialog.merge_button)
    assert [r.split(" — ")[0] for r in (dialog.list.item(i).text() for i in range(dialog.list.count()))] == [
        "Alice", "Bob", "Carol"]  # fmt: skip
    assert len(data_home.voice("Alice").samples) == 2
    select(dialog, "Carol")
    answer_next_input("Caroline")
    click(dialog.rename_button)
    assert "Caroline" in {v.name for v in data_home.voices()}
    asked, table = answers
    table["Delete voice"] = QMessageBox.StandardButton.Yes
    select(dialog, "Bob")
    click(dialog.delete_button)
    assert asked == ["Delete voice"] and {v.name for v in data_home.voices()} == {"Alice", "Caroline"}
    select(dialog, "Caroline")
    click(dialog.play_button)
    said = dialog.status.text()  # monday is open: its sample plays (or the machine has no sound device)
    assert said.startswith("Playing Caroline from m11.flac at ") or said == window.playback.reason
    select(dialog, "Caroline")
    table["Delete voice"] = QMessageBox.StandardButton.Yes
    click(dialog.delete_button)
    dialog.close()

    open_recording(window, write(tuesday, tmp_path))
    window.set_settings(TranscribeSettings(known_voices=True, num_speakers=4))
    assert window.transcribe()
    wait_until(lambda: not window.session.busy, timeout=600)
    book = window.model.book
    named = {s.name: s for s in book}
    assert "Alice" in named and named["Alice"].score is not None
    assert "Caroline" not in named and "Carol" not in named  # deleted: never named again
    alice = named["Alice"].id
    assert "Recognised as Alice" in window.speaker_panel.item_for(alice).toolTip()
    choose_in_menu(window, alice, "Not Alice")
    assert {s.id: s.name for s in window.model.book}[alice].startswith("Speaker ")
    window.undo_stack.undo()
    assert {s.id: s.name for s in window.model.book}[alice] == "Alice"
