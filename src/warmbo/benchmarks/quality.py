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

With every peer the full preset takes about an hour on 2 cores (57 min at 0fa9719), so the
section keeps each finished (problem, seed) in ``ctx.checkpoint`` and a rerun with the same settings
(preset, problems, budgets, runs, methods, seed) continues from there. The results name every git
commit whose runs they hold (``settings.git_commits``); a resumed run whose code changed in between
says so in the log.
"""

from __future__ import annotations

import time

import numpy as np

from ..problems import functions as F
from ._common import bootstrap_median_ci, git_commit, load_checkpoint, save_checkpoint, summarize

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
    key = {
        "preset": ctx.preset,
        "problems": list(preset["problems"]),
        "budgets": list(budgets),
        "runs": preset["runs"],
        "methods": [m.name for m in ctx.methods],
        "seed": ctx.seed,
    }
    done, commits = _resume(ctx, key)
    commit = git_commit()
    if commits and commit not in commits:
        ctx.log(f"quality: resuming runs of git {', '.join(map(str, commits))} at git {commit}")
    problems = {}
    for name in preset["problems"]:
        fn = problem(name)
        finished = done.setdefault(name, {})
        for seed in range(preset["runs"]):
            if str(seed) in finished:
                continue
            k = seed % len(ctx.methods)
            runs = {}
            for m in ctx.methods[k:] + ctx.methods[:k]:
                ctx.log(f"quality: {name}, seed {seed}, {m.name}")
                start = time.perf_counter()
                values = m.minimize(fn, horizon, ctx.seed + seed)
                elapsed = time.perf_counter() - start
                if values.shape != (horizon,):
                    raise RuntimeError(f"{m.name} returned {values.shape[0]} values, expected {horizon}")
                best = np.minimum.accumulate(values)
                runs[m.name] = {
                    "regret": [float(best[b - 1] - fn.optimum_value) for b in budgets],
                    "s": elapsed,
                }
            finished[str(seed)] = runs
            commits = list(dict.fromkeys([*commits, commit]))
            save_checkpoint(ctx.checkpoint, key, done, commits)
        regrets = {
            m.name: [finished[str(s)][m.name]["regret"] for s in range(preset["runs"])] for m in ctx.methods
        }
        seconds = {
            m.name: [finished[str(s)][m.name]["s"] for s in range(preset["runs"])] for m in ctx.methods
        }
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
            "git_commits": commits or [commit],
        },
        "problems": problems,
    }


def _resume(ctx, key: dict) -> tuple[dict, list]:
    """The finished (problem, seed) runs in ``ctx.checkpoint`` if written with the same settings."""
    done, commits = load_checkpoint(ctx.checkpoint, key, "quality", ctx.log)
    if done:
        count = sum(len(v) for v in done.values())
        ctx.log(f"quality: resuming from {ctx.checkpoint} ({count} finished (problem, seed) runs)")
    return done, commits


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


#: issue 15's per-run cost targets: how many times less time a warmbo run must take than a peer's
#: (every method runs on one thread, so a run's wall time is its CPU time)
COST_TARGETS = {"optuna-gp": 3.0, "botorch-logei": 10.0, "botorch-ucb": 10.0}


def targets(results: dict) -> list[dict]:
    """Issue 15's quality target: after 25 and after 50 evaluations (every budget of the run from 25
    on; the largest one in a smaller preset), warmbo's median within every peer's 95% interval of
    the median, or better; and its per-run cost targets (:data:`COST_TARGETS`: the median time of a
    peer's run of the largest budget over warmbo's, per problem)."""
    out = []
    for name, entry in results["problems"].items():
        methods = entry["methods"]
        mine = methods["warmbo"].get("run_time_s", {}).get("median", 0.0)
        for peer, factor in COST_TARGETS.items():
            if peer not in methods or "run_time_s" not in methods[peer] or not mine > 0:
                continue
            ratio = methods[peer]["run_time_s"]["median"] / mine
            out.append(
                {
                    "target": f"{name}, time per run: >= {factor:g}x less than {peer}",
                    "measured": f"{ratio:.2f}x (warmbo {mine:.3f} s, {peer} "
                    f"{methods[peer]['run_time_s']['median']:.2f} s)",
                    "met": bool(ratio >= factor),
                }
            )
    budgets = sorted(int(b) for b in results["settings"]["budgets"])
    checked = [b for b in budgets if b >= 25] or budgets[-1:]
    for name, entry in results["problems"].items():
        methods = entry["methods"]
        for budget in map(str, checked):
            mine = methods["warmbo"]["regret"][budget]["median"]
            for peer, stats in methods.items():
                if peer == "warmbo":
                    continue
                low, high = stats["regret"][budget]["ci95_median"]
                target = f"{name}, regret after {budget}: warmbo within {peer}'s 95% interval or better"
                out.append(
                    {
                        "target": target,
                        "measured": f"warmbo {mine:.3g} vs {peer} [{low:.3g}, {high:.3g}]",
                        "met": bool(mine <= high),
                    }
                )
    return out
