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
from warmbo.output_transform import YeoJohnson, yeo_johnson, yeo_johnson_inverse


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
    plain = wb.Optimizer(SPACE, seed=0)
    plain.run(rosenbrock, budget=3, progress=False)
    assert plain.fit_model().output_transform_ is None
    reopened = wb.Optimizer.load(storage)  # `warmbo suggest` reopens the study with its transform
    assert reopened.output_transform == "yeo-johnson"


def test_bad_output_transform_arguments():
    with pytest.raises(ValueError, match="unknown output_transform 'log'"):
        wb.Optimizer(SPACE, output_transform="log")
    prior = ([{"x": 0.0, "y": 0.0}, {"x": 1.0, "y": 1.0}], [1.0, 0.0])
    with pytest.raises(ValueError, match="applies to the optimizer's own GP"):
        wb.Optimizer(SPACE, prior=prior, output_transform="yeo-johnson")
    wb.Optimizer(SPACE, prior=prior, transfer="none", output_transform="yeo-johnson")  # prior told as trials


def test_cli_output_transform_is_stored_and_kept_on_resume(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "space.json").write_text(
        json.dumps({"params": [{"type": "float", "name": "x", "low": -2.0, "high": 2.0}]})
    )
    (tmp_path / "objmod.py").write_text("def f(p):\n    return (p['x'] - 0.5) ** 4 * 1000\n")
    runner = CliRunner()
    args = ["optimize", "objmod:f", "--space", "space.json", "--storage", "t.db", "--seed", "0"]
    done = runner.invoke(app, [*args, "--budget", "5", "--output-transform", "yeo-johnson"])
    assert done.exit_code == 0, done.output
    assert wb.Study("t.db").settings["output_transform"] == "yeo-johnson"
    again = runner.invoke(app, ["optimize", "objmod:f", "--storage", "t.db", "--budget", "7"])
    assert again.exit_code == 0, again.output
    assert wb.Optimizer.load("t.db").output_transform == "yeo-johnson" and len(wb.Study("t.db").trials()) == 7
    bad = runner.invoke(app, [*args, "--budget", "1", "--output-transform", "box-cox"])
    assert bad.exit_code != 0 and "unknown output_transform 'box-cox'" in bad.output
