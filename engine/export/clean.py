"""Text cleaned for formats that cannot hold every character.

`clean_text(text)` drops what subtitle players, XML parsers and terminals choke on: terminal escape
sequences (`ESC [ ... m`, `ESC ] ... BEL`), C0 and C1 control characters except tab and newline,
DEL, lone surrogates and the non-characters U+FFFE/U+FFFF. `one_line(text)` also turns every run of
whitespace, line and paragraph separators included, into one space, for fields that must stay on
one line (speaker names, RTTM fields). JSON never goes through here: it is the lossless archive.
"""

from __future__ import annotations

import re
from dataclasses import replace

from engine.types import Utterance

_ESCAPE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_]?)")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_SPACE = re.compile(r"[\s\u2028\u2029\x0b\x0c\x1c-\x1f\x85]+")


def clean_text(text: str) -> str:
    """`text` without escape sequences and characters no text format can carry (tab, newline kept)."""
    return _CONTROL.sub("", _ESCAPE.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))


def one_line(text: str) -> str:
    """`text` cleaned and on one line: whitespace runs become one space, ends trimmed."""
    return _SPACE.sub(" ", clean_text(text)).strip()


def clean_utterance(u: Utterance) -> Utterance:
    """`u` with its text and words' texts cleaned (times unchanged)."""
    words = tuple(replace(w, text=clean_text(w.text)) for w in u.words)
    return replace(u, text=clean_text(u.text), words=words)
