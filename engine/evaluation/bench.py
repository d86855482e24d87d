"""A benchmark sweep: many named systems on one dataset, the paper's comparison table and plots.

`run_bench(systems, manifest, options)` evaluates each system in turn (`runner.evaluate`) and
returns a `BenchReport`. Systems that share a backend and its options share one loaded model
(chunk sizes and single-pass differ only in the pipeline around it); a model is released once no
remaining system needs it. `write_bench(report, folder)` writes `bench.json`, `bench.md` (the
comparison table, then each system's per-recording table) and the PNG plots under `plots/`.
Each system's hypotheses and report go to `<folder>/<system name>/`.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.evaluation.manifest import Manifest, load_reference
from engine.evaluation.plots import plot_sweep
from engine.evaluation.report import SystemReport
from engine.evaluation.runner import Notify, RunOptions, evaluate
from engine.evaluation.systems import System, unavailable
from engine.evaluation.tables import comparison_table, system_table

FORMAT = "murmur-bench"
VERSION = 1


@dataclass(frozen=True, slots=True)
class BenchReport:
    dataset: str
    reports: tuple[SystemReport, ...]
    baseline: str = "single-pass"

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "dataset": self.dataset,
            "baseline": self.baseline,
            "systems": [r.to_dict() for r in self.reports],
        }

    def table(self) -> str:
        return comparison_table(self.reports, self.baseline)


def run_bench(
    systems: Sequence[System],
    manifest: Manifest,
    options: RunOptions | None = None,
    count_failures: bool = False,
    notify: Notify | None = None,
    cancel: threading.Event | None = None,
    baseline: str = "single-pass",
    backend_factory: Callable[[System], Any] | None = None,
) -> BenchReport:
    """Evaluate every system on `manifest` (see the module docstring).

    `backend_factory` builds the backend a group of systems shares (default: a local one, e.g.
    a `RayBackend` instead); a backend with a `close()` is closed once no system needs it.
    """
    options = options or RunOptions()
    for entry in manifest.entries:  # a bad reference stops the sweep before any inference
        load_reference(entry)
    remaining = Counter(_key(s) for s in systems if unavailable(s) is None)
    backends: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}
    reports = []
    for system in systems:
        backend = None
        if unavailable(system) is None:
            key = _key(system)
            backend = backends.get(key) or backends.setdefault(key, (backend_factory or _backend)(system))
            remaining[key] -= 1
        folder = options.out_dir / system.name if options.out_dir else None
        run_options = dataclasses.replace(options, out_dir=folder)
        report = evaluate(system, manifest, run_options, notify, cancel, backend)
        reports.append(report.counting_failures(count_failures))
        if backend is not None and remaining[_key(system)] == 0:
            released = backends.pop(_key(system))  # release the model
            if hasattr(released, "close"):
                released.close()
        if folder is not None:
            write_system(reports[-1], folder)
    return BenchReport(manifest.name, tuple(reports), baseline)


def write_system(report: SystemReport, folder: Path) -> list[Path]:
    """`eval.json` and `eval.md` of one system in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path, md_path = folder / "eval.json", folder / "eval.md"
    json_path.write_text(json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8")
    md_path.write_text(system_table(report), encoding="utf-8")
    return [json_path, md_path]


def write_bench(report: BenchReport, folder: Path) -> list[Path]:
    """`bench.json`, `bench.md` and the plots; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path, md_path = folder / "bench.json", folder / "bench.md"
    json_path.write_text(json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8")
    sections = [f"# Benchmark on {report.dataset}", "", report.table()]
    sections += [system_table(r) for r in report.reports if r.skipped is None]
    md_path.write_text("\n".join(sections), encoding="utf-8")
    return [json_path, md_path, *plot_sweep(report.reports, folder / "plots")]


def _key(system: System) -> tuple[str, str]:
    """Systems with equal keys share one loaded model (option values may be lists: keyed as JSON)."""
    return system.backend, json.dumps(system.options, sort_keys=True, default=str)


def _backend(system: System) -> Any:
    from engine.backends import build_backend

    return build_backend(system.backend, system.recipe.backend_config)
