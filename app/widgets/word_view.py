"""The words of the selected line with their times; a click on a word seeks there.

Each word shows as a link followed by its start time in small muted figures (≥ 4.5:1); hovering it gives
its start, end and (when the backend reports it) the recogniser's probability. Words below
`LOW_CONFIDENCE` are marked (tinted and underlined) so a reviewer can find the doubtful ones; a
backend that reports no probabilities (VibeVoice) gets no marks. Lines without word timings say so.
While audio plays, the word under the playhead is drawn bold (`show_playhead`).
"""

from __future__ import annotations

import bisect
import html
from collections.abc import Callable

from PySide6.QtCore import QEvent, QUrl, Signal
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QSizePolicy, QTextBrowser, QToolTip, QWidget

from app.timeline import format_time
from engine.types import Utterance

LOW_CONFIDENCE = 0.5
MARK = "background:#FFE1A8; text-decoration:underline; color:#5A3A00"
HEARD = "font-weight:bold; border-bottom:2px solid #D7263D"  # the word under the playhead


class WordView(QTextBrowser):
    word_clicked = Signal(float)  # the word's start, seconds

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setAccessibleName("Words of the selected line")
        lines = self.fontMetrics().lineSpacing()
        self.setMaximumHeight(3 * lines + 14)  # scrolls beyond three lines: the text keeps the room
        self.setMinimumHeight(lines + 14)
        self.setSizePolicy(
            QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum
        )  # the table gets the rest
        self.anchorClicked.connect(self._on_anchor)
        self.utterance: Utterance | None = None
        self.lit: int | None = None  # index of the word under the playhead
        self._starts: list[float] = []
        self.swap: Callable[[str], str] = str  # the light theme's colours as written
        self.show_utterance(None)

    def low_confidence(self) -> list[int]:
        """Indices of the shown words that are marked."""
        u = self.utterance
        if u is None:
            return []
        return [i for i, w in enumerate(u.words) if (w.probability or 1.0) < LOW_CONFIDENCE]

    def show_playhead(self, t: float) -> None:
        """Highlight the shown line's word being heard at `t` (a bisect; redrawn only when the
        word changes, so playback costs nothing while the playhead stays in one word)."""
        u = self.utterance
        lit = None
        if u is not None and u.words and u.start <= t < u.end:
            i = bisect.bisect_right(self._starts, t) - 1
            lit = i if i >= 0 and t < u.words[i].end + 0.3 else None
        if lit != self.lit:
            self.lit = lit
            self._render()

    def show_utterance(self, u: Utterance | None) -> None:
        if u is not None and u is self.utterance:
            return
        self.utterance, self.lit = u, None
        self._starts = [w.start for w in u.words] if u is not None else []
        self._render()

    def set_theme(self, swap: Callable[[str], str]) -> None:
        """Colours for a theme: `swap` maps each light colour to the theme's (`app.theme`)."""
        self.swap = swap
        self._render()

    def _render(self) -> None:
        u, c = self.utterance, self.swap
        if u is None:
            hint = "Select a line to see its words and their times."
            self.setHtml(f"<span style='color:{c('#5B6670')}'>{hint}</span>")
            return
        if not u.words:
            self.setHtml(f"<span style='color:{c('#5B6670')}'>{format_time(u.start)}–{format_time(u.end)}: "
                         "this line has no word timings.</span>")  # fmt: skip
            return
        marked = set(self.low_confidence())
        parts = []
        for i, w in enumerate(u.words):
            style = MARK if i in marked else f"color:{c('#1F2933')}; text-decoration:none"
            if i == self.lit:
                style += "; " + HEARD
            word = html.escape(w.text.strip())
            parts.append(f"<a href='w:{i}' style='{style}'>{word}</a><sub style='color:{c('#5B6670')}'>"
                         f"{format_time(w.start)}</sub>")  # fmt: skip
        doubt = f"({len(marked)} below {LOW_CONFIDENCE:.0%} confidence)"
        note = f" <span style='color:{c('#8A5A00')}'>{doubt}</span>" if marked else ""
        self.setHtml(" ".join(parts) + note)

    def tooltip_for(self, index: int) -> str:
        """Start, end and (when known) how sure the recogniser was of word `index`."""
        if self.utterance is None or not 0 <= index < len(self.utterance.words):
            return ""
        w = self.utterance.words[index]
        sure = f", {w.probability:.0%} sure" if w.probability is not None else ""
        return f"{w.text.strip()}: {format_time(w.start)}–{format_time(w.end)}{sure}"

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            anchor = self.anchorAt(self.viewport().mapFrom(self, event.pos()))
            if anchor.startswith("w:") and self.utterance is not None:
                QToolTip.showText(event.globalPos(), self.tooltip_for(int(anchor[2:])), self)
                return True
        return super().event(event)

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        if self.utterance is not None and text.startswith("w:"):
            self.word_clicked.emit(self.utterance.words[int(text[2:])].start)
