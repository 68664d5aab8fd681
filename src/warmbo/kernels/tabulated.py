"""A kernel given by its Gram matrix on a finite domain (points are the indices 0..N-1).

``Tabulated(K)(X, Y) = K[X, Y]`` for index-valued inputs of shape (m, 1). This is how a kernel estimated
from data lives on a finite domain, e.g. the empirical covariance of the Intel-lab sensors used by the
GP-UCB literature and by 001's sensor experiment (Srinivas et al. 2010). K must be symmetric PSD.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_points
from .base import Kernel

__all__ = ["Tabulated"]


class Tabulated(Kernel):
    """``k(i, j) = K[i, j]`` on the domain {0, ..., N-1} (inputs are indices, shape (m, 1)).

    Parameters
    ----------
    K : (N, N) array
        Symmetric positive semi-definite Gram matrix (validated: finite, symmetric, eigenvalues
        >= -1e-10 max|K|).
    """

    input_dim = 1

    def __init__(self, K):
        try:
            K = np.array(K, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("K must be a numeric N x N matrix") from None
        if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
            raise ValueError(f"K must be a square N x N matrix, got shape {K.shape}")
        if not np.all(np.isfinite(K)):
            raise ValueError("K contains NaN or inf")
        scale = max(1e-300, float(np.max(np.abs(K))))
        if np.max(np.abs(K - K.T)) > 1e-10 * scale:
            raise ValueError("K must be symmetric")
        K = (K + K.T) / 2
        eigmin = float(np.linalg.eigvalsh(K)[0])
        if eigmin < -1e-10 * scale:
            raise ValueError(f"K is not positive semi-definite (smallest eigenvalue {eigmin:.3g})")
        self._set(K=K)

    def _parameters(self) -> dict:
        return {"K": self.K}

    @property
    def size(self) -> int:
        """N, the number of points of the domain."""
        return int(self.K.shape[0])

    def _index(self, X: np.ndarray, name: str) -> np.ndarray:
        X = as_points(X, name, 1)
        idx = np.rint(X[:, 0])
        if np.any(np.abs(X[:, 0] - idx) > 1e-9) or np.any(idx < 0) or np.any(idx >= self.size):
            raise ValueError(f"{name} must hold indices 0..{self.size - 1} of the tabulated domain")
        return idx.astype(int)

    def evaluate(self, X, Y):
        return self.K[np.ix_(self._index(X, "X"), self._index(Y, "Y"))]

    def diag(self, X):
        i = self._index(X, "X")
        return np.diag(self.K)[i].copy()
