"""Two runs exporting the same name into the same folder leave one run's complete set of files, and
the half-written files of a writer that was killed are cleared by the next export."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from engine.export import export
from engine.types import Transcript, Utterance

ROOT = Path(__file__).resolve().parents[2]
FORMATS = ["srt", "vtt", "txt", "json"]

EXPORT = """
import sys, time
from engine.export import export
from engine.types import Transcript, Utterance
marker, formats, start = sys.argv[1], sys.argv[2].split(","), float(sys.argv[3])
lines = tuple(Utterance(i * 2.0, i * 2.0 + 1.5, f"{marker} line {i}", "S1") for i in range(20_000))
transcript = Transcript(lines, duration=40_000.0)
while time.time() < start:
    time.sleep(0.005)
export(transcript, sys.argv[4], formats, stem="meeting")
"""


def test_two_runs_writing_the_same_stem_leave_one_complete_set(tmp_path: Path):
    for round_ in range(1):
        out = tmp_path / f"round{round_}"
        start = time.time() + 3.0  # both processes are up and have built their transcripts by then
        runs = [
            subprocess.Popen(
                [sys.executable, "-c", EXPORT, marker, ",".join(order), str(start), str(out)],
                env={"PYTHONPATH": str(ROOT)},
            )
            for marker, order in (("alpha", FORMATS), ("omega", FORMATS[::-1]))  # opposite orders
        ]
        assert [run.wait(timeout=120) for run in runs] == [0, 0]
        writers = {
            fmt: {m for m in ("alpha", "omega") if m in (out / f"meeting.{fmt}").read_text()}
            for fmt in FORMATS
        }
        assert all(len(w) == 1 for w in writers.values()), writers
        assert len(set.union(*writers.values())) == 1, f"a mixed set: {writers}"


def _dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True).stdout)  # fmt: skip


def test_leftover_part_files_of_a_killed_writer_are_removed_on_the_next_write(tmp_path):
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # still writing
    try:
        stale = tmp_path / f".talk.srt.{_dead_pid()}-0123abcd.part"
        live = tmp_path / f".talk.vtt.{writer.pid}-0123abcd.part"  # a concurrent run's file: kept
        mine = tmp_path / f".talk.json.{os.getpid()}-0123abcd.part"  # this process's own: kept
        for part in (stale, live, mine):
            part.write_text("half")
        t = Transcript((Utterance(0.0, 1.0, "hi"),), duration=1.0, source="talk.wav")
        export(t, tmp_path, ["txt"])
        assert not stale.exists() and live.exists() and mine.exists()
        assert writer.poll() is None, "asking whether the other writer runs must not disturb it"
    finally:
        writer.kill()
        writer.wait()


def test_exported_files_get_the_usual_permissions(tmp_path):
    """Readable by others like any file the user saves (0o666 less the umask), never executable."""
    umask = os.umask(0o022)
    os.umask(umask)
    (path,) = export(Transcript((Utterance(0.0, 1.0, "hi"),), duration=1.0), tmp_path, ["txt"])
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
