"""`RemoteClient` reads a Murmur server's stream to its end when the final transcript says more
than the lines streamed: the server then sends the rest as one last text delta, shaped as
OpenAI's (text only, no lines), before the done event. The real `/v1/audio/transcriptions` app runs
on uvicorn in a thread; its job streams the first line only, then ends with the whole transcript."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.remote.client import RemoteClient
from engine.serve.app import create_app
from engine.serve.formats import verbose
from engine.serve.jobs import Job
from engine.types import Recording
from tests.engine.serve.test_openai_shapes import TRANSCRIPT, AppServer, InstantRegistry
from tests.engine.serve.test_realtime_route import running

pytest.importorskip("fastapi")


class FirstLineOnly(InstantRegistry):
    """Jobs that stream `TRANSCRIPT`'s first line, then end with all of it."""

    def _run(self, job: Job, path: Path) -> None:
        path.unlink(missing_ok=True)
        first = TRANSCRIPT.utterances[0]
        line = {"start": first.start, "end": first.end, "text": first.text, "chunk": 0,
                "chunk_speaker": first.speaker}  # fmt: skip
        job.emit({"type": "transcript.text.delta", "lines": [line]})
        job.transcript = TRANSCRIPT
        job.end("done", {"type": "transcript.text.done", "text": TRANSCRIPT.text, **verbose(TRANSCRIPT)})


def test_a_final_transcript_longer_than_the_streamed_lines_is_received_whole(tmp_path: Path) -> None:
    # catches: `event["lines"]` read from every text delta (a KeyError at the server's last one)
    (tmp_path / "server").mkdir()
    app = create_app(AppServer(folder=tmp_path / "server", registry=FirstLineOnly()))
    recording = Recording(np.zeros(16_000 * 2, dtype=np.float32), 16_000, tmp_path / "call.wav")
    partials: list[int] = []
    with running(app) as url:
        client = RemoteClient(url.replace("ws://", "http://").removesuffix("/v1/realtime"))
        got = client.transcribe(recording, lambda p: partials.append(len(p.partial.segments))
                                if p.partial is not None else None)  # fmt: skip
    assert [u.text for u in got.utterances] == [u.text for u in TRANSCRIPT.utterances]
    assert partials == [1]  # the streamed line was shown as it came; the last delta had none to show
