"""Conditional parameters: which parameters of a point are active (``when=`` on a parameter).

A parameter with ``when={"kernel": ["rbf", "poly"]}`` is *active* at a point when every parent it
names is active there and takes one of the listed values (a parent is a
:class:`~warmbo.parameters.Categorical`; parents may be conditional themselves, as long as no
parameter depends on itself). A point holds its active parameters only, and every column of an
inactive parameter encodes as the constant :data:`INACTIVE` (the cube's centre, as far from one end
of a range as from the other), so two points that differ only in values that change nothing are one
point to the model. This is imputation by a constant, the simplest treatment of conditional spaces
(Levesque, Durand, Gagne & Sabourin, "Bayesian optimization for conditional hyperparameter spaces",
IJCNN 2017, discuss it beside kernels built for them; I could not check their figures here), and
``bench/conditional.py`` measures it against the same parameters declared flat.

:class:`Conditions` is built by :class:`~warmbo.space.Space` (None for a space without ``when``) and
answers the questions a space asks of its points and encodings. Written by hand: a topological order
and a few masks over the encoding, which no library offers for warmbo's encoding.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .parameters import Categorical, FloatArray, Parameter, SpaceError

__all__ = ["INACTIVE", "Conditions"]

#: the encoded value of every column of an inactive conditional parameter
INACTIVE = 0.5
#: above this many assignments of the parents, :meth:`Conditions.count` returns the unconditional
#: product (an upper bound) instead of an exact count (counting takes ~10 us an assignment)
COUNT_LIMIT = 2**16

Pairs = tuple[tuple[int, frozenset[int]], ...]


@dataclass(frozen=True, eq=False)
class Conditions:
    """The conditions of a space's parameters: ``pairs[i]`` holds parameter i's ``(parent index,
    allowed choice indices)``; ``order`` lists every parameter after its parents."""

    params: tuple[Parameter, ...]
    slices: tuple[slice, ...]
    pairs: tuple[Pairs, ...]
    order: tuple[int, ...]

    @classmethod
    def of(
        cls, params: tuple[Parameter, ...], index: dict[str, int], slices: tuple[slice, ...]
    ) -> Conditions | None:
        """The conditions of ``params`` (None when no parameter has ``when``). Refuses a parent that
        is unknown, not categorical or without a listed value, and a cycle."""
        if all(p.when is None for p in params):
            return None
        pairs = tuple(
            tuple(_pair(p, parent, values, params, index) for parent, values in p.when or ()) for p in params
        )
        order: list[int] = []
        state = [0] * len(params)  # 0 new, 1 on the path, 2 placed

        def place(i: int, path: list[str]) -> None:
            if state[i] == 2:
                return
            if state[i] == 1:
                cycle = " -> ".join([*path[path.index(params[i].name) :], params[i].name])
                raise SpaceError(f"conditional parameters depend on each other in a cycle: {cycle}")
            state[i] = 1
            for parent, _ in pairs[i]:
                place(parent, [*path, params[i].name])
            state[i] = 2
            order.append(i)

        for i in range(len(params)):
            place(i, [])
        return cls(params, slices, pairs, tuple(order))

    # -- points ------------------------------------------------------------------------------------
    def _at(self, point: Mapping[str, Any], parent: int) -> int:
        return self.params[parent].index(point[self.params[parent].name])  # type: ignore[attr-defined]

    def flags(self, point: Mapping[str, Any]) -> list[bool]:
        """Whether each parameter is active at ``point`` (parents validated; a missing parent that
        decides whether another parameter is active is an error)."""
        flags = [True] * len(self.params)
        for i in self.order:
            for parent, allowed in self.pairs[i]:
                if not flags[parent]:
                    flags[i] = False
                    break
                if self.params[parent].name not in point:
                    name = self.params[parent].name
                    raise SpaceError(
                        f"missing parameter {name!r} in point {dict(point)!r}: it decides whether "
                        f"{self.params[i].name!r} is active"
                    )
                if self._at(point, parent) not in allowed:
                    flags[i] = False
                    break
        return flags

    def missing(self, point: Mapping[str, Any]) -> list[str]:
        """The active parameters ``point`` lacks (a missing parent is listed, not its children; a
        parent's invalid value makes its children undecided, for validation to name)."""
        decided = [True] * len(self.params)
        for i in self.order:
            for parent, allowed in self.pairs[i]:
                try:
                    ok = (
                        decided[parent]
                        and self.params[parent].name in point
                        and self._at(point, parent) in allowed
                    )
                except SpaceError:
                    ok = False
                if not ok:
                    decided[i] = False
                    break
        return [p.name for p, on in zip(self.params, decided, strict=True) if on and p.name not in point]

    def inactive(self, point: Mapping[str, Any]) -> set[str]:
        """The parameters that the values ``point`` holds make inactive whatever the others are (a
        parent present at a value not listed, or itself inactive so)."""
        off = [False] * len(self.params)
        for i in self.order:
            for parent, allowed in self.pairs[i]:
                try:
                    known = self.params[parent].name in point and self._at(point, parent) not in allowed
                except SpaceError:
                    known = False
                if off[parent] or known:
                    off[i] = True
                    break
        return {p.name for p, o in zip(self.params, off, strict=True) if o}

    def settled(self, point: Mapping[str, Any], i: int) -> bool:
        """Whether ``point``'s values make parameter i active whatever the others are: each parent in
        the point, settled active itself and at a listed value."""
        for parent, allowed in self.pairs[i]:
            if self.params[parent].name not in point or self._at(point, parent) not in allowed:
                return False
            if not self.settled(point, parent):
                return False
        return True

    def why(self, i: int) -> str:
        """``"'gamma' when kernel is one of ['rbf', 'poly']"``, or ``"'C' always"``."""
        p = self.params[i]
        if not p.when:
            return f"{p.name!r} always"
        parts = [
            f"{parent} is {values[0]!r}" if len(values) == 1 else f"{parent} is one of {list(values)!r}"
            for parent, values in p.when
        ]
        return f"{p.name!r} when " + " and ".join(parts)

    def _assignments(self) -> tuple[list[int], Iterator[tuple[dict[str, Any], list[bool]]]] | None:
        """The parents (indices) and, for every assignment of their choices, the point of those values
        and its :meth:`flags`; None beyond :data:`COUNT_LIMIT` assignments."""
        parents = sorted({parent for pairs in self.pairs for parent, _ in pairs})
        assignments = 1
        for i in parents:
            assignments *= len(self.params[i].choices)  # type: ignore[attr-defined]
        if assignments > COUNT_LIMIT:
            return None
        names = [self.params[i].name for i in parents]
        points = (
            dict(zip(names, values, strict=True))
            for values in itertools.product(*(self.params[i].choices for i in parents))  # type: ignore[attr-defined]
        )
        return parents, ((point, self.flags(point)) for point in points)

    def count(self, bound: int) -> int:
        """The distinct points of a finite conditional space: over every assignment of the parents,
        the product of the sizes of the other active parameters, each distinct set of active parents'
        values once; ``bound`` (the unconditional product) beyond :data:`COUNT_LIMIT` assignments."""
        enumerated = self._assignments()
        if enumerated is None:
            return bound
        parents, assignments = enumerated
        seen: set[tuple] = set()
        total = 0
        for point, flags in assignments:
            key = tuple((i, point[self.params[i].name]) for i in parents if flags[i])
            if key in seen:
                continue
            seen.add(key)
            size = 1
            for i, p in enumerate(self.params):
                if flags[i] and i not in parents:
                    size *= int(p._size())
            total += size
        return total

    def most_active(self) -> int:
        """The most parameters active at one point (over every assignment of the parents; every
        parameter beyond :data:`COUNT_LIMIT` assignments)."""
        enumerated = self._assignments()
        if enumerated is None:
            return len(self.params)
        return max(sum(flags) for _, flags in enumerated[1])

    # -- encodings ---------------------------------------------------------------------------------
    def mask(self, U: FloatArray) -> NDArray[np.bool_]:
        """``(n, len(params))``: whether each parameter is active at each encoded row (a parent's
        value is the argmax of its one-hot block, as decoding reads it)."""
        mask = np.ones((U.shape[0], len(self.params)), dtype=bool)
        chosen: dict[int, NDArray[np.intp]] = {}
        for i in self.order:
            for parent, allowed in self.pairs[i]:
                if parent not in chosen:
                    chosen[parent] = np.argmax(U[:, self.slices[parent]], axis=1)
                mask[:, i] &= mask[:, parent] & np.isin(chosen[parent], list(allowed))
        return mask

    def inactive_columns(self, U: FloatArray, mask: NDArray[np.bool_] | None = None) -> NDArray[np.bool_]:
        """``(n, dim)``: the encoded columns of the parameters inactive at each row (``mask``: the
        rows' :meth:`mask`, when the caller has it)."""
        widths = [sl.stop - sl.start for sl in self.slices]
        return ~np.repeat(self.mask(U) if mask is None else mask, widths, axis=1)

    def canonical(self, U: FloatArray) -> FloatArray:
        """A copy of ``U`` (n, dim) with every inactive parameter's columns at :data:`INACTIVE`."""
        out = np.array(U, dtype=np.float64)
        out[self.inactive_columns(out)] = INACTIVE
        return out


def canonical_when(params: tuple[Parameter, ...], index: dict[str, int]) -> tuple[Parameter, ...]:
    """``params`` with each ``when`` value written as its parent's choice (``1.0`` for a choice ``1``
    is that choice, and is stored and shown as ``1``); values that name no choice are left for
    :meth:`Conditions.of` to refuse."""
    out = []
    for p in params:
        when = p.when
        if when:
            written = []
            for parent, values in when:
                q = params[index[parent]] if parent in index else None
                if isinstance(q, Categorical):
                    try:
                        values = tuple(q.choices[q.index(v)] for v in values)
                    except SpaceError:
                        pass
                written.append((parent, values))
            if [(n, [(type(v), v) for v in vs]) for n, vs in written] != [
                (n, [(type(v), v) for v in vs]) for n, vs in when
            ]:
                p = dataclasses.replace(p, when=tuple(written))
        out.append(p)
    return tuple(out)


def _pair(p: Parameter, parent: str, values: tuple, params: tuple[Parameter, ...], index: dict[str, int]):
    """``(parent index, allowed choice indices)`` of one entry of ``p.when``, checked."""
    if parent not in index:
        raise SpaceError(
            f"parameter {p.name!r}: when names {parent!r}, which is not a parameter of the space "
            f"{list(index)!r}"
        )
    q = params[index[parent]]
    if not isinstance(q, Categorical):
        article = "an" if q.kind == "int" else "a"
        raise SpaceError(
            f"parameter {p.name!r}: when names {parent!r}, {article} {q.kind} parameter; a parent must be "
            "categorical (list its values with wb.Categorical)"
        )
    allowed = []
    for v in values:
        try:
            allowed.append(q.index(v))
        except SpaceError:
            raise SpaceError(
                f"parameter {p.name!r}: when[{parent!r}] value {v!r} is not one of {parent!r}'s choices "
                f"{list(q.choices)!r}"
            ) from None
    return index[parent], frozenset(allowed)
