"""Free m-kernels and tuned priors (004): Table 1 at m = 2, Definition 1, Theorem 1, the XOR example."""

from __future__ import annotations

import numpy as np
import pytest

import warmbo as wb
from warmbo.kernels import RBF, Linear, Polynomial, free

XOR_A = np.array([[-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]])
XOR_Y = np.array([-1.0, 1.0, 1.0, -1.0])


def points(n, d=2, seed=0, scale=0.9):
    return np.random.default_rng(seed).uniform(-scale, scale, (n, d))


def test_xor_example_of_004_section_4_exactly():
    tp = wb.TunedPrior(free.Polynomial(2, 1.0), C=1.0, learner="svm", normalize=False).fit(XOR_A, XOR_Y)
    np.testing.assert_allclose(tp.alpha_, [-1 / 8, 1 / 8, 1 / 8, -1 / 8], atol=1e-6)
    X, Y = points(7, seed=1, scale=3), points(5, seed=2, scale=3)
    expected = 0.5 * np.outer(X[:, 0] * X[:, 1], Y[:, 0] * Y[:, 1])
    np.testing.assert_allclose(tp.kernel_(X, Y), expected, atol=1e-10)
    # tau_A = [0, 0, 0, 0, 0, 1/sqrt 2] up to sign and the order of the features
    tau = tp.tau_A()
    index = free.Polynomial(2, 1.0).multi_indices(2).index((1, 1))
    assert abs(tau[index]) == pytest.approx(1 / np.sqrt(2))
    assert np.allclose(np.delete(tau, index), 0.0, atol=1e-9)


@pytest.mark.parametrize("degree, offset", [(2, 1.0), (3, 0.5), (2, 0.0)])
def test_theorem_1_for_the_polynomial_free_kernel(degree, offset):
    fk = free.Polynomial(degree, offset)
    A = points(6, d=2, seed=3)
    alpha = np.random.default_rng(4).standard_normal(6)
    K = free.TunedKernel(fk, A, alpha, normalize=False)
    tau_A = fk.tau_for(2) * (alpha @ fk.theta(A))  # Thm 1's formula
    X, Y = points(8, seed=5), points(6, seed=6)
    features = lambda Z: fk.theta(Z) * tau_A  # noqa: E731 - K^A_2 read off its features
    np.testing.assert_allclose(K(X, Y), features(X) @ features(Y).T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("m", [2, 4, 6])
def test_definition_1_free_kernel_identity(m):
    fk = free.Polynomial(2, 1.0)
    Xs = [points(5, seed=10 + k) for k in range(m)]
    tau2 = fk.tau_for(2) ** 2
    expected = np.sum(tau2 * np.prod([fk.theta(X) for X in Xs], axis=0), axis=1)  # eq. 2
    np.testing.assert_allclose(fk(*Xs), expected, rtol=1e-12)
    phi = [fk.tau_for(2) ** (2 / m) * fk.theta(X) for X in Xs]  # eq. 3 implied feature map
    if m == 2:  # K_2 is an ordinary kernel: its Gram diagonal holds the row-wise values
        np.testing.assert_allclose(np.diag(fk.order(2)(Xs[0], Xs[1])), free.mdot(*phi), rtol=1e-12)
    else:
        np.testing.assert_allclose(fk.order(m)(*Xs), free.mdot(*phi), rtol=1e-12)


def test_order_2_members_equal_their_ordinary_kernels():
    X, Y = points(6, seed=7), points(4, seed=8)
    np.testing.assert_allclose(free.Linear().order(2)(X, Y), Linear()(X, Y), rtol=1e-12)
    np.testing.assert_allclose(free.Polynomial(3, 0.7).order(2)(X, Y), Polynomial(3, 0.7)(X, Y), rtol=1e-12)
    np.testing.assert_allclose(free.SE(0.4).order(2)(X, Y), RBF(0.4)(X, Y), rtol=1e-12)
    np.testing.assert_allclose(free.Exponential(0.8).order(2)(X, Y), np.exp(0.8 * X @ Y.T), rtol=1e-12)
    np.testing.assert_allclose(free.Sinh(0.8).order(2)(X, Y), np.sinh(0.8 * X @ Y.T), rtol=1e-12)
    expected = np.prod(np.log((1 + X[:, None, :] * Y[None]) / (1 - X[:, None, :] * Y[None])), axis=2)
    np.testing.assert_allclose(free.LogRatio().order(2)(X, Y), expected, rtol=1e-12)
    np.testing.assert_allclose(free.DotProduct(np.exp).order(2)(X, Y), np.exp(X @ Y.T), rtol=1e-12)
    np.testing.assert_allclose(free.DirectProduct(np.exp).order(2)(X, Y), np.exp(X @ Y.T), rtol=1e-12)


@pytest.mark.parametrize(
    "fk",
    [
        free.SE(0.5),
        free.Polynomial(2, 1.0),
        free.Exponential(0.7),
        free.Sinh(0.7),
        free.LogRatio(),
        free.Linear(),
    ],
    ids=repr,
)
def test_tuned_kernels_are_psd_and_match_the_double_sum(fk):
    A = points(7, seed=9)
    alpha = np.random.default_rng(10).standard_normal(7)
    K = free.TunedKernel(fk, A, alpha, normalize=False)
    X = points(30, seed=11)
    G = K(X, X)
    eig = np.linalg.eigvalsh((G + G.T) / 2)
    assert eig[0] >= -1e-10 * max(eig[-1], 1e-300)
    # eq. 14 term by term, as an independent oracle
    x, y = X[3:4], X[8:9]
    double = sum(
        alpha[i] * alpha[j] * fk(A[i : i + 1], A[j : j + 1], x, y) for i in range(7) for j in range(7)
    )
    assert K(x, y)[0, 0] == pytest.approx(float(double[0]), rel=1e-10, abs=1e-12)
    normalised = free.TunedKernel(fk, A, alpha, normalize=True)
    np.testing.assert_allclose(np.diag(normalised(X, X)), 1.0, rtol=1e-10)


def test_flat_auxiliary_data_fall_back_to_the_base_kernel():
    A = points(10, seed=12)
    with pytest.warns(RuntimeWarning, match="falling back"):
        tp = wb.TunedPrior(free.SE(0.5), C=1.0, learner="krr", tune_scale=False).fit(A, np.zeros(10))
    assert tp.vanished_ and tp.kernel_ == free.SE(0.5).order(2)


def test_flat_auxiliary_data_with_the_svm_learner_fall_back_as_004_section_7():
    """Flat A (Easom's flipped values on most of the domain): the SVM's bias absorbs the constant,
    every alpha_i is 0 and K^A_2 vanishes, so the base kernel is used with a warning (no error)."""
    A = points(12, seed=15)
    with pytest.warns(RuntimeWarning, match="falling back"):
        tp = wb.TunedPrior(free.SE(0.5), learner="svm").fit(A, np.ones(12))
    assert tp.vanished_ and tp.bias_ == pytest.approx(1.0) and not np.any(tp.alpha_)


def test_small_scaled_auxiliary_data_are_not_taken_for_flat():
    # (hostile-input user test) y x 1e-6 warned "the learner's dual weights are all zero (flat
    # auxiliary data?)" and fell back to K_2: the thresholds were absolute, while the dual weights
    # are in y's units and K^A_2 in their square
    import warnings

    rng = np.random.default_rng(1)
    aux = rng.uniform(0, 1, (40, 2))
    y = -np.sin(6 * aux[:, 0]) * np.cos(4 * aux[:, 1])
    x, x2 = rng.random((3, 2)), rng.random((3, 2))
    unit = wb.TunedPrior(free.SE(0.6), learner="krr", centre=True, C=10.0).fit(aux, y)
    for s in (1e-6, 1e-10, 1e6):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # (no "flat auxiliary data?")
            scaled = wb.TunedPrior(free.SE(0.6), learner="krr", centre=True, C=10.0).fit(aux, s * y)
        assert not scaled.vanished_
        np.testing.assert_allclose(scaled.kernel_(x, x2), unit.kernel_(x, x2), rtol=1e-6, atol=1e-9)


def test_loo_tuning_and_a_tuned_prior_in_the_optimizer():
    rng = np.random.default_rng(13)
    A = rng.uniform(0, 1, (40, 2))
    g = lambda X: np.sin(6 * X[:, 0]) * np.cos(4 * X[:, 1])  # noqa: E731
    tp = wb.TunedPrior(free.SE(0.3), learner="krr").fit(A, -g(A))  # flipped auxiliary data
    assert tp.C_ > 0 and np.isfinite(tp.loo_error_) and not tp.vanished_
    model = wb.GP(tp.kernel_, noise=1e-4, normalize_y=True)
    space = wb.Space.box([(0.0, 1.0), (0.0, 1.0)])
    opt = wb.Optimizer(space, model=model, maximize=True, seed=0, n_initial=3)
    best = opt.run(lambda p: float(g(np.array([[p["x0"], p["x1"]]]))[0]), budget=25, progress=False)
    assert best.value > 0.85  # the maximum of g is 1


def test_max_aux_fits_a_spread_subset_and_reports_the_kernel_error():
    A = points(60, seed=14)
    y = np.sin(3 * A[:, 0])
    full = wb.TunedPrior(free.SE(0.5), C=10.0, learner="krr", tune_scale=False).fit(A, y)
    capped = wb.TunedPrior(free.SE(0.5), C=10.0, learner="krr", tune_scale=False, max_aux=30).fit(A, y)
    assert full.truncation_error_ == 0.0 and capped.kernel_.A.shape[0] == 30
    errors = [
        wb.TunedPrior(free.SE(0.5), C=10.0, learner="krr", tune_scale=False, max_aux=cap)
        .fit(A, y)
        .truncation_error_
        for cap in (15, 30, 45)
    ]
    # the reported error is the normalised kernel's largest change on probe points; keeping more
    # points brings the subset's kernel toward the full one (measured 0.53, 0.19, 0.02)
    assert errors[0] > errors[1] > errors[2] and errors[2] < 0.05
    assert errors[1] == pytest.approx(capped.truncation_error_)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: wb.TunedPrior(free.SE(0.5)).fit(points(4), [1.0, np.nan, 0.0, 1.0]), "y_aux"),
        (lambda: wb.TunedPrior(free.SE(0.5)).fit(np.full((3, 2), np.nan), [1.0, 0.0, 1.0]), "X_aux"),
        (lambda: wb.TunedPrior(free.SE(0.5), learner="tree").fit(points(4), [0, 1, 0, 1]), "learner"),
        (lambda: wb.TunedPrior(RBF(0.5)).fit(points(4), [0, 1, 0, 1]), "free kernel"),
        (lambda: free.TunedKernel(free.SE(0.5), points(3), [1.0, 2.0]), "alpha"),
        (lambda: free.SE(0.5)(points(3), points(3, d=3)), "columns"),
        (lambda: free.SE(0.5)(points(3)), "even number"),
        (lambda: free.Polynomial(0), "degree"),
        # max_aux < 2 failed inside scikit-learn ("epsilon parameter of SVR ... nan")
        *[
            (
                lambda cap=cap: wb.TunedPrior(free.SE(0.5), max_aux=cap).fit(points(6), np.arange(6.0)),
                r"max_aux \(or None\) must be an integer >= 2",
            )
            for cap in (0, 1, -3, 2.5)
        ],
    ],
)
def test_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_auxiliary_data_of_another_dimension_is_an_error():
    tp = wb.TunedPrior(free.SE(0.5), C=1.0, learner="krr", tune_scale=False).fit(points(10), np.arange(10.0))
    with pytest.raises(ValueError, match="X"):
        tp.kernel_(points(3, d=3), points(3, d=3))


def test_affine_maps_inputs_with_gradients_and_hyperparameters():
    from warmbo.kernels import Affine, Matern

    base = Matern(2.5, [0.3, 0.5])
    k = Affine(base, 2.0, -1.0)
    X, Y = points(5, seed=20, scale=1.0) / 2 + 0.5, points(4, seed=21, scale=1.0) / 2 + 0.5
    np.testing.assert_allclose(k(X, Y), base(2 * X - 1, 2 * Y - 1), rtol=1e-12)
    np.testing.assert_allclose(
        k.gradient_x(X[0], Y), 2 * base.gradient_x(2 * X[0] - 1, 2 * Y - 1), rtol=1e-12
    )
    h = 1e-6
    numeric = [(k(X[:1] + h * e, Y) - k(X[:1] - h * e, Y))[0] / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(k.gradient_x(X[0], Y), np.array(numeric).T, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(k.with_theta(np.log([0.1, 0.2])).kernel.lengthscale, [0.1, 0.2], rtol=1e-12)
    with pytest.raises(ValueError, match="scale"):
        Affine(base, 0.0, 1.0)


def test_centre_learns_on_minus_one_to_one():
    rng = np.random.default_rng(22)
    U = rng.uniform(0, 1, (30, 2))
    y = np.sin(4 * U[:, 0]) - U[:, 1]
    centred = wb.TunedPrior(free.SE(0.6), C=10.0, learner="krr", tune_scale=False, centre=True).fit(U, y)
    manual = wb.TunedPrior(free.SE(0.6), C=10.0, learner="krr", tune_scale=False).fit(2 * U - 1, y)
    X = rng.uniform(0, 1, (6, 2))
    np.testing.assert_allclose(centred.kernel_(X, X), manual.kernel_(2 * X - 1, 2 * X - 1), rtol=1e-10)
    np.testing.assert_allclose(centred.alpha_, manual.alpha_, rtol=1e-10)


def test_svm_learner_leave_one_out_uses_its_bias_as_scikit_learn_predicts():
    """The SVR's LOO error equals the error of scikit-learn's own predictions (which add the
    intercept) over the same folds; without the bias it was ~100x larger on [0, 1]-valued data and
    C was chosen on a wrong error."""
    from sklearn.svm import SVR

    A = points(20, seed=21)
    y = 0.5 + 0.3 * np.sin(3 * A[:, 0]) * A[:, 1]  # mean far from 0: the bias matters
    tp = wb.TunedPrior(free.SE(0.5), C=10.0, learner="svm", tune_scale=False)
    K = free.SE(0.5).order(2).gram(A)
    errors = []
    for i in range(y.size):  # 20 points: leave-one-out
        keep = np.delete(np.arange(y.size), i)
        svr = SVR(C=10.0, kernel="precomputed", tol=1e-4, epsilon=0.01 * float(np.std(y[keep])))
        svr.fit(K[np.ix_(keep, keep)], y[keep])
        errors.append(float((svr.predict(K[np.ix_([i], keep)])[0] - y[i]) ** 2))
    assert tp._loo_error(K, y, 10.0) == pytest.approx(np.mean(errors), rel=1e-6)
    fitted = wb.TunedPrior(free.SE(0.5), C=10.0, learner="svm", tune_scale=False).fit(A, y)
    assert fitted.bias_ == pytest.approx(
        SVR(C=10.0, kernel="precomputed", tol=1e-8, epsilon=0.01 * float(np.std(y))).fit(K, y).intercept_[0]
    )
    assert np.mean(errors) < 0.01 * np.mean(y**2)  # far below the error of predicting 0


def test_tuned_prior_and_metakel_follow_scikit_learns_parameter_convention():
    """get_params / set_params / sklearn.base.clone: a clone is unfitted, has the same arguments and
    fits to the same kernel; set_params replaces an argument and leaves the object unchanged on an
    unknown name."""
    from sklearn.base import clone

    from warmbo.kernels.features import Legendre

    tp = wb.TunedPrior(free.Polynomial(2, 1.0), C=1.0, learner="svm", normalize=False)
    assert tp.get_params()["C"] == 1.0 and tp.get_params(deep=False)["learner"] == "svm"
    fitted = clone(tp).fit(XOR_A, XOR_Y)
    expected = wb.TunedPrior(free.Polynomial(2, 1.0), C=1.0, learner="svm", normalize=False).fit(XOR_A, XOR_Y)
    X = np.array([[0.5, -0.5], [1.0, 1.0]])
    np.testing.assert_array_equal(fitted.kernel_(X, X), expected.kernel_(X, X))
    assert tp.set_params(C=2.0) is tp and tp.C == 2.0
    with pytest.raises(ValueError, match="no parameter"):
        tp.set_params(bogus=1)
    assert tp.C == 2.0

    meta = wb.MetaKeL([Legendre(j) for j in range(1, 4)], lam=0.01)
    copy = clone(meta)
    assert copy is not meta and copy.get_params()["lam"] == 0.01 and len(copy.base) == 3
    assert meta.set_params(delta=0.2).delta == 0.2


def _dense_normalised(fk, A, alpha, X, eps):
    """Oracle for the normalised K^A_2 on X: eq. 14 term by term for the raw Gram matrix G, then the
    cosine of ``G + eps [x == x']`` (the limit eps -> 0 defines the value at zero-norm points)."""
    n = X.shape[0]
    G = np.zeros((n, n))
    for i in range(A.shape[0]):
        for j in range(A.shape[0]):
            for r in range(n):
                G[r] += alpha[i] * alpha[j] * fk(A[i : i + 1], A[j : j + 1], X[r : r + 1], X)
    G += eps * np.all(X[:, None, :] == X[None, :, :], axis=2)
    s = np.sqrt(np.diag(G))
    return G / s[:, None] / s[None, :]


@pytest.mark.parametrize(
    "fk, zero",
    [(free.Sinh(0.5), [0.0, 0.0]), (free.Linear(), [0.0, 0.0]), (free.LogRatio(), [0.0, 0.4])],
    ids=repr,
)
def test_normalised_tuned_kernel_at_points_where_the_features_vanish(fk, zero):
    """K^A_2(x, x) = 0 where theta(x) = 0 (the origin; a zero coordinate for LogRatio): the cosine is
    0/0 there. The kernel is the eps -> 0 limit of normalising K + eps delta: finite, 1 with itself,
    0 with other points, equal to diag, PSD on a set holding the point (twice)."""
    A = points(8, seed=30)
    alpha = np.random.default_rng(31).standard_normal(8)
    K = free.TunedKernel(fk, A, alpha, normalize=True)
    X = np.vstack([points(10, seed=32), [zero], points(3, seed=33), [zero]])
    G = K(X, X)
    assert np.all(np.isfinite(G))
    np.testing.assert_allclose(np.diag(G), K(X), rtol=1e-12)
    np.testing.assert_allclose(G, _dense_normalised(fk, A, alpha, X, eps=1e-13), atol=1e-8)
    assert G[10, 10] == G[10, 14] == 1.0 and not np.any(G[10, :10]) and not np.any(G[:10, 14])
    assert np.linalg.eigvalsh((G + G.T) / 2)[0] >= -1e-10


def test_tuned_prior_at_the_centre_of_the_cube_in_the_optimizer():
    """centre=True maps x = 0.5 to the origin, where Sinh's features vanish: the kernel is finite
    there and a GP with it fits and asks after that point is told (it raised 'not finite' before)."""
    rng = np.random.default_rng(0)
    aux = rng.uniform(0, 1, (20, 2))
    tp = wb.TunedPrior(free.Sinh(0.5), learner="krr", centre=True).fit(aux, np.sin(4 * aux[:, 0]))
    centre = np.array([[0.5, 0.5]])
    assert tp.kernel_(centre, centre)[0, 0] == 1.0 == tp.kernel_(centre)[0]
    model = wb.GP(wb.kernels.Constant(1.0) * tp.kernel_)
    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0), (0.0, 1.0)]), model=model, seed=0, n_initial=2)
    for x0, x1 in [(0.5, 0.5), (0.2, 0.7), (0.9, 0.1)]:
        opt.tell({"x0": x0, "x1": x1}, float(np.sin(4 * x0)))
    suggestion = opt.ask()
    assert 0.0 <= suggestion["x0"] <= 1.0 and 0.0 <= suggestion["x1"] <= 1.0
