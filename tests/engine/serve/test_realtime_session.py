"""`RealtimeSession` in process: the live-audio protocol of `/v1/realtime` without the socket.

Speech from the demo meeting goes in as a client sends it (base64 PCM16 `append` events) through the
server's real voice-activity detection; the decoder is a scripted 16 kHz backend (the protocol is
what is under test): it says two lines per segment, names the language it decodes, notes the audio
it was handed, and can be held to stand for a decoder that is behind.
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.audio.io import load_audio
from engine.audio.vad import SileroVad, VadConfig
from engine.serve import realtime_session
from engine.serve.realtime_errors import BAD_FORMAT, BAD_PAYLOAD, BEHIND, SessionError
from engine.serve.realtime_session import KEEP_SECONDS, RealtimeSession
from engine.types import ChunkResult, Segment

RATE = 16000
ROOT = Path(__file__).resolve().parents[3]
DONE = "conversation.item.input_audio_transcription.completed"
DELTA = "conversation.item.input_audio_transcription.delta"


class Echo:
    """A 16 kHz decoder: each segment is two lines, "<language> <samples>" from 0.4 ms to 250.4 ms
    (edges finer than the millisecond the protocol rounds to) and "two" over the rest; notes the audio
    of each segment; waits while `hold` is clear, and for a place of `budget` when given; fails on
    segments shorter than `fail_below` samples. `variant(language=…)` takes "en" and "fr" only."""

    name = "echo"
    sample_rate = RATE

    def __init__(self, language: str | None = None, heard: list[np.ndarray] | None = None,
                 hold: threading.Event | None = None) -> None:  # fmt: skip
        self.language = language
        self.heard = [] if heard is None else heard
        self.hold = hold or threading.Event()
        if hold is None:
            self.hold.set()
        self.fail_below = 0
        self.budget: threading.Semaphore | None = None

    def describe(self) -> str:
        return "echo-1"

    def variant(self, language: str | None = None, beam_size: int | None = None) -> Echo:
        if language is not None and language not in ("en", "fr"):
            raise ValueError(f"echo does not speak {language!r}")
        other = Echo(language or self.language, self.heard, self.hold)
        other.fail_below, other.budget = self.fail_below, self.budget
        return other

    def transcribe(self, recording: Any, chunks: list[Any], cancel: Any = None) -> Iterator[ChunkResult]:
        self.hold.wait(10)
        if self.budget is not None:
            self.budget.acquire(timeout=10)
        samples = recording.samples
        self.heard.append(samples.copy())
        if len(samples) < self.fail_below:
            raise RuntimeError("echo choked")
        end = len(samples) / RATE
        yield ChunkResult(chunks[0], (Segment(0.0004, 0.2504, f"{self.language or '-'} {len(samples)}"),
                                      Segment(0.2504, end, "two")))  # fmt: skip


class Events:
    """What the session emits (from any thread), in order."""

    def __init__(self) -> None:
        self.all: list[dict[str, Any]] = []

    def __call__(self, event: dict[str, Any]) -> None:
        self.all.append(event)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.all if e["type"] == kind]


@pytest.fixture(scope="module")
def detector() -> SileroVad:
    return SileroVad(VadConfig())


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    """12 s of the demo meeting at 16 kHz, as PCM16 makes it (what the server hears)."""
    samples = load_audio(ROOT / "resources" / "demo" / "meeting.flac", RATE).samples[: 12 * RATE]
    return pcm(samples)


@pytest.fixture(scope="module")
def meeting() -> np.ndarray:
    """20 s of the demo meeting at 16 kHz, as PCM16 makes it: two turns long enough to be cut at a
    pause while the decoder is free."""
    samples = load_audio(ROOT / "resources" / "demo" / "meeting.flac", RATE).samples[: 20 * RATE]
    return pcm(samples)


def pcm(samples: np.ndarray) -> np.ndarray:
    return (np.clip(samples, -1, 1) * 32767).astype("<i2").astype(np.float32) / 32768


def append(samples: np.ndarray) -> dict[str, Any]:
    raw = (np.clip(samples, -1, 1) * 32768).clip(-32768, 32767).astype("<i2").tobytes()
    return {"type": "input_audio_buffer.append", "audio": base64.b64encode(raw).decode()}


def ga(**audio_input: Any) -> dict[str, Any]:
    """A `session.update` of `session.audio.input`'s fields."""
    return {"type": "session.update", "session": {"audio": {"input": audio_input}}}


def session_at(
    detector: SileroVad, backend: Any = None, rate: int = RATE, **murmur: Any
) -> tuple[RealtimeSession, Events]:
    events = Events()
    session = RealtimeSession(backend or Echo(), detector, events)
    session.start()
    update = {"audio": {"input": {"format": {"type": "audio/pcm", "rate": rate}}}, "murmur": murmur}
    session.handle({"type": "session.update", "session": update})
    return session, events


def send(session: RealtimeSession, samples: np.ndarray, rate: int = RATE) -> None:
    for start in range(0, len(samples), rate // 10):  # 100 ms at a time, as a microphone delivers
        session.handle(append(samples[start : start + rate // 10]))


def until(session: RealtimeSession, events: Events, kind: str, count: int = 1, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while len(events.of(kind)) < count:
        assert time.monotonic() < deadline, f"no {kind} in {timeout} s: {[e['type'] for e in events.all]}"
        session.poll()
        time.sleep(0.01)


def finish(session: RealtimeSession, events: Events, count: int = 1) -> None:
    session.handle({"type": "input_audio_buffer.commit"})
    until(session, events, "murmur.drained", count)


def found_at(heard: np.ndarray, sent: np.ndarray, start: float) -> bool:
    """`heard` is `sent`'s audio from about `start` s on (times are rounded to the millisecond)."""
    at = round(start * RATE)
    return any(np.array_equal(heard, sent[o : o + len(heard)]) for o in range(max(0, at - 16), at + 17))


# ---- lines


class Noted:
    """The session's own detector, noting each segment it closes (where the truth of a slice lies)."""

    def __init__(self, vad: Any) -> None:
        self.vad, self.closed = vad, []

    def push(self, samples: np.ndarray, may_cut: bool = True) -> list[Any]:
        return self._note(self.vad.push(samples, may_cut))

    def flush(self) -> list[Any]:
        return self._note(self.vad.flush())

    def _note(self, segments: list[Any]) -> list[Any]:
        self.closed += segments
        return segments

    def __getattr__(self, name: str) -> Any:
        return getattr(self.vad, name)


def test_every_item_completes_once_in_order_with_the_audio_of_its_own_stretch(detector, meeting):
    # catches: an item completed twice or never, out of order, a segment decoded from the wrong stretch
    # of audio or a cut (the kept audio's offset off after a trim, a long turn's next piece trimmed),
    # a line's time not made absolute or not rounded to the millisecond, audio not kept as float32
    backend = Echo()
    session, events = session_at(detector, backend)
    session.vad = noted = Noted(session.vad)
    send(session, meeting)
    finish(session, events)
    session.close()
    committed = [e["item_id"] for e in events.of("input_audio_buffer.committed")]
    completed = events.of(DONE)
    assert committed == [f"item_{n}" for n in range(1, len(committed) + 1)] and len(committed) >= 5
    assert [e["item_id"] for e in completed] == committed
    assert events.all[-1] == {"type": "murmur.drained"}
    assert len(meeting) % 512 == 0  # whole detector frames: the commit adds no silence
    for item, segment, heard in zip(completed, noted.closed, backend.heard, strict=True):
        assert heard.dtype == np.float32  # the last segment's padding reaches past the audio sent
        assert np.array_equal(heard, meeting[round(segment.start * RATE) : round(segment.end * RATE)])
        said = f"- {len(heard)}"
        assert item["lines"] == [
            {
                "start": round(segment.start + 0.0004, 3),
                "end": round(segment.start + 0.2504, 3),
                "text": said,
            },
            {
                "start": round(segment.start + 0.2504, 3),
                "end": round(segment.start + len(heard) / RATE, 3),
                "text": "two",
            },
        ]
        assert item["transcript"] == f"{said} two" and item["content_index"] == 0
        deltas = [e for e in events.of(DELTA) if e["item_id"] == item["item_id"]]
        head = {"type": DELTA, "item_id": item["item_id"], "content_index": 0}
        assert deltas == [{**head, "delta": said}, {**head, "delta": " two"}]
    assert [s.start for s in noted.closed] == sorted(s.start for s in noted.closed)


def test_a_long_turn_is_cut_at_a_pause_only_while_the_decoder_is_free(detector, meeting):
    # catches: cuts made while segments wait (each piece costs a whole decode: a decoder near its limit
    # falls further behind), or never made (a long turn's line waits for its end)
    counts = []
    for busy in (False, True):
        hold = threading.Event()
        session, events = session_at(detector, Echo(hold=hold))
        if not busy:
            hold.set()
        send(session, meeting)
        counts.append(len(events.of("input_audio_buffer.committed")))
        hold.set()
        finish(session, events)
        session.close()
    free, busy = counts
    assert free > busy


def test_speech_at_48_khz_keeps_the_times_of_the_same_speech_at_16_khz(detector, speech):
    # catches: the session's rate not applied (audio taken as 16 kHz: every time three times too late)
    from engine.audio.resample import resample

    at_16k, events_16k = session_at(detector)
    send(at_16k, speech)
    finish(at_16k, events_16k)
    at_48k, events_48k = session_at(detector, rate=48000)
    send(at_48k, pcm(resample(speech, RATE, 48000)), rate=48000)
    finish(at_48k, events_48k)
    at_16k.close(), at_48k.close()
    # where a turn is cut at a pause depends on the decoder's spare time; where turns end does not
    first, last = (events_16k.of(DONE)[i]["lines"][-1]["end"] for i in (0, -1))
    first_48k, last_48k = (events_48k.of(DONE)[i]["lines"][-1]["end"] for i in (0, -1))
    assert first_48k == pytest.approx(first, abs=0.1) and last_48k == pytest.approx(last, abs=0.1)


def test_audio_after_a_commit_goes_on_at_its_own_times_and_drains_again(detector, speech):
    # catches: the resampler not renewed after a commit's flush (audio after it refused), the drain
    # mark not cleared (`murmur.drained` sent again and again), times restarting from zero
    session, events = session_at(detector)
    send(session, speech[: 6 * RATE])
    finish(session, events)
    first = len(events.of(DONE))
    send(session, speech[6 * RATE :])
    finish(session, events, count=2)
    for _ in range(5):
        session.poll()
    session.close()
    assert len(events.of("murmur.drained")) == 2 and first >= 1
    later = events.of(DONE)[first:]
    assert later and later[0]["lines"][0]["start"] >= 5.0  # after the first commit's speech
    assert not session.busy


def test_a_drain_waits_for_every_item_committed_before_the_commit(detector, speech):
    # catches: `murmur.drained` sent while items are still decoding (a client closes and loses them)
    hold = threading.Event()
    session, events = session_at(detector, Echo(hold=hold))
    send(session, speech)
    session.handle({"type": "input_audio_buffer.commit"})
    committed = len(events.of("input_audio_buffer.committed"))
    for _ in range(10):
        session.poll()
    assert session.busy and events.of("murmur.drained") == [] and events.of(DONE) == []
    hold.set()
    until(session, events, "murmur.drained")
    assert len(events.of(DONE)) == committed and events.all[-1]["type"] == "murmur.drained"
    assert not session.busy
    session.close()


def test_a_commit_gives_the_detector_every_sample_heard_in_whole_frames(detector, speech):
    # catches: the commit's padding miscounted (the last few milliseconds of speech never reach the
    # detector, or silence not in the audio is made up)
    session, events = session_at(detector)
    send(session, speech[: RATE + 100])
    assert session.vad.seconds < (RATE + 100) / RATE  # a frame not yet whole waits
    finish(session, events)
    assert session.vad.seconds * RATE == 32 * 512  # 16100 samples, padded to 32 frames of 512
    assert session._audio_from + len(session._audio) == 32 * 512  # the audio holds the padding too
    session.close()


def test_a_drain_does_not_wait_for_speech_sent_after_its_commit(detector, meeting):
    # catches: the drain counting items committed after the commit (a client that commits mid-stream
    # waits for speech it has not finished sending)
    backend = Echo()
    backend.budget = threading.Semaphore(0)
    session, events = session_at(detector, backend)
    send(session, meeting[: 9 * RATE // 2])  # one turn
    session.handle({"type": "input_audio_buffer.commit"})
    before = len(events.of("input_audio_buffer.committed"))
    send(session, meeting[9 * RATE // 2 :])
    assert len(events.of("input_audio_buffer.committed")) >= 2 * before
    for _ in range(10):
        session.poll()
    assert events.of("murmur.drained") == []  # nothing decoded yet
    for _ in range(before):
        backend.budget.release()
    until(session, events, "murmur.drained")
    assert len(events.of(DONE)) == before and session.busy  # later items still owed
    for _ in range(100):
        backend.budget.release()
    session.close()


def test_a_commit_with_nothing_heard_drains_at_once(detector):
    session, events = session_at(detector)
    assert not session.busy
    finish(session, events)
    assert events.of("input_audio_buffer.committed") == [] and not session.busy
    session.close()


def test_a_decoder_failure_is_a_server_error_and_the_next_item_still_comes(detector, speech):
    backend = Echo()
    backend.fail_below = 10**9  # every segment fails…
    session, events = session_at(detector, backend)
    send(session, speech[: 4 * RATE])
    session.handle({"type": "input_audio_buffer.commit"})
    until(session, events, "error")
    assert events.of("error")[0]["error"] == {"type": "server_error", "code": "transcription_failed",
                                              "message": "echo choked", "param": None}  # fmt: skip
    until(session, events, "murmur.drained")
    assert all(e["lines"] == [] and e["transcript"] == "" for e in events.of(DONE))
    session.close()


def test_closing_a_session_drops_its_queued_speech_and_frees_its_audio(detector, speech):
    # catches: the decoder left running after the client went (its queue decoded for nobody)
    hold = threading.Event()
    backend = Echo(hold=hold)
    session, events = session_at(detector, backend)
    send(session, speech)
    session.handle({"type": "input_audio_buffer.commit"})
    queued = len(events.of("input_audio_buffer.committed"))
    threading.Timer(0.5, hold.set).start()
    session.close()
    assert queued >= 3 and len(backend.heard) <= 1  # the segment being decoded, at most
    assert not session.transcriber._thread.is_alive()
    assert len(session._audio) == 0


def test_only_the_open_speech_and_a_second_before_it_are_kept(detector, speech):
    # catches: audio kept from the start of the stream (memory growing for hours), or trimmed into
    # the speech that is still open (its segment decoded without its start)
    session, events = session_at(detector)
    send(session, np.zeros(20 * RATE, np.float32))
    assert len(session._audio) <= (KEEP_SECONDS + 0.1) * RATE
    assert events.of("input_audio_buffer.committed") == []
    send(session, speech)
    kept = session._audio_from / RATE
    open_from = session.vad.seconds - len(session._audio) / RATE
    assert kept == pytest.approx(open_from) and kept >= 20.0
    finish(session, events)
    session.close()
    assert events.of(DONE)[0]["lines"][0]["start"] >= 20.0


# ---- settings


def test_the_session_is_greeted_and_updated_in_the_shape_of_the_event_asked(detector):
    # catches: a `transcription_session.update` answered as `session.updated`, the rate or language
    # left out of the answer
    events = Events()
    session = RealtimeSession(Echo(), detector, events)
    session.start()
    assert events.all == [{"type": "transcription_session.created", "session": {
        "object": "realtime.transcription_session", "input_audio_format": "pcm16",
        "audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000}}},
        "input_audio_transcription": {"model": "echo-1", "language": None},
        "turn_detection": {"type": "server_vad"}, "murmur": {"speakers": False}}}]  # fmt: skip
    session.handle({"type": "session.update", "session": {"audio": {"input": {
        "format": {"type": "audio/pcm", "rate": 8000}, "transcription": {"language": "fr"}}}}})  # fmt: skip
    updated = events.all[-1]
    assert updated["type"] == "session.updated"
    assert updated["session"]["audio"]["input"]["format"]["rate"] == 8000
    assert updated["session"]["input_audio_transcription"]["language"] == "fr"
    session.handle({"type": "transcription_session.update", "session": {
        "input_audio_format": "pcm16", "input_audio_transcription": {"language": "en"}}})  # fmt: skip
    beta = events.all[-1]
    assert beta["type"] == "transcription_session.updated"
    assert beta["session"]["audio"]["input"]["format"]["rate"] == 24000  # the beta's pcm16 is 24 kHz
    assert beta["session"]["input_audio_transcription"]["language"] == "en"
    session.handle(ga(format={"type": "audio/pcm"}))  # no rate: the rate stays
    assert events.all[-1]["session"]["audio"]["input"]["format"]["rate"] == 24000
    session.handle({"type": "session.update"})  # no `session`: nothing changes
    assert events.all[-1]["session"]["audio"]["input"]["format"]["rate"] == 24000
    session.handle({"type": "session.update", "session": {"audio": {"input": {"format": {"rate": 16000}}}}})
    assert events.all[-1]["session"]["audio"]["input"]["format"]["rate"] == 16000  # the type defaults
    assert events.of("error") == []
    session.close()


def test_an_unknown_event_is_an_error_and_the_session_goes_on(detector):
    session, events = session_at(detector)
    session.handle({"type": "response.create"})
    session.handle(["not", "an", "event"])
    first, second = events.of("error")
    assert first["error"] == {"type": "invalid_request_error", "code": "unknown_event",
                              "message": "unknown event type 'response.create'", "param": "type"}  # fmt: skip
    assert second["error"]["message"] == "unknown event type None"
    finish(session, events)
    session.close()


@pytest.mark.parametrize(("session_update", "code", "param", "message"), [
    ({"audio": {"input": {"format": {"type": "audio/pcmu"}}}}, "unsupported_format",
     "session.audio.input.format", "audio format 'audio/pcmu' is not supported; send PCM16"),
    ({"audio": {"input": {"format": {"type": "audio/pcm", "rate": 12345}}}}, "unsupported_rate",
     "session.audio.input.format.rate",
     "a sample rate of 12345 Hz is not supported; use one of 8000, 16000, 24000, 32000, 44100, 48000"),
    ({"input_audio_format": "g711_ulaw"}, "unsupported_format", "session.input_audio_format",
     "audio format 'g711_ulaw' is not supported; send PCM16"),
])  # fmt: skip
def test_an_audio_format_not_taken_ends_the_session_with_1003_naming_the_parameter(
    detector, session_update, code, param, message
):
    events = Events()
    session = RealtimeSession(Echo(), detector, events)
    kind = "session.update" if "audio" in session_update else "transcription_session.update"
    with pytest.raises(SessionError) as refused:
        session.handle({"type": kind, "session": session_update})
    assert (refused.value.code, refused.value.param, refused.value.close) == (code, param, BAD_FORMAT)
    assert refused.value.message == message == str(refused.value)
    session.close()


def test_the_rate_is_locked_once_audio_has_come_but_may_be_repeated(detector, speech):
    session, events = session_at(detector)
    session.handle(append(speech[:1600]))
    same = {"audio": {"input": {"format": {"type": "audio/pcm", "rate": RATE}}}}
    session.handle({"type": "session.update", "session": same})
    assert events.all[-1]["type"] == "session.updated"
    session.handle({"type": "input_audio_buffer.commit"})  # the stream goes on after a commit
    with pytest.raises(SessionError) as refused:
        session.handle(ga(format={"rate": 24000}))
    assert (refused.value.message, refused.value.code, refused.value.param, refused.value.close) == (
        "the sample rate cannot change once audio has been sent", "rate_locked",
        "session.audio.input.format.rate", BAD_FORMAT)  # fmt: skip
    session.close()


NO_PROMPT = "a prompt is not supported on live audio"


def test_turn_detection_and_a_prompt_are_refused_with_an_error_and_the_session_goes_on(detector):
    session, events = session_at(detector)
    session.handle({"type": "session.update", "session": {"turn_detection": {"type": "server_vad"}}})
    assert events.of("error") == []
    session.handle({"type": "session.update", "session": {"turn_detection": {"type": "semantic_vad"}}})
    session.handle(ga(transcription={"prompt": "hi"}))
    session.handle({"type": "transcription_session.update", "session": {
        "input_audio_transcription": {"prompt": "hi"}}})  # fmt: skip
    said = [(e["error"]["code"], e["error"]["param"], e["error"]["message"]) for e in events.of("error")]
    assert said == [
        ("unsupported_setting", "session.turn_detection",
         "turn detection is always the server's voice activity detection"),
        ("unsupported_setting", "session.audio.input.transcription.prompt", NO_PROMPT),
        ("unsupported_setting", "session.input_audio_transcription.prompt", NO_PROMPT),
    ]  # fmt: skip
    assert [e["type"] for e in events.all[-2:]] == ["error", "transcription_session.updated"]
    session.close()


def test_a_language_is_decoded_in_and_can_change_while_speech_comes(detector, speech):
    # catches: the new language kept in the session but not given to the running decoder
    session, events = session_at(detector, Echo())
    session.handle(ga(transcription={"language": "fr"}))
    send(session, speech[: 6 * RATE])
    finish(session, events)
    session.handle(ga(transcription={"language": "en"}))
    send(session, speech[6 * RATE :])
    finish(session, events, count=2)
    session.close()
    said = [e["lines"][0]["text"].split()[0] for e in events.of(DONE)]
    assert said[0] == "fr" and said[-1] == "en" and events.of("error") == []


def test_a_language_the_model_does_not_take_is_an_error_and_the_old_one_stays(detector):
    class NoLanguages:  # a 16 kHz backend with no variants at all
        name, sample_rate = "echo", RATE

        def describe(self) -> str:
            return "echo-1"

    session, events = session_at(detector, Echo())
    session.handle(ga(transcription={"language": "fr"}))
    session.handle(ga(transcription={"language": "xx"}))
    (error,) = events.of("error")
    assert error["error"] == {"type": "invalid_request_error", "code": "unsupported_language",
                              "message": "echo does not speak 'xx'",
                              "param": "session.audio.input.transcription.language"}  # fmt: skip
    assert events.all[-1]["session"]["input_audio_transcription"]["language"] == "fr"
    session.close()
    fixed, events = session_at(detector, NoLanguages())
    fixed.handle(
        {"type": "transcription_session.update", "session": {"input_audio_transcription": {"language": "fr"}}}
    )
    assert events.of("error")[0]["error"]["message"] == "the echo backend takes no language"
    assert events.of("error")[0]["error"]["param"] == "session.input_audio_transcription.language"
    fixed.close()


def test_speakers_asked_before_speech_label_every_line_and_cannot_change_after(detector, speech):
    # catches: the speakers setting dropped (no label on any line), or switched once speech was heard
    session, events = session_at(detector, speakers=True)
    assert events.all[-1]["session"]["murmur"] == {"speakers": True}
    send(session, speech)
    session.handle({"type": "session.update", "session": {"murmur": {"speakers": True}}})  # the same: fine
    assert events.of("error") == []
    session.handle({"type": "session.update", "session": {"murmur": {"speakers": False}}})
    assert events.of("error")[0]["error"] == {
        "type": "invalid_request_error", "code": "unsupported_setting", "param": "session.murmur.speakers",
        "message": "speakers cannot be turned on or off once speech has been heard"}  # fmt: skip
    finish(session, events)
    session.close()
    speakers = [li.get("speaker") for e in events.of(DONE) for li in e["lines"]]
    assert speakers and all(s is not None and s.startswith("S") for s in speakers)


def test_an_unreadable_voice_library_is_reported_and_speakers_still_come(detector, speech, tmp_path):
    from engine.voices import VoiceLibrary

    broken = tmp_path / "voices.db"
    broken.write_bytes(b"not a voice library")
    events = Events()
    session = RealtimeSession(Echo(), detector, events, VoiceLibrary(broken))
    session.handle({"type": "session.update", "session": {"murmur": {"speakers": True}}})
    send(session, speech[: 4 * RATE])
    finish(session, events)
    session.close()
    (error,) = events.of("error")
    assert (
        error["error"]["code"] == "voice_library"
        and "known voices are not named" in error["error"]["message"]
    )
    assert all(li["speaker"].startswith("S") for e in events.of(DONE) for li in e["lines"])
    assert broken.read_bytes() == b"not a voice library"


# ---- refusals that end the session


def test_a_model_that_is_not_16_khz_refuses_live_audio_at_once(detector):
    class Wide(Echo):
        sample_rate = 24000

    events = Events()
    session = RealtimeSession(Wide(), detector, events)
    with pytest.raises(SessionError) as refused:
        session.start()
    assert (refused.value.code, refused.value.close) == ("unsupported_model", BAD_FORMAT)
    assert "this server runs echo-1" in refused.value.message and events.all == []


ODD = base64.b64encode(b"abc").decode()  # three bytes: not whole PCM16 samples


@pytest.mark.parametrize(("audio", "message"), [
    ("%%% not base64", "`audio` must be base64 PCM16"),
    ("@@AAAAAA==", "`audio` must be base64 PCM16"),  # whole samples once the stray characters are dropped
    (ODD, "PCM16 audio has an even number of bytes"),
])  # fmt: skip
def test_audio_that_is_not_base64_pcm16_ends_the_session_with_1007(detector, audio, message):
    session, _ = session_at(detector)
    with pytest.raises(SessionError) as refused:
        session.handle({"type": "input_audio_buffer.append", "audio": audio})
    assert (refused.value.code, refused.value.param, refused.value.close) == (
        "invalid_audio",
        "audio",
        BAD_PAYLOAD,
    )
    assert refused.value.message == message
    session.close()


def test_an_append_without_audio_adds_nothing_and_is_no_error(detector):
    session, events = session_at(detector)
    session.handle({"type": "input_audio_buffer.append"})
    finish(session, events)
    assert events.of("error") == [] and session.vad.seconds == 0.0
    session.close()


def test_a_decoder_too_far_behind_ends_the_session_with_1013(detector, speech, monkeypatch):
    # catches: the backlog never checked (a slow server queues a fast client's speech without bound)
    monkeypatch.setattr(realtime_session, "MAX_BACKLOG_SECONDS", 3.0)
    hold = threading.Event()
    session, _ = session_at(detector, Echo(hold=hold))
    with pytest.raises(SessionError) as refused:
        send(session, speech)
    assert (refused.value.code, refused.value.close) == ("behind", BEHIND)
    assert refused.value.message == "the server is too far behind this stream"
    assert session.transcriber.backlog_seconds > 3.0
    hold.set()
    session.close()


def test_remembered_voices_are_named_on_the_provisional_speakers_of_their_lines(detector, tmp_path):
    # catches: names from the server's voice library never reaching the client, or sent for another
    # speaker, without their name or without their score
    from tests.engine.live.test_live_names import remembered, tuesday

    library, meeting = remembered(tmp_path / "voices.sqlite"), tuesday()
    events = Events()
    session = RealtimeSession(Echo(), detector, events, library)
    session.start()
    format_16k = {"format": {"type": "audio/pcm", "rate": RATE}}
    session.handle(
        {"type": "session.update", "session": {"audio": {"input": format_16k}, "murmur": {"speakers": True}}}
    )
    send(session, pcm(meeting.recording().samples))
    finish(session, events)
    session.close()
    named = [e for e in events.of("murmur.speaker.named") if e["name"] is not None]
    assert sorted(e["name"] for e in named) == ["Bob", "Carol"]
    assert {e["speaker"] for e in named} <= {li["speaker"] for e in events.of(DONE) for li in e["lines"]}
    assert all(set(e) == {"type", "speaker", "name", "score"} for e in named)  # a score, not a whole number:
    assert all(0.5 < e["score"] < 1.0 and e["score"] == round(e["score"], 4) for e in named)
