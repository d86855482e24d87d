"""The graphics items the waveform view stacks (pyqtgraph GraphicsObjects, data in seconds).

Each item paints only what is inside the visible x-range, so cost depends on the view's width in
pixels, never on the recording's length (envelope path and chunk labels are kept per range). Each
is cached as a picture of what it shows (`CACHE`): the playhead moves 30 times a second over all
of them, and a frame then copies pixels instead of drawing paths and text again (the waveform's
paint goes from about 10 ms to 1.5 ms on a 3-hour recording); a change of content or of the
visible range (`update()`) draws the item again.
- `EnvelopeItem`: the min/max envelope from an `EnvelopePyramid` (a stroke per bin), or the samples
  as a line when zoomed in;
- `SpanItem`: shaded spans between two y values (VAD speech, the selected utterance);
- `ChunkItem`: chunk boundaries as dashed lines with chunk numbers along the top; a number that
  does not fit inside its bar, or would touch the previous one, is left out;
- `LanesItem`: one lane per speaker with a coloured band per turn; `set_lanes` updates only the
  lanes that changed (by speaker), so an edit never rebuilds every lane. The names live in the
  view's fixed left header, never over the turns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem

from app.envelope import EnvelopePyramid
from app.speakers import Lane
from app.timeline import place_labels, visible_spans
from app.widgets.device_text import device_text, text_widths

MAX_BINS_PER_PIXEL = 1
CACHE = QGraphicsItem.CacheMode.DeviceCoordinateCache


def _view_x(item: pg.GraphicsObject) -> tuple[float, float, float] | None:
    """(t0, t1, seconds per pixel) of the view the item is in, or None when not shown yet."""
    vb = item.getViewBox()
    if vb is None:
        return None
    (x0, x1), _ = vb.viewRange()
    width = max(vb.width(), 1.0)
    return x0, x1, (x1 - x0) / width


class EnvelopeItem(pg.GraphicsObject):
    def __init__(self, color: str = "#3A6EA5") -> None:
        super().__init__()
        self.setCacheMode(CACHE)
        self.pyramid: EnvelopePyramid | None = None
        self.gain = 1.0
        self.color = QColor(color)
        self._path: tuple[tuple[float, float, float], bool, QPainterPath] | None = None  # view → path

    def set_pyramid(self, pyramid: EnvelopePyramid | None) -> None:
        self.prepareGeometryChange()
        self.pyramid, self._path = pyramid, None
        if pyramid is not None:
            top = pyramid.levels[-1]
            peak = float(max(np.abs(top.mins).max(initial=0), np.abs(top.maxs).max(initial=0)))
            self.gain = 0.95 / peak if peak > 1e-4 else 1.0
        self.update()

    def boundingRect(self) -> QRectF:
        duration = self.pyramid.duration if self.pyramid is not None else 0.0
        return QRectF(0.0, -1.0, duration, 2.0)

    def viewRangeChanged(self) -> None:
        self.update()

    def paint(self, painter: QPainter, *args: object) -> None:
        view = _view_x(self)
        if self.pyramid is None or view is None:
            return
        if self._path is None or self._path[0] != view:  # repaints of an unmoved view reuse it
            built = self._build(self.pyramid, *view)
            if built is None:
                return
            self._path = (view, *built)
        _, raw, path = self._path
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, raw)
        painter.setPen(pg.mkPen(self.color, width=1.2 if raw else 1, cosmetic=True))
        painter.drawPath(path)

    def _build(self, pyramid: EnvelopePyramid, t0: float, t1: float,
               spp: float) -> tuple[bool, QPainterPath] | None:  # fmt: skip
        """(raw samples?, path) of the envelope between t0 and t1 at `spp` seconds per pixel."""
        pixels = max(int((t1 - t0) / spp), 1)
        env = pyramid.window(t0, t1, pixels * MAX_BINS_PER_PIXEL)
        if len(env.times) == 0:
            return None
        if env.raw:
            return True, pg.arrayToQPath(env.times, env.mins * self.gain)
        # one vertical stroke per bin, min to max: as fast as Qt draws lines, and filled-looking
        x = np.repeat(env.times + env.step / 2, 2)
        y = np.empty(len(x))
        y[0::2], y[1::2] = env.mins * self.gain, env.maxs * self.gain
        return False, pg.arrayToQPath(x, y, connect="pairs")


class SpanItem(pg.GraphicsObject):
    """Spans [start, end] drawn as rectangles between `y0` and `y1`."""

    def __init__(self, color: str, alpha: int, y0: float, y1: float, border: str | None = None) -> None:
        super().__init__()
        self.setCacheMode(CACHE)
        fill = QColor(color)
        fill.setAlpha(alpha)
        self.brush = QBrush(fill)
        self.pen = pg.mkPen(border, width=1.5, cosmetic=True) if border else QPen(Qt.PenStyle.NoPen)
        self.y0, self.y1 = y0, y1
        self.starts = np.zeros(0)
        self.ends = np.zeros(0)

    def set_spans(self, starts: Sequence[float], ends: Sequence[float]) -> None:
        self.prepareGeometryChange()
        order = np.argsort(np.asarray(starts, dtype=float), kind="stable")
        self.starts = np.asarray(starts, dtype=float)[order]
        self.ends = np.maximum.accumulate(np.asarray(ends, dtype=float)[order]) if len(order) else np.zeros(0)
        self.update()

    def boundingRect(self) -> QRectF:
        # tight around the spans, so moving the selected one repaints only where it was and is
        start = float(self.starts[0]) if len(self.starts) else 0.0
        end = float(self.ends[-1]) if len(self.ends) else 0.0
        return QRectF(start, self.y0, max(end - start, 1e-9), self.y1 - self.y0)

    def viewRangeChanged(self) -> None:
        self.update()

    def paint(self, painter: QPainter, *args: object) -> None:
        view = _view_x(self)
        if view is None or len(self.starts) == 0:
            return
        t0, t1, spp = view
        starts, ends = visible_spans(self.starts, self.ends, t0, t1, spp)
        painter.setPen(self.pen)
        painter.setBrush(self.brush)
        for a, b in zip(starts, ends, strict=True):
            painter.drawRect(QRectF(float(a), self.y0, float(b - a), self.y1 - self.y0))


class ChunkItem(pg.GraphicsObject):
    """Chunks as numbered bars along the top (`bar` = (y0, y1)) and a dashed line down to `y0` at
    each chunk's start and at the last chunk's end; gaps between bars are audio no chunk covers."""

    def __init__(self, y0: float, bar: tuple[float, float]) -> None:
        super().__init__()
        self.setCacheMode(CACHE)
        self.y0, self.bar = y0, bar
        self.chunks: list[tuple[int, float, float]] = []
        self._labels: tuple[tuple[float, float, float], list[tuple[int, float]], list[str]] | None = None
        self.drawn_labels: list[tuple[str, float, float]] = []  # as placed for the view: (text, x0, x1)

    def set_chunks(self, chunks: Sequence[tuple[int, float, float]]) -> None:
        self.prepareGeometryChange()
        self.chunks, self._labels = sorted(chunks, key=lambda c: c[1]), None
        self.update()

    def boundingRect(self) -> QRectF:
        end = self.chunks[-1][2] if self.chunks else 0.0
        return QRectF(0.0, self.y0, max(end, 1e-9), self.bar[1] - self.y0)

    def viewRangeChanged(self) -> None:
        self.update()

    def paint(self, painter: QPainter, *args: object) -> None:
        view = _view_x(self)
        if view is None or not self.chunks:
            return
        t0, t1, spp = view
        visible = [c for c in self.chunks if c[2] >= t0 and c[1] <= t1]
        ink = QColor("#8A5A00")
        lo, hi = self.bar
        painter.setPen(Qt.PenStyle.NoPen)
        for index, start, end in visible:
            painter.setBrush(QColor("#F6D58E") if index % 2 else QColor("#FBE7B8"))
            painter.drawRect(QRectF(start, lo, end - start, hi - lo))
        painter.setPen(pg.mkPen(ink, width=1, style=Qt.PenStyle.DashLine, cosmetic=True))
        for _index, start, _end in visible:
            painter.drawLine(QPointF(start, self.y0), QPointF(start, hi))
        if visible and visible[-1] is self.chunks[-1]:
            end = self.chunks[-1][2]
            painter.drawLine(QPointF(end, self.y0), QPointF(end, hi))
        if self._labels is None or self._labels[0] != view:  # placed once per view, not per repaint
            labels = [f"chunk {i + 1}" if (e - s) / spp > 70 else f"{i + 1}" for i, s, e in visible]
            spans = [(start, end) for _, start, end in visible]
            widths = text_widths(painter, labels)
            placed = place_labels(spans, t0, spp, widths)
            self._labels = (view, placed, labels)
            self.drawn_labels = [(labels[k], x, x + widths[k] * spp) for k, x in placed]
        _, placed, labels = self._labels
        for k, x in placed:
            device_text(painter, QPointF(x, (lo + hi) / 2), labels[k], ink, bold=True)


class LanesItem(pg.GraphicsObject):
    """One horizontal lane per speaker, stacked downwards from `top`, each `height` tall."""

    def __init__(self, top: float, height: float) -> None:
        super().__init__()
        self.top, self.height = top, height
        self.lanes: list[tuple[Lane, SpanItem]] = []
        self.duration = 0.0

    def set_lanes(self, lanes: Sequence[Lane], duration: float) -> None:
        """Show `lanes` in order; a lane whose speaker already has an item reuses it and redraws
        its turns only when they changed."""
        old = {lane.key: (lane, item) for lane, item in self.lanes}
        changed = duration != self.duration or len(lanes) != len(self.lanes)
        if changed:
            self.prepareGeometryChange()
        self.lanes, self.duration = [], duration
        for i, lane in enumerate(lanes):
            y1 = self.top - i * self.height - 0.04
            previous, item = old.pop(lane.key, (None, None))
            if item is None or previous is None or previous.color != lane.color:
                if item is not None:
                    _drop(item)
                item = SpanItem(lane.color, 235, 0.0, 0.0)
                item.setParentItem(self)
                item.setFlag(item.GraphicsItemFlag.ItemStacksBehindParent)
                previous = None
            if (item.y0, item.y1) != (y1 - self.height + 0.08, y1):
                item.y0, item.y1 = y1 - self.height + 0.08, y1
                item.prepareGeometryChange()
                item.update()
            if previous is None or _turns_differ(previous, lane):
                item.set_spans(lane.starts, lane.ends)  # repaints that lane only
            self.lanes.append((lane, item))
        for _lane, item in old.values():
            _drop(item)
        if changed:  # the stripes behind the lanes; a rename or a recolour leaves them alone
            self.update()

    def bottom(self) -> float:
        return self.top - max(len(self.lanes), 1) * self.height

    def centres(self) -> list[tuple[float, str]]:
        """(y, name) of each lane's middle, for the view's lane header."""
        return [(self.top - (i + 0.5) * self.height, lane.name) for i, (lane, _) in enumerate(self.lanes)]

    def boundingRect(self) -> QRectF:
        return QRectF(0.0, self.bottom(), max(self.duration, 1e-9), self.top - self.bottom())

    def viewRangeChanged(self) -> None:
        self.update()

    def paint(self, painter: QPainter, *args: object) -> None:
        view = _view_x(self)
        if view is None:
            return
        t0, t1, _ = view
        for i in range(0, len(self.lanes), 2):
            y1 = self.top - i * self.height
            painter.fillRect(QRectF(t0, y1 - self.height, t1 - t0, self.height), QColor(0, 0, 0, 10))


def _turns_differ(a: Lane, b: Lane) -> bool:
    """Whether the lanes cover different time (a split or merge of one turn covers the same)."""
    if a is b or (a.starts, a.ends) == (b.starts, b.ends):
        return False
    return _covered(a) != _covered(b)


def _covered(lane: Lane) -> list[tuple[float, float]]:
    spans: list[tuple[float, float]] = []
    for start, end in sorted(zip(lane.starts, lane.ends, strict=True)):
        if spans and start <= spans[-1][1] + 1e-6:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


def _drop(item: pg.GraphicsObject) -> None:
    item.setParentItem(None)
    if item.scene() is not None:
        item.scene().removeItem(item)
