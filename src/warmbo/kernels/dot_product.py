"""Dot-product kernels: ``Linear`` and ``Polynomial``.

- Linear: ``k(x, y) = x^T y``;
- Polynomial: ``k(x, y) = (x^T y + c)^p`` with integer degree p >= 1 and offset c >= 0.

Neither has fitted hyperparameters (scale them with ``v * k``). Input gradients:
``d(x^T y)/dx = y`` and ``d(x^T y + c)^p/dx = p (x^T y + c)^(p-1) y``.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_points, check_int
from .base import Kernel

__all__ = ["Linear", "Polynomial"]


class Linear(Kernel):
    """Linear kernel ``k(x, y) = x^T y`` (the RKHS of linear functions, 002).

    Examples
    --------
    >>> from warmbo.kernels import Linear
    >>> float(Linear()([[1.0, 2.0]], [[3.0, 4.0]])[0, 0])
    11.0
    """

    def __init__(self):
        pass

    def evaluate(self, X, Y):
        return X @ Y.T

    def diag(self, X):
        X = as_points(X, "X")
        return np.einsum("ij,ij->i", X, X)

    @property
    def has_gradient_x(self) -> bool:
        return True

    def gradient_x(self, x, X):
        return np.array(X, dtype=np.float64, copy=True)

    def diag_gradient_x(self, x):
        return 2.0 * np.asarray(x, dtype=np.float64)


class Polynomial(Kernel):
    """Polynomial kernel ``k(x, y) = (x^T y + offset)^degree``.

    Parameters
    ----------
    degree : int
        Degree p >= 1.
    offset : float
        Non-negative offset c (c > 0 includes all monomials of degree <= p).
    """

    def __init__(self, degree: int = 2, offset: float = 1.0):
        check_int(degree, "degree", 1)
        if not np.isfinite(offset) or offset < 0:
            raise ValueError(f"offset must be finite and non-negative, got {offset!r}")
        self._set(degree=int(degree), offset=float(offset))

    def _parameters(self) -> dict:
        return {"degree": self.degree, "offset": self.offset}

    def evaluate(self, X, Y):
        return (X @ Y.T + self.offset) ** self.degree

    def diag(self, X):
        X = as_points(X, "X")
        return (np.einsum("ij,ij->i", X, X) + self.offset) ** self.degree

    @property
    def has_gradient_x(self) -> bool:
        return True

    def gradient_x(self, x, X):
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        X = np.asarray(X, dtype=np.float64)
        base = X @ x + self.offset
        return (self.degree * base ** (self.degree - 1))[:, None] * X

    def diag_gradient_x(self, x):
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        return self.degree * (x @ x + self.offset) ** (self.degree - 1) * 2.0 * x
