"""The language setting: offered for whisper, handed to the engine, refused for English-only models."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

from app.settings import TranscribeSettings, engine_arguments, supported_options
from app.widgets.settings_dialog import SettingsDialog


def test_the_language_reaches_the_whisper_backend() -> None:
    _, _, options = engine_arguments(TranscribeSettings(model="small", language="de"))
    assert options["language"] == "de"
    _, _, options = engine_arguments(TranscribeSettings(model="large-v3", language="auto"))
    assert options["language"] == "auto"
    assert "language" in supported_options("whisper")


def test_the_dialog_says_the_bundled_model_is_english_only(qtbot) -> None:
    dialog = SettingsDialog(TranscribeSettings())
    qtbot.addWidget(dialog)
    combo = dialog.editors["language"]
    assert isinstance(combo, QComboBox) and combo.currentText() == "en"
    assert "English-only" in dialog.rows["language"].toolTip()
    combo.setCurrentText("fr")
    dialog.accept()
    assert dialog.result() == 0 and "English-only" in dialog.error.text()
    dialog.editors["model"].setText("small")
    dialog.accept()
    assert dialog.result() == 1 and dialog.settings().language == "fr"
