"""001's regrets on multi-objective test problems, and (re-exported from :mod:`warmbo.pareto`) the
Pareto front and hypervolume.

- :func:`expected_utility`: ``E_lambda[s_lambda(f(x))]`` by a sample average over weights.
- :func:`cumulative_regret`: ``R_C(T) = sum_t (max_x E_lambda s_lambda(f(x)) - E_lambda s_lambda(f(x_t)))``,
  the cumulative regret of the expected scalarised utility (001 Section 2 / Thm 2).
- :func:`bayes_regret`: ``R_B(T) = E_lambda[max_x s_lambda(f(x)) - max_{x in X_T} s_lambda(f(x))]``
  (001 Section 4.4, from Paria et al. 2020), for a finite domain given as the values F (|X|, n).
"""

from __future__ import annotations

import numpy as np

from ..pareto import _as_matrix, hypervolume, pareto_mask

__all__ = ["pareto_mask", "hypervolume", "expected_utility", "cumulative_regret", "bayes_regret"]


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
