"""Transfer-learning baselines for Bayesian optimisation, usable as ``Optimizer(model=...)``.

003 compares Envelope-BO with Generic-BO (no transfer), Collaborative-BO (Bardenet et al. 2013) and
Efficient-BO (Yogatama & Mann 2014); 004 adds diff-GP (Shilton et al. 2017); RGPE (Feurer, Letham &
Bakshy 2018) is here because users compare against it today. Each class states what it follows and
where it simplifies.

Every class is a model in the sense of :class:`~warmbo.Optimizer`, so the optimizer never branches on
the method:

- ``Cls(source, kernel=None, noise=None, seed=None, fit_hyperparameters=True, **method_specific)``
  stores its arguments; ``fit(X, y)`` validates them. ``source`` is an ``(X, y)`` pair, a list of
  pairs or a TaskData (:mod:`warmbo.transfer.sources`), X in the coordinates of the target (the
  optimizer's unit cube).
- ``fit(X, y)`` on *target* data (maximisation convention), ``predict(X) -> (mean, std)`` on the
  target's scale, ``n_observations``, ``X_train_`` and ``y_train_`` (target data only, y as given),
  ``clone()`` (unfitted, same settings; source-only fits are shared between clones),
  ``add(X, y)`` (condition on more target points without refitting hyperparameters),
  ``add_believer(X, noise)`` (the optimizer's pending points: the model told its own mean there), and,
  where the posterior is a GP, ``kernel_`` and ``predict_gradient(x) -> (mean, std, dmean, dstd)``.

Scales. Each source is standardised by its own mean and standard deviation (z-scores,
:func:`~warmbo.transfer.sources.as_sources`); the target by its own mean and standard deviation once
it has >= 3 points. With 1 or 2 target points a standard deviation is no estimate of the spread, so
the target is only centred (its mean, std 1). Sources measured on another scale (accuracy on another
data set) therefore enter through their shape only. Exceptions: :class:`CollaborativeBO` (ranks) and
:class:`DiffGP` with ``standardise=False`` (raw outputs, the papers' shared-scale setting).

Defaults shared by all: the optimizer's default kernel ``Constant(1) * Matern-5/2`` ARD with
lengthscales 0.3 (bounds 1e-2..1e2) and the default GP's settings (ML-II, 2 restarts, a scalar noise
fitted in 1e-6..1 when ``noise`` is None; a given ``noise`` is a fixed variance in standardised
units), see :func:`warmbo.models.ml2_model`. ``fit_hyperparameters=False`` keeps the kernel
(and noise, default 1e-4) as given instead of ML-II: much faster, for large sources or quick runs.

Example (003 Section 4.1: a finished source task centred at 0, the target at 0.1)::

    >>> import numpy as np
    >>> import warmbo as wb
    >>> from warmbo.transfer.baselines import BASELINES
    >>> space = wb.Space.box([(-3.0, 3.0), (-3.0, 3.0)])
    >>> raw = np.random.default_rng(0).uniform(-3, 3, (25, 2))
    >>> source = (space.encode([{"x0": a, "x1": b} for a, b in raw]), np.exp(-0.5 * (raw**2).sum(1)))
    >>> f = lambda p: float(np.exp(-0.5 * ((p["x0"] - 0.1) ** 2 + (p["x1"] - 0.1) ** 2)))
    >>> opt = wb.Optimizer(space, model=BASELINES["rgpe"](source=source), maximize=True, seed=0)
    >>> opt.run(f, budget=6, progress=False).value > 0.9
    True

Why this file is long: it holds the five baselines of 003 (Generic-BO, Efficient-BO, Collaborative-BO,
diff-GP, RGPE), each small, with the shared per-source fitting; one module keeps their common parts in
one place.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import numbers
import threading
import time

import numpy as np
from scipy.stats import rankdata

from .._moments import mean_std
from .._threads import blas_limited, map_limited, source_threads
from .._validation import as_points, as_training_points, as_values, check_int
from ..kernels.base import Kernel
from ..models.base import NotFittedError, RegressorModel
from ..models.defaults import default_model, ml2_model
from ..models.gp import GP, Prediction
from .sources import SourceTask, as_sources

#: RGPE caches its source GPs' predictions at point sets of at least this many rows: a finite space's
#: candidates, which the acquisition search evaluates whole at every ask (HPOBench's grid: 30,000
#: points x 7 source GPs were ~85% of an ask); the L-BFGS-B steps of a continuous search are smaller
_SOURCE_PREDICTIONS_CACHED_FROM = 1024
#: at most this many cached prediction rows in all (two floats each: 32 MiB)
_SOURCE_PREDICTIONS_CACHED_ROWS = 2**21
_SOURCE_PREDICTIONS_LOCK = threading.Lock()  # the store is shared by clones, which threads may hold

__all__ = ["GenericBO", "EfficientBO", "CollaborativeBO", "DiffGP", "RGPE", "BASELINES", "NotFittedError"]


def target_scale(y: np.ndarray) -> tuple[float, float]:
    """The target's standardisation: (mean, std) with >= 3 points, (mean, 1) with fewer (std 1 if flat)."""
    # (mean_std: np.std squares the values and overflowed above |y| ~ 1.3e154)
    mean, std = mean_std(y)
    std = std if y.shape[0] >= 3 else 1.0
    if not (np.isfinite(mean) and np.isfinite(std)):
        raise ValueError("target y values are too large to standardise (their mean or spread overflows)")
    return mean, (std if std > 0 else 1.0)


def _describe_source(source) -> str:
    """A short description for ``repr`` (the optimizer stores the model's repr in the study)."""
    if source is None:
        return "None"
    if hasattr(source, "by_task"):
        return f"{type(source).__name__}"
    if isinstance(source, tuple) and len(source) == 2 and not isinstance(source[0], tuple):
        return f"<{np.shape(source[1])[0] if np.ndim(source[1]) else 1} points>"
    if isinstance(source, list | tuple):
        return f"<{len(source)} sources>"
    return f"<{type(source).__name__}>"


def _target_info_gain(gp: GP, n_source: int) -> float:
    """Information gain of the target points of a GP whose first ``n_source`` rows are source points.

    With the Cholesky factor of ``K + Lambda`` ordered sources first, ``log L_ii^2 - log lam_i`` is
    ``log(1 + sigma^2_{i-1}(x_i) / lam_i)`` given every earlier row, so the target rows sum to the gain
    of the target observations given the sources (002; Srinivas et al. 2010, Lemma 5.3).
    """
    return float(np.sum(gp._info_gain_terms(n_source)))


def _share(obj, memo: dict) -> None:
    """Make ``copy.deepcopy`` reuse ``obj`` and everything inside its containers instead of copying."""
    memo[id(obj)] = obj
    items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, tuple | list) else ()
    for item in items:
        _share(item, memo)


def _points_digest(X: np.ndarray):
    """The key under which RGPE keeps its source GPs' predictions at X, or None for a point set too
    small to keep (:data:`_SOURCE_PREDICTIONS_CACHED_FROM`)."""
    if X.shape[0] < _SOURCE_PREDICTIONS_CACHED_FROM:
        return None
    return (X.shape, hashlib.blake2b(np.ascontiguousarray(X).tobytes(), digest_size=16).digest())


def _believed(gp: GP, X: np.ndarray, noise: float | None) -> GP:
    """A copy of ``gp`` told its own posterior mean at X (the kriging believer), with noise variance
    ``noise`` capped by its noise level (None: that level). A copy: a source GP is shared by clones
    and deep copies of the model (the cache of source-only fits) and must stay as fitted."""
    level = gp.noise_level_
    variance = level if noise is None else float(noise)
    if noise is not None and level is not None:
        variance = min(variance, level)
    out = copy.deepcopy(gp)
    return out.add(X, gp.predict(X)[0], noise=variance)


class _TransferModel(RegressorModel):
    """The model protocol shared by the baselines; subclasses fill in the ``_fit_z`` family of hooks.

    The base class validates inputs, keeps the target data on the user's scale, maps outputs to the
    model scale ``z = (y - y_mean_) / y_std_`` and back, and caches source-only fits across clones.
    """

    _clone_shares = ("_cache",)  # source-only fits do not depend on the target
    _param_names: tuple[str, ...] = ("source", "kernel", "noise", "seed", "fit_hyperparameters")
    _needs_source = True

    def __init__(
        self,
        source=None,
        kernel: Kernel | None = None,
        noise: float | None = None,
        seed=None,
        fit_hyperparameters: bool = True,
    ):
        self.source = source
        self.kernel = kernel
        self.noise = noise
        self.seed = seed
        self.fit_hyperparameters = fit_hyperparameters
        self._cache: dict = {}  # source-only fits, shared by clones (they do not depend on the target)
        self._X: np.ndarray | None = None
        self._y: np.ndarray | None = None

    # ------------------------------------------------------------------ settings
    def __deepcopy__(self, memo):
        # the optimizer deep-copies a fitted model to add fantasies; source-only fits are never
        # modified after fitting, so the copy shares them instead of duplicating every source GP
        _share(self._cache, memo)
        other = type(self).__new__(type(self))
        memo[id(self)] = other
        for key, value in self.__dict__.items():
            setattr(other, key, copy.deepcopy(value, memo))
        return other

    def __repr__(self) -> str:
        parts = [f"source={_describe_source(self.source)}"]
        defaults = {
            k: v.default for k, v in inspect.signature(type(self).__init__).parameters.items() if k != "self"
        }
        for name in self._param_names[1:]:
            value = getattr(self, name)
            if name not in ("kernel", "noise", "seed") and name in defaults and value == defaults[name]:
                continue  # as scikit-learn does: settings left at their defaults are not repeated
            parts.append(f"{name}={'default' if name == 'kernel' and value is None else repr(value)}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def _validate_settings(self) -> None:
        if self.kernel is not None and not isinstance(self.kernel, Kernel):
            raise ValueError(f"kernel must be a warmbo Kernel or None, got {self.kernel!r}")
        if self.noise is not None and (
            isinstance(self.noise, bool)
            or not isinstance(self.noise, numbers.Real)
            or not np.isfinite(self.noise)
            or self.noise < 0
        ):
            raise ValueError(f"noise must be a non-negative variance or None, got {self.noise!r}")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral)
        ):
            raise ValueError(f"seed must be an integer or None, got {self.seed!r}")
        if not isinstance(self.fit_hyperparameters, bool | np.bool_):
            raise ValueError(f"fit_hyperparameters must be True or False, got {self.fit_hyperparameters!r}")

    # ------------------------------------------------------------------ building blocks
    def _gp(self, dim: int, base=ml2_model) -> GP:
        """An unfitted GP with the optimizer's default settings (``base``: :func:`ml2_model`, or
        :func:`default_model` for RGPE's ``map_target``), on outputs standardised here."""
        gp = base(dim, self.seed, self.kernel).clone(normalize_y=False)
        if not self.fit_hyperparameters:
            gp = gp.clone(optimizer=None)
        if self.noise is None:
            return gp
        return gp.clone(noise=float(self.noise), fit_noise=False)

    def _cache_key(self, name: str, dim: int) -> tuple:
        """The key of a source-only fit in ``_cache``: (name, dim, every setting but the source)."""
        return (name, dim, tuple(repr(getattr(self, p)) for p in self._param_names if p != "source"))

    def _cached(self, name: str, dim: int, build):
        """``build()`` once per (name, dim, settings) for the current ``source`` object, shared by clones."""
        key = self._cache_key(name, dim)
        entry = self._cache.get(key)
        if entry is None or entry[0] is not self.source:
            entry = (self.source, build())
            self._cache[key] = entry
        return entry[1]

    def _is_cached(self, name: str, dim: int) -> bool:
        entry = self._cache.get(self._cache_key(name, dim))
        return entry is not None and entry[0] is self.source

    def _sources(self, dim: int) -> list[SourceTask]:
        return self._cached("sources", dim, lambda: as_sources(self.source, dim))

    def _check_fitted(self) -> None:
        if self._X is None:
            raise self._not_fitted()

    # ------------------------------------------------------------------ protocol
    @property
    def n_observations(self) -> int:
        """Number of target points."""
        return 0 if self._X is None else int(self._X.shape[0])

    @property
    def X_train_(self) -> np.ndarray:
        """Target inputs (n, d)."""
        self._check_fitted()
        return self._X

    @property
    def y_train_(self) -> np.ndarray:
        """Target outputs (n,) on the user's scale."""
        self._check_fitted()
        return self._y

    @property
    def input_dim(self) -> int | None:
        return None if self._X is None else int(self._X.shape[1])

    @blas_limited
    def fit(self, X, y):
        """Fit on target data (X, y); sources are validated (and fitted, where needed) on first use.

        Parameters
        ----------
        X : array (n, d)
            Target inputs, in the same coordinates as the source inputs.
        y : array (n,)
            Target outputs (larger is better for the optimizer, but any scale works).

        Returns
        -------
        self
        """
        self._validate_settings()
        self._validate_extra()
        given = X
        X = as_training_points(X, "X")
        y = as_values(y, "y", X.shape[0])
        sources = self._sources(X.shape[1]) if (self._needs_source or self.source is not None) else []
        self.sources_ = sources
        self.y_mean_, self.y_std_ = self._output_scale(y)
        self._fit_z(X, self._model_values(y), sources)
        self._X, self._y = X.copy(), y.copy()
        self._record_features(given)
        return self

    @blas_limited
    def add(self, X_new, y_new):
        """Condition on more target points without refitting hyperparameters (the optimizer's fantasies).

        The target standardisation stays frozen at the values of :meth:`fit`.
        """
        if self._X is None:
            return self.fit(X_new, y_new)
        X_new = as_points(X_new, "X_new", self._X.shape[1])
        y_new = as_values(y_new, "y_new", X_new.shape[0])
        if X_new.shape[0] == 0:
            return self
        self._X = np.vstack([self._X, X_new])
        self._y = np.concatenate([self._y, y_new])
        self._add_z(X_new, (y_new - self.y_mean_) / self.y_std_)
        return self

    @blas_limited
    def add_believer(self, X_new, noise: float | None = None):
        """Condition on the kriging believer at X_new (the optimizer's pending points,
        :func:`warmbo.suggest.suggest`): the model is told its own posterior mean there, so its
        mean stays and its uncertainty at X_new collapses, as a single GP's does.

        Where the posterior is one GP (Generic-BO, Efficient-BO, diff-GP's joint GP at the target's
        rows) or an ensemble of GPs (RGPE: every GP with a weight, the sources' too), each is told its
        own mean with noise variance ``noise`` on its standardised scale, capped by its noise level
        (None: that level); Collaborative-BO, whose GP models ranks that every new point moves,
        adds the mean (:meth:`add`).

        Parameters
        ----------
        X_new : array (k, d)
        noise : float, optional
            Noise variance of the believed values (see above).

        Returns
        -------
        self
        """
        self._check_fitted()
        X_new = as_points(X_new, "X_new", self._X.shape[1])
        if X_new.shape[0] == 0:
            return self
        believed = np.asarray(self.predict(X_new)[0], dtype=np.float64)  # on the target's scale
        self._X = np.vstack([self._X, X_new])
        self._y = np.concatenate([self._y, believed])
        self._believe_z(X_new, (believed - self.y_mean_) / self.y_std_, noise)
        return self

    def predict(self, X):
        """Posterior mean and standard deviation of the target at X (m, d), on the target's scale: a
        :class:`~warmbo.models.gp.Prediction` (it unpacks as the pair and reads as the mean where an
        array is expected, as scikit-learn's scorers read it)."""
        self._check_fitted()
        self._check_features(X)
        X = as_points(X, "X", self._X.shape[1], owner=type(self).__name__)
        mean, std = self._predict_z(X)
        return Prediction(mean * self.y_std_ + self.y_mean_, std * self.y_std_)

    def predict_gradient(self, x) -> tuple[float, float, np.ndarray, np.ndarray]:
        """Mean, std and their gradients with respect to x at one point x (d,), on the target's scale."""
        self._check_fitted()
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        if x.shape[0] != self._X.shape[1]:
            raise ValueError(f"x must have shape ({self._X.shape[1]},), got {x.shape}")
        mean, std, dmean, dstd = self._predict_gradient_z(x)
        scale = self.y_std_
        return float(mean) * scale + self.y_mean_, float(std) * scale, dmean * scale, dstd * scale

    # ------------------------------------------------------------------ hooks
    def _validate_extra(self) -> None:
        """Validate method-specific settings."""

    def _output_scale(self, y: np.ndarray) -> tuple[float, float]:
        """(offset, scale) mapping the model scale to the target's: ``y = offset + scale * z``."""
        return target_scale(y)

    def _model_values(self, y: np.ndarray) -> np.ndarray:
        """Target outputs on the model scale."""
        return (y - self.y_mean_) / self.y_std_

    def _fit_z(self, X, z, sources) -> None:
        raise NotImplementedError

    def _add_z(self, X_new, z_new) -> None:
        raise NotImplementedError

    def _believe_z(self, X_new, z_new, noise) -> None:
        """Condition on the believer ``z_new`` (the model's own mean, model scale) at X_new, after
        ``_X``, ``_y`` got the points; by default as :meth:`add` does (``noise`` unused)."""
        self._add_z(X_new, z_new)

    def _predict_z(self, X):
        raise NotImplementedError

    def _predict_gradient_z(self, x):
        raise NotImplementedError


# ============================================================================ Generic-BO
class GenericBO(_TransferModel):
    """Generic-BO: plain GP regression on the target alone, no transfer (003's Algorithm 1 baseline).

    A GP with the optimizer's default kernel and ML-II hyperparameters on the standardised target data
    (module docstring). ``source`` is ignored (None allowed; a given source is still validated, so a
    comparison harness that passes the same source to every baseline gets the same errors).

    Attributes
    ----------
    gp_ : GP
        The target GP on standardised outputs.
    kernel_ : Kernel
        Its fitted kernel.
    """

    _needs_source = False

    def _fit_z(self, X, z, sources) -> None:
        self.gp_ = self._gp(X.shape[1]).fit(X, z)

    def _add_z(self, X_new, z_new) -> None:
        self.gp_.add(X_new, z_new)

    def _believe_z(self, X_new, z_new, noise) -> None:
        self.gp_ = _believed(self.gp_, X_new, noise)

    def _predict_z(self, X):
        return self.gp_.predict(X)

    def _predict_gradient_z(self, x):
        return self.gp_.predict_gradient(x)

    @property
    def kernel_(self) -> Kernel:
        self._check_fitted()
        return self.gp_.kernel_

    def info_gain(self) -> float:
        """``1/2 log det(I + Lambda^{-1} K_t)`` of the target points (for IGP-UCB schedules)."""
        self._check_fitted()
        return self.gp_.info_gain()


# ============================================================================ Efficient-BO
class EfficientBO(_TransferModel):
    """Efficient-BO (Yogatama & Mann 2014): one GP on every task's deviations from its own mean.

    Yogatama & Mann model the response of each task as the task's mean plus a deviation common to all
    tasks, and fit one GP to the deviations of all tasks' observations (003 Section 1: "modeling the
    deviations from the average performance of different hyperparameters per task"). Here:

    - each source's outputs are normalised by its own mean and standard deviation, the target's by its
      own (module docstring: only centred while it has < 3 points);
    - one GP (default kernel, ML-II on all points, one noise level) is fitted to the normalised outputs
      of the sources and the target together, with no task indicator in the inputs;
    - predictions are mapped back with the target's mean and standard deviation.

    Simplification: Yogatama & Mann also use data-set meta-features (nearest neighbours) to relate a
    new task to past ones; here the sources are given explicitly, there are no meta-features, every
    source is used, and the target's mean and spread are its sample statistics.

    Attributes
    ----------
    gp_ : GP
        The common GP; its first ``n_source_`` rows are source points.
    n_source_ : int
    kernel_ : Kernel
    """

    def _fit_z(self, X, z, sources) -> None:
        Xs = np.vstack([task.X for task in sources])
        zs = np.concatenate([task.z for task in sources])
        self.n_source_ = int(zs.shape[0])
        self.gp_ = self._gp(X.shape[1]).fit(np.vstack([Xs, X]), np.concatenate([zs, z]))

    def _add_z(self, X_new, z_new) -> None:
        self.gp_.add(X_new, z_new)

    def _believe_z(self, X_new, z_new, noise) -> None:
        self.gp_ = _believed(self.gp_, X_new, noise)

    def _predict_z(self, X):
        return self.gp_.predict(X)

    def _predict_gradient_z(self, x):
        return self.gp_.predict_gradient(x)

    @property
    def kernel_(self) -> Kernel:
        self._check_fitted()
        return self.gp_.kernel_

    def info_gain(self) -> float:
        """Information gain of the target points given the source points (:func:`_target_info_gain`)."""
        self._check_fitted()
        return _target_info_gain(self.gp_, self.n_source_)


# ============================================================================ Collaborative-BO
def rank_scores(y: np.ndarray) -> np.ndarray:
    """Within-task ranks (ties averaged) as z-scores; all zeros for one point or a constant task."""
    y = np.asarray(y, dtype=np.float64)
    if y.shape[0] < 2:
        return np.zeros(y.shape[0])
    ranks = rankdata(y)
    spread = float(np.std(ranks))
    if spread == 0:
        return np.zeros(y.shape[0])
    return (ranks - float(np.mean(ranks))) / spread


class CollaborativeBO(_TransferModel):
    """Collaborative-BO (Bardenet, Brendel, Kegl & Sebag 2013, "SCoT"): one surrogate of rankings.

    Bardenet et al. make the tasks comparable by modelling *rankings* of configurations rather than
    their values: a ranking model (SVMRank on hyperparameters and data-set meta-features) is trained on
    all tasks, and a GP fitted to the ranking model's outputs drives EI (003 Section 1: "a GP is used
    to build a common ranking scheme for hyperparameters from different tasks", assuming the ranking
    is shared).

    Faithful-but-practical simplification used here:

    - every task's outputs (sources and target) are replaced by their within-task ranks, as z-scores
      (:func:`rank_scores`; ties averaged), which makes tasks on any scale comparable;
    - one GP (default kernel, ML-II) on the inputs x alone is fitted to the rank scores of all points:
      no SVMRank and no task features, so the ranking surface is shared by all tasks (the strong
      similarity assumption 003 attributes to the method);
    - predictions go back to the target's scale through the least-squares line of the target's y on
      its rank scores, ``y ~ y_mean_ + y_std_ * r`` (slope ``mean((y - ybar) r) >= 0``; with one target
      point or a flat target, its value and slope 1). The mean is then exact up to that line's residual
      and the standard deviation is the rank GP's, scaled by the slope.

    :meth:`add` recomputes the target's ranks and the line with the new points and re-conditions the
    GP with its hyperparameters unchanged (ranks of earlier points move when a point is added).

    Known weakness of this simplification: rank scores are absolute within each task's own sample, so
    the target's best point so far gets the top score even when it is far from the optimum, and the
    shared surface is pulled toward it; SVMRank only constrains the order of pairs within a task.
    On 003's synthetic problem this makes it the slowest transfer baseline here (see the tests).

    Attributes
    ----------
    gp_ : GP
        The GP on rank scores (first ``n_source_`` rows are source points).
    y_mean_, y_std_ : float
        Intercept and slope of the rank-to-target line.
    """

    def _output_scale(self, y: np.ndarray) -> tuple[float, float]:
        ranks = rank_scores(y)
        mean = float(np.mean(y))
        slope = float(np.mean((y - mean) * ranks))  # least squares: the rank scores have mean 0, std 1
        return mean, (slope if slope > 0 else 1.0)

    def _model_values(self, y: np.ndarray) -> np.ndarray:
        return rank_scores(y)

    def _fit_z(self, X, z, sources) -> None:
        Xs = np.vstack([task.X for task in sources])
        rs = np.concatenate([rank_scores(task.y) for task in sources])
        self.n_source_ = int(rs.shape[0])
        self._Xs, self._rs = Xs, rs
        self.gp_ = self._gp(X.shape[1]).fit(np.vstack([Xs, X]), np.concatenate([rs, z]))

    def _add_z(self, X_new, z_new) -> None:
        # the base class has appended the new points to self._X, self._y: rebuild ranks and the line
        self.y_mean_, self.y_std_ = self._output_scale(self._y)
        gp = self.gp_
        fixed = gp.clone(kernel=gp.kernel_, optimizer=None, noise=gp.noise_level_, fit_noise=False)
        self.gp_ = fixed.fit(np.vstack([self._Xs, self._X]), np.concatenate([self._rs, rank_scores(self._y)]))

    def _predict_z(self, X):
        return self.gp_.predict(X)

    def _predict_gradient_z(self, x):
        return self.gp_.predict_gradient(x)

    @property
    def kernel_(self) -> Kernel:
        self._check_fitted()
        return self.gp_.kernel_

    def info_gain(self) -> float:
        """Information gain of the target points given the source points (:func:`_target_info_gain`)."""
        self._check_fitted()
        return _target_info_gain(self.gp_, self.n_source_)


# ============================================================================ diff-GP
class _DiffKernel(Kernel):
    """Covariance of (g, f = g + d) on inputs with a last column t: 0 for g (source), 1 for f (target).

    .. math:: k((x, t), (x', t')) = k_g(x, x') + t t' k_d(x, x').

    Private to :class:`DiffGP`: it lets one :class:`~warmbo.GP` hold the exact joint posterior.
    """

    def __init__(self, source: Kernel, difference: Kernel):
        self._set(source=source, difference=difference)

    def _parameters(self) -> dict:
        return {"source": self.source, "difference": self.difference}

    def evaluate(self, X, Y):
        x, y = X[:, :-1], Y[:, :-1]
        return self.source.evaluate(x, y) + np.outer(X[:, -1], Y[:, -1]) * self.difference.evaluate(x, y)

    def diag(self, X):
        return self.source.diag(X[:, :-1]) + X[:, -1] ** 2 * self.difference.diag(X[:, :-1])

    @property
    def has_gradient_x(self) -> bool:
        return self.source.has_gradient_x and self.difference.has_gradient_x

    def gradient_x(self, x, X):
        t, T = x[-1], X[:, -1]
        dx = self.source.gradient_x(x[:-1], X[:, :-1])
        dx = dx + (t * T)[:, None] * self.difference.gradient_x(x[:-1], X[:, :-1])
        dt = T * self.difference.evaluate(x[None, :-1], X[:, :-1])[0]
        return np.hstack([dx, dt[:, None]])

    def diag_gradient_x(self, x):
        t = x[-1]
        dx = self.source.diag_gradient_x(x[:-1]) + t**2 * self.difference.diag_gradient_x(x[:-1])
        dt = 2 * t * self.difference.diag(x[None, :-1])[0]
        return np.append(dx, dt)


def _with_task(X: np.ndarray, task: float) -> np.ndarray:
    return np.hstack([X, np.full((X.shape[0], 1), task)])


class DiffGP(_TransferModel):
    """diff-GP (Shilton, Gupta, Rana & Venkatesh 2017): the target is the source plus a GP difference.

    The target is modelled as ``f = g + d`` with g the source function, ``g ~ GP(m_g, k_g)`` fitted
    to the source data, and an independent difference ``d ~ GP(shift, k_d)`` fitted to the residuals
    ``y_t - mu_g(x_t)`` at the target points. Hyperparameters: k_g by ML-II on the source (once,
    shared by clones), k_d by ML-II on the residuals (``residual_model_``).

    Posterior, and the source variance. It is included, exactly: the prediction is the posterior of f
    given the source data (observations of g) and the target data (observations of g + d), one GP over
    both with the block covariance ``[[K_g, K_g], [K_g, K_g + K_d]]`` (:class:`_DiffKernel`). Away from
    the target points it is the sum of the two separate posteriors,

    .. math:: \\mu(x) \\approx \\mu_g(x) + \\mu_d(x), \\qquad
              \\sigma^2(x) \\approx \\sigma_g^2(x) + \\sigma_d^2(x),

    and at the target points the target data also condition g, so the uncertainty collapses there.
    (The naive sum of the two separate posteriors keeps the source's uncertainty at points where the
    target was observed: an observed point looks as uncertain as an unobserved one, and fantasised
    points in a batch do not push the next point away.)

    Choices where the paper leaves room:

    - Several sources: their data are concatenated into one source data set for g (each source
      z-scored first when ``standardise``).
    - ``standardise=True`` (default): sources are z-scored, the target standardised by its own
      statistics (module docstring), so g and the target are compared in standard units.
      ``standardise=False``: raw outputs, the papers' setting where source and target share one
      scale (then the kernel's amplitude bounds must suit that scale).
    - Constant means: g has prior mean ``source_offset_`` (the mean of its training outputs) and d the
      mean residual ``shift_``, so a target that is the source plus a constant is recovered everywhere,
      not only near the target points.

    Parameters
    ----------
    standardise : bool
        Separate z-scores (True) or raw outputs on a shared scale (False).

    Attributes
    ----------
    source_model_ : GP
        g fitted to the source alone (shared by clones), on outputs centred by ``source_offset_``.
    residual_model_ : GP
        The ML-II fit of d to the centred residuals (its kernel and noise are used in ``gp_``).
    shift_ : float
        Mean residual (model scale): the constant part of target minus source.
    gp_ : GP
        The joint posterior; its inputs carry a last column 0 (source rows, first) or 1 (target rows).
    kernel_ : Kernel
        ``k_g + k_d``, the prior covariance of the target function f.
    """

    _param_names = (*_TransferModel._param_names, "standardise")

    def __init__(
        self,
        source=None,
        kernel=None,
        noise=None,
        seed=None,
        fit_hyperparameters: bool = True,
        standardise: bool = True,
    ):
        super().__init__(source, kernel, noise, seed, fit_hyperparameters)
        self.standardise = standardise

    def _validate_extra(self) -> None:
        if not isinstance(self.standardise, bool | np.bool_):
            raise ValueError(f"standardise must be True or False, got {self.standardise!r}")

    def _output_scale(self, y: np.ndarray) -> tuple[float, float]:
        return target_scale(y) if self.standardise else (0.0, 1.0)

    def _source_fit(self, sources, dim: int) -> tuple[float, GP, np.ndarray, np.ndarray]:
        def build():
            Xs = np.vstack([task.X for task in sources])
            values = np.concatenate([task.z if self.standardise else task.y for task in sources])
            offset = float(np.mean(values))
            return (offset, self._gp(dim).fit(Xs, values - offset), Xs, values - offset)

        return self._cached("source_model", dim, build)

    def _fit_z(self, X, z, sources) -> None:
        self.source_offset_, self.source_model_, Xs, source_values = self._source_fit(sources, X.shape[1])
        residual = z - self.source_model_.predict(X)[0] - self.source_offset_
        self.shift_ = float(np.mean(residual))
        self.residual_model_ = self._gp(X.shape[1]).fit(X, residual - self.shift_)
        g, d = self.source_model_, self.residual_model_
        self._target_noise = float(d.noise_[0])
        self.n_source_ = int(Xs.shape[0])
        joint = GP(_DiffKernel(g.kernel_, d.kernel_), noise=np.concatenate([g.noise_, d.noise_]))
        self.gp_ = joint.fit(
            np.vstack([_with_task(Xs, 0.0), _with_task(X, 1.0)]),
            np.concatenate([source_values, z - self.source_offset_ - self.shift_]),
        )

    def _add_z(self, X_new, z_new) -> None:
        offset = self.source_offset_ + self.shift_
        self.gp_.add(_with_task(X_new, 1.0), z_new - offset, noise=self._target_noise)

    def _believe_z(self, X_new, z_new, noise) -> None:
        # the joint GP at the target's rows, never noisier than a target observation
        cap = self._target_noise if noise is None else min(float(noise), self._target_noise)
        self.gp_ = _believed(self.gp_, _with_task(X_new, 1.0), cap)

    def _predict_z(self, X):
        mean, std = self.gp_.predict(_with_task(X, 1.0))
        return mean + self.source_offset_ + self.shift_, std

    def _predict_gradient_z(self, x):
        mean, std, dmean, dstd = self.gp_.predict_gradient(np.append(x, 1.0))
        return mean + self.source_offset_ + self.shift_, std, dmean[:-1], dstd[:-1]

    @property
    def kernel_(self) -> Kernel:
        self._check_fitted()
        return self.source_model_.kernel_ + self.residual_model_.kernel_

    def info_gain(self) -> float:
        """Information gain of the target points given the source points (:func:`_target_info_gain`)."""
        self._check_fitted()
        return _target_info_gain(self.gp_, self.n_source_)


# ============================================================================ RGPE
def _sample_gaussian(mean: np.ndarray, cov: np.ndarray, n_samples: int, rng) -> np.ndarray:
    """(n_samples, m) draws from N(mean, cov); a symmetric square root, so singular cov is fine."""
    values, vectors = np.linalg.eigh((cov + cov.T) / 2)
    root = vectors * np.sqrt(np.maximum(values, 0.0))
    return mean + rng.standard_normal((n_samples, mean.shape[0])) @ root.T


def ranking_loss(samples: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Misranked ordered pairs ``sum_{j,k} 1[(f(x_j) < f(x_k)) xor (y_j < y_k)]``: (S, n) draws -> (S,)."""
    order = y[:, None] < y[None, :]
    wrong = (samples[:, :, None] < samples[:, None, :]) ^ order
    return wrong.sum(axis=(1, 2))


def loo_ranking_loss(samples: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Leave-one-out ranking loss (S, n, n) -> (S,): ``samples[s, j]`` is a joint draw of the model
    fitted without point j at all n points, and its value at x_j is ranked against the others."""
    order = y[:, None] < y[None, :]
    own = np.einsum("sjj->sj", samples)
    wrong = (own[:, :, None] < samples) ^ order
    return wrong.sum(axis=(1, 2))


class RGPE(_TransferModel):
    """RGPE (Feurer, Letham & Bakshy 2018): ranking-weighted ensemble of per-task GPs.

    One GP per source, fitted once to that source's z-scores with ML-II hyperparameters (shared by
    clones), and one GP on the standardised target. Each model i gets a weight from how well it ranks
    the target's observations: the ranking loss ``sum_{j,k} 1[(f_i(x_j) < f_i(x_k)) xor (y_j < y_k)]``
    is evaluated on ``n_samples`` joint posterior draws of each model at the target points (the target
    model in leave-one-out form: the draw at x_j comes from the target GP without point j, with its
    hyperparameters unchanged), and ``w_i`` is the fraction of draws in which model i has the lowest
    loss (ties share the draw equally). The ensemble's prediction is

    .. math:: \\mu(x) = \\sum_i w_i \\mu_i(x), \\qquad \\sigma^2(x) = \\sum_i w_i^2 \\sigma_i^2(x).

    Details and simplifications:

    - Weight dilution prevention (``prevent_dilution``, on by default): a source model whose median loss
      over the draws exceeds the 95th percentile of the target model's losses gets weight 0, as
      proposed by Feurer et al.
    - Draws use a fixed seed (``seed``, or 0 when None), so the weights are deterministic.
    - With fewer than 2 target points there is no pair to rank: equal weights.
    - :meth:`add` conditions the target GP on the new points and keeps the weights of the last
      :meth:`fit`. When the target weight is 0 the ensemble ignores target data, so added points do
      not change its predictions (that is RGPE's behaviour, not a bug of the update).
      :meth:`add_believer` (the optimizer's pending points) conditions every weighted GP instead.
    - ``kernel_`` is the target GP's kernel (the source GPs' are in ``source_models_``); the ensemble
      is a weighted sum of independent GPs, so ``predict_gradient`` is exact.

    Parameters
    ----------
    n_samples : int
        Posterior draws S for the weights (256).
    prevent_dilution : bool
        Drop source models that rank much worse than the target model.
    source_fit_points : int or None
        Rows of each source used to fit its hyperparameters (100; the GP then conditions on all its
        rows); None uses every row (exact, O(n^3) per likelihood evaluation).
    map_target : bool
        Fit the target GP as the optimizer's default model does (MAP under the dimension-scaled
        priors, a fitted constant mean: :func:`~warmbo.models.default_model`) instead of ML-II
        (False, RGPE as published; True in ``transfer="auto"``). When the sources lose their
        weight the ensemble is the target GP alone, and ML-II on a few clustered points ran
        lengthscales to their bounds (bench/useless_sources.py, docs/transfer.md).

    Attributes
    ----------
    weights_ : ndarray (n_sources + 1,)
        Ensemble weights, the target model last; they sum to 1.
    sources_weight_ : float
        The sources' share of the ensemble, ``sum(weights_[:-1])``: 0 when the target GP alone ranks
        the target's observations best in every draw.
    ranking_losses_ : ndarray (n_sources + 1, n_samples)
    source_models_ : tuple of GP
    target_model_ : GP
    """

    _param_names = (
        *_TransferModel._param_names,
        "n_samples",
        "prevent_dilution",
        "source_fit_points",
        "map_target",
        "align_sources",
    )
    #: sources are modelled one GP each, so the optimizer caps prior rows per source, not in total
    separate_sources = True

    def __init__(
        self,
        source=None,
        kernel=None,
        noise=None,
        seed=None,
        fit_hyperparameters: bool = True,
        n_samples: int = 256,
        prevent_dilution: bool = True,
        source_fit_points: int | None = 100,
        map_target: bool = False,
        align_sources: bool = False,
    ):
        super().__init__(source, kernel, noise, seed, fit_hyperparameters)
        self.n_samples = n_samples
        self.prevent_dilution = prevent_dilution
        self.source_fit_points = source_fit_points
        self.map_target = map_target
        self.align_sources = align_sources

    def _validate_extra(self) -> None:
        if (
            isinstance(self.n_samples, bool)
            or not isinstance(self.n_samples, numbers.Integral)
            or self.n_samples < 1
        ):
            raise ValueError(f"n_samples must be a positive integer, got {self.n_samples!r}")
        if not isinstance(self.prevent_dilution, bool | np.bool_):
            raise ValueError(f"prevent_dilution must be True or False, got {self.prevent_dilution!r}")
        if not isinstance(self.map_target, bool | np.bool_):
            raise ValueError(f"map_target must be True or False, got {self.map_target!r}")
        if not isinstance(self.align_sources, bool | np.bool_):
            raise ValueError(f"align_sources must be True or False, got {self.align_sources!r}")
        if self.source_fit_points is not None:
            check_int(self.source_fit_points, "source_fit_points (or None)", 10)

    def _source_models(self, sources, dim: int) -> tuple[GP, ...]:
        # the GPs not built yet, on several threads (each is independent and deterministic, so the
        # result is the same on one): at 100 sources x 1000 rows conditioning them took ~2.5 s of
        # the first ask of every `warmbo suggest` on one core
        missing = [i for i in range(len(sources)) if not self._is_cached(f"source_gp:{i}", dim)]
        threads = source_threads() if len(missing) > 1 else 1
        if threads > 1:
            # the hyperparameter fits here, one after another (they are mostly Python, and a fit
            # swaps the process-wide warning filters, which threads must not do at once); only the
            # conditioning on every row, the O(rows^3) part, on the threads
            ready = {i: self._source_gp_to_condition(sources[i], dim, i) for i in missing}
            fixed = [i for i in missing if ready[i].optimizer is None]
            built = dict(
                zip(
                    fixed,
                    map_limited(lambda i: ready[i].fit(sources[i].X, sources[i].z), fixed, threads),
                    strict=True,
                )
            )
            for i in missing:
                gp = built[i] if i in built else ready[i].fit(sources[i].X, sources[i].z)
                self._cached(f"source_gp:{i}", dim, lambda gp=gp: gp)
        return tuple(self._source_model(i, task, dim) for i, task in enumerate(sources))

    def _source_model(self, i: int, task, dim: int) -> GP:
        return self._cached(f"source_gp:{i}", dim, lambda: self._source_gp(task, dim, i))

    def source_fits(self, dim: int, partial: bool = False) -> list[dict | None] | None:
        """The source GPs' fitted hyperparameters, ``[{"theta": [...], "noise": float or None}]`` in
        source order (JSON-able; the optimizer stores them with the study), or None while some
        source GP is not fitted yet; with ``partial``, None in the place of each source GP not
        fitted yet (None when none is). :meth:`restore_source_fits` hands them to a later object."""
        fits: list[dict | None] = []
        restored = self._restored(dim)
        for i in range(len(self._sources(dim))):
            entry = self._cache.get(self._cache_key(f"source_gp:{i}", dim))
            if entry is None or entry[0] is not self.source:
                if restored[i] is not None:  # (handed over, not built yet here: kept as it was)
                    theta, noise = restored[i]
                    fits.append({"theta": [float(v) for v in theta], "noise": noise})
                    continue
                if not partial:
                    return None
                fits.append(None)
                continue
            gp = entry[1]
            noise = None if self.noise is not None or gp.noise_level_ is None else float(gp.noise_level_)
            fits.append({"theta": [float(v) for v in gp.kernel_.theta], "noise": noise})
        return fits if any(f is not None for f in fits) else None

    def restore_source_fits(self, fits: list[dict], dim: int) -> bool:
        """Use hyperparameters from :meth:`source_fits` (of an object with the same sources and
        settings) instead of fitting the source GPs again: each source GP is then only conditioned on
        its rows, O(rows^3) once instead of an ML-II search. An entry None (a partial record, stored
        while the optimizer's design asks fitted the sources a few at a time) leaves that source GP
        to be fitted here. Returns False, and restores nothing, when they do not fit these sources
        (another number of sources or of hyperparameters)."""
        kernel = self._gp(dim).kernel
        if not isinstance(fits, list) or len(fits) != len(self._sources(dim)):
            return False
        restored: list[tuple[np.ndarray, float | None] | None] = []
        try:
            for f in fits:
                if f is None:
                    restored.append(None)
                    continue
                theta = np.asarray(f["theta"], dtype=np.float64)
                noise = None if f.get("noise") is None else float(f["noise"])
                if theta.shape != (kernel.n_theta,) or not np.all(np.isfinite(theta)):
                    return False
                if noise is not None and not (np.isfinite(noise) and noise >= 0):
                    return False
                restored.append((theta, noise))
        except (KeyError, TypeError, ValueError, AttributeError):
            return False
        self._cache[("restored_fits", dim)] = (self.source, restored)
        return True

    def prepare(self, dim: int, seconds: float) -> bool:
        """Fit source GPs ahead of the first :meth:`fit`, for about ``seconds`` at most (the optimizer
        calls this during its design asks, while the user evaluates, so no single ask pays for every
        source at once). Returns True once every source GP is ready (they are cached and shared by
        clones, so a later fit reuses them)."""
        start = time.perf_counter()
        tasks = self._sources(dim)
        restored = self._restored(dim)
        # the ML-II fits first (a process that asks once, `warmbo suggest`, keeps them in the study),
        # then the sources whose fits were restored (each only conditioned: cheap, and kept by no one);
        # at least one per call, so that a design ask that took its whole budget still makes progress
        order = [i for i in range(len(tasks)) if restored[i] is None]
        order += [i for i in range(len(tasks)) if restored[i] is not None]
        for i in order:
            if self._is_cached(f"source_gp:{i}", dim):
                continue
            self._source_model(i, tasks[i], dim)
            if time.perf_counter() - start > seconds:
                break
        return all(self._is_cached(f"source_gp:{i}", dim) for i in range(len(tasks)))

    def _restored(self, dim: int) -> list:
        """Per source, the ``(theta, noise)`` handed over by :meth:`restore_source_fits`, or None."""
        n = len(self._sources(dim))
        entry = self._cache.get(("restored_fits", dim))
        if entry is None or entry[0] is not self.source or not self.fit_hyperparameters:
            return [None] * n
        return list(entry[1])

    def _source_gp(self, task, dim: int, i: int | None = None) -> GP:
        """One source's GP. Its ML-II hyperparameters come from at most ``source_fit_points`` of its
        rows (a seeded subset); the GP is then conditioned on all of them with those hyperparameters.
        Exact ML-II on every row costs O(n^3) per likelihood evaluation (0.6 s for 300 rows in 4-d, so
        23 s for 50 sources at the first model ask); on 100 rows it is ~0.06 s, and the posterior
        still uses every row. The subset fit starts once, from the default starting point, without
        random restarts. ``source_fit_points=None`` fits exactly as the target GP is fitted (every row,
        with restarts); bench/transfer_scale.py measures the difference.
        """
        return self._source_gp_to_condition(task, dim, i).fit(task.X, task.z)

    def _source_gp_to_condition(self, task, dim: int, i: int | None = None) -> GP:
        """The unfitted GP that :meth:`_source_gp` fits to all the source's rows: with its
        hyperparameters fixed (``optimizer`` None; restored, or fitted here on a subset of rows), so
        that fitting it only conditions it, or still to be fitted (a source within
        ``source_fit_points`` rows, ``source_fit_points=None``)."""
        gp = self._gp(dim)
        restored = None if i is None else self._restored(dim)[i]
        if restored is not None:
            theta, noise = restored  # hyperparameters an earlier object fitted (source_fits)
            fixed = gp.clone(kernel=gp.kernel.with_theta(theta), optimizer=None)
            return fixed if noise is None else fixed.clone(noise=noise, fit_noise=False)
        cap = self.source_fit_points
        if cap is None or not self.fit_hyperparameters:
            return gp
        gp = gp.clone(n_restarts=0)  # one start: ~20 ms instead of ~55 ms per source (2 cores)
        if len(task) <= cap:
            return gp
        rows = np.random.default_rng(0 if self.seed is None else self.seed).choice(
            len(task), cap, replace=False
        )
        fitted = gp.fit(task.X[rows], task.z[rows])
        fixed = fitted.clone(kernel=fitted.kernel_, optimizer=None)
        return (
            fixed if fitted.noise_level_ is None else fixed.clone(noise=fitted.noise_level_, fit_noise=False)
        )

    def _target_gp(self, dim: int) -> GP:
        """The unfitted target GP: :meth:`_gp`, or with ``map_target`` the optimizer's default model
        (on the z-scores standardised here, with the same fixed-noise and no-fit settings)."""
        return self._gp(dim, default_model if self.map_target else ml2_model)

    @property
    def sources_weight_(self) -> float:
        """The sources' share of the ensemble (``sum(weights_[:-1])``)."""
        if getattr(self, "weights_", None) is None:
            raise self._not_fitted()
        return float(np.sum(self.weights_[:-1]))

    def _fit_z(self, X, z, sources) -> None:
        self.source_models_ = self._source_models(sources, X.shape[1])
        self.target_model_ = self._target_gp(X.shape[1]).fit(X, z)
        self.ranking_losses_ = self._ranking_losses(X, z)
        self.weights_ = self._weights(self.ranking_losses_, X.shape[0])
        self.alignment_ = self._alignment(X, z)

    def _alignment(self, X, z) -> np.ndarray:
        """``(a_i, b_i)`` per source (rows): its GP's mean as ``a_i mu_i + b_i`` on the target's
        scale. Identity unless ``align_sources``; then the least-squares line through
        ``(mu_i(x_j), z_j)`` over the target's observations, ``a_i >= 0`` (ranking, which sets the
        weights, is unchanged by it), with at least 3 observations and a source mean that varies
        across them."""
        out = np.tile([1.0, 0.0], (len(self.source_models_), 1))
        if not self.align_sources or X.shape[0] < 3:
            return out
        for i, model in enumerate(self.source_models_):
            mu = model.predict(X)[0]
            spread = mu - mu.mean()
            if float(spread @ spread) <= 1e-12:
                continue
            a = max(float(spread @ (z - z.mean()) / (spread @ spread)), 0.0)
            out[i] = (a, float(z.mean() - a * mu.mean()))
        return out

    def _ranking_losses(self, X, z) -> np.ndarray:
        n, S = X.shape[0], int(self.n_samples)
        losses = np.zeros((len(self.source_models_) + 1, S))
        if n < 2:
            return losses
        rng = np.random.default_rng(0 if self.seed is None else self.seed)
        for i, model in enumerate(self.source_models_):
            mean, cov = model.predict(X, return_cov=True)
            losses[i] = ranking_loss(_sample_gaussian(mean, cov, S, rng), z)
        target = self.target_model_
        loo = target.clone(kernel=target.kernel_, optimizer=None, noise=target.noise_level_, fit_noise=False)
        draws = np.empty((S, n, n))
        for j in range(n):
            keep = np.arange(n) != j
            mean, cov = loo.fit(X[keep], z[keep]).predict(X, return_cov=True)
            draws[:, j, :] = _sample_gaussian(mean, cov, S, rng)
        losses[-1] = loo_ranking_loss(draws, z)
        return losses

    def _weights(self, losses: np.ndarray, n: int) -> np.ndarray:
        losses = losses.astype(np.float64)
        if self.prevent_dilution and n >= 2:
            threshold = np.percentile(losses[-1], 95)
            dropped = np.median(losses[:-1], axis=1) > threshold
            losses[:-1][dropped] = np.inf
        best = losses == losses.min(axis=0, keepdims=True)
        return (best / best.sum(axis=0, keepdims=True)).mean(axis=1)

    def _members(self):
        return [*self.source_models_, self.target_model_]

    def _add_z(self, X_new, z_new) -> None:
        self.target_model_.add(X_new, z_new)

    def _believe_z(self, X_new, z_new, noise) -> None:
        # every GP with a weight, at its own mean, so the ensemble's mean stays and its uncertainty
        # at X_new collapses. add() conditions only the target GP (right for target observations,
        # which the source GPs do not model), so a fantasy changed the ensemble's variance only
        # through the target's weight: with the sources at 0.8 of it, the standard deviation at a
        # pending point went from 0.062 to 0.058 and ask(4) put points 0.08 mM apart on 0-20 mM
        members = [
            _believed(model, X_new, noise) if weight > 0 else model
            for weight, model in zip(self.weights_, self._members(), strict=True)
        ]
        self.source_models_, self.target_model_ = tuple(members[:-1]), members[-1]

    def _predict_z(self, X):
        mean = np.zeros(X.shape[0])
        var = np.zeros(X.shape[0])
        digest = _points_digest(X)
        n_sources = len(self.source_models_)
        for i, (weight, model) in enumerate(zip(self.weights_, self._members(), strict=True)):
            if weight == 0:
                continue
            mu, sigma = self._source_moments(i, X, digest) if i < n_sources else model.predict(X)
            mean += weight * mu
            var += weight**2 * sigma**2
        return mean, np.sqrt(var)

    def transfer_acquisition(self, incumbent: str = "best", xi: float = 0.0, space=None):
        """The transfer acquisition function of this ensemble (:mod:`warmbo.transfer.taf`), bound:
        what :class:`~warmbo.acquisition.TAF` asks of a model, EI's ``incumbent`` and ``xi``."""
        self._check_fitted()
        from .taf import TransferAcquisition

        return TransferAcquisition(self, incumbent, xi, space)

    def source_means(self, X, indices) -> list[tuple[np.ndarray, np.ndarray]]:
        """The mean and standard deviation at X (m, d) of each source GP in ``indices``, on the
        ensemble's standardised scale (aligned, with ``align_sources``), as :meth:`predict` uses them
        (kept for large point sets, whose digest is taken once for all of them)."""
        X = np.asarray(X, dtype=np.float64)
        digest = _points_digest(X)
        return [self._source_moments(i, X, digest) for i in indices]

    def _source_moments(self, i: int, X: np.ndarray, digest) -> tuple[np.ndarray, np.ndarray]:
        """Source GP ``i``'s aligned moments at X; from the cache when ``digest`` is given."""
        model = self.source_models_[i]
        mu, sigma = model.predict(X) if digest is None else self._source_predictions(i, model, X, digest)
        a, b = self._aligned(i)
        return a * mu + b, a * sigma

    def source_mean_gradient(self, i: int, x) -> tuple[float, np.ndarray]:
        """Source GP ``i``'s mean at one point x (d,) and its gradient, as :meth:`source_means` scales it."""
        mu, _, dmu, _ = self.source_models_[i].predict_gradient(np.asarray(x, dtype=np.float64))
        a, b = self._aligned(i)
        return a * float(mu) + b, a * np.asarray(dmu, dtype=np.float64)

    def _aligned(self, i: int) -> tuple[float, float]:
        alignment = getattr(self, "alignment_", None)
        return (1.0, 0.0) if alignment is None else (float(alignment[i, 0]), float(alignment[i, 1]))

    def _source_predictions(self, i: int, model: GP, X: np.ndarray, digest) -> tuple[np.ndarray, np.ndarray]:
        """Source GP ``i``'s ``predict(X)``, kept for point sets seen before (identified by
        ``digest``, a hash of X's bytes): a source GP never changes once fitted, so a finite space's
        candidates (evaluated in chunks at every ask) cost one prediction per source and chunk for
        the whole study. Shared by clones, as the source GPs are; at most
        ``_SOURCE_PREDICTIONS_CACHED_ROWS`` rows in all (oldest dropped first)."""
        with _SOURCE_PREDICTIONS_LOCK:
            store = self._cache.setdefault("source_predictions", {})
            entry = store.get((i, digest))
        if entry is not None and entry[0] is model:
            return entry[1]
        mu, sigma = model.predict(X)
        mu.flags.writeable = False
        sigma.flags.writeable = False
        with _SOURCE_PREDICTIONS_LOCK:
            store[(i, digest)] = (model, (mu, sigma))
            rows = sum(value[1][0].shape[0] for value in store.values())
            while rows > _SOURCE_PREDICTIONS_CACHED_ROWS and len(store) > 1:
                oldest = next(iter(store))  # dicts keep insertion order
                rows -= store.pop(oldest)[1][0].shape[0]
        return mu, sigma

    def _predict_gradient_z(self, x):
        mean, var = 0.0, 0.0
        dmean = np.zeros_like(x)
        dvar = np.zeros_like(x)
        n_sources = len(self.source_models_)
        for i, (weight, model) in enumerate(zip(self.weights_, self._members(), strict=True)):
            if weight == 0:
                continue
            mu, sigma, dmu, dsigma = model.predict_gradient(x)
            if i < n_sources:
                a, b = self._aligned(i)
                mu, sigma, dmu, dsigma = a * mu + b, a * sigma, a * dmu, a * dsigma
            mean += weight * mu
            var += weight**2 * sigma**2
            dmean += weight * dmu
            dvar += 2 * weight**2 * sigma * dsigma
        std = float(np.sqrt(var))
        dstd = dvar / (2 * std) if std > 0 else np.zeros_like(x)
        return mean, std, dmean, dstd

    @property
    def kernel_(self) -> Kernel:
        self._check_fitted()
        return self.target_model_.kernel_


BASELINES = {
    "generic": GenericBO,
    "efficient": EfficientBO,
    "collaborative": CollaborativeBO,
    "diff": DiffGP,
    "rgpe": RGPE,
}
