"""Maximisation of an acquisition over a search space (in the encoded unit cube).

- Finite spaces (``Space.grid``): every candidate is evaluated (in chunks) and the best is returned.
- Otherwise: a scrambled Sobol set of candidates is evaluated, the best ``n_starts`` distinct ones
  start L-BFGS-B inside ``[0, 1]^d`` (with the acquisition's analytic gradient when the kernel
  supplies one, finite differences otherwise), every result is projected onto valid encodings with
  ``Space.snap`` (integers, one-hot categoricals) and re-evaluated, and the best snapped point wins.

The returned point is always a valid encoded point of the space (inside the unit cube and snapped),
so ``space.decode(result.x)`` never leaves the space. The optimiser itself is scipy's L-BFGS-B.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize

__all__ = ["MaximizeResult", "maximize"]

_CHUNK = 4096


@dataclass(frozen=True)
class MaximizeResult:
    """Result of :func:`maximize`.

    Attributes
    ----------
    x : ndarray (d,)
        Maximiser, a valid encoded point of the space.
    value : float
        Acquisition value at ``x``.
    n_evaluations : int
        Number of acquisition evaluations used.
    """

    x: np.ndarray
    value: float
    n_evaluations: int


def _evaluate(acq, U: np.ndarray) -> np.ndarray:
    out = np.empty(U.shape[0])
    for start in range(0, U.shape[0], _CHUNK):
        out[start : start + _CHUNK] = acq(U[start : start + _CHUNK])
    return np.where(np.isfinite(out), out, -np.inf)


def maximize(
    acq,
    space,
    seed: int | None = None,
    *,
    n_candidates: int | None = None,
    n_starts: int = 5,
    exclude: np.ndarray | None = None,
) -> MaximizeResult:
    """Maximise a bound acquisition over ``space``.

    Parameters
    ----------
    acq : callable
        A bound acquisition (:class:`warmbo.acquisition.Bound`): ``acq(U) -> (m,)`` on encoded points,
        optionally ``value_and_gradient``/``has_gradient``.
    space : Space
        The search space; the search runs on its encoding.
    seed : int, optional
        Seed of the Sobol candidates.
    n_candidates : int, optional
        Number of Sobol candidates (default ``min(4096, 512 * d)`` rounded to a power of two).
    n_starts : int
        Number of L-BFGS-B starts from the best candidates.
    exclude : array (k, d), optional
        Encoded points that must not be returned (for a finite space: pending or observed points).

    Returns
    -------
    MaximizeResult
    """
    d = space.dim
    if space.is_finite:
        candidates = np.asarray(space.candidates, dtype=np.float64)
        values = _evaluate(acq, candidates)
        if exclude is not None and len(exclude):
            excluded = np.asarray(exclude, dtype=np.float64).reshape(-1, d)
            taken = np.any(np.all(np.isclose(candidates[:, None, :], excluded[None, :, :]), axis=2), axis=1)
            if not np.all(taken):
                values = np.where(taken, -np.inf, values)
        best = int(np.argmax(values))
        return MaximizeResult(candidates[best].copy(), float(values[best]), candidates.shape[0])

    if n_candidates is None:
        n_candidates = int(2 ** np.ceil(np.log2(min(4096, 512 * d))))
    U = space.sample_encoded(n_candidates, seed=seed)
    values = _evaluate(acq, U)
    n_evals = U.shape[0]
    order = np.argsort(-values)
    starts = [U[order[0]]]
    for i in order[1:]:
        if len(starts) >= n_starts:
            break
        if np.min(np.linalg.norm(np.asarray(starts) - U[i], axis=1)) > 1e-6:
            starts.append(U[i])

    use_gradient = bool(getattr(acq, "has_gradient", False))
    bounds = [(0.0, 1.0)] * d
    if use_gradient:

        def fun(u):
            value, grad = acq.value_and_gradient(u)
            if not np.isfinite(value):
                return 1e30, np.zeros(d)
            return -value, -np.asarray(grad, dtype=np.float64)

    else:

        def fun(u):
            value = float(acq(u[None, :])[0])
            return -value if np.isfinite(value) else 1e30

    finals = [U[order[0]]]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for start in starts:
            result = optimize.minimize(
                fun, start, jac=use_gradient, method="L-BFGS-B", bounds=bounds, options={"maxiter": 200}
            )
            n_evals += int(result.nfev)
            finals.append(np.clip(result.x, 0.0, 1.0))
    snapped = space.snap(np.asarray(finals))
    final_values = _evaluate(acq, snapped)
    n_evals += snapped.shape[0]
    best = int(np.argmax(final_values))
    return MaximizeResult(snapped[best].copy(), float(final_values[best]), n_evals)
