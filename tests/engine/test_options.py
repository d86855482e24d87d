"""The option table: every row lands on a config field, every config field has a row or a reason,
every surface that runs a system offers the same system flags, and every surface validates
through the one path (`engine.recipe.recipe_from`) with the same message."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import build_parser, main
from engine.cli.option_args import recipe_of
from engine.option_values import channel_arg, language_code, memory_size, terms
from engine.options import INTERNAL, SYSTEM, Option, by_name, dialog_rows, option_rows, rows
from engine.pipeline import PipelineConfig
from engine.recipe import Recipe, config_class, recipe_from

ROOT = Path(__file__).resolve().parents[2]
NOT_FIELDS = {"backend.decode.eviction.window"}  # the policy's one window (EvictionConfig.changed)


def _leaf_paths(value: object, prefix: str) -> set[str]:
    paths = set()
    for f in dataclasses.fields(value):
        inner = getattr(value, f.name)
        nested = dataclasses.is_dataclass(inner) and not isinstance(inner, type)
        paths |= _leaf_paths(inner, f"{prefix}.{f.name}") if nested else {f"{prefix}.{f.name}"}
    return paths


def _fields_of(backend: str) -> set[str]:
    return _leaf_paths(config_class(backend)(), "backend") | _leaf_paths(PipelineConfig(), "pipeline")


def _resolves(option: Option, backend: str) -> bool:
    value: object = config_class(backend)() if option.owner == "backend" else PipelineConfig()
    for name in option.fields:
        if not dataclasses.is_dataclass(value) or name not in {f.name for f in dataclasses.fields(value)}:
            return False
        value = getattr(value, name)
    return True


@pytest.mark.parametrize("backend", ["whisper", "vibevoice"])
def test_every_row_lands_on_a_field_of_each_backend_it_names(backend):
    rows = [o for o in option_rows() if o.applies_to(backend) and o.path not in NOT_FIELDS]
    assert [o.flag for o in rows if not _resolves(o, backend)] == []


@pytest.mark.parametrize("backend", ["whisper", "vibevoice"])
def test_every_config_field_has_a_row_or_a_reason_to_have_none(backend):
    fields = _fields_of(backend)
    rows = {o.path for o in option_rows() if o.applies_to(backend)}
    internal = {f for f in fields if any(f == p or f.startswith(p + ".") for p in INTERNAL)}
    assert sorted(fields - rows - internal) == []  # a new field needs a row or an INTERNAL entry
    assert sorted(rows & internal) == []


def test_every_internal_entry_names_a_field_that_exists():
    fields = _fields_of("whisper") | _fields_of("vibevoice")
    stale = [p for p in INTERNAL if not any(f == p or f.startswith(p + ".") for f in fields)]
    assert stale == []


def _flags(command: str) -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {s for a in sub._actions for s in a.option_strings}


def test_serve_eval_and_transcribe_offer_one_set_of_system_flags():
    system = {o.flag for o in option_rows() if set(SYSTEM) <= set(o.surfaces)} | {"--backend"}
    assert {"--language", "--speech-sink", "--eviction", "--speakers", "--context"} <= system
    for command in SYSTEM:
        assert system <= _flags(command), command
    assert "--language" in _flags("serve") and "--language" in _flags("record")


def _actions(command: str) -> dict[str, argparse.Action]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return {s: a for a in sub._actions for s in a.option_strings}


def _shape(action: argparse.Action) -> tuple[object, ...]:
    choices = tuple(action.choices) if action.choices else None
    return (action.dest, action.help, choices, action.type, action.metavar, action.nargs, action.const)


def test_serve_eval_and_transcribe_generate_one_identical_set_of_system_flags():
    table = {o.flag for o in option_rows()} | {"--backend"}
    system = {o.flag for o in option_rows() if set(SYSTEM) <= set(o.surfaces)} | {"--backend"}
    assert [o.flag for o in option_rows() if len(set(o.surfaces) & set(SYSTEM)) == 2] == []  # all or one
    shapes = {}
    for command in SYSTEM:
        actions = _actions(command)
        own = {o.flag for o in option_rows() if set(o.surfaces) & set(SYSTEM) == {command}}
        assert set(actions) & table == system | own, command
        shapes[command] = {flag: _shape(actions[flag]) for flag in system}
    assert shapes["serve"] == shapes["transcribe"] == shapes["eval"]  # same help, type, choices


def _help_groups(command: str) -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "100", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "engine", command, "--help"], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    blocks = [b.split("\n", 1) for b in out.stdout.split("\n\n")]
    titled = [b for b in blocks if len(b) == 2 and b[0].endswith(":") and not b[0].startswith(" ")]
    return {title: body.rstrip() for title, body in titled}


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_help_of_serve_eval_and_transcribe_shows_the_same_system_flag_groups():
    groups = {command: _help_groups(command) for command in SYSTEM}
    titles = {f"{o.group}:" for o in option_rows() if o.group}
    assert titles <= set(groups["transcribe"])
    for title in titles:
        assert groups["serve"][title] == groups["transcribe"][title] == groups["eval"][title], title
    for option in (o for o in rows("transcribe") if o.group):  # each row: its flag, value name, help
        shown = _words(groups["transcribe"][f"{option.group}:"])
        value = option.metavar or ("{" + ",".join(option.choices) + "}" if option.choices else "")
        value = f"[{value}]" if option.bare is not None else value  # a value that may be left out
        assert _words(f"{option.flag} {value}") in shown and _words(option.help) in shown, option.flag


def test_a_fresh_murmur_takes_a_flag_of_each_vibevoice_group_and_refuses_a_bad_number_as_it_parses(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    missing = str(tmp_path / "missing.wav")
    run = [sys.executable, "-m", "engine", "transcribe", missing, "--backend", "vibevoice", "-q"]
    taken = subprocess.run([*run, "--dtype", "float32", "--speech-sink", "4", "--speakers", "2"],
                           capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)  # fmt: skip
    assert taken.returncode == 1 and "has no option" not in taken.stderr and "missing.wav" in taken.stderr
    refused = subprocess.run([*run, "--sink", "many"], capture_output=True, text=True, cwd=ROOT, env=env,
                             timeout=120)  # fmt: skip
    assert refused.returncode == 2 and "argument --sink: invalid int value: 'many'" in refused.stderr


def test_transcribe_keeps_the_help_texts_its_flags_had_before_the_option_table():
    saved = json.loads((ROOT / "tests/engine/transcribe_help_before_the_table.json").read_text("utf-8"))
    now = {flag: action.help for flag, action in _actions("transcribe").items()}
    assert {f: (h, now.get(f)) for f, h in saved["help"].items() if now.get(f) != h} == {}


def test_serve_takes_the_language_into_the_backend_it_loads():
    args = build_parser().parse_args(["serve", "--model", "small", "--language", "DE"])
    assert recipe_of(args, "serve").backend_config.language == "de"


def test_eval_builds_its_system_from_every_transcribe_flag():
    from engine.cli.eval import system_from_args

    argv = ["eval", "m.json", "--backend", "vibevoice", "--speech-sink", "7", "--eviction", "speech",
            "--kv-memory", "1GiB", "--speakers", "2", "--dtype", "float32"]  # fmt: skip
    system = system_from_args(build_parser().parse_args(argv))
    config = system.recipe.backend_config
    assert config.decode.eviction.speech_sink == 7 and config.decode.kv_memory_limit == 2**30
    assert config.dtype == "float32" and system.recipe.pipeline.speakers.num_speakers == 2


def test_one_mistake_gets_one_message_on_every_surface(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"^backend 'whisper' has no option\(s\): speech_sink$"):
        recipe_from({"speech_sink": 4}, "whisper")
    with pytest.raises(ValueError, match=r"^--speech-sink: invalid literal"):
        recipe_from({"speech_sink": "many"}, "vibevoice")  # text from a sweep file or a form
    code = main(["transcribe", str(tmp_path / "a.wav"), "--speech-sink", "4", "-q"])
    assert code == 1 and "backend 'whisper' has no option(s): speech_sink" in capsys.readouterr().err


def test_the_eviction_flags_override_the_chosen_preset_in_any_order():
    given = {"window": 1538, "eviction": "paper-speech", "speech_sink": 8}  # window before the preset
    eviction = recipe_from(given, "vibevoice").backend_config.decode.eviction
    assert (eviction.speech_window, eviction.delay, eviction.speech_sink) == (1538, 512, 8)
    base = recipe_from({"eviction": "output"}, "vibevoice")
    kept = recipe_from({"window": 64}, "vibevoice", base).backend_config.decode.eviction
    assert (kept.policy, kept.output_window) == ("output", 64)  # a base's policy keeps its window


def test_a_recipe_survives_json_and_old_flat_sweep_files_still_load(tmp_path):
    from engine.evaluation.systems import read_systems

    recipe = recipe_from({"eviction": "both", "speech_layers": '[{"start": 2, "keep": true}]',
                          "context": "Alice, Bob", "speakers": 3, "mode": "single"}, "vibevoice")  # fmt: skip
    assert Recipe.from_dict(json.loads(json.dumps(recipe.to_dict()))) == recipe
    assert Recipe.from_dict({"backend": "whisper"}) == Recipe()
    with pytest.raises(ValueError, match="has no setting"):
        Recipe.from_dict({"backend": "whisper", "config": {"sink": 4}})
    old = [{"name": "s", "backend": "vibevoice", "options": {"eviction": "speech", "sink": 2, "window": 9}}]
    (tmp_path / "systems.json").write_text(json.dumps(old), encoding="utf-8")
    (system,) = read_systems(tmp_path / "systems.json")
    eviction = system.recipe.backend_config.decode.eviction
    assert (eviction.policy, eviction.n_sink, eviction.speech_window) == ("speech", 2, 9)


def test_record_names_the_microphone_input_device_and_refuses_the_old_spelling(capsys):
    assert build_parser().parse_args(["record", "--input-device", "3"]).input_device == "3"
    assert main(["record", "--device", "3", "--no-transcribe"]) == 2
    assert "--device is now --input-device" in capsys.readouterr().err


def test_importing_the_recipe_and_the_option_table_loads_no_torch():
    code = (
        "import sys, engine.recipe, engine.options, engine.cli.option_args\n"
        "print(sorted(m for m in ('torch', 'transformers', 'faster_whisper') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("text", "size"),
    [("8GiB", 8 * 2**30), ("500MB", 500 * 10**6), ("1.5gb", 1_500_000_000), (" 2 kib ", 2048), ("1", 1),
     ("1000000", 1_000_000), ("0.5kb", 500)],
)  # fmt: skip
def test_a_memory_size_reads_units_of_ten_and_of_two(text, size):
    assert memory_size(text) == size


@pytest.mark.parametrize("text", ["0.5", "0", "8XB", "GiB", "many", "-1MB", ""])
def test_a_memory_size_below_a_byte_or_in_an_unknown_unit_is_refused_with_an_example(text):
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        memory_size(text)
    assert str(raised.value) == f"not a memory size: {text!r} (e.g. 8GiB, 500MB, 1000000)"


def test_names_and_terms_come_from_commas_and_lines_without_blanks_or_repeats():
    assert terms("Alice, Kubernetes\nBob,, Alice ,  ") == ("Alice", "Kubernetes", "Bob")
    assert terms(["Alice", " ", "Bob ", "Alice", 3]) == ("Alice", "Bob", "3")  # a saved list
    assert terms(("Zoë",)) == ("Zoë",) and terms("") == ()


def test_a_channel_is_checked_as_the_flag_is_parsed():
    assert channel_arg("left") == "left" and channel_arg("3") == "3"
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        channel_arg("front")
    assert str(raised.value) == "channel must be mix, left, right or a number from 0, got 'front'"


@pytest.mark.parametrize(
    ("text", "code"), [(" DE ", "de"), ("Detect", "auto"), ("AUTO", "auto"), ("yue", "yue"), ("en", "en")]
)
def test_a_language_is_a_two_or_three_letter_code_or_auto(text, code):
    assert language_code(text) == code


@pytest.mark.parametrize("text", ["e", "engl", "e1", "12", "english"])
def test_anything_else_is_not_a_language(text):
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        language_code(text)
    assert str(raised.value) == f"a language is a code like en, de or fr (or auto), not {text!r}"


def test_pipeline_options_apply_to_any_backend_and_backend_options_to_the_ones_they_name():
    table = by_name()
    assert table["speakers"].applies_to("a-backend-added-later")
    assert table["language"].applies_to("whisper") and not table["language"].applies_to("vibevoice")
    assert table["mode"].field_value("single") is True and table["mode"].field_value("chunked") is False
    assert table["language"].field_value("de") == "de"  # no conversion: as parsed


def test_each_surface_offers_its_rows_and_only_those_of_the_chosen_backend():
    whisper = {o.flag for o in rows("transcribe", "whisper")}
    vibevoice = {o.flag for o in rows("transcribe", "vibevoice")}
    assert "--language" in whisper - vibevoice and "--dtype" in vibevoice - whisper
    assert "--speakers" in whisper & vibevoice and "--audio-stream" in whisper
    assert {o.flag for o in rows("record")} >= {"--language", "--model", "--channel", "--speakers"}
    assert "--dtype" not in {o.flag for o in rows("record")}
    assert "--audio-stream" not in {o.flag for o in rows("serve")}
    assert [o.label for o in dialog_rows()] == [o.label for o in option_rows() if o.label] != []


def test_the_flags_of_some_values_parse_back_to_them_and_leave_per_job_values_to_the_request():
    from engine.cli.option_args import option_flags
    from engine.options import request_fields

    values = {"model": "tiny.en", "quality": "accurate", "context": ("Alice", "Kubernetes"),
              "chunk_seconds": 12.0, "language": "de", "speakers": 2, "diarizer": "none",
              "max_speakers": 4}  # fmt: skip
    flags = option_flags(values, "serve", "whisper")
    assert flags[:2] == ["--backend", "whisper"] and "--language" not in flags and "--speakers" not in flags
    parsed = recipe_of(build_parser().parse_args(["serve", *flags]), "serve")
    per_job = {"language", "speakers", "diarizer", "max_speakers"}
    assert parsed == recipe_from({k: v for k, v in values.items() if k not in per_job}, "whisper")
    assert request_fields(values, "whisper") == {"language": "de", "num_speakers": "2", "diarizer": "none",
                                                 "max_speakers": "4"}  # fmt: skip
    assert "language" not in request_fields(values, "vibevoice")  # VibeVoice finds the language itself
    with pytest.raises(ValueError, match="takes no dtype"):
        option_flags({"dtype": "float32"}, "serve", "whisper")


def test_every_field_a_request_sets_is_one_the_server_reads():
    from engine.serve.params import COMMON, TRANSCRIBE_ONLY

    forms = {o.form for o in option_rows() if o.form}
    assert forms == {"language", "prompt", "temperature", "diarizer", "num_speakers", "min_speakers",
                     "max_speakers"}  # fmt: skip
    assert forms <= set(COMMON) | set(TRANSCRIBE_ONLY)


NEEDS = {"whisper": ["--model", "small"], ("--engine", "server"): ["--server", "http://127.0.0.1:9"]}
# what a choice needs beside it: a model that translates (--task translate), a server's URL


def _field(recipe: Recipe, option: Option) -> object:
    value: object = recipe.backend_config if option.owner == "backend" else recipe.pipeline
    for name in option.fields:
        value = getattr(value, name)
    return value


@pytest.mark.parametrize("backend", ["whisper", "vibevoice"])
def test_every_choice_a_flag_offers_reaches_its_config_field(backend):
    parser = build_parser()
    chosen = [o for o in rows("transcribe", backend) if o.choices and o.fields[-1] != "policy"]  # presets
    assert backend == "whisper" or "--speech-cap" in {o.flag for o in chosen}
    for option in chosen:
        for choice in option.choices:
            needs = NEEDS.get(backend, []) + NEEDS.get((option.flag, choice), [])
            args = parser.parse_args(["transcribe", "a.wav", "--backend", backend, *needs, option.flag,
                                      choice])  # fmt: skip
            assert _field(recipe_of(args, "transcribe"), option) == option.field_value(choice), option.flag
