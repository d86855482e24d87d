"""Known speakers through OpenAI's own client against a real `murmur serve` (whisper tiny.en, the
embedded diarizer): reference clips cut from the demo meeting's first minute name those people in
its second part, in `diarized_json` and in a diarized stream; a bad reference is a 400 naming it.

The demo's reference (resources/demo/meeting.stm): after 70 s only carol, bob and dave speak;
alice does not, so her clip must name nobody."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.engine.serve.conftest import ROOT, server, write_flac

openai = pytest.importorskip("openai")
RATE = 16000
START = 70.0  # the transcribed part: the demo from here to its end
THREE = {"num_speakers": "3"}  # left to itself the diarizer hears bob and dave as one voice here
CLIPS = {"bob": (8.704, 14.526), "carol": (4.700, 7.838), "alice": (51.745, 58.711)}  # from the first part


def stm_turns() -> list[tuple[str, float, float]]:
    rows = (line.split(None, 5) for line in (ROOT / "resources/demo/meeting.stm").read_text().splitlines())
    return [(r[2], float(r[3]), float(r[4])) for r in rows]


def data_url(samples: np.ndarray, mime: str = "audio/wav") -> str:
    buffer = io.BytesIO()
    sf.write(buffer, samples, RATE, format="WAV", subtype="PCM_16")
    return f"data:{mime};base64," + base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture(scope="module")
def demo() -> np.ndarray:
    from engine.audio.io import load_audio

    return load_audio(ROOT / "resources" / "demo" / "meeting.flac", RATE).samples


@pytest.fixture(scope="module")
def second_part(demo, tmp_path_factory) -> Path:
    return write_flac(tmp_path_factory.mktemp("part") / "part.flac", demo[int(START * RATE) :])


@pytest.fixture(scope="module")
def references(demo) -> dict[str, str]:
    return {name: data_url(demo[int(a * RATE) : int(b * RATE)]) for name, (a, b) in CLIPS.items()}


@pytest.fixture(scope="module")
def served():
    with server() as s:
        yield s


def transcribe(url: str, path: Path, **fields):
    client = openai.OpenAI(api_key="unused", base_url=url + "/v1", max_retries=0, timeout=300)
    with path.open("rb") as f:
        return client.audio.transcriptions.create(model="gpt-4o-transcribe-diarize", file=f, **fields)


def known(references: dict[str, str]) -> dict[str, list[str]]:
    return {"known_speaker_names": list(references), "known_speaker_references": list(references.values())}


def who_spoke(start: float, end: float) -> str:
    """The person the demo's reference has talking longest in [start, end] of the second part."""
    overlap: dict[str, float] = {}
    for person, a, b in stm_turns():
        shared = min(end + START, b) - max(start + START, a)
        if shared > 0:
            overlap[person] = overlap.get(person, 0.0) + shared
    return max(overlap, key=overlap.__getitem__)


def test_references_name_their_speakers_in_diarized_json_and_the_others_get_letters(
    served, second_part, references
):
    answer = transcribe(served.url, second_part, response_format="diarized_json", **known(references),
                        extra_body=THREE)
    assert type(answer).__name__ == "TranscriptionDiarized" and answer.task == "transcribe"
    assert answer.usage.type == "duration" and answer.usage.seconds == pytest.approx(answer.duration, abs=1)
    segments = answer.segments
    assert {s.type for s in segments} == {"transcript.text.segment"}
    assert [s.id for s in segments] == [f"seg_{i}" for i in range(len(segments))]
    assert " ".join(s.text for s in segments) == answer.text
    heard = {}
    for s in segments:
        heard.setdefault(who_spoke(s.start, s.end), set()).add(s.speaker)
    assert heard["bob"] == {"bob"} and heard["carol"] == {"carol"}
    assert heard["dave"] == {"A"}  # no reference for him: OpenAI's letters
    assert "alice" not in {s.speaker for s in segments}  # her clip matches nobody here


def test_a_diarized_stream_sends_each_segment_with_its_speaker_before_done(served, second_part, references):
    events = list(transcribe(served.url, second_part, response_format="diarized_json", stream=True,
                             extra_body=THREE, **known(references)))  # fmt: skip
    kinds = [e.type for e in events]
    assert kinds[-1] == "transcript.text.done" and "transcript.text.delta" in kinds
    segments = [e for e in events if e.type == "transcript.text.segment"]
    assert segments and kinds.index("transcript.text.segment") > kinds.index("transcript.text.delta")
    assert "".join(e.delta for e in events if e.type == "transcript.text.delta") == events[-1].text
    assert " ".join(s.text for s in segments) == events[-1].text
    assert {"bob", "carol", "A"} <= {s.speaker for s in segments}


def test_without_references_diarized_json_labels_every_speaker_with_letters(served, demo, tmp_path):
    piece = write_flac(tmp_path / "piece.flac", demo[: 30 * RATE])
    answer = transcribe(served.url, piece, response_format="diarized_json")
    labels = list(dict.fromkeys(s.speaker for s in answer.segments))
    assert labels == ["A", "B", "C", "D"][: len(labels)] and len(labels) >= 2


def refusal(call) -> openai.BadRequestError:
    with pytest.raises(openai.BadRequestError) as refused:
        call()
    return refused.value


@pytest.mark.parametrize(("names", "clip", "param", "words"), [
    (["bob"], "https://example.com/bob.wav", "known_speaker_references", "data URL"),
    (["bob"], "data:audio/wav;base64,%%%notbase64", "known_speaker_references", "base64"),
    (["bob"], "data:audio/wav;base64," + base64.b64encode(b"not audio at all").decode(),
     "known_speaker_references", "could not be decoded"),
    (["bob"], "short", "known_speaker_references", "1.00 s long"),
    (["bob"], "long", "known_speaker_references", "11.00 s long"),
    (["bob", "carol"], "tone", "known_speaker_names", "one name per reference"),
    (["Speaker 2"], "tone", "known_speaker_names", "unnamed speaker"),
])  # fmt: skip
def test_a_bad_reference_is_a_400_naming_the_parameter(served, demo_pieces, names, clip, param, words):
    sound = {"short": 1.0, "long": 11.0, "tone": 3.0}
    if clip in sound:
        clip = data_url(0.1 * np.sin(np.arange(int(sound[clip] * RATE)) * 0.05).astype(np.float32))
    fields = {"known_speaker_names": names, "known_speaker_references": [clip]}
    piece = demo_pieces[0]
    refused = refusal(lambda: transcribe(served.url, piece, response_format="diarized_json", **fields))
    assert refused.param == param and words in refused.message


def test_more_than_four_references_or_diarization_off_is_a_400(served, demo_pieces, references):
    tone = data_url(0.1 * np.sin(np.arange(3 * RATE) * 0.05).astype(np.float32))
    five = {"known_speaker_names": list("vwxyz"), "known_speaker_references": [tone] * 5}
    assert refusal(lambda: transcribe(served.url, demo_pieces[0], **five)).param == "known_speaker_references"
    off = refusal(lambda: transcribe(served.url, demo_pieces[0], extra_body={"diarize": "false"},
                                     **known(references)))  # fmt: skip
    assert off.param == "known_speaker_references" and "diarization" in off.message
    flat = refusal(lambda: transcribe(served.url, demo_pieces[0], response_format="diarized_json",
                                      extra_body={"diarize": "false"}))  # fmt: skip
    assert flat.param == "response_format"
