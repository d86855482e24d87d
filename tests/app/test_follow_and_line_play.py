"""Listening and fixing with the real keys and a real audio stream, as a subtitle editor works.

The window plays through PortAudio into a PulseAudio null sink (a subprocess, since PortAudio
reads its device list once per process; the sink consumes audio in real time, as a sound card
does): Space pauses and resumes where the sound stopped; PageDown or the mouse wheel while
playing stops following the playhead and the view stays where the user put it, Ctrl+Shift+L
follows again; Play Line stops at the line's end; Loop Line starts it again; Alt+[ and Alt+]
set the line's start and end at the playhead; the follow setting is remembered.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from qt_helpers import run_window_on_sink

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(r"""
    import json, sys, time
    from pathlib import Path
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication
    sys.path.insert(0, "tests/app")
    from qt_helpers import make_store, open_demo, show_transcript, wait_until
    from app.main_window import MainWindow
    from engine.types import Transcript, Utterance

    K, M = Qt.Key, Qt.KeyboardModifier
    app = QApplication([])
    folder = Path(sys.argv[1])
    window = MainWindow(store=make_store(folder), recovery_dir=folder / "recovery")
    window.resize(1024, 600)
    window.show()
    open_demo(window)
    lines = [Utterance(2.0 * i, 2.0 * i + 1.8, f"line {i} " + "word " * 12, "s1") for i in range(60)]
    show_transcript(window, Transcript(tuple(lines)))
    view, sync, playback = window.transcript_view, window.sync, window.playback
    out = {"reason": playback.reason}
    if playback.reason is not None:
        print(json.dumps(out)); sys.exit(0)

    def key(k, mods=M.NoModifier, target=None):
        QTest.keyClick(target or view, k, mods)
        QApplication.processEvents()

    def row_in_view(row):
        y = view.rowViewportPosition(view.filter.mapFromSource(window.model.index(row, 0)).row())
        return 0 <= y < view.viewport().height()

    view.setFocus()
    view.select_row(0)
    key(K.Key_Space)  # play from line 0
    wait_until(lambda: playback.playing, 10)
    playback.seek(60.0)  # line 30, far below the first screen
    wait_until(lambda: row_in_view(30), 10)
    out["followed"] = sync.following
    key(K.Key_PageDown)  # the reader moves on while it plays
    out["after_page_down"] = sync.following
    key(K.Key_L, M.ControlModifier | M.ShiftModifier)
    out["after_ctrl_shift_l"] = sync.following
    wait_until(lambda: row_in_view(window.model.nearest_row(playback.position)), 10)
    pos = view.viewport().rect().center()
    wheel = QWheelEvent(QPointF(pos), QPointF(view.viewport().mapToGlobal(pos)), QPoint(0, 0), QPoint(0, 480),
                        Qt.MouseButton.NoButton, M.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), wheel)
    QApplication.processEvents()
    out["after_wheel"] = sync.following
    scrolled_to = view.verticalScrollBar().value()
    playback.seek(100.0)  # line 50: a follower would scroll there
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.5:
        QApplication.processEvents(); time.sleep(0.01)
    out["stayed"] = view.verticalScrollBar().value() == scrolled_to
    out["remembered_off"] = window.store.value("follow_playhead", True)
    key(K.Key_L, M.ControlModifier | M.ShiftModifier)

    key(K.Key_Space)  # pause
    out["paused"] = not playback.playing
    paused_at = playback.position
    key(K.Key_Space)  # resume
    wait_until(lambda: playback.playing, 10)
    out["resumed_from"] = [paused_at, playback.position]
    key(K.Key_Space)

    view.select_row(10)  # 20.0 – 21.8 s
    key(K.Key_Space, M.ControlModifier | M.ShiftModifier)  # Play Line
    wait_until(lambda: playback.playing, 10)
    wait_until(lambda: not playback.playing, 10)
    out["line_stopped_at"] = playback.position

    positions = []
    key(K.Key_L, M.ControlModifier | M.AltModifier)  # Loop Line
    t0 = time.monotonic()
    while time.monotonic() - t0 < 5:
        QApplication.processEvents(); time.sleep(0.02)
        positions.append(playback.position)
    key(K.Key_L, M.ControlModifier | M.AltModifier)
    key(K.Key_Space)
    out["loop_positions"] = [min(positions), max(positions), playback.playing]
    out["loop_wrapped"] = any(b < a - 1.0 for a, b in zip(positions, positions[1:]))

    playback.seek(20.4)
    key(K.Key_BracketLeft, M.AltModifier)
    playback.seek(21.5)
    key(K.Key_BracketRight, M.AltModifier)
    u = window.model.utterance(10)
    out["line_times"] = [u.start, u.end]
    window.undo_stack.setClean()
    window.close()
    print(json.dumps(out))
""")


def test_pause_follow_play_line_loop_and_set_times_with_real_keys_on_a_real_stream(tmp_path):
    out = run_window_on_sink(SCRIPT, tmp_path)
    assert out["followed"] is True
    assert out["after_page_down"] is False, "selecting another line while playing must stop following"
    assert out["after_ctrl_shift_l"] is True
    assert out["after_wheel"] is False, "scrolling while playing must stop following"
    assert out["stayed"], "the view snapped back to the playhead after the user scrolled away"
    assert out["remembered_off"] is False
    assert out["paused"]
    paused_at, resumed = out["resumed_from"]
    assert paused_at <= resumed < paused_at + 1.0, "playing again must resume where the sound stopped"
    assert 21.8 <= out["line_stopped_at"] < 22.3, "Play Line must stop at the line's end"
    low, high, still_playing = out["loop_positions"]
    assert out["loop_wrapped"] and low >= 19.9 and high < 22.3 and not still_playing
    assert out["line_times"] == pytest.approx([20.4, 21.5], abs=0.05)
