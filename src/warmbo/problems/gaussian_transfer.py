"""003's synthetic transfer problem (Section 4.1): a 2-D Gaussian pdf as source and target.

Source: the pdf of N((0, 0), I) sampled at ``n_source`` points uniform on [-3, 3]^2; target: the
same pdf centred at (0.1, 0.1) ("related") or (1.5, 1.5) ("mildly related"), maximised on the box.
"""

from __future__ import annotations

import numpy as np

from ..space import Space

__all__ = ["SYNTHETIC_CASES", "synthetic_source"]

SYNTHETIC_CASES = {"related": (0.1, 0.1), "mildly related": (1.5, 1.5)}


def _pdf(X, centre) -> np.ndarray:
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    return np.exp(-0.5 * np.sum((X - np.asarray(centre)) ** 2, axis=1)) / (2.0 * np.pi)


class _Gaussian:
    """Picklable target ``params -> N(x; centre, I)`` on the box space."""

    def __init__(self, centre):
        self.centre = tuple(float(c) for c in centre)

    def __call__(self, params: dict) -> float:
        return float(_pdf([params["x0"], params["x1"]], self.centre)[0])


def _box():
    return Space.box([(-3.0, 3.0), (-3.0, 3.0)])


def synthetic_source(repeat: int, seed: int = 0, n_source: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """Repeat ``repeat``'s source: ``n_source`` uniform points of [-3, 3]^2 (encoded), pdf at (0, 0)."""
    rng = np.random.default_rng([seed, repeat, 25])
    X = rng.uniform(-3.0, 3.0, size=(n_source, 2))
    space = _box()
    return space.encode([{"x0": a, "x1": b} for a, b in X]), _pdf(X, (0.0, 0.0))
