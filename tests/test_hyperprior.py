"""MAP hyperparameters: the dimension-scaled log-normal priors (warmbo.models.hyperprior)."""

import math

import numpy as np
import pytest
from scipy.stats import lognorm

from warmbo.models import GP
from warmbo.models.defaults import default_model, ml2_model
from warmbo.models.hyperprior import DIMENSION_SCALED, DIMENSION_SCALED_LOG, LogNormalHyperprior


@pytest.mark.parametrize(
    "prior, jacobian", [(DIMENSION_SCALED, 0.0), (DIMENSION_SCALED_LOG, 1.0)], ids=["value", "log"]
)
def test_penalty_is_minus_the_lognormal_log_density(prior, jacobian):
    # oracle: scipy's log-normal density of ell and of the noise variance. "value" (BoTorch's MAP:
    # GPyTorch adds prior.log_prob(lengthscale), no Jacobian of its raw parametrisation) takes it as it
    # is; "log" adds log ell, the Jacobian of theta = log ell (a normal density of theta)
    d = 7
    mu = math.sqrt(2) + 0.5 * math.log(d)
    names = ["k1.value", "k2.lengthscale[0]", "k2.lengthscale[1]"]
    params = np.array([0.3, -1.0, 2.5, math.log(1e-3)])
    value, grad = prior.penalty(names, params, True, d)
    expected = -sum(
        lognorm.logpdf(math.exp(t), s=math.sqrt(3), scale=math.exp(mu)) + jacobian * t for t in params[1:3]
    )
    expected -= lognorm.logpdf(1e-3, s=1.0, scale=math.exp(-4.0)) + jacobian * math.log(1e-3)
    # the normalising constants: log s + log(2 pi) / 2 for each of the 3 terms
    const = 3 * 0.5 * math.log(2 * math.pi) + 2 * math.log(math.sqrt(3)) + math.log(1.0)
    assert value == pytest.approx(expected - const, rel=1e-12)
    assert grad[0] == 0.0  # the amplitude has no prior
    np.testing.assert_allclose(grad[1:3], (1.0 - jacobian) + (params[1:3] - mu) / 3.0)
    assert grad[3] == pytest.approx((1.0 - jacobian) + math.log(1e-3) + 4.0)


def test_the_value_reading_pulls_to_the_lognormal_mode_and_the_log_reading_to_its_median():
    d = 10
    mu = math.sqrt(2) + 0.5 * math.log(d)
    names = ["lengthscale[0]"]
    grid = np.linspace(-4.0, 6.0, 20001)
    for prior, expected in ((DIMENSION_SCALED, mu - 3.0), (DIMENSION_SCALED_LOG, mu)):
        values = [prior.penalty(names, np.array([t]), False, d)[0] for t in grid]
        assert grid[int(np.argmin(values))] == pytest.approx(expected, abs=1e-3)
        assert math.log(prior.lengthscale_mode(d)) == pytest.approx(expected, rel=1e-12)
    assert DIMENSION_SCALED.lengthscale_mode(d) == pytest.approx(0.65, abs=0.01)  # BoTorch's start
    with pytest.raises(ValueError, match="density_of"):
        LogNormalHyperprior(density_of="theta")


def test_map_objective_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    X = rng.random((12, 3))
    y = np.sin(4 * X).sum(axis=1)
    gp = default_model(3, 0).clone(hyperprior=DIMENSION_SCALED)
    ys = (y - y.mean()) / y.std()
    kernel = gp.kernel
    params = np.append(kernel.theta + 0.1, math.log(1e-2))
    noise = np.full(12, 1e-2)
    value, grad = gp.objective(X, ys, kernel, noise, True, params, "ml2")
    base, _ = gp.data_objective(X, ys, kernel, noise, True, params, "ml2")
    prior_value = DIMENSION_SCALED.penalty(kernel.theta_names, params, True, 3)[0]
    assert value - base == pytest.approx(prior_value, rel=1e-12)  # the objective is data + prior
    assert prior_value != 0.0
    h = 1e-6
    for j in range(params.size):
        e = np.zeros_like(params)
        e[j] = h
        fd = (
            gp.objective(X, ys, kernel, noise, True, params + e, "ml2")[0]
            - gp.objective(X, ys, kernel, noise, True, params - e, "ml2")[0]
        ) / (2 * h)
        assert grad[j] == pytest.approx(fd, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_few_points_in_many_dimensions_keep_lengthscales_inside_the_bounds(seed):
    # 6 points in 10-d on a nearly flat function: ML-II runs lengthscales to the bound 100 or below
    # 0.02, a wiggle no 6 points can support (seen here for each of these seeds); under the prior
    # (mode exp(sqrt(2) + log(10) / 2 - 3) = 0.65) every lengthscale stays well inside [0.1, 10]
    rng = np.random.default_rng(seed)
    X = rng.random((6, 10))
    y = 0.01 * X[:, 0] + 1e-3 * rng.standard_normal(6)
    ell_ml2 = np.exp(ml2_model(10, 0).fit(X, y).kernel_.theta[1:])
    mapped = ml2_model(10, 0).clone(hyperprior=DIMENSION_SCALED).fit(X, y)
    ell_map = np.exp(mapped.kernel_.theta[1:])
    assert np.any((ell_ml2 >= 99.0) | (ell_ml2 <= 0.02))
    assert np.all((ell_map > 0.1) & (ell_map < 10.0))
    assert mapped.log_hyperprior() < 0.0 and np.isfinite(mapped.log_hyperprior())


def test_bad_hyperprior_is_refused():
    with pytest.raises(ValueError, match="hyperprior"):
        GP(default_model(2).kernel, hyperprior="strong").fit(np.zeros((2, 2)), np.zeros(2))
