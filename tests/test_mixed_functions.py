"""CoCaBO's Func2C and Func3C (warmbo.problems.mixed): the definitions against the authors' code
transcribed independently, and the stated minima against a search over every categorical setting."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from warmbo.problems.mixed import CAMEL_MINIMUM, MIXED_FUNCTIONS, func2c, func3c


def _reference(ht: list[int], X: np.ndarray) -> float:
    """The authors' func2C / func3C (CoCaBO_code, testFunctions/syntheticFunctions.py), their
    branches and scalings written out again on ``X`` of shape (2,), without their 1e-6 noise."""
    x1, x2 = 2 * X
    rosen = (100 * (x2 - x1**2) ** 2 + (x1 - 1) ** 2) / 300
    camel = ((4 - 2.1 * x1**2 + x1**4 / 3) * x1**2 + x1 * x2 + (-4 + 4 * x2**2) * x2**2) / 10
    beale = ((1.5 - x1 + x1 * x2) ** 2 + (2.25 - x1 + x1 * x2**2) ** 2 + (2.625 - x1 + x1 * x2**3) ** 2) / 50
    f = {0: rosen, 1: camel, 2: beale}[ht[0]]
    f = f + (rosen if ht[1] == 0 else camel if ht[1] == 1 else beale)
    if len(ht) == 3:
        f = f + (5 * camel if ht[2] == 0 else 2 * rosen if ht[2] == 1 else ht[2] * beale)
    return float(f)


@pytest.mark.parametrize("name", sorted(MIXED_FUNCTIONS))
def test_the_functions_match_the_authors_definitions_at_every_categorical_setting(name):
    fn = MIXED_FUNCTIONS[name]()
    cats = [p for p in fn.space.params if p.name.startswith("h")]
    rng = np.random.default_rng(0)
    combos = list(itertools.product(*(p.choices for p in cats)))
    assert len(combos) == {"func2c": 15, "func3c": 60}[name]
    for combo in combos:
        for X in rng.uniform(-1, 1, size=(5, 2)):
            params = {**dict(zip([p.name for p in cats], combo, strict=True)), "x1": X[0], "x2": X[1]}
            assert fn(params) == pytest.approx(_reference(list(combo), X), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", sorted(MIXED_FUNCTIONS))
def test_the_stated_minimum_is_the_least_over_every_categorical_setting(name):
    """Each categorical setting's continuous slice minimised from a 9x9 grid of starts (L-BFGS-B in
    the box): none goes below the stated minimum, and only the stated setting reaches it."""
    fn = MIXED_FUNCTIONS[name]()
    cats = [p.name for p in fn.space.params if p.name.startswith("h")]
    starts = np.stack(np.meshgrid(np.linspace(-0.9, 0.9, 9), np.linspace(-0.9, 0.9, 9)), -1).reshape(-1, 2)
    best = {}
    for combo in itertools.product(*(p.choices for p in fn.space.params if p.name in cats)):
        fixed = dict(zip(cats, combo, strict=True))

        def slice_(X, fixed=fixed):
            return fn({**fixed, "x1": float(X[0]), "x2": float(X[1])})

        best[combo] = min(
            minimize(slice_, s, method="L-BFGS-B", bounds=[(-1, 1), (-1, 1)]).fun for s in starts
        )
    winner = min(best, key=best.get)
    assert best[winner] == pytest.approx(fn.optimum_value, abs=1e-9)
    assert best[winner] >= fn.optimum_value - 1e-12
    assert dict(zip(cats, winner, strict=True)) == {k: v for k, v in fn.optimizers[0].items() if k in cats}
    runner_up = sorted(best.values())[1]
    assert runner_up > fn.optimum_value + 0.05  # the minimum needs its categorical setting
    for point in fn.optimizers:
        assert fn(point) == fn.optimum_value


def test_the_minima_are_the_camel_minimum_scaled():
    assert func2c().optimum_value == pytest.approx(2 * -1.031628453489877 / 10, rel=1e-15)
    assert func3c().optimum_value == pytest.approx(7 * -1.031628453489877 / 10, rel=1e-15)
    assert CAMEL_MINIMUM == pytest.approx(-1.0316284534898774, rel=1e-16)


def test_a_bad_parameter_dict_is_refused_by_name():
    fn = func2c()
    with pytest.raises(ValueError, match="x1"):
        fn({"h1": 0, "h2": 0, "x1": 1.5, "x2": 0.0})
    with pytest.raises(ValueError, match="h2"):
        fn({"h1": 0, "x1": 0.0, "x2": 0.0})
    with pytest.raises(ValueError, match="h1"):
        fn({"h1": 7, "h2": 0, "x1": 0.0, "x2": 0.0})
