"""The live lag a user is shown: from the end of a turn to its line, growing while the decoder is stuck."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.audio.resample import StreamingResampler
from engine.live.session import LiveConfig, LiveSession
from engine.live.sources import FileSource
from engine.live.transcriber import LiveTranscriber
from engine.live.vad_stream import StreamingVad
from engine.types import SpeechSegment
from tests.engine.live.conftest import write_clip


class StuckDecoder:
    """A decoder that does not come back until `go` is set (a CPU taken by something else)."""

    sample_rate = 16000

    def __init__(self) -> None:
        self.go = threading.Event()

    def transcribe(self, recording, chunks, cancel=None) -> Iterator:
        self.go.wait(60)
        return iter(())


@pytest.fixture
def stuck() -> Iterator[StuckDecoder]:
    decoder = StuckDecoder()
    yield decoder
    decoder.go.set()


def test_the_lag_counts_from_the_end_of_the_oldest_turn_without_its_line(stuck: StuckDecoder) -> None:
    t = LiveTranscriber(stuck, None, lambda line: None)
    silence = np.zeros(16000, np.float32)
    t.submit(SpeechSegment(1.0, 2.0), silence)  # a turn over at 2 s
    t.submit(SpeechSegment(3.0, 6.0), silence)  # and the next, over at 6 s
    assert t.behind_seconds(5.0) == pytest.approx(3.0)
    assert t.behind_seconds(9.0) == pytest.approx(7.0)  # grows while the decoder is stuck
    stuck.go.set()
    assert t.drain(timeout=30)
    assert t.behind_seconds(10.0) == 0.0
    t.close()


def test_the_lag_shown_while_recording_grows_while_decoding_is_stuck(stuck, tmp_path: Path) -> None:
    clip = write_clip(tmp_path / "clip.flac", 0.0, 12.0)
    session = LiveSession(FileSource(clip, speed=2), tmp_path / "r.flac", stuck,
                          LiveConfig(speakers=False))  # fmt: skip
    session.start()
    shown = []
    while not session.capture.ended.wait(0.1):
        status = session.status()
        shown.append((status.seconds, status.behind_seconds))
    session.stop()
    first_end = session.segments[0].end
    late = [(s, b) for s, b in shown if s > first_end + 1.0]
    assert late, shown
    # every moment after the first turn ended: shown lag = seconds since that turn's end
    assert all(b == pytest.approx(s - first_end, abs=0.35) for s, b in late)
    stuck.go.set()
    assert session.finish(timeout=30)


def test_a_turn_whose_closing_silence_is_still_being_timed_already_counts(tmp_path: Path) -> None:
    from engine.audio.io import load_audio

    clip = write_clip(tmp_path / "turn.wav", 0.0, 3.8)  # dave stops at 3.55 s; 0.25 s of silence
    vad = StreamingVad(LiveConfig().vad)
    closed = vad.push(load_audio(clip, 16000).samples)
    assert closed == [] and vad.silent_since == pytest.approx(3.6, abs=0.15)
    vad.push(np.zeros(16000, np.float32))
    assert vad.silent_since is None  # closed: the transcriber's queue counts it now


def test_the_live_resampler_hands_on_audio_every_100_ms() -> None:
    resampler = StreamingResampler(44100, 16000, group_output=1600)
    handed = [len(resampler.push(np.zeros(4410, np.float32))) for _ in range(5)]
    assert handed[1:] == [1600] * 4  # not 2 s at once, as a long file's resampling does


def test_a_live_session_designs_its_resampler_when_started_on_the_starting_thread(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # catches: the filter designed when the session is made (4-5 ms of numpy for 44.1 kHz on the
    # window's thread at the Record key, where the window makes it before handing `start` to a thread)
    import engine.live.session as live

    made: list[tuple[tuple[int, int], threading.Thread]] = []

    def resampler(rate: int, to: int, **kw: int) -> StreamingResampler:
        made.append(((rate, to), threading.current_thread()))
        return StreamingResampler(rate, to, **kw)

    monkeypatch.setattr(live, "StreamingResampler", resampler)
    clip = tmp_path / "c.wav"
    sf.write(clip, np.zeros(44100, np.float32), 44100)
    session = LiveSession(FileSource(clip, speed=20), tmp_path / "rec.flac")
    assert made == []
    opener = threading.Thread(target=session.start)
    opener.start()
    opener.join()
    assert made == [((44100, 16000), opener)]
    session.capture.ended.wait(10)
    session.stop()
    assert session.segments == [] and sf.info(str(tmp_path / "rec.flac")).samplerate == 44100


class TimedDecoder:
    """A decoder that takes `seconds` for each segment and notes when it came back."""

    sample_rate = 16000

    def __init__(self, seconds: float) -> None:
        self.seconds, self.returned_at = seconds, 0.0

    def transcribe(self, recording, chunks, cancel=None) -> Iterator:
        time.sleep(self.seconds)
        self.returned_at = time.monotonic()
        return iter(())


def test_the_decoder_has_no_spare_time_while_a_segment_waits(stuck: StuckDecoder) -> None:
    t = LiveTranscriber(stuck, None, lambda line: None)
    assert t.has_spare_time(time.monotonic())  # nothing decoded yet, nothing waiting
    t.submit(SpeechSegment(1.0, 2.0), np.zeros(16000, np.float32))
    assert not t.has_spare_time(time.monotonic() + 3600)
    stuck.go.set()
    assert t.drain(timeout=30)
    t.close()


def test_after_a_decode_the_decoder_has_spare_time_once_free_for_half_as_long() -> None:
    decoder = TimedDecoder(0.2)
    t = LiveTranscriber(decoder, None, lambda line: None)
    t.submit(SpeechSegment(1.0, 2.0), np.zeros(16000, np.float32))
    assert t.drain(timeout=30)
    took = t.last_decode_seconds
    assert took >= 0.2 and t.free_since >= decoder.returned_at  # freed after the decode came back
    assert not t.has_spare_time(t.free_since + 0.45 * took)
    assert t.has_spare_time(t.free_since + 0.55 * took)
    t.close()


class QuietDecoder:
    """A decoder that comes back at once with nothing: always spare time."""

    sample_rate = 16000

    def transcribe(self, recording, chunks, cancel=None) -> Iterator:
        return iter(())


@pytest.mark.parametrize("busy", [False, True])
def test_a_merged_turn_is_cut_only_while_the_decoder_has_spare_time(busy, stuck, tmp_path: Path) -> None:
    # 36-52 s of the demo: a turn ending at 41.15, then one ending at 43.50 that runs into the next
    # (43.77) with 0.27 s of silence: one segment unless it is cut
    clip = write_clip(tmp_path / "clip.wav", 36.0, 52.0)
    session = LiveSession(FileSource(clip, speed=4), tmp_path / "r.flac", stuck if busy else QuietDecoder(),
                          LiveConfig(speakers=False))  # fmt: skip
    session.start()
    session.capture.ended.wait(30)
    session.stop()
    stuck.go.set()
    assert session.finish(timeout=30)
    turn_end = 43.50 - 36.0
    (end,) = [s.end for s in session.segments if s.start <= turn_end <= s.end + 0.3]
    if busy:  # the first segment waits for the decoder: the second is not cut
        assert end > turn_end + 5
    else:
        assert end == pytest.approx(turn_end, abs=0.3)


def test_a_decoder_slower_than_the_cut_bound_gets_no_cut_pieces(tmp_path: Path) -> None:
    # each decode takes 2 s, the bound is 1.5 s: cutting would give it more work than the meeting
    clip = write_clip(tmp_path / "clip.wav", 36.0, 52.0)
    # at twice real time the decoder is free again (for more than half a decode) by 11.5 s of the clip
    session = LiveSession(FileSource(clip, speed=2), tmp_path / "r.flac", TimedDecoder(2.0),
                          LiveConfig(speakers=False, cut_after_seconds=1.5))  # fmt: skip
    session.start()
    session.capture.ended.wait(30)
    session.stop()
    assert session.finish(timeout=60)
    turn_end = 43.50 - 36.0  # runs into the next turn: cut only if the decoder keeps up
    (end,) = [s.end for s in session.segments if s.start <= turn_end <= s.end + 0.3]
    assert end > turn_end + 5
