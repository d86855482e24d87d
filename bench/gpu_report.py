"""The device check's record, written as it goes: nothing decided is lost when the run is cut short.

Every verdict and table row is printed (flushed) the moment it is known and, with `--out DIR`,
`DIR/summary.json` is rewritten (atomically) and `DIR/table.txt` and `DIR/log.txt` (everything
printed) appended at the same moment.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any


class Report:
    def __init__(self, out: str | None, budget_s: float | None) -> None:
        self.out = Path(out) if out else None
        self.started = time.perf_counter()
        self.deadline = None if budget_s is None else self.started + budget_s
        self.data: dict[str, Any] = {
            "environment": {},
            "checks": [],
            "rows": [],
            "skipped": [],
            "done": False,
        }
        if self.out is not None:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / "table.txt").write_text("")
            (self.out / "log.txt").write_text("")
        self.save()

    def say(self, text: str) -> None:
        print(text, flush=True)
        if self.out is not None:
            with (self.out / "log.txt").open("a") as f:
                f.write(text + "\n")

    def note(self, key: str, value: Any) -> None:
        self.data[key] = value
        self.save()

    def environment(self, values: dict[str, str]) -> None:
        self.data["environment"] = values
        self.say("  ".join(f"{k} {v}" for k, v in values.items()))
        self.save()

    def verdict(self, name: str, ok: bool | None, detail: str) -> None:
        word = "SKIP" if ok is None else "PASS" if ok else "FAIL"
        self.say(f"{word} {name}: {detail}")
        self.data["checks"].append({"name": name, "verdict": word, "detail": detail, "at_s": self.elapsed()})
        self.save()

    def table(self, line: str, row: dict[str, Any] | None = None) -> None:
        self.say(line)
        if self.out is not None:
            with (self.out / "table.txt").open("a") as f:
                f.write(line + "\n")
        if row is not None:
            self.data["rows"].append({**row, "at_s": self.elapsed()})
            self.save()

    def fits(self, name: str, estimate_s: float) -> bool:
        """Whether a row estimated at `estimate_s` fits the budget; if not, it is recorded as skipped."""
        if self.deadline is None or time.perf_counter() + estimate_s <= self.deadline:
            return True
        self.say(f"SKIP row {name}: about {estimate_s:.0f} s, {self.left():.0f} s of the budget left")
        self.data["skipped"].append(name)
        self.save()
        return False

    def left(self) -> float:
        return float("inf") if self.deadline is None else self.deadline - time.perf_counter()

    def elapsed(self) -> float:
        return round(time.perf_counter() - self.started, 1)

    def finish(self, ok: bool) -> None:
        self.data["done"], self.data["ok"], self.data["took_s"] = True, ok, self.elapsed()
        self.save()

    def save(self) -> None:
        if self.out is None:
            return
        tmp = self.out / "summary.json.tmp"
        tmp.write_text(json.dumps(self.data, indent=1))
        os.replace(tmp, self.out / "summary.json")


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
