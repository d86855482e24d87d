"""Response bodies of `/v1/audio/transcriptions` and `/translations`: OpenAI's formats, Murmur's extras.

`render_response(transcript, fmt, granularities, task=, speaker_labels=)` → (body, media type)
for json | verbose_json | diarized_json | text | srt | vtt:

- json: `{"text", "usage"}`; text: the transcript and a newline; srt/vtt: Murmur's subtitle
  exports, with speaker names in the cues only when `speaker_labels` (OpenAI's cues carry none).
- verbose_json: OpenAI's shape — `task`, `language` (a name, "english"), `duration`, `text`,
  `segments` (unless only word timestamps were asked), `words` (when asked), `usage` — times
  rounded to the millisecond. A segment is one of Murmur's utterances: `id`, `start`, `end`, and
  `text` with whisper's leading space (so joined segments read as the text); Murmur does not
  keep whisper's per-segment `tokens`, `seek`, `avg_logprob`, `compression_ratio` or
  `no_speech_prob` through stitching, so they are left out rather than faked. A word is bare, as
  OpenAI's ("Hello", not "Hello."). Murmur adds `speaker` and `speaker_id` to each segment, the
  `speakers`, the `model`, and the whole Murmur transcript (`murmur`), from which a client rebuilds
  it exactly (`engine.remote`).
- diarized_json: OpenAI's speaker format — `task`, `duration`, `text`, `segments` of
  `{"type": "transcript.text.segment", "id", "start", "end", "text", "speaker"}` (`id` a string,
  "seg_0"…), `usage`. `speaker` is the name of a speaker recognised as a known voice (a request's
  `known_speaker_names[]` or the server's library), else "A", "B"… in order of first appearance,
  as OpenAI labels the speakers it does not know (`speaker_letters`).
- `usage` is `{"type": "duration", "seconds": …}`: the recording's whole seconds, rounded up.
"""

from __future__ import annotations

import dataclasses
import json
import math
import string
from collections.abc import Sequence
from typing import Any

from engine.export import render
from engine.types import Transcript

DIARIZED = "diarized_json"
FORMATS = ("json", "verbose_json", "text", "srt", "vtt", DIARIZED)
JSON_FORMATS = ("json", "verbose_json", DIARIZED)
GRANULARITIES = ("segment", "word")
MEDIA = {"json": "application/json", "verbose_json": "application/json", DIARIZED: "application/json",
         "text": "text/plain; charset=utf-8",
         "srt": "application/x-subrip; charset=utf-8", "vtt": "text/vtt; charset=utf-8"}  # fmt: skip
LANGUAGES = {"en": "english", "de": "german", "fr": "french", "es": "spanish", "it": "italian",
             "pt": "portuguese", "nl": "dutch", "pl": "polish", "ru": "russian", "uk": "ukrainian",
             "ja": "japanese", "zh": "chinese", "ko": "korean", "ar": "arabic", "tr": "turkish",
             "hi": "hindi", "sv": "swedish", "da": "danish", "no": "norwegian", "fi": "finnish"}  # fmt: skip


def render_response(
    transcript: Transcript, fmt: str, granularities: Sequence[str] = (), *, task: str = "transcribe",
    speaker_labels: bool = False,
) -> tuple[bytes, str]:  # fmt: skip
    if fmt == "json":
        return json.dumps({"text": transcript.text, "usage": usage(transcript.duration)}).encode(), MEDIA[fmt]
    if fmt == "verbose_json":
        return json.dumps(verbose(transcript, granularities, task)).encode(), MEDIA[fmt]
    if fmt == DIARIZED:
        return json.dumps(diarized(transcript)).encode(), MEDIA[fmt]
    if fmt == "text":
        return (transcript.text + "\n").encode(), MEDIA[fmt]
    return render(transcript if speaker_labels else unlabelled(transcript), fmt), MEDIA[fmt]


def usage(duration: float) -> dict[str, Any]:
    return {"type": "duration", "seconds": math.ceil(duration)}


def verbose(
    transcript: Transcript, granularities: Sequence[str] = (), task: str = "transcribe"
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "task": task,
        "language": LANGUAGES.get(transcript.language, transcript.language),
        "duration": round(transcript.duration, 3),
        "text": transcript.text,
    }
    if "segment" in granularities or not granularities:
        body["segments"] = [
            {"id": i, "start": round(u.start, 3), "end": round(u.end, 3), "text": f" {u.text}",
             "speaker": transcript.speaker_name(u.speaker), "speaker_id": u.speaker}
            for i, u in enumerate(transcript.utterances)
        ]  # fmt: skip
    if "word" in granularities:
        body["words"] = [
            {"word": bare, "start": round(w.start, 3), "end": round(w.end, 3)}
            for u in transcript.utterances for w in u.words if (bare := bare_word(w.text))
        ]  # fmt: skip
    body["usage"] = usage(transcript.duration)
    body["speakers"] = [{"id": s.id, "name": s.name} for s in transcript.speakers]
    body["model"] = transcript.model
    body["murmur"] = json.loads(render(transcript, "json"))
    return body


def diarized(transcript: Transcript) -> dict[str, Any]:
    """OpenAI's diarized_json body (see the module contract)."""
    return {"task": "transcribe", "duration": round(transcript.duration, 3), "text": transcript.text,
            "segments": diarized_segments(transcript), "usage": usage(transcript.duration)}  # fmt: skip


def diarized_segments(transcript: Transcript) -> list[dict[str, Any]]:
    """One `transcript.text.segment` per utterance, its speaker as `speaker_letters` calls it."""
    labels = speaker_letters(transcript)
    return [
        {"type": "transcript.text.segment", "id": f"seg_{i}", "start": round(u.start, 3),
         "end": round(u.end, 3), "text": u.text, "speaker": labels[u.speaker]}
        for i, u in enumerate(transcript.utterances)
    ]  # fmt: skip


def speaker_letters(transcript: Transcript) -> dict[str | None, str]:
    """Each speaker's diarized_json label: a recognised speaker's name, else the next letter ("A",
    "B"… "Z", "AA"…) by first appearance; utterances without a speaker share one letter."""
    scored = {s.id: s.name for s in transcript.speakers if s.score is not None}
    labels: dict[str | None, str] = {}
    unknown = 0
    for speaker in dict.fromkeys(u.speaker for u in transcript.utterances):
        if speaker in scored:
            labels[speaker] = scored[speaker]
        else:
            labels[speaker] = _letters(unknown)
            unknown += 1
    return labels


def _letters(index: int) -> str:
    """0 → "A", 25 → "Z", 26 → "AA"."""
    text = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        text = chr(ord("A") + rest) + text
    return text


def bare_word(text: str) -> str:
    """A word without the punctuation whisper attaches to it ("Hello." → "Hello"; "don't" stays)."""
    return text.strip().strip(string.punctuation + "¿¡«»“”‘’…")


def unlabelled(transcript: Transcript) -> Transcript:
    """The transcript without speakers on its utterances: subtitles as OpenAI writes them."""
    utterances = tuple(dataclasses.replace(u, speaker=None) for u in transcript.utterances)
    return dataclasses.replace(transcript, utterances=utterances)
