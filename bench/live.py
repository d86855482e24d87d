"""Live transcription lag as a user meets it: each turn's end, spoken into a microphone, to its line.

The demo meeting (resources/demo/meeting.flac, 124.5 s, 4 speakers, 23 turns in meeting.stm) is
played by `paplay` into a PulseAudio null sink and recorded from the sink's monitor by the real
capture path (`MicSource` → PortAudio → ALSA's pulse plugin → `LiveSession`: FLAC file, streaming
VAD, live whisper queue, provisional speakers), exactly as `murmur record --live` records a
microphone. For every reference turn the lag is the time from the moment its last word was
played to the moment the line holding that end was ready to show (`LiveLine.ready_at`). Playback
starts once the models are loaded. The moment the demo's first sound reached the capture callback
ties the demo's clock to the wall clock. Meanwhile `LiveSession.status().behind_seconds` (what the
app and `murmur record --live` show) is sampled and compared with the measured lags. Then the
full pipeline runs over the recorded file, and both texts are scored against the reference.

With `--remote` the lines come the way the app's recording gets them: the captured audio goes as
it arrives to a real `murmur serve` subprocess's live endpoint (`WS /v1/realtime`, Murmur's
`RealtimeClient`, provisional speakers asked for) and a line counts from the moment the client
receives it; `behind` is the client's. The same capture path, the same reference turns.

    .venv/bin/python bench/live.py [--model tiny.en] [--no-offline] [--remote]

The machine is shared: the load average before and after is printed; lags include waiting for
the CPU. Last line: `turn lag p50/p95: X / Y s (turn end to line, real audio path)`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import jiwer
import numpy as np
import soundfile as sf

from engine.backends.whisper import WhisperBackend, WhisperConfig
from engine.evaluation.normalize import MurmurNormalizer
from engine.live.session import LiveSession
from engine.live.transcriber import LiveLine
from engine.pipeline import Pipeline, PipelineConfig
from engine.speakers import SpeakerConfig
from engine.testing.pulse_sink import SINK, pointed_here, running_sink

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"
STM = ROOT / "resources" / "demo" / "meeting.stm"
LOUD = 0.02  # a sample above this is the demo's first sound


@contextmanager
def served_whisper(model: str) -> Iterator[str]:
    """A `murmur serve` subprocess with the whisper `model`, as the app's engine process runs."""
    sys.path.insert(0, str(ROOT / "tests" / "engine" / "serve"))
    from conftest import server  # the tests' subprocess helper: start, wait for the model, stop

    with server("--backend", "whisper", "--model", model) as served:
        yield served.url


def reference_turns() -> list[tuple[float, float, str]]:
    turns = []
    for line in STM.read_text().splitlines():
        if line.strip():
            parts = line.split(maxsplit=5)
            turns.append((float(parts[3]), float(parts[4]), parts[5]))
    return turns


def first_sound(samples: np.ndarray) -> int:
    return int(np.argmax(np.abs(samples) > LOUD))


class TimedSource:
    """The microphone, unchanged, with the moment its first loud sample was delivered noted."""

    def __init__(self, source) -> None:  # any AudioSource
        self.source, self.name, self.sample_rate = source, source.name, source.sample_rate
        self.delivered = 0  # samples before the current block
        self.first: tuple[float, int] | None = None  # (wall time of that sample, its index)

    def start(self, deliver, fail) -> None:
        def timed(block: np.ndarray) -> None:
            now = time.monotonic()
            if self.first is None and np.max(np.abs(block), initial=0.0) > LOUD:
                i = first_sound(block)
                self.first = (now - (len(block) - i) / self.sample_rate, self.delivered + i)
            self.delivered += len(block)
            deliver(block)

        self.source.start(timed, fail)

    def stop(self) -> None:
        self.source.stop()


@dataclass(frozen=True, slots=True)
class Shown:
    """A live line as the user sees it: the recorded span it covers and when it was ready."""

    start: float  # recorded seconds
    end: float
    ready_at: float  # monotonic
    text: str


def shown_line(line: LiveLine) -> Shown:
    return Shown(line.segment.start, line.segment.end, line.ready_at, line.utterance.text)


@dataclass(frozen=True, slots=True)
class LiveRun:
    lines: list[Shown]
    demo_wall: float  # wall time of the demo's sample 0
    demo_at: float  # recorded seconds of the demo's sample 0
    shown_behind: list[tuple[float, float]]  # (wall time, behind_seconds shown)
    path: Path


def run_live(backend: WhisperBackend, out: Path, env: dict[str, str]) -> LiveRun:
    from engine.live.sources import MicSource

    lines: list[LiveLine] = []
    source = TimedSource(MicSource("pulse"))
    session = LiveSession(source, out, backend, on_line=lines.append)
    session.start()
    while session.transcriber is not None and not session.transcriber.ready:
        time.sleep(0.1)
    player = subprocess.Popen(["paplay", f"--device={SINK}", str(DEMO)], env=env)
    shown: list[tuple[float, float]] = []
    ends = time.monotonic() + sf.info(DEMO).duration + 8.0  # the tail: the last turn's line
    while time.monotonic() < ends:
        shown.append((time.monotonic(), session.status().behind_seconds))
        time.sleep(0.2)
    player.wait()
    session.stop()
    session.finish()
    return finished_run(session, source, [shown_line(ln) for ln in lines], shown)


def run_remote(url: str, out: Path, env: dict[str, str]) -> LiveRun:
    """The capture as the app records: its audio to the server's live endpoint as it arrives."""
    from engine.live.sources import MicSource
    from engine.remote.realtime_client import RealtimeClient

    lines: list[Shown] = []
    received = lambda ln: lines.append(Shown(ln.start, ln.end, time.monotonic(), ln.text))  # noqa: E731
    failed = lambda message: print(f"live stream: {message}")  # noqa: E731
    client = RealtimeClient(url, None, received, failed, speakers=True)
    source = TimedSource(MicSource("pulse"))
    session = LiveSession(source, out, None, on_audio=client.send)
    client.start()
    session.start()
    player = subprocess.Popen(["paplay", f"--device={SINK}", str(DEMO)], env=env)
    shown: list[tuple[float, float]] = []
    ends = time.monotonic() + sf.info(DEMO).duration + 8.0
    while time.monotonic() < ends:
        shown.append((time.monotonic(), client.behind_seconds()))
        time.sleep(0.2)
    player.wait()
    session.stop()
    session.finish()
    client.finish(timeout=60)
    return finished_run(session, source, lines, shown)


def finished_run(session: LiveSession, source: TimedSource, lines: list[Shown],
                 shown: list[tuple[float, float]]) -> LiveRun:  # fmt: skip
    if source.first is None:
        raise SystemExit("the demo never reached the capture (is the pulse ALSA plugin installed?)")
    demo, rate = sf.read(DEMO, dtype="float32")
    lead = first_sound(demo) / rate
    wall, index = source.first
    print(f"recorded {session.capture.seconds:.1f} s at {source.sample_rate} Hz in {len(session.segments)} "
          f"segments; {len(lines)} live lines")  # fmt: skip
    return LiveRun(lines, wall - lead, index / source.sample_rate - lead, shown, session.path)


def turn_lags(run: LiveRun) -> tuple[list[float], int]:
    """Per reference turn: its end (wall) → the first line whose segment holds that end; and how
    many turns no line covered."""
    lags, missed = [], 0
    for _, end, _ in reference_turns():
        at = run.demo_at + end  # the turn's end in recorded seconds
        holding = [ln.ready_at for ln in run.lines if ln.start <= at <= ln.end + 0.3]
        if not holding:
            missed += 1
            continue
        lags.append(min(holding) - (run.demo_wall + end))
    return lags, missed


def shown_when_waiting(run: LiveRun, lags: list[float]) -> str:
    """The most `behind` shown, against the most lag measured: they should agree."""
    most = max((b for _, b in run.shown_behind), default=0.0)
    return f"most behind shown {most:.1f} s; most turn lag measured {max(lags, default=0.0):.1f} s"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="tiny.en")
    p.add_argument("--no-offline", action="store_true", help="skip the full run over the recording")
    p.add_argument("--remote", action="store_true", help="live lines from a murmur serve subprocess")
    args = p.parse_args()
    before = os.getloadavg()[0]
    backend = WhisperBackend(WhisperConfig(model=args.model))
    with tempfile.TemporaryDirectory() as tmp, running_sink() as sink, pointed_here(sink.env):
        if args.remote:
            with served_whisper(args.model) as url:
                run = run_remote(url, Path(tmp) / "live.flac", sink.env)
        else:
            run = run_live(backend, Path(tmp) / "live.flac", sink.env)
        after = os.getloadavg()[0]
        lags, missed = turn_lags(run)
        print(shown_when_waiting(run, lags))
        print("per turn, in order: " + " ".join(f"{x:.1f}" for x in lags) + (f"; {missed} turn(s) never "
              "shown" if missed else ""))  # fmt: skip
        norm = MurmurNormalizer()
        ref = norm(" ".join(t for _, _, t in reference_turns()))
        wers = f"live {jiwer.wer(ref, norm(' '.join(ln.text for ln in run.lines))):.3f}"
        if not args.no_offline:
            config = PipelineConfig(speakers=SpeakerConfig(diarizer="none"))
            offline = Pipeline(backend, config).run(run.path)
            wers += f", offline {jiwer.wer(ref, norm(offline.text)):.3f}"
    print(f"WER {wers}")
    threads = os.environ.get("OMP_NUM_THREADS", "-")
    print(f"CPUs: {os.cpu_count()}; load average {before:.1f} before, {after:.1f} after (a shared machine: "
          f"lags include waiting for the CPU; OMP_NUM_THREADS={threads})")
    p50, p95 = np.percentile(lags, [50, 95])
    path = "real audio path, through murmur serve" if args.remote else "real audio path"
    print(f"turn lag p50/p95: {p50:.2f} / {p95:.2f} s (turn end to line, {path})")


if __name__ == "__main__":
    threading.current_thread().name = "bench-live"
    main()
