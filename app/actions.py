"""Every command of the window as a table: text, shortcuts, icon, tooltip and menu.

`ACTIONS` is the single source of truth; `build_actions(parent)` turns it into `QAction`s keyed
by name (shortcuts show in the menus and in tooltips), and `shortcut_table()` lists them for the
keyboard help. Handlers are connected by the window, so this module holds no behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QIcon, QKeySequence

from app.resources import icon

Std = QKeySequence.StandardKey


@dataclass(frozen=True, slots=True)
class ActionSpec:
    name: str
    text: str  # menu text, & marks the mnemonic
    menu: str
    shortcuts: tuple[str | QKeySequence.StandardKey, ...] = ()
    icon: str = ""
    tip: str = ""
    checkable: bool = False


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("open", "&Open…", "File", (Std.Open,), "open", "Open a recording or a project"),
    ActionSpec("save", "&Save Project", "File", (Std.Save,), "save", "Save the project"),
    ActionSpec("save_as", "Save Project &As…", "File", ("Ctrl+Shift+S",), "", "Save under a new name"),
    ActionSpec("export", "&Export…", "File", ("Ctrl+E",), "export", "Export (DOCX, SRT, VTT…)"),
    ActionSpec("quit", "&Quit", "File", (Std.Quit, "Ctrl+Q"), "", "Close Murmur"),
    ActionSpec("undo", "&Undo", "Edit", (Std.Undo,), "undo", "Undo the last edit"),
    ActionSpec("redo", "&Redo", "Edit", ("Ctrl+Shift+Z", "Ctrl+Y"), "redo", "Redo the edit"),
    ActionSpec("find", "&Find…", "Edit", (Std.Find,), "find", "Find text in the transcript"),
    ActionSpec("find_next", "Find &Next", "Edit", ("F3",), "", "Next match"),
    ActionSpec("find_previous", "Find Pre&vious", "Edit", ("Shift+F3",), "", "Previous match"),
    ActionSpec("replace", "R&eplace…", "Edit", ("Ctrl+H",), "", "Find and replace"),
    ActionSpec("split", "Sp&lit at Cursor", "Edit", ("Ctrl+K",), "split",
               "Split the utterance at the text cursor (or at the playhead)"),
    ActionSpec("merge", "&Merge with Next", "Edit", ("Ctrl+J",), "merge", "Join with the next utterance"),
    ActionSpec("delete_lines", "&Delete Lines", "Edit", ("Del",), "", "Delete the selected lines"),
    ActionSpec("insert_line", "&Insert Empty Line", "Edit", ("Ctrl+Shift+I",), "",
               "Insert an empty line after the selected one"),
    ActionSpec("merge_same", "Merge Lines of the Same S&peaker", "Edit", ("Ctrl+Shift+J",), "",
               "Join consecutive lines of one speaker (in the selection, else everywhere)"),
    ActionSpec("next_misspelling", "Next &Misspelling", "Edit", ("Shift+F7",), "",
               "Open the next misspelled word (right-click it for suggestions)"),
    ActionSpec("go_to_time", "&Go to Time…", "Edit", ("Ctrl+G",), "", "Jump to a time (h:mm:ss)"),
    ActionSpec("shift_times", "S&hift All Times…", "Edit", ("Ctrl+Shift+T",), "",
               "Move every time by an offset (for a trimmed recording)"),
    ActionSpec("start_earlier", "Start 0.1 s Earlier", "Edit", ("Ctrl+Alt+Left",)),
    ActionSpec("start_later", "Start 0.1 s Later", "Edit", ("Ctrl+Alt+Right",)),
    ActionSpec("end_earlier", "End 0.1 s Earlier", "Edit", ("Ctrl+Alt+Shift+Left",)),
    ActionSpec("end_later", "End 0.1 s Later", "Edit", ("Ctrl+Alt+Shift+Right",)),
    ActionSpec("new_speaker", "&New Speaker", "Speakers", ("Ctrl+Shift+N",), "", "Add a speaker"),
    ActionSpec("unassign", "&Unassign Speaker", "Speakers", ("Ctrl+0",), "", "Clear the speaker"),
    *(ActionSpec(f"speaker_{n}", f"Assign Speaker {n}", "Speakers", (f"Ctrl+{n}",)) for n in range(1, 10)),
    ActionSpec("known_voices", "&Known Voices…", "Speakers", ("Ctrl+Shift+V",), "",
               "The voices Murmur knows by name: rename, merge, delete, listen"),
    ActionSpec("transcribe", "&Transcribe", "Transcribe", ("Ctrl+R", "F5"), "transcribe",
               "Transcribe the recording with the current settings"),
    ActionSpec("retranscribe", "Re-transcribe &Selection…", "Transcribe", ("Ctrl+Shift+R",), "transcribe",
               "Transcribe again the range marked on the waveform (Shift+drag) or the selected lines, "
               "with other settings"),
    ActionSpec("record", "&Record…", "Transcribe", ("Ctrl+Alt+R",), "record",
               "Record from the microphone and transcribe while it happens (again: stop)"),
    ActionSpec("captions", "&Captions Window", "Transcribe", ("Ctrl+Alt+C",), "",
               "Show the live lines in large type, for a second screen or a projector"),
    ActionSpec("watch", "&Watch Folder…", "Transcribe", ("Ctrl+Alt+W",), "",
               "Transcribe every new recording in a folder in the background (again: stop watching)"),
    ActionSpec("cancel", "&Cancel", "Transcribe", ("Esc",), "cancel", "Stop the running job"),
    ActionSpec("settings", "&Settings…", "Transcribe", ("Ctrl+,",), "settings", "Model, device, chunk size…"),
    ActionSpec("play", "&Play / Pause", "Playback", ("Space",), "play", "Play or pause the audio"),
    ActionSpec("play_selection", "Play &Utterance", "Playback", ("Ctrl+Space", "Ctrl+Return"), "",
               "Play from the start of the selected utterance"),
    ActionSpec("play_line", "Play &Line", "Playback", ("Ctrl+Shift+Space",), "",
               "Play the selected line and stop at its end"),
    ActionSpec("loop_line", "L&oop Line", "Playback", ("Ctrl+Alt+L",), "",
               "Play the selected line over and over (again: stop looping)", checkable=True),
    ActionSpec("follow", "&Follow Playhead", "Playback", ("Ctrl+Shift+L",), "",
               "Keep the line being played in view (scrolling elsewhere turns it off)", checkable=True),
    ActionSpec("set_start", "Set &Start at Playhead", "Edit", ("Alt+[",), "",
               "The selected line starts where the playhead is"),
    ActionSpec("set_end", "Set &End at Playhead", "Edit", ("Alt+]",), "",
               "The selected line ends where the playhead is"),
    ActionSpec("skip_back", "&Back 5 s", "Playback", ("Alt+Left",), "", "Move the playhead 5 s back"),
    ActionSpec("skip_forward", "F&orward 5 s", "Playback", ("Alt+Right",), "", "Move the playhead 5 s on"),
    ActionSpec("slower", "&Slower", "Playback", ("Ctrl+[",), "", "Play more slowly"),
    ActionSpec("faster", "&Faster", "Playback", ("Ctrl+]",), "", "Play faster"),
    ActionSpec("zoom_in", "Zoom &In", "View", (Std.ZoomIn, "Ctrl+="), "zoom-in", "Zoom into the waveform"),
    ActionSpec("zoom_out", "Zoom &Out", "View", (Std.ZoomOut,), "zoom-out", "Zoom out of the waveform"),
    ActionSpec("zoom_fit", "Show &Whole Recording", "View", ("Ctrl+Shift+0",), "zoom-fit",
               "Show the whole recording"),
    ActionSpec("toggle_waveform", "Show W&aveform", "View", ("Ctrl+Shift+W",), "",
               "Show or fold away the waveform (more room for the transcript)"),
    ActionSpec("focus_waveform", "Go to &Waveform", "View", ("F6",), "", "Focus the waveform"),
    ActionSpec("focus_transcript", "Go to &Transcript", "View", ("F7",), "", "Focus the transcript"),
    ActionSpec("focus_speakers", "Go to &Speakers", "View", ("F8",), "", "Focus the speakers"),
    ActionSpec("shortcuts", "&Keyboard Shortcuts", "Help", ("F1",), "", "List every shortcut"),
    ActionSpec("about", "&About Murmur", "Help", (), "", "Version and credits"),
)  # fmt: skip

MENUS = ("File", "Edit", "Speakers", "Transcribe", "Playback", "View", "Help")


def _sequences(spec: ActionSpec) -> list[QKeySequence]:
    out: list[QKeySequence] = []
    for s in spec.shortcuts:
        keys = QKeySequence.keyBindings(s) if isinstance(s, QKeySequence.StandardKey) else [QKeySequence(s)]
        for key in keys:
            if key not in out:
                out.append(key)
    return out


def build_actions(parent: QObject) -> dict[str, QAction]:
    actions = {}
    for spec in ACTIONS:
        action = QAction(icon(spec.icon) if spec.icon else QIcon(), spec.text, parent)
        keys = _sequences(spec)
        action.setShortcuts(keys)
        tip = spec.tip or spec.text.replace("&", "").rstrip("…")
        shown = keys[0].toString(QKeySequence.SequenceFormat.NativeText) if keys else ""
        action.setToolTip(f"{tip} ({shown})" if shown else tip)
        action.setProperty("baseToolTip", action.toolTip())
        action.setStatusTip(tip)
        action.setObjectName(spec.name)
        action.setCheckable(spec.checkable)
        actions[spec.name] = action
    return actions


def shortcut_table() -> list[tuple[str, str, str]]:
    """(menu, command, shortcuts) for every action with a shortcut."""
    rows = []
    for spec in ACTIONS:
        keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in _sequences(spec))
        if keys:
            rows.append((spec.menu, spec.text.replace("&", "").rstrip("…"), keys))
    return rows
