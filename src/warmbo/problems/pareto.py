"""Multi-objective metrics (maximisation): Pareto front, hypervolume, and 001's regrets.

- :func:`pareto_mask`: which rows of Y (N, n) are not Pareto dominated (001 Section 4.4: x is dominated
  by x' if ``f_i(x) <= f_i(x')`` for all i and ``<`` for some i).
- :func:`hypervolume`: the Lebesgue measure of the region dominated by the points and bounded below by a
  reference point r, ``vol(union_p [r, p])``. Two objectives: an exact O(N log N) sweep. More
  objectives: exact recursive slicing along the last objective (hypervolume by slicing objectives,
  While et al. 2006), exponential in n but fine for the fronts of a BO run. Written by hand to keep
  pymoo/moocore out of the core install; tested against inclusion-exclusion and Monte Carlo.
- :func:`expected_utility`: ``E_lambda[s_lambda(f(x))]`` by a sample average over weights.
- :func:`cumulative_regret`: ``R_C(T) = sum_t (max_x E_lambda s_lambda(f(x)) - E_lambda s_lambda(f(x_t)))``,
  the cumulative regret of the expected scalarised utility (001 Section 2 / Thm 2).
- :func:`bayes_regret`: ``R_B(T) = E_lambda[max_x s_lambda(f(x)) - max_{x in X_T} s_lambda(f(x))]``
  (001 Section 4.4, from Paria et al. 2020), for a finite domain given as the values F (|X|, n).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pareto_mask", "hypervolume", "expected_utility", "cumulative_regret", "bayes_regret"]


def _as_matrix(Y, name: str) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[None, :]
    if Y.ndim != 2 or Y.shape[1] == 0:
        raise ValueError(f"{name} must have shape (N, n), got {Y.shape}")
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{name} contains NaN or inf")
    return Y


def pareto_mask(Y) -> np.ndarray:
    """Boolean mask of the non-dominated rows of Y (N, n), maximisation. Duplicates are all kept."""
    Y = _as_matrix(Y, "Y")
    geq = np.all(Y[:, None, :] >= Y[None, :, :], axis=2)  # geq[j, i]: row j >= row i everywhere
    gt = np.any(Y[:, None, :] > Y[None, :, :], axis=2)
    dominated = np.any(geq & gt, axis=0)
    return ~dominated


def _hv2(P: np.ndarray, ref: np.ndarray) -> float:
    order = np.argsort(-P[:, 0], kind="stable")
    volume, best_y = 0.0, ref[1]
    for x, y in P[order]:
        if y > best_y:
            volume += (x - ref[0]) * (y - best_y)
            best_y = y
    return float(volume)


def _hv(P: np.ndarray, ref: np.ndarray) -> float:
    if P.shape[0] == 0:
        return 0.0
    if P.shape[1] == 1:
        return float(np.max(P[:, 0]) - ref[0])
    if P.shape[1] == 2:
        return _hv2(P, ref)
    # slice along the last objective: between consecutive levels, the dominated region's cross-section
    # is the (n-1)-dimensional hypervolume of the points at or above the level
    levels = np.unique(P[:, -1])
    volume, lower = 0.0, ref[-1]
    for level in levels:
        above = P[P[:, -1] >= level, :-1]
        volume += (level - lower) * _hv(above[pareto_mask(above)], ref[:-1])
        lower = level
    return float(volume)


def hypervolume(Y, ref) -> float:
    """Hypervolume dominated by the points Y (N, n) above the reference point ``ref`` (maximisation).

    Points not strictly above ``ref`` in every objective contribute nothing.

    Examples
    --------
    >>> from warmbo.problems.pareto import hypervolume
    >>> hypervolume([[1.0, 2.0], [2.0, 1.0]], ref=[0.0, 0.0])
    3.0
    """
    Y = _as_matrix(Y, "Y")
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    if ref.shape[0] != Y.shape[1] or not np.all(np.isfinite(ref)):
        raise ValueError(f"ref must be a finite vector of length {Y.shape[1]}, got {ref!r}")
    P = Y[np.all(Y > ref, axis=1)]
    if P.shape[0] == 0:
        return 0.0
    P = P[pareto_mask(P)]
    return _hv(np.unique(P, axis=0), ref)


def expected_utility(F, scalarization, weights) -> np.ndarray:
    """``E_lambda[s_lambda(f(x))]`` (N,) for values F (N, n), averaging over the weight sample."""
    return scalarization.expected(_as_matrix(F, "F"), weights)


def cumulative_regret(F, chosen, scalarization, weights) -> np.ndarray:
    """``R_C(t)`` for t = 1..T (cumulative sums) on a finite domain (001 Section 2).

    Parameters
    ----------
    F : (|X|, n) array
        True objective values at every point of the domain.
    chosen : (T,) int array
        Index into F of the point queried at each round.
    scalarization, weights
        ``s_lambda`` and the weight sample representing P_lambda.
    """
    utility = expected_utility(F, scalarization, weights)
    chosen = np.asarray(chosen, dtype=int).reshape(-1)
    return np.cumsum(np.max(utility) - utility[chosen])


def bayes_regret(F, chosen, scalarization, weights) -> np.ndarray:
    """``R_B(t) = E_lambda[max_x s_lambda(f(x)) - max_{s <= t} s_lambda(f(x_s))]`` for t = 1..T."""
    S = scalarization(_as_matrix(F, "F"), weights)  # (|X|, k)
    chosen = np.asarray(chosen, dtype=int).reshape(-1)
    best_so_far = np.maximum.accumulate(S[chosen], axis=0)  # (T, k)
    return np.mean(np.max(S, axis=0)[None, :] - best_so_far, axis=1)
