"""Live transcription lag and accuracy: the demo meeting played through the real capture path.

The demo (resources/demo/meeting.flac, 124.5 s, 4 speakers) is fed by `FileSource` at real-time
speed through `LiveSession` (capture stream → FLAC → streaming VAD → live whisper queue, provisional
speakers on), exactly as a microphone would be. For every closed speech segment it measures the
delay from the segment's end (when that audio was "spoken") to its lines appearing, and for every
line the delay from the end of its own words. Then the full pipeline runs over the recorded file
(the offline run), and both texts are scored against the demo's reference (WER, Murmur
normalisation). The machine is shared: delays include waiting for the CPU.

    .venv/bin/python bench/live.py [--speed 1] [--model tiny.en]

Last line: `live lag p50/p95: X / Y s; WER live/offline: A / B`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import jiwer
import numpy as np

from engine.backends.whisper import WhisperBackend, WhisperConfig
from engine.evaluation.normalize import MurmurNormalizer
from engine.live.session import LiveSession
from engine.live.sources import FileSource
from engine.live.transcriber import LiveLine
from engine.pipeline import Pipeline, PipelineConfig
from engine.speakers import SpeakerConfig

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"
STM = ROOT / "resources" / "demo" / "meeting.stm"


def reference() -> str:
    return " ".join(line.split(maxsplit=5)[5] for line in STM.read_text().splitlines() if line.strip())


def run_live(speed: float, backend: WhisperBackend, out: Path) -> tuple[list[LiveLine], float, LiveSession]:
    lines: list[LiveLine] = []
    source = FileSource(DEMO, speed=speed)
    session = LiveSession(source, out, backend, on_line=lines.append)
    began = time.monotonic()
    session.start()
    most_behind = 0.0
    while not session.capture.ended.wait(0.2):
        most_behind = max(most_behind, session.status().behind_seconds)
    session.stop()
    session.finish()
    print(f"recorded {session.capture.seconds:.1f} s in {len(session.segments)} segments; "
          f"{len(lines)} live lines; most behind {most_behind:.1f} s")  # fmt: skip
    return lines, began, session


def lags(lines: list[LiveLine], began: float, speed: float) -> tuple[list[float], list[float]]:
    """Per segment: its end → its lines; per line: the end of its words → the line."""
    first: dict[tuple[float, float], float] = {}
    for line in lines:
        key = (line.segment.start, line.segment.end)
        first[key] = min(first.get(key, line.ready_at), line.ready_at)
    per_segment = [ready - (began + end / speed) for (_, end), ready in first.items()]
    per_line = [ln.ready_at - (began + ln.utterance.end / speed) for ln in lines]
    return per_segment, per_line


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--speed", type=float, default=1.0, help="1 = real time (default)")
    p.add_argument("--model", default="tiny.en")
    args = p.parse_args()
    print(f"CPUs: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} (a shared machine: delays "
          "include waiting for the CPU)")  # fmt: skip
    backend = WhisperBackend(WhisperConfig(model=args.model))
    with tempfile.TemporaryDirectory() as tmp:
        lines, began, session = run_live(args.speed, backend, Path(tmp) / "live.flac")
        per_segment, per_line = lags(lines, began, args.speed)
        started = time.perf_counter()
        offline = Pipeline(backend, PipelineConfig(speakers=SpeakerConfig(diarizer="none"))).run(session.path)
        print(f"offline run over the recording: {time.perf_counter() - started:.1f} s")
    norm = MurmurNormalizer()
    ref = norm(reference())
    wer_live = jiwer.wer(ref, norm(" ".join(ln.utterance.text for ln in lines)))
    wer_offline = jiwer.wer(ref, norm(offline.text))
    seg50, seg95 = np.percentile(per_segment, [50, 95])
    line50, line95 = np.percentile(per_line, [50, 95])
    print(f"per line (end of its words → line): p50 {line50:.2f} s, p95 {line95:.2f} s, "
          f"max {max(per_line):.2f} s")  # fmt: skip
    print(f"per segment (end of the speech segment → its lines), in order: "
          f"{' '.join(f'{x:.1f}' for x in per_segment)}")  # fmt: skip
    wers = f"{wer_live:.3f} / {wer_offline:.3f}"
    print(f"live lag p50/p95: {seg50:.2f} / {seg95:.2f} s; WER live/offline: {wers}")


if __name__ == "__main__":
    main()
