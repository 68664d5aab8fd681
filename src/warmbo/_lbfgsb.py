"""A lean driver of scipy's L-BFGS-B routine, for the two searches that run at every ask.

The hyperparameter fit and the acquisition's local search call ``scipy.optimize.minimize(...,
method="L-BFGS-B", jac=True)`` thousands of times per study, each on a cheap function (a few
hundred microseconds). Around each evaluation ``minimize`` adds its wrappers: a ``ScalarFunction``
with memoisation, two copies of ``x``, scalar checks, an ``OptimizeResult`` per iteration for the
callback, and a setup of about 0.5 ms per call (measured in session 25: about a quarter of a 50-trial
run's CPU on the 2-core test machine).
:func:`minimize_lbfgsb` runs scipy's own compiled routine (``scipy.optimize._lbfgsb.setulb``)
in the same reverse-communication loop as ``scipy.optimize._lbfgsb_py._minimize_lbfgsb``, with the
same memoisation of the last point, the same counts and stopping rules, so the iterates, the result
and ``nfev`` are the same bit for bit (tested against ``minimize``). Written by hand because scipy
offers no public entry point without the wrappers.

The routine's interface is private. It has been stable since scipy 1.15 (the C translation of the
Fortran code); with any scipy outside :data:`_TESTED` the driver calls ``scipy.optimize.minimize``
instead, which gives the same result more slowly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LbfgsbResult", "minimize_lbfgsb"]

#: scipy versions whose private ``setulb`` has the signature used here: [1.15, 1.18)
_TESTED = ((1, 15), (1, 18))
_ROUTINE: object = None  # the routine, False when unavailable; looked up on first use


@dataclass(frozen=True)
class LbfgsbResult:
    """What the callers use of scipy's ``OptimizeResult``: the last point and value, the number of
    function evaluations and iterations."""

    x: np.ndarray
    fun: float
    nfev: int
    nit: int


def _routine():
    global _ROUTINE
    if _ROUTINE is None:
        import scipy

        version = tuple(int(part) for part in scipy.__version__.split(".")[:2] if part.isdigit())
        _ROUTINE = False
        if _TESTED[0] <= version < _TESTED[1]:
            try:
                from scipy.optimize import _lbfgsb

                _ROUTINE = _lbfgsb.setulb
            except (ImportError, AttributeError):
                _ROUTINE = False
    return _ROUTINE


def minimize_lbfgsb(
    fun,
    x0,
    bounds,
    *,
    ftol: float = 2.2204460492503131e-09,
    gtol: float = 1e-5,
    maxfun: int = 15000,
    maxiter: int = 15000,
    maxcor: int = 10,
    maxls: int = 20,
) -> LbfgsbResult:
    """Minimise ``fun(x) -> (value, gradient)`` from ``x0`` within ``bounds`` (a sequence of
    ``(low, high)`` pairs or an array of shape (n, 2)) by L-BFGS-B, as
    ``scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, options=...)``
    with the same option names; returns an :class:`LbfgsbResult`."""
    bounds = np.asarray(bounds, dtype=np.float64).reshape(-1, 2)
    x0 = np.asarray(x0, dtype=np.float64).ravel()
    n = x0.shape[0]
    if bounds.shape[0] != n:
        raise ValueError(f"x0 has {n} entries but bounds {bounds.shape[0]}")
    if (bounds[:, 0] > bounds[:, 1]).any():
        raise ValueError("L-BFGS-B: one of the lower bounds is greater than an upper bound")
    routine = _routine()
    if routine is False:
        from scipy import optimize

        options = {"ftol": ftol, "gtol": gtol, "maxfun": maxfun, "maxiter": maxiter}
        options.update(maxcor=maxcor, maxls=maxls)
        result = optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, options=options)
        return LbfgsbResult(np.asarray(result.x), float(result.fun), int(result.nfev), int(result.nit))
    low, high = bounds[:, 0].copy(), bounds[:, 1].copy()
    # nbd: 0 unbounded, 1 lower only, 2 both, 3 upper only (L-BFGS-B's convention)
    finite_low, finite_high = np.isfinite(low), np.isfinite(high)
    nbd = np.where(finite_low, np.where(finite_high, 2, 1), np.where(finite_high, 3, 0)).astype(np.int32)
    low[~finite_low] = 0.0
    high[~finite_high] = 0.0
    x = np.clip(x0, bounds[:, 0], bounds[:, 1]).astype(np.float64)
    factr = ftol / np.finfo(float).eps
    m = int(maxcor)
    f = np.array(0.0, dtype=np.float64)
    g = np.zeros(n, dtype=np.float64)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m, np.float64)
    iwa = np.zeros(3 * n, dtype=np.int32)
    task = np.zeros(2, dtype=np.int32)
    ln_task = np.zeros(2, dtype=np.int32)
    lsave = np.zeros(4, dtype=np.int32)
    isave = np.zeros(44, dtype=np.int32)
    dsave = np.zeros(29, dtype=np.float64)

    def evaluate(point):
        value, gradient = fun(point.copy())
        if not np.isscalar(value):
            try:
                value = np.asarray(value).item()
            except (TypeError, ValueError) as exc:
                raise ValueError("The objective function must return a scalar value.") from exc
        return value, np.atleast_1d(gradient)

    # scipy evaluates at the (clipped) start when it sets up, then serves the routine's first
    # request from its memo of the last point; so does this loop
    last_x = x.copy()
    last = evaluate(last_x)
    nfev, nit = 1, 0
    while True:
        g = g.astype(np.float64)
        routine(m, x, low, high, nbd, f, g, factr, gtol, wa, iwa, task, lsave, isave, dsave, maxls, ln_task)
        if task[0] == 3:  # evaluate f and g at x
            if not np.all(x == last_x):
                last_x = x.copy()
                last = evaluate(last_x)
                nfev += 1
            f, g = last
        elif task[0] == 1:  # a new iterate
            nit += 1
            if nit >= maxiter:
                task[0], task[1] = 5, 504
            elif nfev > maxfun:
                task[0], task[1] = 5, 502
        else:
            break
    return LbfgsbResult(x, float(f), nfev, nit)
