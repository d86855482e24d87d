"""meeteval SegLST (.seglst.json): a JSON list of segments, the input format of cpWER and tcpWER.

One segment per utterance: `{"session_id", "speaker", "start_time", "end_time", "words"}`, where
session_id is the source file's stem, speaker the display name ("unknown" without a speaker) and
words the utterance's text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import BinaryIO

from engine.export.base import UNKNOWN_SPEAKER, ExportOptions, session_id, write_lines
from engine.types import Transcript


@dataclass(frozen=True, slots=True)
class SegLstExporter:
    suffix: str = ".seglst.json"

    def write(self, transcript: Transcript, stream: BinaryIO, options: ExportOptions) -> None:
        session = session_id(transcript)
        segments = [
            {
                "session_id": session,
                "speaker": transcript.speaker_name(u.speaker) or UNKNOWN_SPEAKER,
                "start_time": u.start,
                "end_time": u.end,
                "words": " ".join(u.text.split()),
            }
            for u in transcript.utterances
        ]
        rows = [json.dumps(s, ensure_ascii=False, allow_nan=False) for s in segments]
        write_lines(stream, ["[", ",\n".join(rows), "]"] if rows else ["[]"])
