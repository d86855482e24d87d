"""The table's row store: a shift moves every row at once and each row is rebuilt when first read
(or folded in idle slices), and reading, writing, replacing and undoing leave every row exactly
where the user put it, words included."""

from __future__ import annotations

from app.row_store import RowStore, settled
from engine.types import Utterance, Word


def line(i: int, speaker: str = "S1") -> Utterance:
    start = 10.0 * i
    return Utterance(start, start + 2.0, f"line {i}", speaker, (Word(start, start + 1.0, f"w{i}"),))


def shifted_line(i: int, by: float, speaker: str = "S1") -> Utterance:
    start = 10.0 * i + by
    return Utterance(start, start + 2.0, f"line {i}", speaker, (Word(start, start + 1.0, f"w{i}"),))


def store(n: int = 5) -> RowStore:
    return RowStore([line(i, "S1" if i % 2 == 0 else "S2") for i in range(n)])


def test_a_shift_moves_every_row_and_its_words_when_read():
    s = store()
    s.shift(1.5)
    assert list(s.starts) == [10.0 * i + 1.5 for i in range(5)]
    assert list(s.ends) == [10.0 * i + 3.5 for i in range(5)]
    assert s.get(2) == shifted_line(2, 1.5, "S1")
    assert s.slice(0, 2) == [shifted_line(0, 1.5, "S1"), shifted_line(1, 1.5, "S2")]
    assert s.all() == tuple(shifted_line(i, 1.5, "S1" if i % 2 == 0 else "S2") for i in range(5))
    assert s.speaker(1) == "S2"


def test_fold_applies_at_most_count_rows_and_says_when_rows_are_left():
    s = store()
    s.shift(2.0)
    assert s.fold(2) is True  # 3 left
    assert s.fold(2) is True  # 1 left
    assert s.fold(2) is False  # none left
    assert s.fold(1) is False
    assert tuple(s.state().lag) == (0.0,) * 5
    assert s.all()[4] == shifted_line(4, 2.0, "S1")


def test_fold_of_zero_applies_nothing():
    s = store(2)
    s.shift(1.0)
    assert s.fold(0) is True
    assert tuple(s.state().lag) == (1.0, 1.0)


def test_fold_skips_rows_already_read():
    s = store(3)
    s.shift(1.0)
    s.get(0)
    assert s.fold(1) is True  # row 1: one row (2) still lagging
    assert tuple(s.state().lag) == (0.0, 0.0, 1.0)
    assert s.fold(1) is False


def test_put_on_a_lagging_row_replaces_it_and_the_rest_still_shift():
    s = store(3)
    s.shift(1.0)
    new = Utterance(50.0, 51.0, "typed", "S2")
    s.put(1, new)
    assert s.get(1) == new and (s.starts[1], s.ends[1]) == (50.0, 51.0)
    assert s.fold(5) is False  # rows 0 and 2 only: the put row counts as done
    assert s.all() == (shifted_line(0, 1.0), new, shifted_line(2, 1.0))


def test_put_on_an_exact_row_keeps_the_count_of_lagging_rows():
    s = store(3)
    s.put(0, Utterance(1.0, 2.0, "typed"))
    s.shift(1.0)
    s.put(1, Utterance(30.0, 31.0, "typed again"))
    assert s.fold(1) is True and s.fold(1) is False


def test_replace_swaps_rows_for_others_of_any_number():
    s = store(5)
    s.shift(1.0)
    new = [Utterance(100.0, 101.0, "a"), Utterance(102.0, 103.0, "b"), Utterance(104.0, 105.0, "c")]
    s.replace(1, 2, new)  # rows 1-2 become three rows
    assert len(s) == 6
    assert list(s.starts[1:4]) == [100.0, 102.0, 104.0] and list(s.ends[1:4]) == [101.0, 103.0, 105.0]
    assert tuple(s.state().lag) == (1.0, 0.0, 0.0, 0.0, 1.0, 1.0)
    assert s.fold(2) is True and s.fold(1) is False  # three rows were still to shift: 0, 4 and 5
    assert s.all()[0] == shifted_line(0, 1.0) and s.all()[5] == shifted_line(4, 1.0)


def test_replace_of_rows_already_read_keeps_the_lagging_count():
    s = store(3)
    s.shift(1.0)
    s.get(0)
    s.replace(0, 1, [Utterance(0.5, 0.9, "x")])
    assert s.fold(1) is True and s.fold(1) is False


def test_an_empty_store_shifts_to_nothing():
    s = RowStore()
    s.shift(3.0)
    assert len(s) == 0 and s.all() == () and s.fold(5) is False


def test_a_shift_back_to_zero_leaves_no_row_to_fold():
    s = store(2)
    s.shift(1.0)
    s.shift(-1.0)
    assert s.fold(1) is False and s.all() == (line(0), line(1, "S2"))


def test_turns_are_one_speakers_times_in_row_order():
    s = store(5)
    s.shift(1.0)
    assert s.turns("S2") == ((11.0, 31.0), (13.0, 33.0))
    assert s.turns(None) == ((), ())


def test_a_state_restores_the_rows_exactly_before_and_after_a_shift():
    s = store(3)
    before = s.state()
    s.shift(2.5)
    after = s.state()
    s.get(0)
    s.restore(before)
    assert s.all() == (line(0), line(1, "S2"), line(2))
    s.restore(after)
    assert s.fold(2) is True  # the restored offsets are lagging again: 3 rows
    assert s.fold(1) is False  # …and no more than 3
    assert s.all() == (shifted_line(0, 2.5), shifted_line(1, 2.5, "S2"), shifted_line(2, 2.5))


def test_settled_applies_a_states_offsets_without_touching_the_store():
    s = store(2)
    s.shift(1.0)
    state = s.state()
    assert settled(state) == (shifted_line(0, 1.0), shifted_line(1, 1.0, "S2"))
    assert tuple(s.state().lag) == (1.0, 1.0)


def test_a_state_holds_no_reference_to_the_lines_own_time_objects():
    # catches: times kept (or copied into a state) as lists of the lines' own float objects: every
    # state then writes to each float's reference count, thousands of memory pages for a long
    # transcript, and an autosave after an idle minute held the window 9-36 ms on them alone
    import sys

    s = store()
    start, end = s.get(3).start, s.get(3).end
    before = sys.getrefcount(start), sys.getrefcount(end)
    state = s.state()
    assert (sys.getrefcount(start), sys.getrefcount(end)) == before
    assert settled(state) == tuple(s.get(r) for r in range(5))  # and it still holds the rows
