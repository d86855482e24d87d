"""Transcription settings: validation, mapping onto the engine, memory between runs, the dialog."""

from __future__ import annotations

import pytest
from qt_helpers import make_store

from app.settings import TranscribeSettings, engine_arguments, supported_options
from app.widgets.settings_dialog import SettingsDialog
from engine.pipeline import Pipeline


def test_defaults_map_to_the_backends_own_defaults():
    backend, config, options = engine_arguments(TranscribeSettings())
    assert backend == "whisper" and config.chunk_seconds is None
    assert "batch_size" not in options and "model" not in options


def test_chosen_values_reach_the_pipeline_the_cli_also_builds():
    s = TranscribeSettings(batch_size=2, chunk_seconds=20, context=("Alice", "Kubernetes"), device="cpu")
    backend, config, options = engine_arguments(s)
    pipeline = Pipeline.create(backend, config, **options)
    assert pipeline.chunking.max_seconds == 20
    assert pipeline.backend.config.batch_size == 2
    assert pipeline.backend.config.context == ("Alice", "Kubernetes")


def test_options_the_engine_does_not_take_are_never_passed():
    supported = supported_options("whisper")
    assert {"model", "device", "batch_size", "chunk_seconds", "context"} <= supported
    _, _, options = engine_arguments(TranscribeSettings(eviction="both", num_speakers=3))
    assert set(options) <= supported


@pytest.mark.parametrize(
    ("values", "message"),
    [({"backend": "nope"}, "backend"), ({"batch_size": -1}, "Batch"), ({"device": "tpu"}, "Device"),
     ({"min_speakers": 5, "max_speakers": 2}, "exceeds max speakers")],
)  # fmt: skip
def test_invalid_settings_are_refused_with_a_reason(values, message):
    with pytest.raises(ValueError, match=message):
        TranscribeSettings(**values)


def test_settings_and_recent_files_are_remembered_between_runs(tmp_path, qapp):
    store = make_store(tmp_path)
    chosen = TranscribeSettings(batch_size=4, context=("Zoë",), model="/models/x")
    store.set_transcribe_settings(chosen)
    for name in ("a.wav", "b.wav", "a.wav"):
        store.add_recent_file(name)
    again = make_store(tmp_path)
    assert again.transcribe_settings() == chosen
    assert again.recent_files() == ["a.wav", "b.wav"]


def test_a_damaged_settings_file_falls_back_to_defaults(tmp_path, qapp):
    store = make_store(tmp_path)
    store.set_value("transcribe", {"batch_size": "lots", "backend": "whisper"})
    assert store.transcribe_settings() == TranscribeSettings()


def test_dialog_round_trips_settings_and_disables_what_the_backend_does_not_take(qtbot):
    chosen = TranscribeSettings(batch_size=3, chunk_seconds=25, context=("Alice", "Bob"))
    dialog = SettingsDialog(chosen)
    qtbot.addWidget(dialog)
    assert dialog.settings() == chosen
    supported = supported_options("whisper")
    for key, row in dialog.rows.items():
        assert row.isEnabled() == (key in supported), key
        if key not in supported:
            assert "does not take" in row.toolTip()
    dialog.editors["context"].setText("Carol, , Dave")
    assert dialog.settings().context == ("Carol", "Dave")


def test_dialog_keeps_itself_open_on_invalid_input(qtbot):
    dialog = SettingsDialog(TranscribeSettings())
    qtbot.addWidget(dialog)
    for key in ("min_speakers", "max_speakers"):
        dialog.rows[key].setEnabled(True)
    dialog.editors["min_speakers"].setValue(5)
    dialog.editors["max_speakers"].setValue(2)
    dialog.accept()
    assert dialog.result() == 0 and "exceeds max speakers" in dialog.error.text()  # the CLI's words


def test_speaker_hints_and_the_speaker_finder_reach_the_pipeline():
    if "num_speakers" not in supported_options("whisper"):
        pytest.skip("this engine takes no speaker hints")
    _, config, _ = engine_arguments(TranscribeSettings(num_speakers=4, diarizer="none"))
    assert config.speakers.num_speakers == 4 and config.speakers.diarizer == "none"


def test_backend_only_options_are_offered_for_the_backend_that_takes_them():
    from engine.backends import BACKENDS

    if "vibevoice" not in BACKENDS:
        pytest.skip("no vibevoice backend in this engine")
    assert "dtype" in supported_options("vibevoice") and "dtype" not in supported_options("whisper")
    _, _, options = engine_arguments(TranscribeSettings(backend="vibevoice", dtype="bfloat16", batch_size=32))
    assert options["dtype"] == "bfloat16" and options["batch_size"] == 32


def test_the_accurate_quality_reaches_the_whisper_backend_and_not_vibevoice():
    assert "quality" in supported_options("whisper")
    backend, config, options = engine_arguments(TranscribeSettings(quality="accurate"))
    assert Pipeline.create(backend, config, **options).backend.config.quality == "accurate"
    assert "quality" not in supported_options("vibevoice")
    with pytest.raises(ValueError, match="Quality"):
        TranscribeSettings(quality="best")
