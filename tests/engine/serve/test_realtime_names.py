"""Known voices named during a live stream: a `murmur serve --voices LIBRARY` subprocess names the
remembered people among a live session's provisional speakers once they have said enough, through
the realtime client the CLI and the app use; strangers keep their provisional label."""

from __future__ import annotations

import time

import pytest

from engine.remote.realtime_client import RealtimeClient, RemoteLine
from tests.engine.live.test_live_names import remembered, tuesday
from tests.engine.serve.conftest import server

RATE = 16000


@pytest.mark.slow  # a minute of audio at a microphone's pace (the app's recording test covers the path)
def test_a_live_stream_names_remembered_voices_and_leaves_strangers_unnamed(tmp_path):
    # catches: the server's --voices not reaching live sessions (nobody named live), a name sent
    # for the wrong provisional speaker, or a stranger named
    library = remembered(tmp_path / "voices.sqlite")
    meeting = tuesday()
    lines: list[RemoteLine] = []
    names: dict[str, str | None] = {}
    errors: list[str] = []
    with server("--voices", str(library.path)) as served:
        client = RealtimeClient(served.url, None, lines.append, errors.append, speakers=True,
                                on_name=lambda sid, name, score: names.__setitem__(sid, name))  # fmt: skip
        client.start()
        samples = meeting.recording().samples
        began = time.monotonic()
        for k, start in enumerate(range(0, len(samples), RATE // 10)):  # 100 ms frames, as captured
            client.send(samples[start : start + RATE // 10])
            time.sleep(max(0.0, began + (k + 1) / 10 - time.monotonic()))
        assert client.finish(timeout=300), (client.close_code, errors, served.printed()[-3000:])
    assert errors == []
    person_of: dict[str, list[str]] = {}
    for line in lines:  # who really spoke each live line (the meeting's own turns)
        turn = max(meeting.turns, key=lambda t: min(t.end, line.end) - max(t.start, line.start))
        person_of.setdefault(line.speaker or "", []).append(turn.speaker)
    named = {sid: name for sid, name in names.items() if name is not None}
    assert sorted(named.values()) == ["Bob", "Carol"]
    for sid, name in named.items():  # the provisional speaker named is the one who mostly spoke as them
        spoken = person_of[sid]
        assert max(set(spoken), key=spoken.count) == name.lower()
