"""*Run on*: this computer, or a Murmur server (`murmur serve`) — the settings dialog's section.

`RunOnSection` edits three `TranscribeSettings` fields: `run_on` ("local" or "server"),
`server_url` and `server_key`. *Test connection* asks the server for its model and queue in a
background thread and shows the answer (or the reason it failed) under the fields.
`run_pipeline(settings, engine)` is what the worker's transcriptions run: an
`engine.remote.pipeline.RemotePipeline` (the audio goes up as 16 kHz FLAC) against the server, or
against the app's own engine process (`app.engine_process`) when the settings say this computer.
Settings a server holds from its start cannot be changed by a run on a remote server:
`SERVER_HOLDS` is the sentence the settings dialog shows on those rows.
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QWidget,
)

from app.engine_process import EngineProcess
from app.settings import engine_flags, request_fields

SERVER_HOLDS = ("A Murmur server keeps the setting it was started with; a run on it cannot change "
                "this one. It applies when the run is on this computer.")  # fmt: skip


class _Answer(QObject):
    """Carries a connection test's result from its thread to the GUI thread."""

    ready = Signal(bool, str)


class RunOnSection(QGroupBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Run on", parent)
        self.local = QRadioButton("This computer")
        self.server = QRadioButton("A Murmur server")
        self.local.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.local)
        group.addButton(self.server)
        self.url = QLineEdit()
        self.url.setPlaceholderText("http://gpu-box:8000")
        self.url.setAccessibleName("Server address")
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("the server's API key, if it has one")
        self.key.setAccessibleName("Server API key")
        self.test = QPushButton("Test connection")
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Connection status")
        choice = QHBoxLayout()
        choice.addWidget(self.local)
        choice.addWidget(self.server)
        choice.addStretch(1)
        form = QFormLayout(self)
        form.addRow(choice)
        form.addRow("Server &address", self.url)
        form.addRow("API &key", self.key)
        form.addRow(self.test, self.status)
        self._answer = _Answer()
        self._answer.ready.connect(self._show_answer)
        self.test.clicked.connect(self.test_connection)
        self.server.toggled.connect(self._update_enabled)
        self._update_enabled()

    def set_values(self, settings: Any) -> None:
        (self.server if settings.run_on == "server" else self.local).setChecked(True)
        self.url.setText(settings.server_url)
        self.key.setText(settings.server_key)
        self._update_enabled()

    def values(self) -> dict[str, str]:
        run_on = "server" if self.server.isChecked() else "local"
        url, key = self.url.text().strip(), self.key.text().strip()
        return {"run_on": run_on, "server_url": url, "server_key": key}

    def test_connection(self) -> None:
        from engine.remote.client import RemoteClient

        try:
            client = RemoteClient(self.url.text(), self.key.text().strip() or None, timeout=10)
        except ValueError as exc:
            self._show_answer(False, str(exc))
            return
        self.test.setEnabled(False)
        self.status.setText("Connecting…")
        threading.Thread(target=self._ask, args=(client,), name="murmur-test-connection", daemon=True).start()

    def _ask(self, client: Any) -> None:
        try:
            self._answer.ready.emit(True, client.check())
        except Exception as exc:  # any failure is shown, never raised in a thread
            self._answer.ready.emit(False, str(exc))

    def _show_answer(self, ok: bool, text: str) -> None:
        self.test.setEnabled(self.server.isChecked())
        self.status.setText(("Connected: " if ok else "Cannot connect: ") + text)

    def _update_enabled(self) -> None:
        on = self.server.isChecked()
        for widget in (self.url, self.key, self.test):
            widget.setEnabled(on)


def run_pipeline(settings: Any, engine: EngineProcess, stream: int | None = None,
                 cancel: threading.Event | None = None) -> Any:  # fmt: skip
    """The pipeline a run speaks to, sending `stream` of the file: a Murmur server when the settings
    say so, else the app's own engine process (started, or restarted for other settings, here).
    Either way the settings a server takes per job go with each request."""
    from engine.remote.pipeline import RemotePipeline

    fields = request_fields(settings)
    if settings.run_on == "server":
        return RemotePipeline(settings.server_url, settings.server_key or None, fields, stream)
    url, key = engine.ensure(engine_flags(settings), cancel)
    return RemotePipeline(url, key, fields, stream, local=True)
