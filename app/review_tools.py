"""The listen-and-fix tools of the main window, wired in one place: following the playhead (the
Follow action, the playback box's button, remembered), Loop Line, remembered column widths, and
spell checking (each line editor underlined; the language follows the transcript's)."""

from __future__ import annotations

from typing import Any

from app.widgets.spell_check import SpellCheck

FOLLOW_KEY, COLUMNS_KEY = "follow_playhead", "columns"


def connect_review_tools(window: Any) -> SpellCheck:
    """Wire the tools into `window` (the main window: its actions, sync, store, view and model)."""
    a, sync, store, view = window.actions_by_name, window.sync, window.store, window.transcript_view
    a["loop_line"].toggled.connect(sync.set_looping)
    window.playback_box.follow.setDefaultAction(a["follow"])
    a["follow"].setChecked(bool(store.value(FOLLOW_KEY, True)))
    sync.set_following(a["follow"].isChecked())
    a["follow"].toggled.connect(sync.set_following)
    a["follow"].toggled.connect(lambda on: store.set_value(FOLLOW_KEY, on))
    sync.following_changed.connect(a["follow"].setChecked)
    view.set_column_widths(store.value(COLUMNS_KEY, None))
    view.columns_resized.connect(lambda widths: store.set_value(COLUMNS_KEY, widths))
    spelling = SpellCheck(store, window)
    spelling.message.connect(window.show_message)
    view.row_delegate.editing.connect(lambda editor: editor is not None and spelling.attach(editor))
    model = window.model
    model.modelReset.connect(lambda: model.rowCount() and spelling.want(model.meta.language or "en"))
    return spelling
