"""Segment boundaries in token space, for decoders that roll a reply back after a loop.

`segment_boundary(tokenizer)` returns an `engine.decode.api.SegmentBoundary`: given the token
ids generated so far, the length of the shortest prefix that holds every complete segment object
(its closing brace included). With no complete segment it is the prefix through the opening `[`
of the reply (0 when there is none yet). The text of each token is decoded on its own, so the
boundary always falls between tokens; a token that closes one object and opens the next counts
as part of the prefix.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Any

from engine.backends.vibevoice.jsonscan import object_ends
from engine.decode.api import SegmentBoundary


def segment_boundary(tokenizer: Any) -> SegmentBoundary:
    """The boundary function of replies tokenized by `tokenizer`."""

    def boundary(token_ids: Sequence[int]) -> int:
        ids = [int(i) for i in token_ids]
        if not ids:
            return 0
        pieces = tokenizer.batch_decode(
            [[i] for i in ids], skip_special_tokens=False, clean_up_tokenization_spaces=False
        )
        offsets = list(itertools.accumulate(len(p) for p in pieces))  # text end of each prefix
        text = "".join(pieces)
        ends = object_ends(text)
        cut = ends[-1] if ends else text.find("[") + 1
        if cut <= 0:
            return 0
        return bisect.bisect_left(offsets, cut) + 1

    return boundary
