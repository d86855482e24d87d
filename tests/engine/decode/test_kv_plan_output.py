"""`murmur kv-plan` as a user reads it: the whole plan printed for a small checkpoint, Table 4, the
warning for speech evicted before its words, its own flags' help and defaults, and what it refuses
(a bad number: one line and exit 1; an unknown name: argparse's usage error and exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import build_parser, main

SMALL = {
    "dtype": "float32",
    "text_config": {"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 32},
}
NOTE_GPUS = (
    "Rows: what the GPU's memory less the loaded model (22 GB) and a 10 % reserve holds at each policy's "
    "row size. Steps/s: an upper bound for a memory-bound step reading the decoder's weights and those "
    "rows' KV at full HBM bandwidth (4.8 / 3.35 TB/s); not measured."
)
NOTE_ANCHOR = (
    "speech-anchor: speech lost % is planned for correct times; decoding meters each row's harm (speech "
    "evicted before it was confirmed transcribed: inside a written segment, or past where its words had "
    "reached) and a row whose times run ahead of its text stops evicting and says so (anchor_stopped), "
    "then holding all its speech."
)
PLAN = f"""\
Plan (the policies' arithmetic, not a measurement): 2 layers × 2 KV heads × 16, 4-byte KV; 2290 prompt \
tokens (2250 speech at 7.5/s), 1200 generated, batch 3
| policy | kept % (last) | kept % (mean) | speech lost % | peak entries/row | KV/row | vs none | KV/batch \
| attention/step | rows in 1.00 MiB |
|---|---|---|---|---|---|---|---|---|---|
| none | 100.0 | 100.0 | 0.0 | 6,978 | 1.70 MiB | 1.00× | 5.11 MiB | 4.23 MiB | 0 |
| paper-speech | 65.8 | 80.8 | 0.0 | 5,604 | 1.37 MiB | 0.80× | 4.10 MiB | 3.34 MiB | 0 |
| speech-anchor | 46.2 | 75.0 | 0.0 | 4,974 | 1.21 MiB | 0.71× | 3.64 MiB | 3.08 MiB | 0 |

| policy | H200 141 GB: rows | steps/s | tokens/s | H100 80 GB: rows | steps/s | tokens/s |
|---|---|---|---|---|---|---|
| none | 59936 | 46.7 | 2,797,858 | 29212 | 58.4 | 1,705,939 |
| paper-speech | 74653 | 47.4 | 3,538,240 | 36385 | 59.2 | 2,153,207 |
| speech-anchor | 84109 | 45.8 | 3,852,600 | 40994 | 57.4 | 2,354,636 |

{NOTE_GPUS}
{NOTE_ANCHOR}
"""
TABLE4 = """\
| Table 4 (S / W) | paper kept % | batch-minimum cap (authors' batching) | per row, 300 s chunk |
|---|---|---|---|
| 256 / 1024 | 93.2 | 92.1 | 68.6 |
| 512 / 1024 | 93.1 | 92.1 | 68.6 |
| 256 / 1538 | 97.2 | 97.6 | 82.1 |
| 512 / 1538 | 97.2 | 97.6 | 82.1 |

S read as the delay (sinks 32, rate 8). The batch-minimum column models the authors' runs (a meeting's \
chunks in one batch, 17–50 min meetings, 285–300 s chunks and a shorter tail whose span caps every row): \
close to the paper, not equal, because the meetings are modelled, not the paper's. This engine caps each \
row by its own span, so it keeps less.
"""


@pytest.fixture
def small(tmp_path: Path) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(SMALL))
    return tmp_path


def test_kv_plan_prints_the_whole_plan_of_a_small_checkpoint_as_recorded(small, capsys):
    # catches: a column's number scaled or taken from another field, a header, note or separator
    # changed, the prompt planned without --system-tokens, the rows-in-budget column lost, the
    # speech-anchor note missing; none's KV/row is checked by hand: (2290 + 1200) entries × 2 layers ×
    # K and V × 2 heads × 16 × 4 bytes = 1,786,880 B = 1.70 MiB
    argv = ["kv-plan", "--model", str(small), "--chunk-seconds", "300", "--output-tokens", "1200",
            "--system-tokens", "40", "--batch-size", "3", "--eviction", "none", "paper-speech",
            "speech-anchor", "--kv-memory", "1MiB"]  # fmt: skip
    assert main(argv) == 0
    assert capsys.readouterr().out == PLAN
    assert round((2290 + 1200) * 2 * 2 * 2 * 16 * 4 / 2**20, 2) == 1.70


def test_kv_plan_table_4_follows_the_output_and_prompt_tokens_given(capsys):
    # catches: --output-tokens or --system-tokens not reaching the batch-minimum column or the
    # per-row column (each has its own default), the per-row chunk other than 300 s, a header or the
    # note changed
    assert main(["kv-plan", "--table4", "--output-tokens", "1500", "--system-tokens", "50"]) == 0
    assert capsys.readouterr().out == TABLE4


def test_a_policy_evicting_speech_before_its_words_is_warned_with_the_tables_share(capsys):
    # catches: the warning's percentage computed other than the table's "speech lost %", its words
    # changed, or the speech-anchor note printed where no policy is speech-anchor
    assert main(["kv-plan", "--eviction", "none", "paper-speech"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| paper-speech |"))
    assert row.split("|")[4].strip() == "33.5"  # the table's share, to 0.1 (33.46 %)
    assert out.endswith(
        "warning: paper-speech evicts about 33 % of a chunk's speech before the transcript "
        "reaches it; expect words to be dropped\n"
    )
    assert "speech-anchor:" not in out


def _kv_plan_actions() -> dict[str, object]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["kv-plan"]
    return {a.option_strings[0]: a for a in sub._actions if a.option_strings}


def test_kv_plan_help_says_what_each_of_its_own_flags_does_and_its_default_is_the_one_used():
    # catches: a flag's help lost or reworded, a default other than the one its help states
    actions = _kv_plan_actions()
    helps = {
        "--model": "checkpoint folder whose config.json gives the shape",
        "--shape": "a known model shape (default: qwen2.5-7b)",
        "--dtype": "KV dtype (default: the checkpoint's `dtype`, or bfloat16 for --shape)",
        "--chunk-seconds": "audio per chunk (default: 300)",
        "--output-tokens": "tokens generated per chunk (default: 2700)",
        "--system-tokens": "prompt tokens around the speech (default: 100)",
        "--batch-size": "rows decoded together (default: 16)",
        "--eviction": "policies or presets to compare (default: none paper-output paper-speech paper-both "
        "speech-anchor)",
        "--table4": "only the paper's Table 4 kept %%: the authors' batch-minimum cap next to this engine's "
        "per-row cap",
    }
    assert {flag: actions[flag].help for flag in helps} == helps
    defaults = {flag: actions[flag].default for flag in ("--chunk-seconds", "--output-tokens",
                                                           "--system-tokens", "--batch-size")}  # fmt: skip
    assert defaults == {
        "--chunk-seconds": 300.0,
        "--output-tokens": 2700,
        "--system-tokens": 100,
        "--batch-size": 16,
    }


@pytest.mark.parametrize(
    "args",
    [["--output-tokens", "0"], ["--batch-size", "0"], ["--chunk-seconds", "0"], ["--system-tokens", "-1"]],
)
def test_kv_plan_refuses_a_number_out_of_range_in_one_line(args, capsys):
    # catches: a bound moved by one (0 allowed, or the smallest allowed value refused), the checks
    # joined so one of them no longer refuses alone, the message changed
    assert main(["kv-plan", *args]) == 1
    assert capsys.readouterr().err == (
        "murmur: error: --chunk-seconds, --output-tokens and --batch-size must be positive, "
        "--system-tokens not negative\n"
    )


def test_kv_plan_takes_the_smallest_values_it_allows(capsys):
    # catches: 1 output token, a batch of 1, half a second of audio or no prompt tokens refused
    argv = ["kv-plan", "--output-tokens", "1", "--batch-size", "1", "--chunk-seconds", "0.5",
            "--system-tokens", "0", "--eviction", "none"]  # fmt: skip
    assert main(argv) == 0
    assert "; 4 prompt tokens (4 speech at 7.5/s), 1 generated, batch 1" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "bad"), [(["--shape", "llama"], "llama"), (["--eviction", "fast"], "fast")])
def test_kv_plan_refuses_an_unknown_shape_or_policy_before_planning(args, bad, capsys):
    # catches: --shape or --eviction taking any name (a KeyError's traceback or a later one-line error)
    with pytest.raises(SystemExit) as exited:
        main(["kv-plan", *args])
    assert exited.value.code == 2 and f"invalid choice: '{bad}'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("budget", "shown"),
    [("1000", "rows in 1000 B"), ("1536", "rows in 1.50 KiB"), ("1KiB", "rows in 1.00 KiB"),
     ("3GiB", "rows in 3.00 GiB")],
)  # fmt: skip
def test_the_kv_memory_budget_is_shown_in_the_unit_a_reader_expects(budget, shown, capsys):
    # catches: a unit's size wrong (a KiB shown as bytes or as 51.20 KiB), its name changed, a budget
    # of exactly one unit shown in the unit below
    assert main(["kv-plan", "--eviction", "none", "--kv-memory", budget]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith(f"| {shown} |")
