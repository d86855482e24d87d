"""Markdown tables: one system's per-recording results, and the paper's system comparison table.

Error rates are percentages with two decimals; a metric that could not be computed is `–`,
a failed recording is marked `failed` and listed with its error under the table. The comparison
table has the columns of the paper's Table 2 (WER, DER, cpWER, tcpWER, total seconds, speed-up
over the single-pass baseline) plus the chunk size and the KV kept by eviction (the paper's
"kept %"); error rates and kept % show the pooled figure next to the macro mean, and skipped
systems are listed with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.evaluation.metrics import METRICS, ErrorCount
from engine.evaluation.report import SystemReport, settings

HEADERS = {"wer": "WER", "der": "DER", "cpwer": "cpWER", "tcpwer": "tcpWER"}


def percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}"


def rate(count: ErrorCount | None) -> str:
    return percent(count.rate if count is not None else None)


def system_table(report: SystemReport) -> str:
    """Per-recording rows and a pooled row for one system, with the scoring settings above."""
    lines = [f"## {report.system.title} on {report.dataset}", ""]
    if report.skipped:
        return "\n".join([*lines, f"Skipped: {report.skipped}", ""])
    lines += [settings_line(report), ""]
    head = ["recording", "audio (s)", *(f"{HEADERS[m]} (%)" for m in METRICS), "seconds", "RTF"]
    lines += [_row(head), _row(["---"] * len(head))]
    for r in report.recordings:
        cells = [r.id, f"{r.facts.duration:.1f}"]
        cells += ["failed" if r.failed else rate(r.scores.get(m)) for m in METRICS]
        lines.append(_row([*cells, f"{r.facts.seconds:.1f}", f"{r.facts.rtf:.3f}"]))
    pooled = [f"**pooled** ({len(report.scored)})", f"{report.total_duration:.1f}"]
    pooled += [f"**{rate(report.pooled(m))}**" for m in METRICS]
    lines.append(_row([*pooled, f"{report.total_seconds:.1f}", _fmt(report.rtf, "{:.3f}")]))
    lines += ["", *_failures(report), *_notes(report)]
    return "\n".join(lines).rstrip() + "\n"


def comparison_table(reports: Sequence[SystemReport], baseline: str | None = "single-pass") -> str:
    """The paper-style table: one row per system that ran; skipped systems listed below it."""
    base = next((r for r in reports if r.system.name == baseline and _ran(r)), None)
    head = ["System", "chunk (s)", *(f"{HEADERS[m]} (%)" for m in METRICS), "kept %", "speech lost"]
    head += ["Total (s)", "Speed-up"]
    lines = [_row(head), _row(["---"] * len(head))]
    for r in reports:
        if not _ran(r):
            continue
        chunk = "single pass" if r.system.single_pass else _fmt(r.system.chunk_seconds, "{:g}")
        speedup = "baseline" if r is base else _speedup(base, r)
        cells = [r.system.title, chunk, *(_pooled_macro(r, m) for m in METRICS), _kept(r), _lost(r)]
        lines.append(_row([*cells, f"{r.total_seconds:.1f}", speedup]))
    lines += ["", NOTE, ""]
    if base is None and baseline:
        lines.append(f"Speed-up is over `{baseline}`, which did not run, so it is not shown.")
    skipped = [r for r in reports if not _ran(r)]
    if skipped:
        lines += ["Skipped:", *(f"- `{r.system.name}`: {r.skipped or 'no recording ran'}" for r in skipped)]
    failed = [r for r in reports if _ran(r) and r.failures]
    for r in failed:
        lines.append(f"- `{r.system.name}` failed on {r.failures} of {len(r.recordings)} recordings")
    return "\n".join(lines).rstrip() + "\n"


NOTE = (
    "Error rates: pooled over recordings / macro mean of per-recording rates. kept %: KV entries "
    "kept at each chunk's last decode step over all it would hold (the paper's measure), pooled over "
    "chunks / macro mean; `–` without eviction. speech lost: seconds of speech evicted before the "
    "transcript was confirmed to have written it: inside a segment it then wrote, or past where its words "
    "had reached at its own pace (share of those chunks' audio), and the chunks whose speech-anchor "
    "stopped because their times ran ahead of their text; `–` without speech eviction."
)


def _pooled_macro(report: SystemReport, metric: str) -> str:
    return f"{rate(report.pooled(metric))} / {percent(report.macro(metric))}"


def _kept(report: SystemReport) -> str:
    kept = report.kept()
    if kept is None:
        return "–"
    return f"{100 * kept['last_pooled']:.1f} / {100 * kept['last_macro']:.1f}"


def _lost(report: SystemReport) -> str:
    lost = report.lost()
    if lost is None:
        return "–"
    stopped = f"; anchor stopped in {lost['anchor_stopped']} chunk(s)" if lost.get("anchor_stopped") else ""
    return f"{lost['seconds']:.1f} s ({100 * lost['fraction']:.1f} %){stopped}"


def settings_line(report: SystemReport) -> str:
    s = settings(report.metrics, report.normalizer, report.count_failures)
    return (
        f"Model: {report.model or report.system.backend}. Normaliser: {s['normalizer']}; "
        f"tcpWER collar {s['tcpwer_collar_s']:g} s; DER collar {s['der_collar_meaning']}, "
        f"overlap {s['der_overlap']}; pooled = {s['pooling']}; failed recordings {s['failed_recordings']}."
    )


def _ran(report: SystemReport) -> bool:
    return report.skipped is None and bool(report.recordings)


def _speedup(base: SystemReport | None, report: SystemReport) -> str:
    if base is None or report.total_seconds <= 0:
        return "–"
    return f"{base.total_seconds / report.total_seconds:.2f}×"


def _failures(report: SystemReport) -> list[str]:
    return [f"- {r.id} failed: {r.facts.failed}" for r in report.recordings if r.failed]


def _notes(report: SystemReport, shown: int = 6) -> list[str]:
    notes = list(dict.fromkeys(f"{r.id}: {n}" for r in report.recordings for n in r.scores.notes))
    lines = [f"- note: {n}" for n in notes[:shown]]
    if len(notes) > shown:
        lines.append(f"- … {len(notes) - shown} more notes in eval.json")
    return lines


def _fmt(value: float | None, pattern: str) -> str:
    return "–" if value is None else pattern.format(value)


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
