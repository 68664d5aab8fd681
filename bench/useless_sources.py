"""Does ``transfer="auto"`` stay as good as starting cold when its sources say nothing, or mislead?

Session 32: with one uninformative source (every earlier value equal) on docs/transfer.md's example,
``auto`` stopped at a boundary in 7 of 8 seeds (regret 0.04) where the cold optimizer reached 1e-6;
the ensemble's target GP was plain ML-II, its lengthscale of the second parameter at its bound. This
script measures that on four standard problems, for three kinds of useless source (one source task
of ``--rows`` rows at Sobol points of the space): ``constant`` (every value 1.0), ``noise`` (values
uniform on the target's range, independent of the point) and ``negated`` (the target's own values
negated: its best points are the target's worst). Arms: ``cold`` (no prior), ``auto`` (as shipped at
the time of the run), and bench/auto_variants.py's ``auto-old`` (before session 32: the ensemble's
target GP plain ML-II, no cold fallback), ``auto-nofallback``, ``auto-map-all`` and (session 33)
``auto-noprobe`` (``auto`` without the probe, the cold design's first point after the warm design
and 3 model asks). The first stored
run (git f0fe357) had the arms ``auto`` (= ``auto-old``) and ``auto-map`` (= ``auto-nofallback``).
Reported per problem and source: the median and the mean final simple regret over
the seeds, and in how many seeds the arm ends more than 10x (and more than 1e-3) behind the cold
run of the same seed.

    python bench/useless_sources.py [--seeds 20] [--budget 30] [--rows 50] [--arms cold,auto,auto-noprobe]
        [--n-sources K] [--sources negated] [--problems hartmann3,branin]

``--n-sources K`` gives K source tasks of the kind, each on its own Sobol points (session 35: a user
test found five negated sources on Hartmann-3 far worse than one).

Results: bench/results/useless_sources.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import warmbo as wb
from warmbo.benchmarks._common import git_commit
from warmbo.benchmarks.quality import problem

sys.path.insert(0, str(Path(__file__).parent))
import auto_variants  # noqa: E402 - the arms' patches

PROBLEMS = ("branin", "hartmann3", "hartmann6", "levy-6")
SOURCES = ("constant", "noise", "negated")


def _run(fn, space, budget: int, seed: int, prior) -> float:
    opt = wb.Optimizer(space, seed=seed) if prior is None else wb.Optimizer(space, seed=seed, prior=prior)
    best = np.inf
    for _ in range(budget):
        p = opt.ask()
        value = float(fn(np.array([p[n] for n in space.names])))
        opt.tell(p, value)
        best = min(best, value)
    return best - fn.optimum_value


def _sources(kind: str, fn, space, rows: int, seed: int, count: int):
    """One source of ``kind`` (the pair of :func:`_source`), or a list of ``count`` of them, each on
    its own points."""
    if count == 1:
        return _source(kind, fn, space, rows, seed)
    return [_source(kind, fn, space, rows, seed + 10_000 * k) for k in range(count)]


def _source(kind: str, fn, space, rows: int, seed: int):
    points = space.sample(rows, seed=1000 + seed)
    values = np.array([float(fn(np.array([p[n] for n in space.names]))) for p in points])
    if kind == "constant":
        y = np.ones(rows)
    elif kind == "noise":
        y = np.random.default_rng(2000 + seed).uniform(values.min(), values.max(), rows)
    else:
        y = -values
    return (points, y.tolist())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--arms", default="cold,auto,auto-noprobe")
    parser.add_argument("--n-sources", type=int, default=1)
    parser.add_argument("--sources", default=",".join(SOURCES))
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "useless_sources.json"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    arms = args.arms.split(",")
    started = time.time()
    out: dict = {
        "git_commit": git_commit(),
        "settings": vars(args),
        "load_before": os.getloadavg(),
        "problems": {},
    }
    for name in args.problems.split(","):
        fn = problem(name)
        space = wb.Space.box(fn.bounds)
        cold = [_run(fn, space, args.budget, s, None) for s in range(args.seeds)]
        entry: dict = {"cold": {"regret": cold}}
        for kind in args.sources.split(","):
            for arm in arms:
                if arm == "cold":
                    continue
                undo = None
                if arm != "auto":
                    apply, undo = auto_variants._variant(arm)
                    apply()
                try:
                    regret = [
                        _run(
                            fn, space, args.budget, s, _sources(kind, fn, space, args.rows, s, args.n_sources)
                        )
                        for s in range(args.seeds)
                    ]
                finally:
                    if undo is not None:
                        undo()
                behind = sum(r > 10 * c and r > 1e-3 for r, c in zip(regret, cold, strict=True))
                entry[f"{kind}/{arm}"] = {"regret": regret, "behind_cold": behind}
        out["problems"][name] = entry
        print(f"\n{name} (cold median {np.median(cold):.3g}, mean {np.mean(cold):.3g})")
        for key, value in entry.items():
            if key != "cold":
                median, mean = np.median(value["regret"]), np.mean(value["regret"])
                behind = value["behind_cold"]
                print(f"  {key:22s} median {median:9.3g}  mean {mean:9.3g}   >10x behind cold: {behind}")
    out["load_after"] = os.getloadavg()
    out["runtime_s"] = round(time.time() - started, 1)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"\n{args.out} ({out['runtime_s']:.0f} s)")


if __name__ == "__main__":
    main()
