"""The multi-task (vector-valued) GP posterior of 001 eqs. (1)-(2), dense and with the ICM fast path.

With t observations ``y_s in R^n`` at points ``x_s`` and a multi-task kernel Gamma
(:mod:`warmbo.kernels.multitask`), the vector-valued kernel ridge regression estimate and its
uncertainty are (001 eqs. 1-2)

    mu_t(x)         = G_t(x)^T (G_t + eta I_{nt})^{-1} Y_t,
    Gamma_t(x, x')  = Gamma(x, x') - G_t(x)^T (G_t + eta I_{nt})^{-1} G_t(x'),

with ``G_t`` the nt x nt block Gram matrix, ``G_t(x)`` the nt x n embedding ``[Gamma(x, x_s)^T]_s`` and
``Y_t`` the stacked outputs. They are the posterior mean and covariance of a zero-mean MT-GP with
N(0, eta I_n) noise. :class:`MultiTaskGP` computes them three ways, chosen by ``method``:

- ``"dense"``: any kernel; one Cholesky factor of ``G_t + eta I`` (nt x nt), extended by a block
  update in :meth:`MultiTaskGP.add` (O(n^2 t^2) per point instead of O(n^3 t^3)).
- ``"icm"`` (``Gamma = k B``, 001 Section 3.3): with ``B = sum_i xi_i u_i u_i^T`` and one
  eigendecomposition ``K_t = Q diag(s) Q^T`` shared by every xi_i,

      mu_t(x) = sum_i xi_i k_t(x)^T (xi_i K_t + eta I_t)^{-1} Y_t^i u_i,     Y_t^i = [y_s^T u_i]_s,
      Gamma_t(x, x) = sum_i c_i(x) u_i u_i^T,
      c_i(x) = xi_i (k(x, x) - xi_i k_t(x)^T (xi_i K_t + eta I_t)^{-1} k_t(x)),

  so ``||Gamma_t(x, x)|| = max_i c_i(x)`` (the paper's formula) and the full matrix costs nothing more.
  The eigendecomposition of K_t is recomputed (lazily) after each :meth:`~MultiTaskGP.add`: O(t^3)
  per step, O(N t (t + n)) to predict at N points, against O(n^3 t^3) dense. Repeated points (finite
  domains) are merged exactly: c observations at one point are one observation of their mean with
  noise eta/c, so with counts C the decomposition is of ``C^{1/2} K_u C^{1/2}`` over the u distinct
  points and the step costs O(u^3) (``compress=False`` keeps the paper's O(t^3)).
- ``"independent"`` (``Gamma = diag(k_1, ..., k_n)``, 001 Remark 1): n scalar :class:`~warmbo.GP`
  posteriors, each updated by its own block Cholesky step.

``"auto"`` picks the structured path when the kernel has one. The information gain
``1/2 log det(I_{nt} + eta^{-1} G_t)`` (001 Thm 1) is available from every path; by the chain rule it equals
``1/2 sum_s log det(I_n + eta^{-1} Gamma_{s-1}(x_s, x_s))``, the sum in MT-KB's beta_t (001 Thm 2).

Written by hand: no maintained library computes the operator-valued posterior with these fast paths
on numpy; the linear algebra is scipy/LAPACK (Cholesky, triangular solves, ``eigh``).
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from .._linalg import cholesky, cholesky_append, solve_lower, solve_upper
from .._threads import blas_limited
from .._validation import as_points, as_training_points
from ..kernels.multitask import ICM, Independent, MultiTaskKernel
from .base import RegressorModel
from .gp import GP, Prediction

__all__ = ["MultiTaskGP", "as_task_values"]

_METHODS = ("auto", "dense", "icm", "independent")
_LOG_2PI = float(np.log(2 * np.pi))
_CHUNK_ELEMENTS = 4_000_000


def as_task_values(Y, n_tasks: int, n_points: int | None = None, name: str = "Y") -> np.ndarray:
    """Vector observations as a finite float64 array (t, n_tasks); one row per point.

    A 1-D array of length ``n_tasks`` is one observation. Errors name the row and task of a NaN.
    """
    if Y is None:  # (np.asarray reads None as NaN; scikit-learn's words, which its checks look for)
        which = "" if name == "y" else f"{name} is None: "
        raise ValueError(f"{which}this model requires y to be passed, but the target y is None")
    try:
        arr = np.asarray(Y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape (t, {n_tasks})") from None
    if arr.ndim == 1 and arr.shape[0] == n_tasks and n_points in (None, 1):
        arr = arr[None, :]
    if n_tasks == 1 and arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] != n_tasks:
        raise ValueError(f"{name} must have shape (t, {n_tasks}) (one value per task), got {arr.shape}")
    if n_points is not None and arr.shape[0] != n_points:
        raise ValueError(f"{name} must have {n_points} rows (one per point), got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        row, task = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or inf (row {row}, task {task})")
    return arr


def block_output(full: np.ndarray, cov: str) -> np.ndarray:
    """Symmetrised covariance blocks (N, n, n), or their largest eigenvalues for ``cov="norm"``."""
    full = (full + np.swapaxes(full, 1, 2)) / 2
    return full if cov == "full" else np.linalg.eigvalsh(full)[:, -1]


def finish_output(mean: np.ndarray, out: np.ndarray, cov: str):
    """What ``predict(X, cov)`` returns: the mean alone, or with the (clipped) norms or blocks."""
    if cov == "none":
        return mean
    return mean, (np.maximum(out, 0.0) if cov == "norm" else out)


def icm_output(mean: np.ndarray, c: np.ndarray, U: np.ndarray, cov: str):
    """``predict`` output of an ICM posterior from its eigen-coordinates: ``Gamma = U diag(c) U^T``."""
    if cov == "none":
        return mean
    if cov == "norm":
        return mean, np.max(c, axis=1)
    return mean, np.einsum("ai,ni,bi->nab", U, c, U)


class MultiTaskPrediction(Prediction):
    """``(mean, norm)``, what a multi-task model's ``predict(X)`` returns: the posterior mean (N, n)
    and ``||Gamma_t(x, x)||`` (N,). It unpacks as the pair, and reads as the mean where an array is
    expected (``np.asarray(prediction)``, scikit-learn's scorers), as :class:`Prediction` does.

    :meth:`warmbo.MultiTaskOptimizer.predict` gives the full posterior covariance instead,
    ``(mean, Gamma_t(x, x))`` with ``Gamma`` of shape (N, n, n): read it as ``.cov``; ``.norm`` is then
    its largest eigenvalue (the spectral norm of a covariance). ``.cov`` of a ``(mean, norm)``
    prediction raises AttributeError.
    """

    __slots__ = ()

    @property
    def norm(self) -> np.ndarray:
        second = np.asarray(self[1])
        if second.ndim == 3:
            return np.linalg.eigvalsh(second)[:, -1]
        return self[1]

    @property
    def cov(self) -> np.ndarray:
        if np.ndim(self[1]) != 3:
            raise AttributeError(
                "this multi-task prediction holds the norm of the posterior covariance, not the covariance: "
                "read .norm, or call predict(X, cov='full')"
            )
        return self[1]

    @property
    def std(self) -> np.ndarray:
        raise AttributeError(
            "a multi-task prediction holds the posterior covariance or its norm: read .norm or .cov"
        )


def prediction_pair(predict):
    """Wrap a multi-task ``predict(X, cov)`` so that ``cov="norm"`` returns a :class:`MultiTaskPrediction`."""

    @functools.wraps(predict)
    def wrapped(self, X, cov: str = "norm"):
        out = predict(self, X, cov)
        return MultiTaskPrediction(*out) if cov == "norm" else out

    return wrapped


class MultiTaskData(RegressorModel):
    """What every multi-task posterior exposes about its data: tasks, points, observations; and
    scikit-learn's conventions for a regressor with vector outputs (Y of shape (t, n_tasks): the
    number of columns is the kernel's number of tasks), whose ``score`` is the R^2 of the posterior
    mean averaged over the tasks."""

    _multi_output_only = True

    def _mean(self, X) -> np.ndarray:
        return self.predict(X, cov="none")

    def _points(self, X) -> np.ndarray:
        """Points to predict at: the column names of X checked against those seen at fit, X read
        with the fitted d (scikit-learn's message for a wrong number of columns)."""
        if self.n_observations == 0:
            return as_points(X, "X", self.kernel.input_dim)
        self._check_features(X)
        return as_points(X, "X", int(self._X.shape[1]), owner=type(self).__name__)

    #: the Nystrom accuracy of a budgeted posterior (MT-BKB); None: the exact posterior
    budget_eps: float | None = None

    kernel: MultiTaskKernel
    _X: np.ndarray
    _Y: np.ndarray

    @property
    def n_tasks(self) -> int:
        return self.kernel.n_tasks

    @property
    def n_observations(self) -> int:
        return int(self._X.shape[0])

    @property
    def input_dim(self) -> int | None:
        return self.kernel.input_dim if self._X.shape[0] == 0 else int(self._X.shape[1])

    @property
    def X_train_(self) -> np.ndarray:
        return self._X

    @property
    def Y_train_(self) -> np.ndarray:
        return self._Y

    @property
    def y_train_(self) -> np.ndarray:
        """The protocol's name for the observed values: ``Y_train_`` (t, n)."""
        return self._Y


class MultiTaskGP(MultiTaskData):
    """Vector-valued GP / kernel ridge regression posterior of 001 eqs. (1)-(2).

    Parameters
    ----------
    kernel : MultiTaskKernel
        The multi-task kernel Gamma (fixed; estimate B beforehand, e.g. with
        :func:`warmbo.models.task_structure.estimate_B`).
    noise : float
        The regulariser eta of eqs. (1)-(2), i.e. the noise variance of every output (001 uses 0.1).
    method : {"auto", "dense", "icm", "independent"}
        Posterior computation (see the module docstring); all give the same posterior.
    compress : bool
        ICM path: merge repeated points (exact: c observations at one point act as one observation
        of their mean with noise eta/c), so on a finite domain the cost per step stops growing once
        every point has been seen. ``False`` keeps the paper's O(t^3) step (for its timing figure).

    Attributes
    ----------
    X_train_ : ndarray (t, d)
    Y_train_ : ndarray (t, n)
    method_ : str
        The computation actually used.

    Examples
    --------
    >>> import numpy as np
    >>> from warmbo.kernels import RBF
    >>> from warmbo.kernels.multitask import ICM
    >>> from warmbo.models import MultiTaskGP
    >>> X = np.array([[0.1], [0.5], [0.9]])
    >>> Y = np.c_[np.sin(3 * X[:, 0]), np.sin(3 * X[:, 0]) + 0.1]
    >>> gp = MultiTaskGP(ICM(RBF(0.3), [[1.0, 0.9], [0.9, 1.0]]), noise=1e-3).fit(X, Y)
    >>> mean, norm = gp.predict([[0.5]])
    >>> mean.shape, norm.shape
    ((1, 2), (1,))
    """

    def __init__(
        self, kernel: MultiTaskKernel, noise: float = 0.1, *, method: str = "auto", compress: bool = True
    ):
        if not isinstance(kernel, MultiTaskKernel):
            raise ValueError(f"kernel must be a multi-task kernel (warmbo.kernels.multitask), got {kernel!r}")
        if (
            isinstance(noise, bool)
            or not isinstance(noise, numbers.Real)
            or not np.isfinite(noise)
            or noise <= 0
        ):
            raise ValueError(f"noise (the regulariser eta) must be a positive number, got {noise!r}")
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
        if method == "icm" and not isinstance(kernel, ICM):
            raise ValueError("method='icm' needs an ICM kernel (k(x, x') B)")
        if method == "independent" and not isinstance(kernel, Independent):
            raise ValueError("method='independent' needs an Independent kernel")
        self.kernel = kernel
        self.noise = float(noise)
        self.method = method
        self.compress = compress  # (as given: scikit-learn's clone compares it by identity)
        if method == "auto":
            if isinstance(kernel, ICM):
                method = "icm"
            elif isinstance(kernel, Independent):
                method = "independent"
            else:
                method = "dense"
        self.method_ = method
        self._reset()

    # ------------------------------------------------------------------ bookkeeping
    def _reset(self) -> None:
        d = self.kernel.input_dim
        self._X = np.zeros((0, d if d is not None else 0))
        self._Y = np.zeros((0, self.n_tasks))
        self._L = None  # dense
        self._v = None  # dense: L^{-1} Y_vec
        self._eig = None  # icm: (s, Q) of K_t, computed lazily
        self._gps = None  # independent

    def __repr__(self) -> str:
        return f"MultiTaskGP(kernel={self.kernel!r}, noise={self.noise:g}, method={self.method!r})"

    # ------------------------------------------------------------------ conditioning
    def _validate(self, X, Y, name: str) -> tuple[np.ndarray, np.ndarray]:
        X = as_points(X, f"X{name}", self.input_dim or self.kernel.input_dim)
        Y = as_task_values(Y, self.n_tasks, X.shape[0], f"Y{name}")
        return X, Y

    @blas_limited
    def fit(self, X, Y) -> MultiTaskGP:
        """Condition on points X (t, d) with vector outputs Y (t, n), replacing earlier data."""
        given = X
        X = as_training_points(X, "X", self.kernel.input_dim)
        Y = as_task_values(Y, self.n_tasks, X.shape[0], "Y")
        self._reset()
        self._X = np.zeros((0, X.shape[1]))
        self._append(X, Y)
        self._record_features(given)
        return self

    @blas_limited
    def add(self, X_new, Y_new) -> MultiTaskGP:
        """Condition on more points (incremental: block Cholesky / per-task updates; ICM re-decomposes)."""
        X_new, Y_new = self._validate(X_new, Y_new, "_new")
        if X_new.shape[0] == 0:
            return self
        if self.n_observations == 0:
            return self.fit(X_new, Y_new)
        return self._append(X_new, Y_new)

    def _append(self, X_new: np.ndarray, Y_new: np.ndarray) -> MultiTaskGP:
        method = self.method_
        if method == "dense":
            self._append_dense(X_new, Y_new)
        elif method == "independent":
            if self._gps is None:
                kernels = self.kernel.kernels
                self._gps = [GP(k, noise=self.noise).fit(X_new, Y_new[:, i]) for i, k in enumerate(kernels)]
            else:
                for i, gp in enumerate(self._gps):
                    gp.add(X_new, Y_new[:, i])
        else:
            self._eig = None
        self._X = np.vstack([self._X, X_new])
        self._Y = np.vstack([self._Y, Y_new])
        return self

    def _append_dense(self, X_new: np.ndarray, Y_new: np.ndarray) -> None:
        y_new = Y_new.reshape(-1)
        C = self.kernel.gram(X_new)
        C[np.diag_indices_from(C)] += self.noise
        if self._L is None:
            L, _ = cholesky(C, name="G_t + eta I")
            self._L = L
            self._v = solve_lower(L, y_new)
            return
        m = self._L.shape[0]
        B = self.kernel.gram(self._X, X_new)
        S_T, M, _ = cholesky_append(self._L, B, C, name="G_t + eta I (new block)")
        k = M.shape[0]
        L = np.zeros((m + k, m + k))
        L[:m, :m] = self._L
        L[m:, :m] = S_T
        L[m:, m:] = M
        self._v = np.concatenate([self._v, solve_lower(M, y_new - S_T @ self._v)])
        self._L = L

    def _icm_eig(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s, Q, P): eigenpairs of ``K' = C^{1/2} K_u C^{1/2}`` and ``P = Q^T C^{-1/2} S_u U`` (u x n).

        K_u is the Gram matrix of the u distinct observed points, C their counts and S_u the sums of
        their observations; without repeated points (or with ``compress=False``) K' = K_t, P = Q^T Y U.
        """
        if self._eig is None:
            if self.compress:
                Xu, inverse, counts = np.unique(self._X, axis=0, return_inverse=True, return_counts=True)
                inverse = inverse.reshape(-1)
            else:
                Xu, inverse, counts = self._X, np.arange(self._X.shape[0]), np.ones(self._X.shape[0], int)
            root = np.sqrt(counts.astype(np.float64))
            sums = np.zeros((Xu.shape[0], self.n_tasks))
            np.add.at(sums, inverse, self._Y)
            K = root[:, None] * self.kernel.kernel.evaluate(Xu, Xu) * root[None, :]
            s, Q = np.linalg.eigh((K + K.T) / 2)
            s = np.clip(s, 0.0, None)
            _, U = self.kernel.eig
            # within-point scatter sum ||y - ybar||^2, which only the likelihood needs
            residual = float(np.sum(self._Y**2) - np.sum(sums**2 / counts[:, None]))
            self._eig = (s, Q, Q.T @ ((sums / root[:, None]) @ U))
            self._compressed = (Xu, root, max(residual, 0.0))
            self._inverse = inverse
        return self._eig

    def _gram_basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """ICM path: ``(s, R, inverse)`` with ``K_t = R diag(s) R^T`` over all t observations, from the
        decomposition of the u distinct points: ``R = E C^{-1/2} Q`` (t, u) has orthonormal columns
        spanning the vectors constant on repeated points (their mean is ``R R^T``); the rest of
        R^t is K_t's null space. ``inverse`` maps each observation to its distinct point."""
        s, Q, _ = self._icm_eig()
        root = self._compressed[1]
        return s, Q[self._inverse] / root[self._inverse, None], self._inverse

    # ------------------------------------------------------------------ prediction
    @prediction_pair
    @blas_limited
    def predict(self, X, cov: str = "norm"):
        """Posterior mean and uncertainty at X (N, d).

        Parameters
        ----------
        cov : {"norm", "full", "none"}
            ``"norm"``: return ``||Gamma_t(x, x)||`` (N,), the largest eigenvalue (what eq. 3 uses),
            with the mean as a :class:`MultiTaskPrediction` (it reads as the mean where an array is
            expected);
            ``"full"``: return ``Gamma_t(x, x)`` (N, n, n); ``"none"``: the mean only.

        Returns
        -------
        mean : ndarray (N, n)
        norm or Gamma : ndarray (N,) or (N, n, n), unless ``cov="none"``
        """
        if cov not in ("norm", "full", "none"):
            raise ValueError(f"cov must be 'norm', 'full' or 'none', got {cov!r}")
        X = self._points(X)
        N, n = X.shape[0], self.n_tasks
        if self.n_observations == 0:
            mean = np.zeros((N, n))
            if cov == "none":
                return mean
            full = self.kernel.diag_blocks(X)
            return (mean, full) if cov == "full" else (mean, np.linalg.eigvalsh(full)[:, -1])
        if self.method_ == "icm":
            return self._predict_icm(X, cov)
        if self.method_ == "independent":
            return self._predict_independent(X, cov)
        return self._predict_dense(X, cov)

    def _predict_dense(self, X: np.ndarray, cov: str):
        N, n = X.shape[0], self.n_tasks
        alpha = solve_upper(self._L, self._v)
        mean = np.empty((N, n))
        out = np.empty((N, n, n)) if cov == "full" else np.empty(N)
        chunk = max(1, _CHUNK_ELEMENTS // max(1, self._L.shape[0] * n))
        for start in range(0, N, chunk):
            Xc = X[start : start + chunk]
            G = self.kernel.gram(self._X, Xc)  # (nt, Nc n)
            mean[start : start + chunk] = (G.T @ alpha).reshape(-1, n)
            if cov == "none":
                continue
            V = solve_lower(self._L, G).reshape(self._L.shape[0], -1, n)
            full = self.kernel.diag_blocks(Xc) - np.einsum("kia,kib->iab", V, V)
            out[start : start + chunk] = block_output(full, cov)
        return finish_output(mean, out, cov)

    def _icm_coefficients(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Mean (N, n) and the eigen-coordinates c_i(x) (N, n) of Gamma_t(x, x) for the ICM path."""
        xi, U = self.kernel.eig
        s, Q, P = self._icm_eig()
        eta = self.noise
        denom = xi[None, :] * s[:, None] + eta  # (t, n): xi_i s_j + eta
        Xu, root, _ = self._compressed
        kq = (self.kernel.kernel.evaluate(X, Xu) * root[None, :]) @ Q  # (N, u) = k_t(x)^T E C^{-1/2} Q
        mean_coord = xi[None, :] * (kq @ (P / denom))  # (N, n): coordinates on u_i
        quad = (kq * kq) @ (1.0 / denom)  # (N, n): k^T (xi_i K + eta)^-1 k
        prior = self.kernel.kernel.diag(X)
        c = xi[None, :] * (prior[:, None] - xi[None, :] * quad)
        return mean_coord @ U.T, np.maximum(c, 0.0)

    def _predict_icm(self, X: np.ndarray, cov: str):
        return icm_output(*self._icm_coefficients(X), self.kernel.eig[1], cov)

    def _predict_independent(self, X: np.ndarray, cov: str):
        n = self.n_tasks
        mean = np.empty((X.shape[0], n))
        var = np.empty((X.shape[0], n))
        for i, gp in enumerate(self._gps):
            m, sd = gp.predict(X)
            mean[:, i] = m
            var[:, i] = sd**2
        if cov == "none":
            return mean
        if cov == "norm":
            return mean, np.max(var, axis=1)
        full = np.zeros((X.shape[0], n, n))
        full[:, np.arange(n), np.arange(n)] = var
        return mean, full

    # ------------------------------------------------------------------ diagnostics
    def info_gain(self) -> float:
        """``1/2 log det(I_{nt} + eta^{-1} G_t)`` (001 Thm 1) for the points observed so far."""
        if self.n_observations == 0:
            return 0.0
        if self.method_ == "dense":
            return float(np.sum(np.log(np.diag(self._L))) - 0.5 * self._L.shape[0] * np.log(self.noise))
        if self.method_ == "independent":
            return float(sum(gp.info_gain() for gp in self._gps))
        xi, _ = self.kernel.eig
        s, _, _ = self._icm_eig()
        return float(0.5 * np.sum(np.log1p(np.outer(s, xi) / self.noise)))

    def log_marginal_likelihood(self) -> float:
        """``log N(Y_t | 0, G_t + eta I)``, i.e.

        ``-1/2 Y^T (G_t + eta I)^-1 Y - 1/2 log det(G_t + eta I) - nt/2 log 2 pi``.
        """
        if self.n_observations == 0:
            return 0.0
        nt = self.n_observations * self.n_tasks
        if self.method_ == "dense":
            quad, logdet = float(self._v @ self._v), 2.0 * float(np.sum(np.log(np.diag(self._L))))
        elif self.method_ == "independent":
            return float(sum(gp.log_marginal_likelihood() for gp in self._gps))
        else:
            # repeated points: y = E ybar + r with E^T r = 0 splits the quadratic form, and
            # det(eta I_t + xi E K_u E^T) = eta^(t-u) det(eta I_u + xi K')
            xi, _ = self.kernel.eig
            s, _, P = self._icm_eig()
            _, _, residual = self._compressed
            denom = xi[None, :] * s[:, None] + self.noise
            repeats = (self.n_observations - s.size) * self.n_tasks
            quad = float(np.sum(P**2 / denom)) + residual / self.noise
            logdet = float(np.sum(np.log(denom))) + repeats * np.log(self.noise)
        return -0.5 * quad - 0.5 * logdet - 0.5 * nt * _LOG_2PI
