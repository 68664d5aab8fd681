"""The optimisers the suite compares: warmbo and its peers, behind one small interface.

A :class:`Method` does two things the sections need:

- ``prepare_ask(X, y, mode, seed)``: given n completed observations (X in the unit cube, y to be
  *minimised*), set up everything a user's loop would already have (untimed) and return a closure
  that performs exactly one suggestion, as the user's next ``ask`` would (timed by the overhead
  section). ``mode`` is ``"fixed"`` (hyperparameters held fixed, no fitting) or ``"ml2"``
  (hyperparameters refitted by type-II maximum likelihood at the ask);
- ``minimize(problem, budget, seed)``: run the method's standard loop on a test function for
  ``budget`` evaluations and return the objective values in evaluation order (quality section).

Peers (BoTorch, Optuna) are imported lazily: they live in the optional extra ``peers`` and the suite
runs without them (:func:`resolve_peers` says which are missing and why). Their settings are the
libraries' documented defaults for the standard loop; :meth:`Method.settings` records them in every
results file:

- ``botorch-logei`` / ``botorch-ucb``: ``SingleTaskGP`` (default kernel and priors, ``Standardize``
  outcome transform, inputs already in the unit cube), ``fit_gpytorch_mll`` on the exact marginal
  likelihood for ML-II (fixed mode sets lengthscale 0.2 and noise 1e-3 and skips fitting),
  ``LogExpectedImprovement(best_f=max y)`` or ``UpperConfidenceBound(beta=2)``, and
  ``optimize_acqf(q=1, num_restarts=10, raw_samples=512)``; quality runs start from
  ``min(max(3, 2 d), 20)`` scrambled Sobol points, the size of warmbo's default design
  (:func:`warmbo.optimizer.default_n_initial`; uncapped ``max(3, 2 d)`` before session 15).
- ``optuna-gp`` / ``optuna-tpe``: ``GPSampler(seed)`` and ``TPESampler(seed)`` with their defaults
  (10 random start-up trials). One ask is ``study.ask(distributions)`` on a study holding the n
  completed trials (``add_trials``). The GP sampler refits its kernel at every ask, so it is an
  ``"ml2"`` method; TPE fits no GP and is timed in the ``"fixed"`` column.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from ..kernels import Constant, Matern
from ..models import GP
from ..optimizer import Optimizer, default_model, default_n_initial
from ..problems.functions import TestFunction
from ..space import Space

__all__ = [
    "FIXED_LENGTHSCALE",
    "FIXED_NOISE",
    "MODES",
    "Method",
    "PEERS",
    "Warmbo",
    "resolve_peers",
]

MODES = ("fixed", "ml2")
FIXED_LENGTHSCALE = 0.2
FIXED_NOISE = 1e-3


def _initial_design_size(d: int) -> int:
    return default_n_initial(d)


class Method(ABC):
    """An optimiser under benchmark (see the module docstring for the contract)."""

    name: str = ""
    modes: tuple[str, ...] = MODES

    @abstractmethod
    def settings(self) -> dict:
        """The settings this method runs with (recorded in the results)."""

    @abstractmethod
    def prepare_ask(
        self, X: np.ndarray, y: np.ndarray, mode: str, seed: int, objective: Callable[[np.ndarray], float]
    ) -> Callable[[], Any]:
        """Untimed set-up with n observations; the returned closure performs one ask.

        Methods that carry state from one ask to the next (warmbo: the trials it has read and encoded,
        and in ``"ml2"`` mode its warm-started hyperparameters; Optuna GPSampler's cached kernel
        parameters) are set up as in a running loop: n - 1 observations, one ask, its point evaluated
        by ``objective`` and told; stateless ones (BoTorch's standard loop refits from its default
        initialisation) get the n observations.
        """

    @abstractmethod
    def minimize(self, problem: TestFunction, budget: int, seed: int) -> np.ndarray:
        """Objective values, in evaluation order, of ``budget`` evaluations of the standard loop."""


# ---------------------------------------------------------------------------------------------- warmbo
class Warmbo(Method):
    """warmbo's :class:`~warmbo.Optimizer` with its defaults (EI, ``Constant * Matern-5/2`` ARD, MAP under
    the dimension-scaled priors, a fitted constant mean; :func:`~warmbo.models.default_model`).

    Fixed mode replaces the default model by the same kernel with lengthscale ``FIXED_LENGTHSCALE``,
    unit amplitude and noise ``FIXED_NOISE`` and no fitting (``GP(optimizer=None)``).
    """

    name = "warmbo"
    #: "first": the first ask of a new Optimizer object on a study of n trials (warmbo suggest, a
    #: resumed run, another worker): a refit as in "ml2", but no state carried from an earlier ask;
    #: "run": a running loop of asks and tells from a study of n trials (:meth:`running_optimizer`)
    modes = (*MODES, "first", "run")

    def settings(self) -> dict:
        return {
            "optimizer": "warmbo.Optimizer (in-memory study), acquisition EI()",
            "ml2_model": repr(default_model(2)),
            "fixed_model": repr(self._fixed_model(2)),
            "maximize": "warmbo.maximize defaults with the optimizer's anchors: 256 Sobol and 256 local "
            "candidates around the 5 best observations, 5 L-BFGS-B starts on log EI",
            "initial_design": "min(max(3, 2 d), 20) scrambled Sobol points (default_n_initial)",
            "output_transform": "the Optimizer default: yeo-johnson with the default model, none in "
            "fixed mode (a model passed to the Optimizer)",
        }

    @staticmethod
    def _fixed_model(d: int) -> GP:
        kernel = Constant(1.0) * Matern(2.5, np.full(d, FIXED_LENGTHSCALE))
        return GP(kernel, noise=FIXED_NOISE, normalize_y=True, optimizer=None)

    def prepare_ask(self, X, y, mode, seed, objective):
        if mode == "first":
            return self._first_ask(X, y, seed, objective)
        return self.running_optimizer(X, y, mode, seed, objective).ask

    def running_optimizer(self, X, y, mode, seed, objective) -> Optimizer:
        """An in-memory Optimizer as a user's running loop holds it after n trials: the first n - 1
        observations told through the public API, then the previous step of the loop (an ask on
        n - 1 trials, its point evaluated by ``objective`` and told). Its next ask is a steady ask
        on n trials: the optimizer carries state from one ask to the next (refits warm-started from
        the previous ask's; in every mode the parsed and encoded trials). ``mode`` ``"fixed"`` or
        ``"ml2"`` (the default model; ``"run"`` too)."""
        n, d = X.shape
        space = Space.box([(0.0, 1.0)] * d)
        model = self._fixed_model(d) if mode == "fixed" else None
        told = n - 1
        opt = Optimizer(space, model=model, seed=seed, n_initial=max(1, min(told, _initial_design_size(d))))
        names = space.names
        with opt.study.transaction():
            for row, value in zip(X[:told], y[:told], strict=True):
                opt.tell(dict(zip(names, row.tolist(), strict=True)), float(value))
        previous = opt.ask()
        opt.tell(previous, float(objective(np.array([previous[name] for name in names]))))
        return opt

    def _first_ask(self, X, y, seed, objective):
        """A study of n trials on disk, written by an earlier optimizer object (whose last ask fitted
        and stored its hyperparameters); the closure opens a new object on it and asks once."""
        import shutil
        import tempfile
        import weakref

        folder = tempfile.mkdtemp(prefix="warmbo-first-ask-")
        path = f"{folder}/study.db"
        n, d = X.shape
        space = Space.box([(0.0, 1.0)] * d)
        opt = Optimizer(space, seed=seed, n_initial=max(1, min(n - 1, _initial_design_size(d))), storage=path)
        names = space.names
        with opt.study.transaction():
            for row, value in zip(X[: n - 1], y[: n - 1], strict=True):
                opt.tell(dict(zip(names, row.tolist(), strict=True)), float(value))
        previous = opt.ask()
        opt.tell(previous, float(objective(np.array([previous[name] for name in names]))))
        opt.study.close()

        def first_ask():
            return Optimizer.load(path).ask()

        # the folder goes with the closure (every `warmbo bench` run left one in the temp folder)
        weakref.finalize(first_ask, shutil.rmtree, folder, ignore_errors=True)
        return first_ask

    def minimize(self, problem, budget, seed):
        space = Space.box(problem.bounds)
        opt = Optimizer(space, seed=seed)
        values = []
        for _ in range(budget):
            params = opt.ask()
            value = float(problem(np.array([params[name] for name in space.names])))
            opt.tell(params, value)
            values.append(value)
        return np.asarray(values)


# ---------------------------------------------------------------------------------------------- BoTorch
class BoTorch(Method):
    """BoTorch's standard loop: SingleTaskGP, fit_gpytorch_mll, LogEI or UCB, optimize_acqf."""

    def __init__(self, acquisition: str = "logei", beta: float = 2.0):
        self.acquisition = acquisition
        self.beta = beta
        self.name = f"botorch-{acquisition}"

    def settings(self) -> dict:
        acq = (
            "LogExpectedImprovement(best_f=max y)"
            if self.acquisition == "logei"
            else (f"UpperConfidenceBound(beta={self.beta})")
        )
        return {
            "model": "SingleTaskGP(X, y, outcome_transform=Standardize(m=1)), default kernel and priors",
            "ml2": "fit_gpytorch_mll(ExactMarginalLogLikelihood) at every ask, from the default init",
            "fixed": f"lengthscale {FIXED_LENGTHSCALE}, noise {FIXED_NOISE}, no fitting",
            "acquisition": acq,
            "optimize_acqf": "q=1, num_restarts=10, raw_samples=512, bounds [0, 1]^d",
            "initial_design": "min(max(3, 2 d), 20) scrambled Sobol points (torch SobolEngine, seeded)",
            "dtype": "float64",
        }

    @staticmethod
    def _modules():
        import torch
        from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from botorch.models.transforms.outcome import Standardize
        from botorch.optim import optimize_acqf
        from gpytorch.mlls import ExactMarginalLogLikelihood

        return {
            "torch": torch,
            "LogEI": LogExpectedImprovement,
            "UCB": UpperConfidenceBound,
            "fit": fit_gpytorch_mll,
            "SingleTaskGP": SingleTaskGP,
            "Standardize": Standardize,
            "optimize_acqf": optimize_acqf,
            "MLL": ExactMarginalLogLikelihood,
        }

    def _suggest(self, m: dict, train_X, train_Y, mode: str):
        """One step of the standard loop on tensors (train_Y is maximised); returns the candidate."""
        torch = m["torch"]
        d = train_X.shape[-1]
        model = m["SingleTaskGP"](train_X, train_Y, outcome_transform=m["Standardize"](m=1))
        if mode == "ml2":
            m["fit"](m["MLL"](model.likelihood, model))
        else:
            model.covar_module.lengthscale = torch.full((1, d), FIXED_LENGTHSCALE, dtype=torch.float64)
            model.likelihood.noise = torch.tensor([FIXED_NOISE], dtype=torch.float64)
            model.eval()
        if self.acquisition == "logei":
            acq = m["LogEI"](model, best_f=train_Y.max())
        else:
            acq = m["UCB"](model, beta=self.beta)
        bounds = torch.stack([torch.zeros(d, dtype=torch.float64), torch.ones(d, dtype=torch.float64)])
        candidate, _ = m["optimize_acqf"](acq, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
        return candidate.detach()

    def prepare_ask(self, X, y, mode, seed, objective):
        m = self._modules()
        torch = m["torch"]
        train_X = torch.as_tensor(X, dtype=torch.float64)
        train_Y = torch.as_tensor(-np.asarray(y), dtype=torch.float64)[:, None]

        def ask():
            torch.manual_seed(seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return self._suggest(m, train_X, train_Y, mode)

        return ask

    def minimize(self, problem, budget, seed):
        m = self._modules()
        torch = m["torch"]
        d = problem.dim
        torch.manual_seed(seed)
        sobol = torch.quasirandom.SobolEngine(d, scramble=True, seed=seed)
        n_init = min(budget, _initial_design_size(d))
        U = sobol.draw(n_init, dtype=torch.float64)
        lower, upper = problem.lower, problem.upper
        values = list(problem(lower + U.numpy() * (upper - lower)))
        train_X = U
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            while len(values) < budget:
                train_Y = -torch.as_tensor(values, dtype=torch.float64)[:, None]
                u = self._suggest(m, train_X, train_Y, "ml2")
                values.append(float(problem(lower + u.numpy()[0] * (upper - lower))))
                train_X = torch.cat([train_X, u])
        return np.asarray(values, dtype=np.float64)


# ---------------------------------------------------------------------------------------------- Optuna
class OptunaSampler(Method):
    """Optuna's ask/tell study with ``GPSampler`` or ``TPESampler`` (library defaults, seeded)."""

    def __init__(self, sampler: str):
        self.sampler = sampler
        self.name = f"optuna-{sampler}"
        self.modes = ("ml2",) if sampler == "gp" else ("fixed",)

    def settings(self) -> dict:
        cls = "GPSampler" if self.sampler == "gp" else "TPESampler"
        return {
            "sampler": f"optuna.samplers.{cls}(seed=seed), defaults (n_startup_trials=10)",
            "ask": "study.ask(distributions) on an in-memory study holding n trials (add_trials)",
            "overhead_mode": self.modes[0],
        }

    def _study(self, seed: int):
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        samplers = {"gp": optuna.samplers.GPSampler, "tpe": optuna.samplers.TPESampler}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sampler = samplers[self.sampler](seed=seed)
        return optuna, optuna.create_study(direction="minimize", sampler=sampler)

    def prepare_ask(self, X, y, mode, seed, objective):
        optuna, study = self._study(seed)
        from optuna.distributions import FloatDistribution

        names = [f"x{i}" for i in range(X.shape[1])]
        distributions = {name: FloatDistribution(0.0, 1.0) for name in names}
        study.add_trials(
            [
                optuna.trial.create_trial(
                    params=dict(zip(names, row.tolist(), strict=True)),
                    distributions=distributions,
                    value=float(value),
                )
                for row, value in zip(X[:-1], y[:-1], strict=True)
            ]
            + (
                []
                if self.sampler == "gp"
                else [
                    optuna.trial.create_trial(
                        params=dict(zip(names, X[-1].tolist(), strict=True)),
                        distributions=distributions,
                        value=float(y[-1]),
                    )
                ]
            )
        )
        if self.sampler == "gp":  # the GP sampler caches its kernel parameters: one previous step
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                previous = study.ask(distributions)
            study.tell(previous, float(objective(np.array([previous.params[name] for name in names]))))

        def ask():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return study.ask(distributions)

        return ask

    def minimize(self, problem, budget, seed):
        _, study = self._study(seed)
        names = [f"x{i}" for i in range(problem.dim)]
        bounds = problem.bounds

        def objective(trial) -> float:
            x = np.array([trial.suggest_float(n, lo, hi) for n, (lo, hi) in zip(names, bounds, strict=True)])
            return float(problem(x))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study.optimize(objective, n_trials=budget)
        return np.array([t.value for t in study.trials], dtype=np.float64)


# ---------------------------------------------------------------------------------------------- registry
PEERS: dict[str, Callable[[], Method]] = {
    "botorch-logei": lambda: BoTorch("logei"),
    "botorch-ucb": lambda: BoTorch("ucb"),
    "optuna-gp": lambda: OptunaSampler("gp"),
    "optuna-tpe": lambda: OptunaSampler("tpe"),
}

_REQUIRES = {"botorch": ("torch", "botorch", "gpytorch"), "optuna": ("optuna",)}


def resolve_peers(names: list[str] | tuple[str, ...]) -> tuple[list[Method], list[str]]:
    """The peers among ``names`` whose libraries import, and one message per peer skipped.

    Raises ValueError for a name that is not a known peer.
    """
    methods, skipped = [], []
    for name in names:
        if name not in PEERS:
            raise ValueError(f"unknown peer {name!r}; known peers: {', '.join(PEERS)}")
        missing = []
        for module in _REQUIRES[name.split("-")[0]]:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    __import__(module)
            except ImportError:
                missing.append(module)
        if missing:
            skipped.append(
                f"peer {name} skipped: {', '.join(missing)} not installed "
                "(pip install 'warmbo[peers]', or make bench-peers)"
            )
            continue
        methods.append(PEERS[name]())
    return methods, skipped
