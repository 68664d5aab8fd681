"""Confidence-bound schedules ``beta_t`` for GP-UCB and the confidence intervals it relies on.

One convention everywhere in warmbo: a schedule returns ``beta_t`` and every acquisition and
interval uses ``mean +/- sqrt(beta_t) * std``. (002 writes the interval as
``mu +/- sqrt(beta_t sigma)`` on one slide; that is a typesetting slip, the lecture's theorem and
Srinivas et al. multiply sigma by ``beta_t^{1/2}``.)

``t`` is the round being chosen: with ``t - 1`` observations in the model, round t uses ``beta_t``.
Acquisitions call ``schedule.beta_t(t, model)`` with ``t = model.n_observations + 1``.

Schedules:

- :class:`Constant`: ``beta_t = beta``.
- :class:`Srinivas` (Srinivas et al. 2010, Bayesian setting):
  finite domain D, ``beta_t = 2 log(|D| t^2 pi^2 / (6 delta))``;
  continuous domain ``[0, r]^d`` (003 eq. 8),
  ``beta_t = 2 log(t^2 2 pi^2 / (3 delta)) + 2 d log(t^2 d b r sqrt(log(4 d a / delta)))``,
  with a, b the constants of the Lipschitz tail assumption (default 1) and r the domain width
  (default 1, the unit cube warmbo's optimizer works in).
- :class:`IGPUCB` (Chowdhury & Gopalan 2017, as in the digest of 002):
  ``beta_t^{1/2} = B + R sqrt(2 (gamma_{t-1} + 1 + ln(1/delta)))``, with ``||f||_k <= B`` and
  R-sub-Gaussian noise. gamma_{t-1} here is the information gain of the points actually observed,
  ``1/2 log det(I + lam^-1 K_{t-1})`` (``model.info_gain()``), which is what the theorem's proof
  uses; the maximum information gain gamma_T proper is a supremum over all point sets and is only
  needed to state the regret bound, not to run the algorithm. The theorem assumes the model's
  regulariser is ``lam = 1 + 2/T``; that is the caller's choice of ``GP(noise=...)``.
- :class:`MetaKeLBound` (000 Thm 5 / Cor. 7): ``beta_t = nu_t^2`` with
  ``nu_t = B (1 + eps/(2 c1)) + sigma sqrt(d_hat log(1 + sbar^-2 t / c1) + 2 + 2 log(1/delta))``,
  ``sbar = 1 + 2/T``, for GP-UCB with a meta-learned kernel (``MetaKeL.bound`` builds it).
- :class:`MultiTaskBound` (001 Thms 2 and 3): MT-KB's
  ``beta_t^{1/2} = b + sigma/sqrt(eta) sqrt(2 log(1/delta) + sum_s log det(I + Gamma_{s-1}(x_s, x_s)/eta))``
  and MT-BKB's ``b (1 + 1/sqrt(1 - eps)) + sigma/sqrt(eta) sqrt(2 log(2/delta) + rho sum_s log det(...))``;
  the width multiplies ``||Gamma_t(x, x)||^{1/2}`` in :class:`~warmbo.acquisition.ScalarizedUCB`.
"""

from __future__ import annotations

import ast
import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass, replace

from ._validation import check_int

__all__ = ["Schedule", "Constant", "Srinivas", "IGPUCB", "MetaKeLBound", "MultiTaskBound", "parse_schedule"]


def _check_round(t) -> int:
    return check_int(t, "t (the round)", 1)


def _check_delta(delta) -> None:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")


def _check_number(value, name: str, *, positive: bool = False) -> None:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        kind = "positive" if positive else "non-negative"
        raise ValueError(f"{name} must be a finite {kind} number, got {value!r}")


def _check_count(value, name: str) -> None:
    if value is not None:
        check_int(value, f"{name} (or None)", 1)


class Schedule(ABC):
    """A confidence schedule: ``beta_t(t, model)`` returns ``beta_t`` (the square of the width multiplier)."""

    @abstractmethod
    def beta_t(self, t: int, model=None) -> float:
        """``beta_t`` for round t, given the model conditioned on the first t - 1 observations."""

    def __call__(self, t: int, model=None) -> float:
        return self.beta_t(t, model)

    def for_space(self, space) -> Schedule:
        """This schedule with what it needs from the search space filled in (the Srinivas schedule
        takes the encoded dimension); most schedules need nothing and return themselves."""
        return self


@dataclass(frozen=True)
class Constant(Schedule):
    """``beta_t = beta`` for every round.

    Examples
    --------
    >>> from warmbo.bounds import Constant
    >>> Constant(4.0).beta_t(10)
    4.0
    """

    beta: float

    def __post_init__(self):
        _check_number(self.beta, "beta")

    def beta_t(self, t: int, model=None) -> float:
        _check_round(t)
        return float(self.beta)


@dataclass(frozen=True)
class Srinivas(Schedule):
    """GP-UCB schedule of Srinivas et al. (2010) for finite or continuous domains.

    Parameters
    ----------
    delta : float
        Failure probability in (0, 1).
    domain_size : int, optional
        |D| for a finite domain; None for a continuous domain (003 eq. 8).
    dim : int, optional
        Input dimension d for the continuous form; taken from ``model.input_dim`` when None.
    a, b : float
        Constants of the Lipschitz tail assumption of 003 eq. 8.
    r : float
        Width of the domain ``[0, r]^d`` (1 for warmbo's unit cube).

    Examples
    --------
    >>> from warmbo.bounds import Srinivas
    >>> round(Srinivas(delta=0.1, domain_size=100).beta_t(1), 4)  # 2 log(100 pi^2 / 0.6)
    14.8109
    """

    delta: float = 0.1
    domain_size: int | None = None
    dim: int | None = None
    a: float = 1.0
    b: float = 1.0
    r: float = 1.0

    def __post_init__(self):
        _check_delta(self.delta)
        _check_count(self.domain_size, "domain_size")
        _check_count(self.dim, "dim")
        for name in ("a", "b", "r"):
            _check_number(getattr(self, name), name, positive=True)

    def for_space(self, space) -> Srinivas:
        """When neither ``dim`` nor ``domain_size`` is given: ``domain_size`` from a finite space's
        number of points (the finite form, Srinivas et al. Thm 1; before session 39 a grid got the
        continuous one, a user test), else ``dim`` from the space's encoding."""
        if space is None or self.dim is not None or self.domain_size is not None:
            return self
        size = getattr(space, "cardinality", math.inf)
        if math.isfinite(size):  # (a grid, or only integers, categories and stepped floats)
            return replace(self, domain_size=int(size))
        return replace(self, dim=space.dim)

    def beta_t(self, t: int, model=None) -> float:
        t = _check_round(t)
        if self.domain_size is not None:
            return 2.0 * math.log(self.domain_size * t**2 * math.pi**2 / (6.0 * self.delta))
        d = self.dim if self.dim is not None else getattr(model, "input_dim", None)
        if d is None:
            raise ValueError("Srinivas needs dim (or a fitted model) for a continuous domain")
        inner = t**2 * d * self.b * self.r * math.sqrt(math.log(4.0 * d * self.a / self.delta))
        return 2.0 * math.log(t**2 * 2.0 * math.pi**2 / (3.0 * self.delta)) + 2.0 * d * math.log(inner)


@dataclass(frozen=True)
class IGPUCB(Schedule):
    """Improved GP-UCB (RKHS, frequentist): ``beta_t^{1/2} = B + R sqrt(2 (gamma_{t-1} + 1 + ln(1/delta)))``.

    Parameters
    ----------
    B : float
        Bound on the RKHS norm of the objective, ``||f||_k <= B``.
    R : float
        Sub-Gaussian constant of the noise.
    delta : float
        Failure probability in (0, 1).

    Notes
    -----
    ``gamma_{t-1}`` is ``model.info_gain()`` of the t - 1 points the model holds (module docstring).
    ``B`` and ``R`` are in the units of the model's outputs: on a :class:`~warmbo.Optimizer`, the
    objective standardised (``normalize_y``) and, by default, Yeo-Johnson transformed, so the same
    numbers fit the objective in any units (docs/optimizer.md, "Choosing the model, acquisition and
    schedule").
    """

    B: float
    R: float = 1.0
    delta: float = 0.1

    def __post_init__(self):
        _check_number(self.B, "B")
        _check_number(self.R, "R")
        _check_delta(self.delta)

    def beta_t(self, t: int, model=None) -> float:
        t = _check_round(t)
        if model is None and t > 1:
            # (gamma_{t-1} = 0 would be the round-1 width at every round: intervals too narrow)
            raise ValueError(
                f"IGPUCB.beta_t({t}) needs the model holding the t - 1 = {t - 1} points: beta_t grows with "
                "their information gain gamma_{t-1} (model.info_gain()); pass model=, or use t = 1 "
                "before any point"
            )
        gamma = 0.0 if model is None or model.n_observations == 0 else float(model.info_gain())
        root = self.B + self.R * math.sqrt(2.0 * (gamma + 1.0 + math.log(1.0 / self.delta)))
        return root**2


@dataclass(frozen=True)
class MetaKeLBound(Schedule):
    """Meta-KeL's confidence schedule (000 Thm 5 and Cor. 7): ``beta_t = nu_t^2`` with

    ``nu_t = B (1 + eps/(2 c1)) + sigma sqrt(d_hat log(1 + sbar^-2 t w) + 2 + 2 log(1/delta))``,
    ``sbar = 1 + 2/T``, where ``w`` is the kernel's largest weight ``max_j eta_hat_j / c1``: the
    last line of the proof of Lemma 13 (the information gain of ``k_hat = sum_j w_j k_j`` with
    ``k_j(x, x) = 1``). Cor. 7 as printed has ``t / c1``, i.e. ``max_j eta_hat_j = 1``, which is
    the default ``w = 1 / c1``; a kernel whose largest weight exceeds ``1 / c1`` (MetaKeL's own,
    whose weights are all >= 1 with ``c1`` the smallest group norm) needs its ``w``, or the
    schedule assumes less information gain than the kernel has and its intervals are too narrow.

    Parameters
    ----------
    B : float
        Bound on ``||f||_{k*}``.
    sigma : float
        Sub-Gaussian noise parameter.
    d_hat : int
        Feature dimension of the meta-learned kernel, ``sum_{j in J_hat} d_j``.
    c1 : float
        Normalisation constant of the meta-learned kernel (000 eq. 7).
    T : int
        Horizon (sets ``sbar``).
    delta : float
        Failure probability.
    eps : float
        epsilon(n, m) of Thm 4 (0 in the limit of much meta-data).
    weight : float, optional
        The kernel's largest weight ``w = max_j eta_hat_j / c1`` (Lemma 13); default ``1 / c1``
        (Cor. 7 as printed). :meth:`warmbo.MetaKeL.bound` passes its kernel's.

    Notes
    -----
    The posterior it goes with uses the regulariser ``sbar^2`` (000 eq. 2):
    ``GP(kernel, noise=bound.regulariser)``.
    """

    B: float
    sigma: float
    d_hat: int
    c1: float
    T: int
    delta: float = 0.1
    eps: float = 0.0
    weight: float | None = None

    def __post_init__(self):
        _check_number(self.B, "B")
        _check_number(self.sigma, "sigma")
        _check_number(self.c1, "c1", positive=True)
        _check_number(self.eps, "eps")
        if self.weight is not None:
            _check_number(self.weight, "weight", positive=True)
        check_int(self.d_hat, "d_hat", 1)  # required: _check_count would let None through
        check_int(self.T, "T (the horizon)", 1)
        _check_delta(self.delta)

    @property
    def sbar(self) -> float:
        """``sbar = 1 + 2/T`` (000 Thm 5)."""
        return 1.0 + 2.0 / self.T

    @property
    def regulariser(self) -> float:
        """The noise / regulariser ``sbar^2`` of 000 eq. 2."""
        return self.sbar**2

    def nu_t(self, t: int) -> float:
        """The width multiplier ``nu_t`` itself (``beta_t = nu_t^2``)."""
        t = _check_round(t)
        weight = 1.0 / self.c1 if self.weight is None else self.weight
        root = self.d_hat * math.log(1.0 + t * weight / self.sbar**2) + 2.0 + 2.0 * math.log(1.0 / self.delta)
        return self.B * (1.0 + self.eps / (2.0 * self.c1)) + self.sigma * math.sqrt(root)

    def beta_t(self, t: int, model=None) -> float:
        return self.nu_t(t) ** 2


@dataclass(frozen=True)
class MultiTaskBound(Schedule):
    """MT-KB's and MT-BKB's confidence widths (001 Thms 2 and 3), returned squared (``beta_t``).

    MT-KB (Thm 2), with ``eta`` the model's regulariser and the sum over the observed points:

        beta_t^{1/2} = b + sigma/sqrt(eta) sqrt(2 log(1/delta) + S_t),
        S_t = sum_{s<=t} log det(I_n + eta^-1 Gamma_{s-1}(x_s, x_s)).

    The sum equals ``log det(I_{nt} + eta^-1 G_t)`` (chain rule), i.e. twice
    :meth:`warmbo.models.MultiTaskGP.info_gain`. MT-BKB (Thm 3), when the model is a
    :class:`~warmbo.models.nystrom.BudgetedMultiTaskGP` (``eps`` taken from it unless given):

        beta~_t^{1/2} = b (1 + 1/sqrt(1 - eps)) + sigma/sqrt(eta) sqrt(2 log(2/delta) + rho S~_t),
        S~_t = sum_s log det(I_n + eta^-1 Gamma~_{s-1}(x_s, x_s)),

    ``rho = (1 + eps)/(1 - eps)``, with the approximate variances recorded as the points arrived.

    Parameters
    ----------
    b : float
        Bound on the RKHS norm ``||f||_Gamma`` (001 Section 5 uses ``max_x ||f(x)||_2`` when f is not
        drawn from the RKHS).
    sigma : float
        Sub-Gaussian parameter of the noise vectors.
    delta : float
        Failure probability.
    eps : float, optional
        Nystrom accuracy; ``None`` reads it from a budgeted model (and uses Thm 2 otherwise).
    """

    b: float
    sigma: float
    delta: float = 0.1
    eps: float | None = None

    def __post_init__(self):
        _check_number(self.b, "b")
        _check_number(self.sigma, "sigma")
        _check_delta(self.delta)
        if self.eps is not None and not (
            isinstance(self.eps, numbers.Real) and not isinstance(self.eps, bool) and 0 < self.eps < 1
        ):
            raise ValueError(f"eps must be in (0, 1) or None, got {self.eps!r}")

    def root_beta(self, model) -> float:
        """The width multiplier ``beta_t^{1/2}`` for a multi-task model (uses its noise and info gain)."""
        if model is None or not hasattr(model, "info_gain") or not hasattr(model, "noise"):
            raise ValueError("MultiTaskBound needs the multi-task model (its noise eta and information gain)")
        eta = float(model.noise)
        log_det_sum = 2.0 * float(model.info_gain())
        # a budgeted (Nystrom) posterior declares its accuracy as budget_eps; exact ones say None
        budget = getattr(model, "budget_eps", None)
        eps = self.eps if self.eps is not None else budget
        if eps is None or budget is None:
            if self.eps is not None:
                raise ValueError("MultiTaskBound(eps=...) is MT-BKB's bound; the model is not a budgeted one")
            root = 2.0 * math.log(1.0 / self.delta) + log_det_sum
            return self.b + self.sigma / math.sqrt(eta) * math.sqrt(root)
        rho = (1.0 + eps) / (1.0 - eps)
        root = 2.0 * math.log(2.0 / self.delta) + rho * log_det_sum
        return self.b * (1.0 + 1.0 / math.sqrt(1.0 - eps)) + self.sigma / math.sqrt(eta) * math.sqrt(root)

    def beta_t(self, t: int, model=None) -> float:
        _check_round(t)
        return self.root_beta(model) ** 2


def parse_schedule(text: str) -> Schedule | None:
    """The schedule written in ``text``, the ``repr`` of a schedule or of ``UCB(schedule=...)`` (as a
    study stores its acquisition), or None when ``text`` holds no schedule of this module.

    Read with :mod:`ast`, never evaluated: only this module's schedule classes with literal number
    arguments are accepted, so a study file cannot run code through it.

    Examples
    --------
    >>> from warmbo.bounds import parse_schedule
    >>> parse_schedule("UCB(schedule=IGPUCB(B=2.0, R=1.0, delta=0.1))")
    IGPUCB(B=2.0, R=1.0, delta=0.1)
    >>> parse_schedule("EI(incumbent='best', xi=0.0)") is None
    True
    """
    classes = {cls.__name__: cls for cls in (Constant, Srinivas, IGPUCB, MetaKeLBound, MultiTaskBound)}
    try:
        node = ast.parse(str(text), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "UCB":
        inner = [k.value for k in node.keywords if k.arg == "schedule"] or node.args[:1]
        if not inner:
            return None
        node = inner[0]
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in classes):
        return None
    try:
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
        return classes[node.func.id](*args, **kwargs)
    except (ValueError, TypeError, SyntaxError):
        return None
