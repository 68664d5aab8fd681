"""Acquisitions against closed forms, Monte Carlo and finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from warmbo import EI, GP, PI, UCB, PosteriorMean, Space
from warmbo.bounds import IGPUCB, Constant
from warmbo.kernels import RBF, Linear, Matern
from warmbo.kernels import Constant as ConstantKernel


@pytest.fixture
def gp():
    rng = np.random.default_rng(0)
    X = rng.random((12, 2))
    y = np.sin(4 * X[:, 0]) * np.cos(3 * X[:, 1]) + 0.05 * rng.standard_normal(12)
    return GP(ConstantKernel(1.5) * Matern(2.5, [0.3, 0.4]), noise=1e-2, normalize_y=True).fit(X, y)


def test_ucb_is_mean_plus_root_beta_std(gp):
    X = np.random.default_rng(1).random((50, 2))
    mean, std = gp.predict(X)
    np.testing.assert_allclose(UCB(Constant(9.0)).bind(gp)(X), mean + 3.0 * std, rtol=1e-12)


def test_ucb_uses_round_t_and_the_model_info_gain(gp):
    schedule = IGPUCB(B=2.0, R=0.5, delta=0.05)
    acq = UCB(schedule)
    root = 2.0 + 0.5 * np.sqrt(2 * (gp.info_gain() + 1 + np.log(1 / 0.05)))
    assert acq.beta_t(gp) == pytest.approx(root**2, rel=1e-12)
    X = np.random.default_rng(2).random((5, 2))
    mean, std = gp.predict(X)
    np.testing.assert_allclose(acq.bind(gp)(X), mean + root * std, rtol=1e-12)


@pytest.mark.parametrize("incumbent", ["best", "mean"])
def test_ei_equals_monte_carlo_within_three_standard_errors(gp, incumbent):
    acq = EI(incumbent=incumbent).bind(gp)
    X = np.random.default_rng(3).random((400, 2))
    mean, std = gp.predict(X)
    # Monte Carlo resolves EI only where improvements are not rare events: keep points whose
    # improvement probability is >= 1% (>= 2000 of the 200000 draws improve)
    keep = PI(incumbent=incumbent).bind(gp)(X) >= 0.01
    X, mean, std = X[keep][:20], mean[keep][:20], std[keep][:20]
    assert X.shape[0] == 20
    values = acq(X)
    rng = np.random.default_rng(4)
    draws = mean[:, None] + std[:, None] * rng.standard_normal((20, 200_000))
    improvement = np.maximum(draws - acq.incumbent, 0.0)
    mc = improvement.mean(axis=1)
    se = improvement.std(axis=1) / np.sqrt(improvement.shape[1])
    assert np.all(np.abs(values - mc) <= 3 * se + 1e-12)
    assert np.all(values >= 0)


def test_ei_incumbents(gp):
    best = EI("best").bind(gp).incumbent
    assert best == pytest.approx(np.max(gp.y_train_))
    at_data = np.max(gp.predict(gp.X_train_)[0])
    assert EI("mean").bind(gp).incumbent == pytest.approx(at_data)
    # with a space, mu+ = max_x mu(x) is searched over the whole domain: never below the data's max
    searched = EI("mean").bind(gp, space=Space.box([(0, 1), (0, 1)])).incumbent
    dense = np.max(gp.predict(Space.box([(0, 1), (0, 1)]).sample_encoded(4096, seed=0))[0])
    assert searched >= at_data - 1e-12
    assert searched >= dense - 1e-6


def test_ei_and_pi_at_zero_std_are_the_plain_improvement():
    gp = GP(RBF(0.3), noise=0.0).fit([[0.2], [0.7]], [1.0, 2.0])
    X = np.array([[0.2], [0.7]])
    # at the (noise-free) data the posterior is exact: improvement over y+ = 2 is 0 at both
    np.testing.assert_allclose(EI().bind(gp)(X), 0.0, atol=1e-7)
    shifted = EI(xi=0.0).bind(gp)
    shifted.incumbent = 0.5
    np.testing.assert_allclose(shifted(X), [0.5, 1.5], atol=1e-6)
    assert np.all(PI().bind(gp)(X) <= 0.5 + 1e-6)


def test_pi_closed_form(gp):
    from scipy.stats import norm

    X = np.random.default_rng(5).random((10, 2))
    mean, std = gp.predict(X)
    acq = PI(xi=0.01).bind(gp)
    np.testing.assert_allclose(acq(X), norm.cdf((mean - acq.incumbent - 0.01) / std), rtol=1e-12)


@pytest.mark.parametrize(
    "acquisition", [UCB(Constant(4.0)), EI("best"), EI("mean"), PI(), PosteriorMean()], ids=repr
)
def test_gradients_match_finite_differences(gp, acquisition):
    acq = acquisition.bind(gp)
    assert acq.has_gradient
    h = 1e-6
    for x in np.random.default_rng(6).random((5, 2)):
        value, grad = acq.value_and_gradient(x)
        assert value == pytest.approx(acq(x[None])[0], rel=1e-10, abs=1e-12)
        numeric = [(acq((x + h * e)[None])[0] - acq((x - h * e)[None])[0]) / (2 * h) for e in np.eye(2)]
        # O(h^2) truncation and ~1e-16/h round-off: 1e-5 relative with a small absolute floor
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_kernel_without_gradients_reports_it():
    from warmbo.kernels import Features

    gp = GP(Features(lambda X: np.hstack([X, X**2]), 2), noise=0.1).fit([[0.1], [0.5]], [0.0, 1.0])
    assert not UCB(Constant(1.0)).bind(gp).has_gradient
    assert UCB(Constant(1.0)).bind(GP(Linear(), 0.1).fit([[0.1]], [1.0])).has_gradient


def test_bad_configuration():
    with pytest.raises(ValueError, match="incumbent"):
        EI(incumbent="max")
    with pytest.raises(ValueError, match="xi"):
        PI(xi=-1.0)
    with pytest.raises(ValueError, match="schedule"):
        UCB(4.0)
    with pytest.raises(ValueError, match="observation"):
        EI().bind(GP(RBF(0.5)))
