"""ML-II against MAP hyperparameters (the dimension-scaled log-normal prior) in warmbo's Optimizer.

The choice of the default model's hyperparameter fit (issue 15, item 1) is made on this run, not on
the problems the prior was designed on: standard test functions from d = 2 to 10 (the problems were
picked before anything was tuned), 10 seeds, simple regret after 10, 25 and 50 evaluations, medians
with bootstrap 95% intervals. Both arms are the same Optimizer (EI, default design, default GP) and
differ only in ``GP(hyperprior=...)``; they alternate within each seed so machine load hits them alike.

    python bench/hyperprior.py [--runs 10] [--budget 50]

Results: bench/results/hyperprior.json and a table on stdout. The MAP arm is the prior read as a
density of the log lengthscales (``DIMENSION_SCALED_LOG``, mode ``exp(mu)``): the only reading before
session 9, and the one these results were measured with. BoTorch's reading (``DIMENSION_SCALED``, mode
``exp(mu - 3)``) is compared in ``bench/model_variants.py`` (arms ``map`` and ``map-mean``).
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

import warmbo as wb
from warmbo.benchmarks._common import regret_trace, write_results
from warmbo.models.defaults import default_model
from warmbo.models.hyperprior import DIMENSION_SCALED_LOG
from warmbo.problems import functions as F

PROBLEMS = {
    "branin": lambda: F.branin(),
    "himmelblau": lambda: F.himmelblau(),
    "levy13": lambda: F.levy13(),
    "rastrigin-4": lambda: F.rastrigin(4),
    "ackley-5": lambda: F.ackley(5),
    "hartmann6": lambda: F.hartmann6(),
    "styblinski_tang-8": lambda: F.styblinski_tang(8),
    "ackley-10": lambda: F.ackley(10),
    "styblinski_tang-10": lambda: F.styblinski_tang(10),
}
ARMS = {"ml2": None, "map": DIMENSION_SCALED_LOG}
CHECKPOINTS = (10, 25, 50)


def run(problem, hyperprior, budget: int, seed: int) -> tuple[np.ndarray, float]:
    space = wb.Space.box([tuple(b) for b in problem.bounds])
    model = default_model(space.dim, seed).clone(hyperprior=hyperprior)
    opt = wb.Optimizer(space, model=model, seed=seed)
    return regret_trace(opt, problem, budget)


def bootstrap_median(values, rng, n=4000) -> list[float]:
    values = np.asarray(values)
    meds = np.median(rng.choice(values, size=(n, values.size), replace=True), axis=1)
    return [float(np.quantile(meds, 0.025)), float(np.quantile(meds, 0.975))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--out", default="bench/results/hyperprior.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    checkpoints = [c for c in CHECKPOINTS if c <= args.budget]
    results = {
        "runs": args.runs,
        "budget": args.budget,
        "load_average_start": os.getloadavg(),
        "problems": {},
    }
    for name in args.problems.split(","):
        problem = PROBLEMS[name]()
        traces = {arm: [] for arm in ARMS}
        cpu = {arm: [] for arm in ARMS}
        for seed in range(args.runs):
            order = list(ARMS) if seed % 2 == 0 else list(reversed(ARMS))
            for arm in order:
                trace, seconds = run(problem, ARMS[arm], args.budget, seed)
                traces[arm].append(trace.tolist())
                cpu[arm].append(seconds)
        entry = {"dim": problem.dim, "arms": {}}
        for arm in ARMS:
            T = np.array(traces[arm])
            entry["arms"][arm] = {
                "cpu_s_median": float(np.median(cpu[arm])),
                "regret": {
                    str(c): {
                        "median": float(np.median(T[:, c - 1])),
                        "ci95": bootstrap_median(T[:, c - 1], rng),
                    }
                    for c in checkpoints
                },
                "final": T[:, -1].tolist(),
            }
        results["problems"][name] = entry
        cells = "  ".join(
            f"{arm} "
            + " / ".join(f"{entry['arms'][arm]['regret'][str(c)]['median']:.3g}" for c in checkpoints)
            for arm in ARMS
        )
        print(f"{name:20s} d={problem.dim:2d}  {cells}", flush=True)
    write_results(args.out, results)


if __name__ == "__main__":
    main()
