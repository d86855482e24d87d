"""The SPEAKERS stage: chunk results in, stitched utterances with global speakers out.

Contract of `attribute_speakers`:
- no diarizer ("none"): model labels stay distinct per chunk (a chunk-local speaker never silently
  becomes another chunk's speaker: "S1".."Sk" for the first chunk, new ids after); a backend that
  labels no speakers gives utterances without speakers;
- a backend that labels speakers (VibeVoice): when the diarizer can embed audio (`SpeakerEmbedder`,
  the embedded one), one embedding per chunk-local speaker (over its own speech, overlaps with the
  chunk's other speakers left out) is the evidence, and no full diarization runs (measured: a
  diarization that undercounts speakers misleads reconciliation more than it helps); otherwise the
  diarizer's turns are. `reconcile` then solves an optimal one-to-one assignment per chunk, so the
  model's labels are kept inside each chunk;
- a backend that labels no speakers (whisper): word-level assignment from the diarization
  (`engine.speakers.words`; the caller may hand in a diarization it ran alongside inference),
  then stitching merges same-speaker neighbours;
- every utterance then has a speaker ("S1", "S2"… in order of first appearance) unless the
  diarizer is "none"; progress goes out as `Stage.SPEAKERS` reports; `cancel` is honoured
  throughout (raises `Cancelled`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import partial

from engine.backends.base import check_cancel
from engine.speakers.boundary import boundary_map
from engine.speakers.diarization import Diarization, Diarizer, SpeakerCount, SpeakerEmbedder
from engine.speakers.reconcile import (
    ReconcileConfig,
    exclusive_spans,
    gather_evidence,
    local_spans,
    reconcile,
)
from engine.speakers.words import assign_words
from engine.stitching import SpeakerMap, StitchConfig, stitch
from engine.types import ChunkResult, Progress, Recording, SpeechSegment, Stage, Utterance

Report = Callable[[Progress], None]


def attribute_speakers(
    recording: Recording,
    speech: Sequence[SpeechSegment],
    results: Sequence[ChunkResult],
    diarizer: Diarizer | None,
    labels_speakers: bool,
    count: SpeakerCount | None = None,
    stitch_config: StitchConfig | None = None,
    report: Report | None = None,
    cancel: threading.Event | None = None,
    diarization: Diarization | None = None,
    stitching: str = "one-to-one",
) -> tuple[Utterance, ...]:
    """Stitched utterances with global speakers (see the module contract); `diarization`, when
    given, is the diarizer's result computed beforehand (e.g. while the backend ran). `stitching`
    "boundary" maps a labelling backend's speakers by the paper's boundary-region permutation
    (`boundary.boundary_map`, from a full diarization) instead of `reconcile`."""
    report = report or (lambda p: None)
    if diarizer is None:
        return stitch(results, separate_chunks(results) if labels_speakers else None, stitch_config)
    if labels_speakers and stitching == "boundary":
        if diarization is None:
            diarization = _diarize(recording, speech, diarizer, count, report, cancel)
        utterances = stitch(results, boundary_map(results, diarization), stitch_config)
    elif labels_speakers:
        utterances = _reconciled(recording, speech, results, diarizer, count, stitch_config, report, cancel)
    else:
        if diarization is None:
            diarization = _diarize(recording, speech, diarizer, count, report, cancel)
        relabel = partial(assign_words, diarization=diarization)
        utterances = stitch(results, None, stitch_config, relabel=relabel)
    report(Progress(Stage.SPEAKERS, 1, 1, f"{len({u.speaker for u in utterances if u.speaker})} speakers"))
    return utterances


def _diarize(
    recording: Recording,
    speech: Sequence[SpeechSegment],
    diarizer: Diarizer,
    count: SpeakerCount | None,
    report: Report,
    cancel: threading.Event | None,
) -> Diarization:
    detail = f"diarizing ({diarizer.name})"
    report(Progress(Stage.SPEAKERS, 0, 1, detail))
    diarization = diarizer.diarize(
        recording, speech, count, lambda done, total: report(Progress(Stage.SPEAKERS, done, total, detail)),
        cancel,
    )  # fmt: skip
    check_cancel(cancel)
    return diarization


def _reconciled(
    recording: Recording,
    speech: Sequence[SpeechSegment],
    results: Sequence[ChunkResult],
    diarizer: Diarizer,
    count: SpeakerCount | None,
    stitch_config: StitchConfig | None,
    report: Report,
    cancel: threading.Event | None,
) -> tuple[Utterance, ...]:
    spans = local_spans(results)
    if isinstance(diarizer, SpeakerEmbedder):
        keys, own = list(spans), exclusive_spans(spans)
        detail = "matching speakers across chunks"
        report(Progress(Stage.SPEAKERS, 0, len(keys), detail))
        vectors = diarizer.embed_spans(
            recording, [own[k] or spans[k] for k in keys],
            lambda done, total: report(Progress(Stage.SPEAKERS, done, total, detail)), cancel,
        )  # fmt: skip
        evidence = gather_evidence(spans, None, dict(zip(keys, vectors, strict=True)))
    else:
        evidence = gather_evidence(spans, _diarize(recording, speech, diarizer, count, report, cancel))
    check_cancel(cancel)
    return stitch(results, reconcile(evidence, ReconcileConfig(), count), stitch_config)


def separate_chunks(results: Sequence[ChunkResult]) -> SpeakerMap:
    """Every (chunk, local speaker) its own global id: no claim about who is who across chunks."""
    return {key: f"C{key[0]}L{key[1]}" for key in local_spans(results)}
