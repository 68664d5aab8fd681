"""Is the default sequential optimizer unchanged to the bit? (the check every session runs before
saying that ``bench/README.md``'s quality tables still stand)

Replays ``Warmbo().minimize`` (the quality section's warmbo method: the default ``Optimizer``, in
memory) on the quality section's problems for seeds 0 and 1, and compares the simple regret after
each budget with the values stored in ``bench/results/quality-peers.json``, exactly (``==`` on
floats). Prints one line per run and ``differences: N``; exits 1 when N > 0. About 10 s.

    python bench/bitcheck.py
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

from warmbo.benchmarks.methods import Warmbo
from warmbo.benchmarks.quality import problem

RESULTS = Path(__file__).parent / "results" / "quality-peers.json"


def main() -> int:
    warnings.simplefilter("ignore")
    stored = json.loads(RESULTS.read_text())
    stored = stored.get("results", stored)
    budgets = stored["settings"]["budgets"]
    bad = 0
    for name, entry in stored["problems"].items():
        regret = entry["methods"]["warmbo"]["regret"]
        for seed in (0, 1):
            fn = problem(name)
            best = np.minimum.accumulate(Warmbo().minimize(fn, max(budgets), seed))
            got = [float(best[b - 1] - fn.optimum_value) for b in budgets]
            want = [regret[str(b)]["values"][seed] for b in budgets]
            same = got == want
            bad += not same
            print(name, seed, "same" if same else f"DIFF {got} {want}", flush=True)
    print("differences:", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
