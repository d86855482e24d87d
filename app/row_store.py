"""The transcript's rows as the table model keeps them: utterances in start order, their start and
end times as flat lists (for bisecting), and a per-row time offset still to be applied (`lag`).

Shifting every time (`shift`) is one vectorised pass over the start/end lists plus the offsets: no
utterance or word is rebuilt then. A row is rebuilt with its offset applied (`edits.shifted`) the
first time it is read (`get`, `slice`, `all`) or by `fold`, which the model calls in small slices
while the window is idle. Reading never changes what a row means, only how it is stored, so a
`TimeState` taken before a shift restores it exactly (undo), and one taken after restores the
shift (redo). Rows written through `put`/`replace` are absolute: their offset is 0. `settled(state)`
gives a state's rows with their offsets applied without touching the store: a save takes a
`TimeState` on the GUI thread (references only) and settles it on the writer's thread.
Times and offsets are kept as flat arrays of doubles, not lists of float objects, so a state copies
them as three blocks of memory: it touches no float object. A list's floats are the utterances'
own, scattered over the heap with each line's words; copying a three-hour transcript's list
meant touching some 2,000 memory pages, and once they had gone cold (an idle minute) an autosave
held the window 9–36 ms on them alone.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from app.edits import shifted
from engine.types import Utterance


@dataclass(frozen=True, slots=True)
class TimeState:
    """Every row's stored utterance, offset, start and end at one moment (the rows by reference;
    the arrays are copies, never changed once taken)."""

    rows: tuple[Utterance, ...]
    lag: array[float]
    starts: array[float]
    ends: array[float]


def doubles(values: Iterable[float] | np.ndarray) -> array[float]:
    """A flat array of doubles (from a numpy array: one copy of its memory)."""
    if isinstance(values, np.ndarray):
        out: array[float] = array("d")
        out.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
        return out
    return array("d", values)


def settled(state: TimeState) -> tuple[Utterance, ...]:
    """The rows of `state` with their offsets applied (new objects; `state` is left as it is)."""
    rows = zip(state.rows, state.lag, state.starts, state.ends, strict=True)
    return tuple(shifted(u, lag, start, end) if lag else u for u, lag, start, end in rows)


class RowStore:
    def __init__(self, utterances: Sequence[Utterance] = ()) -> None:
        self._rows: list[Utterance] = list(utterances)
        self._lag = array("d", [0.0]) * len(self._rows)
        self.starts = doubles(u.start for u in self._rows)
        self.ends = doubles(u.end for u in self._rows)
        self._lagging = 0  # rows with an offset still to apply (0: every stored row is exact)

    def __len__(self) -> int:
        return len(self._rows)

    def speaker(self, row: int) -> str | None:
        return self._rows[row].speaker  # a shift leaves speakers alone: no rebuild needed

    def get(self, row: int) -> Utterance:
        lag = self._lag[row]
        if not lag:
            return self._rows[row]
        u = shifted(self._rows[row], lag, self.starts[row], self.ends[row])
        self._rows[row], self._lag[row] = u, 0.0
        self._lagging -= 1
        return u

    def slice(self, first: int, stop: int) -> list[Utterance]:
        return [self.get(r) for r in range(first, stop)]

    def all(self) -> tuple[Utterance, ...]:
        if self._lagging:
            self.fold(len(self._rows))
        return tuple(self._rows)

    def fold(self, count: int) -> bool:
        """Apply the offsets of up to `count` lagging rows; True while some are left."""
        for row, lag in enumerate(self._lag):
            if not self._lagging or count <= 0:
                break
            if lag:
                self.get(row)
                count -= 1
        return self._lagging > 0

    def put(self, row: int, u: Utterance) -> None:
        if self._lag[row]:
            self._lagging -= 1
        self._rows[row], self._lag[row] = u, 0.0
        self.starts[row], self.ends[row] = u.start, u.end

    def replace(self, first: int, count: int, new: Sequence[Utterance]) -> None:
        """Rows first … first+count-1 become `new` (callers read the old ones with `slice` first)."""
        self._lagging -= sum(1 for lag in self._lag[first : first + count] if lag)
        stop = first + count
        self._rows[first:stop] = new
        self._lag[first:stop] = array("d", [0.0]) * len(new)
        self.starts[first:stop] = doubles(u.start for u in new)
        self.ends[first:stop] = doubles(u.end for u in new)

    def shift(self, seconds: float) -> None:
        """Every row later by `seconds` (earlier when negative), applied to the stored rows lazily."""
        if not self._rows:
            return
        self.starts = doubles(np.frombuffer(self.starts) + seconds)  # (rows,)
        self.ends = doubles(np.frombuffer(self.ends) + seconds)  # (rows,)
        self._lag = doubles(np.frombuffer(self._lag) + seconds)  # (rows,)
        self._lagging = int(np.count_nonzero(np.frombuffer(self._lag)))

    def turns(self, speaker_id: str | None) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(starts, ends) of one speaker's rows, in row order."""
        picked = [r for r, u in enumerate(self._rows) if u.speaker == speaker_id]
        return tuple(self.starts[r] for r in picked), tuple(self.ends[r] for r in picked)

    def state(self) -> TimeState:
        return TimeState(tuple(self._rows), self._lag[:], self.starts[:], self.ends[:])

    def restore(self, state: TimeState) -> None:
        self._rows, self._lag = list(state.rows), state.lag[:]
        self.starts, self.ends = state.starts[:], state.ends[:]
        self._lagging = int(np.count_nonzero(np.frombuffer(self._lag)))
