"""Exact GP posterior = kernel ridge regression, with incremental updates and hyperparameter fitting.

With data ``X_t = (x_1..x_t)``, outputs ``y``, kernel k and noise variances ``Lambda = diag(lam_i)``
(the regulariser of kernel ridge regression; 002, and 003 eqs. 6-7):

.. math::
    \\mu_t(x) = k_t(x)^T (K_t + \\Lambda)^{-1} y, \\qquad
    \\sigma_t^2(x) = k(x, x) - k_t(x)^T (K_t + \\Lambda)^{-1} k_t(x).

A scalar ``noise`` gives ``Lambda = lam I``; a vector gives one variance per point (003 eq. 17 puts
source points and target points at different noise levels). The factor ``L L^T = K_t + Lambda`` is
extended by a block Cholesky update when points are added (:meth:`GP.add`), never refactorised:
adding k points to n costs O(n^2 k + k^3) (the old factor is copied into a contiguous (n + k)^2
array, which keeps every later triangular solve copy-free) instead of O((n + k)^3).

Information gain (002; Srinivas et al. 2010, Lemma 5.3):
``I_t = 1/2 log det(I + Lambda^{-1} K_t) = 1/2 sum_s log(1 + sigma_{s-1}^2(x_s) / lam_s)``.

Hyperparameters (kernel ``theta`` and, optionally, a scalar noise) are fitted by ML-II (log marginal
likelihood, Rasmussen & Williams eq. 5.8-5.9) or by leave-one-out (R&W Section 5.4.2, eqs. 5.10-5.13:
``"loo"`` maximises the LOO log predictive probability, ``"loo-mse"`` minimises the LOO squared error,
as 004 tunes its kernel), both with analytic gradients and multi-start L-BFGS-B.

Written by hand rather than wrapping scikit-learn's ``GaussianProcessRegressor`` because that class
has no per-point noise vector update, no incremental Cholesky, no information gain and no LOO
fitting; it serves as the oracle in the tests instead.

Why this file is long: the GP's fit (ML-II with multi-start), the incremental update, prediction with
gradients and the fast paths, each with its equations; they share the Cholesky factor and its
bookkeeping.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .._lbfgsb import minimize_lbfgsb
from .._linalg import (
    JitterWarning,
    NotPositiveDefiniteError,
    cholesky,
    cholesky_append,
    scipy_linalg,
    solve_lower,
    solve_upper,
)
from .._moments import mean_std
from .._threads import blas_limited
from .._validation import as_noise, as_points, as_training_points, as_values, check_int
from .._warnings import user_stacklevel
from ..kernels import Constant, Matern
from ..kernels.base import Kernel
from .base import RegressorModel

__all__ = ["GP", "Prediction", "UnscaledInputsWarning", "default_kernel"]

#: a column of X spanning more than this many units, under the default kernel (lengthscale 0.3, made
#: for inputs in [0, 1]) with no optimizer to fit it, makes :meth:`GP.fit` warn
UNSCALED_SPAN = 10.0


class UnscaledInputsWarning(UserWarning):
    """``GP()`` (the default kernel, lengthscale 0.3 for inputs in [0, 1], and no ``optimizer`` to fit
    it) was fitted on inputs spanning far more than the unit interval: away from each training point
    it predicts the prior mean (a user test: ``cross_val_score(wb.GP(), X, y)`` with one column in
    [0, 1000] scored R^2 -1 to -2.6, worse than predicting the mean)."""


class Prediction(tuple):
    """``(mean, std)``, what :meth:`GP.predict` returns: unpack it (``mean, std = gp.predict(X)``) or
    read ``.mean`` and ``.std``. As an array it is the mean (``np.asarray(prediction)``, and its
    ``shape`` is the mean's), which is what scikit-learn's scorers read from a regressor's
    ``predict(X)``: ``cross_val_score(gp, X, y, scoring="neg_mean_squared_error")`` scores the
    posterior mean. Before, they took the pair for a 2-row array and failed ("inconsistent numbers of
    samples")."""

    __slots__ = ()

    def __new__(cls, mean: np.ndarray, std: np.ndarray):
        return super().__new__(cls, (mean, std))

    def __getnewargs__(self):  # (pickle and copy: tuple's own gives one argument, the pair)
        return tuple(self)

    @property
    def mean(self) -> np.ndarray:
        return self[0]

    @property
    def std(self) -> np.ndarray:
        return self[1]

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self[0])

    def __array__(self, dtype=None, copy=None):
        mean = np.asarray(self[0], dtype=dtype)
        return mean.copy() if copy else mean

    def __repr__(self) -> str:  # (a notebook showed a bare pair of arrays: nothing said .mean, .std)
        return f"{type(self).__name__}(mean={self[0]!r}, std={self[1]!r})"

    def _no_arithmetic(self, other):
        # a tuple's + and * concatenate and repeat: pred * 2 gave 4 arrays, pred + 1 a tuple error
        # (the notebook user test); arithmetic is the mean's, asked for by name
        raise TypeError(
            f"{type(self).__name__} is the pair (mean, std): do arithmetic on prediction.mean (or "
            "prediction.std), or ask predict(X, return_std=False) for the mean alone"
        )

    __add__ = __radd__ = __mul__ = __rmul__ = _no_arithmetic


_OBJECTIVES = ("ml2", "loo", "loo-mse")
_LOG_2PI = float(np.log(2 * np.pi))
#: default ``fit_tolerance``: L-BFGS-B's relative tolerance on the hyperparameter objective (scipy's
#: default is 2.2e-9): at n = 1000 (|log p| ~ 300) scipy's stopped on changes of 1e-6 nats, far below
#: anything that moves a posterior; 1e-6 cut a warm refit at n = 1000, d = 6 from 0.33 to 0.18 s with
#: the same objective to 4 decimals (session 9, Hartmann-6 and Branin data; ``python bench/fit_tolerance.py``)
_FIT_FTOL = 1e-6
#: scipy's own default for L-BFGS-B's ``ftol`` (``factr`` 1e7 times the machine epsilon)
SCIPY_FTOL = 1e7 * float(np.finfo(float).eps)
#: up to this many training points predict_gradients multiplies by a stored L^{-1} (see _inverse_factor)
_INVERSE_FACTOR_MAX = 512
#: a factor of this many rows or more is kept in the order LAPACK returns it (column-major) instead
#: of being copied to row-major: the solves read either order without a copy, and the transposing
#: copy of a 1000-row factor cost 8-28 ms, more than the factorisation itself (RGPE conditions one
#: GP per source: 100 sources of 1000 rows paid 0.8-3 s for it at the first ask of every `warmbo
#: suggest`). Smaller factors are still copied (under 1 ms at 512 rows), so that their results stay
#: bit for bit those of earlier versions: a vector solve takes another LAPACK path in the other
#: order (equal up to round-off).
_FACTOR_ORDER_KEPT_FROM = 512


_BLOCK = 64


def _column_major(A: np.ndarray) -> bool:
    return bool(A.flags.f_contiguous and not A.flags.c_contiguous)


def _as_factor(L: np.ndarray) -> np.ndarray:
    """The Cholesky factor as a GP keeps it: contiguous, row-major under
    :data:`_FACTOR_ORDER_KEPT_FROM` rows, in either order from there on."""
    if L.shape[0] >= _FACTOR_ORDER_KEPT_FROM and (L.flags.f_contiguous or L.flags.c_contiguous):
        return L
    return np.ascontiguousarray(L)


def default_kernel(dim: int, groups=None) -> Kernel:
    """The library's default kernel on ``dim`` coordinates: ``Constant(1.0) * Matern(2.5, [0.3] * dim)``,
    one lengthscale per coordinate (ARD), amplitude and lengthscales bounded to 1e-2..1e2. What
    :func:`~warmbo.models.default_model` fits, and what ``GP()`` without a kernel uses. ``groups``:
    coordinates sharing one lengthscale (:class:`~warmbo.kernels.Stationary`); the optimizer gives
    :meth:`Space.lengthscale_groups <warmbo.Space.lengthscale_groups>` on a space with categoricals."""
    return Constant(1.0, bounds=(1e-2, 1e2)) * Matern(
        2.5, np.full(dim, 0.3), bounds=(1e-2, 1e2), groups=groups
    )


def _inverse_from_cholesky(L: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """``(L L^T)^{-1}`` from the lower factor L, zero above its diagonal as every factor here is.

    LAPACK ``potri`` fills the lower triangle (n^3 / 3 flops after the factorisation, instead of the
    n^3 of ``L^{-T} L^{-1}`` from an explicit triangular inverse) and leaves L's zeros above it; the
    upper triangle is then copied from the lower one in 64 x 64 blocks, which stay in cache (timings
    of the alternatives: ``make bench-core``).
    ``overwrite``: L's memory may be reused (when L is Fortran-ordered, as :func:`_cholesky_in_place`
    returns it).
    """
    inverse, info = scipy_linalg().lapack.dpotri(L, lower=1, overwrite_c=int(overwrite))
    if info != 0:
        raise np.linalg.LinAlgError(f"potri failed (info={info})")
    n = inverse.shape[0]
    if n <= _BLOCK:  # one block: above the diagonal is zero, so A + A^T is exact, with 2 x the diagonal
        inverse += inverse.T
        _diagonal(inverse)[...] *= 0.5
        return inverse
    for i in range(0, n, _BLOCK):
        block = inverse[i : i + _BLOCK, i : i + _BLOCK]
        block += np.tril(block, -1).T
        for j in range(i + _BLOCK, n, _BLOCK):
            inverse[i : i + _BLOCK, j : j + _BLOCK] = inverse[j : j + _BLOCK, i : i + _BLOCK].T
    return inverse


def _add_to_diagonal(A: np.ndarray, values) -> None:
    """``A[i, i] += values[i]`` in place, through the diagonal's view (:func:`_diagonal`)."""
    _diagonal(A)[...] += values


def _diagonal(A: np.ndarray) -> np.ndarray:
    """A writable view of the diagonal of the square matrix A: a strided view of its flat memory when
    A is contiguous in either order (the diagonal's stride is n + 1 in both), else ``np.einsum``'s
    view; a few microseconds less than either ``np.diagonal`` plus a write flag or fancy indexing, on
    every evaluation of the hyperparameter objective."""
    if A.flags.c_contiguous or A.flags.f_contiguous:
        return A.ravel(order="K")[:: A.shape[0] + 1]
    return np.einsum("ii->i", A)


def _profiled_mean(L: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, float]:
    """The GLS constant mean ``c = 1^T A^-1 y / 1^T A^-1 1 = (L^-1 1).(L^-1 y) / |L^-1 1|^2`` for the
    factor ``L`` of ``A = K + noise`` (R&W Section 2.7), and ``L^-1 (y - c 1)``: two solves."""
    u = solve_lower(L, np.ones(L.shape[0]))
    w = solve_lower(L, ys)
    c = float(u @ w) / float(u @ u)
    return w - c * u, c


def _matching_rows(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """For each row of A (m, d), the index of an equal row of B (k, d), or -1: a k-d tree query for
    a neighbour at distance 0 (max norm), as :func:`warmbo.maximize.taken` finds repeats; 0.15-0.2 ms
    for 516 rows at d = 2 to 20. When B's rows are distinct and no coordinate is a nonzero below
    1e-290 (two doubles closer than ``tiny``, which the query counts as equal, are both that small),
    the rows' bytes looked up in a dict give the same indices in a third of the time."""
    out = np.full(A.shape[0], -1, dtype=np.intp)
    if B.shape[0] == 0 or A.shape[0] == 0:
        return out
    A0, B0 = A + 0.0, B + 0.0  # (-0.0 becomes 0.0: equal values, equal bytes)
    if not (_has_tiny(A0) or _has_tiny(B0)):
        row = np.dtype((np.void, B0.dtype.itemsize * B0.shape[1]))
        keys = np.ascontiguousarray(B0).view(row).ravel().tolist()
        index = dict(zip(keys, range(len(keys)), strict=True))
        if len(index) == len(keys):  # (with repeated rows, the query's choice among them is kept)
            get = index.get
            return np.array(
                [get(key, -1) for key in np.ascontiguousarray(A0).view(row).ravel().tolist()], np.intp
            )
    from scipy.spatial import cKDTree

    distance, index = cKDTree(B).query(A, p=np.inf, distance_upper_bound=np.finfo(float).tiny)
    found = np.isfinite(distance)
    out[found] = index[found]
    return out


def _has_tiny(A: np.ndarray) -> bool:
    magnitude = np.abs(A)
    return bool(np.any((magnitude < 1e-290) & (magnitude > 0.0)))


def _cholesky_in_place(A: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of the symmetric matrix A, computed in A's memory (no jitter: for the
    hyperparameter objective, where a failure just rejects the step). A C-ordered A is passed to
    LAPACK as its transpose, the same symmetric matrix in Fortran order, so no copy is made; the
    factor comes back Fortran-ordered, zero above the diagonal. Saves the copy and the checks of
    ``scipy.linalg.cholesky``."""
    if not np.isfinite(A.sum()):  # NaN or inf anywhere (the diagonal included) makes the sum so
        raise NotPositiveDefiniteError("K + noise contains NaN or inf values")
    L, info = scipy_linalg().lapack.dpotrf(A.T, lower=1, overwrite_a=1, clean=1)
    if info != 0:
        raise NotPositiveDefiniteError(f"K + noise is not positive definite (potrf info={info})")
    return L


class GP(RegressorModel):
    """Gaussian process regression / kernel ridge regression with an exact, updatable posterior.

    Parameters
    ----------
    kernel : Kernel, optional
        Prior covariance (in the units of the standardised outputs when ``normalize_y``). None
        (default): the library's default kernel, ``Constant(1.0) * Matern(2.5, [0.3] * d)`` with one
        lengthscale per input coordinate (ARD; bounds 1e-2..1e2 for the amplitude and each
        lengthscale), the one :func:`~warmbo.models.default_model` uses, built by :meth:`fit` once
        the number of coordinates d is known (``kernel_``; ``kernel`` stays None, as scikit-learn
        keeps its arguments). Its hyperparameters are fitted only with an ``optimizer``
        (``GP(optimizer="ml2", normalize_y=True)``); :func:`~warmbo.models.default_model` is the
        optimizer's whole default model. As scikit-learn's ``GaussianProcessRegressor()``,
        ``GP()`` fits and predicts as it is.
    noise : float or array of shape (n,)
        Noise variance added to the Gram diagonal (the KRR regulariser lam); a scalar or one value
        per training point. Expressed in the units the model works in (standardised outputs when
        ``normalize_y``), as scikit-learn's ``alpha``.
    optimizer : {None, "ml2", "loo", "loo-mse"}
        How :meth:`fit` chooses hyperparameters: keep them (None), maximise the log marginal likelihood
        ("ml2"), maximise the leave-one-out log predictive probability ("loo") or minimise the
        leave-one-out squared error ("loo-mse").
    n_restarts : int
        Random starts of L-BFGS-B in addition to the current hyperparameters.
    normalize_y : bool
        Subtract the mean and divide by the standard deviation of the outputs given to :meth:`fit`.
        The standardisation is frozen until the next :meth:`fit` so that :meth:`add` stays exact.
    fit_noise : bool or None
        Fit a scalar noise level together with the kernel (default: when ``optimizer`` is set and
        ``noise`` is a scalar).
    noise_bounds : (float, float)
        Range of the fitted noise variance.
    seed : int, optional
        Seed of the random restarts.
    restart_points : int or None
        With more training points than this, the random restarts search on a seeded subset of this
        many points; the candidate optima and the current hyperparameters are then scored on all the
        data, and one local search on all of it runs from the best. A restart on all n points costs
        O(n^3) per likelihood evaluation (a 5-start fit took 18 s at n = 1000, d = 6); this way a
        multi-start fit costs about one local fit plus restarts at n = 256. None: every restart on
        all the data.
    max_evaluations : int or None
        Most objective evaluations (L-BFGS-B's ``maxfun``) of the search from the first start, the
        current hyperparameters; the searches from random restarts run to convergence. None (default):
        to convergence. :class:`~warmbo.Optimizer` sets it for the warm refits of long studies, so an
        ask's refit does bounded work and the next ask continues from where it stopped. When the
        random restarts ran on a subset (``restart_points``), the one full-data search gets half of
        it: that fit has already paid for the restarts and the scoring of their optima on all the
        data, and halving the search kept the ask at n = 1024 of a 1000 -> 1100 loop near the others.
    hyperprior : LogNormalHyperprior, optional
        Priors on the lengthscales and the noise (:mod:`warmbo.models.hyperprior`): with
        ``optimizer="ml2"`` the fit maximises ``log p(y | X, theta) + log p(theta)`` (MAP) instead of
        the marginal likelihood alone. None: plain ML-II.
    fit_mean : bool
        Fit a constant prior mean ``c`` (in the standardised units) instead of taking the data's mean:
        its maximum-likelihood value given the kernel and noise is the generalised least-squares
        estimate ``c = 1^T (K + Lambda)^{-1} y / 1^T (K + Lambda)^{-1} 1`` (R&W Section 2.7), which
        with ``optimizer="ml2"`` is profiled out of the marginal likelihood at every step of the fit
        (the gradient of the profiled likelihood is the one at fixed ``c``: dlog p / dc = 0 there),
        as BoTorch's ``ConstantMean`` is fitted jointly with the kernel. With ``"loo"`` and
        ``"loo-mse"`` each held-out point is predicted with ``c`` re-estimated from the others
        (Dubrule 1983: the LOO formulas with ``(K + Lambda)^{-1}`` replaced by the precision projected
        off the constant). Far from the data the
        posterior mean returns to ``c``, not to the average observation; after :meth:`fit`,
        ``y_mean_`` holds it on the user's scale.

    fit_tolerance : float
        L-BFGS-B's relative tolerance on the hyperparameter objective (``ftol``: a search stops when
        a step changes the objective by less than this fraction of its size). The default 1e-6 stops
        a fit at n = 1000 (|log p| ~ 300) on changes of 3e-4 nats instead of scipy's 2.2e-9 (7e-7
        nats), which halved the warm refit there. :func:`~warmbo.models.ml2_model` (the base of the
        transfer models) uses scipy's 2.2e-9 (:data:`SCIPY_FTOL`): their GPs are fitted on a few
        points or once per source from a single start, and on the transfer benchmark the looser
        tolerance made ``transfer="auto"`` end worse more often than better at every checkpoint
        (a consistent lean, not significant at any one checkpoint; ``docs/transfer.md``).

    Attributes
    ----------
    kernel_ : Kernel
        Kernel after fitting.
    noise_ : ndarray (n,)
        Noise variance of each training point (model units).
    noise_level_ : float or None
        Scalar noise used for new points in :meth:`add` (None for per-point noise).
    X_train_, y_train_ : ndarray
        Training data (y on the user's scale).
    alpha_ : ndarray (n,)
        ``(K + Lambda)^{-1} y`` on the model scale.
    L_ : ndarray (n, n)
        Lower Cholesky factor of ``K + Lambda`` (plus jitter, if any was needed).
    jitter_ : float
        Largest jitter added to a diagonal block (0.0 if none).
    n_features_in_ : int
        Number of input coordinates seen at :meth:`fit`.
    feature_names_in_ : ndarray of str
        The column names of a data frame given to :meth:`fit` (only then).

    Before :meth:`fit` (or :meth:`add`), ``kernel_`` is ``kernel``, ``y_mean_`` 0, ``y_std_`` 1,
    ``jitter_`` 0 and ``noise_level_`` None: the prior that :meth:`predict` returns then. They are
    defaults read through ``__getattr__``, not attributes the constructor sets (scikit-learn's
    convention: it stores its arguments and nothing else).

    Examples
    --------
    >>> import numpy as np
    >>> from warmbo import GP
    >>> from warmbo.kernels import RBF
    >>> X = np.linspace(0, 1, 5)[:, None]
    >>> gp = GP(RBF(0.3), noise=1e-4).fit(X, np.sin(3 * X[:, 0]))
    >>> mean, std = gp.predict([[0.5]])
    >>> bool(abs(mean[0] - np.sin(1.5)) < 1e-2)
    True
    """

    def __init__(
        self,
        kernel: Kernel | None = None,
        noise=1e-6,
        *,
        optimizer: str | None = None,
        n_restarts: int = 4,
        normalize_y: bool = False,
        fit_noise: bool | None = None,
        noise_bounds: tuple[float, float] = (1e-8, 1.0),
        seed: int | None = None,
        restart_points: int | None = 256,
        max_evaluations: int | None = None,
        hyperprior=None,
        fit_mean: bool = False,
        fit_tolerance: float = _FIT_FTOL,
    ):
        self.kernel = kernel
        self.fit_tolerance = fit_tolerance
        self.max_evaluations = max_evaluations
        self.fit_mean = fit_mean
        self.noise = noise
        self.optimizer = optimizer
        self.n_restarts = n_restarts
        self.restart_points = restart_points
        self.hyperprior = hyperprior
        self.normalize_y = normalize_y
        self.fit_noise = fit_noise
        self.noise_bounds = noise_bounds
        self.seed = seed
        self._reset(public=False)

    # ------------------------------------------------------------------ bookkeeping
    #: what the fitted attributes read as before fit (the prior): see :meth:`__getattr__`
    _UNFITTED = {"noise_level_": None, "y_mean_": 0.0, "y_std_": 1.0, "jitter_": 0.0}

    def __getattr__(self, name: str):
        # only for names that are not attributes: the fitted ones before the first fit
        if name == "kernel_" and "kernel" in self.__dict__:
            return self.__dict__["kernel"]
        if name in GP._UNFITTED and "kernel" in self.__dict__:
            return GP._UNFITTED[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _reset(self, public: bool = True) -> None:
        self._prior_variance = None
        self._n = 0
        self._L = np.zeros((0, 0))
        self._X = None
        self._y = np.zeros(0)  # model scale
        self._noise = np.zeros(0)
        self._v = np.zeros(0)  # L^{-1} y
        self._alpha = None
        self._L_inv = None  # L^{-1}, for n <= _INVERSE_FACTOR_MAX (predict_gradients' fast path)
        self._cross_gradients = None  # kernel_.cross_gradients_at(X) (predict_gradients' repeated calls)
        self._screen = None  # (C, L^{-1} k_t(C)) of the points tracked by track()
        self._jitter = np.zeros(0)  # the jitter each training point's diagonal entry received
        if public:  # (the constructor leaves them to __getattr__'s defaults)
            self.kernel_ = self.kernel
            self.noise_level_ = None
            self.y_mean_ = 0.0
            self.y_std_ = 1.0
            self.jitter_ = 0.0

    def __repr__(self) -> str:
        state = f"n={self._n}" if self._n else "unfitted"
        extra = "" if self.hyperprior is None else f", hyperprior={self.hyperprior!r}"
        extra += ", fit_mean=True" if self.fit_mean else ""
        settings = f"noise={self.noise!r}, optimizer={self.optimizer!r}{extra}"
        return f"GP(kernel={self.kernel_!r}, {settings}, {state})"

    def warm_start_overrides(self) -> dict:
        """Constructor overrides with which a clone starts its hyperparameter search from this fit:
        the fitted kernel (and fitted scalar noise), no random restarts. Empty when this GP fits no
        hyperparameters or is not fitted (the optimizer then fits from the prototype)."""
        if self.optimizer is None or self._n == 0:
            return {}
        out = {"kernel": self.kernel_, "n_restarts": 0}
        if self.noise_level_ is not None and np.ndim(self.noise) == 0 and self.fit_noise is not False:
            out["noise"] = self.noise_level_
        return out

    @property
    def _kernel_dim(self) -> int | None:
        """The number of coordinates the given kernel takes (None: any, or no kernel given)."""
        return None if self.kernel is None else self.kernel.input_dim

    def _kernel_for(self, dim: int) -> Kernel:
        """The given kernel, or the default one on ``dim`` coordinates (:func:`default_kernel`)."""
        return default_kernel(dim) if self.kernel is None else self.kernel

    def _validate_settings(self) -> None:
        if self.kernel is not None and not isinstance(self.kernel, Kernel):
            raise ValueError(
                f"kernel must be a warmbo Kernel (or None for the default kernel), got {self.kernel!r}"
            )
        if self.optimizer not in (None, *_OBJECTIVES):
            raise ValueError(f"optimizer must be None or one of {_OBJECTIVES}, got {self.optimizer!r}")
        if (
            isinstance(self.n_restarts, bool)
            or not isinstance(self.n_restarts, numbers.Integral)
            or self.n_restarts < 0
        ):
            raise ValueError(f"n_restarts must be an integer >= 0, got {self.n_restarts!r}")
        if not isinstance(self.normalize_y, bool):
            raise ValueError(f"normalize_y must be True or False, got {self.normalize_y!r}")
        if self.restart_points is not None:
            check_int(self.restart_points, "restart_points (or None)", 2)
        if self.max_evaluations is not None:
            check_int(self.max_evaluations, "max_evaluations (or None)", 1)
        if self.hyperprior is not None and not callable(getattr(self.hyperprior, "penalty", None)):
            raise ValueError(
                f"hyperprior must be a warmbo LogNormalHyperprior or None, got {self.hyperprior!r}"
            )
        if not isinstance(self.fit_mean, bool):
            raise ValueError(f"fit_mean must be True or False, got {self.fit_mean!r}")
        tolerance = self.fit_tolerance
        if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real) or not 0 < tolerance < 1:
            raise ValueError(f"fit_tolerance must be a number in (0, 1), got {tolerance!r}")
        if self.fit_noise is not None and not isinstance(self.fit_noise, bool):
            raise ValueError(f"fit_noise must be True, False or None, got {self.fit_noise!r}")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral)
        ):
            raise ValueError(f"seed must be an integer or None, got {self.seed!r}")
        try:
            lo, hi = (float(v) for v in self.noise_bounds)
        except (TypeError, ValueError):
            raise ValueError(f"noise_bounds must be a pair (low, high), got {self.noise_bounds!r}") from None
        if not (0 < lo < hi and np.isfinite(hi)):
            raise ValueError(f"noise_bounds must satisfy 0 < low < high, got {self.noise_bounds!r}")

    @property
    def n_observations(self) -> int:
        """Number of training points t."""
        return self._n

    @property
    def X_train_(self) -> np.ndarray:
        return self._X if self._X is not None else np.zeros((0, 0))

    @property
    def y_train_(self) -> np.ndarray:
        return self._y * self.y_std_ + self.y_mean_

    @property
    def noise_(self) -> np.ndarray:
        return self._noise

    @property
    def L_(self) -> np.ndarray:
        return self._L

    @property
    def alpha_(self) -> np.ndarray:
        if self._alpha is None:
            self._alpha = solve_upper(self._L, self._v)
        return self._alpha

    @property
    def input_dim(self) -> int | None:
        return None if self._X is None else self._X.shape[1]

    # ------------------------------------------------------------------ fitting
    @blas_limited
    def fit(self, X, y) -> GP:
        """Condition on (X, y), choosing hyperparameters first if ``optimizer`` is set.

        Parameters
        ----------
        X : array (n, d)
        y : array (n,)

        Returns
        -------
        self
        """
        self._validate_settings()
        given = X
        X = as_training_points(X, "X", self._kernel_dim)
        y = as_values(y, "y", X.shape[0])
        noise = as_noise(self.noise, X.shape[0], "noise")
        kernel = self._kernel_for(X.shape[1])
        if self.kernel is None and self.optimizer is None and X.shape[0] > 1:
            self._warn_unscaled(X)
        if not np.all(np.isfinite(kernel.evaluate(X[:1], X[:1]))):
            raise ValueError(f"kernel {kernel!r} is not finite at X")
        scalar_noise = np.ndim(self.noise) == 0

        mean, std = self._standardisation(y)
        ys = (y - mean) / std

        if self.optimizer is not None:
            fit_noise = scalar_noise if self.fit_noise is None else bool(self.fit_noise)
            if fit_noise and not scalar_noise:
                raise ValueError("fit_noise=True needs a scalar noise, got one value per point")
            kernel, noise = self._optimize(X, ys, kernel, noise, fit_noise)

        A = kernel.evaluate(X, X)
        _add_to_diagonal(A, noise)
        L, jitter = cholesky(A, name="K + noise")  # may raise: the previous posterior is still intact
        self._condition(X, ys, mean, std, kernel, noise, L, jitter, scalar_noise)
        self._record_features(given)
        return self

    @staticmethod
    def _warn_unscaled(X: np.ndarray) -> None:
        """:class:`UnscaledInputsWarning` when a column of X spans more than :data:`UNSCALED_SPAN`."""
        span = X.max(axis=0) - X.min(axis=0)
        wide = np.flatnonzero(span > UNSCALED_SPAN)
        if wide.size:
            j = int(wide[0])
            warnings.warn(
                f"X's column {j} spans [{X[:, j].min():.4g}, {X[:, j].max():.4g}], but GP() keeps the "
                "default kernel's lengthscales at 0.3 (made for inputs in [0, 1]) without an optimizer: "
                "away from each training point it predicts the prior mean. Scale the inputs to [0, 1] "
                "(Space.encode, scikit-learn's MinMaxScaler) or fit the hyperparameters: "
                "GP(optimizer='ml2', normalize_y=True)",
                UnscaledInputsWarning,
                stacklevel=user_stacklevel(),
            )

    def _standardisation(self, y: np.ndarray) -> tuple[float, float]:
        """``(mean, std)`` of ``normalize_y`` (std 1 for constant y), or ``(0, 1)``."""
        if not self.normalize_y:
            return 0.0, 1.0
        mean, std = mean_std(y)  # finite for any finite y (np.std overflows beyond |y| ~ 1e154)
        return mean, std if std > 0 else 1.0

    def _condition(self, X, ys, mean, std, kernel, noise, L, jitter, scalar_noise) -> None:
        """Store the posterior given the factor ``L`` of ``K + noise`` at X (the fitted mean first);
        ``jitter``: what L's diagonal received, one value for all the points or one per point."""
        v = None
        if self.fit_mean:
            v, c = _profiled_mean(L, ys)
            ys, mean = ys - c, mean + c * std
        self._reset()
        self.kernel_ = kernel
        self.y_mean_, self.y_std_ = mean, std
        self.noise_level_ = float(noise[0]) if scalar_noise else None
        self._jitter = np.broadcast_to(np.asarray(jitter, dtype=np.float64), (X.shape[0],)).copy()
        self.jitter_ = float(self._jitter.max(initial=0.0))
        self._store(X, ys, noise, L, v)

    @blas_limited
    def extend(self, X, y) -> GP:
        """A new GP on (X, y) where X's first n rows are this GP's n training inputs (the y values may
        all differ): the posterior :meth:`fit` gives with these hyperparameters, in O(n^2 k) for k new
        rows instead of O((n + k)^3).

        The factor of ``K + noise`` depends on X and the hyperparameters only, so it is extended by the
        block update of :meth:`add`; the standardisation, the fitted mean and ``L^{-1} y`` are then
        computed afresh from all of y, as :meth:`fit` computes them. Equal to ``fit`` up to round-off
        (and up to the jitter, if a factor needed one: here only the new block gets it). For a GP that
        fits no hyperparameters (``optimizer=None``) with a scalar noise; when X does not start with
        the training inputs, when some were added with another noise (``add(..., noise=...)``: the
        factor holds that noise, and ``fit`` gives every point ``noise``), or when the new block cannot
        be factorised even with jitter, a full :meth:`fit` of a clone. The optimizer conditions its
        fixed-hyperparameter model this way at each ask (issue 15).
        """
        if self.optimizer is not None:
            raise ValueError("extend() keeps the hyperparameters: it needs a GP with optimizer=None")
        X = as_points(X, "X", self.input_dim if self._n else self._kernel_dim)
        y = as_values(y, "y", X.shape[0])
        n = self._n
        if np.ndim(self.noise) != 0 and np.size(self.noise) != X.shape[0]:
            raise ValueError(
                f"extend() cannot tell the noise of {X.shape[0]} points from this GP's per-point noise "
                f"({np.size(self.noise)} values): condition on new points with add(X_new, y_new, noise=...), "
                "or set_params(noise=<one value per point>) and fit(X, y)"
            )
        if (
            n == 0
            or np.ndim(self.noise) != 0
            or X.shape[0] < n
            or not np.array_equal(X[:n], self._X)
            or np.any(self._noise != self.noise)  # add(..., noise=other): the factor holds other noise
        ):
            return self.clone().fit(X, y)
        mean, std = self._standardisation(y)
        noise = as_noise(self.noise, X.shape[0], "noise")
        L, jitter, screen = self._L, self._jitter, self._screen
        if X.shape[0] > n:
            try:
                L, S_T, M, added = self._appended_factor(X[n:], noise[n:])
            except NotPositiveDefiniteError:
                # the new block's Schur complement is not positive definite even with the largest
                # jitter (round-off of an ill-conditioned factor): factorise the whole matrix, whose
                # jitter regularises all of it, as fit() does (and raises if that fails too)
                return self.clone().fit(X, y)
            jitter = np.concatenate([jitter, np.full(X.shape[0] - n, added)])
            screen = self._appended_screen(X[n:], S_T, M)
            inverse = self._appended_inverse(S_T, M)
        else:
            inverse = self._L_inv
        other = self.clone()
        other._condition(X, (y - mean) / std, mean, std, self.kernel_, noise, L, jitter, True)
        other._screen = screen
        other._L_inv = inverse
        return other

    def _appended_factor(self, X_new, noise_new) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """The factor of ``K + noise`` with the rows X_new (noise variances ``noise_new``) appended, by
        the block Cholesky update ``[[L, 0], [S^T, M]]``: returns it, ``S^T``, ``M`` and the jitter M
        needed. O(n^2 k); the old factor is copied into a contiguous (n + k)^2 array."""
        n, k = self._n, X_new.shape[0]
        B = self.kernel_.evaluate(self._X, X_new)
        C = self.kernel_.evaluate(X_new, X_new)
        _add_to_diagonal(C, noise_new)
        S_T, M, jitter = cholesky_append(self._L, B, C, name="K + noise (new block)")
        # (every block written: no zero pass over (n + k)^2 doubles first; in the old factor's order,
        # so that the copy of it is not a transposing one: see _FACTOR_ORDER_KEPT_FROM)
        L = np.empty((n + k, n + k), order="F" if _column_major(self._L) else "C")
        L[:n, :n] = self._L
        L[:n, n:] = 0.0
        L[n:, :n] = S_T
        L[n:, n:] = M
        return L, S_T, M, jitter

    def _appended_inverse(self, S_T, M) -> np.ndarray | None:
        """``L^{-1}`` of the factor ``[[L, 0], [S^T, M]]`` from the kept ``L^{-1}`` (:meth:`_inverse_factor`):
        ``[[L^{-1}, 0], [-M^{-1} S^T L^{-1}, M^{-1}]]``, O(k n^2) for k new rows instead of the
        O((n + k)^3) of a solve against the identity (0.85 ms of a 22 ms fixed-hyperparameter ask at
        n = 200, d = 6, whose factor is extended by one row per ask). None when none is kept or the
        extended factor is over :data:`_INVERSE_FACTOR_MAX`."""
        n, k = self._n, M.shape[0]
        if self._L_inv is None or n + k > _INVERSE_FACTOR_MAX:
            return None
        M_inv = solve_lower(M, np.eye(k))
        inverse = np.zeros((n + k, n + k))
        inverse[:n, :n] = self._L_inv
        inverse[n:, :n] = -(M_inv @ (S_T @ self._L_inv))
        inverse[n:, n:] = M_inv
        return inverse

    def _appended_screen(self, X_new, S_T, M):
        """The tracked screen with the rows of X_new appended to the factor ``[[L, 0], [S^T, M]]``:
        ``L_{n+k}^{-1} k_{n+k}(C) = [V; M^{-1} (k(X_new, C) - S^T V)]``, O(k n m) for m points."""
        if self._screen is None:
            return None
        C, V = self._screen
        rows = solve_lower(M, self.kernel_.evaluate(X_new, C) - S_T @ V)
        return C, np.vstack([V, rows])

    @blas_limited
    def track(self, C) -> GP:
        """Keep the posterior of the fixed points C (m, d) between updates, so that predicting them costs
        O(n m) instead of O(n^2 m).

        Stores a read-only copy of C (:attr:`screen_`) and ``V = L^{-1} k_t(C)`` (n x m floats). Then
        :meth:`predict` on ``screen_`` itself (the same object) gives ``mu_t(C) = V^T L^{-1} y`` and
        ``sigma_t^2(C) = k(C, C) - diag(V^T V)``, the equations of the module docstring written with
        ``L L^T = K_t + Lambda``; :meth:`add` and :meth:`extend` append the rows of the new points in
        O(k n m) (:meth:`_appended_screen`), and a copy (``copy.deepcopy``, as the fantasies of pending
        points make) keeps them. A refit (:meth:`fit`) forgets the points.

        Tracking new points keeps the columns of V of every point that was tracked before (equal
        coordinates) and solves only for the others: O(n^2) per new point. The optimizer's
        fixed-hyperparameter ask tracks its candidates this way (issue 15, item 7): a Sobol screen that
        never changes and local candidates that change only with the anchors they surround. Tracking
        points equal to ``screen_`` does nothing. Returns self.
        """
        C = as_points(C, "C", self.input_dim if self._n else self._kernel_dim)
        old = self._screen
        if old is not None and (C is old[0] or np.array_equal(C, old[0])):
            return self
        C = C.copy()
        C.flags.writeable = False  # predict() recognises it by identity: it must not change
        if not self._n:
            self._screen = (C, np.zeros((0, C.shape[0])))
            return self
        if old is None:
            self._screen = (C, solve_lower(self._L, self._cross(C)))
            return self
        index = _matching_rows(C, old[0])  # column j of the old V for every point tracked before, or -1
        missing = index < 0
        kept = old[1]
        if missing.any():
            index[missing] = kept.shape[1] + np.arange(int(missing.sum()))
            kept = np.hstack([kept, solve_lower(self._L, self._cross(C[missing]))])
        self._screen = (C, np.take(kept, index, axis=1))  # one gather (a loop of column copies: 4x slower)
        return self

    def __getstate__(self) -> dict:
        # the kernel's prepared cross gradients are a closure (not picklable) over what the GP keeps
        # anyway: a copy or an unpickled GP prepares them again on first use
        state = self.__dict__.copy()
        state["_cross_gradients"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        # copies (deepcopy, as fantasies make) and unpickled GPs keep their tracked points read-only:
        # predict() recognises them by identity, so they must not change under it
        self.__dict__.update(state)
        self.__dict__.setdefault("_screen", None)  # a GP pickled before track() existed
        self.__dict__.setdefault("_cross_gradients", None)  # ... or before session 26
        self.__dict__.setdefault("_L_inv", None)
        if "_jitter" not in state:  # pickled before the jitter was kept per point: its largest for all
            self._jitter = np.full(state.get("_n", 0), state.get("jitter_", 0.0))
        screen = state.get("_screen")
        if screen is not None:
            screen[0].flags.writeable = False

    @property
    def screen_(self) -> np.ndarray | None:
        """The (read-only) points kept by :meth:`track`, None when none are."""
        return None if self._screen is None else self._screen[0]

    def _store(self, X, ys, noise, L, v=None) -> None:
        self._L = _as_factor(L)
        self._X = X.copy()
        self._y = ys.copy()
        self._noise = noise.copy()
        self._v = solve_lower(self._L, ys) if v is None else v  # L^{-1} ys
        self._n = X.shape[0]
        self._alpha = None
        self._L_inv = None
        self._cross_gradients = None
        self._prior_variance = None  # k(x, x) of a stationary kernel_, once asked for

    @blas_limited
    def add(self, X_new, y_new, noise=None) -> GP:
        """Condition on more points by a block Cholesky update (no refactorisation, no refitting).

        Parameters
        ----------
        X_new : array (k, d)
        y_new : array (k,)
            On the user's scale; standardised with the statistics frozen at :meth:`fit`.
        noise : float or array (k,), optional
            Noise variances of the new points; defaults to the scalar noise level. Required when the
            model was fitted with per-point noise.

        Returns
        -------
        self
        """
        if self._n == 0:
            # Nothing to update yet: condition on the points with the current hyperparameters.
            saved = (self.optimizer, self.noise)
            self.optimizer = None
            if noise is not None:
                self.noise = noise
            try:
                return self.fit(X_new, y_new)
            finally:
                self.optimizer, self.noise = saved
        X_new = as_points(X_new, "X_new", self.input_dim)
        y_new = as_values(y_new, "y_new", X_new.shape[0])
        k = X_new.shape[0]
        if k == 0:
            return self
        if noise is None:
            if self.noise_level_ is None:
                raise ValueError("this GP has per-point noise: pass noise= for the new points to add()")
            noise = self.noise_level_
        noise = as_noise(noise, k, "noise")
        ys = (y_new - self.y_mean_) / self.y_std_
        n = self._n
        L, S_T, M, jitter = self._appended_factor(X_new, noise)
        self.jitter_ = max(self.jitter_, jitter)
        self._jitter = np.concatenate([self._jitter, np.full(k, jitter)])
        v_new = solve_lower(M, ys - S_T @ self._v)
        self._screen = self._appended_screen(X_new, S_T, M)
        inverse = self._appended_inverse(S_T, M)
        self._L = L
        self._X = np.vstack([self._X, X_new])
        self._y = np.concatenate([self._y, ys])
        self._noise = np.concatenate([self._noise, noise])
        self._v = np.concatenate([self._v, v_new])
        self._n = n + k
        self._alpha = None
        self._L_inv = inverse
        self._cross_gradients = None
        return self

    # ------------------------------------------------------------------ prediction
    def _cross(self, X: np.ndarray) -> np.ndarray:
        return self.kernel_.evaluate(self._X, X)

    @blas_limited
    def predict(self, X, return_cov: bool = False, *, return_std: bool | None = None):
        """Posterior mean and standard deviation (or full covariance) of the latent f at X.

        Parameters
        ----------
        X : array (m, d)
        return_cov : bool
            Return the (m, m) posterior covariance instead of the standard deviation.
        return_std : bool, optional
            scikit-learn's keyword, for code written for its ``GaussianProcessRegressor``: True gives
            ``(mean, std)`` (as the default does), False the mean alone unless ``return_cov``.

        Returns
        -------
        mean : ndarray (m,)
        std : ndarray (m,), or cov : ndarray (m, m)
            On the user's output scale. Never NaN: tiny negative variances from round-off are
            clipped to 0. ``(mean, std)`` is a :class:`Prediction`, which reads as the mean where an
            array is expected (scikit-learn's scorers); ``(mean, cov)`` a plain tuple.

        Notes
        -----
        A GP conditioned on no data is the prior (``mu_0 = 0``, ``sigma_0^2(x) = k(x, x)``), which
        GP-UCB's first round and the chain rule of the information gain (002) use, so ``predict``
        before ``fit`` returns the prior rather than raising :class:`NotFittedError` as the
        transfer models do.
        """
        if return_std is not None and not isinstance(return_std, bool | np.bool_):
            raise ValueError(f"return_std must be True or False, got {return_std!r}")
        if return_std and return_cov:
            raise ValueError("at most one of return_std and return_cov can be True (as in scikit-learn)")
        result = self._predict(X, return_cov)
        return result[0] if return_std is not None and not return_std and not return_cov else result

    @blas_limited
    def sample_y(self, X, n_samples: int = 1, random_state=0) -> np.ndarray:
        """Draws of the latent f at X from the posterior, as scikit-learn's ``sample_y``: an array
        ``(m, n_samples)``, each column one joint draw ``mu + A z`` with ``A A^T`` the posterior
        covariance (``A`` from its eigendecomposition, negative round-off eigenvalues set to 0: the
        covariance at observed or repeated points is singular) and ``z`` standard normal.
        ``random_state`` is an int, None or a ``RandomState`` (scikit-learn's ``check_random_state``)."""
        from sklearn.utils import check_random_state

        n_samples = check_int(n_samples, "n_samples", 1)
        mean, cov = self._predict(X, True)
        values, vectors = np.linalg.eigh(cov)
        factor = vectors * np.sqrt(np.clip(values, 0.0, None))
        z = check_random_state(random_state).standard_normal((mean.shape[0], n_samples))
        return mean[:, None] + factor @ z

    def _predict(self, X, return_cov: bool):
        screen = self._screen
        if screen is not None and X is screen[0] and not return_cov and self._n:
            # tracked points (track): V = L^{-1} k_t(C) is kept, so mu = V^T L^{-1} y, O(n m)
            C, V = screen
            mean = V.T @ self._v * self.y_std_ + self.y_mean_
            var = self.kernel_.diag(C) - np.einsum("ij,ij->j", V, V)
            return Prediction(mean, self._user_sd(var))
        if self._n:
            self._check_features(X)
            X = as_points(X, "X", self._X.shape[1], owner=type(self).__name__)
        else:
            X = as_points(X, "X", self._kernel_dim)
        kernel = self.kernel_ if self._n else self._kernel_for(X.shape[1])
        scale2 = self._scale2()
        if self._n == 0:
            mean = np.full(X.shape[0], self.y_mean_)
            if return_cov:
                return mean, kernel.evaluate(X, X) * scale2
            return Prediction(mean, self._user_sd(kernel.diag(X)))
        Ks = self._cross(X)
        mean = Ks.T @ self.alpha_ * self.y_std_ + self.y_mean_
        V = solve_lower(self.L_, Ks)
        if return_cov:
            cov = kernel.evaluate(X, X) - V.T @ V
            cov = (cov + cov.T) / 2
            np.fill_diagonal(cov, np.maximum(np.diag(cov), 0.0))
            return mean, cov * scale2
        var = kernel.diag(X) - np.einsum("ij,ij->j", V, V)
        return Prediction(mean, self._user_sd(var))

    def _scale2(self) -> float:
        """``y_std^2`` (inf for values beyond ~1e154, whose variances a float cannot hold)."""
        with np.errstate(over="ignore", under="ignore"):
            return float(np.float64(self.y_std_) ** 2)

    def _user_sd(self, var: np.ndarray) -> np.ndarray:
        """Standard deviations on the user's scale from variances on the model's: ``sqrt(var y_std^2)``
        (the same bits as ever), or ``sqrt(var) y_std`` when ``y_std^2`` overflows or underflows
        (values of 1e160 have a finite sd whose square is not; values of 1e-160 one whose square is
        subnormal)."""
        scale2 = self._scale2()
        if np.isfinite(scale2) and scale2 >= 1e-280:  # (not subnormal: values above ~1e-140)
            return np.sqrt(np.maximum(var, 0.0) * scale2)
        return np.sqrt(np.maximum(var, 0.0)) * self.y_std_

    def predict_gradient(self, x) -> tuple[float, float, np.ndarray, np.ndarray]:
        """Mean, std and their gradients with respect to x at one point x (d,).

        ``d mu/dx = (dk_t(x)/dx)^T alpha`` and
        ``d sigma^2/dx = dk(x,x)/dx - 2 (dk_t(x)/dx)^T (K + Lambda)^{-1} k_t(x)``.
        Needs a kernel with input gradients (``kernel_.has_gradient_x``).
        """
        given = np.shape(x)
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        d = self._X.shape[1] if self._n else self._kernel_dim
        if d is not None and x.shape[0] != d:
            raise ValueError(f"x must be one point of shape ({d},), got an array of shape {given}")
        if not np.isfinite(x).all():
            raise ValueError(f"x contains NaN or inf (first at coordinate {int(np.argmin(np.isfinite(x)))})")
        kernel = self.kernel_ if self._n else self._kernel_for(x.shape[0])
        if not kernel.has_gradient_x:
            raise NotImplementedError(f"{kernel!r} does not supply input gradients")
        x2 = x[None, :]
        kxx = float(kernel.diag(x2)[0])
        dkxx = kernel.diag_gradient_x(x)
        if self._n == 0:
            var = max(kxx, 0.0)
            std = np.sqrt(var)
            dstd = dkxx / (2 * std) if std > 0 else np.zeros_like(x)
            return self.y_mean_, std * self.y_std_, np.zeros_like(x), dstd * self.y_std_
        X = self._X
        k = kernel.evaluate(X, x2)[:, 0]
        G = kernel.gradient_x(x, X)  # (n, d)
        mean = float(k @ self.alpha_) * self.y_std_ + self.y_mean_
        dmean = G.T @ self.alpha_ * self.y_std_
        v = solve_lower(self.L_, k)
        var = kxx - float(v @ v)
        w = solve_upper(self.L_, v)
        dvar = dkxx - 2.0 * G.T @ w
        if var <= 0:
            return mean, 0.0, dmean, np.zeros_like(x)
        std = np.sqrt(var)
        return mean, std * self.y_std_, dmean, dvar / (2.0 * std) * self.y_std_

    def _inverse_factor(self) -> np.ndarray | None:
        """``L^{-1}`` when n <= :data:`_INVERSE_FACTOR_MAX` (computed once per factor), else None.

        The local search of an ask calls :meth:`predict_gradients` on a few points some 40 times with
        the same factor; at n = 200 one ``solve_triangular`` costs ~40 us, mostly call overhead, and
        the product with the stored inverse ~10 us (and 2 n^2 flops, the same as the solve). Above
        the limit the inverse (n^2 floats, n^3 / 3 flops once) stops paying for itself.
        """
        if self._n > _INVERSE_FACTOR_MAX:
            return None
        if self._L_inv is None:
            self._L_inv = solve_lower(self._L, np.eye(self._n))
        return self._L_inv

    def predict_gradients(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`predict_gradient` for a batch of points X (m, d), with one solve for the batch.

        Returns mean (m,), std (m,), and their gradients (m, d). Needs a kernel with input gradients.
        """
        X = as_points(X, "X", self.input_dim if self._n else self._kernel_dim)
        kernel = self.kernel_ if self._n else self._kernel_for(X.shape[1])
        if not kernel.has_gradient_x:
            raise NotImplementedError(f"{kernel!r} does not supply input gradients")
        if self._n == 0:
            parts = [self.predict_gradient(x) for x in X]
            return tuple(np.array([p[i] for p in parts], dtype=np.float64) for i in range(4))
        cross = self._cross_gradients
        if cross is None:  # X / ell and the like once per factor, not at each step of the search
            cross = self._cross_gradients = kernel.cross_gradients_at(self._X)
        K_mn, G = cross(X)  # (m, n), (m, n, d): kernel.evaluate_and_gradients_x(X, self._X)
        Ks = K_mn.T
        alpha = self.alpha_
        mean = Ks.T @ alpha * self.y_std_ + self.y_mean_
        dmean = np.einsum("mnd,n->md", G, alpha) * self.y_std_
        L_inv = self._inverse_factor()
        if L_inv is None:
            V = solve_lower(self.L_, Ks)
            Wm = solve_upper(self.L_, V)
        else:  # two products instead of two triangular solves: same flops, no per-call overhead
            V = L_inv @ Ks
            Wm = L_inv.T @ V
        dvar = -2.0 * np.einsum("mnd,nm->md", G, Wm)
        if kernel.stationary:  # k(x, x) is a constant with zero gradient: one value for the batch
            if self._prior_variance is None:
                self._prior_variance = float(kernel.diag(X[:1])[0])
            var = self._prior_variance - np.einsum("ij,ij->j", V, V)
        else:
            var = kernel.diag(X) - np.einsum("ij,ij->j", V, V)
            dvar += kernel.diag_gradients_x(X)
        if var.min() > 0:  # (the search's points, almost always: the same numbers without the masks)
            std = np.sqrt(var)
            return mean, std * self.y_std_, dmean, dvar / (2.0 * std[:, None]) * self.y_std_
        positive = var > 0
        std = np.sqrt(np.where(positive, var, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            dstd = np.where(positive[:, None], dvar / (2.0 * std[:, None]), 0.0)
        return mean, std * self.y_std_, dmean, dstd * self.y_std_

    # ------------------------------------------------------------------ diagnostics
    def info_gain(self) -> float:
        """``I_t = 1/2 log det(I + Lambda^{-1} K_t)`` for the points observed so far.

        Computed from the stored factor as ``sum_i log L_ii - 1/2 sum_i log lam_i``. The jitter, if
        any was added, counts as noise (``lam_i`` is the noise plus the jitter point i received), as
        it does in the posterior: the gain is the chain rule's ``1/2 sum_s log(1 + sigma_{s-1}^2(x_s)
        / lam_s)`` of the posterior :meth:`predict` gives. Requires every noise variance to be positive.
        """
        return float(np.sum(self._info_gain_terms()))

    def _info_gain_terms(self, start: int = 0) -> np.ndarray:
        """``log L_ii - 1/2 log lam_i`` for the training points from ``start`` on: point i's
        ``1/2 log(1 + sigma_{i-1}^2(x_i) / lam_i)`` given every point before it, with ``lam_i`` its
        noise plus its jitter. The transfer baselines sum the target rows (the gain given the sources)."""
        noise = self.noise_[start:]
        if np.any(noise <= 0):
            raise ValueError("info_gain needs positive noise variances (it is infinite for noise 0)")
        return np.log(np.diag(self.L_)[start:]) - 0.5 * np.log(noise + self._jitter[start:])

    def log_marginal_likelihood(self) -> float:
        """``log p(y | X) = -1/2 y^T alpha - sum log L_ii - n/2 log 2 pi`` on the model's output scale."""
        if self._n == 0:
            return 0.0
        ys = self._y
        return float(-0.5 * ys @ self.alpha_ - np.sum(np.log(np.diag(self.L_))) - 0.5 * self._n * _LOG_2PI)

    def rkhs_norm(self) -> float:
        """RKHS norm of the posterior mean, ``sqrt(alpha^T K alpha)`` (002), on the user's scale.

        Uses ``alpha^T K alpha = alpha^T y - alpha^T Lambda alpha`` so no Gram matrix is rebuilt; the
        constant offset of ``normalize_y`` is not part of the RKHS function.
        """
        if self._n == 0:
            return 0.0
        a = self.alpha_
        value = float(a @ self._y - a @ (self.noise_ * a))
        return float(np.sqrt(max(value, 0.0)) * self.y_std_)

    def loo(self) -> tuple[np.ndarray, np.ndarray]:
        """Leave-one-out means and standard deviations at the training points (R&W eq. 5.12).

        ``mu_{-i} = y_i - alpha_i / [K^{-1}]_ii``, ``sigma^2_{-i} = 1 / [K^{-1}]_ii`` with ``K`` the
        matrix ``K_t + Lambda``, on the user's scale: the predictive distribution of the held-out
        *observation* y_i, so ``sigma^2_{-i}`` includes its noise variance ``lam_i`` (:meth:`predict`
        gives the latent f, without it). The hyperparameters and the ``normalize_y`` standardisation
        are those of the fit on all the points; with ``fit_mean`` the constant mean is re-estimated
        without each point (Dubrule 1983: ``1 / [K^{-1}]_ii`` becomes ``1 / P_ii``, the diagonal of the
        precision projected off the constant).
        """
        if self._n == 0:
            return np.zeros(0), np.zeros(0)
        Linv = solve_lower(self.L_, np.eye(self._n))
        c = np.einsum("ij,ij->j", Linv, Linv)
        if self.fit_mean:
            # the constant re-estimated without each point (Dubrule 1983, as the "loo" objectives
            # are): the diagonal of the projected precision, c - u_i^2 / sum(u), u = K^-1 1; alpha_
            # (K^-1 (y - c_hat)) is already P y (a review: the mean fitted with y_i leaked into it)
            u = Linv.T @ Linv.sum(axis=1)
            c = c - u**2 / u.sum()
        a = self.alpha_
        mean = (self._y - a / c) * self.y_std_ + self.y_mean_
        return mean, np.sqrt(1.0 / c) * self.y_std_

    # ------------------------------------------------------------------ hyperparameter objectives
    def objective(self, X, ys, kernel: Kernel, noise: np.ndarray, fit_noise: bool, params, kind: str):
        """Objective to minimise and its gradient, for hyperparameters ``params`` (log space): the data
        term of :meth:`data_objective`, plus minus the log prior when ``hyperprior`` is set and
        ``kind == "ml2"`` (MAP). (A fit evaluates the function :meth:`_objective_function` prepares
        once for its data, not this method: a subclass changes the objective there.)"""
        return self._objective_function(X, ys, kernel, noise, fit_noise, kind)(params)

    def _objective_function(self, X, ys, kernel: Kernel, noise: np.ndarray, fit_noise: bool, kind: str):
        """``params -> (value, gradient)`` of :meth:`objective` on this data: what does not depend on
        ``params`` (the kernel's :meth:`~warmbo.kernels.Kernel.gram_at`, the prior's constants) is
        prepared once for all steps of a search."""
        data = self._data_objective_function(X, ys, kernel, noise, fit_noise, kind)
        if self.hyperprior is None or kind != "ml2":
            return data
        names, dim, prior = kernel.theta_names, X.shape[1], self.hyperprior
        penalty_function = getattr(prior, "penalty_function", None)
        if callable(penalty_function):
            penalty = penalty_function(names, fit_noise, dim)
        else:  # a prior of the user's with only penalty() (what GP checks for)

            def penalty(params):
                return prior.penalty(names, params, fit_noise, dim)

        def fun(params):
            value, grad = data(params)
            extra, extra_grad = penalty(params)
            return value + extra, grad + extra_grad

        return fun

    def log_hyperprior(self) -> float:
        """``log p(theta)`` (up to a constant) at the fitted hyperparameters; 0 without a hyperprior."""
        if self.hyperprior is None or self._n == 0:
            return 0.0
        return self.hyperprior.log_density(
            self.kernel_, self.noise_level_ if self._fits_noise() else None, self._X.shape[1]
        )

    def _fits_noise(self) -> bool:
        return (
            bool(self.fit_noise)
            if self.fit_noise is not None
            else (self.optimizer is not None and np.ndim(self.noise) == 0)
        )

    def data_objective(self, X, ys, kernel: Kernel, noise: np.ndarray, fit_noise: bool, params, kind: str):
        """Objective to minimise and its gradient, for hyperparameters ``params`` (log space).

        ``params = [theta, log noise]`` (the last entry only when ``fit_noise``). Returns
        ``(value, gradient)`` with value = -log marginal likelihood ("ml2"), -LOO log predictive
        probability ("loo", R&W eq. 5.11) or the mean LOO squared error ("loo-mse").
        """
        return self._data_objective_function(X, ys, kernel, noise, fit_noise, kind)(params)

    def _data_objective_function(self, X, ys, kernel: Kernel, noise: np.ndarray, fit_noise: bool, kind: str):
        """``params -> (value, gradient)`` of :meth:`data_objective` on this data."""
        if kind != "ml2":
            return lambda params: self._loo_objective(X, ys, kernel, noise, fit_noise, params, kind)
        from scipy.linalg import blas

        p = kernel.n_theta
        n = X.shape[0]
        gram_at = kernel.gram_at(X)
        fit_mean = self.fit_mean
        constant = 0.5 * n * _LOG_2PI
        noise = np.asarray(noise, dtype=np.float64)

        def fun(params):
            # the gradient needs only the contractions sum_ij W_ij dK_ij / dtheta_k, which the kernel
            # computes without forming the (n, n, n_theta) derivative tensor (Kernel.gram_with_gradient_dot,
            # prepared for this X by Kernel.gram_at: one distance matrix and one exponential serve both)
            # Every n x n step works in one buffer: K + noise, its factor, the inverse, then W.
            A, gradient_dot = gram_at(params[:p])
            level = float(np.exp(params[p])) if fit_noise else None
            _add_to_diagonal(A, noise if level is None else level)
            L = _cholesky_in_place(A)
            half_log_det = float(np.log(_diagonal(L)).sum())
            W = _inverse_from_cholesky(L, overwrite=True)
            y = ys
            if fit_mean:  # profile the constant mean out (GLS estimate; see the class docstring)
                w1 = W.sum(axis=0)
                y = ys - float(w1 @ ys) / float(w1.sum())
            alpha = W @ y
            value = 0.5 * float(y @ alpha) + half_log_det + constant
            W *= -1.0  # W = alpha alpha^T - (K + noise)^{-1}, in place (a rank-one BLAS update)
            # (W is symmetric: hand BLAS whichever of W, W^T is Fortran-ordered, so it updates in place)
            target = W if W.flags.f_contiguous else W.T
            updated = blas.dger(1.0, alpha, alpha, a=target, overwrite_a=1)
            if not np.shares_memory(updated, W):
                W = updated
            grad = gradient_dot(W)
            if fit_noise:  # d(K + s I)/d log s = s I (into a new array: np.append's own cost 10 us)
                kernel_part, grad = grad, np.empty(p + 1)
                grad[:p] = kernel_part
                grad[p] = float(_diagonal(W).sum()) * level
            return value, -0.5 * np.asarray(grad, dtype=np.float64)

        return fun

    def _loo_objective(self, X, ys, kernel: Kernel, noise: np.ndarray, fit_noise: bool, params, kind: str):
        """:meth:`data_objective` for the leave-one-out kinds ("loo", "loo-mse")."""
        p = kernel.n_theta
        kern = kernel.with_theta(params[:p])
        if fit_noise:
            noise = np.full(X.shape[0], np.exp(params[p]))
        K, dK = kern.gram_gradient(X)
        if fit_noise:
            dK = np.concatenate([dK, np.diag(noise)[..., None]], axis=2)
        A = K.copy()
        _add_to_diagonal(A, noise)
        L, _ = cholesky(A, max_jitter=0.0, name="K + noise")
        Ainv = _inverse_from_cholesky(L)
        if self.fit_mean:
            # the constant mean re-estimated without each held-out point: Dubrule's (1983) leave-one-out
            # of kriging with an unknown mean, the same formulas with A^-1 replaced by the precision
            # projected off the mean, P = A^-1 - A^-1 1 1^T A^-1 / 1^T A^-1 1 (P 1 = 0, so the
            # objective does not move with a constant added to y; and dP = -P dA P, as dA^-1 is).
            # Before, the LOO kinds ignored fit_mean: y + 100 changed the fit (a user test)
            u = Ainv.sum(axis=1)
            Ainv = Ainv - np.outer(u, u) / u.sum()
        alpha = Ainv @ ys
        c = np.diag(Ainv)
        dKs = np.moveaxis(dK, 2, 0)  # (q, n, n)
        # Z_j = Ainv dK_j (R&W eq. 5.13): Z_j alpha and diag(Z_j Ainv), one column per hyperparameter
        Z_alpha = np.stack([Ainv @ (D @ alpha) for D in dKs], axis=1)
        ZK_diag = np.stack([np.einsum("ij,ij->i", Ainv @ D, Ainv) for D in dKs], axis=1)
        if kind == "loo":
            value = -np.sum(0.5 * np.log(c) - alpha**2 / (2 * c) - 0.5 * _LOG_2PI)
            grad = -np.sum(
                (alpha[:, None] * Z_alpha - 0.5 * (1 + alpha[:, None] ** 2 / c[:, None]) * ZK_diag)
                / c[:, None],
                axis=0,
            )
            return float(value), grad
        r = alpha / c  # residual y_i - mu_{-i}
        dr = (-Z_alpha * c[:, None] + alpha[:, None] * ZK_diag) / c[:, None] ** 2
        return float(np.mean(r**2)), 2.0 * np.mean(r[:, None] * dr, axis=0)

    def _guarded_objective(self, X, ys, kernel, noise, fit_noise, kind):
        """``params -> (value, gradient)`` of :meth:`objective` on this data, with a failed or
        non-finite evaluation (a non-PSD Gram matrix, an overflow) reported as a very bad value so
        L-BFGS-B steps back instead of stopping."""

        objective = self._objective_function(X, ys, kernel, noise, fit_noise, kind)

        def fun(params):
            try:
                value, grad = objective(params)
            except (NotPositiveDefiniteError, np.linalg.LinAlgError, FloatingPointError):
                return 1e25, np.zeros_like(params)
            if not np.isfinite(value) or not np.isfinite(grad).all():
                return 1e25, np.zeros_like(params)
            return value, grad

        return fun

    def _subset_restarts(self, X, ys, kernel, noise, fit_noise, kind, starts, bounds, fun, cap):
        """The one start of the full-data search: the best, on all the data, of the current
        hyperparameters and the optima of the random restarts run on a seeded subset of ``cap`` rows
        (see ``restart_points``)."""
        rows = np.random.default_rng([0 if self.seed is None else self.seed, X.shape[0]]).choice(
            X.shape[0], int(cap), replace=False
        )
        Xs, ys_s, noise_s = X[rows], ys[rows], noise[rows]

        fun_subset = self._guarded_objective(Xs, ys_s, kernel, noise_s, fit_noise, kind)

        candidates = [starts[0]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JitterWarning)
            with np.errstate(all="ignore"):
                for start in starts[1:]:
                    result = minimize_lbfgsb(fun_subset, start, bounds, ftol=float(self.fit_tolerance))
                    if np.isfinite(result.fun) and result.fun < 1e25:
                        candidates.append(result.x)
                scores = [
                    self._objective_value(X, ys, kernel, noise, fit_noise, kind, c, fun) for c in candidates
                ]
        return [candidates[int(np.argmin(scores))]]

    def _objective_value(self, X, ys, kernel, noise, fit_noise, kind, params, fun) -> float:
        """The value of :meth:`objective` at ``params``, without its gradient: for ``"ml2"`` one
        Cholesky factor and two triangular solves (``-log p(y) = |L^-1 (y - c)|^2 / 2 + sum log L_ii
        + n/2 log 2 pi``, plus the hyperprior's penalty), about a third of the value-and-gradient
        evaluation, which forms the inverse; other kinds ``fun(params)[0]``. A failed factorisation
        scores 1e25, as in :meth:`_guarded_objective`."""
        if kind != "ml2":
            return float(fun(params)[0])
        p = kernel.n_theta
        try:
            A = kernel.with_theta(params[:p]).gram(X)
            _add_to_diagonal(A, np.exp(params[p]) if fit_noise else noise)
            L = _cholesky_in_place(A)
            v = _profiled_mean(L, ys)[0] if self.fit_mean else solve_lower(L, ys)
            value = 0.5 * float(v @ v) + float(np.sum(np.log(np.diag(L)))) + 0.5 * X.shape[0] * _LOG_2PI
        except (NotPositiveDefiniteError, np.linalg.LinAlgError, FloatingPointError):
            return 1e25
        if self.hyperprior is not None:
            value += self.hyperprior.penalty(kernel.theta_names, params, fit_noise, X.shape[1])[0]
        return value if np.isfinite(value) else 1e25

    def _optimize(self, X, ys, kernel, noise, fit_noise):
        kind = self.optimizer
        bounds = kernel.theta_bounds
        x0 = kernel.theta
        if fit_noise:
            bounds = np.vstack([bounds, np.log(np.array(self.noise_bounds))[None, :]])
            level = float(np.clip(noise[0], *self.noise_bounds))
            x0 = np.append(x0, np.log(level))
        if x0.size == 0:
            return kernel, noise

        fun = self._guarded_objective(X, ys, kernel, noise, fit_noise, kind)

        rng = np.random.default_rng(self.seed)
        starts = [np.clip(x0, bounds[:, 0], bounds[:, 1])]
        starts += [rng.uniform(bounds[:, 0], bounds[:, 1]) for _ in range(int(self.n_restarts))]
        cap = self.restart_points
        budget = None if self.max_evaluations is None else int(self.max_evaluations)
        if len(starts) > 1 and cap is not None and X.shape[0] > cap:
            starts = self._subset_restarts(X, ys, kernel, noise, fit_noise, kind, starts, bounds, fun, cap)
            budget = None if budget is None else max(1, budget // 2)
        best_x, best_value = starts[0], np.inf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JitterWarning)
            with np.errstate(all="ignore"):
                for i, start in enumerate(starts):
                    options = {"ftol": float(self.fit_tolerance)}
                    if i == 0 and budget is not None:
                        options["maxfun"] = budget
                    result = minimize_lbfgsb(fun, start, bounds, **options)
                    if np.isfinite(result.fun) and result.fun < best_value:
                        best_x, best_value = result.x, float(result.fun)
        if not np.isfinite(best_value) or best_value >= 1e25:
            warnings.warn(
                "hyperparameter fitting failed from every start; keeping the initial hyperparameters",
                RuntimeWarning,
                stacklevel=user_stacklevel(),
            )
            return kernel, noise
        p = kernel.n_theta
        new_kernel = kernel.with_theta(best_x[:p])
        if fit_noise:
            noise = np.full(X.shape[0], float(np.exp(best_x[p])))
        return new_kernel, noise
