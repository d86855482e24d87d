"""`murmur record --live --remote URL` in this process (`engine.cli.main`): a file played at real-time
speed through the same capture path as a microphone, its audio streamed as it is captured to the real
`WS /v1/realtime` route on uvicorn in a thread (a loopback port). The server's decoder is the scripted
one of `test_realtime_session`: each closed segment comes back as two lines, "<language> <samples>"
from its start and "two" a quarter second later. What is under test is what the user of the
command meets: the lines on the screen as they come, the recording on disk, the refusals, the exit
status.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.cli import main
from engine.live.flac_writer import marker_path
from engine.serve.config import KEY_ENV, ServeConfig
from tests.engine.live.conftest import write_clip
from tests.engine.serve import test_realtime_session as scripted
from tests.engine.serve.conftest import KEY, free_port
from tests.engine.serve.test_realtime_route import RealtimeServer, serving, settled
from tests.engine.serve.test_realtime_session import RATE, Echo

detector = scripted.detector  # the server's voice-activity detector (a module fixture)

LINE = re.compile(r"^\[(\d+):(\d\d)\] (?:(S\d+): )?(.+)$")  # "[0:05] S1: text"


@dataclass(frozen=True)
class Said:
    stream: str  # "out" or "err"
    text: str
    at: float  # time.monotonic() when its end of line was written


class Console:
    """stdout and stderr as one terminal shows them: each line in the order it was finished, from
    whichever thread printed it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lines: list[Said] = []
        self._open = {"out": "", "err": ""}
        self._lock = threading.Lock()
        monkeypatch.setattr("sys.stdout", _Stream(self, "out"))
        monkeypatch.setattr("sys.stderr", _Stream(self, "err"))

    def write(self, stream: str, text: str) -> None:
        with self._lock:
            *done, self._open[stream] = (self._open[stream] + text).split("\n")
            self.lines += [Said(stream, line, time.monotonic()) for line in done]

    def out(self) -> list[str]:
        return [s.text for s in self.lines if s.stream == "out"]

    def err(self) -> list[str]:
        return [s.text for s in self.lines if s.stream == "err"]


class _Stream:
    def __init__(self, console: Console, name: str) -> None:
        self.console, self.name = console, name

    def write(self, text: str) -> int:
        self.console.write(self.name, text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def record(out: Path, clip: Path, url: str, *flags: str) -> int:
    return main(["record", "--out", str(out), "--play", str(clip), "--live", "--remote", url,
                 "--no-transcribe", *flags])  # fmt: skip


def base(url: str) -> str:
    """The server's http:// base URL, as a user passes it, from its realtime address."""
    return url.replace("ws://", "http://").removesuffix("/v1/realtime")


def whole(out: Path) -> Path:
    """The one recording in `out`, closed (no marker left)."""
    [path] = out.glob("recording-*.flac")
    assert not marker_path(path).exists()
    return path


def seconds(match: re.Match[str]) -> int:
    return int(match.group(1)) * 60 + int(match.group(2))


def test_the_servers_lines_are_printed_while_recording_with_their_time_speaker_and_language(
    detector, tmp_path, monkeypatch
):
    # catches: the audio not handed to the client (`on_audio` None); the client connected only after
    # the recording (no line while it goes on); speakers or the language not asked for; a line's end
    # printed as its time; the stream left open after the recording
    clip = write_clip(tmp_path / "clip.flac", 0.0, 8.2)  # two turns: dave, then carol
    server = RealtimeServer(detector)
    console = Console(monkeypatch)
    with serving(server) as url:
        assert record(tmp_path / "out", clip, base(url), "--language", "fr") == 0
        assert settled(server) == 0
    path = whole(tmp_path / "out")
    assert sf.info(path).duration == pytest.approx(8.2, abs=0.15)
    err = console.err()
    assert err[0] == f"recording file clip.flac to {path} (Ctrl-C stops)"
    assert err[-1].startswith("recorded 0:08 to ") and len(err) == 2
    found = [LINE.match(text) for text in console.out()]
    assert len(found) >= 4 and all(found), console.out()
    texts = [m.group(4) for m in found]
    assert all(re.fullmatch(r"fr \d+", t) for t in texts[0::2]) and set(texts[1::2]) == {"two"}
    assert all(m.group(3) in ("S1", "S2") for m in found)
    for first, second in zip(found[0::2], found[1::2], strict=True):  # "two" begins 0.25 s after
        assert seconds(second) - seconds(first) <= 1
    samples = [int(t.removeprefix("fr ")) for t in texts[0::2]]
    assert seconds(found[-2]) >= sum(samples[:-1]) / RATE - 1  # each segment after the last
    first = next(s for s in console.lines if s.stream == "out")
    recorded = next(s for s in console.lines if s.text.startswith("recorded "))
    assert recorded.at - first.at > 1.0  # the first turn's lines came while the second was recorded


def test_without_speakers_a_line_is_its_time_and_words(detector, tmp_path, monkeypatch):
    # catches: a speaker label printed for a line that has none; speakers asked for with
    # `--diarizer none`; a language sent that was not asked for
    clip = write_clip(tmp_path / "clip.flac", 0.0, 4.0)
    console = Console(monkeypatch)
    with serving(RealtimeServer(detector)) as url:
        assert record(tmp_path / "out", clip, base(url), "--diarizer", "none") == 0
    assert console.out() and all(re.fullmatch(r"\[0:0\d\] (- \d+|two)", t) for t in console.out())
    whole(tmp_path / "out")


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_the_servers_key_from_the_flag_or_the_environment_opens_the_stream(
    detector, tmp_path, monkeypatch, how
):
    # catches: `--api-key` or $MURMUR_API_KEY not sent (`and` for `or`)
    clip = write_clip(tmp_path / "clip.flac", 0.0, 3.0)
    flags = ["--api-key", KEY] if how == "flag" else []
    monkeypatch.delenv(KEY_ENV, raising=False)
    if how == "environment":
        monkeypatch.setenv(KEY_ENV, KEY)
    console = Console(monkeypatch)
    with serving(RealtimeServer(detector, config=ServeConfig(api_key=KEY))) as url:
        assert record(tmp_path / "out", clip, base(url), "--diarizer", "none", *flags) == 0
    assert console.out() and len(console.err()) == 2, console.lines
    whole(tmp_path / "out")


def test_a_wrong_key_is_refused_in_a_sentence_with_exit_1_and_no_recording_left(
    detector, tmp_path, monkeypatch
):
    # catches: the recording made before the refusal left behind (a stub of 0.2 s)
    clip = write_clip(tmp_path / "clip.flac", 0.0, 3.0)
    monkeypatch.delenv(KEY_ENV, raising=False)
    console = Console(monkeypatch)
    server = RealtimeServer(detector, config=ServeConfig(api_key=KEY))
    with serving(server) as url:
        assert record(tmp_path / "out", clip, base(url), "--api-key", "wrong-key-0123456789") == 1
        assert server.realtime_sessions == 0
    assert console.out() == []
    assert (
        console.err()[-1] == f"murmur: error: cannot open the live stream at {url}: server rejected "
        "WebSocket connection: HTTP 403"
    )
    assert list((tmp_path / "out").glob("*")) == []


def test_a_server_that_is_not_there_is_refused_in_a_sentence_with_exit_1(tmp_path, monkeypatch):
    clip = write_clip(tmp_path / "clip.flac", 0.0, 3.0)
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    console = Console(monkeypatch)
    assert record(tmp_path / "out", clip, url) == 1
    assert console.out() == []
    refusal = console.err()[-1]
    assert refusal.startswith(f"murmur: error: cannot open the live stream at {url.replace('http', 'ws')}"
                              "/v1/realtime: ")  # fmt: skip
    assert list((tmp_path / "out").glob("*")) == []


def test_an_input_that_will_not_open_opens_no_live_stream_and_leaves_no_file(detector, tmp_path, monkeypatch):
    # catches: the stream opened before the input (left open, held by the server until its idle
    # timeout, when the input fails); the capture's empty file left when FLAC refuses the rate
    wide = tmp_path / "wide.wav"
    sf.write(wide, np.zeros(700_000, np.float32), 700_000)  # a rate FLAC cannot hold
    console = Console(monkeypatch)
    backend = Echo()
    server = RealtimeServer(detector, backend=backend)
    with serving(server) as url:
        assert record(tmp_path / "out", wide, base(url)) == 1
        assert settled(server, timeout=5) == 0
    assert console.err()[-1].startswith("murmur: error: ") and list((tmp_path / "out").glob("*")) == []


def test_a_stream_the_server_ends_is_said_once_and_the_recording_goes_on_whole(
    detector, tmp_path, monkeypatch
):
    # catches: the server's error or its close code not said; the recording stopped with the stream
    class Broken(Echo):
        def describe(self) -> str:
            raise RuntimeError("the model vanished")

    clip = write_clip(tmp_path / "clip.flac", 0.0, 3.0)
    console = Console(monkeypatch)
    server = RealtimeServer(detector, backend=Broken())
    with serving(server) as url:
        assert record(tmp_path / "out", clip, base(url)) == 0
        assert settled(server) == 0
    assert console.out() == []
    err = console.err()
    assert err[1:] == [f"recorded 0:03 to {whole(tmp_path / 'out')}",
                       "murmur: the server ended the live stream (close code 1011)"], err  # fmt: skip
    assert sf.info(whole(tmp_path / "out")).duration == pytest.approx(3.0, abs=0.15)


def test_remote_without_live_sends_nothing_while_recording(detector, tmp_path, monkeypatch):
    # catches: a live stream opened for `--remote` alone (`or` for `and`)
    clip = write_clip(tmp_path / "clip.flac", 0.0, 3.0)
    backend = Echo()
    console = Console(monkeypatch)
    with serving(RealtimeServer(detector, backend=backend)) as url:
        code = main(["record", "--out", str(tmp_path / "out"), "--play", str(clip), "--remote", base(url),
                     "--no-transcribe"])  # fmt: skip
    assert code == 0 and console.out() == [] and backend.heard == []
    whole(tmp_path / "out")


def test_the_servers_refusal_of_a_setting_is_said_in_its_words_on_stderr(detector, tmp_path, monkeypatch):
    # catches: the server's error event not printed, or printed without its message or to stdout
    clip = write_clip(tmp_path / "clip.flac", 0.0, 2.0)
    console = Console(monkeypatch)
    with serving(RealtimeServer(detector)) as url:
        assert record(tmp_path / "out", clip, base(url), "--language", "de") == 0
    said = [line for line in console.err() if "'de'" in line]
    assert said == ["murmur: echo does not speak 'de'"], console.lines
