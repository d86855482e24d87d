"""The pyannote.audio path, wired end to end with randomly initialised models (no hub, no weights):
the real SpeakerDiarization pipeline code runs on the in-memory waveform; only its output is noise."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engine.errors import Cancelled, ModelLoadError
from engine.speakers import SpeakerConfig, create_diarizer
from engine.speakers.diarization import SpeakerCount
from engine.speakers.pyannote import PyannoteConfig, PyannoteDiarizer, load_pipeline
from engine.types import Recording


@pytest.fixture(scope="module")
def random_pipeline():
    import torch
    from pyannote.audio.core.plda import PLDA
    from pyannote.audio.core.task import Problem, Resolution, Specifications
    from pyannote.audio.models.embedding import XVectorSincNet
    from pyannote.audio.models.segmentation import PyanNet
    from pyannote.audio.pipelines import SpeakerDiarization

    torch.manual_seed(0)
    segmentation = PyanNet(sincnet={"stride": 10})
    segmentation.specifications = Specifications(
        problem=Problem.MONO_LABEL_CLASSIFICATION, resolution=Resolution.FRAME, duration=2.0,
        classes=["a", "b", "c"], powerset_max_classes=2, permutation_invariant=True,
    )  # fmt: skip
    segmentation.build()
    pipeline = SpeakerDiarization(
        segmentation=segmentation, embedding=XVectorSincNet(), plda=PLDA.__new__(PLDA),
        clustering="AgglomerativeClustering", embedding_batch_size=32, segmentation_batch_size=32,
        segmentation_step=0.5,
    )  # fmt: skip
    pipeline.instantiate({
        "segmentation": {"min_duration_off": 0.0},
        "clustering": {"method": "centroid", "min_cluster_size": 1, "threshold": 0.5},
    })  # fmt: skip
    return pipeline


@pytest.fixture(scope="module")
def clip(demo) -> Recording:
    return Recording(demo.slice(0.0, 8.0).copy(), 16000)


def test_a_pipeline_object_runs_on_the_waveform_in_memory(random_pipeline, clip):
    seen: list[tuple[float, float]] = []
    diarization = PyannoteDiarizer(pipeline=random_pipeline).diarize(
        clip, [], SpeakerCount(exact=2), lambda done, total: seen.append((done, total))
    )
    assert diarization.turns, "random weights still produce some turns"
    assert len(diarization.speakers) <= 2
    assert all(0.0 <= t.start < t.end <= clip.duration for t in diarization.turns)
    assert seen and seen[-1] == (4.0, 4) and all(total == 4 for _, total in seen)


def test_a_24khz_recording_is_resampled_before_pyannote_sees_it(random_pipeline, clip):
    from engine.audio.resample import resample

    recording = Recording(resample(clip.samples, 16000, 24000), 24000)
    diarization = PyannoteDiarizer(pipeline=random_pipeline).diarize(recording, [], SpeakerCount(maximum=3))
    assert diarization.turns and max(t.end for t in diarization.turns) <= recording.duration + 1e-6


def test_cancel_stops_pyannote_between_batches(random_pipeline, clip):
    cancel = threading.Event()
    with pytest.raises(Cancelled):
        PyannoteDiarizer(pipeline=random_pipeline).diarize(clip, [], None, lambda d, t: cancel.set(), cancel)


def test_a_missing_local_pipeline_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_pipeline(PyannoteConfig(pipeline=str(tmp_path / "nowhere")))


def test_a_local_folder_without_a_pipeline_config_is_a_load_error(tmp_path):
    with pytest.raises(ModelLoadError, match="could not load the pyannote pipeline"):
        load_pipeline(PyannoteConfig(pipeline=str(tmp_path)))


def test_a_hub_pipeline_without_a_token_says_how_to_get_one(monkeypatch):
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="token"):
        load_pipeline(PyannoteConfig())


def test_the_diarizer_is_chosen_by_name():
    assert create_diarizer(SpeakerConfig(diarizer="none")) is None
    assert create_diarizer(SpeakerConfig(diarizer="pyannote", pyannote="/models/diar")).name == "pyannote"
    assert create_diarizer(SpeakerConfig()).name == "embedded"
    with pytest.raises(ValueError, match="unknown diarizer"):
        SpeakerConfig(diarizer="magic")
    with pytest.raises(ValueError, match="exceeds"):
        SpeakerConfig(min_speakers=5, max_speakers=2)
    assert np.isclose(SpeakerConfig(num_speakers=3).count.exact, 3)
