"""Shared dense linear algebra: Cholesky with adaptive jitter and block Cholesky updates.

Every posterior in warmbo factorises a matrix ``K + Lambda`` (Gram matrix plus noise). This module
owns that factorisation once, so the jitter policy and its warning are the same everywhere:

- :func:`cholesky` tries ``L L^T = A``; if ``A`` is not numerically positive definite it retries with
  ``A + j I``, ``j = 1e-10 * mean(diag A)`` multiplied by 10 each time, up to ``max_jitter`` relative,
  and warns (:class:`JitterWarning`) saying how much jitter it added. A matrix that still fails (or
  holds NaN/inf) raises :class:`NotPositiveDefiniteError`.
- :func:`cholesky_append` extends a factor when rows/columns are appended (block Cholesky):

  .. math::
     \\begin{pmatrix} A & B \\\\ B^T & C \\end{pmatrix} =
     \\begin{pmatrix} L & 0 \\\\ S^T & M \\end{pmatrix}
     \\begin{pmatrix} L^T & S \\\\ 0 & M^T \\end{pmatrix},\\quad
     S = L^{-1} B,\\quad M M^T = C - S^T S,

  which costs O(n^2 k + k^3) for k new points instead of O((n + k)^3) for a refactorisation.

Written by hand because numpy/scipy expose no jittered or updatable Cholesky (scipy.linalg.cho_factor
has neither); the triangular solves are scipy's LAPACK wrappers.
"""

from __future__ import annotations

import numpy as np

from ._warnings import warn

__all__ = [
    "JitterWarning",
    "NotPositiveDefiniteError",
    "cholesky",
    "cholesky_append",
    "solve_lower",
    "solve_upper",
]

_INITIAL_RELATIVE_JITTER = 1e-10
_MAX_RELATIVE_JITTER = 1e-4


class JitterWarning(RuntimeWarning):
    """A matrix was not numerically positive definite and jitter was added to its diagonal."""


class NotPositiveDefiniteError(np.linalg.LinAlgError):  # LinAlgError is a ValueError
    """A matrix is not positive definite even after the largest allowed jitter."""


_SCIPY_LINALG = None


def scipy_linalg():
    """``scipy.linalg``, imported on first use (``import warmbo`` stays light, issue 15) and then kept:
    an import statement in a function that a search calls at every step costs 3-5 us per call."""
    global _SCIPY_LINALG
    if _SCIPY_LINALG is None:
        from scipy import linalg

        _SCIPY_LINALG = linalg
    return _SCIPY_LINALG


def _try_cholesky(A: np.ndarray) -> np.ndarray | None:
    linalg = scipy_linalg()
    try:
        return linalg.cholesky(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None


def cholesky(
    A: np.ndarray,
    *,
    max_jitter: float = _MAX_RELATIVE_JITTER,
    name: str = "matrix",
    jitter_scale: float | None = None,
) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of a symmetric matrix, adding jitter to the diagonal only if needed.

    Parameters
    ----------
    A : (n, n) array
        Symmetric matrix, normally a Gram matrix plus noise.
    max_jitter : float
        Largest jitter tried, relative to ``mean(diag A)``.
    name : str
        What the matrix is, used in warnings and errors.
    jitter_scale : float, optional
        Scale the relative jitter refers to (default ``mean(|diag A|)``). A Schur complement that is
        zero up to round-off needs the scale of the block it came from, not its own.

    Returns
    -------
    L : (n, n) array
        Lower triangular with ``L L^T = A + jitter I``.
    jitter : float
        The absolute jitter added (0.0 when none was needed).
    """
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {A.shape}")
    if A.shape[0] == 0:
        return np.zeros((0, 0)), 0.0
    if not np.all(np.isfinite(A)):
        raise NotPositiveDefiniteError(f"{name} contains NaN or inf values")
    L = _try_cholesky(A)
    if L is not None:
        return L, 0.0
    scale = float(np.mean(np.abs(np.diag(A)))) if jitter_scale is None else float(jitter_scale)
    if not scale > 0.0:
        scale = 1.0
    relative = _INITIAL_RELATIVE_JITTER
    while relative <= max_jitter * (1 + 1e-12):
        jitter = relative * scale
        L = _try_cholesky(A + jitter * np.eye(A.shape[0]))
        if L is not None:
            warn(  # (at the user's line; from a worker thread, said by the thread that waits for it)
                f"{name} is not numerically positive definite; added jitter {jitter:.3g} "
                f"({relative:.0e} x mean diagonal) to its diagonal",
                JitterWarning,
            )
            return L, jitter
        relative *= 10.0
    eigmin = float(np.linalg.eigvalsh((A + A.T) / 2)[0])
    raise NotPositiveDefiniteError(
        f"{name} is not positive definite (smallest eigenvalue {eigmin:.3g}) even with jitter "
        f"{max_jitter:.0e} x mean diagonal; check the kernel and the noise"
    )


def cholesky_append(
    L: np.ndarray, B: np.ndarray, C: np.ndarray, *, name: str = "matrix"
) -> tuple[np.ndarray, np.ndarray, float]:
    """Blocks of the Cholesky factor of ``[[A, B], [B^T, C]]`` given ``L = chol(A)``.

    Parameters
    ----------
    L : (n, n) array
        Lower Cholesky factor of the existing block A.
    B : (n, k) array
        Cross block between the old and the new points.
    C : (k, k) array
        New diagonal block.

    Returns
    -------
    S_T : (k, n) array
        The new rows' off-diagonal part, ``(L^{-1} B)^T``.
    M : (k, k) array
        Lower factor of the Schur complement ``C - S^T S`` (jittered if needed, with a warning).
    jitter : float
        Absolute jitter added to the Schur complement's diagonal.
    """
    S = solve_lower(L, B)
    schur = C - S.T @ S
    schur = (schur + schur.T) / 2
    # relative jitter is measured against the new block C (what a refactorisation would use), since
    # the Schur complement of duplicated noise-free points is ~1e-16 and gives no usable scale
    M, jitter = cholesky(schur, name=name, jitter_scale=float(np.mean(np.abs(np.diag(C)))))
    return S.T, M, jitter


def solve_lower(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve ``L X = B`` for lower-triangular L."""
    if L.shape[0] == 0:
        return np.zeros_like(B, dtype=np.float64)
    return scipy_linalg().solve_triangular(L, B, lower=True, check_finite=False)


def solve_upper(L: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve ``L^T X = B`` for lower-triangular L."""
    if L.shape[0] == 0:
        return np.zeros_like(B, dtype=np.float64)
    return scipy_linalg().solve_triangular(L, B, lower=True, trans="T", check_finite=False)
