"""Pareto fronts of observed values (maximisation): which points are not dominated, and the
hypervolume they dominate.

- :func:`pareto_mask`: which rows of Y (N, n) are not Pareto dominated (001 Section 4.4: x is dominated
  by x' if ``f_i(x) <= f_i(x')`` for all i and ``<`` for some i).
- :func:`hypervolume`: the Lebesgue measure of the region dominated by the points and bounded below by a
  reference point r, ``vol(union_p [r, p])``. Two objectives: an exact O(N log N) sweep. More
  objectives: exact recursive slicing along the last objective (hypervolume by slicing objectives,
  While et al. 2006), exponential in n but fine for the fronts of a BO run. Written by hand to keep
  pymoo/moocore out of the core install; tested against inclusion-exclusion and Monte Carlo.

The multi-task optimizer and the reports use them on a study's trials; :mod:`warmbo.problems.pareto`
adds 001's regrets on test problems.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pareto_mask", "hypervolume"]


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

    Points not strictly above ``ref`` in every objective contribute nothing. A minimised task's
    column and reference value are negated first (``Y * opt.signs``, ``ref * opt.signs`` of a
    :class:`~warmbo.MultiTaskOptimizer`).

    Examples
    --------
    >>> from warmbo.pareto import hypervolume
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
