"""Cancel points inside one batched whisper decode.

CTranslate2 cannot interrupt `Whisper.generate` (it takes no callback), so a cancel can only take
effect between its calls. faster-whisper's `BatchedInferencePipeline` decodes a batch in three
calls on its model: `encode` (the audio windows), `generate` (the text) and, for word times,
`add_word_timestamps` (an alignment pass). `Cancellable(model, cancel)` is the model as the pipeline
sees it, raising `Cancelled` after the encoder and before the alignment when `cancel` is set, so a
cancel that comes during a batch's encoder skips its generate. Everything else is the model's own.
"""

from __future__ import annotations

import threading
from typing import Any

from engine.backends.base import check_cancel


class Cancellable:
    def __init__(self, model: Any, cancel: threading.Event | None) -> None:
        self._model, self._cancel = model, cancel

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def encode(self, features: Any) -> Any:
        encoded = self._model.encode(features)
        check_cancel(self._cancel)
        return encoded

    def add_word_timestamps(self, *args: Any, **kwargs: Any) -> Any:
        check_cancel(self._cancel)
        return self._model.add_word_timestamps(*args, **kwargs)
