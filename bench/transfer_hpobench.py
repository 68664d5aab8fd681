"""Leave-one-task-out transfer on HPOBench's tabular MLP data (8 tasks, one shared grid of 30,000
configurations): a first measurement of issue 14's targets, in one process.

Each task in turn is the target (maximise validation accuracy, one seed's accuracy per
evaluation); the other 7 are sources, each a finished random search of ``--source-rows``
configurations (``warmbo.problems.hpobench.hpobench_sources``). Methods, through the public API:
``none`` (the default Optimizer: GP-EI with a Sobol-order design), ``avg-rank`` (model-free: the
configurations the sources saw, in order of their mean normalised regret over the sources,
``warmbo.transfer.warm_design.normalised_regrets``), and ``transfer=auto`` / ``rgpe`` / ``envelope``.
Reported: normalised regret of the best true (5-seed mean) accuracy so far,
``(max f - f_best) / (max f - min f)`` on the grid, after 1, 5, 10, 20, 30 evaluations (medians over
targets x seeds) and evaluations to reach the target's top 1% (of the grid's accuracy range;
``T + 1`` when never), with seconds per ask.

    python bench/transfer_hpobench.py [--seeds 2] [--T 30] [--methods none,avg-rank,auto]

Results: bench/results/transfer_hpobench.json.
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
from warmbo.problems.hpobench import HPOBENCH_TASKS, HPOBenchObjective, hpobench_sources
from warmbo.transfer.warm_design import normalised_regrets

CHECKPOINTS = (1, 5, 10, 20, 30)


def prior_data(f, sources) -> wb.TaskData:
    params, values, labels = [], [], []
    for s, (X, y) in enumerate(sources):
        params += f.space.decode(X)
        values += list(y)
        labels += [f"source{s}"] * len(y)
    return wb.TaskData.from_records(params, values, f.space, task=labels)


def run(
    method: str, task: str, seed: int, T: int, n_source: int, n_initial: int | None = None
) -> tuple[list[float], list[float]]:
    f = HPOBenchObjective(task, seed=seed)
    sources = hpobench_sources(task, seed=seed, n_source=n_source)
    truths, seconds = [], []
    if method == "avg-rank":
        pool = np.unique(np.vstack([X for X, _ in sources]), axis=0)
        order = np.argsort(normalised_regrets(sources, pool).mean(axis=0), kind="stable")[:T]
        for x in pool[order]:
            truths.append(f.truth(f.space.decode(x[None, :])[0]))
            seconds.append(0.0)
        return truths, seconds
    kwargs = {} if method == "none" else {"prior": prior_data(f, sources), "transfer": method}
    if n_initial is not None and method != "none":
        kwargs["n_initial"] = n_initial  # the warm design's size (default: design_size)
    opt = wb.Optimizer(f.space, maximize=True, seed=seed, **kwargs)
    for _ in range(T):
        t0 = time.perf_counter()
        p = opt.ask()
        seconds.append(time.perf_counter() - t0)
        opt.tell(p, f(p))
        truths.append(f.truth(p))
    return truths, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--T", type=int, default=30)
    parser.add_argument("--source-rows", type=int, default=100)
    parser.add_argument("--methods", default="none,avg-rank,auto,rgpe,envelope")
    parser.add_argument("--n-initial", type=int, default=None, help="warm design size of the transfer arms")
    parser.add_argument("--out", default="bench/results/transfer_hpobench.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    methods = args.methods.split(",")
    results = {"T": args.T, "seeds": args.seeds, "source_rows": args.source_rows, "n_initial": args.n_initial,
               "load_average_start": os.getloadavg(), "methods": {}}  # fmt: skip
    for method in methods:
        regrets, hits, seconds = [], [], []
        for task in HPOBENCH_TASKS:
            table = HPOBenchObjective(task).table
            top, bottom = float(np.max(table.truth)), float(np.min(table.truth))
            for seed in range(args.seeds):
                truths, secs = run(method, task, seed, args.T, args.source_rows, args.n_initial)
                best = np.maximum.accumulate(truths)
                regret = (top - best) / (top - bottom)
                regrets.append(regret.tolist())
                reached = np.flatnonzero(regret <= 0.01)
                hits.append(int(reached[0]) + 1 if reached.size else args.T + 1)
                seconds += secs
        R = np.array(regrets)
        entry = {
            "regret_median": {str(c): float(np.median(R[:, c - 1])) for c in CHECKPOINTS if c <= args.T},
            "evals_to_top1pct_median": float(np.median(hits)),
            "evals_to_top1pct": hits,
            "ask_seconds_median": float(np.median(seconds)),
            "ask_seconds_worst": float(np.max(seconds)),
            "final_regret_per_run": R[:, -1].tolist(),
        }
        results["methods"][method] = entry
        row = "  ".join(f"@{c} {v:.3g}" for c, v in entry["regret_median"].items())
        print(
            f"{method:9s} {row}  top1% in {entry['evals_to_top1pct_median']:.0f}  "
            f"ask median {entry['ask_seconds_median']:.2f} s worst {entry['ask_seconds_worst']:.2f} s",
            flush=True,
        )
    results["load_average_end"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
