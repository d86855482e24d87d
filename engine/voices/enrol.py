"""Remembering a voice: voice samples from a transcript's speaker, or from a recording of one person.

Contract:
- `find_speaker(transcript, label)` is the speaker whose name or id is `label` (letter case
  ignored); ValueError lists the speakers there are.
- `samples_from_transcript(transcript, label, recording, embedder)`: that speaker's own speech
  (stretches others talk over cut out) as `VoiceSample`s with the recording's name and time ranges.
- `samples_from_audio(recording, speech, embedder)`: the whole recording's speech (VAD segments
  given by the caller) as one person's samples — for a clip of that person alone.
- Too little speech (under 3 s) raises ValueError: nothing is stored from it.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.types import Recording, Speaker, SpeechSegment, Transcript
from engine.voices.recogniser import VoiceEmbedder, enrolment_samples
from engine.voices.samples import VoiceSample
from engine.voices.speech import own_spans


def find_speaker(transcript: Transcript, label: str) -> Speaker:
    """The speaker called (or with the id) `label`; ValueError naming the ones there are."""
    wanted = label.strip().casefold()
    for speaker in transcript.speakers:
        if wanted in (speaker.name.casefold(), speaker.id.casefold()):
            return speaker
    there = ", ".join(repr(s.name) for s in transcript.speakers) or "none"
    raise ValueError(f"no speaker {label!r} in this transcript (its speakers: {there})")


def samples_from_transcript(
    transcript: Transcript, label: str, recording: Recording, embedder: VoiceEmbedder
) -> list[VoiceSample]:
    speaker = find_speaker(transcript, label)
    spans = own_spans(transcript.utterances, speaker.id)
    return enrolment_samples(recording, spans, _name(recording, transcript.source), embedder)


def samples_from_audio(
    recording: Recording, speech: Sequence[SpeechSegment], embedder: VoiceEmbedder
) -> list[VoiceSample]:
    spans = [(s.start, s.end) for s in speech]
    return enrolment_samples(recording, spans, _name(recording, None), embedder)


def _name(recording: Recording, fallback: str | None) -> str | None:
    return recording.source.name if recording.source is not None else fallback
