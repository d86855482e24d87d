"""A request's decode choices on the VibeVoice backend the server shares between jobs (no model
is loaded: the choices change settings only; their effect on decoding is tested through a real
server in test_serve_vibevoice.py)."""

from __future__ import annotations

import pytest

from engine.serve.decoding import Refused, job_backend
from engine.types import DecodeChoices


def test_vibevoice_takes_the_prompt_as_its_context_in_the_shared_batch_and_refuses_the_rest():
    from engine.backends.vibevoice.backend import VibeVoiceBackend
    from engine.backends.vibevoice.config import VibeVoiceConfig
    from engine.serve.shared import SharedBackend

    inner = VibeVoiceBackend(VibeVoiceConfig(model="/models/VibeVoice-ASR", context=("Kubernetes",)))
    shared = SharedBackend(inner, shared=None)  # type: ignore[arg-type]
    job = job_backend(shared, DecodeChoices(prompt="Alice, Bob", temperature=0.0))
    assert job.backend.config.context_text == "Alice, Bob" and job._ids is shared._ids  # one numbering
    assert shared.backend.config.context_text == "Kubernetes"  # the server's own setting is untouched
    assert job_backend(shared, DecodeChoices(temperature=0.0)) is shared
    for choices, param in ((DecodeChoices(language="en"), "language"),
                           (DecodeChoices(temperature=0.3), "temperature"),
                           (DecodeChoices(task="translate"), "model")):  # fmt: skip
        with pytest.raises(Refused) as refused:
            job_backend(shared, choices)
        assert refused.value.param == param
