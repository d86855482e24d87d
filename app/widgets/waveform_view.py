"""The waveform view: envelope, speech regions, chunk boundaries, speaker lanes and a playhead.

A pyqtgraph `PlotWidget` whose x axis is time (labels h:mm:ss) and whose y axis is hidden. The
waveform fills y ∈ [-1, 1]; chunk numbers sit above it and speaker lanes below. The mouse wheel
zooms and dragging pans (time only); keys: + / - zoom, ← / → pan, Home / End, 0 shows everything.
A click emits `clicked(seconds)`; a double click emits `activated(seconds)`; Shift+drag marks a
time range (`range_selected(start, end)`, shown shaded blue; `set_range` sets it from outside), the
range a re-transcription runs on. Speaker names sit in a fixed header at the left (the left axis,
one tick per lane), so they never cover turns; the legend sits in that header too. Views push
data in with `set_*` methods; nothing here knows about transcripts or the engine.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetrics, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import QLabel

from app.envelope import EnvelopePyramid
from app.speakers import Lane
from app.timeline import format_axis, grown_span, time_ticks
from app.widgets.waveform_items import ChunkItem, EnvelopeItem, LanesItem, SpanItem

LANE_TOP, LANE_HEIGHT = -1.12, 0.34
CHUNK_BAR = (1.06, 1.3)
TOP = 1.32
MIN_SPAN = 0.02  # seconds: the deepest zoom
PAN_STEP = 0.2  # of the visible span per arrow key
ZOOM_STEP = 1.5
HEADER_WIDTH = 96  # pixels of the fixed lane header at the left
LEGEND = (
    '<span style="color:#5FB894">&#9632;</span> speech<br>'
    '<span style="color:#EFC56B">&#9632;</span> chunk<br>'
    '<span style="color:#D7263D">&#9474;</span> playhead'
)


class RangeViewBox(pg.ViewBox):
    """A ViewBox where Shift+drag marks a time range instead of panning."""

    sigRangeDragged = Signal(float, float, bool)  # start, end, finished

    def mouseDragEvent(self, ev: object, axis: object = None) -> None:
        shift = ev.modifiers() & Qt.KeyboardModifier.ShiftModifier  # type: ignore[attr-defined]
        if not shift or ev.button() != Qt.MouseButton.LeftButton:  # type: ignore[attr-defined]
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()  # type: ignore[attr-defined]
        a = self.mapSceneToView(ev.buttonDownScenePos()).x()  # type: ignore[attr-defined]
        b = self.mapSceneToView(ev.scenePos()).x()  # type: ignore[attr-defined]
        self.sigRangeDragged.emit(min(a, b), max(a, b), bool(ev.isFinish()))  # type: ignore[attr-defined]


class LaneAxis(pg.AxisItem):
    """The fixed left header: one label per speaker lane, nothing else."""

    def __init__(self) -> None:
        super().__init__("left")
        self.setWidth(HEADER_WIDTH)
        self.setStyle(tickLength=0, autoExpandTextSpace=False)
        self.setPen(pg.mkPen("#D9DEE3"))
        self.setTextPen(pg.mkPen("#1F2933"))

    def set_lanes(self, centres: Sequence[tuple[float, str]], lane_pixels: float = 1e9) -> None:
        """One label per lane; when lanes are thinner than a line of text (a small window), only
        every n-th lane is labelled, so names never print over each other. The same labels again
        keep the header's drawn picture (each edit of a line sets them)."""
        metrics = QFontMetrics(self.font())
        step = max(1, math.ceil(metrics.height() / max(lane_pixels, 1e-6)))
        ticks = [(y, metrics.elidedText(name, Qt.TextElideMode.ElideRight, HEADER_WIDTH - 10))
                 for i, (y, name) in enumerate(centres) if i % step == 0]  # fmt: skip
        if [ticks, []] != self._tickLevels:  # an edit that moves no label redraws no header
            self.setTicks([ticks, []])


class TimeAxis(pg.AxisItem):
    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        return time_ticks(abs(maxVal - minVal), size)

    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:
        return [format_axis(v, spacing) if v >= 0 else "" for v in values]


class WaveformView(pg.PlotWidget):
    clicked = Signal(float)
    activated = Signal(float)
    range_selected = Signal(float, float)

    def __init__(self, parent: object = None) -> None:
        self.lane_axis = LaneAxis()
        super().__init__(parent, background="#FBFCFD", viewBox=RangeViewBox(),
                         axisItems={"bottom": TimeAxis("bottom"), "left": self.lane_axis})  # fmt: skip
        self.duration = 0.0
        self.marked_range: tuple[float, float] | None = None
        self._grown: float | None = None  # the width a recording in progress is shown at (`grow_audio`)
        plot = self.getPlotItem()
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.getAxis("bottom").setPen(pg.mkPen("#9AA3AD"))
        plot.getAxis("bottom").setTextPen(pg.mkPen("#4A5560"))
        self.vb = plot.getViewBox()
        self.vb.setMouseEnabled(x=True, y=False)
        self.vb.setDefaultPadding(0.0)
        self.speech = SpanItem("#7FC8A9", 70, -1.0, 1.0)
        self.envelope = EnvelopeItem()
        self.chunk_marks = ChunkItem(LANE_TOP, CHUNK_BAR)
        self.lanes = LanesItem(LANE_TOP, LANE_HEIGHT)
        self.selection = SpanItem("#FFC53D", 60, LANE_TOP - 40, TOP, border="#E0A100")
        self.range_item = SpanItem("#1F6FB2", 45, LANE_TOP - 40, TOP, border="#1F6FB2")
        self.playhead = pg.InfiniteLine(0.0, angle=90, movable=False, pen=pg.mkPen("#D7263D", width=2))
        items = (self.speech, self.range_item, self.selection, self.lanes, self.envelope, self.chunk_marks)
        for z, item in enumerate(items):
            item.setZValue(z)
            self.addItem(item)
        self.addItem(self.playhead)
        self.playhead.setZValue(10)
        self.playhead.hide()
        self.scene().sigMouseClicked.connect(self._on_click)
        self.vb.sigRangeDragged.connect(self._on_range_drag)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Waveform")
        self.viewport().setAccessibleName("Waveform")
        self.setAccessibleDescription(
            "Recording waveform with speech regions, chunk boundaries and speaker lanes. "
            "Plus and minus zoom, arrow keys pan, 0 shows the whole recording."
        )
        self.setMinimumHeight(90)
        self.key_label = QLabel(LEGEND, self)
        self.key_label.setObjectName("waveformLegend")
        self.key_label.setAccessibleName("Legend: speech regions, chunks, playhead")
        self.key_label.setFixedWidth(HEADER_WIDTH - 12)
        self.key_label.adjustSize()
        self.lane_axis.set_lanes([])  # an empty header, not numbers, before there are lanes
        plot.getAxis("bottom").setStyle(showValues=False)  # no time labels before a recording
        self._fit_y()

    def resizeEvent(self, event: QResizeEvent | None) -> None:
        super().resizeEvent(event)
        if "key_label" not in self.__dict__:  # pyqtgraph resizes during construction
            return
        self.key_label.move(6, 6)  # top of the lane header, beside the waveform, over no data
        self._label_lanes()

    def set_theme(self, swap: Callable[[str], str]) -> None:
        """Background and axes in a theme's colours (`swap`: light colour → the theme's)."""
        self.setBackground(swap("#FBFCFD"))
        self.lane_axis.setPen(pg.mkPen(swap("#D9DEE3")))
        self.lane_axis.setTextPen(pg.mkPen(swap("#1F2933")))
        bottom = self.getPlotItem().getAxis("bottom")
        bottom.setPen(pg.mkPen(swap("#9AA3AD")))
        bottom.setTextPen(pg.mkPen(swap("#4A5560")))

    # -- data ------------------------------------------------------------------------------
    def set_audio(self, pyramid: EnvelopePyramid | None) -> None:
        self.envelope.set_pyramid(pyramid)
        self.duration, self._grown = (pyramid.duration if pyramid is not None else 0.0), None
        self.vb.setLimits(xMin=0.0, xMax=max(self.duration, MIN_SPAN), minXRange=MIN_SPAN,
                          maxXRange=max(self.duration, MIN_SPAN))  # fmt: skip
        self.getPlotItem().getAxis("bottom").setStyle(showValues=self.duration > 0)  # no "0:00" rows
        self.show_all()

    def grow_audio(self, pyramid: EnvelopePyramid) -> None:
        """A recording in progress, grown to `pyramid`, shown `grown_span` wide: the view rescales (every
        item drawn again) a few times an hour, not at every redraw; a view zoomed or panned stays."""
        following = self._grown is None or pyramid.duration < self.duration or self._shows(0.0, self._grown)
        self.envelope.set_pyramid(pyramid)
        self.duration, span = pyramid.duration, grown_span(pyramid.duration)
        self.vb.setLimits(xMin=0.0, xMax=span, minXRange=MIN_SPAN, maxXRange=span)
        self.getPlotItem().getAxis("bottom").setStyle(showValues=True)
        if following and not self._shows(0.0, span):
            self.vb.setXRange(0.0, span, padding=0.0)
        self._grown = span

    def _shows(self, t0: float, t1: float) -> bool:
        """Whether the view shows [t0, t1] (to a thousandth of it: ranges come back rounded)."""
        x0, x1 = self.visible_range()
        slack = (t1 - t0) / 1000
        return abs(x0 - t0) <= slack and abs(x1 - t1) <= slack

    def set_speech(self, starts: Sequence[float], ends: Sequence[float]) -> None:
        self.speech.set_spans(starts, ends)

    def set_chunks(self, chunks: Sequence[tuple[int, float, float]]) -> None:
        self.chunk_marks.set_chunks(chunks)

    def set_lanes(self, lanes: Sequence[Lane]) -> None:
        self.lanes.set_lanes(lanes, self.duration)
        self._fit_y()
        self._label_lanes()

    def _label_lanes(self) -> None:
        _, (y0, y1) = self.vb.viewRange()
        pixels = self.vb.height() * LANE_HEIGHT / max(y1 - y0, 1e-9)
        self.lane_axis.set_lanes(self.lanes.centres(), pixels)

    def set_range(self, start: float | None, end: float | None = None) -> None:
        """Mark [start, end], cut to the recording, as the chosen range (None clears it, and so
        does a range with less than `MIN_SPAN` of the recording in it)."""
        if start is not None and end is not None:
            start, end = max(start, 0.0), min(end, self.duration) if self.duration else end
        if start is None or end is None or end - start < MIN_SPAN:
            self.marked_range = None
            self.range_item.set_spans([], [])
        else:
            self.marked_range = (start, end)
            self.range_item.set_spans([start], [end])

    def _on_range_drag(self, start: float, end: float, finished: bool) -> None:
        self.set_range(start, end)
        if finished and self.marked_range is not None:
            self.range_selected.emit(*self.marked_range)

    def set_selection(self, start: float | None, end: float | None = None) -> None:
        if start is None or end is None:
            self.selection.set_spans([], [])
        else:
            self.selection.set_spans([start], [end])

    def set_playhead(self, t: float | None) -> None:
        if t is None:
            self.playhead.hide()
            return
        self.playhead.setValue(t)
        self.playhead.show()

    # -- navigation ------------------------------------------------------------------------
    def visible_range(self) -> tuple[float, float]:
        (x0, x1), _ = self.vb.viewRange()
        return x0, x1

    def show_range(self, t0: float, t1: float) -> None:
        self.vb.setXRange(max(t0, 0.0), min(t1, max(self.duration, MIN_SPAN)), padding=0.0)

    def show_all(self) -> None:
        if self._grown is not None:  # a recording in progress: its whole width, followed again
            self.vb.setXRange(0.0, self._grown, padding=0.0)
            return
        self.show_range(0.0, max(self.duration, MIN_SPAN))

    def ensure_visible(self, start: float, end: float) -> None:
        """Pan (and zoom out if needed) so that [start, end] is on screen with a margin."""
        x0, x1 = self.visible_range()
        if x0 <= start and end <= x1:
            return
        span = max(x1 - x0, (end - start) * 1.5)
        centre = (start + end) / 2
        t0 = min(max(centre - span / 2, 0.0), max(self.duration - span, 0.0))
        self.show_range(t0, t0 + span)

    def zoom(self, factor: float, centre: float | None = None) -> None:
        x0, x1 = self.visible_range()
        centre = (x0 + x1) / 2 if centre is None else centre
        span = min(max((x1 - x0) / factor, MIN_SPAN), max(self.duration, MIN_SPAN))
        t0 = min(max(centre - span / 2, 0.0), max(self.duration - span, 0.0))
        self.show_range(t0, t0 + span)

    def pan(self, fraction: float) -> None:
        x0, x1 = self.visible_range()
        shift = (x1 - x0) * fraction
        t0 = min(max(x0 + shift, 0.0), max(self.duration - (x1 - x0), 0.0))
        self.show_range(t0, t0 + (x1 - x0))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        x0, x1 = self.visible_range()
        actions = {
            Qt.Key.Key_Plus: lambda: self.zoom(ZOOM_STEP),
            Qt.Key.Key_Equal: lambda: self.zoom(ZOOM_STEP),
            Qt.Key.Key_Minus: lambda: self.zoom(1 / ZOOM_STEP),
            Qt.Key.Key_Left: lambda: self.pan(-PAN_STEP),
            Qt.Key.Key_Right: lambda: self.pan(PAN_STEP),
            Qt.Key.Key_Home: lambda: self.show_range(0.0, x1 - x0),
            Qt.Key.Key_End: lambda: self.show_range(self.duration - (x1 - x0), self.duration),
            Qt.Key.Key_0: self.show_all,
        }
        action = actions.get(Qt.Key(key))
        if action is None:
            super().keyPressEvent(event)
            return
        action()
        event.accept()

    def _fit_y(self) -> None:
        bottom = LANE_TOP - max(len(self.lanes.lanes), 1) * LANE_HEIGHT - 0.04
        self.vb.setLimits(yMin=bottom, yMax=TOP)
        self.vb.setYRange(bottom, TOP, padding=0.0)

    def _on_click(self, event: object) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self.duration <= 0:  # type: ignore[attr-defined]
            return
        point = self.vb.mapSceneToView(event.scenePos())  # type: ignore[attr-defined]
        t = min(max(point.x(), 0.0), self.duration)
        if event.double():  # type: ignore[attr-defined]
            self.activated.emit(t)
        else:
            self.clicked.emit(t)
