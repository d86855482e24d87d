"""VibeVoice settings: bad values refused with a clear message, budgets per chunk duration."""

from __future__ import annotations

import pytest

from engine.backends import backend_config
from engine.backends.vibevoice.budget import BUDGET_RULES, token_budget
from engine.backends.vibevoice.config import VibeVoiceConfig, engine_changes
from engine.decode.config import EngineConfig, LoopGuardConfig
from engine.decode.eviction import EvictionConfig


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"dtype": "float8"}, "dtype must be one of"),
        ({"attention": "flash"}, "attention must be one of"),
        ({"engine": "vllm"}, "decode engine must be one of"),
        ({"budget": "lots"}, "token budget must be one of"),
        ({"acoustic": "noisy"}, "acoustic mode must be one of"),
        ({"batch_size": 0}, "batch size must be at least 1"),
        ({"device": "tpu"}, "device must be one of"),
        ({"min_new_tokens": 500, "max_new_tokens": 100}, "token budget bounds"),
        ({"encoder_segment_seconds": 0.1}, "encoder segments must last"),
    ],
)
def test_bad_settings_are_refused_with_a_message_naming_them(options, message):
    with pytest.raises(ValueError, match=message):
        VibeVoiceConfig(**options)


def test_the_backend_registry_builds_the_config_from_cli_options():
    config = backend_config("vibevoice", model="/m/vv", dtype="bfloat16", batch_size=None, context=("Ada",))
    assert config.model == "/m/vv" and config.dtype == "bfloat16"
    assert config.batch_size is None  # unset: Murmur's engine sizes the batch from the KV memory budget
    with pytest.raises(ValueError, match="no option"):
        backend_config("vibevoice", beam_size=4)


def test_context_terms_are_stated_comma_separated_and_accept_a_plain_string():
    assert VibeVoiceConfig(context=("Alice", " Kubernetes ", "")).context_text == "Alice, Kubernetes"
    assert VibeVoiceConfig(context="Alice, Bob").context == ("Alice", " Bob")  # type: ignore[arg-type]
    assert VibeVoiceConfig().context_text is None


def test_offline_follows_hf_hub_offline_unless_set(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert VibeVoiceConfig().is_offline
    assert not VibeVoiceConfig(offline=False).is_offline
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert not VibeVoiceConfig().is_offline
    assert VibeVoiceConfig(offline=True).is_offline


def test_the_default_budget_is_the_papers_rule_above_the_floor():
    config = VibeVoiceConfig()
    assert token_budget(300.0, config) == 32768 * 300 // 3600 == 2730
    assert token_budget(3600.0, config) == 32768
    assert token_budget(10.0, config) == 256  # the floor keeps short chunks decodable
    assert token_budget(7200.0, config) == 32768  # never past the ceiling


def test_budget_rules_are_chosen_by_name_and_clamped():
    assert token_budget(300.0, VibeVoiceConfig(budget="murmur")) == 3600
    assert token_budget(1.0, VibeVoiceConfig(budget="max")) == 32768
    assert token_budget(300.0, VibeVoiceConfig(max_new_tokens=1000)) == 1000
    assert token_budget(1.0, VibeVoiceConfig(min_new_tokens=1)) == 9
    assert set(BUDGET_RULES) == {"paper", "murmur", "max"}


def test_decode_engine_options_go_only_with_murmurs_engine():
    speech = EngineConfig(eviction=EvictionConfig.from_options("paper-speech", window=1538))
    assert engine_changes(VibeVoiceConfig(engine="murmur", decode=speech).decode) == ["eviction"]
    assert engine_changes(VibeVoiceConfig().decode) == []
    with pytest.raises(ValueError, match=r"^eviction only applies to Murmur's decode engine"):
        VibeVoiceConfig(engine="hf", decode=speech)
    both = EngineConfig(eviction=EvictionConfig.named("both"), repetition_penalty=1.1)
    with pytest.raises(ValueError, match=r"^eviction, repetition_penalty only apply to Murmur's decode"):
        VibeVoiceConfig(engine="hf", decode=both)


def test_murmurs_engine_is_the_default_and_loop_recovery_can_be_turned_off_for_either_decoder():
    assert VibeVoiceConfig().engine == "murmur"
    assert VibeVoiceConfig().decoder_options["loop"] == LoopGuardConfig()
    assert VibeVoiceConfig(loop_recovery=False).decoder_options["loop"].enabled is False
    assert VibeVoiceConfig(engine="hf", loop_recovery=False).decoder_options["loops"].enabled is False
    assert VibeVoiceConfig(engine="hf").decoder_options == {}
    anchor = EvictionConfig.from_options("speech-anchor", look_back=32, layers='[{"start": 2}]')
    options = VibeVoiceConfig(decode=EngineConfig(eviction=anchor)).decoder_options
    assert options["eviction"].look_back == 32 and options["eviction"].layers[0].start == 2
    assert "max_batch" not in options  # the backend's batch_size decides it
