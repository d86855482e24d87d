"""The transcript's language comes from the decoder (whisper's forced or detected language) and
reaches the exports that have a language field (JSON, DOCX); it is no longer hard-wired to "en".

Only English-only tiny.en is available offline, so the real decodes below report "en"; detection
of another language by a multilingual model is covered by the mapping test, not by a real model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.backends.whisper import WhisperBackend, WhisperConfig
from engine.export import ExportOptions, export, read_json
from engine.pipeline import spoken_language
from engine.types import Chunk, ChunkResult, Recording, SpeechSegment, Transcript, Utterance

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"


def _result(speech: float, language: str | None) -> ChunkResult:
    chunk = Chunk(0, 0.0, 30.0, (SpeechSegment(0.0, speech),))
    return ChunkResult(chunk, (), language=language)


def test_the_language_decoded_over_the_most_speech_is_the_transcripts() -> None:
    results = [_result(4.0, "en"), _result(20.0, "DE "), _result(3.0, "en"), _result(5.0, None)]
    assert spoken_language(results) == "de"
    assert spoken_language([_result(0.0, "fr")]) == "fr"  # a chunk without VAD speech still counts


def test_a_backend_that_reports_no_language_keeps_the_default() -> None:
    assert spoken_language([_result(10.0, None)]) == "en"
    assert spoken_language([], default="") == ""


@pytest.mark.parametrize("quality", ["fast", "accurate"])
def test_whisper_reports_the_language_it_decoded_each_chunk_in(quality: str) -> None:
    samples, rate = sf.read(DEMO, dtype="float32", frames=12 * 16000)
    assert rate == 16000
    recording = Recording(np.ascontiguousarray(samples), 16000)
    chunk = Chunk(0, 0.0, 12.0, (SpeechSegment(0.5, 11.5),))
    backend = WhisperBackend(WhisperConfig(quality=quality, cpu_threads=2, language="en"))
    (result,) = backend.transcribe(recording, [chunk])
    assert result.raw_text and result.language == "en"


def test_the_language_reaches_the_json_and_docx_exports(tmp_path: Path) -> None:
    from docx import Document

    t = Transcript((Utterance(0.0, 2.0, "Guten Morgen."),), duration=2.0, language="de")
    paths = export(t, tmp_path / "meeting", ["json", "docx", "srt"], ExportOptions())
    by_suffix = {p.suffix: p for p in paths}
    assert json.loads(by_suffix[".json"].read_text())["language"] == "de"
    assert read_json(by_suffix[".json"]).language == "de"
    assert Document(str(by_suffix[".docx"])).core_properties.language == "de"


def test_murmur_transcribe_writes_the_decoders_language(tmp_path: Path) -> None:
    samples, _ = sf.read(DEMO, dtype="float32", frames=12 * 16000)
    clip = tmp_path / "clip.flac"
    sf.write(clip, samples, 16000)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "transcribe", str(clip), "--language", "en", "--diarizer", "none",
         "--format", "json,docx", "--out", str(tmp_path), "-q"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "clip.json").read_text())
    assert data["language"] == "en" and data["utterances"]
    from docx import Document

    assert Document(str(tmp_path / "clip.docx")).core_properties.language == "en"
