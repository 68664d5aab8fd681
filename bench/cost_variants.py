"""Cheaper asks against the default, paired by seed (issue 15: per-run cost against Optuna's GPSampler).

Each variant changes one of the knobs that set the work of an ask, and runs the default Optimizer
(default GP, EI, default design) on the quality section's twelve problems, 10 seeds, 50 evaluations:
simple regret after 10, 25 and 50 evaluations (median), CPU seconds per run (median), and per problem
the paired comparison with the default after 50 evaluations (wins / losses / ties within 1e-6
relative, two-sided sign test). The arms rotate within each seed.

- ``cold-every-2``: the cold refit that accompanies a warm refit below 64 trials
  (``optimizer._COLD_REFIT_EVERY``) runs at every second ask instead of every ask (the default
  since session 27, so this arm is the default now);
- ``cold-every-1``: that cold refit at every ask (the default until session 27);
- ``maxiter-50`` (or any ``maxiter-K``): the acquisition's local search stops after 50 (K) L-BFGS-B
  iterations instead of 200 (``maximize._MAXITER``);
- ``starts-3``: 3 local searches instead of 5 (``maximize``'s ``n_starts``);
- ``cold-capped-10``: that cold refit stops after 10 likelihood evaluations
  (``optimizer._COLD_MAX_EVALUATIONS``); it wins only if it is already more likely than the warm fit.
- ``warm-tol-1e-5``: below 256 trials too, a warm-started refit stops at a relative change of 1e-5
  instead of the default model's 1e-6 (``optimizer._WARM_FIT_TOLERANCE``, used from 256 trials);
- ``cold-every-2+warm-tol-1e-5``: both.

    python bench/cost_variants.py [--runs 10] [--budget 50] [--arms default,cold-every-2] [--problems ...]

Results: bench/results/cost_variants.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import warnings
from contextlib import contextmanager

import numpy as np
from scipy.stats import binomtest

import warmbo as wb
from warmbo.benchmarks._common import regret_trace, sign_test, write_results
from warmbo.benchmarks.quality import PROBLEMS, problem

CHECKPOINTS = (10, 25, 50)
ARMS = (
    "default",
    "cold-every-2",
    "cold-every-1",
    "maxiter-50",
    "starts-3",
    "cold-capped-10",
    "warm-tol-1e-5",
    "cold-every-2+warm-tol-1e-5",
)


@contextmanager
def variant(arm: str):
    """Patch the knob ``arm`` changes, and restore it."""
    optimizer, maximize_mod, suggest_mod = (
        sys.modules[f"warmbo.{m}"] for m in ("optimizer", "maximize", "suggest")
    )
    saved = (
        optimizer._COLD_REFIT_EVERY,
        maximize_mod._MAXITER,
        suggest_mod.maximize,
        optimizer._COLD_MAX_EVALUATIONS,
        optimizer.Optimizer._warm_started,
    )
    try:
        if "warm-tol-1e-5" in arm:
            original = saved[4]

            def warm_started(self, model, n_complete):
                model, warm = original(self, model, n_complete)
                tolerance = getattr(model, "fit_tolerance", None)
                if warm and isinstance(tolerance, float) and tolerance < optimizer._WARM_FIT_TOLERANCE:
                    model = model.clone(fit_tolerance=optimizer._WARM_FIT_TOLERANCE)
                return model, warm

            optimizer.Optimizer._warm_started = warm_started
        if arm.startswith("cold-every-2"):
            optimizer._COLD_REFIT_EVERY = 2
        elif arm == "cold-every-1":
            optimizer._COLD_REFIT_EVERY = 1
        elif arm.startswith("maxiter-"):
            maximize_mod._MAXITER = int(arm.removeprefix("maxiter-"))
        elif arm == "cold-capped-10":
            optimizer._COLD_MAX_EVALUATIONS = 10
        elif arm == "starts-3":
            suggest_mod.maximize = functools.partial(saved[2], n_starts=3)
        elif arm not in ("default", "warm-tol-1e-5"):
            raise ValueError(f"unknown arm {arm!r}")
        yield
    finally:
        (
            optimizer._COLD_REFIT_EVERY,
            maximize_mod._MAXITER,
            suggest_mod.maximize,
            optimizer._COLD_MAX_EVALUATIONS,
            optimizer.Optimizer._warm_started,
        ) = saved


def run(fn, arm: str, budget: int, seed: int) -> tuple[np.ndarray, float]:
    space = wb.Space.box([tuple(b) for b in fn.bounds])
    with variant(arm):
        return regret_trace(wb.Optimizer(space, seed=seed), fn, budget)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--out", default="bench/results/cost_variants.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    arms = tuple(args.arms.split(","))
    if arms[0] != "default":
        arms = ("default", *[a for a in arms if a != "default"])
    checkpoints = [c for c in CHECKPOINTS if c <= args.budget]
    results = {
        "runs": args.runs,
        "budget": args.budget,
        "load_average_start": os.getloadavg(),
        "problems": {},
    }
    wins = {arm: [0, 0] for arm in arms[1:]}
    for name in args.problems.split(","):
        fn = problem(name)
        traces = {arm: [] for arm in arms}
        cpu = {arm: [] for arm in arms}
        for seed in range(args.runs):
            k = seed % len(arms)
            for arm in arms[k:] + arms[:k]:
                trace, seconds = run(fn, arm, args.budget, seed)
                traces[arm].append(trace.tolist())
                cpu[arm].append(seconds)
        entry = {"dim": fn.dim, "arms": {}}
        for arm in arms:
            T = np.array(traces[arm])
            entry["arms"][arm] = {
                "cpu_s_median": float(np.median(cpu[arm])),
                "regret_median": {str(c): float(np.median(T[:, c - 1])) for c in checkpoints},
                "final": T[:, -1].tolist(),
            }
        entry["paired_final"] = {
            arm: sign_test(np.array(traces[arm])[:, -1], np.array(traces["default"])[:, -1])
            for arm in arms[1:]
        }
        for arm, pf in entry["paired_final"].items():
            wins[arm][0] += pf["wins"]
            wins[arm][1] += pf["losses"]
        results["problems"][name] = entry
        cells = "  ".join(
            f"{arm} {entry['arms'][arm]['cpu_s_median']:.2f}s "
            + "/".join(f"{entry['arms'][arm]['regret_median'][str(c)]:.3g}" for c in checkpoints)
            for arm in arms
        )
        pairs = "  ".join(
            f"{arm} {pf['wins']}/{pf['losses']}/{pf['ties']}" for arm, pf in entry["paired_final"].items()
        )
        print(f"{name:18s} d={fn.dim:2d}  {cells}  {pairs}", flush=True)
    results["overall"] = {
        arm: {"wins": w, "losses": lo, "p_value": float(binomtest(w, w + lo).pvalue) if w + lo else 1.0}
        for arm, (w, lo) in wins.items()
    }
    print(json.dumps(results["overall"]))
    write_results(args.out, results)


if __name__ == "__main__":
    main()
