"""`Recipe`: a system as one value. What differs from the defaults is all a recipe carries (to the
server, Ray workers and sweep files), it survives JSON nested as the configs nest, and every
mistake names where it is; `recipe_from` keeps what a base recipe chose unless a value changes it."""

from __future__ import annotations

import json

import pytest

from engine.backends.whisper import WhisperConfig
from engine.decode.config import DecodeMode
from engine.pipeline_config import PipelineConfig
from engine.recipe import Recipe, changed, config_class, recipe_from
from engine.speakers import SpeakerConfig


def test_a_recipe_hands_on_only_the_backend_settings_that_differ_from_the_defaults():
    assert Recipe().backend_options() == {}
    chosen = Recipe("whisper", WhisperConfig(beam_size=3, prompt="Kubernetes"))
    assert chosen.backend_options() == {"beam_size": 3, "prompt": "Kubernetes"}


def test_to_dict_nests_only_the_changed_fields_as_the_configs_nest():
    recipe = recipe_from({"eviction": "speech", "speakers": 2}, "vibevoice")
    assert recipe.to_dict() == {
        "backend": "vibevoice",
        "config": {"decode": {"eviction": {"policy": "speech"}}},
        "pipeline": {"speakers": {"num_speakers": 2}},
    }


def test_a_retry_schedule_read_from_json_becomes_decode_modes_again():
    retries = [{"repetition_penalty": 1.3}]
    data = {"backend": "vibevoice", "config": {"decode": {"loop": {"retries": retries}}}}
    recipe = Recipe.from_dict(json.loads(json.dumps(data)))
    assert recipe.backend_config.decode.loop.retries == (DecodeMode(repetition_penalty=1.3),)
    assert Recipe.from_dict(recipe.to_dict()) == recipe


def test_a_recipe_without_a_backend_is_whisper_with_its_settings_applied():
    recipe = Recipe.from_dict({"config": {"beam_size": 2}, "pipeline": {"chunk_seconds": 20}})
    assert (recipe.backend, recipe.backend_config.beam_size) == ("whisper", 2)
    assert recipe.pipeline.chunk_seconds == 20


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"backend": "whisper", "extra": 1, "more": 2}, "a recipe has no extra, more"),
        ({"backend": "nope"}, "unknown backend 'nope'; choose one of: whisper, vibevoice"),
        ({"backend": "vibevoice", "config": {"decode": {"eviction": {"sinks": 1}}}},
         "vibevoice.decode.eviction has no setting(s): sinks"),
        ({"pipeline": {"speakers": {"count": 2, "names": 1}}},
         "pipeline.speakers has no setting(s): count, names"),
        ({"config": {"beam_size": 0}}, "beam size must be at least 1, got 0"),
    ],
)  # fmt: skip
def test_a_recipe_that_does_not_fit_says_where(data, message):
    with pytest.raises(ValueError) as raised:
        Recipe.from_dict(data)
    assert str(raised.value) == message


@pytest.mark.parametrize("value", ["two", {"x": 1}, [1]])
def test_a_field_that_does_not_take_a_setting_says_which_config_refused_it(value):
    with pytest.raises(ValueError, match=r"^whisper: '<' not supported"):
        Recipe.from_dict({"config": {"beam_size": value}})  # the config's own check trips over it


def test_a_recipe_refuses_another_backends_config():
    refused = r"^the vibevoice backend takes a VibeVoiceConfig, got WhisperConfig\("
    with pytest.raises(ValueError, match=refused):
        Recipe("vibevoice", WhisperConfig())
    assert config_class("vibevoice")().decode.eviction.policy == "none"


def test_values_change_a_base_recipe_and_keep_the_rest_of_it():
    base = recipe_from({"speakers": 3, "eviction": "output"}, "vibevoice")
    more = recipe_from({"dtype": "float32"}, None, base)  # no backend named: the base's
    assert more.backend == "vibevoice" and more.backend_config.dtype == "float32"
    assert more.backend_config.decode.eviction.policy == "output" and more.pipeline.speakers.num_speakers == 3
    other = recipe_from({"beam_size": 2}, "whisper", base)  # another backend: its defaults, base's pipeline
    assert other.backend_config == WhisperConfig(beam_size=2)
    assert other.pipeline.speakers.num_speakers == 3
    assert recipe_from({}).backend == "whisper" and recipe_from({}, base=base) == base


def test_text_values_are_read_as_their_flag_reads_them_even_where_a_field_has_the_name():
    recipe = recipe_from({"batch_size": "4", "mode": "single", "beam_size": 2}, "whisper")
    assert recipe.backend_config.batch_size == 4 and recipe.backend_config.beam_size == 2
    assert recipe.pipeline.single_pass and not recipe_from({"mode": "chunked"}).pipeline.single_pass
    assert recipe_from({"chunk_seconds": "12.5"}).pipeline.chunk_seconds == 12.5
    with pytest.raises(ValueError, match=r"^backend 'whisper' has no option\(s\): dtype, speech_sink$"):
        recipe_from({"speech_sink": 4, "dtype": "float32"}, "whisper")


def test_changing_a_setting_a_config_lacks_names_the_config():
    with pytest.raises(ValueError, match=r"^pipeline has no setting\(s\): beam$"):
        changed(PipelineConfig(), {"beam": 1}, "pipeline")


def test_speaker_settings_land_in_the_pipeline_for_either_backend():
    for backend in ("whisper", "vibevoice"):
        speakers = recipe_from({"speakers": 2, "diarizer": "none"}, backend).pipeline.speakers
        assert speakers == SpeakerConfig(diarizer="none", num_speakers=2)
