"""Synthetic meetings with exact references: espeak-ng voices, seeded dialogue, RTTM/STM/SegLST.

`build_meeting(MeetingConfig(...))` makes a `SyntheticMeeting` (audio, participants, turns with
exact word times); `engine.synth.references` writes its audio and reference files;
`python -m engine.synth OUT_STEM --speakers 4 --minutes 2 --seed 7` does both from the shell.
"""

from engine.synth.espeak import Espeak, Speech, Voice
from engine.synth.meeting import ROSTER, MeetingConfig, Participant, SyntheticMeeting, build_meeting

__all__ = [
    "ROSTER",
    "Espeak",
    "MeetingConfig",
    "Participant",
    "Speech",
    "SyntheticMeeting",
    "Voice",
    "build_meeting",
]
