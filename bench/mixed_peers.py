"""warmbo's default Optimizer against Optuna's TPESampler and GPSampler on mixed-space tuning of real
scikit-learn models: log-scaled floats, integers and categoricals together.

Each problem is a 3-fold cross-validated accuracy (maximised) of a cheap scikit-learn model on one of
sklearn's bundled data sets, with a deterministic model (``random_state=0``) and deterministic folds,
so the same configuration always scores the same:

* ``sgd-digits``: ``SGDClassifier`` on standardised digits; ``alpha`` (log float), ``loss`` (4
  choices), ``penalty`` (3 choices), ``l1_ratio`` (float), ``max_iter`` (log int 5-200).
* ``hgb-cancer``: ``HistGradientBoostingClassifier`` on breast cancer; ``learning_rate`` (log
  float), ``max_depth`` (int 2-10), ``max_leaf_nodes`` (log int 4-64), ``min_samples_leaf`` (log
  int 1-60), ``max_iter`` (int 10-100), ``l2_regularization`` (log float).
* ``mlp-wine``: ``MLPClassifier`` on standardised wine; ``hidden_layer_sizes`` (log int 4-128),
  ``alpha`` and ``learning_rate_init`` (log floats), ``activation`` (3 choices), ``solver`` (3
  choices).

Three more, added in session 43 for bench/categorical_design.py (a 3- or 4-way categorical that
decides the score; run here with ``--problems``, not by default):

* ``svc-digits``: ``SVC`` on standardised digits; ``C`` and ``gamma`` (log floats), ``kernel`` (4
  choices), ``degree`` (int 2-5, used by the polynomial kernel only).
* ``rf-wine``: ``RandomForestClassifier`` on wine; ``n_estimators`` (log int 10-50), ``criterion``
  (3 choices, two of which, entropy and log loss, are the same criterion), ``max_features`` (sqrt,
  log2 or all), ``max_depth`` (int 1-20), ``min_samples_leaf`` (log int 1-20).
* ``knn-digits``: ``KNeighborsClassifier`` on standardised digits; ``n_neighbors`` (log int 1-64),
  ``weights`` (2 choices), ``metric`` (4 choices).

Every method gets the same budget and seeds 0..n-1 with its defaults: ``wb.Optimizer(space,
seed=seed, maximize=True)``, ``optuna.samplers.TPESampler(seed=seed)``,
``optuna.samplers.GPSampler(seed=seed)``. For each run the script records the best CV accuracy
(after the whole budget and after half of it), how many of its evaluations repeated an earlier
configuration exactly (all integers and categoricals equal, floats equal to 6 significant digits),
how many distinct integer-and-categorical configurations it tried, how often each categorical value
was tried, every configuration and its score, and CPU seconds: the whole run and the optimizer's
share (the run minus the objective's own CPU). BLAS/OpenMP are held to one thread, so CPU seconds
are comparable across methods. The results (per-seed values, per-method medians, the machine's load
average before and after) go to ``bench/results/mixed_peers.json``.

    python bench/mixed_peers.py                       # 3 problems x 3 methods x 5 seeds, budget 30
    python bench/mixed_peers.py --seeds 2 --problems mlp-wine --methods warmbo
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import warmbo as wb  # noqa: E402
from warmbo.benchmarks._common import machine_info  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "mixed_peers.json"


def _data(name: str, scale: bool):
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler

    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    if scale:
        X = StandardScaler().fit_transform(X)
    return X, y


def _cv(model, X, y) -> float:
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    folds = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    return float(cross_val_score(model, X, y, cv=folds).mean())


# A problem: its parameters as (name, kind, spec, log) and a function of a parameter dict.
PROBLEMS = {
    "sgd-digits": [
        ("alpha", "float", (1e-7, 1e-1), True),
        ("loss", "cat", ["hinge", "log_loss", "modified_huber", "perceptron"], False),
        ("penalty", "cat", ["l2", "l1", "elasticnet"], False),
        ("l1_ratio", "float", (0.0, 1.0), False),
        ("max_iter", "int", (5, 200), True),
    ],
    "hgb-cancer": [
        ("learning_rate", "float", (1e-3, 1.0), True),
        ("max_depth", "int", (2, 10), False),
        ("max_leaf_nodes", "int", (4, 64), True),
        ("min_samples_leaf", "int", (1, 60), True),
        ("max_iter", "int", (10, 100), False),
        ("l2_regularization", "float", (1e-6, 10.0), True),
    ],
    "mlp-wine": [
        ("hidden_layer_sizes", "int", (4, 128), True),
        ("alpha", "float", (1e-6, 1.0), True),
        ("learning_rate_init", "float", (1e-4, 1e-1), True),
        ("activation", "cat", ["relu", "tanh", "logistic"], False),
        ("solver", "cat", ["adam", "sgd", "lbfgs"], False),
    ],
    "svc-digits": [
        ("C", "float", (1e-2, 1e3), True),
        ("gamma", "float", (1e-5, 1.0), True),
        ("kernel", "cat", ["linear", "poly", "rbf", "sigmoid"], False),
        ("degree", "int", (2, 5), False),
    ],
    "rf-wine": [
        ("n_estimators", "int", (10, 50), True),
        ("criterion", "cat", ["gini", "entropy", "log_loss"], False),
        ("max_features", "cat", ["sqrt", "log2", "all"], False),
        ("max_depth", "int", (1, 20), False),
        ("min_samples_leaf", "int", (1, 20), True),
    ],
    "knn-digits": [
        ("n_neighbors", "int", (1, 64), True),
        ("weights", "cat", ["uniform", "distance"], False),
        ("metric", "cat", ["euclidean", "manhattan", "chebyshev", "cosine"], False),
    ],
}
#: What ``python bench/mixed_peers.py`` runs without ``--problems`` (the session-40 set).
DEFAULT_PROBLEMS = ("sgd-digits", "hgb-cancer", "mlp-wine")


def make_objective(problem: str):
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import SGDClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.svm import SVC

    if problem == "sgd-digits":
        X, y = _data("digits", scale=True)

        def objective(p):
            return _cv(SGDClassifier(**p, tol=None, random_state=0), X, y)

    elif problem == "hgb-cancer":
        X, y = _data("breast_cancer", scale=False)

        def objective(p):
            return _cv(HistGradientBoostingClassifier(**p, early_stopping=False, random_state=0), X, y)

    elif problem == "mlp-wine":
        X, y = _data("wine", scale=True)

        def objective(p):
            p = dict(p, hidden_layer_sizes=(p["hidden_layer_sizes"],))
            return _cv(MLPClassifier(**p, max_iter=200, random_state=0), X, y)

    elif problem == "svc-digits":
        X, y = _data("digits", scale=True)

        def objective(p):
            return _cv(SVC(**p), X, y)

    elif problem == "rf-wine":
        X, y = _data("wine", scale=False)

        def objective(p):
            p = dict(p, max_features=None if p["max_features"] == "all" else p["max_features"])
            return _cv(RandomForestClassifier(**p, random_state=0), X, y)

    elif problem == "knn-digits":
        X, y = _data("digits", scale=True)

        def objective(p):
            return _cv(KNeighborsClassifier(**p), X, y)

    else:
        raise ValueError(f"unknown problem {problem!r}; choose from {sorted(PROBLEMS)}")
    return objective


def warmbo_space(problem: str) -> wb.Space:
    params = []
    for name, kind, spec, log in PROBLEMS[problem]:
        if kind == "float":
            params.append(wb.Float(name, *spec, log=log))
        elif kind == "int":
            params.append(wb.Int(name, *spec, log=log))
        else:
            params.append(wb.Categorical(name, spec))
    return wb.Space(params)


def optuna_params(problem: str, trial) -> dict:
    out = {}
    for name, kind, spec, log in PROBLEMS[problem]:
        if kind == "float":
            out[name] = trial.suggest_float(name, *spec, log=log)
        elif kind == "int":
            out[name] = trial.suggest_int(name, *spec, log=log)
        else:
            out[name] = trial.suggest_categorical(name, spec)
    return out


def _key(params: dict) -> tuple:
    return tuple(float(f"{v:.6g}") if isinstance(v, float) else v for v in params.values())


def run_one(method: str, problem: str, seed: int, budget: int) -> dict:
    objective = make_objective(problem)
    evaluated: list[dict] = []
    values: list[float] = []
    objective_cpu = [0.0]

    def timed(params: dict) -> float:
        started = time.process_time()
        value = objective(params)
        objective_cpu[0] += time.process_time() - started
        evaluated.append(dict(params))
        values.append(value)
        return value

    started = time.process_time()
    wall = time.perf_counter()
    if method == "warmbo":
        opt = wb.Optimizer(warmbo_space(problem), seed=seed, maximize=True)
        best = opt.run(timed, budget=budget, progress=False).value
    else:
        import optuna

        sampler = {"optuna-tpe": optuna.samplers.TPESampler, "optuna-gp": optuna.samplers.GPSampler}[method]
        study = optuna.create_study(direction="maximize", sampler=sampler(seed=seed))
        study.optimize(lambda trial: timed(optuna_params(problem, trial)), n_trials=budget)
        best = study.best_value
    cpu = time.process_time() - started
    keys = [_key(p) for p in evaluated]
    categories = {
        name: dict(Counter(str(p[name]) for p in evaluated))
        for name, kind, _, _ in PROBLEMS[problem]
        if kind == "cat"
    }
    return {
        "seed": seed,
        "best": best,
        "best_after_half": max(values[: budget // 2]),
        "values": values,
        "repeats": len(keys) - len(set(keys)),
        "distinct_discrete": len(
            {tuple(v for v in p.values() if not isinstance(v, float)) for p in evaluated}
        ),
        "categories": categories,
        "cpu_s": round(cpu, 3),
        "optimizer_cpu_s": round(cpu - objective_cpu[0], 3),
        "wall_s": round(time.perf_counter() - wall, 3),
        "evaluated": evaluated,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=list(DEFAULT_PROBLEMS), choices=list(PROBLEMS))
    parser.add_argument("--methods", nargs="+", default=["warmbo", "optuna-tpe", "optuna-gp"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import optuna
    import sklearn

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    load_before = os.getloadavg()
    commit = machine_info().get("git_commit") or "unknown"  # (the code measured: read before the runs)
    results: dict[str, dict] = {}
    for problem in args.problems:
        results[problem] = {}
        for method in args.methods:
            runs = []
            for seed in range(args.seeds):
                run = run_one(method, problem, seed, args.budget)
                runs.append(run)
                print(
                    f"{problem:11s} {method:11s} seed {seed}: best {run['best']:.4f}, "
                    f"repeats {run['repeats']}, cpu {run['cpu_s']:.1f} s "
                    f"(optimizer {run['optimizer_cpu_s']:.1f} s)",
                    flush=True,
                )
            results[problem][method] = {
                "median_best": statistics.median(r["best"] for r in runs),
                "median_best_after_half": statistics.median(r["best_after_half"] for r in runs),
                "median_repeats": statistics.median(r["repeats"] for r in runs),
                "median_distinct_discrete": statistics.median(r["distinct_discrete"] for r in runs),
                "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
                "median_optimizer_cpu_s": statistics.median(r["optimizer_cpu_s"] for r in runs),
                "runs": runs,
            }
    out = {
        "what": __doc__.splitlines()[0],
        "command": "python bench/mixed_peers.py "
        + " ".join([f"--seeds {args.seeds}", f"--budget {args.budget}"]),
        "git": commit,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "versions": {
            "warmbo": wb.__version__,
            "optuna": optuna.__version__,
            "sklearn": sklearn.__version__,
            "numpy": np.__version__,
        },
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print()
    print("| problem | " + " | ".join(args.methods) + " |")
    print("|---|" + "---|" * len(args.methods))
    for problem, by_method in results.items():
        cells = [
            f"{m['median_best']:.4f} (rep {m['median_repeats']:g}, {m['median_cpu_s']:.1f} s / opt "
            f"{m['median_optimizer_cpu_s']:.1f} s)"
            for m in by_method.values()
        ]
        print(f"| {problem} | " + " | ".join(cells) + " |")
    print(f"load average before {load_before}, after {os.getloadavg()}")


if __name__ == "__main__":
    main()
