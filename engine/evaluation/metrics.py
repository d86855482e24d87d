"""WER, cpWER, tcpWER and DER of one recording, computed by the field's reference libraries.

- WER: jiwer on the whole recording as one string (reference segments in reading order,
  hypothesis utterances by start time), speaker-agnostic.
- cpWER: meeteval `cp_word_error_rate` (concatenated per speaker, best speaker permutation).
- tcpWER: meeteval `time_constrained_minimum_permutation_word_error_rate` with `collar` seconds
  (default 5, meeteval's recommended value; added to the hypothesis word times) and meeteval's
  default pseudo word timings (reference `character_based`, hypothesis `character_based_points`).
- DER: pyannote.metrics `DiarizationErrorRate(collar=der_collar, skip_overlap=der_skip_overlap)`.
  pyannote's collar is the *total* width centred on each reference boundary, so the default 0.25
  forgives ±0.125 s (the paper's setting); md-eval's `-c 0.25` equals pyannote's 0.5. Overlapped
  speech is scored unless `der_skip_overlap`. Without a UEM the scored region is the union of the
  reference and hypothesis extents (pyannote's approximation), so speech the system invents after
  the reference ends counts as false alarm.

Every word metric sees normalised text (`engine.evaluation.normalize`). Each result is an
`ErrorCount` (errors and reference length), so corpus figures pool errors over total length
rather than averaging rates. A metric that cannot be computed (no timing in the reference, more
speakers than meeteval accepts) is None, with the reason in `Scores.notes`.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.evaluation.normalize import NORMALIZERS, Normalizer, get_normalizer
from engine.evaluation.reference import Reference, TextSegment

METRICS = ("wer", "der", "cpwer", "tcpwer")
_MEETEVAL_LOGGERS = ("preprocess", "time_constrained", "error_rate")


@dataclass(frozen=True, slots=True)
class MetricConfig:
    normalizer: str = "murmur"
    collar: float = 5.0  # tcpWER collar, seconds
    der_collar: float = 0.25  # pyannote total collar width, seconds (±half around each boundary)
    der_skip_overlap: bool = False

    def __post_init__(self) -> None:
        if self.normalizer not in NORMALIZERS:
            choices = ", ".join(NORMALIZERS)
            raise ValueError(f"unknown normaliser {self.normalizer!r}; choose one of: {choices}")
        if self.collar < 0 or self.der_collar < 0:
            raise ValueError("collars must be zero or positive seconds")


@dataclass(frozen=True, slots=True)
class ErrorCount:
    """Errors against a reference length (words, or seconds of speech for DER)."""

    errors: float
    length: float
    parts: tuple[tuple[str, float], ...] = ()  # e.g. substitutions/deletions/insertions

    @property
    def rate(self) -> float | None:
        return self.errors / self.length if self.length > 0 else None

    def __add__(self, other: ErrorCount) -> ErrorCount:
        merged = dict(self.parts)
        for key, value in other.parts:
            merged[key] = merged.get(key, 0.0) + value
        return ErrorCount(self.errors + other.errors, self.length + other.length, tuple(merged.items()))


@dataclass(frozen=True, slots=True)
class Scores:
    wer: ErrorCount | None = None
    der: ErrorCount | None = None
    cpwer: ErrorCount | None = None
    tcpwer: ErrorCount | None = None
    notes: tuple[str, ...] = field(default=())

    def get(self, metric: str) -> ErrorCount | None:
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}")
        value: ErrorCount | None = getattr(self, metric)
        return value


def pool(counts: Iterable[ErrorCount | None]) -> ErrorCount | None:
    """Errors over total length across recordings (meeteval's `combine_error_rates`); None if none."""
    present = [c for c in counts if c is not None]
    if not present:
        return None
    total = present[0]
    for c in present[1:]:
        total = total + c
    return total


def score_recording(
    reference: Reference,
    hypothesis: Sequence[TextSegment],
    config: MetricConfig | None = None,
    normalizer: Normalizer | None = None,
) -> Scores:
    """All four metrics of one recording (see the module docstring)."""
    config = config or MetricConfig()
    norm = normalizer or get_normalizer(config.normalizer)
    ref = [TextSegment(s.speaker, norm(s.text), s.start, s.end) for s in reference.segments]
    hyp = [TextSegment(s.speaker, norm(s.text), s.start, s.end) for s in _by_start(hypothesis)]
    notes: list[str] = []
    wer = word_error(" ".join(s.text for s in ref), " ".join(s.text for s in hyp)) if ref else None
    if wer is None:
        notes.append("the reference has no words")
    cp = _guard(lambda: cp_error(ref, hyp), "cpWER", notes) if ref else None
    tcp = None
    if ref and reference.timed:
        tcp = _guard(lambda: tcp_error(ref, hyp, config.collar), "tcpWER", notes)
    elif ref:
        notes.append("tcpWER needs reference times; this reference has none")
    turns = reference.turns or (tuple(reference.segments) if reference.timed else ())
    der = None
    if turns:
        der = diarization_error(turns, hypothesis, config.der_collar, config.der_skip_overlap, reference.uem)
    else:
        notes.append("DER needs timed speaker turns; this reference has none")
    return Scores(wer=wer, der=der, cpwer=cp, tcpwer=tcp, notes=tuple(notes))


def word_error(reference: str, hypothesis: str) -> ErrorCount:
    """jiwer's word alignment of two (normalised) strings."""
    import jiwer

    out = jiwer.process_words(reference, hypothesis)
    s, d, i = out.substitutions, out.deletions, out.insertions
    parts = (("substitutions", float(s)), ("deletions", float(d)), ("insertions", float(i)))
    return ErrorCount(float(s + d + i), float(s + d + out.hits), parts)


def cp_error(reference: Sequence[TextSegment], hypothesis: Sequence[TextSegment]) -> ErrorCount:
    """meeteval cpWER of (normalised) segments; untimed segments keep their order."""
    from meeteval.wer.wer.cp import cp_word_error_rate

    return _from_meeteval(cp_word_error_rate(_seglst(reference), _seglst(hypothesis)))


def tcp_error(
    reference: Sequence[TextSegment], hypothesis: Sequence[TextSegment], collar: float
) -> ErrorCount:
    """meeteval tcpWER of timed (normalised) segments."""
    from meeteval.wer.wer.time_constrained import time_constrained_minimum_permutation_word_error_rate

    rate = time_constrained_minimum_permutation_word_error_rate(
        _seglst(reference), _seglst(hypothesis), collar=collar
    )
    return _from_meeteval(rate)


def diarization_error(
    reference: Sequence[TextSegment],
    hypothesis: Sequence[TextSegment],
    collar: float = 0.25,
    skip_overlap: bool = False,
    uem: Sequence[tuple[float, float]] = (),
) -> ErrorCount:
    """pyannote.metrics DER; errors and length in seconds, parts: confusion, missed, false alarm."""
    from pyannote.core import Segment, Timeline
    from pyannote.metrics.diarization import DiarizationErrorRate

    metric = DiarizationErrorRate(collar=collar, skip_overlap=skip_overlap)
    scored = Timeline([Segment(a, b) for a, b in uem if b > a]) if uem else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the "approximated UEM" notice: documented behaviour
        details = metric(_annotation(reference), _annotation(hypothesis), uem=scored, detailed=True)
    parts = tuple((k, float(details[k])) for k in ("confusion", "missed detection", "false alarm"))
    return ErrorCount(sum(v for _, v in parts), float(details["total"]), parts)


def _annotation(segments: Sequence[TextSegment]) -> Any:  # pyannote.core.Annotation
    from pyannote.core import Annotation, Segment

    annotation = Annotation()
    for track, s in enumerate(segments):
        if s.start is not None and s.end is not None and s.end > s.start:
            annotation[Segment(s.start, s.end), track] = s.speaker
    return annotation


def _seglst(segments: Sequence[TextSegment]) -> Any:  # meeteval.io.SegLST
    from meeteval.io import SegLST

    rows = []
    for i, s in enumerate(segments):
        if not s.text:
            continue
        start = s.start if s.start is not None else float(i)
        end = max(s.end if s.end is not None else start, start)
        rows.append(
            {"session_id": "r", "speaker": s.speaker, "start_time": start, "end_time": end, "words": s.text}
        )
    return SegLST(rows)


def _from_meeteval(rate: Any) -> ErrorCount:  # rate: a meeteval ErrorRate
    parts = (
        ("substitutions", float(rate.substitutions)),
        ("deletions", float(rate.deletions)),
        ("insertions", float(rate.insertions)),
    )
    return ErrorCount(float(rate.errors), float(rate.length), parts)


def _guard(compute: Callable[[], ErrorCount], label: str, notes: list[str]) -> ErrorCount | None:
    """Run a meeteval metric; its warnings and refusals become notes instead of console output."""
    catcher = _Catcher()
    loggers = [logging.getLogger(name) for name in _MEETEVAL_LOGGERS]
    for logger in loggers:
        logger.addHandler(catcher)
        logger.propagate = False
    try:
        return compute()
    except RuntimeError as exc:  # meeteval refuses e.g. more than 20 speakers ("Are you sure?")
        reason = " ".join(line for line in str(exc).splitlines()[:2] if line.strip())
        notes.append(f"{label} not computed: {reason}")
        return None
    finally:
        for logger in loggers:
            logger.removeHandler(catcher)
            logger.propagate = True
        notes.extend(f"{label}: {message}" for message in dict.fromkeys(catcher.messages))


class _Catcher(logging.Handler):
    """Collects the warnings meeteval logs while one metric is computed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _by_start(segments: Sequence[TextSegment]) -> list[TextSegment]:
    return sorted(segments, key=lambda s: s.start if s.start is not None else 0.0)
