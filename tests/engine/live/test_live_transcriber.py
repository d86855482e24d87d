"""The live transcriber's lines, speakers, failures and shutdown, with decoders that answer at once.

Each decoder here is a scripted backend (the transcriber is what is under test): it says what a
segment holds, comes back with an error, or waits for the test, and notes what it was handed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engine.errors import ModelLoadError
from engine.live.online_speakers import OnlineSpeakers
from engine.live.transcriber import LiveLine, LiveTranscriber
from engine.types import Chunk, ChunkResult, Segment, SpeechSegment, Utterance, Word

RATE = 16000


def audio(seconds: float, value: float = 0.0) -> np.ndarray:
    return np.full(round(seconds * RATE), value, np.float32)


class ScriptedDecoder:
    """Says "hello" and "world" in every segment (times relative to the segment, as a backend
    does), with a blank segment between them; notes each recording and chunk it was given."""

    sample_rate = RATE

    def __init__(self) -> None:
        self.calls: list[tuple[np.ndarray, int, list[Chunk]]] = []
        self.cancels: list[threading.Event | None] = []

    def transcribe(self, recording, chunks, cancel=None) -> Iterator[ChunkResult]:
        self.calls.append((recording.samples, recording.sample_rate, list(chunks)))
        self.cancels.append(cancel)
        end = len(recording.samples) / RATE
        hello = Segment(0.1, 0.5, " hello ", words=(Word(0.1, 0.3, "hello", 0.9),))
        blank = Segment(0.5, 0.6, "  ")
        world = Segment(0.6, end, "world", words=(Word(0.6, end, "world"),))
        yield ChunkResult(chunks[0], (hello, blank, world))


class Lines:
    """Collects lines and errors as the transcriber reports them (from its worker thread)."""

    def __init__(self) -> None:
        self.lines: list[LiveLine] = []
        self.errors: list[Exception] = []

    def transcriber(self, backend, speakers: OnlineSpeakers | None = None) -> LiveTranscriber:
        return LiveTranscriber(backend, speakers, self.lines.append, self.errors.append)


def test_each_segment_gives_its_spoken_lines_at_recording_times_with_their_words() -> None:
    out, decoder = Lines(), ScriptedDecoder()
    t = out.transcriber(decoder)
    segment, samples = SpeechSegment(10.0, 12.0), audio(2.0, 0.25)
    before = time.monotonic()
    t.submit(segment, samples)
    assert t.drain(timeout=10)
    t.close()
    assert [ln.utterance for ln in out.lines] == [
        Utterance(10.1, 10.5, "hello", None, (Word(10.1, 10.3, "hello", 0.9),)),
        Utterance(10.6, 12.0, "world", None, (Word(10.6, 12.0, "world"),)),
    ]
    assert all(ln.segment == segment and before <= ln.ready_at <= time.monotonic() for ln in out.lines)
    assert (t.lines_done, t.segments_done, out.errors) == (2, 1, [])
    # the segment's own audio, as one chunk over all of it, at 16 kHz
    (given, rate, chunks), = decoder.calls
    assert rate == RATE and np.array_equal(given, samples)
    assert chunks == [Chunk(0, 0.0, 2.0, (SpeechSegment(0.0, 2.0),))]


class SilentDecoder:
    """Hears nothing but blanks."""

    sample_rate = RATE

    def transcribe(self, recording, chunks, cancel=None) -> Iterator[ChunkResult]:
        yield ChunkResult(chunks[0], (Segment(0.0, 1.0, " "),))


def test_a_segment_without_words_gives_no_line_and_the_next_one_still_comes() -> None:
    out = Lines()
    t = out.transcriber(SilentDecoder())
    t.submit(SpeechSegment(1.0, 2.0), audio(1.0))
    t.submit(SpeechSegment(3.0, 4.0), audio(1.0))
    assert t.drain(timeout=10)
    t.close()
    assert (out.lines, out.errors, t.segments_done, t.pending) == ([], [], 2, 0)


class FlakyDecoder(ScriptedDecoder):
    """Fails on the segments it is told to (by their first sample), the way it is told to."""

    def __init__(self, failures: dict[float, Exception]) -> None:
        super().__init__()
        self.failures = failures

    def transcribe(self, recording, chunks, cancel=None) -> Iterator[ChunkResult]:
        failure = self.failures.get(float(recording.samples[0]))
        if failure is not None:
            self.calls.append((recording.samples, recording.sample_rate, list(chunks)))
            raise failure
        yield from super().transcribe(recording, chunks, cancel)


def test_a_segment_the_decoder_fails_on_is_reported_and_the_next_still_gets_its_lines() -> None:
    out = Lines()
    broken = RuntimeError("a bad segment")
    t = out.transcriber(FlakyDecoder({1.0: broken}))
    t.submit(SpeechSegment(0.0, 1.0), audio(1.0, 1.0))
    t.submit(SpeechSegment(5.0, 6.0), audio(1.0, 0.5))
    assert t.drain(timeout=10)
    t.close()
    assert out.errors == [broken] and t.failed is None
    assert [ln.utterance.start for ln in out.lines] == [5.1, 5.6]
    assert (t.segments_done, t.lines_done) == (1, 2)


def test_a_line_its_reader_cannot_take_is_reported_and_the_transcriber_still_drains() -> None:
    # catches: an exception from `on_line` (a print into a closed pipe: `murmur record --live | head`)
    # ending the worker thread, so that `drain()` never returned and `murmur record --live` hung
    errors: list[Exception] = []
    closed = BrokenPipeError(32, "Broken pipe")

    def unreadable(line: LiveLine) -> None:
        raise closed

    t = LiveTranscriber(ScriptedDecoder(), None, unreadable, errors.append)
    t.submit(SpeechSegment(0.0, 1.0), audio(1.0, 1.0))
    t.submit(SpeechSegment(5.0, 6.0), audio(1.0, 0.5))
    assert t.drain(timeout=10)
    t.close()
    assert errors == [closed] * 4 and (t.segments_done, t.lines_done) == (2, 4)  # each line said


def test_a_model_that_fails_to_load_mid_recording_is_reported_once_and_live_lines_stop() -> None:
    out = Lines()
    gone = ModelLoadError("the model files are gone")
    decoder = FlakyDecoder({1.0: gone})
    t = out.transcriber(decoder)
    t.submit(SpeechSegment(0.0, 1.0), audio(1.0, 1.0))
    t.submit(SpeechSegment(5.0, 6.0), audio(1.0, 0.5))
    assert t.drain(timeout=10)  # the queue still empties: the lag a user sees goes back to 0
    t.close()
    assert out.errors == [gone] and t.failed is gone
    assert out.lines == [] and len(decoder.calls) == 1 and t.behind_seconds(100.0) == 0.0


class LoadingDecoder(ScriptedDecoder):
    """Has a `load()` that waits for the test, then fails or not; notes the order of events."""

    def __init__(self, error: Exception | None = None) -> None:
        super().__init__()
        self.error, self.go, self.events = error, threading.Event(), []

    def load(self) -> None:
        self.go.wait(10)
        self.events.append("load")
        if self.error is not None:
            raise self.error

    def transcribe(self, recording, chunks, cancel=None) -> Iterator[ChunkResult]:
        self.events.append("transcribe")
        yield from super().transcribe(recording, chunks, cancel)


def test_the_model_loads_before_the_first_segment_and_ready_says_when() -> None:
    out, decoder = Lines(), LoadingDecoder()
    t = out.transcriber(decoder)
    t.submit(SpeechSegment(0.0, 1.0), audio(1.0))
    time.sleep(0.2)
    assert not t.ready and out.lines == []  # a view shows "loading models"
    decoder.go.set()
    assert t.drain(timeout=10)
    t.close()
    assert t.ready and decoder.events == ["load", "transcribe"] and len(out.lines) == 2


def test_a_model_that_will_not_load_is_reported_once_and_no_segment_is_decoded() -> None:
    out = Lines()
    missing = ModelLoadError("no model here")
    decoder = LoadingDecoder(missing)
    decoder.go.set()
    t = out.transcriber(decoder)
    t.submit(SpeechSegment(0.0, 1.0), audio(1.0))
    t.submit(SpeechSegment(2.0, 3.0), audio(1.0))
    assert t.drain(timeout=10)
    t.close()
    assert out.errors == [missing] and t.failed is missing and t.ready
    assert decoder.events == ["load"] and out.lines == [] and t.segments_done == 0


class ToneEncoder:
    """A speaker encoder that hears the segment's first sample as the voice (0.25 and 0.75 are two
    people); it cannot embed before `load()` has returned, and loads when the test says."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error, self.go, self.loaded = error, threading.Event(), False

    def load(self) -> None:
        self.go.wait(10)
        if self.error is not None:
            raise self.error
        self.loaded = True

    def embed_audio(self, samples: np.ndarray) -> np.ndarray:
        if not self.loaded:
            raise RuntimeError("the encoder was used before it loaded")
        vector = np.zeros(256, np.float32)
        vector[int(samples[0] * 4)] = 1.0
        return vector


def test_lines_carry_the_speaker_of_their_segment_once_the_encoder_has_loaded() -> None:
    out, encoder = Lines(), ToneEncoder()
    t = out.transcriber(ScriptedDecoder(), OnlineSpeakers(encoder))
    for start, voice in [(0.0, 0.25), (3.0, 0.75), (6.0, 0.25)]:
        t.submit(SpeechSegment(start, start + 2.0), audio(2.0, voice))
    time.sleep(0.2)
    assert not t.ready and out.lines == []  # no line goes out without its speaker
    encoder.go.set()
    assert t.drain(timeout=10)
    t.close()
    assert out.errors == [] and t.ready
    assert [ln.utterance.speaker for ln in out.lines] == ["S1", "S1", "S2", "S2", "S1", "S1"]


def test_an_encoder_that_will_not_load_is_reported_and_lines_come_without_speakers() -> None:
    out = Lines()
    broken = OSError("no encoder weights")
    encoder = ToneEncoder(broken)
    encoder.go.set()
    t = out.transcriber(ScriptedDecoder(), OnlineSpeakers(encoder))
    t.submit(SpeechSegment(0.0, 2.0), audio(2.0, 0.25))
    assert t.drain(timeout=10)
    t.close()
    assert out.errors == [broken] and t.speakers is None and t.ready
    assert [ln.utterance.speaker for ln in out.lines] == [None, None]


def test_a_backend_at_another_rate_is_refused_naming_both_rates() -> None:
    class Rate24k(ScriptedDecoder):
        sample_rate = 24000

    with pytest.raises(ValueError, match="needs a 16000 Hz backend, not 24000"):
        LiveTranscriber(Rate24k(), None, lambda line: None)


class HeldDecoder(ScriptedDecoder):
    """Holds each segment until the test lets one go."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Semaphore(0)
        self.started = threading.Event()

    def transcribe(self, recording, chunks, cancel=None) -> Iterator[ChunkResult]:
        self.held_with = cancel
        self.started.set()
        if not self.go.acquire(timeout=10):
            raise TimeoutError("the test did not let the segment go")
        yield from super().transcribe(recording, chunks, cancel)


def test_the_backlog_counts_the_speech_still_waiting_for_its_lines() -> None:
    out, decoder = Lines(), HeldDecoder()
    t = out.transcriber(decoder)
    assert (t.backlog_seconds, t.pending) == (0.0, 0)
    t.submit(SpeechSegment(1.0, 2.0), audio(1.0))
    t.submit(SpeechSegment(3.0, 6.0), audio(3.0))
    assert (t.backlog_seconds, t.pending) == (pytest.approx(4.0), 2)
    assert decoder.started.wait(10)
    decoder.go.release()  # the first is decoded: only the second waits
    deadline = time.monotonic() + 10
    while t.pending == 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (t.backlog_seconds, t.pending) == (pytest.approx(3.0), 1)
    assert t.behind_seconds(7.0) == pytest.approx(1.0)  # now from the end of the second turn
    assert t.behind_seconds(5.0) == 0.0  # a clock before the turn's end is not "behind"
    assert not t.drain(timeout=0.1)  # the second segment is still held
    decoder.go.release()
    assert t.drain(timeout=10)
    t.close()
    assert (t.backlog_seconds, t.pending, len(out.lines)) == (0.0, 0, 4)


def test_closing_without_waiting_stops_after_the_segment_being_decoded() -> None:
    out, decoder = Lines(), HeldDecoder()
    t = out.transcriber(decoder)
    for start in (0.0, 2.0, 4.0):
        t.submit(SpeechSegment(start, start + 1.0), audio(1.0))
    assert decoder.started.wait(10)
    closing = threading.Thread(target=t.close, kwargs={"wait": False})
    closing.start()
    deadline = time.monotonic() + 10
    while not decoder.held_with.is_set() and time.monotonic() < deadline:
        time.sleep(0.01)  # the close has asked the decode in progress to stop
    decoder.go.release()
    closing.join(10)
    assert not closing.is_alive() and len(decoder.calls) == 1
    assert decoder.cancels[0] is not None and decoder.cancels[0].is_set()  # the decode was told to stop
    assert t.pending == 0 and t.drain(timeout=0)


def test_closing_and_waiting_decodes_every_segment_first() -> None:
    out, decoder = Lines(), ScriptedDecoder()
    t = out.transcriber(decoder)
    for start in (0.0, 2.0, 4.0):
        t.submit(SpeechSegment(start, start + 1.0), audio(1.0))
    t.close()
    assert len(decoder.calls) == 3 and len(out.lines) == 6
    assert decoder.cancels[0] is not None and not decoder.cancels[0].is_set()


class TimedDecoder(ScriptedDecoder):
    """Takes 0.2 s over each segment."""

    def transcribe(self, recording, chunks, cancel=None) -> Iterator[ChunkResult]:
        time.sleep(0.2)
        yield from super().transcribe(recording, chunks, cancel)


def test_a_decode_is_timed_from_its_start_to_its_end() -> None:
    t = Lines().transcriber(TimedDecoder())
    before = time.monotonic()
    t.submit(SpeechSegment(0.0, 1.0), audio(1.0))
    assert t.drain(timeout=10)
    after = time.monotonic()
    t.close()
    took = t.last_decode_seconds
    assert 0.2 <= took <= after - before  # the decode's own time, not a clock reading
    assert t.has_spare_time(t.free_since + took) and not t.has_spare_time(t.free_since + took / 4)


STUCK_AT_EXIT = """
import threading, numpy as np
from engine.live.online_speakers import OnlineSpeakers
from engine.live.transcriber import LiveTranscriber
from engine.types import SpeechSegment

class Stuck:
    sample_rate = 16000
    def load(self): threading.Event().wait()  # a model load that never ends
    def transcribe(self, recording, chunks, cancel=None): threading.Event().wait()

loading = threading.Event()

class StuckEncoder:
    def load(self): loading.set(); threading.Event().wait()
    def embed_audio(self, samples): return None

t = LiveTranscriber(Stuck(), OnlineSpeakers(StuckEncoder()), print)
t.submit(SpeechSegment(0.0, 1.0), np.zeros(16000, np.float32))
loading.wait(30)
print("leaving", flush=True)
"""


def test_a_program_leaving_while_models_load_is_not_held_by_the_live_transcriber() -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", STUCK_AT_EXIT], capture_output=True, text=True, env=env,
                          cwd=root, timeout=30)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "leaving\n"), done.stderr


def test_the_worker_and_the_encoders_loader_are_daemon_threads() -> None:
    # the same property as above, seen in process (mutation runs map tests by what runs in process)
    release = threading.Event()

    class Held(ScriptedDecoder):
        def load(self) -> None:
            release.wait(10)

    encoder = ToneEncoder()
    before = set(threading.enumerate())
    t = Lines().transcriber(Held(), OnlineSpeakers(encoder))
    deadline = time.monotonic() + 10
    while len(set(threading.enumerate()) - before) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = set(threading.enumerate()) - before
    release.set()
    encoder.go.set()
    t.close()
    assert len(started) == 2 and all(thread.daemon for thread in started)
