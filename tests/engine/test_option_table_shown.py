"""What the option table shows a user, held to the recorded copy in
`tests/engine/option_table_shown.json`: every command's table flags with the help group they sit
in, their help, value name or choices, type, bare value and name; the settings dialog's rows; the
flags each backend takes; the form field of each per-request option. A change on purpose
re-records the copy (`python tests/engine/test_option_table_shown.py`) and shows in review as a
diff of what users read; a change by accident (a row helper dropping its group, a label or tooltip
edited, a flag leaving a command, an `int` row losing its type) fails here.

The table is read in this process (mutation tests switch a mistake on inside it), through the
parsers `murmur` builds and the rows the dialog reads."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if __name__ == "__main__":  # re-recording: import this checkout's engine
    sys.path.insert(0, str(ROOT))

from engine.cli import build_parser  # noqa: E402
from engine.options import dialog_rows, option_rows, rows  # noqa: E402

RECORDED = Path(__file__).with_name("option_table_shown.json")
COMMANDS = ("transcribe", "serve", "eval", "record", "watch", "bench", "kv-plan")


def _subparser(command: str) -> argparse.ArgumentParser:
    parsers = next(a for a in build_parser()._actions if a.dest == "command").choices
    return parsers[command]


def _flag_as_shown(parser: argparse.ArgumentParser, action: argparse.Action) -> dict[str, Any]:
    group = next(g.title for g in parser._action_groups if action in g._group_actions)
    value = action.metavar or (list(action.choices) if action.choices else None)
    kind = getattr(action.type, "__name__", None)
    return {"group": group, "help": action.help, "value": value, "type": kind, "bare": action.const,
            "name": action.dest}  # fmt: skip


def _command_flags(command: str) -> dict[str, dict[str, Any]]:
    table = {o.flag for o in option_rows()}
    parser = _subparser(command)
    actions = {s: a for a in parser._actions for s in a.option_strings if s in table}
    return {flag: _flag_as_shown(parser, actions[flag]) for flag in sorted(actions)}


def shown() -> dict[str, Any]:
    """Everything the table shows, as the recorded copy holds it."""
    return {
        "commands": {command: _command_flags(command) for command in COMMANDS},
        "dialog": [[o.name, o.label, o.tooltip, list(o.choices)] for o in dialog_rows()],
        "backends": {b: [o.flag for o in rows("transcribe", b)] for b in ("whisper", "vibevoice")},
        "forms": {o.flag: o.form for o in option_rows() if o.form},
    }


def _differences(now: Any, recorded: Any, where: str = "") -> list[str]:
    if isinstance(now, dict) and isinstance(recorded, dict):
        keys = sorted(set(now) | set(recorded))
        return [d for k in keys for d in _differences(now.get(k), recorded.get(k), f"{where}/{k}")]
    return [] if now == recorded else [f"{where}: now {now!r}, recorded {recorded!r}"]


def test_every_command_shows_the_table_flags_with_the_recorded_group_help_value_and_type():
    now, recorded = shown()["commands"], json.loads(RECORDED.read_text("utf-8"))["commands"]
    assert _differences(now, recorded) == []


def test_the_settings_dialog_shows_the_recorded_labels_tooltips_and_choices_in_order():
    assert shown()["dialog"] == json.loads(RECORDED.read_text("utf-8"))["dialog"]


def test_each_backend_takes_the_recorded_flags_and_a_server_the_recorded_form_fields():
    now, recorded = shown(), json.loads(RECORDED.read_text("utf-8"))
    assert (now["backends"], now["forms"]) == (recorded["backends"], recorded["forms"])


def _help_sections(text: str) -> dict[str, list[str]]:
    """A `--help` text's titled sections: title → the first word of each line under it."""
    blocks = (block.partition("\n") for block in text.split("\n\n"))
    return {t[:-1]: [line.split()[0] for line in body.splitlines() if line.strip()]
            for t, _, body in blocks if t.endswith(":") and not t.startswith(" ")}  # fmt: skip


def test_a_flag_of_a_group_is_listed_under_that_group_in_each_commands_help():
    for command in ("transcribe", "serve", "eval"):
        sections = _help_sections(_subparser(command).format_help())
        for option in (o for o in rows(command) if o.group):
            assert option.flag in sections.get(option.group, []), (command, option.flag)


def _json(value: Any, depth: int, indent: str = "") -> str:
    """`value` as JSON, dicts and the dialog's list opened `depth` levels deep, the rest one line
    each (a reviewable diff)."""
    if depth > 0 and isinstance(value, dict):
        inner = [f"{indent} {json.dumps(k)}: {_json(v, depth - 1, indent + ' ')}" for k, v in value.items()]
        return "{\n" + ",\n".join(inner) + f"\n{indent}}}"
    if depth > 0 and isinstance(value, list) and all(isinstance(v, list) for v in value):
        return "[\n" + ",\n".join(f"{indent} {_json(v, 0)}" for v in value) + f"\n{indent}]"
    return json.dumps(value, ensure_ascii=False)


if __name__ == "__main__":
    RECORDED.write_text(_json(shown(), 3) + "\n", encoding="utf-8")
    print(f"recorded {RECORDED.relative_to(ROOT)}")
