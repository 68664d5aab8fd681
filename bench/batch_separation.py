"""Batches (``ask(q)``, parallel workers): a minimum prior-correlation distance from pending points.

The kriging believer alone let a batch collapse once the model is confident: ``ask(8)`` on a
Hartmann-6 study of 1000 trials returned eight points within 6e-4 of each other (the fantasy at noise
1e-6 is one more observation among hundreds as precise around the incumbent, and even a noise-free one
only lowers the variance within the data's spacing). ``warmbo.suggest`` now rejects points whose prior
correlation with a pending point exceeds ``BATCH_CORRELATION`` (:func:`warmbo.suggest.too_close`). The
arms differ only in that threshold; ``off`` is the behaviour before (no minimum distance).

Protocol (as ``bench/batch_fantasy.py``): the default Optimizer on the quality section's problems up
to d = 10, ``budget`` evaluations in rounds of ``ask(q)``, the whole round told before the next one.
Reports the simple regret after the budget (median; seeds paired, two-sided sign test of each arm
against ``off``) and the median (and the smallest) over model-chosen batches of their smallest
pairwise max-norm distance in the unit cube. ``--study N`` instead builds, per seed, a study of
N // 3 Sobol points and sequential asks up to N trials (a confident model), then runs ``--rounds``
rounds of ``ask(q)`` on a copy of it per arm.

    python bench/batch_separation.py --runs 30 --q 4                       # batch_separation.json
    python bench/batch_separation.py --q 8 --out bench/results/batch_separation_q8.json
    python bench/batch_separation.py --study 300 --q 8 --rounds 3 --runs 5 --arms off,0.999,0.99 \
        --problems branin,hartmann3,hartmann6,levy-6 --out bench/results/batch_separation_study.json
    python bench/batch_separation.py --runs 30 --arms off,0.9999,0.9995 \
        --problems branin,himmelblau,hartmann3 --out bench/results/batch_separation_radius.json

Results: bench/results/batch_separation*.json (the commands above; figures in ``warmbo/suggest.py``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import warnings

import numpy as np
from batch_fantasy import batch_rounds  # (bench/ is the script's folder: on sys.path)

import warmbo as wb
import warmbo.suggest as suggest_module
from warmbo.benchmarks._common import sign_test, write_results
from warmbo.benchmarks.quality import problem

PROBLEMS = ("branin", "himmelblau", "hartmann3", "rastrigin-4", "hartmann6", "levy-6", "ackley-10", "levy-10")
_default = str(suggest_module.BATCH_CORRELATION)
_too_close = suggest_module.too_close


def _arm(arm: str) -> None:
    """``off`` (no minimum distance), or a BATCH_CORRELATION."""
    if arm == "off":
        suggest_module.too_close = lambda *args, **kwargs: None
    else:
        suggest_module.too_close = _too_close
        suggest_module.BATCH_CORRELATION = float(arm)


def _study(fn, n: int, seed: int, path: str):
    """A confident model: n // 3 Sobol points told at once, then sequential asks up to n trials,
    stored at ``path``."""
    space = wb.Space.box([tuple(b) for b in fn.bounds])
    opt = wb.Optimizer(space, seed=seed, storage=path)
    for p in space.sample(n // 3, seed=seed + 100):
        opt.tell(p, float(fn(np.array([p[name] for name in space.names]))))
    while len(opt.history) < n:
        s = opt.ask()
        opt.tell(s, float(fn(np.array([s[name] for name in space.names]))))
    best = opt.best.value
    opt.study.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--q", type=int, default=4)
    parser.add_argument("--budget", type=int, default=48)
    parser.add_argument("--study", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arms", default=f"off,{_default}")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--out", default="bench/results/batch_separation.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    folder = tempfile.mkdtemp()
    arms = args.arms.split(",")
    results = {"runs": args.runs, "q": args.q, "budget": args.budget, "study": args.study}
    results.update(rounds=args.rounds, arms=arms, load_average_start=os.getloadavg(), problems={})
    for name in args.problems.split(","):
        fn = problem(name)
        regrets = {arm: [] for arm in arms}
        spreads = {arm: [] for arm in arms}
        for seed in range(args.runs):
            base = os.path.join(folder, f"{name}-{seed}.db")
            before = _study(fn, args.study, seed, base) if args.study else None
            for arm in arms if seed % 2 == 0 else arms[::-1]:
                _arm(arm)
                try:
                    if before is None:
                        space = wb.Space.box([tuple(b) for b in fn.bounds])
                        opt, budget = wb.Optimizer(space, seed=seed), args.budget
                    else:  # the same stored study for every arm, copied
                        shutil.copy(base, os.path.join(folder, "arm.db"))
                        opt = wb.Optimizer.load(os.path.join(folder, "arm.db"))
                        budget = args.study + args.q * args.rounds
                    best, spread = batch_rounds(opt, fn, args.q, budget)
                    opt.study.close()
                finally:
                    _arm(_default)
                if before is not None:
                    best = min(best, before)
                regrets[arm].append(best - fn.optimum_value)
                spreads[arm] += spread
        entry = {}
        for arm in arms:
            values = np.array(regrets[arm])
            entry[arm] = {
                "regret_median": float(np.median(values)),
                "regrets": [float(v) for v in values],
                "batch_min_distance_median": float(np.median(spreads[arm])) if spreads[arm] else None,
                "batch_min_distance_min": float(np.min(spreads[arm])) if spreads[arm] else None,
            }
            if arm != "off" and "off" in arms:
                entry[arm]["vs off"] = sign_test(values, np.array(regrets["off"]))
        results["problems"][name] = entry
        line = "  ".join(
            f"{arm}: regret {entry[arm]['regret_median']:.4g} "
            f"spread {entry[arm]['batch_min_distance_median']:.3g}"
            + (
                f" (lower {entry[arm]['vs off']['wins']} higher {entry[arm]['vs off']['losses']})"
                if "vs off" in entry[arm]
                else ""
            )
            for arm in arms
        )
        print(f"{name:12s} {line}", flush=True)
    write_results(args.out, results)


if __name__ == "__main__":
    main()
