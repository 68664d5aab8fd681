"""The transfer acquisition function (warmbo.transfer.taf) against closed forms and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

import warmbo as wb
from warmbo.acquisition import _BoundEI
from warmbo.fixed import fix
from warmbo.kernels import Constant, Matern
from warmbo.transfer.baselines import RGPE, NotFittedError
from warmbo.transfer.taf import TransferAcquisition

SPACE = wb.Space.box([(0.0, 1.0), (0.0, 1.0)])
FIXED = {"kernel": Constant(0.5) * Matern(2.5, np.full(2, 0.2)), "noise": 1e-4, "fit_hyperparameters": False}
GRID = np.array([[a, b] for a in np.linspace(0, 1, 15) for b in np.linspace(0, 1, 15)])


def bump(U, centre):
    return np.exp(-8.0 * np.sum((np.atleast_2d(U) - np.asarray(centre)) ** 2, axis=1))


XS = np.random.default_rng(0).uniform(0, 1, (30, 2))
SOURCES = [(XS, bump(XS, (0.3, 0.3))), (XS, bump(XS, (0.35, 0.3)) + 0.1 * XS[:, 0])]
X = np.random.default_rng(1).uniform(0, 1, (9, 2))
Y = 3.0 + 10.0 * bump(X, (0.4, 0.35))  # the user's scale, not standardised


def taf_model(**settings) -> RGPE:
    return RGPE(source=SOURCES, seed=0, prevent_dilution=False, **FIXED, **settings).fit(X, Y)


def oracle(model: RGPE, U, xi: float = 0.0, incumbent_z: float | None = None, baselines=None) -> np.ndarray:
    """``w_T EI_T(U) + sum_i w_i max(mu_i(U) - max_j mu_i(x_j), 0)`` with EI from scipy.stats.norm."""
    z = (Y - model.y_mean_) / model.y_std_
    best = float(np.max(z)) if incumbent_z is None else incumbent_z
    mu, sd = model.target_model_.predict(U)
    u = (mu - best - xi / model.y_std_) / sd
    out = model.weights_[-1] * ((mu - best - xi / model.y_std_) * norm.cdf(u) + sd * norm.pdf(u))
    for i, (w, source) in enumerate(zip(model.weights_[:-1], model.source_models_, strict=True)):
        base = float(np.max(source.predict(X)[0])) if baselines is None else baselines[i]
        out = out + w * np.maximum(source.predict(U)[0] - base, 0.0)
    return out


def test_taf_is_the_targets_ei_plus_each_sources_predicted_improvement():
    model = taf_model()
    assert 0.05 < model.sources_weight_ < 0.95  # both terms carry weight here
    assert np.all(model.weights_[:-1] > 0)
    bound = wb.TAF().bind(model, space=SPACE)
    assert isinstance(bound, TransferAcquisition)
    np.testing.assert_allclose(bound(GRID), oracle(model, GRID), rtol=1e-9, atol=1e-12)
    # a source adds something somewhere (it predicts better than at any of the target's points) ...
    assert np.max(bound(GRID) - model.weights_[-1] * oracle_target_only(model, GRID)) > 1e-3
    # ... but nothing at the target's own points: there TAF is the target GP's EI, scaled by its weight
    np.testing.assert_allclose(bound(X), model.weights_[-1] * oracle_target_only(model, X), atol=1e-12)
    # a margin is on the user's scale: divided by the target's standard deviation
    margin = wb.TAF(xi=0.5).bind(model, space=SPACE)
    np.testing.assert_allclose(margin(GRID), oracle(model, GRID, xi=0.5), rtol=1e-9, atol=1e-12)
    assert np.max(np.abs(margin(GRID) - bound(GRID))) > 1e-3


def oracle_target_only(model: RGPE, U) -> np.ndarray:
    z = (Y - model.y_mean_) / model.y_std_
    mu, sd = model.target_model_.predict(U)
    u = (mu - np.max(z)) / sd
    return (mu - np.max(z)) * norm.cdf(u) + sd * norm.pdf(u)


def test_taf_gradient_matches_finite_differences():
    model = taf_model()
    bound = wb.TAF().bind(model, space=SPACE)
    assert bound.has_gradient
    base = [float(np.max(s.predict(X)[0])) for s in model.source_models_]
    gains = [
        float(s.predict(np.array([[0.3, 0.3]]))[0][0]) - b
        for s, b in zip(model.source_models_, base, strict=True)
    ]
    assert max(gains) > 0  # (the first point below is where a source predicts an improvement)
    h = 1e-6
    for x in (np.array([0.3, 0.3]), np.array([0.8, 0.15]), X[0] + 0.01):
        value, grad = bound.value_and_gradient(x)
        assert value == pytest.approx(float(bound(x[None, :])[0]), rel=1e-10, abs=1e-14)
        for k in range(2):
            step = np.eye(2)[k] * h
            numeric = (bound((x + step)[None, :])[0] - bound((x - step)[None, :])[0]) / (2 * h)
            assert grad[k] == pytest.approx(numeric, rel=1e-4, abs=1e-8)


def test_taf_is_ei_on_a_model_without_sources_and_ei_stays_the_ensembles():
    model = taf_model()
    assert type(wb.EI().bind(model, space=SPACE)) is _BoundEI  # EI: on the ensemble's posterior
    gp = wb.GP(kernel=FIXED["kernel"], noise=1e-4, optimizer=None).fit(X, Y)
    taf, ei = wb.TAF(xi=0.1).bind(gp, space=SPACE), wb.EI(xi=0.1).bind(gp, space=SPACE)
    assert type(taf) is _BoundEI
    np.testing.assert_array_equal(taf(GRID), ei(GRID))
    assert isinstance(wb.TAF(), wb.EI) and repr(wb.TAF()) == "TAF(incumbent='best', xi=0.0)"
    with pytest.raises(ValueError, match="incumbent must be"):
        wb.TAF(incumbent="worst")
    with pytest.raises(NotFittedError):
        RGPE(source=SOURCES, **FIXED).transfer_acquisition()


def test_taf_on_a_slice_improves_on_the_slices_own_best():
    # the slice x0 = X[0, 0] holds one observation: the target EI's incumbent becomes that one's
    # z-score (below the study's best), and each source's baseline the larger of its mean there and
    # nothing more (min with its whole-study baseline)
    space = wb.Space([wb.Float("x0", 0.0, 1.0), wb.Float("x1", 0.0, 1.0)])
    model = taf_model()
    held = fix(space, {"x0": float(X[0, 0])})
    on = held.holds(X)
    assert on.sum() == 1
    sliced = wb.TAF().bind(model, space=space).on_slice(model, space, held)
    z = (Y - model.y_mean_) / model.y_std_
    assert float(z[on][0]) < float(np.max(z))
    baselines = [
        min(float(np.max(s.predict(X)[0])), float(s.predict(X[on])[0][0])) for s in model.source_models_
    ]
    U = held.apply(GRID.copy())
    np.testing.assert_allclose(
        sliced(U), oracle(model, U, incumbent_z=float(z[on][0]), baselines=baselines), rtol=1e-9, atol=1e-12
    )
    assert np.max(sliced(U) - wb.TAF().bind(model, space=space)(U)) > 1e-3


# ---------------------------------------------------------------------------- in the optimizer
# A CASH-like space: the sources' task favours kind "a" near x = 0.3; the new task keeps "a" there
# but is best with kind "d" near x = 0.7 (the source's "d" was poor). Session 47's finding on
# cash-digits, in miniature: EI on the ensemble keeps asking for "a" (the ensemble's mean there sits
# above every value observed, the sources' scale, so EI stays positive; the ranking keeps the
# source's weight, since it orders the study's "a" points right), TAF asks elsewhere once the
# study has tried what the sources predicted.
KINDS = wb.Space([wb.Categorical("kind", ["a", "b", "c", "d"]), wb.Float("x", 0.0, 1.0)])


def earlier(p):
    return {"a": 1.0 - 4 * (p["x"] - 0.3) ** 2, "b": 0.2, "c": 0.1, "d": 0.3 - (p["x"] - 0.7) ** 2}[p["kind"]]


def new_task(p):
    return {"a": 0.8 - 4 * (p["x"] - 0.32) ** 2, "b": 0.2, "c": 0.1, "d": 1.2 - 4 * (p["x"] - 0.7) ** 2}[
        p["kind"]
    ]


def kinds_study(seed: int, **options):
    rng = np.random.default_rng(100 + seed)
    rows = [{"kind": str(rng.choice(list("abcd"))), "x": float(rng.uniform())} for _ in range(20)]
    opt = wb.Optimizer(KINDS, prior=(rows, [earlier(p) for p in rows]), maximize=True, seed=seed, **options)
    opt.run(new_task, budget=20, progress=False)
    return opt


@pytest.mark.parametrize("seed", [1, 2])
def test_taf_leaves_the_branch_the_sources_favoured_where_ei_on_the_ensemble_stays(seed):
    taf = kinds_study(seed, acquisition=wb.TAF())
    tried = [t.params["kind"] for t in taf.study.trials()]
    assert "d" in tried[:12] and taf.best.value > 1.1  # (the new task's best is 1.2)
    ei = kinds_study(seed)  # the default, EI on the ensemble: every ask "a" but one design point
    assert [t.params["kind"] for t in ei.study.trials()].count("a") >= 19 and ei.best.value < 0.81


def test_a_stored_study_keeps_taf(tmp_path):
    path = str(tmp_path / "taf.db")
    rng = np.random.default_rng(0)
    rows = [{"kind": str(rng.choice(list("abcd"))), "x": float(rng.uniform())} for _ in range(20)]
    opt = wb.Optimizer(
        KINDS,
        prior=(rows, [earlier(p) for p in rows]),
        maximize=True,
        seed=0,
        acquisition=wb.TAF(xi=0.01),
        storage=path,
    )
    opt.run(new_task, budget=4, progress=False)
    again = wb.Optimizer.load(path)
    assert again.acquisition == wb.TAF(xi=0.01) and type(again.acquisition) is wb.TAF
