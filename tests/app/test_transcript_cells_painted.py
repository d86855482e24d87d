"""The transcript table's cells as their delegates paint them: find marks on the matches (the
current one orange), in the theme's colours, where the text is; speaker chips in the speaker's
colour with contrasting ink, cut to their cell."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QRect, QSortFilterProxyModel
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import QApplication
from table_helpers import BOOK, FULL, GROUND, colours_in, option_of, paint_cell, shown_table, spans

from app import speakers as sp
from app.transcript_model import SPEAKER, TEXT
from app.widgets.transcript_delegates import CURRENT_MATCH, MATCH, PAD_X, PAD_Y, text_height
from app.widgets.transcript_view import TranscriptView
from engine.types import Utterance


@pytest.fixture
def view(qapp: QApplication) -> Iterator[TranscriptView]:
    yield from shown_table()


def test_find_marks_every_match_yellow_and_the_current_one_orange(view):
    assert MATCH not in colours_in(paint_cell(view, 0, TEXT), FULL)
    view.row_delegate.find(re.compile("l"), (0, 3))  # "hello there world": l at 2, 3 and 15
    seen = colours_in(paint_cell(view, 0, TEXT), FULL)
    assert MATCH in seen and CURRENT_MATCH in seen
    third = colours_in(paint_cell(view, 2, TEXT), FULL)  # "third line": none is the current one
    assert MATCH in third and CURRENT_MATCH not in third
    view.row_delegate.find(None, None)
    assert MATCH not in colours_in(paint_cell(view, 0, TEXT), FULL)


def test_a_mark_starts_where_the_text_starts_in_the_cell(view):
    view.row_delegate.find(re.compile("h"), (0, 0))  # the first letter of "hello there world"
    left, top, _, _ = spans(paint_cell(view, 0, TEXT), CURRENT_MATCH)
    assert (left, top) == (PAD_X // 2 - 2, PAD_Y // 2)  # bug: the clip from 1, a margin of 1, another offset


def test_a_current_match_in_a_filtered_view_is_found_by_its_line_in_the_document(view):
    view.filter.set_speaker("S2")  # line 1 alone, shown as row 0
    view.row_delegate.find(re.compile("line"), (1, len("second ")))
    assert CURRENT_MATCH in colours_in(paint_cell(view, 0, TEXT), FULL)  # bug: the view's row (0) taken
    outer = QSortFilterProxyModel()  # a filter over the filter: mapped through both
    outer.setSourceModel(view.model())
    image = QImage(400, 60, QImage.Format.Format_ARGB32)
    image.fill(QColor(GROUND))
    painter = QPainter(image)
    try:
        view.row_delegate.paint(painter, option_of(view, QRect(0, 0, 400, 60)), outer.index(0, TEXT))
    finally:
        painter.end()
    assert CURRENT_MATCH in colours_in(image, FULL)


def test_a_marked_line_wraps_as_the_cell_does(view):
    metrics = view.fontMetrics()
    width = view.columnWidth(TEXT)
    words = ["ab"]
    while metrics.horizontalAdvance(" ".join([*words, "zz"])) < width - 6:
        words.append("ab")
    view.source.change_rows({0: Utterance(0.0, 2.0, " ".join([*words, "zz"]), "S1")})
    view.row_delegate.find(re.compile("zz"), None)
    _, top, _, _ = spans(paint_cell(view, 0, TEXT), MATCH)
    assert top > metrics.height()  # on the second line: the text is laid out 12 px narrower than the cell


def test_an_empty_line_shows_no_mark(view):
    view.source.change_rows({2: Utterance(4.0, 6.0, "", None)})
    view.row_delegate.find(re.compile("X"), None)
    assert MATCH not in colours_in(paint_cell(view, 2, TEXT), FULL)


def test_a_marked_line_keeps_the_themes_text_colour_and_the_selection_colour_when_selected(view):
    palette = view.palette()
    palette.setColor(palette.ColorRole.Text, QColor("#0000C8"))
    palette.setColor(palette.ColorRole.HighlightedText, QColor("#00C800"))
    palette.setColor(palette.ColorRole.Highlight, QColor("#400040"))
    view.setPalette(palette)
    view.row_delegate.find(re.compile("zzz|d"), None)
    plain = colours_in(paint_cell(view, 0, TEXT), FULL)
    picked = colours_in(paint_cell(view, 0, TEXT, selected=True), FULL)
    assert "#0000C8" in plain and "#00C800" not in plain and "#000000" in plain  # marked letters black
    assert "#00C800" in picked and "#400040" in picked


def test_a_speaker_chip_is_the_speakers_colour_with_text_that_contrasts(view):
    metrics = view.fontMetrics()
    dark = paint_cell(view, 0, SPEAKER)
    left, top, right, bottom = spans(dark, "#1B1B1B")
    assert (left, top) == (4 + 1, 4)  # its round ends' outermost pixels are blended with the ground
    assert right + 1 - left == metrics.horizontalAdvance("Ada") + 16 - 2
    assert bottom + 1 - top == metrics.height() + 4
    ink = spans(dark, "#FFFFFF")
    assert ink is not None and left + 8 <= ink[0] and ink[2] <= right and top <= ink[1] and ink[3] <= bottom
    assert dark.pixelColor(left + 2, top + 2).name().upper() != "#1B1B1B"  # round ends
    light = paint_cell(view, 1, SPEAKER)
    assert spans(light, "#F5F5F5") is not None and spans(light, "#000000") is not None
    assert spans(paint_cell(view, 2, SPEAKER), sp.UNASSIGNED_COLOR) is not None


def test_a_long_speaker_name_is_cut_to_its_chip_and_the_chip_to_its_cell(view):
    name = "Bartholomew Featherstonehaugh-Smythe of Upper Wallop"
    view.source.change_rows({}, (sp.SpeakerInfo("S1", name, "#1B1B1B"), BOOK[1]))
    view.setColumnWidth(SPEAKER, 100)
    view.setRowHeight(0, view.fontMetrics().height() + 6)  # a short row: the chip fits in it
    image = paint_cell(view, 0, SPEAKER)
    left, top, right, bottom = spans(image, "#1B1B1B")
    assert right + 1 - left == 100 - 8 - 2 and bottom + 1 - top == image.height() - 6
    ink = spans(image, "#FFFFFF")
    assert ink is not None and ink[2] <= right


def test_a_selected_lines_speaker_cell_is_the_selection_colour_and_others_their_tint(view):
    palette = view.palette()
    palette.setColor(palette.ColorRole.Highlight, QColor("#400040"))
    view.setPalette(palette)
    view.source.set_current_row(2)
    picked = paint_cell(view, 1, SPEAKER, selected=True)
    assert picked.pixelColor(picked.width() - 2, picked.height() - 2).name() == "#400040"
    heard = paint_cell(view, 2, SPEAKER)
    assert heard.pixelColor(heard.width() - 2, heard.height() - 2).name().upper() == "#FFF1C2"
    plain = paint_cell(view, 0, SPEAKER)
    assert plain.pixelColor(plain.width() - 2, plain.height() - 2).name().upper() == GROUND


def test_a_cell_with_no_text_is_one_line_high_and_a_long_text_wraps_to_more(qapp):
    metrics = QFontMetrics(QApplication.font())
    one = metrics.height() + PAD_Y + 4
    assert text_height(metrics, "", 30) == one  # bug: the empty text measured as "XX XX" (wraps at 20 px)
    assert text_height(metrics, "word", 400) == one
    long = " ".join(["word"] * 30)
    width = metrics.horizontalAdvance(long) + 6  # wider than the text, not once the padding is off
    assert text_height(metrics, long, width) == 2 * metrics.height() + PAD_Y + 4  # bug: `width + PAD_X`
    assert text_height(metrics, long, 10_000) == one
