"""KV-cache eviction policies, chosen by name, and the paper's settings as named presets.

A policy decides, per request, which KV entries a decode step may see; it does so by giving the
request a `RowLayout` (see `layout.py`), whose rings are overwritten in place as decoding advances:

- `none`: everything stays;
- `output`: the prompt, the first `n_sink` generated tokens and the last `output_window` generated
  tokens (StreamingLLM on the output, as in the paper's Algorithm 1);
- `speech`: a window of `speech_window` speech tokens that stays at the start of the audio for
  `delay` steps, then advances `speech_rate` tokens per step (Algorithm 2); text stays;
- `both`: the two together.

`RowLayout.visible` states the same sets on the plain timeline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from engine.decode.layout import RowLayout


@dataclass(frozen=True, slots=True)
class EvictionConfig:
    policy: str = "none"  # a key of POLICIES
    n_sink: int = 4  # output sink tokens (output, both)
    output_window: int = 1024  # recent generated tokens kept (output, both)
    speech_window: int = 1024  # speech tokens kept (speech, both)
    delay: int = 512  # decode steps before the speech window starts to move (speech, both)
    speech_rate: float = 1.0  # speech tokens the window advances per decode step (speech, both)

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"unknown eviction policy {self.policy!r}; choose one of: {', '.join(POLICIES)}")
        if self.n_sink < 0 or self.delay < 0:
            raise ValueError("sink count and delay must not be negative")
        if self.output_window < 1 or self.speech_window < 1:
            raise ValueError("eviction windows must hold at least one token")
        if not self.speech_rate >= 0:
            raise ValueError("the speech window rate must not be negative")

    @classmethod
    def from_options(
        cls,
        policy: str | None = None,
        sink: int | None = None,
        window: int | None = None,
        delay: int | None = None,
        rate: float | None = None,
    ) -> EvictionConfig:
        """A config from command-line style options; `window` sets whichever windows the policy has.

        A policy name may also be a preset (`PRESETS`); options then override the preset.
        """
        name = policy or "none"
        if name not in PRESETS and name not in POLICIES:
            choices = ", ".join([*POLICIES, *PRESETS])
            raise ValueError(f"unknown eviction policy {name!r}; choose one of: {choices}")
        base = PRESETS.get(name) or cls(policy=name)
        return base.overridden(sink, window, delay, rate)

    def overridden(
        self,
        sink: int | None = None,
        window: int | None = None,
        delay: int | None = None,
        rate: float | None = None,
    ) -> EvictionConfig:
        """This config with the given options changed (None keeps a value); `window` sets both windows."""
        given = {"n_sink": sink, "delay": delay, "speech_rate": rate}
        given |= {"output_window": window, "speech_window": window}
        return replace(self, **{k: v for k, v in given.items() if v is not None})

    @property
    def evicts(self) -> bool:
        return self.policy != "none"


class EvictionPolicy(Protocol):
    name: str

    def layout(self, prompt_len: int, speech_span: tuple[int, int], max_new_tokens: int) -> RowLayout:
        """The compact slot map of one request."""
        ...


@dataclass(frozen=True, slots=True)
class _Policy:
    name: str
    n_sink: int = 0
    output_window: int = 0  # 0: outputs are kept
    speech_window: int | None = None  # None: speech is kept
    delay: int = 0
    speech_rate: float = 0.0

    def layout(self, prompt_len: int, speech_span: tuple[int, int], max_new_tokens: int) -> RowLayout:
        start, end = speech_span
        speech_len = end - start
        window = speech_len if self.speech_window is None else min(self.speech_window, speech_len)
        return RowLayout(
            prompt_len=prompt_len,
            speech_start=start,
            speech_len=speech_len,
            speech_window=window,
            delay=self.delay,
            rate=self.speech_rate,
            n_sink=self.n_sink if self.output_window else 0,
            out_window=self.output_window,
            max_new_tokens=max_new_tokens,
        )


def _none(c: EvictionConfig) -> EvictionPolicy:
    return _Policy("none")


def _output(c: EvictionConfig) -> EvictionPolicy:
    return _Policy("output", n_sink=c.n_sink, output_window=c.output_window)


def _speech(c: EvictionConfig) -> EvictionPolicy:
    return _Policy("speech", speech_window=c.speech_window, delay=c.delay, speech_rate=c.speech_rate)


def _both(c: EvictionConfig) -> EvictionPolicy:
    return _Policy(
        "both",
        n_sink=c.n_sink,
        output_window=c.output_window,
        speech_window=c.speech_window,
        delay=c.delay,
        speech_rate=c.speech_rate,
    )


POLICIES: dict[str, Callable[[EvictionConfig], EvictionPolicy]] = {
    "none": _none,
    "output": _output,
    "speech": _speech,
    "both": _both,
}

# The settings of the paper's Table 2 and Table 4 (300 s chunks).
PRESETS: dict[str, EvictionConfig] = {
    "paper-output": EvictionConfig("output", n_sink=4, output_window=1024),
    "paper-speech": EvictionConfig("speech", speech_window=1024, delay=512),
    "paper-speech-1538": EvictionConfig("speech", speech_window=1538, delay=512),
    "paper-both": EvictionConfig("both", n_sink=4, output_window=1024, speech_window=1024, delay=512),
}


def make_policy(config: EvictionConfig) -> EvictionPolicy:
    return POLICIES[config.policy](config)
