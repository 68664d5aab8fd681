"""Quality section: simple regret after a number of evaluations, over seeded runs.

Problems: Branin (2-D), Hartmann-6, and two of the 2-D test functions of 004's experiments
(Shilton et al.), Himmelblau and Holder table: the first two of 004's list with a distinct optimum
structure (four equal minima; four minima at the edges of a rugged landscape). All are minimised on
their standard domains, noiselessly; the simple regret after b evaluations is
``r_b = min_{s <= b} f(x_s) - f*`` with the known optimum ``f*``.

Every method runs its standard loop (:meth:`~warmbo.benchmarks.methods.Method.minimize`) for the
largest budget with seeds ``0..runs-1``; for a given (problem, seed) the methods run one after the
other, their order rotating with the seed. Each (problem, method, budget) reports the median, the
quartiles, min and max, the mean, and a 95% percentile-bootstrap interval of the median (4000
resamples, seeded). warmbo is "within the peer's 95% interval or better" when its median is at most
the upper end of the peer's interval.
"""

from __future__ import annotations

import time

import numpy as np

from ..problems import functions as F
from ._common import bootstrap_median_ci, summarize

__all__ = ["PRESETS", "PROBLEMS", "run", "targets"]

PROBLEMS = ("branin", "hartmann6", "himmelblau", "holder_table")

PRESETS = {
    "full": {"problems": PROBLEMS, "budgets": (10, 25, 50), "runs": 10},
    "quick": {"problems": PROBLEMS, "budgets": (10, 25), "runs": 3},
    "tiny": {"problems": ("branin",), "budgets": (6, 8), "runs": 2},
}


def run(ctx) -> dict:
    """Run the section for ``ctx.preset`` on ``ctx.methods`` (warmbo first, then the peers)."""
    preset = dict(PRESETS[ctx.preset])
    if ctx.runs is not None:
        preset["runs"] = ctx.runs
    budgets = tuple(preset["budgets"])
    horizon = max(budgets)
    problems = {}
    for name in preset["problems"]:
        problem = F.get(name)
        regrets = {m.name: [] for m in ctx.methods}
        seconds = {m.name: [] for m in ctx.methods}
        for seed in range(preset["runs"]):
            k = seed % len(ctx.methods)
            for m in ctx.methods[k:] + ctx.methods[:k]:
                ctx.log(f"quality: {name}, seed {seed}, {m.name}")
                start = time.perf_counter()
                values = m.minimize(problem, horizon, ctx.seed + seed)
                seconds[m.name].append(time.perf_counter() - start)
                if values.shape != (horizon,):
                    raise RuntimeError(f"{m.name} returned {values.shape[0]} values, expected {horizon}")
                best = np.minimum.accumulate(values)
                regrets[m.name].append([float(best[b - 1] - problem.optimum_value) for b in budgets])
        problems[name] = {
            "dim": problem.dim,
            "optimum_value": problem.optimum_value,
            "methods": {
                m: {
                    "run_time_s": summarize(seconds[m]),
                    "regret": _regret_stats(np.asarray(regrets[m]), budgets, ctx.seed),
                }
                for m in regrets
            },
        }
    return {
        "preset": ctx.preset,
        "settings": {
            "problems": list(preset["problems"]),
            "budgets": list(budgets),
            "runs": preset["runs"],
            "seeds": [ctx.seed + s for s in range(preset["runs"])],
            "regret": "simple regret min_{s<=b} f(x_s) - f*, noiseless, standard domains, minimised",
            "interval": "95% percentile bootstrap of the median, 4000 resamples",
        },
        "problems": problems,
    }


def _regret_stats(regrets: np.ndarray, budgets: tuple[int, ...], seed: int) -> dict:
    out = {}
    for j, b in enumerate(budgets):
        column = regrets[:, j]
        out[str(b)] = {
            "median": float(np.median(column)),
            "q25": float(np.quantile(column, 0.25)),
            "q75": float(np.quantile(column, 0.75)),
            "min": float(np.min(column)),
            "max": float(np.max(column)),
            "mean": float(np.mean(column)),
            "ci95_median": bootstrap_median_ci(column, seed=seed),
            "values": [float(v) for v in column],
        }
    return out


def targets(results: dict) -> list[dict]:
    """Issue 8's quality target at the largest budget: warmbo's median within every peer's 95% interval
    of the median, or better."""
    out = []
    budget = str(max(results["settings"]["budgets"]))
    for name, entry in results["problems"].items():
        methods = entry["methods"]
        mine = methods["warmbo"]["regret"][budget]["median"]
        for peer, stats in methods.items():
            if peer == "warmbo":
                continue
            low, high = stats["regret"][budget]["ci95_median"]
            out.append(
                {
                    "target": f"{name}, regret after {budget}: warmbo within {peer}'s 95% interval or better",
                    "measured": f"warmbo {mine:.3g} vs {peer} [{low:.3g}, {high:.3g}]",
                    "met": bool(mine <= high),
                }
            )
    return out
