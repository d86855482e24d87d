"""Reference files for a meeting's exact turns, and its audio as FLAC.

Renderers take a session id and speaker-attributed `Utterance`s (absolute seconds) and return text:
- RTTM: one `SPEAKER` line per turn (pyannote / md-eval);
- STM: `<file> 1 <speaker> <start> <end> <text>` per turn, sorted by start (sclite, meeteval);
- SegLST (meeteval) utterances: a JSON list of {session_id, speaker, start_time, end_time, words};
- word-level SegLST (`.words.json`): the same fields, one entry per word, exact word times.
Times are written with millisecond precision. JSON lists hold one entry per line, so files diff
well. `write_meeting(meeting, stem)` writes `stem.flac` (16-bit) and the four reference files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import soundfile as sf

from engine.synth.meeting import SyntheticMeeting
from engine.types import Utterance

SUFFIXES = (".rttm", ".stm", ".seglst.json", ".words.json")
_UNKNOWN_SPEAKER = "unknown"


def render_rttm(session_id: str, turns: Sequence[Utterance]) -> str:
    """RTTM text: `SPEAKER <file> 1 <start> <duration> <NA> <NA> <speaker> <NA> <NA>` per turn."""
    return "".join(
        f"SPEAKER {session_id} 1 {t.start:.3f} {t.end - t.start:.3f} <NA> <NA> {_speaker(t)} <NA> <NA>\n"
        for t in _ordered(turns)
    )


def render_stm(session_id: str, turns: Sequence[Utterance]) -> str:
    """STM text: `<file> 1 <speaker> <start> <end> <text>` per turn."""
    return "".join(
        f"{session_id} 1 {_speaker(t)} {t.start:.3f} {t.end:.3f} {t.text}\n" for t in _ordered(turns)
    )


def seglst_utterances(session_id: str, turns: Sequence[Utterance]) -> list[dict[str, object]]:
    """meeteval SegLST entries, one per turn."""
    return [_entry(session_id, _speaker(t), t.start, t.end, t.text) for t in _ordered(turns)]


def seglst_words(session_id: str, turns: Sequence[Utterance]) -> list[dict[str, object]]:
    """meeteval SegLST entries, one per word (turns without word times give one entry per turn)."""
    entries = []
    for t in _ordered(turns):
        if not t.words:
            entries.append(_entry(session_id, _speaker(t), t.start, t.end, t.text))
        entries.extend(_entry(session_id, _speaker(t), w.start, w.end, w.text) for w in t.words)
    return entries


def render_json(entries: list[dict[str, object]]) -> str:
    """A JSON list with one entry per line."""
    if not entries:
        return "[]\n"
    return "[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n]\n"


def render_references(meeting: SyntheticMeeting) -> dict[str, str]:
    """The text of every reference file, keyed by suffix (see `SUFFIXES`)."""
    session, turns = meeting.config.session_id, meeting.turns
    return {
        ".rttm": render_rttm(session, turns),
        ".stm": render_stm(session, turns),
        ".seglst.json": render_json(seglst_utterances(session, turns)),
        ".words.json": render_json(seglst_words(session, turns)),
    }


def write_flac(path: Path, samples: np.ndarray, sample_rate: int) -> Path:
    """Write mono float audio as 16-bit FLAC."""
    sf.write(str(path), np.clip(samples, -1.0, 1.0), sample_rate, format="FLAC", subtype="PCM_16")
    return path


def write_meeting(meeting: SyntheticMeeting, stem: Path) -> list[Path]:
    """Write `stem.flac` and the reference files beside it; returns the paths written."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [write_flac(stem.with_name(stem.name + ".flac"), meeting.samples, meeting.sample_rate)]
    for suffix, text in render_references(meeting).items():
        path = stem.with_name(stem.name + suffix)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _entry(session_id: str, speaker: str, start: float, end: float, words: str) -> dict[str, object]:
    return {
        "session_id": session_id,
        "speaker": speaker,
        "start_time": round(start, 3),
        "end_time": round(end, 3),
        "words": words,
    }


def _ordered(turns: Sequence[Utterance]) -> list[Utterance]:
    return sorted(turns, key=lambda t: (t.start, t.end))


def _speaker(turn: Utterance) -> str:
    """The speaker id as one token (RTTM and STM fields are separated by whitespace)."""
    return "_".join((turn.speaker or _UNKNOWN_SPEAKER).split()) or _UNKNOWN_SPEAKER
