"""One live-audio session of `/v1/realtime`: client events in, transcription events out.

`RealtimeSession(backend, detector, emit)` is the protocol without the socket (`realtime.py` runs
it on a WebSocket). It follows OpenAI's realtime transcription session where it fits:
- client events: `transcription_session.update` (`session.input_audio_format` "pcm16", 24 kHz as
  OpenAI's, `session.input_audio_transcription.language`) or `session.update` (`session.audio.
  input.format` `{"type": "audio/pcm", "rate": R}`, `session.audio.input.transcription.language`);
  `input_audio_buffer.append` (`audio`: base64 little-endian PCM16 mono at the session's rate);
  `input_audio_buffer.commit` (close the speech heard so far now);
- server events: `transcription_session.created` / `…updated` (`session.updated` for `session.update`),
  `input_audio_buffer.committed` when a stretch of speech has closed (the server's own voice
  activity detection: `engine.live.vad_stream`, as `murmur record --live`), then for that item
  `conversation.item.input_audio_transcription.delta` per line and `….completed` with the whole
  transcript (and, beyond OpenAI's fields, `lines`: each line's text and absolute start/end
  seconds); `murmur.drained` once every item committed before a client's commit is completed
  (a client that is done sends a commit and closes after it); `error` as OpenAI shapes it.
- Beyond OpenAI: `session.murmur.speakers` (true/false, before the first audio) gives each line a
  provisional `speaker` ("S1"…: `engine.live.online_speakers`, as `murmur record --live`). Segments
  close as `murmur record --live`'s do (`engine.live.session.LiveConfig`: 300 ms of silence, a long
  turn cut at a pause while the decoder has spare time, whisper decoding greedily). With a voice
  library (`voices`: the server's `--voices`), a provisional speaker that has said enough and
  matches a known voice clearly is named: `murmur.speaker.named` (`speaker`, `name`, `score`;
  `name` null when a closer speaker took the name) (`engine.live.live_names`).
- What differs: turn detection is always the server's (a `turn_detection` setting is refused);
  any rate in `RATES` (OpenAI: 24 kHz only); a `prompt` is refused (400-style `error`, not ignored);
  binary frames are refused.

A server whose model is not a 16 kHz one (VibeVoice-ASR) refuses the session at `start()` with an
`error` (`unsupported_model`) and close 1003. Bad input raises `SessionError` with the WebSocket
close code the socket ends with: `BAD_PAYLOAD`
(1007: not JSON, not base64, an odd number of bytes), `BAD_FORMAT` (1003: a rate not in `RATES`,
another audio format), `BEHIND` (1013: more than `MAX_BACKLOG_SECONDS` of speech waiting). An
unknown event type or a refused setting is an `error` event and the session goes on. `close()`
stops the decoder's worker (its queued speech is dropped) and frees the session's audio.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine.audio.resample import StreamingResampler
from engine.audio.vad import FRAME
from engine.live.live_names import live_speakers
from engine.live.session import LiveConfig
from engine.live.transcriber import RATE, LiveLine, LiveTranscriber
from engine.serve.realtime_errors import BAD_FORMAT, BAD_PAYLOAD, BEHIND, SessionError
from engine.types import SpeechSegment
from engine.voices.library import VoiceLibraryError
from engine.voices.matching import Match
from engine.voices.recogniser import VoiceSource

OPENAI_RATE = 24000  # pcm16 in OpenAI's realtime API
RATES = (8000, 16000, 24000, 32000, 44100, 48000)
MAX_BACKLOG_SECONDS = 300.0  # speech waiting to be decoded before the session is refused more
KEEP_SECONDS = 1.0  # audio kept before the open speech while nobody speaks (the detector's padding)

Emit = Callable[[dict[str, Any]], None]


@dataclass(slots=True)
class _Item:
    id: str
    segment: SpeechSegment
    lines: list[LiveLine] = field(default_factory=list)


class RealtimeSession:
    """The protocol of one live-audio session (see the module contract)."""

    def __init__(self, backend: Any, detector: Any, emit: Emit, voices: VoiceSource | None = None) -> None:
        self.backend, self.emit, self.voices = backend, emit, voices
        self.rate = OPENAI_RATE
        self.language: str | None = None
        self.live = LiveConfig(speakers=False)
        self.vad = self.live.streaming_vad(detector)
        self._resampler: StreamingResampler | None = None  # made at the first audio
        self._audio = np.zeros(0, np.float32)  # 16 kHz samples from `_audio_from` on
        self._audio_from = 0
        self._items: list[_Item] = []  # committed, not completed yet (oldest first)
        self._submitted = 0
        self._drain_at: int | None = None  # items to complete before `murmur.drained`
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.transcriber: LiveTranscriber | None = None  # made at the first audio

    def start(self) -> None:
        """Greet the client; `SessionError` (close 1003) when the server's model cannot take live audio."""
        if self.backend.sample_rate != RATE:
            model = self.backend.describe()
            raise SessionError(f"live audio needs a 16 kHz model such as whisper; this server runs {model}",
                               "unsupported_model", None, BAD_FORMAT)  # fmt: skip
        self.emit({"type": "transcription_session.created", "session": self._session()})

    def handle(self, event: Any) -> None:
        """One client event (a parsed JSON value)."""
        kind = event.get("type") if isinstance(event, dict) else None
        if kind in ("session.update", "transcription_session.update"):
            self._update(event.get("session") or {}, ga=kind == "session.update")
            self.emit({"type": kind.replace("update", "updated"), "session": self._session()})
        elif kind == "input_audio_buffer.append":
            self._append(event.get("audio"))
        elif kind == "input_audio_buffer.commit":
            self._commit()
        else:
            self.emit(SessionError(f"unknown event type {kind!r}", "unknown_event", "type").event())

    def poll(self) -> None:
        """Send `completed` for the items decoded since the last poll (in order), then `murmur.drained`."""
        with self._lock:
            waiting = self.transcriber.pending if self.transcriber is not None else 0
            done = self._submitted - waiting
            finished = self._items[: max(0, len(self._items) - waiting)]
            del self._items[: len(finished)]
            drained = self._drain_at is not None and done >= self._drain_at
            if drained:
                self._drain_at = None
        for item in finished:
            lines = [_line(li) for li in item.lines]
            self.emit({"type": "conversation.item.input_audio_transcription.completed", "item_id": item.id,
                       "content_index": 0, "transcript": " ".join(li["text"] for li in lines),
                       "lines": lines})  # fmt: skip
        if drained:
            self.emit({"type": "murmur.drained"})

    @property
    def busy(self) -> bool:
        """Lines are still owed to the client (speech committed and not completed, or a drain)."""
        with self._lock:
            return bool(self._items) or self._drain_at is not None

    def close(self) -> None:
        """Stop decoding (queued speech dropped) and free the audio."""
        if self.transcriber is not None:
            self.transcriber.close(wait=False)
        self._audio = np.zeros(0, np.float32)

    def _session(self) -> dict[str, Any]:
        return {"object": "realtime.transcription_session", "input_audio_format": "pcm16",
                "audio": {"input": {"format": {"type": "audio/pcm", "rate": self.rate}}},
                "input_audio_transcription": {"model": self.backend.describe(), "language": self.language},
                "turn_detection": {"type": "server_vad"},
                "murmur": {"speakers": self.live.speakers}}  # fmt: skip

    def _update(self, session: dict[str, Any], ga: bool) -> None:
        if ga:
            audio = (session.get("audio") or {}).get("input") or {}
            form, transcription = audio.get("format"), audio.get("transcription") or {}
            rate = form.get("rate", self.rate) if isinstance(form, dict) else self.rate
            kind = form.get("type", "audio/pcm") if isinstance(form, dict) else "audio/pcm"
            fmt, where = "session.audio.input.format", "session.audio.input.transcription"
        else:
            transcription = session.get("input_audio_transcription") or {}
            kind, rate = session.get("input_audio_format", "pcm16"), OPENAI_RATE  # beta: pcm16 is 24 kHz
            fmt, where = "session.input_audio_format", "session.input_audio_transcription"
        if kind not in ("pcm16", "audio/pcm"):
            raise SessionError(f"audio format {kind!r} is not supported; send PCM16", "unsupported_format",
                               fmt, BAD_FORMAT)  # fmt: skip
        if rate not in RATES:
            raise SessionError(f"a sample rate of {rate!r} Hz is not supported; use one of "
                               f"{', '.join(map(str, RATES))}", "unsupported_rate", f"{fmt}.rate",
                               BAD_FORMAT)  # fmt: skip
        if rate != self.rate and self._resampler is not None:
            raise SessionError("the sample rate cannot change once audio has been sent", "rate_locked",
                               f"{fmt}.rate", BAD_FORMAT)  # fmt: skip
        if session.get("turn_detection") not in (None, {"type": "server_vad"}):
            self.emit(SessionError("turn detection is always the server's voice activity detection",
                                   "unsupported_setting", "session.turn_detection").event())  # fmt: skip
        if transcription.get("prompt"):
            self.emit(SessionError("a prompt is not supported on live audio", "unsupported_setting",
                                   f"{where}.prompt").event())  # fmt: skip
        self.rate = int(rate)
        self._language(transcription.get("language"), f"{where}.language")
        self._speakers((session.get("murmur") or {}).get("speakers"))

    def _speakers(self, speakers: Any) -> None:
        if speakers is None or bool(speakers) == self.live.speakers:
            return
        if self.transcriber is not None:
            self.emit(SessionError("speakers cannot be turned on or off once speech has been heard",
                                   "unsupported_setting", "session.murmur.speakers").event())  # fmt: skip
            return
        self.live = replace(self.live, speakers=bool(speakers))

    def _language(self, language: Any, param: str) -> None:
        if not language or language == self.language:
            return
        variant = getattr(self.backend, "variant", None)
        try:
            if variant is None:
                raise ValueError(f"the {self.backend.name} backend takes no language")
            backend = variant(language=str(language))
        except ValueError as exc:
            self.emit(SessionError(str(exc), "unsupported_language", param).event())
            return
        self.language, self.backend = str(language), backend
        if self.transcriber is not None:
            self.transcriber.backend = self.live.decoder(backend)

    def _append(self, audio: Any) -> None:
        try:
            raw = base64.b64decode(audio if isinstance(audio, str) else "", validate=True)
        except (binascii.Error, ValueError) as exc:
            raise SessionError("`audio` must be base64 PCM16", "invalid_audio", "audio", BAD_PAYLOAD) from exc
        if len(raw) % 2:
            raise SessionError("PCM16 audio has an even number of bytes", "invalid_audio", "audio",
                               BAD_PAYLOAD)  # fmt: skip
        if self._resampler is None:  # the first audio: the settings are final, the models start loading
            self._resampler = StreamingResampler(self.rate, RATE)
            self._decoder()
        samples = np.frombuffer(raw, "<i2").astype(np.float32) / 32768.0
        self._take(self._resampler.push(samples))

    def _commit(self) -> None:
        if self._resampler is not None:
            self._take(self._resampler.flush())
            self._resampler = StreamingResampler(self.rate, RATE)  # the stream may go on after it
        heard = self._audio_from + len(self._audio)
        pad = -(heard - round(self.vad.seconds * RATE)) % FRAME  # to a whole frame, in the audio too
        self._take(np.zeros(pad, np.float32), closing=True)
        with self._lock:
            self._drain_at = self._submitted

    def _take(self, samples: np.ndarray, closing: bool = False) -> None:
        self._audio = np.concatenate([self._audio, samples])
        closed = self.vad.push(samples, self.live.may_cut(self.transcriber))
        closed += self.vad.flush() if closing else []
        for segment in closed:
            item = _Item(f"item_{next(self._ids)}", segment)
            self.emit({"type": "input_audio_buffer.committed", "item_id": item.id})
            with self._lock:  # `poll` reads the items, the count and the decoder's queue together
                self._items.append(item)
                self._submitted += 1
                self._decoder().submit(segment, self._slice(segment))
        if self.transcriber is not None and self.transcriber.backlog_seconds > MAX_BACKLOG_SECONDS:
            raise SessionError("the server is too far behind this stream", "behind", None, BEHIND)
        keep = closed[-1].end if closed else (self.vad.seconds - KEEP_SECONDS)
        if closed or not self.vad.in_speech:
            self._trim(round(keep * RATE))

    def _decoder(self) -> LiveTranscriber:
        if self.transcriber is None:
            decoder = self.live.decoder(self.backend)
            self.transcriber = LiveTranscriber(decoder, self._live_speakers(), self._on_line, self._on_error)
        return self.transcriber

    def _live_speakers(self) -> Any:
        """Provisional speakers when asked for, named from the server's voice library when it has one."""
        if not self.live.speakers:
            return None
        try:
            return live_speakers(self.voices, self._on_name)
        except VoiceLibraryError as exc:
            self.emit(SessionError(f"known voices are not named: {exc}", "voice_library", None).event())
            return live_speakers(None, self._on_name)

    def _on_name(self, speaker: str, match: Match | None) -> None:  # the decoder's thread
        self.emit({"type": "murmur.speaker.named", "speaker": speaker, "name": match and match.name,
                   "score": match and round(match.score, 4)})  # fmt: skip

    def _slice(self, segment: SpeechSegment) -> np.ndarray:
        a = max(0, round(segment.start * RATE) - self._audio_from)
        b = max(a, round(segment.end * RATE) - self._audio_from)
        return self._audio[a:b].copy()

    def _trim(self, upto: int) -> None:
        cut = min(max(0, upto - self._audio_from), len(self._audio))
        self._audio, self._audio_from = self._audio[cut:], self._audio_from + cut

    def _on_line(self, line: LiveLine) -> None:  # the decoder's thread
        with self._lock:
            item = next((i for i in self._items if i.segment is line.segment), None)
            if item is None:
                return
            first = not item.lines
            item.lines.append(line)
        text = line.utterance.text if first else f" {line.utterance.text}"
        self.emit({"type": "conversation.item.input_audio_transcription.delta", "item_id": item.id,
                   "content_index": 0, "delta": text})  # fmt: skip

    def _on_error(self, exc: Exception) -> None:  # the decoder's thread
        self.emit({"type": "error", "error": {"type": "server_error", "code": "transcription_failed",
                                              "message": str(exc), "param": None}})  # fmt: skip


def _line(line: LiveLine) -> dict[str, Any]:
    """One line of a `completed` event: text, absolute start and end, and its speaker when known."""
    u = line.utterance
    out: dict[str, Any] = {"start": round(u.start, 3), "end": round(u.end, 3), "text": u.text}
    if u.speaker is not None:
        out["speaker"] = u.speaker
    return out
