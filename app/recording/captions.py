"""The captions window: the last live lines in large type, for a second screen or a projector.

`CaptionsWindow` is a separate, resizable top-level window. `add_line(name, color, text)` appends
a line with its speaker's name and colour (the same speaker going on extends their line); the
newest lines that fit are shown, bottom-aligned, the oldest of them cut at its start if needed.
The type grows with the window (`font_px`: a fraction of the height, never below `MIN_PX`), so
it stays readable from across a room at any size.
`set_theme("dark" | "light")` switches between white-on-black and black-on-white; the D key
toggles it, F11 toggles full screen (Esc leaves it). A hidden window keeps its lines and lays them
out when it shows (fitting them costs a few text layouts per line: nothing for a window nobody sees).
"""

from __future__ import annotations

import html
from collections import deque

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QResizeEvent, QShowEvent, QTextDocument
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.speakers import contrast_ratio

KEEP = 4
MIN_PX = 28
THEMES = {"dark": ("#000000", "#FFFFFF"), "light": ("#FFFFFF", "#000000")}  # background, text


def font_px(height: int) -> int:
    """The caption size for a window `height` pixels high: 3 lines and their names fit."""
    return max(MIN_PX, height // 9)


def readable(color: str, background: str) -> str:
    """`color`, or the text colour when it has too little contrast on `background` (WCAG 3:1)."""
    if contrast_ratio(color, background) >= 3.0:
        return color
    return THEMES["dark" if background == THEMES["dark"][0] else "light"][1]


class CaptionsWindow(QWidget):
    def __init__(self, theme: str = "dark", parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setWindowTitle("Murmur — Captions")
        self.setAccessibleName("Live captions")
        self.setObjectName("captionsWindow")
        self.lines: deque[tuple[str, str, str]] = deque(maxlen=KEEP)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setAlignment(Qt.AlignmentFlag.AlignBottom | Qt.AlignmentFlag.AlignLeft)
        self.label.setAccessibleName("Captions")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(32, 24, 32, 24)
        layout.addWidget(self.label)
        self.theme = ""
        self.set_theme(theme)
        self.resize(1280, 400)

    def set_theme(self, theme: str) -> None:
        if theme not in THEMES:
            raise ValueError(f"captions theme must be one of {', '.join(THEMES)}, got {theme!r}")
        self.theme = theme
        background, text = THEMES[theme]
        label = f"#captionsWindow QLabel {{ color: {text}; background: {background}; }}"
        self.setStyleSheet(f"#captionsWindow {{ background: {background}; }} {label}")
        self._render()

    def add_line(self, name: str, color: str, text: str) -> None:
        if self.lines and self.lines[-1][0] == name:  # the same speaker goes on: one paragraph
            _, _, before = self.lines.pop()
            text = f"{before} {text}"
        self.lines.append((name, color, text))
        self._render()

    def clear(self) -> None:
        self.lines.clear()
        self._render()

    def _render(self) -> None:
        """The newest lines that fit; the oldest shown one loses words at its start ("…") if needed."""
        if not self.isVisible():
            return  # laid out when shown (`showEvent`)
        lines = list(self.lines)
        shown = self._html(lines)
        while len(lines) > 1 and not self._fits(shown):
            lines.pop(0)
            shown = self._html(lines)
        if lines and not self._fits(shown):
            name, color, text = lines[0]
            words = text.split()
            while len(words) > 1 and not self._fits(shown):
                words = words[max(1, len(words) // 8) :]
                shown = self._html([(name, color, "… " + " ".join(words))])
        self.label.setText(shown)

    def _html(self, lines: list[tuple[str, str, str]]) -> str:
        px = font_px(self.height())
        background = THEMES[self.theme][0]
        parts = []
        for name, color, text in lines:
            shade = readable(color, background)
            who = f'<span style="color:{shade}; font-weight:600">{html.escape(name)}:</span> '
            parts.append(f"<p style='margin:0 0 {px // 3}px 0'>{who}{html.escape(text)}</p>")
        return f"<div style='font-size:{px}px'>{''.join(parts)}</div>"

    def _fits(self, shown: str) -> bool:
        doc = QTextDocument()
        doc.setDefaultFont(self.label.font())
        doc.setHtml(shown)
        doc.setTextWidth(max(self.label.width(), 1))
        return doc.size().height() <= max(self.label.height(), 1)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._render()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._render()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key == Qt.Key.Key_D:
            self.set_theme("light" if self.theme == "dark" else "dark")
        elif key == Qt.Key.Key_F11:
            self.showNormal() if self.isFullScreen() else self.showFullScreen()
        elif key == Qt.Key.Key_Escape and self.isFullScreen():
            self.showNormal()
        else:
            super().keyPressEvent(event)
