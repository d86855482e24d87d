"""The espeak-ng C library: its declarations for ctypes, and loading a private copy of it.

espeak-ng keeps synthesis state in C statics that nothing resets (the pitch-flutter phase and the
wave generator's cycle counters carry over from one utterance to the next), so the same text comes
out a few samples different depending on what was spoken before in the process. `load_private()`
copies the shared library to a temporary file, opens that copy with `RTLD_LOCAL` and deletes the
file at once: each copy starts with fresh statics, so a new copy plus the same calls gives the same
audio. Breath noise uses libc's process-wide `rand()`; `reseed()` resets it before each call.
A library that cannot be found raises `ModelLoadError` naming the Debian package; one that cannot
be copied (a temporary folder mounted noexec) raises `ModelLoadError` saying so.
"""

from __future__ import annotations

import _ctypes
import ctypes
import ctypes.util
import os
import shutil
import tempfile

from engine.errors import ModelLoadError

AUDIO_OUTPUT_SYNCHRONOUS = 2
INITIALIZE_PHONEME_EVENTS = 0x0001
INITIALIZE_DONT_EXIT = 0x8000
POS_CHARACTER = 1
CHARS_UTF8 = 1
EVENT_LIST_TERMINATED = 0
EVENT_WORD = 1
EVENT_PHONEME = 7
PARAM_RATE, PARAM_PITCH, PARAM_RANGE = 1, 3, 4
_RAND_SEED = 1
_MISSING = "the espeak-ng speech library could not be loaded ({}); install the 'espeak-ng' system package"


class EventId(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class Event(ctypes.Structure):
    """`espeak_EVENT` from speak_lib.h."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", EventId),
    ]


SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(Event)
)  # int callback(short *wav, int numsamples, espeak_EVENT *events)


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def load_private(library: str | None = None) -> ctypes.CDLL:
    """A freshly loaded, private copy of libespeak-ng (its C state starts from scratch)."""
    name = library or ctypes.util.find_library("espeak-ng") or "libespeak-ng.so.1"
    try:
        source = _file_of(ctypes.CDLL(name))
    except OSError as error:
        raise ModelLoadError(_MISSING.format(name)) from error
    folder = tempfile.mkdtemp(prefix="murmur-espeak-")
    try:
        copy = os.path.join(folder, os.path.basename(source))
        shutil.copyfile(source, copy)
        lib = ctypes.CDLL(copy, mode=os.RTLD_LOCAL)
    except OSError as error:
        raise ModelLoadError(
            f"could not load a private copy of espeak-ng from {folder} ({error}); "
            "point TMPDIR at a folder that allows running programs"
        ) from error
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    lib.espeak_Synth.argtypes = [
        ctypes.c_char_p,
        ctypes.c_size_t,
        ctypes.c_uint,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.c_uint,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    return lib


def unload(lib: ctypes.CDLL) -> None:
    """Free espeak's resources and close the private copy (the handle is unusable afterwards)."""
    lib.espeak_Terminate()
    _ctypes.dlclose(lib._handle)


def reseed(libc: ctypes.CDLL) -> None:
    """Reset libc's `rand()` (pass `ctypes.CDLL(None)`), which espeak draws breath noise from."""
    libc.srand(_RAND_SEED)


def _file_of(lib: ctypes.CDLL) -> str:
    """The file a loaded library came from (dladdr on one of its functions)."""
    info = _DlInfo()
    address = ctypes.cast(lib.espeak_Initialize, ctypes.c_void_p)
    if not ctypes.CDLL(None).dladdr(address, ctypes.byref(info)) or not info.dli_fname:
        raise OSError("cannot locate the espeak-ng library file")
    return os.path.realpath(info.dli_fname.decode())
