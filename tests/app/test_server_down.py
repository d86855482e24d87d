"""A server that is down is reported before any work in the app, as in the CLI: the recording's
plan (speech and chunks on the waveform) stays as it was and the message names the server."""

from __future__ import annotations

import socket

from qt_helpers import open_demo, wait_until

from app.settings import TranscribeSettings


def closed_port() -> int:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_transcribing_on_a_dead_server_says_so_and_keeps_the_plan(make_window):
    window = make_window()
    open_demo(window)  # this computer: speech and chunks found
    plan = window.session.prepared
    assert plan.chunks and window.waveform.chunk_marks.chunks  # the chunks drawn on the waveform
    url = f"http://127.0.0.1:{closed_port()}"
    window.set_settings(TranscribeSettings(run_on="server", server_url=url))
    assert window.transcribe()
    wait_until(lambda: not window.session.busy, timeout=60)
    dialog = window.last_dialog
    assert dialog is not None and f"cannot reach the Murmur server at {url}" in dialog.text()
    assert window.session.prepared is plan  # not replaced by a plan made for the server
    assert window.waveform.chunk_marks.chunks == [(c.index, c.start, c.end) for c in plan.chunks]
    assert window.model.rowCount() == 0 and not window.model.read_only


def test_transcribing_a_selection_on_a_dead_server_says_so(make_window):
    window = make_window()
    open_demo(window)
    url = f"http://127.0.0.1:{closed_port()}"
    assert window.retranscribe_with(TranscribeSettings(run_on="server", server_url=url), 10.0, 20.0)
    wait_until(lambda: not window.session.busy, timeout=60)
    dialog = window.last_dialog
    assert dialog is not None and f"cannot reach the Murmur server at {url}" in dialog.text()
