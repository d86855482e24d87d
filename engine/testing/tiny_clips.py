"""Synthetic multi-speaker clips with exact references, for training the tiny model.

`synthesize_clips(count, seed, spec)` speaks single-sentence turns with distinct espeak voices
(`engine.synth`), one after another with short gaps, at 24 kHz. A `ClipSpec` (`clip_spec.py`) says
how long every clip is, how many turns and voices it has and how many words a turn's sentence has;
the default is the short clips (2–3 turns of at most 9 words, two voices, 5–9 s). Voices take
turns in order, so `Speaker` numbers them from 0 in order of appearance. A draw whose clip falls
outside the spec's length is drawn again (the same rng, so the result is still fixed). Speech
starts 0.05 s in and ends 0.05 s before the clip does, so voice-activity chunking keeps the whole
clip as one chunk. Each clip's reference is the model's reply format: `Start`/`End` in seconds from
the clip's start, rounded to 2 decimals (first and last word of the turn), `Speaker`, `Content`
the sentence. The same `(count, seed, spec)` always gives the same clips.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.audio.resample import resample
from engine.backends.vibevoice.config import SAMPLE_RATE
from engine.synth import ROSTER, Espeak
from engine.synth.script import load_corpus
from engine.testing.clip_spec import ClipSpec
from engine.types import Segment

EDGE_S = 0.05  # silence before the first and after the last word
GAP_S = (0.3, 0.7)
MAX_DRAWS = 50  # draws per clip before a spec is declared unreachable


@dataclass(frozen=True, slots=True, eq=False)
class TinyClip:
    name: str
    samples: np.ndarray  # (T,) float32 at 24 kHz
    segments: tuple[Segment, ...]  # the reference, chunk-relative, 2-decimal times

    @property
    def duration(self) -> float:
        return len(self.samples) / SAMPLE_RATE

    @property
    def target(self) -> str:
        """The reference as the model writes it: compact JSON."""
        return reply_json(self.segments)


def reply_json(segments: tuple[Segment, ...]) -> str:
    """Segments in VibeVoice-ASR's compact reply format."""
    items = [
        {"Start": round(s.start, 2), "End": round(s.end, 2), "Speaker": s.speaker, "Content": s.text}
        for s in segments
    ]
    return json.dumps(items, ensure_ascii=False, separators=(",", ":"))


def synthesize_clips(count: int = 3, seed: int = 0, spec: ClipSpec | None = None) -> list[TinyClip]:
    """`count` clips as `spec` says (see the module docstring)."""
    spec = spec or ClipSpec()
    if max(spec.voices) > len(ROSTER):
        raise ValueError(f"a clip has at most {len(ROSTER)} voices (the roster's), got {spec.voices}")
    rng = np.random.default_rng(seed)
    low, high = spec.words
    sentences = [s for s in load_corpus().all_sentences if low <= len(s.split()) <= high]
    with Espeak() as espeak:
        return [_drawn(f"clip{index}", espeak, rng, sentences, spec, index) for index in range(count)]


def _drawn(
    name: str, espeak: Espeak, rng: np.random.Generator, sentences: list[str], spec: ClipSpec, index: int
) -> TinyClip:
    """Clip `index`, drawn until its length lies in `spec.seconds`."""
    turns, voices = spec.of(index)
    for _ in range(MAX_DRAWS):
        cast = [ROSTER[int(i)] for i in rng.permutation(len(ROSTER))[:voices]]
        texts = [sentences[int(i)] for i in rng.choice(len(sentences), turns, replace=False)]
        gaps = rng.uniform(*GAP_S, size=len(texts))
        clip = _clip(name, espeak, cast, texts, gaps)
        if spec.seconds[0] <= clip.duration <= spec.seconds[1]:
            return clip
    raise ValueError(f"no clip of {turns} turns lasted {spec.seconds} s in {MAX_DRAWS} draws")


def _clip(name: str, espeak: Espeak, voices: list, texts: list[str], gaps: np.ndarray) -> TinyClip:
    rate = espeak.sample_rate
    pieces, segments, cursor = [], [], EDGE_S
    for turn, text in enumerate(texts):
        speaker = turn % len(voices)
        speech = espeak.synthesize(text, voices[speaker].voice)
        first, last = speech.words[0].start, speech.words[-1].end
        audio = speech.samples[round(first * rate) : round(last * rate)]
        pieces.append((round(cursor * rate), audio))
        end = cursor + len(audio) / rate
        segments.append(Segment(round(cursor, 2), round(end, 2), text, speaker=speaker))
        cursor = end + (float(gaps[turn]) if turn + 1 < len(texts) else EDGE_S)
    mix = np.zeros(round(cursor * rate), dtype=np.float32)
    for offset, audio in pieces:
        mix[offset : offset + len(audio)] += audio[: len(mix) - offset]
    samples = resample(mix, rate, SAMPLE_RATE).astype(np.float32)
    peak = float(np.max(np.abs(samples))) or 1.0
    return TinyClip(name, samples * np.float32(0.5 / peak), tuple(segments))


def recording_clips(audio: Path, stm: Path, pieces: int) -> list[TinyClip]:
    """A recording and its STM reference cut into `pieces` clips at the pauses between turns nearest
    to equal shares (`meeting0`, `meeting1`, …; times from each clip's start, speakers numbered in
    order of appearance within it), so a model can be trained on the very chunks it is asked to
    transcribe. `ValueError` when the reference has fewer turns than pieces."""
    from engine.audio.io import load_audio
    from engine.evaluation.reference import parse_stm

    turns = sorted(parse_stm(stm.read_text(encoding="utf-8"), stm.stem), key=lambda t: t.start or 0.0)
    if len(turns) < pieces:
        raise ValueError(f"{stm.name} has {len(turns)} turns, fewer than {pieces} pieces")
    recording = load_audio(audio, SAMPLE_RATE)
    gaps = [((a.end or 0.0) + (b.start or 0.0)) / 2 for a, b in itertools.pairwise(turns)]
    cuts = [0.0]
    for share in range(1, pieces):
        goal = recording.duration * share / pieces
        cuts.append(min(gaps, key=lambda g: abs(g - goal)))
    cuts.append(recording.duration)
    out = []
    for index, (lo, hi) in enumerate(itertools.pairwise(cuts)):
        inside = [t for t in turns if lo <= (t.start or 0.0) and (t.end or 0.0) <= hi]
        speakers = list(dict.fromkeys(t.speaker for t in inside))
        segments = tuple(
            Segment(round(t.start - lo, 2), round(t.end - lo, 2), t.text, speaker=speakers.index(t.speaker))
            for t in inside
        )
        out.append(TinyClip(f"meeting{index}", recording.slice(lo, hi).astype(np.float32), segments))
    return out
