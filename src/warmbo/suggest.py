"""One Bayesian-optimisation step: the next point, given the model of the real observations.

``suggest`` is the part of the loop every optimizer shares (the scalar :class:`~warmbo.Optimizer`,
the :class:`~warmbo.MultiTaskOptimizer`); the loops differ only in how they fit the model and where
their design points come from:

1. **Fantasies.** Pending points are conditioned on at the model's own posterior mean (the kriging
   believer, Ginsbourger et al. 2010), which collapses the uncertainty there, so several workers get
   different points; failed points, when given, at the worst value observed (a constant liar), so
   the search moves away from configurations that fail. The model is updated with ``add`` when it
   has one, refitted on the union otherwise; hyperparameters are not refitted.
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
import warnings

import numpy as np

from .maximize import maximize, taken

__all__ = ["suggest", "fantasise", "best_observations"]


def fantasise(model, X: np.ndarray, values: np.ndarray):
    """``model`` conditioned on the fantasy observations ``values`` at X (no hyperparameter refit):
    ``model.add`` when it has one (updated in place), else a clone fitted on the union."""
    if X.shape[0] == 0:
        return model
    add = getattr(model, "add", None)
    if callable(add):
        try:
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
        observed value; scalar models only).
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
                worst = float(np.min(reference.y_train_))
                values.append(np.full(failed.shape[0], worst))
            model = fantasise(copy.deepcopy(reference), np.vstack([pending, failed]), np.concatenate(values))
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
