"""A loopback OpenAI-compatible chat-completions server with a VibeVoice checkpoint behind it
(the tiny trained one in the tests), to try `--engine server` without a GPU or a vLLM install.

It answers `POST /v1/chat/completions` in the VibeVoice vLLM plugin's protocol: the audio arrives
as an `audio_url` part holding a base64 WAV data URL, the instruction as a text part; the reply
is a chat completion whose message content is the model's raw reply. The model runs through the
backend's own in-process path (one request at a time). `faults` scripts the next answers: an
int is an HTTP error status to send instead, a float is a delay in seconds before answering
(cut short by `close()`, which then answers 503).
It listens on 127.0.0.1 (on `port`, or a free one), refuses bodies over 64 MB, and stops on
`close()` (leaving the `with` block) once the requests it is answering have their answers.

    python -m engine.testing.loopback_server MODEL [--port N]
serves MODEL (a checkpoint folder) until Ctrl-C and prints the URL to pass as `--server`.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import soundfile as sf

from engine.backends.vibevoice import VibeVoiceBackend, VibeVoiceConfig
from engine.types import Chunk, FinishReason, Recording

MAX_BODY = 64 * 2**20
DURATION = re.compile(r"This is a (\d+\.\d\d) seconds audio")


class TinyChatServer:
    def __init__(self, model: Path, faults: list[int | float] | None = None, port: int = 0) -> None:
        self.backend = VibeVoiceBackend(VibeVoiceConfig(model=str(model), device="cpu"))
        self.faults = list(faults or [])
        self.requests = 0
        self.in_flight = self.most_in_flight = 0
        self._model_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._closing = threading.Event()  # ends scripted delays at once
        self._http = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        # Request threads are joined on close: one still running the model when the process exits
        # would be stopped inside torch, which aborts the interpreter (a client that gave up, or
        # was cancelled, leaves its request running here).
        self._http.daemon_threads, self._http.block_on_close = False, True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def __enter__(self) -> TinyChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._http.shutdown()
        self._http.server_close()  # joins the request threads

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON reply) for one request body."""
        with self._count_lock:
            self.requests += 1
            fault = self.faults.pop(0) if self.faults else None
        if isinstance(fault, int):
            return fault, {"error": {"message": f"scripted failure {fault}"}}
        if isinstance(fault, float) and self._closing.wait(fault):
            return 503, {"error": {"message": "the server is closing"}}
        try:
            samples, text = _read_request(body)
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            return 400, {"error": {"message": f"bad request: {exc}"}}
        duration = len(samples) / 24000
        stated = DURATION.search(text)
        if stated is None or stated.group(1) != f"{duration:.2f}":
            return 400, {"error": {"message": "the instruction does not state the audio's duration"}}
        with self._model_lock:
            recording = Recording(samples, 24000)
            result = next(iter(self.backend.transcribe(recording, [Chunk(0, 0.0, duration)])))
        finish = "length" if result.finish_reason is FinishReason.LENGTH else "stop"
        stats = result.stats
        usage = {"prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.generated_tokens}
        return 200, {
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": result.raw_text},
                         "finish_reason": finish}],
            "usage": usage,
        }  # fmt: skip


def _read_request(body: dict[str, Any]) -> tuple[Any, str]:
    parts = body["messages"][-1]["content"]
    url = next(p["audio_url"]["url"] for p in parts if p["type"] == "audio_url")
    text = next(p["text"] for p in parts if p["type"] == "text")
    header, _, data = url.partition("base64,")
    if header != "data:audio/wav;":
        raise ValueError("expected a base64 WAV data URL")
    samples, rate = sf.read(io.BytesIO(base64.b64decode(data)), dtype="float32")
    if rate != 24000 or samples.ndim != 1:
        raise ValueError(f"expected 24 kHz mono audio, got {rate} Hz, shape {samples.shape}")
    return samples, text


def _handler(server: TinyChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            if self.path != "/v1/chat/completions" or not 0 < length <= MAX_BODY:
                self._send(404 if self.path != "/v1/chat/completions" else 413, {"error": {"message": "no"}})
                return
            body = json.loads(self.rfile.read(length))
            with server._count_lock:
                server.in_flight += 1
                server.most_in_flight = max(server.most_in_flight, server.in_flight)
            try:
                self._send(*server.answer(body))
            finally:
                with server._count_lock:
                    server.in_flight -= 1

        def _send(self, status: int, reply: dict[str, Any]) -> None:
            data = json.dumps(reply).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Handler


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m engine.testing.loopback_server")
    parser.add_argument("model", type=Path, help="a VibeVoice-ASR checkpoint folder (HF format)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args(argv)
    if not args.model.is_dir():
        print(f"error: {args.model} is not a checkpoint folder", file=sys.stderr)
        return 1
    with TinyChatServer(args.model, port=args.port) as server:
        print(f"serving {args.model} at {server.url} (Ctrl-C stops)", flush=True)
        print(f"transcribe with: --backend vibevoice --engine server --server {server.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
