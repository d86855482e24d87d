"""Known voices named while recording: a provisional speaker gets a person's name once it has said enough.

Contract of `LiveNames(centroids, embed, config)`:
- `centroids` are the voice library's people (name → unit centroid of one embedding model:
  `engine.voices.recogniser.comparable`); `embed(samples)` embeds 16 kHz audio with that same
  model (the GE2E encoder the provisional speakers use).
- `hear(speaker, samples)` adds a segment of a provisional speaker's speech (at most
  `MAX_SECONDS` of it are kept per speaker). A speaker is compared once it has `min_seconds` of
  speech, then again each time its speech has doubled (until `MAX_SECONDS`): one embedding of all
  its kept speech, the way a finished recording's speakers are embedded
  (`engine.voices.recogniser`), so the calibrated threshold and margin mean the same here. The
  match is `match_speakers` over every speaker embedded so far (one person names one speaker),
  and a name stands only when the newer half of the speaker's speech, embedded alone, clears the
  same bar for the same person: online clustering can merge two voices into one live speaker,
  and such a speaker is named after neither (precision first).
- It returns the names that changed: speaker → `Match`, or None when a speaker lost its name to
  a closer one. `names` holds the current ones. Nothing here reads the library or decodes.
`NamedSpeakers(speakers, names, on_name)` is an `OnlineSpeakers` that also feeds `LiveNames` and
calls `on_name(speaker, match_or_None)` for each change, on the live transcriber's thread;
`live_speakers(library, on_name)` makes one for a voice library (plain `OnlineSpeakers` without).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from engine.live.online_speakers import OnlineSpeakers
from engine.live.session import speaker_encoder
from engine.voices.matching import Match, MatchConfig, match_speakers
from engine.voices.recogniser import GE2E, VoiceSource, comparable

RATE = 16000
MAX_SECONDS = 120.0  # of a speaker's speech kept and embedded (as the recogniser's limit)

Embed = Callable[[np.ndarray], np.ndarray | None]
NameFn = Callable[[str, Match | None], None]


class LiveNames:
    def __init__(self, centroids: Mapping[str, np.ndarray], embed: Embed,
                 config: MatchConfig | None = None) -> None:  # fmt: skip
        self.centroids, self.embed = dict(centroids), embed
        self.config = config or MatchConfig()
        self.names: dict[str, Match] = {}
        self._audio: dict[str, list[np.ndarray]] = {}
        self._kept: dict[str, int] = {}  # samples kept per speaker
        self._due: dict[str, int] = {}  # samples at which a speaker is embedded next
        self._vectors: dict[str, np.ndarray] = {}  # each speaker's kept speech, embedded
        self._recent: dict[str, np.ndarray] = {}  # the newer half of it

    def hear(self, speaker: str, samples: np.ndarray) -> dict[str, Match | None]:
        limit = round(MAX_SECONDS * RATE)
        kept = self._kept.get(speaker, 0)
        if kept < limit:
            piece = samples[: limit - kept]
            self._audio.setdefault(speaker, []).append(piece)
            kept = self._kept[speaker] = kept + len(piece)
        due = self._due.get(speaker, round(self.config.min_seconds * RATE))
        if not self.centroids or kept < due or due > limit:
            return {}
        self._due[speaker] = min(2 * kept, limit) if kept < limit else limit + 1  # last: at the limit
        audio = np.concatenate(self._audio[speaker])
        whole, recent = self.embed(audio), self.embed(audio[len(audio) // 2 :])
        if whole is None or recent is None:
            return {}
        self._vectors[speaker], self._recent[speaker] = whole, recent
        return self._rematch()

    def _agrees(self, speaker: str, name: str) -> bool:
        """The speaker's newer half alone is as clearly the same person: a live speaker that has
        merged two voices (online clustering can) is not named after either."""
        alone = match_speakers({speaker: self._recent[speaker]}, self.centroids, self.config)
        return speaker in alone and alone[speaker].name == name

    def _rematch(self) -> dict[str, Match | None]:
        found = match_speakers(self._vectors, self.centroids, self.config)
        found = {s: m for s, m in found.items() if self._agrees(s, m.name)}
        changed: dict[str, Match | None] = {}
        for speaker in set(found) | set(self.names):
            old, new = self.names.get(speaker), found.get(speaker)
            if (old and old.name) != (new and new.name):
                changed[speaker] = new
        self.names = found
        return changed


class NamedSpeakers:
    """Provisional speakers that are also named from the library (see the module contract)."""

    def __init__(self, speakers: OnlineSpeakers, names: LiveNames, on_name: NameFn) -> None:
        self.speakers, self.names, self.on_name = speakers, names, on_name

    def load(self) -> None:
        self.speakers.load()

    def assign(self, samples: np.ndarray) -> str:
        speaker = self.speakers.assign(samples)
        for who, match in sorted(self.names.hear(speaker, samples).items()):
            self.on_name(who, match)
        return speaker


def live_speakers(library: VoiceSource | None, on_name: NameFn) -> OnlineSpeakers | NamedSpeakers:
    """Provisional speakers for live lines, named from `library` when there is one with voices of
    this encoder's model (a library that cannot be read raises `VoiceLibraryError`)."""
    speakers = OnlineSpeakers(speaker_encoder())
    if library is None or not library.exists():
        return speakers
    centroids = comparable(library.voices(), GE2E, library)
    embed = speakers.encoder.embed_audio  # type: ignore[attr-defined]  # the GE2E encoder
    return NamedSpeakers(speakers, LiveNames(centroids, embed), on_name)
