"""A confidence audit of a fitted model: do its intervals cover the observations they did not see?

For each of the n observations (or a seeded subset of ``max_points`` of them) the model predicts it
without having seen it (leave-one-out), and the audit counts how often the central interval
``mu_{-i} +- z_q sigma_{-i}`` covers ``y_i``, for each nominal level q:

.. math:: \\widehat{\\mathrm{cov}}(q)
          = \\frac1n \\sum_i \\mathbf 1\\big[|y_i - \\mu_{-i}| \\le z_q \\sigma_{-i}\\big],
          \\qquad z_q = \\Phi^{-1}\\big(\\tfrac{1 + q}{2}\\big),

with the mean width ``2 z_q mean(sigma_{-i})`` as the sharpness. ``sigma_{-i}`` is the predictive
standard deviation of an *observation* (noise included): that is what an observed ``y_i`` can be
checked against. A calibrated model has coverage near q at every level.

Leave-one-out: for the exact GP, the closed forms of Rasmussen & Williams eq. 5.12 (``GP.loo``:
``mu_{-i} = y_i - [K^{-1} y]_i / [K^{-1}]_{ii}``, ``sigma^2_{-i} = 1 / [K^{-1}]_{ii}``, K with the
noise; hyperparameters held at the fit on all data), O(n^3) once. For any other model (transfer,
multi-task components, Nystrom, ...): ``model.clone()`` refitted without point i, predicting point i;
its predictive std is used as returned, plus the model's ``noise_variance_`` when it declares one.

The theory row: when the optimizer's acquisition is a UCB with a confidence schedule (IGP-UCB,
Meta-KeL's, Srinivas), the audit also reports how often the band ``mu_{-i} +- beta_t^{1/2} sigma_{-i}``
the algorithm actually uses covers the held-out values. Those bounds are built to hold with
probability 1 - delta uniformly over all points and rounds, so coverage near 100% is expected there.

Warnings, in plain words, with the likely cause: too few points to judge (n < 10); intervals too
narrow (coverage below the level by more than a binomial two-sigma margin
``2 sqrt(q (1 - q) / n)``, at any level: the kernel does not fit, e.g. lengthscales too long for the
function's wiggles, or the noise is underestimated); too wide (above by that margin at every level
below 99%: noise overestimated); heteroscedastic noise (the standardised residuals
``(y_i - mu_{-i}) / sigma_{-i}`` spread more than twice as much for the upper half of the predicted
values as for the lower half, or the reverse, with n >= 20). Written by hand: a few array operations
on the model's own leave-one-out predictions; scipy gives the normal quantiles.
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from ._validation import as_points, as_values

__all__ = ["Audit", "audit", "LEVELS", "loo_predictions"]

#: Default nominal levels.
LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99)
#: Below this many held-out points the audit says it cannot judge calibration.
MIN_POINTS = 10


@dataclass(frozen=True)
class Audit:
    """Leave-one-out coverage of a model's intervals (see the module docstring)."""

    levels: tuple[float, ...]
    coverage: dict
    width: dict
    n: int
    held_out: int
    method: str
    theory: dict | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def line(self, level: float = 0.95) -> str:
        """One line for ``warmbo status``: "95% intervals cover 93% of held-out trials (n = 40)"."""
        if self.held_out < MIN_POINTS:
            return f"audit: too few trials to check the intervals ({self.held_out} < {MIN_POINTS})"
        level = min(self.levels, key=lambda q: abs(q - level))
        return (
            f"{level:.0%} intervals cover {self.coverage[level]:.0%} of held-out trials "
            f"(n = {self.held_out}, leave-one-out)"
        )

    def to_dict(self) -> dict:
        out = asdict(self)
        out["coverage"] = {str(k): v for k, v in self.coverage.items()}
        out["width"] = {str(k): v for k, v in self.width.items()}
        return out


def _z(levels) -> np.ndarray:
    from scipy.special import ndtri

    return ndtri((1.0 + np.asarray(levels, dtype=np.float64)) / 2.0)


def loo_predictions(model, X, y, max_points: int = 50, seed: int = 0):
    """``(indices, mean, sd, method)``: leave-one-out predictions of observations ``y[indices]``.

    The model is the one fitted on ``(X, y)``; the exact GP's closed form is used when the model
    offers ``loo()`` (then every point is held out), else a refit of ``model.clone()`` per held-out
    point (at most ``max_points``, a seeded subset).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    loo = getattr(model, "loo", None)
    if callable(loo) and getattr(model, "n_observations", -1) == y.shape[0]:
        mean, sd = loo()
        return np.arange(y.shape[0]), np.asarray(mean), np.asarray(sd), "closed form (R&W eq. 5.12)"
    n = y.shape[0]
    chosen = np.arange(n)
    if n > max_points:
        chosen = np.sort(np.random.default_rng(seed).choice(n, max_points, replace=False))
    means, sds = np.empty(chosen.size), np.empty(chosen.size)
    for k, i in enumerate(chosen):
        keep = np.arange(n) != i
        clone = getattr(model, "clone", None)
        refit = clone() if callable(clone) else copy.deepcopy(model)
        refit.fit(X[keep], y[keep])
        m, s = refit.predict(X[i : i + 1])
        noise = float(getattr(refit, "noise_variance_", 0.0) or 0.0)
        means[k], sds[k] = float(np.ravel(m)[0]), math.sqrt(float(np.ravel(s)[0]) ** 2 + noise)
    return chosen, means, sds, f"refit without each point ({chosen.size} of {n})"


def audit(
    model,
    X,
    y,
    levels=LEVELS,
    *,
    beta: float | None = None,
    schedule_name: str | None = None,
    max_points: int = 50,
    seed: int = 0,
) -> Audit:
    """The confidence audit of ``model`` (fitted on ``(X, y)``; see the module docstring).

    ``beta`` is the theory schedule's ``beta_t`` (squared width multiplier) to audit as well;
    ``schedule_name`` labels it.
    """
    levels = tuple(float(q) for q in levels)
    if not levels or any(not (0.0 < q < 1.0) for q in levels):
        raise ValueError(f"levels must be numbers in (0, 1), got {levels!r}")
    X = as_points(X, "X")
    y = as_values(y, "y", X.shape[0])
    if y.shape[0] < 2:
        raise ValueError("the audit needs at least two observations")
    idx, mean, sd, method = loo_predictions(model, X, y, max_points, seed)
    target = y[idx]
    sd = np.maximum(sd, 1e-300)
    r = np.abs(target - mean)
    z = _z(levels)
    coverage = {q: float(np.mean(r <= zq * sd)) for q, zq in zip(levels, z, strict=True)}
    width = {q: float(np.mean(2.0 * zq * sd)) for q, zq in zip(levels, z, strict=True)}
    theory = None
    if beta is not None:
        root = math.sqrt(float(beta))
        theory = {
            "schedule": schedule_name or "UCB schedule",
            "beta": float(beta),
            "coverage": float(np.mean(r <= root * sd)),
            "width": float(np.mean(2.0 * root * sd)),
        }
    warnings = _warnings(levels, coverage, target, mean, sd)
    return Audit(levels, coverage, width, int(y.shape[0]), int(idx.size), method, theory, tuple(warnings))


def _warnings(levels, coverage, y, mean, sd) -> list[str]:
    n = y.shape[0]
    if n < MIN_POINTS:
        return [f"too few points to judge calibration ({n} held out; at least {MIN_POINTS} are needed)"]
    out = []
    margin = {q: 2.0 * math.sqrt(q * (1.0 - q) / n) for q in levels}
    low = [q for q in levels if coverage[q] < q - margin[q]]
    if low:
        q = low[-1]
        out.append(
            f"intervals are too narrow: {q:.0%} intervals cover {coverage[q]:.0%} of held-out points; "
            "likely cause: the kernel does not fit the objective (lengthscales too long for its wiggles) "
            "or the noise is underestimated"
        )
    high = [q for q in levels if q < 0.99 and coverage[q] > q + margin[q]]
    if high and len(high) == len([q for q in levels if q < 0.99]):
        out.append(
            "intervals are wider than they need to be at every level: the noise is probably overestimated"
        )
    if n >= 20:
        zres = (y - mean) / sd
        order = np.argsort(mean)
        lower, upper = zres[order[: n // 2]], zres[order[n // 2 :]]
        a, b = float(np.std(lower)), float(np.std(upper))
        if min(a, b) > 0 and max(a, b) / min(a, b) > 2.0:
            side = "high" if b > a else "low"
            out.append(
                f"the residuals spread {max(a, b) / min(a, b):.1f}x more where the predicted values are "
                f"{side}: the noise probably depends on the objective's level (heteroscedastic noise)"
            )
    return out


def plot_calibration(result: Audit, ax=None):
    """Observed against nominal coverage, the diagonal and the binomial 95% band (matplotlib Axes)."""
    from matplotlib.figure import Figure

    if ax is None:
        ax = Figure(figsize=(4.2, 4.0)).add_subplot(111)
    q = np.array(result.levels)
    n = max(result.held_out, 1)
    band = 1.96 * np.sqrt(q * (1 - q) / n)
    ax.fill_between(
        q, np.clip(q - band, 0, 1), np.clip(q + band, 0, 1), color="0.85", label="binomial 95% band"
    )
    ax.plot([0, 1], [0, 1], color="0.5", lw=1)
    ax.plot(q, [result.coverage[v] for v in result.levels], "o-", color="tab:blue", label="leave-one-out")
    if result.theory is not None:
        ax.axhline(
            result.theory["coverage"],
            color="tab:red",
            ls="--",
            label=f"theory band (beta_t = {result.theory['beta']:.3g})",
        )
    ax.set_xlim(0.4, 1.0)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("nominal level")
    ax.set_ylabel("held-out coverage")
    ax.set_title(f"Calibration (n = {result.held_out})")
    ax.legend(fontsize=7, loc="lower right")
    ax.figure.tight_layout()
    return ax
