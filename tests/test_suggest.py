"""warmbo.suggest: the BO step shared by the optimizers (fantasies, binding, search, collisions)."""

import numpy as np

import warmbo as wb
from warmbo.kernels import RBF
from warmbo.suggest import BATCH_CORRELATION, best_observations, crowded, fantasise, suggest, too_close

SPACE = wb.Space.box([(0.0, 1.0)])


def fitted():
    X = np.array([[0.1], [0.4], [0.9]])
    return wb.GP(RBF(0.2), noise=1e-4).fit(X, np.array([0.0, 1.0, 0.2]))


def test_a_pending_point_is_not_suggested_again_and_the_reference_is_untouched():
    gp = fitted()
    first = suggest(gp, wb.UCB(wb.bounds.Constant(4.0)), SPACE, seed=0)
    second = suggest(gp, wb.UCB(wb.bounds.Constant(4.0)), SPACE, pending=first[None], seed=0)
    assert abs(first[0] - second[0]) > 0.05  # the believer collapsed the uncertainty at `first`
    assert gp.n_observations == 3


def test_a_failed_point_is_a_constant_liar_at_the_worst_value():
    gp = fitted()
    model = fantasise(gp.clone().fit(gp.X_train_, gp.y_train_), np.array([[0.6]]), np.array([0.0]))
    mean, _ = model.predict(np.array([[0.6]]))
    assert abs(mean[0]) < 1e-2
    x = suggest(gp, wb.EI(), SPACE, failed=np.array([[0.45]]), seed=0)
    assert x is not None and abs(x[0] - 0.45) > 1e-3


def test_only_excluded_points_give_none():
    space = wb.Space([wb.Categorical("c", ["a", "b"])])
    X = space.encode([{"c": "a"}, {"c": "b"}])
    gp = wb.GP(RBF(0.5), noise=1e-4).fit(X, np.array([0.0, 1.0]))
    assert suggest(gp, wb.EI(), space, exclude=X, seed=0) is None
    x = suggest(gp, wb.EI(), space, exclude=X[:1], seed=0)
    assert space.decode(x)[0] == {"c": "b"}


def test_best_observations_order_and_edge_cases():
    gp = fitted()
    np.testing.assert_array_equal(best_observations(gp, 2), [[0.4], [0.9]])
    assert best_observations(gp, 0) is None


def test_pending_fantasies_are_noise_free_and_failed_ones_keep_the_models_noise(monkeypatch):
    import warmbo.suggest as module

    X = np.array([[0.1], [0.4], [0.9]])
    gp = wb.GP(RBF(0.2), noise=0.05).fit(X, np.array([0.0, 1.0, 0.2]))  # a large noise: the contrast
    pending, failed = np.array([[0.55]]), np.array([[0.75]])
    seen = []
    real = module.maximize
    monkeypatch.setattr(
        module, "maximize", lambda bound, *a, **k: seen.append(bound.model) or real(bound, *a, **k)
    )
    suggest(gp, wb.EI(), SPACE, pending=pending, failed=failed, seed=0)
    monkeypatch.setattr(module, "FANTASY_NOISE", None)  # the behaviour before: the model's noise
    suggest(gp, wb.EI(), SPACE, pending=pending, failed=failed, seed=0)
    noiseless, noisy = seen
    latent = gp.kernel_(pending, pending)[0, 0]  # prior variance, against which 0.05 is large
    sd_now, sd_before = noiseless.predict(pending)[1][0], noisy.predict(pending)[1][0]
    # with the fantasy's noise 1e-6 the latent sd there is ~1e-3; with the model's 0.05, ~0.2
    assert sd_now < 0.01 < 0.1 < sd_before < np.sqrt(latent)
    # oracle: one GP fitted on all five rows with per-row noises, pending 1e-6 and the failed point's
    # constant liar (a guess) at the model's 0.05
    rows = np.vstack([X, pending, failed])
    values = np.concatenate([gp.y_train_, gp.predict(pending)[0], [gp.y_train_.min()]])
    oracle = wb.GP(RBF(0.2), noise=np.array([0.05, 0.05, 0.05, 1e-6, 0.05])).fit(rows, values)
    grid = np.linspace(0, 1, 11)[:, None]
    for got, want in zip(noiseless.predict(grid), oracle.predict(grid), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
    assert gp.n_observations == 3  # the reference is untouched


def test_a_gp_with_one_noise_per_point_takes_pending_points():
    # before: its add() needs noise= for new rows, and suggest gave none (a ValueError on any batch)
    X = np.array([[0.1], [0.4], [0.9]])
    gp = wb.GP(RBF(0.2), noise=np.array([1e-4, 1e-2, 1e-4])).fit(X, np.array([0.0, 1.0, 0.2]))
    first = suggest(gp, wb.EI(), SPACE, seed=0)
    second = suggest(gp, wb.EI(), SPACE, pending=first[None], failed=np.array([[0.7]]), seed=0)
    assert second is not None and abs(second[0] - first[0]) > 1e-3


def test_too_close_flags_points_correlated_with_a_pending_one_a_priori():
    gp = wb.GP(RBF(0.2), noise=1e-4).fit(np.array([[0.1], [0.4], [0.9]]), np.array([0.0, 1.0, 0.2]))
    assert too_close(gp, np.empty((0, 1))) is None  # nothing pending: nothing avoided
    assert too_close(object(), np.array([[0.5]])) is None  # a model without a kernel
    near = too_close(gp, np.array([[0.5], [0.8]]))
    # RBF: correlation exp(-r^2 / 2) above 0.999 within r = 0.0447 lengthscales (0.0089 here)
    U = np.array([[0.5], [0.508], [0.51], [0.795], [0.7]])
    np.testing.assert_array_equal(near(U), [True, True, False, True, False])
    assert BATCH_CORRELATION == 0.999
    # the search keeps that far from a pending point
    x = suggest(gp, wb.EI(), SPACE, pending=np.array([[0.4]]), seed=0)
    assert abs(x[0] - 0.4) >= 0.2 * np.sqrt(-2 * np.log(BATCH_CORRELATION))


def test_crowded_flags_the_points_with_another_within_the_batch_correlation():
    from scipy.spatial.distance import cdist

    from warmbo.kernels import Constant, Linear, Matern

    class Fitted:
        def __init__(self, kernel):
            self.kernel_ = kernel

    lengthscale = np.array([0.2, 0.5])
    model = Fitted(Constant(3.0) * Matern(nu=2.5, lengthscale=list(lengthscale)))
    rng = np.random.default_rng(4)
    points = rng.random((12, 2))
    # pairs placed 0.02 lengthscales apart (correlation 0.9997) and 0.05 apart (0.998)
    points = np.vstack([points, points[0] + [0.02 * 0.2, 0.0], points[1] + [0.0, 0.05 * 0.5]])
    # the oracle: Matern-5/2's correlation (1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r) of the scaled distance
    r = cdist(points / lengthscale, points / lengthscale)
    corr = (1 + np.sqrt(5) * r + 5 * r**2 / 3) * np.exp(-np.sqrt(5) * r)
    np.fill_diagonal(corr, 0.0)
    expected = (corr > BATCH_CORRELATION).any(axis=1)
    assert expected[[0, 12]].all() and not expected[[1, 13]].any()  # (the oracle sees what was placed)
    np.testing.assert_array_equal(crowded(model, points), expected)
    assert list(crowded(model, points[:1])) == [False]  # a point alone is not crowded by itself
    assert crowded(model, np.empty((0, 2))) is None
    assert crowded(Fitted(Constant(2.0) * Linear()), points) is None  # (as too_close: not a distance)


def test_too_close_keeps_out_of_kernels_that_are_not_stationary():
    # a dot-product kernel's correlation is a cosine, near 1 along a whole ray from the origin: with
    # it, a Linear model's ask(4) put its fourth point at the origin (a review)
    from warmbo.kernels import Constant, Linear, Matern
    from warmbo.suggest import too_close

    class Fitted:
        def __init__(self, kernel):
            self.kernel_ = kernel

    pending = np.array([[0.5, 0.5]])
    assert too_close(Fitted(Constant(2.0) * Linear()), pending) is None
    near = too_close(Fitted(Constant(2.0) * Matern(nu=2.5, lengthscale=[0.3, 0.3]) + Constant(0.1)), pending)
    assert near is not None and list(near(np.array([[0.5, 0.501], [1.0, 1.0], [0.05, 0.05]]))) == [
        True,
        False,
        False,
    ]
