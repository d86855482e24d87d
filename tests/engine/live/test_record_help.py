"""`murmur record --help`: the words and metavars of the command's own flags, against the copy in
record_help.json (an edit to a help text is made in both places, on purpose), and the help printed
as a user asks for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import build_parser, main

SAVED = json.loads((Path(__file__).parent / "record_help.json").read_text("utf-8"))["flags"]


def test_record_keeps_the_help_text_and_metavar_of_each_of_its_flags():
    # catches: a help text or metavar edited by accident (a word lost, a default misstated)
    record = next(a for a in build_parser()._actions if a.dest == "command").choices["record"]
    now = {flag: [a.help, a.metavar] for a in record._actions for flag in a.option_strings}
    assert {flag: (saved, now.get(flag)) for flag, saved in SAVED.items() if now.get(flag) != saved} == {}


def test_help_shows_every_flag_but_the_retired_one(capsys, monkeypatch):
    # catches: `--device` (refused with a hint) offered in the help again
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as done:
        main(["record", "--help"])
    printed = capsys.readouterr().out
    assert done.value.code == 0 and "--device " not in printed
    for flag, (text, metavar) in SAVED.items():
        assert f"{flag} {metavar}" in printed if metavar else flag in printed
        assert text in printed
