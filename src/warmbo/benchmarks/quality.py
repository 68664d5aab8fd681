"""Quality section: simple regret after a number of evaluations, over seeded runs.

Problems (:data:`PROBLEMS`, the full preset): twelve standard functions from d = 2 to d = 20, picked
before anything was tuned on them (issue 15): Branin, Himmelblau, Holder table (2-D), Hartmann-3,
Rastrigin-4, Hartmann-6, Levy-6, Styblinski-Tang-8, Ackley-10, Griewank-10, Levy-10 and
Rosenbrock-20 (heavy-tailed). The quick preset keeps the first version's four (:data:`CLASSIC`:
Branin, Hartmann-6, Himmelblau, Holder table). All are minimised on their standard domains,
noiselessly; the simple regret after b evaluations is
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

#: Twelve standard problems from d = 2 to d = 20 (issue 15), chosen before anything was tuned on them;
#: "name-d" is the d-dimensional member of a family (:func:`warmbo.problems.functions.get`).
PROBLEMS = (
    "branin",
    "himmelblau",
    "holder_table",
    "hartmann3",
    "rastrigin-4",
    "hartmann6",
    "levy-6",
    "styblinski_tang-8",
    "ackley-10",
    "griewank-10",
    "levy-10",
    "rosenbrock-20",
)
#: The four problems of the first version of the section (the quick preset keeps them).
CLASSIC = ("branin", "hartmann6", "himmelblau", "holder_table")


def problem(spec: str) -> F.TestFunction:
    """The test function of a spec: ``"branin"``, or ``"levy-6"`` for the 6-dimensional Levy."""
    base, _, dim = spec.rpartition("-")
    if base and dim.isdigit():
        return F.get(base, d=int(dim))
    return F.get(spec)


PRESETS = {
    "full": {"problems": PROBLEMS, "budgets": (10, 25, 50), "runs": 10},
    "quick": {"problems": CLASSIC, "budgets": (10, 25), "runs": 3},
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
        fn = problem(name)
        regrets = {m.name: [] for m in ctx.methods}
        seconds = {m.name: [] for m in ctx.methods}
        for seed in range(preset["runs"]):
            k = seed % len(ctx.methods)
            for m in ctx.methods[k:] + ctx.methods[:k]:
                ctx.log(f"quality: {name}, seed {seed}, {m.name}")
                start = time.perf_counter()
                values = m.minimize(fn, horizon, ctx.seed + seed)
                seconds[m.name].append(time.perf_counter() - start)
                if values.shape != (horizon,):
                    raise RuntimeError(f"{m.name} returned {values.shape[0]} values, expected {horizon}")
                best = np.minimum.accumulate(values)
                regrets[m.name].append([float(best[b - 1] - fn.optimum_value) for b in budgets])
        problems[name] = {
            "dim": fn.dim,
            "optimum_value": fn.optimum_value,
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
