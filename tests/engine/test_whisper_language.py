"""The language choice for whisper: codes, auto-detection, and English-only models refusing others."""

from __future__ import annotations

import pytest

from engine.backends.whisper import WhisperConfig, english_only, language_setting


def test_english_only_models_are_recognised_by_name() -> None:
    assert english_only("tiny.en") and english_only(None) and english_only("/models/small.en")
    assert not english_only("small") and not english_only("large-v3")


def test_a_multilingual_model_takes_a_code_or_auto() -> None:
    assert language_setting("DE", "small") == "de"
    assert language_setting("auto", "large-v3") == "auto"
    assert WhisperConfig(model="small", language="auto").language == "auto"


@pytest.mark.parametrize("language", ["de", "auto"])
def test_the_bundled_english_model_refuses_other_languages_with_a_reason(language: str) -> None:
    with pytest.raises(ValueError, match="English-only"):
        WhisperConfig(language=language_setting(language, "small"))
    with pytest.raises(ValueError, match="English-only"):
        language_setting(language, None) if language == "auto" else WhisperConfig(language=language)


def test_nonsense_is_not_a_language() -> None:
    with pytest.raises(ValueError, match="code like en"):
        language_setting("english!", "small")
