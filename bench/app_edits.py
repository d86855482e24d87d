"""How long the window's GUI thread blocks per edit on a three-hour transcript (offscreen).

Builds a synthetic three-hour transcript (about 1,700 utterances with word timings, six speakers),
shows it in a `MainWindow` at 1440×900 and times each operation through the window's own paths,
each followed by `processEvents()` so the relayout and repaint it causes are counted too:

- one text edit (the model's `setData`, as a committed line editor does), a speaker change
  (Ctrl+2 on the selection), a split (Ctrl+K), a merge (Ctrl+J), a rename;
- Replace All over ≥ 1,000 rows from the find bar, and its undo;
- live results: 17 chunk results of 100 segments each, appended as the worker delivers them.

Prints the worst (and median) block of each operation over `--repeat` tries, the GUI thread's CPU
time (the most any one block used; on a shared machine the wall time also holds other processes' turns),
with the targets
(≤ 50 ms per single edit, ≤ 1 s for Replace All and its undo, ≤ 100 ms per live append).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/app_edits.py
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from engine.types import Chunk, ChunkResult, Segment, Speaker, Transcript, Utterance, Word

WORDS = [
    "the",
    "meeting",
    "budget",
    "we",
    "should",
    "look",
    "at",
    "the",
    "numbers",
    "for",
    "the",
    "next",
    "quarter",
    "and",
    "the",
    "team",
    "thinks",
    "that",
    "the",
    "plan",
    "is",
    "fine",
    "but",
    "the",
    "schedule",
    "is",
    "tight",
    "so",
    "the",
    "release",
    "may",
    "move",
    "to",
    "the",
    "end",
    "of",
    "the",
    "month",
    "unless",
    "the",
    "review",
    "finds",
    "nothing",
    "new",
    "in",
    "the",
    "data",
]
NAMES = ("Alice", "Bob", "Carol", "Dan", "Erin", "Frank")


def synthetic_transcript(seconds: float = 3 * 3600, count: int = 1700, speakers: int = 6,
                         seed: int = 0) -> Transcript:  # fmt: skip
    """`count` utterances spread over `seconds`, 4–60 words each, with word times and probabilities."""
    rng = random.Random(seed)
    step = seconds / count
    out = []
    for i in range(count):
        start = i * step + rng.uniform(0, step * 0.1)
        end = min(start + step * rng.uniform(0.6, 0.95), seconds)
        n = rng.randint(4, 60)
        texts = [rng.choice(WORDS) for _ in range(n)]
        per = (end - start) / n
        words = tuple(Word(start + k * per, start + (k + 1) * per, t, round(rng.uniform(0.3, 1.0), 3))
                      for k, t in enumerate(texts))  # fmt: skip
        out.append(Utterance(start, end, " ".join(texts), f"S{rng.randrange(speakers) + 1}", words))
    people = tuple(Speaker(f"S{k + 1}", NAMES[k % len(NAMES)]) for k in range(speakers))
    return Transcript(utterances=tuple(out), speakers=people, duration=seconds, source="meeting.flac",
                      model="whisper:synthetic")  # fmt: skip


def live_results(seconds: float, chunks: int, per_chunk: int, seed: int = 1) -> list[ChunkResult]:
    """Chunk results (chunk-relative times, local speakers) as a backend delivers them."""
    rng = random.Random(seed)
    span = seconds / chunks
    out = []
    for c in range(chunks):
        chunk = Chunk(c, c * span, (c + 1) * span)
        step = span / per_chunk
        segs = tuple(Segment(k * step, (k + 0.9) * step, " ".join(rng.choice(WORDS) for _ in range(12)),
                             rng.randrange(3)) for k in range(per_chunk))  # fmt: skip
        out.append(ChunkResult(chunk, segs))
    return out


def block(app: object, action: Callable[[], object], cpu: list[float] | None = None) -> float:
    """Seconds the GUI thread is blocked by `action` and the events it posts (layout, paint).
    The thread's CPU time for the same block is appended to `cpu`: on a shared machine the wall
    time also counts the time other processes held the cores."""
    t0, c0 = time.perf_counter(), time.thread_time()
    action()
    app.processEvents()  # type: ignore[attr-defined]
    if cpu is not None:
        cpu.append(time.thread_time() - c0)
    return time.perf_counter() - t0


def settle(app: object, seconds: float = 0.5, cpu_log: list[float] | None = None) -> float:
    """Run the event loop for `seconds` (deferred work such as timers runs); the longest block."""
    worst, cpu, end = 0.0, 0.0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0, c0 = time.perf_counter(), time.thread_time()
        app.processEvents()  # type: ignore[attr-defined]
        worst, cpu = max(worst, time.perf_counter() - t0), max(cpu, time.thread_time() - c0)
        time.sleep(0.002)
    if cpu_log is not None:
        cpu_log.append(cpu)
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1700)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-replace", action="store_true", help="leave out Replace All and its undo")
    args = ap.parse_args()

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app import commands
    from app import speakers as sp
    from app.main_window import MainWindow
    from app.resources import style_sheet
    from app.settings import SettingsStore
    from app.transcript_model import TEXT

    app = QApplication.instance() or QApplication([])
    app.setStyleSheet(style_sheet())  # as the app runs: the style sheet makes painting dearer
    folder = Path(tempfile.mkdtemp(prefix="murmur-bench-"))
    store = SettingsStore(QSettings(str(folder / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(store, folder / "recovery", autosave_ms=3_600_000)
    window.ask_before_closing = False
    window.resize(1440, 900)
    window.show()
    transcript = synthetic_transcript(count=args.rows)
    load = block(app, lambda: commands.set_document(window.model, transcript,
                                                    sp.book_from_transcript(transcript), "Load"))  # fmt: skip
    model, view, rng = window.model, window.transcript_view, random.Random(2)
    results: dict[str, float] = {"open the transcript (once)": load, "open: deferred work": settle(app)}
    medians: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def worst(name: str, action: Callable[[], object], setup: Callable[[], object] | None = None) -> None:
        times, used = [], []
        for _ in range(args.repeat):
            if setup is not None:  # selecting the line is not part of the edit
                setup()
                settle(app, 0.1)
            # the edit, then anything it left for later (timers, deferred relayout) as a block of its own
            times.append(max(block(app, action, used), settle(app, 0.1, used)))
        results[name], medians[name] = max(times), statistics.median(times)
        cpu[name] = max(used)

    def text_edit() -> None:
        row = rng.randrange(model.rowCount())
        model.setData(model.index(row, TEXT), model.utterance(row).text + " indeed")

    def select_random() -> int:
        row = rng.randrange(model.rowCount() - 1)
        view.select_row(row)
        return row

    worst("text edit", text_edit)
    worst("select a line (click)", select_random)
    worst("speaker change (Ctrl+2)", lambda: window.edit.assign(2), select_random)
    worst("split (Ctrl+K)", window.edit.split, select_random)
    worst("merge (Ctrl+J)", window.edit.merge, select_random)
    worst("rename a speaker", lambda: commands.rename_speaker(model, "S1", f"Alice {rng.random():.4f}"))
    worst("undo one edit", window.undo_stack.undo)
    if not args.skip_replace:
        query = "the"
        rows = sum(1 for u in model.utterances if query in u.text.lower())
        bar = window.find_bar
        bar.find_edit.setText(query)
        bar.replace_edit.setText("THE")
        for name, action in ((f"Replace All ({rows} rows)", bar.replace_every),
                             ("undo Replace All", window.undo_stack.undo),
                             ("redo Replace All", window.undo_stack.redo)):  # fmt: skip
            used = []
            results[name] = max(block(app, action, used), settle(app, 0.2, used))
            cpu[name] = max(used)

    session = window.session
    session._snapshot, session._partials = commands.current_document(model), []  # a run starting
    model.read_only = True
    appends, used = [], []
    for result in live_results(transcript.duration, 17, 100):
        appends.append(
            max(block(app, lambda r=result: session._on_partial(r), used), settle(app, 0.05, used))
        )
    name = "live append of 100 rows (17 appends)"
    results[name], medians[name] = max(appends), statistics.median(appends)
    cpu[name] = max(used)
    model.read_only = False

    targets = {"Replace": 1.0, "undo Replace": 1.0, "redo Replace": 1.0, "live": 0.1, "open": None}
    print(f"{model.rowCount()} rows in the table after the run; {args.rows} utterances, 3 h")
    print(f"{'operation':44s} {'worst block':>12s} {'median':>9s} {'max CPU':>9s}  target")
    for name, seconds in results.items():
        target = next((t for k, t in targets.items() if name.startswith(k)), 0.05)
        verdict = "ok" if target is None or seconds <= target else "OVER"
        mark = "" if target is None else f"{verdict} (≤ {target * 1000:g} ms)"
        median = f"{medians[name] * 1000:6.1f} ms" if name in medians else " " * 9
        used = f"{cpu[name] * 1000:6.1f} ms" if name in cpu else " " * 9
        print(f"{name:44s} {seconds * 1000:9.1f} ms {median} {used}  {mark}")
    window.close()


if __name__ == "__main__":
    main()
