"""Mean and standard deviation of values of any finite magnitude.

``np.std`` squares the deviations, so values beyond about 1.3e154 overflow to inf (and deviations
below about 1e-154 underflow to 0) although every value is a finite float that ``tell`` accepts; the
optimizer's standardisation and output transform then saw a flat objective or raised. Where numpy's
std overflows, or is below 1e-140 for values that differ, dividing by the largest magnitude first
keeps every step representable; elsewhere the moments are numpy's own. Written by hand: numpy has no
overflow-safe std.
"""

from __future__ import annotations

import numpy as np

__all__ = ["mean_std"]

# below this std the squared deviations are subnormal (or 0): numpy's std loses its digits
_TINY = 1e-140


def mean_std(y: np.ndarray) -> tuple[float, float]:
    """``(mean, std)`` of the finite values ``y`` (population std): numpy's (the same bits as ever)
    where they are finite and not tiny, else computed on ``y / max|y|`` and scaled back, which is
    always finite (both are at most ``max|y|``)."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        mean, std = float(np.mean(y)), float(np.std(y))
        if np.isfinite(mean) and np.isfinite(std) and (std >= _TINY or not np.ptp(y) > 0):
            return mean, std
        top = float(np.max(np.abs(y)))
        u = y / top
        return float(np.mean(u)) * top, float(np.std(u)) * top
