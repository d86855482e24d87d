"""Whether a VibeVoice-ASR checkpoint can be had, decided at once and without torch.

- `checkpoint_source(model)`: a local folder (expanded) when `model` names one or looks like a
  path, else the hub id; a file or a missing path raises `ModelLoadError`.
- `must_stay_offline(source, config)`: True when only local files may be read: offline by
  setting (HF_HUB_OFFLINE), or a hub id that is not in the Hugging Face cache while the hub
  cannot be reached within `REACH_TIMEOUT_S` (so loading never sits through the hub client's
  retries and their warnings).
- `check_available(config)`: `ModelLoadError` with the download command when the checkpoint is a
  hub id that is not cached and cannot be downloaded now.
"""

from __future__ import annotations

import socket
import urllib.parse
from pathlib import Path

from engine.backends.vibevoice.config import VibeVoiceConfig
from engine.errors import ModelLoadError

REACH_TIMEOUT_S = 3.0
LOCAL_COPY = "~/models/VibeVoice-ASR-HF"


def checkpoint_source(model: str) -> str:
    path = Path(model).expanduser()
    if path.is_dir():
        return str(path)
    if path.exists():
        raise ModelLoadError(f"'{model}' is a file; --model takes a checkpoint folder or a hub id")
    if model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model:
        raise ModelLoadError(f"there is no model folder at '{model}'")
    return model


def download_hint(model: str) -> str:
    return (
        f"Download it once (about 17 GB) with `hf download {model} --local-dir {LOCAL_COPY}` "
        f"and pass --model {LOCAL_COPY}"
    )


def is_cached(repo_id: str) -> bool:
    """Whether the Hugging Face cache holds the checkpoint's config.json."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)


def hub_reachable(timeout: float = REACH_TIMEOUT_S) -> bool:
    """Whether a connection to the Hugging Face hub (HF_ENDPOINT) opens within `timeout`."""
    try:
        from huggingface_hub import constants

        endpoint = constants.ENDPOINT
    except ImportError:
        endpoint = "https://huggingface.co"
    parts = urllib.parse.urlsplit(endpoint)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def must_stay_offline(source: str, config: VibeVoiceConfig) -> bool:
    if config.is_offline:
        return True
    return not Path(source).is_dir() and not is_cached(source) and not hub_reachable()


def check_available(config: VibeVoiceConfig) -> None:
    source = checkpoint_source(config.model)
    if Path(source).is_dir() or is_cached(source):
        return
    if must_stay_offline(source, config):
        why = "the hub may not be used (offline)" if config.is_offline else "the hub cannot be reached"
        raise ModelLoadError(
            f"the VibeVoice-ASR checkpoint '{config.model}' is not in the Hugging Face cache and {why}. "
            + download_hint(config.model)
        )
