"""The words of the selected line with their times; a click on a word seeks there.

Each word shows as a link whose tooltip gives its start, end and (when the backend reports it)
the recogniser's probability. Words below `LOW_CONFIDENCE` are marked (tinted and underlined) so
a reviewer can find the doubtful ones; a backend that reports no probabilities (VibeVoice) gets
no marks. Lines without word timings say so.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

from app.timeline import format_time
from engine.types import Utterance

LOW_CONFIDENCE = 0.5
MARK = "background:#FFE1A8; text-decoration:underline; color:#5A3A00"


class WordView(QTextBrowser):
    word_clicked = Signal(float)  # the word's start, seconds

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setAccessibleName("Words of the selected line")
        self.setMaximumHeight(96)
        self.setMinimumHeight(44)
        self.anchorClicked.connect(self._on_anchor)
        self.utterance: Utterance | None = None
        self.show_utterance(None)

    def low_confidence(self) -> list[int]:
        """Indices of the shown words that are marked."""
        u = self.utterance
        if u is None:
            return []
        return [i for i, w in enumerate(u.words) if (w.probability or 1.0) < LOW_CONFIDENCE]

    def show_utterance(self, u: Utterance | None) -> None:
        self.utterance = u
        if u is None:
            self.setHtml("<span style='color:#5B6670'>Select a line to see its words and their times.</span>")
            return
        if not u.words:
            self.setHtml(f"<span style='color:#5B6670'>{format_time(u.start)}–{format_time(u.end)}: "
                         "this line has no word timings.</span>")  # fmt: skip
            return
        marked = set(self.low_confidence())
        parts = []
        for i, w in enumerate(u.words):
            tip = f"{format_time(w.start)}–{format_time(w.end)}"
            if w.probability is not None:
                tip += f", {w.probability:.0%} sure"
            style = MARK if i in marked else "color:#1F2933; text-decoration:none"
            parts.append(f"<a href='w:{i}' title='{tip}' style='{style}'>{html.escape(w.text.strip())}</a>")
        note = (f" <span style='color:#8A5A00'>({len(marked)} below {LOW_CONFIDENCE:.0%} confidence)</span>"
                if marked else "")  # fmt: skip
        self.setHtml(f"<span style='color:#5B6670'>{format_time(u.start)}</span> " + " ".join(parts) + note)

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        if self.utterance is not None and text.startswith("w:"):
            self.word_clicked.emit(self.utterance.words[int(text[2:])].start)
