"""The window gives the text the room: splitter share, scrolling side column, an uncrushed find
bar, a start-here drop zone, a keyboard list that fits the screen, readable inputs on a dark
system palette, lane names in a fixed header, and Add selecting only the new speaker."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QDoubleSpinBox,
    QPushButton,
    QStyle,
    QStyleOptionSpinBox,
    QStyleOptionViewItem,
)
from qt_helpers import show_transcript

from app import commands
from app import speakers as sp
from app.actions import ACTIONS
from app.resources import style_sheet
from app.settings import TranscribeSettings
from app.theme import DARK, LIGHT, apply
from app.transcript_model import END, SPEAKER, START
from app.widgets.settings_dialog import SettingsDialog
from app.widgets.shortcuts_dialog import ShortcutsDialog
from engine.types import Speaker, Transcript, Utterance


def small_transcript(speakers: int = 4, rows: int = 40) -> Transcript:
    utterances = tuple(Utterance(i * 3.0, i * 3.0 + 2.5, f"line {i} " * 6, f"s{i % speakers}")
                       for i in range(rows))  # fmt: skip
    people = tuple(Speaker(f"s{k}", f"Person {k}") for k in range(speakers))
    return Transcript(utterances, people, duration=rows * 3.0)


def load(window, transcript: Transcript) -> None:
    commands.set_document(window.model, transcript, sp.book_from_transcript(transcript), "Load")
    QApplication.processEvents()


def test_the_waveform_takes_at_most_a_third_of_a_small_laptop_screen(make_window):
    window = make_window()
    window.resize(1024, 640)
    QApplication.processEvents()
    top, bottom = window.splitter.sizes()
    assert top <= 0.35 * (top + bottom)
    assert window.transcript_view.parentWidget() is not None and bottom > 2 * top
    window.splitter.moveSplitter(int((top + bottom) * 0.6), 1)  # the user's choice is kept
    window.resize(1100, 700)
    QApplication.processEvents()
    assert window.splitter.sizes()[0] > 0.45 * sum(window.splitter.sizes())


def test_the_side_panel_buttons_stay_inside_a_1024_by_600_window(make_window):
    app = QApplication.instance()
    old_sheet = app.styleSheet()
    try:
        app.setStyleSheet(style_sheet())  # the app's own padding, as it starts
        window = make_window()
        window.resize(1024, 600)
        load(window, small_transcript(speakers=3))
        QApplication.processEvents()
        side = [window.playback_box.follow, *window.speaker_panel.findChildren(QPushButton)]
        assert window.playback_box.follow.isVisible()
        for button in side:
            right = button.mapTo(window, QPoint(button.width(), 0)).x()
            assert right <= window.width(), f"{button.text()!r} ends at {right} px, past the window's edge"
    finally:
        app.setStyleSheet(old_sheet)


def test_the_speaker_column_scrolls_and_shows_every_speaker_at_1024x640(make_window):
    window = make_window()
    window.resize(1024, 640)
    load(window, small_transcript(speakers=8))
    QApplication.processEvents()
    panel = window.speaker_panel.list
    assert panel.count() == 8
    row = panel.visualItemRect(panel.item(0)).height()
    assert panel.viewport().height() >= 4 * row  # at least four speakers in view…
    panel.scrollToItem(panel.item(7))
    assert panel.viewport().rect().contains(panel.visualItemRect(panel.item(7)))  # …the rest a scroll away


def test_the_find_fields_keep_their_width_at_the_smallest_window(make_window):
    window = make_window()
    window.resize(window.minimumSizeHint())
    QApplication.processEvents()
    bar = window.find_bar
    assert bar.find_edit.width() >= 140 and bar.speaker_filter.width() >= 110
    window.actions_by_name["replace"].trigger()
    QApplication.processEvents()
    assert bar.replace_edit.isVisible() and bar.replace_edit.width() >= 140


def test_the_first_window_says_where_to_start_and_then_how_to_transcribe(make_window, qtbot):
    window = make_window()
    assert window.stack.currentWidget() is window.drop_zone
    assert "Drop a recording" in window.drop_zone.title.text() and "Ctrl+R" in window.drop_zone.hint.text()
    load(window, small_transcript())
    assert window.stack.currentWidget() is window.transcript_view


def test_the_shortcut_list_fits_the_screen_lists_every_key_and_can_be_searched(make_window, qtbot):
    window = make_window()
    window.actions_by_name["shortcuts"].trigger()
    dialog = window.last_dialog
    assert isinstance(dialog, ShortcutsDialog)
    screen = window.screen().availableGeometry()
    assert dialog.height() <= screen.height() and dialog.width() <= screen.width()
    keys = " ".join(k for _, _, k in dialog.visible_rows())
    for spec in ACTIONS:
        for action_key in window.actions_by_name[spec.name].shortcuts():
            assert action_key.toString() in keys, spec.name
    for extra in ("F2", "Shift+Enter", "Tab", "Esc", "Shift+drag", "Home / End"):
        assert extra in keys, extra
    dialog.search.setText("5 s")
    assert {c for _, c, _ in dialog.visible_rows()} == {"Back 5 s", "Forward 5 s"}
    dialog.close()


def test_inputs_stay_readable_on_a_dark_system_palette(qtbot):
    app = QApplication.instance()
    old_palette, old_sheet = app.palette(), app.styleSheet()
    dark = QPalette()
    for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base, QPalette.ColorRole.Button):
        dark.setColor(role, QColor("#202124"))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        dark.setColor(role, QColor("#111111"))
    try:
        app.setPalette(dark)
        app.setStyleSheet(style_sheet())
        dialog = SettingsDialog(TranscribeSettings())
        qtbot.addWidget(dialog)
        dialog.show()
        spin = next(w for w in dialog.findChildren(QDoubleSpinBox))
        check = next(w for w in dialog.findChildren(QCheckBox))
        image = spin.grab().toImage()
        background = image.pixelColor(image.width() // 2, 3)
        assert background.lightness() > 230  # the field is light…
        box = check.grab().toImage()
        assert box.pixelColor(5, box.height() // 2).lightness() > 200  # …and an unticked box looks unticked
    finally:
        app.setPalette(old_palette)
        app.setStyleSheet(old_sheet)


def test_lane_names_sit_in_a_fixed_header_not_over_the_turns(make_window):
    window = make_window()
    load(window, small_transcript(speakers=3))
    ticks = window.waveform.lane_axis._tickLevels[0]
    assert [name for _, name in ticks] == ["Person 0", "Person 1", "Person 2"]
    assert window.waveform.getPlotItem().getAxis("left").isVisible()


def test_add_selects_only_the_new_speaker(make_window):
    window = make_window()
    load(window, small_transcript(speakers=3))
    panel = window.speaker_panel
    panel.list.selectAll()
    panel.add()
    assert panel.selected_ids() == [window.model.book[-1].id]
    assert window.model.book[-1].color not in {s.color for s in window.model.book[:-1]}


def shown_whole(view, index) -> bool:
    """Whether the cell's text fits where the style draws it: the cell less the style sheet's
    padding and the style's text margins (what Qt elides the text to)."""
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect, option.text = view.visualRect(index), index.data()
    option.features |= QStyleOptionViewItem.ViewItemFeature.HasDisplay
    style = view.style()
    room = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, view).width()
    margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1
    return QFontMetrics(view.font()).horizontalAdvance(option.text) + 2 * margin <= room


def test_times_past_an_hour_fit_their_columns_and_dragged_widths_are_remembered(make_window, tmp_path, qtbot):
    window = make_window()
    show_transcript(window, Transcript((Utterance(36_000.0, 36_003.5, "Ten hours in.", "s1"),)))
    view = window.transcript_view
    for column in (START, END):
        text = view.model().index(0, column).data()
        assert text.startswith("10:00:0")
        assert shown_whole(view, view.model().index(0, column)), f"{text!r} is cut off"
    view.setFont(QFont(view.font().family(), view.font().pointSize() + 6))  # a larger font: wider times
    assert all(shown_whole(view, view.model().index(0, column)) for column in (START, END))
    view.horizontalHeader().resizeSection(SPEAKER, 211)  # as a drag of the header's edge does
    qtbot.waitUntil(lambda: window.store.value("columns", None) is not None, timeout=3000)
    again = make_window(store=window.store)
    assert again.transcript_view.columnWidth(SPEAKER) == 211
    assert again.transcript_view.columnWidth(START) == view.columnWidth(START)


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=["light", "dark"])
def test_spin_boxes_show_their_arrows_and_the_up_arrow_steps(qtbot, theme):
    app = QApplication.instance()
    old_palette, old_sheet = app.palette(), app.styleSheet()
    try:
        apply(theme)
        spin = QDoubleSpinBox()
        qtbot.addWidget(spin)
        spin.setRange(0, 100)
        spin.setValue(10)
        spin.resize(160, 30)
        spin.show()
        option = QStyleOptionSpinBox()
        spin.initStyleOption(option)
        control, part = QStyle.ComplexControl.CC_SpinBox, QStyle.SubControl.SC_SpinBoxUp
        up = spin.style().subControlRect(control, option, part, spin)
        assert up.width() >= 14 and up.height() >= 10, f"the up button is squashed to {up}"
        image = spin.grab().toImage()
        arrow = QColor("#7A8591")
        xs, ys = range(up.left(), up.right()), range(up.top(), up.bottom())
        pixels = [image.pixelColor(x, y) for x in xs for y in ys]
        drawn = sum(max(abs(c.red() - arrow.red()), abs(c.blue() - arrow.blue())) < 40 for c in pixels)
        assert drawn >= 6, "no arrow is drawn in the up button"
        qtbot.mouseClick(spin, Qt.MouseButton.LeftButton, pos=up.center())
        assert spin.value() == 11
    finally:
        app.setPalette(old_palette)
        app.setStyleSheet(old_sheet)
