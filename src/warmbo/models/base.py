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

scikit-learn's estimator protocol without importing scikit-learn: :class:`ModelBase` answers
``__sklearn_tags__`` (and ``_more_tags``, which scikit-learn < 1.6 reads) and
``__sklearn_is_fitted__`` (what ``sklearn.utils.validation.check_is_fitted`` asks), importing
scikit-learn inside them, which only scikit-learn calls; :class:`RegressorModel` adds ``score`` (R^2
of the posterior mean, as ``RegressorMixin``'s), ``n_features_in_`` and ``feature_names_in_``. The
:class:`NotFittedError` a model raises is also scikit-learn's ``NotFittedError`` once
``sklearn.exceptions`` is loaded (code that catches scikit-learn's error has imported it), so
``except sklearn.exceptions.NotFittedError`` catches it, without ``import warmbo`` loading
scikit-learn. What holds and which of scikit-learn's checks are knowingly not met: docs/core.md,
"scikit-learn conventions".
"""

from __future__ import annotations

import inspect
import sys
import weakref
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._warnings import warn

__all__ = ["Model", "ModelBase", "NotFittedError", "RegressorModel"]


class NotFittedError(ValueError, AttributeError):
    """A model was used before :meth:`fit` (the bases of scikit-learn's error of the same name)."""


#: (scikit-learn's NotFittedError, the class deriving from it and ours), made once it is loaded
_SKLEARN_NOT_FITTED: tuple[type, type] | None = None


def not_fitted_error(message: str) -> NotFittedError:
    """A :class:`NotFittedError` with ``message``; also an instance of scikit-learn's
    ``sklearn.exceptions.NotFittedError`` when that module is loaded (scikit-learn's checks and
    ``except`` clauses test for its class; a program that names it has imported it)."""
    global _SKLEARN_NOT_FITTED
    module = sys.modules.get("sklearn.exceptions")
    theirs = getattr(module, "NotFittedError", None)
    if not isinstance(theirs, type) or not issubclass(theirs, BaseException):
        return NotFittedError(message)
    if _SKLEARN_NOT_FITTED is None or _SKLEARN_NOT_FITTED[0] is not theirs:
        both = type(
            "NotFittedError",
            (NotFittedError, theirs),
            {
                "__module__": __name__,
                "__doc__": NotFittedError.__doc__,
                # pickled (a worker process's error) as the plain warmbo error, rebuilt on loading
                "__reduce__": lambda self: (not_fitted_error, tuple(self.args[:1])),
            },
        )
        _SKLEARN_NOT_FITTED = (theirs, both)
    return _SKLEARN_NOT_FITTED[1](message)


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
        return not_fitted_error(f"this {type(self).__name__} is not fitted yet: call {how} first")

    # ------------------------------------------------------------------ scikit-learn's protocol
    #: "regressor" for the models that predict y from X (scikit-learn < 1.6 reads this attribute,
    #: later versions the tags below)
    _estimator_type: str | None = None
    #: the targets are a matrix Y (n, T) with a fixed number of columns T, never a vector
    _multi_output_only = False

    def __sklearn_is_fitted__(self) -> bool:
        """Whether the model is conditioned on data (``check_is_fitted`` asks this)."""
        return getattr(self, "n_observations", 0) > 0

    def __sklearn_tags__(self):
        """scikit-learn's tags: a regressor's (``_estimator_type``), dense 2-d float input, y
        required; a model with vector outputs (``_multi_output_only``) takes a matrix Y only.
        scikit-learn is imported here, where only scikit-learn calls this."""
        from sklearn.utils import RegressorTags, Tags, TargetTags

        multi = self._multi_output_only
        regressor = self._estimator_type == "regressor"
        return Tags(
            estimator_type=self._estimator_type,
            target_tags=TargetTags(required=True, multi_output=multi, single_output=not multi),
            regressor_tags=RegressorTags() if regressor else None,
        )

    def _more_tags(self) -> dict:
        """:meth:`__sklearn_tags__` for scikit-learn < 1.6."""
        if self._multi_output_only:
            return {"multioutput": True, "multioutput_only": True, "requires_y": True}
        return {"requires_y": True}


class RegressorModel(ModelBase):
    """A model that predicts y from points X, with scikit-learn's regressor conventions: ``score``
    (R^2 of the posterior mean), ``n_features_in_`` and ``feature_names_in_`` (the columns of a data
    frame given to :meth:`fit`), and their checks when X is given again (:meth:`_check_features`).

    A subclass calls :meth:`_record_features` in ``fit`` (on the X it was given) and
    :meth:`_check_features` where it reads new points (``predict``); it provides ``_mean(X)``, the
    posterior mean that :meth:`score` compares with y.
    """

    _estimator_type = "regressor"

    @property
    def n_features_in_(self) -> int:
        """Number of input coordinates d seen at :meth:`fit` (an AttributeError before)."""
        dim = self.input_dim if self.n_observations else None
        if dim is None:
            raise AttributeError(f"this {type(self).__name__} is not fitted yet: it has no n_features_in_")
        return int(dim)

    def _record_features(self, X) -> None:
        """``feature_names_in_``: the column names of a data frame X with string names, or none."""
        names = _feature_names(X)
        if names is not None:
            self.feature_names_in_ = names
        else:
            self.__dict__.pop("feature_names_in_", None)

    def _check_features(self, X) -> None:
        """scikit-learn's rule for the column names of X against those seen at fit: an error when
        both have names that differ, a warning when only one of them has names."""
        if "feature_names_in_" not in self.__dict__ and (type(X) is np.ndarray or not hasattr(X, "columns")):
            return  # (fitted on an array and given one: the common case, first and fast)
        fitted, given = self.__dict__.get("feature_names_in_"), _feature_names(X)
        name = type(self).__name__
        if fitted is None and given is not None:
            warn(f"X has feature names, but {name} was fitted without feature names")
        elif given is None and fitted is not None:
            warn(f"X does not have valid feature names, but {name} was fitted with feature names")
        elif fitted is not None and (len(fitted) != len(given) or np.any(fitted != given)):
            message = "The feature names should match those that were passed during fit.\n"
            unseen = sorted(set(given) - set(fitted))
            missing = sorted(set(fitted) - set(given))
            if unseen:
                message += "Feature names unseen at fit time:\n" + _listed(unseen)
            if missing:
                message += "Feature names seen at fit time, yet now missing:\n" + _listed(missing)
            if not unseen and not missing:
                message += "Feature names must be in the same order as they were in fit.\n"
            raise ValueError(message)

    def _mean(self, X) -> np.ndarray:
        return np.asarray(self.predict(X)[0])

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R^2 of the posterior mean at X against y, as scikit-learn's
        regressors score: what ``cross_val_score`` and ``GridSearchCV`` maximise when given no
        ``scoring``."""
        from sklearn.metrics import r2_score

        return float(r2_score(y, self._mean(X), sample_weight=sample_weight))


def _feature_names(X) -> np.ndarray | None:
    """The column names of a data frame X when they are all strings (scikit-learn's rule), else None."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "iloc"):
        return None
    names = np.asarray(columns, dtype=object)
    if names.ndim != 1 or names.size == 0 or not all(isinstance(v, str) for v in names):
        return None
    return names


def _listed(names: list) -> str:
    shown = "".join(f"- {name}\n" for name in names[:5])
    return shown + ("- ...\n" if len(names) > 5 else "")
