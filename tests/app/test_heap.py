"""A long transcript stays out of the garbage collector's full passes once the document settles
(so a full pass, which stops every thread, visits only what was made since), and the window hands
everything back to the collector when it closes."""

from __future__ import annotations

import gc

from app import commands


def _visited_by_a_full_pass(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects())


def test_an_edited_line_settles_out_of_full_collections_and_returns_when_the_window_closes(
    demo_window, qtbot
):
    window = demo_window
    commands.edit_text(window.model, 0, "A line that settles.")
    line = window.model.utterance(0)
    assert _visited_by_a_full_pass(line)
    qtbot.waitUntil(lambda: not _visited_by_a_full_pass(line), timeout=10_000)
    assert not _visited_by_a_full_pass(window.model.utterance(1).words[0])
    window.close()
    assert _visited_by_a_full_pass(line)
