"""VibeVoice-ASR behind an OpenAI-compatible server (the VibeVoice vLLM plugin): chunks in, results out.

Murmur keeps VAD, chunking, speakers, stitching and exports; only decoding moves to the server.
Each chunk goes out as one `POST {server}/v1/chat/completions` in the plugin's own request format
(its `vllm_plugin/tests/test_api.py`): the system prompt, then a user turn holding the audio as an
`audio_url` part with a `data:audio/wav;base64,…` URL (24 kHz mono float32 WAV, so nothing is
requantised) and the same instruction text the local backend writes (duration, context terms);
greedy (`temperature` 0), `max_tokens` from the chunk's token budget, no streaming. The reply's
`choices[0].message.content` goes through the same salvage parser as local output, then through
the loop guard and the token budget (`engine.backends.vibevoice.reply_guard`); its
`finish_reason` "length" becomes `FinishReason.LENGTH`, and `usage` fills the token counts (odd
values count as 0). A chunk whose reply holds no text (`content: null`) or no segment the parser
can read is logged as a warning naming the chunk.

The server is not trusted: each request has one deadline, `server_timeout` seconds for the whole
exchange (not per read), and its reply may take at most `reply_cap(budget)` bytes; a larger
reply, JSON too deep to read, or a reply claiming more tokens than the budget fails the chunk
with one `ServerError` line. `check_reachable()` opens a connection before any work, so a server
that is down is reported before the audio is decoded.

Up to `concurrency` requests are in flight (the server batches them; with data parallelism its
replicas share them). A connection error, a timeout, or an HTTP 408/429/5xx answer is retried
up to `server_retries` times with a short exponential back-off; any other HTTP error, an
unreadable reply, or the last failed try raises `ServerError` naming the chunk and the cause.
`cancel` is checked five times a second: requests not yet sent are dropped, and those still out
are left to finish in daemon threads (nothing waits for them).
"""

from __future__ import annotations

import base64
import io
import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from engine.backends.base import check_cancel
from engine.backends.vibevoice.budget import token_budget
from engine.backends.vibevoice.config import SAMPLE_RATE, VibeVoiceConfig
from engine.backends.vibevoice.http_post import HTTPStatusError, ReplyTooLarge, post_json, reachable
from engine.backends.vibevoice.parsing import parse_reply
from engine.backends.vibevoice.prompt import SYSTEM_PROMPT, instruction
from engine.backends.vibevoice.reply_guard import count, guarded, over_budget, reply_cap
from engine.errors import ServerError
from engine.progress import format_clock
from engine.types import Chunk, ChunkResult, FinishReason, GenerationStats, Recording

RETRY_STATUS = (408, 429, 500, 502, 503, 504)
REACH_TIMEOUT_S = 5.0
Post = Callable[[str, bytes, float, int], dict[str, Any]]  # (url, JSON body, deadline, byte cap) → JSON
log = logging.getLogger(__name__)


class _Retryable(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def wav_data_url(samples: np.ndarray, rate: int = SAMPLE_RATE) -> str:
    """`samples` ((T,) float32) as a base64 WAV data URL, the plugin's audio input."""
    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, np.asarray(samples, dtype=np.float32), rate, format="WAV", subtype="FLOAT")
    return "data:audio/wav;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def chat_request(samples: np.ndarray, config: VibeVoiceConfig) -> dict[str, Any]:
    """The chat-completions body for one chunk (see the module docstring)."""
    duration = len(samples) / SAMPLE_RATE
    return {
        "model": config.server_model,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {
                "role": "user",
                "content": [
                    {"type": "audio_url", "audio_url": {"url": wav_data_url(samples)}},
                    {"type": "text", "text": instruction(duration, config.context_text)},
                ],
            },
        ],
        "max_tokens": token_budget(duration, config),
        "temperature": 0.0,
        "top_p": 1.0,
        "stream": False,
    }


class ServerClient:
    def __init__(self, config: VibeVoiceConfig, post: Post | None = None, backoff: float = 0.5) -> None:
        if config.server is None:
            raise ValueError("a server client needs the server's URL")
        self.config = config
        self.url = config.server.rstrip("/") + "/v1/chat/completions"
        self._post = post or post_json
        self._backoff = backoff

    def check_reachable(self) -> None:
        """Raise `ServerError` at once when no connection to the server opens."""
        why = reachable(self.config.server or "", min(REACH_TIMEOUT_S, self.config.server_timeout))
        if why is not None:
            raise ServerError(f"cannot reach the VibeVoice server at {self.config.server} ({why})")

    def transcribe(
        self, recording: Recording, chunks: Sequence[Chunk], cancel: threading.Event | None = None
    ) -> Iterator[ChunkResult]:
        """One result per chunk, as replies arrive (see the module docstring)."""
        yield from self.transcribe_pieces([(recording, c) for c in chunks], cancel)

    def transcribe_pieces(
        self, pieces: Sequence[tuple[Recording, Chunk]], cancel: threading.Event | None = None
    ) -> Iterator[ChunkResult]:
        """Chunks of one or more recordings, `concurrency` requests at a time."""
        if any(r.sample_rate != SAMPLE_RATE for r, _ in pieces):
            raise ValueError(f"VibeVoice-ASR needs {SAMPLE_RATE} Hz audio")
        waiting = iter(pieces)
        replies: queue.Queue[ChunkResult | BaseException] = queue.Queue()
        running = 0
        while True:
            check_cancel(cancel)
            while running < self.config.concurrency and (piece := next(waiting, None)):
                # daemon threads: a cancelled run exits without waiting for requests still out
                threading.Thread(target=self._answer, args=(*piece, replies), daemon=True).start()
                running += 1
            if not running:
                return
            try:
                reply = replies.get(timeout=0.2)
            except queue.Empty:
                continue
            running -= 1
            if isinstance(reply, BaseException):
                raise reply
            yield reply

    def _answer(self, recording: Recording, chunk: Chunk, replies: queue.Queue[Any]) -> None:
        try:
            replies.put(self.chunk_result(recording, chunk))
        except BaseException as exc:  # handed to the consuming thread, which raises it
            replies.put(exc)

    def chunk_result(self, recording: Recording, chunk: Chunk) -> ChunkResult:
        samples = recording.slice(chunk.start, chunk.end)
        if len(samples) == 0:
            return ChunkResult(chunk=chunk, segments=())
        started = time.perf_counter()
        request = chat_request(samples, self.config)
        budget = request["max_tokens"]
        reply, retries = self._ask(json.dumps(request).encode("utf-8"), chunk, reply_cap(budget))
        text, finish, usage = _read_reply(reply, chunk)
        stats = GenerationStats(
            prompt_tokens=count(usage.get("prompt_tokens")),
            generated_tokens=count(usage.get("completion_tokens")),
            decode_seconds=time.perf_counter() - started,
            retries=retries,
        )
        if over_budget(stats.generated_tokens, budget):
            raise ServerError(
                f"the server's reply for the chunk at {_span(chunk)} claims {stats.generated_tokens} tokens, "
                f"more than the {budget} it was allowed; it was refused"
            )
        segments, cut = guarded(parse_reply(text, chunk.duration), budget)
        _warn_if_empty(text, segments, chunk)
        if cut is not None:
            log.warning("the server's reply for the chunk at %s was cut (%s)", _span(chunk), cut.value)
        return ChunkResult(chunk, segments, cut or finish, stats, text)

    def _ask(self, body: bytes, chunk: Chunk, cap: int) -> tuple[dict[str, Any], int]:
        tries = self.config.server_retries + 1
        for attempt in range(tries):
            try:
                return self._once(body, chunk, cap), attempt
            except _Retryable as exc:
                if attempt + 1 == tries:
                    raise ServerError(
                        f"the server at {self.config.server} failed on the chunk at "
                        f"{chunk.start:.1f} s after {tries} tries: {exc.reason}"
                    ) from None
                time.sleep(self._backoff * 2**attempt)
        raise AssertionError("unreachable")

    def _once(self, body: bytes, chunk: Chunk, cap: int) -> dict[str, Any]:
        where = f"the server at {self.config.server}"
        try:
            return self._post(self.url, body, self.config.server_timeout, cap)
        except HTTPStatusError as exc:
            detail = _error_detail(exc.body)
            if exc.code in RETRY_STATUS:
                raise _Retryable(f"HTTP {exc.code} {detail}") from None
            raise ServerError(f"{where} refused a chunk: HTTP {exc.code} {detail}") from None
        except TimeoutError:
            raise _Retryable(f"no answer within {self.config.server_timeout:g} s") from None
        except ReplyTooLarge:
            raise ServerError(
                f"{where} sent more than {cap:,} bytes for the chunk at {_span(chunk)}, far more than its "
                "token budget needs; the reply was refused"
            ) from None
        except OSError as exc:
            raise _Retryable(f"cannot reach it ({exc.strerror or exc})") from None
        except ValueError as exc:
            raise ServerError(
                f"{where} sent a reply for the chunk at {_span(chunk)} that is unusable: {exc}"
            ) from None


def _read_reply(reply: dict[str, Any], chunk: Chunk) -> tuple[str, FinishReason, dict[str, Any]]:
    try:
        choice = reply["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ServerError(f"the server's reply for the chunk at {chunk.start:.1f} s has no message") from exc
    finish = FinishReason.LENGTH if choice.get("finish_reason") == "length" else FinishReason.EOS
    usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
    return (content if isinstance(content, str) else ""), finish, usage


def _warn_if_empty(text: str, segments: Sequence[Any], chunk: Chunk) -> None:
    if not text.strip():
        log.warning(
            "the server's reply for the chunk at %s holds no text; nothing was transcribed there",
            _span(chunk),
        )
    elif not segments or all("unparsed" in s.flags for s in segments):
        log.warning(
            "the server's reply for the chunk at %s is not the model's segment list; %s",
            _span(chunk), "its text is kept as one segment" if segments else "nothing was transcribed there",
        )  # fmt: skip


def _span(chunk: Chunk) -> str:
    return f"{format_clock(chunk.start)}–{format_clock(chunk.end)}"


def _error_detail(body: bytes) -> str:
    text = body.decode("utf-8", "replace")
    try:
        message = json.loads(text).get("error", {})
        return str(message.get("message", message) if isinstance(message, dict) else message)[:300]
    except (ValueError, AttributeError, RecursionError):
        return text.strip()[:300]
