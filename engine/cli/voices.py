"""`murmur voices add|list|rename|merge|remove`: the voices Murmur knows by name.

The library is `--voices PATH`, else `murmur/voices.sqlite` in the user's data folder
(`engine.voices.location`). Nothing is stored unless `add` is run; `remove` deletes the person's
embeddings with their name. `add NAME --from TRANSCRIPT.json --speaker "Speaker 2"` reads that
speaker's lines from the recording the transcript names (beside the transcript, or
`--recording FILE`); `add NAME --audio FILE` takes a recording of that person alone (its speech,
found by VAD). `murmur transcribe --voices [PATH]` then names them in new transcripts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.voices import VoiceLibrary


def add_arguments(p: argparse.ArgumentParser) -> None:
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument("--voices", metavar="PATH", help="the voice library (default: in your data folder)")
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, description=help_text[:1].upper() + help_text[1:] + ".",
                              parents=[where])  # fmt: skip

    add = action("add", "remember a voice: from a transcript's speaker, or a recording")
    add.add_argument("name", help="the person's name")
    source = add.add_mutually_exclusive_group(required=True)
    source.add_argument("--from", dest="transcript", type=Path, metavar="TRANSCRIPT",
                        help="a Murmur transcript (.json) in which the person speaks")  # fmt: skip
    source.add_argument("--audio", type=Path, metavar="FILE", help="a recording of the person alone")
    add.add_argument("--speaker", help='with --from: which speaker is the person ("Speaker 2", or S2)')
    add.add_argument(
        "--recording", type=Path, metavar="FILE",
        help="with --from: the transcript's recording (default: the one it names, beside it)",
    )  # fmt: skip
    action("list", "list the known voices and where each was heard")
    rename = action("rename", "give a known voice another name")
    rename.add_argument("old")
    rename.add_argument("new")
    merge = action("merge", "one person stored twice: move SOURCE's samples to TARGET")
    merge.add_argument("source")
    merge.add_argument("target")
    remove = action("remove", "forget a voice: its name and every embedding of it")
    remove.add_argument("name")


def run(args: argparse.Namespace) -> int:
    from engine.errors import MurmurError
    from engine.voices import VoiceLibrary, library_path

    library = VoiceLibrary(library_path(args.voices))
    try:
        return ACTIONS[args.action](library, args)
    except (MurmurError, ValueError) as exc:
        print(f"murmur: error: {exc}", file=sys.stderr)
        return 1


def _add(library: VoiceLibrary, args: argparse.Namespace) -> int:
    from engine.audio.io import load_audio
    from engine.speakers.embedding import SAMPLE_RATE
    from engine.voices import VoiceEmbedder
    from engine.voices.enrol import samples_from_audio, samples_from_transcript

    embedder = VoiceEmbedder()
    if args.transcript is not None:
        from engine.export.json_format import read_json

        if not args.speaker:
            raise ValueError('say which speaker is the person: --speaker "Speaker 2"')
        transcript = read_json(args.transcript)
        recording = load_audio(
            args.recording or _recording_of(args.transcript, transcript.source), SAMPLE_RATE
        )
        samples = samples_from_transcript(transcript, args.speaker, recording, embedder)
    else:
        from engine.audio.vad import SileroVad

        if args.speaker or args.recording:
            raise ValueError("--speaker and --recording go with --from TRANSCRIPT")
        recording = load_audio(args.audio, SAMPLE_RATE)
        samples = samples_from_audio(recording, SileroVad().detect(recording), embedder)
    voice = library.add(args.name, samples)
    heard = recording.source.name if recording.source else "the recording"
    print(f"remembered {voice.name}: {len(samples)} new samples from {heard}, {len(voice.samples)} in all "
          f"(library: {library.path})")  # fmt: skip
    return 0


def _recording_of(transcript_path: Path, source: str | None) -> Path:
    """The recording a transcript names, looked for beside the transcript."""
    if not source:
        raise ValueError("the transcript names no recording; give it with --recording FILE")
    candidate = transcript_path.parent / Path(source).name
    if not candidate.is_file():
        raise ValueError(
            f"the transcript's recording {Path(source).name!r} is not beside it in {transcript_path.parent}; "
            "give it with --recording FILE"
        )
    return candidate


def _list(library: VoiceLibrary, args: argparse.Namespace) -> int:
    voices = library.voices()
    if not voices:
        print(f"no known voices (library: {library.path})")
        return 0
    for voice in voices:
        heard = sorted({s.recording for s in voice.samples if s.recording})
        models = ", ".join(str(m) for m in voice.models())
        print(f"{voice.name}: {len(voice.samples)} samples from {', '.join(heard) or 'unnamed recordings'} "
              f"({models}; added {voice.added})")  # fmt: skip
    print(f"library: {library.path}")
    return 0


def _rename(library: VoiceLibrary, args: argparse.Namespace) -> int:
    library.rename(args.old, args.new)
    print(f"renamed {args.old} to {args.new.strip()}")
    return 0


def _merge(library: VoiceLibrary, args: argparse.Namespace) -> int:
    library.merge(args.source, args.target)
    print(f"merged {args.source} into {library.voice(args.target).name}")
    return 0


def _remove(library: VoiceLibrary, args: argparse.Namespace) -> int:
    voice = library.voice(args.name)
    library.remove(voice.name)
    print(f"removed {voice.name} and {len(voice.samples)} voice samples")
    return 0


ACTIONS = {"add": _add, "list": _list, "rename": _rename, "merge": _merge, "remove": _remove}
