"""Fault injection for `murmur transcribe`: a generated corpus of bad inputs, bad options, read-only
and full output folders, Ctrl-C at several moments and SIGKILL during export. Every case ends in
a clear line and an exit code, never a traceback, and loses nothing already made."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import wave
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import engine.pipeline
from engine.cli import main
from engine.export import export, read_json
from engine.types import Transcript

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "resources" / "demo" / "meeting.flac"


def env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
            "TMPDIR": str(tmp), "OMP_NUM_THREADS": "1"}  # fmt: skip


def command(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "engine", "transcribe", *map(str, args)]


def murmur(tmp: Path, *args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), capture_output=True, text=True, env=env(tmp), cwd=ROOT,
                          timeout=timeout)  # fmt: skip


def ffmpeg(*args: str | Path) -> None:
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", *map(str, args)], check=True)


def truncated(good: Path, ext: str, keep: float = 0.3) -> Path:
    """`good` encoded as `ext`, cut after `keep` of its bytes."""
    full = good.with_name(f"full.{ext}")
    ffmpeg("-i", good, full)
    cut = good.with_name(f"truncated-{ext}.{ext}")
    data = full.read_bytes()
    cut.write_bytes(data[: int(len(data) * keep)])
    full.unlink()
    return cut


def build_corpus(folder: Path) -> dict[str, Path]:
    """Good and bad inputs made from a 6 s stretch of the demo meeting."""
    folder.mkdir(parents=True, exist_ok=True)
    good = folder / "good.wav"
    ffmpeg("-ss", "2", "-t", "6", "-i", DEMO, good)
    x, rate = sf.read(good, dtype="float32")
    poisoned = x.copy()
    poisoned[2000:2600], poisoned[30000:30010], poisoned[40000] = np.nan, np.inf, -np.inf
    sf.write(folder / "nan-inf.wav", poisoned, rate, subtype="FLOAT")
    ffmpeg("-i", good, "-ac", "8", "-ar", "96000", folder / "eight-channels-96k.wav")
    loud = np.clip(x * 40, -1, 1)
    sf.write(folder / "clipped-8k.wav", loud[::2], 8000, subtype="PCM_16")  # 8 kHz, heavily clipped
    with wave.open(str(folder / "huge-header.wav"), "wb") as w:  # a plain 44-byte header
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(rate)
        w.writeframes((x * 32767).astype("<i2").tobytes())
    header = bytearray((folder / "huge-header.wav").read_bytes())
    header[4:8] = header[40:44] = (0xFFFFFFF0).to_bytes(4, "little")  # RIFF and data sizes: ~4 GB
    (folder / "huge-header.wav").write_bytes(bytes(header))
    (folder / "zero-length.wav").write_bytes(b"")
    (folder / "notes.wav").write_text("these are my meeting notes, not audio\n" * 50)
    for ext in ("flac", "ogg", "mp3"):
        truncated(good, ext)
    cases = {path.stem: path for path in sorted(folder.iterdir())}
    ffmpeg("-f", "lavfi", "-i", "testsrc=duration=1:size=64x64:rate=10", "-an", folder / "video-no-audio.mp4")
    cases["video-no-audio"] = folder / "video-no-audio.mp4"
    twin = folder / "other" / "good.wav"  # same stem as good.wav, another folder
    twin.parent.mkdir()
    twin.write_bytes(good.read_bytes())
    cases["same-stem"] = twin
    return cases


SHOULD_WORK = ("good", "nan-inf", "eight-channels-96k", "clipped-8k", "huge-header", "same-stem")
MUST_FAIL = ("zero-length", "notes", "video-no-audio")
CUT_OFF = ("truncated-flac", "truncated-mp3")  # transcribed as far as they go, with "only X of Y"
# truncated Ogg: the pages that arrived decode and its length is read from the last one, so it is
# transcribed with no warning (or fails with its one line)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def corpus_run(corpus, tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, Path]]:
    """The whole corpus in one quiet command, into one --out whose name has a dot."""
    tmp = tmp_path_factory.mktemp("corpus-run")
    out = tmp / "transcripts.v1"
    result = murmur(tmp, *corpus.values(), "--out", out, "--format", "json,srt", "-q")
    return result, out, corpus


def test_each_bad_file_fails_alone_with_one_line_and_the_others_are_written(corpus_run):
    result, out, corpus = corpus_run
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("murmur: error:")]
    for name in MUST_FAIL:
        mine = [line for line in errors if str(corpus[name]) in line]
        assert len(mine) == 1, (name, result.stderr)
    assert (
        errors[-1]
        == f"murmur: error: {len(errors) - 1} of {len(corpus)} files failed; the others were written"
    )
    stems = {p.name.split(".")[0] for p in out.iterdir()}
    for name, path in corpus.items():
        stem = "good-2" if name == "same-stem" else path.stem
        failed = [line for line in errors if f"error: {path}:" in line]
        assert (len(failed) == 1) != (stem in stems), f"{name}: one outcome each\n{result.stderr}"
        assert name not in SHOULD_WORK or read_json(out / f"{stem}.json").utterances, name
    assert out.is_dir(), "--out is a folder even with a dot in its name"


def test_nan_samples_are_repaired_and_reported_as_a_warning(corpus_run):
    result, out, _ = corpus_run
    warning = [line for line in result.stderr.splitlines() if "nan-inf.wav" in line]
    assert len(warning) == 1 and "611 samples" in warning[0] and "replaced with silence" in warning[0]
    words = {w for u in read_json(out / "nan-inf.json").utterances for w in u.text.lower().split()}
    clean = {w for u in read_json(out / "good.json").utterances for w in u.text.lower().split()}
    assert len(words & clean) >= len(clean) / 2, "a 40 ms repair must not change what was heard"


def test_cut_off_compressed_files_are_transcribed_as_far_as_they_go_with_only_x_of_y(corpus_run):
    result, out, corpus = corpus_run
    for name in CUT_OFF:
        path = corpus[name]
        warning = [line for line in result.stderr.splitlines() if f"'{path.name}' ends before" in line]
        assert len(warning) == 1, (name, result.stderr)
        assert re.search(r"only 0:00:0\d of 0:00:06 could be decoded", warning[0]), warning[0]
        assert read_json(out / f"{path.stem}.json").duration < 4.0, name


def test_same_stem_inputs_get_distinct_outputs_and_a_note(corpus_run):
    result, out, corpus = corpus_run
    first, second = read_json(out / "good.json"), read_json(out / "good-2.json")
    assert first.source == second.source == "good.wav", "each names its recording, never its folders"
    assert first.utterances and second.utterances, "neither run overwrote the other's files"
    assert f"{corpus['same-stem']}: writing its files as good-2.*" in result.stderr


def test_quiet_output_holds_only_murmurs_own_lines(corpus_run):
    result, _, _ = corpus_run
    assert result.stdout == ""
    foreign = [
        line for line in result.stderr.splitlines() if not line.startswith(("murmur: ", "WARNING engine"))
    ]
    assert foreign == [], "decoder library output leaked into -q"


# ------------------------------------------------------------------ options checked before the work


@pytest.fixture
def no_decoding(monkeypatch) -> list[Path]:
    """Fails the test if anything is decoded."""
    decoded: list[Path] = []

    def refuse(path, *args, **kwargs):
        decoded.append(Path(path))
        raise AssertionError(f"decoding started for {path}")

    monkeypatch.setattr(engine.pipeline, "load_audio", refuse)
    return decoded


@pytest.fixture(scope="module")
def good(corpus) -> Path:
    return corpus["good"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--format", ""], "--format names no format"),
        (["--format", " , "], "--format names no format"),
        (["--format", "srt,pdf"], "unknown format(s) pdf"),
        (["--chunk-seconds", "nan"], "--chunk-seconds must be a finite number"),
        (["--chunk-seconds", "inf"], "--chunk-seconds must be a finite number"),
        (["--speakers", "0"], "--speakers must be at least 1"),
        (["--model", "/nonexistent/model"], "--model: the folder /nonexistent/model does not exist"),
    ],
)
def test_an_option_that_cannot_work_is_refused_before_decoding(
    good, tmp_path, capfd, no_decoding, options, message
):
    code = main(["transcribe", str(good), "--out", str(tmp_path / "out"), *options, "-q"])
    err = capfd.readouterr().err
    assert code == 1 and err.strip().splitlines() == [f"murmur: error: {err.split('error: ', 1)[1].strip()}"]
    assert message in err and not no_decoding and not (tmp_path / "out").exists()


def test_an_out_folder_under_a_file_is_refused_before_decoding(good, tmp_path, capfd, no_decoding):
    (tmp_path / "file").write_text("x")
    assert main(["transcribe", str(good), "--out", str(tmp_path / "file" / "sub"), "-q"]) == 1
    assert "is a file" in capfd.readouterr().err and not no_decoding


def test_an_out_folder_that_cannot_be_created_is_refused_before_decoding_even_for_root(
    good, capfd, no_decoding
):
    # access() says /proc is writable to root; only trying to create the folder tells
    assert main(["transcribe", str(good), "--out", "/proc/murmur-out/t", "-q"]) == 1
    err = capfd.readouterr().err
    assert "--out: cannot write into /proc/murmur-out/t" in err and not no_decoding


def test_a_checked_out_folder_is_left_as_it_was_found(good, tmp_path, capfd, no_decoding):
    assert main(["transcribe", str(good), "--out", str(tmp_path / "a" / "b"), "--format", "pdf"]) == 1
    from engine.cli.preflight import check_writable

    check_writable(tmp_path / "a" / "b", "--out")
    assert list(tmp_path.iterdir()) == []  # no probe file, no empty folders left behind


def test_device_cuda_without_cuda_blames_the_device_before_decoding(good, tmp_path, capfd, no_decoding):
    import ctranslate2

    if ctranslate2.get_cuda_device_count():
        pytest.skip("this machine has a CUDA device")
    assert main(["transcribe", str(good), "--out", str(tmp_path / "o"), "--device", "cuda", "-q"]) == 1
    err = capfd.readouterr().err
    assert "--device cuda: no CUDA device is usable here" in err and "model" not in err and not no_decoding


@pytest.fixture
def mount_tmpfs(tmp_path) -> Iterator:
    """`mount(name, options)`: a tmpfs under tmp_path (root only; skipped where mounting is refused)."""
    mounted: list[Path] = []

    def mount(name: str, options: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        where = tmp_path / name
        where.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_read_only_out_folder_is_refused_before_decoding(good, mount_tmpfs, capfd, no_decoding):
    folder = mount_tmpfs("readonly", "ro,size=1m")
    assert main(["transcribe", str(good), "--out", str(folder / "t"), "-q"]) == 1
    err = capfd.readouterr().err
    assert "--out: cannot write into" in err and "not writable" in err and not no_decoding


def test_too_many_speakers_for_the_recording_is_a_warning_before_the_work(good, tmp_path, capfd, monkeypatch):
    def stop(*args, **kwargs):
        raise KeyboardInterrupt  # the warning must already be out when the work starts

    monkeypatch.setattr(engine.pipeline, "load_audio", stop)
    with pytest.raises(KeyboardInterrupt):
        main(["transcribe", str(good), "--out", str(tmp_path / "o"), "--speakers", "50", "-q"])
    err = capfd.readouterr().err
    assert "murmur: warning: good.wav lasts 6 s: --speakers 50 is more than it can hold" in err


# ------------------------------------------------------------------ full disk, leftovers


def test_a_full_disk_prints_one_line_and_keeps_the_transcript(good, mount_tmpfs, tmp_path):
    folder = mount_tmpfs("full", "size=24k")
    result = murmur(tmp_path, good, "--out", folder, "--format", "srt,json,docx", "-q")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0], result.stderr
    saved = Path(lines[0].rsplit("saved to ", 1)[1])
    assert saved.parent == tmp_path / "murmur-recovered"
    assert read_json(saved).utterances
    assert not [p for p in folder.iterdir() if p.name.endswith(".part")]


# ------------------------------------------------------------------ Ctrl-C and SIGKILL


def spawn(tmp: Path, *args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(tmp), cwd=ROOT)  # fmt: skip


def wait_for_library(proc: subprocess.Popen[str], name: str, timeout: float = 60) -> None:
    """Until the process has loaded a shared library whose path contains `name`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        maps = Path(f"/proc/{proc.pid}/maps")
        if proc.poll() is not None or (maps.exists() and name in maps.read_text(errors="replace")):
            return
        time.sleep(0.005)
    raise AssertionError(f"{name} was never loaded")


def wait_for_line(proc: subprocess.Popen[str], prefix: str) -> list[str]:
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith(prefix):
            return seen
    raise AssertionError(f"no line starting {prefix!r}: {''.join(seen)}")


def finish(proc: subprocess.Popen[str], before: list[str] = ()) -> tuple[int, str]:
    _, err = proc.communicate(timeout=120)
    return proc.returncode, "".join(before) + err


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc to see the imports")
def test_ctrl_c_during_the_heavy_imports_exits_130_without_a_traceback(good, tmp_path):
    out = tmp_path / "out"
    proc = spawn(tmp_path, good, "--out", out)
    wait_for_library(proc, "numpy")  # main() is running; torch, the pipeline and the model come next
    proc.send_signal(signal.SIGINT)
    code, err = finish(proc)
    assert code == 130 and "Traceback" not in err, err
    assert "cancelled" in err and not out.exists()


@pytest.mark.slow
def test_ctrl_c_while_decoding_exits_130_and_writes_nothing(good, tmp_path):
    out = tmp_path / "out"
    proc = spawn(tmp_path, good, "--out", out)
    before = wait_for_line(proc, "decoding")
    proc.send_signal(signal.SIGINT)
    code, err = finish(proc, before)
    assert code == 130 and "Traceback" not in err, err
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.slow
def test_a_second_ctrl_c_exits_at_once_and_quietly(good, tmp_path):
    proc = spawn(tmp_path, good, "--out", tmp_path / "out")
    before = wait_for_line(proc, "transcribing")
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    code, err = finish(proc, before)
    assert code == 130 and "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip().splitlines()[-1] in (
        "murmur: aborted",
        "murmur: cancelled; nothing was written for the unfinished file",
    )


@pytest.mark.slow
def test_ctrl_c_between_files_keeps_the_finished_one(corpus, tmp_path):
    out = tmp_path / "out"
    proc = spawn(tmp_path, corpus["good"], corpus["clipped-8k"], "--out", out, "--format", "json")
    before = wait_for_line(proc, "good.wav:")  # the first file's "wrote ..." line
    proc.send_signal(signal.SIGINT)
    code, err = finish(proc, before)
    assert code == 130 and "Traceback" not in err, err
    assert read_json(out / "good.json").utterances
    assert not (out / "clipped-8k.json").exists()


@pytest.mark.slow
def test_sigkill_during_export_leaves_only_complete_files_and_debris_is_cleared(good, tmp_path):
    out = tmp_path / "out"
    for _ in range(5):
        proc = spawn(tmp_path, good, "--out", out, "--format", "srt,vtt,txt,json,docx")
        killed = False
        while proc.poll() is None:
            if out.is_dir() and any(p.name.endswith(".part") for p in out.iterdir()):
                proc.kill()
                killed = True
                break
            time.sleep(0.0005)
        proc.communicate(timeout=60)
        if killed:
            break
    else:
        pytest.skip("the export always finished before it could be killed")
    for path in out.iterdir():
        if path.name.endswith(".json") and not path.name.startswith("."):
            json.loads(path.read_text())
        elif path.name.endswith(".srt"):
            assert re.fullmatch(r"(\d+\n[\d:,]+ --> [\d:,]+\n(.+\n)+\n)*", path.read_text())
    leftovers = [p for p in out.iterdir() if p.name.endswith(".part")]
    assert leftovers
    export(read_json_or_empty(out), out, ["txt"], stem="next")  # the next write to the folder
    assert not [p for p in out.iterdir() if p.name.endswith(".part")]


def read_json_or_empty(out: Path) -> Transcript:
    path = out / "good.json"
    return read_json(path) if path.exists() else Transcript((), duration=1.0)


def test_a_missing_model_folder_is_named_and_not_turned_into_a_hub_id(good):
    from engine.errors import ModelLoadError
    from engine.pipeline import Pipeline

    with pytest.raises(ModelLoadError, match="folder '/nonexistent' does not exist") as caught:
        Pipeline.create("whisper", model="/nonexistent").run(good)
    assert "huggingface" not in str(caught.value) and "Systran" not in str(caught.value)
