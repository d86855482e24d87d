"""One local Ray cluster (2 CPUs) for every Ray test of the run, and short recordings to spread.

Starting Ray costs seconds, so the cluster is session-scoped; each test starts its own workers
(actors) and stops them. `excerpts` are two cuts of the bundled demo meeting (two whisper
chunks each), written once per session.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[3] / "resources" / "demo" / "meeting.flac"


@pytest.fixture(scope="session")
def ray_cluster():
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def excerpts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    import soundfile as sf

    samples, rate = sf.read(DEMO, dtype="float32")
    folder = tmp_path_factory.mktemp("excerpts")
    paths = []
    for name, (start, end) in {"first": (0.0, 50.0), "second": (50.0, 95.0)}.items():
        path = folder / f"{name}.wav"
        sf.write(path, samples[int(start * rate) : int(end * rate)], rate)
        paths.append(path)
    return paths


@pytest.fixture(scope="session")
def trained_model() -> Path:
    from engine.testing.tiny import tiny_trained_model

    return tiny_trained_model()


@pytest.fixture(scope="session")
def trained_clips(trained_model: Path):
    from engine.testing.tiny import read_clips

    return read_clips(trained_model)
