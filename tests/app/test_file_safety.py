"""Files are safe: exporting again asks before replacing what is there, and a file that failed to
open never enters Open Recent (one that opened does)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox
from qt_helpers import DEMO, open_demo, wait_until

from app import commands
from app import speakers as sp
from app.widgets.export_dialog import ExportRequest
from engine.export import ExportOptions
from engine.types import Speaker, Transcript, Utterance


def test_exporting_again_asks_before_overwriting(make_window, tmp_path: Path, monkeypatch):
    window = make_window()
    transcript = Transcript((Utterance(0.0, 1.0, "Hello there.", "a"),), (Speaker("a", "Ada"),), duration=2.0)
    commands.set_document(window.model, transcript, sp.book_from_transcript(transcript), "Load")
    request = ExportRequest(("txt", "srt"), tmp_path / "talk.txt", ExportOptions())
    asked: list[str] = []

    def answer(choice):
        def question(_parent, _title, text, *_args):
            asked.append(text)
            return choice

        return question

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.No))
    assert len(window.export_with(request)) == 2 and asked == []  # nothing there yet: no question
    (tmp_path / "talk.txt").write_text("my own notes")
    assert window.export_with(request) == []
    assert "talk.txt" in asked[0] and "talk.srt" in asked[0]
    assert (tmp_path / "talk.txt").read_text() == "my own notes"  # "No" keeps the files
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
    assert len(window.export_with(request)) == 2
    assert "Hello there." in (tmp_path / "talk.txt").read_text()


def test_a_file_that_failed_to_open_does_not_enter_open_recent(make_window, tmp_path: Path):
    window = make_window()
    bad = tmp_path / "x.wav"
    bad.write_bytes(b"this is not audio")
    window.open_path(bad)
    wait_until(lambda: not window.session.busy)
    assert window.last_dialog is not None and "x.wav" in window.last_dialog.text()
    assert str(bad) not in window.store.recent_files()
    assert all(a.statusTip() != str(bad) for a in window.recent_menu.actions())
    open_demo(window)
    assert window.store.recent_files()[0] == str(DEMO)
    assert window.recent_menu.actions()[0].statusTip() == str(DEMO)
