"""Live transcription in the window: how lines arrive, and how soon Esc frees the engine (offscreen).

Opens a recording (default: the demo meeting five times over, 10.4 minutes, 25 whisper chunks) in
a `MainWindow` with the default settings (whisper tiny.en, fast quality, embedded diarizer), then:

- `--cancels` runs cancelled with Esc (the window's Cancel action) 0, 0.6, 1.2, … s after chunk
  result k = 1, 4, 9, … (so Esc lands at different stages of the decode in hand): the time from
  Esc until the worker is idle (a new job could start), and how many chunk results still came
  after Esc;
- a whole run: when the first lines came, the gaps between successive chunk results (the live
  rows), the run's wall time and the process's CPU time.

`--cap N` sets the whisper chunks per decode call on the CPU (`app.worker.WATCHED_BATCH`;
0: the engine's own growing batches 1, 2, 4, 8, as before). Wall times on a shared machine include
other processes' turns; the CPU column is the process's.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/app_live.py [--cap 0] [--cancels 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"

from app_responsiveness import bench_window, wait_until  # noqa: E402  (bench/ is this script's folder)


def repeated_demo(folder: Path, times: int) -> Path:
    import numpy as np
    import soundfile as sf

    samples, rate = sf.read(DEMO, dtype="float32")
    path = folder / f"demo-x{times}.flac"
    sf.write(path, np.concatenate([samples] * times), rate)
    return path


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cap", type=int, default=None, help="whisper chunks per call on a CPU (0: none)")
    ap.add_argument("--times", type=int, default=5, help="the demo this many times over")
    ap.add_argument("--cancels", type=int, default=3)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    import app.worker

    if args.cap is not None:
        app.worker.WATCHED_BATCH = args.cap
    qapp = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        window = bench_window(folder, 1280, 800)
        path = repeated_demo(folder, args.times)
        window.open_path(path)
        wait_until(lambda: not window.session.busy and window.session.prepared is not None, 600)
        chunks = len(window.session.prepared.chunks)
        per_call = app.worker.WATCHED_BATCH or "growing 1, 2, 4, 8"
        seconds = window.session.prepared.recording.duration
        print(f"{path.name}: {seconds:.0f} s, {chunks} chunks; whisper chunks per call on a CPU: {per_call}")
        arrived: list[float] = []  # when each chunk result was emitted (on the worker's thread)
        worker = window.session.runner.worker
        worker.partial.connect(lambda _: arrived.append(time.monotonic()), Qt.ConnectionType.DirectConnection)

        # cancelled runs
        for k, delay in ((1, 0.0), (4, 0.6), (9, 1.2), (16, 0.3), (20, 0.9))[: args.cancels]:
            arrived.clear()
            window.transcribe()
            wait_until(lambda k=k: len(arrived) >= k, 600)
            due = arrived[k - 1] + delay
            wait_until(lambda due=due: time.monotonic() >= due, 60)
            pressed, cpu = time.monotonic(), time.process_time()
            window.actions_by_name["cancel"].trigger()  # Esc
            wait_until(lambda: not window.session.busy, 600)
            idle = time.monotonic() - pressed
            late = sum(t > pressed for t in arrived)
            print(f"Esc {delay:.1f} s after chunk result {k}: worker idle after {idle:.2f} s "
                  f"({time.process_time() - cpu:.2f} s CPU); {late} chunk result(s) after Esc")  # fmt: skip
        # a whole run (the model was loaded by the first cancelled run; it loads before chunk 1)
        arrived.clear()
        began, cpu = time.monotonic(), time.process_time()
        window.transcribe()
        wait_until(lambda: not window.session.busy, 1800)
        wall, cpu = time.monotonic() - began, time.process_time() - cpu
        gaps = [b - a for a, b in pairwise(arrived)]
        together = sum(g < 0.05 for g in gaps)
        first, median = arrived[0] - began, statistics.median(gaps)
        print(f"whole run: {wall:.1f} s wall, {cpu:.1f} s CPU; first chunk result after {first:.1f} s")
        print(f"gaps between chunk results: median {median:.2f} s, longest {max(gaps):.2f} s, "
              f"{together} of {len(gaps)} together (< 50 ms apart)")  # fmt: skip

        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"load average: {load:.1f} on {os.cpu_count()} cores")
        window.close()
    qapp.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
