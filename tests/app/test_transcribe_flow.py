"""Transcribing in the window: live chunk results, one undoable result, cancel, and failures."""

from __future__ import annotations

import threading
from dataclasses import replace

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QApplication
from qt_helpers import fix_line, open_demo, preempt_after, wait_until

from app import commands
from app import speakers as sp
from app.settings import TranscribeSettings
from app.transcript_model import SPEAKER, TEXT
from engine.types import Stage, Transcript


def without_speakers(transcript: Transcript) -> Transcript:
    utterances = tuple(replace(u, speaker=None) for u in transcript.utterances)
    return replace(transcript, utterances=utterances, speakers=())


def test_transcribing_the_demo_streams_chunks_then_lands_as_one_undoable_step(demo_run):
    transcript = demo_run.transcript
    assert len(transcript.utterances) > 20
    assert "meeting" in transcript.text.lower()
    assert transcript.model == "faster-whisper tiny.en" and len(transcript.chunks) >= 4
    assert demo_run.live_rows and demo_run.live_rows[0] < len(transcript.utterances), "no live results"
    assert demo_run.live_rows == sorted(demo_run.live_rows)
    assert Stage.INFER in demo_run.stages and demo_run.stages.index(Stage.INFER) < demo_run.stages.index(
        Stage.STITCH
    )
    assert demo_run.undo_text == "Transcribe"


def test_speakers_found_by_the_engine_get_lanes_chips_and_panel_rows(make_window, demo_transcript):
    window = make_window()
    book = sp.book_from_transcript(demo_transcript)
    commands.set_document(window.model, demo_transcript, book, "Transcribe")
    names = [s.name for s in demo_transcript.speakers]
    assert [window.speaker_panel.list.item(i).text() for i in range(len(names))] == names
    assert [lane.name for lane, _ in window.waveform.lanes.lanes][: len(names)] == names
    first = demo_transcript.utterances[0]
    assert window.model.data(window.model.index(0, SPEAKER)) == sp.display_name(book, first.speaker)


def test_unassigned_utterances_show_as_such_and_can_be_given_speakers(make_window, demo_transcript):
    window = make_window()
    speakerless = without_speakers(demo_transcript)  # as from a pipeline that finds no speakers
    commands.set_document(window.model, speakerless, (), "Transcribe")
    assert window.speaker_panel.list.item(0).text() == sp.UNASSIGNED_NAME
    assert [lane.name for lane, _ in window.waveform.lanes.lanes] == [sp.UNASSIGNED_NAME]
    info = window.edit.new_speaker()
    window.transcript_view.select_row(0)
    window.actions_by_name["speaker_1"].trigger()
    assert window.model.utterance(0).speaker == info.id
    assert [lane.name for lane, _ in window.waveform.lanes.lanes] == [info.name, sp.UNASSIGNED_NAME]


def test_esc_gives_the_transcript_back_within_two_seconds_keeping_finished_chunks(make_window, qtbot):
    window = make_window()
    open_demo(window)
    results: list[object] = []
    window.session.runner.worker.partial.connect(results.append)
    assert window.transcribe()
    assert window.session.locks_edits and window.actions_by_name["cancel"].isEnabled()
    wait_until(lambda: len(results) >= 1, timeout=120)  # the first batch is a single chunk
    window.activateWindow()
    window.actions_by_name["cancel"].trigger()  # Esc
    wait_until(lambda: not window.session.locks_edits, timeout=10)  # a bound, not a speed gate (see bench/)
    kept = window.model.rowCount()
    assert kept > 0 and window.undo_stack.undoText() == "Partial transcript (cancelled)"
    if window.session.busy:  # the decoder finishes the batch it is on: say so meanwhile
        assert window.progress_panel.cancel.text() == "Cancelling…"
        assert "Cancelling" in window.progress_panel.label.toolTip()
        assert window.actions_by_name["undo"].isEnabled(), "the kept transcript can be edited at once"
    wait_until(lambda: not window.session.busy, timeout=60)
    assert "cancelled" in window.statusBar().currentMessage().lower()
    assert window.model.rowCount() == kept, "late results do not change what was kept"
    assert not window.progress_panel.isVisible() and window.actions_by_name["transcribe"].isEnabled()


def test_esc_stops_the_engine_after_at_most_the_chunk_in_hand_and_a_new_run_keeps_the_line_then_fixed(
    make_window, qtbot
):
    window = make_window()
    open_demo(window)
    worker = window.session.runner.worker
    pressed = threading.Event()
    after_esc: list[bool] = []  # per chunk result, as the engine finishes it: was Esc pressed by then?
    worker.partial.connect(lambda _: after_esc.append(pressed.is_set()), Qt.ConnectionType.DirectConnection)
    assert window.transcribe()
    qtbot.waitUntil(lambda: window.model.rowCount() > 0, timeout=300_000)  # the next batch is decoding now
    window.activateWindow()
    with qtbot.waitSignal(worker.cancelled, timeout=120_000):  # the worker has let go of the engine
        pressed.set()
        qtbot.keyClick(window.transcript_view, Qt.Key.Key_Escape)
    assert sum(after_esc) <= 1, "Esc waits for the chunk being decoded, not for a batch of them"
    kept = window.model.utterances
    assert kept and not window.model.read_only
    assert window.undo_stack.undoText() == "Partial transcript (cancelled)"
    fix_line(qtbot, window, 0, "Corrected after cancelling.")
    assert window.model.utterances[1:] == kept[1:]
    assert window.model.data(window.model.index(0, TEXT)) == "Corrected after cancelling."
    edited_doc = window.model.utterances
    window.activateWindow()  # F5 is a window shortcut
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    qtbot.waitUntil(lambda: not window.session.busy)  # the cancelled run has let go (F5 waits for it)
    with qtbot.waitSignal(window.session.transcribed, timeout=300_000):  # the whole file again
        qtbot.keyClick(window.transcript_view, Qt.Key.Key_F5)
        assert window.session.busy and not window.session.cancelling, "F5 started no run"
    texts = [u.text for u in window.model.utterances]
    assert "Corrected after cancelling." in texts, "a new run threw away the line the user fixed"
    assert len(texts) > len(kept), "the rest of the recording was transcribed"
    assert texts.count("Corrected after cancelling.") == 1
    assert "you edited were kept" in window.statusBar().currentMessage()
    window.undo_stack.undo()  # one step back: the transcript as it was before the run
    assert window.model.utterances == edited_doc


def test_a_failed_run_shows_why_and_keeps_the_edited_transcript(make_window, demo_transcript):
    window = make_window()
    open_demo(window)
    commands.set_document(
        window.model, demo_transcript, sp.book_from_transcript(demo_transcript), "Transcribe"
    )
    commands.edit_text(window.model, 0, "An edit the user made.")
    before = window.model.utterances
    window.set_settings(TranscribeSettings(model="/no/such/model-folder"))
    assert window.transcribe()
    wait_until(lambda: not window.session.busy, timeout=120)
    dialog = window.last_dialog
    assert dialog.windowTitle() == "The engine could not start"  # its own process: it says why, below
    assert "/no/such/model-folder" in dialog.text() and "unchanged" in dialog.text()
    assert window.isVisible() and window.model.utterances == before
    window.undo_stack.undo()
    assert window.model.utterance(0).text != "An edit the user made."


def test_lines_fixed_while_the_engine_runs_are_kept_by_a_cancel_and_by_the_next_run(make_window, qtbot):
    window = make_window()
    open_demo(window)
    assert window.transcribe()
    qtbot.waitUntil(lambda: window.model.rowCount() > 0, timeout=300_000)
    fix_line(qtbot, window, 0, "Fixed while it ran.")
    assert window.session.busy, "the line was fixed while the run went on"
    assert window.actions_by_name["undo"].isEnabled(), "an edit made during a run can be undone"
    window.activateWindow()
    with qtbot.waitSignal(window.session.runner.worker.idle, timeout=120_000):
        preempt_after(window.session.runner.worker.idle)  # after the wait's own slot: it sees idle first
        qtbot.keyClick(window.transcript_view, Qt.Key.Key_Escape)
    texts = [u.text for u in window.model.utterances]
    assert texts.count("Fixed while it ran.") == 1, "the cancel gave back the finished chunks without the fix"
    partial = window.model.utterances
    qtbot.waitUntil(lambda: not window.session.busy)  # the window has seen the worker let go

    view = window.transcript_view
    typing: list[bool] = []

    class Typist(QObject):  # lives on the window's thread: the worker's signal reaches it in order
        @Slot(object)
        def type_into_a_line(self, _result: object) -> None:  # at the first chunk, before the run's end
            if typing:
                return
            typing.append(window.session.busy)
            row = next(i for i, u in enumerate(window.model.utterances) if u.text != "Fixed while it ran.")
            view.select_row(row)
            qtbot.keyClick(view, Qt.Key.Key_F2)
            editor = view.row_delegate.editor
            assert editor is not None, "no editor opened while the run went on"
            editor.selectAll()
            qtbot.keyClicks(editor, "Fixed during the second run.")  # still typing at the run's end

    typist = Typist()

    window.session.runner.worker.partial.connect(typist.type_into_a_line)
    with qtbot.waitSignal(window.session.transcribed, timeout=300_000):
        assert window.transcribe()
    assert typing == [True], "the line was not typed while the run went on"
    texts = [u.text for u in window.model.utterances]
    assert texts.count("Fixed while it ran.") == 1 and texts.count("Fixed during the second run.") == 1
    assert "2 line(s) you edited were kept" in window.statusBar().currentMessage()
    editor = view.row_delegate.editor
    assert view.is_editing() and editor is not None, "the run's end left the line being typed closed"
    assert editor.toPlainText() == "Fixed during the second run."
    assert editor.cursorPosition() == len("Fixed during the second run."), "the caret moved"
    qtbot.keyClicks(editor, " Still typing.")  # the next keys go into the line, not to the table
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    texts = [u.text for u in window.model.utterances]
    assert texts.count("Fixed during the second run. Still typing.") == 1
    window.undo_stack.undo()  # the words typed after the run
    window.undo_stack.undo()  # one step: the transcript as it was before the second run
    assert window.model.utterances == partial


def test_names_given_to_speakers_survive_transcribing_the_whole_file_again(demo_window, qtbot):
    window = demo_window
    talk = sp.talk_time(window.model.utterances)
    first, second = sorted((s for s in talk if s), key=talk.get, reverse=True)[:2]  # the two who talk most
    commands.rename_speaker(window.model, first, "Priya")
    commands.rename_speaker(window.model, second, "Tomás")
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    with qtbot.waitSignal(window.session.transcribed, timeout=300_000):
        qtbot.keyClick(window.transcript_view, Qt.Key.Key_F5)
    names = {s.id: s.name for s in window.model.book}
    assert list(names.values()).count("Priya") == 1 and list(names.values()).count("Tomás") == 1, names
    said = {names[u.speaker] for u in window.model.utterances if u.speaker}
    assert {"Priya", "Tomás"} <= said, "the names are on the new run's lines"
    assert "names kept: " in window.statusBar().currentMessage()
    window.undo_stack.undo()  # one step: the transcript and names before the run
    assert {s.name for s in window.model.book} >= {"Priya", "Tomás"}
