"""Checks of `murmur transcribe`'s options, made before any decoding or model loading starts.

`preflight(args)` refuses, with a `ValueError` whose message names the option, what would only
fail after the work: an empty or unknown `--format`; an `--out` that is a file, or a folder that
cannot be created or written (tried, not asked of `access()`, which says yes to root); a
`--chunk-seconds` that is not a finite number above 1; speaker counts below 1; a `--model` given
as a path that does not exist; `--device cuda` on a machine where the backend sees no CUDA device.
Input folders are checked for writing when there is no `--out`. It returns a `Plan`: the formats,
each input's output place (`engine.cli.outputs`), and warnings to show, e.g. `--speakers` larger
than a recording can hold.
Inputs that are missing or unreadable are left to fail on their own, one line each.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.cli.outputs import Target, output_targets

SECONDS_PER_SPEAKER = 2.0  # a recording of d seconds can hold at most d / 2 speakers


@dataclass(frozen=True, slots=True)
class Plan:
    formats: tuple[str, ...]
    targets: tuple[Target, ...]  # one per input file, in order
    warnings: tuple[str, ...] = ()


def preflight(args: argparse.Namespace) -> Plan:
    """The checked plan of a `murmur transcribe` command; ValueError on an option that cannot work."""
    formats = check_formats(args.format)
    check_numbers(args)
    check_model(args.model)
    check_device(getattr(args, "backend", "whisper"), getattr(args, "device", None))
    targets = output_targets(args.files, args.out)
    for folder in dict.fromkeys(t.folder for t in targets):
        if args.out is not None or folder.is_dir():
            check_writable(folder, "--out" if args.out is not None else "the input's folder")
    warnings = [
        f"{p}: writing its files as {t.stem}.* ({p.stem} is taken by another input)"
        for p, t in zip(args.files, targets, strict=True)
        if t.renamed
    ]
    warnings += speaker_warnings(args.files, args.speakers)
    return Plan(tuple(formats), tuple(targets), tuple(warnings))


def check_formats(text: str) -> list[str]:
    from engine.export import FORMATS

    formats = list(dict.fromkeys(f.strip().lower() for f in text.split(",") if f.strip()))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        given = f"unknown format(s) {', '.join(unknown)}" if unknown else "--format names no format"
        raise ValueError(f"{given}; choose from {', '.join(FORMATS)}")
    return formats


def check_numbers(args: argparse.Namespace) -> None:
    seconds = args.chunk_seconds
    if seconds is not None and not (math.isfinite(seconds) and seconds > 1.0):
        raise ValueError(f"--chunk-seconds must be a finite number of seconds above 1, got {seconds}")
    for flag in ("speakers", "min_speakers", "max_speakers", "batch_size"):
        value = getattr(args, flag, None)
        if value is not None and value < 1:
            raise ValueError(f"--{flag.replace('_', '-')} must be at least 1, got {value}")
    stream = getattr(args, "audio_stream", None)
    if stream is not None and stream < 0:
        raise ValueError(f"--audio-stream counts a file's audio streams from 0, got {stream}")


def check_model(model: str | None) -> None:
    """A `--model` written as a path (absolute, ./, ~) must exist; hub ids like org/name pass."""
    if model is None or not (model.startswith((".", "~")) or os.path.isabs(model)):
        return
    path = Path(model).expanduser()
    if not path.exists():
        raise ValueError(f"--model: the folder {model} does not exist")
    if not path.is_dir():
        raise ValueError(f"--model: {model} is a file; give the model's folder")


def check_device(backend: str, device: str | None) -> None:
    """`--device cuda` needs a CUDA device the backend can use (CTranslate2's for whisper, torch's
    otherwise); said before any audio is read, naming the device rather than the model."""
    if device != "cuda":
        return
    count, why = cuda_devices(backend)
    if count == 0:
        raise ValueError(f"--device cuda: no CUDA device is usable here ({why}); use --device cpu or auto")


def cuda_devices(backend: str) -> tuple[int, str]:
    """How many CUDA devices `backend`'s runtime sees, and why none when it sees none."""
    try:
        if backend == "whisper":
            import ctranslate2

            count, runtime = ctranslate2.get_cuda_device_count(), "CTranslate2"
        else:
            import torch

            count, runtime = torch.cuda.device_count(), "torch"
    except (ImportError, OSError, RuntimeError) as exc:
        return 0, f"the CUDA runtime cannot be loaded: {exc}"
    return count, f"{runtime} finds no CUDA device (no GPU, or no driver)"


def check_writable(folder: Path, what: str) -> None:
    """`folder` exists as a writable folder, or can be created as one: tried, not asked of
    `access()` (which says yes to root on /proc, an immutable folder or a full disk). A probe file
    is created and removed; folders created for the test are removed again."""
    existing = folder
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        where = folder if existing == folder else f"{folder} ({existing} is a file)"
        raise ValueError(f"{what}: cannot write into {where}: it is not a folder")
    hint = "" if what == "--out" else "; choose another with --out"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".murmur-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ValueError(f"{what}: cannot write into {folder}: {existing} is not writable ({reason}){hint}") \
            from exc
    finally:
        _remove_created(folder, existing)


def _remove_created(folder: Path, existing: Path) -> None:
    """Remove the empty folders `check_writable` made below `existing` (the work makes them again)."""
    while folder != existing and folder.is_dir():
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def speaker_warnings(files: list[Path], speakers: int | None) -> list[str]:
    """Warnings for inputs too short to hold `speakers` speakers (durations from the headers)."""
    from engine.audio.io import probe_duration
    from engine.errors import MurmurError

    if speakers is None:
        return []
    out = []
    for path in files:
        try:
            seconds = probe_duration(path)
        except (MurmurError, OSError, ValueError):
            continue  # the file fails on its own, with its own message
        room = max(1, math.floor(seconds / SECONDS_PER_SPEAKER))
        if seconds > 0 and speakers > room:
            out.append(
                f"{path.name} lasts {seconds:.0f} s: --speakers {speakers} is more than it can hold "
                f"(at most about {room}); expect fewer"
            )
    return out
