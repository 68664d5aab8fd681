"""``transfer="auto"`` variants on continuous spaces with related sources: the whole optimizer, 30
evaluations, paired by draw (session 42).

The transfer benchmark's meta-data (HPOBench, SVM) are finite grids, where an evaluated candidate is
never proposed again; on a continuous space the ensemble's mean can send the search back to the
same point (bench/warm_categorical.py). The tasks here are bench/warm_design_model_maxima.py's:
a standard function shifted in the unit cube and rescaled (``a f(clip(u + delta)) + b``, ``a ~
U[0.5, 2]``), S sources of n uniformly random rows each, the target one more such task, for each of
its settings (problem, shift, S, n) and seeds 0..seeds-1. Every arm runs
``wb.Optimizer(space, prior=sources, seed=seed)`` for ``--budget`` evaluations with one of
bench/auto_variants.py's patches (``auto-inc-best`` is ``auto`` as shipped). Reported per setting:
the median best-so-far regret after 10 and after the budget for each arm, and, against the first
arm, how many draws end lower / higher; then the same counts over all settings with a two-sided
sign test.

    python bench/transfer_continuous.py [--arms auto-inc-best,auto-inc-observed] [--seeds 10] [--budget 30]

Results: bench/results/transfer_continuous.json (per draw: the regret trace and CPU seconds).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import auto_variants  # noqa: E402 - the arms' patches
import numpy as np  # noqa: E402
from scipy.stats import binomtest  # noqa: E402
from warm_design_model_maxima import SETTINGS, draw, evaluate  # noqa: E402

import warmbo as wb  # noqa: E402
from warmbo.benchmarks._common import git_commit, machine_info, write_results  # noqa: E402


def run(arm: str, dim: int, X, y, labels, target, floor: float, budget: int, seed: int) -> dict:
    space = wb.Space.box([(0.0, 1.0)] * dim)
    prior = wb.TaskData.from_numpy(X, -y, space, task=np.asarray(labels))  # minimised values
    apply, undo = auto_variants._variant(arm)
    apply()
    try:
        start = time.process_time()
        values = evaluate(wb.Optimizer(space, prior=prior, seed=seed), target, budget)
        cpu = time.process_time() - start
    finally:
        undo()
    return {"regret": (np.minimum.accumulate(values) - floor).tolist(), "cpu_s": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default="auto-inc-best,auto-inc-observed")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "transfer_continuous.json"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    arms = args.arms.split(",")
    unknown = sorted(set(arms) - set(auto_variants._VARIANTS))
    if unknown:
        parser.error(f"unknown arm(s) {unknown}; choose from {auto_variants._VARIANTS}")
    results: dict = {
        "command": f"python bench/transfer_continuous.py --arms {args.arms} --seeds {args.seeds} "
        f"--budget {args.budget}",
        "git_commit": git_commit(),
        "machine": machine_info(),
        "load_average_start": os.getloadavg(),
        "settings": {},
    }
    totals = {(arm, k): [0, 0] for arm in arms[1:] for k in (10, args.budget)}
    for name, shift, n_sources, rows in SETTINGS:
        key = f"{name}/shift {shift}"
        entry = {arm: [] for arm in arms}
        for seed in range(args.seeds):
            dim, X, y, labels, target, floor = draw(name, shift, n_sources, rows, seed)
            for arm in arms:
                entry[arm].append(run(arm, dim, X, y, labels, target, floor, args.budget, seed))
        results["settings"][key] = entry
        first = np.array([r["regret"] for r in entry[arms[0]]])
        cells = [f"{arms[0]} {np.median(first[:, 9]):.3g} / {np.median(first[:, -1]):.3g}"]
        for arm in arms[1:]:
            other = np.array([r["regret"] for r in entry[arm]])
            counts = []
            for k in (10, args.budget):
                lower = int(np.sum(other[:, k - 1] < first[:, k - 1] * (1 - 1e-9)))
                higher = int(np.sum(other[:, k - 1] > first[:, k - 1] * (1 + 1e-9)))
                totals[(arm, k)][0] += lower
                totals[(arm, k)][1] += higher
                counts.append(f"{lower}-{higher}")
            cells.append(
                f"{arm} {np.median(other[:, 9]):.3g} / {np.median(other[:, -1]):.3g} ({' '.join(counts)})"
            )
        print(f"{key:26s} " + " | ".join(cells), flush=True)
    results["against_first_arm"] = {}
    for (arm, k), (lower, higher) in totals.items():
        p = binomtest(lower, lower + higher).pvalue if lower + higher else 1.0
        results["against_first_arm"][f"{arm} after {k}"] = {"lower": lower, "higher": higher, "p": p}
        print(f"{arm} after {k}: {lower} lower, {higher} higher than {arms[0]} (sign test p = {p:.3f})")
    results["load_average_end"] = os.getloadavg()
    write_results(args.out, results)


if __name__ == "__main__":
    main()
