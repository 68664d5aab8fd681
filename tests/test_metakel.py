"""Meta-KeL (000): the group lasso against skglm, Prop. 2 by alternating minimisation, support
recovery and calibration on the synthetic setup of Appendix E, the Thm 5 / Cor. 7 schedule."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import norm

from warmbo import GP, UCB, MetaKeL
from warmbo.bounds import MetaKeLBound
from warmbo.kernels import RBF, Features, Legendre, RandomFourier
from warmbo.transfer.group_lasso import certificate, objective_value, solve_group_lasso
from warmbo.transfer.metakel import full_kernel, theory_lambda


def random_problem(seed, sizes, widths):
    """Random per-task features (n_s x d) and outputs with a sparse group structure."""
    rng = np.random.default_rng(seed)
    d = sum(widths)
    edges = np.concatenate([[0], np.cumsum(widths)])
    groups = [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    active = rng.choice(len(widths), max(1, len(widths) // 3), replace=False)
    features, ys = [], []
    for n in sizes:
        F = rng.standard_normal((n, d))
        beta = np.zeros(d)
        for j in active:
            beta[groups[j]] = rng.standard_normal(widths[j])
        features.append(F)
        ys.append(F @ beta + 0.1 * rng.standard_normal(n))
    return features, ys, groups


def skglm_solution(features, ys, groups, lam):
    """Independent oracle: skglm's GroupLasso on the explicit block-diagonal design (000 Fig. 3).

    Rows of task s are scaled by sqrt(N w_s) so that skglm's 1/(2N)||y - X b||^2 + alpha sum||b_g||
    equals half our objective with alpha = lam / 2.
    """
    from skglm import GroupLasso

    m, d = len(features), features[0].shape[1]
    N = sum(F.shape[0] for F in features)
    X = np.zeros((N, m * d))
    y = np.zeros(N)
    row = 0
    for s, (F, ys_) in enumerate(zip(features, ys, strict=True)):
        n = F.shape[0]
        scale = np.sqrt(N / (m * n))
        X[row : row + n, s * d : (s + 1) * d] = scale * F
        y[row : row + n] = scale * ys_
        row += n
    skl_groups = [[s * d + k for s in range(m) for k in range(g.start, g.stop)] for g in groups]
    model = GroupLasso(groups=skl_groups, alpha=lam / 2, fit_intercept=False, tol=1e-14, max_iter=10_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    return model.coef_.reshape(m, d)


def statistics(features, ys):
    m = len(features)
    G = np.stack([F.T @ F for F in features])
    c = np.stack([F.T @ y for F, y in zip(features, ys, strict=True)])
    w = np.array([1 / (m * F.shape[0]) for F in features])
    yy = np.array([y @ y for y in ys])
    return G, c, w, yy


@pytest.mark.parametrize(
    "seed, sizes, widths, lam",
    [
        (0, [30] * 6, [1] * 8, 0.05),
        (1, [10, 40, 25, 60], [2, 3, 1, 2, 4], 0.1),
        (2, [15] * 10, [3] * 5, 0.02),
    ],
)
def test_group_lasso_matches_skglm(seed, sizes, widths, lam):
    features, ys, groups = random_problem(seed, sizes, widths)
    G, c, w, yy = statistics(features, ys)
    ours = solve_group_lasso(G, c, w, groups, lam, yy=yy, tol=1e-12)
    theirs = skglm_solution(features, ys, groups, lam)
    assert ours.converged and ours.certificate <= 1e-12
    np.testing.assert_allclose(ours.beta, theirs, atol=1e-6)
    # the objective is what eq. 6 says, computed directly from the data
    direct = sum(
        np.sum((y - F @ b) ** 2) / (len(features) * F.shape[0])
        for F, y, b in zip(features, ys, ours.beta, strict=True)
    ) + lam * sum(np.linalg.norm(ours.beta[:, g]) for g in groups)
    assert ours.objective == pytest.approx(direct, rel=1e-10)
    assert objective_value(G, c, w, yy, theirs, groups, lam) >= ours.objective - 1e-10


def test_certificate_is_zero_only_at_the_optimum():
    features, ys, groups = random_problem(3, [20] * 5, [2] * 6)
    G, c, w, yy = statistics(features, ys)
    result = solve_group_lasso(G, c, w, groups, 0.05, yy=yy, tol=1e-12)
    assert certificate(G, c, w, result.beta, groups, 0.05) <= 1e-12
    perturbed = result.beta + 1e-3 * np.random.default_rng(0).standard_normal(result.beta.shape)
    assert certificate(G, c, w, perturbed, groups, 0.05) > 1e-5


def test_prop2_eta_trick_alternating_minimisation_gives_the_group_lasso_weights():
    """Solve problem (5) over (eta, f_s) by alternating exact minimisation and compare eta with Prop. 2.

    For fixed eta, in dual form a_s = D Phi_s^T (Phi_s D Phi_s^T + lam/(2 w_s) I)^-1 y_s
    (D = diag(eta) per feature) minimises w_s||y_s - Phi_s a_s||^2 + lam/2 a_s^T D^-1 a_s; for fixed a,
    eta_j = ||a^(j)|| minimises lam/2 (||a^(j)||^2/eta_j + eta_j) (Bach et al. 2004's trick).
    """
    features, ys, groups = random_problem(4, [12] * 4, [1, 2, 1, 1, 2, 1])
    lam = 0.05
    G, c, w, yy = statistics(features, ys)
    target = solve_group_lasso(G, c, w, groups, lam, yy=yy, tol=1e-13)
    eta_gl = np.array([np.linalg.norm(target.beta[:, g]) for g in groups])
    p = len(groups)
    eta = np.ones(p)
    for _ in range(20_000):
        D = np.concatenate([np.full(g.stop - g.start, eta[j]) for j, g in enumerate(groups)])
        a = []
        for F, y, ws in zip(features, ys, w, strict=True):
            K = (F * D) @ F.T + lam / (2 * ws) * np.eye(F.shape[0])
            a.append(D * (F.T @ np.linalg.solve(K, y)))
        a = np.array(a)
        new = np.array([np.linalg.norm(a[:, g]) for g in groups])
        if np.max(np.abs(new - eta)) < 1e-13:
            eta = new
            break
        eta = new
    np.testing.assert_allclose(eta, eta_gl, rtol=1e-4, atol=1e-4 * np.max(eta_gl))
    assert np.array_equal(eta > 1e-3 * eta.max(), eta_gl > 0)


def test_fit_attributes_and_kernel_of_eq7():
    rng = np.random.default_rng(0)
    base = [Legendre(j) for j in range(1, 9)]
    tasks = []
    for _ in range(15):
        x = rng.uniform(-1, 1, 25)
        a, b = rng.uniform(0.5, 1.0, 2)
        tasks.append(
            (
                x,
                a * base[1].features(x)[:, 0]
                - b * base[5].features(x)[:, 0]
                + 0.01 * rng.standard_normal(25),
            )
        )
    meta = MetaKeL(base, lam=0.01).fit(tasks)
    assert meta.support_.tolist() == [1, 5]
    assert len(meta.coef_) == 15 and meta.coef_[0].shape == (8,)
    np.testing.assert_allclose(meta.weights_, np.linalg.norm(np.array(meta.coef_), axis=0), rtol=1e-12)
    assert meta.c1_ == pytest.approx(meta.weights_[meta.support_].min())
    X = np.linspace(-1, 1, 7)[:, None]
    expected = sum(meta.weights_[j] / meta.c1_ * base[j](X, X) for j in meta.support_)
    np.testing.assert_allclose(meta.kernel_(X, X), expected, rtol=1e-12)
    assert meta.d_hat_ == 2 and meta.certificate_ < 1e-8 * meta.lambda_max_
    total = MetaKeL(base, lam=0.01, normalize="sum").fit(tasks)
    weights = [total.weights_[j] / total.c1_ for j in total.support_]
    assert sum(weights) == pytest.approx(1.0)
    np.testing.assert_allclose(full_kernel(base)(X, X), sum(k(X, X) for k in base) / 8, rtol=1e-12)


def test_tasks_of_different_sizes_weigh_equally():
    rng = np.random.default_rng(5)
    base = [Legendre(j) for j in range(1, 6)]
    tasks = [(rng.uniform(-1, 1, n), None) for n in (5, 50, 20)]
    tasks = [(x, 2 * base[2].features(x)[:, 0] + 0.01 * rng.standard_normal(x.size)) for x, _ in tasks]
    meta = MetaKeL(base, lam=0.02).fit(tasks)
    beta = np.array(meta.coef_)
    feats = [np.hstack([k.features(x) for k in base]) for x, _ in tasks]
    direct = sum(np.mean((y - F @ b) ** 2) / 3 for (x, y), F, b in zip(tasks, feats, beta, strict=True))
    direct += 0.02 * np.sum(np.linalg.norm(beta, axis=0))
    assert meta.objective_ == pytest.approx(direct, rel=1e-9)
    assert meta.support_.tolist() == [2]


def test_random_fourier_base_kernels_select_the_right_lengthscale():
    rng = np.random.default_rng(1)
    short, long = RandomFourier(RBF(0.1), 40, seed=1), RandomFourier(RBF(1.0), 40, seed=2)
    tasks = []
    for _ in range(10):
        x = rng.uniform(-1, 1, (60, 1))
        coef = rng.standard_normal(40)
        tasks.append((x, long.features(x) @ coef + 0.01 * rng.standard_normal(60)))
    meta = MetaKeL([short, long], lam=0.05).fit(tasks)
    assert meta.support_.tolist() == [1]
    assert meta.d_hat_ == 40


def test_theory_lambda_formula():
    value = theory_lambda(sigma=0.01, n_total=2500, m=50, p=20, d_max=1, delta=0.1)
    log_term = np.log(400)
    assert value == pytest.approx(4 * 0.01 / 50 * np.sqrt(1 + 2 / 50 * (log_term + np.sqrt(50 * log_term))))


def test_bound_is_thm5_cor7():
    bound = MetaKeLBound(B=10.0, sigma=0.01, d_hat=5, c1=0.8, T=50, delta=0.1, eps=0.2)
    sbar = 1 + 2 / 50
    for t in (1, 10, 50):
        nu = 10 * (1 + 0.2 / 1.6) + 0.01 * np.sqrt(5 * np.log(1 + t / (sbar**2 * 0.8)) + 2 + 2 * np.log(10))
        assert bound.nu_t(t) == pytest.approx(nu, rel=1e-14)
        assert bound.beta_t(t) == pytest.approx(nu**2, rel=1e-14)
    assert bound.regulariser == pytest.approx(sbar**2)
    # usable as a schedule: UCB = mean + nu_t * std
    gp = GP(Legendre(1) + Legendre(2), noise=bound.regulariser).fit([[0.1], [0.5]], [1.0, 2.0])
    mean, std = gp.predict([[0.3]])
    assert UCB(bound).bind(gp)([[0.3]])[0] == pytest.approx(mean[0] + bound.nu_t(3) * std[0])


@pytest.fixture(scope="module")
def legendre_setup():
    from warmbo.problems.legendre import LegendreSetup

    return LegendreSetup


def test_support_recovery_on_the_synthetic_setup(legendre_setup):
    """Appendix E setting (p = 20, |J*| = 5, B = 10, sigma = 0.01, n = m = 50), default MetaKeL
    (lambda cross-validated over tasks): J_hat contains J* in at least 9 of 10 seeds."""
    hits = 0
    for seed in range(10):
        setup = legendre_setup(seed=seed)
        rng = np.random.default_rng(100 + seed)
        meta = MetaKeL(setup.base).fit(setup.meta_data(50, 50, rng))
        hits += set(setup.support.tolist()) <= set(meta.support_.tolist())
    assert hits >= 9


def test_meta_learned_kernel_is_calibrated(legendre_setup):
    """Coverage of k_hat's alpha-intervals after 4 noisy points is at least alpha - 0.03 (20 runs).

    Every kernel is normalised like k* (weights summing to 1) and scaled by B^2 so that prior draws
    have the norm of the targets; lambda is the Thm 4 value (noise known).
    """
    alphas = np.array([0.5, 0.8, 0.9, 0.95])
    coverage = []
    for run in range(20):
        setup = legendre_setup(seed=run)
        rng = np.random.default_rng(1000 + run)
        meta = MetaKeL(setup.base, noise=setup.noise, normalize="sum").fit(setup.meta_data(50, 50, rng))
        f = setup.sample_function(rng)
        x = rng.uniform(-1, 1, (4, 1))
        y = f(x) + setup.noise * rng.standard_normal(4)
        test = rng.uniform(-1, 1, (1000, 1))
        mean, std = GP(setup.B**2 * meta.kernel_, noise=setup.noise**2).fit(x, y).predict(test)
        error = np.abs(f(test) - mean)
        coverage.append([np.mean(error <= norm.ppf((1 + a) / 2) * std) for a in alphas])
    assert np.all(np.mean(coverage, axis=0) >= alphas - 0.03)


@pytest.mark.parametrize(
    "base, tasks, match",
    [
        ([], [(np.zeros(3), np.zeros(3))], "non-empty list"),
        ([Legendre(1), RBF(0.3)], [(np.zeros(3), np.zeros(3))], r"base\[1\]"),
        ([Legendre(1)], [], "non-empty list"),
        ([Legendre(1)], [(np.zeros((3, 1)), np.zeros(3)), (np.zeros((2, 2)), np.zeros(2))], r"tasks\[1\]"),
        ([Legendre(1)], [(np.zeros((0, 1)), np.zeros(0))], r"tasks\[0\] is empty"),
        ([Legendre(1)], [(np.array([[0.1], [np.nan]]), np.zeros(2))], r"tasks\[0\] X"),
        ([Legendre(1)], [(np.zeros((2, 1)), np.array([1.0, np.inf]))], r"tasks\[0\] y"),
        ([Legendre(1)], [(np.zeros((2, 1)), np.zeros(3))], r"tasks\[0\] y"),
        ([Features(lambda X: X / 0.0, 1)], [(np.ones((2, 1)), np.zeros(2))], r"base\[0\]"),
    ],
)
def test_bad_input(base, tasks, match):
    with pytest.raises(ValueError, match=match), np.errstate(all="ignore"):
        MetaKeL(base, lam=0.1).fit(tasks)


def test_bad_settings():
    tasks = [(np.linspace(-1, 1, 5), np.linspace(-1, 1, 5))]
    with pytest.raises(ValueError, match="lam"):
        MetaKeL([Legendre(1)], lam=-1.0).fit(tasks)
    with pytest.raises(ValueError, match="noise"):
        MetaKeL([Legendre(1)], noise=-0.1).fit(tasks)
    with pytest.raises(ValueError, match="normalize"):
        MetaKeL([Legendre(1)], lam=0.01, normalize="median").fit(tasks)
    with pytest.raises(ValueError, match="at least 2 tasks"):
        MetaKeL([Legendre(1)]).fit(tasks)
    with pytest.raises(ValueError, match="not fitted"):
        MetaKeL([Legendre(1)]).bound(B=1.0, sigma=0.1, T=10)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: MetaKeL([Legendre(1)], n_folds=1), r"n_folds .* must be an integer >= 2, got 1"),
        (lambda: MetaKeL([Legendre(1)], n_folds=0), r"n_folds .* must be an integer >= 2, got 0"),
        (lambda: MetaKeL([Legendre(1)], n_lambdas=0), r"n_lambdas .* must be a positive integer, got 0"),
        (lambda: MetaKeL([Legendre(1)], lam=0.01, n_lambdas=2.5), r"n_lambdas .* got 2.5"),
    ],
)
def test_settings_are_checked_when_fit_starts(make, match):
    """Bad fold and grid counts are named when fit starts (they failed inside numpy before);
    __init__ stores them unchecked, as scikit-learn's convention wants."""
    meta = make()
    tasks = [(np.linspace(-1, 1, 5), np.linspace(-1, 1, 5))] * 4
    with pytest.raises(ValueError, match=match):
        meta.fit(tasks)


def test_a_single_pair_for_tasks_is_named():
    X, y = np.linspace(-1, 1, 5), np.linspace(-1, 1, 5)
    for tasks in ((X, y), [X, y]):
        with pytest.raises(ValueError, match=r"single \(X, y\) pair; pass a list of \(X, y\) pairs"):
            MetaKeL([Legendre(1)], lam=0.01).fit(tasks)
    MetaKeL([Legendre(1)], lam=0.01).fit([(X, y)])  # one task, written as a list of one pair


def test_inputs_outside_the_legendre_domain_are_warned_about_once_and_inside_are_not():
    rng = np.random.default_rng(0)
    wide = [(rng.uniform(-5, 5, 20), rng.standard_normal(20)) for _ in range(4)]
    with pytest.warns(
        UserWarning, match=r"tasks\[0\]: input 0 spans \[-.*outside the domain \(-1, 1\)"
    ) as caught:
        MetaKeL([Legendre(1), Legendre(2)], lam=0.01).fit(wide)
    assert sum("outside the domain" in str(w.message) for w in caught) == 1
    # (0, 1) inputs are inside Legendre(j, domain=(0, 1)) and inside its end points: no warning
    unit = [(np.linspace(0, 1, 20), rng.standard_normal(20)) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        MetaKeL([Legendre(1, domain=(0, 1)), Legendre(2, domain=(0, 1))], lam=0.01).fit(unit)


@pytest.mark.parametrize("T", [0, -3, None, 2.5])
def test_metakel_bound_needs_a_horizon(T):
    """T is required (sbar = 1 + 2/T): the message must not offer None."""
    with pytest.raises(ValueError, match=r"^T \(the horizon\) must be a positive integer") as info:
        MetaKeLBound(B=1.0, sigma=0.1, d_hat=2, c1=1.0, T=T)
    assert "None" not in str(info.value).split("got")[0]
    with pytest.raises(ValueError, match=r"^d_hat must be a positive integer"):
        MetaKeLBound(B=1.0, sigma=0.1, d_hat=None, c1=1.0, T=10)


def test_empty_support_falls_back_to_k_full_with_a_warning():
    tasks = [(np.linspace(-1, 1, 10), 1e-6 * np.linspace(-1, 1, 10))] * 3
    with pytest.warns(RuntimeWarning, match="no base kernel"):
        meta = MetaKeL([Legendre(1), Legendre(2)], lam=10.0).fit(tasks)
    assert meta.support_.size == 0 and meta.kernel_ == full_kernel([Legendre(1), Legendre(2)])


def test_bound_covers_the_information_gain_of_its_kernel_as_tasks_are_added():
    """Lemma 13 (000): for k_hat = sum_j w_j k_j with k_j(x, x) = 1, the information gain of any t
    points is at most (d_hat / 2) log(1 + sbar^-2 t max_j w_j). The group norms (and c1, the
    smallest) grow about like sqrt(m) while k_hat stays the same, so Cor. 7's printed t / c1 fell
    below the exact gain from m = 50 tasks on (7.0, 4.5, 3.4 against about 6.3); the bound of
    MetaKeL.bound must stay above the exact gain, computed densely, for every m."""
    base = [
        Features(lambda X, w=np.pi * j: np.hstack([np.cos(w * X), np.sin(w * X)]), 2) for j in range(1, 9)
    ]  # k_j(x, x) = cos^2 + sin^2 = 1
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (50, 1))

    def tasks(m):
        out = []
        for _ in range(m):
            x = rng.uniform(-1, 1, (30, 1))
            a, b = rng.uniform(0.5, 1.0, 2)
            out.append(
                (
                    x,
                    a * np.cos(2 * np.pi * x[:, 0])
                    + b * np.sin(5 * np.pi * x[:, 0])
                    + 0.01 * rng.standard_normal(30),
                )
            )
        return out

    c1s = []
    for m in (5, 50, 200):
        meta = MetaKeL(base, noise=0.01).fit(tasks(m))
        bound = meta.bound(B=1.0, sigma=1.0, T=50)
        exact = 0.5 * np.linalg.slogdet(np.eye(50) + meta.kernel_(X, X) / bound.regulariser)[1]
        weights = meta.weights_[meta.support_] / meta.c1_
        assumed = 0.5 * bound.d_hat * np.log(1 + 50 * weights.max() / bound.regulariser)
        assert bound.weight == pytest.approx(weights.max(), rel=1e-12)
        assert exact <= assumed, (m, exact, assumed)
        root = (
            bound.d_hat * np.log(1 + 50 * weights.max() / bound.regulariser) + 2 + 2 * np.log(1 / meta.delta)
        )
        assert bound.nu_t(50) == pytest.approx(1.0 + np.sqrt(root), rel=1e-14)
        c1s.append(meta.c1_)
    assert c1s[0] < c1s[1] < c1s[2]  # the norms grow with m: what made t / c1 too small


def test_bound_after_an_empty_support_describes_k_full():
    """With no kernel selected, kernel_ is k_full and bound() is its schedule: d = sum_j d_j over
    all p kernels, c1 = p (k_full's weights are 1/p) and norm bound sqrt(p) B. The norm bound is
    checked densely: f = B phi_j (eta* = e_j, the extreme case of ||eta*||_1 <= 1, ||f||_k* = B)
    has ||f||_{k_full} = sqrt(f^T K_full^+ f) = sqrt(p) B on points where K_full has full rank."""
    square = Features(lambda X: np.column_stack([X[:, 0] ** 2, X[:, 0] ** 4]), dim=2, name="even")
    base = [Legendre(1), Legendre(3), square]
    tasks = [(np.linspace(-1, 1, 10), 1e-6 * np.linspace(-1, 1, 10))] * 3
    with pytest.warns(RuntimeWarning, match="no base kernel"):
        meta = MetaKeL(base, lam=10.0, delta=0.2).fit(tasks)
    B = 2.0
    bound = meta.bound(B=B, sigma=0.1, T=20, eps=0.5)
    assert bound == MetaKeLBound(B=np.sqrt(3) * B, sigma=0.1, d_hat=4, c1=3.0, T=20, delta=0.2, eps=0.0)
    X = np.linspace(-0.9, 0.95, 9)[:, None]
    K_full = meta.kernel_(X, X)
    assert np.linalg.matrix_rank(K_full) == 4
    for kernel in base[:2]:
        f = B * kernel.features(X)[:, 0]
        assert np.sqrt(f @ np.linalg.pinv(K_full) @ f) == pytest.approx(bound.B, rel=1e-8)
        assert np.sqrt(f @ np.linalg.pinv(kernel(X, X)) @ f) == pytest.approx(B, rel=1e-8)


def test_cross_validated_lambda_scales_with_y_and_keeps_the_support():
    # (hostile-input user test) the regulariser of the scoring ridge regression was in y's units and
    # its kernel was not: y x 100 chose all 7 kernels where y x 1 chose the 2 true ones, y x 1e12 one
    rng = np.random.default_rng(0)
    base = [Legendre(j) for j in range(1, 8)]

    def task(n):
        x = rng.uniform(-1, 1, n)
        return x, base[1].features(x)[:, 0] + 0.5 * base[4].features(x)[:, 0] + 0.01 * rng.standard_normal(n)

    tasks = [task(25) for _ in range(8)]
    unit = MetaKeL(base).fit(tasks)
    assert unit.support_.tolist() == [1, 4]  # (the kernels the tasks are made of)
    for s in (1e-6, 100.0, 1e6):
        scaled = MetaKeL(base).fit([(x, s * y) for x, y in tasks])
        assert scaled.support_.tolist() == [1, 4], s
        assert scaled.lam_ == pytest.approx(s * unit.lam_, rel=1e-6)
        np.testing.assert_allclose(scaled.weights_ / s, unit.weights_, rtol=1e-4, atol=1e-6)
