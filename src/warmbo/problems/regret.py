r"""Regret measures for benchmarking optimisers against a known optimum.

This module owns the regret curves reported by the benchmarks: simple regret (running best),
cumulative regret, and the inference regret of reference 000 (Meta-KeL; Kassraie, Rothfuss &
Krause, "Meta-Learning Hypothesis Spaces for Sequential Decision-making"), i.e. the regret of the
maximiser of the posterior mean rather than of the query point.

Convention: ``warmbo`` *maximises*, so by default :math:`f^*` is the maximum and the per-round
regret is :math:`f^* - f(x_t)`. Pass ``maximize=False`` for minimisation, where :math:`f^*` is the
minimum and the per-round regret is :math:`f(x_t) - f^*`. In both conventions every regret is
non-negative; values better than the optimum by more than :math:`10^{-9} \max(1, |f^*|)` are
rejected (they indicate a wrong optimum or a mixed-up sense), and smaller excesses, which are
floating-point round-off, are clipped to zero.

``values`` must be noiseless objective values :math:`f(x_t)`, not noisy observations.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "cumulative_inference_regret",
    "cumulative_regret",
    "inference_regret",
    "simple_regret",
]

_REL_TOL = 1e-9


def _instantaneous(values: object, optimum: object, maximize: object, arg: str) -> np.ndarray:
    """Validate inputs and return the per-round regret ``f* - f(x_t)`` (or ``f(x_t) - f*``)."""
    if not isinstance(maximize, (bool, np.bool_)):
        raise ValueError(f"maximize: must be a bool, got {maximize!r}")
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{arg}: could not convert to a float64 array ({exc})") from exc
    if v.ndim != 1:
        raise ValueError(f"{arg}: expected a 1-D array of shape (T,), got shape {v.shape}")
    if v.shape[0] == 0:
        raise ValueError(f"{arg}: must contain at least one value")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{arg}: all entries must be finite (got NaN or inf)")
    try:
        f_star = float(optimum)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"optimum: must be a real scalar, got {optimum!r}") from exc
    if not math.isfinite(f_star):
        raise ValueError(f"optimum: must be finite, got {f_star}")
    r = f_star - v if maximize else v - f_star
    tol = _REL_TOL * max(1.0, abs(f_star))
    worst = float(r.min())
    if worst < -tol:
        side = "above the maximum" if maximize else "below the minimum"
        raise ValueError(
            f"{arg}: a value lies {side} optimum={f_star!r} by {-worst:.3g}; check the optimum and "
            f"the `maximize` convention (maximize={bool(maximize)})"
        )
    return np.maximum(r, 0.0)


def simple_regret(values: ArrayLike, optimum: float, maximize: bool = True) -> np.ndarray:
    r"""Simple regret of the best point found so far.

    .. math::
        r_t = f^* - \max_{s \le t} f(x_s) \quad (t = 1, \dots, T)

    for maximisation, and :math:`r_t = \min_{s \le t} f(x_s) - f^*` for minimisation.

    Parameters
    ----------
    values : array_like, shape (T,)
        Noiseless objective values :math:`f(x_t)` of the queried points, in query order.
    optimum : float
        The global optimum :math:`f^*` (maximum if ``maximize``, else minimum).
    maximize : bool, default True
        Optimisation sense.

    Returns
    -------
    np.ndarray, shape (T,)
        Non-negative, non-increasing simple regret.

    Raises
    ------
    ValueError
        If ``values`` is not a non-empty finite 1-D array or beats ``optimum`` (beyond round-off),
        if ``optimum`` is not a finite scalar, or if ``maximize`` is not a bool.
    """
    r = _instantaneous(values, optimum, maximize, "values")
    return np.minimum.accumulate(r)


def cumulative_regret(values: ArrayLike, optimum: float, maximize: bool = True) -> np.ndarray:
    r"""Cumulative regret of the queried points.

    .. math::
        R_t = \sum_{s=1}^{t} \left(f^* - f(x_s)\right) \quad (t = 1, \dots, T)

    for maximisation, and :math:`R_t = \sum_{s \le t} (f(x_s) - f^*)` for minimisation.

    Parameters
    ----------
    values : array_like, shape (T,)
        Noiseless objective values :math:`f(x_t)` of the queried points, in query order.
    optimum : float
        The global optimum :math:`f^*`.
    maximize : bool, default True
        Optimisation sense.

    Returns
    -------
    np.ndarray, shape (T,)
        Non-negative, non-decreasing running cumulative regret; ``R[-1]`` is :math:`R_T`.

    Raises
    ------
    ValueError
        As for :func:`simple_regret`.
    """
    return np.cumsum(_instantaneous(values, optimum, maximize, "values"))


def inference_regret(values_at_mean_argmax: ArrayLike, optimum: float, maximize: bool = True) -> np.ndarray:
    r"""Inference regret: regret of the maximiser of the posterior mean (reference 000, Meta-KeL).

    .. math::
        r_t = f^* - f(\hat x_t), \qquad \hat x_t = \arg\max_x \mu_t(x),

    where :math:`\mu_t` is the posterior mean after round :math:`t`; for minimisation
    :math:`r_t = f(\hat x_t) - f^*` with :math:`\hat x_t = \arg\min_x \mu_t(x)`. Unlike
    :func:`simple_regret` there is no running best: the recommendation may get worse.

    Parameters
    ----------
    values_at_mean_argmax : array_like, shape (T,)
        Noiseless objective values :math:`f(\hat x_t)` at the recommended points.
    optimum : float
        The global optimum :math:`f^*`.
    maximize : bool, default True
        Optimisation sense.

    Returns
    -------
    np.ndarray, shape (T,)
        Non-negative inference regret per round.

    Raises
    ------
    ValueError
        If ``values_at_mean_argmax`` is not a non-empty finite 1-D array or beats ``optimum``
        (beyond round-off), if ``optimum`` is not a finite scalar, or if ``maximize`` is not a bool.
    """
    return _instantaneous(values_at_mean_argmax, optimum, maximize, "values_at_mean_argmax")


def cumulative_inference_regret(
    values_at_mean_argmax: ArrayLike, optimum: float, maximize: bool = True
) -> np.ndarray:
    r"""Running sum of the inference regret.

    .. math::
        R_t = \sum_{s=1}^{t} \left(f^* - f(\hat x_s)\right), \qquad \hat x_s = \arg\max_x \mu_s(x)

    (with the sign convention of :func:`inference_regret` for minimisation).

    Parameters
    ----------
    values_at_mean_argmax : array_like, shape (T,)
        Noiseless objective values :math:`f(\hat x_t)` at the recommended points.
    optimum : float
        The global optimum :math:`f^*`.
    maximize : bool, default True
        Optimisation sense.

    Returns
    -------
    np.ndarray, shape (T,)
        Non-negative, non-decreasing cumulative inference regret.

    Raises
    ------
    ValueError
        As for :func:`inference_regret`.
    """
    return np.cumsum(inference_regret(values_at_mean_argmax, optimum, maximize))
