"""A lab campaign on a mixed space with one categorical that matters (a user test, session 38): four
catalysts, yield in % from temperature, time (log scale) and equivalents, catalyst Pd best by 12
points, noise sd 1.5, clipped to [0, 100]. The default optimizer, cold, 30 experiments, seeds 0-19:
how often it ends on the best catalyst, and its best yield (the optimum is about 85%). Written to
``bench/results/categorical_campaign.json`` with the git commit, machine and load average.

Session 38 measured it before and after the acquisition search kept candidates on valid one-hot
points (commit 3da8f50; before: this script with ``PYTHONPATH`` on a checkout of b59919a): Pd found
on 13 of 20 seeds before, 17 after; mean best 80.9% before, 84.0% after (median 86.0% and 86.1%;
worst 66.2% and 65.7%).

Session 42 ran Optuna's samplers on the same campaign (``--method``; defaults, cold, same seeds and
noise): GPSampler found Pd on 20 of 20 seeds (mean best 86.4%, worst 84.6%), TPE on 16 (80.5%,
63.8%), warmbo 17 (84.0%, 65.7%): warmbo's cold optimizer is behind Optuna's GP on this problem, as
on bench/warm_categorical.py's (20 of 30 seeds against 28).
Then the cold design counted the 4-way categorical as 3 parameters (12 points instead of 8):
warmbo found Pd on 20 of 20 seeds (mean 86.3%, worst 84.8%). Session 43 undid that rule, worse on
seven problems outside these two (bench/categorical_design.py); the results file is this script's
run at the design of 8 again.
Session 51 gave each categorical one lengthscale (its one-hot columns tied): Pd found on 20 of 20
seeds (mean best 86.6%, worst 85.0%), against 17 before on the same run
(``bench/results/categorical_campaign_tied.json``, ``..._untied.json``; docs/optimizer.md).

    python bench/categorical_campaign.py            # 20 seeds, about a minute on 2 cores
    python bench/categorical_campaign.py --seeds 5
    python bench/categorical_campaign.py --method optuna-gp \
        --out bench/results/categorical_campaign_optuna_gp.json
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import warmbo as wb  # noqa: E402
from warmbo.benchmarks._common import machine_info  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "categorical_campaign.json"
SPACE = wb.Space(
    [
        wb.Float("temp_C", 40, 120),
        wb.Float("time_h", 0.5, 24, log=True),
        wb.Categorical("catalyst", ["Pd", "Pt", "Ni", "Cu"]),
        wb.Int("equiv", 1, 5),
    ]
)
OFFSET = {"Pd": 0.0, "Pt": -12.0, "Ni": -20.0, "Cu": -30.0}


def lab_yield(p: dict, rng: np.random.Generator | None) -> float:
    """The synthetic lab: optimum 85% at 88 C, 6 h, 3 equivalents with Pd."""
    y = (
        85.0
        - 10 * ((p["temp_C"] - 88) / 18) ** 2
        - 8 * math.log(p["time_h"] / 6) ** 2
        - 3 * (p["equiv"] - 3) ** 2
    )
    y += OFFSET[p["catalyst"]] + (0.0 if rng is None else rng.normal(0.0, 1.5))
    return max(0.0, min(100.0, y))


def run(seed: int, budget: int) -> dict:
    rng = np.random.default_rng(seed)
    opt = wb.Optimizer(SPACE, maximize=True, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.run(lambda p: lab_yield(p, rng), budget=budget, progress=False)
    later = [t.params["catalyst"] for t in opt.history[opt.n_initial :]]
    return {
        "seed": seed,
        "best": opt.best.value,
        "best_catalyst": opt.best.params["catalyst"],
        "after_design": {c: later.count(c) for c in OFFSET},
    }


def run_optuna(seed: int, budget: int, sampler: str) -> dict:
    """The same campaign with Optuna's GPSampler or TPESampler, defaults, cold (needs torch for the
    GP: ``make bench-peers``)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rng = np.random.default_rng(seed)
    kind = optuna.samplers.GPSampler if sampler == "optuna-gp" else optuna.samplers.TPESampler
    study = optuna.create_study(direction="maximize", sampler=kind(seed=seed))

    def objective(trial) -> float:
        p = {
            "temp_C": trial.suggest_float("temp_C", 40, 120),
            "time_h": trial.suggest_float("time_h", 0.5, 24, log=True),
            "catalyst": trial.suggest_categorical("catalyst", list(OFFSET)),
            "equiv": trial.suggest_int("equiv", 1, 5),
        }
        return lab_yield(p, rng)

    study.optimize(objective, n_trials=budget)
    return {"seed": seed, "best": study.best_value, "best_catalyst": study.best_params["catalyst"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--method", choices=["warmbo", "optuna-gp", "optuna-tpe"], default="warmbo")
    args = parser.parse_args()
    before = os.getloadavg()
    runs = [
        run(seed, args.budget) if args.method == "warmbo" else run_optuna(seed, args.budget, args.method)
        for seed in range(args.seeds)
    ]
    best = [r["best"] for r in runs]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    summary = {
        "found_pd": sum(r["best_catalyst"] == "Pd" for r in runs),
        "mean_best": statistics.mean(best),
        "median_best": statistics.median(best),
        "worst_best": min(best),
    }
    out = {
        "what": __doc__.splitlines()[0],
        "command": f"python bench/categorical_campaign.py --seeds {args.seeds} --budget {args.budget} "
        f"--method {args.method}",
        "git": commit,
        "machine": machine_info(),
        "load_average_before": before,
        "load_average_after": os.getloadavg(),
        "summary": summary,
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
