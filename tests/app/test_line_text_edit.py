"""The line editor paints only itself: a key typed into a transcript line does not repaint the
table's cells beneath it, and the editor still shows its own background where it has no text.
Under the app's style sheet an editor's viewport is see-through unless it says otherwise."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QApplication, QWidget

from app.resources import style_sheet
from app.widgets.line_text_edit import LineTextEdit

RED = QColor("#FF0000")


class Table(QWidget):
    """Stands where the transcript table's viewport stands: red, and counting its paints."""

    def __init__(self) -> None:
        super().__init__()
        self.paints = 0
        self.resize(400, 200)

    def paintEvent(self, event: object) -> None:
        self.paints += 1
        QPainter(self).fillRect(self.rect(), RED)


def open_editor(qtbot) -> tuple[Table, LineTextEdit]:
    table = Table()
    table.setStyleSheet(style_sheet())  # the app's: it gives the editor a border and its colours
    editor = LineTextEdit(table)
    editor.setGeometry(20, 20, 300, 120)
    editor.setPlainText("a line")
    editor.setCursorPosition(len("a line"))
    qtbot.addWidget(table)
    table.show()
    qtbot.waitExposed(table)
    table.activateWindow()
    qtbot.waitActive(table)
    editor.setFocus()
    qtbot.waitUntil(lambda: table.paints > 0)
    for _ in range(3):
        QApplication.processEvents()
    return table, editor


def test_a_key_typed_into_a_line_repaints_the_editor_but_not_the_table_beneath_it(qtbot) -> None:
    table, editor = open_editor(qtbot)
    before = table.paints
    qtbot.keyClick(editor, Qt.Key.Key_S)
    qtbot.waitUntil(lambda: editor.toPlainText() == "a lines")
    for _ in range(3):
        QApplication.processEvents()
    assert editor.toPlainText() == "a lines"
    assert table.paints == before  # a see-through editor makes Qt paint the table under it first


def test_the_editor_shows_its_own_background_where_there_is_no_text(qtbot) -> None:
    table, editor = open_editor(qtbot)
    qtbot.keyClick(editor, Qt.Key.Key_S)
    for _ in range(3):
        QApplication.processEvents()
    shot = QApplication.primaryScreen().grabWindow(table.winId()).toImage()
    below_the_text = editor.viewport().mapTo(table, QPoint(150, 100))
    base = editor.viewport().palette().color(editor.viewport().backgroundRole())
    assert shot.pixelColor(below_the_text).name() == base.name() != RED.name()
