"""Results of scoring one system on one dataset: per recording, pooled, and as JSON.

`SystemReport.pooled(metric)` is the corpus figure: errors summed over recordings divided by the
summed reference length (words; seconds of speech for DER), i.e. meeteval's
`combine_error_rates`. `macro(metric)` is the mean of per-recording rates, the way the paper's
harness averages; both are in the JSON. Recordings the system failed on are left out of both
unless `count_failures`, in which case they count with an empty transcript (100 % WER, cpWER,
tcpWER and DER: all reference words deleted, all reference speech missed).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from engine.evaluation.metrics import METRICS, ErrorCount, MetricConfig, Scores, pool
from engine.evaluation.systems import System, to_dict

FORMAT = "murmur-eval"
VERSION = 1


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What happened when a system transcribed one recording."""

    duration: float  # seconds of audio
    seconds: float  # wall time of the run
    failed: str | None = None  # the error, when the system failed on the recording
    chunks: int = 0
    finish_reasons: tuple[tuple[str, int], ...] = ()  # e.g. (("eos", 11), ("loop", 1))
    generated_tokens: int = 0
    # per chunk decoded with KV eviction: (kept at its last step, mean kept over steps, logical entries)
    kv: tuple[tuple[float, float, int], ...] = ()
    # per chunk decoded with speech eviction: (seconds of speech evicted before they were transcribed,
    # chunk seconds)
    lost: tuple[tuple[float, float], ...] = ()
    anchor_stopped: int = 0  # chunks whose speech-anchor stopped evicting (times ahead of their text)

    @property
    def rtf(self) -> float:
        """Real-time factor: wall time over audio duration (lower is faster)."""
        return self.seconds / self.duration if self.duration > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["finish_reasons"] = dict(self.finish_reasons)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunFacts:
        reasons = tuple(sorted((str(k), int(v)) for k, v in dict(data.get("finish_reasons", {})).items()))
        return cls(
            duration=float(data["duration"]),
            seconds=float(data["seconds"]),
            failed=data.get("failed"),
            chunks=int(data.get("chunks", 0)),
            finish_reasons=reasons,
            generated_tokens=int(data.get("generated_tokens", 0)),
            kv=tuple((float(a), float(b), int(c)) for a, b, c in data.get("kv", ())),
            lost=tuple((float(a), float(b)) for a, b in data.get("lost", ())),
            anchor_stopped=int(data.get("anchor_stopped", 0)),
        )


@dataclass(frozen=True, slots=True)
class RecordingResult:
    id: str
    facts: RunFacts
    scores: Scores

    @property
    def failed(self) -> bool:
        return self.facts.failed is not None


@dataclass(frozen=True, slots=True)
class SystemReport:
    system: System
    dataset: str
    metrics: MetricConfig
    normalizer: str  # the normaliser's full name (which implementation was used)
    recordings: tuple[RecordingResult, ...] = ()
    skipped: str | None = None  # why the system did not run at all
    model: str | None = None
    count_failures: bool = False

    def skip(self, reason: str) -> SystemReport:
        return dataclasses.replace(self, skipped=reason)

    def with_model(self, model: str) -> SystemReport:
        return dataclasses.replace(self, model=model)

    def with_recordings(self, recordings: tuple[RecordingResult, ...]) -> SystemReport:
        return dataclasses.replace(self, recordings=recordings)

    def counting_failures(self, count: bool = True) -> SystemReport:
        return dataclasses.replace(self, count_failures=count)

    @property
    def scored(self) -> tuple[RecordingResult, ...]:
        """The recordings that enter corpus figures."""
        return tuple(r for r in self.recordings if self.count_failures or not r.failed)

    @property
    def failures(self) -> int:
        return sum(r.failed for r in self.recordings)

    def pooled(self, metric: str) -> ErrorCount | None:
        return pool(r.scores.get(metric) for r in self.scored)

    def macro(self, metric: str) -> float | None:
        counts = [r.scores.get(metric) for r in self.scored]
        rates = [c.rate for c in counts if c is not None and c.rate is not None]
        return sum(rates) / len(rates) if rates else None

    def kept(self) -> dict[str, float] | None:
        """KV kept by eviction over every chunk of the scored recordings, or None without eviction:
        at each chunk's last step pooled (Σ kept / Σ logical entries, the paper's "kept %") and as a
        macro mean over chunks, and the mean over steps averaged over chunks."""
        chunks = [k for r in self.scored for k in r.facts.kv]
        if not chunks:
            return None
        logical = sum(c for _, _, c in chunks)
        return {
            "last_pooled": sum(last * c for last, _, c in chunks) / logical if logical else 0.0,
            "last_macro": sum(last for last, _, _ in chunks) / len(chunks),
            "steps_macro": sum(mean for _, mean, _ in chunks) / len(chunks),
        }

    def lost(self) -> dict[str, float] | None:
        """Speech evicted before it was confirmed transcribed, over every chunk decoded with speech
        eviction (None: none was): seconds in all, their share of those chunks' audio, and the chunks
        whose speech-anchor stopped (their times ran ahead of their text)."""
        chunks = [c for r in self.scored for c in r.facts.lost]
        if not chunks:
            return None
        seconds, audio = sum(a for a, _ in chunks), sum(b for _, b in chunks)
        stopped = sum(r.facts.anchor_stopped for r in self.scored)
        return {"seconds": seconds, "fraction": seconds / audio if audio else 0.0, "anchor_stopped": stopped}

    @property
    def total_seconds(self) -> float:
        return sum(r.facts.seconds for r in self.recordings)

    @property
    def total_duration(self) -> float:
        return sum(r.facts.duration for r in self.recordings)

    @property
    def rtf(self) -> float | None:
        return self.total_seconds / self.total_duration if self.total_duration > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "dataset": self.dataset,
            "system": to_dict(self.system),
            "model": self.model,
            "skipped": self.skipped,
            "settings": settings(self.metrics, self.normalizer, self.count_failures),
            "pooled": {m: _count(self.pooled(m)) for m in METRICS},
            "macro": {m: self.macro(m) for m in METRICS},
            "kv_kept": self.kept(),
            "speech_lost": self.lost(),
            "recordings_scored": len(self.scored),
            "failures": self.failures,
            "total_seconds": self.total_seconds,
            "total_audio_seconds": self.total_duration,
            "rtf": self.rtf,
            "recordings": [_recording(r) for r in self.recordings],
        }


def settings(metrics: MetricConfig, normalizer: str, count_failures: bool) -> dict[str, Any]:
    """The scoring conventions, spelled out so that a number can be compared with others."""
    half = metrics.der_collar / 2
    return {
        "normalizer": normalizer,
        "tcpwer_collar_s": metrics.collar,
        "der_collar_s": metrics.der_collar,
        "der_collar_meaning": f"pyannote total width: ±{half:g} s around each reference boundary "
        f"(md-eval -c {half:g})",
        "der_overlap": "skipped" if metrics.der_skip_overlap else "scored",
        "pooling": "errors / total reference length over recordings (meeteval combine_error_rates)",
        "failed_recordings": "counted as 100 % error" if count_failures else "left out of corpus figures",
    }


def _count(count: ErrorCount | None) -> dict[str, Any] | None:
    if count is None:
        return None
    return {"rate": count.rate, "errors": count.errors, "length": count.length, **dict(count.parts)}


def _recording(result: RecordingResult) -> dict[str, Any]:
    data: dict[str, Any] = {"id": result.id, **result.facts.to_dict(), "rtf": result.facts.rtf}
    for metric in METRICS:
        data[metric] = _count(result.scores.get(metric))
    data["notes"] = list(result.scores.notes)
    return data
