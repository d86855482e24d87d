"""Typed errors a user can cause. Each carries a message meant to be shown as is.

The CLI prints `str(error)` on one line and exits non-zero; the GUI shows it in a dialog and keeps
the user's work. Programming errors are not wrapped: they stay ordinary exceptions.
`check_cancel(event)` raises `Cancelled` once the user asked to stop (every stage calls it).
"""

from __future__ import annotations

import threading


class MurmurError(Exception):
    """Base class of every error Murmur reports to a user."""


class AudioDecodeError(MurmurError):
    """The file could not be read as audio: missing, empty, corrupt, silent-length or unsupported."""


class ModelLoadError(MurmurError):
    """A model or pipeline could not be loaded (missing files, incompatible checkpoint, offline)."""


class ModelOutputError(MurmurError):
    """A model produced output that could not be interpreted at all."""


class OutOfMemoryError(MurmurError):
    """The device ran out of memory even at the smallest batch."""


class Cancelled(MurmurError):
    """The user cancelled the run; nothing half-done was written."""

    def __init__(self, message: str = "cancelled by the user") -> None:
        super().__init__(message)


class TranscriptFormatError(MurmurError):
    """A transcript file could not be read: missing, not JSON, or not a Murmur transcript."""


class ClusterError(MurmurError):
    """Work on a Ray cluster failed for good: every worker died, or a chunk failed every retry."""


class ServerError(MurmurError):
    """A transcription server failed: unreachable, timed out, or answered with an error, after retries."""


class RecordingError(MurmurError):
    """Recording failed: the input device would not open, stopped (unplugged) or the disk is full.

    What was recorded before the failure is kept in the recording's file."""


def check_cancel(cancel: threading.Event | None) -> None:
    """Raise `Cancelled` if the user asked to stop."""
    if cancel is not None and cancel.is_set():
        raise Cancelled()
