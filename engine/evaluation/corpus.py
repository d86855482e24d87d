"""A synthetic long-form test corpus: several espeak-ng meetings with exact references and a manifest.

`make_corpus(CorpusConfig(...), out_dir)` writes, for each recording `<prefix>-NN`:
`<id>.flac` (16-bit mono), `<id>.rttm`, `<id>.stm`, `<id>.seglst.json`, `<id>.words.json` (exact
word times), `<id>.uem` (the whole recording is scored), then `manifest.json` naming them all.
Recording i gets its own seed (derived from the corpus seed and i), a speaker count and a duration
drawn uniformly from the configured ranges, and the corpus-wide overlap, back-channel, noise and
reverberation settings (`engine.synth.MeetingConfig`). The same config gives the same corpus.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from engine.evaluation.manifest import Manifest, ManifestEntry, write_manifest
from engine.synth.meeting import MAX_DURATION_S, MIN_DURATION_S, ROSTER, MeetingConfig, build_meeting
from engine.synth.references import write_meeting

Range = tuple[float, float]


@dataclass(frozen=True, slots=True)
class CorpusConfig:
    recordings: int = 3
    speakers: tuple[int, int] = (2, 4)  # inclusive range, drawn per recording
    minutes: Range = (1.0, 1.0)  # uniform range, drawn per recording
    seed: int = 0
    overlap_rate: float = 0.1
    backchannel_rate: float = 0.15
    snr_db: float | None = None  # None: no noise
    rt60_s: float | None = None  # None: no reverberation
    sample_rate: int = 16000
    prefix: str = "meeting"

    def __post_init__(self) -> None:
        if not 1 <= self.recordings <= 1000:
            raise ValueError(f"a corpus has 1–1000 recordings, got {self.recordings}")
        low, high = self.speakers
        if not 1 <= low <= high <= len(ROSTER):
            raise ValueError(f"speakers must be a range within 1–{len(ROSTER)}, got {low}–{high}")
        shortest, longest = self.minutes
        if not MIN_DURATION_S / 60 <= shortest <= longest <= MAX_DURATION_S / 60:
            raise ValueError(f"minutes must be a range within 1–60, got {shortest:g}–{longest:g}")
        if self.seed < 0:
            raise ValueError(f"seed must be zero or positive, got {self.seed}")
        if not self.prefix or any(c.isspace() or c in "/\\" for c in self.prefix):
            raise ValueError(f"prefix must be one word usable in a file name, got {self.prefix!r}")

    def meetings(self) -> list[MeetingConfig]:
        """The per-recording meeting configs this corpus config describes."""
        rng = np.random.default_rng([self.seed, 2024])
        width = max(2, len(str(self.recordings)))
        configs = []
        for i in range(self.recordings):
            speakers = int(rng.integers(self.speakers[0], self.speakers[1] + 1))
            minutes = float(rng.uniform(*self.minutes))
            configs.append(
                MeetingConfig(
                    speakers=speakers,
                    duration_s=round(minutes * 60.0, 1),
                    seed=int(rng.integers(0, 2**31 - 1)),
                    overlap_rate=self.overlap_rate,
                    backchannel_rate=self.backchannel_rate,
                    snr_db=self.snr_db,
                    rt60_s=self.rt60_s,
                    sample_rate=self.sample_rate,
                    session_id=f"{self.prefix}-{i + 1:0{width}d}",
                )
            )
        return configs


def make_corpus(
    config: CorpusConfig,
    out_dir: Path,
    on_recording: Callable[[int, int, str], None] | None = None,
) -> Path:
    """Generate the corpus into `out_dir`; returns the manifest's path.

    `on_recording(done, total, recording_id)` is called after each recording is written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    meetings = config.meetings()
    for i, meeting_config in enumerate(meetings):
        meeting = build_meeting(meeting_config)
        stem = out_dir / meeting_config.session_id
        write_meeting(meeting, stem)
        uem = stem.with_name(stem.name + ".uem")
        uem.write_text(f"{meeting_config.session_id} 1 0.000 {meeting.duration:.3f}\n", encoding="utf-8")
        entries.append(_entry(stem, meeting.duration))
        if on_recording is not None:
            on_recording(i + 1, len(meetings), meeting_config.session_id)
    (out_dir / "corpus.json").write_text(json.dumps(asdict(config), indent=1) + "\n", encoding="utf-8")
    return write_manifest(Manifest(out_dir.name or "synthetic", tuple(entries)), out_dir / "manifest.json")


def _entry(stem: Path, duration: float) -> ManifestEntry:
    def beside(suffix: str) -> Path:
        return stem.with_name(stem.name + suffix)

    return ManifestEntry(
        id=stem.name,
        audio=beside(".flac"),
        stm=beside(".stm"),
        rttm=beside(".rttm"),
        seglst=beside(".seglst.json"),
        uem=beside(".uem"),
        duration=round(duration, 3),
    )
