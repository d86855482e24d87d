"""Text normalisation applied to references and hypotheses before any word-level metric.

`NORMALIZERS` maps a name to a factory of `Normalizer` (a callable `str -> str` with a `name`):

- ``murmur`` (default): the paper's Appendix D, implemented as the reference scorer does it, in
  this order: lowercase; delete bracketed tags *with their contents* (``[Laughter]``, ``<unk>``);
  delete the fillers ``uh um mm hmm hm mhm`` (any length: ``uhh``, ``ummm``); delete every
  character that is not a letter, digit, underscore, apostrophe or space; collapse whitespace.
  (Appendix D lists bracket stripping last, but punctuation removal would already have removed
  the brackets and left the tag's words behind, so tags go first, as in the reference code.)
  No contraction expansion, number or spelling normalisation: "oh", "ok" and "2020" stay.
- ``whisper``: OpenAI Whisper's `EnglishTextNormalizer` (contractions, numbers to digits, British
  to American spelling, fillers, bracketed spans). It comes from the `whisper-normalizer` package
  when that is installed (with its spelling map); otherwise from transformers' copy of the same
  class, which has no spelling map, so British spellings stay as they are. `name` says which.
- ``none``: whitespace collapsed, nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

_TAGS = re.compile(r"\[[^\]]*\]|<[^>]*>")
_FILLERS = re.compile(r"\b(uh+|um+|mm+|hmm+|hm+|mhm)\b")
_PUNCTUATION = re.compile(r"[^\w\s']")


class Normalizer(Protocol):
    """Maps raw transcript text to the words that are scored."""

    name: str

    def __call__(self, text: str) -> str: ...


class MurmurNormalizer:
    """The paper's normalisation (see the module docstring)."""

    name = "murmur"

    def __call__(self, text: str) -> str:
        text = _TAGS.sub(" ", text.lower())
        text = _FILLERS.sub(" ", text)
        text = _PUNCTUATION.sub("", text)
        return " ".join(text.split())


class PlainNormalizer:
    """Whitespace only: the text is scored as written."""

    name = "none"

    def __call__(self, text: str) -> str:
        return " ".join(text.split())


class WhisperNormalizer:
    """Whisper's English normaliser, from `whisper-normalizer` or, failing that, transformers."""

    def __init__(self) -> None:
        self._impl, self.name = _load_whisper()

    def __call__(self, text: str) -> str:
        return " ".join(str(self._impl(text)).split())


def _load_whisper() -> tuple[Callable[[str], Any], str]:
    try:
        from whisper_normalizer.english import EnglishTextNormalizer as Packaged
    except ImportError:
        from transformers.models.whisper.english_normalizer import EnglishTextNormalizer

        return EnglishTextNormalizer({}), "whisper (transformers copy, no British-to-American map)"
    return Packaged(), "whisper"


NORMALIZERS: dict[str, Callable[[], Normalizer]] = {
    "murmur": MurmurNormalizer,
    "whisper": WhisperNormalizer,
    "none": PlainNormalizer,
}


def get_normalizer(name: str) -> Normalizer:
    """The normaliser called `name` (one of `NORMALIZERS`)."""
    if name not in NORMALIZERS:
        raise ValueError(f"unknown normaliser {name!r}; choose one of: {', '.join(NORMALIZERS)}")
    return NORMALIZERS[name]()
