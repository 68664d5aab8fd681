"""Output transforms: the default scale against Yeo-Johnson and the automatic choice (issue 15, item 3).

The same Optimizer (default GP, EI, default design) on the quality section's twelve problems (d = 2
to 20, chosen before anything was tuned), 10 seeds, simple regret after 10, 25 and 50 evaluations
(median with bootstrap 95% interval), and per problem the paired comparison after 50 evaluations
(the arms share the seed and so the Sobol design): wins / losses / ties of Yeo-Johnson and of
``"auto"`` against the plain scale, ties within 1e-6 relative, with the two-sided sign test. The arms
differ only in ``Optimizer(output_transform=...)`` and rotate within each seed. For ``"auto"`` the
scale chosen at each ask is recorded (``choices``: one letter per ask, ``-`` before the first model).

    python bench/output_transform.py [--runs 10] [--budget 50] [--problems branin,levy-10]

Results: bench/results/output_transform.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

import warmbo as wb
from warmbo.benchmarks._common import regret_trace, sign_test, write_results
from warmbo.benchmarks.quality import PROBLEMS, problem

ARMS = ("none", "yeo-johnson", "auto")
CHECKPOINTS = (10, 25, 50)


def run(fn, transform: str, budget: int, seed: int) -> tuple[np.ndarray, float, str]:
    space = wb.Space.box([tuple(b) for b in fn.bounds])
    opt = wb.Optimizer(space, seed=seed, output_transform=transform)
    choices = []
    trace, seconds = regret_trace(opt, fn, budget, lambda: choices.append((opt._transform_choice or "-")[0]))
    return trace, seconds, "".join(choices)


def bootstrap_median(values, rng, n=4000) -> list[float]:
    values = np.asarray(values)
    meds = np.median(rng.choice(values, size=(n, values.size), replace=True), axis=1)
    return [float(np.quantile(meds, 0.025)), float(np.quantile(meds, 0.975))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--out", default="bench/results/output_transform.json")
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
        fn = problem(name)
        traces = {arm: [] for arm in ARMS}
        cpu = {arm: [] for arm in ARMS}
        choices = []
        for seed in range(args.runs):
            k = seed % len(ARMS)
            for arm in ARMS[k:] + ARMS[:k]:
                trace, seconds, chosen = run(fn, arm, args.budget, seed)
                traces[arm].append(trace.tolist())
                cpu[arm].append(seconds)
                if arm == "auto":
                    choices.append(chosen)
        entry = {"dim": fn.dim, "arms": {}}
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
        entry["paired_final"] = {
            arm: sign_test(np.array(traces[arm])[:, -1], np.array(traces["none"])[:, -1]) for arm in ARMS[1:]
        }
        entry["auto_choices"] = choices
        results["problems"][name] = entry
        cells = "  ".join(
            f"{arm} "
            + " / ".join(f"{entry['arms'][arm]['regret'][str(c)]['median']:.3g}" for c in checkpoints)
            for arm in ARMS
        )
        pairs = "  ".join(
            f"{arm} {pf['wins']}/{pf['losses']}/{pf['ties']} p={pf['p_value']:.2g}"
            for arm, pf in entry["paired_final"].items()
        )
        print(f"{name:20s} d={fn.dim:2d}  {cells}  {pairs}", flush=True)
    write_results(args.out, results)


if __name__ == "__main__":
    main()
