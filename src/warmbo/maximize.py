"""Maximisation of an acquisition over a search space (in the encoded unit cube).

- Finite spaces (``Space.grid``): every candidate is evaluated (in chunks) and the best is returned.
- Otherwise: a scrambled Sobol set of candidates, plus, when ``anchors`` are given (the optimizer
  passes its best observations), as many local candidates drawn around them, is evaluated; the
  best ``n_starts`` distinct ones start L-BFGS-B inside ``[0, 1]^d`` (with the acquisition's
  analytic gradient when the kernel supplies one, finite differences otherwise; with a batched
  gradient, ``values_and_gradients``, all starts run as one L-BFGS-B on the sum of their values, one
  batched evaluation per step); every result is projected onto valid encodings with ``Space.snap``
  (integers, one-hot categoricals) and re-evaluated, and the best snapped point wins. A fixed
  ``screen`` can take the Sobol set's place: a GP that tracks it (``GP.track``) predicts it from what
  it kept since the last ask, which the optimizer's fixed-hyperparameter ask uses.

Two choices make the search both cheaper and better than a large Sobol screen (measured in
``docs/core.md``, "Acquisition maximisation"):

- Local candidates (256 Sobol and 256 local by default). Expected improvement is often concentrated
  in a small region near the best observations, so a few hundred Gaussian perturbations of them
  (standard deviations 0.2, 0.05 and 0.01 of the unit cube, in equal parts) do the work of
  thousands of Sobol points: at d = 6 and n = 200, 568 acquisition evaluations instead of 4167 for
  the same maximum (``bench/acquisition_search.py``; the worst case measured there is 83% of the
  maximum, at n = 1000).
- The local search climbs ``log EI`` when the acquisition has a log form (``has_log``): it is finite
  where EI underflows and its gradient does not vanish away from the incumbent (Ament et al. 2023),
  and L-BFGS-B's tolerances on it are relative ones on EI (a step must raise the sum of log EI over
  the starts by 2.5e-5 of max(1, improvement so far); ``gtol`` 1e-4) instead of an absolute
  2e-9. Candidates, starts and results are
  ranked by log EI too, so a climb where EI underflows still counts; starts whose log EI is -inf,
  or more than 30 below the best start's, are not refined (they would freeze or loosen the joint
  search of the others).

On spaces with integer or categorical parameters, the local candidates also include one-exchange
neighbours of the anchors (one such parameter set to a random value), since Gaussian perturbations
rarely leave a one-hot block's argmax. On spaces with categorical parameters, the Gaussian local
candidates are snapped before they are scored (a one-hot block between categories is no point of the
space; such candidates outranked every valid one, climbed in the relaxation and snapped back next to
the incumbent, so another category at the incumbent's settings was never weighed: a user's lab
campaign, ``tests/test_maximize.py``), and each local search holds its start's categories (L-BFGS-B's
bounds are equal on their one-hot columns): categories change through the candidates, never by a
climb in the relaxation. Points in ``exclude`` are never returned while another
point is found: if every local search ends on an excluded point (they snap back to the incumbent
on discrete spaces), the best snapped candidate that is not excluded wins. Points that ``avoid``
flags (``suggest`` passes those too close to a pending point, :func:`warmbo.suggest.too_close`) are
treated alike: they start no local search while other candidates are left, a local search that ends on
one gives way to the next best result (the best candidate not flagged is one of them), and the flag is
dropped only if it covers every candidate. Without ``avoid`` the search is the same, bit for bit.

The returned point is always a valid encoded point of the space (inside the unit cube and snapped),
so ``space.decode(result.x)`` never leaves the space. The optimiser itself is scipy's L-BFGS-B.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._lbfgsb import minimize_lbfgsb
from .space import INACTIVE, Categorical, Float

__all__ = [
    "MaximizeResult",
    "maximize",
    "DUPLICATE_TOLERANCE",
    "taken",
    "taken_by",
    "chained_groups",
    "sobol_screen",
    "anchored_candidates",
]

#: max-norm distance in the unit cube below which two encoded points count as the same point
DUPLICATE_TOLERANCE = 1e-6

_CHUNK = 4096
_N_SOBOL_WITH_ANCHORS = 256
_LOCAL_SCALES = (0.2, 0.05, 0.01)
_LOG_FTOL = 2.5e-5  # of max(1, improvement so far) in the sum of log EI over the starts
_LOG_GTOL = 1e-4
_LOG_GAP = 30.0  # starts more than this below the best start in log EI (a factor e^-30) are not refined
_MAXITER = 200  # L-BFGS-B iterations of a local search


@dataclass(frozen=True)
class MaximizeResult:
    """Result of :func:`maximize`.

    Attributes
    ----------
    x : ndarray (d,)
        Maximiser, a valid encoded point of the space.
    value : float
        Acquisition value at ``x``.
    n_evaluations : int
        Number of acquisition evaluations used.
    """

    x: np.ndarray
    value: float
    n_evaluations: int


def _evaluate(acq, U: np.ndarray) -> np.ndarray:
    if U.shape[0] <= _CHUNK:  # U itself, not a view: a model's tracked screen is recognised by identity
        out = np.asarray(acq(U), dtype=np.float64)
    else:
        out = np.empty(U.shape[0])
        for start in range(0, U.shape[0], _CHUNK):
            out[start : start + _CHUNK] = acq(U[start : start + _CHUNK])
    return np.where(np.isfinite(out), out, -np.inf)


def taken(points: np.ndarray, exclude: np.ndarray | None) -> np.ndarray:
    """Which rows of ``points`` (m, d) lie within :data:`DUPLICATE_TOLERANCE` (max norm) of a row of
    ``exclude`` (k, d): a k-d tree query, O((m + k) log k), instead of an (m, k, d) comparison."""
    return taken_by(points, exclude) >= 0


def taken_by(points: np.ndarray, exclude: np.ndarray | None) -> np.ndarray:
    """For each row of ``points`` (m, d), the index of a row of ``exclude`` (k, d) within
    :data:`DUPLICATE_TOLERANCE` (max norm) of it, or -1 where there is none (:func:`taken`, naming
    which point took it)."""
    points = np.asarray(points, dtype=np.float64)
    if exclude is None or len(exclude) == 0 or points.shape[0] == 0:
        return np.full(points.shape[0], -1, dtype=np.intp)
    from scipy.spatial import cKDTree

    tree = cKDTree(np.asarray(exclude, dtype=np.float64).reshape(-1, points.shape[1]))
    distance, index = tree.query(points, p=np.inf, distance_upper_bound=DUPLICATE_TOLERANCE * (1 + 1e-9))
    return np.where(np.isfinite(distance), index, -1).astype(np.intp)


def chained_groups(points: np.ndarray, radius: float = DUPLICATE_TOLERANCE * (1 + 1e-9)) -> int:
    """How many groups ``points`` (n, d) form when two points within ``radius`` of each other (max
    norm) are one group, chains included: the connected components of the graph linking them.

    Exact, and cheap where no point has a neighbour: two linked points lie within ``radius`` in every
    coordinate, so they share every coordinate's 1-D chain (its sorted values split at gaps larger
    than ``radius``); a point alone in its box of 1-D chains is a group of its own, and only the
    points of boxes holding several go to scipy's k-d tree (``query_pairs``) and
    ``connected_components``. Every group lies inside one box, so the count is the k-d tree's over all
    points. On HPOBench's 30,000-point grid (no two points within tolerance) the k-d tree over all
    points took 0.22-0.27 s, the first ask of every study on it; the boxes take 0.005-0.008 s
    (``bench/grid_first_ask.py``).
    """
    P = np.asarray(points, dtype=np.float64)
    if P.ndim != 2:
        raise ValueError(f"points must be a 2-D array (n, d), got shape {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError("points contain NaN or inf values: their groups are undefined")
    n = P.shape[0]
    if n <= 1:
        return int(n)
    boxes = np.empty(P.shape, dtype=np.int64)
    for j in range(P.shape[1]):
        order = np.argsort(P[:, j], kind="stable")
        boxes[order, j] = np.concatenate(([0], np.cumsum(np.diff(P[order, j]) > radius)))
    order = np.lexsort(boxes.T)  # equal boxes side by side (np.unique(axis=0) took 8x as long)
    sorted_boxes = boxes[order]
    run = np.concatenate(([0], np.cumsum(np.any(sorted_boxes[1:] != sorted_boxes[:-1], axis=1))))
    shared = np.empty(n, dtype=bool)
    shared[order] = np.bincount(run)[run] > 1
    alone = int(n - np.count_nonzero(shared))
    if alone == n:
        return alone
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    Q = P[shared]
    m = Q.shape[0]
    pairs = cKDTree(Q).query_pairs(radius, p=np.inf, output_type="ndarray")
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(m, m))
    return alone + int(connected_components(graph, directed=False)[0])


def _candidates(space, n: int, seed: int | None) -> np.ndarray:
    """``n`` scrambled Sobol candidates in the encoded cube.

    On a space of ``Float`` parameters only the encoding of a Sobol sample is the sample itself (up to
    round-off), so the cube points are drawn directly instead of through ``space.sample_encoded``,
    which decodes them to parameter dicts and encodes them back (most of the cost of an ask at small n).
    """
    if all(type(p) is Float and p.step is None for p in space.params):
        from scipy.stats import qmc  # scipy.stats costs ~0.3 s to import: on first use

        sampler = qmc.Sobol(space.dim, scramble=True, seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # n not a power of two: balance warning
            return sampler.random(n)
    return space.sample_encoded(n, seed=seed)


def sobol_screen(space, seed: int | np.random.Generator | None) -> np.ndarray:
    """The scrambled Sobol candidates :func:`maximize` draws when it has anchors (256), as a fixed
    ``screen`` for searches that reuse them (a model can keep their posterior: ``GP.track``)."""
    return _candidates(space, _N_SOBOL_WITH_ANCHORS, seed)


def anchored_candidates(anchors: np.ndarray, n: int, seed: int) -> np.ndarray:
    """About ``n`` local candidates, ``ceil(n / k)`` around each of the k anchors, with the standard
    deviations of the search's local candidates (0.2, 0.05, 0.01 in turn), clipped to the unit cube.

    Each anchor's perturbations come from a generator seeded by ``seed`` and the anchor's
    coordinates, so an anchor that stays among the best observations keeps its candidates from one
    ask to the next, and a model that tracks them (``GP.track``) predicts them from what it kept; the
    search's own local candidates (``_local_candidates``) are drawn anew at every ask.
    """
    anchors = np.ascontiguousarray(anchors, dtype=np.float64)
    if anchors.ndim != 2 or anchors.shape[0] == 0 or n < 1:
        raise ValueError(
            f"anchored_candidates needs anchors of shape (k, d), k >= 1, and n >= 1; got "
            f"{anchors.shape} and n = {n}"
        )
    k, d = anchors.shape
    per = -(-n // k)
    scales = np.array(_LOCAL_SCALES)[np.arange(per) % len(_LOCAL_SCALES)]
    blocks = []
    for anchor in anchors:
        rng = np.random.default_rng([seed, *np.frombuffer(anchor.tobytes(), dtype=np.uint32).tolist()])
        blocks.append(np.clip(anchor + scales[:, None] * rng.standard_normal((per, d)), 0.0, 1.0))
    return np.vstack(blocks)


def _local_candidates(anchors: np.ndarray, n: int, seed: int | None) -> np.ndarray:
    """``n`` Gaussian perturbations of the anchors (chosen uniformly), clipped to the unit cube; the
    standard deviations 0.2, 0.05 and 0.01 come in equal parts (wide ones explore the region of the
    best observations, narrow ones find the peak of EI next to the incumbent)."""
    rng = np.random.default_rng(seed)
    scales = np.array(_LOCAL_SCALES)[np.arange(n) % len(_LOCAL_SCALES)]
    centres = anchors[rng.integers(anchors.shape[0], size=n)]
    return np.clip(centres + scales[:, None] * rng.standard_normal(centres.shape), 0.0, 1.0)


def _neighbours(space, anchors: np.ndarray, n: int, seed: int | None) -> np.ndarray:
    """``n`` one-exchange neighbours of the anchors: an anchor (chosen uniformly) with one of its
    integer or categorical parameters (chosen uniformly) set to a random value. Gaussian perturbations
    rarely leave a one-hot block's argmax, so without these the search of a categorical space never
    looks one category away from the best observations."""
    discrete = [i for i, p in enumerate(space.params) if p._discrete]
    rng = np.random.default_rng(None if seed is None else seed + 1)
    base = anchors[rng.integers(anchors.shape[0], size=n)]
    out = base.copy()
    values = space.sample_encoded(n, seed=rng)
    which = rng.choice(discrete, size=n)
    for i in discrete:
        rows = which == i
        sl = space.slice_of(space.params[i].name)
        out[rows, sl] = values[rows, sl]
    # a parent changed: its children become active (drawn, not left at the inactive constant) or inactive
    return space._activated(base, out, rng) if space.is_conditional else out


def _joint_lbfgsb(
    acq, starts: np.ndarray, d: int, start_values: np.ndarray | None = None, box: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """Run L-BFGS-B from every start at once, on the sum of the acquisition over the starts.

    The starts do not interact (the sum is separable, each block's gradient is its own point's), so
    this is the same local search for each start, with one batched acquisition evaluation per step
    instead of one call per start and step (as BoTorch's ``gen_candidates_scipy`` does). The sum is
    of ``log`` values when the acquisition has a log form (same maximisers, relative tolerances; see
    the module docstring). ``start_values``: the log values at the starts, when the caller has them.
    ``box``: the ``(d, 2)`` bounds of every point, or ``(k, d, 2)`` each start's own (default the unit
    cube; a fixed or held column's are equal).
    Returns the refined points (k, d) and the number of acquisition evaluations.
    """
    use_log = bool(getattr(acq, "has_log", False))
    evaluate = acq.log_values_and_gradients if use_log else acq.values_and_gradients
    options = {"maxiter": _MAXITER}
    offset, n_evals = 0.0, 0
    keep = np.ones(starts.shape[0], dtype=bool)
    if use_log:
        # The tolerances act on the sum over the starts, so the starts that share it are chosen:
        # - a start whose log EI is not finite (sigma = 0 and no improvement) would make the sum
        #   -inf from the first step and freeze every start;
        # - a start far below the best one would make |sum| large and loosen the relative test
        #   for all the others.
        # Both are left where they are (a separate basin 1e-13 below the best start cannot
        # matter). The objective is shifted by its value at the starts, so L-BFGS-B's relative
        # test compares each step with the improvement so far, not with the level of log EI.
        if start_values is None:
            start_values = evaluate(starts)[0]
            n_evals = starts.shape[0]
        values = np.asarray(start_values, dtype=np.float64)
        finite = np.isfinite(values)
        if not np.any(finite):
            return starts.copy(), n_evals
        keep = finite & (values >= np.max(values[finite]) - _LOG_GAP)
        offset = float(np.sum(values[keep]))
        options.update(ftol=_LOG_FTOL, gtol=_LOG_GTOL)
    active = starts[keep]
    k = active.shape[0]

    def fun(flat):
        values, grads = evaluate(flat.reshape(k, d))
        if not np.isfinite(values).all() or not np.isfinite(grads).all():
            return 1e30, np.zeros(k * d)
        return offset - float(np.asarray(values).sum()), -np.asarray(grads, dtype=np.float64).reshape(-1)

    if box is None:
        box = np.tile(np.array([0.0, 1.0]), (d, 1))
    box = np.asarray(box, dtype=np.float64)
    bounds = np.tile(box, (k, 1)) if box.ndim == 2 else box[keep].reshape(k * d, 2)
    result = minimize_lbfgsb(fun, active.reshape(-1), bounds, **options)
    refined = starts.copy()
    refined[keep] = np.clip(result.x.reshape(k, d), 0.0, 1.0)
    return refined, n_evals + int(result.nfev) * k


def _categorical_columns(space) -> np.ndarray:
    """The encoded columns of the space's categorical parameters (their one-hot blocks)."""
    columns = [
        np.arange(space.dim)[space.slice_of(p.name)] for p in space.params if isinstance(p, Categorical)
    ]
    return np.concatenate(columns) if columns else np.empty(0, dtype=np.intp)


def _pool(space, U: np.ndarray, fixed) -> np.ndarray:
    """The distinct snapped candidates (with the fixed values, when some are held)."""
    snapped = space.snap(U)
    if fixed is not None:
        snapped = fixed.apply(snapped)
        if space.is_conditional:
            snapped = space.snap(snapped)
    return np.unique(snapped, axis=0)


def maximize(
    acq,
    space,
    seed: int | None = None,
    *,
    n_candidates: int | None = None,
    n_starts: int = 5,
    exclude: np.ndarray | None = None,
    anchors: np.ndarray | None = None,
    screen: np.ndarray | None = None,
    avoid: Callable[[np.ndarray], np.ndarray] | None = None,
    fixed=None,
) -> MaximizeResult:
    """Maximise a bound acquisition over ``space``.

    Parameters
    ----------
    acq : callable
        A bound acquisition (:class:`warmbo.acquisition.Bound`): ``acq(U) -> (m,)`` on encoded points,
        optionally ``value_and_gradient``/``has_gradient``.
    space : Space
        The search space; the search runs on its encoding.
    seed : int, optional
        Seed of the Sobol candidates.
    n_candidates : int, optional
        Number of Sobol candidates (default 256 with ``anchors``, otherwise ``min(4096, 512 * d)``
        rounded to a power of two); with ``anchors`` as many local candidates are added.
    n_starts : int
        Number of L-BFGS-B starts from the best candidates.
    exclude : array (k, d), optional
        Encoded points that must not be returned (the optimizer passes pending, failed and evaluated
        points). They are avoided whenever a point that is not excluded is found; only if every
        candidate is excluded is one of them returned (the caller checks).
    anchors : array (k, d), optional
        Encoded points around which local candidates are drawn (the best observations; continuous
        spaces only).
    screen : array (m, d), optional
        The candidates, used instead of the Sobol draw and the Gaussian local candidates (not on finite
        spaces; the anchors' one-exchange neighbours on discrete parameters are still added), and
        evaluated as this very array: a model that tracks them (:meth:`warmbo.models.GP.track`)
        predicts them in O(n m) from what it kept since the last ask, instead of O(n^2 m). The
        optimizer's fixed-hyperparameter ask passes a fixed Sobol screen and
        :func:`anchored_candidates`. ``n_candidates`` then sets only the number of neighbours.
    avoid : callable, optional
        ``avoid(U) -> (m,) bool``: encoded points that must not be returned while another point can
        be (``suggest`` passes the points too close to a pending one, :func:`warmbo.suggest.too_close`).
        Candidates it flags start no local search while others are left; a local search that ends on
        a flagged point is dropped for the next best result, or the best candidate it does not flag;
        only when it flags every candidate is it ignored. None (the default) changes nothing.
    fixed : warmbo.fixed.Fixed, optional
        Parameters held at given values (:func:`warmbo.fixed.fix`): the search runs on the slice of
        the space where they have them (every candidate has them; L-BFGS-B's bounds hold them), and
        the point returned has them. ``screen`` is then not used (its points are the model's, whole).
        On a finite space, the candidates that have them.

    Returns
    -------
    MaximizeResult
    """
    try:
        return _maximize(acq, space, seed, n_candidates, n_starts, exclude, anchors, screen, avoid, fixed)
    except (IndexError, KeyError, TypeError) as exc:
        if not _raised_by_caller(exc):
            raise
        # (a notebook user test: wb.maximize(lambda p: -(p["x"] - 0.3) ** 2, space), read as a one-line
        # optimiser, met numpy's bare "only integers, slices ... are valid indices")
        raise TypeError(
            f"maximize(f, space) maximises an acquisition over encoded points: f gets an (m, d) array "
            f"in [0, 1] (space.decode turns rows into parameter dicts) and returns m values; calling "
            f"yours raised {type(exc).__name__}: {exc}. To optimise an objective of parameter dicts, "
            "use wb.Optimizer(space).run(f, budget=...)"
        ) from exc


def _raised_by_caller(exc: BaseException) -> bool:
    """Whether ``exc`` was raised in a frame outside warmbo (the caller's function), not by warmbo or
    numpy (:func:`warmbo._warnings._inside` tells warmbo's frames)."""
    from ._warnings import _inside

    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and not _inside(last) and "numpy" not in last


def _maximize(
    acq, space, seed, n_candidates, n_starts, exclude, anchors, screen, avoid, fixed
) -> MaximizeResult:
    # an Acquisition (EI()) has bind(); one bound to a model (EI().bind(gp)) is a function of points
    if callable(getattr(acq, "bind", None)):
        raise TypeError(
            f"maximize needs an acquisition bound to a fitted model, a function of encoded points; got "
            f"{acq!r}: pass {type(acq).__name__}(...).bind(model, space=space)"
        )
    d = space.dim
    fitted_dim = getattr(getattr(acq, "model", None), "input_dim", None)
    if isinstance(fitted_dim, int) and fitted_dim != d:
        raise ValueError(
            f"the acquisition's model was fitted on {fitted_dim}-dimensional points, but the space encodes "
            f"points in {d} dimensions ({space.names}): bind it to a model fitted on space.encode(...) of "
            "this space's points"
        )
    if fixed is not None:
        screen = None  # (a tracked screen's points are the model's as they are, not the slice's)
    if space.is_finite:
        candidates = np.asarray(space.candidates, dtype=np.float64)
        if fixed is not None:
            candidates = candidates[fixed.holds(candidates)]
            if not candidates.shape[0]:
                raise ValueError(f"no candidate point of the space has the fixed values {fixed.params}")
        values = _evaluate(acq, candidates)
        busy = taken(candidates, exclude)
        if avoid is not None:
            near = busy | avoid(candidates)
            if not np.all(near):
                busy = near
        if not np.all(busy):
            values = np.where(busy, -np.inf, values)
        best = int(np.argmax(values))
        return MaximizeResult(candidates[best].copy(), float(values[best]), candidates.shape[0])

    if anchors is not None:
        anchors = np.asarray(anchors, dtype=np.float64)
        if anchors.ndim != 2 or anchors.shape[1] != d:
            raise ValueError(f"anchors must have shape (k, {d}) (encoded points), got {anchors.shape}")
        anchors = anchors[np.all(np.isfinite(anchors), axis=1)]
    local = anchors is not None and anchors.shape[0] > 0
    if n_candidates is None:
        n_candidates = _N_SOBOL_WITH_ANCHORS if local else int(2 ** np.ceil(np.log2(min(4096, 512 * d))))
    if screen is not None and (
        not isinstance(screen, np.ndarray) or screen.shape[1:] != (d,) or screen.shape[0] == 0
    ):
        raise ValueError(f"screen must be an array of shape (m, {d}) with m >= 1 (encoded points)")
    U = _candidates(space, n_candidates, seed) if screen is None else screen
    categorical = _categorical_columns(space)
    discrete = any(p._discrete for p in space.params)
    real = None  # (the relaxed local candidates as points that exist, when some parameter is discrete)
    if local and screen is None:
        near = _local_candidates(np.clip(anchors, 0.0, 1.0), n_candidates, seed)
        if discrete and not categorical.size:
            real = space.snap(near)
        U = np.vstack([U, space.snap(near) if categorical.size else near])
    if local and discrete:
        U = np.vstack([U, _neighbours(space, space.snap(np.clip(anchors, 0.0, 1.0)), n_candidates, seed)])
    if real is not None:
        # (on the slice too, a review: picked off it, then moved onto it, the best was not the slice's;
        # duplicates of one grid point evaluated once)
        real = np.unique(real if fixed is None else fixed.apply(real), axis=0)
    if fixed is not None:
        held = fixed.apply(U)
        # (a held parent switches its children on, drawn, or off)
        U = (  # (a held child is held again after the draw)
            fixed.apply(space._activated(U, held, np.random.default_rng([0 if seed is None else seed, 2])))
            if space.is_conditional
            else held
        )
    # with a log form, candidates and results are ranked by log EI: where EI underflows to 0 they
    # would all tie, and the climb in log EI would be thrown away
    score = acq.log_values if getattr(acq, "has_log", False) else acq
    if screen is None:
        values = _evaluate(score, U)
    else:  # the screen as the array the model tracks, the neighbours (discrete spaces) apart
        m = screen.shape[0]
        rest = _evaluate(score, U[m:]) if U.shape[0] > m else np.empty(0)
        values = np.concatenate([_evaluate(score, screen), rest])
    n_evals = U.shape[0]
    if avoid is None:
        order = np.argsort(-values)
    else:  # the candidates it does not flag first, each part best first (lexsort is stable)
        order = np.lexsort((-values, avoid(U)))
    chosen = [int(order[0])]
    for i in order[1:]:
        if len(chosen) >= n_starts:
            break
        if np.min(np.linalg.norm(U[chosen] - U[i], axis=1)) > 1e-6:
            chosen.append(int(i))
    starts = [U[i] for i in chosen]

    use_gradient = bool(getattr(acq, "has_gradient", False))
    box = np.tile(np.array([0.0, 1.0]), (d, 1)) if fixed is None else fixed.bounds(d)
    # each start's own box: its categories held (the climb moves the other columns)
    boxes = np.repeat(box[None], len(starts), axis=0)
    if categorical.size:
        held = np.asarray(starts)[:, categorical]
        boxes[:, categorical, 0] = held
        boxes[:, categorical, 1] = held
    if space.is_conditional:  # the climb keeps each start's inactive parameters where they are
        inactive = space._inactive_columns(np.asarray(starts))
        boxes[inactive, 0] = INACTIVE
        boxes[inactive, 1] = INACTIVE
    if use_gradient:

        def fun(u):
            value, grad = acq.value_and_gradient(u)
            if not np.isfinite(value):
                return 1e30, np.zeros(d)
            return -value, -np.asarray(grad, dtype=np.float64)

    else:

        def fun(u):
            value = float(acq(u[None, :])[0])
            return -value if np.isfinite(value) else 1e30

    from scipy import optimize

    finals = [U[order[0]]]
    if discrete and not categorical.size:
        # relaxed integers rank and start the search (a smooth surrogate: snapping them first ranked
        # worse on a grid of 11 values, bench/discrete_local.py), but a relaxed candidate between two
        # values can outscore every real point, take every start and snap back beside the incumbent
        # (a user test: layers 2 asked 77 times in 80, the optimum at 3, where the model's EI at
        # layers 3 was 300 times that of the point asked): the best real candidate, among the draw's,
        # the screen's and the neighbours' (points of the space already) and the local ones snapped,
        # is among the finals too
        exact = np.all(space.snap(U) == U, axis=1)
        points, points_values = U[exact], values[exact]
        if real is not None:
            points = np.vstack([points, real])
            points_values = np.concatenate([points_values, _evaluate(score, real)])
            n_evals += real.shape[0]
        if points.shape[0]:
            finals.append(points[int(np.argmax(points_values))])
    batched = use_gradient and callable(getattr(acq, "values_and_gradients", None))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if batched:
            known = values[chosen] if score is not acq else None  # log values of the starts
            refined, nfev = _joint_lbfgsb(acq, np.asarray(starts), d, known, box=boxes)
            n_evals += nfev
            finals.extend(refined)
        for start, own in zip([] if batched else starts, boxes, strict=False):
            bounds = [(float(low), float(high)) for low, high in own]
            result = optimize.minimize(
                fun, start, jac=use_gradient, method="L-BFGS-B", bounds=bounds, options={"maxiter": _MAXITER}
            )
            n_evals += int(result.nfev)
            finals.append(np.clip(result.x, 0.0, 1.0))
    snapped = space.snap(np.asarray(finals))
    if fixed is not None:  # (idempotent on the fixed columns' valid encodings; exact to the bit)
        snapped = fixed.apply(snapped)
        if space.is_conditional:
            snapped = space.snap(snapped)
    final_values = _evaluate(score, snapped)
    n_evals += snapped.shape[0]
    busy = taken(snapped, exclude)
    if avoid is not None:
        near = busy | avoid(snapped)
        if np.all(near):
            # every local search ended next to a point to avoid (they climb back to it): the best
            # snapped candidate that is neither excluded nor flagged
            pool = _pool(space, U, fixed)
            pool = pool[~(taken(pool, exclude) | avoid(pool))]
            if pool.shape[0]:
                snapped, final_values = pool, _evaluate(score, pool)
                n_evals += pool.shape[0]
                near = np.zeros(pool.shape[0], dtype=bool)
        if not np.all(near):
            busy = near
    if np.all(busy) and exclude is not None and len(exclude):
        # every local search ended on an excluded point (on integer and categorical spaces they snap
        # back to the incumbent): the best candidate that is not excluded, after snapping
        pool = _pool(space, U, fixed)
        pool = pool[~taken(pool, exclude)]
        if pool.shape[0]:
            snapped, final_values = pool, _evaluate(score, pool)
            n_evals += pool.shape[0]
            busy = np.zeros(pool.shape[0], dtype=bool)
    if not np.all(busy):
        final_values = np.where(busy, -np.inf, final_values)
    best = int(np.argmax(final_values))
    value = final_values[best] if score is acq else np.exp(final_values[best])  # EI from log EI
    return MaximizeResult(snapped[best].copy(), float(value), n_evals)
