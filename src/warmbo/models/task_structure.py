"""Estimating a multi-task kernel's task structure from data (001 Sections 3.3 and 5).

001 assumes the multi-task kernel is known and suggests estimating it beforehand from a small random
sample of the design space ("Practical considerations", Section 3.3). Two estimators:

- :func:`estimate_B`: the sensor experiment's ``B = R^T K^{-1} R / m`` (001 Section 5): the m x n
  readings R are de-correlated by the scalar Gram matrix K of their locations, leaving the correlation
  between tasks. Several replicates (e.g. time steps) of the same m locations are averaged. A
  regulariser ``noise`` replaces K^{-1} by ``(K + noise I)^{-1}`` when K is singular (repeated locations).
- :func:`fit_omega`: omega of :class:`~warmbo.kernels.multitask.UniformTask` by maximising the MT-GP
  log marginal likelihood over [0, 1] (bounded Brent search from the best point of a grid).
- :func:`learn_task_kernel`: the multi-task kernel the optimizer uses when it is given only a scalar
  kernel k: ``UniformTask(k, n, omega)`` with the fitted omega, or ``ICM(k, B)`` with the estimated B
  shrunk towards its diagonal by ``n / (t + n)`` (t observations), so that few observations do not
  claim a strong task correlation.
"""

from __future__ import annotations

import numpy as np

from .._linalg import cholesky, solve_lower
from ..kernels.multitask import ICM, UniformTask, as_task_matrix
from .multitask import MultiTaskGP, as_task_values

__all__ = ["estimate_B", "fit_omega", "learn_task_kernel", "shrunk_B"]


def estimate_B(K, R, noise: float = 0.0) -> np.ndarray:
    """``B = (1/m) R^T (K + noise I)^{-1} R`` (001 Section 5, sensor data), averaged over replicates.

    Parameters
    ----------
    K : (m, m) array
        Gram matrix of the scalar kernel at the m locations of the readings.
    R : (m, n) or (r, m, n) array
        Readings of the n tasks at the m locations; a 3-D array holds r replicates (e.g. time steps).
    noise : float
        Regulariser added to K's diagonal (0 = the paper's K^{-1}; jitter is added with a warning if
        K is numerically singular).

    Returns
    -------
    B : (n, n) array, symmetric PSD.
    """
    K = np.asarray(K, dtype=np.float64)
    R = np.asarray(R, dtype=np.float64)
    if R.ndim == 2:
        R = R[None]
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square m x m matrix, got shape {K.shape}")
    if R.ndim != 3 or R.shape[1] != K.shape[0]:
        raise ValueError(
            f"R must have shape (m, n) or (replicates, m, n) with m = {K.shape[0]}, got {R.shape}"
        )
    if not np.all(np.isfinite(R)):
        raise ValueError("R (the readings) contains NaN or inf")
    if not (np.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a non-negative number, got {noise!r}")
    A = K + noise * np.eye(K.shape[0])
    L, _ = cholesky(A, name="K + noise I")
    Z = np.stack([solve_lower(L, r) for r in R])  # L^{-1} R per replicate
    B = np.einsum("rma,rmb->ab", Z, Z) / (R.shape[0] * R.shape[1])
    return as_task_matrix((B + B.T) / 2)


def fit_omega(kernel, X, Y, noise: float = 0.1, *, grid: int = 11) -> float:
    """omega in [0, 1] maximising the log marginal likelihood of ``UniformTask(kernel, n, omega)``.

    Parameters
    ----------
    kernel : Kernel
        The scalar kernel k.
    X : (t, d) array, Y : (t, n) array
        Observations of all n tasks.
    noise : float
        The regulariser eta.
    grid : int
        Size of the initial grid on [0, 1].
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2:
        raise ValueError(f"Y must have shape (t, n), got {Y.shape}")
    n = Y.shape[1]
    Y = as_task_values(Y, n, None, "Y")

    def nll(omega: float) -> float:
        model = MultiTaskGP(UniformTask(kernel, n, float(np.clip(omega, 0.0, 1.0))), noise).fit(X, Y)
        return -model.log_marginal_likelihood()

    omegas = np.linspace(0.0, 1.0, grid)
    values = np.array([nll(w) for w in omegas])
    i = int(np.argmin(values))
    lo, hi = omegas[max(i - 1, 0)], omegas[min(i + 1, grid - 1)]
    from scipy import optimize  # imported where used: `import warmbo` stays light

    res = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-4})
    return float(res.x) if res.fun <= values[i] else float(omegas[i])


def learn_task_kernel(kernel, X, Y, noise: float, similarity: str = "estimate"):
    """The multi-task kernel of a scalar ``kernel`` with its task structure learned from (X, Y).

    Parameters
    ----------
    kernel : Kernel
        The scalar kernel k.
    X : (t, d) array, Y : (t, n) array
        Observations of all n tasks (standardised per task).
    noise : float
        The regulariser eta.
    similarity : {"estimate", "uniform"}
        ``"uniform"``: :class:`~warmbo.kernels.multitask.UniformTask` with :func:`fit_omega`;
        ``"estimate"``: ``ICM(k, B)``, B from :func:`estimate_B` shrunk towards its diagonal by
        ``n / (t + n)`` (the identity if B vanishes).
    """
    Y = np.asarray(Y, dtype=np.float64)
    n = Y.shape[1]
    if similarity == "uniform":
        return UniformTask(kernel, n, fit_omega(kernel, X, Y, noise))
    if similarity != "estimate":
        raise ValueError(f"similarity must be 'estimate' or 'uniform', got {similarity!r}")
    return ICM(kernel, shrunk_B(estimate_B(kernel.gram(X), Y, noise=noise), np.asarray(X).shape[0]))


def shrunk_B(B, t: int) -> np.ndarray:
    """The task matrix ``learn_task_kernel`` uses: an estimate B from t observations shrunk towards its
    diagonal by ``n / (t + n)``, or the identity if B vanishes (shared with the closed-form LOO of
    :meth:`warmbo.models.StandardisedMultiTaskGP.loo`, which must estimate B exactly as a refit does)."""
    n = B.shape[0]
    shrink = n / (t + n)
    B = (1.0 - shrink) * B + shrink * np.diag(np.diag(B))
    if np.max(np.diag(B)) <= 0:
        B = np.eye(n)
    return B
