"""The export dialog: which formats, where, and how (timestamps, one paragraph per speaker turn).

Formats come from the engine's exporter registry (`engine.export.FORMATS`); every file carries
the speakers' current names. `request()` returns what to write; the window writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from engine.export import ExportOptions

LABELS = {
    "docx": "Word document",
    "srt": "SubRip subtitles",
    "vtt": "WebVTT subtitles",
    "txt": "Plain text",
    "json": "Murmur JSON (lossless)",
    "rttm": "RTTM speaker turns",
    "seglst": "SegLST (meeteval)",
}
DEFAULT_FORMATS = ("docx", "srt", "txt")


@dataclass(frozen=True, slots=True)
class ExportRequest:
    formats: tuple[str, ...]
    target: Path  # folder / name + the first format's suffix (each format gets its own suffix)
    options: ExportOptions

    def to_dict(self) -> dict[str, Any]:
        return {
            "formats": list(self.formats),
            "folder": str(self.target.parent),
            "timestamps": self.options.timestamps,
            "merge_speakers": self.options.merge_speakers,
        }


class ExportDialog(QDialog):
    def __init__(
        self, folder: Path, name: str, remembered: dict[str, Any], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export transcript")
        self.setAccessibleName("Export transcript")
        from engine.export import FORMATS  # the exporters load python-docx: only when exporting

        chosen = set(remembered.get("formats", DEFAULT_FORMATS))
        self.format_boxes: dict[str, QCheckBox] = {}
        grid = QGridLayout()
        for i, (fmt, exporter) in enumerate(FORMATS.items()):
            box = QCheckBox(f"{LABELS.get(fmt, fmt.upper())} ({exporter.suffix})")
            box.setChecked(fmt in chosen)
            box.setAccessibleName(LABELS.get(fmt, fmt))
            self.format_boxes[fmt] = box
            grid.addWidget(box, i // 2, i % 2)
        formats = QGroupBox("Formats")
        formats.setLayout(grid)
        self.timestamps = QCheckBox("Timestamps in text and Word files")
        self.timestamps.setChecked(bool(remembered.get("timestamps", True)))
        self.merge = QCheckBox("One paragraph per speaker turn (merge consecutive lines)")
        self.merge.setChecked(bool(remembered.get("merge_speakers", False)))
        self.folder = QLineEdit(str(remembered.get("folder") or folder))
        self.folder.setAccessibleName("Export folder")
        browse = QPushButton("Browse…")
        browse.setAccessibleName("Choose the export folder")
        browse.clicked.connect(self._browse)
        self.name = QLineEdit(name)
        self.name.setAccessibleName("File name")
        where = QHBoxLayout()
        where.addWidget(self.folder, 1)
        where.addWidget(browse)
        self.error = QLabel("")
        self.error.setObjectName("errorLabel")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(formats)
        layout.addWidget(self.timestamps)
        layout.addWidget(self.merge)
        layout.addWidget(QLabel("Folder"))
        layout.addLayout(where)
        layout.addWidget(QLabel("File name (without extension)"))
        layout.addWidget(self.name)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export to", self.folder.text())
        if folder:
            self.folder.setText(folder)

    def request(self) -> ExportRequest:
        from engine.export import FORMATS, ExportOptions

        formats = tuple(f for f, box in self.format_boxes.items() if box.isChecked())
        if not formats:
            raise ValueError("choose at least one format")
        name = self.name.text().strip() or "transcript"
        if any(c in name for c in "/\\"):
            raise ValueError("the file name cannot contain slashes")
        folder = Path(self.folder.text().strip() or ".").expanduser()
        options = ExportOptions(timestamps=self.timestamps.isChecked(), merge_speakers=self.merge.isChecked())
        return ExportRequest(formats, folder / f"{name}{FORMATS[formats[0]].suffix}", options)

    def accept(self) -> None:
        try:
            self.request()
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        super().accept()
