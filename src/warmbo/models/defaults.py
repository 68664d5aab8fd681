"""The default surrogate of the optimizer and of the transfer models built on it."""

from __future__ import annotations

import numpy as np

from ..kernels import Constant, Kernel, Matern
from .gp import GP

__all__ = ["default_model"]


def default_model(dim: int, seed: int | None = None, kernel: Kernel | None = None) -> GP:
    """The default model: GP with ``Constant * Matern-5/2`` ARD (or ``kernel``), ML-II, standardised y."""
    if kernel is None:
        kernel = Constant(1.0, bounds=(1e-2, 1e2)) * Matern(2.5, np.full(dim, 0.3), bounds=(1e-2, 1e2))
    return GP(
        kernel,
        noise=1e-4,
        optimizer="ml2",
        normalize_y=True,
        n_restarts=2,
        fit_noise=True,
        noise_bounds=(1e-6, 1.0),
        seed=seed,
    )
