"""The model protocol (warmbo.models.base) against every shipped model: one parametrised test."""

from __future__ import annotations

import numpy as np
import pytest

import warmbo as wb
from warmbo.kernels import RBF
from warmbo.kernels.multitask import ICM
from warmbo.models.standardised import StandardisedMultiTaskGP
from warmbo.transfer.baselines import BASELINES

RNG = np.random.default_rng(0)
X = RNG.random((14, 2))
X_NEW = RNG.random((3, 2))
X_TEST = RNG.random((5, 2))
Y1 = np.sin(5 * X[:, 0]) + X[:, 1]
Y1_NEW = np.sin(5 * X_NEW[:, 0]) + X_NEW[:, 1]
Y2 = np.column_stack([Y1, np.cos(3 * X[:, 1])])
Y2_NEW = np.column_stack([Y1_NEW, np.cos(3 * X_NEW[:, 1])])
SOURCE = (RNG.random((20, 2)), RNG.random(20))

SCALAR = [
    ("gp", lambda: wb.GP(RBF(0.3), noise=1e-3), "noise", 1e-2),
    ("envelope", lambda: wb.Envelope(source=SOURCE, fit_hyperparameters=False, seed=0), "seed", 1),
    *[
        (name, lambda cls=cls: cls(source=SOURCE, fit_hyperparameters=False, seed=0), "seed", 1)
        for name, cls in BASELINES.items()
    ],
]
VECTOR = [
    ("multitask-gp", lambda: wb.MultiTaskGP(ICM(RBF(0.3), [[1.0, 0.3], [0.3, 1.0]]), 0.1), "noise", 0.2),
    (
        "budgeted-multitask-gp",
        lambda: wb.BudgetedMultiTaskGP(ICM(RBF(0.3), [[1.0, 0.3], [0.3, 1.0]]), 0.1, seed=0),
        "noise",
        0.2,
    ),
    ("standardised-multitask-gp", lambda: StandardisedMultiTaskGP(RBF(0.3), 0.1), "noise", 0.2),
]
PRIOR_MODELS = ("gp", "multitask-gp", "budgeted-multitask-gp")
ALL = [(*case, False) for case in SCALAR] + [(*case, True) for case in VECTOR]


@pytest.mark.parametrize("name, make, param, value, vector", ALL, ids=[c[0] for c in ALL])
def test_every_model_satisfies_the_protocol(name, make, param, value, vector):
    model = make()
    y, y_new = (Y2, Y2_NEW) if vector else (Y1, Y1_NEW)

    if name in PRIOR_MODELS:  # a GP with no data is the prior (GP-UCB's round 1, 001's first round)
        assert np.all(np.isfinite(model.predict(X_TEST)[0]))
    else:
        with pytest.raises(wb.NotFittedError):
            model.predict(X_TEST)

    # clone: an unfitted copy of the same type, the override applied, every other parameter equal
    other = model.clone(**{param: value})
    assert type(other) is type(model) and getattr(other, param) == value
    assert {k: v for k, v in other.get_params().items() if k != param} == {
        k: v for k, v in model.get_params().items() if k != param
    }
    with pytest.raises(ValueError, match="has no parameter"):
        model.clone(not_a_parameter=1)

    assert model.fit(X, y) is model
    assert isinstance(model, wb.Model)  # (X_train_ and y_train_ exist once it is fitted)
    assert model.n_observations == X.shape[0]
    np.testing.assert_allclose(model.X_train_, X)
    np.testing.assert_allclose(model.y_train_, y, rtol=1e-12, atol=1e-12)
    mean, unc = model.predict(X_TEST)
    assert mean.shape == ((5, 2) if vector else (5,)) and np.all(np.isfinite(mean))
    assert np.asarray(unc).shape[0] == 5 and np.all(np.asarray(unc) >= 0)

    # add: conditioned on the union without a hyperparameter refit (a fantasy's update)
    model.add(X_NEW, y_new)
    assert model.n_observations == X.shape[0] + X_NEW.shape[0]
    if name in ("gp", "multitask-gp"):  # exact posteriors with fixed hyperparameters: add == refit
        refit = make().fit(np.vstack([X, X_NEW]), np.concatenate([y, y_new]))
        np.testing.assert_allclose(model.predict(X_TEST)[0], refit.predict(X_TEST)[0], rtol=1e-8, atol=1e-10)
    # the clone made before fitting is still unfitted
    assert other.n_observations == 0


def test_clone_reads_a_replaced_constructor_again():
    # the constructor's argument names are cached per class; a class whose __init__ is replaced
    # (patched) must not clone with the old names and drop the new argument
    from warmbo.models.base import ModelBase

    class Model(ModelBase):
        def __init__(self, a=1):
            self.a = a

    assert Model(a=3).clone().get_params() == {"a": 3}

    def init(self, a=1, d=4):
        self.a, self.d = a, d

    Model.__init__ = init
    assert Model(a=3, d=7).clone().get_params() == {"a": 3, "d": 7}


@pytest.mark.parametrize("name, make, param, value, vector", ALL, ids=[c[0] for c in ALL])
def test_scikit_learn_clone_and_set_params(name, make, param, value, vector):
    from sklearn.base import clone

    model = make()
    y = Y2 if vector else Y1
    copy = clone(model)  # get_params(deep=False) and the constructor agree on every argument
    assert type(copy) is type(model)
    params, copied = model.get_params(), copy.get_params(deep=True)
    assert params.keys() == copied.keys() and all(_same(params[k], copied[k]) for k in params)
    model.fit(X, y)
    assert model.set_params(**{param: value}) is model
    assert getattr(model, param) == value and model.n_observations == 0  # unfitted: a new model
    with pytest.raises(ValueError, match="has no parameter"):
        model.set_params(not_a_parameter=1)
    assert getattr(model, param) == value  # a refused call changes nothing
    assert model.fit(X, y).n_observations == X.shape[0]


def _same(a, b) -> bool:
    """Equal values, arrays inside tuples too (scikit-learn's clone deep-copies them)."""
    if isinstance(a, tuple | list):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


@pytest.mark.parametrize("scoring", [None, "neg_mean_squared_error"])
@pytest.mark.parametrize("name, make, param, value, vector", ALL, ids=[c[0] for c in ALL])
def test_every_model_predicts_what_scikit_learns_scorers_read_as_the_mean(
    name, make, param, value, vector, scoring
):
    # before: only GP.predict returned a Prediction; Envelope, RGPE and the other baselines and the
    # multi-task models returned a plain (mean, uncertainty) tuple, which a named scorer read as a
    # 2-row array ("inconsistent numbers of samples"), and they had no score for the default scoring
    from sklearn.model_selection import KFold, cross_val_score

    y = Y2 if vector else Y1
    model = make().fit(X, y)
    prediction = model.predict(X_TEST)
    kind = wb.models.MultiTaskPrediction if vector else wb.models.Prediction
    assert isinstance(prediction, kind)
    mean, unc = prediction  # the model protocol's pair, as before
    np.testing.assert_array_equal(np.asarray(prediction), mean)
    assert prediction.shape == mean.shape == ((5, 2) if vector else (5,))
    np.testing.assert_array_equal(prediction.norm if vector else prediction.std, unc)
    scores = cross_val_score(make(), X, y, cv=KFold(3), scoring=scoring)
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    r2 = model.score(X_TEST, model.predict(X_TEST).mean)  # its own mean fits itself exactly
    assert r2 == pytest.approx(1.0)
