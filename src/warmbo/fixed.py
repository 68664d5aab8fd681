"""Fixed values of some parameters for one ask: the rest are chosen with them held.

A user often knows part of the next configuration before asking for it: the batch size the free GPU
fits, the catalyst on the shelf today, the temperature the oven is set to. Ax calls these
``fixed_features`` (``get_next_trial(fixed_features=...)``), Optuna fills the parameters a partially
enqueued trial leaves out (``enqueue_trial`` with some of them, ``PartialFixedSampler``). Here
:meth:`warmbo.Optimizer.ask` takes ``fixed={name: value}`` and the acquisition is maximised over the
other parameters with these held: in the encoding, the parameters' columns (a categorical's whole
one-hot block) are set to their values in every candidate, and L-BFGS-B's bounds hold them (a
variable whose lower and upper bounds are equal is fixed; scipy's L-BFGS-B documents this), so the
point returned is the acquisition's maximiser on the slice ``{x : x_F = v}``. That is the
conditional maximisation BoTorch's ``optimize_acqf(fixed_features=...)`` does.

Written by hand: a few lines over :class:`~warmbo.space.Space`'s encoding, which no library offers.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .maximize import taken
from .space import Categorical, Float, Int, Space, SpaceError

__all__ = ["Fixed", "fix"]


@dataclass(frozen=True, eq=False)
class Fixed:
    """Parameters held at given values: ``params`` (validated, in the space's order), and in the
    encoding the ``columns`` they occupy and their ``values`` there."""

    params: dict[str, Any]
    columns: np.ndarray  # (k,) int
    values: np.ndarray  # (k,) float

    def apply(self, U: np.ndarray) -> np.ndarray:
        """A copy of the encoded points ``U`` (``(d,)`` or ``(n, d)``) with the fixed columns set."""
        out = np.array(U, dtype=np.float64, copy=True)
        out[..., self.columns] = self.values
        return out

    def holds(self, U: np.ndarray) -> np.ndarray:
        """Which rows of the encoded points ``U`` (``(n, d)``) have the fixed values (to 1e-9)."""
        U = np.atleast_2d(np.asarray(U, dtype=np.float64))
        return np.all(np.abs(U[:, self.columns] - self.values) <= 1e-9, axis=1)

    def bounds(self, d: int) -> np.ndarray:
        """``(d, 2)`` L-BFGS-B bounds on the encoded cube: ``[0, 1]`` for a free column, ``[v, v]`` for
        a fixed one (L-BFGS-B does not move a variable whose bounds are equal)."""
        out = np.tile(np.array([0.0, 1.0]), (d, 1))
        out[self.columns, 0] = self.values
        out[self.columns, 1] = self.values
        return out

    def __repr__(self) -> str:
        return f"Fixed({self.params!r})"


def fix(space: Space, values: Mapping[str, Any]) -> Fixed:
    """The parameters ``values`` names held at their values in ``space``.

    Raises
    ------
    SpaceError
        A name that is not a parameter of the space, an invalid value (naming the parameter), no
        name at all, or on a grid space (:meth:`Space.grid`) values that no candidate point has.
    """
    if not isinstance(values, Mapping):
        raise SpaceError(f"fixed must be a mapping of parameter name to value, got {values!r}")
    if not values:
        raise SpaceError("fixed holds no parameter: give {name: value} for the parameters to hold")
    unknown = [k for k in values if k not in space.names]
    if unknown:
        close = [n for n in space.names if str(unknown[0]).lower() == n.lower()] or difflib.get_close_matches(
            str(unknown[0]), space.names, n=1
        )
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise SpaceError(
            f"fixed: unknown parameter name(s) {unknown!r}{hint}; space has {list(space.names)!r}"
        )
    params = {p.name: p.validate(values[p.name]) for p in space.params if p.name in values}
    if space.is_conditional:  # a held parameter must be active: its parents held at values that make it so
        for name in params:
            if not space._settled_active(params, name):
                raise SpaceError(
                    f"fixed: {name!r} is a conditional parameter ({space._why_active(name)}); hold its "
                    "parent(s) at such values too"
                )
    columns, encoded = [], []
    for p in space.params:
        if p.name in params:
            sl = space.slice_of(p.name)
            columns.extend(range(sl.start, sl.stop))
            encoded.extend(p.encode([params[p.name]])[0])
    held = Fixed(params, np.asarray(columns, dtype=np.intp), np.asarray(encoded, dtype=np.float64))
    if space.is_finite and not held.holds(space.candidates).any():
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
        raise SpaceError(f"fixed: none of the {space.candidates.shape[0]} grid candidates has {shown}")
    return held


#: a slice of a finite space without a grid (integers, categoricals, step floats) is listed whole,
#: when a draw finds no free point, up to this many points
LISTED_MAX = 100_000


def free_point(space: Space, held: Fixed, exclude: np.ndarray | None, seed: int) -> np.ndarray | None:
    """An encoded point with the fixed values that is not among ``exclude``: the first of a seeded
    draw (of the space's candidates on a grid space), else of the slice's points listed whole on a
    finite space of other parameters (:data:`LISTED_MAX` at most; a draw of 256 missed the last 3
    free points of a slice of 500, said to be used up: a user test), or None when none is free."""
    rng = np.random.default_rng(seed)
    if space.is_finite:
        pool = space.candidates[held.holds(space.candidates)]
        pool = pool[rng.permutation(pool.shape[0])]
    else:
        drawn = space.sample_encoded(256, seed=seed)
        # (a held parent's children drawn; a held child is held again after the draw)
        pool = held.apply(space._activated(drawn, held.apply(drawn), np.random.default_rng([seed, 1])))
    free = pool[~taken(pool, exclude)] if exclude is not None and len(exclude) else pool
    if not free.shape[0] and not space.is_finite:
        listed = _slice_points(space, held)
        if listed is not None:
            listed = listed[rng.permutation(listed.shape[0])]
            free = listed[~taken(listed, exclude)] if exclude is not None and len(exclude) else listed
    return free[0].copy() if free.shape[0] else None


def _slice_points(space: Space, held: Fixed) -> np.ndarray | None:
    """Every point of the slice ``held`` of a finite space without a grid, encoded; None for a
    continuous or conditional space, or a slice of more than :data:`LISTED_MAX` points."""
    if space.is_conditional:
        return None
    values: list[list[Any]] = []
    size = 1
    for p in space.params:
        if p.name in held.params:
            options = [held.params[p.name]]
        elif isinstance(p, Categorical):
            options = list(p.choices)
        elif isinstance(p, Int):
            options = list(range(p.low, p.high + 1, p.step))
        elif isinstance(p, Float) and p.step is not None:
            options = [p._grid_value(k) for k in range(int(p._size()))]
        else:
            return None
        size *= len(options)
        if size > LISTED_MAX:
            return None
        values.append(options)
    return space.encode([dict(zip(space.names, combo, strict=True)) for combo in itertools.product(*values)])
