"""warmbo.feasibility: the classifier of success (scikit-learn's GPC) and EI weighed by it
(Gelbart et al. 2014 eq. 4), checked against the parts computed separately and finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import warmbo as wb
from warmbo.feasibility import SuccessClassifier, SuccessWeighted
from warmbo.models import GP
from warmbo.problems.functions import branin


def _cliff(n: int = 30, seed: int = 0):
    """Points of the unit square, failing where u0 > 0.6."""
    U = np.random.default_rng(seed).uniform(size=(n, 2))
    return U, U[:, 0] <= 0.6


def test_the_probability_is_low_where_evaluations_failed_and_is_the_latent_mean_s_logistic():
    from scipy.special import expit

    U, ok = _cliff()
    success = SuccessClassifier(U, ok)
    # (30 points, 15 of them failed, on a clear boundary): low at the failed points themselves, where
    # scikit-learn's averaged probability stayed near 0.3 (a review: the search went back to them)
    deep = U[:, 0] > 0.7  # (failed, 0.1 or more past the boundary)
    assert np.max(success.probability(U[deep])) < 0.05 and np.median(success.probability(U[~ok])) < 0.01
    assert np.min(success.probability(U[U[:, 0] < 0.5])) > 0.6
    averaged = success._classifier.predict_proba(U[deep])[:, 1]
    assert np.all(success.probability(U[deep]) < averaged) and np.min(averaged) > 0.1
    assert success.kernel_.k2.length_scale[1] > 10  # (u1 has no say: its lengthscale grows)
    # the latent posterior mean, k(u, X)^T (y - pi) (R&W eq. 3.21), from scikit-learn's own fit
    fit = success._classifier.base_estimator_
    X = np.random.default_rng(1).uniform(size=(7, 2))
    f = success.kernel_(X, fit.X_train_) @ (fit.y_train_ - fit.pi_)
    np.testing.assert_allclose(success.latent_mean(X), f, rtol=1e-12)
    np.testing.assert_allclose(success.probability(X), expit(f), rtol=1e-9)
    assert success.probability([[40.0, 40.0]])[0] == pytest.approx(0.5, abs=1e-6)  # (far from every trial)


def test_failures_that_have_no_place_leave_the_probability_near_the_success_rate():
    # transient failures: a fifth of the points, drawn without regard to where they are
    rng = np.random.default_rng(3)
    U = rng.uniform(size=(40, 2))
    ok = rng.uniform(size=40) > 0.2
    p = SuccessClassifier(U, ok).probability(rng.uniform(size=(200, 2)))
    # (no region to learn: the spread stays small beside the cliff's 0.8 and the mean near the rate)
    assert p.max() - p.min() < 0.3 and abs(p.mean() - ok.mean()) < 0.15


def test_the_gradient_is_each_point_s_own_central_difference():
    U, ok = _cliff()
    success = SuccessClassifier(U, ok)
    X = np.random.default_rng(2).uniform(0.1, 0.9, size=(5, 2))
    p, dp = success.probability_and_gradient(X)
    np.testing.assert_allclose(p, success.probability(X))
    h = 1e-4
    for i, x in enumerate(X):
        for j in range(2):
            e = np.zeros(2)
            e[j] = h
            fd = (success.probability([x + e])[0] - success.probability([x - e])[0]) / (2 * h)
            assert dp[i, j] == pytest.approx(fd, rel=1e-3, abs=1e-6)


def test_the_weighted_acquisition_is_ei_times_the_probability_in_every_form():
    rng = np.random.default_rng(0)
    U = rng.uniform(size=(12, 2))
    f = branin().unit().maximize_form()
    model = GP().fit(U, f(U))
    Uc, ok = _cliff()
    success = SuccessClassifier(Uc, ok)
    ei = wb.EI().bind(model)
    weighted = SuccessWeighted(ei, success)
    X = rng.uniform(size=(6, 2))
    p = success.probability(X)
    np.testing.assert_allclose(weighted(X), ei(X) * p, rtol=1e-12)
    assert weighted.has_log and weighted.has_gradient
    np.testing.assert_allclose(weighted.log_values(X), ei.log_values(X) + np.log(p), rtol=1e-10)
    values, gradients = weighted.values_and_gradients(X)
    log_values, log_gradients = weighted.log_values_and_gradients(X)
    np.testing.assert_allclose(values, weighted(X), rtol=1e-10)
    np.testing.assert_allclose(log_values, weighted.log_values(X), rtol=1e-10)
    h = 1e-5
    for i, x in enumerate(X):
        value, gradient = weighted.value_and_gradient(x)
        assert value == pytest.approx(values[i], rel=1e-10)
        np.testing.assert_allclose(gradient, gradients[i], rtol=1e-6, atol=1e-12)
        for j in range(2):
            e = np.zeros(2)
            e[j] = h
            fd = (weighted(np.array([x + e]))[0] - weighted(np.array([x - e]))[0]) / (2 * h)
            assert gradient[j] == pytest.approx(fd, rel=1e-3, abs=1e-9)
            fd_log = (
                weighted.log_values(np.array([x + e]))[0] - weighted.log_values(np.array([x - e]))[0]
            ) / (2 * h)
            assert log_gradients[i, j] == pytest.approx(fd_log, rel=1e-3, abs=1e-7)


def test_a_classifier_needs_both_outcomes_and_matching_shapes():
    U, ok = _cliff()
    with pytest.raises(ValueError, match="both complete and failed"):
        SuccessClassifier(U, np.ones(len(U), dtype=bool))
    with pytest.raises(ValueError, match=r"U \(n, d\) and ok \(n,\)"):
        SuccessClassifier(U, ok[:-1])


def _random_fifth(p: dict) -> bool:
    import hashlib

    key = repr(tuple(round(v, 9) for v in p.values())).encode()
    return int(hashlib.md5(key).hexdigest(), 16) % 100 < 20


def test_transient_failures_do_not_keep_the_classifier_from_the_optimum():
    # failures at a fifth of the points wherever they are (bench/failures.py's "random-20%", whose
    # seeds 0-4 these are): the liar fantasised them at the worst value beside the optimum and ended
    # at regrets 1e-4 to 0.05 over these seeds (0.02 median, 0.45 worst over 20); the classifier at
    # 1.3e-5 to 2.2e-3 (3e-4 median, 2.8e-3 worst over 20). The bound, 1e-2 for every seed, is 3.5x
    # the classifier's worst of 20 and a fifth of the liar's worst of these 5
    space = wb.Space([wb.Float("x", -2.0, 2.0), wb.Float("y", -2.0, 2.0)])

    def objective(p):
        if _random_fifth(p):
            raise RuntimeError("preempted")
        return (p["x"] - 0.3) ** 2 + (p["y"] + 0.2) ** 2

    regrets = []
    for seed in range(5):
        opt = wb.Optimizer(space, seed=seed)
        assert opt.failures == "classifier"
        with pytest.warns(wb.optimizer.TrialFailedWarning):
            regrets.append(opt.run(objective, budget=25, progress=False).value)
        assert any(t.state == "failed" for t in opt.history)
    assert max(regrets) < 1e-2, regrets


def test_the_failure_model_is_kept_with_the_study_and_checked(tmp_path):
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    with pytest.raises(ValueError, match=r"failures must be one of 'classifier', 'liar', got 'ignore'"):
        wb.Optimizer(space, failures="ignore")
    url = str(tmp_path / "liar.db")
    wb.Optimizer(space, storage=url, failures="liar", seed=0).close()
    assert wb.Optimizer.load(url).failures == "liar"
    assert wb.Optimizer.load(url, failures="classifier").failures == "classifier"
    assert wb.Optimizer(space, storage=url).failures == "liar"  # (opened without it: the study's own)
    other = str(tmp_path / "default.db")
    wb.Optimizer(space, storage=other, seed=0).close()
    assert wb.Optimizer.load(other).failures == "classifier"
    assert wb.Optimizer(space, storage=other, failures="liar").failures == "liar"  # (given: taken)


def test_a_seed_beyond_scikit_learn_s_range_is_taken():
    # a review: GaussianProcessClassifier takes seeds below 2**32, the optimizer's go to 2**63
    U, ok = _cliff()
    a, b = SuccessClassifier(U, ok, seed=2**40), SuccessClassifier(U, ok, seed=0)
    np.testing.assert_allclose(a.probability(U), b.probability(U))  # (2**40 % 2**32 == 0)
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("y", 0.0, 1.0)])
    opt = wb.Optimizer(space, seed=2**40, n_initial=3)
    for _ in range(3):
        point = opt.ask()
        opt.tell(point, point["x"] + point["y"])
    opt.tell_failed(opt.ask(), error="diverged")
    assert space.validate(dict(opt.ask()))


def test_a_large_study_is_classified_from_every_failure_and_a_draw_of_the_rest(monkeypatch):
    import warmbo.feasibility as feasibility

    monkeypatch.setattr(feasibility, "MAX_TRIALS", 40)  # (300 by default: a test of the rule, smaller)
    rng = np.random.default_rng(4)
    U = rng.uniform(size=(60, 2))
    ok = U[:, 0] <= 0.8
    success = SuccessClassifier(U, ok, seed=1)
    assert len(success.ok) == 40 and (~success.ok).sum() == (~ok).sum()  # (every failure kept)
    kept = {tuple(u) for u in success.U}
    assert all(tuple(u) in kept for u in U[~ok])
    again = SuccessClassifier(U, ok, seed=1)
    np.testing.assert_array_equal(again.U, success.U)  # (the same draw for the same seed)


def test_a_study_whose_own_trials_all_failed_beside_imported_rows_asks_with_the_liar(monkeypatch):
    # the imported rows (prior=..., transfer="none") are complete trials of another worker, which the
    # classifier leaves out: with every own trial failed it has no success to learn from
    import pandas as pd

    space = wb.Space([wb.Float("a", 0.0, 1.0), wb.Float("b", 0.0, 1.0)])
    rows = pd.DataFrame({"a": [0.1, 0.4, 0.6, 0.9, 0.3], "b": [0.2, 0.8, 0.5, 0.1, 0.6]})
    rows["y"] = (rows["a"] - 0.5) ** 2 + rows["b"]
    import warmbo.optimizer as optimizer_module

    seen = []
    real_suggest = optimizer_module.suggest

    def spy(model, *args, **kwargs):
        seen.append((kwargs.get("success"), len(kwargs.get("failed"))))
        return real_suggest(model, *args, **kwargs)

    monkeypatch.setattr(optimizer_module, "suggest", spy)
    opt = wb.Optimizer(space, prior=rows, transfer="none", seed=0, n_initial=2)
    for _ in range(2):
        opt.tell_failed(opt.ask(), error="crashed")
    point = opt.ask()
    assert space.validate(dict(point)) and opt.study.count("failed") == 2
    # (the imported rows count towards the design: the model chose every point, with the liar)
    assert [success for success, _ in seen] == [None] * 3 and seen[-1] == (None, 2)


def test_a_noisy_objective_beside_a_failing_region_does_not_keep_asking_there():
    # a user test: a noisy loss (sd 0.05) whose learning rates above a cliff diverge spent 35 of 80
    # evaluations failing under the classifier: EI over the best single measurement, a lucky noisy
    # value, was next to nothing near the optimum, and EI times a chance of success of 0.002 won
    # where the GP had seen nothing. EI over the model's best mean at the measured points (Gelbart et
    # al. 2014's incumbent): bench/failures.py's cliff-noisy failed 6-23 times in 40 evaluations over
    # 20 seeds before, 2-7 after; seeds 0-2 here (the benchmark's objective, noise drawn per point)
    import hashlib

    space = wb.Space([wb.Float("x", -2.0, 2.0), wb.Float("y", -2.0, 2.0)])

    def noisy(p, seed):
        if p["x"] > 0.5:
            raise RuntimeError("diverged")
        key = repr((seed, *(round(v, 9) for v in p.values()))).encode()
        draw = np.random.default_rng(int(hashlib.md5(key).hexdigest(), 16) % 2**32).standard_normal()
        return (p["x"] - 0.3) ** 2 + (p["y"] + 0.2) ** 2 + 0.05 * float(draw)

    for seed in range(3):
        opt = wb.Optimizer(space, seed=seed)
        with pytest.warns(wb.optimizer.TrialFailedWarning):
            opt.run(lambda p, seed=seed: noisy(p, seed), budget=40, progress=False)
        assert sum(t.is_failed for t in opt.history) <= 8
        best = min((t for t in opt.history if t.is_complete), key=lambda t: t.value)
        assert (best.params["x"] - 0.3) ** 2 + (best.params["y"] + 0.2) ** 2 < 0.02
