"""Print the mutation score of the last `mutmut run` (the `make mutate` report).

Reads mutmut's per-file results (`mutants/**/*.meta`) and prints, per mutated module and in
total, how many mutants the tests killed among those that were run. A mutant counts as killed
when a test failed, errored or timed out with it; survived when every test passed; "no tests"
when no selected test reaches its code; "not run" when the run stopped before it (a subset run).
The last line is `mutation score: P % killed (K of N run; M not run)`.

    python bench/mutation_score.py [MUTANTS_FOLDER [LATER_FOLDER ...]]

With later folders (runs of some mutants again, e.g. `mutmut run NAME…` in another checkout after
tests were added), each mutant counts with the result of the last folder that ran it.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

KILLED = {1, 3, 24, -24, 36, 152, 255, 37}  # failed, pytest error, timeouts, type check
SURVIVED = {0}
NO_TESTS = {5, 33}


def kind(code: int | None) -> str:
    if code is None:
        return "not run"
    if code in KILLED:
        return "killed"
    if code in SURVIVED:
        return "survived"
    if code in NO_TESTS:
        return "no tests"
    return "other"


def counts(folder: Path, *later: Path) -> dict[str, Counter[str]]:
    """Per mutated module (path inside `folder`), how many mutants ended each way; a mutant that a
    `later` folder ran again counts with its latest result."""
    out: dict[str, Counter[str]] = {}
    for meta in sorted(folder.rglob("*.py.meta")):
        codes = _codes(meta)
        for again in later:
            rerun = _codes(again / meta.relative_to(folder))
            codes.update({key: code for key, code in rerun.items() if key in codes and code is not None})
        out[str(meta.relative_to(folder))[: -len(".meta")]] = Counter(kind(c) for c in codes.values())
    return out


def _codes(meta: Path) -> dict[str, int | None]:
    return dict(json.loads(meta.read_text())["exit_code_by_key"]) if meta.is_file() else {}


def score(c: Counter[str]) -> tuple[int, int]:
    """(killed, run) where run counts every mutant a test was run against or none could reach."""
    run = c["killed"] + c["survived"] + c["no tests"] + c["other"]
    return c["killed"], run


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path("mutants")
    table = counts(folder, *map(Path, argv[1:]))
    if not table:
        print(f"no mutmut results under {folder}; run `make mutate` first", file=sys.stderr)
        return 1
    total: Counter[str] = Counter()
    print(f"{'module':48} {'killed':>7} {'survived':>9} {'no tests':>9} {'not run':>8} {'score':>7}")
    for module, c in table.items():
        total += c
        killed, run = score(c)
        if run:
            pct = f"{100 * killed / run:.1f}%"
            row = f"{c['killed']:7} {c['survived']:9} {c['no tests']:9} {c['not run']:8}"
            print(f"{module:48} {row} {pct:>7}")
    killed, run = score(total)
    pct = 100 * killed / run if run else 0.0
    print(f"mutation score: {pct:.1f} % killed ({killed} of {run} run; {total['not run']} not run)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
