"""Parameter types of a search space and their encoding to the unit interval.

:class:`Float`, :class:`Int` and :class:`Categorical` validate values, encode them into columns of
``[0, 1]`` and decode any column values back to valid values; :func:`param_from_dict` rebuilds one
from its JSON description. :class:`~warmbo.space.Space` composes them.

Encoding conventions
--------------------
``Float``
    One column. Linear ``(v - low) / (high - low)``, or linear in ``log(v)`` when ``log=True``.
    With ``step``, the values are the grid ``low + k * step``, ``k = 0..K``, and each grid value
    owns an equal-width bin, as an ``Int``'s integers do: ``(k + 0.5) / (K + 1)``.
``Int``
    One column. Each integer owns an equal-width bin of ``[0, 1]`` and is encoded at the bin
    centre, ``(v - low + 0.5) / (high - low + 1)``. With ``log=True`` the bins are equal in log
    space: integer ``v`` owns ``[log(v - 0.5), log(v + 0.5)]`` rescaled from
    ``[log(low - 0.5), log(high + 0.5)]`` to ``[0, 1]``, and is encoded at the centre of that
    interval. Decoding maps any ``u`` to the integer whose bin contains it. With ``step > 1`` the
    values are ``low + k * step`` and the bins are over ``k``, as for a ``Float`` with ``step``.
``Categorical``
    One-hot, one column per choice. One-hot imposes no order on the categories and puts every
    pair of categories at the same distance, which is what a stationary kernel on the unit cube
    should see; the price is ``len(choices)`` columns. Decoding takes the argmax of the block
    (first maximum on ties), so every point of the block's cube decodes to a valid category.

All errors raised for invalid input are :class:`SpaceError` (a ``ValueError``) whose message
names the parameter and the offending value.

Why this file is long: three parameter types, each with its validation, encoding, decoding and
snapping, and ``Float``/``Int`` with and without ``step`` (a grid); they share the helpers and the
error wording above, which needs them side by side.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import decimal
import math
import numbers
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "Categorical",
    "Float",
    "Int",
    "Parameter",
    "SpaceError",
    "param_from_dict",
]

FloatArray = NDArray[np.float64]
Seed = int | np.random.Generator | None

#: Relative tolerance used to match a point against the candidates of a grid space.
GRID_RTOL = 1e-9

#: Tolerance, relative to ``step``, within which a value counts as on the grid of a step parameter.
STEP_RTOL = 1e-9

_SOBOL_WARNING = r"The balance properties of Sobol' points require n to be a power of 2"


class SpaceError(ValueError):
    """Invalid search space, parameter value, point or encoded array."""


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    kind = type(value)
    if kind is float or kind is int:  # (the common case, without the ABC check: 0.6 s per 400,000 values)
        return True
    return isinstance(value, numbers.Real) and not _is_bool(value)


def _range_message(name: str, low, high) -> str:
    """The error for ``low >= high``; ``low == high`` is a constant, which the message says how to pass."""
    message = f"parameter {name!r}: low {low!r} must be < high {high!r}"
    if low == high:
        message += (
            f"; a parameter with one value is a constant: leave it out of the space and pass it to the "
            f"objective yourself, or use Categorical({name!r}, [{low!r}])"
        )
    return message


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise SpaceError(f"parameter name must be a non-empty str, got {name!r}")
    return name


def _log_hint(parameter, value: float) -> str:
    """For a value at or below 0 of a log-scale parameter (positive by definition), whether it reads
    as the logarithm of one in range: a prior CSV of log10 values was read as values, its negative
    rows left out and the rest used as they are (a user test)."""
    if not getattr(parameter, "log", False) or value > 0:
        return ""
    for base, name in ((10.0, "log10"), (math.e, "natural log")):
        if parameter.low <= base**value <= parameter.high:
            return (
                f" (a log-scale parameter's values are positive: {value!r} reads as a {name} value, "
                f"{base**value:.6g}; give the values themselves)"
            )
    return " (a log-scale parameter's values are positive)"


def _got(value: Any) -> str:
    """A refused setting and its type, one wording for every kind (``'0' of type str``)."""
    return f"{value!r} of type {type(value).__name__}"


def _check_flag(name: str, what: str, value: Any) -> bool:
    if not _is_bool(value):
        raise SpaceError(f"parameter {name!r}: {what} must be a bool, got {_got(value)}")
    return bool(value)


def _check_float_bound(name: str, what: str, value: Any) -> float:
    if not _is_real(value):
        raise SpaceError(f"parameter {name!r}: {what} must be a real number, got {_got(value)}")
    try:
        v = float(value)
    except OverflowError:
        raise SpaceError(f"parameter {name!r}: {what} {value!r} is not finite") from None
    if not math.isfinite(v):
        raise SpaceError(f"parameter {name!r}: {what} {value!r} is not finite")
    return v


def _to_int(name: str, what: str, value: Any) -> int:
    """Convert an integral real (``int``, numpy integer, integral float) to ``int``."""
    if not _is_real(value):
        raise SpaceError(f"parameter {name!r}: {what} must be an integer, got {_got(value)}")
    if isinstance(value, numbers.Integral):
        return int(value)
    try:
        f = float(value)
    except OverflowError:
        raise SpaceError(f"parameter {name!r}: {what} {value!r} is not finite") from None
    if not math.isfinite(f):
        raise SpaceError(f"parameter {name!r}: {what} {value!r} is not finite")
    if not f.is_integer():
        raise SpaceError(f"parameter {name!r}: {what} {value!r} is not an integer")
    return int(f)


def _as_unit_matrix(
    U: ArrayLike, width: int, what: str, column_names: Sequence[str] | None = None
) -> FloatArray:
    """Check an encoded ``(n, width)`` array: float64, no NaN, clipped to ``[0, 1]``."""
    try:
        A = np.asarray(U, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise SpaceError(f"{what}: encoded array cannot be converted to float64 ({exc})") from None
    if A.ndim != 2 or A.shape[1] != width:
        raise SpaceError(f"{what}: expected an encoded array of shape (n, {width}), got shape {A.shape}")
    nan = np.isnan(A)
    if nan.any():
        r, c = (int(i) for i in np.argwhere(nan)[0])
        col = f"parameter {column_names[c]!r}" if column_names is not None else f"column {c}"
        raise SpaceError(f"{what}: encoded value nan at row {r}, {col}")
    return np.clip(A, 0.0, 1.0)


#: Significant digits of the values :meth:`Space.decode` tries with ``as_written=True``: as many as a
#: value typed by a person or printed by a ``%g``-like format has.
WRITTEN_DIGITS = 10


def _lerp(a: float, b: float, u: FloatArray) -> FloatArray:
    """``a + u * (b - a)``, exact at both ends (``u = 0 -> a``, ``u = 1 -> b``)."""
    span = b - a
    return np.where(u < 0.5, a + u * span, b - (1.0 - u) * span)


def _iter_values(values: Any, name: str) -> list[Any]:
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise SpaceError(f"parameter {name!r}: expected a sequence of values, got {values!r}")
    return list(values)


def _check_count(n: Any) -> int:
    if _is_bool(n) or not isinstance(n, numbers.Integral) or int(n) < 0:
        raise SpaceError(f"number of samples must be a non-negative int, got {n!r}")
    return int(n)


def _decimals(x: float) -> int:
    """Digits after the decimal point of the shortest repr of ``x`` (0.25 -> 2, 1e-05 -> 5, 300.0 -> 0)."""
    exponent = decimal.Decimal(repr(float(x))).as_tuple().exponent
    return max(0, -int(exponent))  # type: ignore[arg-type]


def _grid_count(name: str, low: float, high: float, step: float, integer: bool) -> int:
    """``K`` of the grid ``low + k * step``, ``k = 0..K``, whose last value is ``high``; a ``high``
    off the grid is refused, naming the grid values either side of it (Optuna moves ``high`` down
    with a warning instead: a study's stored space then said another range than the one given)."""
    ratio = (high - low) / step
    k = round(ratio)
    if integer:
        on_grid = (high - low) % step == 0
    else:
        # within the float noise validate() takes for a value (so the last grid value is high)
        tol = STEP_RTOL * step + 4 * math.ulp(max(abs(low), abs(high)))
        on_grid = k >= 1 and abs(low + k * step - high) <= tol
    if on_grid:
        return int(k)
    below = math.floor(ratio + STEP_RTOL)
    digits = max(_decimals(low), _decimals(step))

    def grid(i: int) -> Any:
        return low + i * step if integer else round(low + i * step, digits)

    options = [grid(i) for i in (below, below + 1) if i >= 1]
    hint = " or ".join(f"high={v!r}" for v in options)
    raise SpaceError(
        f"parameter {name!r}: high {high!r} is not on the grid low + k * step = {low!r} + k * {step!r} "
        f"((high - low) / step = {ratio:.10g} is not a whole number); use {hint}"
    )


def _off_grid(name: str, value: Any, low: Any, step: Any, below: Any, above: Any) -> SpaceError:
    near = " and ".join(repr(v) for v in dict.fromkeys((below, above)))
    return SpaceError(
        f"parameter {name!r}: value {value!r} is not on its grid {low!r} + k * {step!r} (step {step!r}); "
        f"the nearest grid values are {near}"
    )


# ----------------------------------------------------------------------------------------------
# parameters
# ----------------------------------------------------------------------------------------------


def _check_when(name: str, when: Any) -> tuple[tuple[str, tuple[Any, ...]], ...] | None:
    """``when={"kernel": ["rbf", "poly"]}`` as ``(("kernel", ("rbf", "poly")),)``: parents sorted by
    name, each with its values (one value or a sequence of them; duplicates dropped). The values are
    checked against the parent's choices by :class:`~warmbo.space.Space`, which knows the parent."""
    if when is None:
        return None
    if isinstance(when, tuple) and all(isinstance(c, tuple) and len(c) == 2 for c in when):
        when = dict(when)  # (the stored form, given back: a dataclasses.replace)
    if not isinstance(when, Mapping) or not when:
        raise SpaceError(
            f"parameter {name!r}: when must be a non-empty dict of parent parameter to its value(s) that "
            f"make {name!r} active, e.g. when={{'kernel': ['rbf', 'poly']}}; got {when!r}"
        )
    out = []
    for parent, values in when.items():
        if not isinstance(parent, str) or not parent:
            raise SpaceError(f"parameter {name!r}: when's keys are parameter names, got {parent!r}")
        if parent == name:
            raise SpaceError(f"parameter {name!r}: when names the parameter itself")
        if isinstance(values, Mapping):
            raise SpaceError(
                f"parameter {name!r}: when[{parent!r}] must be a value or a list of values of {parent!r}, "
                f"got {values!r}"
            )
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            values = [values]
        kept: list[Any] = []
        for v in values:
            if _choice_key(v) is None:
                raise SpaceError(
                    f"parameter {name!r}: when[{parent!r}] value {v!r} of type {type(v).__name__} is not a "
                    "str, int, float or bool (a choice of the categorical parameter it names)"
                )
            if _choice_key(v) not in [_choice_key(k) for k in kept]:
                kept.append(v.item() if isinstance(v, np.generic) else v)
        if not kept:
            raise SpaceError(f"parameter {name!r}: when[{parent!r}] lists no value")
        out.append((parent, tuple(kept)))
    return tuple(sorted(out, key=lambda c: c[0]))


def _when_dict(when: tuple[tuple[str, tuple[Any, ...]], ...]) -> dict[str, Any]:
    """The stored ``when`` as written: a parent's one value alone, several as a list."""
    return {parent: values[0] if len(values) == 1 else list(values) for parent, values in when}


class Parameter:
    """Common interface of :class:`Float`, :class:`Int` and :class:`Categorical`.

    Subclasses are frozen dataclasses; every parameter has a ``name``, an encoded ``width``
    and the methods below.
    """

    name: str
    kind: ClassVar[str] = ""
    #: the parent parameters and their values that make this one active (``None``: always active);
    #: set with ``when=`` (every subclass), checked by :class:`~warmbo.space.Space`
    when: Any = None

    @property
    def width(self) -> int:
        """Number of columns of the encoding."""
        return 1

    def validate(self, value: Any) -> Any:
        """Return the canonical form of ``value`` or raise :class:`SpaceError`.

        Parameters
        ----------
        value : Any
            Candidate value.

        Returns
        -------
        Any
            Canonical value (``float``, ``int`` or the matching choice).

        Raises
        ------
        SpaceError
            On a wrong type, NaN/inf, out-of-bounds value or unknown category.
        """
        raise NotImplementedError

    def encode(self, values: Sequence[Any]) -> FloatArray:
        """Validate and encode values.

        Parameters
        ----------
        values : sequence
            ``n`` values of this parameter.

        Returns
        -------
        numpy.ndarray
            Array of shape ``(n, width)`` in ``[0, 1]``.
        """
        vals = [self.validate(v) for v in _iter_values(values, self.name)]
        return self._encode_valid(vals)

    def decode(self, U: ArrayLike) -> list[Any]:
        """Decode an encoded array (clipped to ``[0, 1]`` first).

        Parameters
        ----------
        U : array_like
            Array of shape ``(n, width)``; NaN is an error.

        Returns
        -------
        list
            ``n`` canonical values.
        """
        return self._decode_clipped(_as_unit_matrix(U, self.width, f"parameter {self.name!r}"))

    def text(self, value: Any) -> str:
        """Compact text of a value of this parameter, as tables show it (``str(value)``)."""
        return str(value)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable description; inverse of :func:`param_from_dict`. A ``step`` at its
        default (None for a ``Float``, 1 for an ``Int``) is left out."""
        d: dict[str, Any] = {"type": self.kind}
        skip = self._defaults()
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if f.name in skip and v == skip[f.name]:
                continue
            if f.name == "when":
                d["when"] = _when_dict(v)
                continue
            d[f.name] = list(v) if isinstance(v, tuple) else v
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Parameter:
        """Rebuild a parameter from :meth:`to_dict` output (see :func:`param_from_dict`)."""
        p = param_from_dict(d)
        if not isinstance(p, cls):
            raise SpaceError(f"parameter {p.name!r}: type {p.kind!r} is not a {cls.__name__}")
        return p

    # -- internals: operate on already valid values / clipped arrays -------------------------
    def _encode_valid(self, values: Sequence[Any]) -> FloatArray:
        raise NotImplementedError

    def _decode_clipped(self, U: FloatArray) -> list[Any]:
        raise NotImplementedError

    def _snap_clipped(self, U: FloatArray) -> FloatArray:
        return self._encode_valid(self._decode_clipped(U))

    def _from_uniform(self, u: FloatArray) -> list[Any]:
        """Map one uniform in ``[0, 1)`` per row to a value (used for sampling)."""
        return self._decode_clipped(u.reshape(-1, 1))

    def _field_equal(self, other: Parameter, name: str) -> bool:
        return getattr(self, name) == getattr(other, name)

    def _size(self) -> float:
        """Number of distinct values (``math.inf`` for a continuous parameter)."""
        return math.inf

    @property
    def _discrete(self) -> bool:
        """True for a parameter with finitely many values (an ``Int``, a ``Categorical``, a ``Float``
        with ``step``): the acquisition search moves it by whole values (one-exchange neighbours)."""
        return math.isfinite(self._size())

    def _defaults(self) -> dict[str, Any]:
        """Fields left out of :meth:`to_dict` and ``repr`` at these values (``step``: a study stored
        before steps existed has the same description, and older versions read a new one)."""
        return {}

    def __repr__(self) -> str:
        """The call that builds this parameter, with only the arguments not at their defaults:
        ``wb.Float('x', 0.0, 1.0)``, ``wb.Float('lr', 1e-05, 0.1, log=True)``, ``wb.Int('units', 16,
        128, step=16)``, ``wb.Categorical('act', ['relu', 'gelu'])``: Python that rebuilds it with
        ``import warmbo as wb``. (Before, every field: ``Float(name='x', low=0.0, high=1.0,
        log=False)``.)"""
        skip = self._defaults()
        parts = []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name in skip and value == skip[f.name]:
                continue
            if f.default is not dataclasses.MISSING and value == f.default and type(value) is type(f.default):
                continue
            if f.name == "when":
                text = repr(_when_dict(value))
            else:
                text = repr(list(value)) if isinstance(value, tuple) else repr(value)
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            parts.append(text if required and not f.kw_only else f"{f.name}={text}")
        return f"wb.{type(self).__name__}({', '.join(parts)})"


@dataclass(frozen=True, repr=False)
class Float(Parameter):
    """Continuous parameter on ``[low, high]``, or the grid ``low, low + step, ..., high``.

    Parameters
    ----------
    name : str
        Non-empty parameter name.
    low, high : float
        Finite bounds with ``low < high``.
    log : bool, default False
        Encode linearly in ``log(v)``; requires ``low > 0``.
    step : float, optional (keyword only)
        The values are ``low + k * step`` for ``k = 0..K`` (a temperature set in steps of 5
        degrees, Optuna's ``suggest_float(..., step=0.1)``); ``high - low`` must be a whole number
        of steps (``high`` off the grid is refused, naming the grid values either side of it), and
        ``log=True`` is refused. Values are returned rounded to the decimals of ``low`` and
        ``step`` (``0.3``, not ``0.30000000000000004``); a value off the grid by more than
        ``1e-9 * step`` is refused (naming the nearest grid values). Encoded as an ``Int`` over
        ``k``: a space of step parameters, integers and categoricals is finite.
    """

    name: str
    low: float
    high: float
    log: bool = False
    step: float | None = field(default=None, kw_only=True)
    when: Mapping[str, Any] | None = field(default=None, kw_only=True)

    kind: ClassVar[str] = "float"

    def __post_init__(self) -> None:
        name = _check_name(self.name)
        low = _check_float_bound(name, "low", self.low)
        high = _check_float_bound(name, "high", self.high)
        if not low < high:
            raise SpaceError(_range_message(name, low, high))
        if not math.isfinite(high - low):
            raise SpaceError(f"parameter {name!r}: range high - low = {high - low!r} is not finite")
        log = _check_flag(name, "log", self.log)
        if log and low <= 0:
            raise SpaceError(f"parameter {name!r}: log=True requires low > 0, got low={low!r}")
        step = self.step
        if step is not None:
            step = _check_float_bound(name, "step", step)
            if step <= 0:
                raise SpaceError(f"parameter {name!r}: step must be > 0, got {self.step!r}")
            if log:
                raise SpaceError(
                    f"parameter {name!r}: step and log=True cannot be combined (a log scale has no "
                    "constant step); give either, or list the values with Categorical"
                )
            object.__setattr__(self, "_count", _grid_count(name, low, high, step, integer=False))
            object.__setattr__(self, "_digits", max(_decimals(low), _decimals(step)))
            object.__setattr__(self, "_tolerance", STEP_RTOL * step + 4 * math.ulp(max(abs(low), abs(high))))
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "log", log)
        object.__setattr__(self, "step", step)
        object.__setattr__(self, "when", _check_when(name, self.when))

    def _defaults(self) -> dict[str, Any]:
        return {"step": None, "when": None}

    def _size(self) -> float:
        return math.inf if self.step is None else float(self._count + 1)  # type: ignore[attr-defined]

    def _grid_value(self, k: int) -> float:
        """The grid value ``low + k * step``, rounded to the decimals of ``low`` and ``step``."""
        v = round(self.low + k * self.step, self._digits)  # type: ignore[attr-defined,operator]
        return min(max(v, self.low), self.high)

    def _grid_index(self, v: float) -> int:
        """Index ``k`` of the grid value nearest to ``v`` (in ``[low, high]``)."""
        k = int(round((v - self.low) / self.step))  # type: ignore[operator]
        return min(max(k, 0), self._count)  # type: ignore[attr-defined]

    def validate(self, value: Any) -> float:
        if not _is_real(value):
            raise SpaceError(
                f"parameter {self.name!r}: expected a real number, got {value!r} "
                f"of type {type(value).__name__}"
            )
        try:
            v = float(value)
        except OverflowError:
            raise SpaceError(f"parameter {self.name!r}: value {value!r} is not finite") from None
        if not math.isfinite(v):
            raise SpaceError(f"parameter {self.name!r}: value {value!r} is not finite")
        # a step value is taken within float noise of the grid (1e-9 of a step, or a few ulps of a
        # value far from zero): 0.1 + 1.1 = 1.2000000000000002 is the grid value 1.2, the bound too
        tol = 0.0 if self.step is None else self._tolerance  # type: ignore[attr-defined]
        if tol and isinstance(value, np.floating) and np.finfo(value.dtype).eps > 1e-15:
            # a float32 (float16) value is the grid value to its own precision: np.float32(0.7) is
            # 0.699999988 as a float64, refused as off the grid with "nearest 0.6 and 0.7" (a user
            # test's float32 line log)
            tol = max(tol, 4.0 * float(np.finfo(value.dtype).eps) * max(abs(v), abs(self.step)))
        if not self.low - tol <= v <= self.high + tol:
            hint = _log_hint(self, v)
            raise SpaceError(
                f"parameter {self.name!r}: value {v!r} is outside [{self.low!r}, {self.high!r}]{hint}"
            )
        if self.step is None:
            return v
        k = self._grid_index(v)
        g = self._grid_value(k)
        if abs(v - g) <= tol:
            return g
        below = k if g < v else k - 1
        raise _off_grid(
            self.name, value, self.low, self.step, self._grid_value(below), self._grid_value(below + 1)
        )

    def _encode_valid(self, values: Sequence[Any]) -> FloatArray:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
        if self.step is not None:
            k = np.clip(np.round((v - self.low) / self.step), 0, self._count)  # type: ignore[attr-defined]
            return ((k + 0.5) / float(self._count + 1)).reshape(-1, 1)  # type: ignore[attr-defined]
        if self.log:
            lo, hi = math.log(self.low), math.log(self.high)
            u = (np.log(v) - lo) / (hi - lo)
        else:
            u = (v - self.low) / (self.high - self.low)
        return np.clip(u, 0.0, 1.0).reshape(-1, 1)

    def _grid_k(self, U: FloatArray) -> FloatArray:
        n = self._count + 1  # type: ignore[attr-defined]
        return np.clip(np.floor(U[:, 0] * n), 0, n - 1)

    def _decode_clipped(self, U: FloatArray) -> list[float]:
        if self.step is not None:
            return [self._grid_value(int(k)) for k in self._grid_k(U)]
        u = U[:, 0]
        if self.log:
            v = np.exp(_lerp(math.log(self.low), math.log(self.high), u))
            # exp(log(low)) need not be low (1e-4 came back as 1.0000000000000009e-4): the cube's ends
            # are the bounds themselves, as they are on the linear scale
            v = np.where(u <= 0.0, self.low, np.where(u >= 1.0, self.high, v))
        else:
            v = _lerp(self.low, self.high, u)
        return [float(x) for x in np.clip(v, self.low, self.high)]

    def _decode_written(self, U: FloatArray) -> list[float]:
        """:meth:`_decode_clipped`, each value replaced by its rounding to :data:`WRITTEN_DIGITS`
        significant digits where that rounding encodes to the same coordinate bit for bit: the value
        a point was encoded from comes back as written (``lr = 0.001``, not the
        ``0.0010000000000000002`` that ``log`` and ``exp`` leave)."""
        decoded = self._decode_clipped(U)
        if self.step is not None:
            return decoded  # (grid values are rounded already)
        v = np.asarray(decoded, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            exponent = np.floor(np.log10(np.abs(v)))
            k = WRITTEN_DIGITS - 1 - np.where(np.isfinite(exponent), exponent, 0.0)  # decimals kept
            up, down = 10.0 ** np.maximum(k, 0.0), 10.0 ** np.maximum(-k, 0.0)
            short = np.clip(np.round(v * up / down) * down / up, self.low, self.high)
            same = (self._encode_valid(short)[:, 0] == U[:, 0]) & np.isfinite(short)
        return [float(x) for x in np.where(same, short, v)]

    def _snap_clipped(self, U: FloatArray) -> FloatArray:
        if self.step is not None:  # to the centre of the grid value's bin
            return ((self._grid_k(U) + 0.5) / float(self._count + 1)).reshape(-1, 1)  # type: ignore[attr-defined]
        return np.array(U, dtype=np.float64)

    def text(self, value: Any) -> str:
        """``value`` to 6 significant digits, more when the range is narrow next to its magnitude
        (12 on ``[2.4e9, 2.4e9 + 1000]``, where 6 digits show every value as ``2.4e+09``): a table
        tells apart values about 1e-5 of the range apart, whatever the offset."""
        if not isinstance(value, float):
            return str(value)
        if self.step is not None:  # enough digits to tell neighbouring grid values apart
            ratio = max(abs(self.low), abs(self.high)) / self.step
            digits = max(6, math.floor(math.log10(ratio)) + 2) if ratio >= 1 else 6
            return f"{value:.{min(17, digits)}g}"
        ratio = max(abs(self.low), abs(self.high)) / (self.high - self.low)
        extra = math.floor(math.log10(ratio)) if ratio >= 10 else 0
        return f"{value:.{min(17, 6 + extra)}g}"


@dataclass(frozen=True, repr=False)
class Int(Parameter):
    """Integer parameter on ``[low, high]`` (inclusive).

    Each integer owns an equal-width bin of ``[0, 1]`` and is encoded at its centre,
    ``(v - low + 0.5) / (high - low + 1)``; ``u`` decodes to ``low + floor(u * (high - low + 1))``
    clipped to ``[low, high]``. With ``log=True`` (requires ``low >= 1``) the bins are equal in log
    space: ``v`` owns ``[log(v - 0.5), log(v + 0.5)]`` rescaled from
    ``[log(low - 0.5), log(high + 0.5)]``, is encoded at the centre of that interval and ``u``
    decodes to ``floor(exp(t) + 0.5)`` with ``t`` the un-rescaled log coordinate.

    Parameters
    ----------
    name : str
        Non-empty parameter name.
    low, high : int
        Integral bounds with ``low < high``.
    log : bool, default False
        Use log-spaced bins; requires ``low > 0``.
    step : int, default 1 (keyword only)
        The values are ``low + k * step`` for ``k = 0..K`` (Optuna's ``suggest_int(..., step=16)``),
        each with an equal-width bin over ``k``; ``high - low`` must be a multiple of ``step``
        (otherwise refused, naming the grid values either side of ``high``), a value off the grid is
        refused, and ``step > 1`` with ``log=True`` is refused.
    """

    name: str
    low: int
    high: int
    log: bool = False
    step: int = field(default=1, kw_only=True)
    when: Mapping[str, Any] | None = field(default=None, kw_only=True)

    kind: ClassVar[str] = "int"

    def __post_init__(self) -> None:
        name = _check_name(self.name)
        low = _to_int(name, "low", self.low)
        high = _to_int(name, "high", self.high)
        if not low < high:
            raise SpaceError(_range_message(name, low, high))
        log = _check_flag(name, "log", self.log)
        if log and low <= 0:
            raise SpaceError(f"parameter {name!r}: log=True requires low > 0, got low={low!r}")
        step = _to_int(name, "step", self.step)
        if step < 1:
            raise SpaceError(f"parameter {name!r}: step must be >= 1, got {self.step!r}")
        if step > 1:
            if log:
                raise SpaceError(
                    f"parameter {name!r}: step > 1 and log=True cannot be combined (a log scale has no "
                    "constant step); give either, or list the values with Categorical"
                )
            _grid_count(name, low, high, step, integer=True)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "log", log)
        object.__setattr__(self, "step", step)
        object.__setattr__(self, "when", _check_when(name, self.when))

    def _defaults(self) -> dict[str, Any]:
        return {"step": 1, "when": None}

    @property
    def _n(self) -> int:
        """Number of values (``K + 1``)."""
        return (self.high - self.low) // self.step + 1

    def _size(self) -> float:
        return float(self._n)

    def _log_edges(self) -> tuple[float, float]:
        return math.log(self.low - 0.5), math.log(self.high + 0.5)

    def validate(self, value: Any) -> int:
        v = _to_int(self.name, "value", value)
        if not self.low <= v <= self.high:
            hint = _log_hint(self, v)
            raise SpaceError(
                f"parameter {self.name!r}: value {value!r} is outside [{self.low}, {self.high}]{hint}"
            )
        if (v - self.low) % self.step:
            below = self.low + (v - self.low) // self.step * self.step
            raise _off_grid(self.name, value, self.low, self.step, below, below + self.step)
        return v

    def _encode_valid(self, values: Sequence[Any]) -> FloatArray:
        if self.log:
            v = np.asarray([float(x) for x in values], dtype=np.float64)
            a, b = self._log_edges()
            centre = 0.5 * (np.log(v - 0.5) + np.log(v + 0.5))
            u = (centre - a) / (b - a)
        elif self.step == 1:
            k = np.asarray([float(x - self.low) for x in values], dtype=np.float64)
            u = (k + 0.5) / float(self._n)
        else:
            k = np.asarray([float((x - self.low) // self.step) for x in values], dtype=np.float64)
            u = (k + 0.5) / float(self._n)
        return np.clip(u, 0.0, 1.0).reshape(-1, 1)

    def _decode_clipped(self, U: FloatArray) -> list[int]:
        u = U[:, 0]
        if self.log:
            a, b = self._log_edges()
            v = np.floor(np.exp(_lerp(a, b, u)) + 0.5)
            v = np.clip(v, self.low, self.high)
            return [int(x) for x in v]
        k = np.clip(np.floor(u * self._n), 0, self._n - 1)
        return [self.low + int(x) * self.step for x in k]


def _choice_key(value: Any) -> tuple[str, Any] | None:
    """Type-aware identity of a category: bools, numbers and strings never collide."""
    if _is_bool(value):
        return ("bool", bool(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        return ("num", value.item() if isinstance(value, np.generic) else value)
    if isinstance(value, str):
        return ("str", str(value))
    return None


#: set while a study's stored space is rebuilt (:func:`stored_space`): what a new space refuses and an
#: earlier version accepted is then warned about, so that the study opens
_STORED: contextvars.ContextVar[bool] = contextvars.ContextVar("warmbo_stored_space", default=False)


@contextlib.contextmanager
def stored_space():
    """Rebuild a study's stored space in this block: choices written alike (``"1"`` and ``1``),
    refused in a new space since session 50, are warned about instead (the review: a study stored
    before could no longer be opened, not even to export it)."""
    token = _STORED.set(True)
    try:
        yield
    finally:
        _STORED.reset(token)


@dataclass(frozen=True, eq=False, repr=False)
class Categorical(Parameter):
    """Unordered parameter taking one of ``choices``, encoded one-hot.

    Parameters
    ----------
    name : str
        Non-empty parameter name.
    choices : sequence of str, int, float or bool
        Non-empty, distinct, finite choices. Bools, numbers and strings are distinct kinds
        (``True`` and ``1`` are different choices; ``1`` and ``1.0`` are the same), but two choices
        written alike (``"1"`` and ``1``, ``"True"`` and ``True``) are refused: a table, a CSV
        file or a typed value could not tell them apart. Numpy scalars are converted to Python
        scalars.

    Notes
    -----
    One-hot encoding (``width = len(choices)``) imposes no order on the categories and keeps all
    pairs of categories equidistant. Decoding takes the argmax of the block.
    """

    name: str
    choices: Sequence[Any]  # stored as a tuple (__post_init__); any sequence is accepted
    when: Mapping[str, Any] | None = field(default=None, kw_only=True)

    kind: ClassVar[str] = "categorical"

    def __post_init__(self) -> None:
        name = _check_name(self.name)
        raw = self.choices
        if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
            raise SpaceError(
                f"parameter {name!r}: choices must be a sequence such as ['relu', 'tanh'], got {_got(raw)}"
            )
        choices: list[Any] = []
        index: dict[tuple[str, Any], int] = {}
        for c in raw:
            key = _choice_key(c)
            if key is None:
                # the choices scikit-learn users reach for first (class_weight=None, max_features=None,
                # hidden_layer_sizes=(64, 64)) are refused: the message says how to pass them
                label, given = str(c), f"params[{name!r}]"
                raise SpaceError(
                    f"parameter {name!r}: choice {c!r} of type {type(c).__name__} is not a str, int, "
                    f"float or bool; name it with a str instead (e.g. {label!r}) and turn the name back "
                    f"into the value in the objective ({c!r} if {given} == {label!r} else {given})"
                )
            value = key[1]
            if isinstance(value, float) and not math.isfinite(value):
                raise SpaceError(f"parameter {name!r}: choice {c!r} is not finite")
            if key in index:
                raise SpaceError(f"parameter {name!r}: duplicate choice {c!r}")
            same = next((other for other in choices if str(other) == str(value)), None)
            if same is not None and _STORED.get():
                # (a study stored before they were refused still opens: exporting it is the way out)
                warnings.warn(
                    f"parameter {name!r}: choices {same!r} and {value!r} are written alike "
                    f"({str(value)!r}): tables, exports and typed values cannot tell them apart",
                    UserWarning,
                    stacklevel=2,
                )
            elif same is not None:
                # (a user test: ["1", 1] printed as 1, 1 in suggest and status, exported both as 1,
                # and a re-import stored the int's trial as "1" without a word)
                raise SpaceError(
                    f"parameter {name!r}: choices {same!r} and {value!r} are written alike ({str(value)!r}) "
                    "in tables, CSV files and on the command line, so an exported or typed value could not "
                    f"tell them apart; name one otherwise (e.g. {str(value) + '_' + type(value).__name__!r})"
                )
            index[key] = len(choices)
            choices.append(value)
        if not choices:
            raise SpaceError(f"parameter {name!r}: choices must be non-empty")
        object.__setattr__(self, "choices", tuple(choices))
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "when", _check_when(name, self.when))

    def _defaults(self) -> dict[str, Any]:
        return {"when": None}

    @property
    def width(self) -> int:
        return len(self.choices)

    def _size(self) -> float:
        return float(len(self.choices))

    def _keys(self) -> tuple[tuple[str, Any], ...]:
        return tuple(_choice_key(c) for c in self.choices)  # type: ignore[misc]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Categorical):
            return NotImplemented
        return self.name == other.name and self._keys() == other._keys() and self.when == other.when

    def __hash__(self) -> int:
        return hash((Categorical, self.name, self._keys(), self.when))

    def _field_equal(self, other: Parameter, name: str) -> bool:
        if name == "choices" and isinstance(other, Categorical):
            return self._keys() == other._keys()
        return super()._field_equal(other, name)

    def index(self, value: Any) -> int:
        """Position of ``value`` in ``choices`` (after validation)."""
        key = _choice_key(value)
        if key is None:
            raise SpaceError(
                f"parameter {self.name!r}: value {value!r} of type {type(value).__name__} "
                "is not a str, int, float or bool"
            )
        if isinstance(key[1], float) and not math.isfinite(key[1]):
            raise SpaceError(f"parameter {self.name!r}: value {value!r} is not finite")
        i = self._index.get(key)  # type: ignore[attr-defined]
        if i is None:
            # a choice that differs in case or surrounding spaces only ('Adam' for 'adam'): named
            near = [
                c for c in self.choices if isinstance(c, str) and isinstance(value, str)
                and c.strip().casefold() == value.strip().casefold()
            ]  # fmt: skip
            hint = f" (did you mean {near[0]!r}? choices match exactly, case too)" if near else ""
            raise SpaceError(
                f"parameter {self.name!r}: unknown category {value!r}; choices are {self.choices!r}{hint}"
            )
        return i

    def validate(self, value: Any) -> Any:
        return self.choices[self.index(value)]

    def _encode_valid(self, values: Sequence[Any]) -> FloatArray:
        idx = np.asarray([self.index(v) for v in values], dtype=np.intp)
        out = np.zeros((idx.size, self.width), dtype=np.float64)
        out[np.arange(idx.size), idx] = 1.0
        return out

    def _decode_clipped(self, U: FloatArray) -> list[Any]:
        return [self.choices[int(i)] for i in np.argmax(U, axis=1)]

    def _from_uniform(self, u: FloatArray) -> list[Any]:
        k = self.width
        idx = np.clip(np.floor(u * k), 0, k - 1)
        return [self.choices[int(i)] for i in idx]


_PARAM_TYPES: dict[str, type[Parameter]] = {"float": Float, "int": Int, "categorical": Categorical}


def param_from_dict(d: Mapping[str, Any]) -> Parameter:
    """Rebuild a parameter from the output of its ``to_dict``.

    Parameters
    ----------
    d : Mapping
        ``{"type": "float" | "int" | "categorical", "name": ..., ...}``.

    Returns
    -------
    Parameter
        The reconstructed parameter.

    Raises
    ------
    SpaceError
        On an unknown type, unknown or missing keys, or invalid values.
    """
    if not isinstance(d, Mapping):
        raise SpaceError(f"parameter description must be a mapping, got {d!r}")
    name = d.get("name")
    kind = d.get("type")
    cls = _PARAM_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise SpaceError(f"parameter {name!r}: unknown type {kind!r}; expected one of {sorted(_PARAM_TYPES)}")
    kwargs = {k: v for k, v in d.items() if k != "type"}
    allowed = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(kwargs) - allowed, key=str)
    if unknown:
        keys = ", ".join(["type", *(f.name for f in dataclasses.fields(cls))])  # type: ignore[arg-type]
        raise SpaceError(
            f"parameter {name!r}: unknown key(s) {unknown!r} for type {kind!r}; its keys are {keys} "
            "(notes such as units belong in the name, e.g. 'temp_C')"
        )
    missing = sorted(
        f.name
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if f.name not in kwargs and f.default is dataclasses.MISSING
    )
    if missing:
        raise SpaceError(f"parameter {name!r}: missing key(s) {missing!r} for type {kind!r}")
    return cls(**kwargs)
