"""The project writer runs writes one at a time in the order they were submitted, and tells the
GUI thread how each ended through the event loop, without anyone waiting for it."""

from __future__ import annotations

import threading

from app.project_writer import ProjectWriter


def test_writes_run_and_report_in_the_order_submitted(qapp, qtbot):
    writer = ProjectWriter()
    ran: list[str] = []
    told: list[tuple[str, object]] = []
    gate = threading.Event()
    writer.submit(lambda: (gate.wait(10), ran.append("save")), lambda e: told.append(("save", e)))
    writer.submit(lambda: ran.append("discard autosave"), lambda e: told.append(("discard autosave", e)))
    writer.submit(lambda: ran.append("autosave"), lambda e: told.append(("autosave", e)))
    assert writer.busy
    gate.set()
    writer.wait()
    assert ran == ["save", "discard autosave", "autosave"]
    assert told == [("save", None), ("discard autosave", None), ("autosave", None)]
    qtbot.wait(200)  # the queued reports arrive after wait() delivered them: each is told once
    assert len(told) == 3 and not writer.busy
    writer.shutdown()


def test_how_a_write_ended_reaches_the_gui_thread_by_itself(qapp, qtbot):
    writer = ProjectWriter()
    told: list[tuple[object, bool]] = []

    def fail() -> None:
        raise OSError(28, "No space left on device")

    def note(error: object) -> None:
        told.append((error, threading.current_thread() is threading.main_thread()))

    writer.submit(lambda: None, note)  # a save that worked, then an autosave that did not
    writer.submit(fail, note)
    qtbot.waitUntil(lambda: len(told) == 2, timeout=10_000)  # nobody calls wait(): the event loop delivers
    assert told[0] == (None, True)
    error, on_gui_thread = told[1]
    assert isinstance(error, OSError) and error.strerror == "No space left on device" and on_gui_thread
    assert not writer.busy
    writer.shutdown()


def test_a_write_runs_on_the_named_save_thread_not_the_gui_thread(qapp):
    writer = ProjectWriter()
    seen: list[threading.Thread] = []
    writer.submit(lambda: seen.append(threading.current_thread()))
    writer.wait()
    (thread,) = seen
    assert thread is not threading.main_thread()
    assert thread.name.startswith("murmur-save")  # how a stack dump of a stuck save names it
    writer.shutdown()
