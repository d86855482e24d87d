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

from engine.audio.vad import VadConfig
from engine.errors import RecordingError
from engine.live.online_speakers import OnlineSpeakers
from engine.live.session import LiveConfig, LiveSession
from engine.live.sources import FileSource
from engine.live.vad_stream import StreamingVad
from engine.speakers.embedding import SpeakerEncoder
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
    return write_clip(tmp_path / "clip.flac", 1.0, 13.0)  # it starts mid-sentence: a segment from 0 s


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
    assert isinstance(labelled.transcriber.speakers.encoder, SpeakerEncoder)


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
    with pytest.raises(ValueError) as refused:
        LiveConfig(max_segment_seconds=longest, cut_after_seconds=None)
    assert str(refused.value) == "the longest live segment must exceed 1 s"


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
    recorded, _ = sf.read(clip, dtype="float32")  # the piece after a cut starts inside the pause
    for segment, heard in zip(session.segments, decoder.heard, strict=True):
        assert np.array_equal(heard, recorded[round(segment.start * RATE) : round(segment.end * RATE)])


@pytest.mark.parametrize("cut", [None, 2.0])
def test_the_segments_are_the_ones_the_configured_voice_detector_gives(cut, clip, tmp_path) -> None:
    # 1.5 s of silence to close a segment (the default 0.3 s would close more), 6 s at most (not 15)
    config = LiveConfig(vad=VadConfig(min_silence_ms=1500), max_segment_seconds=6.0, cut_after_seconds=cut,
                        speakers=False)  # fmt: skip
    session = LiveSession(FileSource(clip, speed=30), tmp_path / "r.flac", config=config)
    play(session)
    recorded, _ = sf.read(clip, dtype="float32")
    vad, expected = StreamingVad(config.vad, 6.0, cut_after=cut), []
    for at in range(0, len(recorded), RATE // 10):  # the same 100 ms blocks; no decoder: cuts allowed
        expected += vad.push(recorded[at : at + RATE // 10], may_cut=True)
    assert session.segments == expected + vad.flush()
    assert len(session.segments) >= 2 and max(s.duration for s in session.segments) <= 6.0


def test_audio_at_another_rate_reaches_the_view_at_16_khz_every_100_ms(tmp_path: Path) -> None:
    samples, _ = sf.read(write_clip(tmp_path / "c.wav", 0.0, 4.0), dtype="float32")
    sf.write(tmp_path / "44k.wav", samples, 44100)  # a 44.1 kHz device
    pieces: list[np.ndarray] = []
    source = FileSource(tmp_path / "44k.wav", speed=30)
    session = LiveSession(source, tmp_path / "r.flac", on_audio=pieces.append)
    play(session)
    assert max(len(p) for p in pieces) <= RATE // 10
    assert sum(len(p) for p in pieces) == pytest.approx(len(samples) / 44100 * RATE, abs=RATE // 10)


class FailsSecond(NotingDecoder):
    """Fails on the second segment it is given."""

    def transcribe(self, recording, chunks, cancel=None) -> Iterator[ChunkResult]:
        if len(self.heard) == 1:
            self.heard.append(recording.samples)
            raise RuntimeError("the decoder tripped")
        yield from super().transcribe(recording, chunks, cancel)


def test_lines_reach_on_line_and_a_decoder_failure_reaches_on_error(clip: Path, tmp_path: Path) -> None:
    lines, errors = [], []
    session = LiveSession(FileSource(clip, speed=30), tmp_path / "r.flac", FailsSecond(), QUIET,
                          on_line=lines.append, on_error=errors.append)  # fmt: skip
    play(session)
    assert session.finish(timeout=30)
    assert [str(e) for e in errors] == ["the decoder tripped"]
    assert len(lines) == len(session.segments) - 1 and all(ln.utterance.text == "words" for ln in lines)


def test_while_the_decoder_is_held_the_status_shows_the_queue_and_how_far_behind(clip, tmp_path) -> None:
    decoder = NotingDecoder()
    decoder.go.clear()
    session = LiveSession(FileSource(clip, speed=30), tmp_path / "r.flac", decoder, QUIET)
    session.start()
    assert session.capture.ended.wait(30)
    status = session.status()  # every closed segment waits (the first in the held decode)
    waiting = session.segments
    assert status.backlog_seconds == pytest.approx(sum(s.duration for s in waiting))
    assert status.behind_seconds == pytest.approx(status.seconds - waiting[0].end)
    assert (status.lines, status.seconds) == (0, 12.0)
    decoder.go.set()
    session.stop()
    assert session.finish(timeout=30)


def test_a_turn_whose_closing_silence_is_being_timed_counts_as_behind(tmp_path: Path) -> None:
    clip = write_clip(tmp_path / "turn.wav", 0.0, 3.8)  # speech stops at 3.55 s; 0.25 s of silence
    session = LiveSession(FileSource(clip, speed=30), tmp_path / "r.flac", NotingDecoder(), QUIET)
    session.start()
    assert session.capture.ended.wait(30)
    assert session.transcriber.drain(timeout=10)
    ended = session.vad.silent_since
    assert ended == pytest.approx(3.6, abs=0.15)
    assert session.status().behind_seconds == pytest.approx(3.8 - ended)
    session.stop()
    assert session.finish(timeout=30) and session.status().behind_seconds == 0.0


def test_finish_gives_up_at_its_timeout_and_decodes_nothing_more(clip: Path, tmp_path: Path) -> None:
    decoder = NotingDecoder()
    decoder.go.clear()
    lines = []
    session = LiveSession(FileSource(clip, speed=30), tmp_path / "r.flac", decoder, QUIET,
                          on_line=lines.append)  # fmt: skip
    play(session)
    assert len(session.segments) >= 3
    threading.Timer(2.0, decoder.go.set).start()  # the decode in progress comes back 2 s later
    assert not session.finish(timeout=0.2)
    assert len(decoder.heard) == 1 and len(lines) == 1


def test_only_the_audio_after_the_last_closed_segment_stays_in_memory(clip: Path, tmp_path: Path) -> None:
    session = LiveSession(FileSource(clip, speed=30), tmp_path / "r.flac", NotingDecoder(), QUIET)
    play(session)
    assert session.finish(timeout=30)
    kept = sum(len(a) for a in session._audio)
    assert kept == max(0, 12 * RATE - round(session.segments[-1].end * RATE))  # (the pad may pass the end)
