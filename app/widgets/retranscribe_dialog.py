"""The Re-transcribe Selection dialog: the transcription settings for one range of the recording,
with that range on top ("0:02:03.4 – 0:04:10.0, 2:06.6 long") so the user sees what runs again.

`RetranscribeDialog(settings, start, end)` is a `SettingsDialog` (the same rows, scrolling, OK
refusing invalid settings) whose first row names the range: start and end as h:mm:ss.s and its
duration. The window passes the range already widened to the whole lines it cuts.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from app.settings import TranscribeSettings
from app.timeline import format_time
from app.widgets.settings_dialog import SettingsDialog


def clock(seconds: float) -> str:
    """h:mm:ss.s, the hours shown even when zero ("0:02:03.4")."""
    text = format_time(seconds)
    return text if text.count(":") == 2 else f"0:{text.zfill(len('00:00.0'))}"


def range_text(start: float, end: float) -> str:
    return f"{clock(start)} – {clock(end)}, {format_time(end - start)} long"


class RetranscribeDialog(SettingsDialog):
    def __init__(
        self, settings: TranscribeSettings, start: float, end: float, parent: QWidget | None = None
    ) -> None:
        super().__init__(settings, parent)
        self.setWindowTitle("Transcribe the selection again with…")
        self.setAccessibleName("Transcribe the selection again")
        self.range = QLabel(f"Transcribe again: <b>{range_text(start, end)}</b>")
        self.range.setAccessibleName(f"Range {range_text(start, end)}")
        self.layout().insertWidget(0, self.range)
