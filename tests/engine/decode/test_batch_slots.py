"""The batch's step plan keeps every row's slots with numpy over all rows (`BatchSlots`), and must
place every entry where one row's own slot map (`RowSlots.advance`, the definition) places it: the
same write slot, length, moves and speech copies, slot for slot, so decoding stays byte-identical."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_eviction_policies import LAYERS, _anchor, policies, shapes

from engine.decode.eviction import make_policy
from engine.decode.rows import RowTable
from engine.decode.slots import RowSlots


def _of_row(transfer, row: int) -> tuple[list[int], list[int]]:
    if transfer is None:
        return [], []
    rows, src, dst = transfer
    return src[rows == row].tolist(), dst[rows == row].tolist()


@settings(max_examples=60, deadline=None)
@given(
    policy=policies,
    shapes=st.lists(shapes, min_size=1, max_size=4),
    resumes=st.lists(st.integers(0, 12), min_size=4, max_size=4),
    leave=st.integers(0, 30),
)
def test_the_batch_plan_places_every_entry_where_each_rows_own_slot_map_does(policy, shapes, resumes, leave):
    layouts = [make_policy(policy).layout(h + s + t, (h, h + s), 48, LAYERS) for h, s, t in shapes]
    table, own = RowTable(len(layouts)), []
    for layout, resume in zip(layouts, resumes, strict=False):
        table.occupy(None, RowSlots(layout, resume, _anchor(resume - 1)), [0] * (resume + 1), _anchor(resume))  # type: ignore[arg-type]
        own.append(RowSlots(layout, resume, _anchor(resume - 1)))
    for step in range(30):
        if step == leave and table.n > 1:  # a row leaves: the last row takes its place
            table.release(0)
            own[0] = own.pop()
        steps = [
            row.advance(int(j), int(a)) for row, j, a in zip(own, table.step, table.anchor, strict=False)
        ]
        plan = table.plan()
        for r, row_steps in enumerate(steps):
            for g, expected in enumerate(row_steps):
                assert (plan.slots[g, r], plan.seqlen[g, r]) == (expected.write, expected.length)
                assert _of_row(plan.moves[g], r) == (expected.move_src.tolist(), expected.move_dst.tolist())
                assert _of_row(plan.speech[g], r) == (
                    expected.speech_src.tolist(),
                    expected.speech_dst.tolist(),
                )
        table.append(np.ones(table.n, dtype=np.int64), np.zeros(table.n, dtype=bool))
        table.anchor[: table.n] = [_anchor(int(j)) for j in table.step[: table.n]]
