"""The timestamp reader behind `speech-anchor` eviction: End times → speech indices, as tokens arrive."""

from __future__ import annotations

from engine.backends.vibevoice.anchor import speech_anchor, speech_token_rate
from engine.testing.tiny import read_clips

REPLY = (
    '<|im_start|>assistant\n[{"Start":0,"End":1.5,"Speaker":0,"Content":"Good morning, {all} of you."},'
    '{"Start":1.5,"End":3.25,"Speaker":1,"Content":"Ünïcode and \\"quotes\\" }] [laughs]"},'
    '{"Start":3.25,"Speaker":0,"Content":"No end time."},{"Start":9,"End":12.5,"Speaker":0,"Content":"cut'
)


def test_the_speech_token_rate_comes_from_the_checkpoint(loaded):
    assert speech_token_rate(loaded.model.config) == 24000 / 3200 == 7.5


def test_the_reader_reports_each_complete_segments_times_token_by_token(loaded):
    tokenizer = loaded.processor.tokenizer
    ids = tokenizer(REPLY, add_special_tokens=False)["input_ids"]
    tracker = speech_anchor(tokenizer, 7.5)()
    seen = [tracker.feed([token]) for token in ids]
    closed = [(i, s) for i, found in enumerate(seen) for s in found]
    text = [tokenizer.decode(ids[: i + 1]) for i in range(len(ids))]
    first = next(i for i, t in enumerate(text) if 'of you."}' in t)
    second = next(i for i, t in enumerate(text) if '[laughs]"}' in t)
    third = next(i for i, t in enumerate(text) if 'No end time."}' in t)
    assert [i for i, _ in closed] == [first, second, third]  # a brace inside the text is no segment end
    times = [(0.0, 1.5 * 7.5), (1.5 * 7.5, 3.25 * 7.5), (3.25 * 7.5, None)]
    assert [(s.start, s.end) for _, s in closed] == times
    assert all(not found for found in seen[third + 1 :])  # a cut-off segment reports nothing


def test_speech_anchor_loses_no_transcribed_speech_where_front_eviction_loses_some(trained_model):
    from engine.audio.io import load_audio
    from engine.backends import build_backend
    from engine.recipe import recipe_from
    from engine.types import Chunk

    audio, _ = read_clips(trained_model)[0]
    recording = load_audio(audio, 24000)
    chunk = Chunk(0, 0.0, recording.duration)
    options = {"model": str(trained_model), "device": "cpu", "engine": "murmur"}
    def backend(**more):  # through the option table, as the command line goes
        return build_backend("vibevoice", recipe_from({**options, **more}, "vibevoice").backend_config)

    anchored = backend(eviction="speech-anchor", look_back=4, look_ahead=2)
    front = backend(eviction="speech", speech_sink=2, window=4, delay=1)
    (safe,) = anchored.transcribe(recording, [chunk])
    (lossy,) = front.transcribe(recording, [chunk])
    assert safe.segments and safe.stats.speech_lost_seconds == 0.0
    # a two-segment reply never gives the anchor its three Starts: nothing is evicted
    assert safe.stats.kv_kept_last == 1.0
    assert lossy.stats.speech_lost_seconds is not None and lossy.stats.speech_lost_seconds > 1.0
    assert lossy.stats.speech_lost_fraction is not None and 0 < lossy.stats.speech_lost_fraction < 1


def test_kv_plan_reads_a_saved_checkpoints_shape_and_speech_rate(random_checkpoint, loaded, capsys):
    from engine.cli import main
    from engine.decode.plan import shape_from_config

    shape = shape_from_config(random_checkpoint)
    text = loaded.model.config.text_config
    assert (shape.layers, shape.kv_heads) == (text.num_hidden_layers, text.num_key_value_heads)
    assert shape.speech_rate == speech_token_rate(loaded.model.config)
    assert (
        main(["kv-plan", "--model", str(random_checkpoint), "--chunk-seconds", "10", "--output-tokens", "50"])
        == 0
    )
    assert "(75 speech at 7.5/s)" in capsys.readouterr().out


def test_the_segment_cut_off_at_the_end_is_read_as_the_transcript_keeps_it(loaded):
    tokenizer = loaded.processor.tokenizer
    tracker = speech_anchor(tokenizer, 7.5)()
    tracker.feed(tokenizer(REPLY, add_special_tokens=False)["input_ids"])
    found = tracker.open()
    assert found is not None and (found.start, found.end) == (9 * 7.5, 12.5 * 7.5)  # it has a word
    wordless = speech_anchor(tokenizer, 7.5)()
    wordless.feed(
        tokenizer(
            '[{"Start":0,"End":1.5,"Speaker":0,"Content":"Hi."},{"Start":9,"End":1', add_special_tokens=False
        )["input_ids"]
    )
    assert wordless.open() is None  # the transcript keeps nothing of it
