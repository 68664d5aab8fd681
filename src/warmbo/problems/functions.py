"""Closed-form benchmark objectives with known global optima.

This module owns :class:`TestFunction` (an immutable, vectorised objective carrying its domain, its
global optimum value and *all* of its global optimisers), the factories of the standard test
functions, and the name registry :data:`FUNCTIONS` / :func:`get`.

Definitions, domains and optima follow the Virtual Library of Simulation Experiments
(S. Surjanovic & D. Bingham, https://www.sfu.ca/~ssurjano/optimization.html), in their standard
*minimisation* form. The 2-D functions Holder table, Himmelblau, Ackley, Styblinski-Tang, Eggholder,
Rastrigin, Levy N.13 and Easom are the ones used by Shilton et al. for weight-prior tuning.

The optimiser coordinates and optimum values were not copied from the (rounded) literature values:
each stated minimiser was refined by Newton's method on the first-order conditions in extended
(80-bit) precision, and the values below are the float64 roundings of the refined results. They
agree with the literature to all digits published there; where the literature rounds (Holder
table, Eggholder, Hartmann-6, Branin's third minimiser) the refined value is used.

The optimiser core of ``warmbo`` *maximises*; use :meth:`TestFunction.maximize_form` (or
:meth:`TestFunction.negate`) to obtain the objective in that convention.

Why this file is long: a catalogue of standard test functions, each a few lines with its domain, optimum
and citation.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._validation import check_int

__all__ = [
    "FUNCTIONS",
    "TestFunction",
    "ackley",
    "branin",
    "easom",
    "eggholder",
    "get",
    "griewank",
    "hartmann3",
    "hartmann6",
    "himmelblau",
    "holder_table",
    "levy",
    "levy13",
    "rastrigin",
    "rosenbrock",
    "styblinski_tang",
]

_SENSES = ("min", "max")


def _as_points(X: object, d: int, arg: str = "X") -> tuple[np.ndarray, bool]:
    """Validate ``X`` as points in ``R^d``; return an ``(n, d)`` float64 array and a 1-D flag."""
    try:
        A = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{arg}: could not convert to a float64 array ({exc})") from exc
    if A.ndim == 1:
        if A.shape[0] != d:
            raise ValueError(f"{arg}: expected shape ({d},) or (n, {d}), got shape {A.shape}")
        A, single = A[None, :], True
    elif A.ndim == 2:
        if A.shape[1] != d:
            raise ValueError(f"{arg}: expected shape (n, {d}) or ({d},), got shape {A.shape}")
        single = False
    else:
        raise ValueError(f"{arg}: expected a 1-D or 2-D array with d={d} columns, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{arg}: all entries must be finite (got NaN or inf)")
    return A, single


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True)
    a.setflags(write=False)
    return a


def _negated(fn: Callable[[np.ndarray], np.ndarray], X: np.ndarray) -> np.ndarray:
    return -fn(X)


def _rescaled(
    fn: Callable[[np.ndarray], np.ndarray], lower: np.ndarray, width: np.ndarray, U: np.ndarray
) -> np.ndarray:
    return fn(lower + U * width)


@dataclass(frozen=True, eq=False)
class TestFunction:
    r"""An immutable, vectorised test objective with a known global optimum.

    Parameters
    ----------
    name : str
        Identifier of the function (e.g. ``"branin"``; negated versions are ``"neg-branin"``).
    bounds : np.ndarray, shape (d, 2)
        Box domain, row ``j`` is ``[lower_j, upper_j]`` with ``lower_j < upper_j``.
    optimum_value : float
        Global optimum over ``bounds``: the minimum if ``sense == "min"``, the maximum if ``"max"``.
    optimizers : np.ndarray, shape (k, d)
        All known global optimisers (each lies in ``bounds``).
    sense : {"min", "max"}
        Whether ``optimum_value`` is a minimum or a maximum.
    _fn : callable
        Private vectorised implementation mapping an ``(n, d)`` float64 array to ``(n,)`` values.
        It receives validated input only; use ``__call__``.

    Notes
    -----
    Instances are frozen and their arrays are read-only; all transformations (:meth:`negate`,
    :meth:`unit`, :meth:`maximize_form`) return new objects. Equality is identity.
    Points outside ``bounds`` can be evaluated (every function here is defined on ``R^d``);
    use :meth:`in_bounds` to check membership.
    """

    __test__: ClassVar[bool] = False  # keep pytest from collecting this class in test modules

    name: str
    bounds: np.ndarray
    optimum_value: float
    optimizers: np.ndarray
    sense: str
    _fn: Callable[[np.ndarray], np.ndarray] = field(repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name: must be a non-empty str, got {self.name!r}")
        bounds = np.asarray(self.bounds, dtype=np.float64)
        if bounds.ndim != 2 or bounds.shape[1] != 2 or bounds.shape[0] < 1:
            raise ValueError(f"bounds: expected shape (d, 2) with d >= 1, got shape {bounds.shape}")
        if not np.all(np.isfinite(bounds)) or not np.all(bounds[:, 0] < bounds[:, 1]):
            raise ValueError("bounds: must be finite with lower < upper in every row")
        d = bounds.shape[0]
        optimizers = np.asarray(self.optimizers, dtype=np.float64)
        if optimizers.ndim == 1:
            optimizers = optimizers[None, :]
        if optimizers.ndim != 2 or optimizers.shape[1] != d or optimizers.shape[0] < 1:
            raise ValueError(f"optimizers: expected shape (k, {d}) with k >= 1, got shape {optimizers.shape}")
        if not np.all(np.isfinite(optimizers)):
            raise ValueError("optimizers: all entries must be finite")
        if not np.all((optimizers >= bounds[:, 0]) & (optimizers <= bounds[:, 1])):
            raise ValueError("optimizers: every optimiser must lie within bounds")
        try:
            optimum_value = float(self.optimum_value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"optimum_value: must be a real number, got {self.optimum_value!r}") from exc
        if not math.isfinite(optimum_value):
            raise ValueError(f"optimum_value: must be finite, got {optimum_value}")
        if self.sense not in _SENSES:
            raise ValueError(f"sense: must be 'min' or 'max', got {self.sense!r}")
        if not callable(self._fn):
            raise ValueError("_fn: must be callable")
        object.__setattr__(self, "bounds", _readonly(bounds))
        object.__setattr__(self, "optimizers", _readonly(optimizers))
        object.__setattr__(self, "optimum_value", optimum_value)

    @property
    def dim(self) -> int:
        """Input dimension ``d``."""
        return int(self.bounds.shape[0])

    @property
    def lower(self) -> np.ndarray:
        """Lower bounds, shape ``(d,)``."""
        return self.bounds[:, 0]

    @property
    def upper(self) -> np.ndarray:
        """Upper bounds, shape ``(d,)``."""
        return self.bounds[:, 1]

    def __call__(self, X: np.ndarray) -> np.ndarray | float:
        """Evaluate the function.

        Parameters
        ----------
        X : array_like, shape (n, d) or (d,)
            Finite input points. (For ``d == 1`` pass a batch as shape ``(n, 1)``.)

        Returns
        -------
        np.ndarray of shape (n,), or float
            Function values; a Python ``float`` for 1-D input.

        Raises
        ------
        ValueError
            If ``X`` has the wrong shape (the message states the expected ``d``) or is not finite.
        """
        A, single = _as_points(X, self.dim)
        y = np.asarray(self._fn(A), dtype=np.float64).reshape(A.shape[0])
        return float(y[0]) if single else y

    def in_bounds(self, X: np.ndarray, atol: float = 0.0) -> np.ndarray | bool:
        """Whether points lie in the (closed) box ``lower - atol <= x <= upper + atol``.

        Parameters
        ----------
        X : array_like, shape (n, d) or (d,)
            Finite points.
        atol : float, default 0.0
            Non-negative slack added to each side of the box.

        Returns
        -------
        np.ndarray of bool, shape (n,), or bool
            Membership per point; a Python ``bool`` for 1-D input.
        """
        if not (isinstance(atol, (int, float)) and math.isfinite(atol) and atol >= 0):
            raise ValueError(f"atol: must be a finite non-negative number, got {atol!r}")
        A, single = _as_points(X, self.dim)
        inside = np.all((A >= self.lower - atol) & (A <= self.upper + atol), axis=1)
        return bool(inside[0]) if single else inside

    def to_unit(self, X: np.ndarray) -> np.ndarray:
        r"""Map points from ``bounds`` to the unit cube: :math:`u = (x - l) / (h - l)`.

        Parameters
        ----------
        X : array_like, shape (n, d) or (d,)
            Finite points in the original coordinates.

        Returns
        -------
        np.ndarray
            Points in unit-cube coordinates, same shape as ``X``.
        """
        A, single = _as_points(X, self.dim)
        U = (A - self.lower) / (self.upper - self.lower)
        return U[0] if single else U

    def from_unit(self, U: np.ndarray) -> np.ndarray:
        r"""Map points from the unit cube to ``bounds``: :math:`x = l + u (h - l)`.

        Parameters
        ----------
        U : array_like, shape (n, d) or (d,)
            Finite points in unit-cube coordinates.

        Returns
        -------
        np.ndarray
            Points in the original coordinates, same shape as ``U``.
        """
        A, single = _as_points(U, self.dim, arg="U")
        X = self.lower + A * (self.upper - self.lower)
        return X[0] if single else X

    def unit(self) -> TestFunction:
        r"""The same function reparametrised on :math:`[0, 1]^d`: :math:`g(u) = f(l + u (h - l))`.

        Returns
        -------
        TestFunction
            Named ``"unit-" + name`` with bounds ``[0, 1]^d``, the same ``optimum_value`` and
            ``sense``, and optimisers mapped by :meth:`to_unit`. Returns ``self`` if the bounds
            already are the unit cube.
        """
        if np.all(self.lower == 0.0) and np.all(self.upper == 1.0):
            return self
        width = self.upper - self.lower
        return TestFunction(
            name="unit-" + self.name,
            bounds=np.tile([0.0, 1.0], (self.dim, 1)),
            optimum_value=self.optimum_value,
            optimizers=np.clip(self.to_unit(self.optimizers), 0.0, 1.0),
            sense=self.sense,
            _fn=functools.partial(_rescaled, self._fn, self.lower.copy(), width),
        )

    def negate(self) -> TestFunction:
        r"""The negated function :math:`g(x) = -f(x)`.

        Returns
        -------
        TestFunction
            Named ``"neg-" + name``, with the same bounds and optimisers, ``optimum_value``
            negated and ``sense`` flipped (a minimum of ``f`` is a maximum of ``-f``).

        Notes
        -----
        The "flipped" test functions of reference 004, used there as auxiliary (source-task)
        data, are exactly these negated functions; :meth:`flip` is an alias.
        """
        return TestFunction(
            name="neg-" + self.name,
            bounds=self.bounds,
            optimum_value=-self.optimum_value,
            optimizers=self.optimizers,
            sense="max" if self.sense == "min" else "min",
            _fn=functools.partial(_negated, self._fn),
        )

    flip = negate

    def maximize_form(self) -> TestFunction:
        """The version of this function to be maximised (the convention of the optimiser core).

        Returns
        -------
        TestFunction
            ``self.negate()`` if ``sense == "min"``, else ``self``.
        """
        return self.negate() if self.sense == "min" else self


# ---------------------------------------------------------------------------------------------------
# Vectorised implementations: X has shape (n, d), validated; return shape (n,).
# ---------------------------------------------------------------------------------------------------


def _branin(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    b, c, t = 5.1 / (4.0 * np.pi**2), 5.0 / np.pi, 1.0 / (8.0 * np.pi)
    return (x2 - b * x1**2 + c * x1 - 6.0) ** 2 + 10.0 * (1.0 - t) * np.cos(x1) + 10.0


_H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
_H6_P = 1e-4 * np.array(
    [
        [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
        [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
        [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
        [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
    ]
)
for _a in (_H6_ALPHA, _H6_A, _H6_P):
    _a.setflags(write=False)


def _hartmann6(X: np.ndarray) -> np.ndarray:
    inner = np.einsum("ij,nij->ni", _H6_A, (X[:, None, :] - _H6_P[None, :, :]) ** 2)
    return -np.exp(-inner) @ _H6_ALPHA


def _holder_table(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    return -np.abs(np.sin(x1) * np.cos(x2) * np.exp(np.abs(1.0 - np.sqrt(x1**2 + x2**2) / np.pi)))


def _himmelblau(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    return (x1**2 + x2 - 11.0) ** 2 + (x1 + x2**2 - 7.0) ** 2


def _ackley(X: np.ndarray) -> np.ndarray:
    a, b, c = 20.0, 0.2, 2.0 * np.pi
    term1 = -a * np.exp(-b * np.sqrt(np.mean(X**2, axis=1)))
    term2 = -np.exp(np.mean(np.cos(c * X), axis=1))
    return term1 + term2 + a + np.e


def _styblinski_tang(X: np.ndarray) -> np.ndarray:
    return 0.5 * np.sum(X**4 - 16.0 * X**2 + 5.0 * X, axis=1)


def _eggholder(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    return -(x2 + 47.0) * np.sin(np.sqrt(np.abs(x2 + x1 / 2.0 + 47.0))) - x1 * np.sin(
        np.sqrt(np.abs(x1 - (x2 + 47.0)))
    )


def _rastrigin(X: np.ndarray) -> np.ndarray:
    return 10.0 * X.shape[1] + np.sum(X**2 - 10.0 * np.cos(2.0 * np.pi * X), axis=1)


def _levy13(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    return (
        np.sin(3.0 * np.pi * x1) ** 2
        + (x1 - 1.0) ** 2 * (1.0 + np.sin(3.0 * np.pi * x2) ** 2)
        + (x2 - 1.0) ** 2 * (1.0 + np.sin(2.0 * np.pi * x2) ** 2)
    )


def _easom(X: np.ndarray) -> np.ndarray:
    x1, x2 = X[:, 0], X[:, 1]
    return -np.cos(x1) * np.cos(x2) * np.exp(-((x1 - np.pi) ** 2) - (x2 - np.pi) ** 2)


_H3_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H3_A = np.array([[3.0, 10.0, 30.0], [0.1, 10.0, 35.0], [3.0, 10.0, 30.0], [0.1, 10.0, 35.0]])
_H3_P = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]])
for _a in (_H3_ALPHA, _H3_A, _H3_P):
    _a.setflags(write=False)


def _hartmann3(X: np.ndarray) -> np.ndarray:
    inner = np.einsum("ij,nij->ni", _H3_A, (X[:, None, :] - _H3_P[None, :, :]) ** 2)
    return -np.exp(-inner) @ _H3_ALPHA


def _levy(X: np.ndarray) -> np.ndarray:
    w = 1.0 + (X - 1.0) / 4.0
    head = np.sin(np.pi * w[:, 0]) ** 2
    mid = np.sum((w[:, :-1] - 1.0) ** 2 * (1.0 + 10.0 * np.sin(np.pi * w[:, :-1] + 1.0) ** 2), axis=1)
    tail = (w[:, -1] - 1.0) ** 2 * (1.0 + np.sin(2.0 * np.pi * w[:, -1]) ** 2)
    return head + mid + tail


def _griewank(X: np.ndarray) -> np.ndarray:
    j = np.sqrt(np.arange(1, X.shape[1] + 1, dtype=np.float64))
    return np.sum(X**2, axis=1) / 4000.0 - np.prod(np.cos(X / j), axis=1) + 1.0


def _rosenbrock(X: np.ndarray) -> np.ndarray:
    return np.sum(100.0 * (X[:, 1:] - X[:, :-1] ** 2) ** 2 + (1.0 - X[:, :-1]) ** 2, axis=1)


# ---------------------------------------------------------------------------------------------------
# Factories
# ---------------------------------------------------------------------------------------------------


def _check_dim(d: object) -> int:
    check_int(d, "d:", 1)
    return int(d)


def _named(base: str, d: int, default: int = 2) -> str:
    return base if d == default else f"{base}-{d}d"


def branin() -> TestFunction:
    r"""Branin (Branin-Hoo) function on :math:`[-5, 10] \times [0, 15]`.

    .. math::
        f(x) = \left(x_2 - \frac{5.1}{4\pi^2} x_1^2 + \frac{5}{\pi} x_1 - 6\right)^2
               + 10\left(1 - \frac{1}{8\pi}\right)\cos x_1 + 10.

    Global minimum :math:`f^* = 5/(4\pi) \approx 0.3978873577297383` at the three points
    :math:`(-\pi, 12.275)`, :math:`(\pi, 2.275)` and :math:`(3\pi, 2.475)` (exactly: the square
    vanishes and :math:`\cos x_1 = -1`).
    """
    pi = math.pi
    return TestFunction(
        name="branin",
        bounds=np.array([[-5.0, 10.0], [0.0, 15.0]]),
        optimum_value=0.3978873577297383,  # 5 / (4 pi)
        optimizers=np.array([[-pi, 12.275], [pi, 2.275], [3.0 * pi, 2.475]]),
        sense="min",
        _fn=_branin,
    )


def hartmann6() -> TestFunction:
    r"""Hartmann 6-D function on :math:`[0, 1]^6`.

    .. math::
        f(x) = -\sum_{i=1}^{4} \alpha_i \exp\left(-\sum_{j=1}^{6} A_{ij} (x_j - P_{ij})^2\right),

    with the standard constants :math:`\alpha = (1, 1.2, 3, 3.2)`, :math:`A` and :math:`P`
    (Surjanovic & Bingham). Global minimum :math:`f^* \approx -3.3223680114155` at
    :math:`x^* \approx (0.201690, 0.150011, 0.476874, 0.275332, 0.311652, 0.657301)`
    (literature: -3.32237 at (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573)).
    """
    return TestFunction(
        name="hartmann6",
        bounds=np.tile([0.0, 1.0], (6, 1)),
        optimum_value=-3.3223680114155147,
        optimizers=np.array(
            [
                [
                    0.20168951100670543,
                    0.15001069182345797,
                    0.476873974221897,
                    0.2753324304940561,
                    0.31165161660011326,
                    0.6573005340656203,
                ]
            ]
        ),
        sense="min",
        _fn=_hartmann6,
    )


def holder_table() -> TestFunction:
    r"""Holder table function on :math:`[-10, 10]^2`.

    .. math::
        f(x) = -\left|\sin x_1 \cos x_2 \exp\left(\left|1 - \frac{\sqrt{x_1^2 + x_2^2}}{\pi}\right|
               \right)\right|.

    Global minimum :math:`f^* \approx -19.208502567886732` at the four points
    :math:`(\pm 8.055023475736563, \pm 9.664590019241272)` (literature: -19.2085 at
    :math:`(\pm 8.05502, \pm 9.66459)`).
    """
    a, b = 8.055023475736563, 9.664590019241272
    return TestFunction(
        name="holder_table",
        bounds=np.array([[-10.0, 10.0], [-10.0, 10.0]]),
        optimum_value=-19.208502567886732,
        optimizers=np.array([[a, b], [a, -b], [-a, b], [-a, -b]]),
        sense="min",
        _fn=_holder_table,
    )


def himmelblau() -> TestFunction:
    r"""Himmelblau function on :math:`[-5, 5]^2`.

    .. math::
        f(x) = (x_1^2 + x_2 - 11)^2 + (x_1 + x_2^2 - 7)^2.

    Global minimum :math:`f^* = 0` at its four roots of :math:`x_1^2 + x_2 = 11,\ x_1 + x_2^2 = 7`:
    :math:`(3, 2)`, :math:`(-2.805118\ldots, 3.131312\ldots)`, :math:`(-3.779310\ldots, -3.283186\ldots)`
    and :math:`(3.584428\ldots, -1.848126\ldots)`.
    """
    return TestFunction(
        name="himmelblau",
        bounds=np.array([[-5.0, 5.0], [-5.0, 5.0]]),
        optimum_value=0.0,
        optimizers=np.array(
            [
                [3.0, 2.0],
                [-2.805118086952745, 3.131312518250573],
                [-3.779310253377747, -3.2831859912861696],
                [3.5844283403304917, -1.8481265269644036],
            ]
        ),
        sense="min",
        _fn=_himmelblau,
    )


def ackley(d: int = 2) -> TestFunction:
    r"""Ackley function on :math:`[-32.768, 32.768]^d` (:math:`a = 20, b = 0.2, c = 2\pi`).

    .. math::
        f(x) = -a \exp\left(-b \sqrt{\tfrac{1}{d} \sum_j x_j^2}\right)
               - \exp\left(\tfrac{1}{d} \sum_j \cos(c x_j)\right) + a + e.

    Global minimum :math:`f^* = 0` at :math:`x^* = 0`.

    Parameters
    ----------
    d : int, default 2
        Input dimension. The name is ``"ackley"`` for ``d == 2`` and ``"ackley-{d}d"`` otherwise.
    """
    d = _check_dim(d)
    return TestFunction(
        name=_named("ackley", d),
        bounds=np.tile([-32.768, 32.768], (d, 1)),
        optimum_value=0.0,
        optimizers=np.zeros((1, d)),
        sense="min",
        _fn=_ackley,
    )


_ST_ARGMIN = -2.903534027771177  # root of 4 x^3 - 32 x + 5 = 0 in (-3, -2.8)
_ST_MIN_PER_DIM = -39.16616570377141  # 0.5 * (x^4 - 16 x^2 + 5 x) at _ST_ARGMIN


def styblinski_tang(d: int = 2) -> TestFunction:
    r"""Styblinski-Tang function on :math:`[-5, 5]^d`.

    .. math::
        f(x) = \frac{1}{2} \sum_{j=1}^{d} \left(x_j^4 - 16 x_j^2 + 5 x_j\right).

    Global minimum :math:`f^* = -39.16616570377141\, d` at :math:`x_j^* = -2.903534027771177` for all
    :math:`j` (the root of :math:`4x^3 - 32x + 5 = 0` in :math:`(-3, -2.8)`).

    Parameters
    ----------
    d : int, default 2
        Input dimension. The name is ``"styblinski_tang"`` for ``d == 2`` and
        ``"styblinski_tang-{d}d"`` otherwise.
    """
    d = _check_dim(d)
    return TestFunction(
        name=_named("styblinski_tang", d),
        bounds=np.tile([-5.0, 5.0], (d, 1)),
        optimum_value=_ST_MIN_PER_DIM * d,
        optimizers=np.full((1, d), _ST_ARGMIN),
        sense="min",
        _fn=_styblinski_tang,
    )


def eggholder() -> TestFunction:
    r"""Eggholder function on :math:`[-512, 512]^2`.

    .. math::
        f(x) = -(x_2 + 47) \sin\sqrt{\left|x_2 + \tfrac{x_1}{2} + 47\right|}
               - x_1 \sin\sqrt{\left|x_1 - (x_2 + 47)\right|}.

    Global minimum :math:`f^* \approx -959.6406627208508` at :math:`(512, 404.2318051137578)`, on the
    boundary :math:`x_1 = 512` (literature: -959.6407 at (512, 404.2319)).
    """
    return TestFunction(
        name="eggholder",
        bounds=np.array([[-512.0, 512.0], [-512.0, 512.0]]),
        optimum_value=-959.6406627208508,
        optimizers=np.array([[512.0, 404.2318051137578]]),
        sense="min",
        _fn=_eggholder,
    )


def rastrigin(d: int = 2) -> TestFunction:
    r"""Rastrigin function on :math:`[-5.12, 5.12]^d`.

    .. math::
        f(x) = 10 d + \sum_{j=1}^{d} \left(x_j^2 - 10 \cos(2 \pi x_j)\right).

    Global minimum :math:`f^* = 0` at :math:`x^* = 0`.

    Parameters
    ----------
    d : int, default 2
        Input dimension. The name is ``"rastrigin"`` for ``d == 2`` and ``"rastrigin-{d}d"`` otherwise.
    """
    d = _check_dim(d)
    return TestFunction(
        name=_named("rastrigin", d),
        bounds=np.tile([-5.12, 5.12], (d, 1)),
        optimum_value=0.0,
        optimizers=np.zeros((1, d)),
        sense="min",
        _fn=_rastrigin,
    )


def levy13() -> TestFunction:
    r"""Levy function N.13 on :math:`[-10, 10]^2`.

    .. math::
        f(x) = \sin^2(3\pi x_1) + (x_1 - 1)^2 \left(1 + \sin^2(3\pi x_2)\right)
               + (x_2 - 1)^2 \left(1 + \sin^2(2\pi x_2)\right).

    Global minimum :math:`f^* = 0` at :math:`x^* = (1, 1)`.
    """
    return TestFunction(
        name="levy13",
        bounds=np.array([[-10.0, 10.0], [-10.0, 10.0]]),
        optimum_value=0.0,
        optimizers=np.array([[1.0, 1.0]]),
        sense="min",
        _fn=_levy13,
    )


def easom() -> TestFunction:
    r"""Easom function on :math:`[-100, 100]^2`.

    .. math::
        f(x) = -\cos x_1 \cos x_2 \exp\left(-(x_1 - \pi)^2 - (x_2 - \pi)^2\right).

    Global minimum :math:`f^* = -1` at :math:`x^* = (\pi, \pi)`.
    """
    return TestFunction(
        name="easom",
        bounds=np.array([[-100.0, 100.0], [-100.0, 100.0]]),
        optimum_value=-1.0,
        optimizers=np.array([[math.pi, math.pi]]),
        sense="min",
        _fn=_easom,
    )


def hartmann3() -> TestFunction:
    r"""Hartmann 3-D function on :math:`[0, 1]^3`.

    .. math::
        f(x) = -\sum_{i=1}^{4} \alpha_i \exp\left(-\sum_{j=1}^{3} A_{ij} (x_j - P_{ij})^2\right),

    standard constants (Surjanovic & Bingham). Global minimum :math:`f^* \approx -3.86277978733266`
    at :math:`x^* \approx (0.114589, 0.555649, 0.852547)`, refined here by L-BFGS-B from the
    literature's (0.114614, 0.555649, 0.852547), f = -3.86278.
    """
    return TestFunction(
        name="hartmann3",
        bounds=np.tile([0.0, 1.0], (3, 1)),
        optimum_value=-3.862779787332659,
        optimizers=np.array([[0.11458888826480075, 0.5556488893903354, 0.8525469795464348]]),
        sense="min",
        _fn=_hartmann3,
    )


def levy(d: int = 2) -> TestFunction:
    r"""Levy function on :math:`[-10, 10]^d`, with :math:`w_j = 1 + (x_j - 1)/4`.

    .. math::
        f(x) = \sin^2(\pi w_1) + \sum_{j=1}^{d-1} (w_j - 1)^2 \left(1 + 10 \sin^2(\pi w_j + 1)\right)
               + (w_d - 1)^2 \left(1 + \sin^2(2\pi w_d)\right).

    Global minimum :math:`f^* = 0` at :math:`x^* = (1, \dots, 1)` (every term vanishes).
    """
    d = _check_dim(d)
    return TestFunction(
        name=_named("levy", d),
        bounds=np.tile([-10.0, 10.0], (d, 1)),
        optimum_value=0.0,
        optimizers=np.ones((1, d)),
        sense="min",
        _fn=_levy,
    )


def griewank(d: int = 2) -> TestFunction:
    r"""Griewank function on :math:`[-600, 600]^d`.

    .. math:: f(x) = \sum_j \frac{x_j^2}{4000} - \prod_j \cos\left(\frac{x_j}{\sqrt{j}}\right) + 1.

    Global minimum :math:`f^* = 0` at :math:`x^* = 0` (both terms at their minimum).
    """
    d = _check_dim(d)
    return TestFunction(
        name=_named("griewank", d),
        bounds=np.tile([-600.0, 600.0], (d, 1)),
        optimum_value=0.0,
        optimizers=np.zeros((1, d)),
        sense="min",
        _fn=_griewank,
    )


def rosenbrock(d: int = 2) -> TestFunction:
    r"""Rosenbrock function on :math:`[-5, 10]^d`.

    .. math:: f(x) = \sum_{j=1}^{d-1} \left(100 (x_{j+1} - x_j^2)^2 + (1 - x_j)^2\right).

    Global minimum :math:`f^* = 0` at :math:`x^* = (1, \dots, 1)`; heavy-tailed on its domain
    (values up to ~1e6), the case output transforms are for. Needs :math:`d \ge 2`.
    """
    d = _check_dim(d)
    if d < 2:
        raise ValueError(f"d: rosenbrock needs d >= 2, got {d}")
    return TestFunction(
        name=_named("rosenbrock", d),
        bounds=np.tile([-5.0, 10.0], (d, 1)),
        optimum_value=0.0,
        optimizers=np.ones((1, d)),
        sense="min",
        _fn=_rosenbrock,
    )


FUNCTIONS: dict[str, Callable[[], TestFunction]] = {
    "branin": branin,
    "hartmann6": hartmann6,
    "holder_table": holder_table,
    "himmelblau": himmelblau,
    "ackley": ackley,
    "styblinski_tang": styblinski_tang,
    "eggholder": eggholder,
    "rastrigin": rastrigin,
    "levy13": levy13,
    "easom": easom,
    "hartmann3": hartmann3,
    "levy": levy,
    "griewank": griewank,
    "rosenbrock": rosenbrock,
}
"""Registry of the test-function factories by name (each callable with no arguments)."""


def get(name: str, **kwargs: int) -> TestFunction:
    """Build a registered test function by name.

    Parameters
    ----------
    name : str
        A key of :data:`FUNCTIONS` (case-insensitive; ``-`` is treated as ``_``).
    **kwargs
        Forwarded to the factory, e.g. ``get("ackley", d=5)``.

    Returns
    -------
    TestFunction
        A new instance.

    Raises
    ------
    ValueError
        If ``name`` is not registered (the message lists the valid names).
    """
    key = name.strip().lower().replace("-", "_") if isinstance(name, str) else None
    if key not in FUNCTIONS:
        raise ValueError(f"name: unknown test function {name!r}; valid names are {sorted(FUNCTIONS)}")
    return FUNCTIONS[key](**kwargs)
