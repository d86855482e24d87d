"""Text drawn on a scaled pyqtgraph item at a fixed pixel size (chunk numbers on the waveform).

- `device_text(painter, at, text, color, bold, box)` draws `text` unscaled, vertically centred at
  the device position of view point `at`, on an optional rounded `box`;
- `text_widths(painter, texts)` measures bold labels with one font and one metrics object.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter


def device_text(painter: QPainter, at: QPointF, text: str, color: QColor, bold: bool = False,
                box: QColor | None = None) -> None:  # fmt: skip
    """Draw `text` unscaled, vertically centred at the device position of view point `at`."""
    p = painter.transform().map(at)
    painter.save()
    painter.resetTransform()
    font = QFont(painter.font())
    font.setPointSizeF(8.5)
    font.setBold(bold)
    painter.setFont(font)
    metrics = painter.fontMetrics()
    x, baseline = p.x() + 4, p.y() + metrics.ascent() / 2 - 1
    if box is not None:
        rect = QRectF(x - 3, baseline - metrics.ascent() - 1, metrics.horizontalAdvance(text) + 6,
                      metrics.height() + 2)  # fmt: skip
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(box)
        painter.drawRoundedRect(rect, 3, 3)
    painter.setPen(color)
    painter.drawText(QPointF(x, baseline), text)
    painter.restore()


def text_widths(painter: QPainter, texts: Sequence[str]) -> list[float]:
    """Widths of bold labels (one font and one metrics object for all of them)."""
    font = QFont(painter.font())
    font.setPointSizeF(8.5)
    font.setBold(True)
    advance = QFontMetricsF(font).horizontalAdvance
    return [advance(text) + 4 for text in texts]
