"""Mixed categorical-continuous test functions with known optima: CoCaBO's Func2C and Func3C.

Ru, Alvi, Nguyen, Osborne & Roberts, "Bayesian optimisation over multiple continuous and categorical
inputs" (ICML 2020), section 5.1, define both from three 2-D functions on ``x in [-1, 1]^2``, each
evaluated at ``2 x`` and scaled as in the authors' code (``testFunctions/syntheticFunctions.py`` of
CoCaBO_code): Rosenbrock ``/ 300``, the six-hump camel ``/ 10``, Beale ``/ 50``. The categoricals
choose which functions are summed:

* Func2C: ``h1`` (3 choices) picks Rosenbrock, six-hump camel or Beale, ``h2`` (5 choices) the same
  with its choices 2, 3 and 4 all Beale;
* Func3C: Func2C's two plus ``h3`` (4 choices) adding ``5 camel``, ``2 Rosenbrock``, ``2 Beale`` or
  ``3 Beale`` (``h3 * Beale`` for ``h3 >= 2``).

Both are minimised. Rosenbrock and Beale are non-negative and the camel's minimum is negative, so the
minimum takes camel wherever a categorical allows it: Func2C ``2 c* / 10`` at ``h = (1, 1)`` and
Func3C ``7 c* / 10`` at ``h = (1, 1, 0)``, with ``c* = -1.0316284534898774`` the six-hump camel's
minimum at ``(+-0.0898420131003, -+0.7126564030207)`` (the ``x`` of an optimum is half of that). The
authors' ``1e-6`` uniform noise is left out: the functions here are deterministic.

Written by hand: no library ships these definitions. ``tests/test_mixed_functions.py`` checks the
optima by enumerating the categoricals and minimising each continuous slice from many starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..parameters import Categorical, Float
from ..space import Space

__all__ = ["CAMEL_MINIMUM", "MIXED_FUNCTIONS", "MixedFunction", "func2c", "func3c"]

#: The six-hump camel function's minimum value and its two minimisers (Surjanovic & Bingham's
#: rounded ``(0.0898, -0.7126)``, refined by Newton's method on the gradient).
CAMEL_MINIMUM = -1.0316284534898774
_CAMEL_ARGMIN = (0.08984201310031806, -0.7126564030207396)


def _rosenbrock(x1: float, x2: float) -> float:
    return (100.0 * (x2 - x1**2) ** 2 + (x1 - 1.0) ** 2) / 300.0


def _camel(x1: float, x2: float) -> float:
    return ((4.0 - 2.1 * x1**2 + x1**4 / 3.0) * x1**2 + x1 * x2 + (-4.0 + 4.0 * x2**2) * x2**2) / 10.0


def _beale(x1: float, x2: float) -> float:
    return ((1.5 - x1 + x1 * x2) ** 2 + (2.25 - x1 + x1 * x2**2) ** 2 + (2.625 - x1 + x1 * x2**3) ** 2) / 50.0


_BY_INDEX = (_rosenbrock, _camel, _beale)


@dataclass(frozen=True, eq=False)
class MixedFunction:
    """A deterministic objective on a mixed :class:`~warmbo.space.Space`, minimised, with its known
    minimum and every point that reaches it.

    Call it with a parameter dict (what ``Optimizer.ask`` returns); the dict is validated by
    ``space`` first, so a missing, unknown or out-of-range parameter raises ``ValueError``.
    """

    __test__: ClassVar[bool] = False  # keep pytest from collecting this class

    name: str
    space: Space
    optimum_value: float
    optimizers: tuple[Mapping[str, Any], ...]
    _fn: Callable[[Mapping[str, Any]], float] = field(repr=False)

    def __call__(self, params: Mapping[str, Any]) -> float:
        return float(self._fn(self.space.validate(params)))


def _space(categoricals: int) -> Space:
    sizes = (3, 5, 4)[:categoricals]
    return Space(
        [Categorical(f"h{i + 1}", list(range(k))) for i, k in enumerate(sizes)]
        + [Float("x1", -1.0, 1.0), Float("x2", -1.0, 1.0)]
    )


def _func2c(p: Mapping[str, Any]) -> float:
    x1, x2 = 2.0 * p["x1"], 2.0 * p["x2"]
    return _BY_INDEX[p["h1"]](x1, x2) + _BY_INDEX[min(p["h2"], 2)](x1, x2)


def _func3c(p: Mapping[str, Any]) -> float:
    x1, x2 = 2.0 * p["x1"], 2.0 * p["x2"]
    h3 = p["h3"]
    third = 5.0 * _camel(x1, x2) if h3 == 0 else 2.0 * _rosenbrock(x1, x2) if h3 == 1 else h3 * _beale(x1, x2)
    return _func2c(p) + third


def _camel_optimizers(categoricals: dict[str, int]) -> tuple[dict[str, Any], ...]:
    a, b = _CAMEL_ARGMIN
    return tuple({**categoricals, "x1": s * a / 2.0, "x2": s * b / 2.0} for s in (1.0, -1.0))


def func2c() -> MixedFunction:
    """CoCaBO's Func2C: two categoricals (3 and 5 choices) and ``x in [-1, 1]^2``; minimum
    ``2 c* / 10 = -0.2063...`` at ``h1 = h2 = 1`` (camel twice)."""
    return MixedFunction(
        "func2c", _space(2), 2.0 * CAMEL_MINIMUM / 10.0, _camel_optimizers({"h1": 1, "h2": 1}), _func2c
    )


def func3c() -> MixedFunction:
    """CoCaBO's Func3C: three categoricals (3, 5 and 4 choices) and ``x in [-1, 1]^2``; minimum
    ``7 c* / 10 = -0.7221...`` at ``h = (1, 1, 0)`` (camel, camel and five camels)."""
    return MixedFunction(
        "func3c",
        _space(3),
        7.0 * CAMEL_MINIMUM / 10.0,
        _camel_optimizers({"h1": 1, "h2": 1, "h3": 0}),
        _func3c,
    )


#: Name -> factory, for scripts that take a problem's name.
MIXED_FUNCTIONS: dict[str, Callable[[], MixedFunction]] = {"func2c": func2c, "func3c": func3c}
