"""Known voices and a speaker's menu in the main window, wired in one place.

- Speakers ▸ Known Voices… opens the window (`app.widgets.known_voices`); its Play Sample plays a
  person's first sample from whichever recording it came (`app.sample_player`).
- A speaker's menu is one menu (`app.widgets.speaker_menu`) from two places, the Speakers panel
  and the speaker cell of a transcript line, and its commands are carried out here once:
  - Rename Speaker… asks for the name and renames (one undoable step);
  - Remember This Voice… asks whose voice it is (the recognised or typed name offered first) and
    stores that speaker's lines' audio under it (an existing name gains the samples, so agreeing
    with a recognition improves the library). The embedding runs on a worker thread
    (`app.voice_jobs`); the window keeps answering, and the result goes to the speaker asked
    about: stored, it is named after the voice (one undoable rename) unless it was renamed
    meanwhile, or another speaker has that name; a failure is a message. Closing the window waits
    for the voices being stored, so none is lost;
  - "Not <name>" gives a wrongly recognised speaker its "Speaker N" label back, one undoable rename.

The library is the user's (`app.known_voices.user_library`), the one the "Known voices" setting
names speakers from; the audio is the open recording's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QInputDialog, QMenu

from app import commands
from app import speakers as sp
from app.known_voices import default_label, user_library
from app.sample_player import SamplePlayer, sample_places
from app.voice_jobs import Remembered, RememberRequest, VoiceJobs
from app.widgets.known_voices import KnownVoicesDialog
from app.widgets.speaker_menu import NOT_RECOGNISED, REMEMBER, RENAME, SpeakerCellMenu, speaker_menu
from engine.voices import VoiceLibraryError


class VoiceTools:
    """The window's known-voices actions and speaker menu (see the module contract)."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.dialog: KnownVoicesDialog | None = None
        self.document = 0  # counts the transcripts shown (a run's result, an opened file, their undo)
        window.model.modelReset.connect(self._next_document)
        self.jobs = VoiceJobs(window)
        self.jobs.finished.connect(self._remembered)
        self.samples = SamplePlayer(window.playback)
        self.cell_menu = SpeakerCellMenu(window.transcript_view)
        self.commands = {RENAME: self.ask_to_rename, REMEMBER: self.ask_to_remember,
                         NOT_RECOGNISED: self.not_recognised}  # fmt: skip
        window.speaker_panel.menu_requested.connect(self.show_menu)
        window.playback.state_changed.connect(lambda playing: self.samples.stop() if playing else None)
        self.cell_menu.requested.connect(self.show_menu)
        window.actions_by_name["known_voices"].triggered.connect(self.show_window)

    @property
    def busy(self) -> bool:
        """A voice is being remembered."""
        return self.jobs.busy

    def show_window(self) -> KnownVoicesDialog:
        self.dialog = KnownVoicesDialog(user_library(), self.play, self.window.dialog_parent())
        self.dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialog.show()
        return self.dialog

    def show_menu(self, speaker_id: str, at: QPoint) -> QMenu:
        menu = speaker_menu(self.window.model.book, speaker_id, self.run, self.window.dialog_parent())
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(at)
        return menu

    def run(self, command: str, speaker_id: str) -> None:
        self.commands[command](speaker_id)

    def ask_to_rename(self, speaker_id: str) -> None:
        info = sp.find(self.window.model.book, speaker_id)
        if info is None:
            return
        name, ok = QInputDialog.getText(self.window.dialog_parent(), "Rename speaker",
                                        f"New name for {info.name}:", text=info.name)  # fmt: skip
        if ok and name.strip() and name.strip() != info.name:
            try:
                commands.rename_speaker(self.window.model, speaker_id, name)
            except ValueError as exc:
                self.window.show_message(str(exc))

    def ask_to_remember(self, speaker_id: str) -> None:
        info = sp.find(self.window.model.book, speaker_id)
        if info is None:
            return
        offered = "" if info.name.startswith("Speaker ") else info.name
        name, ok = QInputDialog.getText(self.window.dialog_parent(), "Remember this voice",
                                        f"Whose voice is {info.name}?", text=offered)  # fmt: skip
        if ok and name.strip():
            self.remember(speaker_id, name)

    def remember(self, speaker_id: str, name: str) -> bool:
        """Start storing the speaker's voice under `name` (off the GUI thread), saying so in the
        status bar until the result replaces it; False, with the reason shown, if it cannot start."""
        audio, info = self.window.session.audio, sp.find(self.window.model.book, speaker_id)
        if audio is None:
            self.window.show_message("Open the recording first: a voice is remembered from its audio")
            return False
        if info is None:
            self.window.show_message("That speaker is no longer in the transcript")
            return False
        self.jobs.submit(RememberRequest(speaker_id, info.name, name, self.window.model.transcript(),
                                         audio.recording, user_library(), self.document))  # fmt: skip
        self.window.statusBar().showMessage(f"Remembering {name.strip()}'s voice from {info.name}'s lines…")
        return True

    def _remembered(self, done: Remembered) -> None:
        if done.error is not None:
            self.window.show_message(f"Not remembered: {done.error}")
            return
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.refresh()
        name = done.request.name.strip()
        named = f"; {done.request.label} is now {name}" if self._name_speaker(done.request) else ""
        self.window.show_message(f"Remembered {name}'s voice ({done.added} sample(s)){named}; turn on "
                                 "Known voices in the settings for later transcripts")  # fmt: skip

    def _next_document(self) -> None:
        self.document += 1

    def _name_speaker(self, request: RememberRequest) -> bool:
        """Name the speaker asked about after the voice, unless another transcript is shown now
        (its ids are other people), it is gone, was renamed meanwhile, already has that name or
        another speaker has it; whether it was named."""
        info, name = sp.find(self.window.model.book, request.speaker_id), request.name.strip()
        same = request.document == self.document and info is not None and info.name == request.label
        if not same or name == request.label:
            return False
        try:
            commands.rename_speaker(self.window.model, request.speaker_id, name)
        except ValueError:
            return False
        return True

    def not_recognised(self, speaker_id: str) -> None:
        model = self.window.model
        commands.rename_speaker(model, speaker_id, default_label(model.book, speaker_id))

    def play(self, name: str) -> str:
        """Play `name`'s first sample (`app.sample_player`); what happened."""
        try:
            sample = user_library().voice(name).samples[0]
        except (VoiceLibraryError, IndexError) as exc:
            return f"No sample to play: {exc}"
        audio, project = self.window.session.audio, self.window.projects.path
        open_path: Path | None = audio.path if audio is not None else None
        places = sample_places(sample.recording or "", open_path, project, self.window.store.recent_files())
        return self.samples.play(name, sample, audio.recording if audio is not None else None, places)

    def shutdown(self) -> None:
        """The window closes: every voice asked for is stored first; sample playback stops."""
        self.samples.stop()
        self.jobs.shutdown()
