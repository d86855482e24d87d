"""AMI meeting corpus, full-corpus-ASR test split: 16 meetings, headset mix (IHM) or far field (SDM).

Audio as the AMI download lays it out (`amicorpus/EN2002a/audio/EN2002a.Mix-Headset.wav` for IHM,
`EN2002a.Array1-01.wav` for SDM), or one file per meeting named `EN2002a.wav` (or .flac) inside
a folder called `ihm` / `sdm` (or anywhere, when only one audio file has that name).
References are found by meeting id anywhere under the root: `EN2002a.stm`, `.seglst.json`,
`.rttm`, `.uem`, e.g. from the AMI-diarization-setup repository (whose `only_words` RTTMs are
preferred over `word_and_vocalsounds`, as in pyannote's benchmark). A meeting without audio or
without any reference is an error naming it, unless `allow_missing`.
"""

from __future__ import annotations

from pathlib import Path

from engine.evaluation.datasets.layout import Index, entry_for, index_tree, pick, require
from engine.evaluation.manifest import Manifest

TEST_MEETINGS = (
    "EN2002a", "EN2002b", "EN2002c", "EN2002d",
    "ES2004a", "ES2004b", "ES2004c", "ES2004d",
    "IS1009a", "IS1009b", "IS1009c", "IS1009d",
    "TS3003a", "TS3003b", "TS3003c", "TS3003d",
)  # fmt: skip
MIC_STREAMS = {"ihm": "Mix-Headset", "sdm": "Array1-01"}
PREFERRED = ("only_words", "test")


def read_ami(
    root: Path,
    mic: str = "ihm",
    meetings: tuple[str, ...] = TEST_MEETINGS,
    allow_missing: bool = False,
) -> Manifest:
    """A manifest of the AMI meetings found under `root` for microphone setting `mic`."""
    if mic not in MIC_STREAMS:
        raise ValueError(f"AMI microphone setting must be one of {', '.join(MIC_STREAMS)}, got {mic!r}")
    index = index_tree(root)
    found = {}
    for meeting in meetings:
        audio = _audio(index, meeting, mic)
        found[meeting] = entry_for(meeting, audio, index.get(meeting, {}), PREFERRED)
    return Manifest(f"ami-{mic}-test", tuple(require(found, f"AMI {mic.upper()} in {root}", allow_missing)))


def ihm(root: Path, allow_missing: bool = False) -> Manifest:
    return read_ami(root, "ihm", allow_missing=allow_missing)


def sdm(root: Path, allow_missing: bool = False) -> Manifest:
    return read_ami(root, "sdm", allow_missing=allow_missing)


def _audio(index: Index, meeting: str, mic: str) -> Path | None:
    stream = index.get(f"{meeting}.{MIC_STREAMS[mic]}", {}).get("audio", [])
    if stream:
        return pick(stream)
    plain = index.get(meeting, {}).get("audio", [])
    in_mic_folder = [p for p in plain if mic in (part.lower() for part in p.parts[:-1])]
    if in_mic_folder:
        return pick(in_mic_folder)
    return plain[0] if len(plain) == 1 else None
