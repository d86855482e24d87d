"""Run one system over a manifest: transcribe each recording, time it, keep the hypothesis, score it.

`evaluate(system, manifest, options)` returns a `SystemReport`. A system that cannot run here
(see `systems.unavailable`) or whose model fails to load is returned as *skipped* with the reason.
The model is loaded (a one-second silent warm-up) before any timing starts, so `seconds` is the
wall time of `Pipeline.run` per recording: decoding, VAD, chunking, inference and stitching.
A recording on which the system fails (a typed Murmur error, out of memory, a backend crash) is
kept with the error message and scored as an empty transcript; whether such failures count in
corpus figures (as 100 % error, the paper's Figure 3) is the report's choice.

With an output folder, each hypothesis is written as `<out>/hyp/<id>.json` (lossless transcript)
and `<id>.seglst.json`, with the run's facts in `<id>.run.json`; `resume=True` reuses them.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.errors import Cancelled, MurmurError
from engine.evaluation.manifest import Manifest, ManifestEntry, load_reference
from engine.evaluation.metrics import MetricConfig, score_recording
from engine.evaluation.normalize import Normalizer, get_normalizer
from engine.evaluation.reference import Reference, hypothesis_segments
from engine.evaluation.report import RecordingResult, RunFacts, SystemReport
from engine.evaluation.systems import System, unavailable
from engine.types import Chunk, Progress, Recording, Stage, Transcript

log = logging.getLogger(__name__)
Notify = Callable[[str], None]
Run = tuple["Transcript | None", RunFacts, str]  # hypothesis (None: failed), facts, model description
_FAILURES = (MurmurError, ValueError, RuntimeError, MemoryError)


@dataclass(frozen=True, slots=True)
class RunOptions:
    metrics: MetricConfig = field(default_factory=MetricConfig)
    out_dir: Path | None = None  # where hypotheses go; None: keep nothing
    resume: bool = False  # reuse hypotheses already in out_dir
    warm_up: bool = True


def evaluate(
    system: System,
    manifest: Manifest,
    options: RunOptions | None = None,
    notify: Notify | None = None,
    cancel: threading.Event | None = None,
    backend: Any = None,
) -> SystemReport:
    """Score `system` on every recording of `manifest` (see the module docstring).

    `backend` may be an already-built backend to reuse (its model stays loaded between systems).
    """
    options = options or RunOptions()
    say = notify or (lambda message: None)
    normalizer = get_normalizer(options.metrics.normalizer)
    report = SystemReport(system, manifest.name, options.metrics, normalizer.name)
    reason = unavailable(system)
    if reason is not None:
        say(f"[{system.name}] skipped: {reason}")
        return report.skip(reason)
    references = {e.id: load_reference(e) for e in manifest.entries}  # bad references fail first
    starter = _Starter(system, backend, options.warm_up, cancel)
    results = []
    for entry in manifest.entries:
        run = _load_cached(entry.id, options) if options.resume else None
        if run is None:
            pipeline = starter.pipeline()
            if pipeline is None:
                say(f"[{system.name}] skipped: {starter.failure}")
                return report.skip(starter.failure or "the system could not start")
            run = _transcribe(pipeline, entry, cancel)
            _save(entry.id, run, options.out_dir)
        results.append(_scored(entry.id, references[entry.id], run, options.metrics, normalizer))
        report = report.with_model(run[2])
        say(f"[{system.name}] {_summary(results[-1])}")
    return report.with_recordings(tuple(results))


def _scored(
    recording_id: str, reference: Reference, run: Run, metrics: MetricConfig, normalizer: Normalizer
) -> RecordingResult:
    transcript, facts, _ = run
    hypothesis = hypothesis_segments(transcript) if transcript is not None else ()
    return RecordingResult(recording_id, facts, score_recording(reference, hypothesis, metrics, normalizer))


def build_pipeline(system: System, backend: Any = None) -> Any:
    """The pipeline `system` describes, around `backend` when one is given."""
    from engine.pipeline import Pipeline

    if backend is not None:
        return Pipeline(backend, system.pipeline_config())
    return Pipeline.from_recipe(system.recipe)


class _Starter:
    """Builds and warms up the pipeline the first time a recording needs it (not for cached runs)."""

    def __init__(self, system: System, backend: Any, warm_up: bool, cancel: threading.Event | None) -> None:
        self._args = (system, backend, warm_up, cancel)
        self._pipeline: Any = None
        self.failure: str | None = None

    def pipeline(self) -> Any:
        if self._pipeline is None and self.failure is None:
            system, backend, warm_up, cancel = self._args
            try:
                pipeline = build_pipeline(system, backend)
                if warm_up:
                    _warm_up(pipeline, cancel)
                self._pipeline = pipeline
            except Cancelled:
                raise
            except _FAILURES as exc:
                self.failure = f"could not start: {exc}"
        return self._pipeline


def _warm_up(pipeline: Any, cancel: threading.Event | None) -> None:
    """Load the VAD and the model on one second of silence (not timed, result discarded)."""
    from engine.pipeline import Prepared

    rate = pipeline.backend.sample_rate
    recording = Recording(samples=_silence(rate), sample_rate=rate)
    pipeline.prepare(recording, None, cancel)
    chunk = Chunk(index=0, start=0.0, end=1.0)
    pipeline.transcribe(Prepared(recording, (), (chunk,)), None, cancel)


def _silence(rate: int) -> Any:
    import numpy as np

    return np.zeros(rate, dtype=np.float32)


def _transcribe(pipeline: Any, entry: ManifestEntry, cancel: threading.Event | None) -> Run:
    reasons: Counter[str] = Counter()
    tokens = [0]
    kv: list[tuple[float, float, int]] = []
    lost: list[tuple[float, float]] = []
    stopped = [0]  # chunks whose speech-anchor stopped evicting

    def on_progress(p: Progress) -> None:
        if p.stage is Stage.INFER and p.partial is not None:
            stats = p.partial.stats
            reasons[str(p.partial.finish_reason)] += 1
            tokens[0] += stats.generated_tokens
            if stats.kv_kept_last is not None and stats.kv_kept_fraction is not None:
                kv.append(
                    (stats.kv_kept_last, stats.kv_kept_fraction, stats.prompt_tokens + stats.generated_tokens)
                )
            if stats.speech_lost_seconds is not None:
                lost.append((stats.speech_lost_seconds, p.partial.chunk.duration))
                stopped[0] += int(stats.anchor_stopped)

    started = time.perf_counter()
    transcript, failed = None, None
    try:
        transcript = pipeline.run(entry.audio, on_progress, cancel)
    except Cancelled:
        raise
    except _FAILURES as exc:
        failed = f"{type(exc).__name__}: {exc}" if not isinstance(exc, MurmurError) else str(exc)
        log.debug("%s failed", entry.id, exc_info=True)
    seconds = time.perf_counter() - started
    duration = transcript.duration if transcript is not None else _duration(entry)
    chunks, finish = sum(reasons.values()), tuple(sorted(reasons.items()))
    facts = RunFacts(duration, seconds, failed, chunks, finish, tokens[0], tuple(kv), tuple(lost), stopped[0])
    return transcript, facts, pipeline.backend.describe()


def _duration(entry: ManifestEntry) -> float:
    if entry.duration is not None:
        return entry.duration
    from engine.audio.io import probe_duration

    try:
        return probe_duration(entry.audio)
    except MurmurError:
        return 0.0


def _save(recording_id: str, run: Run, out_dir: Path | None) -> None:
    if out_dir is None:
        return
    from engine.export import export

    transcript, facts, model = run
    folder = out_dir / "hyp"
    folder.mkdir(parents=True, exist_ok=True)
    if transcript is not None:
        export(transcript, folder / f"{recording_id}.json", ["json"])
        export(transcript, folder / f"{recording_id}.seglst.json", ["seglst"])
    text = json.dumps({"model": model, **facts.to_dict()}) + "\n"
    (folder / f"{recording_id}.run.json").write_text(text, encoding="utf-8")


def _load_cached(recording_id: str, options: RunOptions) -> Run | None:
    if options.out_dir is None:
        return None
    from engine.export import read_json

    folder = options.out_dir / "hyp"
    facts_path = folder / f"{recording_id}.run.json"
    if not facts_path.is_file():
        return None
    data = json.loads(facts_path.read_text(encoding="utf-8"))
    facts = RunFacts.from_dict(data)
    hyp_path = folder / f"{recording_id}.json"
    if facts.failed is None and not hyp_path.is_file():
        return None
    return (read_json(hyp_path) if facts.failed is None else None), facts, str(data.get("model") or "")


def _summary(result: RecordingResult) -> str:
    f = result.facts
    head = f"{result.id}: {f.duration:.0f} s of audio in {f.seconds:.1f} s (RTF {f.rtf:.3f})"
    if f.failed:
        return f"{head}, FAILED: {f.failed}"
    wer = result.scores.wer.rate if result.scores.wer else None
    return head + (f", WER {100 * wer:.1f} %" if wer is not None else "")
