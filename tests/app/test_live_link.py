"""A recording's link to the engine's live stream, against real `murmur serve` subprocesses: an
engine that cannot take live audio is said once, in its own words; one that never starts is said
once and the audio stops being kept."""

from __future__ import annotations

import time

import numpy as np
from qt_helpers import wait_until

from app.recording.live_link import LiveLink
from engine.errors import ServerError
from engine.testing.tiny import tiny_trained_model
from tests.engine.serve.conftest import server
from tests.engine.serve.test_serve_vibevoice import FLAGS


def test_an_engine_that_cannot_take_live_audio_is_said_once_in_its_own_words():
    # catches: the server's reason followed by a second "closed the live stream" message, or the
    # reason lost (only a close code said)
    said: list[str] = []
    with server(*FLAGS, "--model", str(tiny_trained_model())) as served:
        link = LiveLink(lambda: (served.url, None), lambda line: None, said.append)
        link.start()
        link.send(np.zeros(1600, np.float32))
        wait_until(lambda: said, timeout=60)
        time.sleep(0.5)
        link.lost()  # what the recording's tick asks every 100 ms
        assert len(said) == 1 and "16 kHz model such as whisper" in said[0], said


def test_an_engine_that_will_not_start_is_said_once_and_audio_is_no_longer_kept():
    # catches: audio kept for a stream that will never open (memory grows for the whole recording)
    said: list[str] = []

    def refuse() -> tuple[str, str | None]:
        raise ServerError("the engine could not start: no model at /nowhere")

    link = LiveLink(refuse, lambda line: None, said.append)
    link.send(np.zeros(1600, np.float32))  # captured before the attempt
    link.start()
    wait_until(lambda: said, timeout=10)
    link.send(np.zeros(1600, np.float32))
    assert said == ["live lines cannot start: the engine could not start: no model at /nowhere"]
    assert link._unsent == [] and not link.connecting and link.finish(timeout=1) is False
