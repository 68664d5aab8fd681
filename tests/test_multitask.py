"""Multi-task kernels, the MT-GP posterior (dense / ICM / independent), MT-BKB, scalarisations, bounds."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn.base import clone as sklearn_clone
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF as SkRBF

from warmbo.acquisition import ScalarizedUCB
from warmbo.bounds import Constant, MultiTaskBound
from warmbo.kernels import RBF, Matern
from warmbo.kernels.multitask import ICM, LCM, Independent, UniformTask, as_task_matrix
from warmbo.models import MultiTaskGP
from warmbo.models.nystrom import BKB, BudgetedMultiTaskGP, bkb_q
from warmbo.problems.pareto import bayes_regret, cumulative_regret, hypervolume, pareto_mask
from warmbo.scalarization import Chebyshev, Linear


def _random_B(n, seed):
    A = np.random.default_rng(seed).uniform(size=(n, n))
    return A.T @ A


def _dense_oracle(kernel, X, Y, Xs, eta):
    """001 eqs. (1)-(2) by a direct dense solve, independent of the model's code paths."""
    G = kernel.gram(X)
    A = G + eta * np.eye(G.shape[0])
    Gx = kernel.gram(X, Xs)
    n = kernel.n_tasks
    mean = (Gx.T @ np.linalg.solve(A, Y.reshape(-1))).reshape(-1, n)
    full = kernel.gram(Xs) - Gx.T @ np.linalg.solve(A, Gx)
    blocks = np.stack([full[i * n : (i + 1) * n, i * n : (i + 1) * n] for i in range(Xs.shape[0])])
    return mean, blocks


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(30, 2))
    Y = rng.normal(size=(30, 4))
    Xs = rng.uniform(size=(9, 2))
    return X, Y, Xs


# ---------------------------------------------------------------------------- kernels
def test_icm_gram_is_kron_and_blocks_agree(data):
    X, _, Xs = data
    B = _random_B(4, 0)
    G = ICM(RBF(0.3), B)
    K = RBF(0.3)(X, Xs)
    assert np.allclose(G.gram(X, Xs), np.kron(K, B))
    blocks = G(X, Xs)
    assert blocks.shape == (30, 9, 4, 4)
    assert np.allclose(blocks[5, 2], K[5, 2] * B)
    assert np.allclose(G(X)[3], RBF(0.3)(X[3:4])[0] * B)


def test_uniform_task_matrix_and_spectrum():
    G = UniformTask(RBF(0.2), 5, 0.4)
    assert np.allclose(G.B, 0.4 * np.eye(5) + 0.6 * np.ones((5, 5)) / 5)
    xi, U = G.eig
    assert np.allclose(np.sort(xi), [0.4, 0.4, 0.4, 0.4, 1.0])  # one eigenvalue 1, the rest omega (001)
    assert np.allclose(U @ np.diag(xi) @ U.T, G.B)


def test_independent_and_lcm_grams(data):
    X, _, _ = data
    ks = [RBF(0.2), RBF(0.5), Matern(1.5, 0.3)]
    G = Independent(ks).gram(X[:5])
    for i, j in itertools.product(range(3), range(3)):
        block = G[i::3, j::3]
        assert np.allclose(block, ks[i].gram(X[:5]) if i == j else 0.0)
    B1, B2 = _random_B(3, 1), _random_B(3, 2)
    lcm = LCM([(RBF(0.2), B1), (RBF(0.7), B2)])
    assert np.allclose(lcm.gram(X[:5]), np.kron(RBF(0.2).gram(X[:5]), B1) + np.kron(RBF(0.7).gram(X[:5]), B2))
    assert np.linalg.eigvalsh(lcm.gram(X))[0] > -1e-9  # PSD


def test_operator_norm_is_largest_eigenvalue(data):
    X, _, _ = data
    lcm = LCM([(RBF(0.2), _random_B(4, 1)), (RBF(0.7), _random_B(4, 2))])
    blocks = lcm(X)
    norms = lcm.operator_norm(X)
    assert np.allclose(norms, [np.linalg.eigvalsh(b)[-1] for b in blocks])
    assert np.allclose(norms, [np.linalg.norm(b, 2) for b in blocks])  # spectral norm of a PSD matrix


@pytest.mark.parametrize(
    "B, message",
    [
        ([[1.0, 2.0], [2.0, 1.0]], "not positive semi-definite"),
        ([[1.0, 0.5], [0.1, 1.0]], "symmetric"),
        ([[1.0, np.nan], [np.nan, 1.0]], "NaN"),
        ([1.0, 2.0], "square"),
    ],
)
def test_bad_task_matrix(B, message):
    with pytest.raises(ValueError, match=message):
        ICM(RBF(0.2), B)


def test_bad_task_matrix_size_and_omega():
    with pytest.raises(ValueError, match="must be 3 x 3"):
        as_task_matrix(np.eye(2), 3)
    with pytest.raises(ValueError, match="B_1 must be 2 x 2"):
        LCM([(RBF(0.2), np.eye(2)), (RBF(0.3), np.eye(3))])
    for omega in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="omega must be a number in"):
            UniformTask(RBF(0.2), 3, omega)
    with pytest.raises(ValueError, match="scalar kernel"):
        ICM("rbf", np.eye(2))


def test_kernels_are_immutable():
    G = ICM(RBF(0.2), np.eye(2))
    with pytest.raises(AttributeError):
        G.B = np.eye(3)
    with pytest.raises(ValueError):
        G.B[0, 0] = 5.0  # read-only array


# ---------------------------------------------------------------------------- MT-GP posterior
@pytest.mark.parametrize(
    "make", [lambda: ICM(RBF(0.3), _random_B(4, 0)), lambda: UniformTask(RBF(0.3), 4, 0.4)]
)
def test_icm_fast_path_equals_dense(data, make):
    X, Y, Xs = data
    kernel = make()
    fast = MultiTaskGP(kernel, 0.1).fit(X[:10], Y[:10]).add(X[10:], Y[10:])
    dense = MultiTaskGP(kernel, 0.1, method="dense").fit(X[:17], Y[:17]).add(X[17:], Y[17:])
    assert fast.method_ == "icm" and dense.method_ == "dense"
    mean_o, cov_o = _dense_oracle(kernel, X, Y, Xs, 0.1)
    for model in (fast, dense):
        mean, cov = model.predict(Xs, cov="full")
        assert np.max(np.abs(mean - mean_o)) < 1e-8
        assert np.max(np.abs(cov - cov_o)) < 1e-8
        _, norm = model.predict(Xs)
        assert np.allclose(norm, np.linalg.eigvalsh(cov_o)[:, -1], atol=1e-8)
    assert fast.info_gain() == pytest.approx(dense.info_gain(), rel=1e-10)


def test_info_gain_is_the_chain_rule_sum(data):
    """1/2 log det(I + G_t/eta) = 1/2 sum_s log det(I + Gamma_{s-1}(x_s, x_s)/eta), the sum in beta_t."""
    X, Y, _ = data
    kernel = ICM(RBF(0.3), _random_B(4, 0))
    model = MultiTaskGP(kernel, 0.1)
    total = 0.0
    for x, y in zip(X, Y, strict=True):
        _, cov = model.predict(x[None, :], cov="full")
        total += 0.5 * np.linalg.slogdet(np.eye(4) + cov[0] / 0.1)[1]
        model.add(x[None, :], y[None, :])
    assert model.info_gain() == pytest.approx(total, rel=1e-9)
    assert model.info_gain() == pytest.approx(0.5 * np.linalg.slogdet(np.eye(120) + kernel.gram(X) / 0.1)[1])


def test_independent_kernel_gives_independent_gp_posteriors(data):
    X, Y, Xs = data
    lengths = [0.2, 0.3, 0.5, 0.8]
    kernel = Independent([RBF(length) for length in lengths])
    for method in ("dense", "independent"):
        model = MultiTaskGP(kernel, 0.1, method=method).fit(X, Y)
        mean, cov = model.predict(Xs, cov="full")
        for i, length in enumerate(lengths):
            sk = GaussianProcessRegressor(SkRBF(length), alpha=0.1, optimizer=None).fit(X, Y[:, i])
            m, s = sk.predict(Xs, return_std=True)
            assert np.allclose(mean[:, i], m, atol=1e-10)
            assert np.allclose(cov[:, i, i], s**2, atol=1e-10)
        off = cov.copy()
        off[:, np.arange(4), np.arange(4)] = 0.0
        assert np.max(np.abs(off)) < 1e-12


def test_lcm_dense_matches_oracle_and_prior_before_data(data):
    X, Y, Xs = data
    kernel = LCM([(RBF(0.2), _random_B(4, 1)), (RBF(0.7), _random_B(4, 2))])
    model = MultiTaskGP(kernel, 0.05)
    mean0, cov0 = model.predict(Xs, cov="full")
    assert np.all(mean0 == 0) and np.allclose(cov0, kernel(Xs))
    model.fit(X, Y)
    mean, cov = model.predict(Xs, cov="full")
    mean_o, cov_o = _dense_oracle(kernel, X, Y, Xs, 0.05)
    assert np.max(np.abs(mean - mean_o)) < 1e-8 and np.max(np.abs(cov - cov_o)) < 1e-8


def test_model_bad_input(data):
    X, Y, _ = data
    model = MultiTaskGP(ICM(RBF(0.3), _random_B(4, 0)), 0.1)
    with pytest.raises(ValueError, match=r"shape \(t, 4\)"):
        model.fit(X, Y[:, :3])
    bad = Y.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="row 2, task 1"):
        model.fit(X, bad)
    with pytest.raises(ValueError, match="30 rows"):
        model.fit(X, np.vstack([Y, Y[:1]]))
    with pytest.raises(ValueError, match="noise"):
        MultiTaskGP(ICM(RBF(0.3), np.eye(2)), 0.0)
    with pytest.raises(ValueError, match="needs an ICM kernel"):
        MultiTaskGP(Independent([RBF(0.3)]), 0.1, method="icm")
    model.fit(X, Y)
    with pytest.raises(ValueError, match="NaN"):
        model.add(X[:1], [[1.0, np.nan, 0.0, 0.0]])
    assert model.n_observations == 30  # the failed add lost nothing


# ---------------------------------------------------------------------------- MT-BKB
@pytest.mark.parametrize("method", ["icm", "dense"])
def test_bkb_keeping_every_point_equals_mtkb(method):
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(12, 1))
    Y = rng.normal(size=(12, 3))
    Xs = np.linspace(0, 1, 7)[:, None]
    kernel = ICM(RBF(0.1), _random_B(3, 4))
    exact = MultiTaskGP(kernel, 0.1).fit(X, Y)
    approx = BudgetedMultiTaskGP(kernel, 0.1, q=math.inf, method=method, seed=0).fit(X, Y)
    assert approx.dictionary_size_ == 12 and approx.dictionary_sizes_ == list(range(1, 13))
    m1, c1 = exact.predict(Xs, cov="full")
    m2, c2 = approx.predict(Xs, cov="full")
    # the Nystrom pseudo-inverse drops eigen-directions below 1e-10 x the largest: K_t here has
    # condition number ~1e5, so the agreement is limited by that round-off, far below the noise 0.1
    assert np.max(np.abs(m1 - m2)) < 1e-7
    assert np.max(np.abs(c1 - c2)) < 1e-9
    assert approx.info_gain() == pytest.approx(exact.info_gain(), rel=1e-8)


def test_bkb_variance_within_rho_of_exact():
    """Theorem 3's property Gamma_t/rho <= Gamma~_t <= rho Gamma_t, on a fixed instance with eps = 0.5."""
    rng = np.random.default_rng(11)
    X = rng.uniform(size=(200, 1))
    Y = rng.normal(size=(200, 3)) * 0.3
    B = _random_B(3, 7)
    kernel = ICM(RBF(1.0), B / np.linalg.eigvalsh(B)[-1])
    eps = 0.5
    approx = BudgetedMultiTaskGP(kernel, 0.1, eps=eps, horizon=200, seed=2).fit(X, Y)
    exact = MultiTaskGP(kernel, 0.1).fit(X, Y)
    grid = np.linspace(0, 1, 101)[:, None]
    assert approx.dictionary_size_ < 180  # the budget really dropped points (157 of 200 kept)
    rho = (1 + eps) / (1 - eps)
    _, c_exact = exact.predict(grid, cov="full")
    _, c_approx = approx.predict(grid, cov="full")
    xi, U = kernel.eig
    for ce, ca in zip(c_exact, c_approx, strict=True):
        # both are diagonal in B's eigenbasis: compare the eigen-coordinates with a positive xi
        de, da = np.diag(U.T @ ce @ U), np.diag(U.T @ ca @ U)
        assert np.all(da >= de / rho - 1e-12) and np.all(da <= rho * de + 1e-12)


def test_bkb_dense_and_icm_paths_agree():
    rng = np.random.default_rng(2)
    grid = np.linspace(0, 1, 41)[:, None]
    X = grid[rng.integers(0, 41, size=60)]
    Y = rng.normal(size=(60, 2))
    kernel = ICM(RBF(0.25), _random_B(2, 9))
    a = BudgetedMultiTaskGP(kernel, 0.1, q=20.0, method="icm", seed=4).fit(X, Y)
    b = BudgetedMultiTaskGP(kernel, 0.1, q=20.0, method="dense", seed=4).fit(X, Y)
    assert a.dictionary_sizes_ == b.dictionary_sizes_  # same random draws, same probabilities
    assert np.array_equal(a.dictionary_, b.dictionary_)
    m1, c1 = a.predict(grid, cov="full")
    m2, c2 = b.predict(grid, cov="full")
    assert np.max(np.abs(m1 - m2)) < 1e-6 and np.max(np.abs(c1 - c2)) < 1e-8


def test_bkb_q_formula_and_single_task():
    eps, T, delta = 0.5, 200, 0.1
    rho = 3.0
    assert bkb_q(eps, T, delta) == pytest.approx(6 * rho * math.log(4 * T / delta) / eps**2)
    model = BKB(RBF(0.2), 0.1, eps=eps, horizon=T, delta=delta, seed=0)
    assert model.q is None and model.q_ == pytest.approx(bkb_q(eps, T, delta))
    model.fit(np.linspace(0, 1, 20)[:, None], np.sin(np.linspace(0, 3, 20)))
    mean, norm = model.predict([[0.5]])
    assert mean.shape == (1, 1) and norm.shape == (1,)
    with pytest.raises(ValueError, match="eps"):
        BKB(RBF(0.2), eps=1.0)


def test_bkb_q_is_derived_again_by_clone_and_set_params():
    # q was stored as if the user had set it: clone(horizon=10) and set_params(eps=0.9) kept the q
    # derived from the first (eps, horizon), so the dictionary kept the wrong share of the points
    model = BudgetedMultiTaskGP(RBF(0.2), 0.1, eps=0.5, horizon=1000, seed=0)
    assert model.get_params()["q"] is None
    assert model.clone(horizon=10).q_ == pytest.approx(bkb_q(0.5, 10, 0.1))
    assert model.clone(delta=0.5).q_ == pytest.approx(bkb_q(0.5, 1000, 0.5))
    assert model.set_params(eps=0.9).q_ == pytest.approx(bkb_q(0.9, 1000, 0.1))
    assert BudgetedMultiTaskGP(RBF(0.2), q=7.0).clone(eps=0.9).q_ == 7.0  # a given q is kept
    copied = sklearn_clone(BudgetedMultiTaskGP(RBF(0.2), eps=0.5, horizon=50))
    assert copied.q is None and copied.q_ == pytest.approx(bkb_q(0.5, 50, 0.1))


# ---------------------------------------------------------------------------- scalarisations
def test_scalarizations_match_their_formulas():
    Y = np.array([[1.0, 3.0, -2.0], [0.5, 0.5, 0.5]])
    W = np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])
    lin = Linear()(Y, W)
    assert np.allclose(lin, [[sum(w * y for w, y in zip(wr, yr, strict=True)) for wr in W] for yr in Y])
    z = np.array([-1.0, 0.0, -3.0])
    cheb = Chebyshev(ref=tuple(z))(Y, W)
    assert np.allclose(
        cheb, [[min(w * (y - zz) for w, y, zz in zip(wr, yr, z, strict=True)) for wr in W] for yr in Y]
    )
    assert Linear().lipschitz_constant(W) == pytest.approx(max(np.linalg.norm(W, axis=1)))
    assert Chebyshev().lipschitz_constant(W) == pytest.approx(0.6)


def test_weight_samplers_follow_paria():
    n = 4
    u = 1.0 - np.random.default_rng(8).random((5, n))
    lin = Linear().sample_weights(n, 5, seed=8)
    assert np.allclose(lin, u / u.sum(axis=1, keepdims=True))
    a = u.sum(axis=1, keepdims=True) / u
    cheb = Chebyshev().sample_weights(n, 5, seed=8)
    assert np.allclose(cheb, a / a.sum(axis=1, keepdims=True))
    for W in (lin, cheb):
        assert np.all(W > 0) and np.allclose(W.sum(axis=1), 1.0)
    # weights for another number of tasks than the reference point has: refused (they were drawn)
    assert Chebyshev(ref=(0.0,) * n).sample_weights(n, 5, seed=8) == pytest.approx(cheb)
    with pytest.raises(ValueError, match=r"n_tasks=3, but the reference point \(0.0, 0.0, 0.0, 0.0\) has 4"):
        Chebyshev(ref=(0.0,) * n).sample_weights(3, 5, seed=8)


def test_scalarization_lipschitz_holds_empirically():
    rng = np.random.default_rng(1)
    for s in (Linear(), Chebyshev(ref=(0.0, 0.0, 0.0))):
        W = s.sample_weights(3, 50, seed=2)
        U, V = rng.normal(size=(200, 3)), rng.normal(size=(200, 3))
        gap = np.abs(s(U, W) - s(V, W))
        assert np.all(gap <= s.lipschitz * np.linalg.norm(U - V, axis=1)[:, None] + 1e-12)


def test_bad_weights_and_ref():
    with pytest.raises(ValueError, match="sum to 1"):
        Linear()([[1.0, 2.0]], [[0.5, 0.6]])
    with pytest.raises(ValueError, match="positive"):
        Linear()([[1.0, 2.0]], [[1.5, -0.5]])
    with pytest.raises(ValueError, match="2 tasks"):
        Chebyshev(ref=(0.0, 0.0, 0.0))([[1.0, 2.0]], [[0.5, 0.5]])
    with pytest.raises(ValueError, match="finite"):
        Chebyshev(ref=(0.0, float("nan")))


# ---------------------------------------------------------------------------- bound and acquisition
def test_multitask_bound_formulas(data):
    X, Y, _ = data
    model = MultiTaskGP(ICM(RBF(0.3), _random_B(4, 0)), 0.1).fit(X, Y)
    bound = MultiTaskBound(b=2.0, sigma=0.1, delta=0.1)
    log_det = np.linalg.slogdet(np.eye(120) + model.kernel.gram(X) / 0.1)[1]
    expected = 2.0 + 0.1 / math.sqrt(0.1) * math.sqrt(2 * math.log(10) + log_det)
    assert bound.root_beta(model) == pytest.approx(expected, rel=1e-10)
    assert bound.beta_t(31, model) == pytest.approx(expected**2)
    approx = BudgetedMultiTaskGP(model.kernel, 0.1, eps=0.5, seed=0).fit(X, Y)
    rho = 3.0
    expected_bkb = 2.0 * (1 + 1 / math.sqrt(0.5)) + 0.1 / math.sqrt(0.1) * math.sqrt(
        2 * math.log(20) + rho * 2 * approx.info_gain()
    )
    assert bound.root_beta(approx) == pytest.approx(expected_bkb, rel=1e-10)
    with pytest.raises(ValueError, match="not a budgeted"):
        MultiTaskBound(b=1.0, sigma=0.1, eps=0.5).root_beta(model)


def test_scalarized_ucb_is_eq3(data):
    X, Y, Xs = data
    model = MultiTaskGP(UniformTask(RBF(0.3), 4, 0.5), 0.1).fit(X, Y)
    s = Chebyshev(ref=(-3.0,) * 4)
    acq = ScalarizedUCB(s, Constant(4.0), n_weights=30, seed=3)
    mean, norm = model.predict(Xs)
    W = s.sample_weights(4, 30, 3)
    expected = np.mean(s(mean, W), axis=1) + 2.0 * np.sqrt(norm)
    assert np.allclose(acq.bind(model)(Xs), expected)
    # random mode: one lambda per round, reproducible and different across rounds
    rnd = ScalarizedUCB(s, Constant(4.0), mode="random", seed=3)
    w31, w32 = rnd.weights(4, 31), rnd.weights(4, 32)
    assert w31.shape == (1, 4) and not np.allclose(w31, w32) and np.allclose(w31, rnd.weights(4, 31))
    assert np.allclose(rnd.bind(model)(Xs), s(mean, w31)[:, 0] + 2.0 * np.sqrt(norm))
    # MOBO: componentwise optimism
    mobo = ScalarizedUCB(Linear(), Constant(4.0), optimism="componentwise", n_weights=10, seed=1)
    _, full = model.predict(Xs, cov="full")
    sd = np.sqrt(np.diagonal(full, axis1=1, axis2=2))
    W = Linear().sample_weights(4, 10, 1)
    assert np.allclose(mobo.bind(model)(Xs), np.mean(Linear()(mean + 2.0 * sd, W), axis=1))


# ---------------------------------------------------------------------------- metrics
def _hv_inclusion_exclusion(P, ref):
    total = 0.0
    for r in range(1, len(P) + 1):
        for subset in itertools.combinations(P, r):
            corner = np.min(np.array(subset), axis=0)
            total += (-1) ** (r + 1) * np.prod(np.clip(corner - ref, 0.0, None))
    return total


@pytest.mark.parametrize("n", [2, 3, 4])
def test_hypervolume_exact_against_inclusion_exclusion(n):
    rng = np.random.default_rng(n)
    for _ in range(5):
        P = rng.uniform(size=(7, n))
        ref = np.full(n, 0.05)
        assert hypervolume(P, ref) == pytest.approx(_hv_inclusion_exclusion(P, ref), rel=1e-12)


def test_hypervolume_monte_carlo_and_pareto():
    rng = np.random.default_rng(0)
    P = rng.uniform(size=(25, 3))
    hv = hypervolume(P, np.zeros(3))
    S = rng.uniform(size=(200_000, 3))
    inside = np.any(np.all(S[:, None, :] <= P[None, :, :], axis=2), axis=1)
    se = math.sqrt(hv * (1 - hv) / S.shape[0])
    assert abs(inside.mean() - hv) < 4 * se
    mask = pareto_mask([[1, 2], [2, 1], [0.5, 0.5], [2, 1]])
    assert mask.tolist() == [True, True, False, True]
    assert hypervolume([[-1.0, 5.0]], [0.0, 0.0]) == 0.0


def test_regrets_on_a_finite_domain():
    F = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.6], [0.1, 0.1]])
    s = Linear()
    W = np.array([[0.5, 0.5]])
    rc = cumulative_regret(F, [3, 2, 2], s, W)
    assert np.allclose(rc, np.cumsum([0.6 - 0.1, 0.0, 0.0]))
    W2 = np.array([[0.9, 0.1], [0.1, 0.9]])
    rb = bayes_regret(F, [2, 0, 1], s, W2)
    # best per weight: 0.9 for both; after x=2: 0.6 each; after x=0: (0.9, 0.6); after x=1: (0.9, 0.9)
    assert np.allclose(rb, [0.3, 0.15, 0.0])


# ---------------------------------------------------------------------------- estimation
def test_log_marginal_likelihood_matches_scipy(data):
    from scipy.stats import multivariate_normal

    X, Y, _ = data
    kernel = ICM(RBF(0.3), _random_B(4, 0))
    expected = multivariate_normal(np.zeros(120), kernel.gram(X) + 0.1 * np.eye(120)).logpdf(Y.reshape(-1))
    for method in ("icm", "dense"):
        model = MultiTaskGP(kernel, 0.1, method=method).fit(X, Y)
        assert model.log_marginal_likelihood() == pytest.approx(expected, rel=1e-9)


def test_estimate_B_recovers_the_task_matrix():
    """Readings drawn from the ICM prior: E[R^T K^-1 R / m] = B, so many replicates recover B."""
    from warmbo.models.task_structure import estimate_B

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(20, 1))
    K = RBF(0.3).gram(X) + 1e-8 * np.eye(20)
    B = _random_B(3, 5)
    Lk, Lb = np.linalg.cholesky(K), np.linalg.cholesky(B)
    R = np.stack([Lk @ rng.normal(size=(20, 3)) @ Lb.T for _ in range(400)])
    B_hat = estimate_B(K, R)
    assert np.max(np.abs(B_hat - B)) < 0.1 * np.max(np.abs(B))  # sd of each entry ~ |B|/sqrt(8000)
    with pytest.raises(ValueError, match="NaN"):
        estimate_B(K, np.full((20, 3), np.nan))
    with pytest.raises(ValueError, match="m = 20"):
        estimate_B(K, R[0, :10])


def test_fit_omega_finds_the_generating_value():
    """Draws from UniformTask(RBF(0.1), 5, omega): the ML estimate lands near omega.

    Margin: over seeds 0-3 the estimates for omega = 0.8 spread over [0.63, 1.0] (only ~10 effective
    degrees of freedom per eigen-direction on [0, 1]), for 0.1 over [0.07, 0.11]; 0.25 covers both.
    """
    from warmbo.models.task_structure import fit_omega

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 1))
    estimates = []
    for omega in (0.1, 0.8):
        kernel = UniformTask(RBF(0.1), 5, omega)
        G = kernel.gram(X) + 0.01 * np.eye(400)
        Y = (np.linalg.cholesky(G) @ rng.normal(size=400)).reshape(80, 5)
        estimates.append(fit_omega(RBF(0.1), X, Y, noise=0.01))
        assert abs(estimates[-1] - omega) < 0.25
    assert estimates[0] < estimates[1]


def test_tabulated_kernel():
    from warmbo.kernels.tabulated import Tabulated

    K = RBF(0.3).gram(np.linspace(0, 1, 6)[:, None])
    k = Tabulated(K)
    assert np.allclose(k([[0], [3]], [[5], [1], [0]]), K[np.ix_([0, 3], [5, 1, 0])])
    assert np.allclose(k([[2], [4]]), 1.0)
    with pytest.raises(ValueError, match=r"indices 0\.\.5"):
        k([[6]], [[0]])
    with pytest.raises(ValueError, match="positive semi-definite"):
        Tabulated([[1.0, 2.0], [2.0, 1.0]])


def test_icm_compression_of_repeated_points_is_exact():
    """A finite domain with many repeats: merged points give the dense posterior, info gain and likelihood."""
    rng = np.random.default_rng(4)
    grid = np.linspace(0, 1, 15)[:, None]
    X = grid[rng.integers(0, 15, size=60)]
    Y = rng.normal(size=(60, 3))
    kernel = ICM(RBF(0.2), _random_B(3, 3))
    fast = MultiTaskGP(kernel, 0.1).fit(X[:30], Y[:30]).add(X[30:], Y[30:])
    plain = MultiTaskGP(kernel, 0.1, compress=False).fit(X, Y)
    mean_o, cov_o = _dense_oracle(kernel, X, Y, grid, 0.1)
    for model in (fast, plain):
        mean, cov = model.predict(grid, cov="full")
        assert np.max(np.abs(mean - mean_o)) < 1e-8 and np.max(np.abs(cov - cov_o)) < 1e-8
    assert fast._eig[0].size == 15 and plain._eig[0].size == 60  # 15 distinct points were factored
    dense = MultiTaskGP(kernel, 0.1, method="dense").fit(X, Y)
    assert fast.info_gain() == pytest.approx(dense.info_gain(), rel=1e-9)
    assert fast.log_marginal_likelihood() == pytest.approx(dense.log_marginal_likelihood(), rel=1e-9)


@pytest.mark.parametrize(
    "kernel",
    [
        ICM(RBF(0.3), [[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 1.5]]),
        UniformTask(RBF(0.3), 3, 0.4),
        Independent([RBF(0.3), RBF(0.5), Matern(2.5, 0.4)]),
        LCM([(RBF(0.3), np.eye(3)), (Matern(1.5, 0.2), np.full((3, 3), 0.5))]),
    ],
    ids=["icm", "uniform", "independent", "lcm"],
)
def test_rescaled_kernel_is_d_gamma_d(kernel):
    # oracle: the dense block Gram matrix conjugated by diag(d) in every block
    X = np.random.default_rng(0).random((5, 1))
    d = np.array([0.5, -2.0, 1.3])
    G = kernel.gram(X)
    D = np.kron(np.eye(5), np.diag(d))  # point-major blocks
    rescaled = kernel.rescaled(d)
    np.testing.assert_allclose(rescaled.gram(X), D @ G @ D, rtol=1e-12, atol=1e-12)
    assert type(rescaled) is {"UniformTask": ICM}.get(type(kernel).__name__, type(kernel))
    with pytest.raises(ValueError, match="3 finite scales"):
        kernel.rescaled([1.0, 2.0])


def test_standardised_model_equals_the_mt_posterior_on_hand_standardised_values():
    from warmbo.models.standardised import StandardisedMultiTaskGP

    rng = np.random.default_rng(3)
    X = rng.random((12, 2))
    Y = np.column_stack([np.sin(4 * X[:, 0]) * 50 + 7, np.cos(3 * X[:, 1]) * 0.01 - 2])
    kernel = ICM(RBF(0.3), [[1.0, 0.4], [0.4, 2.0]])
    model = StandardisedMultiTaskGP(kernel, noise=0.1).fit(X, Y)
    m, s = Y.mean(axis=0), Y.std(axis=0)
    D = 1.0 / s
    oracle = MultiTaskGP(ICM(RBF(0.3), D[:, None] * kernel.B * D[None, :]), 0.1).fit(X, (Y - m) / s)
    Xt = rng.random((5, 2))
    mean, full = model.predict(Xt, cov="full")
    o_mean, o_full = oracle.predict(Xt, cov="full")
    np.testing.assert_allclose(mean, m + s * o_mean, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(full, o_full * s[None, :, None] * s[None, None, :], rtol=1e-10, atol=1e-12)
    assert model.b_ == pytest.approx(np.max(np.linalg.norm((Y - m) / s, axis=1)))
    # a scalar kernel learns its task matrix; clone gives an unfitted copy with the override
    learned = StandardisedMultiTaskGP(RBF(0.3)).fit(X, Y)
    assert learned.kernel_.B.shape == (2, 2)
    other = learned.clone(noise=0.5)
    assert other.noise == 0.5 and not hasattr(other, "mean_")


@pytest.mark.parametrize("omega", [0.1, 0.5, 0.9])
def test_evgeniou_bonus_equals_independent_tasks_bonus_at_every_point(omega):
    """001's eq.-3 bonus with Evgeniou's kernel B = omega I + (1 - omega) 11^T / n is IT-KB's.

    B's eigenvalues are 1 (direction 1/sqrt(n)) and omega (the rest); with every task observed at
    each x_t the posterior covariance Gamma_t(x, x) is diagonal in B's eigenbasis, direction i having
    the posterior variance of a GP with kernel lambda_i k and the same noise. That variance increases
    with lambda_i, so ||Gamma_t(x, x)|| is the lambda = 1 direction's: the posterior variance of one
    GP with kernel k, i.e. IT-KB's per-task variance (issue 17; docs/reproductions/multitask.md).
    Checked here for any data, not only the reproduction's, against an independent scalar GP.
    """
    from warmbo.kernels.multitask import Independent, UniformTask
    from warmbo.models import GP, MultiTaskGP

    rng = np.random.default_rng(11)
    n, eta = 4, 0.05
    k = RBF(0.2)
    X = rng.random((25, 1))
    Y = np.sin(6 * X) + 0.3 * rng.standard_normal((25, n))  # the values do not matter for variances
    test = np.linspace(0, 1, 57)[:, None]
    mt = MultiTaskGP(UniformTask(k, n, omega), eta).fit(X, Y)
    it = MultiTaskGP(Independent([k] * n), eta).fit(X, Y)
    scalar = GP(k, noise=eta).fit(X, Y[:, 0])
    _, mt_norm = mt.predict(test)
    _, it_norm = it.predict(test)
    np.testing.assert_allclose(mt_norm, scalar.predict(test)[1] ** 2, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(mt_norm, it_norm, rtol=1e-8, atol=1e-12)
    # ... while the full covariances and the means differ (the MT model shares information across
    # tasks; the independent one's cross-task covariance is exactly 0)
    _, full = mt.predict(test, cov="full")
    _, it_full = it.predict(test, cov="full")
    assert np.max(np.abs(full[:, 0, 1])) > 1e-5 and np.max(np.abs(it_full[:, 0, 1])) == 0.0
    assert np.max(np.abs(mt.predict(test, cov="none") - it.predict(test, cov="none"))) > 1e-3


def test_scalarized_ucb_tight_lipschitz_is_the_mean_max_weight():
    from warmbo.scalarization import Chebyshev, Linear

    acq = ScalarizedUCB(Chebyshev(), lipschitz="tight", n_weights=500, seed=3)
    W = acq.weights(20)
    assert acq.lipschitz_for(W) == pytest.approx(np.mean(W.max(axis=1)))  # E[max_i lambda_i]
    assert 0.05 < acq.lipschitz_for(W) < 1.0  # tighter than 001's L = 1 (weights sum to 1, n = 20)
    assert ScalarizedUCB(Chebyshev()).lipschitz_for(W) == 1.0
    lin = ScalarizedUCB(Linear(), lipschitz="tight", n_weights=200)
    Wl = lin.weights(5)
    assert lin.lipschitz_for(Wl) == pytest.approx(np.mean(np.linalg.norm(Wl, axis=1)))
    with pytest.raises(ValueError, match="'tight'"):
        ScalarizedUCB(Chebyshev(), lipschitz="loose")


def test_scalarized_ucb_trace_width_is_remark_2(data):
    # 001 Remark 2: per-task bounds combined over the tasks give tr Gamma_t(x, x) in place of its norm
    X, Y, Xs = data
    model = MultiTaskGP(UniformTask(RBF(0.3), 4, 0.5), 0.1).fit(X, Y)
    s = Chebyshev(ref=(-3.0,) * 4)
    acq = ScalarizedUCB(s, Constant(4.0), n_weights=30, optimism="trace", seed=3)
    mean, full = model.predict(Xs, cov="full")
    W = s.sample_weights(4, 30, 3)
    trace = np.trace(full, axis1=1, axis2=2)
    np.testing.assert_allclose(acq.bind(model)(Xs), np.mean(s(mean, W), axis=1) + 2.0 * np.sqrt(trace))
    _, norm = model.predict(Xs)
    assert np.all(trace >= norm - 1e-12) and np.all(trace <= 4 * norm + 1e-12)  # ||A|| <= tr A <= n ||A||
    with pytest.raises(ValueError, match="'norm', 'trace' or 'componentwise'"):
        ScalarizedUCB(s, optimism="sum")
