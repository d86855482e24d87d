"""The fast path's repair: the broken chunks of a batch are decoded again together, in one batched
call in the other timestamp mode, and each keeps the repair when it is better (`_repaired`); the
repair reuses the encoder's output of their batch (`_Encoder`). With the real tiny.en model on
espeak speech."""

from __future__ import annotations

import numpy as np
import pytest

from engine.backends.whisper import WhisperConfig, load_model
from engine.backends.whisper_checks import LOOP_RATIO, compression_ratio, problems, uncovered
from engine.backends.whisper_decode import DecodeOptions, _batched, _Encoder, _repaired, on_recording
from engine.synth.espeak import Espeak, Voice
from engine.types import Chunk, ChunkResult, Recording, Segment, SpeechSegment, Word

RATE = 16_000
SENTENCES = (
    "Good morning everyone, thank you for coming today.",
    "The budget for the new building is ready now.",
    "We will meet again next Tuesday to sign the contract.",
)


class Clips:
    """The real batched pipeline, noting the clips each call was given."""

    def __init__(self, pipeline) -> None:
        self.pipeline = pipeline
        self.calls: list[list[tuple[float, float]]] = []

    def transcribe(self, audio, **options):
        self.calls.append([(c["start"], c["end"]) for c in options["clip_timestamps"]])
        return self.pipeline.transcribe(audio, **options)


class Encodes:
    """The real model, counting the windows its encoder was given."""

    def __init__(self, model) -> None:
        self._model = model
        self.windows = 0

    def __getattr__(self, name: str):
        return getattr(self._model, name)

    def encode(self, features):
        self.windows += len(features)
        return self._model.encode(features)


@pytest.fixture(scope="module")
def model():
    return load_model(WhisperConfig(device="cpu", cpu_threads=2))


@pytest.fixture(scope="module")
def spoken() -> tuple[Recording, list[Chunk], list[list[Word]]]:
    """The three sentences with a second of silence around each; one chunk per sentence and
    espeak's word times (absolute)."""
    pad = np.zeros(RATE, np.float32)
    parts, chunks, words, at = [pad], [], [], 1.0
    with Espeak() as espeak:
        for k, sentence in enumerate(SENTENCES):
            speech = espeak.synthesize(sentence, Voice("en-us+m3", rate=150))
            rate = speech.sample_rate
            grid = np.arange(round(len(speech.samples) * RATE / rate)) * rate / RATE
            samples = np.interp(grid, np.arange(len(speech.samples)), speech.samples).astype(np.float32)
            end = at + len(samples) / RATE
            chunks.append(Chunk(k, at - 0.5, end + 0.5, (SpeechSegment(at - 0.1, end + 0.1),)))
            words.append([Word(w.start + at, w.end + at, w.text) for w in speech.words])
            parts += [samples, pad]
            at = end + 1.0
    return Recording(np.concatenate(parts), RATE), chunks, words


def _result(chunk: Chunk, words: list[Word], text: str) -> ChunkResult:
    """A first-pass result: `words` (absolute times) in chunk time, `text` as whisper wrote it."""
    relative = tuple(Word(w.start - chunk.start, w.end - chunk.start, w.text) for w in words)
    segment = Segment(relative[0].start, relative[-1].end, text, words=relative)
    return ChunkResult(chunk, (segment,), raw_text=text)


def _spoken(result: ChunkResult) -> str:
    return " ".join(w.text for s in result.segments for w in s.words).lower()


def test_the_broken_chunks_of_a_batch_are_decoded_again_in_one_batch_and_keep_their_words(spoken, model):
    from faster_whisper import BatchedInferencePipeline

    recording, chunks, words = spoken
    loop_text = "Good morning everyone," + " thank you for coming" * 20  # whisper looping on a phrase
    spread = np.linspace(chunks[0].start + 0.5, chunks[0].end - 0.6, 60)
    loop_words = [Word(a, a + 0.1, "thank") for a in spread]
    looping = _result(chunks[0], loop_words, loop_text)
    whole = _result(chunks[1], words[1], SENTENCES[1])
    cut_short = _result(chunks[2], words[2][:3], "We will meet")  # the rest of the sentence skipped
    assert problems(looping, 1.0, None) == ("loop",) and problems(cut_short, 1.0, None) == ("gap",)
    assert problems(whole, 1.0, None) == ()

    pipeline = Clips(BatchedInferencePipeline(model=model))
    options = DecodeOptions(language="en", beam_size=1, batch_size=8, hotwords=None)
    batched = on_recording(pipeline, recording)
    fixed = _repaired(batched, [looping, whole, cut_short], [looping, cut_short], options)

    assert pipeline.calls[0] == [(chunks[0].start, chunks[0].end), (chunks[2].start, chunks[2].end)]
    first, second, third = fixed
    assert _spoken(first).startswith("good morning") and "coming today" in _spoken(first)
    assert compression_ratio(first.raw_text) <= LOOP_RATIO and first.stats.retries == 1
    assert second is whole
    assert "tuesday" in _spoken(third) and "contract" in _spoken(third) and third.stats.retries == 1
    for result in (first, third):
        times = [w.start for s in result.segments for w in s.words]
        assert times == sorted(times) and min(times) > -0.1 and max(times) < result.chunk.duration
        assert not uncovered(result.chunk, [w for s in result.segments for w in s.words], 1.0)


def test_a_repair_decodes_chunks_of_the_last_batch_again_without_encoding_their_audio_again(spoken, model):
    from faster_whisper import BatchedInferencePipeline

    recording, chunks, _ = spoken
    counted = Encodes(model)
    encoder = _Encoder(counted)
    options = DecodeOptions(language="en", beam_size=1, batch_size=8, hotwords=None)
    _batched(BatchedInferencePipeline(model=encoder), recording, [(c.start, c.end) for c in chunks], options)
    assert counted.windows == 3
    outer = [(chunks[0].start, chunks[0].end), (chunks[2].start, chunks[2].end)]
    stamped = DecodeOptions(language="en", beam_size=1, batch_size=8, hotwords=None, timestamp_tokens=True)
    again, _ = _batched(BatchedInferencePipeline(model=encoder.reusing([0, 2])), recording, outer, stamped)
    assert counted.windows == 3  # the two chunks were not encoded again
    fresh, _ = _batched(BatchedInferencePipeline(model=model), recording, outer, stamped)

    def words(found):
        return [[(w.word, round(w.start, 3)) for s in segments for w in s.words] for segments in found]

    assert words(again) == words(fresh)
    assert "budget" not in str(words(again)) and "tuesday" in str(words(again)).lower()
