"""Scalarisations ``s_lambda: R^n -> R`` and the weight prior ``P_lambda`` of 001 (Sections 2 and 5).

A user's preference between n objectives is a scalarisation with weights lambda on the simplex
``Lambda = {lambda : lambda_i > 0, ||lambda||_1 = 1}`` (001 Section 2):

- :class:`Linear`: ``s_lambda(y) = sum_i lambda_i y_i``;
- :class:`Chebyshev`: ``s_lambda(y) = min_i lambda_i (y_i - z_i)`` with a reference point z.

Both are 1-Lipschitz in the l2 norm on Lambda (001 Section 5 sets L = 1): for linear,
``|lambda^T (u - v)| <= ||lambda||_2 ||u - v||_2`` and ``||lambda||_2 <= ||lambda||_1 = 1``; for Chebyshev,
``|min_i a_i - min_i b_i| <= max_i |a_i - b_i| <= max_i lambda_i ||u - v||_inf <= ||u - v||_2``.
:meth:`Scalarization.lipschitz_constant` gives the tighter constant of a finite set of weights.

The weight prior of Paria et al. (2020), as stated in 001 Section 5: draw ``u ~ U[0, 1]^n``; linear
weights are ``lambda = u / ||u||_1``; Chebyshev weights are ``lambda = a / ||a||_1`` with
``a_i = ||u||_1 / u_i``. (:meth:`Scalarization.sample_weights`.)

``s(Y, weights)`` evaluates a batch: Y (N, n) and weights (k, n) give an (N, k) array;
:meth:`Scalarization.expected` averages over the weights, the sample average of ``E_lambda[s_lambda]``
that 001 uses in eq. (3).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_int

__all__ = ["Scalarization", "Linear", "Chebyshev", "as_weights"]


def _as_rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def as_weights(weights, n_tasks: int | None = None, name: str = "weights") -> np.ndarray:
    """Weights as a float64 array (k, n): finite, positive, each row summing to 1 (tolerance 1e-8)."""
    try:
        W = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape (k, n)") from None
    if W.ndim == 1:
        W = W[None, :]
    if W.ndim != 2 or W.shape[1] == 0:
        raise ValueError(f"{name} must have shape (k, n), got {W.shape}")
    if n_tasks is not None and W.shape[1] != n_tasks:
        raise ValueError(f"{name} must have {n_tasks} columns (one per task), got {W.shape[1]}")
    if not np.all(np.isfinite(W)) or np.any(W <= 0):
        raise ValueError(f"{name} must be positive and finite (lambda_i > 0)")
    if not np.allclose(W.sum(axis=1), 1.0, atol=1e-8):
        raise ValueError(f"each row of {name} must sum to 1 (weights on the simplex)")
    return W


def _as_values(Y, n_tasks: int) -> np.ndarray:
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[None, :]
    if Y.ndim != 2 or Y.shape[1] != n_tasks:
        raise ValueError(f"values must have shape (N, {n_tasks}) to match the weights, got {Y.shape}")
    return Y


class Scalarization(ABC):
    """A family ``s_lambda`` of scalarisations with the weight prior of 001 Section 5."""

    #: Lipschitz constant L in the l2 norm, valid for every lambda in the simplex (001 Section 5: 1).
    lipschitz: float = 1.0

    @abstractmethod
    def __call__(self, Y, weights) -> np.ndarray:
        """``s_lambda(y)`` for values Y (N, n) and weights (k, n): an (N, k) array."""

    @abstractmethod
    def _weights_from_uniform(self, u: np.ndarray) -> np.ndarray:
        """Map ``u ~ U(0, 1]^n`` (rows) to weights."""

    def sample_weights(self, n_tasks: int, size: int, seed=None) -> np.ndarray:
        """Draw ``size`` weight vectors from P_lambda (Paria et al.'s sampler, 001 Section 5)."""
        check_int(n_tasks, "n_tasks", 1)
        check_int(size, "size", 1)
        ref = getattr(self, "ref", None)
        if ref is not None and len(ref) != n_tasks:
            raise ValueError(
                f"n_tasks={n_tasks}, but the reference point {tuple(ref)} has {len(ref)} entries"
            )
        u = 1.0 - _as_rng(seed).random((int(size), int(n_tasks)))  # in (0, 1]: 1/u_i is finite
        return self._weights_from_uniform(u)

    def expected(self, Y, weights) -> np.ndarray:
        """Sample average ``(1/k) sum_j s_{lambda_j}(y)`` (N,), the expectation of eq. (3)."""
        return np.mean(self(Y, weights), axis=1)

    def lipschitz_constant(self, weights) -> float:
        """The smallest l2-Lipschitz constant valid for all the given weights (<= :attr:`lipschitz`)."""
        raise NotImplementedError

    @abstractmethod
    def to_dict(self) -> dict:
        """A JSON-ready description (stored with multi-task studies)."""

    @staticmethod
    def from_dict(data: dict) -> Scalarization:
        """Inverse of :meth:`to_dict`."""
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "linear":
            return Linear()
        if kind == "chebyshev":
            ref = data.get("ref")
            return Chebyshev(ref=None if ref is None else tuple(float(v) for v in ref))
        raise ValueError(f"unknown scalarization description {data!r}")


@dataclass(frozen=True)
class Linear(Scalarization):
    """``s_lambda(y) = sum_i lambda_i y_i``; weights ``lambda = u / ||u||_1`` (001 Sections 2, 5).

    Examples
    --------
    >>> from warmbo.scalarization import Linear
    >>> Linear()([[1.0, 3.0]], [[0.25, 0.75]]).tolist()
    [[2.5]]
    """

    def __call__(self, Y, weights) -> np.ndarray:
        W = as_weights(weights)
        return _as_values(Y, W.shape[1]) @ W.T

    def _weights_from_uniform(self, u: np.ndarray) -> np.ndarray:
        return u / u.sum(axis=1, keepdims=True)

    def lipschitz_constant(self, weights) -> float:
        return float(np.max(np.linalg.norm(as_weights(weights), axis=1)))

    def to_dict(self) -> dict:
        return {"type": "linear"}


@dataclass(frozen=True)
class Chebyshev(Scalarization):
    """``s_lambda(y) = min_i lambda_i (y_i - z_i)``; weights ``a / ||a||_1``, ``a_i = ||u||_1 / u_i``.

    Parameters
    ----------
    ref : sequence of float, optional
        The reference point z (default the origin). Choose it below every value of interest so that
        ``y_i - z_i > 0``; then s_lambda is monotone and rewards balanced improvement (Paria et al.).

    Examples
    --------
    >>> from warmbo.scalarization import Chebyshev
    >>> Chebyshev(ref=(0.0, 1.0))([[1.0, 3.0]], [[0.5, 0.5]]).tolist()
    [[0.5]]
    """

    ref: tuple[float, ...] | None = field(default=None)

    def __post_init__(self):
        if self.ref is not None:
            ref = np.asarray(self.ref, dtype=np.float64)
            if ref.ndim != 1 or ref.size == 0 or not np.all(np.isfinite(ref)):
                raise ValueError(f"ref must be a finite vector (one value per task), got {self.ref!r}")
            object.__setattr__(self, "ref", tuple(float(v) for v in ref))

    def __call__(self, Y, weights) -> np.ndarray:
        W = as_weights(weights)
        Y = _as_values(Y, W.shape[1])
        if self.ref is not None:
            if len(self.ref) != W.shape[1]:
                raise ValueError(f"ref has {len(self.ref)} values but there are {W.shape[1]} tasks")
            Y = Y - np.asarray(self.ref)
        return np.min(Y[:, None, :] * W[None, :, :], axis=2)

    def _weights_from_uniform(self, u: np.ndarray) -> np.ndarray:
        a = u.sum(axis=1, keepdims=True) / u
        return a / a.sum(axis=1, keepdims=True)

    def lipschitz_constant(self, weights) -> float:
        return float(np.max(as_weights(weights)))

    def to_dict(self) -> dict:
        return {"type": "chebyshev", "ref": None if self.ref is None else list(self.ref)}
