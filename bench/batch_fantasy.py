"""Batches (``ask(q)``, parallel workers): fantasies of pending points at the model's noise or noiseless.

The optimizer conditions its model on every pending point at the posterior mean (kriging believer)
so that a batch spreads out. With the fitted noise level on those fantasy rows, the latent variance
at a pending point only drops to about that noise, and EI right next to it can stay the largest in
the space: ``warmbo suggest -n 3`` returned three points 0.3% apart in a log-scaled learning rate (a
user walkthrough, session 17). The arms differ only in the noise of the fantasy rows (failed points'
constant liar keeps the model's noise in both):

- ``model noise``: the GP's fitted noise level (the behaviour before session 17,
  ``warmbo.suggest.FANTASY_NOISE = None``);
- ``noiseless``: 1e-6 on the model's standardised scale (a noise-free believer, as in Ginsbourger
  et al. 2010; adaptive jitter keeps the factor usable; ``FANTASY_NOISE``'s default since).

Protocol: the default Optimizer on the quality section's problems up to d = 10 (chosen before
anything was tuned), ``budget`` evaluations in rounds of ``ask(q)``; the whole round is told before the
next one. Reports the simple regret after the budget (median, bootstrap 95% interval; seeds paired,
two-sided sign test) and, for each model-chosen batch, its smallest pairwise max-norm distance in
the unit cube (median over batches).

    python bench/batch_fantasy.py [--runs 10] [--q 4] [--budget 48] [--problems branin,hartmann6]

Results: bench/results/batch_fantasy.json (10 seeds) and batch_fantasy_30.json (``--runs 30``), made
at git 7f55245 with the two behaviours patched in by hand (the same arms as here).
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

import warmbo as wb
import warmbo.suggest as suggest_module
from warmbo.benchmarks._common import bootstrap_median_ci, sign_test, write_results
from warmbo.benchmarks.quality import problem

PROBLEMS = ("branin", "himmelblau", "hartmann3", "rastrigin-4", "hartmann6", "levy-6", "ackley-10", "levy-10")
ARMS = ("model noise", "noiseless")
_NOISELESS = 1e-6
_default = suggest_module.FANTASY_NOISE


def batch_rounds(opt, fn, q: int, budget: int) -> tuple[float, list[float]]:
    """``ask(q)`` rounds (the last one smaller) until the study holds ``budget`` trials: the best value
    found, and the smallest max-norm distance within each model batch (encoded unit cube).
    ``bench/batch_separation.py`` uses it too."""
    space = opt.space
    best, spreads = np.inf, []
    while len(opt.history) < budget:
        model_batch = len(opt.history) >= opt.n_initial
        batch = opt.ask(min(q, budget - len(opt.history)))
        U = space.encode([dict(s) for s in batch])
        if model_batch and len(batch) > 1:
            gaps = np.max(np.abs(U[:, None, :] - U[None, :, :]), axis=2)
            spreads.append(float(np.min(gaps[np.triu_indices(len(batch), 1)])))
        for s in batch:
            value = float(fn(np.array([s[name] for name in space.names])))
            best = min(best, value)
            opt.tell(s, value)
    return best, spreads


def run(fn, arm: str, q: int, budget: int, seed: int) -> tuple[float, list[float]]:
    suggest_module.FANTASY_NOISE = _NOISELESS if arm == "noiseless" else None
    try:
        opt = wb.Optimizer(wb.Space.box([tuple(b) for b in fn.bounds]), seed=seed)
        best, spreads = batch_rounds(opt, fn, q, budget)
        return best - fn.optimum_value, spreads
    finally:
        suggest_module.FANTASY_NOISE = _default


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--q", type=int, default=4)
    parser.add_argument("--budget", type=int, default=48)
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--out", default="bench/results/batch_fantasy.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    results = {
        "runs": args.runs,
        "q": args.q,
        "budget": args.budget,
        "noiseless": _NOISELESS,
        "load_average_start": os.getloadavg(),
        "problems": {},
    }
    all_regrets = {arm: [] for arm in ARMS}
    for name in args.problems.split(","):
        fn = problem(name)
        regrets = {arm: [] for arm in ARMS}
        spreads = {arm: [] for arm in ARMS}
        for seed in range(args.runs):
            for arm in ARMS if seed % 2 == 0 else ARMS[::-1]:
                regret, spread = run(fn, arm, args.q, args.budget, seed)
                regrets[arm].append(regret)
                spreads[arm] += spread
        entry = {}
        for arm in ARMS:
            values = np.array(regrets[arm])
            all_regrets[arm] += list(values)
            entry[arm] = {
                "regret_median": float(np.median(values)),
                "regret_ci95": bootstrap_median_ci(values),
                "regrets": [float(v) for v in values],
                "batch_min_distance_median": float(np.median(spreads[arm])) if spreads[arm] else None,
            }
        paired = sign_test(np.array(regrets["noiseless"]), np.array(regrets["model noise"]))
        entry["noiseless vs model noise"] = paired
        results["problems"][name] = entry
        print(
            f"{name:18s} regret model noise {entry['model noise']['regret_median']:.4g} "
            f"noiseless {entry['noiseless']['regret_median']:.4g}  batch spread "
            f"{entry['model noise']['batch_min_distance_median']:.3g} / "
            f"{entry['noiseless']['batch_min_distance_median']:.3g}  "
            f"(noiseless lower {entry['noiseless vs model noise']['wins']}, higher "
            f"{entry['noiseless vs model noise']['losses']})",
            flush=True,
        )
    results["overall noiseless vs model noise"] = sign_test(
        np.array(all_regrets["noiseless"]), np.array(all_regrets["model noise"])
    )
    print("overall", results["overall noiseless vs model noise"])
    write_results(args.out, results)


if __name__ == "__main__":
    main()
