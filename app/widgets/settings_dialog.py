"""The transcription settings dialog, generated from the engine's option table.

One row per `TranscribeSettings` option field, labelled and explained by its row of
`engine.options.option_rows()`; the editor follows the field's type (a list for choices, a number
box, a check box, a text field; a folder button for models). A row is enabled only when the chosen
backend takes that option and, for a run on a Murmur server, only when the server takes it per
request (the rest it holds from its start: `app.settings.per_request`); a disabled row's tooltip
says why. The rows scroll, so the dialog
fits a 1024×600 screen with OK and Cancel always visible. `settings()` returns the validated
`TranscribeSettings`; OK refuses invalid combinations with a message inside the dialog.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.remote_settings import SERVER_HOLDS, RunOnSection
from app.settings import (
    LIMITS,
    TranscribeSettings,
    choices_of,
    option_row,
    parse_terms,
    per_request,
    setting_names,
    supported_options,
)
from engine.backends import BACKENDS


class SettingsDialog(QDialog):
    def __init__(self, settings: TranscribeSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Transcription settings")
        self.setAccessibleName("Transcription settings")
        self.setMinimumWidth(480)
        self.backend = QComboBox()
        self.backend.addItems(list(BACKENDS))
        self.backend.setAccessibleName("Backend")
        self.backend.setToolTip("The speech recognition engine")
        self.editors: dict[str, QWidget] = {}
        self.rows: dict[str, QWidget] = {}
        fields = QWidget()
        form = QFormLayout(fields)
        form.addRow("&Backend", self.backend)
        for name in setting_names():
            editor, row = self._editor(name)
            self.editors[name], self.rows[name] = editor, row
            label = QLabel(option_row(name).label)
            label.setBuddy(editor)
            form.addRow(label, row)
        self.scroll = QScrollArea()  # the rows scroll; the buttons below them stay on screen
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(fields)
        self.error = QLabel("")
        self.error.setObjectName("errorLabel")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        self.run_on = RunOnSection()  # this computer, or a Murmur server
        layout.addWidget(self.run_on)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.backend.currentTextChanged.connect(self._update_enabled)
        self.run_on.server.toggled.connect(self._update_enabled)
        self.set_settings(settings)

    def _editor(self, name: str) -> tuple[QWidget, QWidget]:
        default, choices = getattr(TranscribeSettings(), name), choices_of(name)
        editor: Any
        if isinstance(default, bool):
            editor = QCheckBox()
        elif choices:
            editor = QComboBox()
            editor.addItems(list(choices))
        elif isinstance(default, int | float):
            maximum, special = LIMITS[name]
            editor = QSpinBox() if isinstance(default, int) else QDoubleSpinBox()
            editor.setRange(0, maximum)
            editor.setSpecialValueText(special)
            if isinstance(editor, QDoubleSpinBox):
                editor.setDecimals(0)
        else:
            editor = QLineEdit()
            terms = isinstance(default, tuple)
            editor.setPlaceholderText("e.g. Alice, Kubernetes" if terms else "the backend's default")
        tooltip = option_row(name).tooltip or option_row(name).help
        editor.setToolTip(tooltip)
        editor.setAccessibleName(option_row(name).label)
        editor.setAccessibleDescription(tooltip)
        if not isinstance(editor, QLineEdit) or isinstance(default, tuple):
            return editor, editor
        row = QWidget()  # a model or pipeline: a name, or a folder chosen with the button
        box = QHBoxLayout(row)
        box.setContentsMargins(0, 0, 0, 0)
        browse = QPushButton("Folder…")
        browse.setAccessibleName("Choose a model folder")
        browse.clicked.connect(lambda: self._browse(editor))
        box.addWidget(editor, 1)
        box.addWidget(browse)
        return editor, row

    def _browse(self, editor: QLineEdit) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Model folder", editor.text())
        if folder:
            editor.setText(folder)

    def _update_enabled(self) -> None:
        backend, remote = self.backend.currentText(), self.run_on.server.isChecked()
        supported = supported_options(backend)
        self.backend.setEnabled(not remote)
        self.backend.setToolTip(SERVER_HOLDS if remote else "The speech recognition engine")
        for name, row in self.rows.items():
            on = name in supported and (per_request(name) or not remote)
            row.setEnabled(on)
            tooltip = option_row(name).tooltip or option_row(name).help
            off = SERVER_HOLDS if name in supported else f"The {backend} backend does not take this setting."
            row.setToolTip(tooltip if on else off)

    def set_settings(self, s: TranscribeSettings) -> None:
        self.backend.setCurrentText(s.backend)
        for name, editor in self.editors.items():
            value = getattr(s, name)
            if isinstance(editor, QComboBox):
                editor.setCurrentText(str(value))
            elif isinstance(editor, QSpinBox | QDoubleSpinBox):
                editor.setValue(value)
            elif isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QLineEdit):
                editor.setText(", ".join(value) if isinstance(value, tuple) else str(value))
        self.run_on.set_values(s)
        self._update_enabled()

    def settings(self) -> TranscribeSettings:
        """The settings shown; ValueError when they do not make sense together."""
        values: dict[str, Any] = {"backend": self.backend.currentText(), **self.run_on.values()}
        for name, editor in self.editors.items():
            if isinstance(editor, QComboBox):
                values[name] = editor.currentText()
            elif isinstance(editor, QSpinBox | QDoubleSpinBox):
                values[name] = editor.value()
            elif isinstance(editor, QCheckBox):
                values[name] = editor.isChecked()
            elif isinstance(editor, QLineEdit):
                text = editor.text().strip()
                values[name] = parse_terms(text) if name == "context" else text
        return TranscribeSettings(**values)

    def accept(self) -> None:
        try:
            self.settings()
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        super().accept()
