"""Transcripts the engine wrote, opened for review: Murmur JSON, SRT and WebVTT.

`read_transcript_file(path)` reads one (`TranscriptFormatError` with the reason otherwise);
`recording_for(path, transcript)` finds its recording: the source the JSON names, if it is still
there, else a recording of the same name beside the transcript (`meeting.srt` → `meeting.flac`),
else None (the window then asks where it is).
"""

from __future__ import annotations

from pathlib import Path

from engine.types import Transcript

TRANSCRIPT_SUFFIXES = (".json", ".srt", ".vtt")


def read_transcript_file(path: Path) -> Transcript:
    from engine.export import read_json
    from engine.export.subtitle_read import read_subtitles

    return read_json(path) if path.suffix.lower() == ".json" else read_subtitles(path)


def recording_for(path: Path, transcript: Transcript) -> Path | None:
    from engine.audio.io import SUPPORTED_EXTENSIONS

    if transcript.source and Path(transcript.source).is_file():
        return Path(transcript.source)
    beside = sorted(p for p in path.parent.glob(f"{path.stem}.*") if p.suffix.lower() in SUPPORTED_EXTENSIONS)
    return beside[0] if beside else None
