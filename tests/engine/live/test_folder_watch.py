"""The watch folder's rules, on real files: what is taken, when, under which name, and what is recorded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from engine.live.flac_writer import FlacWriter
from engine.live.folder_watch import FolderWatcher, Ready
from engine.live.watch_state import FolderLock, Stamp
from engine.live.whole_file import unfinished
from tests.engine.live.conftest import write_clip

SETTLE = 2.0


def watcher(folder: Path, notes: list[str] | None = None) -> FolderWatcher:
    return FolderWatcher(folder, folder.parent / "out" / ".state.json", SETTLE,
                         on_note=(notes if notes is not None else []).append)  # fmt: skip


def names(ready: list) -> list[str]:
    return [r.path.name for r in ready]


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    folder = tmp_path / "inbox"
    folder.mkdir()
    return folder


def test_a_file_is_taken_only_after_it_stays_unchanged_for_the_settle_time(inbox: Path) -> None:
    w = watcher(inbox)
    write_clip(inbox / "a.flac", 0.0, 3.0)
    assert w.poll(now=0.0) == []  # first seen
    assert w.poll(now=SETTLE - 0.1) == []
    assert names(w.poll(now=SETTLE)) == ["a.flac"]


def test_a_copy_pausing_longer_than_the_settle_time_waits_for_its_end(inbox: Path, tmp_path: Path) -> None:
    whole = write_clip(tmp_path / "talk.flac", 0.0, 6.0).read_bytes()
    notes: list[str] = []
    w = watcher(inbox, notes)
    (inbox / "talk.flac").write_bytes(whole[: len(whole) // 2])  # the copy stalls half-way
    w.poll(now=0.0)
    assert w.poll(now=10.0) == [] and w.poll(now=20.0) == [] and w.poll(now=30.0) == []  # stable, not whole
    assert len(notes) == 1 and "waiting for talk.flac" in notes[0]  # said once, not at every scan
    with (inbox / "talk.flac").open("ab") as f:
        f.write(whole[len(whole) // 2 :])
    os.utime(inbox / "talk.flac", ns=(0, 5_000_000_000))  # a change the stamp sees
    assert w.poll(now=31.0) == [] and w.poll(now=31.5) == []  # changed: the settle time starts again
    [ready] = w.poll(now=31.0 + SETTLE)
    assert ready.stamp.size == len(whole)


@pytest.mark.parametrize("ext", ["wav", "flac", "mp3", "ogg"])
def test_a_file_cut_short_of_its_end_is_not_whole_and_the_full_one_is(tmp_path: Path, ext: str) -> None:
    full = write_clip(tmp_path / "full.wav", 0.0, 8.0)
    if ext != "wav":
        full = tmp_path / f"full.{ext}"
        subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(tmp_path / "full.wav"), str(full)],
                       check=True)  # fmt: skip
    data = full.read_bytes()
    half = tmp_path / f"half.{ext}"
    half.write_bytes(data[: len(data) // 2])
    assert unfinished(full) is None
    assert unfinished(half) is not None


def test_a_recording_murmur_is_still_making_is_ignored_until_it_is_closed(inbox: Path) -> None:
    w = watcher(inbox)
    writer = FlacWriter(inbox / "recording-20260101-100000.flac", 16000)
    writer.write(np.zeros(16000 * 3, np.float32))
    writer.flush()
    w.poll(now=0.0)
    assert w.poll(now=60.0) == []  # stable on disk for a minute: still being recorded
    writer.close()
    w.poll(now=61.0)
    assert names(w.poll(now=61.0 + SETTLE)) == ["recording-20260101-100000.flac"]


def test_a_file_replaced_while_it_was_transcribed_is_taken_again(inbox: Path, tmp_path: Path) -> None:
    w = watcher(inbox)
    write_clip(inbox / "m.wav", 0.0, 3.0)
    w.poll(now=0.0)
    [ready] = w.poll(now=SETTLE)
    write_clip(tmp_path / "new.wav", 3.0, 8.0).replace(inbox / "m.wav")  # the new take lands meanwhile
    w.done(ready, [])
    state = json.loads(w.state_file.read_text())
    assert state["m.wav"]["size"] == ready.stamp.size != (inbox / "m.wav").stat().st_size
    w.poll(now=SETTLE + 1)
    assert names(w.poll(now=2 * SETTLE + 1)) == ["m.wav"]


def test_a_handled_file_is_not_taken_again_even_after_a_restart(inbox: Path) -> None:
    w = watcher(inbox)
    write_clip(inbox / "a.flac", 0.0, 3.0)
    w.poll(now=0.0)
    [ready] = w.poll(now=SETTLE)
    w.done(ready, [])
    assert w.poll(now=SETTLE + 10) == []
    again = watcher(inbox)
    again.poll(now=0.0)
    assert again.poll(now=SETTLE + 10) == []


def test_files_sharing_a_stem_get_their_own_transcript_names_across_restarts(inbox: Path) -> None:
    w = watcher(inbox)
    write_clip(inbox / "meeting.wav", 0.0, 3.0)
    w.poll(now=0.0)
    [wav] = w.poll(now=SETTLE)
    w.done(wav, [])
    assert w.stem_for("meeting.wav") == "meeting"
    assert w.stem_for("Meeting.ogg") == "Meeting-2"  # case-insensitive file systems collide too
    w.done(Ready(inbox / "meeting.mp3", Stamp(10, 1.0)), [])
    later = watcher(inbox)  # a restart: the stems come back from the state, whoever asks first
    assert later.stem_for("meeting.mp3") == "meeting-3" and later.stem_for("meeting.ogg") == "meeting-2"
    assert later.stem_for("meeting.wav") == "meeting"


def test_a_removed_folder_is_said_once_and_watched_again_when_it_is_back(inbox: Path) -> None:
    notes: list[str] = []
    w = watcher(inbox, notes)
    shutil.rmtree(inbox)
    assert w.poll(now=0.0) == []
    assert len(notes) == 1 and "cannot read the watch folder" in notes[0]  # at once
    assert w.poll(now=1.0) == [] and len(notes) == 1  # and once
    inbox.mkdir()
    write_clip(inbox / "a.flac", 0.0, 3.0)
    w.poll(now=2.0)
    assert "is back" in notes[-1]
    assert names(w.poll(now=2.0 + SETTLE)) == ["a.flac"]


def test_a_state_that_cannot_be_saved_keeps_the_old_file_and_the_memory(inbox: Path) -> None:
    w = watcher(inbox)
    write_clip(inbox / "a.flac", 0.0, 3.0)
    write_clip(inbox / "b.flac", 0.0, 2.0)
    w.poll(now=0.0)
    a, b = w.poll(now=SETTLE)
    w.done(a, [])
    before = w.state_file.read_bytes()
    w.state_file.with_name(w.state_file.name + ".part").mkdir()  # the temporary file cannot be made
    with pytest.raises(OSError):
        w.done(b, [])
    assert w.state_file.read_bytes() == before  # the old state is whole
    assert w.poll(now=SETTLE + 5) == []  # and b is remembered in memory: not taken twice


def test_a_second_lock_on_one_folder_is_refused_until_the_first_goes(inbox: Path, tmp_path: Path) -> None:
    first = FolderLock(inbox, tmp_path / "out")
    refused = r"already watched by another `murmur watch` .*; one watcher per folder"
    with pytest.raises(ValueError, match=refused):
        FolderLock(inbox, tmp_path / "out")
    first.release()
    first.release()  # twice: nothing to let go of
    FolderLock(inbox, tmp_path / "out").release()


def test_a_negative_or_nan_settle_time_is_refused_and_zero_is_taken(inbox: Path) -> None:
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="settle"):
            FolderWatcher(inbox, inbox / "s.json", bad)
    assert FolderWatcher(inbox, inbox / "s.json", 0.0).settle_seconds == 0.0


def test_stamps_compare_size_and_time(tmp_path: Path) -> None:
    path = write_clip(tmp_path / "a.wav", 0.0, 1.0)
    assert Stamp.of(path) == Stamp(path.stat().st_size, path.stat().st_mtime)


def with_chunk_before_data(wav: Path, name: bytes, body: bytes) -> Path:
    """`wav` with one more RIFF chunk (padded to an even length) before its `data` chunk."""
    data = wav.read_bytes()
    at = data.index(b"data")
    chunk = name + len(body).to_bytes(4, "little") + body + (b"\0" if len(body) % 2 else b"")
    out = data[:at] + chunk + data[at:]
    out = out[:4] + (len(out) - 8).to_bytes(4, "little") + out[8:]
    wav.write_bytes(out)
    return wav


def test_a_wav_with_odd_sized_chunks_before_its_audio_is_judged_by_its_data_chunk(tmp_path: Path) -> None:
    wav = with_chunk_before_data(write_clip(tmp_path / "a.wav", 0.0, 2.0), b"LIST", b"odd")
    assert unfinished(wav) is None
    data = wav.read_bytes()
    (tmp_path / "cut.wav").write_bytes(data[:-100])
    assert "promises" in (unfinished(tmp_path / "cut.wav") or "")


def test_a_file_ffmpeg_cannot_open_is_left_to_the_pipeline_to_report(tmp_path: Path) -> None:
    junk = tmp_path / "junk.mp3"
    junk.write_bytes(b"\x00not audio at all" * 50)
    assert unfinished(junk) is None  # not "waiting": the pipeline says it cannot be read


def test_an_ogg_cut_between_pages_is_not_whole(tmp_path: Path) -> None:
    full = tmp_path / "full.ogg"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(write_clip(tmp_path / "a.wav", 0.0, 8.0)),
                    str(full)], check=True)  # fmt: skip
    data = full.read_bytes()
    last = data.rfind(b"OggS")
    cut = tmp_path / "cut.ogg"
    cut.write_bytes(data[:last])  # ends exactly where the final page would begin
    assert unfinished(full) is None and unfinished(cut) == "its last Ogg page is not the end of the stream"


def test_a_damaged_state_file_is_refused_with_what_to_do(inbox: Path) -> None:
    state = inbox.parent / "out" / ".state.json"
    state.parent.mkdir()
    state.write_text("{not json")
    with pytest.raises(ValueError, match=r"cannot be read .*move it away"):
        watcher(inbox)
    state.write_text("[1, 2]")  # JSON, but not a state: an empty one
    assert watcher(inbox).state == {}


def test_the_lock_goes_to_the_out_folder_when_the_watched_one_takes_none(inbox: Path, tmp_path: Path) -> None:
    (inbox / ".murmur-watch.lock").mkdir()  # the lock file cannot be opened there
    out = tmp_path / "out" / "not" / "made"
    lock = FolderLock(inbox, out)
    assert lock.path == out / ".murmur-watch.lock"
    with pytest.raises(ValueError, match="already watched"):
        FolderLock(inbox, out)
    lock.release()
    (out / ".murmur-watch.lock").unlink()
    (out / ".murmur-watch.lock").mkdir()
    with pytest.raises(ValueError, match="cannot lock"):
        FolderLock(inbox, out)


def test_a_saved_state_reads_back_and_leaves_no_temporary_file(inbox: Path) -> None:
    w = FolderWatcher(inbox, inbox.parent / "out" / "deep" / ".state.json", SETTLE)
    write_clip(inbox / "a.flac", 0.0, 2.0)
    w.poll(now=0.0)
    [ready] = w.poll(now=SETTLE)
    w.done(ready, [inbox / "a.txt"])
    entry = {"size": ready.stamp.size, "mtime": ready.stamp.mtime, "outcome": "done",
             "detail": [str(inbox / "a.txt")], "stem": "a"}  # fmt: skip
    assert json.loads(w.state_file.read_text()) == {"a.flac": entry}
    assert sorted(p.name for p in w.state_file.parent.iterdir()) == [".state.json"]
    assert w.state_file.read_text().startswith('{\n "a.flac": {\n  "size"')  # readable: indented
    w.failed(ready, "broken")
    saved = json.loads(w.state_file.read_text())["a.flac"]
    assert (saved["outcome"], saved["detail"]) == ("failed", "broken")


def test_an_empty_file_is_never_taken(inbox: Path) -> None:
    w = watcher(inbox)
    (inbox / "empty.wav").write_bytes(b"")
    w.poll(now=0.0)
    assert w.poll(now=100.0) == []


def test_hidden_and_non_audio_files_and_folders_are_not_taken(inbox: Path) -> None:
    w = watcher(inbox)
    write_clip(inbox / ".hidden.flac", 0.0, 2.0)
    write_clip(inbox / "notes.flac", 0.0, 2.0).rename(inbox / "notes.txt")
    (inbox / "folder.wav").mkdir()
    write_clip(inbox / "LOUD.FLAC", 0.0, 2.0)
    w.poll(now=0.0)
    assert names(w.poll(now=SETTLE)) == ["LOUD.FLAC"]


def test_a_wav_still_being_written_by_a_streaming_recorder_is_not_whole(tmp_path: Path) -> None:
    wav = write_clip(tmp_path / "a.wav", 0.0, 2.0)
    data = bytearray(wav.read_bytes())
    at = data.index(b"data")
    data[at + 4 : at + 8] = b"\xff\xff\xff\xff"  # the size a recorder writes until it closes the file
    wav.write_bytes(bytes(data))
    assert "promises 4294967295 bytes" in (unfinished(wav) or "")


def test_a_wav_missing_its_last_bytes_is_not_whole(tmp_path: Path) -> None:
    wav = write_clip(tmp_path / "a.wav", 0.0, 2.0)
    (tmp_path / "cut.wav").write_bytes(wav.read_bytes()[:-4])
    assert "64000 bytes of audio, 63996 are there" in (unfinished(tmp_path / "cut.wav") or "")


def test_a_wav_whose_audio_starts_beyond_the_first_4_kib_is_left_to_the_decoder(tmp_path: Path) -> None:
    wav = with_chunk_before_data(write_clip(tmp_path / "a.wav", 0.0, 2.0), b"LIST", b"x" * 5000)
    assert unfinished(wav) is None


def test_a_flac_cut_in_half_says_where_its_audio_stops(tmp_path: Path) -> None:
    data = write_clip(tmp_path / "a.flac", 0.0, 8.0).read_bytes()
    (tmp_path / "half.flac").write_bytes(data[: len(data) // 2])
    reason = unfinished(tmp_path / "half.flac") or ""
    seconds = float(reason.split("stops decoding at ")[1].split(" s")[0])
    assert 2.0 < seconds < 6.0, reason


def ffmpeg(*args: str | Path) -> None:
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", *map(str, args)], check=True)


def test_whole_files_of_other_kinds_are_whole(tmp_path: Path) -> None:
    wav = write_clip(tmp_path / "a.wav", 0.0, 3.0)
    ffmpeg("-i", wav, tmp_path / "a.aac")  # raw ADTS: no length in any header
    ffmpeg("-f", "lavfi", "-i", "color=size=32x32:duration=3", "-i", wav, "-shortest", tmp_path / "v.mp4")
    assert unfinished(tmp_path / "a.aac") is None
    assert unfinished(tmp_path / "v.mp4") is None  # a video: only its audio is counted



def test_a_state_written_before_stems_were_kept_gives_each_file_its_own_stem(inbox: Path) -> None:
    state = inbox.parent / "out" / ".state.json"
    state.parent.mkdir()
    state.write_text(json.dumps({"talk.wav": {"size": 1, "mtime": 1.0, "outcome": "done", "detail": []}}))
    w = watcher(inbox)
    assert w.stem_for("talk.mp3") == "talk-2" and w.stem_for("talk.wav") == "talk"


def test_a_short_webm_whose_stream_states_no_length_is_whole(tmp_path: Path) -> None:
    ffmpeg("-i", write_clip(tmp_path / "a.wav", 1.0, 1.3), tmp_path / "a.webm")  # 0.3 s; Matroska
    assert unfinished(tmp_path / "a.webm") is None


@pytest.mark.parametrize(("padding", "judged"), [(4044, True), (4052, False)])
def test_a_wav_data_chunk_at_the_edge_of_the_first_4_kib(tmp_path: Path, padding: int, judged: bool) -> None:
    # `data`'s header in the last 8 bytes read (judged from it), or just after them (left to FFmpeg)
    wav = with_chunk_before_data(write_clip(tmp_path / "a.wav", 0.0, 2.0), b"LIST", b"x" * padding)
    assert wav.read_bytes().index(b"data") == (4088 if judged else 4096)
    (tmp_path / "cut.wav").write_bytes(wav.read_bytes()[:-10])
    reason = unfinished(tmp_path / "cut.wav")
    assert ("promises" in (reason or "")) if judged else reason is None
