"""Loading checkpoints: a saved folder loads like the real one; every bad source is a clear error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from engine.backends.vibevoice.config import VibeVoiceConfig
from engine.backends.vibevoice.loading import load_model, resolve_dtype
from engine.backends.vibevoice.prompt import read_prompt_tokens
from engine.errors import ModelLoadError


def test_a_saved_checkpoint_loads_on_the_cpu_in_float32_with_its_own_token_ids(loaded):
    assert loaded.device.type == "cpu" and loaded.dtype == torch.float32
    assert not loaded.model.training
    tokenizer = loaded.processor.tokenizer
    audio_id = tokenizer.convert_tokens_to_ids("<|box_start|>")
    assert loaded.tokens.audio_id == audio_id == loaded.model.config.audio_token_id
    assert loaded.tokens.audio_id < 10  # the tiny tokenizer's id, read from it (Qwen's would be 151648)
    ends = {tokenizer.convert_tokens_to_ids(t) for t in ("<|endoftext|>", "<|im_end|>")}
    assert set(loaded.tokens.eos_ids) == ends


def test_dtype_and_attention_can_be_chosen(random_checkpoint):
    config = VibeVoiceConfig(model=str(random_checkpoint), device="cpu", dtype="bfloat16", attention="eager")
    model = load_model(config).model
    assert model.dtype == torch.bfloat16
    assert model.model.language_model.config._attn_implementation == "eager"


def test_auto_dtype_is_bfloat16_on_cuda_and_float32_on_the_cpu():
    assert resolve_dtype("auto", torch.device("cuda")) == torch.bfloat16
    assert resolve_dtype("auto", torch.device("cpu")) == torch.float32
    assert resolve_dtype("float16", torch.device("cpu")) == torch.float16


def test_a_missing_folder_is_named(tmp_path):
    with pytest.raises(ModelLoadError, match="no model folder"):
        load_model(VibeVoiceConfig(model=str(tmp_path / "nowhere" / "model"), device="cpu"))


def test_a_hub_model_not_downloaded_says_how_to_get_it_without_touching_the_network():
    config = VibeVoiceConfig(model="example-org/VibeVoice-ASR-HF-missing", device="cpu", offline=True)
    with pytest.raises(ModelLoadError, match="hf download example-org/VibeVoice-ASR-HF-missing"):
        load_model(config)


def test_the_original_vibevoice_format_is_refused_with_the_hf_name(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "vibevoice"}))
    with pytest.raises(ModelLoadError, match="microsoft/VibeVoice-ASR-HF"):
        load_model(VibeVoiceConfig(model=str(tmp_path), device="cpu"))


def test_a_folder_without_weights_is_called_incomplete(random_checkpoint, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(random_checkpoint, broken)
    for weights in broken.glob("*.safetensors"):
        weights.unlink()
    with pytest.raises(ModelLoadError, match="not a complete VibeVoice-ASR checkpoint folder"):
        load_model(VibeVoiceConfig(model=str(broken), device="cpu"))


def test_a_tokenizer_and_model_that_disagree_are_refused(loaded):
    class OtherConfig:
        audio_token_id = 151648

    with pytest.raises(ModelLoadError, match="disagree on the audio token id"):
        read_prompt_tokens(loaded.processor, OtherConfig())


def test_flash_attention_without_its_package_is_a_clear_error(random_checkpoint):
    config = VibeVoiceConfig(model=str(random_checkpoint), device="cpu", attention="flash_attention_2")
    with pytest.raises(ModelLoadError, match="flash-attn"):
        load_model(config)


def test_a_file_instead_of_a_folder_is_named(random_checkpoint):
    with pytest.raises(ModelLoadError, match="is a file"):
        load_model(VibeVoiceConfig(model=str(Path(random_checkpoint) / "config.json"), device="cpu"))


def test_a_folder_of_another_model_or_of_nothing_is_not_a_checkpoint(tmp_path):
    with pytest.raises(ModelLoadError, match=r"has no config\.json"):
        load_model(VibeVoiceConfig(model=str(tmp_path), device="cpu"))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    with pytest.raises(ModelLoadError, match="names model type 'qwen2'"):
        load_model(VibeVoiceConfig(model=str(tmp_path), device="cpu"))
