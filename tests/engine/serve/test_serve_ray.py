"""`murmur serve --ray`: the same app as Ray Serve replicas (two CPU replicas of whisper tiny.en on a
local Ray cluster), behind one HTTP endpoint, used through the official `openai` client."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.pipeline import Pipeline, PipelineConfig
from engine.serve.ray_app import replica_shape
from engine.speakers import SpeakerConfig
from tests.engine.serve.conftest import server

openai = pytest.importorskip("openai")
pytest.importorskip("ray.serve")


def test_replicas_default_to_one_per_gpu_or_one_on_cpus():
    assert replica_shape({"GPU": 8.0, "CPU": 64.0}, None) == (8, 1.0)
    assert replica_shape({"CPU": 2.0}, None) == (1, 0.0)
    assert replica_shape({"CPU": 2.0}, 2) == (2, 0.0)
    assert replica_shape({"GPU": 1.0}, 2) == (2, 0.5)
    with pytest.raises(ValueError, match="at least 1"):
        replica_shape({"CPU": 2.0}, 0)


@pytest.mark.slow
def test_two_cpu_replicas_serve_the_openai_api_with_the_local_transcripts(demo_pieces):
    local = Pipeline.create("whisper", PipelineConfig(speakers=SpeakerConfig(diarizer="none")))
    expected = [local.run(p).text for p in demo_pieces[:4]]
    with server("--ray", "--replicas", "2", "--diarizer", "none", wait=600) as s:
        api = openai.OpenAI(api_key="unused", base_url=s.url + "/v1", max_retries=0, timeout=600)

        def one(path):
            with path.open("rb") as f:
                return api.audio.transcriptions.create(model="whisper-1", file=f).text

        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(one, demo_pieces[:4])) == expected
        assert json.loads(s.get("/health")[1])["model"] == "faster-whisper tiny.en"
        assert s.get("/v1/models")[0] == 200
