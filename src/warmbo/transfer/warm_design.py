"""A warm initial design: the first points of a new study chosen from the source tasks, not from Sobol.

Each source task s is reduced to its *normalised regret* on a set of candidate configurations,

.. math:: r_s(x) = \\frac{\\max_s - f_s(x)}{\\max_s - \\min_s} \\in [0, 1]

(0 at the source's best, maximisation convention). Two rules build the design from it:

- ``rule="average"`` (the default): the sources' own configurations in order of their mean
  normalised regret :math:`\\bar r(x) = \\frac{1}{S} \\sum_s r_s(x)`, best first: the model-free
  "average rank" baseline of the transfer literature, cut to the design's size;
- ``rule="portfolio"``: greedy portfolio construction (Feurer, Springenberg & Hutter 2015,
  "Initializing Bayesian hyperparameter optimization via meta-learning"; Wistuba, Schilling &
  Schmidt-Thieme 2015, "Learning hyperparameter optimization initializations"), one point at a time,

  .. math:: x_{k+1} = \\arg\\min_{x \\in C} \\frac{1}{S} \\sum_s \\min\\big(b_s, r_s(x)\\big),
            \\qquad b_s \\leftarrow \\min(b_s, r_s(x_{k+1})),

  where :math:`b_s` is source s's best normalised regret among the points already chosen (1 before
  the first): each next point is the one that most improves the best-so-far *across* sources, so a
  design of k points covers k different kinds of task rather than k neighbours of one optimum.

Both rules start with the configuration of best mean regret among their candidates. Why "average" is
the default: measured on the transfer benchmark (leave-one-task-out, ``transfer="auto"``, 30
evaluations; docs/transfer.md), the design is followed by a model that already weighs the sources,
and the 2nd and 3rd points are better spent near the consensus: on HPOBench's MLP grids (8 targets
x 2 seeds) the median number of evaluations to the target's top 1% was 11.75 with "average" against
17.25 with "portfolio" (13.5 with the portfolio restricted to the sources' points); on the SVM grids
(24 targets) both reached it in 6. ``scores`` reports the portfolio objective of the chosen points
under either rule.

Candidates ``C``: with ``rule="average"``, the sources' own configurations (a configuration no source
evaluated has only an interpolated regret, and on HPOBench's 30,000-point grid the interpolated
candidates made the design worse: 22.75 evaluations to the top 1%). With ``rule="portfolio"``: on a
finite space, its candidates (subsampled to ``max_candidates``, the sources' points added); on a
continuous space, the sources' own points. The sources' own points are capped at
``max_source_points`` (4096; above it, each source's best: :func:`source_pool`). A source's regret at a
candidate it has not evaluated is the inverse-distance-weighted mean of its ``k`` nearest evaluations
in the encoded space (k = 3): a cheap, bounded stand-in for a per-source model (one k-d tree query per
source and candidate, where 50 ML-II GP fits take seconds); where sources share configurations, as
tabular meta-data do, it is their measured value.

On a continuous space the optimizer then makes the second point the maximum of the first point's
source model (:func:`source_model_maxima`): the first point is a source's sample, rarely its optimum.

Written by hand: no library offers greedy portfolio initialisation on scikit-learn-style arrays;
the nearest-neighbour search is scipy's k-d tree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._threads import blas_threads
from .._validation import check_int

__all__ = [
    "WarmDesign",
    "warm_design",
    "source_model_maxima",
    "normalised_regrets",
    "source_pool",
    "design_size",
    "RULES",
    "MAX_SOURCE_POINTS",
]

_NEIGHBOURS = 3
#: the sources' own points used as candidates when there are more (:func:`source_pool`)
MAX_SOURCE_POINTS = 4096
#: rows of its source around a design point on which :func:`source_model_maxima` fits the local GP
_LOCAL_ROWS = 64
#: a source-model maximum closer than this to the design's first point (max norm, unit cube) is not
#: added
_MIN_MOVE = 1e-3
#: a source-model peak predicted above the best of the rows it was fitted on by more than this
#: fraction of their range is not used: the GP's mean extrapolated, not a peak the rows show. A user
#: test (an SVC's error on digits, 30 Optuna trials as the source) had the climb run across the space
#: to a predicted error of -0.084 (the best row 0.013, the range 0.90: a rise of 11% of it), which
#: scored 0.728 on the target in 5 of 5 seeds. Chosen on ``python bench/warm_design_model_maxima.py``
#: (20 draws of 8 settings) among 0.02, 0.05 and a lower-confidence-bound rule (mean - z sd above
#: the first point's mean): regret after 3 points lower / higher than with the sources' best in
#: 43 / 18 draws with 0.05, against 58 / 27 with no bound (Branin's settings unchanged), 30 / 19 with
#: 0.02; z = 2 kept too few moves (27 / 12 after 2 points) and z = 1 let the user's point through
_MAX_RISE = 0.05
#: the design rules of :func:`warm_design`
RULES = ("average", "portfolio")


@dataclass(frozen=True)
class WarmDesign:
    """The chosen points (encoded, best first) and, after each, the mean over sources of the best
    normalised regret so far (``scores``, non-increasing; 0 means every source's best is covered)."""

    points: np.ndarray
    scores: tuple[float, ...]
    n_sources: int
    n_candidates: int

    def __len__(self) -> int:
        return int(self.points.shape[0])


def design_size(n_sources: int) -> int:
    """Points of the warm design: 2 for one source (its best and the next-best elsewhere), 3 for
    several. Two target points are the fewest from which a transfer model can rank its sources
    (RGPE's ranking loss needs a pair); a third covers a second kind of task. The cold default is
    ``min(max(3, 2 d), 20)`` (:func:`warmbo.optimizer.default_n_initial`)."""
    check_int(n_sources, "n_sources", 1)
    return 2 if n_sources == 1 else 3


def _sources(X: np.ndarray, y: np.ndarray, task) -> list[tuple[np.ndarray, np.ndarray]]:
    if task is None:
        return [(X, y)]
    task = np.asarray(task)
    return [(X[task == t], y[task == t]) for t in dict.fromkeys(task.tolist())]


def source_pool(
    sources: list[tuple[np.ndarray, np.ndarray]],
    limit: int = MAX_SOURCE_POINTS,
    exclude: np.ndarray | None = None,
) -> np.ndarray:
    """The sources' own configurations as candidates, unique rows in ``np.unique`` order, those within
    tolerance of an ``exclude`` row left out: all of them when there are at most ``limit``; else each
    source's best k configurations by its own values (repeats counted once, ties by row order), with k
    the largest that keeps the pool at ``limit`` rows or fewer (at least 1, so more than ``limit`` rows
    only when there are more than ``limit`` sources). A small source's unused share goes to the others.

    Why a cap: every candidate's regret is read off every source's k-d tree, S x (S n) queries, so the
    cost grew with the square of the meta-data's size: the design took 0.89 s at 50 sources x 300 rows
    and 16.5 s at 100 x 1000 (``bench/results/warm_design_cap.json``), paid by the first ask of a warm
    study. Capped, it is at most S x ``limit`` queries. A configuration far down its own source's
    ranking can still have the best mean regret, so above the cap the design is an approximation
    (measured in docs/transfer.md); every meta-data set of the transfer benchmark is below it (2,055
    unique rows at most), so its designs are exact. Taking each source's best follows Feurer,
    Springenberg & Hutter (2015), who start from the best configurations of earlier tasks.
    """
    from ..maximize import taken

    exclude = None if exclude is None or not len(exclude) else np.asarray(exclude, dtype=np.float64)
    if sum(Xs.shape[0] for Xs, _ in sources) <= limit:
        pool = np.unique(np.vstack([Xs for Xs, _ in sources]), axis=0)
        return pool if exclude is None else pool[~taken(pool, exclude)]
    rows, ranks = [], []
    for Xs, ys in sources:  # each source's configurations, best first, excluded ones and repeats out
        ranked = Xs[np.argsort(-np.asarray(ys, dtype=np.float64), kind="stable")]
        if exclude is not None:
            ranked = ranked[~taken(ranked, exclude)]
        _, first = np.unique(ranked, axis=0, return_index=True)
        rows.append(ranked[np.sort(first)])
        ranks.append(np.arange(first.size))
    unique, inverse = np.unique(np.vstack(rows), axis=0, return_inverse=True)
    if unique.shape[0] <= limit:  # every configuration that may be chosen
        return unique
    best_rank = np.full(unique.shape[0], np.iinfo(np.int64).max)
    np.minimum.at(best_rank, inverse.reshape(-1), np.concatenate(ranks))  # its best place in any source
    # the pool of k: the rows some source ranks among its best k; the largest k with <= limit of them
    k = max(1, int(np.sort(best_rank)[limit]))
    return unique[best_rank < k]


def normalised_regrets(sources: list[tuple[np.ndarray, np.ndarray]], candidates: np.ndarray) -> np.ndarray:
    """``R[s, c]``: source s's normalised regret at candidate c (see the module docstring), (S, C)."""
    from scipy.spatial import cKDTree  # scipy.spatial costs ~0.2 s to import: only when needed

    C = np.asarray(candidates, dtype=np.float64)
    R = np.empty((len(sources), C.shape[0]))
    # the threads warmbo's hot paths use (WARMBO_BLAS_THREADS, default 1; 0: every core): 50 sources
    # x 300 rows took 0.48 s on one thread and 0.29 s on two, idle; under load more threads lose
    workers = blas_threads() or -1
    for s, (X, y) in enumerate(sources):
        y = np.asarray(y, dtype=np.float64)
        top, bottom = float(np.max(y)), float(np.min(y))
        r = (top - y) / (top - bottom) if top > bottom else np.zeros_like(y)
        k = min(_NEIGHBOURS, X.shape[0])
        dist, idx = cKDTree(X).query(C, k=k, workers=workers)
        dist, idx = dist.reshape(C.shape[0], k), idx.reshape(C.shape[0], k)
        exact = dist[:, 0] <= 1e-12
        w = 1.0 / np.maximum(dist, 1e-12)
        R[s] = np.sum(w * r[idx], axis=1) / np.sum(w, axis=1)
        R[s, exact] = r[idx[exact, 0]]  # a configuration the source evaluated: its measured value
    return R


def warm_design(
    X: np.ndarray,
    y: np.ndarray,
    task=None,
    *,
    size: int | None = None,
    candidates: np.ndarray | None = None,
    exclude: np.ndarray | None = None,
    max_candidates: int = 20_000,
    max_source_points: int = MAX_SOURCE_POINTS,
    seed: int | None = 0,
    rule: str = "average",
) -> WarmDesign:
    """The warm design from source data (the rule: module docstring).

    Parameters
    ----------
    X, y, task
        Source points (encoded, (n, d)), values in the maximisation convention, and one task label
        per row (None: one source).
    size : int, optional
        Points to choose (default :func:`design_size`); fewer when there are fewer candidates.
    candidates : ndarray (m, d), optional
        The finite space's candidates (encoded), used by ``rule="portfolio"``; default: the sources'
        own points.
    exclude : ndarray (k, d), optional
        Points that must not be chosen again (the study's evaluated or pending points).
    max_candidates : int
        Larger candidate sets are subsampled (seeded) to this size, and the sources' points taken as
        candidates (``max_source_points``) are added to them.
    max_source_points : int
        The sources' own points taken as candidates (:func:`source_pool`): all of them up to this
        many, else each source's best k, k the largest that keeps them within this number.
    rule : {"average", "portfolio"}
        How points after the first are chosen (module docstring).
    """
    from ..maximize import taken

    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],) or X.shape[0] == 0:
        raise ValueError(
            f"source data need X of shape (n, d) with n >= 1 and y of shape (n,), got {X.shape}, {y.shape}"
        )
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("source data hold NaN or infinite values")
    sources = _sources(X, y, task)
    size = design_size(len(sources)) if size is None else check_int(size, "size", 1)
    pool = source_pool(sources, check_int(max_source_points, "max_source_points", 1), exclude)
    if candidates is not None and rule == "portfolio":
        candidates = np.asarray(candidates, dtype=np.float64)
        if candidates.shape[0] > max_candidates:
            keep = np.random.default_rng(seed).choice(candidates.shape[0], size=max_candidates, replace=False)
            candidates = np.unique(np.vstack([candidates[keep], pool]), axis=0)
        pool = candidates
        if exclude is not None and len(exclude):  # (source_pool has left them out of its own points)
            pool = pool[~taken(pool, np.asarray(exclude, dtype=np.float64))]
    if pool.shape[0] == 0:
        return WarmDesign(np.empty((0, X.shape[1])), (), len(sources), 0)
    R = normalised_regrets(sources, pool)
    average = R.mean(axis=0)
    best = np.ones(len(sources))
    chosen, scores = [], []
    available = np.ones(pool.shape[0], dtype=bool)
    for _ in range(min(size, pool.shape[0])):
        if not available.any():
            break
        score = np.minimum(best[:, None], R).mean(axis=0)
        key = np.where(available, score if rule == "portfolio" else average, np.inf)
        # lexicographic: the rule's key, then the average regret, then the index
        order = np.lexsort((np.arange(pool.shape[0]), average, key))
        c = int(order[0])
        chosen.append(c)
        scores.append(float(score[c]))
        available[c] = False
        # (and its near-copies: another source's copy of it, written back with its last digits off
        # after a log scale's round trip, was chosen again, the same configuration twice in a design:
        # a lab user test chaining two campaigns)
        available &= ~taken(pool, pool[c][None, :])
        best = np.minimum(best, R[:, c])
    return WarmDesign(pool[chosen].copy(), tuple(scores), len(sources), int(pool.shape[0]))


def source_model_maxima(
    design: WarmDesign,
    X: np.ndarray,
    y: np.ndarray,
    task=None,
    *,
    snap=None,
    exclude: np.ndarray | None = None,
    seed: int | None = 0,
) -> WarmDesign:
    """The design with the maximum of its first point's source model as its second point (continuous
    spaces): ``[x_1, m(x_1), x_2, ...]``, cut to the design's size.

    ``x_1``, the configuration of best mean normalised regret, is some source's sample, rarely that
    source's optimum on a continuous space. ``m(x_1)`` is the local maximiser of the posterior mean of
    a GP fitted to that source s: the default model (:func:`~warmbo.models.default_model`, MAP
    hyperparameters, fitted constant mean) on the :data:`_LOCAL_ROWS` rows of s nearest ``x_1``,
    climbed by L-BFGS-B from ``x_1`` inside the bounding box of those rows (where the model has
    data); s is, of the sources that evaluated ``x_1`` and can be modelled (values not constant, at
    least ``d + 2`` rows), the one with the lowest normalised regret there (the next one when its
    climb finds no peak). The design is returned unchanged when no such climb raises the predicted
    value, or when ``m(x_1)`` (after ``snap``, the space's rounding of encoded points) is within
    :data:`_MIN_MOVE` of ``x_1`` (the sample already is the model's peak), excluded, or already a
    design point. ``scores`` are recomputed for the new points
    (k-nearest-neighbour regrets, as :func:`warm_design` scores its points).

    Why second and not instead of ``x_1`` (``python bench/warm_design_model_maxima.py``, shifted test
    functions as related tasks, docs/transfer.md): moving every design point to its source model's
    maximum lowered the target's regret after 3 points in 106 of 157 unequal draws, but after the
    first point only in 87 of 158, and it was worse at the first point on Levy-4 and on less related
    tasks; the model-free ``x_1`` first keeps the first evaluation as safe as the average-rank order.
    Cost: one GP fit on at most 64 rows and one local search, about 0.1-0.2 s.
    """
    from ..maximize import taken

    points = np.array(design.points, dtype=np.float64)
    size = points.shape[0]
    if size < 2:
        return design
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    sources = _sources(X, y, task)
    peak = _source_model_maximum(points[0], sources, seed)
    if peak is None:
        return design
    if snap is not None:
        peak = np.asarray(snap(peak[None, :]), dtype=np.float64)[0]
    if np.max(np.abs(peak - points[0])) < _MIN_MOVE:
        return design  # x_1 is already its source model's peak: a second evaluation there says little
    blocked = points if exclude is None or not len(exclude) else np.vstack([points, exclude])
    if taken(peak[None, :], blocked)[0]:
        return design
    new = np.vstack([points[:1], peak[None, :], points[1:]])[:size]
    R = normalised_regrets(sources, new)
    scores = tuple(float(v) for v in np.minimum.accumulate(R, axis=1).mean(axis=0))
    return WarmDesign(new, scores, design.n_sources, design.n_candidates)


def _source_model_maximum(x: np.ndarray, sources, seed: int | None) -> np.ndarray | None:
    """The local maximiser of the posterior mean of x's source model near x (see
    :func:`source_model_maxima`), or None. The sources that evaluated x are tried in order of their
    normalised regret there (the lowest of their repeats), skipping those that cannot be modelled
    (constant values, fewer than d + 2 rows), until one gives a peak."""
    owners = []
    for s, (Xs, ys) in enumerate(sources):
        rows = np.flatnonzero(np.all(np.abs(Xs - x) <= 1e-12, axis=1))
        spread = float(np.ptp(ys))
        if rows.size and spread > 0 and Xs.shape[0] >= Xs.shape[1] + 2:
            owners.append((float((np.max(ys) - np.max(ys[rows])) / spread), s))
    for _, s in sorted(owners):
        peak = _climb(x, *sources[s], seed)
        if peak is not None:
            return peak
    return None


def _climb(x: np.ndarray, Xs: np.ndarray, ys: np.ndarray, seed: int | None) -> np.ndarray | None:
    """Climb the posterior mean of the default GP on the rows of (Xs, ys) nearest x from x."""
    from scipy.optimize import minimize

    from ..models.defaults import default_model

    d = Xs.shape[1]
    near = np.argsort(np.sum((Xs - x) ** 2, axis=1), kind="stable")[:_LOCAL_ROWS]
    Xl, yl = Xs[near], ys[near]
    model = default_model(d, seed=seed).fit(Xl, yl)

    def negative_mean(u):
        mean, _, dmean, _ = model.predict_gradients(u[None, :])
        return -float(mean[0]), -dmean[0]

    bounds = list(zip(np.clip(Xl.min(axis=0), 0.0, 1.0), np.clip(Xl.max(axis=0), 0.0, 1.0), strict=True))
    with np.errstate(all="ignore"):
        result = minimize(negative_mean, x, jac=True, method="L-BFGS-B", bounds=bounds)
    if not (np.all(np.isfinite(result.x)) and result.fun < negative_mean(x)[0]):
        return None
    peak = np.clip(result.x, 0.0, 1.0)
    if -result.fun > np.max(yl) + _MAX_RISE * (np.max(yl) - np.min(yl)):
        return None  # (an extrapolation of the model, not a peak its rows show: see _MAX_RISE)
    return peak
