"""Keep what libraries print out of `-q` output, while Murmur's own messages still show.

Decoders (libmpg123 inside libsndfile, FFmpeg) and model runtimes write warnings straight to file
descriptor 2, past Python. `library_output_hidden()` points descriptor 2 at the null device for
its duration and gives Python's `sys.stderr` (and the logging handlers writing to it) a duplicate
of the real stderr, so errors, warnings and tracebacks from Python are unaffected. Notices that
libraries log through Python about themselves (`LIBRARY_NOTICES`: Ray's "Token authentication is
enabled" when it starts a local cluster) are held back too; their errors still show.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator

# loggers whose warnings are about the library, not the user's files: shown as errors only under -q
LIBRARY_NOTICES = ("ray._private.authentication.authentication_token_setup",)


@contextlib.contextmanager
def library_output_hidden(enabled: bool = True) -> Iterator[None]:
    """Drop output written to descriptor 2 by native code, and library notices, while the block
    runs (if `enabled`)."""
    if not enabled:
        yield
        return
    with _notices_held_back(), _native_output_hidden():
        yield


@contextlib.contextmanager
def _notices_held_back() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in LIBRARY_NOTICES]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@contextlib.contextmanager
def _native_output_hidden() -> Iterator[None]:
    old = sys.stderr
    old.flush()
    if not _on_descriptor_2(old):  # Python's stderr already goes elsewhere (a capture, a GUI log)
        with _descriptor_2_silenced():
            yield
        return
    saved = os.dup(2)
    own = open(os.dup(saved), "w", encoding=old.encoding, errors="backslashreplace", buffering=1)  # noqa: SIM115
    handlers = [h for h in _stream_handlers() if h.stream is old]
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    sys.stderr = own
    for h in handlers:
        h.setStream(own)
    try:
        yield
    finally:
        own.flush()
        for h in handlers:
            h.setStream(old)
        sys.stderr = old
        os.dup2(saved, 2)
        os.close(saved)
        own.close()


def _on_descriptor_2(stream: object) -> bool:
    try:
        return stream.fileno() == 2  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return False


@contextlib.contextmanager
def _descriptor_2_silenced() -> Iterator[None]:
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _stream_handlers() -> list[logging.StreamHandler]:
    return [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
