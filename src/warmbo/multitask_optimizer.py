"""Ask/tell multi-task BO (001): MT-KB, or MT-BKB with a Nystrom budget, over a warmbo Space.

:class:`MultiTaskOptimizer` is the :class:`~warmbo.Optimizer` with vector observations: every
evaluation returns one value per task (objective), the surrogate is a
:class:`~warmbo.models.MultiTaskGP` (or :class:`~warmbo.models.BudgetedMultiTaskGP` when ``budget_eps``
is set) and the acquisition a :class:`~warmbo.acquisition.ScalarizedUCB` on that posterior: by
default the scalarisation of the per-task upper bounds (``optimism="componentwise"``, since session
49), or MT-KB's 001 eq. 3 as the paper states it (``optimism="norm"``). The study store, the initial
design, pending points, failures and ``run`` are the single-task optimizer's.

One round of :meth:`ask`:

``complete trials -> encode -> per-task signs and standardisation -> task structure (given, or B
estimated, or omega fitted) -> MT posterior -> fantasise pending and failed points -> acquisition
(componentwise, or eq. 3) -> maximise -> decode``

Failed trials enter the posterior as in the single-task optimizer: a constant liar, here at every
task's worst observed value (signed, so the worst utility of any scalarisation), with the model's
noise eta, so the search moves away from configurations that fail instead of only avoiding the
exact failed points.

Conventions (say them to users, they matter):

- Signs: ``directions[i]`` is "maximize" or "minimize"; internally every task is maximised (minimised
  tasks are negated), and scalarisations act on these signed values. A Chebyshev ``ref`` is given in
  the user's units and converted the same way.
- Scale: each task is standardised (mean 0, sd 1 over the complete trials) before the MT-GP sees it,
  so one eta and one task matrix fit tasks measured in different units; predictions are mapped back.
  The confidence width is made valid on the user's scale by multiplying ``beta_t ||Gamma_t||^{1/2}``
  (standardised units) by the largest task sd: ``||S (f - mu)||_2 <= max_i s_i ||f - mu||_2``.
- Exploration: ``beta="theory"`` uses :class:`~warmbo.bounds.MultiTaskBound` (001 Thm 2, Thm 3 for
  MT-BKB) with ``b`` and ``sigma`` in standardised units; by default ``b = max_s ||y_s||_2`` over the
  standardised observations (001 Section 5's choice when f is not drawn from the RKHS) and
  ``sigma = sqrt(eta)``. That width keeps the regret guarantee but, like the Srinivas schedule for
  GP-UCB, it explores for hundreds of rounds: on the demo's 5-task RKHS problem it was still sampling
  the domain uniformly after 120 evaluations. The default is therefore a constant
  ``beta_t = beta = 1`` (width ``L ||Gamma_t(x, x)||^{1/2}``); pass ``beta="theory"`` for the bound.
- Task structure when ``kernel`` is a scalar kernel: ``task_similarity="estimate"`` uses the sensor
  experiment's ``B = Y^T (K + eta I)^{-1} Y / t`` (001 Section 5) on the standardised observations,
  shrunk toward its diagonal by ``n/(t + n)`` so that a handful of points cannot declare two tasks
  identical (a rank-deficient B would forbid the model from ever telling them apart);
  ``task_similarity="uniform"`` fits omega of :class:`~warmbo.kernels.multitask.UniformTask` by
  marginal likelihood.
- Each trial stores its vector (``Trial.values``) and, as ``value``, its expected scalarised utility
  ``E_lambda s_lambda(y)`` under the study's weights and ``ref`` (signed units), so ``best``,
  ``warmbo status`` and reports rank trials by the utility the optimizer maximises.

Why this file is long: a study stores every setting of the model and the acquisition, and a reopened
study must ask as it was created, so the checks and restoring of those settings take about a third
of the file; they belong with the optimizer whose settings they are.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Sequence

import numpy as np

from ._threads import blas_limited
from ._validation import check_int, not_a_real_number
from ._warnings import warn as _warn
from .acquisition import ScalarizedUCB
from .audit import LEVELS, MAX_HELD_OUT, Audit, audit_tasks
from .bounds import Constant as ConstantSchedule
from .bounds import MultiTaskBound
from .data import TaskData
from .kernels import RBF, Kernel
from .kernels.multitask import MultiTaskKernel
from .models.multitask import MultiTaskPrediction, as_task_values
from .models.standardised import StandardisedMultiTaskGP
from .optimizer import PRIOR_WORKER, Optimizer, check_kernel_dim
from .pareto import pareto_mask
from .scalarization import Chebyshev, Scalarization
from .space import Space
from .storage import SettingConflictError, StorageError, Study, person, study_exists
from .trial import COMPLETE, FAILED, PENDING, History, Trial

__all__ = ["MultiTaskOptimizer", "ReferencePointWarning"]


class ReferencePointWarning(UserWarning):
    """A task's value lies on the wrong side of the Chebyshev reference point, so the utility ignores
    the other tasks (:meth:`MultiTaskOptimizer.tell`)."""


_DIRECTIONS = ("maximize", "minimize")

#: the settings stored with a study, and their defaults for a new study (or one made before the
#: setting was stored); a setting left out (None) is restored from the study
_DEFAULTS = {
    "mode": "expected",
    "optimism": "componentwise",
    "budget_eps": None,
    "noise": 0.1,
    "beta": 1.0,
    "b": None,
    "sigma": None,
    "delta": 0.1,
    "task_similarity": "estimate",
    "n_weights": 100,
    "horizon": 1000,
}


class MultiTaskOptimizer(Optimizer):
    """Ask/tell optimisation of n related objectives observed together (MT-KB / MT-BKB, 001).

    Every setting below left out (None) is, on an existing study, the value the study was created
    with (stored with it); a given one that differs is refused. The defaults named are a new study's.

    Parameters
    ----------
    space : Space
        The search space.
    kernel : MultiTaskKernel or Kernel, optional
        A multi-task kernel on the encoded unit cube, describing the tasks on the user's scale and
        signs (it is rescaled to the standardised values the model sees), or a scalar kernel k whose
        task structure is learned from the data (``task_similarity``). Default ``RBF(0.2)``, learned B.
    n_tasks : int, optional
        Number of tasks; inferred from ``kernel``, ``task_names`` or ``directions`` when omitted.
    scalarization : Scalarization
        ``s_lambda`` and its weight prior (default :class:`~warmbo.scalarization.Chebyshev` with
        ``ref`` at the origin; give ``ref`` below the values you care about).
    mode : {"expected", "random"}, default "expected"
        MT-KB's expectation over lambda (cumulative regret, 001 eq. 3) or one lambda per round
        (Bayes regret, spreads queries along the Pareto front, 001 Section 4.4).
    optimism : {"componentwise", "norm", "trace"}, default "componentwise"
        Where the confidence width enters (:class:`~warmbo.acquisition.ScalarizedUCB`):
        ``"componentwise"`` scalarises the per-task upper bounds of the multi-task posterior,
        ``s_lambda(mu_t(x) + beta^{1/2} sigma_t(x))`` (Paria et al.'s acquisition on MT-KB's posterior);
        ``"norm"`` is 001's eq. 3, ``s_lambda(mu_t(x)) + L beta^{1/2} ||Gamma_t(x, x)||^{1/2}`` (MT-KB
        as the paper states it); ``"trace"`` its Remark 2 width. The default since session 49:
        ``warmbo reproduce multitask --part decide`` found eq. 3 behind the componentwise form in 10
        of 10 paired trials on every problem (time-average regret 2-30x higher; the eq.-3 bonus
        outside the scalarisation over-explores), docs/reproductions/multitask.md. A study made
        before the setting was stored keeps eq. 3 (``"norm"``), which it ran, unless told otherwise.
    budget_eps : float, optional
        Run MT-BKB with this accuracy eps (001 Thm 3; 0.5 in 001's experiments); None runs MT-KB.
    noise : float, default 0.1
        The regulariser eta in standardised units (001 uses 0.1).
    beta : float or "theory", default 1.0
        Constant ``beta_t`` (the width is ``L sqrt(beta) ||Gamma_t||^{1/2}``), or ``"theory"`` for
        :class:`~warmbo.bounds.MultiTaskBound` (see the module docstring for why 1 is the default).
    b, sigma : float, optional
        Norm bound and noise level of :class:`~warmbo.bounds.MultiTaskBound` (standardised units;
        used with ``beta="theory"``); defaults in the module docstring.
    delta : float, default 0.1
        Confidence level of the bound.
    directions : sequence of {"maximize", "minimize"}, optional
        Per task (default: maximise all); ``"max"`` and ``"min"`` too, as the CLI's ``--directions``.
    task_names : sequence of str, optional
        Names of the tasks (default ``f0, f1, ...``); :meth:`tell` accepts a dict keyed by them.
    task_similarity : {"estimate", "uniform"}, default "estimate"
        How B is learned when ``kernel`` is scalar.
    n_weights : int, default 100
        Weights in the sample average of the expectation.
    horizon : int, default 1000
        T in MT-BKB's q (001 Thm 3).
    n_initial, seed, storage, worker, heartbeat_grace, reclaim
        As for :class:`~warmbo.Optimizer`: with ``heartbeat_grace`` (seconds), the trial of a worker
        silent that long (a machine lost) is taken over by the next ask of another worker (same trial
        id and point; ``reclaim="fail"`` marks it failed), so several machines can share a study.
    prior : (X, Y), optional
        Earlier evaluations of these same tasks in your own units, told once as trials of the
        study (see :meth:`add_prior`).

    Examples
    --------
    >>> import numpy as np, warmbo as wb
    >>> space = wb.Space([wb.Float("x", 0.0, 1.0)])
    >>> mt = wb.MultiTaskOptimizer(space, n_tasks=2, scalarization=wb.Chebyshev(ref=(-2.0, -2.0)), seed=0)
    >>> best = mt.run(lambda p: [np.sin(6 * p["x"]), np.sin(6 * p["x"] + 0.3)], budget=8, progress=False)
    >>> len(mt.history[0].values)
    2
    """

    def __init__(
        self,
        space: Space,
        kernel: MultiTaskKernel | Kernel | None = None,
        n_tasks: int | None = None,
        *,
        scalarization: Scalarization | None = None,
        mode: str | None = None,
        optimism: str | None = None,
        budget_eps: float | None = None,
        noise: float | None = None,
        beta: float | str | None = None,
        b: float | None = None,
        sigma: float | None = None,
        delta: float | None = None,
        directions: Sequence[str] | None = None,
        task_names: Sequence[str] | None = None,
        task_similarity: str | None = None,
        n_weights: int | None = None,
        horizon: int | None = None,
        n_initial: int | None = None,
        seed: int | None = None,
        storage=None,
        worker: str | None = None,
        prior=None,
        heartbeat_grace: float | None = None,
        reclaim: str = "retry",
    ):
        if kernel is not None and not isinstance(kernel, MultiTaskKernel | Kernel):
            raise ValueError(f"kernel must be a multi-task or scalar warmbo kernel, got {kernel!r}")
        check_kernel_dim(kernel, space)
        for name, value in (("task_names", task_names), ("directions", directions)):
            if isinstance(value, str):
                raise ValueError(
                    f"{name} must be a list with one item per task, got the string {value!r} "
                    f"(for one task: [{value!r}])"
                )
        # an existing study's settings fill in what is not given (a given one must match: _check_study)
        self._refuse_single_objective(storage)
        stored = self._stored_description(storage)
        self._given = {
            name
            for name, value in (
                ("scalarization", scalarization),
                ("kernel", kernel),
                *self._settings(locals()),
            )
            if value is not None
        }
        self._names_given = task_names is not None  # (a count conflict is said in their words)
        if stored is not None:
            counts = (
                n_tasks,
                None if directions is None else len(directions),
                kernel.n_tasks if isinstance(kernel, MultiTaskKernel) else None,
            )
            if task_names is None and all(c is None or c == len(stored["task_names"]) for c in counts):
                # reopened with its own directions= or n_tasks= and no names: the study's names (they
                # were refused as "created with task_names=['yA', 'imp'], not ['f0', 'f1']", names
                # the user never gave: multi-task user test)
                task_names = stored["task_names"]
            if directions is None and task_names is not None and list(task_names) == stored["task_names"]:
                directions = stored["directions"]
        restored = {
            name: stored[name] if stored is not None and name in stored else _DEFAULTS[name]
            for name, value in self._settings(locals())
            if value is None
        }
        mode = restored.get("mode", mode)
        if stored is not None and "optimism" not in stored and optimism is None:
            # a study made before the setting was stored ran eq. 3: it goes on with it, as a reopened
            # study keeps its output transform (a review: it switched without a word)
            restored["optimism"] = "norm"
        optimism = restored.get("optimism", optimism)
        budget_eps = restored.get("budget_eps", budget_eps)
        noise = restored.get("noise", noise)
        beta = restored.get("beta", beta)
        b = restored.get("b", b)
        sigma = restored.get("sigma", sigma)
        delta = restored.get("delta", delta)
        task_similarity = restored.get("task_similarity", task_similarity)
        n_weights = restored.get("n_weights", n_weights)
        horizon = restored.get("horizon", horizon)
        candidates = [
            ("kernel", kernel.n_tasks if isinstance(kernel, MultiTaskKernel) else None),
            ("n_tasks", n_tasks),
            ("task_names", None if task_names is None else len(task_names)),
            ("directions", None if directions is None else len(directions)),
        ]
        given = {name: count for name, count in candidates if count is not None}
        if not given:
            raise ValueError(
                "say how many tasks there are: n_tasks=, task_names=, directions= or a MT kernel"
            )
        if len(set(given.values())) > 1:
            raise ValueError(f"inconsistent numbers of tasks: {given}")
        first, n = next(iter(given.items()))
        if first != "n_tasks" and n < 1:  # (task_names=[] was said as "n_tasks must be ...": hostile input)
            raise ValueError(f"{first} must name at least one task, got none")
        check_int(n, "n_tasks", 1)
        self.n_tasks = int(n)
        self.task_names = (
            tuple(str(t) for t in task_names)
            if task_names is not None
            else tuple(f"f{i}" for i in range(self.n_tasks))
        )
        if len(set(self.task_names)) != self.n_tasks:
            raise ValueError(f"task names must be distinct, got {self.task_names}")
        # "max" and "min" as the CLI's --directions takes them (a user test met the refusal in Python)
        words = {"max": "maximize", "min": "minimize"}
        self.directions = (
            tuple(words.get(d, d) if isinstance(d, str) else d for d in directions)
            if directions is not None
            else ("maximize",) * self.n_tasks
        )
        bad = [d for d in self.directions if d not in _DIRECTIONS]
        if bad:
            raise ValueError(f"directions must be 'maximize' or 'minimize' ('max', 'min'), got {bad[0]!r}")
        self.signs = np.array([1.0 if d == "maximize" else -1.0 for d in self.directions])
        self._reference_warned = False
        if scalarization is None:
            stored_scalarization = None if stored is None else stored.get("scalarization")
            scalarization = (  # stored in signed units, like self.scalarization
                Chebyshev() if stored_scalarization is None else Scalarization.from_dict(stored_scalarization)
            )
        else:
            if not isinstance(scalarization, Scalarization):
                raise ValueError(f"scalarization must be a warmbo Scalarization, got {scalarization!r}")
            ref = getattr(scalarization, "ref", None)
            if ref is not None and len(ref) != self.n_tasks:
                raise ValueError(
                    f"the Chebyshev ref has {len(ref)} values but there are {self.n_tasks} tasks"
                )
            if ref is not None:
                scalarization = Chebyshev(ref=tuple(np.asarray(ref) * self.signs))  # signed units
        self.scalarization = scalarization
        if mode not in ("expected", "random"):
            raise ValueError(f"mode must be 'expected' or 'random', got {mode!r}")
        if optimism not in ("componentwise", "norm", "trace"):
            raise ValueError(f"optimism must be 'componentwise', 'norm' or 'trace', got {optimism!r}")
        if task_similarity not in ("estimate", "uniform"):
            raise ValueError(f"task_similarity must be 'estimate' or 'uniform', got {task_similarity!r}")
        if budget_eps is not None and not (isinstance(budget_eps, float | int) and 0 < budget_eps < 1):
            raise ValueError(f"budget_eps must be in (0, 1) or None, got {budget_eps!r}")
        if not (
            isinstance(noise, float | int)
            and not isinstance(noise, bool)
            and math.isfinite(noise)
            and noise > 0
        ):
            raise ValueError(f"noise (eta) must be a positive number, got {noise!r}")
        for name, value in (("b", b), ("sigma", sigma)):
            if value is not None and not (
                isinstance(value, float | int) and math.isfinite(value) and value >= 0
            ):
                raise ValueError(f"{name} must be a non-negative number, got {value!r}")
        self.kernel = kernel if kernel is not None else RBF(0.2)
        self.mode = mode
        self.optimism = optimism
        self.budget_eps = None if budget_eps is None else float(budget_eps)
        self.noise = float(noise)
        if beta != "theory" and not (
            isinstance(beta, float | int) and not isinstance(beta, bool) and math.isfinite(beta) and beta >= 0
        ):
            raise ValueError(f"beta must be a non-negative number or 'theory', got {beta!r}")
        self.beta = beta if beta == "theory" else float(beta)
        self.b, self.sigma, self.delta = b, sigma, float(delta)
        self.task_similarity = task_similarity
        self.n_weights = check_int(n_weights, "n_weights", 1)
        self.horizon = check_int(horizon, "horizon", 1)  # MT-BKB's T (else refused at its first fit)
        MultiTaskBound(b=0.0, sigma=0.0, delta=self.delta)  # validates delta
        super().__init__(
            space,
            model=StandardisedMultiTaskGP(
                # the model sees signed values: a multi-task kernel of the user's values becomes the
                # kernel of S f, S = diag(signs)
                self.kernel.rescaled(self.signs) if isinstance(self.kernel, MultiTaskKernel) else self.kernel,
                self.noise,
                task_similarity=task_similarity,
                budget_eps=self.budget_eps,
                horizon=self.horizon,
                seed=seed,
            ),
            maximize=True,
            n_initial=n_initial,
            seed=seed,
            storage=storage,
            worker=worker,
            heartbeat_grace=heartbeat_grace,
            reclaim=reclaim,
            failures="liar",  # (its acquisition is no EI: failed points are the liar's, per task)
        )
        self.model = self.model.clone(seed=self.seed)  # the stored seed when none was given
        self.acquisition = self._acquisition(1.0, 1.0)
        self._check_study()
        if prior is not None:
            self.add_prior(prior)

    # ------------------------------------------------------------------ study
    @staticmethod
    def _refuse_single_objective(storage) -> None:
        if storage is None or not study_exists(storage):
            return
        path = storage
        existing = Study(storage)
        try:
            if existing.get_meta("multitask") is None and existing.count(COMPLETE):
                raise StorageError(f"study {path!r} holds single-objective trials; use warmbo.Optimizer")
        finally:
            existing.close()

    @staticmethod
    def _settings(arguments: dict) -> list[tuple[str, object]]:
        """(name, value) of the constructor's stored settings among ``arguments`` (its locals)."""
        return [(name, arguments[name]) for name in _DEFAULTS]

    @staticmethod
    def _stored_description(storage) -> dict | None:
        """The settings a multi-task study was created with, or None (no such study yet)."""
        if storage is None or not study_exists(storage):
            return None
        existing = Study(storage)
        try:
            stored = existing.get_meta("multitask")
        finally:
            existing.close()
        return None if stored is None else json.loads(stored)

    def _description(self) -> dict:
        """What is stored with the study and must match when it is reopened: the tasks, the
        scalarisation (signed units) and every setting of the model and the acquisition. The kernel is
        stored as its repr, which identifies it but cannot rebuild it."""
        return {
            "n_tasks": self.n_tasks,
            "task_names": list(self.task_names),
            "directions": list(self.directions),
            "scalarization": self.scalarization.to_dict(),
            "mode": self.mode,
            "optimism": self.optimism,
            "beta": self.beta,
            "budget_eps": self.budget_eps,
            "noise": self.noise,
            "b": self.b,
            "sigma": self.sigma,
            "delta": self.delta,
            "task_similarity": self.task_similarity,
            "n_weights": self.n_weights,
            "horizon": self.horizon,
            "kernel": repr(self.kernel),
        }

    def _check_study(self) -> None:
        """Store this optimizer's settings with a new study; refuse settings that conflict with an
        existing study's (a setting not given was restored from it by the constructor). Studies made
        before a setting was stored do not check it."""
        stored = self.study.get_meta("multitask")
        mine = self._description()
        if stored is None:
            if any(t.state == COMPLETE and t.values is None for t in self.study.trials()):
                raise StorageError(f"study {self.study.path!r} holds single-objective trials")
            self.study.set_meta("multitask", json.dumps(mine))
            return
        theirs = json.loads(stored)
        for key in ("n_tasks", "task_names", "directions"):
            if key == "n_tasks" and self._names_given and theirs.get(key) != mine[key]:
                key = "task_names"  # (given as names: "created with n_tasks=2" named what was not given)
            if theirs.get(key) != mine[key]:
                raise SettingConflictError(
                    f"study {self.study.path!r} was created with {key}={theirs.get(key)!r}, not "
                    f"{mine[key]!r}; leave {key} out to use the study's, or start a new study",
                    key,
                    theirs.get(key),
                    mine[key],
                )
        for key in ("scalarization", *_DEFAULTS, "kernel"):
            if key not in theirs or theirs[key] == mine[key]:
                continue
            if key in self._given:
                given, created = mine[key], theirs[key]
                if key == "scalarization":  # both in the user's units, as given
                    given, created = (self._user_units(Scalarization.from_dict(v)) for v in (given, created))
                raise SettingConflictError(
                    f"study {self.study.path!r} was created with {key}={created!r}, not {given!r}; "
                    f"leave {key} out to use the stored value, or start a new study",
                    key,
                    created,
                    given,
                )
            if key == "kernel":  # not given: a repr cannot rebuild it (inspecting the study is fine)
                warnings.warn(
                    f"study {self.study.path!r} was created with kernel={theirs[key]}, which cannot be "
                    f"restored from the store; this optimizer asks with {mine[key]} (pass kernel= to "
                    "use the study's)",
                    UserWarning,
                    stacklevel=3,
                )

    def _user_units(self, scalarization: Scalarization) -> Scalarization:
        """A scalarisation in signed units (as stored) expressed in the user's units."""
        ref = getattr(scalarization, "ref", None)
        return scalarization if ref is None else Chebyshev(ref=tuple(np.asarray(ref) * self.signs))

    @classmethod
    def load(cls, storage, **overrides) -> MultiTaskOptimizer:
        """Reopen a stored multi-task study with its tasks, directions, scalarisation, beta and seed."""
        study = Study(storage)
        stored = study.get_meta("multitask")
        if stored is None:
            raise StorageError(f"{study.path!r} is not a multi-task study")
        settings = study.settings
        # the tasks, scalarisation and model settings are restored by the constructor
        kwargs = {"n_initial": settings.get("n_initial"), "seed": settings.get("seed")}
        kwargs.update(overrides)
        study.close()
        return cls(study.space, storage=storage, **kwargs)

    # ------------------------------------------------------------------ values
    def _as_values(self, values) -> np.ndarray:
        given = values  # (as the user gave it, for messages)
        if isinstance(values, dict):
            missing = [t for t in self.task_names if t not in values]
            extra = [k for k in values if k not in self.task_names]
            if missing or extra:
                raise ValueError(f"values dict must have the tasks {list(self.task_names)}; "
                                 f"missing {missing}, unknown {extra}")  # fmt: skip
            values = [values[t] for t in self.task_names]
        try:
            ndim = np.ndim(values)
        except ValueError:  # ragged, e.g. [[1.0], 1.0]
            ndim = -1
        if ndim == 0:
            if self.n_tasks != 1:
                raise ValueError(
                    f"a multi-task trial needs {self.n_tasks} values (one per task), got {values!r}"
                )
            values, ndim = [values], 1  # one task: its value alone is the vector
        # what Optimizer.tell takes for one value, per task: anything float() takes but text and bools
        # (np.asarray alone would take "1.5", True and [[1.0], [2.0]] as numbers)
        items = list(values) if ndim == 1 else None
        if items is None or any(not_a_real_number(v) or np.ndim(v) for v in items):
            raise ValueError(
                f"values must be a flat sequence of numbers (one per task, {self.n_tasks}), got {given!r}"
            )
        try:
            arr = np.array([float(v) for v in items], dtype=np.float64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"values must be numbers (one per task), got {given!r}: {exc}") from None
        if arr.shape[0] != self.n_tasks:
            raise ValueError(f"expected {self.n_tasks} values (one per task), got {arr.shape[0]}")
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise ValueError(
                f"value of task {self.task_names[bad[0]]!r} is {arr[bad[0]]:g}; values must be finite"
            )
        return arr

    def _weights(self) -> np.ndarray:
        return self.scalarization.sample_weights(self.n_tasks, self.n_weights, self.seed)

    def utility(self, values) -> float:
        """Expected scalarised utility ``E_lambda s_lambda(y)`` of a value vector (signed units)."""
        y = self._as_values(values) * self.signs
        return float(self.scalarization.expected(y[None, :], self._weights())[0])

    def _check_reference(self, arr: np.ndarray) -> None:
        """Warn (once per optimizer) when a task's value lies on the wrong side of the Chebyshev
        reference point: ``min_i lambda_i (y_i - z_i)`` then takes that task's negative term whatever
        the others are (with the default reference at 0, a minimised latency of 1 made accuracies of
        0.99 and 0.01 score alike), so the other tasks are not optimised at all."""
        if self._reference_warned or not isinstance(self.scalarization, Chebyshev):
            return
        ref = np.zeros(self.n_tasks) if self.scalarization.ref is None else np.asarray(self.scalarization.ref)
        below = np.flatnonzero(arr * self.signs < ref)
        if not below.size:
            return
        self._reference_warned = True
        i = int(below[0])
        worse = "above" if self.directions[i] == "minimize" else "below"
        default = " (the default reference point, 0 in every task)" if self.scalarization.ref is None else ""
        _warn(
            f"task {self.task_names[i]!r} ({self.directions[i]}d) has the value {arr[i]:g}, {worse} the "
            f"Chebyshev reference point's {ref[i] * self.signs[i] + 0.0:g}{default}: the utility "
            f"min_i lambda_i (y_i - z_i) then follows this task alone and ignores the others. Give as "
            "reference point the worst value you would accept in each task, worse than every value of "
            "interest (scalarization=wb.Chebyshev(ref=(...)) in your units; warmbo optimize: --ref). "
            "(Said once per optimizer.)",
            ReferencePointWarning,
        )

    def tell(self, trial_or_params, values) -> Trial:
        """Record the vector of task values (a sequence in task order, or a dict by task name)."""
        arr = self._as_values(values)
        utility = self.utility(arr)
        self._tells += 1
        with self.study.transaction():
            trial_id = self._resolve(trial_or_params)
            if trial_id is None:
                trial = self.study.add_trial(
                    trial_or_params, COMPLETE, value=utility, worker=self.worker, values=arr.tolist()
                )
            else:
                trial = self.study.complete(trial_id, utility, values=arr.tolist())
        # once stored: a refused call used up the once-per-optimizer warning (multi-task user test)
        self._check_reference(arr)
        return trial

    def amend(self, trial, values=None, failed: bool = False, note: str | None = None) -> Trial:
        """Correct the task values of a complete trial (its utility is recomputed), or mark it failed;
        the earlier result is kept in the study (:meth:`~warmbo.storage.Study.amend`)."""
        trial_id = self._amended_id(trial)
        if failed:
            return self.study.amend(trial_id, failed=True, note=note, by=person())
        if values is None:
            raise ValueError("amend needs either the new task values or failed=True")
        arr = self._as_values(values)
        trial = self.study.amend(trial_id, self.utility(arr), values=arr.tolist(), note=note, by=person())
        self._check_reference(arr)  # (once stored, as in tell)
        return trial

    def add_prior(self, data, tag: str | None = None) -> int:
        """Tell earlier evaluations of these same tasks, in your own units.

        ``data`` is an ``(X, Y)`` pair: X a list of parameter dicts or an array of raw parameter values
        (columns in the space's order), Y one row of task values per point (a sequence in task order
        or a dict by task name). Everything is validated before anything is stored; the rows are then
        stored in one transaction as complete trials with worker ``"prior"``, once per study (``tag``,
        by default a hash of the data), recorded as the single-task optimizer records it, so
        :meth:`priors`, :meth:`remove_prior` and ``warmbo prior list/remove`` work on it. Returns the
        number of trials added.
        """
        if not (isinstance(data, tuple | list) and len(data) == 2):
            raise ValueError(
                "multi-task prior data must be an (X, Y) pair: points and one value row per point"
            )
        X, Y = data
        if len(X) != len(Y):
            raise ValueError(f"prior X has {len(X)} points but Y has {len(Y)} value rows")

        # a bad row is named by its index (a user test hunted for it in 23 rows: "value 130.0 is
        # outside [20.0, 120.0]", "value of task 'yB' is nan")
        def row(i: int, check, value):
            try:
                return check(value)
            except ValueError as exc:  # (SpaceError is one)
                try:
                    named = type(exc)(f"prior row {i}: {exc}")
                except TypeError:  # (an error class that takes other arguments)
                    named = ValueError(f"prior row {i}: {exc}")
                raise named from None

        if len(X) and isinstance(X[0], dict):
            params = [row(i, self.space.validate, p) for i, p in enumerate(X)]
        else:
            params = list(TaskData.from_numpy(np.asarray(X), np.zeros(len(X)), self.space).params)
        rows = [row(i, self._as_values, v) for i, v in enumerate(Y)]
        if tag is None:
            text = json.dumps(
                [[list(p.items()), r.tolist()] for p, r in zip(params, rows, strict=True)], default=repr
            )
            tag = hashlib.sha256(text.encode()).hexdigest()[:16]
        key = f"prior:{tag}"
        with self.study.transaction():
            if self.study.get_meta(key) is not None:
                return 0
            ids = [
                self.study.add_trial(
                    p, COMPLETE, value=self.utility(r), worker=PRIOR_WORKER, values=r.tolist()
                ).id
                for p, r in zip(params, rows, strict=True)
            ]
            self.study.set_meta(key, json.dumps(self._prior_record(ids)))
        return len(rows)

    @property
    def history(self) -> History:
        """All trials in id order; ``to_dataframe()`` names the task columns by task name."""
        return History(self.study.trials(), self.task_names)

    @property
    def pareto_front(self) -> list[Trial]:
        """Complete trials whose value vectors are not Pareto dominated (in each task's direction)."""
        complete = [t for t in self.study.trials((COMPLETE,)) if t.values is not None]
        if not complete:
            return []
        Y = np.array([t.values for t in complete]) * self.signs
        return [t for t, keep in zip(complete, pareto_mask(Y), strict=True) if keep]

    # ------------------------------------------------------------------ model
    def _acquisition(self, b: float, sigma: float) -> ScalarizedUCB:
        schedule = (
            MultiTaskBound(b=b, sigma=sigma, delta=self.delta)
            if self.beta == "theory"
            else ConstantSchedule(self.beta)
        )
        return ScalarizedUCB(
            self.scalarization,
            schedule,
            mode=self.mode,
            optimism=self.optimism,
            n_weights=self.n_weights,
            seed=self.seed if self.seed is not None else 0,
        )

    @blas_limited
    def fit_model(self, trials: Sequence[Trial] | None = None):
        """The multi-task posterior (:class:`~warmbo.models.standardised.StandardisedMultiTaskGP`) on
        the complete trials' signed values, or None (< 2 complete trials)."""
        trials = self.study.trials() if trials is None else trials
        complete = [t for t in trials if t.state == COMPLETE and t.values is not None]
        if len(complete) < 2:
            return None
        X = self._encode_trials(complete)
        Y = as_task_values([t.values for t in complete], self.n_tasks, len(complete), "values") * self.signs
        return self.model.clone().fit(X, Y)

    _ask_fit = fit_model  # an ask's fit: nothing of it carries over to the next one

    @blas_limited  # the closed-form leave-one-out inverts the Gram matrix (warmbo status runs it)
    def audit(self, levels: Sequence[float] = LEVELS, max_held_out: int = MAX_HELD_OUT) -> dict[str, Audit]:
        """Leave-one-out confidence audit of the multi-task posterior, one :class:`~warmbo.audit.Audit`
        per task (a dict by task name).

        Each held-out trial (all its task values) is predicted by the model refitted on the other
        complete trials (standardisation and task structure refitted too, as an ask would): for
        every trial in closed form, equal to those refits, when the model has one (the default,
        :meth:`~warmbo.models.standardised.StandardisedMultiTaskGP.loo`), otherwise by refits on
        ``max_held_out`` trials at most (``task_similarity="uniform"``, ``budget_eps``). Each task
        is audited in its own units and direction, with its marginal posterior variance plus its
        noise. The acquisition's confidence width (MT-KB's bound with ``beta="theory"``, the
        constant beta otherwise) is audited too, per task
        (:func:`warmbo.audit.audit_tasks`).
        """
        complete = [t for t in self.study.trials((COMPLETE,)) if t.values is not None]
        if len(complete) < 2:
            raise ValueError(f"an audit needs at least two complete trials; the study has {len(complete)}")
        X = self._encode_trials(complete)
        Y = as_task_values([t.values for t in complete], self.n_tasks, len(complete), "values")
        model = self.fit_model(complete)  # audit_tasks audits this fit instead of fitting again
        schedule = self._acquisition_for(model).schedule
        return audit_tasks(
            model,
            X,
            Y,
            levels,
            schedule,
            task_names=self.task_names,
            signs=self.signs,
            max_held_out=max_held_out,
            seed=int(self.seed) % 2**32,
            labels=[f"trial {t.id}" for t in complete],
            optimism=self.optimism,
        )

    @blas_limited
    def predict(self, params) -> MultiTaskPrediction:
        """Posterior mean (N, n) of the task values (user's signs) and ``Gamma_t(x, x)`` (N, n, n).

        Returns
        -------
        MultiTaskPrediction
            Unpacks as ``mean, cov = mt.predict(params)``; ``.mean``, ``.cov``, and ``.norm`` (the
            largest eigenvalue of each ``Gamma_t(x, x)``). Before, a plain tuple.
        """
        model = self._current_model()
        if model is None:
            raise ValueError("predict needs at least two complete trials")
        mean, cov = model.predict(self.space.encode(params), cov="full")
        signed = cov * self.signs[None, :, None] * self.signs[None, None, :]
        return MultiTaskPrediction(mean * self.signs, signed)

    def _busy(self, trials: Sequence[Trial]) -> np.ndarray:
        """Pending and failed points; MT-KB may repeat an evaluated point (observations are noisy)."""
        return self._encode_trials([t for t in trials if t.state in (PENDING, FAILED)])

    # MT-KB's step: no local candidates (001 searches its finite domains whole), and an acquisition
    # whose bound reads the fitted model's norm bound b_; failed points are fantasised as in the
    # single-task optimizer (a constant liar at each task's worst value, _fantasise_failed inherited)
    _n_anchors = 0
    _multitask = True

    def _acquisition_for(self, reference) -> ScalarizedUCB:
        return self._acquisition(
            self.b if self.b is not None else reference.b_,
            self.sigma if self.sigma is not None else math.sqrt(self.noise),
        )

    def __repr__(self) -> str:
        algorithm = "MT-KB" if self.budget_eps is None else f"MT-BKB(eps={self.budget_eps:g})"
        return f"MultiTaskOptimizer({algorithm}, tasks={list(self.task_names)}, trials={len(self.study)})"
