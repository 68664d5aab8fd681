"""Seconds per ask of every transfer method with many sources (issue 14, item 2), in one process.

A meta-data set of S sources x n rows (each source a quadratic bowl at its own random optimum in
d = 4, values in the user's units and minimised), the target a bowl near the middle. For each
``transfer=`` method a fresh Optimizer runs ``asks`` ask/tell rounds; the script records the seconds
of every ask (the first ask of a fresh object included: it computes the warm design), the median and
the worst, and the load average. A method whose ask exceeds ``--give-up`` seconds is stopped and
reported as such. It also measures RGPE's source-GP approximation (hyperparameters from 100 rows)
against exact per-source ML-II on a size where the exact one still fits: the RMS difference of the
source posteriors' means on random points, in units of the source's standard deviation.

    python bench/transfer_scale.py [--sources 50] [--rows 300] [--asks 10]

Results: bench/results/transfer_scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

from warmbo.benchmarks.transfer import TRANSFER, scale_meta_data, time_method
from warmbo.transfer.baselines import RGPE

METHODS = TRANSFER
D = 4


def meta_data(S: int, n: int, seed: int = 0):
    space, data, _ = scale_meta_data(S, n, D, seed)
    return space, data


def target(p) -> float:
    return sum((p[f"x{i}"] - 0.5) ** 2 for i in range(D))


def run_method(method: str, space, data, asks: int, give_up: float) -> dict:
    return time_method(method, space, data, target, asks, give_up)


def approximation(S: int = 5, n: int = 300, seed: int = 1) -> dict:
    _, data = meta_data(S, n, seed)
    X = data.X[:6]
    y = data.y[:6]
    fast = RGPE(source=data, seed=0).fit(X, y)
    t0 = time.perf_counter()
    exact = RGPE(source=data, seed=0, source_fit_points=None).fit(X, y)
    exact_s = time.perf_counter() - t0
    grid = np.random.default_rng(seed).random((500, D))
    rms = []
    for a, b in zip(fast.source_models_, exact.source_models_, strict=True):
        ma, mb = a.predict(grid)[0], b.predict(grid)[0]
        rms.append(float(np.sqrt(np.mean((ma - mb) ** 2)) / np.std(mb)))
    return {
        "sources": S,
        "rows": n,
        "rms_mean_difference_in_source_sd": [round(r, 4) for r in rms],
        "exact_fit_s": round(exact_s, 2),
        "weights_fast": [round(float(w), 3) for w in fast.weights_],
        "weights_exact": [round(float(w), 3) for w in exact.weights_],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=50)
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--asks", type=int, default=10)
    parser.add_argument("--give-up", type=float, default=60.0)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--out", default="bench/results/transfer_scale.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    space, data = meta_data(args.sources, args.rows)
    results = {
        "sources": args.sources,
        "rows_per_source": args.rows,
        "dim": D,
        "asks": args.asks,
        "max_prior": "default (1000: per source for auto/rgpe, in total for the pooled methods)",
        "load_average_start": os.getloadavg(),
        "methods": {},
    }
    for method in args.methods.split(","):
        results["methods"][method] = run_method(method, space, data, args.asks, args.give_up)
        r = results["methods"][method]
        print(
            f"{method:14s} first {r['first_ask_s']:.2f} s  median {r['median_ask_s']:.2f} s  worst "
            f"{r['worst_ask_s']:.2f} s  {r['stopped'] or ''}",
            flush=True,
        )
    results["rgpe_source_approximation"] = approximation()
    results["load_average_end"] = os.getloadavg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(json.dumps(results["rgpe_source_approximation"]))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
