"""A warm start on a lab campaign whose categorical matters (the chemist user test, session 41):
does the earlier study's catalyst lock the new one in, and how do the cold optimizers do?

The lab: yield (%) of a coupling from temperature (60-110 C in steps of 5), time (1-12 h), catalyst
(Pd, Ni, Cu) and catalyst loading (0.5-5 mol%, log scale),

    80 exp(-((T - T0) / 15)^2) exp(-((ln L - ln 2) / 0.8)^2) c(cat) (1 - exp(-t / 3)) + noise,

c = 1, 0.8, 0.5 for Pd, Ni, Cu, noise sd 1.5; the best yield, ~78.5% at T0, 12 h, 2 mol%, Pd, can
only be had with Pd (Ni's best is ~62.8%). The earlier study ran on T0 = 92 C (April's substrate),
the new one on T0 = 88 C. Per seed s:

* ``cold``: ``wb.Optimizer(space, maximize=True, seed=s)``, 20 experiments on the new substrate;
* ``warm``: the same, with ``prior=`` the earlier study (a cold warmbo study of 20 experiments on
  T0 = 92 C, seed 1000 + s, its own noise) and the default ``transfer="auto"``;
* ``warm-observed`` / ``warm-mean``: ``warm`` with ``acquisition=wb.EI(incumbent=...)`` (``warm``'s
  EI takes the best observation);
* ``warm-aligned`` / ``warm-aligned-m``: ``warm`` with bench/auto_variants.py's ``auto-aligned`` /
  ``auto-aligned-m`` (each source GP's mean mapped onto the study's scale; session 42, not kept);
* ``warm-repeats``: ``warm`` without the ensemble's rule against near-repeats of the study's own
  trials (bench/auto_variants.py's ``auto-repeats``; ``warm`` before session 46);
* ``warm-taf``: ``warm`` with ``acquisition=wb.TAF()``, the transfer acquisition function
  (bench/auto_variants.py's ``auto-taf``; session 47);
* ``warm-yj``: ``warm`` with ``output_transform="yeo-johnson"`` (the transfer model sees the study's
  values on the Yeo-Johnson scale, as a cold study's GP does; session 47);
* ``optuna-gp`` / ``optuna-tpe``: Optuna's GPSampler / TPESampler with their defaults, cold, 20
  trials (they need ``torch``: ``make bench-peers`` installs it).

Reported per arm: how many seeds reached a true (noise-free) yield above 70% (only Pd can), the
median, mean and worst best true yield, the median number of Pd experiments, the median number of
"near repeats" (an experiment with the same catalyst within 0.02 of an earlier one in the unit cube
of temperature, time and log loading) and the median CPU seconds of a run. Written to
``bench/results/warm_categorical.json`` with the git commit, machine and load average.

Session 51 gave each categorical one lengthscale (its one-hot columns tied): ``cold`` reached 70% on
26 of 30 seeds (worst 53.4%) against 20 (worst 27.0%) before on the same run
(``bench/results/warm_categorical_cold_tied.json``, ``..._untied.json``; docs/optimizer.md). The
``warm`` arms' transfer models keep one lengthscale per column; not rerun.

    python bench/warm_categorical.py                      # every arm, 30 seeds: ~6 min on one core
    python bench/warm_categorical.py --arms warm,warm-observed --seeds 10
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import warmbo as wb  # noqa: E402
from warmbo.benchmarks._common import git_commit, machine_info  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "warm_categorical.json"
ARMS = (
    "cold",
    "warm",
    "warm-observed",
    "warm-mean",
    "warm-aligned",
    "warm-aligned-m",
    "warm-repeats",
    "warm-apart-all",
    "warm-apart-ties",
    "warm-apart-stalled",
    "warm-apart-noise",
    "warm-taf",
    "warm-yj",
    "optuna-gp",
    "optuna-tpe",
)
SPACE = wb.Space(
    [
        wb.Float("temp_C", 60, 110, step=5),
        wb.Float("time_h", 1, 12),
        wb.Categorical("catalyst", ["Pd", "Ni", "Cu"]),
        wb.Float("loading_mol", 0.5, 5, log=True),
    ]
)
ACTIVITY = {"Pd": 1.0, "Ni": 0.8, "Cu": 0.5}
NOISE = 1.5
SOURCE_T0, TARGET_T0 = 92.0, 88.0


def lab_yield(p: dict, t0: float) -> float:
    """The noise-free yield (%) at settings ``p`` for a substrate whose best temperature is ``t0``."""
    return (
        80
        * math.exp(-(((p["temp_C"] - t0) / 15) ** 2))
        * math.exp(-(((math.log(p["loading_mol"]) - math.log(2)) / 0.8) ** 2))
        * ACTIVITY[p["catalyst"]]
        * (1 - math.exp(-p["time_h"] / 3))
    )


def near_repeats(params: list[dict], radius: float = 0.02) -> int:
    """Experiments with an earlier one of the same catalyst within ``radius`` in the unit cube of
    temperature, time and log loading."""
    unit = np.array(
        [
            [
                (p["temp_C"] - 60) / 50,
                (p["time_h"] - 1) / 11,
                (math.log(p["loading_mol"]) - math.log(0.5)) / math.log(10),
            ]
            for p in params
        ]
    )
    count = 0
    for i in range(1, len(params)):
        same = [j for j in range(i) if params[j]["catalyst"] == params[i]["catalyst"]]
        if same and np.min(np.linalg.norm(unit[same] - unit[i], axis=1)) < radius:
            count += 1
    return count


def _earlier_study(seed: int, budget: int):
    rng = np.random.default_rng(1000 + seed)
    source = wb.Optimizer(SPACE, maximize=True, seed=1000 + seed)
    source.run(lambda p: lab_yield(p, SOURCE_T0) + rng.normal(0.0, NOISE), budget=budget, progress=False)
    return source.history.to_dataframe()


def _warmbo(arm: str, seed: int, budget: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    kwargs: dict = {}
    if arm != "cold":
        kwargs["prior"] = [_earlier_study(seed, budget)]
    if arm == "warm-yj":
        kwargs["output_transform"] = "yeo-johnson"
    elif arm.startswith("warm-"):
        kwargs["acquisition"] = wb.EI(incumbent=arm[len("warm-") :])
    opt = wb.Optimizer(SPACE, maximize=True, seed=seed, **kwargs)
    opt.run(lambda p: lab_yield(p, TARGET_T0) + rng.normal(0.0, NOISE), budget=budget, progress=False)
    return [dict(t.params) for t in opt.history if t.state == "complete"]


def _optuna(arm: str, seed: int, budget: int) -> list[dict]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rng = np.random.default_rng(seed)
    sampler = (optuna.samplers.GPSampler if arm == "optuna-gp" else optuna.samplers.TPESampler)(seed=seed)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    tried: list[dict] = []

    def objective(trial) -> float:
        p = {
            "temp_C": trial.suggest_float("temp_C", 60, 110, step=5),
            "time_h": trial.suggest_float("time_h", 1, 12),
            "catalyst": trial.suggest_categorical("catalyst", ["Pd", "Ni", "Cu"]),
            "loading_mol": trial.suggest_float("loading_mol", 0.5, 5, log=True),
        }
        tried.append(p)
        return lab_yield(p, TARGET_T0) + rng.normal(0.0, NOISE)

    study.optimize(objective, n_trials=budget)
    return tried


def run(arm: str, seed: int, budget: int) -> dict:
    if arm.startswith(
        ("warm-aligned", "warm-repeats", "warm-apart-", "warm-taf")
    ):  # transfer="auto" patched: bench/auto_variants.py
        import auto_variants

        apply, undo = auto_variants._variant(arm.replace("warm", "auto"))
        apply()
        try:
            return run("warm", seed, budget)
        finally:
            undo()
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tried = _optuna(arm, seed, budget) if arm.startswith("optuna") else _warmbo(arm, seed, budget)
    cpu = time.process_time() - start
    true = [lab_yield(p, TARGET_T0) for p in tried]
    return {
        "seed": seed,
        "best_true": max(true),
        "pd": sum(p["catalyst"] == "Pd" for p in tried),
        "near_repeats": near_repeats(tried),
        "cpu_s": cpu,
        "tried": tried,
    }


def summarise(runs: list[dict]) -> dict:
    best = [r["best_true"] for r in runs]
    return {
        "seeds_above_70": sum(b > 70 for b in best),
        "median_best": statistics.median(best),
        "mean_best": statistics.mean(best),
        "worst_best": min(best),
        "median_pd": statistics.median(r["pd"] for r in runs),
        "median_near_repeats": statistics.median(r["near_repeats"] for r in runs),
        "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--budget", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    arms = args.arms.split(",")
    unknown = sorted(set(arms) - set(ARMS))
    if unknown:
        parser.error(f"unknown arm(s) {unknown}; choose from {ARMS}")
    before = os.getloadavg()
    results = {}
    for arm in arms:
        runs = [run(arm, seed, args.budget) for seed in range(args.seeds)]
        results[arm] = {"summary": summarise(runs), "runs": runs}
        print(arm, json.dumps({k: round(v, 2) for k, v in results[arm]["summary"].items()}), flush=True)
    out = {
        "what": __doc__.splitlines()[0],
        "command": f"python bench/warm_categorical.py --arms {args.arms} --seeds {args.seeds} "
        f"--budget {args.budget}",
        "git": git_commit(),
        "machine": machine_info(),
        "load_average_before": before,
        "load_average_after": os.getloadavg(),
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, separators=(",", ":")))  # every run's settings: kept compact


if __name__ == "__main__":
    main()
