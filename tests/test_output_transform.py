"""Output transforms (issue 15): Yeo-Johnson against scipy, its inverse and moments, and the optimizer
and CLI that use it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import warmbo as wb
from warmbo.cli import app
from warmbo.output_transform import (
    YeoJohnson,
    log_evidence,
    yeo_johnson,
    yeo_johnson_inverse,
    yeo_johnson_log_derivative,
)


@pytest.mark.parametrize("lmbda", [0.0, 0.3, 1.0, 1.6, 2.0])
def test_yeo_johnson_equals_scipy_and_inverts_on_the_real_line(lmbda):
    u = np.linspace(-30.0, 30.0, 121)
    np.testing.assert_allclose(yeo_johnson(u, lmbda), stats.yeojohnson(u, lmbda), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(yeo_johnson_inverse(yeo_johnson(u, lmbda), lmbda), u, rtol=1e-10, atol=1e-10)
    v = np.linspace(-8.0, 8.0, 33)  # every value of the real line has a preimage for lambda in [0, 2]
    assert np.all(np.isfinite(yeo_johnson_inverse(v, lmbda)))


def test_fit_is_scipy_maximum_likelihood_on_standardised_values_clipped_to_0_2():
    rng = np.random.default_rng(0)
    left = -np.exp(rng.normal(0.0, 0.5, 200))  # a long lower tail: lambda > 1 compresses it
    u = (left - left.mean()) / left.std()
    expected = stats.yeojohnson_normmax(u)
    assert 1.0 < expected < 2.0
    t = YeoJohnson.fit(left)
    assert t.lmbda == pytest.approx(expected, rel=1e-6)
    z = t.forward(left)
    assert z.mean() == pytest.approx(0.0, abs=1e-12) and z.std() == pytest.approx(1.0, rel=1e-12)
    assert abs(stats.skew(z)) < abs(stats.skew(left)) / 3  # closer to normal
    np.testing.assert_allclose(t.inverse(z), left, rtol=1e-10)
    heavy = np.exp(rng.normal(0.0, 2.0, 200))  # lognormal: scipy's lambda is below 0, clipped to 0
    u = (heavy - heavy.mean()) / heavy.std()
    assert stats.yeojohnson_normmax(u) < 0 and YeoJohnson.fit(heavy).lmbda == 0.0
    flat = YeoJohnson.fit(np.full(5, 3.0))  # constant values: finite, and the identity up to a shift
    np.testing.assert_allclose(flat.inverse(flat.forward([1.0, 3.0, 7.0])), [1.0, 3.0, 7.0])
    with pytest.raises(ValueError, match="at least 2 finite"):
        YeoJohnson.fit([1.0, np.nan])


def test_moments_match_monte_carlo():
    """Mean and sd of inverse(Z), Z ~ N(m, s^2), by 32-node Gauss-Hermite against 400,000 draws: the
    Monte Carlo standard error is s_y / 632, so 1% of the sd is > 6 standard errors."""
    rng = np.random.default_rng(1)
    t = YeoJohnson.fit(np.exp(rng.normal(0.0, 1.0, 60)) * 50.0)
    mean, sd = np.array([-1.0, 0.0, 1.5]), np.array([0.8, 0.3, 0.5])
    got_mean, got_sd = t.moments(mean, sd)
    draws = t.inverse(mean[:, None] + sd[:, None] * rng.standard_normal((3, 400_000)))
    np.testing.assert_allclose(got_mean, draws.mean(axis=1), atol=0.01 * draws.std(axis=1).max())
    np.testing.assert_allclose(got_sd, draws.std(axis=1), rtol=0.01)


def rosenbrock(p):
    x, y = p["x"], p["y"]
    return (1 - x) ** 2 + 100 * (y - x**2) ** 2


SPACE = wb.Space.box([(-2.0, 2.0), (-1.0, 3.0)], names=["x", "y"])


def test_optimizer_fits_the_gp_on_the_transformed_scale_and_predicts_in_user_units(tmp_path):
    storage = str(tmp_path / "yj.db")
    opt = wb.Optimizer(SPACE, seed=0, output_transform="yeo-johnson", storage=storage)
    opt.run(rosenbrock, budget=14, progress=False)
    model = opt.fit_model()
    values = np.array([t.value for t in opt.history if t.is_complete])
    t = model.output_transform_
    assert isinstance(t, YeoJohnson)
    np.testing.assert_allclose(model.y_train_, t.forward(-values))  # minimisation: signed values
    observed = [tr.params for tr in opt.history if tr.is_complete]
    mean, sd = opt.predict(observed)
    # at observed points the posterior is near the data, in the user's units and sign
    assert np.median(np.abs(mean - values) / np.ptp(values)) < 0.05 and np.all(sd >= 0)
    plain = wb.Optimizer(SPACE, seed=0, output_transform="none")
    plain.run(rosenbrock, budget=3, progress=False)
    assert plain.fit_model().output_transform_ is None
    reopened = wb.Optimizer.load(storage)  # `warmbo suggest` reopens the study with its transform
    assert reopened.output_transform == "yeo-johnson"


def test_bad_output_transform_arguments():
    with pytest.raises(ValueError, match="unknown output_transform 'log'"):
        wb.Optimizer(SPACE, output_transform="log")
    prior = ([{"x": 0.0, "y": 0.0}, {"x": 1.0, "y": 1.0}], [1.0, 0.0])
    with pytest.raises(
        ValueError, match="applies to the optimizer's own GP and to transfer='auto'; transfer='rgpe' puts"
    ):
        wb.Optimizer(SPACE, prior=prior, transfer="rgpe", output_transform="yeo-johnson")
    with pytest.raises(ValueError, match="a transfer model has none"):
        wb.Optimizer(SPACE, prior=prior, output_transform="auto")
    wb.Optimizer(SPACE, prior=prior, transfer="none", output_transform="yeo-johnson")  # prior told as trials
    assert wb.Optimizer(SPACE, prior=prior, output_transform="yeo-johnson").output_transform == "yeo-johnson"

    class NoLikelihood:  # the model protocol without a marginal likelihood
        n_observations = 0

        def fit(self, X, y):
            return self

        def predict(self, X):
            return np.zeros(len(X)), np.ones(len(X))

    with pytest.raises(ValueError, match="NoLikelihood has no log_marginal_likelihood"):
        wb.Optimizer(SPACE, model=NoLikelihood(), output_transform="auto")
    assert wb.Optimizer(SPACE, model=NoLikelihood()).output_transform == "none"  # your model, as it is
    assert wb.Optimizer(SPACE).output_transform == "yeo-johnson"  # the optimizer's own GP
    assert wb.Optimizer(SPACE, prior=prior).output_transform == "none"  # a transfer model


def test_cli_output_transform_is_stored_and_kept_on_resume(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "space.json").write_text(
        json.dumps({"params": [{"type": "float", "name": "x", "low": -2.0, "high": 2.0}]})
    )
    (tmp_path / "objmod_transform.py").write_text("def f(p):\n    return (p['x'] - 0.5) ** 4 * 1000\n")
    runner = CliRunner()
    args = ["optimize", "objmod_transform:f", "--space", "space.json", "--storage", "t.db", "--seed", "0"]
    done = runner.invoke(app, [*args, "--budget", "5", "--output-transform", "yeo-johnson"])
    assert done.exit_code == 0, done.output
    assert wb.Study("t.db").settings["output_transform"] == "yeo-johnson"
    again = runner.invoke(app, ["optimize", "objmod_transform:f", "--storage", "t.db", "--budget", "7"])
    assert again.exit_code == 0, again.output
    assert wb.Optimizer.load("t.db").output_transform == "yeo-johnson" and len(wb.Study("t.db").trials()) == 7
    # (a module name of its own: an "objmod" imported by another test made every trial fail here)
    assert all(t.is_complete for t in wb.Study("t.db").trials())
    bad = runner.invoke(app, [*args, "--budget", "1", "--output-transform", "box-cox"])
    assert bad.exit_code != 0 and "unknown output_transform 'box-cox'" in bad.output


def test_cli_auto_transfer_keeps_the_transform_it_was_given(tmp_path, monkeypatch):
    # A study made without sources stores the plain GP's transform in its settings; given sources
    # later with --output-transform yeo-johnson, auto's choice is kept with the study, so the next
    # run without the flag goes on with it (it went back to "none" before: a review of session 47).
    # The study's record says what each run's optimizer used.
    from warmbo.optimizer import TRANSFER_TRANSFORM_META

    monkeypatch.chdir(tmp_path)
    (tmp_path / "space.json").write_text(
        json.dumps({"params": [{"type": "float", "name": "x", "low": -2.0, "high": 2.0}]})
    )
    (tmp_path / "objmod_transfer_scale.py").write_text("def f(p):\n    return (p['x'] - 0.5) ** 4 * 1000\n")
    xs = np.linspace(-2.0, 2.0, 20)
    (tmp_path / "earlier.csv").write_text("x,value\n" + "".join(f"{x},{(x - 0.4) ** 4 * 900}\n" for x in xs))
    runner = CliRunner()
    base = ["optimize", "objmod_transfer_scale:f", "--storage", "c.db"]
    prior = ["--prior", "earlier.csv", "--prior-y", "value"]
    done = runner.invoke(app, [*base, "--space", "space.json", "--budget", "3", "--seed", "0"])
    assert done.exit_code == 0, done.output
    given = runner.invoke(app, [*base, "--budget", "5", *prior, "--output-transform", "yeo-johnson"])
    assert given.exit_code == 0, given.output
    assert wb.Study("c.db").get_meta(TRANSFER_TRANSFORM_META) == "yeo-johnson"
    again = runner.invoke(app, [*base, "--budget", "7"])
    assert again.exit_code == 0, again.output
    assert wb.Study("c.db").get_meta(TRANSFER_TRANSFORM_META) == "yeo-johnson"
    assert wb.Optimizer.load("c.db").output_transform == "yeo-johnson" and len(wb.Study("c.db").trials()) == 7
    plain = runner.invoke(app, [*base, "--budget", "8", "--output-transform", "none"])  # auto: either scale
    assert plain.exit_code == 0, plain.output
    assert wb.Study("c.db").get_meta(TRANSFER_TRANSFORM_META) == "none"
    assert wb.Optimizer.load("c.db").output_transform == "none"
    # another method takes no transform: "none" is accepted though the study was made with the plain
    # GP's Yeo-Johnson (it was refused, naming the stored one, and without the flag ran on "none")
    other = runner.invoke(app, [*base, "--budget", "9", "--transfer", "rgpe", "--output-transform", "none"])
    assert other.exit_code == 0, other.output
    assert len(wb.Study("c.db").trials()) == 9


@pytest.mark.parametrize("lmbda", [0.0, 0.4, 1.0, 1.7, 2.0])
def test_log_derivative_matches_finite_differences_of_forward(lmbda):
    t = YeoJohnson(lmbda, 3.0, 2.5, 0.2, 1.7)
    y = np.linspace(-20.0, 30.0, 51) + 0.013  # no point at u = 0 exactly (the kink of psi'')
    h = 1e-6
    numeric = (t.forward(y + h) - t.forward(y - h)) / (2 * h)
    np.testing.assert_allclose(np.exp(t.log_derivative(y)), numeric, rtol=1e-6)
    u = (y - 3.0) / 2.5
    np.testing.assert_allclose(
        yeo_johnson_log_derivative(u, lmbda), np.log(np.gradient(yeo_johnson(u, lmbda), u)), atol=0.05
    )


def _gp_density_oracle(model, y_raw):
    """log N(y; y_mean_ 1, y_std_^2 (K + Lambda)) with scipy, the GP's kernel and noise on its data."""
    X = model.X_train_
    cov = model.y_std_**2 * (model.kernel_.gram(X) + np.diag(np.broadcast_to(model.noise_, (X.shape[0],))))
    return stats.multivariate_normal(np.full(X.shape[0], model.y_mean_), cov).logpdf(y_raw)


@pytest.mark.parametrize("fit_mean", [False, True])
def test_log_evidence_is_the_density_of_the_raw_values(fit_mean):
    """Plain scale: the GP's marginal likelihood in the user's units is scipy's multivariate normal
    density (with the fitted constant mean when fit_mean); Yeo-Johnson scale: that density of
    z = T(y) times the Jacobian, computed here by finite differences."""
    rng = np.random.default_rng(3)
    X = rng.random((25, 2))
    y = np.exp(3.0 * X[:, 0] + X[:, 1]) * 10.0 + rng.normal(0, 0.1, 25)
    kernel = wb.kernels.Constant(1.0) * wb.kernels.Matern(2.5, [0.4, 0.7])
    prototype = wb.GP(kernel, noise=1e-2, normalize_y=True, optimizer=None, fit_mean=fit_mean)
    plain = prototype.clone().fit(X, y)
    assert log_evidence(plain, y) == pytest.approx(_gp_density_oracle(plain, y), rel=1e-9)
    t = YeoJohnson.fit(y)
    warped = prototype.clone().fit(X, t.forward(y))
    h = 1e-6
    jac = np.log((t.forward(y + h) - t.forward(y - h)) / (2 * h))
    expected = _gp_density_oracle(warped, t.forward(y)) + jac.sum()
    assert log_evidence(warped, y, t) == pytest.approx(expected, rel=1e-6)


def exponential(p):
    return float(np.exp(6.0 * p["x"] + 3.0 * p["y"]))  # skewed: most values near 0, a few of 1e9


def test_auto_chooses_the_scale_with_the_higher_evidence_and_keeps_it_with_the_study(tmp_path):
    storage = str(tmp_path / "auto.db")
    opt = wb.Optimizer(SPACE, seed=0, output_transform="auto", storage=storage)
    assert opt.output_scale is None  # no model yet
    opt.run(exponential, budget=16, progress=False)  # 16 complete: a power of two, both scales fitted
    model = opt.fit_model()
    evidence = model.output_evidence_
    # the oracle: each scale's fit on its own, scored by log_evidence
    X = opt._encode_trials([t for t in opt.history if t.is_complete])
    y = -np.array([t.value for t in opt.history if t.is_complete])
    for kind in ("none", "yeo-johnson"):
        other = wb.Optimizer(SPACE, seed=0, output_transform=kind)
        transform = YeoJohnson.fit(y) if kind == "yeo-johnson" else None
        fitted = other._fit_scaled(X, y, transform)
        penalty = 0.5 * np.log(16) if kind == "yeo-johnson" else 0.0  # BIC, for lambda
        expected = log_evidence(fitted, y, transform) - penalty
        assert evidence[kind] == pytest.approx(expected, rel=1e-6, abs=1e-6)
    # values spanning 9 orders of magnitude: the power transform is far more likely (tens of nats)
    assert evidence["yeo-johnson"] > evidence["none"] + 10.0
    assert opt.output_scale == "yeo-johnson" and isinstance(model.output_transform_, YeoJohnson)
    reopened = wb.Optimizer.load(storage)  # `warmbo suggest`: the stored choice, before any fit
    assert reopened.output_transform == "auto" and reopened.output_scale == "yeo-johnson"
    point = {"x": 0.1, "y": 0.2}
    reopened.tell(point, exponential(point))
    reopened.ask()  # at 17 complete, not a power of two: only the chosen scale is fitted
    assert isinstance(reopened.model_.output_transform_, YeoJohnson)
    assert reopened.model_.output_evidence_ == {}


def test_auto_keeps_the_plain_scale_when_the_transform_adds_nothing():
    """A constant objective: Yeo-Johnson is the identity (lambda 1, unit scales), so both scales give
    the data the same density, and the transform's BIC penalty for lambda keeps the plain scale."""
    opt = wb.Optimizer(SPACE, seed=0, output_transform="auto")
    opt.run(lambda p: 2.5, budget=8, progress=False)
    evidence = opt.fit_model().output_evidence_
    assert evidence["yeo-johnson"] == pytest.approx(evidence["none"] - 0.5 * np.log(8), abs=1e-9)
    assert opt.output_scale == "none" and opt.model_.output_transform_ is None


@pytest.mark.parametrize(
    "draw",
    [
        lambda r: r.normal(0, 1, 40),
        lambda r: np.exp(r.normal(0, 0.7, 40)),
        lambda r: -np.exp(r.normal(0, 0.4, 40)),
        lambda r: r.standard_t(2, 25),
        lambda r: r.uniform(-1, 1, 12),
    ],
)
def test_lambda_is_scipys_maximum_likelihood_clipped(draw):
    """Our lambda (scipy's log-likelihood, maximised on [-1, 3], clipped to [0, 2]) against scipy's
    yeojohnson_normmax clipped: equal to Brent's tolerance, and never a lower likelihood."""
    from warmbo.output_transform import _normmax

    for seed in range(4):
        y = draw(np.random.default_rng(seed))
        u = (y - y.mean()) / y.std()
        ours = float(np.clip(_normmax(u), 0.0, 2.0))
        theirs = float(np.clip(stats.yeojohnson_normmax(u), 0.0, 2.0))
        assert ours == pytest.approx(theirs, abs=1e-5)
        assert stats.yeojohnson_llf(ours, u) >= stats.yeojohnson_llf(theirs, u) - 1e-9


def test_auto_decides_at_powers_of_two_then_between_the_restarts():
    """Below 256 trials both scales are fitted at powers of two (with the hyperparameters' restarts);
    from 256 on at three times a power of two, so no ask pays for the restarts and both scales."""
    from warmbo.optimizer import _decides_scale

    decisions = [n for n in range(2, 2000) if _decides_scale(n)]
    assert decisions == [2, 4, 8, 16, 32, 64, 128, 384, 768, 1536]


def earlier_rosenbrock(n: int = 30, seed: int = 3):
    """A related task: Rosenbrock shifted by 0.1 in x, at n random points."""
    rng = np.random.default_rng(seed)
    rows = [
        {"x": float(a), "y": float(b)}
        for a, b in zip(rng.uniform(-2, 2, n), rng.uniform(-1, 3, n), strict=True)
    ]
    return rows, [rosenbrock({"x": r["x"] - 0.1, "y": r["y"]}) for r in rows]


def test_auto_transfer_on_the_yeo_johnson_scale_when_asked(tmp_path):
    # transfer="auto" with output_transform="yeo-johnson" (session 47): the ensemble is fitted to the
    # study's signed values on the transform's scale, predict maps back (the ensemble and the
    # study's own GP alike), and the study keeps the transform; without it, auto stays on the plain
    # scale, and so does a study made without sources that is given sources later
    url = str(tmp_path / "warm.db")
    opt = wb.Optimizer(SPACE, prior=earlier_rosenbrock(), output_transform="yeo-johnson", seed=0, storage=url)
    opt.run(rosenbrock, budget=12, progress=False)
    model = opt.fit_model()
    values = np.array([t.value for t in opt.history if t.is_complete])
    t = model.output_transform_
    assert isinstance(t, YeoJohnson) and model.target_model_ is not None
    np.testing.assert_allclose(model.y_train_, t.forward(-values))
    observed = [tr.params for tr in opt.history if tr.is_complete]
    mean, sd = opt.predict(observed, target_only=True)  # the study's own GP, in the user's units
    assert np.median(np.abs(mean - values) / np.ptp(values)) < 0.05 and np.all(sd >= 0)
    z = (model.y_train_ - model.y_mean_) / model.y_std_
    own, own_sd = model.target_model_.predict(model.X_train_)
    back, _ = t.moments(own * model.y_std_ + model.y_mean_, own_sd * model.y_std_)
    np.testing.assert_allclose(mean, -back, rtol=1e-9)
    assert np.max(np.abs(own - z)) < 0.5  # (the check above compares like with like)
    assert wb.Optimizer.load(url).output_transform == "yeo-johnson"
    plain = wb.Optimizer(SPACE, prior=earlier_rosenbrock(), seed=0)
    plain.run(rosenbrock, budget=4, progress=False)
    assert plain.output_transform == "none" and plain.fit_model().output_transform_ is None
    cold_url = str(tmp_path / "cold.db")
    cold = wb.Optimizer(SPACE, seed=0, storage=cold_url)
    cold.run(rosenbrock, budget=3, progress=False)
    cold.study.close()
    assert wb.Optimizer.load(cold_url, prior=earlier_rosenbrock()).output_transform == "none"


def test_a_study_reopened_by_the_constructor_keeps_its_output_transform(tmp_path):
    # the README's `Optimizer(space, storage=url)` of a study made with output_transform="none" went
    # on with yeo-johnson without a word; another transform given is used, with a warning
    url = str(tmp_path / "s.db")
    space = wb.Space.box([(0.0, 1.0)])
    made = wb.Optimizer(space, storage=url, output_transform="none", seed=0)
    made.tell(made.ask(), 1.0)
    assert wb.Optimizer(space, storage=url).output_transform == "none"
    with pytest.warns(UserWarning, match="was made with output_transform='none'; this Optimizer uses 'auto'"):
        other = wb.Optimizer(space, storage=url, output_transform="auto")
    assert other.output_transform == "auto"
    assert wb.Study(url).settings["output_transform"] == "none"  # the study keeps its own
    assert wb.Optimizer(space, storage=str(tmp_path / "new.db")).output_transform == "yeo-johnson"


def test_a_study_made_before_output_transforms_stays_on_the_plain_scale(tmp_path):
    # (upgrade user test) a study whose settings hold no output_transform (made before there were
    # any: its GP saw the plain scale) was reopened with yeo-johnson, where the docs say "none"
    import json
    import sqlite3

    url = str(tmp_path / "old.db")
    space = wb.Space.box([(0.0, 1.0)])
    made = wb.Optimizer(space, storage=url, seed=0)
    made.tell(made.ask(), 1.0)
    made.study.close()
    db = sqlite3.connect(url)
    settings = json.loads(db.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()[0])
    del settings["output_transform"]  # (as an early version stored them)
    db.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    db.commit()
    db.close()
    assert wb.Optimizer.load(url).output_transform == "none"
    assert wb.Optimizer(space, storage=url).output_transform == "none"
