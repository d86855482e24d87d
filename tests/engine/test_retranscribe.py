"""Transcribing a range again keeps the speakers' global identities: the new result's speakers are
matched one-to-one to the existing ones by the pipeline's reconciliation; the rest stay new.
(A whole run on a range, through the real pipeline, is tested in tests/app/test_retranscribe_flow.py.)"""

from __future__ import annotations

from engine.retranscribe import match_speakers
from engine.types import Utterance


def old_lines() -> list[Utterance]:
    # Ann and Bob alternate over 0–60 s; Cy speaks only long before the range
    lines = [Utterance(i * 5.0, i * 5.0 + 4.5, f"old {i}", "ann" if i % 2 else "bob") for i in range(12)]
    return [*lines, Utterance(200.0, 205.0, "later", "cy")]


def test_new_speakers_take_the_identity_of_the_old_speaker_they_overlap():
    new = [Utterance(20.2, 24.4, "new a", "+1"), Utterance(25.1, 29.3, "new b", "+2"),
           Utterance(30.0, 34.6, "new c", "+1")]  # fmt: skip
    assert match_speakers(new, old_lines(), 20.0, 35.0) == {"+1": "bob", "+2": "ann"}


def test_two_new_speakers_never_collapse_onto_one_old_speaker():
    # both new speakers sit inside Bob's old line: only one may become Bob
    new = [Utterance(20.0, 22.0, "x", "+1"), Utterance(22.0, 24.5, "y", "+2")]
    mapping = match_speakers(new, old_lines(), 20.0, 24.5)
    assert list(mapping.values()).count("bob") <= 1 and len(set(mapping.values())) == len(mapping)


def test_a_voice_that_was_not_there_stays_a_new_speaker():
    new = [Utterance(20.2, 24.4, "a", "+1")]
    assert match_speakers(new, [u for u in old_lines() if u.start > 100], 20.0, 25.0) == {}
