"""The transcript's time and speaker columns: times never cut, and the widths the user chose kept
(and only those reported as chosen)."""

from __future__ import annotations

from PySide6.QtGui import QUndoStack

from app.transcript_model import END, SPEAKER, START, TranscriptModel
from app.widgets.transcript_view import TranscriptView


def view_of(qtbot) -> TranscriptView:
    view = TranscriptView(TranscriptModel(QUndoStack()))
    qtbot.addWidget(view)
    return view


def test_a_wider_time_column_the_user_chose_is_kept_when_the_style_changes(qtbot) -> None:
    view = view_of(qtbot)
    view.show()
    qtbot.waitExposed(view)
    need = view.columns.time_width()
    view.set_column_widths([need + 40, need + 40, 150])
    view.setStyleSheet("QTableView::item { padding: 3px 6px; }")  # a theme change re-styles the view
    assert view.column_widths() == [need + 40, need + 40, 150]
    assert view.columnWidth(START) >= view.columns.time_width()


def test_widths_restored_before_the_view_shows_are_not_reported_as_the_users(qtbot) -> None:
    view = view_of(qtbot)
    reported: list[list[int]] = []
    view.columns_resized.connect(reported.append)
    view.set_column_widths([120, 120, 150])
    qtbot.wait(500)  # longer than a drag takes to settle
    assert reported == []
    view.show()
    qtbot.waitExposed(view)
    view.horizontalHeader().resizeSection(SPEAKER, 190)  # as a drag of the header's edge does
    qtbot.waitUntil(lambda: reported != [])
    assert reported == [[120, 120, 190]]
    assert view.columnWidth(END) == 120


def test_a_style_that_pads_cells_more_widens_the_time_columns_to_keep_times_whole(qtbot) -> None:
    view = view_of(qtbot)
    view.show()
    qtbot.waitExposed(view)
    before = view.columns.time_width()
    view.setStyleSheet("QTableView::item { padding: 3px 30px; }")  # as a theme's style sheet arrives
    assert view.columns.time_width() > before
    assert view.columnWidth(START) == view.columnWidth(END) == view.columns.time_width()


def test_a_time_column_the_user_narrows_stays_narrow_until_the_style_changes(qtbot) -> None:
    view = view_of(qtbot)
    view.show()
    qtbot.waitExposed(view)
    view.horizontalHeader().resizeSection(START, 30)  # dragged narrower than a time needs
    view.resize(view.width() + 40, view.height())  # the window goes on: resizes, paints
    qtbot.wait(50)
    assert view.columnWidth(START) == 30


def test_a_drag_in_steps_is_reported_once_after_it_settles(qtbot) -> None:
    view = view_of(qtbot)
    view.show()
    qtbot.waitExposed(view)
    reported: list[list[int]] = []
    view.columns_resized.connect(reported.append)
    for width in (140, 150, 160):  # a drag moves the edge in steps, the window drawing in between
        view.horizontalHeader().resizeSection(SPEAKER, width)
        qtbot.wait(10)
    qtbot.waitUntil(lambda: reported != [])
    qtbot.wait(100)
    assert reported == [[view.columnWidth(START), view.columnWidth(END), 160]]
