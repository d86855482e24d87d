"""Response bodies of `/v1/audio/transcriptions`: OpenAI's formats, with Murmur's speakers added.

`render_response(transcript, fmt, granularities)` → (body, media type) for json | verbose_json |
text | srt | vtt. verbose_json follows OpenAI's shape (task, language, duration, text, segments,
words when asked) and adds `speaker` (display name) and `speaker_id` to each segment, the
`speakers` list, the `model` that produced it and the whole Murmur transcript (`murmur`), from
which a client rebuilds the transcript exactly (`engine.remote`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engine.export import render
from engine.types import Transcript

FORMATS = ("json", "verbose_json", "text", "srt", "vtt")
GRANULARITIES = ("segment", "word")
MEDIA = {"json": "application/json", "verbose_json": "application/json", "text": "text/plain",
         "srt": "application/x-subrip", "vtt": "text/vtt"}  # fmt: skip


def render_response(transcript: Transcript, fmt: str, granularities: Sequence[str] = ()) -> tuple[bytes, str]:
    media = MEDIA[fmt] + ("; charset=utf-8" if fmt != "json" and fmt != "verbose_json" else "")
    if fmt == "json":
        return json.dumps({"text": transcript.text}).encode(), media
    if fmt == "verbose_json":
        return json.dumps(verbose(transcript, granularities)).encode(), media
    if fmt == "text":
        return (transcript.text + "\n").encode(), media
    return render(transcript, fmt), media


def verbose(transcript: Transcript, granularities: Sequence[str] = ()) -> dict[str, Any]:
    segments = [
        {
            "id": i, "seek": 0, "start": u.start, "end": u.end, "text": u.text, "tokens": [],
            "temperature": 0.0, "avg_logprob": 0.0, "compression_ratio": 0.0, "no_speech_prob": 0.0,
            "speaker": transcript.speaker_name(u.speaker), "speaker_id": u.speaker,
        }
        for i, u in enumerate(transcript.utterances)
    ]
    body: dict[str, Any] = {
        "task": "transcribe",
        "language": _language(transcript.language),
        "duration": transcript.duration,
        "text": transcript.text,
        "segments": segments if "segment" in granularities or not granularities else [],
        "speakers": [{"id": s.id, "name": s.name} for s in transcript.speakers],
        "model": transcript.model,
        "murmur": json.loads(render(transcript, "json")),
    }
    if "word" in granularities:
        body["words"] = [
            {"word": w.text, "start": w.start, "end": w.end} for u in transcript.utterances for w in u.words
        ]
    return body


def _language(code: str) -> str:
    return {"en": "english"}.get(code, code)
