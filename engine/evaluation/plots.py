"""PNG plots (matplotlib's Agg canvas, no GUI, no pyplot state) of benchmark sweeps and sparsity.

`plot_sweep(reports, folder)` draws, like the paper's Figure 2, one chart per error metric (WER,
DER, cpWER, tcpWER) and one of total latency against chunk size (log axis): `sweep` systems as a
solid curve, the single-pass system as a dashed line, other `baseline` systems (the whisper
baseline) as dotted lines with a marker at their own chunk size, `variant` systems (eviction
settings) as single markers, each a little right of its chunk size (`marker_x`) so that equal
values never hide one another. Systems that were skipped, or have no value for a metric, are left
out of that chart. `plot_sparsity(profile, path)` draws Figure 5: one stacked bar per layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.evaluation.metrics import METRICS
from engine.evaluation.report import SystemReport
from engine.evaluation.sparsity_profile import CATEGORIES, SparsityProfile
from engine.evaluation.systems import System
from engine.evaluation.tables import HEADERS

CHUNK_TICKS = (30, 60, 120, 300, 600)
_COLOURS = {"sweep": "tab:blue", "single": "tab:orange", "baseline": "tab:green", "variant": "tab:red"}
_MARKERS = "os^Dv<>p*h"
VARIANT_STEP = 1.07  # each variant's marker sits this factor right of the one before it


def plot_sweep(reports: Sequence[SystemReport], folder: Path) -> list[Path]:
    """One PNG per error metric plus `latency.png`; returns the paths written."""
    ran = [r for r in reports if r.skipped is None and r.recordings]
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for metric in (*METRICS, "latency"):
        values = {r.system.name: _value(r, metric) for r in ran}
        label = "total latency (s)" if metric == "latency" else f"{HEADERS[metric]} (%)"
        present = [r for r in ran if values[r.system.name] is not None]
        paths.append(_chart(present, values, label, folder / f"{metric}.png"))
    return paths


def _value(report: SystemReport, metric: str) -> float | None:
    if metric == "latency":
        return report.total_seconds
    pooled = report.pooled(metric)
    return None if pooled is None or pooled.rate is None else 100 * pooled.rate


def _chart(reports: list[SystemReport], values: dict[str, float | None], label: str, path: Path) -> Path:
    figure, axes = _figure((6.4, 4.2))
    sweep = sorted((r for r in reports if r.system.role == "sweep" and r.system.chunk_seconds), key=_chunk)
    if sweep:
        xs, ys = [_chunk(r) for r in sweep], [values[r.system.name] for r in sweep]
        axes.plot(xs, ys, "-o", color=_COLOURS["sweep"], label="chunked")
    variants, xs_at = 0, marker_x([r.system for r in reports])
    for r in reports:
        y = values[r.system.name]
        if r.system.single_pass:
            axes.axhline(y, linestyle="--", color=_COLOURS["single"], label=r.system.title)
        elif r.system.role == "baseline":
            axes.axhline(y, linestyle=":", color=_COLOURS["baseline"], label=r.system.title)
            if r.system.chunk_seconds:
                axes.plot([_chunk(r)], [y], "o", color=_COLOURS["baseline"])
        elif r.system.role == "variant" and r.system.chunk_seconds:
            marker = _MARKERS[variants % len(_MARKERS)]
            axes.plot([xs_at[r.system.name]], [y], marker, color=_COLOURS["variant"], label=r.system.title)
            variants += 1
    ticks = sorted({*CHUNK_TICKS, *(_chunk(r) for r in reports if r.system.chunk_seconds)})
    axes.set_xscale("log")
    axes.minorticks_off()
    axes.set_xticks(ticks, [f"{t:g}" for t in ticks])
    top = max((v for r in reports if (v := values[r.system.name]) is not None), default=0.0)
    axes.set_ylim(0, top * 1.15 or 1.0)
    axes.set_xlim(ticks[0] / 1.3, ticks[-1] * 1.3)
    axes.set_xlabel("chunk size (s)")
    axes.set_ylabel(label)
    axes.grid(True, alpha=0.3)
    if reports:
        axes.legend(fontsize="small")
    else:
        axes.text(0.5, 0.5, "no system produced this metric", ha="center", transform=axes.transAxes)
    return _save(figure, path)


def marker_x(systems: Sequence[System]) -> dict[str, float]:
    """Where each chunked system's marker is drawn: at its chunk size, except that `variant` systems
    are moved right by `VARIANT_STEP` each (a log axis: the same look at any size) so that variants
    sharing a chunk size with each other or with a sweep point never hide one another."""
    xs: dict[str, float] = {}
    taken: dict[float, int] = {}
    for system in systems:
        if not system.chunk_seconds:
            continue
        x = float(system.chunk_seconds)
        if system.role == "variant" and not system.single_pass:
            taken[x] = taken.get(x, 0) + 1
            xs[system.name] = x * VARIANT_STEP ** taken[x]
        else:
            xs[system.name] = x
    return xs


def plot_sparsity(profile: SparsityProfile, path: Path) -> Path:
    """Figure 5: per layer, the four KV categories as a stacked bar (percent of KV entries)."""
    figure, axes = _figure((max(6.4, 0.25 * len(profile.layers) + 2), 4.8))
    layers = [layer.layer for layer in profile.layers]
    bottom = [0.0] * len(layers)
    colours = ("tab:blue", "lightsteelblue", "tab:orange", "navajowhite")
    for name, colour in zip(CATEGORIES, colours, strict=True):
        heights = [100 * getattr(layer, name.replace(" ", "_")) for layer in profile.layers]
        axes.bar(layers, heights, bottom=bottom, color=colour, label=name)
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    needed = [100 * layer.speech_needed for layer in profile.layers]
    axes.plot(layers, needed, "k.-", label=f"speech tokens for {100 * profile.mass:g} % of speech attention")
    axes.set_xticks(layers)
    axes.set_xlabel("layer")
    axes.set_ylabel("% of KV entries")
    axes.set_ylim(0, 100)
    axes.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    axes.set_title(f"attention sparsity over {profile.steps} decode steps")
    return _save(figure, path)


def _chunk(report: SystemReport) -> float:
    return float(report.system.chunk_seconds or 0.0)


def _figure(size: tuple[float, float]) -> tuple[Any, Any]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, dpi=110)
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _save(figure: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, format="png")
    return path
