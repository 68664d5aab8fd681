"""``Optimizer.run`` against a hand ask/tell loop, and one BLAS thread against the library default
(the session-20 fix: ``run`` called the undecorated ``_ask_one``, so its acquisition search ran on
multi-threaded BLAS).

For each seed, a 50-evaluation Branin run three ways in the same process: ``run()``, an ask/tell
loop, and ``run()`` with ``WARMBO_BLAS_THREADS=0`` (the BLAS library's own threads, which is what
``run``'s search used before the fix). Prints the median wall time of each, their ratios, whether
``run`` and the loop suggested the same points, and the load average. On an idle machine the three
are close; under load the BLAS default is several times slower (session 20, load average 5 on 2
cores: 2.3-3.1 s against 0.34-0.62 s per run).

    python bench/run_blas.py --seeds 5
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import warmbo as wb
from warmbo.problems import functions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=50)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    f = functions.branin()
    space = wb.Space.box(f.bounds)

    def objective(p):
        return float(f(np.array([p[n] for n in space.names])))

    wb.Optimizer(space, seed=99).run(objective, budget=12, progress=False)  # imports, first calls
    times: dict[str, list[float]] = {"run": [], "ask/tell": [], "run, BLAS default": []}
    same = 0
    for seed in range(args.seeds):
        started = time.perf_counter()
        by_run = wb.Optimizer(space, seed=seed)
        by_run.run(objective, budget=args.budget, progress=False)
        times["run"].append(time.perf_counter() - started)
        started = time.perf_counter()
        by_hand = wb.Optimizer(space, seed=seed)
        for _ in range(args.budget):
            p = by_hand.ask()
            by_hand.tell(p, objective(p))
        times["ask/tell"].append(time.perf_counter() - started)
        same += [t.params for t in by_run.history] == [t.params for t in by_hand.history]
        os.environ["WARMBO_BLAS_THREADS"] = "0"
        try:
            started = time.perf_counter()
            wb.Optimizer(space, seed=seed).run(objective, budget=args.budget, progress=False)
            times["run, BLAS default"].append(time.perf_counter() - started)
        finally:
            del os.environ["WARMBO_BLAS_THREADS"]
    medians = {k: float(np.median(v)) for k, v in times.items()}
    for name, value in medians.items():
        print(f"{name}: median {value:.3f} s per {args.budget}-evaluation run ({args.seeds} seeds)")
    print(f"ask/tell / run: {medians['ask/tell'] / medians['run']:.2f}")
    print(f"BLAS default / run: {medians['run, BLAS default'] / medians['run']:.2f}")
    print(f"run and ask/tell suggested the same points in {same} of {args.seeds} seeds")
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
