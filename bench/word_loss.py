"""Where the words go: deletions of our whisper path next to faster-whisper's own decoding.

For each recording of a manifest with exact word references (`murmur synth-corpus`, the demo),
this runs, with one loaded whisper model:
- `ours`: `Pipeline` with `--diarizer none` (the ASR path alone) at the chosen quality;
- `ours+spk`: the same ASR output with the embedded diarizer (only when `--speakers` is given);
- `fw-batched`: faster-whisper's `BatchedInferencePipeline(batch_size=8)` with its own VAD;
- `fw-seq`: faster-whisper's sequential `model.transcribe(vad_filter=True)` (conditioned on the
  previous text, temperature fallback);
then aligns every system's words to the reference (jiwer, the paper's normalisation) and sorts each
deleted reference word into one category, first match wins:
- `overlap`: it overlaps another speaker's word in time;
- `outside chunks`: its centre lies in no chunk of our plan (VAD missed it);
- `chunk edge`: within 1 s of one of our chunk edges;
- `short turn`: its reference turn has at most 3 words;
- `dropout`: it lies in a chunk where a system lost over 40 % of the reference words;
- `other`.
Prints WER, S/D/I and the deletion table per system; `--json` writes every number.

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python bench/word_loss.py CORPUS/manifest.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CATEGORIES = ("overlap", "outside chunks", "chunk edge", "short turn", "dropout", "other")
EDGE_SECONDS = 1.0
DROPOUT_SHARE = 0.4


@dataclass(frozen=True)
class RefWord:
    start: float
    end: float
    speaker: str
    text: str
    turn_words: int


def reference_words(entry: Any) -> list[RefWord]:
    """Exact reference words with times, speaker and the length of their turn."""
    seglst = json.loads(Path(entry.seglst).read_text())
    words_path = Path(str(entry.seglst).replace(".seglst.json", ".words.json"))
    words = json.loads(words_path.read_text())
    turns = [(t["start_time"], t["end_time"], t["speaker"], len(t["words"].split())) for t in seglst]
    out = []
    for w in words:
        mid = (w["start_time"] + w["end_time"]) / 2
        n = next((k for a, b, s, k in turns if s == w["speaker"] and a - 0.05 <= mid <= b + 0.05), 99)
        out.append(RefWord(w["start_time"], w["end_time"], w["speaker"], w["words"], n))
    return sorted(out, key=lambda r: r.start)


def align(ref: list[RefWord], hyp_text: str, norm: Any) -> tuple[Counter, list[int]]:
    """S/D/I counts and the indices (into `ref`) of deleted reference words."""
    import jiwer

    tokens, owner = [], []
    for i, r in enumerate(ref):
        for t in norm(r.text).split():
            tokens.append(t)
            owner.append(i)
    out = jiwer.process_words(" ".join(tokens), norm(hyp_text) or "<empty>")
    counts = Counter(S=out.substitutions, D=out.deletions, I=out.insertions, N=len(tokens))
    deleted = sorted({owner[k] for c in out.alignments[0] if c.type == "delete"
                      for k in range(c.ref_start_idx, c.ref_end_idx)})  # fmt: skip
    return counts, deleted


def categorise(ref: list[RefWord], deleted: list[int], chunks: list[tuple[float, float]]) -> Counter:
    starts = np.array([r.start for r in ref])
    lost_share = _chunk_loss(ref, deleted, chunks)
    found: Counter = Counter()
    for i in deleted:
        r = ref[i]
        mid = (r.start + r.end) / 2
        near = np.flatnonzero(np.abs(starts - r.start) < 5.0)
        others = [ref[j] for j in near if ref[j].speaker != r.speaker]
        home = [k for k, (a, b) in enumerate(chunks) if a <= mid <= b]
        if any(o.start < r.end and o.end > r.start for o in others):
            found["overlap"] += 1
        elif not home:
            found["outside chunks"] += 1
        elif any(min(abs(mid - a), abs(mid - b)) < EDGE_SECONDS for a, b in chunks):
            found["chunk edge"] += 1
        elif r.turn_words <= 3:
            found["short turn"] += 1
        elif lost_share[home[0]] > DROPOUT_SHARE:
            found["dropout"] += 1
        else:
            found["other"] += 1
    return found


def _chunk_loss(ref: list[RefWord], deleted: list[int], chunks: list[tuple[float, float]]) -> list[float]:
    gone = set(deleted)
    shares = []
    for a, b in chunks:
        inside = [i for i, r in enumerate(ref) if a <= (r.start + r.end) / 2 <= b]
        shares.append(sum(i in gone for i in inside) / max(1, len(inside)))
    return shares


def run_ours(pipeline: Any, path: Path) -> tuple[str, list[tuple[float, float]], float]:
    began = time.perf_counter()
    transcript = pipeline.run(path)
    seconds = time.perf_counter() - began
    text = " ".join(u.text for u in sorted(transcript.utterances, key=lambda u: u.start))
    return text, [(c.start, c.end) for c in transcript.chunks], seconds


def run_faster_whisper(model: Any, samples: np.ndarray, sequential: bool) -> tuple[str, float]:
    from faster_whisper import BatchedInferencePipeline

    began = time.perf_counter()
    if sequential:
        segments, _ = model.transcribe(samples, language="en", vad_filter=True, word_timestamps=True)
    else:
        batched = BatchedInferencePipeline(model=model)
        segments, _ = batched.transcribe(samples, language="en", batch_size=8, word_timestamps=True)
    text = " ".join(s.text.strip() for s in segments)
    return text, time.perf_counter() - began


def options(items: list[str]) -> dict[str, Any]:
    """`KEY=VALUE` strings as whisper options (values read as JSON when they parse)."""
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def main(argv: list[str] | None = None) -> int:
    from engine.backends.whisper import WhisperBackend, WhisperConfig, load_model
    from engine.evaluation.manifest import read_manifest
    from engine.evaluation.normalize import get_normalizer
    from engine.pipeline import Pipeline, PipelineConfig
    from engine.speakers import SpeakerConfig

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("manifest", type=Path)
    p.add_argument("--quality", default="fast")
    p.add_argument("--option", action="append", default=[], help="whisper option KEY=VALUE")
    p.add_argument("--systems", default="ours,fw-batched,fw-seq")
    p.add_argument("--speakers", action="store_true", help="also run ours with the embedded diarizer")
    p.add_argument("--json", type=Path, help="write all numbers here")
    args = p.parse_args(argv)
    norm = get_normalizer("murmur")
    manifest = read_manifest(args.manifest)
    extra = options(args.option)
    config = WhisperConfig(quality=args.quality, cpu_threads=1, **extra)
    backend = WhisperBackend(config)
    model = load_model(backend.config)
    backend.attach(model)
    systems = args.systems.split(",") + (["ours+spk"] if args.speakers else [])
    pipes = {"ours": Pipeline(backend, PipelineConfig(speakers=SpeakerConfig(diarizer="none")))}
    if args.speakers:
        pipes["ours+spk"] = Pipeline(backend, PipelineConfig())
    totals = {s: Counter() for s in systems}
    lost = {s: Counter() for s in systems}
    report: dict[str, Any] = {}
    for entry in manifest.entries:
        ref = reference_words(entry)
        text, chunks, secs = run_ours(pipes["ours"], Path(entry.audio))
        samples = pipes["ours"].load(Path(entry.audio)).samples
        for system in systems:
            if system == "ours":
                hyp = text
            elif system in pipes:
                hyp, _, secs = run_ours(pipes[system], Path(entry.audio))
            else:
                hyp, secs = run_faster_whisper(model, samples, system == "fw-seq")
            counts, deleted = align(ref, hyp, norm)
            cats = categorise(ref, deleted, chunks)
            totals[system] += counts
            lost[system] += cats
            wer = (counts["S"] + counts["D"] + counts["I"]) / counts["N"]
            report.setdefault(entry.id, {})[system] = {"wer": wer, **counts, "lost": dict(cats), "s": secs}
            print(f"{entry.id:12s} {system:10s} WER {wer:.3f} S{counts['S']} D{counts['D']} "
                  f"I{counts['I']} {secs:6.1f}s  {dict(cats)}", flush=True)  # fmt: skip
    print("\n| system | WER | S | D | I | " + " | ".join(CATEGORIES) + " |")
    print("|---" * (5 + len(CATEGORIES)) + "|")
    for system in systems:
        c = totals[system]
        wer = (c["S"] + c["D"] + c["I"]) / max(1, c["N"])
        cells = " | ".join(str(lost[system][k]) for k in CATEGORIES)
        print(f"| {system} | {wer:.3f} | {c['S']} | {c['D']} | {c['I']} | {cells} |")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
