"""The tiny model's training piece by piece, on a real tiny model, tokenizer and processor and one
two-second clip: the example, its logits, one AdamW step, the lead, the reply check and the report
(the one model trained here is trained once per process, on one short reply)."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from engine.audio.io import load_audio
from engine.backends.vibevoice.inputs import encode_latents, tokenize_chunk
from engine.backends.vibevoice.prompt import read_prompt_tokens
from engine.testing.tiny import TinyRecipe, TinyShape, new_tiny_model
from engine.testing.tiny_clips import TinyClip
from engine.testing.tiny_masks import HiddenSpeech
from engine.testing.tiny_train import (
    _example,
    _hidden_mask,
    _lead,
    _logits,
    _replies_match,
    _step,
    fit_to_targets,
)
from engine.types import Segment

RATE = 7.5  # speech tokens per second: 24 kHz over the encoders' hop of 3,200 samples
SEGMENTS = (Segment(0.6, 0.9, "Yes.", speaker=0), Segment(1.2, 1.9, "No.", speaker=1))
REPLY = "<|im_start|>assistant\n{}<|im_end|>\n<|endoftext|>"
# taught with hidden passes too (the speech before both turns' earliest start hidden from the tokens
# after both are written), so such a pass scores differently; one look-back: one mask for every pass
HIDDEN = HiddenSpeech(look_back=(0, 0), sinks=0, look_ahead=0, recent=2)
TAUGHT = TinyRecipe(hidden=HIDDEN)


@functools.cache
def _made() -> tuple[Any, Any, TinyClip]:
    """A random tiny model, its processor and a two-second clip of noise with two turns (made once)."""
    samples = (0.1 * np.random.default_rng(0).standard_normal(48_000)).astype(np.float32)
    clip = TinyClip("two", samples, SEGMENTS)
    model, processor = new_tiny_model(TinyShape(), 0, (clip.target,))
    return model, processor, clip


def _fresh() -> tuple[Any, Any, TinyClip]:
    model, processor, clip = _made()
    return copy.deepcopy(model), processor, clip


def _own_logits(model: Any, processor: Any, ex: Any, mask: torch.Tensor | None = None) -> torch.Tensor:
    """The model's own forward (encoders, projector, language model) on an example's prompt and reply,
    its audio as the processor gives it, without the acoustic noise."""
    tokens = read_prompt_tokens(processor, model.config, model.generation_config)
    values = tokenize_chunk(processor, tokens, ex.samples)[1]
    attention = None if mask is None else mask[None, None]
    return model(
        input_ids=ex.input_ids[None], input_values=values, attention_mask=attention, sample=False
    ).logits[0]


def _reply_loss(model: Any, processor: Any, ex: Any, mask: torch.Tensor | None = None) -> torch.Tensor:
    """The cross-entropy of the reply's tokens under the model's own forward."""
    scored = _own_logits(model, processor, ex, mask)[ex.prompt_length - 1 : -1]
    return torch.nn.functional.cross_entropy(scored, ex.input_ids[ex.prompt_length :])


_TAUGHT: dict[str, dict[str, torch.Tensor]] = {}


def _trained_state(folder: Path) -> dict[str, torch.Tensor]:
    """The tiny model taught the clip's reply (once per process; `folder` takes its files)."""
    if not _TAUGHT:
        model, processor, clip = _fresh()
        fit_to_targets(model, processor, [clip], folder, TAUGHT)
        _TAUGHT["state"] = copy.deepcopy(model.state_dict())
    return _TAUGHT["state"]


@pytest.fixture
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, TinyClip]:
    model, processor, clip = _fresh()
    model.load_state_dict(_trained_state(tmp_path_factory.mktemp("taught")))
    return model.eval(), processor, clip


def test_a_training_example_is_the_backends_prompt_then_the_reply_with_its_clip_written_as_the_pipeline_reads(
    tmp_path: Path,
):
    # catches: the clip or its reference not written (or under another name), the samples not read
    # back from the file; the reply without its header, end or end-of-text token; the prompt not the
    # backend's or its length wrong; the latents not the encoders' means of the clip
    model, processor, clip = _fresh()
    folder = tmp_path / "checkpoint" / "clips"
    ex = _example(model, processor, clip, folder, recent=1)
    assert sorted(p.name for p in folder.iterdir()) == ["two.flac", "two.json"]
    meta = json.loads(text := (folder / "two.json").read_text(encoding="utf-8"))
    assert text == json.dumps(meta, indent=1), "one field a line, to read and diff"
    assert meta["target"] == clip.target and meta["segments"] == [
        {"start": 0.6, "end": 0.9, "speaker": 0, "text": "Yes."},
        {"start": 1.2, "end": 1.9, "speaker": 1, "text": "No."},
    ]
    read = load_audio(folder / "two.flac", 24_000).samples
    assert np.array_equal(ex.samples, read) and np.abs(read - clip.samples).max() < 1e-4
    assert ex.target == clip.target
    tokens = read_prompt_tokens(processor, model.config, model.generation_config)
    prompt, values = tokenize_chunk(processor, tokens, read)
    assert ex.prompt_length == len(prompt) and ex.input_ids[: ex.prompt_length].equal(prompt)
    reply = processor.tokenizer.decode(ex.input_ids[ex.prompt_length :])
    assert reply == REPLY.format(clip.target)
    assert ex.input_ids[ex.prompt_length :].tolist() == processor.tokenizer(reply)["input_ids"]
    speech = int((prompt == model.config.audio_token_id).sum())
    assert speech == 15 and ex.acoustic.shape == (1, speech, 16) and ex.semantic.shape == (1, speech, 16)
    acoustic, semantic = encode_latents(model, values, 48_000)
    assert torch.allclose(ex.acoustic, acoustic, atol=1e-6)
    assert torch.allclose(ex.semantic, semantic, atol=1e-6)
    assert not ex.acoustic.requires_grad and not ex.semantic.requires_grad


@pytest.mark.parametrize("recent", [1, 2])
def test_each_reply_token_is_anchored_at_the_earliest_start_of_the_recent_segments_it_has_closed(
    tmp_path: Path, recent: int
):
    # catches: the anchors counted from the wrong character (the `}` off by one), the reply's offsets
    # not the reply's, the start times of other segments, a rate not the model's, `recent` ignored
    model, processor, clip = _fresh()
    ex = _example(model, processor, clip, tmp_path, recent=recent)
    reply_ids = ex.input_ids[ex.prompt_length :].tolist()
    assert len(ex.anchor_of) == len(reply_ids)
    expected = []
    for i in range(len(reply_ids)):
        closed = processor.tokenizer.decode(reply_ids[: i + 1]).count("}")  # the turns' text has no braces
        starts = [s.start for s in SEGMENTS[max(closed - recent, 0) : closed]]
        expected.append(int(min(starts) * RATE) if closed >= recent else -1)
    assert ex.anchor_of == expected
    # one turn closed: anchor 4 (0.6 s) for one recent segment; both: 9 (1.2 s), or 4 for two
    assert sorted(set(expected)) == ([-1, 4, 9] if recent == 1 else [-1, 4])


def test_an_examples_logits_are_the_models_own_forward_on_its_prompt_and_reply_and_a_mask_hides_as_given(
    tmp_path: Path,
):
    # catches: the audio features not written over the audio tokens (or the wrong ones), the mask
    # dropped or given in another shape, the language model's head skipped
    model, processor, clip = _fresh()
    ex = _example(model, processor, clip, tmp_path, recent=1)
    with torch.no_grad():
        logits = _logits(model, ex)
        assert logits.shape == (len(ex.input_ids), len(processor.tokenizer))
        assert torch.allclose(logits, _own_logits(model, processor, ex), atol=1e-5)
        speech = (ex.input_ids == model.config.audio_token_id).nonzero()[:, 0]
        length = len(ex.input_ids)
        causal = torch.ones(length, length, dtype=torch.bool).tril()
        mask = torch.zeros(length, length).masked_fill(~causal, -1e9)
        mask[ex.prompt_length :, speech[1:]] = float("-inf")  # the reply sees only the first speech token
        masked = _logits(model, ex, mask)
        assert torch.allclose(masked, _own_logits(model, processor, ex, mask), atol=1e-5)
    assert torch.allclose(masked[: ex.prompt_length], logits[: ex.prompt_length], atol=1e-5)
    assert not torch.allclose(masked[ex.prompt_length :], logits[ex.prompt_length :], atol=1e-3)


def test_the_lead_is_the_smallest_gap_of_a_right_token_over_its_runner_up_and_zero_where_one_is_wrong():
    # catches: the runner-up taken from the wrong column, the gap summed or reversed, the largest gap
    # returned, a wrong token counted as leading
    logits = torch.tensor([[5.0, 2.0, -1.0], [0.5, -3.0, 2.0], [1.0, 4.0, 3.5]])
    assert _lead(logits, torch.tensor([0, 2, 1])) == pytest.approx(0.5)
    assert _lead(logits[:2], torch.tensor([0, 2])) == pytest.approx(1.5)
    assert _lead(logits, torch.tensor([0, 2, 2])) == 0.0  # the last row's target is the runner-up
    assert _lead(-logits[:1], torch.tensor([2])) == pytest.approx(3.0)  # negative logits


def test_two_steps_are_two_adamw_steps_on_the_replys_cross_entropy_and_lower_it(tmp_path: Path):
    # catches: the loss scored on the prompt or off by one position, the gradients of the first step
    # kept into the second (no `zero_grad`), no optimiser step, the loss or lead not the reply's
    model, processor, clip = _fresh()
    ex = _example(model, processor, clip, tmp_path, recent=1)
    reference = copy.deepcopy(model)
    learning = [p for n, p in model.named_parameters() if "tokenizer_encoder" not in n]
    taught = [p for n, p in reference.named_parameters() if "tokenizer_encoder" not in n]
    optimizer, by_hand = torch.optim.AdamW(learning, lr=3e-3), torch.optim.AdamW(taught, lr=3e-3)
    labels = ex.input_ids[ex.prompt_length :]
    losses = []
    for _ in range(2):
        loss, lead = _step(model, optimizer, [ex], None)
        by_hand.zero_grad()
        scored = _own_logits(reference, processor, ex)[ex.prompt_length - 1 : -1]
        expected = torch.nn.functional.cross_entropy(scored, labels)
        expected.backward()
        by_hand.step()
        assert loss == pytest.approx(float(expected.detach()), rel=1e-5)
        assert lead == _lead(scored.detach(), labels) == 0.0  # a random model gets some token wrong
        losses.append(loss)
        for mine, theirs in zip(learning, taught, strict=True):
            assert torch.allclose(mine, theirs, atol=1e-5)
    assert losses[1] < losses[0]


def test_a_step_with_hidden_speech_adds_a_pass_of_each_clip_under_its_drawn_mask(tmp_path: Path):
    # catches: the hidden pass left out, its loss not added, the mask not the one drawn for the pass
    model, processor, clip = _fresh()
    ex = _example(model, processor, clip, tmp_path, recent=1)
    hidden = HiddenSpeech(look_back=(0, 2), sinks=0, look_ahead=0, recent=1)
    torch.manual_seed(5)
    mask = _hidden_mask(model, ex, hidden)
    with torch.no_grad():
        plain, masked = _reply_loss(model, processor, ex), _reply_loss(model, processor, ex, mask)
    assert abs(float(masked - plain)) > 5e-5, "the mask changes the loss"
    torch.manual_seed(5)
    loss, lead = _step(model, torch.optim.AdamW(model.parameters(), lr=0.0), [ex], hidden)
    assert loss == pytest.approx(float(plain + masked), abs=2e-5)
    assert lead == 0.0


def test_a_hidden_pass_hides_from_each_reply_token_only_speech_before_the_drawn_look_back(tmp_path: Path):
    # catches: the mask built over the text tokens instead of the speech (`!=` for `==` on the audio
    # token), a look-back drawn outside its range (`randint` without its low end, or up to
    # `high + 1`, or a range that cannot be drawn from when low == high)
    model, processor, clip = _fresh()
    example = _example(model, processor, clip, tmp_path, recent=1)
    speech = (example.input_ids == model.config.audio_token_id).nonzero()[:, 0]
    length, start = len(example.input_ids), example.prompt_length
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    hidden = HiddenSpeech(look_back=(3, 3), sinks=1, look_ahead=2, recent=1)
    torch.manual_seed(0)
    for _ in range(8):  # each pass draws its look-back: from (3, 3) always 3
        sees = _hidden_mask(model, example, hidden) == 0
        assert sees[:start].equal(causal[:start]), "the prompt sees as it always does"
        gone = causal & ~sees
        assert not (sees & ~causal).any()
        assert not gone[:, ~torch.isin(torch.arange(length), speech)].any(), "only speech is hidden"
        for row, anchor in enumerate(example.anchor_of, start):
            hides = gone[row, speech].nonzero()[:, 0].tolist()
            assert hides == [i for i in range(1, anchor - 3) if i < len(speech) - 2], (row, anchor)
    assert max(example.anchor_of) > 5, "some reply token is far enough on to hide speech"


def test_a_model_that_already_replies_with_its_target_is_checked_and_reported_after_one_step(
    trained: tuple[Any, Any, TinyClip], tmp_path: Path
):
    # catches: the loop not stopping when the replies match (`continue` or `return` for `break`),
    # the report's fields, steps, seconds or loss not the run's, the hidden passes left out or anchored
    # on one recent segment instead of the recipe's, the model left in training mode
    model, processor, clip = trained
    before = copy.deepcopy(model)
    started = time.perf_counter()
    again = dataclasses.replace(TAUGHT, margin=0.0, learning_rate=1e-6)  # checked at once, barely moved
    report = fit_to_targets(model, processor, [clip], tmp_path, again)
    elapsed = time.perf_counter() - started
    assert sorted(report) == ["loss", "seconds", "steps"]
    assert report["steps"] == 1, report
    assert isinstance(report["seconds"], float) and report["seconds"] == round(report["seconds"], 2)
    assert 0 <= report["seconds"] <= round(elapsed, 2)
    ex = _example(before, processor, clip, tmp_path / "again", recent=2)
    mask = _hidden_mask(before, ex, HIDDEN)
    with torch.no_grad():
        plain, masked = _reply_loss(before, processor, ex), _reply_loss(before, processor, ex, mask)
    assert report["loss"] == pytest.approx(float(plain + masked), rel=1e-5)
    assert abs(float(masked - plain)) > 1e-4 * float(plain), "the hidden pass scores differently"
    assert not model.training
    assert _replies_match(model, processor, [ex])


def test_a_fit_given_one_step_takes_one_adamw_step_of_its_rate_on_all_but_the_audio_encoders(tmp_path: Path):
    # catches: the encoders' parameters given to AdamW instead of the others (`in` for `not in`), the
    # recipe's learning rate not used, a step more than allowed (`<=`) or not counted (`steps = 1`:
    # training on until the targets are learned), the error's message changed
    model, processor, clip = _fresh()
    with pytest.raises(RuntimeError, match=r"^the tiny model did not learn its targets in 2 steps$"):
        fit_to_targets(copy.deepcopy(model), processor, [clip], tmp_path, TinyRecipe(max_steps=2))
    before = copy.deepcopy(model.state_dict())
    with pytest.raises(RuntimeError, match=r"^the tiny model did not learn its targets in 1 steps$"):
        fit_to_targets(model, processor, [clip], tmp_path, TinyRecipe(max_steps=1, learning_rate=0.01))
    moved = {n: float((p - before[n]).abs().max()) for n, p in model.state_dict().items()}
    encoders = [n for n in moved if "tokenizer_encoder" in n]
    assert encoders and all(moved[n] == 0.0 for n in encoders)
    learning = [moved[n] for n in moved if "tokenizer_encoder" not in n]
    assert 0.009 < max(learning) < 0.0102, "Adam's first step moves a weight by about its rate"


def test_the_replies_match_only_when_every_clips_greedy_reply_is_its_target(
    trained: tuple[Any, Any, TinyClip], tmp_path: Path
):
    # catches: a differing reply passing the check, only the first clip checked, the reply compared
    # with its special tokens or without the role, room for fewer tokens than the target has
    model, processor, clip = trained
    ex = _example(model, processor, clip, tmp_path, recent=1)
    assert _replies_match(model, processor, [ex])
    other = dataclasses.replace(ex, target=ex.target.replace("No.", "No!"))
    assert not _replies_match(model, processor, [other])
    assert not _replies_match(model, processor, [ex, other])
    assert not _replies_match(_fresh()[0], processor, [ex]), "an untrained model replies otherwise"
