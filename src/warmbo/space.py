"""Search spaces and their encoding to the unit cube.

This module owns the description of *what an optimizer may propose*:

* :class:`Space`, an ordered collection of parameters with unique names, including finite
  "grid" spaces whose only valid points are a fixed set of candidates (:meth:`Space.grid`);
* the encoding of points (``dict`` of name to value) into the unit cube ``[0, 1]^dim`` that
  models and acquisition optimizers work in, and its inverse (:meth:`Space.encode`,
  :meth:`Space.decode`, :meth:`Space.snap`);
* validation of user points, initial designs (scrambled Sobol, :meth:`Space.sample`) and
  JSON-serialisable round trips (:meth:`Space.to_dict`, :meth:`Space.from_dict`);
* conditional parameters (``when=``; :mod:`warmbo.conditions`): a point holds its active
  parameters only, and an inactive parameter's columns encode as :data:`INACTIVE`.

The parameter types and their encodings live in :mod:`warmbo.parameters` (re-exported here).

All errors raised for invalid input are :class:`SpaceError` (a ``ValueError``) whose message
names the parameter and the offending value.

Why this file is long: one class, whose every method (validate, encode, decode, snap, sample,
cardinality, diff) has a branch for grid spaces and one for conditional spaces beside the plain
case; the branches read best next to each other.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import is_dataframe
from .conditions import INACTIVE, Conditions, canonical_when
from .parameters import (
    _SOBOL_WARNING,
    GRID_RTOL,
    Categorical,
    Float,
    FloatArray,
    Int,
    Parameter,
    Seed,
    SpaceError,
    _as_unit_matrix,
    _check_count,
    _when_dict,
    param_from_dict,
)

__all__ = [
    "INACTIVE",
    "Categorical",
    "Float",
    "Int",
    "Parameter",
    "Space",
    "SpaceError",
    "param_from_dict",
]


# ----------------------------------------------------------------------------------------------
# space
# ----------------------------------------------------------------------------------------------


def _plain(value: float) -> float | int:
    """A grid value as typed: ``190`` for 190.0."""
    return int(value) if float(value).is_integer() and abs(value) < 2**53 else float(value)


@dataclass(frozen=True, eq=False, repr=False)
class Space:
    """Ordered collection of parameters with unique names, encoded to ``[0, 1]^dim``.

    Parameters
    ----------
    params : sequence of Parameter
        Non-empty; names must be unique. Column order of the encoding follows this order.
    candidate_points : array_like, optional
        Raw ``(N, len(params))`` candidate points, which makes this a finite ("grid") space:
        only these points are valid, ``decode``/``snap`` map to the nearest candidate (Euclidean
        distance in the encoded space) and ``sample`` draws from them. All parameters must then
        be :class:`Float` and every point must lie inside their bounds. Usually built with
        :meth:`Space.grid`.
    """

    params: Sequence[Parameter]  # stored as a tuple (__post_init__); any sequence is accepted
    candidate_points: FloatArray | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        raw = self.params
        if isinstance(raw, (Parameter, str, bytes, Mapping)) or not isinstance(raw, Iterable):
            raise SpaceError(f"params must be a sequence of parameters, got {raw!r}")
        params = tuple(raw)
        if not params:
            raise SpaceError("a Space needs at least one parameter, got an empty sequence")
        index: dict[str, int] = {}
        slices: list[slice] = []
        col_names: list[str] = []
        start = 0
        for i, p in enumerate(params):
            if not isinstance(p, Parameter):
                raise SpaceError(f"params[{i}] is not a parameter: {p!r}")
            if p.name in index:
                raise SpaceError(f"duplicate parameter name {p.name!r}")
            index[p.name] = i
            slices.append(slice(start, start + p.width))
            col_names.extend([p.name] * p.width)
            start += p.width
        params = canonical_when(params, index)  # (when={"k": 1.0} for a choice 1: stored as 1)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_slices", tuple(slices))
        object.__setattr__(self, "_col_names", tuple(col_names))
        object.__setattr__(self, "_dim", start)
        object.__setattr__(self, "_conditions", Conditions.of(params, index, tuple(slices)))
        object.__setattr__(self, "_tree", None)
        object.__setattr__(self, "_distinct", None)
        object.__setattr__(self, "_gaps", None)
        pts, enc = None, None
        if self.candidate_points is not None:
            if self.is_conditional:
                raise SpaceError("a grid space (candidate_points) cannot have conditional parameters (when=)")
            pts, enc = self._check_candidates(self.candidate_points)
        object.__setattr__(self, "candidate_points", pts)
        object.__setattr__(self, "_candidates", enc)

    def _check_candidates(self, points: ArrayLike) -> tuple[FloatArray, FloatArray]:
        for p in self.params:
            if not isinstance(p, Float):
                raise SpaceError(
                    f"parameter {p.name!r}: grid spaces only support Float parameters, got {p!r}"
                )
        try:
            P = np.array(points, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise SpaceError(f"candidate points cannot be converted to float64 ({exc})") from None
        d = len(self.params)
        if P.ndim != 2 or P.shape[1] != d or P.shape[0] == 0:
            raise SpaceError(f"candidate points must have shape (N >= 1, {d}), got shape {P.shape}")
        enc = np.empty_like(P)
        for j, p in enumerate(self.params):
            for i, v in enumerate(P[:, j]):
                try:
                    p.validate(v)
                except SpaceError as exc:
                    raise SpaceError(f"candidate point {i}: {exc}") from None
            enc[:, j] = p._encode_valid(P[:, j])[:, 0]
        P.setflags(write=False)
        enc.setflags(write=False)
        return P, enc

    # -- basic properties ----------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names in order."""
        return tuple(p.name for p in self.params)

    @property
    def dim(self) -> int:
        """Total encoded width (number of columns of the encoding)."""
        return self._dim  # type: ignore[attr-defined]

    @property
    def bounds(self) -> FloatArray:
        """Bounds of the encoded space: ``(dim, 2)`` array of ``[0, 1]`` rows."""
        return np.tile(np.array([0.0, 1.0]), (self.dim, 1))

    @property
    def is_conditional(self) -> bool:
        """True when some parameter is active only for some values of others (``when=``)."""
        return self._conditions is not None  # type: ignore[attr-defined]

    def active(self, point: Mapping[str, Any]) -> tuple[str, ...]:
        """The names of the parameters active at ``point`` (in the space's order): every parameter of
        an unconditional space; in a conditional one, those whose parents are active and take one of
        the values their ``when`` lists. Only the parents' values are read (each is validated)."""
        if not isinstance(point, Mapping):
            raise SpaceError(f"a point must be a mapping of parameter name to value, got {point!r}")
        if self._conditions is None:  # type: ignore[attr-defined]
            return self.names
        flags = self._conditions.flags(point)  # type: ignore[attr-defined]
        return tuple(n for n, on in zip(self.names, flags, strict=True) if on)

    def missing(self, point: Mapping[str, Any]) -> list[str]:
        """The parameters a point needs and lacks, in the space's order: every name it does not have
        in an unconditional space; in a conditional one, those active at it (a parent it lacks is
        listed, its children are not: whether they are needed depends on the parent's value). A
        parent's invalid value is left for :meth:`validate` to name."""
        if self._conditions is None:  # type: ignore[attr-defined]
            return [n for n in self.names if n not in point]
        return self._conditions.missing(point)  # type: ignore[attr-defined]

    def inactive(self, point: Mapping[str, Any]) -> set[str]:
        """The parameters that a (possibly partial) point's values make inactive whatever its other
        values are: none in an unconditional space."""
        conditions = self._conditions  # type: ignore[attr-defined]
        return set() if conditions is None else conditions.inactive(point)

    def _settled_active(self, point: Mapping[str, Any], name: str) -> bool:
        """Whether the values ``point`` holds make ``name`` active whatever the other parameters are."""
        conditions = self._conditions  # type: ignore[attr-defined]
        return conditions is None or conditions.settled(point, self._index[name])  # type: ignore[attr-defined]

    def _why_active(self, name: str) -> str:
        """``"'gamma' when kernel is one of ['rbf', 'poly']"``, or ``"'C' always"``."""
        conditions = self._conditions  # type: ignore[attr-defined]
        return f"{name!r} always" if conditions is None else conditions.why(self._index[name])  # type: ignore[attr-defined]

    def _inactive_columns(self, U: FloatArray) -> NDArray[np.bool_]:
        """``(n, dim)``: the encoded columns of the parameters inactive at each row."""
        return self._conditions.inactive_columns(U)  # type: ignore[attr-defined]

    def _activated(self, before: FloatArray, after: FloatArray, rng: np.random.Generator) -> FloatArray:
        """``after`` (encoded points whose parents were changed from ``before``: held values, a
        neighbour's new choice) snapped, with the parameters it makes active that were inactive in
        ``before`` drawn uniformly (their columns held the constant :data:`INACTIVE`, which is the
        middle of every range: left there, every such point would sit at the centre); nested
        children too. ``after`` snapped on an unconditional space."""
        conditions = self._conditions  # type: ignore[attr-defined]
        if conditions is None:
            return self.snap(after)
        out = np.array(after, dtype=np.float64)
        drawn = conditions.inactive_columns(np.asarray(before, dtype=np.float64))
        for _ in range(len(self.params)):  # (a drawn parent may switch on its own children)
            fresh = drawn & ~conditions.inactive_columns(out)
            if not fresh.any():
                break
            out[fresh] = rng.random(int(fresh.sum()))
            drawn &= ~fresh
        return self.snap(out)

    def _canonical(self, U: FloatArray) -> FloatArray:
        """``U`` (n, dim) with every inactive parameter's columns at :data:`INACTIVE` (a copy); ``U``
        itself on an unconditional space."""
        conditions = self._conditions  # type: ignore[attr-defined]
        return U if conditions is None else conditions.canonical(U)

    @property
    def is_finite(self) -> bool:
        """True only for grid spaces (a finite set of candidates)."""
        return self.candidate_points is not None

    @property
    def cardinality(self) -> int | float:
        """Number of distinct valid points (an int): the distinct candidates of a grid space (a
        duplicated row is one point), the product of the parameters' sizes when every parameter is an
        :class:`Int`, a :class:`Categorical` or a :class:`Float` with ``step`` (its ``K + 1`` grid
        values); ``math.inf`` as soon as one parameter is a continuous :class:`Float`."""
        if self.candidate_points is not None:
            distinct = self._distinct  # type: ignore[attr-defined]
            if distinct is None:  # (an ask reads it: counted once)
                distinct = int(np.unique(self.candidate_points, axis=0).shape[0])
                object.__setattr__(self, "_distinct", distinct)
            return distinct
        sizes = [p._size() for p in self.params]
        if any(math.isinf(v) for v in sizes):
            return math.inf
        size = 1  # (an int: 5 points, not 5.0, and exact beyond 2**53)
        for v in sizes:
            size *= int(v)
        if self._conditions is not None:  # type: ignore[attr-defined]
            counted = self._distinct  # type: ignore[attr-defined]
            if counted is None:  # (an ask reads it: counted once)
                counted = self._conditions.count(size)  # type: ignore[attr-defined]
                object.__setattr__(self, "_distinct", counted)
            size = counted
        # beyond a float's range, inf as the float product gave (math.isfinite of such an int raises)
        return size if size <= sys.float_info.max else math.inf

    @property
    def candidates(self) -> FloatArray | None:
        """Encoded candidates ``(N, dim)`` of a grid space (a copy), else None."""
        enc = self._candidates  # type: ignore[attr-defined]
        return None if enc is None else enc.copy()

    def slice_of(self, name: str) -> slice:
        """Columns of the encoding that belong to parameter ``name``."""
        try:
            return self._slices[self._index[name]]  # type: ignore[attr-defined]
        except KeyError:
            raise SpaceError(f"unknown parameter name {name!r}; space has {list(self.names)!r}") from None

    def lengthscale_groups(self) -> NDArray[np.intp] | None:
        """The parameter of each encoded column (``(dim,)`` integers 0..len(params) - 1): the
        optimizer's default kernel gives each parameter one lengthscale, so a categorical's one-hot
        columns share one (:class:`~warmbo.kernels.Stationary`'s ``groups``; docs/optimizer.md).
        None when every parameter takes one column (one lengthscale per column already)."""
        widths = [sl.stop - sl.start for sl in self._slices]  # type: ignore[attr-defined]
        if all(w == 1 for w in widths):
            return None
        return np.repeat(np.arange(len(widths), dtype=np.intp), widths)

    def __len__(self) -> int:
        return len(self.params)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self.params)

    def __repr__(self) -> str:
        """``wb.Space([wb.Float('x', 0.0, 1.0), wb.Float('lr', 1e-05, 0.1, log=True)])``: each
        parameter with only its arguments not at their defaults, Python that rebuilds the space with
        ``import warmbo as wb`` (a grid space's candidate points are summarised, not written out)."""
        inner = ", ".join(repr(p) for p in self.params)
        extra = ""
        if self.candidate_points is not None:
            n, d = self.candidate_points.shape
            extra = f", candidate_points=<{n} x {d} array>"
        return f"wb.Space([{inner}]{extra})"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's display of a cell ending with a space: the repr, or one parameter a line when
        it is longer than 100 characters (still Python that rebuilds the space)."""
        text = repr(self)
        if len(text) > 100:
            lines = [f"    {param!r}," for param in self.params]
            if self.candidate_points is not None:
                n, d = self.candidate_points.shape
                lines.append(f"], candidate_points=<{n} x {d} array>)")
            else:
                lines.append("])")
            text = "\n".join(["wb.Space([", *lines])
        printer.text(text)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Space):
            return NotImplemented
        if self.params != other.params:
            return False
        a, b = self.candidate_points, other.candidate_points
        if a is None or b is None:
            return a is b
        return a.shape == b.shape and bool(np.array_equal(a, b))

    def __hash__(self) -> int:
        pts = self.candidate_points
        return hash((self.params, None if pts is None else (pts.shape, pts.tobytes())))

    # -- validation / encoding -----------------------------------------------------------------
    def _validate_base(self, point: Any) -> dict[str, Any]:
        if not isinstance(point, Mapping):
            raise SpaceError(f"a point must be a mapping of parameter name to value, got {point!r}")
        unknown = [k for k in point if k not in self._index]  # type: ignore[attr-defined]
        if unknown:
            raise SpaceError(f"unknown parameter name(s) {unknown!r}; space has {list(self.names)!r}")
        if self._conditions is not None:  # type: ignore[attr-defined]
            missing = self.missing(point)
            if missing:
                raise SpaceError(
                    f"missing parameter(s) {missing!r} in point {dict(point)!r} (active there: "
                    + "; ".join(self._why_active(n) for n in missing)
                    + ")"
                )
            flags = self._conditions.flags(point)  # type: ignore[attr-defined]
            # an inactive parameter's value is dropped: it changes nothing at this point
            return {p.name: p.validate(point[p.name]) for p, on in zip(self.params, flags, strict=True) if on}
        missing = [n for n in self.names if n not in point]
        if missing:
            raise SpaceError(f"missing parameter(s) {missing!r} in point {dict(point)!r}")
        return {p.name: p.validate(point[p.name]) for p in self.params}

    def _match_candidates(self, points: list[dict[str, Any]]) -> NDArray[np.intp]:
        """Index of the candidate each (validated) point equals within :data:`GRID_RTOL`, and within a
        millionth of the smallest gap between two values of its column (on a column of 2.4e9 + k
        the relative tolerance alone is 2.4, which matched 2400000001.5 to the candidate 2400000001)."""
        P = self.candidate_points
        assert P is not None
        X = np.array([[pt[n] for n in self.names] for pt in points], dtype=np.float64).reshape(-1, P.shape[1])
        span = np.array([p.high - p.low for p in self.params])  # type: ignore[attr-defined]
        gap = self._column_gaps()
        idx = self._nearest(self._encode_rows(X))

        def close(x: FloatArray, c: FloatArray) -> NDArray[np.bool_]:
            tol = np.minimum(GRID_RTOL * np.maximum(np.maximum(np.abs(x), np.abs(c)), span), 1e-6 * gap)
            return np.abs(x - c) <= tol

        for i in range(X.shape[0]):
            if close(X[i], P[idx[i]]).all():
                continue
            ok = np.flatnonzero(close(X[i], P).all(axis=1))
            if ok.size == 0:
                # (the nearest candidate named, as an off-grid step value names its neighbours: a user
                # test typed 190.2 for a grid point at 190)
                nearest = {n: _plain(v) for n, v in zip(self.names, P[idx[i]], strict=True)}
                raise SpaceError(
                    f"point {points[i]!r} is not one of the {P.shape[0]} grid candidates; the nearest "
                    f"is {nearest!r}"
                )
            idx[i] = ok[0]
        return idx

    def _column_gaps(self) -> FloatArray:
        """Smallest positive difference between two values of each grid column (inf for a constant
        column), computed once."""
        gaps = self._gaps  # type: ignore[attr-defined]
        if gaps is None:
            P = self.candidate_points
            assert P is not None
            gaps = np.full(P.shape[1], np.inf)
            for j in range(P.shape[1]):
                steps = np.diff(np.unique(P[:, j]))
                if steps.size:
                    gaps[j] = steps.min()
            object.__setattr__(self, "_gaps", gaps)
        return gaps

    def _encode_rows(self, X: FloatArray) -> FloatArray:
        """Encode raw float rows of a grid space (all parameters are Float)."""
        out = np.empty_like(X)
        for j, p in enumerate(self.params):
            out[:, j] = p._encode_valid(X[:, j])[:, 0]
        return out

    def _nearest(self, U: FloatArray) -> NDArray[np.intp]:
        tree = self._tree  # type: ignore[attr-defined]
        if tree is None:
            from scipy.spatial import cKDTree

            tree = cKDTree(self._candidates)  # type: ignore[attr-defined]
            object.__setattr__(self, "_tree", tree)
        if U.shape[0] == 0:
            return np.zeros(0, dtype=np.intp)
        _, idx = tree.query(U)
        return np.asarray(idx, dtype=np.intp).reshape(-1)

    def _grid_point(self, i: int) -> dict[str, float]:
        P = self.candidate_points
        assert P is not None
        return {n: float(v) for n, v in zip(self.names, P[i], strict=True)}

    def validate(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """Check a point and return it in canonical form.

        Parameters
        ----------
        point : Mapping
            Parameter name to value; must contain exactly the names of this space.

        Returns
        -------
        dict
            Canonical point, keys in the order of :attr:`names`. For a grid space, the exact
            matching candidate.

        Raises
        ------
        SpaceError
            Unknown or missing names (all listed), an invalid value (naming the parameter), or,
            for a grid space, a point that is not a candidate (within relative 1e-9, or 1e-9 of
            the parameter range for values near zero, and never more than a millionth of the
            smallest gap between two candidate values of the column).
        """
        return self._validate_many([point])[0]

    def _validate_many(self, points: list[Any]) -> list[dict[str, Any]]:
        vals = [self._validate_base(p) for p in points]
        if self.candidate_points is not None and vals:
            vals = [self._grid_point(int(i)) for i in self._match_candidates(vals)]
        return vals

    def _as_points(self, points: Any) -> list[Any]:
        if isinstance(points, Mapping):
            return [points]
        if is_dataframe(points):
            # a pandas DataFrame: one point per row, an empty cell (NaN) a parameter it does not have
            # (iterated, it gave its column names: "a point must be a mapping ..., got 'x'", a
            # notebook user test's opt.predict(df))
            return [
                {k: v for k, v in row.items() if not (isinstance(v, float) and math.isnan(v))}
                for row in points.to_dict("records")
            ]
        if type(points).__name__ == "Series" and hasattr(points, "to_dict"):  # (one row of a frame)
            return [points.to_dict()]
        if isinstance(points, (str, bytes)) or not isinstance(points, Iterable):
            raise SpaceError(f"expected a point (mapping) or a sequence of points, got {points!r}")
        return list(points)

    def _encode_valid(self, vals: list[dict[str, Any]]) -> FloatArray:
        out = np.empty((len(vals), self.dim), dtype=np.float64)
        if self._conditions is not None:  # type: ignore[attr-defined]
            out.fill(INACTIVE)  # (a valid point holds its active parameters only)
            for p, sl in zip(self.params, self._slices, strict=True):  # type: ignore[attr-defined]
                rows = [i for i, v in enumerate(vals) if p.name in v]
                if rows:
                    out[rows, sl] = p._encode_valid([vals[i][p.name] for i in rows])
            return out
        for p, sl in zip(self.params, self._slices, strict=True):  # type: ignore[attr-defined]
            out[:, sl] = p._encode_valid([v[p.name] for v in vals])
        return out

    def encode(self, points: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> FloatArray:
        """Validate and encode points to the unit cube.

        Parameters
        ----------
        points : Mapping or sequence of Mapping
            One point or ``n`` points.

        Returns
        -------
        numpy.ndarray
            float64 array of shape ``(1, dim)`` for a single point, ``(n, dim)`` otherwise, with
            entries in ``[0, 1]``.
        """
        return self._encode_valid(self._validate_many(self._as_points(points)))

    def _as_batch(self, U: ArrayLike) -> tuple[FloatArray, bool]:
        try:
            A = np.asarray(U, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise SpaceError(f"encoded array cannot be converted to float64 ({exc})") from None
        single = A.ndim == 1
        if single:
            if A.shape[0] != self.dim:
                raise SpaceError(f"expected an encoded point of shape ({self.dim},), got shape {A.shape}")
            A = A.reshape(1, -1)
        return _as_unit_matrix(A, self.dim, "Space", self._col_names), single  # type: ignore[attr-defined]

    def decode(self, U: ArrayLike, *, as_written: bool = False) -> list[dict[str, Any]]:
        """Decode encoded points.

        Parameters
        ----------
        U : array_like
            ``(dim,)`` or ``(n, dim)``; clipped to ``[0, 1]`` first, NaN is an error.
        as_written : bool, default False
            Points encoded from values someone wrote (a transfer source's configurations): a
            continuous float comes back as its rounding to 10 significant digits
            (``parameters.WRITTEN_DIGITS``) where that rounding encodes to the same coordinate bit for
            bit, so ``decode(encode(p), as_written=True) == p`` for values of up to 10 digits
            (``0.001``, not the ``0.0010000000000000002`` that ``log`` and ``exp`` leave). Off by
            default: the decoded value of any other coordinate (an acquisition maximum) is kept as
            computed.

        Returns
        -------
        list of dict
            Always a list (length 1 for a ``(dim,)`` input). Floats are decoded exactly up to
            round-off (log floats clamped into ``[low, high]``, and 0 and 1 decoded to ``low`` and
            ``high`` exactly, as for linear floats), ints to the bin containing the
            coordinate, categoricals to the argmax of their block. For a grid space each row is
            decoded to its nearest candidate (Euclidean distance in the encoded space).
        """
        A, _ = self._as_batch(U)
        if self.candidate_points is not None:
            return [self._grid_point(int(i)) for i in self._nearest(A)]
        columns = [
            (p._decode_written if as_written and isinstance(p, Float) else p._decode_clipped)(A[:, sl])  # type: ignore[attr-defined]
            for p, sl in zip(self.params, self._slices, strict=True)
        ]
        points = [dict(zip(self.names, row, strict=True)) for row in zip(*columns, strict=True)]
        if self._conditions is not None:  # type: ignore[attr-defined]
            mask = self._conditions.mask(A)  # type: ignore[attr-defined]
            points = [
                {n: v for (n, v), on in zip(point.items(), flags, strict=True) if on}
                for point, flags in zip(points, mask, strict=True)
            ]
        return points

    def snap(self, U: ArrayLike) -> FloatArray:
        """Project encoded points onto valid encodings, ``encode(decode(U))``.

        Float columns are only clipped to ``[0, 1]``, int columns (and floats with ``step``) move to
        their bin centre,
        categorical blocks become exactly one-hot; grid spaces snap to the nearest candidate.
        The operation is idempotent.

        Parameters
        ----------
        U : array_like
            ``(dim,)`` or ``(n, dim)``.

        Returns
        -------
        numpy.ndarray
            float64 array of the same shape as ``U``.
        """
        A, single = self._as_batch(U)
        if self.candidate_points is not None:
            out = self._candidates[self._nearest(A)]  # type: ignore[attr-defined]
        else:
            out = np.empty_like(A)
            for p, sl in zip(self.params, self._slices, strict=True):  # type: ignore[attr-defined]
                out[:, sl] = p._snap_clipped(A[:, sl])
            out = self._canonical(out)
        return out[0].copy() if single else np.array(out)

    # -- sampling ------------------------------------------------------------------------------
    def _sample(self, n: Any, seed: Seed) -> tuple[list[dict[str, Any]], FloatArray]:
        n = _check_count(n)
        if self.candidate_points is not None:
            N = self.candidate_points.shape[0]
            rng = np.random.default_rng(seed)
            idx = rng.choice(N, size=n, replace=n > N)
            return [self._grid_point(int(i)) for i in idx], self._candidates[idx].copy()  # type: ignore[attr-defined]
        if n == 0:
            return [], np.empty((0, self.dim), dtype=np.float64)
        from scipy.stats import qmc

        sampler = qmc.Sobol(len(self.params), scramble=True, seed=seed)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_SOBOL_WARNING, category=UserWarning)
            u = sampler.random(n)
        columns = [p._from_uniform(u[:, j]) for j, p in enumerate(self.params)]
        vals = [dict(zip(self.names, row, strict=True)) for row in zip(*columns, strict=True)]
        conditions = self._conditions  # type: ignore[attr-defined]
        if conditions is None:
            return vals, self._encode_valid(vals)
        # every parameter encoded, then the inactive ones dropped by the encoding's mask (validating
        # each point in Python was half the CPU of an ask)
        U = np.empty((n, self.dim), dtype=np.float64)
        for p, sl, column in zip(self.params, self._slices, columns, strict=True):  # type: ignore[attr-defined]
            U[:, sl] = p._encode_valid(column)
        mask = conditions.mask(U)
        U[conditions.inactive_columns(U, mask)] = INACTIVE
        names = self.names
        vals = [
            {n: point[n] for n, on in zip(names, flags, strict=True) if on}
            for point, flags in zip(vals, mask, strict=True)
        ]
        return vals, U

    def sample(self, n: int, seed: Seed = None) -> list[dict[str, Any]]:
        """Draw ``n`` valid points (scrambled Sobol; candidates for grid spaces).

        One Sobol coordinate is drawn per parameter (not per one-hot column) and mapped to the
        parameter through its bins. Grid spaces draw candidates without replacement, or with
        replacement when ``n`` exceeds the number of candidates.

        Parameters
        ----------
        n : int
            Number of points (``>= 0``; powers of two keep Sobol's balance properties).
        seed : int or numpy.random.Generator, optional
            Same seed, same samples.

        Returns
        -------
        list of dict
            ``n`` canonical points.
        """
        return self._sample(n, seed)[0]

    def sample_encoded(self, n: int, seed: Seed = None) -> FloatArray:
        """Encoded version of :meth:`sample`: ``encode(sample(n, seed))``, shape ``(n, dim)``."""
        return self._sample(n, seed)[1]

    # -- construction helpers ------------------------------------------------------------------
    @classmethod
    def box(cls, bounds: ArrayLike, names: Sequence[str] | None = None) -> Space:
        """Space of continuous parameters from ``(low, high)`` pairs.

        Parameters
        ----------
        bounds : array_like
            Sequence of ``(low, high)`` pairs or a ``(d, 2)`` array.
        names : sequence of str, optional
            Parameter names; default ``x0, ..., x{d-1}``.

        Returns
        -------
        Space
        """
        try:
            B = np.asarray(bounds, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise SpaceError(f"bounds cannot be converted to a float array ({exc})") from None
        if B.ndim != 2 or B.shape[1] != 2 or B.shape[0] == 0:
            raise SpaceError(f"bounds must have shape (d >= 1, 2), got shape {B.shape}")
        names_ = cls._default_names(B.shape[0], names)
        return cls(tuple(Float(n, float(lo), float(hi)) for n, (lo, hi) in zip(names_, B, strict=True)))

    @staticmethod
    def _default_names(d: int, names: Sequence[str] | None) -> list[str]:
        if names is None:
            return [f"x{i}" for i in range(d)]
        if isinstance(names, str):
            raise SpaceError(f"names must be a sequence of str, got {names!r}")
        names_ = list(names)
        if len(names_) != d:
            raise SpaceError(f"got {len(names_)} names {names_!r} for {d} dimensions")
        return names_

    @classmethod
    def grid(cls, points: ArrayLike, names: Sequence[str] | None = None) -> Space:
        """Finite space whose valid points are the rows of ``points``.

        Parameters
        ----------
        points : array_like
            ``(N, d)`` finite candidate points (N, d >= 1). Duplicated rows are kept (the space's
        :attr:`cardinality` counts them once).
        names : sequence of str, optional
            Column names; default ``x0, ..., x{d-1}``.

        Returns
        -------
        Space
            Space of :class:`Float` parameters with per-column ``[min, max]`` bounds (a constant
            column ``v`` gets ``[v - 0.5, v + 0.5]``, widened for ``|v| > 2**39`` so the bounds
            stay distinct), ``is_finite=True`` and ``candidates`` the encoded points.
        """
        try:
            P = np.array(points, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise SpaceError(f"grid points cannot be converted to a float array ({exc})") from None
        if P.ndim != 2:
            raise SpaceError(f"grid points must be a 2-D array (N, d), got shape {P.shape}")
        if P.shape[0] == 0 or P.shape[1] == 0:
            raise SpaceError(f"grid points must be non-empty, got shape {P.shape}")
        names_ = cls._default_names(P.shape[1], names)
        bad = ~np.isfinite(P)
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            raise SpaceError(f"parameter {names_[j]!r}: grid point {i} has non-finite value {P[i, j]!r}")
        params = []
        for j, name in enumerate(names_):
            lo, hi = float(P[:, j].min()), float(P[:, j].max())
            if lo == hi:
                h = max(0.5, abs(lo) * 2.0**-40)
                lo, hi = lo - h, hi + h
            params.append(Float(name, lo, hi))
        return cls(tuple(params), candidate_points=P)

    # -- serialisation / comparison ------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description (grid candidates stored as raw points)."""
        pts = self.candidate_points
        return {
            "params": [p.to_dict() for p in self.params],
            "candidate_points": None if pts is None else pts.tolist(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Space:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(d, Mapping) or "params" not in d:
            raise SpaceError(f"space description must be a mapping with a 'params' key, got {d!r}")
        unknown = sorted(set(d) - {"params", "candidate_points"}, key=str)
        if unknown:
            raise SpaceError(
                f"unknown key(s) {unknown!r} in space description; its keys are params and candidate_points"
            )
        params = d["params"]
        if isinstance(params, (str, bytes, Mapping)) or not isinstance(params, Iterable):
            raise SpaceError(f"'params' must be a list of parameter descriptions, got {params!r}")
        return cls(tuple(param_from_dict(p) for p in params), candidate_points=d.get("candidate_points"))

    def diff(self, other: Space, names: tuple[str, str] = ("this space", "other space")) -> list[str]:
        """Human-readable differences to ``other``; empty iff ``self == other``.

        Parameters
        ----------
        other : Space
            Space to compare with.
        names : (str, str)
            What the messages call ``self`` and ``other`` (the CLI: "the space file", "the study";
            a user test read "only in other space" as the space file's).

        Returns
        -------
        list of str
            E.g. ``"parameter 'lr': high 1.0 != 10.0"`` or ``"parameter 'x' only in this space"``.
        """
        if not isinstance(other, Space):
            raise SpaceError(f"can only diff against a Space, got {other!r}")
        out: list[str] = []
        mine = {p.name: p for p in self.params}
        theirs = {p.name: p for p in other.params}
        this, that = names
        out += [f"parameter {n!r} only in {this}" for n in self.names if n not in theirs]
        out += [f"parameter {n!r} only in {that}" for n in other.names if n not in mine]
        for n in self.names:
            if n in theirs:
                out += _param_diff(mine[n], theirs[n])
        order_a = tuple(n for n in self.names if n in theirs)
        order_b = tuple(n for n in other.names if n in mine)
        if order_a != order_b:
            out.append(f"parameter order differs: {order_a!r} != {order_b!r}")
        a, b = self.candidate_points, other.candidate_points
        if a is not None and b is None:
            out.append(f"{this} is a grid of {a.shape[0]} candidates, {that} is not a grid")
        elif a is None and b is not None:
            out.append(f"{that} is a grid of {b.shape[0]} candidates, {this} is not a grid")
        elif a is not None and b is not None:
            if a.shape != b.shape:
                out.append(f"grid candidates: shape {a.shape} != {b.shape}")
            elif not np.array_equal(a, b):
                rows = int((a != b).any(axis=1).sum())
                out.append(f"grid candidates differ in {rows} of {a.shape[0]} rows")
        return out


def _param_diff(p: Parameter, q: Parameter) -> list[str]:
    if type(p) is not type(q):
        return [f"parameter {p.name!r}: type {p.kind} != {q.kind}"]
    out = []
    for f in dataclasses.fields(p):  # type: ignore[arg-type]
        if f.name == "when" and p.when != q.when:  # (as written: {'kernel': ['rbf', 'poly']})
            a, b = (None if w is None else _when_dict(w) for w in (p.when, q.when))
            out.append(f"parameter {p.name!r}: when {a!r} != {b!r}")
        elif f.name != "name" and not p._field_equal(q, f.name):
            out.append(f"parameter {p.name!r}: {f.name} {getattr(p, f.name)!r} != {getattr(q, f.name)!r}")
    return out
