"""The size of the cold initial design: ``max(3, 2 d)`` Sobol points against smaller or capped ones.

The same Optimizer (default GP, EI) on the quality section's twelve problems (d = 2 to 20, chosen
before anything was tuned), 10 seeds, simple regret after 10, 25 and 50 evaluations (median with
bootstrap 95% interval); the arms differ only in ``n_initial`` and alternate within each seed.

    python bench/initial_design.py [--runs 10] [--budget 50] [--problems branin,levy-10]

Results: bench/results/initial_design.json and a table on stdout. Every arm after the first is
also compared with the first seed by seed (lower / higher / equal, two-sided sign test). Session
15's check of the cap at 20 (the default since), on the suite and seven problems of d = 12 to 20
outside it, and after 100 evaluations on four of them:

    python bench/initial_design.py --arms "2d,2d capped at 20" --problems branin,himmelblau,\
holder_table,hartmann3,rastrigin-4,hartmann6,levy-6,styblinski_tang-8,ackley-10,griewank-10,\
levy-10,rosenbrock-20,rastrigin-12,levy-12,ackley-14,styblinski_tang-16,ackley-20,griewank-20,\
levy-20 --out bench/results/initial_design_cap.json
    python bench/initial_design.py --arms "2d,2d capped at 20" --budget 100 \
--problems levy-20,griewank-20,styblinski_tang-16,rosenbrock-20 \
--out bench/results/initial_design_cap_100.json

Session 28's check of smaller designs under the default model of then (the suite, then 12 problems
outside it; docs/optimizer.md, "Smaller designs again"):

    python bench/initial_design.py --arms "2d capped at 20,d+1 capped at 10,3" \
--out bench/results/initial_design_s28_suite.json
    python bench/initial_design.py --arms "2d capped at 20,d+1 capped at 10,3" --problems levy13,\
eggholder,ackley-5,rosenbrock-4,styblinski_tang-5,griewank-6,rastrigin-12,levy-12,ackley-14,\
styblinski_tang-16,griewank-20,levy-20 --out bench/results/initial_design_s28_held_out.json

Session 39's check of larger designs in one and two dimensions (a cold SVC search trapped at a
range's edge; bench/svc_design.py; docs/optimizer.md, "Larger designs in one and two dimensions"):

    python bench/initial_design.py --runs 20 --arms "2d capped at 20,2d capped at 20 min 5,\
2d capped at 20 min 6,2d capped at 20 min 8" --problems branin,himmelblau,holder_table,levy13,\
eggholder,easom,ackley-2,levy-2,rastrigin-2,griewank-2,styblinski_tang-2,rosenbrock-2,ackley-1,\
levy-1,rastrigin-1,griewank-1,styblinski_tang-1 --out bench/results/initial_design_s39_small.json
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

import warmbo as wb
from warmbo.benchmarks._common import regret_trace, sign_test, write_results
from warmbo.benchmarks.quality import PROBLEMS, problem

ARMS = {
    "2d": lambda d: max(3, 2 * d),
    "d+1": lambda d: max(3, d + 1),
    "d+1 capped at 10": lambda d: min(max(3, d + 1), 10),
    "2d capped at 10": lambda d: min(max(3, 2 * d), 10),
    "2d capped at 20": lambda d: min(max(3, 2 * d), 20),  # the default since session 15
    "3": lambda d: 3,
    # session 39: larger designs in one and two dimensions only (a cold SVC search trapped at a range's edge)
    "2d capped at 20 min 5": lambda d: min(max(5, 2 * d), 20),
    "2d capped at 20 min 6": lambda d: min(max(6, 2 * d), 20),
    "2d capped at 20 min 8": lambda d: min(max(8, 2 * d), 20),
}
CHECKPOINTS = (10, 25, 50, 100)


def run(fn, n_initial: int, budget: int, seed: int) -> tuple[np.ndarray, float]:
    space = wb.Space.box([tuple(b) for b in fn.bounds])
    opt = wb.Optimizer(space, seed=seed, n_initial=n_initial)
    return regret_trace(opt, fn, budget)


def bootstrap_median(values, rng, n=4000) -> list[float]:
    values = np.asarray(values)
    meds = np.median(rng.choice(values, size=(n, values.size), replace=True), axis=1)
    return [float(np.quantile(meds, 0.025)), float(np.quantile(meds, 0.975))]


def paired(values, baseline) -> dict:
    """Seeds where ``values`` is lower / higher / equal than ``baseline`` (exactly), and the
    two-sided sign test's p-value over the unequal ones (:func:`warmbo.benchmarks._common.sign_test`
    with no tolerance, under this script's result keys)."""
    test = sign_test(values, baseline, rtol=0.0)
    return {"lower": test["wins"], "higher": test["losses"], "equal": test["ties"], "p": test["p_value"]}


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
                        "per_seed": T[:, c - 1].tolist(),
                    }
                    for c in checkpoints
                },
            }
            if arm != arms[0]:  # paired by seed against the first arm: lower / higher / equal, sign test
                first = np.array(traces[arms[0]])
                entry["arms"][arm]["against_first"] = {
                    str(c): paired(T[:, c - 1], first[:, c - 1]) for c in checkpoints
                }
        results["problems"][name] = entry
        cells = "  ".join(
            f"{arm}({sizes[arm]}) "
            + " / ".join(f"{entry['arms'][arm]['regret'][str(c)]['median']:.3g}" for c in checkpoints)
            + (
                " [lower/higher after {}: {lower}/{higher}, p={p:.2g}]".format(
                    checkpoints[-1], **entry["arms"][arm]["against_first"][str(checkpoints[-1])]
                )
                if "against_first" in entry["arms"][arm]
                else ""
            )
            for arm in arms
        )
        print(f"{name:20s} d={fn.dim:2d}  {cells}", flush=True)
    write_results(args.out, results)


if __name__ == "__main__":
    main()
