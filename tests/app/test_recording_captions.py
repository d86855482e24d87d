"""The captions window: a separate, resizable window with large type, speakers named and coloured,
dark or light; and how lines edited while recording are put back after the final run."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.keep_edits import merged
from app.recording.captions import MIN_PX, CaptionsWindow, font_px
from engine.types import Utterance, Word


def test_captions_are_a_separate_window_whose_type_grows_with_it(qapp, qtbot) -> None:
    window = CaptionsWindow()
    qtbot.addWidget(window)
    window.show()
    assert window.isWindow() and window.parent() is None
    window.add_line("Speaker 1", "#4E79A7", "I'd like to keep this meeting short.")
    window.add_line("Speaker 2", "#E15759", "I'll take notes.")
    window.resize(800, 300)
    QApplication.processEvents()
    small = window.label.text()
    window.resize(1600, 900)
    QApplication.processEvents()
    big = window.label.text()
    assert f"font-size:{font_px(300)}px" in small and f"font-size:{font_px(900)}px" in big
    assert font_px(900) >= 100 > font_px(300) >= MIN_PX
    assert "Speaker 1:" in big and "#E15759" in big and "take notes" in big


def test_d_switches_between_dark_and_light(qapp, qtbot) -> None:
    window = CaptionsWindow("dark")
    qtbot.addWidget(window)
    window.show()
    window.add_line("Speaker 1", "#4E79A7", "Hello.")
    dark = window.grab().toImage().pixelColor(5, 5)
    qtbot.keyClick(window, Qt.Key.Key_D)
    assert window.theme == "light"
    light = window.grab().toImage().pixelColor(5, 5)
    assert dark.lightness() < 30 and light.lightness() > 225


def test_the_newest_words_always_show_and_old_lines_scroll_away(qapp, qtbot) -> None:
    window = CaptionsWindow()
    qtbot.addWidget(window)
    window.resize(1280, 400)
    window.show()
    for i in range(6):
        window.add_line(f"Speaker {i % 2 + 1}", "#4E79A7", f"line {i} " + "and so on " * 4)
    window.add_line("Speaker 2", "#4E79A7", "the newest words")
    text = window.label.text()
    assert text.endswith("the newest words</p></div>") and "line 0" not in text
    assert "Speaker 1:</span> line 4" in text  # the same speaker going on is one caption
    window.add_line("Speaker 2", "#4E79A7", "a very long turn " * 40 + "END")
    text = window.label.text()
    assert "Speaker 2:</span> … " in text and text.endswith("END</p></div>")  # cut at its start


def test_lines_that_came_while_the_window_was_hidden_show_when_it_opens(qapp, qtbot) -> None:
    # catches: hidden captions laid out again for every live line (a few text layouts each, on the
    # window's thread, for a window nobody sees); lines kept while hidden not shown once it opens
    window = CaptionsWindow()
    qtbot.addWidget(window)
    window.add_line("Speaker 1", "#4E79A7", "said while nobody watched")
    assert window.label.text() == ""
    window.show()
    assert "Speaker 1:</span> said while nobody watched" in window.label.text()


def words(*items: tuple[float, float, str]) -> tuple[Word, ...]:
    return tuple(Word(a, b, t) for a, b, t in items)


def test_an_edited_line_replaces_only_the_final_words_it_covers() -> None:
    final = [
        Utterance(0.5, 7.9, "I'd like to keep it short. I'll take notes.", "A",
                  words((0.5, 1.0, "I'd"), (1.0, 3.5, "short."), (4.7, 5.5, "I'll"), (5.5, 7.9, "notes."))),
        Utterance(8.7, 10.0, "Next one.", "B", words((8.7, 9.2, "Next"), (9.2, 10.0, "one."))),
    ]  # fmt: skip
    edited = [Utterance(0.6, 3.6, "Let us keep this meeting brief.", "S1")]
    out = merged(final, edited)
    assert [u.text for u in out] == ["Let us keep this meeting brief.", "I'll notes.", "Next one."]
    assert out[0].speaker == "A"  # the final diarization names who spoke
    assert (out[1].start, out[1].end) == (4.7, 7.9)
