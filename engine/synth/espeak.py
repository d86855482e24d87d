"""Speech synthesis with exact word times, through the espeak-ng C library (ctypes, synchronous mode).

`Espeak.synthesize(text, voice)` returns `Speech`: float32 mono samples at espeak's native rate
(22,050 Hz) and one `Word` per whitespace-separated token of `text`, with times in seconds from the
start of the returned audio. Word starts come from espeak's own WORD events (sample-exact). espeak
speaks some common pairs as one dictionary entry ("of the", "has been") and reports one WORD event
for both; such a group is split at espeak's PHONEME events, giving each word a share of the
group's phonemes in proportion to its letters. Each word ends at its last non-silent sample before
the next word starts, so pauses after commas and sentence ends belong to no word. Text must be
plain: letters, apostrophes, spaces and `. , ? !` (anything else raises ValueError).

Each `Espeak` loads its own copy of the library (see `engine.synth.native`), so a new instance
given the same calls in the same order returns the same audio, sample for sample; one instance's
output still depends on what it spoke before. The C library is not re-entrant: an instance
serialises its calls with a lock, and two instances should not synthesise from two threads at once
(they share libc's `rand()`, and output would no longer be reproducible). `close()` (or `with`)
frees the copy. A missing library raises `ModelLoadError` naming the Debian package.
"""

from __future__ import annotations

import ctypes
import itertools
import re
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from engine.errors import ModelLoadError
from engine.synth import native
from engine.types import Word

_PAUSE_PHONEMES = (b"_", b";", b"|", b"")
_SILENCE = 8  # |int16 sample| at or below this is silence (espeak pads with exact zeros)
_TOKEN = re.compile(r"\S+")
_PLAIN_TEXT = re.compile(r"[A-Za-z' .,?!]+")


@dataclass(frozen=True, slots=True)
class Voice:
    """An espeak voice: a voice *file* name with variant (`en+f2`, `en-us+m3`) and prosody.

    `rate` is words per minute (80–450); `pitch` and `pitch_range` are espeak's 0–100 scales.
    """

    name: str
    rate: int = 165
    pitch: int = 50
    pitch_range: int = 50

    def __post_init__(self) -> None:
        if not self.name or " " in self.name:
            raise ValueError(f"voice name must be an espeak voice file name like 'en+f2', got {self.name!r}")
        if not 80 <= self.rate <= 450:
            raise ValueError(f"speaking rate must be 80–450 words per minute, got {self.rate}")
        for label, value in (("pitch", self.pitch), ("pitch range", self.pitch_range)):
            if not 0 <= value <= 100:
                raise ValueError(f"{label} must be 0–100, got {value}")


@dataclass(frozen=True, slots=True, eq=False)
class Speech:
    """Synthesised audio and its words; word times are seconds from the start of `samples`."""

    samples: np.ndarray  # (T,) float32 in [-1, 1]
    sample_rate: int
    words: tuple[Word, ...]

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate


class Espeak:
    """An espeak-ng synthesiser in synchronous mode (see the module docstring for the threading rule)."""

    def __init__(self, library: str | None = None) -> None:
        self._lib: ctypes.CDLL | None = native.load_private(library)
        self._release = weakref.finalize(self, native.unload, self._lib)
        self._libc = ctypes.CDLL(None)
        self._lock = threading.Lock()
        self._chunks: list[np.ndarray] = []
        self._words: list[tuple[int, int]] = []  # WORD events: (1-based text position, sample)
        self._phonemes: list[int] = []  # PHONEME events (pauses left out): sample
        self._callback = native.SynthCallback(self._receive)
        options = native.INITIALIZE_DONT_EXIT | native.INITIALIZE_PHONEME_EVENTS
        rate = self._lib.espeak_Initialize(native.AUDIO_OUTPUT_SYNCHRONOUS, 0, None, options)
        if rate <= 0:
            self.close()
            raise ModelLoadError("espeak-ng could not start: its voice data (espeak-ng-data) is missing")
        self._lib.espeak_SetSynthCallback(self._callback)
        self._lib.espeak_Info.restype = ctypes.c_char_p
        self.sample_rate = int(rate)
        self.version: str = (self._lib.espeak_Info(None) or b"unknown").decode()

    def __enter__(self) -> Espeak:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Free the library copy; later calls to `synthesize` raise RuntimeError."""
        with self._lock:
            self._lib = None
            self._release()

    def synthesize(self, text: str, voice: Voice) -> Speech:
        """Speak `text` with `voice`; one `Word` per whitespace-separated token, punctuation stripped."""
        tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(text)]
        if not tokens or not _PLAIN_TEXT.fullmatch(text):
            raise ValueError(f"text to speak must be plain words and . , ? ! punctuation, got {text!r}")
        with self._lock:
            pcm, words, phonemes = self._run(text, voice)
        anchors = _anchor(tokens, words)
        starts = _split_groups(anchors, [len(_strip(t)) or 1 for _, _, t in tokens], phonemes, len(pcm))
        spans = _trim(pcm, starts)
        return Speech(
            samples=pcm.astype(np.float32) / 32768.0,
            sample_rate=self.sample_rate,
            words=tuple(
                Word(start=a / self.sample_rate, end=z / self.sample_rate, text=_strip(token))
                for (a, z), (_, _, token) in zip(spans, tokens, strict=True)
            ),
        )

    def _run(self, text: str, voice: Voice) -> tuple[np.ndarray, list[tuple[int, int]], list[int]]:
        """Synthesise (call under the lock); int16 samples, WORD events and PHONEME event samples."""
        lib = self._lib
        if lib is None:
            raise RuntimeError("this espeak-ng synthesiser has been closed")
        self._chunks, self._words, self._phonemes = [], [], []
        if lib.espeak_SetVoiceByName(voice.name.encode()) != 0:
            raise ValueError(f"espeak-ng has no voice file {voice.name!r} (use names like 'en+f2')")
        for parameter, value in (
            (native.PARAM_RATE, voice.rate),
            (native.PARAM_PITCH, voice.pitch),
            (native.PARAM_RANGE, voice.pitch_range),
        ):
            lib.espeak_SetParameter(parameter, value, 0)
        native.reseed(self._libc)
        data = text.encode("utf-8")
        size, flags = len(data) + 1, native.CHARS_UTF8
        status = lib.espeak_Synth(data, size, 0, native.POS_CHARACTER, 0, flags, None, None)
        lib.espeak_Synchronize()
        if status != 0:
            raise RuntimeError(f"espeak-ng failed to synthesise (status {status})")
        pcm = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.int16)
        return pcm, self._words, self._phonemes

    def _receive(self, wav: ctypes.Array, count: int, events: ctypes.Array) -> int:
        """espeak's callback: collect audio, WORD and PHONEME events (runs inside `espeak_Synth`)."""
        if wav and count > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        i = 0
        while events[i].type != native.EVENT_LIST_TERMINATED:
            event = events[i]
            if event.type == native.EVENT_WORD and event.length > 0:
                self._words.append((event.text_position, event.sample))
            elif event.type == native.EVENT_PHONEME and event.id.string[:1] not in _PAUSE_PHONEMES:
                self._phonemes.append(event.sample)
            i += 1
        return 0


def _anchor(tokens: list[tuple[int, int, str]], events: list[tuple[int, int]]) -> list[int | None]:
    """The WORD-event sample of each token, None for tokens espeak spoke inside another's event.

    Events come in token order; an event whose text position is not past the last matched token
    (espeak reports odd positions for some dictionary pairs) belongs to the next token.
    """
    anchors: list[int | None] = [None] * len(tokens)
    last = -1
    for position, sample in events:
        k = next((i for i, (a, z, _) in enumerate(tokens) if a < position <= z), None)
        if k is None or k <= last:
            k = last + 1
        if k >= len(tokens):
            break
        anchors[k], last = sample, k
    if anchors[0] is None:
        anchors[0] = 0
    return anchors


def _split_groups(
    anchors: list[int | None], letters: list[int], phonemes: list[int], total: int
) -> list[int]:
    """Start samples of all tokens: unanchored tokens share their group's phonemes by letter count."""
    starts = [0] * len(anchors)
    k = 0
    while k < len(anchors):
        z = next((j for j in range(k + 1, len(anchors)) if anchors[j] is not None), len(anchors))
        first = anchors[k] or 0
        end = total if z == len(anchors) else anchors[z] or 0
        inside = [p for p in phonemes if first <= p < end]
        starts[k:z] = _share(first, end, inside, letters[k:z]) if z - k > 1 else [first]
        k = z
    return starts


def _share(first: int, end: int, phonemes: list[int], letters: list[int]) -> list[int]:
    """Split a group starting at `first` among words: at phoneme starts when there are enough."""
    fractions = np.cumsum(letters)[:-1] / sum(letters)
    if len(phonemes) < len(letters):
        return [first, *(first + round(f * (end - first)) for f in fractions)]
    cuts: list[int] = []
    for i, f in enumerate(fractions):
        lowest = cuts[-1] + 1 if cuts else 1
        highest = len(phonemes) - len(letters) + i + 1
        cuts.append(min(max(round(f * len(phonemes)), lowest), highest))
    return [first, *(phonemes[c] for c in cuts)]


def _trim(pcm: np.ndarray, starts: list[int]) -> list[tuple[int, int]]:
    """Sample spans of each word: from its start to the next word's, with silence trimmed off both ends."""
    loud = np.abs(pcm.astype(np.int32)) > _SILENCE
    bounds = [*starts, len(pcm)]
    spans = []
    for a, z in itertools.pairwise(bounds):
        inside = np.flatnonzero(loud[a:z])
        spans.append((a + int(inside[0]), a + int(inside[-1]) + 1) if len(inside) else (a, max(z, a)))
    return spans


def _strip(token: str) -> str:
    """A token without surrounding punctuation (inner apostrophes kept: "let's")."""
    return token.strip(".,?!'")
