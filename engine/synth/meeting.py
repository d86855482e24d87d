"""Synthetic multi-speaker meetings with exact references, deterministic from a seed.

`build_meeting(MeetingConfig(...))` returns a `SyntheticMeeting`: mono float32 audio at the
requested rate, the participants (readable ids such as `alice`, each with a distinct espeak
voice; the first `speakers` of `ROSTER` unless the config names a `cast`, so the same voices can
meet again in other recordings) and the turns as `engine.types.Utterance`s with exact word times
in absolute seconds.

How a meeting is laid out: every participant speaks once before anyone speaks twice; later turns
go to another participant in proportion to a seeded talkativeness. A turn is 1–4 sentences or,
with probability `backchannel_rate`, a short reply ("Right."). Turns follow each other after a
gap drawn from `gap_s`; a share `overlap_rate` of changes between full turns instead start
0.5–1.5 s before the previous turn ends (never inside a third turn). Turns are added until the
next one would end past the target duration; the audio is then padded to at least the target.
The text, speakers and timing depend only on the seed, speaker count, duration and the rates, so
adding noise (`snr_db`) or reverberation (`rt60`) leaves the references unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from engine.audio.resample import resample
from engine.synth import acoustics
from engine.synth.espeak import Espeak, Speech, Voice
from engine.synth.script import Script, load_corpus
from engine.types import Recording, Speaker, Transcript, Utterance

MIN_DURATION_S = 60.0
MAX_DURATION_S = 3600.0
_LEVEL_DBFS = -20.0  # speech RMS before per-speaker gain
_GAIN_DB = 2.0  # per-speaker loudness spread, ± dB
_LEAD_IN_S = (0.3, 0.8)
_TAIL_S = 0.6
_OVERLAP_S = (0.5, 1.5)
_MIN_OVERLAP_S = 0.3


@dataclass(frozen=True, slots=True)
class Participant:
    """A meeting participant: a readable id and the voice that speaks for them."""

    id: str
    voice: Voice


ROSTER = (
    Participant("alice", Voice("en+f2", rate=165, pitch=55, pitch_range=55)),
    Participant("bob", Voice("en+m3", rate=170, pitch=40, pitch_range=50)),
    Participant("carol", Voice("en-us+f3", rate=160, pitch=60, pitch_range=60)),
    Participant("dave", Voice("en-gb-x-rp+m1", rate=155, pitch=35, pitch_range=45)),
    Participant("erin", Voice("en+f5", rate=170, pitch=65, pitch_range=50)),
    Participant("frank", Voice("en-us+m2", rate=175, pitch=45, pitch_range=50)),
    Participant("grace", Voice("en-gb-x-rp+f2", rate=160, pitch=70, pitch_range=55)),
    Participant("henry", Voice("en-us+m6", rate=180, pitch=30, pitch_range=55)),
)


@dataclass(frozen=True, slots=True)
class MeetingConfig:
    """What to generate. `duration_s` is a target: the result lasts between it and ~5 % more."""

    speakers: int = 4
    duration_s: float = 120.0
    seed: int = 0
    overlap_rate: float = 0.1  # share of changes between full turns that overlap
    backchannel_rate: float = 0.15
    gap_s: tuple[float, float] = (0.2, 1.5)
    snr_db: float | None = None  # None: no noise
    rt60_s: float | None = None  # None: no reverberation
    sample_rate: int = 16000
    session_id: str = "meeting"
    cast: tuple[Participant, ...] = ()  # who speaks; empty: the first `speakers` of ROSTER

    def __post_init__(self) -> None:
        if not 1 <= self.speakers <= len(ROSTER):
            raise ValueError(f"a meeting has 1–{len(ROSTER)} speakers, got {self.speakers}")
        if self.cast and len(self.cast) != self.speakers:
            raise ValueError(f"a cast of {len(self.cast)} for a meeting of {self.speakers} speakers")
        if len({p.id for p in self.cast}) != len(self.cast):
            raise ValueError("every participant of a cast needs their own id")
        if self.seed < 0:
            raise ValueError(f"seed must be zero or positive, got {self.seed}")
        if not MIN_DURATION_S <= self.duration_s <= MAX_DURATION_S:
            raise ValueError(f"duration must be 1–60 minutes, got {self.duration_s / 60:.2f} minutes")
        if not 0.0 <= self.overlap_rate <= 0.5:
            raise ValueError(f"overlap rate must be between 0 and 0.5, got {self.overlap_rate}")
        if not 0.0 <= self.backchannel_rate <= 0.5:
            raise ValueError(f"backchannel rate must be between 0 and 0.5, got {self.backchannel_rate}")
        if not 0.0 < self.gap_s[0] <= self.gap_s[1] <= 10.0:
            raise ValueError(f"gaps must satisfy 0 < shortest <= longest <= 10 s, got {self.gap_s}")
        if self.snr_db is not None and not -10.0 <= self.snr_db <= 80.0:
            raise ValueError(f"SNR must be between -10 and 80 dB, got {self.snr_db}")
        if self.rt60_s is not None and not 0.05 <= self.rt60_s <= 3.0:
            raise ValueError(f"RT60 must be between 0.05 and 3 s, got {self.rt60_s}")
        if not 8000 <= self.sample_rate <= 48000:
            raise ValueError(f"sample rate must be 8000–48000 Hz, got {self.sample_rate}")
        if not self.session_id or any(c.isspace() for c in self.session_id):
            raise ValueError(f"session id must be one word, got {self.session_id!r}")


@dataclass(frozen=True, slots=True, eq=False)
class SyntheticMeeting:
    """A generated meeting: audio plus its exact reference (turns sorted by start)."""

    config: MeetingConfig
    samples: np.ndarray  # (T,) float32 mono at config.sample_rate
    participants: tuple[Participant, ...]
    turns: tuple[Utterance, ...]

    @property
    def sample_rate(self) -> int:
        return self.config.sample_rate

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate

    def overlaps(self) -> tuple[tuple[int, int], ...]:
        """Index pairs of turns that overlap in time."""
        pairs = []
        for i, a in enumerate(self.turns):
            for j in range(i + 1, len(self.turns)):
                if self.turns[j].start >= a.end:
                    break
                pairs.append((i, j))
        return tuple(pairs)

    def recording(self) -> Recording:
        return Recording(samples=self.samples, sample_rate=self.sample_rate)

    def transcript(self) -> Transcript:
        """The exact reference as a `Transcript` (speaker names are the capitalised ids)."""
        speakers = tuple(Speaker(id=p.id, name=p.id.capitalize()) for p in self.participants)
        return Transcript(self.turns, speakers, self.duration, source=self.config.session_id)


@dataclass(frozen=True, slots=True, eq=False)
class _Placed:
    """A synthesised turn placed at `offset` samples (native rate) in the meeting."""

    speaker: str
    speech: Speech
    offset: int
    backchannel: bool

    @property
    def start(self) -> float:
        return self.offset / self.speech.sample_rate + self.speech.words[0].start

    @property
    def end(self) -> float:
        return self.offset / self.speech.sample_rate + self.speech.words[-1].end


def build_meeting(config: MeetingConfig) -> SyntheticMeeting:
    """Generate the meeting `config` describes (see the module docstring).

    A fresh synthesiser speaks every turn, so the result depends on `config` alone.
    """
    rng = np.random.default_rng(config.seed)
    cast = config.cast or ROSTER[: config.speakers]
    with Espeak() as espeak:
        placed = _Layout(config, cast, Script(load_corpus(), rng), espeak, rng).run()
        rate = espeak.sample_rate
    gains = 10.0 ** ((_LEVEL_DBFS + rng.uniform(-_GAIN_DB, _GAIN_DB, len(cast))) / 20.0)
    mixed = _mix(placed, dict(zip((p.id for p in cast), gains, strict=True)), config, rate)
    turns = tuple(_utterance(p) for p in placed)
    samples = _render(mixed, rate, config, turns)
    return SyntheticMeeting(config=config, samples=samples, participants=cast, turns=turns)


class _Layout:
    """Chooses speakers, texts and start times until the target duration is reached."""

    def __init__(
        self,
        config: MeetingConfig,
        cast: tuple[Participant, ...],
        script: Script,
        espeak: Espeak,
        rng: np.random.Generator,
    ) -> None:
        self._config, self._cast, self._script, self._espeak, self._rng = config, cast, script, espeak, rng
        self._voices = {p.id: p.voice for p in cast}
        self._talkative = rng.dirichlet(np.full(len(cast), 2.0))
        self._opening = [cast[i].id for i in rng.permutation(len(cast))]
        self._overlap_credit, self._overlap_threshold = 0.0, rng.uniform(0.5, 1.0)
        self._placed: list[_Placed] = []
        self._cursor = rng.uniform(*_LEAD_IN_S)  # end of the latest speech so far, seconds
        self._before_previous = 0.0  # end of all speech placed before the previous turn

    def run(self) -> list[_Placed]:
        limit = self._config.duration_s * 1.04
        while True:
            speaker, backchannel = self._next_speaker()
            sentences = 0 if backchannel else self._script.sentence_count()
            gap = self._gap() if self._placed else 0.0
            overlap = self._rng.uniform(*_OVERLAP_S) if self._wants_overlap(speaker, backchannel) else 0.0
            turn = self._place(speaker, sentences, gap, overlap)
            if turn.end > limit and sentences > 1:
                turn = self._place(speaker, 1, gap, overlap)
            if turn.end > limit:
                return self._placed
            self._before_previous = self._cursor
            self._placed.append(turn)
            self._cursor = max(self._cursor, turn.end)

    def _next_speaker(self) -> tuple[str, bool]:
        if self._opening:
            return self._opening.pop(0), False
        previous = self._placed[-1].speaker
        others = [i for i, p in enumerate(self._cast) if p.id != previous] or [0]
        weights = self._talkative[others] / self._talkative[others].sum()
        speaker = self._cast[others[int(self._rng.choice(len(others), p=weights))]].id
        backchannel = len(self._cast) > 1 and self._rng.random() < self._config.backchannel_rate
        return speaker, backchannel

    def _gap(self) -> float:
        """Silence before a turn: short gaps more likely than long ones."""
        shortest, longest = self._config.gap_s
        return shortest if shortest == longest else float(self._rng.triangular(shortest, shortest, longest))

    def _wants_overlap(self, speaker: str, backchannel: bool) -> bool:
        """Error diffusion: about `overlap_rate` of eligible changes overlap, spaced irregularly."""
        previous = self._placed[-1] if self._placed else None
        if previous is None or backchannel or previous.backchannel or previous.speaker == speaker:
            return False
        self._overlap_credit += self._config.overlap_rate
        if self._overlap_credit < self._overlap_threshold:
            return False
        self._overlap_credit -= 1.0
        self._overlap_threshold = self._rng.uniform(0.5, 1.0)
        return True

    def _place(self, speaker: str, sentences: int, gap: float, overlap: float) -> _Placed:
        text = self._script.turn(sentences) if sentences else self._script.backchannel()
        speech = self._espeak.synthesize(text, self._voices[speaker])
        start = self._cursor + gap
        if overlap > 0.0 and self._placed:
            previous = self._placed[-1]
            length = speech.words[-1].end - speech.words[0].start
            wanted = min(overlap, 0.5 * (previous.end - previous.start), 0.5 * length)
            overlapped = max(previous.end - wanted, self._before_previous + 0.1)
            if previous.end - overlapped >= _MIN_OVERLAP_S:
                start = overlapped
        offset = round(start * speech.sample_rate) - round(speech.words[0].start * speech.sample_rate)
        return _Placed(speaker=speaker, speech=speech, offset=offset, backchannel=sentences == 0)


def _utterance(turn: _Placed) -> Utterance:
    shift = turn.offset / turn.speech.sample_rate
    words = tuple(dataclasses.replace(w, start=w.start + shift, end=w.end + shift) for w in turn.speech.words)
    text = " ".join(w.text for w in words)
    return Utterance(start=words[0].start, end=words[-1].end, text=text, speaker=turn.speaker, words=words)


def _mix(placed: list[_Placed], gains: dict[str, float], config: MeetingConfig, rate: int) -> np.ndarray:
    """Sum the turns at the synthesiser's rate, each at its speaker's level."""  # -> (T_native,)
    end = max(config.duration_s, max(p.end for p in placed) + _TAIL_S)
    mix = np.zeros(int(np.ceil(end * rate)), dtype=np.float32)
    for turn in placed:
        audio = turn.speech.samples[: len(mix) - turn.offset]  # trailing silence may run past the end
        rms = float(np.sqrt(np.mean(np.square(audio[audio != 0])))) if np.any(audio) else 1.0
        mix[turn.offset : turn.offset + len(audio)] += audio * np.float32(gains[turn.speaker] / rms)
    return mix


def _render(native: np.ndarray, rate: int, config: MeetingConfig, turns: tuple[Utterance, ...]) -> np.ndarray:
    """Resample to the requested rate, then add reverberation and noise (own seeded stream)."""
    samples = resample(native, rate, config.sample_rate)
    fx = np.random.default_rng([config.seed, 1])
    if config.rt60_s is not None:
        samples = acoustics.reverberate(samples, config.rt60_s, config.sample_rate, fx)
    if config.snr_db is not None:
        speech = np.zeros(len(samples), dtype=bool)
        for turn in turns:
            speech[round(turn.start * config.sample_rate) : round(turn.end * config.sample_rate)] = True
        samples = acoustics.add_noise(samples, config.snr_db, speech, fx)
    return acoustics.limit_peak(samples)
