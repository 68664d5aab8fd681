"""What capping the acquisition's local search loses, ask by ask (issue 15, item 7: "cut the
local-search evaluations").

Runs the default Optimizer on the quality section's problems (``--seeds`` seeds, 50 evaluations);
at every model ask the search runs once as the default (``maximize._MAXITER`` = 200 L-BFGS-B
iterations, the run continues from this one) and once per cap on the same acquisition and seed.
Prints, per cap, the ratio of the capped search's EI to the full search's over all asks (median,
5% and 1% quantiles, minimum, share below 0.9) and the median number of acquisition evaluations.
The regrets and CPU of capped runs are ``bench/cost_variants.py --arms default,maxiter-8,...``.

    python bench/search_cap.py [--caps 8,10,15] [--seeds 3] [--problems branin,hartmann6]
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

import warmbo.maximize  # noqa: F401  (the module, not the function warmbo exports under that name)
import warmbo.suggest  # noqa: F401
from warmbo.benchmarks.methods import Warmbo
from warmbo.benchmarks.quality import PROBLEMS, problem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--caps", default="8,10,15")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    maximize_module, suggest_module = sys.modules["warmbo.maximize"], sys.modules["warmbo.suggest"]
    caps = [int(c) for c in args.caps.split(",")]
    full_maxiter, original = maximize_module._MAXITER, maximize_module.maximize
    ratios: dict[int, list[float]] = {c: [] for c in caps}
    evaluations: dict[int, list[int]] = {c: [] for c in [*caps, full_maxiter]}

    def both(acq, space, seed=None, **kwargs):
        maximize_module._MAXITER = full_maxiter
        full = original(acq, space, seed=seed, **kwargs)
        evaluations[full_maxiter].append(full.n_evaluations)
        for cap in caps:
            maximize_module._MAXITER = cap
            capped = original(acq, space, seed=seed, **kwargs)
            ratios[cap].append(capped.value / full.value if full.value > 0 else 1.0)
            evaluations[cap].append(capped.n_evaluations)
        maximize_module._MAXITER = full_maxiter
        return full

    suggest_module.maximize = both
    try:
        for name in args.problems.split(","):
            for seed in range(args.seeds):
                Warmbo().minimize(problem(name), 50, seed)
    finally:
        suggest_module.maximize = original
    full_evals = np.median(evaluations[full_maxiter])
    for cap in caps:
        r = np.array(ratios[cap])
        print(
            f"maxiter {cap}: {r.size} asks; EI capped / full: median {np.median(r):.4f}, "
            f"5% {np.quantile(r, 0.05):.3f}, 1% {np.quantile(r, 0.01):.3f}, min {r.min():.3f}, "
            f"below 0.9 in {np.mean(r < 0.9):.1%}; acquisition evaluations median "
            f"{np.median(evaluations[cap]):.0f} (full search {full_evals:.0f})"
        )


if __name__ == "__main__":
    main()
