"""Known voices in the main window, wired in one place: Speakers ▸ Known Voices… opens the window
(`app.widgets.known_voices`), a speaker's "Remember This Voice…" stores that speaker's lines'
audio under a name the user gives (the recognised or typed name offered first; an existing name
gains the samples, so agreeing with a recognition improves the library), and "Not <name>" gives a
wrongly recognised speaker its "Speaker N" label back, as one undoable rename.

The library is the user's (`app.known_voices.user_library`), the one the "Known voices" setting
names speakers from; the audio is the open recording's.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QInputDialog

from app import commands
from app import speakers as sp
from app.known_voices import default_label, remember, user_library
from app.widgets.known_voices import KnownVoicesDialog
from engine.voices import VoiceEmbedder, VoiceLibraryError


class VoiceTools:
    """The window's known-voices actions (see the module contract)."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.embedder: VoiceEmbedder | None = None  # loaded on the first remembered voice
        self.dialog: KnownVoicesDialog | None = None
        panel = window.speaker_panel
        panel.remember_requested.connect(self.ask_to_remember)
        panel.not_recognised.connect(self.not_recognised)
        window.actions_by_name["known_voices"].triggered.connect(self.show_window)

    def show_window(self) -> KnownVoicesDialog:
        self.dialog = KnownVoicesDialog(user_library(), self.play, self.window.dialog_parent())
        self.dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialog.show()
        return self.dialog

    def ask_to_remember(self, speaker_id: str) -> None:
        info = sp.find(self.window.model.book, speaker_id)
        if info is None:
            return
        offered = "" if info.name.startswith("Speaker ") else info.name
        name, ok = QInputDialog.getText(self.window.dialog_parent(), "Remember this voice",
                                        f"Whose voice is {info.name}?", text=offered)  # fmt: skip
        if ok and name.strip():
            self.window.show_message(self.remember(speaker_id, name))

    def remember(self, speaker_id: str, name: str) -> str:
        """Store the speaker's voice under `name`; the message to show."""
        audio = self.window.session.audio
        if audio is None:
            return "Open the recording first: a voice is remembered from its audio"
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            self.embedder = self.embedder or VoiceEmbedder()
            added = remember(user_library(), self.window.model.transcript(), speaker_id, audio.recording,
                             name, self.embedder)  # fmt: skip
        except (ValueError, VoiceLibraryError) as exc:
            return f"Not remembered: {exc}"
        finally:
            QGuiApplication.restoreOverrideCursor()
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.refresh()
        return f"Remembered {name.strip()}'s voice ({added} sample(s)); turn on Known voices in the settings"

    def not_recognised(self, speaker_id: str) -> None:
        model = self.window.model
        commands.rename_speaker(model, speaker_id, default_label(model.book, speaker_id))

    def play(self, name: str) -> str:
        """Play `name`'s first sample when its recording is the open one; what happened."""
        try:
            sample = user_library().voice(name).samples[0]
        except (VoiceLibraryError, IndexError) as exc:
            return f"No sample to play: {exc}"
        audio = self.window.session.audio
        if audio is None or sample.start is None or audio.path.name != sample.recording:
            return f"The sample is from {sample.recording or 'a recording'}; open it to listen"
        self.window.playback.play(sample.start)
        return f"Playing {name} from {sample.recording} at {sample.start:.1f} s"
