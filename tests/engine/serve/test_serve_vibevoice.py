"""`murmur serve` with the trained tiny VibeVoice checkpoint on Murmur's engine with output eviction:
concurrent clients share one batch, get the transcripts of local runs, and a cancel frees rows."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.errors import Cancelled
from engine.pipeline import Pipeline, PipelineConfig
from engine.recipe import Recipe, recipe_from
from engine.remote.pipeline import RemotePipeline
from engine.speakers import SpeakerConfig
from engine.testing.tiny import read_clips, tiny_trained_model
from tests.engine.serve.conftest import server, write_flac

openai = pytest.importorskip("openai")
ENGINE = {"engine": "murmur", "eviction": "output", "window": 64, "batch_size": 8}
FLAGS = ("--backend", "vibevoice", "--device", "cpu", "--engine", "murmur", "--eviction", "output",
         "--window", "64", "--batch-size", "8", "--chunk-seconds", "10", "--diarizer", "none")  # fmt: skip
CONFIG = PipelineConfig(chunk_seconds=10, speakers=SpeakerConfig(diarizer="none"))


@pytest.fixture(scope="module")
def model() -> Path:
    return tiny_trained_model()


@pytest.fixture(scope="module")
def files(model, tmp_path_factory) -> dict[str, list[Path]]:
    """The trained clips as they are (24 kHz) and as 16 kHz FLAC (what Murmur's client sends)."""
    folder = tmp_path_factory.mktemp("clips16k")
    originals = [path for path, _ in read_clips(model)]
    resampled = []
    for path in originals:
        samples, rate = sf.read(path, dtype="float32")
        from engine.audio.resample import resample

        resampled.append(write_flac(folder / path.name, resample(samples, rate, 16000)))
    return {"original": originals, "16k": resampled}


@pytest.fixture(scope="module")
def local(model, files) -> dict[Path, str]:
    options = {"model": str(model), "device": "cpu", **ENGINE}
    pipeline = Pipeline.from_recipe(recipe_from(options, "vibevoice", Recipe("vibevoice", None, CONFIG)))
    return {path: pipeline.run(path).text for kind in files.values() for path in kind}


@pytest.fixture(scope="module")
def served(model):
    with server(*FLAGS, "--model", str(model)) as s:
        yield s


def test_eight_concurrent_clients_share_the_batch_and_get_the_local_transcripts(served, files, local):
    def through_openai(path: Path) -> str:
        api = openai.OpenAI(api_key="unused", base_url=served.url + "/v1", max_retries=0, timeout=600)
        with path.open("rb") as f:
            return api.audio.transcriptions.create(model="vibevoice", file=f).text

    def through_murmur(path: Path) -> str:
        return RemotePipeline(served.url).run(path).text

    before = served.metrics()
    work = [(through_openai, p) for p in files["original"]] + [(through_murmur, p) for p in files["16k"]]
    work = (work + work)[:8]
    with ThreadPoolExecutor(8) as pool:
        texts = [f.result() for f in [pool.submit(way, path) for way, path in work]]
    assert texts == [local[path] for _, path in work]
    assert all(texts)
    after = served.metrics()
    steps = after["murmur_decode_steps_total"] - before["murmur_decode_steps_total"]
    rows = after["murmur_decode_row_steps_total"] - before["murmur_decode_row_steps_total"]
    assert rows / steps > 1.5  # requests of different clients decoded in the same steps
    assert after["murmur_tokens_generated_total"] > before["murmur_tokens_generated_total"]


def test_streamed_lines_carry_the_models_speakers_and_equal_the_final_transcript(served, model, files, local):
    path, reference = read_clips(model)[1]
    api = openai.OpenAI(api_key="unused", base_url=served.url + "/v1", max_retries=0, timeout=600)
    with path.open("rb") as f:
        stream = api.audio.transcriptions.create(model="vibevoice", file=f, stream=True,
                                                 extra_body={"murmur_progress": "true"})  # fmt: skip
        events = [e.to_dict() for e in stream]
    deltas = [e for e in events if e["type"] == "transcript.text.delta"]
    done = events[-1]
    assert done["type"] == "transcript.text.done" and done["text"] == local[path]
    assert "".join(d["delta"] for d in deltas) == done["text"]
    assert [line["chunk_speaker"] for d in deltas for line in d["lines"]] == [r.speaker for r in reference]
    names = {r.speaker: f"Speaker {r.speaker + 1}" for r in reference}
    assert [s["speaker"] for s in done["segments"]] == [names[r.speaker] for r in reference]


def test_a_cancelled_client_frees_its_rows_while_another_finishes(served, files, local, tmp_path):
    clips = [sf.read(p, dtype="float32")[0] for p in files["original"]]
    long = write_flac(tmp_path / "long.flac", np.concatenate(clips * 20), 24000)  # ~6 min: ~40 chunks
    before = served.metrics()
    cancel = threading.Event()
    failure: list[BaseException] = []

    def run_long() -> None:
        try:
            RemotePipeline(served.url).run(long, None, cancel)
        except Cancelled as exc:
            failure.append(exc)

    runner = threading.Thread(target=run_long)
    runner.start()
    deadline = time.monotonic() + 300
    while served.metrics()["murmur_rows_active"] < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert served.metrics()["murmur_rows_active"] >= 2  # the long job holds rows now
    other = ThreadPoolExecutor(1).submit(lambda: RemotePipeline(served.url).run(files["16k"][0]).text)
    cancel.set()
    runner.join(timeout=60)
    assert failure and isinstance(failure[0], Cancelled)
    def freed() -> float:
        name = "murmur_rows_freed_cancelled_total"
        return served.metrics()[name] - before[name]

    while freed() < 1 and time.monotonic() < deadline:  # at the scheduler's next step
        time.sleep(0.05)
    after = served.metrics()
    assert freed() >= 1
    assert after["murmur_chunks_dropped_cancelled_total"] > before["murmur_chunks_dropped_cancelled_total"]
    assert after['murmur_jobs_total{state="cancelled"}'] >= 1
    assert other.result(timeout=300) == local[files["16k"][0]]
    while served.metrics()["murmur_rows_active"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert served.metrics()["murmur_rows_active"] == 0


def test_vibevoice_takes_a_prompt_as_context_and_refuses_language_temperature_and_translation(served, files):
    api = openai.OpenAI(api_key="unused", base_url=served.url + "/v1", max_retries=0, timeout=600)
    path = files["16k"][0]
    for fields, param in (({"language": "en"}, "language"), ({"temperature": 0.5}, "temperature")):
        with pytest.raises(openai.BadRequestError) as refused, path.open("rb") as f:
            api.audio.transcriptions.create(model="vibevoice", file=f, **fields)
        assert refused.value.param == param
    with pytest.raises(openai.BadRequestError) as refused, path.open("rb") as f:
        api.audio.translations.create(model="vibevoice", file=f)
    assert refused.value.param == "model"
    with path.open("rb") as f:
        prompted = api.audio.transcriptions.create(model="vibevoice", file=f, prompt="Alice, Bob",
                                                   temperature=0)  # fmt: skip
    assert prompted.text and prompted.usage.seconds > 0


def test_a_live_stream_to_a_vibevoice_server_is_refused_in_a_sentence(served):
    # catches: the session made anyway (the first speech fails inside the decoder and the socket
    # ends with 1011 and no word for the client, e.g. the app's recording)
    import json

    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    socket = connect(served.url.replace("http://", "ws://") + "/v1/realtime", open_timeout=30, legacy=True)
    events = []
    with pytest.raises(ConnectionClosed):
        while True:
            events.append(json.loads(socket.recv(timeout=30)))
    assert socket.close_code == 1003
    assert [e["error"]["code"] for e in events] == ["unsupported_model"]
    assert "16 kHz model such as whisper" in events[0]["error"]["message"]
