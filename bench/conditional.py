"""Conditional parameters (``when=``) against the same parameters declared flat, and Optuna.

Session 43 found warmbo behind Optuna on ``svc-digits`` (bench/mixed_peers.py): its late asks went to
the linear kernel again and again, at new values of ``gamma`` and ``degree``, which a linear SVM
ignores but the GP, with one lengthscale per parameter across every kernel, took for unexplored
ground. With ``when=`` the model sees a linear SVM as a point in ``C`` alone. This script measures
that on problems chosen before running it (session 44), each with parameters that matter only for
some values of a categorical:

* ``jenatton``: Jenatton et al.'s tree-structured function (:mod:`warmbo.problems.conditional`),
  9 parameters of which at most 4 are active, minimised, regret after 10, 25 and 50 evaluations,
  20 seeds;
* ``svc-digits``: ``gamma`` when ``kernel`` is poly, rbf or sigmoid, ``degree`` when poly;
* ``sgd-digits``: ``l1_ratio`` when ``penalty`` is elasticnet;
* ``mlp-wine``: ``learning_rate_init`` when ``solver`` is adam or sgd (lbfgs ignores it);
* ``cash-digits``: the model and its own hyperparameters (logistic regression ``C``; random forest
  ``n_estimators`` and ``max_depth``; k-NN ``n_neighbors`` and ``weights``; RBF SVM ``C`` and
  ``gamma``), 3-fold accuracy on standardised digits;

the four scikit-learn problems (bench/mixed_peers.py's definitions) maximise 3-fold accuracy; the
loss is the error rate of the best after 15 and 30 evaluations, 10 seeds.

Arms, alternating within each seed, each with its defaults:

* ``conditional``: ``wb.Optimizer(space, seed=s)`` on the space with ``when=``;
* ``flat``: the same on the same parameters without ``when=`` (every parameter in every point; the
  objective reads the active ones only): warmbo before conditional parameters;
* ``optuna-tpe``: ``TPESampler(seed=s)`` asked define-by-run, a parameter only where it is active
  (TPE's own way with conditional spaces);
* ``optuna-gp``: ``GPSampler(seed=s)`` on the flat space (it models one fixed space; asked
  define-by-run it would sample the conditional parameters at random);
* ``active-design`` (with ``--arms``): ``conditional`` with the cold design sized by the most
  parameters active at one point instead of all of them (``cash-digits``: 6 points, not 16);
* ``warmbo-sampler`` (with ``--arms``): ``WarmboSampler(seed=s)`` asked define-by-run, as TPE is
  (session 45: it read the conditions from the trials; before, every branch's parameter came from
  its ``RandomSampler``);
* ``warmbo-sampler-warm`` (with ``--arms``, the ``cash-`` problems): the same with
  ``prior=[study]``, an Optuna study of 30 random trials (seed 1000 + s) of the same choice of
  models on another data set (:data:`WARM_SOURCE`): a warm start of a conditional search space;
* ``warmbo-sampler-warm10`` (with ``--arms``): ``warmbo-sampler-warm`` with 10 random startup
  trials kept (``n_startup_trials=10``, as without a prior; the first is still the prior's best);
* ``conditional-warm`` (with ``--arms``, the ``cash-`` problems): ``conditional`` with the same
  trials as ``prior=`` (an ``(X, y)`` pair, ``transfer="auto"``).

The first round raised that design question (16 of cash-digits' 30 evaluations are the cold
design's, for points of at most 3 parameters); its arm is measured on two problems held out for it,
``cash-cancer`` and ``cash-wine`` (the same choice of models on breast cancer and on wine).

Reported per problem and checkpoint: each arm's median and bootstrap 95% interval, and
``conditional`` against ``flat`` (``active-design`` against ``conditional``) seed by seed (lower /
higher / equal, two-sided sign test). BLAS held to one thread. Written to
``bench/results/conditional.json`` with the machine, git commit and load.

    python bench/conditional.py                       # ~40 min on one core
    python bench/conditional.py --problems cash-cancer,cash-wine --arms conditional,active-design \
        --out bench/results/conditional_design.json
    python bench/conditional.py --problems jenatton --seeds 5 --arms conditional,flat
    python bench/conditional.py --problems svc-digits,cash-digits,cash-cancer,cash-wine \
        --arms warmbo-sampler,conditional,optuna-tpe --out bench/results/conditional_sampler.json \
        --before bench/results/conditional_sampler_before.json

``conditional_sampler_before.json`` is the same command's ``warmbo-sampler`` arm at git b94920d (the
sampler before session 45, with this script's arm added), the baseline ``--before`` compares with.

Session 46's near-repeats (docs/transfer.md, "Near-repeats"): the warm arms as shipped and with each
rule measured (``--variant``), against ``conditional_warm_digits20.json`` (before the rule):

    python bench/conditional.py --problems cash-digits --seeds 20 \
        --arms warmbo-sampler-warm,conditional-warm --checkpoints 5,10,20,30 \
        --out bench/results/conditional_warm_digits20_plateau.json  # (add --variant auto-apart-all,
        # -stalled or -noise: ..._plateau_all.json, _stalled.json, _noise.json)
    python bench/conditional.py --before bench/results/conditional_warm_digits20.json \
        --out bench/results/conditional_warm_digits20_plateau.json
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import warmbo as wb  # noqa: E402
from warmbo.benchmarks._common import (  # noqa: E402
    bootstrap_median_ci,
    git_commit,
    listed,
    machine_info,
    optuna_start,
    sign_test,
    timed_run,
    write_results,
)
from warmbo.optimizer import default_n_initial  # noqa: E402
from warmbo.problems.conditional import jenatton  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import mixed_peers  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "conditional.json"
ARMS = (
    "conditional",
    "flat",
    "optuna-tpe",
    "optuna-gp",
    "active-design",
    "warmbo-sampler",
    "warmbo-sampler-warm",
    "warmbo-sampler-warm10",
    "conditional-warm",
)
#: the related problem whose Optuna study is the prior of ``warmbo-sampler-warm``
WARM_SOURCE = {"cash-digits": "cash-cancer", "cash-cancer": "cash-wine", "cash-wine": "cash-cancer"}
#: the first round's problems (what ``python bench/conditional.py`` runs)
PROBLEMS = ("jenatton", "svc-digits", "sgd-digits", "mlp-wine", "cash-digits")
#: held out for the design question (``--problems cash-cancer,cash-wine``): chosen after the first
#: round, which raised it, and before any run of the ``active-design`` arm
HELD_OUT = ("cash-cancer", "cash-wine")
SETTINGS = {"function": (50, (10, 25, 50), 20), "sklearn": (30, (15, 30), 10)}

#: the conditions added to bench/mixed_peers.py's spaces
CONDITIONS = {
    "svc-digits": {"gamma": {"kernel": ["poly", "rbf", "sigmoid"]}, "degree": {"kernel": "poly"}},
    "sgd-digits": {"l1_ratio": {"penalty": "elasticnet"}},
    "mlp-wine": {"learning_rate_init": {"solver": ["adam", "sgd"]}},
}
CASH = [
    wb.Categorical("model", ["logreg", "forest", "knn", "svm"]),
    wb.Float("logreg_C", 1e-3, 1e3, log=True, when={"model": "logreg"}),
    wb.Int("forest_n_estimators", 10, 100, log=True, when={"model": "forest"}),
    wb.Int("forest_max_depth", 2, 20, when={"model": "forest"}),
    wb.Int("knn_n_neighbors", 1, 50, log=True, when={"model": "knn"}),
    wb.Categorical("knn_weights", ["uniform", "distance"], when={"model": "knn"}),
    wb.Float("svm_C", 1e-2, 1e3, log=True, when={"model": "svm"}),
    wb.Float("svm_gamma", 1e-5, 1.0, log=True, when={"model": "svm"}),
]


def spaces(name: str) -> tuple[wb.Space, wb.Space]:
    """``(conditional, flat)``: the problem's space with and without ``when=``."""
    if name == "jenatton":
        return jenatton().space, jenatton(conditional=False).space
    params = CASH if name.startswith("cash-") else list(mixed_peers.warmbo_space(name).params)
    added = CONDITIONS.get(name, {})
    conditional = [dataclasses.replace(p, when=added[p.name]) if p.name in added else p for p in params]
    return wb.Space(conditional), wb.Space([dataclasses.replace(p, when=None) for p in conditional])


def objective(name: str, space: wb.Space):
    """``(f, to_loss, kind)``: ``f`` of a parameter dict; ``to_loss`` maps its value to the loss."""
    if name == "jenatton":
        f = jenatton()
        return (lambda p: f._fn(p)), (lambda v: v - f.optimum_value), "function"
    if not name.startswith("cash-"):
        f = mixed_peers.make_objective(name)  # (scikit-learn ignores a parameter its model does not use)
        active = spaces(name)[0]
        return (lambda p: f({k: p[k] for k in active.active(p)})), (lambda v: 1.0 - v), "sklearn"
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.svm import SVC

    X, y = mixed_peers._data(
        {"cash-cancer": "breast_cancer"}.get(name, name.removeprefix("cash-")), scale=True
    )

    def cash(p):
        model = p["model"]
        if model == "logreg":
            estimator = LogisticRegression(C=p["logreg_C"], max_iter=300)
        elif model == "forest":
            estimator = RandomForestClassifier(
                n_estimators=p["forest_n_estimators"], max_depth=p["forest_max_depth"], random_state=0
            )
        elif model == "knn":
            estimator = KNeighborsClassifier(n_neighbors=p["knn_n_neighbors"], weights=p["knn_weights"])
        else:
            estimator = SVC(C=p["svm_C"], gamma=p["svm_gamma"])
        return mixed_peers._cv(estimator, X, y)

    return cash, (lambda v: 1.0 - v), "sklearn"


def _suggest(trial, p: wb.Parameter):
    if isinstance(p, wb.Categorical):
        return trial.suggest_categorical(p.name, list(p.choices))
    if isinstance(p, wb.Int):
        return trial.suggest_int(p.name, p.low, p.high, log=p.log)
    return trial.suggest_float(p.name, p.low, p.high, log=p.log)


def optuna_params(space: wb.Space, trial) -> dict:
    """The trial's parameters: every one of a flat space; of a conditional one, parents first and a
    parameter only where the values suggested so far make it active (define-by-run)."""
    order = range(len(space.params)) if not space.is_conditional else space._conditions.order
    out: dict = {}
    for i in order:
        p = space.params[i]
        if space._settled_active(out, p.name):
            out[p.name] = _suggest(trial, p)
    return {n: out[n] for n in space.names if n in out}


def run(arm: str, name: str, seed: int, budget: int) -> dict:
    """One run: the loss of the best value after each evaluation, the optimizer's CPU seconds."""
    conditional, flat = spaces(name)
    space = flat if arm in ("flat", "optuna-gp") else conditional
    f, to_loss, _ = objective(name, conditional)
    if arm in ("conditional", "flat", "active-design"):
        # active-design: the cold design sized by the most parameters active at one point
        n_initial = default_n_initial(space._conditions.most_active()) if arm == "active-design" else None

        def start(timed) -> None:
            opt = wb.Optimizer(space, seed=seed, maximize=True, n_initial=n_initial)
            opt.run(timed, budget=budget, progress=False)

    elif arm in ("warmbo-sampler-warm", "warmbo-sampler-warm10", "conditional-warm"):
        import optuna

        from warmbo.integrations.optuna import WarmboSampler

        # the prior: 30 random trials of the same choice of models on another data set
        related, _, _ = objective(WARM_SOURCE[name], conditional)
        random = optuna.samplers.RandomSampler(seed=1000 + seed)
        source = optuna.create_study(direction="maximize", sampler=random)
        source.optimize(lambda trial: related(optuna_params(space, trial)), n_trials=30)

        def start(timed) -> None:
            if arm == "conditional-warm":  # (warmbo's own loop, the same trials as its prior)
                rows = ([t.params for t in source.trials], [t.value for t in source.trials])
                opt = wb.Optimizer(space, seed=seed, maximize=True, prior=rows)
                opt.run(timed, budget=budget, progress=False)
                return
            startup = {"warmbo-sampler-warm10": 10}.get(arm)  # (default with a prior: 1)
            sampler = WarmboSampler(seed=seed, prior=[source], n_startup_trials=startup)
            study = optuna.create_study(direction="maximize", sampler=sampler)
            study.optimize(lambda trial: timed(optuna_params(space, trial)), n_trials=budget)

    else:
        start = optuna_start(arm, seed, budget, lambda trial: optuna_params(space, trial))
    return {"seed": seed, **timed_run(start, f, to_loss)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default=",".join(PROBLEMS), help=f"of {', '.join(PROBLEMS + HELD_OUT)}")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--seeds", type=int, default=None, help="default: 20 for jenatton, 10 for sklearn")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--checkpoints", help="evaluations to report after (default: 10,25,50 or 15,30)")
    parser.add_argument(
        "--before",
        type=Path,
        help="a results file of an earlier commit: each arm in both is compared with it, seed by seed "
        "(no run when --out exists already and holds every problem)",
    )
    parser.add_argument(
        "--variant",
        help="one of bench/auto_variants.py's auto-* arms, applied to every transfer='auto' in the run "
        "(the warm arms; session 46: auto-repeats, auto-apart-all, auto-apart-stalled, auto-apart-noise)",
    )
    args = parser.parse_args()
    if args.before is not None and args.out.exists():
        compare(args.before, args.out)
        return
    if args.variant:  # (for the whole process: every warm arm's transfer="auto" is patched)
        import auto_variants

        if args.variant not in auto_variants._VARIANTS:
            parser.error(
                f"unknown --variant {args.variant!r}; choose from {', '.join(auto_variants._VARIANTS)}"
            )
        auto_variants._variant(args.variant)[0]()
    problems = listed(parser, args.problems, PROBLEMS + HELD_OUT, "problem")
    arms = listed(parser, args.arms, ARMS, "arm")
    warnings.simplefilter("ignore")
    if any(a.startswith(("optuna", "warmbo-sampler")) or a.endswith("-warm") for a in arms):
        import optuna

        # (ERROR: WarmboSampler says, as a warning, which parameters it samples independently)
        optuna.logging.set_verbosity(optuna.logging.ERROR)
    out = {
        "what": __doc__.splitlines()[0],
        "command": "python bench/conditional.py " + " ".join(sys.argv[1:]),
        "git": git_commit(),
        "machine": machine_info(),
        "load_average_start": os.getloadavg(),
        "results": {},
    }
    for name in problems:
        _, _, kind = objective(name, spaces(name)[0])
        budget, checkpoints, seeds = SETTINGS[kind]
        if args.checkpoints:
            checkpoints = tuple(int(c) for c in args.checkpoints.split(","))
        seeds = args.seeds or seeds
        runs: dict[str, list[dict]] = {a: [] for a in arms}
        for seed in range(seeds):
            for arm in arms:
                runs[arm].append(run(arm, name, seed, budget))
            print(
                f"{name} seed {seed}: " + ", ".join(f"{a} {runs[a][-1]['loss'][-1]:.4g}" for a in arms),
                flush=True,
            )
        entry: dict = {"kind": kind, "budget": budget, "arms": {}}
        for arm in arms:
            loss = np.array([r["loss"] for r in runs[arm]])
            entry["arms"][arm] = {
                "median": {c: float(np.median(loss[:, c - 1])) for c in checkpoints},
                "interval": {c: bootstrap_median_ci(loss[:, c - 1]) for c in checkpoints},
                "median_optimizer_cpu_s": float(np.median([r["optimizer_cpu_s"] for r in runs[arm]])),
                "runs": runs[arm],
            }
        for arm, base in (("conditional", "flat"), ("active-design", "conditional")):
            if {arm, base} <= set(arms):
                new = np.array([r["loss"] for r in runs[arm]])
                old = np.array([r["loss"] for r in runs[base]])
                entry[f"{arm}_vs_{base}"] = {c: sign_test(new[:, c - 1], old[:, c - 1]) for c in checkpoints}
        out["results"][name] = entry
        out["load_average_end"] = os.getloadavg()
        write_results(args.out, out)
    print()
    tests = [
        k
        for k in ("conditional_vs_flat", "active-design_vs_conditional")
        if set(k.split("_vs_")) <= set(arms)
    ]
    print("| problem | after | " + " | ".join([*arms, *tests]) + " |")
    print("|---|---|" + "---|" * (len(arms) + len(tests)))
    for name, entry in out["results"].items():
        for c in entry["arms"][arms[0]]["median"]:
            cells = []
            for a in arms:
                lo, hi = entry["arms"][a]["interval"][c]
                cells.append(f"{entry['arms'][a]['median'][c]:.3g} [{lo:.3g}, {hi:.3g}]")
            said = []
            for k in tests:
                st = entry.get(k, {}).get(c)
                said.append(f"{st['wins']}-{st['losses']}-{st['ties']} ({st['p_value']:.2g})" if st else "")
            print(f"| {name} | {c} | " + " | ".join([*cells, *said]) + " |")
    print(f"load average start {out['load_average_start']}, end {os.getloadavg()}")
    if args.before is not None:
        compare(args.before, args.out)


def compare(before: Path, after: Path) -> None:
    """Each arm of ``after`` against the same arm of ``before`` (an earlier commit's run), per problem
    and checkpoint: medians, and lower-higher-equal seed by seed with the two-sided sign test."""
    import json

    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    print(f"\n{after} (git {new['git']}) against {before} (git {old['git']})")
    print("| problem | arm | after | median before | median now | now lower-higher-equal (p) |")
    print("|---|---|---|---|---|---|")
    for name, entry in new["results"].items():
        for arm, result in entry["arms"].items():
            earlier = old["results"].get(name, {}).get("arms", {}).get(arm)
            if earlier is None:
                continue
            a = np.array([r["loss"] for r in result["runs"]])
            b = np.array([r["loss"] for r in earlier["runs"]])
            for c in result["median"]:
                st = sign_test(a[:, int(c) - 1], b[:, int(c) - 1])
                print(
                    f"| {name} | {arm} | {c} | {earlier['median'][c]:.3g} | {result['median'][c]:.3g} | "
                    f"{st['wins']}-{st['losses']}-{st['ties']} ({st['p_value']:.2g}) |"
                )


if __name__ == "__main__":
    main()
