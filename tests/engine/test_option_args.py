"""The command line's option flags as a user meets them: `--backend` on the commands that run one
system (whisper unless given, an unknown name refused), `murmur bench`'s speaker flags reaching every
system of its sweep, and the flags the app starts its engine with for a command that has no
`--backend` (`option_flags`)."""

from __future__ import annotations

import pytest

from engine.cli import build_parser
from engine.cli.option_args import option_flags, recipe_of
from engine.recipe import recipe_from


@pytest.mark.parametrize(
    ("command", "source"), [("transcribe", ["a.wav"]), ("serve", []), ("eval", ["m.json"])]
)
def test_the_system_commands_run_whisper_unless_another_backend_is_given(command, source):
    # catches: --backend with no default (a system of no backend) or another default
    args = build_parser().parse_args([command, *source])
    assert args.backend == "whisper" and recipe_of(args, command).backend == "whisper"
    vibevoice = build_parser().parse_args([command, *source, "--backend", "vibevoice"])
    assert recipe_of(vibevoice, command).backend == "vibevoice"


def test_an_unknown_backend_is_refused_with_the_backends_there_are(capsys):
    # catches: --backend taking any name (refused later, or a traceback, instead of argparse's usage)
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["transcribe", "a.wav", "--backend", "parakeet"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "invalid choice: 'parakeet' (choose from 'vibevoice', 'whisper')" in err


def test_bench_speaker_flags_reach_every_system_of_its_sweep():
    # catches: bench (which has no --backend) failing to build its speaker settings, or building
    # them for a backend that does not exist
    from engine.cli.bench import chosen_systems

    args = build_parser().parse_args(
        ["bench", "m.json", "--systems", "whisper,single-pass", "--speakers", "3"]
    )
    systems = chosen_systems(args)
    assert [s.name for s in systems] == ["whisper", "single-pass"]
    assert all(s.recipe.pipeline.speakers.num_speakers == 3 for s in systems)


def test_the_flags_for_a_command_without_backend_parse_back_with_its_own_parser():
    # catches: `--backend` put in front of the flags of a command that does not take it (record)
    values = {"model": "small", "channel": "left"}
    flags = option_flags(values, "record", "whisper")
    assert flags == ["--model", "small", "--channel", "left"]
    args = build_parser().parse_args(["record", *flags])
    assert recipe_of(args, "record", "whisper") == recipe_from(values, "whisper")


def test_every_value_a_command_does_not_take_is_named_in_one_message():
    # catches: the names run together, or only the first named
    with pytest.raises(ValueError) as refused:
        option_flags({"speech_sink": 4, "dtype": "float32", "model": "small"}, "serve", "whisper")
    assert str(refused.value) == "`murmur serve` with the whisper backend takes no dtype, speech_sink"
