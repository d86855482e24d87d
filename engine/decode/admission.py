"""How many rows a KV memory budget admits.

The store gives every row the same number of slots, sized from what the rows' eviction policy keeps
at most (`RowLayout.capacity`: for `none` the whole prompt and output, for the speech policies far
less), so a budget of B bytes holds ⌊B / row bytes⌋ rows. The budget is `--kv-memory` when given
(any device), else the device's free memory less a reserve for the step's activations and for
prefilling a new row (`ACTIVATION_RESERVE` of it, at least `MIN_RESERVE` bytes).
"""

from __future__ import annotations

MIN_ROWS = 16  # rows a store holds at least (budget allowing), however little work was waiting
ACTIVATION_RESERVE = 0.10  # share of the free device memory left to activations and prefill
MIN_RESERVE = 2 << 30  # bytes left to them at least


def rows_within(budget: int, row_bytes: int) -> int:
    """Rows of `row_bytes` each that `budget` bytes hold (0: not one)."""
    if row_bytes < 1:
        raise ValueError("a row takes at least one byte")
    return max(budget, 0) // row_bytes


def device_budget(free: int) -> int:
    """KV bytes to plan with when `free` bytes of device memory are free."""
    return max(free - max(int(free * ACTIVATION_RESERVE), MIN_RESERVE), 0)


class GrowBatch(Exception):
    """Memory allows twice the rows now: the decoder resumes every row in a bigger batch."""
