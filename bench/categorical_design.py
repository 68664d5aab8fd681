"""The cold design's size on mixed spaces: a k-way categorical counted once (the default) or as
k - 1 (the default in session 42 only), on problems that played no part in choosing the rule.

Session 42 changed the rule from two made-up lab campaigns (bench/warm_categorical.py,
bench/categorical_campaign.py) and 5 seeds of two scikit-learn problems. This script measures it on
problems picked before running it (session 43), none of them a lab campaign:

* ``func2c`` and ``func3c``: CoCaBO's mixed test functions (Ru et al., ICML 2020;
  :mod:`warmbo.problems.mixed`), categoricals of 3 and 5 (and 4) choices and two floats; minimised,
  simple regret after 10, 25 and 50 evaluations, 20 seeds;
* ``sgd-digits`` and ``mlp-wine`` (bench/mixed_peers.py, 10 seeds instead of its 5) and three
  scikit-learn problems added to bench/mixed_peers.py for this run, ``svc-digits`` (SVC kernel, 4
  choices), ``rf-wine`` (two 3-way choices) and ``knn-digits`` (a 4-way metric); 3-fold accuracy,
  maximised, the error rate of the best after 15 and 30 evaluations.

Arms, alternating within each seed:

* ``parameters``: ``wb.Optimizer(space, seed=s, n_initial=default_n_initial(len(space.params)))``
  (every parameter counts one: the default, ``cold_design_size(space)``, before session 42 and
  again since session 43);
* ``choices``: the same with ``n_initial=default_n_initial(d)``, d counting a k-way categorical as
  k - 1 (session 42's default, undone by this measurement);
* ``optuna-gp`` / ``optuna-tpe`` (with ``--arms``): Optuna's samplers with their defaults, for
  reference (the GP needs ``torch``: ``make bench-peers``).

Reported per problem and checkpoint: each arm's median and its bootstrap 95% interval, and
``choices`` against ``parameters`` seed by seed (lower / higher / equal loss, two-sided sign test;
the loss is the regret, or the error rate, one minus the accuracy). BLAS held to one thread. Written to
``bench/results/categorical_design.json`` with the machine, the git commit and the load average.

    python bench/categorical_design.py                                  # ~25 min on one core
    python bench/categorical_design.py --problems func2c --seeds 5 --arms parameters,choices,optuna-gp
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import warmbo as wb  # noqa: E402
from warmbo.benchmarks._common import (  # noqa: E402
    listed,
    machine_info,
    optuna_start,
    sign_test,
    timed_run,
    write_results,
)
from warmbo.optimizer import default_n_initial  # noqa: E402
from warmbo.problems.mixed import MIXED_FUNCTIONS  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import mixed_peers  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "categorical_design.json"
ARMS = ("parameters", "choices", "optuna-gp", "optuna-tpe")
SKLEARN = ("sgd-digits", "mlp-wine", "svc-digits", "rf-wine", "knn-digits")
PROBLEMS = (*MIXED_FUNCTIONS, *SKLEARN)
SETTINGS = {  # budget, checkpoints, seeds
    "function": (50, (10, 25, 50), 20),
    "sklearn": (30, (15, 30), 10),
}


def _problem(name: str):
    """``(space, objective, to_loss, kind)``: ``to_loss`` maps a value to what is minimised."""
    if name in MIXED_FUNCTIONS:
        fn = MIXED_FUNCTIONS[name]()
        return fn.space, fn, (lambda v: v - fn.optimum_value), "function"
    return mixed_peers.warmbo_space(name), mixed_peers.make_objective(name), (lambda v: 1.0 - v), "sklearn"


def _optuna_params(space: wb.Space, trial) -> dict:
    out = {}
    for p in space.params:
        if isinstance(p, wb.Categorical):
            out[p.name] = trial.suggest_categorical(p.name, list(p.choices))
        elif isinstance(p, wb.Int):
            out[p.name] = trial.suggest_int(p.name, p.low, p.high, log=p.log)
        else:
            out[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
    return out


def design_size(arm: str, space: wb.Space) -> int:
    """The arm's cold design size: parameters counted, or a k-way categorical as k - 1."""
    if arm == "parameters":
        return default_n_initial(len(space.params))
    return default_n_initial(
        sum(max(1, len(p.choices) - 1) if isinstance(p, wb.Categorical) else 1 for p in space.params)
    )


def run(arm: str, name: str, seed: int, budget: int) -> dict:
    """One run: the loss of the best value after each evaluation, the optimizer's CPU seconds."""
    space, objective, to_loss, _ = _problem(name)
    if arm in ("parameters", "choices"):

        def start(timed) -> None:
            opt = wb.Optimizer(space, seed=seed, maximize=True, n_initial=design_size(arm, space))
            opt.run(timed, budget=budget, progress=False)

    else:
        start = optuna_start(arm, seed, budget, lambda trial: _optuna_params(space, trial))
    return {"seed": seed, **timed_run(start, objective, to_loss)}


def _interval(x: np.ndarray, rng: np.random.Generator) -> list[float]:
    boot = np.median(rng.choice(x, size=(2000, x.size)), axis=1)
    return [float(np.quantile(boot, 0.025)), float(np.quantile(boot, 0.975))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--arms", default="parameters,choices")
    parser.add_argument("--seeds", type=int, default=None, help="default: 20 for functions, 10 for sklearn")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    problems, arms = (
        listed(parser, args.problems, PROBLEMS, "problem"),
        listed(parser, args.arms, ARMS, "arm"),
    )
    warnings.simplefilter("ignore")
    if any(a.startswith("optuna") for a in arms):
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
    out = {
        "what": __doc__.splitlines()[0],
        "command": "python bench/categorical_design.py " + " ".join(sys.argv[1:]),
        "machine": machine_info(),
        "load_average_start": os.getloadavg(),
        "results": {},
    }
    rng = np.random.default_rng(0)
    for name in problems:
        space, _, _, kind = _problem(name)
        budget, checkpoints, seeds = SETTINGS[kind]
        seeds = args.seeds or seeds
        runs: dict[str, list[dict]] = {a: [] for a in arms}
        for seed in range(seeds):
            for arm in arms:
                runs[arm].append(run(arm, name, seed, budget))
            print(
                f"{name} seed {seed}: " + ", ".join(f"{a} {runs[a][-1]['loss'][-1]:.4g}" for a in arms),
                flush=True,
            )
        entry: dict = {
            "kind": kind,
            "budget": budget,
            "design": {a: design_size(a, space) for a in ("parameters", "choices")},
            "arms": {},
        }
        for arm in arms:
            loss = np.array([r["loss"] for r in runs[arm]])
            entry["arms"][arm] = {
                "median": {c: float(np.median(loss[:, c - 1])) for c in checkpoints},
                "interval": {c: _interval(loss[:, c - 1], rng) for c in checkpoints},
                "median_optimizer_cpu_s": float(np.median([r["optimizer_cpu_s"] for r in runs[arm]])),
                "runs": runs[arm],
            }
        if {"parameters", "choices"} <= set(arms):
            new = np.array([r["loss"] for r in runs["choices"]])
            old = np.array([r["loss"] for r in runs["parameters"]])
            entry["choices_vs_parameters"] = {c: sign_test(new[:, c - 1], old[:, c - 1]) for c in checkpoints}
        out["results"][name] = entry
        write_results(args.out, out)
    print()
    print(
        "| problem | design (parameters / choices) | checkpoint | "
        + " | ".join(arms)
        + " | choices vs parameters |"
    )
    print("|---|---|---|" + "---|" * len(arms) + "---|")
    for name, entry in out["results"].items():
        for c in entry["arms"][arms[0]]["median"]:
            cells = [f"{entry['arms'][a]['median'][c]:.4g}" for a in arms]
            st = entry.get("choices_vs_parameters", {}).get(c)
            test = f"{st['wins']}-{st['losses']}-{st['ties']} (p {st['p_value']:.2g})" if st else ""
            design = f"{entry['design']['parameters']} / {entry['design']['choices']}"
            print(f"| {name} | {design} | {c} | " + " | ".join(cells) + f" | {test} |")
    print(f"load average start {out['load_average_start']}, end {os.getloadavg()}")


if __name__ == "__main__":
    main()
