"""Live transcription of the demo: lines while it plays, nothing dropped when behind, close to the final run.

Stated margin: the live lines' words differ from the final transcript's (the full pipeline over
the recorded file) by at most 10 % WER on this clip. Fed at 10× real time, the decoder falls
behind; the queue must grow, say so, and still decode every segment.
"""

from __future__ import annotations

import time
from pathlib import Path

import jiwer

from engine.backends.whisper import WhisperBackend
from engine.evaluation.normalize import MurmurNormalizer
from engine.live.session import LiveSession
from engine.live.sources import FileSource
from engine.live.transcriber import LiveLine
from engine.pipeline import Pipeline, PipelineConfig
from engine.speakers import SpeakerConfig

WER_MARGIN = 0.10


def test_live_lines_match_the_final_transcript_and_nothing_is_dropped_when_behind(
    clip: Path, tmp_path: Path
) -> None:
    backend = WhisperBackend()
    lines: list[LiveLine] = []
    session = LiveSession(FileSource(clip, speed=10), tmp_path / "r.flac", backend, on_line=lines.append)
    session.start()
    behind = 0.0
    while not session.capture.ended.wait(0.1):
        behind = max(behind, session.status().behind_seconds)
    path = session.stop()
    assert session.finish(timeout=120)
    assert behind > 0.5  # the decoder was behind and said so

    status = session.status()
    assert status.seconds == 26.0 and status.backlog_seconds == 0 and status.behind_seconds == 0
    assert session.transcriber is not None and session.transcriber.segments_done == len(session.segments)
    assert [ln.utterance.start for ln in lines] == sorted(ln.utterance.start for ln in lines)
    assert {ln.utterance.speaker for ln in lines} >= {"S1", "S2"}

    final = Pipeline(backend, PipelineConfig(speakers=SpeakerConfig(diarizer="none"))).run(path)
    norm = MurmurNormalizer()
    live_text = norm(" ".join(ln.utterance.text for ln in lines))
    assert jiwer.wer(norm(final.text), live_text) <= WER_MARGIN


def test_lines_appear_while_the_recording_goes_on(clip: Path, tmp_path: Path) -> None:
    lines: list[tuple[float, LiveLine]] = []
    session = LiveSession(FileSource(clip, speed=2), tmp_path / "r.flac", WhisperBackend(),
                          on_line=lambda ln: lines.append((session.capture.seconds, ln)))  # fmt: skip
    session.start()
    while not session.capture.ended.wait(0.1) and not lines:
        time.sleep(0.05)
    first_at = session.capture.seconds
    session.stop()
    session.finish(timeout=120)
    assert lines and first_at < 20.0  # the first line came long before the 26 s clip ended
