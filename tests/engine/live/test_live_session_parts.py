"""A live session's segments, the audio each one hands the decoder, its status and its failures.

The demo's first 12 s are played through `FileSource` (the microphone's capture path) many times
faster than real time; the decoders are scripted backends that note what they were handed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.errors import RecordingError
from engine.live.online_speakers import OnlineSpeakers
from engine.live.session import LiveConfig, LiveSession
from engine.live.sources import FileSource
from engine.types import ChunkResult, Segment, SpeechSegment
from tests.engine.live.conftest import write_clip

RATE = 16000
QUIET = LiveConfig(speakers=False)  # no speaker encoder: these tests are about segments and lines


class NotingDecoder:
    """Says "words" for every segment and keeps the audio it was handed."""

    sample_rate = RATE

    def __init__(self, beam_size: int = 5) -> None:
        self.beam_size = beam_size
        self.heard: list[np.ndarray] = []
        self.go = threading.Event()
        self.go.set()

    def transcribe(self, recording, chunks, cancel=None) -> Iterator[ChunkResult]:
        self.go.wait(10)
        self.heard.append(recording.samples)
        yield ChunkResult(chunks[0], (Segment(0.0, 0.5, "words"),))


class VariantDecoder(NotingDecoder):
    """A backend with `variant()`, as whisper has: the same model with other decoding options."""

    def variant(self, beam_size: int) -> VariantDecoder:
        return VariantDecoder(beam_size)


def play(session: LiveSession) -> Path:
    session.start()
    assert session.capture.ended.wait(30)
    return session.stop()


@pytest.fixture
def clip(tmp_path: Path) -> Path:
    return write_clip(tmp_path / "clip.flac", 0.0, 12.0)


def test_every_segment_reaches_the_decoder_with_exactly_its_own_audio(clip: Path, tmp_path: Path) -> None:
    decoder, seen, heard_live = NotingDecoder(), [], []
    session = LiveSession(FileSource(clip, speed=30), tmp_path / "r.flac", decoder, QUIET,
                          on_segment=seen.append, on_audio=heard_live.append)  # fmt: skip
    path = play(session)
    assert session.stop() == path  # a second stop queues nothing more
    assert session.finish(timeout=30)
    recorded, _ = sf.read(clip, dtype="float32")
    assert len(session.segments) >= 3 and seen == session.segments
    assert len(decoder.heard) == len(session.segments)
    for segment, heard in zip(session.segments, decoder.heard, strict=True):
        assert np.array_equal(heard, recorded[round(segment.start * RATE) : round(segment.end * RATE)])
    assert np.array_equal(np.concatenate(heard_live), recorded)  # the waveform view sees all of it
    status = session.status()
    assert (status.seconds, status.backlog_seconds, status.behind_seconds) == (12.0, 0.0, 0.0)
    assert (status.lines, status.loading, status.paused) == (len(session.segments), False, False)
    assert status.level > 0.0


def test_without_a_decoder_a_session_records_and_times_segments_and_shows_no_lag(clip, tmp_path) -> None:
    seen: list[SpeechSegment] = []
    session = LiveSession(FileSource(clip, speed=30), tmp_path / "r.flac", on_segment=seen.append)
    path = play(session)
    assert session.finish(timeout=0) and session.transcriber is None
    assert len(seen) >= 3 and seen == session.segments and sf.info(path).duration == 12.0
    status = session.status()
    shown = (status.behind_seconds, status.backlog_seconds, status.lines, status.loading)
    assert shown == (0.0, 0.0, 0, False)


def test_live_lines_decode_greedily_on_a_variant_of_the_backend_unless_told_not_to(tmp_path: Path) -> None:
    def live_backend(backend, **config):
        session = LiveSession(FileSource(write_clip(tmp_path / "c.wav", 0.0, 1.0)), tmp_path / "r.flac",
                              backend, LiveConfig(speakers=False, **config))  # fmt: skip
        assert session.transcriber is not None
        session.finish(timeout=10)
        return session.transcriber.backend

    given = VariantDecoder()
    assert live_backend(given).beam_size == 1 and given.beam_size == 5
    assert live_backend(given, greedy=False) is given
    plain = NotingDecoder()
    assert live_backend(plain) is plain  # a backend without variants decodes as it is


def test_speakers_are_labelled_unless_switched_off(tmp_path: Path) -> None:
    source = FileSource(write_clip(tmp_path / "c.wav", 0.0, 1.0))
    labelled = LiveSession(source, tmp_path / "a.flac", NotingDecoder())
    plain = LiveSession(source, tmp_path / "b.flac", NotingDecoder(), LiveConfig(speakers=False))
    for session in (labelled, plain):
        session.finish(timeout=30)
    assert isinstance(labelled.transcriber.speakers, OnlineSpeakers) and plain.transcriber.speakers is None


def test_the_status_says_loading_until_the_models_are_in_and_paused_while_paused(clip, tmp_path) -> None:
    class SlowLoad(NotingDecoder):
        def load(self) -> None:
            self.go.wait(10)

    decoder = SlowLoad()
    decoder.go.clear()
    session = LiveSession(FileSource(clip, speed=2), tmp_path / "r.flac", decoder, LiveConfig(speakers=False))
    session.start()
    assert session.status().loading
    session.pause()
    assert session.status().paused
    session.resume()
    assert not session.status().paused
    decoder.go.set()
    session.stop()
    assert session.finish(timeout=30) and not session.status().loading


class FailingSource:
    """Delivers half a second of a tone, then fails as an unplugged device does."""

    name, sample_rate, channels = "failing device", RATE, 1

    def start(self, deliver, fail) -> None:
        def run() -> None:
            for _ in range(5):
                deliver(np.full(RATE // 10, 0.5, np.float32))
            fail(RecordingError("the input device stopped (unplugged?)"))

        threading.Thread(target=run, daemon=True).start()

    def stop(self) -> None:
        pass


def test_a_device_failing_mid_recording_is_reported_and_the_audio_before_it_kept(tmp_path: Path) -> None:
    errors: list[Exception] = []
    session = LiveSession(FailingSource(), tmp_path / "r.flac", NotingDecoder(), LiveConfig(speakers=False),
                          on_error=errors.append)  # fmt: skip
    path = play(session)
    assert session.finish(timeout=10)
    assert len(errors) == 1 and errors[0] is session.error and "unplugged" in str(errors[0])
    assert sf.info(path).frames == RATE // 2


class DeadDevice(FailingSource):
    def start(self, deliver, fail) -> None:
        raise RecordingError("the input device will not open")


def test_a_device_that_will_not_open_is_raised_and_stops_the_live_transcriber(tmp_path: Path) -> None:
    session = LiveSession(DeadDevice(), tmp_path / "r.flac", NotingDecoder(), LiveConfig(speakers=False))
    with pytest.raises(RecordingError, match="will not open"):
        session.start()
    workers = [t for t in threading.enumerate() if t is session.transcriber._thread]
    assert workers == [] or not workers[0].is_alive()
    assert not (tmp_path / "r.flac").exists()


@pytest.mark.parametrize("longest", [0.5, 1.0])
def test_a_longest_segment_of_a_second_or_less_is_refused(longest: float) -> None:
    with pytest.raises(ValueError, match="must exceed 1 s"):
        LiveConfig(max_segment_seconds=longest, cut_after_seconds=None)


@pytest.mark.parametrize("cut", [0.0, -1.0, 20.0, 25.0])
def test_a_cut_bound_outside_the_longest_segment_is_refused_naming_the_range(cut: float) -> None:
    with pytest.raises(ValueError, match=rf"cut at a pause after \(0, 20.0\) s, got {cut}"):
        LiveConfig(max_segment_seconds=20.0, cut_after_seconds=cut)


def test_bounds_just_inside_the_limits_are_taken() -> None:
    assert LiveConfig(max_segment_seconds=1.01, cut_after_seconds=1.0).cut_after_seconds == 1.0
    assert LiveConfig(max_segment_seconds=20.0, cut_after_seconds=0.01).max_segment_seconds == 20.0
    assert LiveConfig(cut_after_seconds=None).cut_after_seconds is None


@pytest.mark.parametrize("busy", [False, True])
def test_a_turn_running_into_the_next_is_cut_only_while_the_decoder_is_free(busy, tmp_path) -> None:
    # 36-52 s of the demo: the turn ending at 43.50 runs into the next (43.77) with 0.27 s of
    # silence, too short to close a segment; a decoder with spare time gets it cut there
    clip = write_clip(tmp_path / "clip.wav", 36.0, 52.0)
    decoder = NotingDecoder()
    if busy:
        decoder.go.clear()  # the first segment is still being decoded when the turn ends
    session = LiveSession(FileSource(clip, speed=30), tmp_path / "r.flac", decoder, QUIET)
    play(session)
    decoder.go.set()
    assert session.finish(timeout=30)
    turn_end = 43.50 - 36.0
    (end,) = [s.end for s in session.segments if s.start <= turn_end <= s.end + 0.3]
    assert end > turn_end + 5 if busy else end == pytest.approx(turn_end, abs=0.3)
