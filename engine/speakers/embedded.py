"""The embedded diarizer: needs no hub. GE2E embeddings over the VAD speech, then clustering.

Contract of `EmbeddedDiarizer.diarize`:
- 1.6 s windows every `hop_seconds` over each VAD speech segment (16 kHz; other rates are
  resampled segment by segment, so the whole recording is never copied), embedded in batches;
- windows are clustered (`engine.speakers.clustering`: spectral clustering of a nearest-neighbour
  cosine graph, the number of speakers from its eigengap unless the user gives it);
- each 10 ms frame of speech goes to the speaker whose centroid its covering windows resemble most
  (similarities weighted towards each window's centre); a change of speaker is moved to the
  quietest frame within `snap_seconds`, since people rarely change mid-syllable; turns shorter than
  `min_turn_seconds` are absorbed by their neighbours. Turns never overlap (no overlap detection).
- progress is reported in seconds of speech embedded; `cancel` is checked between batches.
`embed_spans` embeds groups of spans (e.g. one chunk-local speaker's segments) with the same encoder.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from engine.audio.resample import resample
from engine.backends.base import check_cancel
from engine.speakers.clustering import centroids, cluster
from engine.speakers.diarization import Diarization, ProgressFn, SpeakerCount, SpeakerTurn
from engine.speakers.embedding import HOP, SAMPLE_RATE, WINDOW_FRAMES, SpeakerEncoder
from engine.types import Recording, SpeechSegment

FRAME_SECONDS = HOP / SAMPLE_RATE  # 10 ms


@dataclass(frozen=True, slots=True)
class EmbeddedConfig:
    neighbours: float = 0.015  # share of windows each window links to in the affinity graph
    hop_seconds: float = 0.4  # between window starts
    min_turn_seconds: float = 0.4
    snap_seconds: float = 0.3
    max_cluster_points: int = 2000  # beyond this, cluster a subset (bounded memory and time)
    batch_size: int = 16  # windows per encoder call: the same CPU per window as 64, half its buffers

    def __post_init__(self) -> None:
        if not 0.0 < self.neighbours <= 0.5:
            raise ValueError(f"neighbour share must be in (0, 0.5], got {self.neighbours}")
        if not 0.01 <= self.hop_seconds <= WINDOW_FRAMES * FRAME_SECONDS:
            raise ValueError(f"window hop must be in [0.01, 1.6] s, got {self.hop_seconds}")
        if self.min_turn_seconds < 0 or self.snap_seconds < 0:
            raise ValueError("turn durations must be non-negative")
        if self.max_cluster_points < 10 or self.batch_size < 1:
            raise ValueError("cluster points must be at least 10 and the batch size at least 1")


class EmbeddedDiarizer:
    """GE2E windows + spectral clustering (see the module contract)."""

    name = "embedded"

    def __init__(self, config: EmbeddedConfig | None = None, encoder: SpeakerEncoder | None = None) -> None:
        self.config = config or EmbeddedConfig()
        self.encoder = encoder or SpeakerEncoder(batch_size=self.config.batch_size)

    def load(self) -> None:
        self.encoder.load()

    def diarize(
        self,
        recording: Recording,
        speech: Sequence[SpeechSegment],
        count: SpeakerCount | None = None,
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> Diarization:
        cfg = self.config
        segments = [s for s in speech if s.duration >= FRAME_SECONDS]
        energies: list[np.ndarray] = []
        places: list[tuple[int, float]] = []  # (segment index, start seconds) of each piece
        pieces = _pieces(recording, segments, energies, places)
        keys, embeddings = self.encoder.embed_windows(
            pieces,
            hop_frames=max(1, round(cfg.hop_seconds / FRAME_SECONDS)),
            total_seconds=sum(s.duration for s in segments),
            on_progress=on_progress,
            cancel=cancel,
        )
        if not keys:
            return Diarization(())
        labels = cluster(embeddings, count, cfg.neighbours, cfg.max_cluster_points)
        sims = embeddings @ centroids(embeddings, labels).T  # (N, K)
        turns: list[SpeakerTurn] = []
        by_piece: dict[int, list[int]] = {}
        for row, (piece, _) in enumerate(keys):
            by_piece.setdefault(piece, []).append(row)
        for piece, rows in by_piece.items():
            check_cancel(cancel)
            starts = [keys[r][1] for r in rows]
            frame_labels = _frame_labels(len(energies[piece]), starts, sims[rows])
            runs = _runs(frame_labels)
            runs = _absorb_short(_snap(runs, energies[piece], cfg), cfg.min_turn_seconds)
            segment, origin = places[piece]
            end = segments[segment].end
            turns += [SpeakerTurn(origin + a * FRAME_SECONDS, min(origin + b * FRAME_SECONDS, end), f"E{lab}")
                      for a, b, lab in runs]  # fmt: skip
        return Diarization(tuple(turns))

    def embed_spans(
        self,
        recording: Recording,
        spans: Sequence[Sequence[tuple[float, float]]],
        on_progress: ProgressFn | None = None,
        cancel: threading.Event | None = None,
    ) -> list[np.ndarray | None]:
        def audio() -> Iterator[np.ndarray]:
            for i, group in enumerate(spans):
                pieces = [_audio_16k(recording, a, b) for a, b in group if b > a]
                if on_progress is not None:
                    on_progress(i, len(spans))
                yield np.concatenate(pieces) if pieces else np.zeros(0, np.float32)

        out = self.encoder.embed_pieces(audio(), cancel=cancel)
        if on_progress is not None:
            on_progress(len(spans), len(spans))
        return out


def _audio_16k(recording: Recording, start: float, end: float) -> np.ndarray:
    samples = recording.slice(start, end)
    if recording.sample_rate == SAMPLE_RATE:
        return samples
    return resample(samples, recording.sample_rate, SAMPLE_RATE)


def _pieces(
    recording: Recording,
    segments: Sequence[SpeechSegment],
    energies: list[np.ndarray],
    places: list[tuple[int, float]],
) -> Iterator[np.ndarray]:
    """16 kHz audio of each speech segment; its 10 ms log energy and place (segment index, start
    seconds) are recorded on the side."""
    for i, s in enumerate(segments):
        audio = _audio_16k(recording, s.start, s.end)
        energies.append(_log_energy(audio))
        places.append((i, s.start))
        yield audio


def _log_energy(audio: np.ndarray) -> np.ndarray:
    """Mean power per 10 ms frame, log10: (ceil(len / HOP),)."""
    n = max(1, -(-len(audio) // HOP))
    padded = np.zeros(n * HOP, np.float32)
    padded[: len(audio)] = audio
    return np.log10(np.square(padded.reshape(n, HOP), dtype=np.float64).mean(axis=1) + 1e-10)


def _frame_labels(n_frames: int, starts: Sequence[int], sims: np.ndarray) -> np.ndarray:
    """Per 10 ms frame, the speaker whose centroid the covering windows resemble most (centre-weighted)."""
    scores = np.zeros((n_frames, sims.shape[1]))
    weight = np.hanning(WINDOW_FRAMES + 2)[1:-1]  # (160,), never zero
    for start, sim in zip(starts, sims, strict=True):
        stop = min(start + WINDOW_FRAMES, n_frames)
        scores[start:stop] += weight[: stop - start, None] * sim[None, :]
    return np.asarray(np.argmax(scores, axis=1))


def _runs(labels: np.ndarray) -> list[tuple[int, int, int]]:
    """(start frame, end frame, label) of each stretch of equal labels."""
    if len(labels) == 0:
        return []
    cuts = np.flatnonzero(np.diff(labels)) + 1
    bounds = [0, *cuts.tolist(), len(labels)]
    return [(a, b, int(labels[a])) for a, b in itertools.pairwise(bounds)]


def _snap(
    runs: list[tuple[int, int, int]], energy: np.ndarray, cfg: EmbeddedConfig
) -> list[tuple[int, int, int]]:
    """Move each change of speaker to the quietest frame within `snap_seconds` of it."""
    reach = round(cfg.snap_seconds / FRAME_SECONDS)
    out = [list(r) for r in runs]
    for i in range(1, len(out)):
        lo = max(out[i - 1][0] + 1, out[i][0] - reach)
        hi = min(out[i][1] - 1, out[i][0] + reach)
        if hi > lo:
            cut = lo + int(np.argmin(energy[lo:hi]))
            out[i - 1][1] = out[i][0] = cut
    return [(a, b, lab) for a, b, lab in out]


def _absorb_short(runs: list[tuple[int, int, int]], min_seconds: float) -> list[tuple[int, int, int]]:
    """Give turns shorter than `min_seconds` to their longer neighbour, then merge equal neighbours."""
    runs = list(runs)
    shortest = min_seconds / FRAME_SECONDS
    while len(runs) > 1:
        i = min(range(len(runs)), key=lambda j: runs[j][1] - runs[j][0])
        a, b, _ = runs[i]
        if b - a >= shortest:
            break
        prev_len = runs[i - 1][1] - runs[i - 1][0] if i > 0 else -1
        next_len = runs[i + 1][1] - runs[i + 1][0] if i + 1 < len(runs) else -1
        if prev_len >= next_len:
            runs[i - 1] = (runs[i - 1][0], b, runs[i - 1][2])
        else:
            runs[i + 1] = (a, runs[i + 1][1], runs[i + 1][2])
        del runs[i]
        runs = _merge_equal(runs)
    return runs


def _merge_equal(runs: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    merged: list[tuple[int, int, int]] = []
    for a, b, lab in runs:
        if merged and merged[-1][2] == lab:
            merged[-1] = (merged[-1][0], b, lab)
        else:
            merged.append((a, b, lab))
    return merged
