"""Acquisitions against closed forms, Monte Carlo and finite differences."""

from __future__ import annotations

import warnings

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


@pytest.mark.parametrize("incumbent", ["best", "observed", "mean"])
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


def test_the_observed_incumbent_is_the_largest_posterior_mean_at_the_data_in_closed_form():
    # a GP with fixed hyperparameters and no output scaling: mu(X) = K (K + s2 I)^-1 y, computed
    # densely here; the incumbent is its largest entry, below the best observation when that one
    # is a lucky draw, and it ignores the space (no search: the data only)
    rng = np.random.default_rng(5)
    X = rng.random((15, 2))
    y = np.sin(5 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(15)
    kernel = ConstantKernel(1.0) * RBF([0.3, 0.5])
    gp = GP(kernel, noise=0.09).fit(X, y)
    K = kernel(X, X)
    dense = K @ np.linalg.solve(K + 0.09 * np.eye(15), y)
    observed = EI("observed").bind(gp, space=Space.box([(0, 1), (0, 1)])).incumbent
    assert observed == pytest.approx(np.max(dense), rel=1e-10)
    assert observed < np.max(y)  # noise sd 0.3: the best observation is above the model's mean there
    assert PI("observed").bind(gp).incumbent == pytest.approx(observed, rel=1e-12)


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


# ---------------------------------------------------------------------------- log EI
def _h_over_cdf_by_quadrature(z: float) -> float:
    """Independent oracle: ``h(z) = phi(z) + z Phi(z) = int_0^inf Phi(z - s) ds`` (h' = Phi, h(-inf) = 0),
    so ``h(z) / Phi(z) = int_0^inf exp(log Phi(z - s) - log Phi(z)) ds``, an integrand in [0, 1] that is
    accurate for any z."""
    from scipy import integrate
    from scipy.special import log_ndtr

    base = float(log_ndtr(z))
    # the integrand decays like exp(-|z| s) for z << 0 and like a Gaussian beyond s = z otherwise
    upper = z + 40.0 if z > -1.0 else 60.0 / abs(z)
    with warnings.catch_warnings():  # quad may say it cannot reach 1e-12; the tests' tolerances are looser
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value, _ = integrate.quad(
            lambda s: np.exp(log_ndtr(z - s) - base), 0.0, upper, epsabs=0, epsrel=1e-12
        )
    return float(value)


@pytest.mark.parametrize(
    "z", [6.0, 1.0, 0.0, -0.5, -1.0, -1.0001, -3.0, -10.0, -40.0, -500.0, -999.0, -1001.0, -1e5]
)
def test_log_h_matches_quadrature_for_every_regime(z):
    from scipy.special import log_ndtr

    from warmbo.acquisition import log_h

    value, cdf_ratio, pdf_ratio = log_h(np.array([z]))
    ratio = _h_over_cdf_by_quadrature(z)  # h / Phi
    assert value[0] == pytest.approx(float(log_ndtr(z)) + np.log(ratio), rel=1e-10, abs=1e-10)
    # the oracle takes differences of logs of size z^2 / 2, which lose about z^2 eps / 2 (relative 1e-6
    # at z = -1e5): the ratios are compared to that precision
    rel = max(1e-8, 1e-15 * z * z)
    assert cdf_ratio[0] == pytest.approx(1.0 / ratio, rel=rel)
    # phi / h = (phi / Phi) / (h / Phi)
    log_pdf = -0.5 * z * z - 0.5 * np.log(2 * np.pi)
    assert pdf_ratio[0] == pytest.approx(np.exp(log_pdf - float(log_ndtr(z))) / ratio, rel=rel)


def test_log_h_of_an_array_is_log_h_of_each_element_in_every_mix_of_regimes():
    from warmbo.acquisition import log_h

    regimes = {
        "all above -1": [6.0, 0.0, -0.5, -0.99],
        "all below": [-1.0, -3.0, -1001.0],
        "all below, none beyond -1e3": [-1.0, -3.0, -40.0, -999.0],
        "above and beyond -1e3 only": [0.5, -1e4, -np.inf],
        "a NaN beside the far tail": [-1e5, np.nan, -1e8, -2.0],
        "mixed": [2.0, -1.0, -0.3, -40.0, -1e5, 0.7],
    }
    for z in regimes.values():
        together = log_h(np.array(z))
        alone = [log_h(np.array([v])) for v in z]
        for k in range(3):
            np.testing.assert_array_equal(together[k], [a[k][0] for a in alone])  # (NaN == NaN here)


def test_log_ei_equals_log_of_ei_and_its_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    X = rng.random((25, 3))
    y = np.sin(6 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2]
    gp = GP(RBF(np.array([0.3, 0.4, 0.5])), noise=1e-4).fit(X, y)
    bound = EI().bind(gp)
    assert bound.has_log
    U = rng.random((40, 3))
    log_values, log_grads = bound.log_values_and_gradients(U)
    values = bound(U)
    big = values > 1e-250
    assert big.sum() > 20
    np.testing.assert_allclose(log_values[big], np.log(values[big]), rtol=1e-9, atol=1e-9)
    assert np.all(np.isfinite(log_values))  # also where EI underflows
    h = 1e-6
    for i in range(3):
        step = np.zeros(3)
        step[i] = h
        fd = (bound.log_values_and_gradients(U + step)[0] - bound.log_values_and_gradients(U - step)[0]) / (
            2 * h
        )
        np.testing.assert_allclose(log_grads[:, i], fd, rtol=1e-4, atol=1e-5)


def test_log_ei_is_finite_far_below_the_incumbent_where_ei_underflows():
    gp = GP(RBF(0.05), noise=1e-6).fit([[0.1], [0.9]], [0.0, 40.0])
    bound = EI().bind(gp)
    U = np.array([[0.1], [0.12], [0.15]])
    assert np.any(bound(U) == 0.0)
    log_values, log_grads = bound.log_values_and_gradients(U)
    assert np.all(np.isfinite(log_values)) and np.all(np.isfinite(log_grads))
    # log EI rises toward the incumbent: the gradient points to larger x on this side
    assert np.all(log_grads[:, 0] > 0)


def test_pi_and_ucb_have_no_log_form():
    gp = GP(RBF(0.3), noise=1e-4).fit([[0.2], [0.8]], [0.0, 1.0])
    for acq in (PI(), UCB(Constant(4.0))):
        bound = acq.bind(gp)
        assert not bound.has_log
        with pytest.raises(NotImplementedError):
            bound.log_values_and_gradients(np.array([[0.5]]))
