"""Tests for warmbo.problems: test functions (optima, transformations, validation) and regret."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import qmc

from warmbo.problems import (
    FUNCTIONS,
    TestFunction,
    ackley,
    branin,
    cumulative_inference_regret,
    cumulative_regret,
    easom,
    get,
    himmelblau,
    inference_regret,
    levy13,
    rastrigin,
    simple_regret,
    styblinski_tang,
)

ALL_FUNCTIONS = [factory() for factory in FUNCTIONS.values()] + [
    ackley(3),
    styblinski_tang(3),
    rastrigin(3),
    get("levy", d=10),
    get("griewank", d=10),
    get("rosenbrock", d=20),
]
IDS = [f.name for f in ALL_FUNCTIONS]

EXPECTED_NUM_OPTIMIZERS = {
    "branin": 3,
    "hartmann6": 1,
    "holder_table": 4,
    "himmelblau": 4,
    "ackley": 1,
    "styblinski_tang": 1,
    "eggholder": 1,
    "rastrigin": 1,
    "levy13": 1,
    "easom": 1,
    "hartmann3": 1,
    "levy": 1,
    "griewank": 1,
    "rosenbrock": 1,
}


def _close_to_optimum(value: float, optimum: float) -> bool:
    return abs(value - optimum) <= 1e-6 or abs(value - optimum) <= 1e-9 * abs(optimum)


# --------------------------------------------------------------------------------------------------
# Optima
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("f", ALL_FUNCTIONS, ids=IDS)
def test_optimum_reached_at_every_optimizer(f: TestFunction) -> None:
    assert f.sense == "min"
    values = f(f.optimizers)
    assert values.shape == (f.optimizers.shape[0],)
    for x, v in zip(f.optimizers, values, strict=True):
        assert _close_to_optimum(v, f.optimum_value), (f.name, x, v, f.optimum_value)
        assert f.in_bounds(x)
    # stated optimisers are distinct points
    assert len({tuple(x) for x in f.optimizers}) == f.optimizers.shape[0]


@pytest.mark.parametrize("f", ALL_FUNCTIONS, ids=IDS)
def test_no_sobol_point_beats_optimum(f: TestFunction) -> None:
    U = qmc.Sobol(d=f.dim, scramble=True, seed=12345).random_base2(m=15)[:20000]
    X = f.from_unit(U)
    assert np.all(f.in_bounds(X))
    y = f(X)
    assert y.min() >= f.optimum_value - 1e-9
    # the sample does get reasonably close, i.e. the optimum is not absurdly low
    spread = y.max() - f.optimum_value
    assert y.min() - f.optimum_value < 0.5 * spread


@pytest.mark.parametrize("f", ALL_FUNCTIONS, ids=IDS)
def test_local_optimizer_cannot_improve(f: TestFunction) -> None:
    for x0 in f.optimizers:
        res = minimize(lambda x: f(x), x0, method="L-BFGS-B", bounds=f.bounds)
        assert res.fun >= f.optimum_value - 1e-6
        assert f(x0) - res.fun <= 1e-6


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_number_of_optimizers(name: str) -> None:
    assert get(name).optimizers.shape[0] == EXPECTED_NUM_OPTIMIZERS[name]


def test_literature_values_agree() -> None:
    assert branin().optimum_value == pytest.approx(5.0 / (4.0 * math.pi), abs=1e-15)
    assert get("hartmann6").optimum_value == pytest.approx(-3.32237, abs=5e-6)
    assert get("holder_table").optimum_value == pytest.approx(-19.2085, abs=5e-5)
    assert get("eggholder").optimum_value == pytest.approx(-959.6407, abs=5e-5)
    assert get("eggholder").optimizers[0] == pytest.approx([512.0, 404.2319], abs=5e-4)
    assert styblinski_tang(5).optimum_value == pytest.approx(-39.16616570377142 * 5, rel=1e-14)
    assert get("hartmann3").optimum_value == pytest.approx(-3.86278, abs=5e-6)
    assert get("rosenbrock")(np.array([0.0, 0.0])) == pytest.approx(1.0)  # (1 - 0)^2
    assert get("griewank", d=1)(np.array([math.pi])) == pytest.approx(2.0 + math.pi**2 / 4000.0)
    # Levy at x = -3 in 1-d: w = 0, sin^2(0) + (0 - 1)^2 (1 + sin^2(0)) = 1
    assert get("levy", d=1)(np.array([-3.0])) == pytest.approx(1.0)
    assert get("hartmann3").optimizers[0] == pytest.approx([0.114614, 0.555649, 0.852547], abs=5e-5)
    np.testing.assert_allclose(
        np.abs(get("holder_table").optimizers), np.tile([8.05502, 9.66459], (4, 1)), atol=5e-6
    )


def test_known_values_off_optimum() -> None:
    assert branin()(np.array([0.0, 0.0])) == pytest.approx(56.0 - 10.0 / (8.0 * math.pi), rel=1e-14)
    assert himmelblau()(np.array([0.0, 0.0])) == pytest.approx(170.0)
    assert rastrigin()(np.array([1.0, 1.0])) == pytest.approx(2.0)
    assert rastrigin(3)(np.array([1.0, 0.0, 0.0])) == pytest.approx(1.0)
    assert levy13()(np.array([0.0, 0.0])) == pytest.approx(2.0)
    assert easom()(np.array([0.0, 0.0])) == pytest.approx(-math.exp(-2.0 * math.pi**2))
    assert styblinski_tang()(np.array([1.0, -1.0])) == pytest.approx(0.5 * (-10.0) + 0.5 * (-20.0))
    a = ackley(2)(np.array([1.0, 1.0]))
    assert a == pytest.approx(-20.0 * math.exp(-0.2) - math.exp(1.0) + 20.0 + math.e)


# --------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------


def test_registry_and_get() -> None:
    assert set(FUNCTIONS) == set(EXPECTED_NUM_OPTIMIZERS)
    for name, factory in FUNCTIONS.items():
        f = factory()
        assert isinstance(f, TestFunction)
        assert f.name == name
    assert get("Holder-Table").name == "holder_table"
    f3 = get("ackley", d=3)
    assert f3.dim == 3 and f3.name == "ackley-3d"
    with pytest.raises(ValueError, match="name.*branin.*valid|valid.*branin"):
        get("no_such_function")


@pytest.mark.parametrize("factory", [ackley, styblinski_tang, rastrigin])
@pytest.mark.parametrize("d", [0, -1, 2.5, True])
def test_bad_dimension(factory, d) -> None:
    with pytest.raises(ValueError, match="d:"):
        factory(d)


# --------------------------------------------------------------------------------------------------
# Evaluation and validation
# --------------------------------------------------------------------------------------------------


def test_call_shapes() -> None:
    f = branin()
    X = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    y = f(X)
    assert y.shape == (3,) and y.dtype == np.float64
    single = f(X[1])
    assert isinstance(single, float)
    assert single == y[1]
    assert f([1.0, 2.0]) == y[1]
    assert f.dim == 2 and get("hartmann6").dim == 6


@pytest.mark.parametrize("bad", [np.zeros(3), np.zeros((4, 3)), np.zeros((2, 2, 2)), np.zeros(())])
def test_shape_validation(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match=r"X: expected.*2.*got shape"):
        branin()(bad)


@pytest.mark.parametrize("bad_value", [np.nan, np.inf, -np.inf])
def test_nonfinite_input(bad_value: float) -> None:
    f = himmelblau()
    with pytest.raises(ValueError, match="X:.*finite"):
        f(np.array([0.0, bad_value]))
    with pytest.raises(ValueError, match="X:.*finite"):
        f(np.array([[0.0, 0.0], [bad_value, 1.0]]))


def test_in_bounds() -> None:
    f = branin()
    X = np.array([[-5.0, 0.0], [10.0, 15.0], [-5.1, 1.0], [0.0, 15.5]])
    np.testing.assert_array_equal(f.in_bounds(X), [True, True, False, False])
    assert f.in_bounds(np.array([-5.05, 0.0]), atol=0.1) is True
    with pytest.raises(ValueError, match="atol"):
        f.in_bounds(X, atol=-1.0)


def test_immutability() -> None:
    f = branin()
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.name = "other"  # type: ignore[misc]
    with pytest.raises(ValueError):
        f.bounds[0, 0] = 0.0
    with pytest.raises(ValueError):
        f.optimizers[0, 0] = 0.0


def test_constructor_validation() -> None:
    kwargs = dict(
        name="sq",
        bounds=np.array([[-1.0, 1.0]]),
        optimum_value=0.0,
        optimizers=np.array([[0.0]]),
        sense="min",
        _fn=lambda X: np.sum(X**2, axis=1),
    )
    f = TestFunction(**kwargs)
    assert f(np.array([[0.5], [-1.0]])) == pytest.approx([0.25, 1.0])
    for key, bad, match in [
        ("sense", "minimise", "sense"),
        ("bounds", np.array([[1.0, -1.0]]), "bounds"),
        ("bounds", np.array([-1.0, 1.0]), "bounds"),
        ("optimizers", np.array([[2.0]]), "optimizers"),
        ("optimizers", np.array([[0.0, 0.0]]), "optimizers"),
        ("optimum_value", float("nan"), "optimum_value"),
        ("name", "", "name"),
    ]:
        with pytest.raises(ValueError, match=match):
            TestFunction(**{**kwargs, key: bad})


# --------------------------------------------------------------------------------------------------
# Transformations
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("f", ALL_FUNCTIONS, ids=IDS)
def test_negate(f: TestFunction) -> None:
    g = f.negate()
    X = f.from_unit(np.random.default_rng(0).random((50, f.dim)))
    np.testing.assert_array_equal(g(X), -f(X))
    assert g.sense == "max" and g.optimum_value == -f.optimum_value
    assert g.name == "neg-" + f.name
    np.testing.assert_array_equal(g.optimizers, f.optimizers)
    np.testing.assert_array_equal(g.bounds, f.bounds)
    for x in g.optimizers:
        assert _close_to_optimum(g(x), g.optimum_value)
    gg = g.negate()
    assert gg.sense == "min"
    np.testing.assert_array_equal(gg(X), f(X))


def test_flip_is_negate_and_maximize_form() -> None:
    assert TestFunction.flip is TestFunction.negate
    f = get("eggholder")
    h = f.flip()
    assert h.sense == "max" and h.name == "neg-eggholder"
    m = f.maximize_form()
    assert m.sense == "max"
    assert m(f.optimizers[0]) == pytest.approx(-f.optimum_value)
    assert m.maximize_form() is m


@pytest.mark.parametrize("f", ALL_FUNCTIONS, ids=IDS)
def test_unit(f: TestFunction) -> None:
    g = f.unit()
    already_unit = bool(np.all(f.bounds == np.array([0.0, 1.0])))
    assert g.name == (f.name if already_unit else "unit-" + f.name)
    assert (g is f) == already_unit
    assert g.sense == f.sense and g.dim == f.dim
    np.testing.assert_array_equal(g.bounds, np.tile([0.0, 1.0], (f.dim, 1)))
    U = np.random.default_rng(1).random((40, f.dim))
    np.testing.assert_allclose(g(U), f(f.from_unit(U)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f.to_unit(f.from_unit(U)), U, atol=1e-12)
    np.testing.assert_allclose(g.optimizers, f.to_unit(f.optimizers))
    assert np.all(g.in_bounds(g.optimizers))
    for u in g.optimizers:
        assert _close_to_optimum(g(u), f.optimum_value)
    assert g.unit() is g


def test_unit_mapping_values() -> None:
    f = branin()
    np.testing.assert_allclose(f.to_unit(np.array([-5.0, 15.0])), [0.0, 1.0])
    np.testing.assert_allclose(f.from_unit(np.array([[0.5, 0.5]])), [[2.5, 7.5]])
    with pytest.raises(ValueError, match="U: expected"):
        f.from_unit(np.zeros(3))
    with pytest.raises(ValueError, match="X: expected"):
        f.to_unit(np.zeros((2, 5)))


# --------------------------------------------------------------------------------------------------
# Regret
# --------------------------------------------------------------------------------------------------


def test_simple_regret_hand_computed() -> None:
    np.testing.assert_allclose(simple_regret([1.0, 3.0, 2.0, 5.0], 5.0), [4.0, 2.0, 2.0, 0.0])
    np.testing.assert_allclose(simple_regret([5.0, 3.0, 4.0, 1.0], 1.0, maximize=False), [4.0, 2.0, 2.0, 0.0])
    np.testing.assert_allclose(simple_regret([-3.0, -1.0], 0.5), [3.5, 1.5])


def test_cumulative_regret_hand_computed() -> None:
    np.testing.assert_allclose(cumulative_regret([1.0, 3.0, 2.0, 5.0], 5.0), [4.0, 6.0, 9.0, 9.0])
    np.testing.assert_allclose(
        cumulative_regret([5.0, 3.0, 4.0, 1.0], 1.0, maximize=False), [4.0, 6.0, 9.0, 9.0]
    )


def test_inference_regret_hand_computed() -> None:
    r = inference_regret([1.0, 3.0, 2.0], 5.0)
    np.testing.assert_allclose(r, [4.0, 2.0, 3.0])  # no running best: may increase
    np.testing.assert_allclose(cumulative_inference_regret([1.0, 3.0, 2.0], 5.0), [4.0, 6.0, 9.0])
    np.testing.assert_allclose(inference_regret([2.0, 1.5], 1.0, maximize=False), [1.0, 0.5])
    np.testing.assert_allclose(cumulative_inference_regret([2.0, 1.5], 1.0, maximize=False), [1.0, 1.5])


@pytest.mark.parametrize("maximize", [True, False])
def test_regret_monotonicity(maximize: bool) -> None:
    rng = np.random.default_rng(7)
    values = rng.normal(size=200)
    optimum = values.max() + 0.1 if maximize else values.min() - 0.1
    s = simple_regret(values, optimum, maximize=maximize)
    c = cumulative_regret(values, optimum, maximize=maximize)
    ci = cumulative_inference_regret(values, optimum, maximize=maximize)
    assert s.shape == c.shape == (200,)
    assert np.all(s >= 0) and np.all(np.diff(s) <= 0)
    assert np.all(c >= 0) and np.all(np.diff(c) >= 0)
    assert np.all(np.diff(ci) >= 0)
    np.testing.assert_allclose(c[-1], np.sum(np.abs(optimum - values)))
    assert s[-1] == pytest.approx(0.1)


def test_regret_conventions_are_mirror_images() -> None:
    values = np.array([0.3, -1.0, 2.0, 1.5])
    np.testing.assert_allclose(simple_regret(values, 3.0), simple_regret(-values, -3.0, maximize=False))
    np.testing.assert_allclose(
        cumulative_regret(values, 3.0), cumulative_regret(-values, -3.0, maximize=False)
    )


def test_regret_roundoff_clipped() -> None:
    r = simple_regret([1.0, 2.0 + 1e-13], 2.0)
    assert r[-1] == 0.0
    assert np.all(inference_regret([5.0 - 1e-14], 5.0, maximize=False) == 0.0)


def test_regret_with_test_function() -> None:
    f = branin().maximize_form()
    X = f.from_unit(np.random.default_rng(3).random((30, 2)))
    s = simple_regret(f(X), f.optimum_value)
    assert np.all(s > 0) and np.all(np.diff(s) <= 0)
    s_min = simple_regret(branin()(X), branin().optimum_value, maximize=False)
    np.testing.assert_allclose(s, s_min)


@pytest.mark.parametrize(
    "fn, arg", [(simple_regret, "values"), (cumulative_regret, "values"), (inference_regret, "values_at")]
)
def test_regret_validation(fn, arg: str) -> None:
    with pytest.raises(ValueError, match=f"{arg}.*1-D"):
        fn(np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match=f"{arg}.*finite"):
        fn([0.0, np.nan], 1.0)
    with pytest.raises(ValueError, match=f"{arg}.*at least one"):
        fn([], 1.0)
    with pytest.raises(ValueError, match="optimum"):
        fn([0.0], np.nan)
    with pytest.raises(ValueError, match="optimum"):
        fn([0.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="maximize"):
        fn([0.0], 1.0, maximize="yes")
    # a value above the maximum (or below the minimum) means a wrong optimum or convention
    with pytest.raises(ValueError, match=f"{arg}.*above the maximum"):
        fn([0.0, 2.0], 1.0)
    with pytest.raises(ValueError, match=f"{arg}.*below the minimum"):
        fn([0.0, 2.0], 1.0, maximize=False)
