"""The model protocol: what the optimizer asks of a surrogate, written down once, and the small base
class that gives every shipped model its parameters, clone and fitted check.

A model the optimizer can use (:class:`Model`) has

- ``fit(X, y) -> self``: condition on encoded points X (t, d) and values y (maximisation convention),
  choosing hyperparameters if it does;
- ``predict(X) -> (mean, uncertainty)``: the posterior at encoded points; before ``fit`` (or ``add``)
  it raises :class:`NotFittedError`, or returns the prior where the model has one (the GP);
- ``add(X, y) -> self``: condition on more points without refitting hyperparameters (fantasies of
  pending points use it);
- ``clone(**overrides)``: an unfitted copy with the same constructor arguments, some replaced (the
  optimizer fits a clone of its prototype at every ask; a warm start is ``clone(kernel=...)``);
- ``n_observations``, ``X_train_``, ``y_train_``: the data it is conditioned on.

:class:`ModelBase` implements ``get_params`` and ``set_params`` from the constructor's signature
(scikit-learn's convention: every argument is stored under its own name, so ``sklearn.base.clone``
works too), ``clone`` and ``_check_fitted``; the error
:class:`NotFittedError` is, like scikit-learn's, a ``ValueError`` and an ``AttributeError``, so code
that catches either keeps working. It is not a subclass of scikit-learn's: importing
``sklearn.exceptions`` loads scikit-learn (and with it scipy.stats and pandas), 0.76 s of the 1.3 s
``import warmbo`` took (issue 15); scikit-learn now loads only where a model of it is trained.
Attributes named in ``_clone_shares`` (caches of source-only fits that
do not depend on the target) are shared with clones instead of recomputed.
"""

from __future__ import annotations

import inspect
import weakref
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Model", "ModelBase", "MultiTaskPrediction", "NotFittedError", "Prediction", "Regressor"]


class NotFittedError(ValueError, AttributeError):
    """A model was used before :meth:`fit` (the bases of scikit-learn's error of the same name)."""


@runtime_checkable
class Model(Protocol):
    """What :class:`~warmbo.Optimizer` asks of a surrogate (see the module docstring)."""

    def fit(self, X, y) -> Any: ...

    def predict(self, X) -> Any: ...

    def add(self, X, y) -> Any: ...

    def clone(self, **overrides) -> Any: ...

    @property
    def n_observations(self) -> int: ...

    @property
    def X_train_(self) -> np.ndarray: ...

    @property
    def y_train_(self) -> np.ndarray: ...


#: (constructor, its argument names) by class (``ModelBase._param_names_from_signature``); weak, so
#: classes made at run time are not kept alive by it
_SIGNATURE_NAMES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class ModelBase:
    """``get_params`` by signature, ``clone(**overrides)`` and a fitted check (module docstring)."""

    #: attributes a clone shares with its original (caches that do not depend on the target's data)
    _clone_shares: tuple[str, ...] = ()

    @classmethod
    def _param_names_from_signature(cls) -> list[str]:
        # once per constructor: inspect.signature took 80 us, and the optimizer clones its model
        # twice per ask (about 4% of a 50-evaluation Branin run's CPU); a replaced __init__ (a
        # patched class) is read again
        init = cls.__init__
        cached = _SIGNATURE_NAMES.get(cls)
        if cached is None or cached[0] is not init:
            signature = inspect.signature(init)
            names = tuple(
                name
                for name, p in signature.parameters.items()
                if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            )
            cached = _SIGNATURE_NAMES[cls] = (init, names)
        return list(cached[1])

    def get_params(self, deep: bool = True) -> dict:
        """Constructor arguments (scikit-learn convention). ``deep`` is accepted for scikit-learn's
        ``clone`` and ``GridSearchCV``; the arguments (kernels, hyperpriors) are immutable values, not
        estimators, so there is nothing nested to expand."""
        return {name: getattr(self, name) for name in self._param_names_from_signature()}

    def set_params(self, **params):
        """Replace constructor arguments (scikit-learn convention); returns ``self``, *unfitted*.

        An unknown name raises and leaves this model as it was; values are checked where the
        constructor's are (by the constructor, or at ``fit``). The model becomes the one the
        constructor builds from them: a fit made with the old arguments would no longer describe it.
        """
        if not params:
            return self
        other = self.clone(**params)
        self.__dict__.clear()
        self.__dict__.update(other.__dict__)
        return self

    def clone(self, **overrides):
        """An unfitted copy of the same type with the same constructor arguments, ``overrides``
        replacing some of them."""
        params = self.get_params()
        unknown = sorted(set(overrides) - set(params))
        if unknown:
            raise ValueError(f"{type(self).__name__} has no parameter(s) {unknown}; it has {sorted(params)}")
        other = type(self)(**{**params, **overrides})
        for name in self._clone_shares:
            setattr(other, name, getattr(self, name))
        return other

    def warm_start_overrides(self) -> dict:
        """Constructor overrides with which a clone starts from this fit (``{}``: from scratch)."""
        return {}

    def _not_fitted(self, how: str = "fit(X, y)") -> NotFittedError:
        return NotFittedError(f"this {type(self).__name__} is not fitted yet: call {how} first")


class _MeanFirst(tuple):
    """A posterior pair ``(mean, uncertainty)`` that reads as its mean where an array is expected."""

    __slots__ = ()

    def __new__(cls, mean: np.ndarray, uncertainty: np.ndarray):
        return super().__new__(cls, (mean, uncertainty))

    def __getnewargs__(self):  # (pickle and copy: tuple's own gives one argument, the pair)
        return tuple(self)

    @property
    def mean(self) -> np.ndarray:
        return self[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self[0])

    def __array__(self, dtype=None, copy=None):
        mean = np.asarray(self[0], dtype=dtype)
        return mean.copy() if copy else mean


class Prediction(_MeanFirst):
    """``(mean, std)``, what the single-output models' ``predict`` returns (:class:`~warmbo.GP`,
    :class:`~warmbo.Envelope`, RGPE and the other transfer baselines): unpack it (``mean, std =
    gp.predict(X)``) or read ``.mean`` and ``.std``. As an array it is the mean
    (``np.asarray(prediction)``, and its ``shape`` is the mean's), which is what scikit-learn's scorers
    read from a regressor's ``predict(X)``: ``cross_val_score(gp, X, y,
    scoring="neg_mean_squared_error")`` scores the posterior mean. Before, they took the pair for a
    2-row array and failed ("inconsistent numbers of samples")."""

    __slots__ = ()

    @property
    def std(self) -> np.ndarray:
        return self[1]


class MultiTaskPrediction(_MeanFirst):
    """``(mean, norm)``, what a multi-task model's ``predict(X)`` returns (``cov="norm"``): the
    posterior mean (N, n) and ``||Gamma_t(x, x)||`` (N,), the largest eigenvalue of the posterior
    covariance of the n outputs at each point. Unpack it or read ``.mean`` and ``.norm``; as an array
    it is the mean, as :class:`Prediction` is, so scikit-learn's scorers score the posterior mean of
    every output."""

    __slots__ = ()

    @property
    def norm(self) -> np.ndarray:
        return self[1]


class Regressor:
    """A model as scikit-learn's model selection sees a regressor (``cross_val_score``,
    ``GridSearchCV``): its type and tags, and ``score``, the R^2 of the posterior mean. Its
    ``predict(X)`` returns a :class:`Prediction` (or :class:`MultiTaskPrediction`), which a named
    scoring reads as the mean."""

    #: scikit-learn < 1.6 reads the estimator type from this attribute, later versions from the tags
    _estimator_type = "regressor"

    def __sklearn_tags__(self):
        """A regressor's tags, for ``cross_val_score`` and ``GridSearchCV`` (scikit-learn >= 1.6 asks
        every estimator for them; scikit-learn is imported here, where only it calls this)."""
        from sklearn.utils import RegressorTags, Tags, TargetTags

        return Tags(
            estimator_type="regressor", target_tags=TargetTags(required=True), regressor_tags=RegressorTags()
        )

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R^2 of the posterior mean at X against y (averaged over the
        outputs of a multi-task model), as scikit-learn's regressors score: what ``cross_val_score``
        and ``GridSearchCV`` maximise when given no ``scoring``. A named scoring (``"r2"``,
        ``"neg_mean_squared_error"``) scores the posterior mean too."""
        from sklearn.metrics import r2_score

        return float(r2_score(y, self.predict(X)[0], sample_weight=sample_weight))
