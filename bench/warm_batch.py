"""A batch asked before any result, with transfer sources: the sources' next configurations against
the cold design's points (session 31).

Until session 31 ``ask(k)`` on a study with ``prior=`` gave the warm design's 2-3 points and then the
cold design's points 4 to k (Sobol, or a seeded random order of a grid's candidates), as if there
were no sources; now the warm design goes on with the sources' next configurations up to the cold
design's size (``Optimizer._warm_points``). On the transfer benchmark's meta-data (leave one task
out: HPOBench's 8 MLP grids and the 25 SVM grids, 100 rows per source, seeds 0-4), each arm asks
one batch of k = the cold design's size (``default_n_initial(d)``) and of k = 2 x that before any
result, and the batch's best normalised regret on the target is recorded,
``(max f - f_best) / (max f - min f)``:

- ``new``: this code;
- ``old``: the same with the warm design not extended (points past ``n_initial`` as before);
- ``cold``: no sources (the cold design).

Only the design is timed out of the way (the transfer model's source GPs, which the design asks fit
ahead for the first model ask, are not fitted: they do not change the design's points).

    python bench/warm_batch.py [--seeds 5] [--out bench/results/warm_batch.json]
"""

from __future__ import annotations

import argparse
import json
import os
import warnings

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", default="bench/results/warm_batch.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from scipy.stats import binomtest

    import warmbo as wb
    import warmbo.optimizer as optimizer_module
    from warmbo.benchmarks._common import git_commit
    from warmbo.benchmarks.transfer import _prior, _Suite

    optimizer_module._PREPARE_SECONDS = 0.0  # (source GPs for the first model ask: not the design's)
    extended = optimizer_module.Optimizer._warm_points

    def not_extended(self, index, busy_X, before_results):
        return (
            extended(self, index, busy_X, False)
            if index >= self.n_initial
            else extended(self, index, busy_X, before_results)
        )

    results: dict = {"git_commit": git_commit(), "load_average_start": list(os.getloadavg()), "suites": {}}
    for name in ("hpobench", "svm"):
        suite = _Suite(name)
        rows = {}
        for task in suite.tasks:
            for seed in range(args.seeds):
                f = suite.objective(task, seed)
                top, bottom = suite.truth_range(f)
                prior = _prior(f, suite.sources(task, seed, 100))
                cold_size = optimizer_module.cold_design_size(f.space)
                for factor in (1, 2):
                    k = min(factor * cold_size, 20)
                    out = {}
                    for arm in ("new", "old", "cold"):
                        optimizer_module.Optimizer._warm_points = not_extended if arm == "old" else extended
                        kwargs = {} if arm == "cold" else {"prior": prior, "transfer": "auto"}
                        opt = wb.Optimizer(f.space, maximize=True, seed=seed, **kwargs)
                        truths = [f.truth(p) for p in opt.ask(k)]
                        out[arm] = (top - max(truths)) / (top - bottom)
                    optimizer_module.Optimizer._warm_points = extended
                    rows.setdefault(f"k = {factor} x cold design", []).append(
                        {"task": task, "seed": seed, "k": k, **out}
                    )
        summary = {}
        for key, runs in rows.items():
            new = np.array([r["new"] for r in runs])
            old = np.array([r["old"] for r in runs])
            cold = np.array([r["cold"] for r in runs])
            wins, losses = int(np.sum(new < old)), int(np.sum(new > old))
            summary[key] = {
                "runs": len(runs),
                "median_regret": {
                    "new": float(np.median(new)),
                    "old": float(np.median(old)),
                    "cold": float(np.median(cold)),
                },
                "mean_regret": {
                    "new": float(np.mean(new)),
                    "old": float(np.mean(old)),
                    "cold": float(np.mean(cold)),
                },
                "new_lower_than_old": wins,
                "new_higher_than_old": losses,
                "sign_test_p": float(binomtest(wins, wins + losses).pvalue) if wins + losses else None,
            }
        results["suites"][name] = {"summary": summary, "runs": rows}
        print(name, json.dumps(summary, indent=1))
    results["load_average_end"] = list(os.getloadavg())
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
