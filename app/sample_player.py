"""Play Sample in the Known Voices window: a person's first sample, from whichever recording it came.

- The sample's recording is the open one, decoded from the same audio stream and channel: the
  window's playback plays from the sample's start.
- Otherwise its file is looked for by name (the library keeps a file's name, never its folders,
  `engine.voices.enrol`): `sample_places` lists where — beside the open recording, beside the open
  project, then each recent file (the file itself, and the folder it is in) — and `find_recording`
  takes the first that exists. Just the sample's time range of its stream and channel is decoded
  (`engine.audio.clip`) and played on a player of its own; the open recording's playback pauses
  first. So is the open recording's, when it was opened from another stream or channel.
- No file found: one sentence says so. `SamplePlayer.play` answers what happened, for the window's
  status line; it never raises for a missing, unreadable or unplayable file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from app.playback import PlaybackError, Player
from app.playback_controller import PlaybackController
from engine.audio.clip import load_clip
from engine.errors import AudioDecodeError
from engine.types import Recording
from engine.voices import VoiceSample


def sample_places(
    name: str, open_recording: Path | None, project: Path | None, recent: Iterable[str]
) -> list[Path]:
    """Where a recording called `name` may be, most likely first."""
    folders = [p.parent for p in (open_recording, project) if p is not None]
    places = [folder / name for folder in folders]
    for entry in map(Path, recent):
        places += [entry] if entry.name == name else [entry.parent / name]
    return list(dict.fromkeys(places))


def find_recording(places: Iterable[Path]) -> Path | None:
    return next((p for p in places if p.is_file()), None)


def _is_open(sample: VoiceSample, audio: Recording | None) -> bool:
    """Whether `sample` is part of the window's `audio` as it was decoded (file, stream, channel)."""
    return (
        audio is not None
        and audio.source is not None
        and audio.source.name == sample.recording
        and (audio.stream, audio.channel) == (sample.stream, sample.channel)
    )


class SamplePlayer:
    """Plays samples (see the module contract) beside the window's own playback."""

    def __init__(self, playback: PlaybackController) -> None:
        self.playback = playback
        self.clip: Recording | None = None  # the last sample decoded from another recording
        self._player: Player | None = None

    def play(self, name: str, sample: VoiceSample, open_audio: Recording | None, places: list[Path]) -> str:
        """Play `name`'s `sample` (`open_audio`: the window's recording); what happened, in a sentence."""
        if sample.start is None or sample.end is None or not sample.recording:
            return f"{name}'s sample does not say which part of which recording it came from"
        if _is_open(sample, open_audio):
            self.stop()
            if self.playback.reason is not None:  # no sound device: say so, never "Playing"
                return self.playback.reason
            self.playback.play(sample.start)
            return f"Playing {name} from {sample.recording} at {sample.start:.1f} s"
        found = find_recording(places)
        if found is None:
            return (f"{sample.recording}, the recording {name}'s sample came from, is neither beside the "
                    "open recording or project nor among the recent files any more")  # fmt: skip
        try:
            self.clip = load_clip(found, sample.start, sample.end, sample.stream, sample.channel)
        except (AudioDecodeError, ValueError) as exc:
            return f"Cannot play {name}'s sample: {exc}"
        span = f"{sample.start:.1f}–{sample.end:.1f} s"
        return self._play_clip(self.clip, f"Playing {name} from {found.name} ({span})")

    def _play_clip(self, clip: Recording, playing: str) -> str:
        if self.playback.reason is not None:
            return self.playback.reason
        self.stop()
        self.playback.pause()
        self._player = Player(clip.samples, clip.sample_rate)
        try:
            self._player.play(0.0)
        except PlaybackError as exc:
            return str(exc)
        return playing

    @property
    def playing(self) -> bool:
        return self._player is not None and self._player.playing

    @property
    def position(self) -> float:
        """Seconds of the clip played so far (0 with none)."""
        return self._player.position if self._player is not None else 0.0

    def stop(self) -> None:
        if self._player is not None:
            self._player.close()
            self._player = None
