"""`murmur eval` in this process, on hypotheses a earlier run kept (`--resume`: no model runs): the
table printed and written, the scoring flags in the report, the recordings `--only`/`--limit` pick,
the system named and its options, and the one-line errors, the skipped system and Ctrl-C."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from engine.cli import build_parser, main
from engine.cli.eval import guarded, run, system_from_args
from engine.errors import Cancelled
from engine.export import export
from engine.types import Transcript, Utterance

REFERENCES = {"a": "the cat sat on the mat", "b": "hello world", "c": "one two three"}


def kept(out: Path, recording: str, text: str | None, seconds: float = 1.0) -> None:
    """A hypothesis a earlier run kept in `out` (None: the system failed on the recording)."""
    folder = out / "hyp"
    folder.mkdir(parents=True, exist_ok=True)
    facts: dict[str, object] = {"model": "tiny.en", "duration": seconds, "seconds": seconds / 2}
    if text is None:
        facts["failed"] = "boom"
    else:
        transcript = Transcript((Utterance(0.0, seconds, text, None),), duration=seconds)
        export(transcript, folder / f"{recording}.json", ["json"])
    (folder / f"{recording}.run.json").write_text(json.dumps(facts))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Three recordings with plain-text references, and their hypotheses kept in `<tmp>/out`: a with
    one word wrong of 6, b failed, c with one word missing of 3. Returns the manifest."""
    recordings = []
    for rid, text in REFERENCES.items():
        sf.write(tmp_path / f"{rid}.wav", np.zeros(16000, np.float32), 16000)
        (tmp_path / f"{rid}.txt").write_text(text + "\n")
        recordings.append({"id": rid, "audio": f"{rid}.wav", "text": f"{rid}.txt"})
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"format": "murmur-manifest", "version": 1, "name": "tiny",
                                    "recordings": recordings}))  # fmt: skip
    kept(tmp_path / "out", "a", "the cat sat on a mat")
    kept(tmp_path / "out", "b", None)
    kept(tmp_path / "out", "c", "one two", seconds=2.0)
    return manifest


def rows(table: str) -> dict[str, list[str]]:
    lines = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    return {
        cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines)
    }


def test_eval_prints_the_table_and_writes_it_with_the_default_scoring(corpus, capsys):
    # catches: the table not printed or not the one written, a scoring default other than the one
    # its help states, the report's files not said, a failed recording counted without the flag
    out = corpus.parent / "out"
    assert main(["eval", str(corpus), "--out", str(out), "--resume"]) == 0
    printed = capsys.readouterr()
    table = rows(printed.out)
    assert table["a"][:2] == ["1.0", "16.67"] and table["b"][1] == "failed" and table["c"][1] == "33.33"
    assert table["**pooled** (2)"][1] == "**22.22**"  # (1 + 1) / (6 + 3), b left out
    assert (out / "eval.md").read_text() == printed.out.split("\nwrote ")[0].rstrip("\n") + "\n"
    assert printed.err.startswith(
        "[whisper] a: 1 s of audio in 0.5 s (RTF 0.500), WER 16.7 %\n"
    )  # as it goes
    assert printed.err.endswith(f"wrote {out / 'eval.json'}, {out / 'eval.md'}\n")
    report = json.loads((out / "eval.json").read_text())
    assert report["system"]["name"] == "whisper"
    settings = report["settings"]
    assert (settings["normalizer"], settings["tcpwer_collar_s"], settings["der_collar_s"]) == (
        "murmur",
        5.0,
        0.25,
    )
    assert (
        settings["der_overlap"] == "scored" and settings["failed_recordings"] == "left out of corpus figures"
    )


def test_the_scoring_flags_reach_the_report(corpus, capsys):
    # catches: --normalizer, --collar, --der-collar or --der-skip-overlap read into another setting,
    # --count-failures not applied
    out = corpus.parent / "out"
    argv = ["eval", str(corpus), "--out", str(out), "--resume", "--normalizer", "none", "--collar", "2",
            "--der-collar", "0.5", "--der-skip-overlap", "--count-failures"]  # fmt: skip
    assert main(argv) == 0
    table = rows(capsys.readouterr().out)
    assert table["**pooled** (3)"][1] == "**36.36**"  # (1 + 2 + 1) / (6 + 2 + 3): b as 100 % error
    settings = json.loads((out / "eval.json").read_text())["settings"]
    assert (settings["normalizer"], settings["tcpwer_collar_s"], settings["der_collar_s"]) == (
        "none",
        2.0,
        0.5,
    )
    assert settings["der_overlap"] == "skipped" and settings["failed_recordings"] == "counted as 100 % error"


def test_only_and_limit_pick_the_recordings_and_the_picked_manifest_is_saved(corpus, capsys):
    # catches: --only's ids not stripped or an empty id kept, --limit ignored, --write-manifest not written
    out, saved = corpus.parent / "out", corpus.parent / "picked.json"
    argv = [
        "eval",
        str(corpus),
        "--out",
        str(out),
        "--resume",
        "--only",
        " c, ,a",
        "--write-manifest",
        str(saved),
    ]
    assert main(argv) == 0
    assert [r for r in rows(capsys.readouterr().out) if not r.startswith("**")] == ["recording", "a", "c"]
    assert [r["id"] for r in json.loads(saved.read_text())["recordings"]] == ["a", "c"]
    assert main(["eval", str(corpus), "--out", str(out), "--resume", "--limit", "2"]) == 0
    assert [r for r in rows(capsys.readouterr().out) if not r.startswith("**")] == ["recording", "a", "b"]


def test_a_folder_read_as_a_dataset_is_evaluated_like_its_manifest(corpus, capsys):
    # catches: --dataset ignored (SOURCE read as a manifest file), --allow-missing not reaching the
    # dataset's reader (a recording without reference refused although the flag was given)
    out = corpus.parent / "out"
    (corpus.parent / "picked").mkdir()
    for name in ("a.wav", "a.txt", "b.wav"):  # b without its reference
        (corpus.parent / "picked" / name).write_bytes((corpus.parent / name).read_bytes())
    argv = ["eval", str(corpus.parent / "picked"), "--dataset", "folder", "--out", str(out), "--resume"]
    assert main(argv) == 1
    assert "no audio or no reference found for 1 recording(s): b" in capsys.readouterr().err
    assert main([*argv, "--allow-missing"]) == 0
    assert [r for r in rows(capsys.readouterr().out) if not r.startswith("**")] == ["recording", "a"]


def test_without_out_the_report_goes_to_eval_dataset_system(corpus, capsys, monkeypatch):
    # catches: the default folder not named after the manifest and the system's --name
    monkeypatch.chdir(corpus.parent)
    kept(corpus.parent / "eval" / "tiny" / "mine", "a", "the cat sat on the mat")
    assert main(["eval", str(corpus), "--resume", "--name", "mine", "--only", "a"]) == 0
    assert "## mine on tiny" in capsys.readouterr().out
    assert (
        json.loads((corpus.parent / "eval" / "tiny" / "mine" / "eval.json").read_text())["system"]["name"]
        == "mine"
    )


def test_the_system_is_named_after_its_backend_and_takes_any_other_option():
    # catches: the single-pass name lost, --option keys not stripped or dashes kept, split at the last
    # "=" instead of the first, values not read as JSON, a pipeline flag passed to the backend
    argv = [
        "eval",
        "m.json",
        "--option",
        " beam-size =5",
        "--option",
        'prompt="x=y"',
        "--chunk-seconds",
        "12",
    ]
    args = build_parser().parse_args(argv)
    system = system_from_args(args)
    assert system.name == "whisper" and dict(system.options) == {"beam_size": 5, "prompt": "x=y"}
    assert system.chunk_seconds == 12.0
    single = system_from_args(build_parser().parse_args(["eval", "m.json", "--backend", "vibevoice", "--mode",
                                                         "single"]))  # fmt: skip
    assert single.name == "vibevoice-single" and single.single_pass


@pytest.mark.parametrize("option", ["oops", "=3", " =3"])
def test_an_option_without_key_and_value_is_one_line_and_exit_1(corpus, capsys, option):
    # catches: a malformed --option taken (as a key without value, or an empty key)
    assert main(["eval", str(corpus), "--option", option]) == 1
    assert capsys.readouterr().err == f"murmur: error: expected KEY=VALUE, got {option!r}\n"


def test_a_system_that_cannot_run_here_is_reported_skipped_and_a_foreign_option_refused(corpus, capsys):
    # catches: a skipped system ending with 0 (a sweep script would take it as scored)
    assert main(["eval", str(corpus), "--option", "colour=blue"]) == 1
    assert capsys.readouterr().err == "murmur: error: backend 'whisper' has no option(s): colour\n"
    out = corpus.parent / "out"
    missing = corpus.parent / "no-checkpoint"
    assert (
        main(["eval", str(corpus), "--out", str(out), "--backend", "vibevoice", "--model", str(missing)]) == 1
    )
    assert f"Skipped: there is no model folder at '{missing}'" in capsys.readouterr().out
    assert (
        json.loads((out / "eval.json").read_text())["skipped"] == f"there is no model folder at '{missing}'"
    )


def test_a_ctrl_c_during_start_up_cancels_the_evaluation_with_130(corpus, capsys):
    # catches: the command's cancel event replaced by a fresh one (a Ctrl-C before the run forgotten)
    args = build_parser().parse_args(["eval", str(corpus), "--out", str(corpus.parent / "fresh")])
    args.cancel = threading.Event()
    args.cancel.set()
    assert run(args) == 130
    assert capsys.readouterr().err.endswith("murmur: cancelled\n")


def test_ctrl_c_inside_a_guarded_command_asks_it_to_stop_and_the_old_handler_comes_back(capsys):
    # catches: Ctrl-C not reaching the command's event, the cancelled exit not 130, a user error not
    # one line with 1, the previous Ctrl-C handler left replaced after the command
    before = signal.getsignal(signal.SIGINT)

    def body(cancel: threading.Event) -> int:
        signal.raise_signal(signal.SIGINT)
        if cancel.is_set():
            raise Cancelled("stopped")
        return 0

    assert guarded(body) == 130 and signal.getsignal(signal.SIGINT) is before
    assert capsys.readouterr().err.endswith("murmur: cancelled\n")
    assert guarded(lambda cancel: (_ for _ in ()).throw(OSError("disk gone"))) == 1
    assert (
        capsys.readouterr().err == "murmur: error: disk gone\n" and signal.getsignal(signal.SIGINT) is before
    )


EVAL_FLAGS = {  # eval's own flags (the system flags are the option table's: test_option_table_shown)
    "source": ("positional arguments", "a manifest file, or a folder with --dataset", "SOURCE", None),
    "--dataset": ("dataset", "read SOURCE as a folder in this layout", None, None),
    "--allow-missing": ("dataset", "skip recordings without audio or reference", None, False),
    "--only": ("dataset", "comma-separated recording ids to evaluate", None, None),
    "--limit": ("dataset", "evaluate at most this many recordings", None, None),
    "--write-manifest": ("dataset", "also save the manifest read", "PATH", None),
    "--option": (
        "system", "any other backend option, e.g. --option min_new_tokens=512 (repeatable)", "KEY=VALUE", [],
    ),
    "--name": ("system", "name of this system in the report (default: the backend's)", None, None),
    "--normalizer": ("scoring", "default: murmur", None, "murmur"),
    "--collar": ("scoring", "tcpWER collar, seconds (default 5)", None, 5.0),
    "--der-collar": (
        "scoring",
        "DER collar, pyannote's total width in seconds: 0.25 forgives ±0.125 s (default 0.25)",
        None,
        0.25,
    ),
    "--der-skip-overlap": ("scoring", "leave overlapped speech out of DER", None, False),
    "--count-failures": (
        "scoring", "count recordings the system failed on as 100 %% error in corpus figures", None, False,
    ),
    "--resume": ("scoring", "reuse hypotheses already in the output folder", None, False),
    "--out": ("options", "output folder (default: eval/<dataset>/<name>)", None, None),
}  # fmt: skip


def test_eval_help_keeps_each_of_its_own_flags_group_text_metavar_and_default():
    # catches: a help text reworded or lost, a flag moved out of its group, a metavar or default
    # changed (an edited help text is a change a user sees; this copy makes it a deliberate one)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["eval"]
    shown = {}
    for group in sub._action_groups:
        for action in group._group_actions:
            name = action.option_strings[0] if action.option_strings else action.dest
            if name in EVAL_FLAGS:
                shown[name] = (group.title, action.help, action.metavar, action.default)
    assert shown == EVAL_FLAGS
    choices = {a.dest: a.choices for a in sub._actions}
    assert list(choices["dataset"]) == [
        "ami-ihm",
        "ami-sdm",
        "tedlium",
        "earnings21",
        "earnings21-eval10",
        "folder",
    ]
    assert list(choices["normalizer"]) == ["murmur", "whisper", "none"]
