"""A work's way into a batch row, in the scheduler's two halves: `prepare` before it is admitted
(its layout, its transcript reader having read the output so far, its slots as its next step
imports them) and `read_firsts` once a step has fed the first tokens chosen at admission.

A row's first token is chosen on the device when it is admitted and stays unread there; the step
that feeds it reads it back with its own tokens. `read_firsts` then adds it to the row's output,
lets the row's reader read it, and ends the row where that token ends it (an EOS, or a budget it
fills): the row gets a result as if it had never stepped. Neither function touches the device.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.decode.anchor import RowReader, RowReaders
from engine.decode.api import DecodeResult
from engine.decode.eviction import EvictionPolicy
from engine.decode.layout import RowLayout
from engine.decode.rows import RowTable
from engine.decode.slots import RowSlots
from engine.decode.work import Cost, Work


def prepare(
    work: Work, policy: EvictionPolicy, layers: int, readers: RowReaders | None
) -> tuple[RowLayout, RowReader | None, RowSlots]:
    """A work's layout, its transcript reader having read its output so far (None: the policy
    reads none), and its slots as imported for its next step (resumed: under its anchor). A row
    that left a store it outgrew (`Work.keeps_speech`) is sized for all its speech."""
    r, resume = work.request, len(work.prefix)
    layout = policy.layout(r.prompt_length, r.speech_span, r.max_new_tokens, layers, work.batch_span)
    if work.keeps_speech:
        layout = replace(layout, unanchored=True)
    reader = readers.reader(layout.speech_len, layout.speech_kept, work.prefix, r.voiced) if readers else None
    anchor = reader.anchor_before(resume - 1) if reader is not None else -1
    return layout, reader, RowSlots(layout, resume, anchor)


def read_firsts(
    table: RowTable,
    readers: RowReaders | None,
    fed: np.ndarray,
    index: np.ndarray | None,
    eos: np.ndarray,
    evicts: bool,
) -> dict[int, DecodeResult]:
    """Rows whose first token (chosen at admission) this step fed (`fed`; `index`: each row's entry
    in it, None: the row itself) read it into their output; the results of the rows it ends, by row."""
    n, ended = table.n, {}
    rows = np.flatnonzero(table.unread[:n] & (True if index is None else index >= 0))
    firsts = fed[rows if index is None else index[rows]]
    for row, first in zip(rows.tolist(), firsts.tolist(), strict=True):
        work, reader = table.work[row], readers.rows[row] if readers is not None else None
        if work is None:
            raise RuntimeError(f"row {row} holds no work")
        if reader is not None:
            if first not in eos:
                reader.feed(first, len(work.prefix) - 1)
            if first in eos or len(work.prefix) + 1 >= work.request.max_new_tokens:
                reader.close()  # the row ends on its first token
        harm = Cost() if reader is None else Cost(lost=reader.harm.lost_tokens, stopped=reader.stopped)
        if (result := work.ends_on_first(first, eos, harm, evicts)) is not None:
            ended[row] = result
    table.read_first(rows, firsts)
    return ended
