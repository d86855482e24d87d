"""Short synthetic multi-speaker clips with exact references, for training the tiny model.

`synthesize_clips(count, seed)` speaks 2–3 single-sentence turns per clip with distinct espeak
voices (`engine.synth`), one after another with short gaps, at 24 kHz. Speech starts 0.05 s in
and ends 0.05 s before the clip does, so voice-activity chunking keeps the whole clip as one
chunk. Each clip's reference is the model's reply format: `Start`/`End` in seconds rounded to 2
decimals (first and last word of the turn), `Speaker` numbered from 0 in order of appearance,
`Content` the sentence. The same `(count, seed)` always gives the same clips.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from engine.audio.resample import resample
from engine.backends.vibevoice.config import SAMPLE_RATE
from engine.synth import ROSTER, Espeak
from engine.synth.script import load_corpus
from engine.types import Segment

EDGE_S = 0.05  # silence before the first and after the last word
GAP_S = (0.3, 0.7)
MAX_WORDS = 9  # short sentences keep the tiny model's targets short


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


def synthesize_clips(count: int = 3, seed: int = 0) -> list[TinyClip]:
    """`count` clips of 2–3 turns each (see the module docstring)."""
    rng = np.random.default_rng(seed)
    sentences = [s for s in load_corpus().all_sentences if len(s.split()) <= MAX_WORDS]
    clips = []
    with Espeak() as espeak:
        for index in range(count):
            voices = [ROSTER[int(i)] for i in rng.permutation(len(ROSTER))[:2]]
            texts = [sentences[int(i)] for i in rng.choice(len(sentences), 2 + index % 2, replace=False)]
            gaps = rng.uniform(*GAP_S, size=len(texts))
            clips.append(_clip(f"clip{index}", espeak, voices, texts, gaps))
    return clips


def _clip(name: str, espeak: Espeak, voices: list, texts: list[str], gaps: np.ndarray) -> TinyClip:
    rate = espeak.sample_rate
    pieces, segments, cursor = [], [], EDGE_S
    for turn, text in enumerate(texts):
        speech = espeak.synthesize(text, voices[turn % 2].voice)
        first, last = speech.words[0].start, speech.words[-1].end
        audio = speech.samples[round(first * rate) : round(last * rate)]
        pieces.append((round(cursor * rate), audio))
        end = cursor + len(audio) / rate
        segments.append(Segment(round(cursor, 2), round(end, 2), text, speaker=turn % 2))
        cursor = end + (float(gaps[turn]) if turn + 1 < len(texts) else EDGE_S)
    mix = np.zeros(round(cursor * rate), dtype=np.float32)
    for offset, audio in pieces:
        mix[offset : offset + len(audio)] += audio[: len(mix) - offset]
    samples = resample(mix, rate, SAMPLE_RATE).astype(np.float32)
    peak = float(np.max(np.abs(samples))) or 1.0
    return TinyClip(name, samples * np.float32(0.5 / peak), tuple(segments))
