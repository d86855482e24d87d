"""A transcript table on a real model for the cell tests: three lines, two speakers and one line
unassigned; helpers that open a line's editor, paint one cell as its delegate does, and read
colours back."""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import QEvent, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QUndoStack
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionViewItem

from app import commands
from app import speakers as sp
from app.transcript_model import TranscriptModel
from app.widgets.line_text_edit import LineTextEdit
from app.widgets.transcript_view import TranscriptView
from engine.types import Speaker, Transcript, Utterance

LINES = (
    Utterance(0.0, 2.0, "hello there world", "S1"),
    Utterance(2.0, 4.0, "second line here", "S2"),
    Utterance(4.0, 6.0, "third line", None),
)
GROUND = "#808080"  # what a cell is painted on in these tests
FULL = QRect(0, 0, 10_000, 10_000)
BOOK = (sp.SpeakerInfo("S1", "Ada", "#1B1B1B"), sp.SpeakerInfo("S2", "Bo", "#F5F5F5"))


def shown_table() -> Iterator[TranscriptView]:
    """A shown table of `LINES` (900 × 400), closed afterwards: the body of the tests' fixture."""
    model = TranscriptModel(QUndoStack())
    transcript = Transcript(LINES, (Speaker("S1", "Ada"), Speaker("S2", "Bo")), duration=6.0)
    commands.set_document(model, transcript, BOOK, "Transcribe")
    shown = TranscriptView(model)
    shown.resize(900, 400)
    shown.show()
    QApplication.processEvents()
    yield shown
    shown.close()
    shown.deleteLater()
    QApplication.processEvents()


def open_text(view: TranscriptView, row: int) -> LineTextEdit:
    view.select_row(row)
    QTest.keyClick(view, Qt.Key.Key_F2)
    editor = view.row_delegate.editor
    assert isinstance(editor, LineTextEdit)
    return editor


def settle() -> None:
    """Deliver what Qt posted, closed editors' deferred deletion included."""
    QApplication.processEvents()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
    QApplication.processEvents()


def colours_in(image: QImage, rect: QRect) -> set[str]:
    return {
        image.pixelColor(x, y).name().upper()
        for x in range(max(rect.left(), 0), min(rect.right(), image.width() - 1))
        for y in range(max(rect.top(), 0), min(rect.bottom(), image.height() - 1))
    }


def option_of(view: TranscriptView, rect: QRect | None = None) -> QStyleOptionViewItem:
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    if rect is not None:
        option.rect = rect
    return option


def paint_cell(view: TranscriptView, row: int, column: int, selected: bool = False) -> QImage:
    """One cell as its delegate paints it, on a grey ground (the delegate called as the view does)."""
    index = view.model().index(row, column)
    size = view.visualRect(index).size()
    image = QImage(size, QImage.Format.Format_ARGB32)
    image.fill(QColor(GROUND))
    option = QStyleOptionViewItem()
    view.initViewItemOption(option)
    option.rect = QRect(QPoint(0, 0), size)
    if selected:
        option.state |= QStyle.StateFlag.State_Selected
    painter = QPainter(image)
    try:
        view.itemDelegateForColumn(column).paint(painter, option, index)
    finally:
        painter.end()
    return image


def spans(image: QImage, colour: str) -> tuple[int, int, int, int] | None:
    """(left, top, right, bottom) of the pixels of exactly `colour`, or None."""
    xs, ys = [], []
    for y in range(image.height()):
        for x in range(image.width()):
            if image.pixelColor(x, y).name().upper() == colour:
                xs.append(x)
                ys.append(y)
    return (min(xs), min(ys), max(xs), max(ys)) if xs else None


SPEAKERS = (Speaker("S1", "Ada"), Speaker("S2", "Bo"))


def lines(count: int, text: str = "line", offset: float = 0.0) -> tuple[Utterance, ...]:
    speakers = ("S1", "S2", None)
    return tuple(
        Utterance(offset + 3 * i, offset + 3 * i + 2, f"{text} {i}", speakers[i % 3]) for i in range(count)
    )


def show(model: TranscriptModel, utterances: tuple[Utterance, ...]) -> None:
    transcript = Transcript(utterances, SPEAKERS, duration=utterances[-1].end if utterances else 0.0)
    commands.set_document(model, transcript, BOOK, "Transcribe")


def forty_lines_shown() -> Iterator[TranscriptView]:
    """A shown table of forty lines (700 × 300), closed afterwards: the body of the view tests' fixture."""
    model = TranscriptModel(QUndoStack())
    show(model, lines(40))
    shown = TranscriptView(model)
    shown.resize(700, 300)
    shown.show()
    settle()
    yield shown
    shown.close()
    shown.deleteLater()
    settle()
