"""Acquisition functions: UCB (GP-UCB), EI, PI and the posterior mean, in the maximisation convention.

An acquisition is a small immutable configuration (``UCB(schedule)``, ``EI(incumbent="mean")``).
``acq.bind(model, space=None, reference=None)`` fixes it to a fitted model and returns a
:class:`Bound` acquisition, a function of points in the model's input space with

- ``bound(X)`` -> values (m,) for a batch X (m, d);
- ``bound.value_and_gradient(x)`` -> (value, gradient (d,)) for one point, when the model's kernel
  supplies input gradients (``bound.has_gradient``);

which is what :func:`warmbo.maximize.maximize` maximises. The round is ``t = n_observations + 1``.
``reference`` is the model conditioned on real observations only, when ``model`` also holds
fantasised points (pending evaluations, kriging believer): the round t and the information gain
of UCB's beta_t are taken from it, so fantasies never advance the schedule. EI and PI take their
incumbent from ``model``, fantasies included, as the kriging believer prescribes (Ginsbourger et
al. 2010): a pending point predicted above the best observation raises the bar, otherwise EI stays
positive right next to it and a batch repeats it. (The optimizer fantasises failed points at the
worst value observed, so they never raise it.)

Formulas (mu, sigma the posterior mean and standard deviation; 003 eqs. 8-11):

- GP-UCB (003 eq. 8): ``mu(x) + sqrt(beta_t) sigma(x)`` with ``beta_t`` from a
  :mod:`warmbo.bounds` schedule;
- EI (003 eq. 10): ``(mu - y+) Phi(z) + sigma phi(z)``, ``z = (mu - y+) / sigma``, 0 where sigma = 0;
  incumbent ``y+`` = best observation (``"best"``) or ``mu+ = max_x mu(x)`` (``"mean"``, 003 eq. 11,
  better under noise);
- PI (Kushner 1964): ``Phi((mu - y+ - xi) / sigma)``;
- TAF (Wistuba et al. 2018), on a transfer ensemble: ``w_T EI_T + sum_i w_i max(mu_i - max_j mu_i(x_j),
  0)`` (:class:`warmbo.TAF`, :mod:`warmbo.transfer.taf`); EI on any other model;
- posterior mean ``mu(x)`` (used for ``mu+`` and for the inference regret of 000).

Multi-task (001), for a :class:`~warmbo.models.MultiTaskGP` or its budgeted version:

- :class:`ScalarizedUCB` (MT-KB, 001 eq. 3):
  ``E_lambda[s_lambda(mu_t(x))] + L beta_t^{1/2} ||Gamma_t(x, x)||^{1/2}``
  with the expectation a sample average over weights from P_lambda (``mode="expected"``), or one
  lambda_t drawn per round (``mode="random"``, 001 Section 4.4). ``optimism="componentwise"`` gives the
  MOBO acquisition of Paria et al. instead: ``s_lambda(mu_t(x) + beta_t^{1/2} sigma_t(x))`` with the
  per-task standard deviations ``sigma_{t,i}(x) = Gamma_t(x, x)_{ii}^{1/2}``.

The gradients follow from ``dEI = Phi(z) dmu + phi(z) dsigma`` and
``dPI = phi(z) (dmu - z dsigma) / sigma``.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from ._validation import check_int
from .bounds import MultiTaskBound, Schedule, Srinivas
from .scalarization import Chebyshev, Scalarization

__all__ = ["Acquisition", "Bound", "UCB", "EI", "PI", "PosteriorMean", "ScalarizedUCB"]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
_LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))
_SQRT_HALF_PI = float(np.sqrt(np.pi / 2.0))
_SQRT_2 = float(np.sqrt(2.0))


def _special():
    """``(ndtr, erfcx)`` from scipy.special, imported on first use (``import warmbo`` stays light) and
    then kept: an import statement in the search's inner function cost ~5 us per evaluation."""
    global _SPECIAL
    if _SPECIAL is None:
        from scipy.special import erfcx, ndtr

        _SPECIAL = (ndtr, erfcx)
    return _SPECIAL


_SPECIAL = None


def _pdf(z):
    return _INV_SQRT_2PI * np.exp(-0.5 * z * z)


def log_h(z) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``log h(z)`` with ``h(z) = phi(z) + z Phi(z)`` (so ``EI = sigma h(z)``), and the ratios
    ``Phi(z) / h(z)`` and ``phi(z) / h(z)`` that give ``d log EI = (Phi dmu + phi dsigma) / (sigma h)``.

    Stable for every z (Ament et al. 2023, "Unexpected improvements to expected improvement", eq. 9,
    by another route): for ``z > -1`` directly; for ``z <= -1`` through the Mills ratio
    ``m(z) = Phi(z) / phi(z) = sqrt(pi / 2) erfcx(-z / sqrt 2)``, which gives
    ``h = phi (1 + z m)``, ``log h = -z^2 / 2 - log sqrt(2 pi) + log(1 + z m)``,
    ``Phi / h = m / (1 + z m)`` and ``phi / h = 1 / (1 + z m)``; below ``z = -1000``, where
    ``1 + z m`` cancels, by its asymptotic series ``z^-2 - 3 z^-4 + 15 z^-6``.
    """
    ndtr, erfcx = _special()
    z = np.asarray(z, dtype=np.float64)
    high = z > -1.0
    if high.all():  # nothing below -1 (the search's few points often): no masks, no second branch
        pdf, cdf = _pdf(z), ndtr(z)
        h = pdf + z * cdf
        return np.log(h), cdf / h, pdf / h
    value, cdf_ratio, pdf_ratio = np.empty_like(z), np.empty_like(z), np.empty_like(z)
    if high.any():
        zh = z[high]
        pdf, cdf = _pdf(zh), ndtr(zh)
        h = pdf + zh * cdf
        value[high], cdf_ratio[high], pdf_ratio[high] = np.log(h), cdf / h, pdf / h
    low = ~high
    zl = z[low]
    mills = _SQRT_HALF_PI * erfcx(-zl / _SQRT_2)
    far = zl < -1e3  # (False for NaN: a NaN beside them leaves the others their series)
    if far.any():  # (rare: the series, and z^2 may overflow)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            square = zl * zl
            q = 1.0 + zl * mills
            inv2 = 1.0 / square[far]
            q[far] = inv2 * (1.0 - 3.0 * inv2 + 15.0 * inv2 * inv2)
            value[low] = -0.5 * square - _LOG_SQRT_2PI + np.log(q)
            cdf_ratio[low], pdf_ratio[low] = mills / q, 1.0 / q
        return value, cdf_ratio, pdf_ratio
    square = zl * zl  # (-1e3 <= z <= -1: 1 + z m is at least ~1e-6, nothing overflows)
    q = 1.0 + zl * mills
    value[low] = -0.5 * square - _LOG_SQRT_2PI + np.log(q)
    cdf_ratio[low], pdf_ratio[low] = mills / q, 1.0 / q
    return value, cdf_ratio, pdf_ratio


class Bound(ABC):
    """An acquisition fixed to a fitted model: a function of (m, d) points."""

    def __init__(self, model):
        self.model = model

    @property
    def has_gradient(self) -> bool:
        """Whether :meth:`value_and_gradient` is available (the kernel supplies input gradients)."""
        kernel = getattr(self.model, "kernel_", None)
        return bool(getattr(kernel, "has_gradient_x", False)) and hasattr(self.model, "predict_gradient")

    @abstractmethod
    def __call__(self, X) -> np.ndarray:
        """Acquisition values at the points X (m, d)."""

    @abstractmethod
    def value_and_gradient(self, x) -> tuple[float, np.ndarray]:
        """Value and gradient at one point x (d,)."""

    def values_and_gradients(self, U) -> tuple[np.ndarray, np.ndarray]:
        """Values (m,) and gradients (m, d) at m points; one batched posterior where the model has
        ``predict_gradients`` (see :meth:`_batched`), otherwise one :meth:`value_and_gradient` per point."""
        U = np.asarray(U, dtype=np.float64)
        batched = getattr(self.model, "predict_gradients", None)
        if callable(batched):
            out = self._batched(*batched(U))
            if out is not None:
                return out
        pairs = [self.value_and_gradient(u) for u in U]
        return np.array([p[0] for p in pairs], dtype=np.float64), np.array([p[1] for p in pairs])

    def _batched(self, mean, std, dmean, dstd) -> tuple[np.ndarray, np.ndarray] | None:
        """Values and gradients from batched posterior moments; None: not available for this acquisition."""
        return None

    @property
    def has_log(self) -> bool:
        """Whether :meth:`log_values_and_gradients` is available (a positive acquisition, batched moments)."""
        return False

    def log_values_and_gradients(self, U) -> tuple[np.ndarray, np.ndarray]:
        """Logarithm of the values (m,) and its gradients (m, d), for acquisitions with ``has_log``."""
        raise NotImplementedError(f"{type(self).__name__} has no log form")

    def log_values(self, U) -> np.ndarray:
        """Logarithm of the values (m,), for acquisitions with ``has_log``."""
        raise NotImplementedError(f"{type(self).__name__} has no log form")


class MomentBound(Bound):
    """An acquisition ``a(mu(x), sigma(x))`` of the posterior moments, written once as
    :meth:`_formula` ``(mean, std) -> (a, da/dmu, da/dsigma)``; values, the gradient at one point and
    the batched gradients follow by the chain rule ``da/dx = da/dmu dmu/dx + da/dsigma dsigma/dx``."""

    @abstractmethod
    def _formula(self, mean: np.ndarray, std: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Values and partial derivatives with respect to the mean and the standard deviation."""

    @staticmethod
    def _chain(d_mean, d_std, dmean, dstd) -> np.ndarray:
        # a zero partial derivative contributes nothing, even where dsigma/dx is not finite (sigma = 0)
        return d_mean[:, None] * dmean + np.where(d_std[:, None] != 0, d_std[:, None] * dstd, 0.0)

    def __call__(self, X):
        return self._formula(*self.model.predict(X))[0]

    def value_and_gradient(self, x):
        mean, std, dmean, dstd = self.model.predict_gradient(x)
        values, d_mean, d_std = self._formula(
            np.array([mean], dtype=np.float64), np.array([std], dtype=np.float64)
        )
        return float(values[0]), self._chain(
            d_mean, d_std, np.asarray(dmean)[None, :], np.asarray(dstd)[None, :]
        )[0]

    def _batched(self, mean, std, dmean, dstd):
        values, d_mean, d_std = self._formula(mean, std)
        return values, self._chain(d_mean, d_std, dmean, dstd)


class Acquisition(ABC):
    """Configuration of an acquisition; :meth:`bind` fixes it to a fitted model."""

    @abstractmethod
    def bind(self, model, space=None, reference=None) -> Bound:
        """Return the acquisition as a function of points, for ``model`` conditioned on t - 1 points.

        ``reference`` (default ``model``) supplies incumbents, t and the information gain.
        """

    def __call__(self, model, X, space=None) -> np.ndarray:
        """Shortcut for ``acq.bind(model, space)(X)``."""
        return self.bind(model, space)(X)


# ---------------------------------------------------------------------------- posterior mean
class _BoundMean(MomentBound):
    def _formula(self, mean, std):
        return mean, np.ones_like(mean), np.zeros_like(mean)


@dataclass(frozen=True)
class PosteriorMean(Acquisition):
    """The posterior mean ``mu_{t-1}(x)`` (pure exploitation; ``mu+`` of 003 eq. 11 is its maximum)."""

    def bind(self, model, space=None, reference=None) -> Bound:
        return _BoundMean(model)


# ---------------------------------------------------------------------------- UCB
class _BoundUCB(MomentBound):
    def __init__(self, model, root_beta: float):
        super().__init__(model)
        self.root_beta = root_beta

    def _formula(self, mean, std):
        """``mu + beta_t^{1/2} sigma`` (GP-UCB, Srinivas et al.; 002)."""
        return mean + self.root_beta * std, np.ones_like(mean), np.full_like(std, self.root_beta)


#: ``UCB()``'s schedule: the one object a UCB given without a schedule holds, so that the optimizer
#: tells it from an explicit ``UCB(Srinivas())`` (equal, but given) when ``schedule=`` comes too
_DEFAULT_SCHEDULE = Srinivas()


@dataclass(frozen=True)
class UCB(Acquisition):
    """GP-UCB: ``mu_{t-1}(x) + sqrt(beta_t) sigma_{t-1}(x)`` (003 eq. 8; 002).

    Parameters
    ----------
    schedule : Schedule
        Source of ``beta_t`` (default :class:`~warmbo.bounds.Srinivas` with delta = 0.1). A UCB given
        without one takes the optimizer's ``schedule=``; a UCB given one (``Srinivas()`` included)
        and another ``schedule=`` is refused.

    Examples
    --------
    >>> import numpy as np
    >>> from warmbo import GP, UCB
    >>> from warmbo.bounds import Constant
    >>> from warmbo.kernels import RBF
    >>> gp = GP(RBF(0.2), noise=1e-4).fit([[0.2], [0.8]], [0.0, 1.0])
    >>> acq = UCB(Constant(4.0)).bind(gp)
    >>> mean, std = gp.predict([[0.5]])
    >>> bool(np.isclose(acq([[0.5]])[0], mean[0] + 2.0 * std[0]))
    True
    """

    schedule: Schedule = _DEFAULT_SCHEDULE

    def __post_init__(self):
        if not isinstance(self.schedule, Schedule):
            raise ValueError(f"schedule must be a warmbo.bounds.Schedule, got {self.schedule!r}")

    @property
    def schedule_given(self) -> bool:
        """Whether this UCB was given a schedule (``UCB(Srinivas())`` was; ``UCB()`` was not)."""
        return self.schedule is not _DEFAULT_SCHEDULE

    def __reduce__(self):
        # a pickled or copied UCB() is UCB() again (its schedule the shared default, not a given
        # Srinivas()): a WarmboSearch restored from Tune's checkpoint with acquisition=UCB() and
        # schedule= was refused, the copied default taken for a schedule of its own
        return (type(self), () if not self.schedule_given else (self.schedule,))

    def beta_t(self, model, space=None) -> float:
        """``beta_t`` for the next round, ``t = model.n_observations + 1``."""
        schedule = self.schedule if space is None else self.schedule.for_space(space)
        return float(schedule.beta_t(model.n_observations + 1, model))

    def bind(self, model, space=None, reference=None) -> Bound:
        reference = model if reference is None else reference
        return _BoundUCB(model, float(np.sqrt(self.beta_t(reference, space))))


# ---------------------------------------------------------------------------- EI and PI
#: EI's and PI's incumbents: the best observation, the model's best mean at the observations, its best
#: mean anywhere
INCUMBENTS = ("best", "observed", "mean")


def _check_incumbent(incumbent) -> None:
    if incumbent not in INCUMBENTS:
        raise ValueError(f"incumbent must be 'best', 'observed' or 'mean', got {incumbent!r}")


def _check_xi(xi) -> None:
    if isinstance(xi, bool) or not isinstance(xi, numbers.Real) or not np.isfinite(xi) or xi < 0:
        raise ValueError(f"xi must be a finite non-negative number, got {xi!r}")


def incumbent_value(model, incumbent: str, space=None) -> float:
    """The incumbent of EI/PI: best observed y (``"best"``), the largest posterior mean at the
    observed inputs ``max_j mu(x_j)`` (``"observed"``, the plug-in incumbent of Picheny et al. 2013)
    or ``mu+ = max_x mu(x)`` (``"mean"``).

    ``mu+`` is the largest posterior mean over the training inputs and, when a ``space`` is given,
    over the maximiser's search of the whole space (003 eq. 11).
    """
    if model.n_observations == 0:
        raise ValueError("EI and PI need at least one observation to define the incumbent")
    if incumbent == "best":
        y = getattr(model, "y_train_", None)
        if y is None:
            raise ValueError("EI/PI with incumbent='best' need a model with y_train_ (its observed outputs)")
        return float(np.max(y))
    value = float(np.max(model.predict(model.X_train_)[0]))
    if space is not None and incumbent == "mean":
        from .maximize import maximize

        result = maximize(PosteriorMean().bind(model), space, seed=0, n_starts=3)
        value = max(value, float(result.value))
    return value


class _BoundIncumbent(MomentBound):
    """What EI and PI share: the incumbent (y+ or mu+, 003 eq. 11) and the margin xi."""

    def __init__(self, model, incumbent: float, xi: float, kind: str = "best"):
        super().__init__(model)
        self.incumbent = incumbent
        self.xi = xi
        self.kind = kind  # (how the incumbent was chosen: on_slice chooses the slice's the same way)

    def on_slice(self, reference, space, fixed) -> _BoundIncumbent:
        """This bound, improving on the best of the slice where ``fixed`` holds its parameters
        (:mod:`warmbo.fixed`): the best observation of ``reference`` (the real observations) on it,
        or, with none there, the largest posterior mean over it; never above this incumbent.

        An ask with fixed values (the catalyst on the shelf today) asks for the best point of its
        slice. Against the whole space's incumbent, on a slice that cannot reach it, improvement is
        only where the slice is most uncertain: a user test's weaker catalyst was sent to the corners
        of the space (40 C for 24 h, 0% yield), where its own best region was 71%."""
        X, y = getattr(reference, "X_train_", None), getattr(reference, "y_train_", None)
        if X is None or y is None or np.ndim(y) != 1 or not len(y):
            return self
        on = fixed.holds(np.asarray(X, dtype=np.float64))
        if np.any(on) and self.kind == "best":
            value = float(np.max(np.asarray(y, dtype=np.float64)[on]))
        elif np.any(on):  # (the model's best mean there: a review found the best measurement put back)
            value = float(np.max(reference.predict(np.asarray(X, dtype=np.float64)[on])[0]))
        else:
            from .maximize import maximize

            value = float(
                maximize(PosteriorMean().bind(reference), space, seed=0, n_starts=3, fixed=fixed).value
            )
        return type(self)(self.model, min(self.incumbent, value), self.xi, self.kind)

    def _improvement(self, mean, std):
        """``mu - y+ - xi``, where sigma > 0, and ``z = (mu - y+ - xi) / sigma`` there (0 elsewhere)."""
        diff = mean - self.incumbent - self.xi
        positive = std > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(positive, diff / np.where(positive, std, 1.0), 0.0)
        return diff, positive, z


class _BoundEI(_BoundIncumbent):
    def _formula(self, mean, std):
        """``EI = (mu - y+) Phi(z) + sigma phi(z)`` (003 eq. 10), ``dEI/dmu = Phi(z)``,
        ``dEI/dsigma = phi(z)``; where sigma = 0, ``max(mu - y+, 0)``."""
        ndtr = _special()[0]
        diff, positive, z = self._improvement(mean, std)
        cdf, pdf = ndtr(z), _pdf(z)
        values = np.where(positive, diff * cdf + std * pdf, np.maximum(diff, 0.0))
        d_mean = np.where(positive, cdf, (diff > 0).astype(np.float64))
        d_std = np.where(positive, pdf, 0.0)
        return values, d_mean, d_std

    @property
    def has_log(self) -> bool:
        return self.has_gradient and callable(getattr(self.model, "predict_gradients", None))

    def _log_ei(self, mean, std):
        """``log EI`` from the posterior moments, with what its gradient needs: the ratios of
        :func:`log_h`, the improvement ``mu - y+ - xi``, where sigma > 0, and sigma made safe to divide.

        When every sigma is positive (the search's points, almost always) the masks are left out: the
        same operations on the same numbers, so the same values to the bit, at half the calls (the
        local search evaluates this some 15 times per ask on a handful of points, where numpy's cost
        per call is the cost)."""
        diff = mean - self.incumbent - self.xi
        std = np.asarray(std)
        if std.size and std.min() > 0:  # (False for NaN)
            value, cdf_ratio, pdf_ratio = log_h(diff / std)
            return np.log(std) + value, cdf_ratio, pdf_ratio, diff, None, std
        positive = std > 0
        safe_std = np.where(positive, std, 1.0)
        value, cdf_ratio, pdf_ratio = log_h(np.where(positive, diff / safe_std, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.where(positive, np.log(safe_std) + value, np.log(np.maximum(diff, 0.0)))
        return values, cdf_ratio, pdf_ratio, diff, positive, safe_std

    def _require_log(self) -> None:
        """Raise unless :attr:`has_log`; the answer is kept (the search asks at every step, and the
        property looks through the model and its kernel)."""
        known = self.__dict__.get("_has_log")
        if known is None:
            known = self.__dict__["_has_log"] = self.has_log
        if not known:
            raise NotImplementedError(f"{type(self).__name__} has no log form for this model")

    def log_values(self, U) -> np.ndarray:
        """``log EI`` at the points U (m,) from the posterior alone (no gradients); see
        :meth:`log_values_and_gradients`."""
        self._require_log()
        return self._log_ei(*self.model.predict(np.asarray(U, dtype=np.float64)))[0]

    def log_values_and_gradients(self, U):
        """``log EI = log sigma + log h(z)`` and ``d log EI = (Phi(z) dmu + phi(z) dsigma) / (sigma h(z))``
        (see :func:`log_h`), finite where EI underflows to 0: the local search of
        :func:`~warmbo.maximize.maximize` climbs it instead of EI, whose gradient vanishes far from the
        incumbent (Ament et al. 2023), and its tolerance becomes a relative one on EI.
        Where sigma = 0 the value is ``log max(mu - y+, 0)`` (-inf when there is no improvement)."""
        self._require_log()
        mean, std, dmean, dstd = self.model.predict_gradients(np.asarray(U, dtype=np.float64))
        values, cdf_ratio, pdf_ratio, diff, positive, safe_std = self._log_ei(mean, std)
        if positive is None:  # every sigma > 0 (see _log_ei): the first branch below, without masks
            return values, (cdf_ratio[:, None] * dmean + pdf_ratio[:, None] * dstd) / safe_std[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            grads = np.where(
                positive[:, None],
                (cdf_ratio[:, None] * dmean + pdf_ratio[:, None] * dstd) / safe_std[:, None],
                np.where((diff > 0)[:, None], dmean / diff[:, None], 0.0),
            )
        return values, grads


@dataclass(frozen=True)
class EI(Acquisition):
    """Expected improvement over an incumbent (003 eqs. 10-11).

    Parameters
    ----------
    incumbent : {"best", "observed", "mean"}
        ``y+`` = the best observed value, ``max_j mu_{t-1}(x_j)`` over the observed inputs (the
        plug-in incumbent), or ``mu+ = max_x mu_{t-1}(x)`` (003 eq. 11).
    xi : float
        Optional margin: improvement is measured over ``incumbent + xi`` (0 in the papers).
    """

    incumbent: str = "best"
    xi: float = 0.0

    def __post_init__(self):
        _check_incumbent(self.incumbent)
        _check_xi(self.xi)

    def bind(self, model, space=None, reference=None) -> Bound:
        return _BoundEI(model, incumbent_value(model, self.incumbent, space), float(self.xi), self.incumbent)


class _BoundPI(_BoundIncumbent):
    def _formula(self, mean, std):
        """``PI = Phi(z)``, ``dPI/dmu = phi(z) / sigma``, ``dPI/dsigma = -z phi(z) / sigma``; where
        sigma = 0, ``1[mu > y+]`` with zero derivatives."""
        from scipy.special import ndtr

        diff, positive, z = self._improvement(mean, std)
        pdf = _pdf(z)
        safe_std = np.where(positive, std, 1.0)
        values = np.where(positive, ndtr(z), (diff > 0).astype(np.float64))
        d_mean = np.where(positive, pdf / safe_std, 0.0)
        d_std = np.where(positive, -z * pdf / safe_std, 0.0)
        return values, d_mean, d_std


@dataclass(frozen=True)
class PI(Acquisition):
    """Probability of improvement ``Phi((mu - y+ - xi) / sigma)`` (Kushner 1964; 003 Section 2.2).

    Parameters
    ----------
    incumbent : {"best", "observed", "mean"}
        As for :class:`EI`.
    xi : float
        Margin over the incumbent.
    """

    incumbent: str = "best"
    xi: float = 0.0

    def __post_init__(self):
        _check_incumbent(self.incumbent)
        _check_xi(self.xi)

    def bind(self, model, space=None, reference=None) -> Bound:
        return _BoundPI(model, incumbent_value(model, self.incumbent, space), float(self.xi), self.incumbent)


# ---------------------------------------------------------------------------- multi-task (001)
class _BoundScalarizedUCB(Bound):
    def __init__(self, model, scalarization, weights, width: float, optimism: str):
        super().__init__(model)
        self.scalarization = scalarization
        self.weights = weights
        self.width = width
        self.optimism = optimism

    @property
    def has_gradient(self) -> bool:
        return False  # min (Chebyshev) and the operator norm are not differentiable

    def __call__(self, X):
        if self.optimism == "norm":
            mean, norm = self.model.predict(X, cov="norm")
            return self.scalarization.expected(mean, self.weights) + self.width * np.sqrt(norm)
        mean, full = self.model.predict(X, cov="full")
        if self.optimism == "trace":
            trace = np.clip(np.trace(full, axis1=1, axis2=2), 0.0, None)
            return self.scalarization.expected(mean, self.weights) + self.width * np.sqrt(trace)
        sd = np.sqrt(np.clip(np.diagonal(full, axis1=1, axis2=2), 0.0, None))
        return self.scalarization.expected(mean + self.width * sd, self.weights)

    def value_and_gradient(self, x):
        raise NotImplementedError("ScalarizedUCB has no analytic gradient")


@dataclass(frozen=True)
class ScalarizedUCB(Acquisition):
    """MT-KB's acquisition (001 eq. 3): ``E[s_lambda(mu_t(x))] + L beta_t^{1/2} ||Gamma_t(x, x)||^{1/2}``.

    Parameters
    ----------
    scalarization : Scalarization
        ``s_lambda`` and its weight prior (:class:`~warmbo.scalarization.Chebyshev` by default).
    schedule : Schedule
        Source of ``beta_t`` (squared width); default :class:`~warmbo.bounds.MultiTaskBound` with
        b = 1, sigma = 0.1 -- set b and sigma for your problem.
    mode : {"expected", "random"}
        ``"expected"``: the expectation over P_lambda by a sample average over ``n_weights`` weights
        (fixed by ``seed``); ``"random"``: one lambda_t per round t (001 Section 4.4; targets the Bayes
        regret and spreads queries over the Pareto front), drawn from ``(seed, t)``.
    n_weights : int
        Size of the sample average in ``"expected"`` mode.
    optimism : {"norm", "trace", "componentwise"}
        ``"norm"`` is eq. (3); ``"trace"`` replaces ``||Gamma_t(x, x)||`` by ``tr Gamma_t(x, x)``, the
        width that per-task concentration bounds combined over the tasks give (001 Remark 2; for
        independent tasks, IT-KB as the paper's analysis would run it); ``"componentwise"`` is the MOBO
        acquisition of Paria et al. (2020), ``E_lambda[s_lambda(mu_t(x) + beta_t^{1/2} sigma_t(x))]``
        with per-task standard deviations.
    lipschitz : float or "tight", optional
        L of eq. (3): default the scalarisation's bound, 1 for linear and Chebyshev (001 Section 5).
        ``"tight"``: the Lipschitz constant of the expected utility itself, the average over the
        weights in use of each ``s_lambda``'s constant (``E[max_i lambda_i]`` for Chebyshev,
        ``E[||lambda||_2]`` for linear), at most 1 and much smaller with many tasks (``warmbo
        reproduce multitask --part decide``: MT/IT 0.79 on 001's RKHS problem with n = 20 under it,
        against 0.93 with L = 1; docs/reproductions/multitask.md).
    seed : int
        Seed of the weights.
    """

    scalarization: Scalarization = field(default_factory=Chebyshev)
    schedule: Schedule = field(default_factory=lambda: MultiTaskBound(b=1.0, sigma=0.1))
    mode: str = "expected"
    n_weights: int = 100
    optimism: str = "norm"
    lipschitz: float | str | None = None
    seed: int = 0

    def __post_init__(self):
        if not isinstance(self.scalarization, Scalarization):
            raise ValueError(f"scalarization must be a warmbo Scalarization, got {self.scalarization!r}")
        if not isinstance(self.schedule, Schedule):
            raise ValueError(f"schedule must be a warmbo.bounds.Schedule, got {self.schedule!r}")
        if self.mode not in ("expected", "random"):
            raise ValueError(f"mode must be 'expected' or 'random', got {self.mode!r}")
        if self.optimism not in ("norm", "trace", "componentwise"):
            raise ValueError(f"optimism must be 'norm', 'trace' or 'componentwise', got {self.optimism!r}")
        check_int(self.n_weights, "n_weights", 1)
        if (
            self.lipschitz is not None
            and self.lipschitz != "tight"
            and not (
                isinstance(self.lipschitz, numbers.Real)
                and not isinstance(self.lipschitz, bool)
                and np.isfinite(self.lipschitz)
                and self.lipschitz > 0
            )
        ):
            raise ValueError(f"lipschitz must be a positive number or 'tight', got {self.lipschitz!r}")

    def weights(self, n_tasks: int, t: int = 1) -> np.ndarray:
        """The weights used at round t: the fixed sample ("expected") or lambda_t ("random")."""
        if self.mode == "expected":
            return self.scalarization.sample_weights(n_tasks, self.n_weights, self.seed)
        return self.scalarization.sample_weights(n_tasks, 1, np.random.default_rng([self.seed, int(t)]))

    def lipschitz_for(self, weights) -> float:
        """L for these weights (see ``lipschitz``)."""
        if self.lipschitz is None:
            return float(self.scalarization.lipschitz)
        if self.lipschitz == "tight":
            W = np.atleast_2d(np.asarray(weights, dtype=np.float64))
            return float(np.mean([self.scalarization.lipschitz_constant(w[None, :]) for w in W]))
        return float(self.lipschitz)

    def bind(self, model, space=None, reference=None) -> Bound:
        reference = model if reference is None else reference
        t = reference.n_observations + 1
        weights = self.weights(model.n_tasks, t)
        L = self.lipschitz_for(weights)
        root_beta = float(np.sqrt(self.schedule.beta_t(t, reference)))
        width = root_beta if self.optimism == "componentwise" else L * root_beta
        return _BoundScalarizedUCB(model, self.scalarization, weights, width, self.optimism)
