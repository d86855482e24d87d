"""Known voices on synthetic meetings: enrol once, recognise in other recordings, never name strangers.

The corpus: espeak-ng meetings (exact references) in which the same voices meet again. Four people
are enrolled from two enrolment meetings (as a user would: the diarized transcript's speaker that
is them); two people are never enrolled. Separate calibration meetings choose the threshold and
margin (each halfway across the gap between genuine and impostor scores there); the test
meetings, with other seeds and other casts, are scored with it:
- named correctly: an enrolled person's main found speaker (the one covering most of their speech)
  carries their name; named wrongly: it carries someone else's;
- unknown voices named: a never-enrolled person's main found speaker carries any name.

Each recording goes through silero VAD and a diarizer (`--diarizer embedded`, or `reference`: the
exact turns, which isolates recognition from diarization), then `VoiceRecogniser` exactly as the
pipeline runs it. The last line is the summary:
`known voices: named correctly N %, named wrongly M %, unknown voices named K %`.

    .venv/bin/python bench/known_voices.py [--diarizer embedded|reference] [--tests 8] [--minutes 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.audio.vad import SileroVad
from engine.pipeline import default_speakers
from engine.speakers.embedded import EmbeddedDiarizer
from engine.synth import ROSTER, MeetingConfig, Participant, SyntheticMeeting, Voice, build_meeting
from engine.types import Transcript, Utterance
from engine.voices import MatchConfig, VoiceEmbedder, VoiceLibrary, VoiceRecogniser
from engine.voices.matching import match_speakers
from engine.voices.recogniser import MAX_SECONDS, comparable, enrolment_samples
from engine.voices.speech import longest_first, own_spans, seconds

_BY_ID = {p.id: p for p in ROSTER}
ENROLLED = (
    _BY_ID["alice"],
    _BY_ID["bob"],
    _BY_ID["carol"],
    Participant("kyle", Voice("en-us-nyc+m5", rate=170, pitch=50, pitch_range=60)),
)
STRANGERS = (
    Participant("ned", Voice("en-gb-x-gbcwmd+m7", rate=160, pitch=25, pitch_range=40)),
    Participant("olga", Voice("en+klatt2", rate=160, pitch=60, pitch_range=50)),
)
# `--strangers lookalike`: strangers GE2E can barely tell from enrolled people (dave ~ bob, grace ~ alice)
LOOKALIKES = (_BY_ID["dave"], _BY_ID["grace"])


@dataclass(frozen=True, slots=True)
class Found:
    """One found speaker of a recording: who it really is, and its embedding (None: too little speech)."""

    identity: str  # the person whose speech it covers most
    covers: dict[str, float]  # seconds of each person's speech it covers
    embedding: np.ndarray | None


def meeting(seed: int, cast: tuple[Participant, ...], minutes: float, name: str) -> SyntheticMeeting:
    return build_meeting(MeetingConfig(speakers=len(cast), duration_s=60 * minutes, seed=seed, cast=cast,
                                       snr_db=30, session_id=name))  # fmt: skip


def casts(
    rng: np.random.Generator, count: int, strangers: tuple[Participant, ...] = STRANGERS
) -> list[tuple[Participant, ...]]:
    """`count` casts of 3–4 people, each with at least one enrolled person and one stranger."""
    out = []
    for _ in range(count):
        known = ENROLLED[int(rng.integers(len(ENROLLED)))]
        stranger = strangers[int(rng.integers(len(strangers)))]
        others = [p for p in ENROLLED + strangers if p not in (known, stranger)]
        extra = [others[i] for i in rng.permutation(len(others))[: int(rng.integers(1, 3))]]
        out.append((known, stranger, *extra))
    return out


def diarized(m: SyntheticMeeting, how: str, diarizer: EmbeddedDiarizer, vad: SileroVad) -> Transcript:
    """The recording's speakers as a transcript (no words): what recognition runs on."""
    if how == "reference":
        turns = [Utterance(u.start, u.end, "", f"R{u.speaker}") for u in m.turns]
    else:
        recording = m.recording()
        found = diarizer.diarize(recording, vad.detect(recording))
        turns = [Utterance(t.start, t.end, "", t.speaker) for t in found.turns]
    return Transcript(tuple(turns), default_speakers(tuple(turns)), m.duration)


def identities(m: SyntheticMeeting, transcript: Transcript) -> dict[str, tuple[str, dict[str, float]]]:
    """Found speaker id → (the person it mostly is, seconds of each person's speech it covers)."""
    out = {}
    for s in transcript.speakers:
        mine = [(u.start, u.end) for u in transcript.utterances if u.speaker == s.id]
        overlap = {p.id: _overlap(mine, [(u.start, u.end) for u in m.turns if u.speaker == p.id])
                   for p in m.participants}  # fmt: skip
        out[s.id] = (max(overlap, key=lambda k: overlap[k]), overlap)
    return out


def _overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    return sum(max(0.0, min(x1, y1) - max(x0, y0)) for x0, x1 in a for y0, y1 in b)


def enrol(
    library: VoiceLibrary, embedder: VoiceEmbedder, meetings: list[tuple[SyntheticMeeting, Transcript]]
) -> None:
    for m, transcript in meetings:
        who = identities(m, transcript)
        for person in ENROLLED:
            mine = [sid for sid, (p, _) in who.items() if p == person.id]
            if not mine:
                continue
            main = max(mine, key=lambda sid: who[sid][1][person.id])
            samples = enrolment_samples(
                m.recording(), own_spans(transcript.utterances, main), m.config.session_id, embedder
            )
            library.add(person.id, samples)
            print(f"enrolled {person.id} from {m.config.session_id} ({len(samples)} samples)", flush=True)


def found_speakers(
    m: SyntheticMeeting, transcript: Transcript, embedder: VoiceEmbedder, min_seconds: float
) -> dict[str, Found]:
    who = identities(m, transcript)
    out: dict[str, Found] = {}
    for s in transcript.speakers:
        spans = own_spans(transcript.utterances, s.id)
        vector = None
        if seconds(spans) >= min_seconds:
            vector = embedder.embed(m.recording(), [longest_first(spans, MAX_SECONDS)])[0]
        out[s.id] = Found(who[s.id][0], who[s.id][1], vector)
    return out


def score(
    found: dict[str, Found], centroids: dict[str, np.ndarray], config: MatchConfig
) -> tuple[int, int, int, int, int]:
    """(enrolled appearances, named correctly, named wrongly, stranger appearances, strangers named)."""
    names = match_speakers(
        {k: f.embedding for k, f in found.items() if f.embedding is not None}, centroids, config
    )
    people = next(iter(found.values())).covers if found else {}
    # each person's main speaker: the found speaker covering most of their speech
    main = {p: max(found, key=lambda sid: found[sid].covers[p]) for p in people}
    enrolled = {p.id for p in ENROLLED}  # anyone else is a stranger
    counts = [0, 0, 0, 0, 0]
    for person, sid in main.items():
        given = names[sid].name if sid in names and found[sid].covers[person] > 0 else None
        if person in enrolled:
            counts[0] += 1
            counts[1] += given == person
            counts[2] += given is not None and given != person
        else:
            counts[3] += 1
            counts[4] += given is not None
    return tuple(counts)  # type: ignore[return-value]


def calibrate(
    sets: list[dict[str, Found]], centroids: dict[str, np.ndarray], base: MatchConfig
) -> MatchConfig:
    """Threshold and margin each halfway across the gap between the found speakers whose most
    similar known person is really them (genuine) and all the others (impostors: a stranger, or an
    enrolled person closest to someone else), on the calibration recordings; where the two
    overlap, just above the highest impostor (precision first)."""
    genuine: list[tuple[float, float]] = []
    impostor: list[tuple[float, float]] = []
    names = list(centroids)
    table = np.stack([centroids[n] for n in names])
    for found in sets:
        for f in found.values():
            if f.embedding is None:
                continue
            scores = np.sort(table @ f.embedding)[::-1]
            best = names[int(np.argmax(table @ f.embedding))]
            runner_up = scores[1] if len(scores) > 1 else -1.0
            (genuine if best == f.identity else impostor).append(
                (float(scores[0]), float(scores[0] - runner_up))
            )
    if not genuine or not impostor:
        return base
    cut = [_halfway([g[i] for g in genuine], [b[i] for b in impostor]) for i in (0, 1)]
    print(f"calibration: genuine {len(genuine)} (lowest score {min(g[0] for g in genuine):.3f}, margin "
          f"{min(g[1] for g in genuine):.3f}), impostors {len(impostor)} (highest score "
          f"{max(b[0] for b in impostor):.3f}, margin {max(b[1] for b in impostor):.3f})")  # fmt: skip
    return MatchConfig(round(cut[0], 2), round(max(cut[1], 0.0), 2), base.min_seconds)


def _halfway(genuine: list[float], impostor: list[float]) -> float:
    low, high = min(genuine), max(impostor)
    return (low + high) / 2 if low > high else high + 0.01


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--diarizer", choices=["embedded", "reference"], default="embedded")
    p.add_argument("--calibration", type=int, default=4, help="calibration meetings")
    p.add_argument("--tests", type=int, default=8, help="scored meetings")
    p.add_argument("--minutes", type=float, default=2.0)
    p.add_argument("--seed", type=int, default=37)
    p.add_argument("--strangers", choices=["distinct", "lookalike"], default="distinct",
                   help="never-enrolled voices: distinct ones (ned, olga) or GE2E lookalikes of "
                   "enrolled people (dave, grace), which no threshold separates")  # fmt: skip
    args = p.parse_args()
    began = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    strangers = STRANGERS if args.strangers == "distinct" else LOOKALIKES
    diarizer, vad = EmbeddedDiarizer(), SileroVad()
    embedder = VoiceEmbedder(diarizer.encoder)

    def prepared(
        seed: int, cast: tuple[Participant, ...], minutes: float, name: str
    ) -> tuple[SyntheticMeeting, Transcript]:
        m = meeting(seed, cast, minutes, name)
        return m, diarized(m, args.diarizer, diarizer, vad)

    enrolment = [prepared(args.seed * 100 + i, cast, 3.0, f"enrol{i}")
                 for i, cast in enumerate((ENROLLED[:2], ENROLLED[2:]))]  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        library = VoiceLibrary(Path(folder) / "voices.sqlite")
        enrol(library, embedder, enrolment)
        centroids = comparable(library.voices(), embedder.model, library)
        recogniser = VoiceRecogniser(library, embedder)
    base = recogniser.config
    calibration = [prepared(args.seed * 100 + 10 + i, cast, args.minutes, f"cal{i}")
                   for i, cast in enumerate(casts(rng, args.calibration, strangers))]  # fmt: skip
    cal_sets = [found_speakers(m, t, embedder, base.min_seconds) for m, t in calibration]
    config = calibrate(cal_sets, centroids, base)
    print(f"calibrated on {len(calibration)} meetings: threshold {config.threshold:.2f}, "
          f"margin {config.margin:.2f} (shipped: {base.threshold:.2f}, {base.margin:.2f})")  # fmt: skip
    totals = np.zeros(5, int)
    for i, cast in enumerate(casts(rng, args.tests, strangers)):
        m, transcript = prepared(args.seed * 100 + 50 + i, cast, args.minutes, f"test{i}")
        counts = score(found_speakers(m, transcript, embedder, base.min_seconds), centroids, config)
        totals += counts
        print(f"test{i} {','.join(p.id for p in cast):28s} found {len(transcript.speakers)}: "
              f"enrolled {counts[0]} (right {counts[1]}, wrong {counts[2]}), strangers {counts[3]} "
              f"(named {counts[4]})", flush=True)  # fmt: skip
    enrolled, right, wrong, unknown, named = (int(v) for v in totals)
    print(f"{args.tests} test meetings, {args.diarizer} diarizer, {time.perf_counter() - began:.0f} s")
    n, m, k = (100 * v / max(d, 1) for v, d in ((right, enrolled), (wrong, enrolled), (named, unknown)))
    print(f"known voices: named correctly {n:.0f} %, named wrongly {m:.0f} %, unknown voices named {k:.0f} %")


if __name__ == "__main__":
    main()
