"""Transcribe one time range of a recording again and keep the speakers' global identities.

`transcribe_range(pipeline, recording, start, end, existing)` runs the whole pipeline (VAD,
chunks, backend, speakers, stitching) on the samples of [start, end] only, shifts the result to
absolute times, then matches its speakers to the speakers of `existing` (the transcript being
corrected) with the reconciliation the pipeline uses across chunks (`engine.speakers.reconcile`):
the existing speakers are one "chunk" whose local speakers are themselves, the new result is
another, and each new speaker is assigned one-to-one (Hungarian) to an existing one by how much
of its time that speaker covered in the old lines of the range and, when the pipeline's diarizer
can embed audio, by voice similarity (up to `EMBED_SECONDS` of each old speaker's lines, nearest
the range first). A new speaker that matches nobody keeps a fresh id, listed in
`RangeResult.new_speakers`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.speakers.diarization import Diarization, SpeakerEmbedder, SpeakerTurn
from engine.speakers.reconcile import Key, LocalSpeaker, ReconcileConfig, gather_evidence, reconcile
from engine.types import Progress, Recording, Utterance, Word

Span = tuple[float, float]
EMBED_SECONDS = 30.0  # of each existing speaker's speech to embed, nearest the range first


@dataclass(frozen=True, slots=True)
class RangeResult:
    start: float
    end: float
    utterances: tuple[Utterance, ...]  # absolute times; speakers: existing ids or new ones
    new_speakers: tuple[str, ...]  # ids in `utterances` that match no existing speaker
    model: str = ""


def transcribe_range(
    pipeline: object,
    recording: Recording,
    start: float,
    end: float,
    existing: Sequence[Utterance],
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> RangeResult:
    """Run `pipeline` (an `engine.pipeline.Pipeline`) on [start, end] of `recording`."""
    start, end = max(start, 0.0), min(end, recording.duration)
    if end - start < 0.1:
        raise ValueError("choose a range of at least a tenth of a second to transcribe again")
    piece = Recording(recording.slice(start, end).copy(), recording.sample_rate, recording.source)
    transcript = pipeline.run(piece, on_progress, cancel)  # type: ignore[attr-defined]
    # "+" keeps the new ids apart from the existing ones until they are matched
    shifted = tuple(_shift(u, start, "+") for u in transcript.utterances)
    diarizer = getattr(pipeline, "diarizer", None)
    embedder = diarizer if isinstance(diarizer, SpeakerEmbedder) else None
    mapping = match_speakers(shifted, existing, start, end, recording, embedder, cancel)
    out = tuple(replace(u, speaker=mapping.get(u.speaker, u.speaker)) for u in shifted)
    known = {u.speaker for u in existing}
    fresh = tuple(dict.fromkeys(u.speaker for u in out if u.speaker is not None and u.speaker not in known))
    return RangeResult(start, end, out, fresh, transcript.model or "")


def match_speakers(
    new: Sequence[Utterance],
    existing: Sequence[Utterance],
    start: float,
    end: float,
    recording: Recording | None = None,
    embedder: SpeakerEmbedder | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, str]:
    """New speaker id → existing speaker id for the new speakers that match one (see the contract)."""
    old_ids = list(dict.fromkeys(u.speaker for u in existing if u.speaker is not None))
    new_ids = list(dict.fromkeys(u.speaker for u in new if u.speaker is not None))
    if not old_ids or not new_ids:
        return {}
    inside = [u for u in existing if u.speaker is not None and u.end > start and u.start < end]
    turns = Diarization(tuple(SpeakerTurn(u.start, u.end, u.speaker) for u in inside if u.end > u.start))
    spans = {(0, i): _nearest_spans(existing, sid, start, end) for i, sid in enumerate(old_ids)}
    spans = {k: v for k, v in spans.items() if v}
    for j, sid in enumerate(new_ids):
        spans[(1, j)] = [(u.start, u.end) for u in new if u.speaker == sid]
    evidence = gather_evidence(spans, turns, _embeddings(spans, recording, embedder, cancel))
    # the old lines are their own diarization: each old speaker covers itself entirely
    evidence = [replace_overlaps(ev, {old_ids[ev.local]: 1.0}) if ev.chunk == 0 else ev for ev in evidence]
    found = reconcile(evidence, ReconcileConfig())
    owner = {g: old_ids[local] for (chunk, local), g in found.items() if chunk == 0}
    return {sid: owner[found[(1, j)]] for j, sid in enumerate(new_ids) if found.get((1, j)) in owner}


def replace_overlaps(ev: LocalSpeaker, overlaps: dict[str, float]) -> LocalSpeaker:
    return LocalSpeaker(ev.chunk, ev.local, ev.first, ev.seconds, overlaps, ev.embedding)


def _nearest_spans(existing: Sequence[Utterance], sid: str, start: float, end: float) -> list[Span]:
    """Up to EMBED_SECONDS of speaker `sid`'s lines, those nearest [start, end] first."""
    mine = [u for u in existing if u.speaker == sid]
    mine.sort(key=lambda u: max(start - u.end, u.start - end, 0.0))
    out, total = [], 0.0
    for u in mine:
        if total >= EMBED_SECONDS:
            break
        out.append((u.start, u.end))
        total += u.end - u.start
    return sorted(out)


def _embeddings(spans: dict[Key, list[Span]], recording: Recording | None, embedder: SpeakerEmbedder | None,
                cancel: threading.Event | None) -> dict[Key, np.ndarray | None] | None:  # fmt: skip
    if embedder is None or recording is None:
        return None
    keys = list(spans)
    vectors = embedder.embed_spans(recording, [spans[k] for k in keys], lambda d, t: None, cancel)
    return dict(zip(keys, vectors, strict=True))


def _shift(u: Utterance, by: float, prefix: str) -> Utterance:
    words = tuple(Word(w.start + by, w.end + by, w.text, w.probability) for w in u.words)
    speaker = None if u.speaker is None else prefix + u.speaker
    return replace(u, start=u.start + by, end=u.end + by, speaker=speaker, words=words)
