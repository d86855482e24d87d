"""The transcription settings dialog, generated from `app.settings.OPTION_SPECS`.

One row per option; a row is enabled only when the chosen backend (or the pipeline) takes that
option, and a disabled row's tooltip says why. `settings()` returns the validated
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
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.remote_settings import RunOnSection
from app.settings import OPTION_SPECS, OptionSpec, TranscribeSettings, parse_terms, supported_options
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
        form = QFormLayout()
        form.addRow("&Backend", self.backend)
        for spec in OPTION_SPECS:
            editor, row = self._editor(spec)
            self.editors[spec.key], self.rows[spec.key] = editor, row
            label = QLabel(spec.label)
            label.setBuddy(editor)
            form.addRow(label, row)
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
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.backend.currentTextChanged.connect(self._update_enabled)
        self.set_settings(settings)

    def _editor(self, spec: OptionSpec) -> tuple[QWidget, QWidget]:
        editor: Any
        if spec.kind == "choice":
            editor = QComboBox()
            editor.addItems(list(spec.choices))
        elif spec.kind == "int":
            editor = QSpinBox()
            editor.setRange(int(spec.minimum), int(spec.maximum))
        elif spec.kind == "float":
            editor = QDoubleSpinBox()
            editor.setRange(spec.minimum, spec.maximum)
            editor.setDecimals(0)
        elif spec.kind == "bool":
            editor = QCheckBox()
        else:
            editor = QLineEdit()
            editor.setPlaceholderText(
                "the backend's default" if spec.kind == "model" else "e.g. Alice, Kubernetes"
            )
        if spec.special and isinstance(editor, QSpinBox | QDoubleSpinBox):
            editor.setSpecialValueText(spec.special)
        editor.setToolTip(spec.tooltip)
        editor.setAccessibleName(spec.label)
        editor.setAccessibleDescription(spec.tooltip)
        if spec.kind != "model":
            return editor, editor
        row = QWidget()
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
        backend = self.backend.currentText()
        supported = supported_options(backend)
        for spec in OPTION_SPECS:
            row, on = self.rows[spec.key], spec.key in supported
            row.setEnabled(on)
            row.setToolTip(spec.tooltip if on else f"The {backend} backend does not take this setting.")

    def set_settings(self, s: TranscribeSettings) -> None:
        self.backend.setCurrentText(s.backend)
        for spec in OPTION_SPECS:
            editor, value = self.editors[spec.key], getattr(s, spec.key)
            if isinstance(editor, QComboBox):
                editor.setCurrentText(str(value))
            elif isinstance(editor, QSpinBox | QDoubleSpinBox):
                editor.setValue(value)
            elif isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QLineEdit):
                editor.setText(", ".join(value) if spec.kind == "terms" else str(value))
        self.run_on.set_values(s)
        self._update_enabled()

    def settings(self) -> TranscribeSettings:
        """The settings shown; ValueError when they do not make sense together."""
        values: dict[str, Any] = {"backend": self.backend.currentText(), **self.run_on.values()}
        for spec in OPTION_SPECS:
            editor = self.editors[spec.key]
            if isinstance(editor, QComboBox):
                values[spec.key] = editor.currentText()
            elif isinstance(editor, QSpinBox | QDoubleSpinBox):
                values[spec.key] = editor.value()
            elif isinstance(editor, QCheckBox):
                values[spec.key] = editor.isChecked()
            elif isinstance(editor, QLineEdit):
                text = editor.text().strip()
                values[spec.key] = parse_terms(text) if spec.kind == "terms" else text
        return TranscribeSettings(**values)

    def accept(self) -> None:
        try:
            self.settings()
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        super().accept()
