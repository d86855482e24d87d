"""KV-cache eviction policies, chosen by name, and the paper's settings as named presets.

A policy turns a request into a `RowLayout` (see `layout.py` for the exact sets):

- `none`: everything stays;
- `output`: the prompt, the first `n_sink` and the last `output_window` generated tokens
  (StreamingLLM on the output, the paper's Algorithm 1);
- `speech`: the authors' speech eviction (`SpeechWindowLayer`): `speech_sink` pinned speech tokens,
  nothing dropped for `delay` steps, then `speech_rate` tokens per step dropped from the front of
  the rest until only the last `speech_window` remain; outputs stay;
- `both`: `output` and `speech` together (the authors' `speech_stream`);
- `speech-follow`: a window of `speech_window` speech tokens following the audio at `speech_rate`
  tokens per step after `delay` steps (brings tokens back in; needs a copy of the speech KV);
- `speech-anchor`: speech sinks plus everything from `look_back` tokens before the anchor, the
  minimum Start of the last few plausible transcript segments (`anchor.py`: guarded against
  overlapping turns, wrong, inverted and out-of-chunk times; read with a one-step lag); the last
  `look_ahead` tokens always stay; nothing is evicted before the anchor has enough segments. Rows
  are sized for an anchor four `turn_tokens` segments behind the text (`layout.anchor_trail`).

`speech_cap` says what caps the `front` rule's drop (`speech`, `both`): `row` (default), each row's
own span (`S − sink − window`); `batch-min`, the authors' batching: the shortest speech span among
the rows a row joins (those decoding and those admitted with it), fixed when the row is first
admitted, so in a batch admitted at once every row drops what the shortest drops (their Table 4).

`layers` gives per-layer ranges for the speech rule, read as the authors' `--speech_layer_config`
reads them: a range's values override the policy's, and a layer outside every range follows the
policy's own settings (so it evicts). Two extensions: a range without `end` runs to the last layer
(the authors' code needs `end`), and `"keep": true` makes a range keep all its speech (the authors
have no such key). A keep range saves no memory: the store gives every layer the slots of the
layer group that holds most.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from engine.decode.layout import RowLayout, SpeechRule, anchor_trail

KEEP = SpeechRule()
SPEECH_CAPS = ("row", "batch-min")  # what caps `front`'s drop: each row's span, the batch's shortest

_RANGE_KEYS = {  # our names and the authors' names of a per-layer range's keys
    "start": "start", "end": "end", "sink": "sink", "window": "window", "delay": "delay",
    "rate": "rate", "speech_sink": "sink", "speech_window": "window", "slide_delay": "delay",
    "slide_rate": "rate", "keep": "keep",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class LayerRange:
    """Layers [start, end) (end None: to the last) with their own speech settings (None: the policy's)."""

    start: int
    end: int | None = None
    sink: int | None = None
    window: int | None = None
    delay: int | None = None
    rate: float | None = None
    keep: bool = False  # keep all speech in these layers (ours; the authors' ranges always evict)

    def __post_init__(self) -> None:
        if self.start < 0 or (self.end is not None and self.end <= self.start):
            raise ValueError(f"a layer range needs 0 <= start < end, got [{self.start}, {self.end})")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LayerRange:
        unknown = sorted(set(data) - set(_RANGE_KEYS))
        if unknown:
            raise ValueError(f"unknown layer range key(s) {unknown}; allowed: {sorted(_RANGE_KEYS)}")
        if not isinstance(data.get("start"), int):
            raise ValueError("a layer range needs an integer 'start'")
        return cls(**{_RANGE_KEYS[k]: v for k, v in data.items()})

    def covers(self, layer: int) -> bool:
        return self.start <= layer and (self.end is None or layer < self.end)


def parse_layer_ranges(text: str | Sequence[Any]) -> tuple[LayerRange, ...]:
    """Ranges from a JSON list of objects, e.g. `[{"start": 0, "end": 14, "window": 1024}]`
    (given as text, as the decoded list, or as `LayerRange`s)."""
    if isinstance(text, str):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"layer ranges are not valid JSON: {exc}") from exc
    else:
        data = list(text)
    if all(isinstance(d, LayerRange) for d in data):
        data = [{k: v for k, v in asdict(d).items() if v is not None} for d in data]
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise ValueError("layer ranges must be a JSON list of objects")
    ranges = tuple(sorted((LayerRange.from_dict(d) for d in data), key=lambda r: r.start))
    for a, b in itertools.pairwise(ranges):
        if a.end is None or a.end > b.start:
            raise ValueError(f"layer ranges [{a.start}, {a.end}) and [{b.start}, {b.end}) overlap")
    return ranges


@dataclass(frozen=True, slots=True)
class EvictionConfig:
    policy: str = "none"  # a key of POLICIES
    n_sink: int = 4  # output sink tokens (output, both)
    output_window: int = 1024  # recent generated tokens kept (output, both)
    speech_sink: int = 32  # pinned speech tokens (speech policies; the authors' default)
    speech_window: int = 512  # speech: last tokens always kept; speech-follow: window size
    delay: int = 32  # decode steps before speech eviction starts (the authors' default)
    speech_rate: float = 8.0  # speech tokens dropped (or moved) per step after the delay
    look_back: int = 225  # speech-anchor: tokens kept before the anchor (30 s of VibeVoice speech)
    look_ahead: int = 256  # speech-anchor: last speech tokens always kept
    word_rate: float = 1.5  # speech-anchor: fewest words per second of speech the times may imply (0: off)
    turn_tokens: int = 28  # speech-anchor: speech tokens of a segment, for planning rows (3.75 s)
    layers: tuple[LayerRange, ...] = ()  # per-layer speech settings (or their JSON); () → all alike
    speech_cap: str = "row"  # one of SPEECH_CAPS: what caps `front`'s drop (speech, both)

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"unknown eviction policy {self.policy!r}; choose one of: {', '.join(POLICIES)}")
        if self.speech_cap not in SPEECH_CAPS:
            raise ValueError(
                f"unknown speech cap {self.speech_cap!r}; choose one of: {', '.join(SPEECH_CAPS)}"
            )
        counts = self.n_sink, self.delay, self.speech_sink, self.look_back, self.look_ahead
        if min(*counts, self.turn_tokens) < 0:
            raise ValueError("sink counts, delay, margins and the turn must not be negative")
        if self.output_window < 1 or self.speech_window < 0:
            raise ValueError("the output window must hold at least one token, the speech window zero or more")
        if not self.speech_rate >= 0:
            raise ValueError("the speech rate must not be negative")
        if not 0 <= self.word_rate < float("inf"):
            raise ValueError("the word rate must be a finite number of words per second, 0 or more")
        object.__setattr__(self, "layers", parse_layer_ranges(self.layers))  # text or dicts → LayerRange

    @classmethod
    def from_options(
        cls, policy: str | None = None, window: int | None = None, **changes: Any
    ) -> EvictionConfig:
        """Policy or preset `policy` (None: "none") with `changes` (see `changed`)."""
        return cls.named(policy).changed(window, **changes)

    @classmethod
    def named(cls, policy: str | None) -> EvictionConfig:
        """The preset or the policy (with its own defaults) called `policy`; None: "none"."""
        name = policy or "none"
        if name not in PRESETS and name not in POLICIES:
            choices = ", ".join([*POLICIES, *PRESETS])
            raise ValueError(f"unknown eviction policy {name!r}; choose one of: {choices}")
        return PRESETS.get(name) or _DEFAULTS.get(name) or cls(policy=name)

    def changed(self, window: int | None = None, **changes: Any) -> EvictionConfig:
        """This config with `changes` to its fields (None keeps a value). `window` is the policy's
        one window: the output window of `output`, the speech window of the speech policies; `both`
        has two, so it refuses `window`."""
        if window is not None and self.policy == "both":
            raise ValueError(
                "`both` has an output and a speech window: give --output-window and/or --speech-window "
                "instead of --window"
            )
        if window is not None:
            changes |= {"output_window" if self.policy == "output" else "speech_window": window}
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @property
    def evicts(self) -> bool:
        return self.policy != "none"

    def describe(self) -> str:
        """The policy and the settings it uses, e.g. `speech (sink 32, window 1024, delay 512, rate 8)`."""
        speech = f"speech sink {self.speech_sink}, window {self.speech_window}, delay {self.delay}"
        speech += f", rate {self.speech_rate:g}"
        output = f"sink {self.n_sink}, window {self.output_window}"
        anchor = f"look-back {self.look_back}, look-ahead {self.look_ahead}, turn {self.turn_tokens}"
        details = {"output": output, "both": f"{output}; {speech}", "speech-anchor": anchor}
        detail = details.get(self.policy, speech if self.policy != "none" else "")
        ranges = f"; {len(self.layers)} layer range(s)" if self.layers else ""
        ranges += "; batch-minimum cap" if self.batch_min else ""
        return f"{self.policy} ({detail}{ranges})" if detail else self.policy

    @property
    def batch_min(self) -> bool:
        """Whether `front` drops are capped by the batch's shortest speech span (`speech`, `both`;
        the other policies have no such cap, and the setting changes nothing there)."""
        return self.speech_cap == "batch-min" and self.policy in ("speech", "both")

    @property
    def evicts_speech(self) -> bool:
        return self.policy not in ("none", "output")

    @property
    def anchored(self) -> bool:
        return self.policy == "speech-anchor"


class EvictionPolicy(Protocol):
    name: str

    def layout(
        self,
        prompt_len: int,
        speech_span: tuple[int, int],
        max_new_tokens: int,
        layers: int,
        batch_span: int = 0,
    ) -> RowLayout:
        """What one request keeps at each step, for a model with `layers` layers; `batch_span` is the
        shortest speech span of its batch (used by the batch-minimum cap; 0: none)."""
        ...


@dataclass(frozen=True, slots=True)
class _Policy:
    name: str
    rule: SpeechRule = KEEP
    n_sink: int = 0
    output_window: int = 0  # 0: outputs are kept
    ranges: tuple[LayerRange, ...] = ()
    batch_min: bool = False  # `front` caps come from the batch's shortest speech span

    def layout(
        self,
        prompt_len: int,
        speech_span: tuple[int, int],
        max_new_tokens: int,
        layers: int,
        batch_span: int = 0,
    ) -> RowLayout:
        per_layer = [self._rule(layer) for layer in range(layers)]
        if self.batch_min and batch_span:
            per_layer = [replace(r, span=batch_span) if r.kind == "front" else r for r in per_layer]
        rules = tuple(dict.fromkeys(per_layer))  # distinct rules in first-seen order
        start, end = speech_span
        return RowLayout(
            prompt_len=prompt_len,
            speech_start=start,
            speech_len=end - start,
            max_new_tokens=max_new_tokens,
            n_sink=self.n_sink if self.output_window else 0,
            out_window=self.output_window,
            rules=rules,
            layer_group=tuple(rules.index(r) for r in per_layer),
        )

    def _rule(self, layer: int) -> SpeechRule:
        if not self.ranges or not self.rule.evicts:
            return self.rule
        found = next((r for r in self.ranges if r.covers(layer)), None)
        if found is None:  # the authors' fallback: the policy's own settings
            return self.rule
        if found.keep:
            return SpeechRule()
        given = {"sink": found.sink, "window": found.window, "delay": found.delay, "rate": found.rate}
        return replace(self.rule, **{k: v for k, v in given.items() if v is not None})


def speech_rule(c: EvictionConfig, kind: str) -> SpeechRule:
    """The speech rule of kind `kind` (front, follow, anchor) that `c`'s settings make; an anchored
    one is planned to trail the text by `anchor_trail(c.turn_tokens)` speech tokens at least."""
    lag = anchor_trail(c.turn_tokens) if kind == "anchor" else 0
    return SpeechRule(
        kind, c.speech_sink, c.speech_window, c.delay, c.speech_rate, c.look_back, c.look_ahead, lag=lag
    )


POLICIES: dict[str, Callable[[EvictionConfig], EvictionPolicy]] = {
    "none": lambda c: _Policy("none"),
    "output": lambda c: _Policy("output", n_sink=c.n_sink, output_window=c.output_window),
    "speech": lambda c: _Policy("speech", speech_rule(c, "front"), ranges=c.layers, batch_min=c.batch_min),
    "both": lambda c: _Policy(
        "both", speech_rule(c, "front"), c.n_sink, c.output_window, c.layers, c.batch_min
    ),
    "speech-follow": lambda c: _Policy("speech-follow", speech_rule(c, "follow"), ranges=c.layers),
    "speech-anchor": lambda c: _Policy("speech-anchor", speech_rule(c, "anchor"), ranges=c.layers),
}

# Defaults of a policy named without a preset, where they differ from EvictionConfig's.
_DEFAULTS: dict[str, EvictionConfig] = {
    "speech-follow": EvictionConfig(
        "speech-follow", speech_sink=0, speech_window=1024, delay=512, speech_rate=1.0
    ),
}


# The paper's Table 2 settings (300 s chunks; the authors' speech sink 32 and rate 8, "d512" read
# as the delay). Every other paper row is a policy plus parameters: Table 3 is `output` with
# `--sink 4 --window W`, Table 4 is `speech` with `--delay S --window W` (and `--speech-sink S
# --delay 32` for the sinks reading); `murmur bench` names them (`engine.evaluation.systems`).
PRESETS: dict[str, EvictionConfig] = {
    "paper-output": EvictionConfig("output", n_sink=4, output_window=1024),  # Table 2 "s4 w1024"
    "paper-speech": EvictionConfig("speech", speech_sink=32, speech_window=1024, delay=512),  # "d512 w1024"
    "paper-both": EvictionConfig(
        "both", n_sink=4, output_window=1024, speech_sink=32, speech_window=1024, delay=512
    ),
}


def make_policy(config: EvictionConfig) -> EvictionPolicy:
    return POLICIES[config.policy](config)
