"""Envelope-BO on the bounded source representation against the exact model (issue 14, item 2).

On HPOBench (7 sources x ``--source-rows`` rows, leave one task out, as the ``transfer`` section of
``warmbo bench``), Envelope-BO with the pooled methods' default cap (256 rows shared among the
sources) against ``max_prior=1000`` (every row: the exact eq.-17 model while it still fits), medians
over targets x seeds of the normalised regret after 1, 5, 10, 20, 30 evaluations and of the
evaluations to the top 1%, and seconds per ask.

    python bench/transfer_bounded.py [--seeds 2]

Results: bench/results/transfer_bounded.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

import warmbo as wb
from warmbo.benchmarks.transfer import CHECKPOINTS, _prior, _Suite

ARMS = {"bounded (256 rows)": {}, "exact (every row)": {"max_prior": 1000}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--source-rows", type=int, default=100)
    parser.add_argument("--T", type=int, default=30)
    parser.add_argument("--out", default="bench/results/transfer_bounded.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    suite = _Suite("hpobench")
    results = {"seeds": args.seeds, "source_rows": args.source_rows, "T": args.T,
               "load_average_start": os.getloadavg(), "arms": {}}  # fmt: skip
    for arm, kwargs in ARMS.items():
        regrets, hits, seconds = [], [], []
        for task in suite.tasks:
            for seed in range(args.seeds):
                f = suite.objective(task, seed)
                top, bottom = suite.truth_range(f)
                prior = _prior(f, suite.sources(task, seed, args.source_rows))
                opt = wb.Optimizer(
                    f.space, maximize=True, seed=seed, prior=prior, transfer="envelope", **kwargs
                )
                truths = []
                for _ in range(args.T):
                    t0 = time.perf_counter()
                    p = opt.ask()
                    seconds.append(time.perf_counter() - t0)
                    opt.tell(p, f(p))
                    truths.append(f.truth(p))
                r = (top - np.maximum.accumulate(truths)) / (top - bottom)
                regrets.append(r)
                hit = np.flatnonzero(r <= 0.01)
                hits.append(int(hit[0]) + 1 if hit.size else args.T + 1)
        R = np.array(regrets)
        results["arms"][arm] = {
            "regret_median": {str(c): float(np.median(R[:, c - 1])) for c in CHECKPOINTS if c <= args.T},
            "evals_to_top1pct_median": float(np.median(hits)),
            "ask_seconds_median": float(np.median(seconds)),
            "ask_seconds_worst": float(np.max(seconds)),
        }
        row = "  ".join(f"@{c} {v:.4f}" for c, v in results["arms"][arm]["regret_median"].items())
        print(
            f"{arm:20s} {row}  top1% {np.median(hits):.1f}  ask median {np.median(seconds):.2f} s", flush=True
        )
    results["load_average_end"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
