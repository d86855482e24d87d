"""Opening recordings: by path, drag and drop, recent files; bad files; a responsive window."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, Qt, QTimer, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication
from qt_helpers import DEMO, open_demo, wait_until

from app.__main__ import parse_args


def test_opening_the_demo_shows_waveform_speech_regions_and_chunks(make_window):
    window = make_window()
    answered_while_busy: list[bool] = []
    timer = QTimer()
    timer.timeout.connect(lambda: answered_while_busy.append(window.session.busy))
    timer.start(20)
    open_demo(window)
    timer.stop()
    assert 120 < window.waveform.duration < 130
    assert len(window.waveform.speech.starts) >= 5
    assert len(window.waveform.chunk_marks.chunks) == len(window.session.prepared.chunks) >= 4
    assert window.actions_by_name["transcribe"].isEnabled()
    assert window.store.recent_files() == [str(DEMO)]
    assert window.recent_menu.actions()[0].text().endswith("meeting.flac")
    # the event loop ran while the file loaded (how long it ever paused: bench/app_responsiveness.py)
    assert any(answered_while_busy), "the window did not answer while the file loaded"


def test_a_recording_dropped_on_the_window_opens(make_window):
    window = make_window()
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(DEMO))])
    drop = QDropEvent(QPoint(10, 10), Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)  # fmt: skip
    window.dropEvent(drop)
    wait_until(lambda: not window.session.busy)
    assert window.session.audio is not None and window.session.audio.path == DEMO


def test_a_corrupt_file_shows_a_clear_dialog_and_keeps_what_was_open(make_window, tmp_path: Path):
    window = make_window()
    open_demo(window)
    broken = tmp_path / "interview.mp3"
    broken.write_bytes(b"ID3" + bytes(1000))
    assert window.open_path(broken)
    wait_until(lambda: not window.session.busy)
    dialog = window.last_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.windowTitle() == "Cannot open this file" and "interview.mp3" in dialog.text()
    assert window.session.audio.path == DEMO and window.isVisible()
    dialog.accept()
    assert window.transcribe(), "the previous recording can still be transcribed"
    window.session.cancel()
    wait_until(lambda: not window.session.busy)


def test_a_missing_file_is_reported_too(make_window, tmp_path: Path):
    window = make_window()
    window.open_path(tmp_path / "nowhere.wav")
    wait_until(lambda: not window.session.busy)
    assert "nowhere.wav" in window.last_dialog.text()


def test_the_command_line_takes_one_optional_file():
    assert parse_args([]).file is None
    assert parse_args(["talk.flac"]).file == Path("talk.flac")


def test_opening_is_refused_politely_while_a_job_runs(make_window):
    window = make_window()
    assert window.open_path(DEMO)
    assert not window.open_path(DEMO)
    assert "Wait" in window.statusBar().currentMessage()
    wait_until(lambda: not window.session.busy)
    QApplication.processEvents()


def test_murmur_app_opens_the_file_given_on_the_command_line(tmp_path: Path):
    code = textwrap.dedent(f"""
        import sys
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication
        app = QApplication(sys.argv[:1])
        def check():
            window = next(w for w in app.topLevelWidgets() if w.objectName() == "MurmurMain")
            if window.session.busy or window.session.prepared is None:
                return
            print("opened", window.session.audio.path.name, len(window.session.prepared.chunks))
            window.ask_before_closing = False
            window.close()
            app.quit()
        timer = QTimer()
        timer.timeout.connect(check)
        timer.start(100)
        from app.__main__ import main
        sys.exit(main([{str(DEMO)!r}]))
    """)
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "QT_QPA_PLATFORM": "offscreen"}  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "opened meeting.flac" in out.stdout


def test_recent_files_reopen_from_the_menu_in_a_later_session(make_window, tmp_path: Path):
    first = make_window()
    open_demo(first)
    later = make_window(store=first.store)
    recent = later.recent_menu.actions()[0]
    assert recent.statusTip() == str(DEMO)
    recent.trigger()
    wait_until(lambda: not later.session.busy)
    assert later.session.audio is not None and later.session.audio.path == DEMO
