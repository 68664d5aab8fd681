"""The size of the cold initial design: ``max(3, 2 d)`` Sobol points against smaller ones (issue 15).

The same Optimizer (default GP, EI) on the quality section's twelve problems (d = 2 to 20, chosen
before anything was tuned), 10 seeds, simple regret after 10, 25 and 50 evaluations (median with
bootstrap 95% interval); the arms differ only in ``n_initial`` and alternate within each seed.

    python bench/initial_design.py [--runs 10] [--budget 50] [--problems branin,levy-10]

Results: bench/results/initial_design.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings
from pathlib import Path

import numpy as np

import warmbo as wb
from warmbo.benchmarks._common import regret_trace
from warmbo.benchmarks.quality import PROBLEMS, problem

ARMS = {
    "2d": lambda d: max(3, 2 * d),
    "d+1": lambda d: max(3, d + 1),
    "d+1 capped at 10": lambda d: min(max(3, d + 1), 10),
}
CHECKPOINTS = (10, 25, 50)


def run(fn, n_initial: int, budget: int, seed: int) -> tuple[np.ndarray, float]:
    space = wb.Space.box([tuple(b) for b in fn.bounds])
    opt = wb.Optimizer(space, seed=seed, n_initial=n_initial)
    return regret_trace(opt, fn, budget)


def bootstrap_median(values, rng, n=4000) -> list[float]:
    values = np.asarray(values)
    meds = np.median(rng.choice(values, size=(n, values.size), replace=True), axis=1)
    return [float(np.quantile(meds, 0.025)), float(np.quantile(meds, 0.975))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--out", default="bench/results/initial_design.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    arms = args.arms.split(",")
    checkpoints = [c for c in CHECKPOINTS if c <= args.budget]
    results = {
        "runs": args.runs,
        "budget": args.budget,
        "load_average_start": os.getloadavg(),
        "problems": {},
    }
    for name in args.problems.split(","):
        fn = problem(name)
        sizes = {arm: ARMS[arm](fn.dim) for arm in arms}
        traces = {arm: [] for arm in arms}
        cpu = {arm: [] for arm in arms}
        for seed in range(args.runs):
            k = seed % len(arms)
            for arm in arms[k:] + arms[:k]:
                if arm != arms[0] and sizes[arm] == sizes[arms[0]]:
                    continue  # the same design as the first arm: the same run
                trace, seconds = run(fn, sizes[arm], args.budget, seed)
                traces[arm].append(trace.tolist())
                cpu[arm].append(seconds)
        for arm in arms:
            if not traces[arm]:
                traces[arm], cpu[arm] = traces[arms[0]], cpu[arms[0]]
        entry = {"dim": fn.dim, "arms": {}}
        for arm in arms:
            T = np.array(traces[arm])
            entry["arms"][arm] = {
                "n_initial": sizes[arm],
                "cpu_s_median": float(np.median(cpu[arm])),
                "regret": {
                    str(c): {
                        "median": float(np.median(T[:, c - 1])),
                        "ci95": bootstrap_median(T[:, c - 1], rng),
                    }
                    for c in checkpoints
                },
            }
        results["problems"][name] = entry
        cells = "  ".join(
            f"{arm}({sizes[arm]}) "
            + " / ".join(f"{entry['arms'][arm]['regret'][str(c)]['median']:.3g}" for c in checkpoints)
            for arm in arms
        )
        print(f"{name:20s} d={fn.dim:2d}  {cells}", flush=True)
    results["load_average_end"] = os.getloadavg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
