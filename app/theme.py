"""Light and dark themes that follow the desktop's colour scheme, with every text ≥ 4.5:1.

The light theme is what `resources/murmur.qss` and the views' own painting are written in. A
`Theme` maps each of those light colours to its own (`swap`): the dark one to a dark
counterpart, the light one to itself, so the style sheet, the palette and the views that paint
their own text (table times and the line being heard, the word view, the waveform's axes, the
speaker panel) all change together. Colours that stay the same in both schemes (speaker chips,
whose ink is chosen per chip, find marks with black text, the playhead) are simply not listed.

- `desktop_scheme(app)` "dark" or "light": Qt's `styleHints().colorScheme()`, else the
  palette's window lightness.
- `style_sheet(theme)` the style sheet in the theme's colours; `palette(theme)` a matching
  `QPalette` (Fusion), so dialogs, scroll bars and tool tips follow too.
- `TEXT_PAIRS` every kind of text the window shows on its background, as light colours;
  `contrast_table(theme)` their WCAG contrast ratios in a theme (docs/app.md shows both).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from app.resources import style_sheet as light_style_sheet
from app.speakers import contrast_ratio

DARK_COLORS: dict[str, str] = {
    "#F4F6F8": "#1B1F23",  # window background
    "#FFFFFF": "#121518",  # surfaces: tables, inputs, toolbar, menus, status bar
    "#FBFCFD": "#121518",  # the waveform's background
    "#F8FAFB": "#181C20",  # alternate table rows
    "#1F2933": "#E4E9EE",  # ink
    "#3E4C59": "#C5CED7",  # titles, status text
    "#5B6670": "#A3AEB9",  # muted text: times, headers, hints
    "#4A5560": "#AEB8C2",  # the waveform's time labels
    "#7B8794": "#A3AEB9",
    "#8A5A00": "#E8B24A",  # notes
    "#B42318": "#FF8A7A",  # errors
    "#D9DEE3": "#3A424B",  # lines
    "#E3E7EB": "#2A3037",
    "#EEF1F4": "#262C32",
    "#F0F2F4": "#22272D",
    "#C9D1D9": "#46505A",  # input borders
    "#9AA3AD": "#5C6670",  # the waveform's axis
    "#8A96A3": "#7D8893",
    "#A7B0B9": "#6C7782",  # disabled text (exempt from contrast rules, still legible)
    "#F1F3F5": "#22272D",
    "#E0E4E8": "#333A42",
    "#EAF1F8": "#243447",  # hover, the progress panel
    "#C9DAEA": "#35506B",
    "#A9C4DE": "#3F6283",
    "#DCEAF7": "#24405C",  # selected rows
    "#BFD9F2": "#2F5378",  # selected text
    "#FFF1C2": "#4D4220",  # the line being heard
    "rgba(255, 255, 255, 225)": "rgba(18, 21, 24, 225)",  # the waveform legend
}


@dataclass(frozen=True, slots=True)
class Theme:
    name: str
    colors: Mapping[str, str] = field(default_factory=dict)  # light colour → this theme's

    @property
    def dark(self) -> bool:
        return self.name == "dark"

    def swap(self, light: str) -> str:
        """This theme's colour for a colour of the light theme."""
        return self.colors.get(light.upper(), self.colors.get(light, light))


LIGHT = Theme("light")
DARK = Theme("dark", {k.upper(): v for k, v in DARK_COLORS.items()})
THEMES = {"light": LIGHT, "dark": DARK}

TEXT_PAIRS: tuple[tuple[str, str, str], ...] = (  # what, text colour, background (light theme)
    ("transcript text", "#1F2933", "#FFFFFF"),
    ("transcript text, alternate row", "#1F2933", "#F8FAFB"),
    ("transcript text, selected line", "#1F2933", "#DCEAF7"),
    ("transcript text, line being heard", "#1F2933", "#FFF1C2"),
    ("transcript times", "#5B6670", "#FFFFFF"),
    ("table headers", "#5B6670", "#F4F6F8"),
    ("labels, menus, buttons", "#1F2933", "#F4F6F8"),
    ("panel titles (Speakers, Playback)", "#3E4C59", "#F4F6F8"),
    ("playhead time, speed", "#1F2933", "#F4F6F8"),
    ("status bar", "#3E4C59", "#FFFFFF"),
    ("progress panel", "#1F2933", "#EAF1F8"),
    ("notes (playback unavailable)", "#8A5A00", "#F4F6F8"),
    ("errors", "#B42318", "#F4F6F8"),
    ("word view words", "#1F2933", "#FFFFFF"),
    ("word view times and hints", "#5B6670", "#FFFFFF"),
    ("word view confidence note", "#8A5A00", "#FFFFFF"),
    ("speaker talk times", "#5B6670", "#FFFFFF"),
    ("waveform time labels", "#4A5560", "#FBFCFD"),
    ("waveform speaker names", "#1F2933", "#FBFCFD"),
    ("waveform legend", "#3E4C59", "#FFFFFF"),
    ("doubtful words (word view)", "#5A3A00", "#FFE1A8"),
    ("find marks", "#000000", "#FFE066"),
    ("primary button", "#FFFFFF/white", "#1F6FB2"),
)


def contrast_table(theme: Theme) -> list[tuple[str, str, str, float]]:
    """(what, text, background, WCAG contrast ratio) of every `TEXT_PAIRS` entry in `theme`."""
    rows = []
    for what, ink, ground in TEXT_PAIRS:
        fixed = ink.endswith("/white")  # written as the word "white": the same in both themes
        text = "#FFFFFF" if fixed else theme.swap(ink)
        back = theme.swap(ground)
        rows.append((what, text, back, contrast_ratio(text, back)))
    return rows


def desktop_scheme(app: QGuiApplication) -> str:
    """The desktop's colour scheme, "dark" or "light"."""
    scheme = app.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return "dark"
    if scheme == Qt.ColorScheme.Light:
        return "light"
    return "dark" if app.palette().color(QPalette.ColorRole.Window).lightness() < 128 else "light"


def style_sheet(theme: Theme = LIGHT) -> str:
    text = light_style_sheet()
    for light, own in theme.colors.items():
        text = text.replace(light, own).replace(light.lower(), own)
    return text


def apply(theme: Theme) -> None:
    """The application's palette and style sheet in `theme` (when there is an application)."""
    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.setPalette(palette(theme))
        app.setStyleSheet(style_sheet(theme))


def palette(theme: Theme) -> QPalette:
    """The application palette in `theme`'s colours."""
    p = QPalette()
    role = QPalette.ColorRole
    for r, light in ((role.Window, "#F4F6F8"), (role.WindowText, "#1F2933"), (role.Base, "#FFFFFF"),
                     (role.AlternateBase, "#F8FAFB"), (role.Text, "#1F2933"), (role.Button, "#F4F6F8"),
                     (role.ButtonText, "#1F2933"), (role.ToolTipBase, "#FFFFFF"),
                     (role.ToolTipText, "#1F2933"), (role.Highlight, "#DCEAF7"),
                     (role.HighlightedText, "#1F2933"), (role.PlaceholderText, "#5B6670"),
                     (role.Mid, "#C9D1D9"), (role.Light, "#FFFFFF"), (role.Dark, "#9AA3AD")):  # fmt: skip
        p.setColor(r, QColor(theme.swap(light)))
    p.setColor(role.Link, QColor("#7DB8EE" if theme.dark else "#1F6FB2"))
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, r, QColor(theme.swap("#A7B0B9")))
    return p
