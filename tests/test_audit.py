"""The confidence audit (warmbo.audit): leave-one-out coverage of a model's intervals."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import warmbo as wb
from warmbo.audit import LEVELS, audit, loo_predictions
from warmbo.kernels import RBF, Constant
from warmbo.models import GP


def gp_draw(n, lengthscale, noise, seed):
    """Points and noisy observations of one draw from the GP prior RBF(lengthscale), unit amplitude."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 1))
    K = RBF(lengthscale)(X, X) + noise * np.eye(n)
    return X, np.linalg.cholesky(K) @ rng.standard_normal(n)


def test_closed_form_loo_matches_brute_force_refits():
    X, y = gp_draw(15, 0.2, 1e-2, 0)
    gp = GP(RBF(0.2), noise=1e-2).fit(X, y)
    idx, mean, sd, method = loo_predictions(gp, X, y)
    assert method.startswith("closed form") and idx.tolist() == list(range(15))
    for i in range(15):
        keep = np.arange(15) != i
        m, s = GP(RBF(0.2), noise=1e-2).fit(X[keep], y[keep]).predict(X[i : i + 1])
        assert mean[i] == pytest.approx(m[0], abs=1e-8)
        assert sd[i] == pytest.approx(math.sqrt(s[0] ** 2 + 1e-2), abs=1e-8)  # an observation's sd


def test_coverage_is_nominal_on_draws_from_the_prior():
    # 20 draws x 30 points = 600 held-out points from the true model. Each draw's LOO residuals are
    # correlated, so the pooled coverage has more spread than a binomial of 600; a margin of 0.05
    # (about 2.5 binomial sd at q = 0.8, where the sd is 0.016) holds for every level here
    hits = {q: [] for q in LEVELS}
    for seed in range(20):
        X, y = gp_draw(30, 0.15, 1e-2, seed)
        result = audit(GP(RBF(0.15), noise=1e-2).fit(X, y), X, y)
        for q in LEVELS:
            hits[q].append(result.coverage[q])
    for q in LEVELS:
        assert abs(np.mean(hits[q]) - q) < 0.05, (q, np.mean(hits[q]))


def test_a_misspecified_lengthscale_is_overconfident_and_warned():
    # data from lengthscale 0.05, model with 0.5: the LOO means miss the wiggles, the intervals are
    # far too narrow; the warning names the likely cause
    X, y = gp_draw(40, 0.05, 1e-3, 3)
    result = audit(GP(RBF(0.5), noise=1e-3).fit(X, y), X, y)
    assert result.coverage[0.95] < 0.7
    assert any("too narrow" in w and "kernel" in w for w in result.warnings)
    good = audit(GP(RBF(0.05), noise=1e-3).fit(X, y), X, y)
    assert good.coverage[0.95] > result.coverage[0.95] + 0.2


def test_too_few_points_and_bad_levels():
    X, y = gp_draw(6, 0.2, 1e-2, 1)
    result = audit(GP(RBF(0.2), noise=1e-2).fit(X, y), X, y)
    assert any("too few points" in w for w in result.warnings)
    assert "too few trials" in result.line()
    with pytest.raises(ValueError, match="levels"):
        audit(GP(RBF(0.2), noise=1e-2).fit(X, y), X, y, levels=(0.5, 1.2))


def test_heteroscedastic_noise_is_named():
    rng = np.random.default_rng(4)
    X = rng.random((80, 1))
    f = 3 * X[:, 0]
    y = f + rng.standard_normal(80) * np.where(f > 1.5, 0.6, 0.02)  # noisy only where f is high
    model = GP(Constant(1.0) * RBF(0.5), noise=0.05, normalize_y=True).fit(X, y)
    assert any("heteroscedastic" in w for w in audit(model, X, y).warnings)


def test_optimizer_audit_is_sign_consistent_and_reports_the_theory_band():
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    f = lambda p: math.sin(7 * p["x"])  # noqa: E731
    low = wb.Optimizer(space, seed=0, acquisition=wb.UCB(wb.IGPUCB(B=1.0, R=0.1)))
    low.run(f, budget=16, progress=False)
    high = wb.Optimizer(space, seed=0, maximize=True, acquisition=wb.UCB(wb.IGPUCB(B=1.0, R=0.1)))
    for t in low.history:
        high.tell(t.params, -t.value)
    a, b = low.audit(), high.audit()
    for q in LEVELS:
        assert a.coverage[q] == pytest.approx(b.coverage[q], abs=1e-6)
        assert a.width[q] == pytest.approx(b.width[q], rel=1e-4)
    assert a.theory["schedule"] == "IGPUCB" and a.theory["beta"] > 1.0
    assert a.theory["coverage"] >= a.coverage[0.5]  # a wider band covers at least as much
    assert "intervals cover" in a.line() and "n = 16" in a.line()


def test_audit_of_a_transfer_model_refits_without_each_point():
    space = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("y", 0.0, 1.0)])
    rng = np.random.default_rng(0)
    Xs = rng.random((30, 2))
    ys = (Xs[:, 0] - 0.3) ** 2 + (Xs[:, 1] - 0.6) ** 2
    opt = wb.Optimizer(space, prior=(Xs, ys), transfer="rgpe", seed=0)
    opt.run(lambda p: (p["x"] - 0.32) ** 2 + (p["y"] - 0.58) ** 2, budget=12, progress=False)
    result = opt.audit(max_points=8)
    assert result.method.startswith("refit") and result.held_out == 8 and result.n == 12
    assert all(0.0 <= c <= 1.0 for c in result.coverage.values())
    assert all(result.width[a] < result.width[b] for a, b in zip(LEVELS, LEVELS[1:], strict=False))


def test_cli_audit_status_and_report(tmp_path):
    from typer.testing import CliRunner

    from warmbo.cli import app

    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    url = str(tmp_path / "a.db")
    opt = wb.Optimizer(space, seed=0, storage=url)
    opt.run(lambda p: math.sin(7 * p["x"]), budget=14, progress=False)
    runner = CliRunner()
    done = runner.invoke(
        app, ["audit", "--storage", url, "--levels", "0.5,0.9", "--out", str(tmp_path / "au")]
    )
    assert done.exit_code == 0, done.output
    assert "Leave-one-out calibration" in done.output and "90%" in done.output
    assert (tmp_path / "au" / "calibration.png").stat().st_size > 1000
    assert set(json.loads((tmp_path / "au" / "audit.json").read_text())["coverage"]) == {"0.5", "0.9"}
    status = runner.invoke(app, ["status", "--storage", url])
    assert "95% intervals cover" in status.output and "(n = 14, leave-one-out)" in status.output
    bad = runner.invoke(app, ["audit", "--storage", url, "--levels", "0.5,x"])
    assert bad.exit_code == 1 and "--levels" in bad.output
    page = runner.invoke(app, ["report", url, "--out", str(tmp_path / "rep")])
    assert page.exit_code == 0, page.output
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "<h2>Calibration</h2>" in html and 'alt="calibration"' in html
