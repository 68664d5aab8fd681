"""One Bayesian-optimisation step: the next point, given the model of the real observations.

``suggest`` is the part of the loop every optimizer shares (the scalar :class:`~warmbo.Optimizer`,
the :class:`~warmbo.MultiTaskOptimizer`); the loops differ only in how they fit the model and where
their design points come from:

1. **Fantasies.** Pending points are conditioned on at the model's own posterior mean (the kriging
   believer, Ginsbourger et al. 2010), which collapses the uncertainty there, so several workers get
   different points; failed points, when given, at the worst value observed (a constant liar; for
   a multi-task model each task's worst value), so the search moves away from configurations that
   fail. (The optimizer's default gives no failed points but a ``success`` classifier instead: the
   acquisition is weighed by it, :mod:`warmbo.feasibility`, and ``near`` keeps the search off the
   failed points' near-duplicates.) The model is updated with ``add`` when it
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
   A model that defines ``add_believer(X, noise)`` (the transfer models of
   :mod:`warmbo.transfer.baselines`) is told its own mean at the pending points through it, noise
   capped at ``FANTASY_NOISE`` on each of its GPs' scales (their ``add`` takes no noise). RGPE's
   ``add`` reaches only its target GP, so where the source GPs carried most of the weight a pending
   point kept most of its uncertainty and a batch with a prior bunched up (``ask(4)``: two points
   0.08 mM apart on a 0-20 mM range; the smallest distance within a batch 0.01-0.07 of that without
   the prior on four seeds, a median 0.47 of it over twelve now).
2. **Binding.** ``acquisition.bind(fantasised, space=space, reference=reference)``: incumbents, the
   round t and the information gain come from the real observations (``reference``) only.
3. **Search.** :func:`warmbo.maximize.maximize` with local candidates around the ``n_anchors`` best
   observations and ``exclude`` (pending, failed and evaluated points) avoided. When the model
   tracks a fixed set of points (``model.screen_``, :meth:`warmbo.models.GP.track`), they are the
   search's screen instead of a new Sobol draw: the model predicts them from what it kept.
4. **Keeping a batch apart.** With pending points, the search also avoids (``maximize(avoid=...)``,
   :func:`too_close`) every point whose prior correlation with a pending point,
   ``k(x, p) / sqrt(k(x, x) k(p, p))`` under the model's fitted kernel (``kernel_``), exceeds
   :data:`BATCH_CORRELATION` = 0.999: such a point keeps 0.2% of its prior variance once the pending
   one is known, a near-repeat of it. For the default Matern-5/2 kernel that is a distance of 0.035
   lengthscales (ARD-weighted Euclidean; 0.045 for the RBF). A local search that ends there gives way
   to the next best result or candidate; only if every candidate is that close is the rule dropped.
   Without pending points (a sequential ask) nothing changes, bit for bit; on a study without pending
   trials the first point of ``ask(n)`` is the one ``ask()`` would give. A model without a scalar
   kernel (the multi-task GP) keeps the believer alone.

   Why: the believer alone does not keep a batch apart once the model is confident. ``ask(8)`` on a
   Hartmann-6 study of 1000 trials (300 Sobol points, 700 asks) returned eight points within 6e-4 of
   each other (smallest distance 3e-5 - 6e-5, max norm in the unit cube, three rounds). Around the
   incumbent, hundreds of observations at the noise floor (1e-6) left a latent sd of 4e-5, below the
   fantasy's own noise sd (1e-3): the fantasy changed nothing there and EI stayed largest beside it.
   A noise-free fantasy (1e-12) only moved the smallest distance to 1e-4 - 5e-4, since conditioning
   on one more point lowers the variance only within the data's spacing, which shrinks as the study
   grows; and the exact-duplicate ``exclude`` moves a point by 1e-6. For the same reason the rule
   does not wait for the believer to fail: kept only for pending points whose fantasy left half of
   the sd there, it missed a mixed-space batch (``ask(6)``, smallest distance 3e-4) whose fantasies
   had worked.
   Local penalisation (Gonzalez et al. 2016, "Batch Bayesian optimization via local penalization",
   AISTATS) shrinks the same way: its ball around a pending x_j has radius ``(M - mu(x_j)) / L``,
   blurred by ``sigma(x_j) / L``, which vanishes at a confident incumbent (mu(x_j) = M,
   sigma(x_j) -> 0). A correlation under the prior measures distance on the function's own scale of
   variation, which more data does not shrink, and needs no Lipschitz constant.

   Measured by ``bench/batch_separation.py`` (arms: this rule and none). Confident models (5 seeds,
   studies of 100 Sobol points and 200 asks, three rounds of ``ask(8)``): the median smallest
   distance within a batch grew from 3e-5 to 0.020 (Branin), 3e-6 to 0.010 (Hartmann-3), 2e-4 to
   0.007 (Hartmann-6), 0.040 to 0.040 (Levy-6; its smallest from 5e-5 to 0.007); final regret on
   Hartmann-6 lower in 5 of 5, elsewhere 2/1 and 0/2 or tied. Short runs (``ask(4)`` rounds to 48
   evaluations, 30 seeds, the 8 problems of ``bench/batch_fantasy.py``): at d >= 4 the rule seldom
   acts (regrets equal in 142 of 150 pairs); at d <= 3 a batch there was often a cluster at the
   incumbent (smallest distances down to 2e-6), which bought the last digits on these noise-free
   functions: median regrets 2.9e-5 -> 1.1e-4 (Branin), 1.0e-3 -> 1.4e-3 (Himmelblau), 3.1e-6 ->
   1.2e-5 (Hartmann-3); overall lower in 34 pairs and higher in 54 (sign test p = 0.04; ``ask(8)``,
   10 seeds: 9/19, p = 0.09). A smaller radius does not avoid that cost (0.9999, 0.011 lengthscales:
   Branin 4/18, Hartmann-3 12/16), so the threshold is set for batches whose points are distinct on
   the function's scale.
5. **Collision.** If the search could only return an excluded point, ``suggest`` returns None and the
   caller takes its next design point.
"""

from __future__ import annotations

import copy
import inspect
import warnings

import numpy as np

from .feasibility import SuccessWeighted
from .kernels import Kernel
from .kernels.base import Constant, Product, Sum
from .kernels.stationary import Stationary
from .maximize import maximize, taken

__all__ = [
    "suggest",
    "fantasise",
    "best_observations",
    "too_close",
    "crowded",
    "near_pairs",
    "FANTASY_NOISE",
    "BATCH_CORRELATION",
]

#: noise variance of a pending point's fantasy observation, on the scale the GP models (standardised
#: for the default GP), capped by the GP's own noise level (None: that noise level, the behaviour
#: before session 17; ``bench/batch_fantasy.py`` compares)
FANTASY_NOISE: float | None = 1e-6

#: prior correlation with a pending point above which a point is not suggested while another can be
#: (:func:`too_close`; for the default Matern-5/2 kernel, a distance of about 0.035 lengthscales)
BATCH_CORRELATION = 0.999


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


def too_close(model, points: np.ndarray, threshold: float | None = None):
    """``U -> (m,) bool``: the encoded points whose prior correlation ``k(u, p) / sqrt(k(u, u) k(p, p))``
    with one of ``points`` (k, d) exceeds ``threshold`` (default :data:`BATCH_CORRELATION`), under the
    fitted kernel of ``model`` (``model.kernel_``); None when there are no points, or no such kernel
    (a multi-task GP, a model without one), one for another input dimension, or one that is not
    stationary (:func:`_stationary`): nothing is avoided."""
    correlation = _correlation(model, points)
    if correlation is None:
        return None
    limit = BATCH_CORRELATION if threshold is None else float(threshold)

    def near(U: np.ndarray) -> np.ndarray:
        return np.any(correlation(U) > limit, axis=1)  # (NaN, from a zero prior variance, compares False)

    return near


def crowded(model, points: np.ndarray, threshold: float | None = None) -> np.ndarray | None:
    """``(k,) bool``: which of ``points`` (k, d) have another of them within the prior correlation
    ``threshold`` (default :data:`BATCH_CORRELATION`) under ``model.kernel_``, as :func:`too_close`
    measures it; None where :func:`too_close` is (no points, no such kernel)."""
    pairs = near_pairs(model, points, threshold)
    return None if pairs is None else pairs.any(axis=1)


def near_pairs(model, points: np.ndarray, threshold: float | None = None) -> np.ndarray | None:
    """``(k, k) bool``: which pairs of ``points`` (k, d) lie within the prior correlation
    ``threshold`` (default :data:`BATCH_CORRELATION`) under ``model.kernel_`` (:func:`too_close`'s
    measure), a point not paired with itself; None where :func:`too_close` is."""
    correlation = _correlation(model, points)
    if correlation is None:
        return None
    corr = correlation(points)
    np.fill_diagonal(corr, -np.inf)
    return corr > (BATCH_CORRELATION if threshold is None else float(threshold))


def _correlation(model, points: np.ndarray):
    """``U -> (m, k)``: the prior correlations ``k(u, p) / sqrt(k(u, u) k(p, p))`` of encoded points U
    with ``points`` (k, d) under ``model.kernel_``, or None unless that kernel measures distance
    between them: a stationary kernel (:func:`_stationary`) of their input dimension, k >= 1."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[0] == 0:
        return None
    kernel = getattr(model, "kernel_", None)
    if not isinstance(kernel, Kernel) or not _stationary(kernel):
        return None
    if kernel.input_dim not in (None, points.shape[1]):
        return None
    with np.errstate(all="ignore"):
        prior = np.asarray(kernel(points), dtype=np.float64)  # (the diagonal: each point's prior variance)

    def correlation(U: np.ndarray) -> np.ndarray:
        U = np.asarray(U, dtype=np.float64)
        with np.errstate(all="ignore"):
            cross = np.asarray(kernel(U, points), dtype=np.float64)
            return cross / np.sqrt(np.asarray(kernel(U), dtype=np.float64)[:, None] * prior[None, :])

    return correlation


def _stationary(kernel: Kernel) -> bool:
    """Whether ``kernel`` is built only from stationary kernels and constants (sums and products):
    the kernels for which a prior correlation near 1 means a nearby point. A dot-product kernel's
    correlation is a cosine, near 1 along a whole ray from the origin (a review: a Linear kernel
    pushed the fourth point of an ask(4) to the origin), and a tuned or tabulated kernel's says
    nothing about distance: the rule keeps out of those."""
    if isinstance(kernel, Stationary | Constant):
        return True
    if isinstance(kernel, Sum | Product):
        return _stationary(kernel.k1) and _stationary(kernel.k2)
    return False


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
    fixed=None,
    success=None,
    near: np.ndarray | None = None,
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
    fixed : warmbo.fixed.Fixed, optional
        Parameters held at given values: the acquisition is maximised over the others
        (``maximize(fixed=...)``).
    success : warmbo.feasibility.SuccessClassifier, optional
        Where evaluations succeed: the bound acquisition (EI or PI) is weighed by its probability
        (:class:`warmbo.feasibility.SuccessWeighted`); the caller then gives no ``failed`` points.
    near : array (k, d), optional
        Encoded points (the failed ones, with ``success``) whose near-duplicates the search avoids as
        it avoids the pending points' (:func:`too_close`): EI there is often the largest, and a
        point 1e-6 from a failed one is the same experiment again.
    """
    d = space.dim
    pending = np.empty((0, d)) if pending is None else np.asarray(pending, dtype=np.float64).reshape(-1, d)
    failed = np.empty((0, d)) if failed is None else np.asarray(failed, dtype=np.float64).reshape(-1, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        model = reference
        if pending.shape[0] or failed.shape[0]:
            # a model whose add() reaches only part of its posterior (RGPE: the target GP, not the
            # source GPs) is told the believer at the pending points by add_believer, every part of it
            believed = pending.shape[0] > 0 and callable(getattr(reference, "add_believer", None))
            values = [reference.predict(pending)[0]] if pending.shape[0] and not believed else []
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
            model = copy.deepcopy(reference)
            told = np.vstack([pending, failed])
            if believed:
                model.add_believer(pending, noise=FANTASY_NOISE)
                told = failed
                noise = None if noise is None else noise[pending.shape[0] :]
            if told.shape[0]:
                model = fantasise(model, told, np.concatenate(values), noise)
        bound = acquisition.bind(model, space=space, reference=reference)
        if success is not None:  # (EI or PI weighed by the chance of success: warmbo.feasibility)
            bound = SuccessWeighted(bound, success)
        if fixed is not None and callable(getattr(bound, "on_slice", None)):
            bound = bound.on_slice(reference, space, fixed)  # (EI, PI: the slice's own incumbent)
        x = maximize(
            bound,
            space,
            seed=seed,
            exclude=exclude,
            anchors=best_observations(reference, n_anchors),
            screen=None if space.is_finite else getattr(model, "screen_", None),
            avoid=too_close(reference, pending if near is None else np.vstack([pending, near])),
            fixed=fixed,
        ).x
    if taken(x[None, :], exclude)[0]:
        return None
    return x
