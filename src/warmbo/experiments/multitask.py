"""Reproduction of 001's experiments (Chowdhury & Gopalan, Section 5, Figures 1-3) and a timing study.

The problems (described below) are built in :mod:`warmbo.problems.multitask`; this module runs the
learners on them and writes the figures.

Why this file is long: the BO loop, the regret studies of Figs. 1-3, the deciding arms (part
``decide``) and the timing study share one set of settings and seeds (common random numbers across
algorithms and parts); plots, tables and sign tests live in :mod:`.multitask_report`.

Every experiment runs BO on a *finite* domain: at each round the acquisition is evaluated on every
point and its maximiser (ties broken at random) is queried; the learner observes all n outputs
``y_t = f(x_t) + N(0, sigma^2 I_n)``. Settings of 001 Section 5: regulariser ``eta = 0.1``,
``delta = 0.1``, Nystrom accuracy ``eps = 0.5``, ``L = 1``, 10 trials, expectation over the weight prior
P_lambda (Paria et al.'s sampler, :mod:`warmbo.scalarization`) by a sample average. Recorded per run:
the queried indices, ``R_C(t)/t`` (001 Section 2) and the Bayes regret ``R_B(t)`` (001 Section 4.4)
under a large fixed weight sample (:data:`EVAL_WEIGHTS` draws, independent of the learner's own sample),
the root width ``beta_t``, the dictionary sizes ``m_t`` of the budgeted models and the wall time of every
step (posterior update + acquisition on the whole domain + argmax).

Algorithms (:data:`ALGORITHMS`):

- ``MT-KB`` (001 Section 3.1): :class:`~warmbo.models.MultiTaskGP` with the problem's multi-task kernel,
  :class:`~warmbo.acquisition.ScalarizedUCB` (eq. 3, ``mode="expected"``) and
  :class:`~warmbo.bounds.MultiTaskBound` (Thm 2).
- ``MT-BKB`` (001 Section 3.2): :class:`~warmbo.models.BudgetedMultiTaskGP` (eps = 0.5, horizon T) with the
  same acquisition; the bound switches to Thm 3's ``beta~_t`` for a budgeted model.
- ``IT-KB`` / ``IT-BKB``: the same algorithms with the *independent counterpart* of the kernel
  (:attr:`Problem.independent`). 001 Section 5 calls them GP-UCB / BKB run per task with confidence sets
  "inflated ... to generalize to [the] multi-objective setting". We inflate them exactly as Thm 2 does for
  the diagonal kernel (001 Remark 3): the log-det term of ``beta_t`` is then the *sum of the n per-task
  information gains*, and the width multiplies ``||Gamma_t(x, x)||^{1/2}``, which for a diagonal kernel is
  the *largest per-task posterior standard deviation*. For the RKHS and sensor problems the diagonal
  kernel is ``k diag(B_11, ..., B_nn)`` (per-task marginal variances kept, cross-task correlations
  dropped); for the perturbed sine and Branin-Hoo problems 001 states that IT-KB, IT-BKB and MOBO use
  "the SE kernel k(x, x')", i.e. ``k I_n``.
- ``MOBO`` (Paria et al. 2020): independent GPs (the same diagonal kernel) and
  ``ScalarizedUCB(optimism="componentwise")``, i.e. ``s_lambda(mu_t(x) + beta_t^{1/2} sigma_t(x))`` with
  per-task standard deviations. Paria et al. draw one lambda_t per round to target the Bayes regret;
  001 "modif[ies] it suitably to tackle the cumulative regret and remain competitive", which we read as
  averaging the acquisition over the weight prior (``mode="expected"``) like MT-KB, with IT-KB's
  ``beta_t`` (Thm 2 for the diagonal kernel), so that MOBO differs from IT-KB only by where the optimism
  enters. ``MOBO (GP-UCB beta)`` is the same with the Bayesian GP-UCB schedule of Srinivas et al. for a
  finite domain (:class:`~warmbo.bounds.Srinivas`) that Paria et al.'s analysis uses; it is much
  narrower than Thm 2's width and shows how much of every comparison is the width schedule.
  001 runs MOBO only where f is not an RKHS draw, and so do we.

Problems (:func:`build_problem`):

- ``rkhs-2`` / ``rkhs-20`` (Fig. 1): 0.01-net of [0, 1];
  ``f = sum_{i<=50} Gamma(., x_i) c_i`` with ``Gamma = k B``, k SE with lengthscale 0.2, ``B = A^T A``,
  ``A ~ U[0, 1]^{n x n}``, centres x_i drawn from the net without replacement, ``c_i ~ U[-1, 1]^n``;
  noise sd 0.1; b is the exact RKHS norm ``||f||_Gamma = sqrt(c^T G c)`` (G the 50n x 50n block Gram
  matrix of the centres). A new f (and B) is drawn for every trial.
- ``sine`` (Fig. 2a): 0.01-net of [0, 1], 4 tasks ``f_i = sin(2 pi x) + 0.6 f_i^pert(x)``, each
  perturbation a weighted sum of three Gaussian bumps ``exp(-(x - c)^2 / (2 * 0.1^2))`` at c = 0.05, 0.4,
  0.7 with the weights of :data:`SINE_WEIGHTS` (001 does not give them; ours give every task one bump of
  its own and a dip of another, so the tasks share sin(2 pi x) and differ locally, and the optima
  differ); noise variance 0.01; MT kernel ``UniformTask(k, 4, omega = 0.4)``, k SE with lengthscale 0.1
  (the bumps' width; 001 gives no lengthscale).
- ``branin`` (Fig. 2b): 9 tasks; task i = 1..9 is Branin-Hoo translated by i% of the domain's width
  along x_1 for odd i and along x_2 for even i ("by i% along either axis": we alternate the axis),
  ``g_i(x) = branin(x - s_i)``, on a 30 x 30 grid of the Branin domain [-5, 10] x [0, 15] rescaled to
  [0, 1]^2. Branin is minimised, so the objective is ``f_i = -(g_i - m) / s`` with m and s the mean and
  sd of the *unshifted* Branin over the grid (one affine map for all tasks, so the tasks stay related);
  noise sd 0.1 (001 gives none); ``UniformTask(k, 9, omega = 0.5)``, k SE with lengthscale 0.2.
- ``sensor`` (Fig. 3): the Intel Berkeley lab data (``intel_lab/``, see :func:`load_intel_lab`).
  001 uses 3 tasks and 54 located sensors; the shared copy has 2 tasks (temperature, humidity) and 50
  sensors whose ids were stripped, so locations are unknown and the SE kernel on locations cannot be
  fitted. The finite domain is the 50 sensors. The 240 time steps (train then test files) are split in
  two contiguous halves: the first 120 estimate the kernel, the last 120 define ``f_i`` (each sensor's
  mean reading), as 001 uses "50% of the readings" for f and the rest for the kernel. Each task is
  standardised with the mean and sd of its estimation half. The scalar kernel is
  ``Tabulated(K)``, K the empirical covariance across sensors of the (per-sensor centred) estimation
  readings, averaged over the two tasks and normalised to unit mean diagonal; ``B = R^T K^{-1} R / m``
  (:func:`warmbo.models.task_structure.estimate_B`, the 120 time steps as replicates). The noise
  variance is the largest, over the tasks, empirical variance of the held-out readings (001: "the
  largest of those").

The Chebyshev reference point of every problem is ``z_i = min_x f_i(x) - 0.1 (max_x f_i - min_x f_i)``,
slightly below the minimum of each task over the domain, so ``y_i - z_i > 0`` on the whole domain and the
scalarisation is monotone (Paria et al.).

Timing (:func:`timing`, 001 Sections 3.2-3.3): per-step time of MT-KB with the dense posterior,
MT-KB with 001's ICM algorithm (``"MT-KB (ICM, paper)"``, no merging of repeated points), MT-KB with
warmbo's ICM path and MT-BKB (ICM path) on the 20-task RKHS problem over a 0.001-net, up to
t = 2000, with the dictionary size ``m_t``. Steps are timed in CPU seconds of the (single-threaded)
process, so other jobs on the machine do not inflate them; wall times are recorded too. The dense run
stops after the first step longer than ``dense_step_limit`` CPU seconds, the exact ICM run after
``icm_seconds`` and MT-BKB after ``bkb_seconds`` CPU seconds in total (001's ICM algorithm
re-decomposes K_t, O(t^3) per step; warmbo's ICM path merges repeated points of a finite domain, so
its cost is bounded by the number of distinct points queried).

Every run is a pure function of its keyword arguments (seeds included) and runs with BLAS on one thread
(:mod:`warmbo.experiments._runner`), so the numbers do not depend on ``workers``.
:func:`run_multitask` writes ``results.json`` and the plots ``fig1_rkhs.png``, ``fig2_sine_branin.png``,
``fig3_sensor.png`` and ``timing.png``.

Why this loop is not :func:`warmbo.suggest.suggest`: 001's algorithms take the exhaustive argmax over the
finite domain with random tie-breaks and may query a point again; ``suggest`` excludes evaluated points
and searches continuously, which would change the algorithm the reproduction checks. Plots and the
headline live in :mod:`.multitask_report`, the problems in :mod:`warmbo.problems.multitask`.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .._validation import check_int
from ..acquisition import ScalarizedUCB
from ..bounds import MultiTaskBound, Srinivas
from ..models import BudgetedMultiTaskGP, MultiTaskGP
from ..problems.multitask import (
    Problem,
    build_problem,
    load_intel_lab,
    rkhs_problem,
)
from ..problems.pareto import bayes_regret, cumulative_regret
from ..scalarization import Scalarization
from ._runner import close_pool, execute, process_pool, warning_texts
from .multitask_report import plot_regret, plot_timing, sign_tests, summary
from .registry import MULTITASK_PARTS

__all__ = [
    "summary",
    "ALGORITHMS",
    "PARTS",
    "MultiTaskReproduction",
    "RegretStudy",
    "Timing",
    "bo_run",
    "regret_study",
    "run_multitask",
    "timing",
    "timing_run",
    "trial",
    "sign_tests",
    "DECIDING",
]

#: 001 Section 5: regulariser, confidence level, Nystrom accuracy.
ETA, DELTA, EPS = 0.1, 0.1, 0.5
ALGORITHMS = ("MT-KB", "MT-BKB", "IT-KB", "IT-BKB", "MOBO", "MOBO (GP-UCB beta)")
#: The arms that decide whether any reading of 001 lets MT-KB beat MOBO (issue 17; part "decide"):
#: L = E[max_i lambda_i], the Lipschitz constant of the expected utility (tight L), for MT-KB and
#: IT-KB; IT-KB with Remark 2's width tr Gamma_t(x, x) (per-task bounds combined over the tasks);
#: MOBO with one random lambda per round (001 Section 4.4); the MT posterior under MOBO's
#: componentwise acquisition.
DECIDING = (
    "MT-KB (tight L)",
    "IT-KB (tight L)",
    "IT-KB (Remark 2)",
    "MOBO (random lambda)",
    "MT + MOBO acquisition",
)
PARTS = MULTITASK_PARTS  # declared in the registry, which the CLI's help reads
#: Size of the fixed weight sample that defines E_lambda in the regrets (the learner uses its own sample).
EVAL_WEIGHTS = 2000
# Part ids in the seeds, so that the parts never share random streams.
_PART_ID = {"rkhs-2": 1, "rkhs-20": 2, "sine": 3, "branin": 4, "sensor": 5, "timing": 6}


# ---------------------------------------------------------------------------------------------- the loop
def _learner(problem: Problem, algorithm: str, scalarization: Scalarization, T: int, seed: int, method):
    """(model, acquisition) of one algorithm; ``method`` overrides the posterior computation."""
    if algorithm not in ALGORITHMS + DECIDING:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS + DECIDING)}")
    kernel = problem.kernel if algorithm.startswith("MT") else problem.independent
    if algorithm.endswith("BKB"):
        model = BudgetedMultiTaskGP(
            kernel, ETA, eps=EPS, delta=DELTA, horizon=T, seed=seed, method=method or "auto"
        )
    else:
        # "icm-paper": 001's ICM algorithm, re-decomposing K_t over every observation (O(t^3) per step)
        compress = method != "icm-paper"
        model = MultiTaskGP(
            kernel, ETA, method="icm" if method == "icm-paper" else (method or "auto"), compress=compress
        )
    b = problem.b if algorithm.startswith("MT") else problem.b_independent
    schedule = MultiTaskBound(b=b, sigma=problem.sigma, delta=DELTA)
    optimism = "componentwise" if "MOBO" in algorithm else "norm"
    if algorithm == "MOBO (GP-UCB beta)":
        schedule = Srinivas(delta=DELTA, domain_size=problem.size)
    if algorithm == "IT-KB (Remark 2)":
        optimism = "trace"
    mode = "random" if algorithm == "MOBO (random lambda)" else "expected"
    lipschitz = "tight" if algorithm.endswith("(tight L)") else None
    acquisition = ScalarizedUCB(
        scalarization, schedule, mode=mode, optimism=optimism, lipschitz=lipschitz, seed=seed
    )
    return model, acquisition


def _argmax(values: np.ndarray, rng: np.random.Generator) -> int:
    top = np.max(values)
    ties = np.flatnonzero(values >= top - 1e-12 * max(1.0, abs(top)))
    return int(ties[0] if ties.size == 1 else rng.choice(ties))


def bo_run(
    problem: Problem,
    algorithm: str,
    scalarization: str = "chebyshev",
    T: int = 200,
    seed: int = 0,
    *,
    method: str | None = None,
    eval_seed: int = 0,
    max_step_seconds: float | None = None,
    max_seconds: float | None = None,
    regrets: bool = True,
) -> dict:
    """One BO run on a finite domain; returns a JSON-ready dict of traces (length = rounds run).

    Parameters
    ----------
    problem : Problem
    algorithm : one of :data:`ALGORITHMS`
    scalarization : "chebyshev" or "linear"
    T : int
        Rounds.
    seed : int
        Seeds the noise and tie-breaks, the learner's weight sample and the dictionary resampling.
    method : str, optional
        Posterior computation of the model (``"dense"``, ``"icm"``; default ``"auto"``).
    eval_seed : int
        Seed of the :data:`EVAL_WEIGHTS` weights that define ``E_lambda`` in the regrets.
    max_step_seconds, max_seconds : float, optional
        Stop after the first step longer than ``max_step_seconds``, or once the run has taken
        ``max_seconds`` in total (timing runs); ``stopped`` says why. Both count the process's CPU time
        (``time.process_time``; BLAS runs on one thread), which other jobs on the machine do not
        inflate; the wall time of every step is recorded as well.
    regrets : bool
        Compute the regret traces (off for timing runs).
    """
    check_int(T, "T", 1)
    scal = problem.scalarization(scalarization)
    model, acquisition = _learner(problem, algorithm, scal, int(T), seed, method)
    rng = np.random.default_rng([seed, 1])
    chosen, seconds, root_beta, dictionary, distinct = [], [], [], [], []
    cpu_seconds = []
    stopped, total = None, 0.0
    budgeted = isinstance(model, BudgetedMultiTaskGP)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(int(T)):
            start, cpu_start = time.perf_counter(), time.process_time()
            bound = acquisition.bind(model)
            i = _argmax(bound(problem.X), rng)
            y = problem.F[i] + problem.sigma * rng.standard_normal(problem.n_tasks)
            model.add(problem.X[i : i + 1], y[None, :])
            seconds.append(time.perf_counter() - start)
            step = time.process_time() - cpu_start
            total += step
            chosen.append(i)
            cpu_seconds.append(step)
            L = 1.0 if acquisition.optimism == "componentwise" else acquisition.lipschitz_for(bound.weights)
            root_beta.append(bound.width / L)
            if budgeted:
                dictionary.append(model.dictionary_size_)
                distinct.append(model.distinct_dictionary_size_)
            if max_step_seconds is not None and step > max_step_seconds:
                stopped = f"step {len(chosen)} took {step:.2f} CPU s > {max_step_seconds} s"
                break
            if max_seconds is not None and total > max_seconds:
                stopped = f"total CPU time {total:.0f} s > {max_seconds} s after {len(chosen)} steps"
                break
    out = {
        "problem": problem.name,
        "algorithm": algorithm,
        "scalarization": scalarization,
        "seed": int(seed),
        "method": getattr(model, "method_", None),
        "chosen": chosen,
        "step_seconds": [round(s, 6) for s in seconds],
        "step_cpu_seconds": [round(s, 6) for s in cpu_seconds],
        "root_beta": [round(float(v), 6) for v in root_beta],
        "dictionary_sizes": dictionary,
        "distinct_dictionary_sizes": distinct,
        "stopped": stopped,
        "warnings": warning_texts(caught),
    }
    if regrets:
        weights = scal.sample_weights(problem.n_tasks, EVAL_WEIGHTS, np.random.default_rng([eval_seed, 99]))
        cum = cumulative_regret(problem.F, chosen, scal, weights)
        out["average_regret"] = [float(v) for v in cum / np.arange(1, len(chosen) + 1)]
        out["bayes_regret"] = [float(v) for v in bayes_regret(problem.F, chosen, scal, weights)]
    return out


def _seed(seed: int, part: str, run: int) -> int:
    return int(np.random.SeedSequence([int(seed), _PART_ID[part], int(run)]).generate_state(1)[0])


def trial(
    problem: str,
    algorithm: str,
    scalarization: str,
    T: int,
    run: int,
    seed: int = 0,
    data_dir: str | None = None,
) -> dict:
    """Trial ``run`` of one algorithm on one problem (a pure function of its arguments, for the pool).

    The RKHS function of trial r and every random stream are shared by all the algorithms of that
    trial (common random numbers): the same f, the same noise sequence, the same weight sample.
    """
    run_seed = _seed(seed, problem, run)
    prob = build_problem(problem, seed=run_seed, data_dir=data_dir)
    out = bo_run(prob, algorithm, scalarization, T, run_seed, eval_seed=run_seed)
    out["run"] = int(run)
    out["b"] = prob.b
    return out


# ---------------------------------------------------------------------------------------------- studies
@dataclass
class RegretStudy:
    """Trials of several algorithms on one problem and scalarisation (one panel of Figs. 1-3)."""

    problem: str
    scalarization: str
    T: int
    algorithms: list[str]
    description: dict
    mean: dict[str, list[float]]
    sd: dict[str, list[float]]
    bayes_mean: dict[str, list[float]]
    runs: list[dict]

    def final(self) -> dict[str, dict[str, float]]:
        """Mean and sd over trials of ``R_C(T)/T`` and of the Bayes regret at T, per algorithm."""
        return {
            a: {"mean": self.mean[a][-1], "sd": self.sd[a][-1], "bayes": self.bayes_mean[a][-1]}
            for a in self.algorithms
        }

    def at(self, algorithm: str, t: int) -> float:
        """Mean over trials of ``R_C(t)/t``."""
        return self.mean[algorithm][min(t, self.T) - 1]


def regret_study(
    problem: str,
    algorithms: Sequence[str],
    runs: int | None = None,
    T: int = 200,
    scalarization: str = "chebyshev",
    seed: int = 0,
    *,
    data_dir: str | None = None,
    workers=1,
    progress=None,
) -> RegretStudy:
    """``runs`` trials of every algorithm on ``problem``; mean and sd of ``R_C(t)/t`` over the trials."""
    for name, value in (("runs", runs), ("T", T)):
        check_int(value, name, 1)
    algorithms = list(algorithms)
    for a in algorithms:
        if a not in ALGORITHMS + DECIDING:
            raise ValueError(f"unknown algorithm {a!r}; choose from {', '.join(ALGORITHMS + DECIDING)}")
    description = build_problem(problem, seed=_seed(seed, problem, 0), data_dir=data_dir).describe()
    jobs = [
        {
            "problem": problem,
            "algorithm": a,
            "scalarization": scalarization,
            "T": int(T),
            "run": r,
            "seed": seed,
            "data_dir": None if data_dir is None else str(data_dir),
        }
        for r in range(runs)
        for a in algorithms
    ]
    results = execute(trial, jobs, workers, progress, f"{problem} ({scalarization})")
    mean, sd, bayes = {}, {}, {}
    for a in algorithms:
        rows = np.array([res["average_regret"] for res in results if res["algorithm"] == a])
        mean[a] = rows.mean(axis=0).tolist()
        sd[a] = rows.std(axis=0).tolist()
        bayes[a] = np.mean([res["bayes_regret"] for res in results if res["algorithm"] == a], axis=0).tolist()
    return RegretStudy(problem, scalarization, int(T), algorithms, description, mean, sd, bayes, results)


@dataclass
class Timing:
    """Per-step wall time (and dictionary size) against t for MT-KB dense, MT-KB ICM and MT-BKB."""

    settings: dict
    runs: dict[str, dict]

    def summary(self) -> dict[str, dict]:
        """Steps run, why a run stopped, median step time around a few t, and the log-log slope of the
        step time against t over the second half of each run (1 = linear, 3 = cubic)."""
        out = {}
        for name, run in self.runs.items():
            s = np.maximum(np.asarray(run["step_cpu_seconds"]), 1e-6)
            t = np.arange(1, s.size + 1)
            checkpoints = {}
            for c in (10, 30, 100, 300, 1000, 2000):
                if c <= s.size:
                    window = s[max(0, c - 10) : c]
                    checkpoints[str(c)] = float(np.median(window))
            half = t >= max(2, s.size // 2)
            slope = float(np.polyfit(np.log(t[half]), np.log(s[half]), 1)[0]) if half.sum() >= 5 else None
            entry = {
                "steps": int(s.size),
                "stopped": run["stopped"],
                "total_cpu_seconds": float(s.sum()),
                "total_wall_seconds": float(np.sum(run["step_seconds"])),
                "median_step_cpu_seconds_at_t": checkpoints,
                "loglog_slope_second_half": slope,
            }
            if run["dictionary_sizes"]:
                entry["final_dictionary_size"] = run["dictionary_sizes"][-1]
                entry["final_distinct_dictionary_size"] = run["distinct_dictionary_sizes"][-1]
            out[name] = entry
        return out


TIMING_ARMS = {
    "MT-KB (dense)": ("MT-KB", "dense"),
    "MT-KB (ICM, paper)": ("MT-KB", "icm-paper"),
    "MT-KB (ICM)": ("MT-KB", "icm"),
    "MT-BKB": ("MT-BKB", "icm"),
}


def timing_run(
    arm: str,
    T: int,
    seed: int,
    step: float,
    n_tasks: int,
    max_step_seconds: float | None,
    max_seconds: float | None,
) -> dict:
    """One timing arm (a key of :data:`TIMING_ARMS`) on the RKHS problem over a ``step``-net."""
    algorithm, method = TIMING_ARMS[arm]
    run_seed = _seed(seed, "timing", 0)
    problem = rkhs_problem(n_tasks, run_seed, step=step)
    return bo_run(
        problem,
        algorithm,
        "chebyshev",
        T,
        run_seed,
        method=method,
        max_step_seconds=max_step_seconds,
        max_seconds=max_seconds,
        regrets=False,
    )


def timing(
    T: int = 2000,
    seed: int = 0,
    *,
    step: float = 0.001,
    n_tasks: int = 20,
    dense_step_limit: float = 3.0,
    icm_seconds: float = 240.0,
    bkb_seconds: float = 480.0,
    workers=1,
    progress=None,
) -> Timing:
    """Per-step time of MT-KB (dense), MT-KB (ICM fast path) and MT-BKB on the n-task RKHS problem."""
    limits = {
        "MT-KB (dense)": (dense_step_limit, None),
        "MT-KB (ICM, paper)": (None, icm_seconds),
        "MT-KB (ICM)": (None, icm_seconds),
        "MT-BKB": (None, bkb_seconds),
    }
    jobs = [
        {
            "arm": arm,
            "T": int(T),
            "seed": seed,
            "step": step,
            "n_tasks": n_tasks,
            "max_step_seconds": limits[arm][0],
            "max_seconds": limits[arm][1],
        }
        for arm in ("MT-KB (ICM, paper)", "MT-KB (ICM)", "MT-BKB", "MT-KB (dense)")
    ]
    results = execute(timing_run, jobs, workers, progress, "timing")
    settings = {
        "T": int(T),
        "step": step,
        "domain_size": int(round(1 / step)) + 1,
        "n_tasks": n_tasks,
        "dense_step_limit": dense_step_limit,
        "icm_seconds": icm_seconds,
        "bkb_seconds": bkb_seconds,
    }
    return Timing(settings, {job["arm"]: res for job, res in zip(jobs, results, strict=True)})


# ---------------------------------------------------------------------------------------------- driver
@dataclass
class MultiTaskReproduction:
    """Everything :func:`run_multitask` measured (``asdict`` gives the JSON written to results.json)."""

    settings: dict
    studies: dict[str, RegretStudy]
    timing: Timing | None
    seconds: dict[str, float]
    notes: list[str] = field(default_factory=list)

    def headline(self) -> dict:
        """Final ``R_C(T)/T`` per study and algorithm, the MT-KB / IT-KB ratio at T = 200 (or the last T)
        on the 20-task RKHS problem, and the timing summary."""
        head: dict = {"final_average_regret": {key: s.final() for key, s in self.studies.items()}}
        ratios = {}
        for key, s in self.studies.items():
            if "MT-KB" in s.algorithms and "IT-KB" in s.algorithms:
                t = min(200, s.T)
                ratios[key] = {"T": t, "MT-KB / IT-KB": s.at("MT-KB", t) / s.at("IT-KB", t)}
                if "MT-BKB" in s.algorithms and "IT-BKB" in s.algorithms:
                    ratios[key]["MT-BKB / IT-BKB"] = s.at("MT-BKB", t) / s.at("IT-BKB", t)
        head["ratios"] = ratios
        decide = {key: sign_tests(s) for key, s in self.studies.items() if key.startswith("decide-")}
        if decide:
            head["decide_vs_mobo"] = decide
        if self.timing is not None:
            head["timing"] = self.timing.summary()
        return head


def _study_keys(parts: Sequence[str]) -> list[tuple[str, str, str, list[str]]]:
    keys = []
    rkhs_algorithms = ["MT-KB", "MT-BKB", "IT-KB", "IT-BKB"]
    if "rkhs" in parts:
        keys += [
            ("rkhs-2", "rkhs-2", "chebyshev", rkhs_algorithms),
            ("rkhs-20", "rkhs-20", "chebyshev", rkhs_algorithms),
        ]
    if "sine" in parts:
        keys.append(("sine", "sine", "chebyshev", list(ALGORITHMS)))
    if "branin" in parts:
        keys.append(("branin", "branin", "chebyshev", list(ALGORITHMS)))
    if "sensor" in parts:
        keys += [
            ("sensor-chebyshev", "sensor", "chebyshev", list(ALGORITHMS)),
            ("sensor-linear", "sensor", "linear", list(ALGORITHMS)),
        ]
    if "decide" in parts:  # the same trials (common random numbers) as the parts above
        arms = ["MT-KB", "IT-KB", "MOBO", *DECIDING]
        keys += [(f"decide-{p}", p, "chebyshev", arms) for p in ("rkhs-20", "sine", "branin")]
    if "horizon" in parts:  # the longer horizon: the f of trials 0.. of rkhs-20, MT-KB and IT-KB
        keys.append(("horizon-rkhs-20", "rkhs-20", "chebyshev", ["MT-KB", "IT-KB"]))
    return keys


def run_multitask(
    out: str | Path,
    runs: int | None = None,
    T: int = 200,
    workers: int = 1,
    quick: bool = False,
    progress=None,
    *,
    parts: Sequence[str] | None = None,
    seed: int = 0,
    data_dir: str | os.PathLike | None = None,
    timing_T: int = 2000,
    icm_seconds: float = 240.0,
    bkb_seconds: float = 480.0,
    horizon_T: int = 600,
    horizon_runs: int = 4,
) -> MultiTaskReproduction:
    """Run the selected parts (default all of :data:`PARTS`) and write results.json and the PNG plots.

    ``runs`` trials default to 001's 10. ``quick=True`` shrinks everything (2 trials unless ``runs``
    is given, T = 12, a 0.01-net and t <= 30 for timing) to check the pipeline in seconds; its numbers
    are not meant to be read. When the sensor data is missing and
    ``parts`` was not given explicitly, the sensor part is skipped with a note. The ``horizon`` part
    runs MT-KB and IT-KB on the 20-task RKHS problem for ``horizon_T`` steps on the first
    ``horizon_runs`` trials (at most ``runs``; the same f as those trials of ``rkhs``).
    """
    explicit = parts is not None
    parts = list(PARTS if parts is None else parts)
    for part in parts:
        if part not in PARTS:
            raise ValueError(f"unknown part {part!r}; choose from {', '.join(PARTS)}")
    if runs is None:  # the paper's 10 trials, or quick's 2; runs given are kept under quick too
        runs = 2 if quick else 10
    if quick:
        T, timing_T, timing_step, icm_seconds, bkb_seconds = 12, 30, 0.01, 20.0, 20.0
        horizon_T = 24
    else:
        timing_step = 0.001
    for name, value in (
        ("runs", runs),
        ("T", T),
        ("timing_T", timing_T),
        ("workers", workers),
        ("horizon_T", horizon_T),
        ("horizon_runs", horizon_runs),
    ):
        check_int(value, name, 1)
    notes = []
    if "sensor" in parts:
        try:
            load_intel_lab(data_dir)
        except FileNotFoundError as err:
            if explicit:
                raise
            parts.remove("sensor")
            notes.append(f"sensor part skipped: {err}")
    out = Path(out)
    settings = {
        "quick": quick,
        "seed": seed,
        "workers": workers,
        "runs": runs,
        "T": T,
        "parts": parts,
        "eta": ETA,
        "delta": DELTA,
        "eps": EPS,
        "L": 1.0,
        "eval_weights": EVAL_WEIGHTS,
        "learner_weights": ScalarizedUCB().n_weights,
        "timing_T": timing_T,
        "timing_step": timing_step,
        "horizon_T": horizon_T if "horizon" in parts else 0,
        "horizon_runs": min(runs, horizon_runs) if "horizon" in parts else 0,
    }
    seconds: dict[str, float] = {}
    studies: dict[str, RegretStudy] = {}
    timing_result = None
    start = time.perf_counter()
    pool = process_pool(workers) if workers > 1 else 1
    try:
        for key, problem, scal, algorithms in _study_keys(parts):
            t0 = time.perf_counter()
            horizon = key.startswith("horizon-")
            studies[key] = regret_study(
                problem,
                algorithms,
                min(runs, horizon_runs) if horizon else runs,
                horizon_T if horizon else T,
                scal,
                seed,
                data_dir=None if data_dir is None else str(data_dir),
                workers=pool,
                progress=progress,
            )
            seconds[key] = time.perf_counter() - t0
        if "timing" in parts:
            t0 = time.perf_counter()
            timing_result = timing(
                timing_T,
                seed,
                step=timing_step,
                icm_seconds=icm_seconds,
                bkb_seconds=bkb_seconds,
                workers=pool,
                progress=progress,
            )
            seconds["timing"] = time.perf_counter() - t0
    except BaseException:  # (Ctrl-C: the queued runs are not made, the workers end now)
        close_pool(pool, interrupted=True)
        raise
    close_pool(pool)
    seconds["total"] = time.perf_counter() - start
    result = MultiTaskReproduction(settings, studies, timing_result, seconds, notes)
    out.mkdir(parents=True, exist_ok=True)
    payload = asdict(result) | {"headline": result.headline()}
    (out / "results.json").write_text(json.dumps(payload, indent=1))
    for name, keys in (
        ("fig1_rkhs.png", ("rkhs-2", "rkhs-20")),
        ("fig2_sine_branin.png", ("sine", "branin")),
        ("fig3_sensor.png", ("sensor-chebyshev", "sensor-linear")),
    ):
        panels = [studies[k] for k in keys if k in studies]
        if panels:
            plot_regret(panels, out / name)
    if timing_result is not None:
        plot_timing(timing_result, out / "timing.png")
    return result
