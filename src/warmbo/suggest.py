"""One Bayesian-optimisation step: the next point, given the model of the real observations.

``suggest`` is the part of the loop every optimizer shares (the scalar :class:`~warmbo.Optimizer`,
the :class:`~warmbo.MultiTaskOptimizer`); the loops differ only in how they fit the model and where
their design points come from:

1. **Fantasies.** Pending points are conditioned on at the model's own posterior mean (the kriging
   believer, Ginsbourger et al. 2010), which collapses the uncertainty there, so several workers get
   different points; failed points, when given, at the worst value observed (a constant liar; for
   a multi-task model each task's worst value), so the search moves away from configurations that
   fail. The model is updated with ``add`` when it
   has one, refitted on the union otherwise; hyperparameters are not refitted. A model whose ``add``
   takes a ``noise`` (the GP) sees the pending points' fantasies as (nearly) noise-free, variance
   ``min(FANTASY_NOISE, its noise level)`` on the scale it models (standardised for the default GP),
   as the believer is defined: with the fitted noise level on them, the variance next to a pending
   point stayed at that level, EI there could stay the largest, and a batch bunched up (three points
   0.3% apart in a log-scaled learning rate; 10% now, 0.8-2.6% on two other seeds of four). Measured
   by ``bench/batch_fantasy.py`` (``ask(4)`` rounds to 48 evaluations, 30 seeds on 8 of the quality
   problems): the median smallest
   distance within a batch grew from 0.0033 to 0.025 (Branin), 0.0008 to 0.008 (Hartmann-3), 0.017
   to 0.036 (Himmelblau), by 5-18% at d = 6-10 (unchanged on Rastrigin-4); final regrets lower in
   129 pairs and higher in 109 (sign test p = 0.22; per problem from 12/18 on Hartmann-6 to 19/10
   on Hartmann-3, none significant), so batches spread without a measurable cost.
2. **Binding.** ``acquisition.bind(fantasised, space=space, reference=reference)``: incumbents, the
   round t and the information gain come from the real observations (``reference``) only.
3. **Search.** :func:`warmbo.maximize.maximize` with local candidates around the ``n_anchors`` best
   observations and ``exclude`` (pending, failed and evaluated points) avoided. When the model
   tracks a fixed set of points (``model.screen_``, :meth:`warmbo.models.GP.track`), they are the
   search's screen instead of a new Sobol draw: the model predicts them from what it kept.
4. **Collision.** If the search could only return an excluded point, ``suggest`` returns None and the
   caller takes its next design point.
"""

from __future__ import annotations

import copy
import inspect
import warnings

import numpy as np

from .maximize import maximize, taken

__all__ = ["suggest", "fantasise", "best_observations", "FANTASY_NOISE"]

#: noise variance of a pending point's fantasy observation, on the scale the GP models (standardised
#: for the default GP), capped by the GP's own noise level (None: that noise level, the behaviour
#: before session 17; ``bench/batch_fantasy.py`` compares)
FANTASY_NOISE: float | None = 1e-6


def fantasise(model, X: np.ndarray, values: np.ndarray, noise: np.ndarray | None = None):
    """``model`` conditioned on the fantasy observations ``values`` at X (no hyperparameter refit):
    ``model.add`` when it has one (updated in place; with the noise variances ``noise`` of the rows
    when its ``add`` takes them), else a clone fitted on the union."""
    if X.shape[0] == 0:
        return model
    add = getattr(model, "add", None)
    if callable(add):
        try:
            if noise is not None and "noise" in inspect.signature(add).parameters:
                add(X, values, noise=noise)
            else:
                add(X, values)
            return model
        except (NotImplementedError, ValueError):
            pass
    clone = getattr(model, "clone", None)
    refit = clone() if callable(clone) else copy.deepcopy(model)
    refit.fit(np.vstack([model.X_train_, X]), np.concatenate([model.y_train_, values]))
    return refit


def best_observations(model, n: int) -> np.ndarray | None:
    """The ``n`` best observations of a scalar model (encoded), best first; None for a model without
    scalar data or for ``n = 0``."""
    X, y = getattr(model, "X_train_", None), getattr(model, "y_train_", None)
    if n <= 0 or X is None or y is None or len(y) == 0 or np.ndim(y) != 1:
        return None
    order = np.argsort(-np.asarray(y, dtype=np.float64), kind="stable")[:n]
    return np.asarray(X, dtype=np.float64)[order]


def suggest(
    reference,
    acquisition,
    space,
    *,
    pending: np.ndarray | None = None,
    failed: np.ndarray | None = None,
    exclude: np.ndarray | None = None,
    seed: int | None = None,
    n_anchors: int = 5,
) -> np.ndarray | None:
    """The encoded point that maximises ``acquisition`` on ``reference`` fantasised at the pending
    and failed points, or None when the search found only excluded points.

    Parameters
    ----------
    reference : model
        Fitted on the real observations (maximisation convention); not modified.
    acquisition : Acquisition
        Bound here to the fantasised model, with ``reference`` for incumbents and the round t.
    space : Space
        The search space (encoded unit cube).
    pending, failed : array (k, d), optional
        Encoded pending points (kriging believer) and failed points (constant liar at the worst
        observed value; per task for a multi-task model).
    exclude : array (k, d), optional
        Encoded points that must not be returned.
    seed : int, optional
        Seed of the acquisition search.
    n_anchors : int
        Number of best observations around which the search draws local candidates (0: none).
    """
    d = space.dim
    pending = np.empty((0, d)) if pending is None else np.asarray(pending, dtype=np.float64).reshape(-1, d)
    failed = np.empty((0, d)) if failed is None else np.asarray(failed, dtype=np.float64).reshape(-1, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = reference
        if pending.shape[0] or failed.shape[0]:
            values = [reference.predict(pending)[0]] if pending.shape[0] else []
            if failed.shape[0]:
                # the worst value observed; per task for a multi-task model (y_train_ (t, n)), whose
                # tasks are all maximised, so the liar is the worst outcome of every task at once
                worst = np.min(np.asarray(reference.y_train_, dtype=np.float64), axis=0)
                values.append(np.broadcast_to(worst, (failed.shape[0], *worst.shape)))
            # pending points noise-free; failed ones (a constant liar: a guess) at the model's noise
            level = getattr(reference, "noise_level_", None)
            per_point = getattr(reference, "noise_", None)
            if level is None and per_point is not None and np.size(per_point):
                level = float(np.mean(per_point))  # a GP with one noise per point needs them for add
            noise = None
            if level is not None:
                believer = float(level) if FANTASY_NOISE is None else min(FANTASY_NOISE, float(level))
                noise = np.concatenate(  # (never noisier than the real data)
                    [np.full(pending.shape[0], believer), np.full(failed.shape[0], float(level))]
                )
            model = fantasise(
                copy.deepcopy(reference), np.vstack([pending, failed]), np.concatenate(values), noise
            )
        bound = acquisition.bind(model, space=space, reference=reference)
        x = maximize(
            bound,
            space,
            seed=seed,
            exclude=exclude,
            anchors=best_observations(reference, n_anchors),
            screen=None if space.is_finite else getattr(model, "screen_", None),
        ).x
    if taken(x[None, :], exclude)[0]:
        return None
    return x
