"""Transcribe a selection again: the lines of a time range (chosen on the waveform or as selected
lines) are transcribed again with other settings through the real worker and pipeline, replace
those lines as one undoable step and keep the speakers' identities."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelectionModel, QTimer
from PySide6.QtWidgets import QApplication, QDialog
from qt_helpers import fix_line, wait_until

from app.settings import TranscribeSettings


@pytest.fixture
def window(demo_window):
    return demo_window


def test_selected_lines_are_transcribed_again_as_one_undoable_step(window):
    before, book = window.model.utterances, window.model.book
    rows = [2, 3, 4]
    view = window.transcript_view
    view.select_row(2)
    for r in rows[1:]:
        index = view.filter.mapFromSource(window.model.index(r, 0))
        view.selectionModel().select(index, QItemSelectionModel.SelectionFlag.Select
                                     | QItemSelectionModel.SelectionFlag.Rows)  # fmt: skip
    start, end = window.selected_range()
    assert (start, end) == (before[2].start, before[4].end)
    settings = TranscribeSettings(backend="whisper", chunk_seconds=10)  # other settings than the first run
    assert window.retranscribe_with(settings, start, end)
    wait_until(lambda: not window.session.busy, timeout=300)
    after = window.model.utterances
    assert window.undo_stack.undoText().startswith("Transcribe") and "again" in window.undo_stack.undoText()
    assert after[:2] == before[:2] and after[-(len(before) - 5) :] == before[5:]  # the rest is untouched
    new = after[2 : len(after) - (len(before) - 5)]
    assert new and all(start - 0.5 <= u.start and u.end <= end + 0.5 for u in new)
    known = {s.id for s in book}
    assert {u.speaker for u in new if u.speaker} <= {s.id for s in window.model.book}
    assert any(u.speaker in known for u in new), "the new lines keep the existing speakers"
    window.undo_stack.undo()
    assert window.model.utterances == before and window.model.book == book
    window.undo_stack.redo()
    assert window.model.utterances == after


def test_a_range_marked_on_the_waveform_wins_over_the_selected_lines(window):
    window.transcript_view.select_row(1)
    window.waveform.set_range(3.0, 9.0)
    assert window.selected_range() == (3.0, 9.0)
    window.waveform.set_range(None)
    u = window.model.utterance(1)
    assert window.selected_range() == (u.start, u.end)


def _accept_dialog_when_it_opens(qtbot) -> list[str]:
    """Accept the dialog the next command opens; the list gets the range it showed."""
    shown: list[str] = []

    def accept() -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, QDialog):
            shown.append(dialog.range.text())
            dialog.accept()
        else:
            QTimer.singleShot(20, accept)

    QTimer.singleShot(20, accept)
    return shown


def _words(lines) -> list[str]:
    return [w.strip(".,?!").lower() for u in lines for w in u.text.split()]


def test_a_marked_range_is_transcribed_again_from_the_menu_after_a_resize(window, qtbot):
    before, book, steps = window.model.utterances, window.model.book, window.undo_stack.count()
    window.waveform.set_range(20.0, 45.0)
    window.resize(1024, 640)  # pyqtgraph re-computes its own view geometry on every resize
    qtbot.waitUntil(lambda: window.width() == 1024)
    shown = _accept_dialog_when_it_opens(qtbot)
    window.actions_by_name["retranscribe"].trigger()
    qtbot.waitUntil(lambda: window.session.busy, timeout=5000)
    assert "0:00:18.7 – 0:00:50.9, 0:32.2 long" in shown[0], "the dialog names the range that runs"
    wait_until(lambda: not window.session.busy, timeout=300)
    assert window.undo_stack.count() == steps + 1, "one undoable step"
    assert window.undo_stack.undoText() == "Transcribe 0:18.7–0:50.9 again"  # widened to the lines it cut
    after = window.model.utterances
    inside = [i for i, u in enumerate(before) if 18.7 <= u.start < 50.9]
    kept_head, kept_tail = before[: inside[0]], before[inside[-1] + 1 :]
    assert after[: len(kept_head)] == kept_head and after[len(after) - len(kept_tail) :] == kept_tail
    old = before[inside[0] : inside[-1] + 1]
    new = after[len(kept_head) : len(after) - len(kept_tail)]
    assert [u.speaker for u in new] == [u.speaker for u in old], "same people, same turns"
    assert window.model.book == book, "no speaker was added or renamed"
    words = _words(new)
    for phrase in ("still need", "new engineers", "client visit", "final decision", "notifications"):
        assert " ".join(words).count(phrase) == 1, phrase  # neither duplicated nor lost
    assert len(words) >= 0.9 * len(_words(old))
    window.actions_by_name["undo"].trigger()
    assert window.model.utterances == before


def test_a_line_fixed_while_its_range_is_transcribed_again_is_kept_and_undo_gives_it_back(window, qtbot):
    before = window.model.utterances
    start, end = before[2].start, before[4].end
    assert window.retranscribe_with(TranscribeSettings(backend="whisper", chunk_seconds=10), start, end)
    fix_line(qtbot, window, 3, "Fixed while its range ran again.")
    assert window.session.busy, "the line was fixed while the range ran"
    assert window.actions_by_name["undo"].isEnabled(), "the fix can be undone while the range runs"
    fixed = window.model.utterances
    wait_until(lambda: not window.session.busy, timeout=300)
    texts = [u.text for u in window.model.utterances]
    assert texts.count("Fixed while its range ran again.") == 1, "the range's new lines replaced the fix"
    after = window.model.utterances
    assert after[:2] == before[:2] and after[-(len(before) - 5) :] == before[5:], "the rest kept"
    assert "1 line(s) you edited meanwhile were kept" in window.statusBar().currentMessage()
    window.undo_stack.undo()  # one step: the table as the user left it when the range landed
    assert window.model.utterances == fixed
