"""Known voices named while recording: a live speaker is named from the library once it has said
enough (with the real GE2E encoder on espeak-ng meetings where the same voices meet again),
strangers never are, and the embedding is redone only as a speaker's speech doubles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.live.live_names import MAX_SECONDS, LiveNames, live_speakers
from engine.synth import ROSTER, MeetingConfig, SyntheticMeeting, build_meeting
from engine.voices import VoiceEmbedder, VoiceLibrary, VoiceLibraryError
from engine.voices.enrol import samples_from_transcript
from engine.voices.matching import Match, MatchConfig
from tests.engine.voices.test_recogniser import as_found, who

RATE = 16000
PEOPLE = {p.id: p for p in ROSTER}
UNIT = {"alice": np.array([1.0, 0.0, 0.0]), "bob": np.array([0.0, 1.0, 0.0])}


def meeting(seed: int, *ids: str) -> SyntheticMeeting:
    cast = tuple(PEOPLE[i] for i in ids)
    return build_meeting(MeetingConfig(len(cast), 60.0, seed, cast=cast, session_id=f"m{seed}"))


class Counted:
    """A stand-in encoder for the rules that do not depend on voices: the audio's first sample
    picks the person (1.0 → alice, 2.0 → bob); every call and its audio length are kept."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        self.calls.append(len(samples))
        return UNIT["alice"] if samples[0] == 1.0 else UNIT["bob"]

    @property
    def lengths(self) -> list[int]:
        """The speech each comparison embedded whole (each also embeds its newer half)."""
        assert self.calls[1::2] == [n - n // 2 for n in self.calls[::2]]
        return self.calls[::2]


def speech(seconds: float, who: float = 1.0) -> np.ndarray:
    return np.full(round(seconds * RATE), who, np.float32)


def test_a_speaker_is_compared_once_it_has_said_enough_then_only_as_its_speech_doubles():
    # catches: comparing before `min_seconds` (`<` for `<=`), embedding on every segment (a
    # forgotten update of when it is due: each line waits for an embedding), or never again
    embed = Counted()
    names = LiveNames(UNIT, embed, MatchConfig(min_seconds=4.0))
    assert names.hear("S1", speech(3.9)) == {} and embed.lengths == []
    changed = names.hear("S1", speech(0.1))
    assert changed["S1"].name == "alice" and embed.lengths == [4 * RATE]
    for _ in range(3):
        names.hear("S1", speech(1.0))  # 5, 6, 7 s: not yet twice 4 s
    assert len(embed.lengths) == 1
    names.hear("S1", speech(1.0))  # 8 s
    assert embed.lengths == [4 * RATE, 8 * RATE]


def test_at_most_two_minutes_of_a_speaker_are_kept_and_embedded_once_more_at_the_limit():
    # catches: the kept audio growing without bound over a long meeting, or the last embedding
    # (at the limit) skipped because twice the speech is past it
    embed = Counted()
    names = LiveNames(UNIT, embed, MatchConfig(min_seconds=4.0))
    for _ in range(30):
        names.hear("S1", speech(7.0))  # the 18th piece crosses the limit: only its first second is kept
    assert max(embed.lengths) == MAX_SECONDS * RATE
    assert embed.lengths == [7 * RATE, 14 * RATE, 28 * RATE, 56 * RATE, 112 * RATE, 120 * RATE]


def test_a_name_moves_to_the_closer_speaker_and_the_other_is_told_it_lost_it():
    # catches: two live speakers both shown as the same person, or the loser never told
    vectors = iter([np.array([0.96, 0.28, 0.0])] * 2 + [np.array([1.0, 0.0, 0.0])] * 2)  # whole, newer half
    names = LiveNames(
        UNIT, lambda samples: next(vectors), MatchConfig(min_seconds=1.0, threshold=0.9, margin=0.1)
    )
    first = names.hear("S1", speech(1.0))
    assert first["S1"].name == "alice"
    second = names.hear("S2", speech(1.0))
    assert second["S2"].name == "alice" and second["S1"] is None
    assert set(names.names) == {"S2"}


def test_without_known_voices_nothing_is_embedded():
    # catches: every live speaker embedded twice (once for naming) when there is nobody to name
    embed = Counted()
    names = LiveNames({}, embed, MatchConfig(min_seconds=1.0))
    assert names.hear("S1", speech(10.0)) == {} and embed.calls == []


def remembered(path: Path) -> VoiceLibrary:
    """Bob and Carol, remembered from Monday's meeting (`tuesday()` has them, and a stranger: voices
    that live speakers tell apart, whose whole-speech similarity is below 0.7)."""
    monday = meeting(11, "alice", "bob", "carol")
    library = VoiceLibrary(path)
    found, embedder = as_found(monday), VoiceEmbedder()
    for person in ("bob", "carol"):
        label = found.speaker_name(who(monday, person))
        library.add(person.capitalize(), samples_from_transcript(found, label, monday.recording(), embedder))
    return library


def tuesday() -> SyntheticMeeting:
    return meeting(12, "carol", "erin", "bob")


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> VoiceLibrary:
    return remembered(tmp_path_factory.mktemp("voices") / "voices.sqlite")


def test_live_speakers_are_named_after_known_voices_and_strangers_stay_unnamed(library):
    # catches: live naming comparing against the wrong speaker's speech, naming below the
    # calibrated threshold (a stranger named), or names never reaching the caller
    meeting = tuesday()
    named: dict[str, Match | None] = {}
    speakers = live_speakers(library, lambda sid, match: named.__setitem__(sid, match))
    speakers.load()
    audio, person_of = meeting.recording().samples, {}
    for turn in meeting.turns:  # each turn as the live recorder closes it
        sid = speakers.assign(audio[round(turn.start * RATE) : round(turn.end * RATE)])
        person_of.setdefault(sid, turn.speaker)
    final = {sid: m.name for sid, m in named.items() if m is not None}
    assert sorted(final.values()) == ["Bob", "Carol"]
    assert all(person_of[sid] == name.lower() for sid, name in final.items())


def test_a_live_speaker_whose_newer_speech_is_someone_else_is_not_named():
    # catches: the newer half's agreement left out (a live speaker that merged two voices named
    # after the one its earlier speech came from), or compared with another person's name
    names = LiveNames(UNIT, Counted(), MatchConfig(min_seconds=4.0, threshold=0.9, margin=0.1))
    whole_alice_half_bob = np.concatenate([speech(2.0, 1.0), speech(2.0, 2.0)])  # newer half: bob
    assert names.hear("S1", whole_alice_half_bob) == {} and names.names == {}
    assert names.hear("S1", speech(4.0, 1.0))["S1"].name == "alice"  # 8 s: the newer half is alice's


def test_the_configured_bar_decides_not_the_default_one():
    # catches: the match made with the default threshold (0.91) instead of the one configured, for
    # the whole speech or for its newer half (each alone would refuse this 0.88)
    close = np.array([0.88, 0.0, np.sqrt(1 - 0.88**2)])  # 0.88 to alice, 0 to bob
    lenient = LiveNames(UNIT, lambda samples: close, MatchConfig(min_seconds=1.0, threshold=0.85, margin=0.1))
    assert lenient.hear("S1", speech(1.0))["S1"].name == "alice"
    usual = LiveNames(UNIT, lambda samples: close, MatchConfig(min_seconds=1.0))
    assert usual.hear("S1", speech(1.0)) == {}


def test_without_a_library_file_live_speakers_are_plain_and_no_file_is_made(tmp_path):
    # catches: `or` turned into `and` (no library: a crash; a missing one: created by looking)
    missing = VoiceLibrary(tmp_path / "none" / "voices.sqlite")
    assert type(live_speakers(None, print)).__name__ == "OnlineSpeakers"
    assert type(live_speakers(missing, print)).__name__ == "OnlineSpeakers"
    assert not (tmp_path / "none").exists()


def test_a_library_of_another_embedding_model_is_refused_naming_the_file(library):
    # catches: the refusal losing which library it is about
    import shutil
    import sqlite3

    other = library.path.with_name("other.sqlite")
    shutil.copy(library.path, other)
    with sqlite3.connect(other) as db:
        db.execute("UPDATE embeddings SET model = 'ecapa', model_version = '2'")
    with pytest.raises(VoiceLibraryError, match=f"{other}.*never compared"):
        live_speakers(VoiceLibrary(other), print)
