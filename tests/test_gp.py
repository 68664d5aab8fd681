"""The exact posterior against independent oracles: scikit-learn, dense formulas, brute-force refits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process import kernels as sk

from warmbo import GP
from warmbo._linalg import JitterWarning
from warmbo.kernels import RBF, Constant, Matern


def data(n=30, d=3, seed=0, noise=0.0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.sin(3 * X.sum(axis=1)) + noise * rng.standard_normal(n)
    return X, y, rng.random((15, d))


KERNELS = [
    (RBF([0.3, 0.5, 0.7]), sk.RBF([0.3, 0.5, 0.7])),
    (Matern(0.5, [0.4, 0.6, 0.9]), sk.Matern([0.4, 0.6, 0.9], nu=0.5)),
    (Matern(1.5, 0.4), sk.Matern(0.4, nu=1.5)),
    (Matern(2.5, [0.2, 0.3, 0.5]), sk.Matern([0.2, 0.3, 0.5], nu=2.5)),
    (Constant(2.5) * RBF(0.4), sk.ConstantKernel(2.5) * sk.RBF(0.4)),
]


@pytest.mark.parametrize("normalize_y", [False, True])
@pytest.mark.parametrize("ours, theirs", KERNELS, ids=lambda k: repr(k)[:25])
def test_posterior_equals_sklearn(ours, theirs, normalize_y):
    X, y, Xs = data()
    gp = GP(ours, noise=1e-3, normalize_y=normalize_y).fit(X, y)
    ref = GaussianProcessRegressor(theirs, alpha=1e-3, optimizer=None, normalize_y=normalize_y).fit(X, y)
    mean, cov = gp.predict(Xs, return_cov=True)
    ref_mean, ref_cov = ref.predict(Xs, return_cov=True)
    # both compute the same closed form in float64: agreement is at round-off level, 1e-8 is the spec
    np.testing.assert_allclose(mean, ref_mean, atol=1e-8)
    np.testing.assert_allclose(cov, ref_cov, atol=1e-8)
    _, std = gp.predict(Xs)
    np.testing.assert_allclose(std, np.sqrt(np.clip(np.diag(ref_cov), 0, None)), atol=1e-8)
    np.testing.assert_allclose(gp.log_marginal_likelihood(), ref.log_marginal_likelihood_value_, rtol=1e-10)


def test_sklearn_keywords_and_sample_y_match_gaussian_process_regressor():
    # a user test: code written for GaussianProcessRegressor met predict(return_std=True) -> TypeError
    # and no sample_y
    X, y, Xs = data()
    gp = GP(RBF(0.4), noise=1e-3, normalize_y=True).fit(X, y)
    ref = GaussianProcessRegressor(sk.RBF(0.4), alpha=1e-3, optimizer=None, normalize_y=True).fit(X, y)
    mean, std = gp.predict(Xs, return_std=True)
    ref_mean, ref_std = ref.predict(Xs, return_std=True)
    np.testing.assert_allclose(mean, ref_mean, atol=1e-8)
    np.testing.assert_allclose(std, ref_std, atol=1e-8)
    np.testing.assert_allclose(gp.predict(Xs, return_std=False), ref.predict(Xs), atol=1e-8)
    # (numpy's booleans too, from a flag computed with numpy: np.False_ is not False)
    np.testing.assert_allclose(gp.predict(Xs, return_std=np.False_), ref.predict(Xs), atol=1e-8)
    with pytest.raises(ValueError, match="at most one of return_std and return_cov"):
        gp.predict(Xs, return_cov=True, return_std=True)
    draws = gp.sample_y(Xs, n_samples=4000, random_state=0)
    assert draws.shape == (Xs.shape[0], 4000) == ref.sample_y(Xs, 4000).shape
    np.testing.assert_array_equal(draws, gp.sample_y(Xs, n_samples=4000, random_state=0))  # seeded
    # the draws' mean and covariance are the posterior's: 4000 draws put the sample mean within
    # 4.5 standard errors (sd / sqrt(4000)) of it, the covariance within 0.1 of the largest variance
    _, cov = ref.predict(Xs, return_cov=True)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(draws.mean(axis=1) - ref_mean) <= 4.5 * sd / np.sqrt(4000) + 1e-12)
    assert np.abs(np.cov(draws) - cov).max() <= 0.1 * np.diag(cov).max()
    # at an observed point of a near noise-free GP the covariance is singular: no warning, no NaN
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        at_data = gp.sample_y(np.vstack([X[:3], X[:3]]), n_samples=3, random_state=np.random.RandomState(1))
    assert np.isfinite(at_data).all()


def test_per_point_noise_equals_dense_formula():
    X, y, Xs = data(n=20)
    noise = np.linspace(1e-3, 0.5, 20)
    kernel = Matern(2.5, 0.3)
    gp = GP(kernel, noise=noise).fit(X, y)
    A = kernel(X, X) + np.diag(noise)
    Ks = kernel(X, Xs)
    mean = Ks.T @ np.linalg.solve(A, y)
    cov = kernel(Xs, Xs) - Ks.T @ np.linalg.solve(A, Ks)
    got_mean, got_cov = gp.predict(Xs, return_cov=True)
    np.testing.assert_allclose(got_mean, mean, atol=1e-9)
    np.testing.assert_allclose(got_cov, cov, atol=1e-9)


def test_rank_one_updates_equal_refactorisation_after_200_additions():
    X, y, Xs = data(n=210, d=2, seed=1, noise=0.1)
    gp = GP(Matern(2.5, [0.3, 0.4]), noise=0.01).fit(X[:10], y[:10])
    for i in range(10, 210):
        gp.add(X[i], y[i : i + 1])
    ref = GP(Matern(2.5, [0.3, 0.4]), noise=0.01).fit(X, y)
    assert gp.n_observations == 210
    np.testing.assert_allclose(gp.L_, ref.L_, atol=1e-9)
    np.testing.assert_allclose(gp.alpha_, ref.alpha_, atol=1e-9)
    for a, b in zip(gp.predict(Xs, return_cov=True), ref.predict(Xs, return_cov=True), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-9)


def test_block_update_with_per_point_noise_and_frozen_standardisation():
    X, y, Xs = data(n=40, seed=2)
    noise = np.full(40, 0.05)
    noise[25:] = 0.2
    gp = GP(RBF(0.4), noise=noise[:25], normalize_y=True).fit(X[:25], y[:25])
    with pytest.raises(ValueError, match="per-point noise"):
        gp.add(X[25:], y[25:])
    gp.add(X[25:], y[25:], noise=0.2)
    # the dense oracle with the standardisation frozen at fit()
    m, s = y[:25].mean(), y[:25].std()
    A = RBF(0.4)(X, X) + np.diag(noise)
    Ks = RBF(0.4)(X, Xs)
    mean = Ks.T @ np.linalg.solve(A, (y - m) / s) * s + m
    np.testing.assert_allclose(gp.predict(Xs)[0], mean, atol=1e-9)
    np.testing.assert_allclose(gp.y_train_, y, atol=1e-12)


def test_add_to_unfitted_model_conditions_on_the_points():
    X, y, Xs = data(n=10)
    a = GP(RBF(0.5), noise=1e-2).add(X, y)
    b = GP(RBF(0.5), noise=1e-2).fit(X, y)
    np.testing.assert_allclose(a.predict(Xs)[0], b.predict(Xs)[0], atol=1e-12)


def test_info_gain_two_ways():
    X, y, _ = data(n=25, d=2, seed=3)
    lam = 0.05
    kernel = Matern(1.5, 0.3)
    gp = GP(kernel, noise=lam).fit(X, y)
    dense = 0.5 * np.linalg.slogdet(np.eye(25) + kernel(X, X) / lam)[1]
    # chain rule: sum of 1/2 log(1 + sigma_{s-1}^2(x_s)/lam) over the sequence
    sequential = 0.0
    seq = GP(kernel, noise=lam)
    for i in range(25):
        std = seq.predict(X[i : i + 1])[1][0]
        sequential += 0.5 * np.log1p(std**2 / lam)
        seq.add(X[i : i + 1], y[i : i + 1])
    np.testing.assert_allclose(gp.info_gain(), dense, rtol=1e-10)
    np.testing.assert_allclose(gp.info_gain(), sequential, rtol=1e-10)
    np.testing.assert_allclose(seq.info_gain(), dense, rtol=1e-10)


def test_rkhs_norm_is_sqrt_alpha_K_alpha():
    X, y, _ = data(n=20)
    kernel = RBF(0.3)
    gp = GP(kernel, noise=0.1).fit(X, y)
    alpha = np.linalg.solve(kernel(X, X) + 0.1 * np.eye(20), y)
    np.testing.assert_allclose(gp.rkhs_norm(), np.sqrt(alpha @ kernel(X, X) @ alpha), rtol=1e-9)


def test_loo_equals_brute_force_refits():
    X, y, _ = data(n=15, seed=4, noise=0.05)
    gp = GP(Matern(2.5, 0.4), noise=0.01, normalize_y=True).fit(X, y)
    mean, std = gp.loo()
    for i in range(15):
        keep = np.arange(15) != i
        # same frozen standardisation: condition a fixed-hyperparameter model on the other points
        sub = GP(Matern(2.5, 0.4), noise=0.01).fit(X[keep], (y[keep] - gp.y_mean_) / gp.y_std_)
        m, s = sub.predict(X[i : i + 1])
        np.testing.assert_allclose(mean[i], m[0] * gp.y_std_ + gp.y_mean_, atol=1e-9)
        np.testing.assert_allclose(std[i] ** 2, (s[0] ** 2 + 0.01) * gp.y_std_**2, rtol=1e-8)


@pytest.mark.parametrize("kind", ["ml2", "loo", "loo-mse"])
def test_objective_gradients_match_finite_differences(kind):
    X, y, _ = data(n=20, d=2, seed=5, noise=0.1)
    kernel = Constant(1.3) * Matern(2.5, [0.3, 0.6])
    gp = GP(kernel, noise=0.02)
    params = np.append(kernel.theta, np.log(0.02))
    noise = np.full(20, 0.02)
    value, grad = gp.objective(X, y, kernel, noise, True, params, kind)
    numeric = _central_gradient(gp, X, y, kernel, noise, params, kind)
    # central differences are accurate to O(h^2) plus round-off ~ 1e-10 / h: 1e-5 relative is safe
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)
    if kind == "ml2":
        ref = GP(kernel, noise=0.02).fit(X, y)
        np.testing.assert_allclose(value, -ref.log_marginal_likelihood(), rtol=1e-10)


def test_ml2_reaches_sklearn_optimum():
    X, y, _ = data(n=40, seed=6, noise=0.05)
    gp = GP(Constant(1.0) * RBF([1.0, 1.0, 1.0]), noise=1e-2, optimizer="ml2", n_restarts=3, seed=0).fit(X, y)
    ref = GaussianProcessRegressor(
        sk.ConstantKernel(1.0, (1e-5, 1e5)) * sk.RBF([1.0] * 3, (1e-3, 1e3))
        + sk.WhiteKernel(1e-2, (1e-8, 1.0)),
        alpha=0.0,
        n_restarts_optimizer=3,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref.fit(X, y)
    # same model family and bounds: our optimum must be at least as good as scikit-learn's
    assert gp.log_marginal_likelihood() >= ref.log_marginal_likelihood_value_ - 1e-6
    assert gp.kernel_ != gp.kernel and gp.noise_level_ is not None


def test_loo_fitting_improves_the_loo_error():
    X, y, _ = data(n=30, d=2, seed=7, noise=0.05)
    start = GP(RBF(3.0), noise=1e-2).fit(X, y)
    fitted = GP(RBF(3.0), noise=1e-2, optimizer="loo-mse", seed=0).fit(X, y)
    err_start = np.mean((start.loo()[0] - y) ** 2)
    err_fitted = np.mean((fitted.loo()[0] - y) ** 2)
    assert err_fitted < 0.5 * err_start


def test_predict_gradient_matches_finite_differences():
    X, y, _ = data(n=20, d=2, seed=8)
    gp = GP(Constant(2.0) * Matern(2.5, [0.3, 0.5]), noise=1e-3, normalize_y=True).fit(X, y)
    x = np.array([0.37, 0.61])
    mean, std, dmean, dstd = gp.predict_gradient(x)
    m0, s0 = gp.predict(x[None])
    np.testing.assert_allclose([mean, std], [m0[0], s0[0]], rtol=1e-12)
    h = 1e-6
    num_mean = [
        (gp.predict((x + h * e)[None])[0][0] - gp.predict((x - h * e)[None])[0][0]) / (2 * h)
        for e in np.eye(2)
    ]
    num_std = [
        (gp.predict((x + h * e)[None])[1][0] - gp.predict((x - h * e)[None])[1][0]) / (2 * h)
        for e in np.eye(2)
    ]
    np.testing.assert_allclose(dmean, num_mean, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(dstd, num_std, rtol=1e-5, atol=1e-8)


def test_prior_prediction_before_fit():
    gp = GP(Constant(4.0) * RBF(0.5))
    mean, std = gp.predict(np.zeros((3, 2)))
    np.testing.assert_allclose(mean, 0.0)
    np.testing.assert_allclose(std, 2.0)


def test_gp_without_a_kernel_fits_and_predicts_with_the_default_kernel():
    # before: GP() raised TypeError (kernel was required), while scikit-learn's
    # GaussianProcessRegressor() has a default kernel
    from sklearn.base import clone

    from warmbo.models import default_model

    rng = np.random.default_rng(0)
    X = rng.random((12, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    gp = GP()
    assert gp.kernel is None and clone(gp).kernel is None
    prior_mean, prior_std = gp.predict(X[:2])  # before fit: the default kernel's prior
    np.testing.assert_allclose(prior_mean, 0.0)
    np.testing.assert_allclose(prior_std, 1.0)
    mean, std = gp.fit(X, y).predict(X)
    assert gp.kernel is None  # (scikit-learn's convention: the argument is kept as given)
    assert repr(gp.kernel_) == repr(default_model(3).kernel)  # Constant * Matern-5/2, 3 lengthscales
    np.testing.assert_allclose(gp.kernel_.theta, default_model(3).kernel.theta)
    np.testing.assert_allclose(mean, y, atol=1e-3)
    assert std.shape == (12,) and np.all(np.isfinite(std))
    np.testing.assert_allclose(mean, GP(default_model(3).kernel).fit(X, y).predict(X).mean)
    fitted = GP(optimizer="ml2", normalize_y=True, n_restarts=1, seed=0).fit(X, y)  # fits its hyperparameters
    assert not np.allclose(fitted.kernel_.theta, gp.kernel_.theta)
    with pytest.raises(
        ValueError, match="kernel must be a warmbo Kernel \\(or None for the default kernel\\)"
    ):
        GP("rbf").fit(X, y)


def test_duplicate_points_without_noise_warn_with_jitter_and_stay_finite():
    X = np.array([[0.1], [0.1], [0.5], [0.5]])
    y = np.array([1.0, 1.0, 0.0, 0.0])
    with pytest.warns(JitterWarning, match="jitter"):
        gp = GP(RBF(0.3), noise=0.0).fit(X, y)
    assert gp.jitter_ > 0
    mean, std = gp.predict(np.linspace(-5, 5, 101)[:, None])
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std >= 0)
    with pytest.raises(ValueError, match="info_gain"):
        gp.info_gain()


def test_predict_far_from_data_and_at_data_is_finite():
    X, y, _ = data(n=30, d=2)
    gp = GP(RBF(0.01), noise=1e-10).fit(X, y)
    mean, std = gp.predict(np.vstack([X, X + 1e3]))
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(std)) and np.all(std >= 0)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: GP(RBF(0.5)).fit([[np.nan]], [1.0]), "^X contains NaN"),
        (lambda: GP(RBF(0.5)).fit([[0.0]], [np.inf]), "^y contains NaN or inf"),
        (lambda: GP(RBF(0.5)).fit(np.zeros((3, 2)), np.zeros(4)), "^y must have length 3"),
        (lambda: GP(RBF(0.5)).fit(np.zeros((3, 2, 1)), np.zeros(3)), "^X must have shape"),
        (lambda: GP(RBF(0.5), noise=-1.0).fit([[0.0]], [1.0]), "^noise must be non-negative"),
        (lambda: GP(RBF(0.5), noise=[0.1, 0.2]).fit([[0.0]], [1.0]), "^noise must have length 1"),
        (lambda: GP(RBF([0.5, 0.5])).fit(np.zeros((3, 3)), np.zeros(3)), r"^X must have shape \(n, 2\)"),
        (lambda: GP(RBF(0.5), optimizer="bfgs").fit([[0.0]], [1.0]), "^optimizer must be"),
        (lambda: GP("rbf").fit([[0.0]], [1.0]), "^kernel must be"),
        (
            lambda: GP(RBF(0.5)).fit(np.zeros((3, 2)), np.zeros(3)).predict(np.zeros((2, 3))),
            "^X must have shape",
        ),
        (
            lambda: GP(RBF(0.5)).fit(np.zeros((3, 2)), np.zeros(3)).add([[0.0, np.nan]], [1.0]),
            "^X_new contains",
        ),
        (lambda: RBF(-1.0), "^lengthscale must be positive"),
    ],
)
def test_bad_input_raises_value_error_naming_the_argument(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_failed_add_leaves_model_unchanged():
    X, y, Xs = data(n=10)
    gp = GP(RBF(0.5), noise=1e-2).fit(X, y)
    before = gp.predict(Xs)
    with pytest.raises(ValueError):
        gp.add([[0.1, 0.2, np.nan]], [1.0])
    with pytest.raises(ValueError):
        gp.add([[0.1, 0.2, 0.3]], [np.nan])
    assert gp.n_observations == 10
    np.testing.assert_array_equal(gp.predict(Xs)[0], before[0])


def test_failed_fit_keeps_the_previous_posterior():
    X, y, Xs = data(n=10)
    gp = GP(RBF(0.5), noise=1e-2).fit(X, y)
    before = gp.predict(Xs)
    gp.noise = -1.0
    with pytest.raises(ValueError, match="noise"):
        gp.fit(X, y)
    gp.noise = 1e-2

    class Indefinite(RBF):
        def evaluate(self, X, Y):  # not a kernel: -k is negative definite
            return -super().evaluate(X, Y)

    gp.kernel = Indefinite(0.5)
    with pytest.raises(ValueError, match="positive definite"):
        gp.fit(X, y)
    assert gp.n_observations == 10
    np.testing.assert_array_equal(gp.predict(Xs)[0], before[0])


def test_outputs_near_the_largest_float_are_standardised():
    # before: np.std overflowed and the fit raised "too large to standardise"; the moments are now
    # computed on y / max|y| where numpy's overflow, and the sds on the user's scale stay finite
    gp = GP(RBF(0.5), noise=1e-6, normalize_y=True).fit([[0.0], [0.5], [1.0]], [1e308, 1e308, 0.0])
    mean, sd = gp.predict(np.array([[0.0], [0.25], [1.0]]))
    assert np.all(np.isfinite(mean)) and np.all(np.isfinite(sd))
    assert mean[0] == pytest.approx(1e308, rel=1e-3) and abs(mean[2]) < 1e305
    assert sd[1] > sd[0] >= 0.0  # between observations the posterior is wider


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"noise": "a"}, "^noise must be"),
        ({"n_restarts": "a"}, "^n_restarts"),
        ({"n_restarts": 2.5}, "^n_restarts"),
        ({"noise_bounds": (1.0,)}, "^noise_bounds"),
        ({"normalize_y": "no"}, "^normalize_y"),
        ({"seed": 1.5}, "^seed"),
        ({"fit_mean": "yes"}, "^fit_mean"),
        ({"fit_tolerance": 0.0}, "^fit_tolerance"),
        ({"fit_tolerance": 1.0}, "^fit_tolerance"),
        ({"fit_tolerance": True}, "^fit_tolerance"),
    ],
)
def test_bad_settings_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GP(RBF(0.5), **kwargs).fit([[0.0], [1.0]], [0.0, 1.0])


def test_restarts_on_a_subset_reach_the_full_multistart_optimum_at_a_fraction_of_the_cost():
    # n = 400 > restart_points = 100: the random restarts search on 100 rows, then one full-data
    # local search runs from the best candidate. On this smooth 3-d function both fits must land on
    # the same optimum: log marginal likelihoods within 0.05% (L-BFGS-B's tolerance on |lml| ~ 500).
    from warmbo.models.defaults import default_model

    rng = np.random.default_rng(7)
    X = rng.random((400, 3))
    y = np.sin(3 * X).sum(axis=1) + 0.05 * rng.standard_normal(400)
    full = default_model(3, 0).clone(restart_points=None).fit(X, y)
    subset = default_model(3, 0).clone(restart_points=100).fit(X, y)
    a, b = full.log_marginal_likelihood(), subset.log_marginal_likelihood()
    assert b >= a - 5e-4 * abs(a)
    with pytest.raises(ValueError, match="restart_points"):
        default_model(3, 0).clone(restart_points=1).fit(X, y)


def _central_gradient(gp, X, y, kernel, noise, params, kind):
    """Central differences (h = 1e-6) of ``gp.objective`` in each hyperparameter, noise fitted."""
    h = 1e-6
    return np.array(
        [
            (
                gp.objective(X, y, kernel, noise, True, params + h * e, kind)[0]
                - gp.objective(X, y, kernel, noise, True, params - h * e, kind)[0]
            )
            / (2 * h)
            for e in np.eye(params.size)
        ]
    )


def _universal_kriging_loo(K, y, i):
    """The mean and variance of y_i from the other points alone, the constant mean re-estimated from
    them (GLS) with its own uncertainty (a flat prior on it: universal kriging), densely."""
    keep = np.arange(len(y)) != i
    Ainv = np.linalg.inv(K[np.ix_(keep, keep)])
    ones = np.ones(len(y) - 1)
    c = ones @ Ainv @ y[keep] / (ones @ Ainv @ ones)
    k = K[i, keep]
    h = 1.0 - k @ Ainv @ ones  # (the constant's own uncertainty)
    return c + k @ Ainv @ (y[keep] - c), K[i, i] - k @ Ainv @ k + h**2 / (ones @ Ainv @ ones)


def _gls_constant(X, ys, kernel, noise):
    """The generalised least-squares constant ``1^T A^-1 y / 1^T A^-1 1`` with a dense inverse."""
    A_inv = np.linalg.inv(kernel.evaluate(X, X) + noise * np.eye(X.shape[0]))
    return float(A_inv.sum(axis=0) @ ys / A_inv.sum())


def _lml(X, r, kernel, noise):
    """Dense log marginal likelihood of the residuals r (R&W eq. 2.30)."""
    A = kernel.evaluate(X, X) + noise * np.eye(X.shape[0])
    sign, logdet = np.linalg.slogdet(A)
    return float(-0.5 * r @ np.linalg.solve(A, r) - 0.5 * logdet - 0.5 * len(r) * np.log(2 * np.pi))


def test_fit_mean_is_the_gls_constant_and_far_predictions_return_to_it():
    X, y, _ = data(n=25, d=2, seed=3)
    y = y + 4.0  # a level far from 0, on the user's scale
    kernel = Constant(1.2) * Matern(2.5, [0.2, 0.3])
    for normalize_y in (False, True):
        gp = GP(kernel, noise=1e-3, normalize_y=normalize_y, fit_mean=True).fit(X, y)
        centre, scale = (y.mean(), y.std()) if normalize_y else (0.0, 1.0)
        c = _gls_constant(X, (y - centre) / scale, kernel, 1e-3)
        assert gp.y_mean_ == pytest.approx(centre + c * scale, rel=1e-10)
        far_mean, _ = gp.predict([[40.0, 40.0]])
        assert far_mean[0] == pytest.approx(centre + c * scale, rel=1e-10)
        # the data are fitted as before: the constant is part of the prior, not a shift of the data
        np.testing.assert_allclose(gp.y_train_, y, rtol=1e-12)
        assert gp.y_mean_ != pytest.approx(y.mean(), rel=1e-3)  # differs from the plain data mean


def test_fit_mean_profiles_the_constant_out_of_the_ml2_objective():
    X, y, _ = data(n=20, d=2, seed=5, noise=0.1)
    y = y + 2.0
    kernel = Constant(1.3) * Matern(2.5, [0.3, 0.6])
    gp = GP(kernel, noise=0.02, fit_mean=True)
    params = np.append(kernel.theta, np.log(0.02))
    noise = np.full(20, 0.02)
    value, grad = gp.objective(X, y, kernel, noise, True, params, "ml2")
    # the value is minus the likelihood at the best constant, and no other constant does better
    c = _gls_constant(X, y, kernel, 0.02)
    assert value == pytest.approx(-_lml(X, y - c, kernel, 0.02), rel=1e-10)
    for shift in (-0.1, 0.1):
        assert -_lml(X, y - c - shift, kernel, 0.02) > value
    # the gradient is that of the profiled objective (central differences, as for the plain objective)
    numeric = _central_gradient(gp, X, y, kernel, noise, params, "ml2")
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)
    fitted = GP(kernel, noise=0.02, optimizer="ml2", fit_mean=True, seed=0).fit(X, y)
    plain = GP(kernel, noise=0.02, optimizer="ml2", seed=0).fit(X, y)
    # a free constant (the plain GP's is 0 here, normalize_y off) can only raise the maximised
    # likelihood of y; y's level of about 2 makes it much higher
    assert fitted.log_marginal_likelihood() > plain.log_marginal_likelihood() + 1.0


@pytest.mark.parametrize("kind", ["loo", "loo-mse"])
def test_fit_mean_reestimates_the_constant_without_each_held_out_point_in_the_loo_objectives(kind):
    # a user test: the LOO kinds ignored fit_mean, so y + 100 changed the fitted hyperparameters (the
    # LOO-MSE fit's error on fresh points grew 9 times). Oracle: for each i, the GLS constant and the
    # posterior of y_i from the other n - 1 points alone, with the constant's uncertainty (flat prior)
    X, y, _ = data(n=15, d=2, seed=7, noise=0.1)
    kernel = Constant(1.1) * Matern(2.5, [0.3, 0.5])
    gp = GP(kernel, noise=0.02, fit_mean=True)
    params = np.append(kernel.theta, np.log(0.02))
    noise = np.full(15, 0.02)
    value, grad = gp.objective(X, y, kernel, noise, True, params, kind)
    K = kernel.evaluate(X, X) + 0.02 * np.eye(15)
    dense = [_universal_kriging_loo(K, y, i) for i in range(15)]
    terms = []
    for i, (mean, var) in enumerate(dense):
        r = y[i] - mean
        terms.append(
            r**2 if kind == "loo-mse" else -(-0.5 * np.log(var) - r**2 / (2 * var) - 0.5 * np.log(2 * np.pi))
        )
    assert value == pytest.approx(np.mean(terms) if kind == "loo-mse" else np.sum(terms), rel=1e-9)
    assert gp.objective(X, y + 100.0, kernel, noise, True, params, kind)[0] == pytest.approx(value, rel=1e-9)
    numeric = _central_gradient(gp, X, y, kernel, noise, params, kind)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)
    # GP.loo() gives the same held-out predictions (a review: it kept the constant fitted with y_i)
    fixed = GP(kernel, noise=0.02, optimizer=None, normalize_y=False, fit_mean=True).fit(X, y)
    loo_mean, loo_sd = fixed.loo()
    np.testing.assert_allclose(loo_mean, [m for m, _ in dense], rtol=1e-9)
    np.testing.assert_allclose(loo_sd, [np.sqrt(v) for _, v in dense], rtol=1e-9)
    shifted = [
        GP(kernel, noise=0.02, optimizer=kind, fit_mean=True, seed=0).fit(X, y + s) for s in (0.0, 100.0)
    ]
    np.testing.assert_allclose(shifted[0].kernel_.theta, shifted[1].kernel_.theta, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fit_mean", [False, True])
@pytest.mark.parametrize("k", [0, 1, 7])
def test_extend_equals_a_fresh_fit_on_all_the_data(k, fit_mean):
    # the factor is extended by k rows, the standardisation, the fitted mean and L^-1 y are recomputed
    # from all of y (here every y value changes too, as a new output transform would change them)
    X, y, Xs = data(n=30, d=3, seed=4)
    rng = np.random.default_rng(9)
    X_all = np.vstack([X, rng.random((k, 3))])
    y_all = np.sin(3 * X_all.sum(axis=1)) ** 3 + 0.5
    kernel = Constant(1.4) * Matern(2.5, [0.3, 0.4, 0.5])
    gp = GP(kernel, noise=1e-3, normalize_y=True, fit_mean=fit_mean).fit(X, y)
    extended = gp.extend(X_all, y_all)
    fresh = GP(kernel, noise=1e-3, normalize_y=True, fit_mean=fit_mean).fit(X_all, y_all)
    for got, want in zip(extended.predict(Xs), fresh.predict(Xs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(extended.L_, fresh.L_, rtol=1e-10, atol=1e-12)
    assert extended.y_mean_ == pytest.approx(fresh.y_mean_, rel=1e-12)
    assert extended.log_marginal_likelihood() == pytest.approx(fresh.log_marginal_likelihood(), rel=1e-10)
    np.testing.assert_allclose(gp.y_train_, y)  # the GP it extends is unchanged
    assert gp.n_observations == 30


def test_extend_falls_back_to_a_fit_when_the_inputs_are_not_a_prefix_and_needs_fixed_hyperparameters():
    X, y, Xs = data(n=20, d=3, seed=6)
    gp = GP(RBF(0.4), noise=1e-3).fit(X, y)
    shuffled = X[::-1]
    got = gp.extend(shuffled, y[::-1])
    want = GP(RBF(0.4), noise=1e-3).fit(shuffled, y[::-1])
    np.testing.assert_allclose(got.predict(Xs)[0], want.predict(Xs)[0], rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="optimizer=None"):
        GP(RBF(0.4), noise=1e-3, optimizer="ml2").fit(X, y).extend(X, y)


def test_extend_refactorises_when_the_new_block_cannot_be_factorised(monkeypatch):
    # the block update's Schur complement can lose positive definiteness to round-off where the whole
    # matrix, jittered, still factorises: extend() then fits a clone. Failure injected into the real
    # block update; the result equals a fresh fit, and a matrix nothing can factorise still raises
    from warmbo._linalg import NotPositiveDefiniteError
    from warmbo.models import gp as gp_module

    X, y, Xs = data(n=20, d=3, seed=7)
    X2 = np.vstack([X, np.random.default_rng(8).random((2, 3))])
    y2 = np.concatenate([y, [0.1, 0.2]])
    gp = GP(RBF(0.4), noise=1e-3, normalize_y=True).fit(X, y)

    def failing(*args, **kwargs):
        raise NotPositiveDefiniteError("K + noise (new block) is not positive definite (injected)")

    monkeypatch.setattr(gp_module, "cholesky_append", failing)
    got = gp.extend(X2, y2)
    want = GP(RBF(0.4), noise=1e-3, normalize_y=True).fit(X2, y2)
    for a, b in zip(got.predict(Xs), want.predict(Xs), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    monkeypatch.setattr(gp_module, "cholesky", failing)
    with pytest.raises(NotPositiveDefiniteError):
        gp.extend(X2, y2)


def test_fit_tolerance_is_the_hyperparameter_search_stopping_rule(monkeypatch):
    # The tolerance reaches L-BFGS-B as its ftol: recorded for every start, and a loose one stops the
    # search from a poor start (lengthscale 5 on a function that varies on 0.2) before the tight one
    # does, at a lower log marginal likelihood.
    import warmbo.models.gp as gp_module
    from warmbo.models.gp import _FIT_FTOL, SCIPY_FTOL

    seen = []
    minimize = gp_module.minimize_lbfgsb

    def recording(*args, **kwargs):
        seen.append(kwargs["ftol"])
        return minimize(*args, **kwargs)

    monkeypatch.setattr(gp_module, "minimize_lbfgsb", recording)
    X = np.random.default_rng(0).uniform(0, 1, (30, 1))
    y = np.sin(12 * X[:, 0])
    fits = {}
    for tolerance in (0.5, SCIPY_FTOL):
        seen.clear()
        gp = GP(RBF(5.0, bounds=(1e-2, 1e2)), noise=1e-4, optimizer="ml2", n_restarts=2, seed=0)
        fits[tolerance] = gp.clone(fit_tolerance=tolerance).fit(X, y)
        assert seen == [tolerance] * 3  # the current hyperparameters and two restarts
    assert GP(RBF(1.0)).fit_tolerance == _FIT_FTOL == 1e-6
    loose, tight = fits[0.5].log_marginal_likelihood(), fits[SCIPY_FTOL].log_marginal_likelihood()
    assert tight > loose + 1.0


def test_the_transfer_models_fit_to_scipys_tolerance_and_the_default_model_to_1e6():
    from warmbo.models import default_model, ml2_model
    from warmbo.models.gp import SCIPY_FTOL
    from warmbo.transfer.baselines import RGPE
    from warmbo.transfer.envelope import Envelope

    assert SCIPY_FTOL == pytest.approx(2.220446049250313e-09)
    assert ml2_model(3).fit_tolerance == SCIPY_FTOL
    assert default_model(3).fit_tolerance == 1e-6
    rng = np.random.default_rng(0)
    sources = [(rng.uniform(0, 1, (12, 2)), rng.normal(size=12)) for _ in range(2)]
    X, y = rng.uniform(0, 1, (5, 2)), rng.normal(size=5)
    rgpe = RGPE(source=sources, seed=0).fit(X, y)
    assert {gp.fit_tolerance for gp in [*rgpe.source_models_, rgpe.target_model_]} == {SCIPY_FTOL}
    envelope = Envelope(source=sources, seed=0).fit(X, y)
    assert {gp.fit_tolerance for gp in [*envelope.source_models_, envelope.gp_]} == {SCIPY_FTOL}


@pytest.mark.parametrize("fit_mean", [False, True])
def test_tracked_points_are_predicted_as_a_fresh_computation_through_add_extend_and_copies(fit_mean):
    # track() keeps V = L^-1 k_t(C); predict(screen_) then uses it (O(n m)), and add/extend append the
    # new rows. Oracle: the same GP's full computation on a copy of C (not the tracked object), and a
    # fresh fit on all the data; 1e-9 relative covers the different order of the same sums
    import copy

    X, y, _ = data(n=25, d=3, seed=11)
    rng = np.random.default_rng(12)
    C = rng.random((40, 3))
    kernel = Constant(1.3) * Matern(2.5, [0.3, 0.4, 0.5])
    gp = GP(kernel, noise=1e-3, normalize_y=True, fit_mean=fit_mean).fit(X, y).track(C)
    screen = gp.screen_
    assert screen is not C and not screen.flags.writeable
    np.testing.assert_array_equal(screen, C)

    def check(model, X_all, y_all):
        assert model.screen_ is screen  # the same object: predict() recognises it
        got = model.predict(screen)
        direct = model.predict(screen.copy())
        fresh = GP(kernel, noise=1e-3, normalize_y=True, fit_mean=fit_mean).fit(X_all, y_all).predict(C)
        for a, b, c in zip(got, direct, fresh, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(a, c, rtol=1e-8, atol=1e-10)

    check(gp, X, y)
    X1, y1 = rng.random((3, 3)), rng.standard_normal(3)
    extended = gp.extend(np.vstack([X, X1]), np.concatenate([y, y1]) * 2.0)  # every y changes too
    check(extended, np.vstack([X, X1]), np.concatenate([y, y1]) * 2.0)
    same_rows = gp.extend(X, y + 1.0)  # no new rows: the screen carries over as it is
    check(same_rows, X, y + 1.0)
    fantasy = copy.deepcopy(extended)  # as suggest() fantasises pending points
    X2 = rng.random((2, 3))
    fantasy.add(X2, np.array([0.1, -0.2]))
    assert fantasy.screen_ is not screen
    got, want = fantasy.predict(fantasy.screen_), fantasy.predict(C)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    check(extended, np.vstack([X, X1]), np.concatenate([y, y1]) * 2.0)  # the copy's add left it alone


def test_predicting_tracked_points_reads_what_was_kept_and_copies_keep_them_read_only(monkeypatch):
    import copy
    import pickle

    X, y, _ = data(n=20, d=2, seed=17)
    C = np.random.default_rng(18).random((16, 2))
    gp = GP(RBF([0.3, 0.4]), noise=1e-3).fit(X, y).track(C)
    want = gp.predict(C)
    for other in (copy.deepcopy(gp), pickle.loads(pickle.dumps(gp))):
        assert not other.screen_.flags.writeable  # predict() recognises it by identity
        with pytest.raises(ValueError, match="read-only"):
            other.screen_[0, 0] = 0.5

        def no_cross(self, X):  # the fast path needs no kernel against the training inputs
            raise AssertionError("k_t(C) computed again")

        monkeypatch.setattr(GP, "_cross", no_cross)
        for got, expected in zip(other.predict(other.screen_), want, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
        monkeypatch.undo()


def test_tracking_is_kept_only_while_the_hyperparameters_are_and_rejects_bad_points():
    X, y, _ = data(n=20, d=2, seed=13)
    C = np.random.default_rng(14).random((16, 2))
    gp = GP(RBF([0.3, 0.4]), noise=1e-3).fit(X, y).track(C)
    screen = gp.screen_
    assert gp.track(C).screen_ is screen and gp.track(screen).screen_ is screen  # equal points: no-op
    gp.track(C[:8])
    assert gp.screen_.shape == (8, 2)
    # new points beside old ones: the old ones' columns are kept, the new ones solved for
    mixed = np.vstack([np.random.default_rng(15).random((5, 2)), C[3:8], C[:2]])
    gp.track(mixed)
    for got, want in zip(gp.predict(gp.screen_), gp.predict(mixed), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    gp.fit(X[:10], y[:10])  # a refit forgets the points
    assert gp.screen_ is None
    with pytest.raises(ValueError, match=r"C must have shape \(n, 2\)"):
        gp.track(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="C contains NaN"):
        gp.track(np.full((2, 2), np.nan))
    unfitted = GP(RBF(0.3), noise=1e-3).track(C)  # the prior: nothing to keep yet
    np.testing.assert_allclose(unfitted.predict(unfitted.screen_)[1], 1.0)
    # the full covariance never takes the fast path
    gp = GP(RBF([0.3, 0.4]), noise=1e-3).fit(X, y).track(C)
    _, cov = gp.predict(gp.screen_, return_cov=True)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), gp.predict(C)[1], rtol=1e-9, atol=1e-12)


def test_matching_rows_finds_equal_rows_and_only_those():
    from warmbo.models.gp import _matching_rows

    rng = np.random.default_rng(16)
    B = rng.random((300, 4))
    A = np.vstack([B[[5, 7, 299]], rng.random((2, 4)), B[:1], B[5] + 1e-15])
    np.testing.assert_array_equal(_matching_rows(A, B), [5, 7, 299, -1, -1, 0, -1])
    np.testing.assert_array_equal(_matching_rows(B[:3], np.vstack([B, B[:3]])) % 300, [0, 1, 2])
    np.testing.assert_array_equal(_matching_rows(A, np.zeros((0, 4))), np.full(7, -1))
    # two different rows, each matched to its own equal (and never to the other)
    w = np.cos(np.arange(1, 3) * 1.618)
    u = np.array([[0.5, 0.5]])
    v = u + np.array([[w[1], -w[0]]]) * 0.25
    got = _matching_rows(np.vstack([u, v]), np.vstack([v, u]))
    assert got[0] in (1, -1) and got[1] in (0, -1)


def test_matching_rows_gives_the_k_d_tree_querys_indices_whichever_way_it_finds_them():
    # the dict of rows is used when B's rows are distinct and nothing is nearly zero; repeated rows,
    # -0.0 and subnormal coordinates (closer than tiny to another value: equal for the query) included
    from scipy.spatial import cKDTree

    from warmbo.models.gp import _matching_rows

    def query(A, B):
        distance, index = cKDTree(B).query(A, p=np.inf, distance_upper_bound=np.finfo(float).tiny)
        return np.where(np.isfinite(distance), index, -1)

    rng = np.random.default_rng(5)
    for case in range(300):
        d, k = int(rng.integers(1, 5)), int(rng.integers(1, 40))
        B = rng.integers(0, 3, size=(k, d)) / 2.0 if case % 2 else rng.random((k, d))
        A = np.vstack([B[rng.integers(0, k, size=int(rng.integers(0, 40)))], rng.random((3, d))])
        if case % 5 == 0:
            A[0, 0], B[0, 0] = -0.0, 0.0
        if case % 7 == 0:
            A[-1, 0], B[-1, 0] = 1e-300, 2e-300
        np.testing.assert_array_equal(_matching_rows(A, B), query(A, B))


def test_cross_val_score_and_grid_search_score_the_gp_as_scikit_learns_regressor():
    """Model selection with scikit-learn's own tools: with no ``scoring`` they use the estimator's
    R^2, so a warmbo GP scores fold by fold what GaussianProcessRegressor with the same fixed kernel
    scores, and a grid search over kernels and noise picks the same setting."""
    from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

    X, y, _ = data(n=40, d=2, seed=4, noise=0.05)
    folds = KFold(4, shuffle=True, random_state=0)
    ours = cross_val_score(GP(Matern(2.5, 0.4), noise=1e-2, normalize_y=True), X, y, cv=folds)
    reference = GaussianProcessRegressor(sk.Matern(0.4, nu=2.5), alpha=1e-2, optimizer=None, normalize_y=True)
    theirs = cross_val_score(reference, X, y, cv=folds)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    assert np.all(ours > 0.5)  # the folds are predicted: the scores are not all alike by accident

    grid = {"kernel": [RBF(0.05), RBF(0.5), Matern(2.5, 0.4)], "noise": [1e-3, 1.0]}
    search = GridSearchCV(GP(RBF(1.0)), grid, cv=folds).fit(X, y)
    sk_grid = {"kernel": [sk.RBF(0.05), sk.RBF(0.5), sk.Matern(0.4, nu=2.5)], "alpha": [1e-3, 1.0]}
    sk_search = GridSearchCV(GaussianProcessRegressor(optimizer=None), sk_grid, cv=folds).fit(X, y)
    # scikit-learn's grid varies the last name (sorted) fastest: ours (kernel, noise), theirs (alpha, kernel)
    scores = search.cv_results_["mean_test_score"].reshape(3, 2)
    np.testing.assert_allclose(scores, sk_search.cv_results_["mean_test_score"].reshape(2, 3).T, rtol=1e-10)
    best_kernel = sk_grid["kernel"].index(sk_search.best_params_["kernel"])
    assert search.best_params_["kernel"] == grid["kernel"][best_kernel]
    assert search.best_params_["noise"] == sk_search.best_params_["alpha"]
    assert search.best_estimator_.n_observations == 40  # refitted on all the data


@pytest.mark.parametrize(
    "scoring", ["r2", "neg_mean_squared_error", "neg_mean_absolute_error", "neg_max_error"]
)
def test_named_scorers_score_the_gps_posterior_mean_as_scikit_learns_regressor(scoring):
    """A named scoring failed ("inconsistent numbers of samples: [10, 2]"): the scorer reads
    ``predict(X)`` as an array, and the GP's ``(mean, std)`` pair became a 2-row one. The pair is a
    ``Prediction`` now, which reads as its mean there and still unpacks as before."""
    from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
    from sklearn.utils.estimator_checks import check_regressors_train

    X, y, _ = data(n=40, d=2, seed=4, noise=0.05)
    folds = KFold(4, shuffle=True, random_state=0)
    ours = cross_val_score(
        GP(Matern(2.5, 0.4), noise=1e-2, normalize_y=True), X, y, cv=folds, scoring=scoring
    )
    reference = GaussianProcessRegressor(sk.Matern(0.4, nu=2.5), alpha=1e-2, optimizer=None, normalize_y=True)
    theirs = cross_val_score(reference, X, y, cv=folds, scoring=scoring)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
    search = GridSearchCV(GP(RBF(1.0)), {"noise": [1e-3, 1.0]}, cv=folds, scoring=scoring).fit(X, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))

    gp = GP(Matern(2.5, 0.4), noise=1e-2, normalize_y=True).fit(X, y)
    mean, std = gp.predict(X[:5])  # the model protocol's pair, as before
    prediction = gp.predict(X[:5])
    assert isinstance(prediction, tuple) and len(prediction) == 2
    np.testing.assert_array_equal(prediction.mean, mean)
    np.testing.assert_array_equal(prediction.std, std)
    np.testing.assert_array_equal(np.asarray(prediction), mean)
    assert gp.score(X, y) == pytest.approx(reference.fit(X, y).score(X, y), rel=1e-9)
    check_regressors_train("GP", GP(Matern(2.5, 0.4), noise=1e-2))  # scikit-learn's own check


def test_info_gain_counts_the_jitter_as_noise_as_the_posterior_does():
    """Duplicated points with noise 1e-20 need jitter j: the posterior is then that of noise
    ``1e-20 + j``, and so is the information gain (its docstring says so; before, the jitter was
    counted as signal, ``1/2 log det(I + (K + j I) / lam)``: 92.6 nats here instead of 35.0)."""
    X = np.array([[0.1], [0.1], [0.5], [0.5], [0.9]])
    y = np.arange(5.0)
    kernel = RBF(0.3)
    with pytest.warns(JitterWarning):
        gp = GP(kernel, noise=1e-20).fit(X, y)
    lam = 1e-20 + gp.jitter_
    assert gp.jitter_ > 0
    dense = 0.5 * np.linalg.slogdet(np.eye(5) + kernel(X, X) / lam)[1]
    # the chain rule with the posterior of noise lam, given explicitly (lam is large enough: no jitter)
    chain = 0.5 * np.log1p(1.0 / lam)
    for i in range(1, 5):
        std = GP(kernel, noise=lam).fit(X[:i], y[:i]).predict(X[i : i + 1])[1][0]
        chain += 0.5 * np.log1p(std**2 / lam)
    np.testing.assert_allclose(gp.info_gain(), dense, rtol=1e-8)
    np.testing.assert_allclose(gp.info_gain(), chain, rtol=1e-8)
    _, std = gp.predict(X)  # the posterior that of noise lam, too
    np.testing.assert_allclose(std, GP(kernel, noise=lam).fit(X, y).predict(X)[1], rtol=1e-6)


def test_predict_gradient_names_a_point_of_the_wrong_dimension_or_not_finite():
    """A point of 3 coordinates for a 2-D GP reached scipy's cdist, whose error ("XA and XB must have
    the same number of columns") names neither the argument nor the shapes."""
    X, y, _ = data(n=10, d=2)
    gp = GP(RBF(0.3), noise=1e-3).fit(X, y)
    with pytest.raises(
        ValueError, match=r"^x must be one point of shape \(2,\), got an array of shape \(3,\)"
    ):
        gp.predict_gradient(np.zeros(3))
    with pytest.raises(ValueError, match="^x contains NaN or inf"):
        gp.predict_gradient([0.5, np.nan])
    with pytest.raises(ValueError, match=r"^x must be one point of shape \(2,\)"):
        GP(RBF([0.3, 0.3])).predict_gradient(np.zeros(3))  # the prior: the kernel's dimension
    from warmbo import UCB
    from warmbo.bounds import Constant

    with pytest.raises(ValueError, match=r"^x must be one point of shape \(2,\)"):
        UCB(Constant(1.0)).bind(gp).value_and_gradient(np.zeros(1))
    mean, std, _, _ = gp.predict_gradient(np.array([[0.2, 0.4]]))  # a (1, d) point is still one point
    np.testing.assert_allclose([mean, std], [a[0] for a in gp.predict([[0.2, 0.4]])], rtol=1e-12)


def test_extend_with_per_point_noise_says_how_to_give_the_new_points_noise():
    """extend() to more points than a per-point noise vector covers fell back to fit() and failed with
    "noise must have length 25 (one value per point), got 20", an argument the caller never passed;
    with the same points (new values only) it is a fit with that noise."""
    X, y, Xs = data(n=25, d=2)
    noise = np.linspace(1e-3, 1e-1, 20)
    gp = GP(Matern(2.5, 0.3), noise=noise).fit(X[:20], y[:20])
    with pytest.raises(ValueError, match=r"^extend\(\) cannot tell the noise of 25 points .*add\(X_new"):
        gp.extend(X, y)
    grown = gp.add(X[20:], y[20:], noise=0.05)  # what the message advises
    dense = GP(Matern(2.5, 0.3), noise=np.r_[noise, np.full(5, 0.05)]).fit(X, y)
    np.testing.assert_allclose(grown.predict(Xs)[0], dense.predict(Xs)[0], atol=1e-10)
    same = GP(Matern(2.5, 0.3), noise=noise).fit(X[:20], y[:20]).extend(X[:20], -y[:20])
    np.testing.assert_allclose(
        same.predict(Xs)[0], GP(Matern(2.5, 0.3), noise=noise).fit(X[:20], -y[:20]).predict(Xs)[0], atol=1e-12
    )


@pytest.mark.parametrize("more", [0, 2])
def test_extend_after_adding_points_with_another_noise_is_the_fit_it_promises(more):
    """extend() reused the factor of points added with ``add(..., noise=0.5)`` while storing them at
    the GP's noise 1e-3: its posterior was neither ``fit``'s (off by 0.04, and by 0.9 with two more
    points) nor consistent with its own ``noise_`` (the information gain matched no model)."""
    X, y, Xs = data(n=27, d=2, seed=5)
    kernel = Matern(2.5, 0.3)
    gp = GP(kernel, noise=1e-3).fit(X[:20], y[:20])
    gp.add(X[20:25], y[20:25], noise=0.5)
    n = 25 + more
    extended = gp.extend(X[:n], y[:n])
    dense = kernel(X[:n], X[:n]) + 1e-3 * np.eye(n)  # what fit(X, y) with noise 1e-3 conditions on
    mean = kernel(Xs, X[:n]) @ np.linalg.solve(dense, y[:n])
    np.testing.assert_allclose(extended.predict(Xs)[0], mean, atol=1e-8)
    np.testing.assert_allclose(extended.noise_, np.full(n, 1e-3))
    gain = 0.5 * np.linalg.slogdet(np.eye(n) + kernel(X[:n], X[:n]) / 1e-3)[1]
    np.testing.assert_allclose(extended.info_gain(), gain, rtol=1e-8)


def test_a_prediction_pickles_and_copies_as_the_pair_it_was():
    """``GP.predict``'s pair was a plain tuple, which pickles (joblib caches, a process pool's
    results) and copies; as a ``Prediction`` every pickle.loads and copy.copy failed with
    "Prediction.__new__() missing 1 required positional argument: 'std'"."""
    import copy
    import pickle

    X, y, _ = data(n=12, d=2, seed=1, noise=0.05)
    prediction = GP(Matern(2.5, 0.4), noise=1e-2).fit(X, y).predict(X[:4])
    for again in (pickle.loads(pickle.dumps(prediction)), copy.copy(prediction), copy.deepcopy(prediction)):
        assert type(again) is type(prediction)
        np.testing.assert_array_equal(again.mean, prediction.mean)
        np.testing.assert_array_equal(again.std, prediction.std)


def test_a_large_factor_is_kept_column_major_and_its_posterior_and_updates_are_exact():
    # From _FACTOR_ORDER_KEPT_FROM rows the factor is kept as LAPACK returns it (the transposing copy
    # to row-major cost more than the factorisation: 100 source GPs of 1000 rows paid 0.8-3 s for it);
    # the posterior, add() and extend() must be those of the dense formulas whatever the order.
    from warmbo.models import gp as gp_module

    n0 = gp_module._FACTOR_ORDER_KEPT_FROM
    X, y, Xs = data(n=n0 + 40, d=3, seed=4, noise=0.05)
    kernel = Matern(2.5, [0.3, 0.4, 0.5])
    small = GP(kernel, noise=0.01).fit(X[: n0 - 1], y[: n0 - 1])
    assert small.L_.flags.c_contiguous  # below the threshold: row-major, as before
    big = GP(kernel, noise=0.01).fit(X[:n0], y[:n0])
    assert big.L_.flags.f_contiguous and not big.L_.flags.c_contiguous
    big.add(X[n0 : n0 + 20], y[n0 : n0 + 20])  # the block update keeps the order: no transposing copy
    assert big.L_.flags.f_contiguous and big.n_observations == n0 + 20
    extended = big.extend(X[: n0 + 40], y[: n0 + 40])
    A = kernel(X, X) + 0.01 * np.eye(n0 + 40)
    Ks = kernel(X, Xs)
    for model, m in ((big, n0 + 20), (extended, n0 + 40)):
        mean = Ks[:m].T @ np.linalg.solve(A[:m, :m], y[:m])
        cov = kernel(Xs, Xs) - Ks[:m].T @ np.linalg.solve(A[:m, :m], Ks[:m])
        got_mean, got_cov = model.predict(Xs, return_cov=True)
        np.testing.assert_allclose(got_mean, mean, atol=1e-7)
        np.testing.assert_allclose(got_cov, cov, atol=1e-7)
        np.testing.assert_allclose(model.L_ @ model.L_.T, A[:m, :m], atol=1e-9)


def test_the_default_gp_on_inputs_far_from_the_unit_cube_warns_what_to_do():
    # a user test: cross_val_score(wb.GP(), X, y) with a column in [0, 1000] scored R^2 -1 to -2.6,
    # worse than predicting the mean, with no word: GP() fits nothing and its lengthscale is 0.3
    from warmbo.models.gp import UnscaledInputsWarning

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.random(30), 1000 * rng.random(30)])
    y = np.sin(3 * X[:, 0]) + X[:, 1] / 500
    with pytest.warns(UnscaledInputsWarning, match=r"column 1 spans .*MinMaxScaler.*optimizer='ml2'"):
        GP().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnscaledInputsWarning)
        GP().fit(X / np.array([1.0, 1000.0]), y)  # scaled: nothing to say
        GP(optimizer="ml2", normalize_y=True).fit(X, y)  # fitted lengthscales: nothing to say
        GP(kernel=RBF([1.0, 300.0])).fit(X, y)  # a kernel of the user's own choosing


def test_a_prediction_shows_what_it_is_and_refuses_a_tuples_arithmetic():
    # (notebook user test) a cell showed a bare pair of arrays; pred * 2 silently gave 4 arrays (a
    # tuple repeated) and pred + 1 a tuple's error
    rng = np.random.default_rng(0)
    prediction = GP().fit(rng.random((5, 1)), rng.random(5)).predict(rng.random((3, 1)))
    assert repr(prediction).startswith("Prediction(mean=array([") and ", std=array([" in repr(prediction)
    for arithmetic in (lambda p: p * 2, lambda p: 2 * p, lambda p: p + 1, lambda p: (1.0,) + p):
        with pytest.raises(TypeError, match=r"the pair \(mean, std\): do arithmetic on prediction.mean"):
            arithmetic(prediction)
    mean, std = prediction  # (unpacking, .mean and the array view are unchanged)
    assert np.array_equal(np.asarray(prediction), mean) and prediction.std is std
