"""The waveform view: envelope, speech regions, chunk boundaries, speaker lanes and a playhead.

A pyqtgraph `PlotWidget` whose x axis is time (labels h:mm:ss) and whose y axis is hidden. The
waveform fills y ∈ [-1, 1]; chunk numbers sit above it and speaker lanes below. The mouse wheel
zooms and dragging pans (time only); keys: + / - zoom, ← / → pan, Home / End, 0 shows everything.
A click emits `clicked(seconds)`; a double click emits `activated(seconds)`. Views push data in
with `set_*` methods; nothing here knows about transcripts or the engine.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import QLabel

from app.envelope import EnvelopePyramid
from app.speakers import Lane
from app.timeline import format_axis
from app.widgets.waveform_items import ChunkItem, EnvelopeItem, LanesItem, SpanItem

LANE_TOP, LANE_HEIGHT = -1.12, 0.34
CHUNK_BAR = (1.06, 1.3)
TOP = 1.32
MIN_SPAN = 0.02  # seconds: the deepest zoom
PAN_STEP = 0.2  # of the visible span per arrow key
ZOOM_STEP = 1.5
LEGEND = (
    '<span style="color:#5FB894">&#9632;</span> speech (VAD) &nbsp; '
    '<span style="color:#EFC56B">&#9632;</span> chunk &nbsp; '
    '<span style="color:#D7263D">&#9474;</span> playhead'
)


class TimeAxis(pg.AxisItem):
    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:
        return [format_axis(v, spacing) if v >= 0 else "" for v in values]


class WaveformView(pg.PlotWidget):
    clicked = Signal(float)
    activated = Signal(float)

    def __init__(self, parent: object = None) -> None:
        super().__init__(parent, background="#FBFCFD", axisItems={"bottom": TimeAxis("bottom")})
        self.duration = 0.0
        plot = self.getPlotItem()
        plot.hideAxis("left")
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
        self.playhead = pg.InfiniteLine(0.0, angle=90, movable=False, pen=pg.mkPen("#D7263D", width=2))
        for z, item in enumerate((self.speech, self.selection, self.lanes, self.envelope, self.chunk_marks)):
            item.setZValue(z)
            self.addItem(item)
        self.addItem(self.playhead)
        self.playhead.setZValue(10)
        self.playhead.hide()
        self.scene().sigMouseClicked.connect(self._on_click)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Waveform")
        self.viewport().setAccessibleName("Waveform")
        self.setAccessibleDescription(
            "Recording waveform with speech regions, chunk boundaries and speaker lanes. "
            "Plus and minus zoom, arrow keys pan, 0 shows the whole recording."
        )
        self.setMinimumHeight(180)
        self.key_label = QLabel(LEGEND, self)
        self.key_label.setObjectName("waveformLegend")
        self.key_label.setAccessibleName("Legend: speech regions, chunks, playhead")
        self.key_label.adjustSize()
        self._fit_y()

    def resizeEvent(self, event: QResizeEvent | None) -> None:
        super().resizeEvent(event)
        if "key_label" not in self.__dict__:  # pyqtgraph resizes during construction
            return
        label = self.key_label
        label.move(self.width() - label.width() - 8, self.height() - label.height() - 30)

    # -- data ------------------------------------------------------------------------------
    def set_audio(self, pyramid: EnvelopePyramid | None) -> None:
        self.envelope.set_pyramid(pyramid)
        self.duration = pyramid.duration if pyramid is not None else 0.0
        self.vb.setLimits(xMin=0.0, xMax=max(self.duration, MIN_SPAN), minXRange=MIN_SPAN,
                          maxXRange=max(self.duration, MIN_SPAN))  # fmt: skip
        self.show_all()

    def set_speech(self, starts: Sequence[float], ends: Sequence[float]) -> None:
        self.speech.set_spans(starts, ends)

    def set_chunks(self, chunks: Sequence[tuple[int, float, float]]) -> None:
        self.chunk_marks.set_chunks(chunks)

    def set_lanes(self, lanes: Sequence[Lane]) -> None:
        self.lanes.set_lanes(lanes, self.duration)
        self._fit_y()

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
