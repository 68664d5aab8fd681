"""A lean driver of scipy's L-BFGS-B routine, for the two searches that run at every ask.

The hyperparameter fit and the acquisition's local search call ``scipy.optimize.minimize(...,
method="L-BFGS-B", jac=True)`` thousands of times per study, each on a cheap function (a few
hundred microseconds). Around each evaluation ``minimize`` adds its wrappers: a ``ScalarFunction``
with memoisation, two copies of ``x``, scalar checks, an ``OptimizeResult`` per iteration for the
callback, and a setup of about 0.3 ms per call (measured in session 25: about a quarter of a 50-trial
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
_FTOL = 2.2204460492503131e-09  # scipy's default ftol


@dataclass(frozen=True)
class LbfgsbResult:
    """What the callers use of scipy's ``OptimizeResult``: the last point and value, the number of
    function evaluations and iterations."""

    x: np.ndarray
    fun: float
    nfev: int
    nit: int


def _routine():
    """scipy's ``setulb`` if this scipy is one the driver was tested with and the routine runs a
    one-variable problem to scipy's own answer (a routine whose arguments changed, e.g. 64-bit
    integers, fails or differs there), else False. Looked up once."""
    global _ROUTINE
    if _ROUTINE is None:
        import scipy

        version = tuple(int(part) for part in scipy.__version__.split(".")[:2] if part.isdigit())
        routine = False
        if _TESTED[0] <= version < _TESTED[1]:
            try:
                from scipy import optimize
                from scipy.optimize import _lbfgsb

                def square(x):
                    return float((x[0] - 0.25) ** 2), np.array([2.0 * (x[0] - 0.25)])

                start, box = np.array([0.9]), np.array([[0.0, 1.0]])
                expected = optimize.minimize(square, start, jac=True, method="L-BFGS-B", bounds=box)
                got = _drive(_lbfgsb.setulb, square, start, box, _FTOL, 1e-5, 15000, 15000, 10, 20)
                if np.array_equal(got.x, expected.x) and (got.nfev, got.nit) == (expected.nfev, expected.nit):
                    routine = _lbfgsb.setulb
            except Exception:  # noqa: BLE001 (any failure of a private interface: use minimize)
                routine = False
        _ROUTINE = routine
    return _ROUTINE


def minimize_lbfgsb(
    fun,
    x0,
    bounds,
    *,
    ftol: float = _FTOL,
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
    x0 = np.asarray(x0, dtype=np.float64).ravel()
    n = x0.shape[0]
    if not isinstance(bounds, np.ndarray):  # pairs, None for an open side (as scipy reads them)
        bounds = [(-np.inf if low is None else low, np.inf if high is None else high) for low, high in bounds]
    bounds = np.asarray(bounds, dtype=np.float64)
    if bounds.shape != (n, 2) or np.isnan(bounds).any():
        raise ValueError(f"bounds must be {n} (low, high) pairs of numbers or None, got {bounds.tolist()}")
    if (bounds[:, 0] > bounds[:, 1]).any():
        raise ValueError("L-BFGS-B: one of the lower bounds is greater than an upper bound")
    if maxls <= 0 or maxcor <= 0:
        raise ValueError(f"maxls and maxcor must be positive, got {maxls} and {maxcor}")
    routine = _routine()
    if routine is False:
        from scipy import optimize

        options = {"ftol": ftol, "gtol": gtol, "maxfun": maxfun, "maxiter": maxiter}
        options.update(maxcor=maxcor, maxls=maxls)
        result = optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, options=options)
        nit = int(result.get("nit", 0))  # (minimize reports none when every variable is fixed)
        return LbfgsbResult(np.asarray(result.x), float(result.fun), int(result.nfev), nit)
    return _drive(routine, fun, x0, bounds, ftol, gtol, maxfun, maxiter, maxcor, maxls)


def _drive(routine, fun, x0, bounds, ftol, gtol, maxfun, maxiter, maxcor, maxls) -> LbfgsbResult:
    """The reverse-communication loop of ``scipy.optimize._lbfgsb_py._minimize_lbfgsb`` (scipy 1.17)
    around ``routine``, with the memo of ``ScalarFunction`` / ``MemoizeJac``."""
    n = x0.shape[0]
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
            if not (x == last_x).all():
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
        elif task[0] == 7:  # ERROR: an input the routine refuses (scipy returns it as a message)
            raise ValueError(f"L-BFGS-B refused its input (task code {int(task[1])})")
        else:
            break
    return LbfgsbResult(x, float(f), nfev, nit)
