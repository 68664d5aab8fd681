"""A fast approximation of 004's tuned kernel K^A_2 in two dimensions: tabulated once, interpolated.

The exact :class:`~warmbo.kernels.free.TunedKernel` costs O(|A|^2 d) per entry (|A| auxiliary
points); :class:`InterpolatedTunedKernel` costs O(1) after an O(grid^2 |A|^2) table, for the SE free
kernel on the unit square (see its docstring for the identity it rests on). Written by hand: no
library offers K^A_2; the interpolation is scipy's bicubic ``RectBivariateSpline``.
"""

from __future__ import annotations

import numpy as np

from . import free as free_kernels
from .base import Affine, Kernel

__all__ = ["InterpolatedTunedKernel", "interpolation_error"]


class InterpolatedTunedKernel(Kernel):
    """The normalised K^A_2 of an SE free kernel on the unit cube, tabulated once and interpolated.

    For the SE free kernel, ``K^A_2(x, x') = e^{-nu/2 (|x|^2 + |x'|^2)} G(x * x')`` with
    ``G(u) = sum_ij alpha_i alpha_j e^{-nu/2 (|a_i|^2 + |a_j|^2)} e^{nu (a_i * a_j) . u}`` (element-wise
    products), so the normalised kernel is ``G(x * x') / sqrt(G(x * x) G(x' * x'))``: the prefactors
    cancel. On the (mapped) cube ``u = x * x'`` lies in a known square ([-1, 1]^2 for
    ``TunedPrior(centre=True)``, whose kernel is ``Affine(K^A_2, 2, -1)``), so G (smooth) is tabulated
    exactly on a ``grid x grid`` lattice (O(|A|^2) per node, once) and evaluated by bicubic splines: each
    kernel entry costs O(1) instead of O(|A|^2 d). An approximation of the exact
    :class:`~warmbo.kernels.free.TunedKernel` (its error is measured by :func:`interpolation_error`);
    2-D only.
    """

    def __init__(self, tuned, grid: int = 161):
        from scipy.interpolate import RectBivariateSpline

        scale, shift = 1.0, 0.0
        if isinstance(tuned, Affine):  # learned on centred inputs (TunedPrior(centre=True))
            scale, shift = float(np.ravel(tuned.scale)[0]), float(np.ravel(tuned.shift)[0])
            tuned = tuned.kernel
        if not isinstance(tuned, free_kernels.TunedKernel):
            raise ValueError(
                f"InterpolatedTunedKernel needs a 2-D TunedKernel with an SE free kernel, got {tuned!r}"
            )
        free, A, alpha = tuned.free, tuned.A, tuned.alpha
        if not isinstance(free, free_kernels.SE) or A.shape[1] != 2:
            raise ValueError("InterpolatedTunedKernel needs a 2-D TunedKernel with an SE free kernel")
        # range of u = x * x' for x, x' in the mapped cube [v0, v1]
        v0, v1 = sorted((shift, scale + shift))
        ends = [v0 * v0, v0 * v1, v1 * v1] + ([0.0] if v0 < 0 < v1 else [])
        lo, hi = min(ends), max(ends)
        axis = np.linspace(lo, hi, grid)
        U = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
        G = free._aux_sum(A, np.outer(alpha, alpha), U, np.zeros(U.shape[0])).reshape(grid, grid)
        if not np.all(np.isfinite(G)):
            raise ValueError("K^A_2 overflows on the grid")
        norm = float(np.max(np.abs(G))) or 1.0
        self._set(
            spline=RectBivariateSpline(axis, axis, G / norm, kx=3, ky=3),
            n_aux=int(A.shape[0]),
            grid=int(grid),
            input_dim=2,
            map=(scale, shift),
            range=(lo, hi),
        )

    def _parameters(self) -> dict:
        return {"n_aux": self.n_aux, "grid": self.grid}

    def _G(self, U: np.ndarray) -> np.ndarray:
        U = np.clip(U, *self.range)
        return self.spline.ev(U[..., 0], U[..., 1])

    def evaluate(self, X, Y):
        X, Y = X * self.map[0] + self.map[1], Y * self.map[0] + self.map[1]
        K = self._G(X[:, None, :] * Y[None, :, :])
        return free_kernels.cosine_normalise(K, self._G(X * X), self._G(Y * Y), X, Y)

    def diag(self, X):
        return np.ones(np.atleast_2d(X).shape[0])


def interpolation_error(tuned, fast: InterpolatedTunedKernel, n: int = 200, seed: int = 0) -> float:
    """Largest absolute difference between the exact normalised K^A_2 and its interpolation."""
    X = np.random.default_rng(seed).uniform(size=(n, 2))
    return float(np.max(np.abs(tuned(X, X) - fast(X, X))))
