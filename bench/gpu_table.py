"""The speed table of the device check (`gpu_check.py`): per batch size, HF `generate` and the
engine with graphs on and off over the same steps, then the engine with each eviction policy over
a whole chunk; each row skipped when the budget cannot hold it (`Report.fits`), every batch's short
rows before any batch's long ones, so the largest batch is reached early."""

from __future__ import annotations

from gpu_parts import (
    Setup,
    attention_seconds,
    engine_run,
    hf_step_seconds,
    make_requests,
    roofline_seconds,
)
from gpu_report import Report

from engine.decode.eviction import EvictionConfig
from engine.decode.step import ModelParts

HEADER = ("batch", "decoder", "prefill s", "ms/step", "tok/s", "attn", "roof ms", "/roof", "KV vis", "vs HF")


class Rows:
    """The table rows of one batch size, each skipped when the budget cannot hold it."""

    def __init__(self, model, setup: Setup, rows: int, bandwidth: float, report: Report) -> None:
        self.model, self.setup, self.rows, self.bandwidth, self.report = model, setup, rows, bandwidth, report
        self.parts = ModelParts.from_model(model)
        self.hf_step: float | None = None  # HF generate's seconds per step at this batch
        self.graphs: tuple[float, float] | None = None  # (prefill + capture s, s per step) with graphs

    def fits(self, name: str, estimate: float | None) -> bool:
        """Whether a row of about `estimate` seconds (None: not known yet, 45) ends inside the budget."""
        return self.report.fits(f"{self.rows} {name}", 45.0 if estimate is None else estimate)

    def whole_chunk(self, steps: int) -> float | None:
        """Seconds a policy row of `steps` steps should take, from the graphs row's measurements."""
        if self.graphs is None:
            return None
        fixed, step = self.graphs
        return 1.5 * (fixed + steps * step) + 10

    def line(self, name: str, prefill: float, step: float, visible: float, hf: float | None) -> None:
        rows, device = self.rows, self.model.device
        attn = attention_seconds(self.parts, rows, visible, device)
        roof = roofline_seconds(self.parts, rows, visible, self.bandwidth)
        vs = f"{hf / step:6.1f}x" if hf else f"{'-':>7}"
        text = (
            f"{rows:>5} {name:<26} {prefill:9.2f} {1000 * step:8.2f} {rows / step:8.0f} {attn / step:6.0%} "
            f"{1000 * roof:8.2f} {step / roof:6.2f} {visible:7.0f} {vs}"
        )
        row = {"batch": rows, "decoder": name, "prefill_s": prefill, "ms_per_step": 1000 * step}
        row |= {"attention_share": attn / step, "roofline_ms": 1000 * roof, "ratio_to_roofline": step / roof}
        self.report.table(text, row | {"visible_kv": visible, "hf_ms_per_step": 1000 * hf if hf else None})

    def run_short(self, hf_steps: int) -> None:
        """HF generate and the engine with graphs on and off over the same few steps."""
        model, setup, rows = self.model, self.setup, self.rows
        prompt, dtype = sum(setup.prompt), self.parts.dtype
        short = make_requests(model, [prompt] * rows, hf_steps, model.device, dtype, setup.prompt)
        seen = prompt + hf_steps / 2
        if self.fits("HF generate", None):
            hf_prefill, self.hf_step = hf_step_seconds(model, short, hf_steps)
            self.line("HF generate", hf_prefill, self.hf_step, seen, None)
        warm = False
        for graphs in (True, False):
            name = f"murmur {'graphs' if graphs else 'eager'} (same steps)"
            if self.fits(name, None):
                if not warm:  # kernels and compiled glue, outside the timed runs
                    warm = engine_run(model, short[:2], EvictionConfig("none"), True) is not None
                prefill, capture, step, _ = engine_run(model, short, EvictionConfig("none"), graphs)
                self.graphs = (prefill + capture, step) if graphs else self.graphs
                self.line(name, prefill, step, seen, self.hf_step)

    def run_policies(self, steps: int) -> None:
        """The engine with each eviction policy over a whole chunk."""
        model, setup, rows = self.model, self.setup, self.rows
        prompt, dtype = sum(setup.prompt), self.parts.dtype
        full = make_requests(model, [prompt] * rows, steps, model.device, dtype, setup.prompt)
        for name, eviction in setup.policies.items():
            if self.fits(f"murmur {name}", self.whole_chunk(steps)):
                prefill, _, step, kept = engine_run(model, full, eviction, True)
                self.line(f"murmur {name}", prefill, step, kept * (prompt + steps / 2), None)


def speed_table(model, setup: Setup, batches, bandwidth: float, report: Report, args) -> None:
    """Every batch's short rows first, then the policy rows, so that the largest batch is reached
    before the long rows spend the budget; a verdict says whether its rows were measured."""
    steps, hf_steps = args.steps or setup.steps, args.hf_steps or setup.hf_steps
    tables = {rows: Rows(model, setup, rows, bandwidth, report) for rows in batches}
    for part in ("short", "policies"):
        for rows, table in tables.items():
            try:
                table.run_short(hf_steps) if part == "short" else table.run_policies(steps)
            except Exception as exc:  # e.g. out of memory at batch 64: keep what batch 16 measured
                report.say(f"batch {rows} {part} rows stopped: {type(exc).__name__}: {str(exc)[:200]}")
                report.data["skipped"].append(f"{rows} {part} (raised {type(exc).__name__})")
    largest = max(batches)
    reached = sum(row["batch"] == largest for row in report.data["rows"])
    report.verdict(
        f"batch {largest} rows reached", reached > 0, f"{reached} row(s) measured at batch {largest}"
    )
