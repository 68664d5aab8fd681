"""Kernels learned on auxiliary data alone: the DT-MKL-style mixture and SE-ARD baselines of 004.

004 (Shilton et al., weight-prior tuning, Section 6) compares tuned-prior BO with two ways of using
the auxiliary data A only to choose a *standard* covariance, after which BO runs on the target with
that kernel held fixed:

- DT-MKL (Duan et al. 2012) in the form 004 eq. 17 states: ``K = v_0 K_SE + v_1 K_Matern-1/2 +
  v_2 K_Matern-3/2``, "all hyper-parameters in (17) selected to minimize LOO error on A"
  (:func:`fit_mkl_kernel`);
- ARD-SE "with hyperparameters tuned to minimize LOO error on the auxiliary dataset"
  (:func:`fit_ard_kernel`).

Simplifications (004 gives no more detail):

- DT-MKL proper (Duan et al.) learns the mixture weights jointly with an SVM and a distribution-
  mismatch penalty between the domains; here, as 004 eq. 17 describes it, the weights and the three
  (isotropic) lengthscales are fitted by minimising the leave-one-out squared error of a GP on A
  (:class:`warmbo.GP` with ``optimizer="loo-mse"``: closed-form LOO, analytic gradients, L-BFGS-B
  with random restarts), the noise level with them.
- The outputs of A are standardised (``normalize_y``), so the fitted weights are in units of A's
  standard deviation; a GP on the target with ``normalize_y=True`` uses them on the target's own
  standardised scale. The sign of A's outputs does not matter (a covariance is invariant to y -> -y),
  which is why these baselines are not misled by flipped data the way env-GP and diff-GP are.
- :func:`fit_ard_kernel` defaults to ML-II (log marginal likelihood), the usual way to tune ARD;
  pass ``objective="loo-mse"`` (or ``"loo"``) for 004's LOO criterion.

Both functions return the fitted :class:`~warmbo.kernels.Kernel`; the fitted noise variance (in A's
standardised units) is available via ``return_noise=True``.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_points, as_values
from ..kernels import RBF, Constant, Kernel, Matern
from ..models.gp import GP

__all__ = ["fit_mkl_kernel", "fit_ard_kernel", "mkl_kernel"]

_OBJECTIVES = ("ml2", "loo", "loo-mse")


def mkl_kernel(lengthscale: float = 0.3, weight: float = 1.0 / 3.0) -> Kernel:
    """The unfitted mixture ``w1 SE(l1) + w2 Matern-1/2(l2) + w3 Matern-3/2(l3)`` of 004 eq. 17."""
    w_bounds, l_bounds = (1e-4, 1e2), (1e-2, 1e2)
    return (
        Constant(weight, bounds=w_bounds) * RBF(lengthscale, bounds=l_bounds)
        + Constant(weight, bounds=w_bounds) * Matern(0.5, lengthscale, bounds=l_bounds)
        + Constant(weight, bounds=w_bounds) * Matern(1.5, lengthscale, bounds=l_bounds)
    )


def _check(X_aux, y_aux, objective: str) -> tuple[np.ndarray, np.ndarray]:
    if objective not in _OBJECTIVES:
        raise ValueError(f"objective must be one of {_OBJECTIVES}, got {objective!r}")
    X = as_points(X_aux, "X_aux")
    y = as_values(y_aux, "y_aux", X.shape[0])
    if X.shape[0] < 3:
        raise ValueError(f"auxiliary data need at least 3 points, got {X.shape[0]}")
    return X, y


def _fit(kernel: Kernel, X, y, objective: str, seed, n_restarts: int, return_noise: bool):
    gp = GP(
        kernel,
        noise=1e-3,
        optimizer=objective,
        normalize_y=True,
        n_restarts=n_restarts,
        fit_noise=True,
        noise_bounds=(1e-6, 1.0),
        seed=seed,
    ).fit(X, y)
    return (gp.kernel_, float(gp.noise_level_)) if return_noise else gp.kernel_


def fit_mkl_kernel(
    X_aux,
    y_aux,
    seed: int | None = None,
    *,
    objective: str = "loo-mse",
    n_restarts: int = 4,
    return_noise: bool = False,
):
    """DT-MKL-style kernel of 004 eq. 17 fitted on the auxiliary data A by leave-one-out.

    ``w1 SE(l1) + w2 Matern-1/2(l2) + w3 Matern-3/2(l3)`` (isotropic lengthscales), weights,
    lengthscales and a noise level chosen by minimising the LOO squared error of a GP on A with
    standardised outputs (``objective="loo-mse"``; ``"loo"`` = LOO log predictive probability,
    ``"ml2"`` = marginal likelihood). Returns the fitted kernel (and the noise variance with
    ``return_noise=True``). See the module docstring for how this simplifies Duan et al.

    Examples
    --------
    >>> import numpy as np
    >>> from warmbo.transfer.mkl import fit_mkl_kernel
    >>> X = np.random.default_rng(0).uniform(size=(30, 2))
    >>> k = fit_mkl_kernel(X, np.sin(6 * X[:, 0]), seed=0)
    >>> k.gram(X).shape
    (30, 30)
    """
    X, y = _check(X_aux, y_aux, objective)
    return _fit(mkl_kernel(), X, y, objective, seed, n_restarts, return_noise)


def fit_ard_kernel(
    X_aux,
    y_aux,
    seed: int | None = None,
    *,
    objective: str = "ml2",
    n_restarts: int = 4,
    return_noise: bool = False,
):
    """SE-ARD kernel ``Constant * RBF(l_1, ..., l_d)`` tuned on the auxiliary data A.

    ML-II by default; 004 Section 6 tunes it by LOO error on A (``objective="loo-mse"``). Returns
    the fitted kernel (and the noise variance with ``return_noise=True``).
    """
    X, y = _check(X_aux, y_aux, objective)
    kernel = Constant(1.0, bounds=(1e-3, 1e2)) * RBF(np.full(X.shape[1], 0.3), bounds=(1e-2, 1e2))
    return _fit(kernel, X, y, objective, seed, n_restarts, return_noise)
