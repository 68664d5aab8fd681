"""The warm design on continuous spaces: the sources' best configurations against the maxima of the
source models near them (issue 14, item 1; :func:`warmbo.transfer.warm_design.source_model_maxima`).

Synthetic continuous meta-data, so that the target's regret at any point is known: a task is a
standard test function shifted in the encoded unit cube, ``f_s(u) = f(clip(u + delta_s))`` with
``delta_s ~ N(0, shift^2 I)``, and rescaled (``a_s f_s + b_s``, ``a_s ~ U[0.5, 2]``); the sources are
S such tasks with ``n`` uniformly random evaluations each, the target one more task. Both designs
(``warm_design`` with the default rule and size, then the same design moved to its source models'
maxima) are scored by the target's simple regret after their first 1, 2 and 3 points, for
``--seeds`` draws of tasks and samples per (problem, shift). Paired by draw: lower / higher counts
and the two-sided sign test after 1 and after 3 points.

    python bench/warm_design_model_maxima.py [--seeds 20] [--out bench/results/warm_design_model_maxima.json]

``--budget B`` runs the whole optimizer instead (``Optimizer(space, prior=sources)``, ``transfer``
``"auto"``, B evaluations of the target) with and without the source-model maximum in its warm
design, and reports the regret after 1, 2, 3, 5, 10 (up to B) evaluations the same way:

    python bench/warm_design_model_maxima.py --budget 10 --seeds 10 \
        --out bench/results/warm_design_model_maxima_run.json
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from warmbo.benchmarks._common import sign_test, write_results
from warmbo.benchmarks.quality import problem
from warmbo.transfer.warm_design import source_model_maxima, warm_design

SETTINGS = [  # (problem, shift, sources, rows per source)
    ("branin", 0.02, 5, 30),
    ("branin", 0.1, 5, 30),
    ("hartmann3", 0.02, 5, 50),
    ("hartmann3", 0.1, 5, 50),
    ("hartmann6", 0.02, 10, 100),
    ("hartmann6", 0.1, 10, 100),
    ("levy-4", 0.02, 5, 60),
    ("styblinski_tang-8", 0.02, 10, 100),
]


def task(fn, rng, shift):
    delta = rng.normal(0.0, shift, size=fn.dim)
    a, b = rng.uniform(0.5, 2.0), rng.normal()
    lo, hi = fn.lower, fn.upper

    def f(U):
        U = np.clip(np.atleast_2d(U) + delta, 0.0, 1.0)
        return a * np.asarray(fn(lo + U * (hi - lo)), dtype=np.float64) + b

    return f, a, b


def draw(name: str, shift: float, n_sources: int, rows: int, seed: int):
    """One draw of a setting: ``(dim, X, y, labels, target, floor)``, the sources' rows (y in the
    maximisation convention), the target and its minimum."""
    fn = problem(name)
    rng = np.random.default_rng([seed, int(shift * 1000), fn.dim])
    X, y, labels = [], [], []
    for s in range(n_sources):
        f, _, _ = task(fn, rng, shift)
        U = rng.random((rows, fn.dim))
        X.append(U)
        y.append(-f(U))  # maximisation convention
        labels += [f"s{s}"] * rows
    target, a, b = task(fn, rng, shift)
    # the target's minimum: a f* + b where u* - delta lies in the cube; clipping otherwise moves it,
    # and the best of a dense sample is the floor
    floor = min(float(target(rng.random((20_000, fn.dim))).min()), a * fn.optimum_value + b)
    return fn.dim, np.vstack(X), np.concatenate(y), labels, target, floor


def regrets(target, points, floor):
    """Best-so-far regret of the target at ``points``, in order."""
    return np.minimum.accumulate(target(points)) - floor


def run(X, y, labels, target, dim, budget, seed, moved: bool) -> np.ndarray:
    """Best-so-far target values of ``budget`` evaluations of the default transfer optimizer (its
    warm design with or without the source-model maximum)."""
    import warmbo as wb
    import warmbo.optimizer as optimizer_module

    space = wb.Space.box([(0.0, 1.0)] * dim)
    prior = wb.TaskData.from_numpy(X, -y, space, task=np.asarray(labels))  # minimised values
    saved = optimizer_module.source_model_maxima
    if not moved:
        optimizer_module.source_model_maxima = lambda design, *a, **k: design
    try:
        values = evaluate(wb.Optimizer(space, prior=prior, seed=seed), target, budget)
    finally:
        optimizer_module.source_model_maxima = saved
    return np.minimum.accumulate(values)


def evaluate(opt, target, budget: int) -> list[float]:
    """``budget`` ask/tell rounds of ``opt`` on ``target`` (a function of unit-cube points); the
    values in order."""
    values = []
    for _ in range(budget):
        p = opt.ask()
        value = float(target(np.array([[p[n] for n in opt.space.names]]))[0])
        opt.tell(p, value)
        values.append(value)
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--out", default="bench/results/warm_design_model_maxima.json")
    parser.add_argument("--budget", type=int, default=0, help="run the optimizer for this many evaluations")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    results = {
        "seeds": args.seeds,
        "budget": args.budget,
        "load_average_start": os.getloadavg(),
        "settings": [],
    }
    for name, shift, n_sources, rows in SETTINGS:
        fn = problem(name)
        plain, moved, seconds = [], [], []
        for seed in range(args.seeds):
            _, X, y, labels, target, floor = draw(name, shift, n_sources, rows, seed)
            if args.budget:
                for arm, out in (("plain", plain), ("moved", moved)):
                    start = time.process_time()
                    out.append(run(X, y, labels, target, fn.dim, args.budget, seed, arm == "moved") - floor)
                    seconds.append(time.process_time() - start)
                continue
            design = warm_design(X, y, labels, seed=seed)
            start = time.process_time()
            better = source_model_maxima(design, X, y, labels, seed=seed)
            seconds.append(time.process_time() - start)
            plain.append(regrets(target, design.points, floor))
            moved.append(regrets(target, better.points, floor))
        P, M = np.array(plain), np.array(moved)
        entry = {
            "problem": name,
            "dim": fn.dim,
            "shift": shift,
            "sources": n_sources,
            "rows": rows,
            "cpu_s_median": float(np.median(seconds)),
            "after": {},
        }
        columns = (
            range(P.shape[1])
            if not args.budget
            else [k - 1 for k in (1, 2, 3, 5, 10, 20) if k <= args.budget]
        )
        for k in columns:
            test = sign_test(M[:, k], P[:, k], rtol=0.0)  # exact ties
            entry["after"][str(k + 1)] = {
                "sources_best_median": float(np.median(P[:, k])),
                "model_maxima_median": float(np.median(M[:, k])),
                "lower": test["wins"],
                "higher": test["losses"],
                "p": test["p_value"],
            }
        results["settings"].append(entry)
        cells = "  ".join(
            f"after {k}: {v['sources_best_median']:.3g} -> {v['model_maxima_median']:.3g} "
            f"({v['lower']}/{v['higher']}, p={v['p']:.2g})"
            for k, v in entry["after"].items()
        )
        print(f"{name:18s} shift {shift:<5} {cells}  cpu {entry['cpu_s_median']:.2f}s", flush=True)
    write_results(args.out, results)


if __name__ == "__main__":
    main()
