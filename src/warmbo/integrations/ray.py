"""Ray Tune searcher: warmbo's optimizer proposes the configurations of a Tune run.

A Ray cluster evaluates in parallel while warmbo proposes: :class:`WarmboSearch` is a
``ray.tune.search.Searcher`` whose ``suggest(trial_id)`` is one :meth:`Optimizer.ask
<warmbo.optimizer.Optimizer.ask>` (the running trials are the optimizer's pending points, fantasised
so that concurrent trials get different configurations) and whose ``on_trial_complete`` is one
``tell`` (or ``tell_failed`` for an error or a result without the metric). In a finite space whose
every point is running or failed, ``suggest`` returns None (Tune asks again later) while a trial
runs, and ``Searcher.FINISHED`` once every point has failed.

The search space is a warmbo :class:`~warmbo.space.Space`, or Tune's own ``param_space`` dict,
converted by :func:`space_from_tune`: ``tune.uniform`` and ``tune.loguniform`` become
:class:`~warmbo.space.Float` (log scale kept), ``tune.randint`` and ``tune.lograndint`` (upper bound
exclusive, as in Tune) become :class:`~warmbo.space.Int`, ``tune.choice`` a
:class:`~warmbo.space.Categorical`; nested dicts are flattened to ``"a/b"`` names and unflattened in
the suggested config. A quantised domain (``tune.quniform``, ``qloguniform``, ``qrandint``,
``qlograndint``: the multiples ``k q`` of its ``q`` inside its bounds, as Tune samples them) becomes an
``Float`` or ``Int`` with ``step=q`` from its first multiple to its last, so the model sees the grid
itself, never proposes two points that Tune would run as one, and the study holds the values Tune
runs (a prior in those values is read as for any space). On a log scale (``qloguniform``,
``qlograndint``), which warmbo's ``step`` does not take, it becomes an ``Int`` over the index ``k``
(log scale kept: ``k q`` is log-uniform exactly when ``k`` is); the searcher gives Tune ``k q`` and
reads ``points_to_evaluate`` and ``add_evaluated_point`` back to ``k`` (:func:`space_from_tune` alone
returns the index space). Before native steps, every quantised domain was such an index: a checkpoint
saved then restores with its index space and goes on. Normal and ``sample_from`` domains and
``grid_search`` are refused with the key named (give a warmbo Space instead).

State. ``save``/``restore`` (which Tune calls with its experiment checkpoints) write and read a
pickle of plain data: the constructor's arguments, every trial of the optimizer's study (params,
state, value) and which Tune trial is which pending trial. A restored searcher rebuilds the same
in-memory optimizer, so it continues with the same observations, and a Tune trial that was running
completes its pending point when Tune reports it.
"""

from __future__ import annotations

import math
import numbers
import pickle
import warnings
from typing import Any

import numpy as np
from ray.tune.search import Searcher
from ray.tune.search.sample import Categorical as TuneCategorical
from ray.tune.search.sample import Domain, LogUniform, Quantized, Uniform
from ray.tune.search.sample import Float as TuneFloat
from ray.tune.search.sample import Integer as TuneInteger
from ray.tune.search.variant_generator import parse_spec_vars
from ray.tune.utils.util import flatten_dict, unflatten_dict

from ..data import TaskData
from ..optimizer import (
    PRIOR_WORKER,
    BudgetNotReachedWarning,
    Optimizer,
    SpaceExhaustedError,
    optimizer_arguments,
    refuse_dropped_model,
)
from ..parameters import _decimals
from ..prior import as_prior, check_prior
from ..space import Categorical, Float, Int, Space, SpaceError
from ..trial import COMPLETE, PENDING

__all__ = ["WarmboSearch", "space_from_tune"]

_STATE_VERSION = 1

#: Optimizer arguments that ``optimizer_options`` may not set, with what to do instead: the searcher
#: sets each itself (from its own arguments where it has one)
_RESERVED = {
    "space": "give it as WarmboSearch's space= (or Tune's param_space)",
    "maximize": "give WarmboSearch's mode='max' or mode='min' (or TuneConfig(mode=...))",
    "seed": "give WarmboSearch's seed=",
    "prior": "give WarmboSearch's prior=",
    "transfer": "give WarmboSearch's transfer=",
    "n_initial": "give WarmboSearch's n_initial=",
    "worker": "the searcher names its trials' worker 'ray-tune' itself",
    # the searcher's state is its checkpoints, and set_state re-adds every checkpointed trial
    # (study.add_trial): a persistent study that already holds them would get each one twice
    "storage": (
        "the searcher keeps its trials in memory and in Tune's experiment checkpoints, and a restore "
        "re-adds every checkpointed trial, so a persistent study would hold each trial twice; to keep "
        "the run as a study, tell the trials of search.optimizer.history.complete() to a "
        "wb.Optimizer(space, storage=..., maximize=...) after tuner.fit(), and give that study's URL "
        "to a later run as prior=[url]"
    ),
}


def space_from_tune(config: dict) -> Space:
    """A warmbo Space from a Tune ``param_space`` dict (see the module docstring for the mapping).

    Constant entries are left out (Tune merges them into every config); nested keys become ``a/b``;
    a quantised domain becomes a ``Float``/``Int`` with ``step=q`` (on a log scale, an ``Int`` over
    the index ``k`` of its values ``k q``).
    """
    return _from_tune(config)[0]


class _Step:
    """The values ``k q`` of a quantised Tune domain, which the warmbo space holds as ``k``."""

    def __init__(self, name: str, q: float, integer: bool):
        self.name, self.q, self.integer = name, q, integer

    def to_tune(self, k) -> float | int:
        """The value Tune gives for index ``k`` (``k q``, cast as Tune casts it)."""
        value = int(k) * self.q
        return int(round(value)) if self.integer else float(value)

    def to_index(self, value) -> int:
        """The index of a value of the grid; ValueError if it is not a multiple of ``q``."""
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise ValueError(f"{self.name}: {value!r} is not a number")
        k = float(value) / self.q
        if not (math.isfinite(k) and math.isclose(k, round(k), rel_tol=1e-9, abs_tol=1e-9)):
            raise ValueError(f"{self.name}: {value!r} is not a multiple of the quantisation step {self.q}")
        return int(round(k))


def _from_tune(config: dict) -> tuple[Space, dict[str, _Step]]:
    """:func:`space_from_tune` and the steps of its quantised parameters, by name."""
    _, _, grids = parse_spec_vars(config)
    if grids:
        raise ValueError(
            f"WarmboSearch cannot search tune.grid_search (at {'/'.join(map(str, grids[0][0]))}); "
            "use tune.choice or a warmbo Space"
        )
    params, steps = [], {}
    for path, domain in parse_spec_vars(flatten_dict(config, prevent_delimiter=True))[1]:
        name = "/".join(map(str, path))
        sampler = domain.get_sampler()
        if isinstance(sampler, Quantized) and not (isinstance(domain, TuneInteger) and sampler.q == 1):
            param, indexed = _quantised(name, domain, sampler)
            if indexed:
                steps[name] = _Step(name, sampler.q, isinstance(domain, TuneInteger))
            params.append(param)
        else:
            params.append(_parameter(name, domain))
    if not params:
        raise ValueError("the Tune search space has no tune.uniform/loguniform/randint/choice entry")
    return Space(params), steps


def _quantised(name: str, domain: Domain, sampler: Quantized) -> tuple[Float | Int, bool]:
    """A quantised domain's values ``k q``: every multiple of ``q`` inside its bounds, both included,
    as Tune's ``Quantized.sample`` draws them (a bound within rounding of a multiple counts as one).
    A ``Float`` or ``Int`` with ``step=q`` from the first multiple to the last; on a log scale
    (``qloguniform``, ``qlograndint``), which warmbo's ``step`` does not take, an ``Int`` over the
    index ``k`` with ``log=True`` (``k q`` is log-uniform exactly when ``k`` is), and the second
    value True (so is it for an integer domain with a fractional ``q``)."""
    inner, q = sampler.get_sampler(), sampler.q
    if not isinstance(domain, TuneFloat | TuneInteger) or not isinstance(inner, Uniform | LogUniform):
        raise ValueError(
            f"parameter {name!r}: WarmboSearch cannot convert {type(domain).__name__} with a quantised "
            f"{type(inner).__name__} sampler (use quniform, qloguniform, qrandint or qlograndint, or "
            "give a warmbo Space)"
        )

    def index(bound: float, inward) -> int:
        scaled = bound / q
        return int(round(scaled)) if math.isclose(scaled, round(scaled)) else int(inward(scaled))

    low, high = index(domain.lower, math.ceil), index(domain.upper, math.floor)
    if high <= low:
        values = "no multiple" if high < low else f"one multiple ({low * q})"
        raise ValueError(
            f"parameter {name!r}: there is {values} of q = {q} between {domain.lower} and "
            f"{domain.upper}: nothing to search (a constant belongs in the config as a plain value)"
        )
    log = isinstance(inner, LogUniform)
    if log or (isinstance(domain, TuneInteger) and not float(q).is_integer()):
        return Int(name, low, high, log=log), True
    if isinstance(domain, TuneInteger):
        return Int(name, low * int(q), high * int(q), step=int(q)), False
    digits = _decimals(q)  # (0.30000000000000004 is 3 * 0.1: the bounds as the user writes them)
    return Float(name, round(low * q, digits), round(high * q, digits), step=float(q)), False


def _parameter(name: str, domain: Domain):
    sampler = domain.get_sampler()
    if isinstance(sampler, Quantized) and isinstance(domain, TuneInteger) and sampler.q == 1:
        sampler = sampler.get_sampler()  # (qrandint(a, b, 1) is randint(a, b): b excluded, as Tune does)
    if isinstance(domain, TuneFloat) and isinstance(sampler, Uniform | LogUniform):
        return Float(name, domain.lower, domain.upper, log=isinstance(sampler, LogUniform))
    if isinstance(domain, TuneInteger) and isinstance(sampler, Uniform | LogUniform):
        return Int(name, domain.lower, domain.upper - 1, log=isinstance(sampler, LogUniform))
    if isinstance(domain, TuneCategorical) and isinstance(sampler, Uniform):
        return Categorical(name, tuple(domain.categories))
    raise ValueError(
        f"parameter {name!r}: WarmboSearch cannot convert {type(domain).__name__} with a "
        f"{type(sampler).__name__} sampler (use uniform, loguniform, randint, lograndint, choice or "
        "their quantised forms, or give a warmbo Space)"
    )


class WarmboSearch(Searcher):
    """A Ray Tune searcher that proposes with warmbo's :class:`~warmbo.optimizer.Optimizer`.

    Parameters
    ----------
    space : Space or dict, optional
        A warmbo Space, or a Tune search space dict; if None, Tune's ``param_space`` is converted
        (:func:`space_from_tune`) when Tune passes it.
    metric : str, optional
        The result key to optimise (else ``TuneConfig(metric=...)``).
    mode : {"min", "max"}, optional
        Minimise or maximise the metric (else ``TuneConfig(mode=...)``).
    seed : int, optional
        Seed of the optimizer.
    prior, transfer : optional
        Earlier evaluations and how to use them, as in :class:`~warmbo.optimizer.Optimizer` (in the
        units and names of the space; flattened ``a/b`` names for a nested Tune space). A prior the
        optimizer would refuse is refused here, with its message: read in the space when one is
        given (a warmbo Space or a Tune dict), else checked as far as it can be without one (a
        missing, empty or malformed file, a value that is not a finite number, ...) and read when
        Tune passes its ``param_space``, before any trial runs.
    n_initial : int, optional
        Size of the Sobol initial design (Optimizer's default if None).
    optimizer_options : dict, optional
        More keyword arguments of :class:`~warmbo.optimizer.Optimizer` (``acquisition``,
        ``kernel``, ``model``, ...); not those the searcher sets itself (``space``, ``maximize``,
        ``seed``, ``prior``, ``transfer``, ``n_initial``: its own arguments; ``worker``; ``storage``:
        its trials live in Tune's checkpoints, whose restore would add them to a persistent study
        again).
    points_to_evaluate : list of dict, optional
        Configurations to run first, in order (known good defaults, say), as other Tune searchers
        take them: each gives every parameter of the space (nested dicts for a nested Tune space).
        Their results are told to the optimizer like its own; the Sobol design follows them.

    Examples
    --------
    ``tune.Tuner(trainable, tune_config=tune.TuneConfig(search_alg=WarmboSearch(space, metric="loss",
    mode="min", seed=0), num_samples=20, max_concurrent_trials=2)).fit()``; docs/scale.md has a
    complete example.
    """

    def __init__(
        self,
        space: Space | dict | None = None,
        metric: str | None = None,
        mode: str | None = None,
        *,
        seed: int | None = None,
        prior=None,
        transfer: str | None = None,
        n_initial: int | None = None,
        optimizer_options: dict | None = None,
        points_to_evaluate: list[dict] | None = None,
    ):
        if mode is not None and mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        if metric is not None and not isinstance(metric, str):
            raise ValueError(f"WarmboSearch optimises one metric (a str), got {metric!r}")
        options = dict(optimizer_options or {})
        reserved = sorted(set(_RESERVED) & set(options))
        if reserved:
            raise ValueError(
                "optimizer_options may not set "
                + "; ".join(f"{name} ({_RESERVED[name]})" for name in reserved)
            )
        # the optimizer is built at the first suggestion, inside the Tune run: a name it does not take
        # is refused here, before the run starts
        takes = set(optimizer_arguments())
        unknown = sorted(set(options) - takes)
        if unknown:
            left = sorted(takes - set(_RESERVED))
            raise ValueError(
                f"optimizer_options: Optimizer has no argument {', '.join(unknown)} (it takes "
                f"{', '.join(left)})"
            )
        refuse_dropped_model(prior is not None, transfer, "model" in options, "kernel" in options)
        super().__init__(metric=metric, mode=mode)
        self._nested = isinstance(space, dict)
        self._steps: dict[str, _Step] = {}  # quantised Tune parameters: the space holds their index
        if isinstance(space, dict):
            space, self._steps = _from_tune(space)
        if space is not None and not isinstance(space, Space):
            raise ValueError(f"space must be a warmbo Space or a Tune search space dict, got {space!r}")
        self._space = space
        self._seed = seed
        self._prior_read: tuple[bool, TaskData] | None = None  # (maximize, the prior read in the space)
        self._check_prior(prior)
        self._prior = prior
        self._transfer = transfer
        self._n_initial = n_initial
        self._options = options
        if points_to_evaluate is not None and (
            isinstance(points_to_evaluate, dict) or not all(isinstance(p, dict) for p in points_to_evaluate)
        ):
            raise ValueError(
                f"points_to_evaluate must be a list of configuration dicts, got {points_to_evaluate!r}"
            )
        self._points = [dict(p) for p in points_to_evaluate or []]  # still to run, in order, as given
        if self._space is not None:  # else checked when Tune passes its param_space
            for i, point in enumerate(self._points):
                self._point(i, point)
        self._optimizer: Optimizer | None = None
        self._live: dict[str, int] = {}  # Tune trial id -> pending warmbo trial id
        self._last: dict[str, Any] = {}  # Tune trial id -> its last reported metric (on_trial_result)

    # -- pickling: Tune pickles its search_alg when a Tuner is made (tuner.pkl), and a started
    # searcher holds an in-memory study, which cannot be pickled; its state (get_state) can (a user
    # test: a searcher warm-started with add_evaluated_point, or restored, could not be given to a Tuner)
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_warmbo_state"] = self.get_state()  # (a started one's prior as rows: set_state reads it)
        state.update(_optimizer=None, _prior_read=None)
        if self._optimizer is not None:
            state["_prior"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        saved = state.pop("_warmbo_state")
        self.__dict__.update(state)
        self.set_state(saved)

    def _point(self, i: int, point: dict) -> dict:
        """``points_to_evaluate[i]`` as the flat parameter dict of the space, checked against it."""
        params = flatten_dict(dict(point), prevent_delimiter=True) if self._nested else dict(point)
        assert self._space is not None
        missing = self._space.missing(params)  # (a conditional space: the parameters active at the point)
        if missing:
            raise ValueError(
                f"points_to_evaluate[{i}] gives no value for {', '.join(missing)}: each point must give "
                "every parameter of the search space"
            )
        try:
            params = self._indexed(params)
            self._space.validate(params)
        except (SpaceError, ValueError) as exc:
            raise ValueError(f"points_to_evaluate[{i}]: {exc}") from None
        return {n: params[n] for n in self._space.active(params)}

    def _check_prior(self, prior) -> None:
        """Refuse a prior that the optimizer, built inside the Tune run, would refuse: read in the
        search space once it is known (kept for the optimizer, so it is read once), else checked as
        far as it can be without one (:func:`warmbo.prior.check_prior`), with the same message."""
        if prior is None:
            return
        if self._steps:
            raise ValueError(
                f"prior= with log-quantised Tune domains ({', '.join(self._steps)}: qloguniform, "
                "qlograndint) is not supported: the optimizer holds their grid index, not the values; "
                "give a warmbo Space in the prior's units instead (a Float or Int over each such "
                "parameter's range, log=True)"
            )
        if self._space is None:
            check_prior(prior)
            return
        # (a prior study's values are signed by the mode: read again in _build if Tune's differs)
        maximize = self._mode == "max"
        self._prior_read = (maximize, as_prior(prior, self._space, maximize))

    def _indexed(self, params: dict) -> dict:
        """Flat params in Tune's values -> the space's (quantised parameters as their index). An index
        outside its parameter's range is refused in Tune's values (it was said in indices: "value
        10000 is outside [2, 2000]" for lr = 0.5 of qloguniform(1e-4, 0.1, 5e-5), a user test)."""
        out = {}
        for name, value in params.items():
            step = self._steps.get(name)
            if step is None:
                out[name] = value
                continue
            k = step.to_index(value)
            bounds = next(
                ((p.low, p.high) for p in (self._space.params if self._space else ()) if p.name == name), None
            )
            if bounds is not None and not bounds[0] <= k <= bounds[1]:
                low, high = (step.to_tune(b) for b in bounds)
                raise ValueError(f"parameter {name!r}: value {value!r} is outside [{low}, {high}]")
            out[name] = k
        return out

    def _config(self, params: dict) -> dict:
        """The space's flat params -> the config Tune runs (``k q``; nested dicts again)."""
        config = {n: self._steps[n].to_tune(v) if n in self._steps else v for n, v in params.items()}
        return unflatten_dict(config) if self._nested else config

    @property
    def optimizer(self) -> Optimizer | None:
        """The warmbo optimizer (None before the first suggestion)."""
        return self._optimizer

    def set_search_properties(self, metric: str | None, mode: str | None, config: dict, **spec) -> bool:
        if self._optimizer is not None:
            return False
        _, domains, grids = parse_spec_vars(config or {})
        new_space = bool(domains or grids)
        if new_space:
            if self._space is not None:
                return False  # Tune then says that the searcher already has a search space
            self._space, self._steps = _from_tune(config)
            self._nested = True
        if (metric and self._metric and metric != self._metric) or (
            mode and self._mode and mode != self._mode
        ):
            # (Tune then ranks results by its own, while the searcher optimises its: a user test's
            # study went the other way from Tune's get_best_result without a word)
            warnings.warn(
                f"WarmboSearch optimises metric={self._metric!r}, mode={self._mode!r}, as it was given; "
                f"tune.TuneConfig says metric={metric!r}, mode={mode!r}, by which Tune ranks the results",
                UserWarning,
                stacklevel=2,
            )
        if metric and not self._metric:
            self._metric = metric
        if mode and not self._mode:
            if mode not in ("min", "max"):
                raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
            self._mode = mode
        if new_space:  # (the prior read in the space now known, with the mode Tune gives)
            self._check_prior(self._prior)
        return True

    def _build(self) -> Optimizer:
        if self._space is None:
            raise RuntimeError(
                "WarmboSearch has no search space: pass a warmbo Space (or a Tune dict) as space=, "
                "or a param_space to tune.Tuner"
            )
        if not self._metric or not self._mode:
            raise RuntimeError(
                f"WarmboSearch needs a metric and a mode (got metric={self._metric!r}, "
                f"mode={self._mode!r}): pass them to WarmboSearch(metric=..., mode=...); "
                "tune.TuneConfig's reach the searcher only with a param_space given to tune.Tuner "
                "(Tune does not pass them otherwise)"
            )
        maximize = self._mode == "max"
        prior = self._prior
        if self._prior_read is not None and self._prior_read[0] == maximize:
            prior = self._prior_read[1]  # (read when the searcher was made: the same TaskData)
        optimizer = Optimizer(
            self._space,
            maximize=maximize,
            seed=self._seed,
            prior=prior,
            transfer=self._transfer,
            n_initial=self._n_initial,
            worker="ray-tune",
            **self._options,
        )
        optimizer._asks_by_hand = False  # (trials in flight are Tune's: no UnansweredAskWarning)
        return optimizer

    def suggest(self, trial_id: str) -> dict | str | None:
        if self._optimizer is None:
            self._optimizer = self._build()
            for i, point in enumerate(self._points):  # every one, before the first runs
                self._point(i, point)
        if self._points:  # the user's own first configurations, stored as pending like an ask
            params = self._point(0, self._points[0])
            trial = self._optimizer.study.add_trial(params, PENDING, worker="ray-tune")
            self._points.pop(0)
            self._live[trial_id] = trial.id
            return self._config(dict(trial.params))
        try:
            suggestion = self._optimizer.ask()
        except SpaceExhaustedError:
            # a finite space whose every point is running or failed: ask again once a running trial
            # ends (None), or stop the run when none is running (every point failed)
            if self._live:
                return None
            warnings.warn(
                "WarmboSearch: every point of the finite search space failed; no configuration is "
                "left to suggest, so the run ends",
                BudgetNotReachedWarning,
                stacklevel=2,
            )
            return Searcher.FINISHED
        self._live[trial_id] = suggestion.trial_id
        return self._config(dict(suggestion))

    def on_trial_result(self, trial_id: str, result: dict) -> None:
        """Keep the trial's last reported metric: Tune completes a trial it stopped while paused
        (HyperBand's) with no result, and that value is then its outcome."""
        if trial_id in self._live and result and result.get(self._metric) is not None:
            self._last[trial_id] = result[self._metric]

    def on_trial_complete(self, trial_id: str, result: dict | None = None, error: bool = False) -> None:
        """Tell the trial's outcome: the metric of its final result (a trial a scheduler stopped early
        reports its last one, told as if final), else its last reported one (a trial Tune stopped
        while paused is completed with no result: a user test's HyperBand run stored 4 of 9 finished
        trials as failed, one of them Tune's best); failed when it raised or reported no metric."""
        warmbo_id = self._live.pop(trial_id, None)
        last = self._last.pop(trial_id, None)
        if warmbo_id is None or self._optimizer is None:
            return
        value = None if not result else result.get(self._metric)
        if value is None and not error:
            value = last
        if error or value is None:
            reason = "the trial raised an error" if error else f"the result has no metric {self._metric!r}"
            self._optimizer.tell_failed(warmbo_id, error=reason)
            return
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = None
        if number is not None and not math.isfinite(number):
            # (it said "...; use tell_failed for a failed evaluation", which a Tune user never calls)
            self._optimizer.tell_failed(
                warmbo_id, error=f"metric {self._metric!r} is {number!r}, not a finite number"
            )
            return
        try:
            self._optimizer.tell(warmbo_id, float(value))
        except (TypeError, ValueError) as exc:  # not a number
            self._optimizer.tell_failed(warmbo_id, error=f"metric {self._metric!r}: {exc}")

    def add_evaluated_point(
        self,
        parameters: dict,
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list | None = None,
    ) -> None:
        """Tell a configuration evaluated outside this search (nested dicts are flattened)."""
        if self._optimizer is None:
            self._optimizer = self._build()
        params = flatten_dict(parameters, prevent_delimiter=True) if self._nested else dict(parameters)
        params = self._indexed({k: v for k, v in params.items() if k in self._optimizer.space.names})
        if error or pruned or value is None or not math.isfinite(float(value)):
            self._optimizer.tell_failed(params, error="evaluated outside the search: failed or pruned")
        else:
            self._optimizer.tell(params, float(value))

    # -- state, for Tune's experiment checkpoints
    def get_state(self) -> dict[str, Any]:
        trials = []
        if self._optimizer is not None:
            trials = [
                (t.id, t.params, t.state, t.value, t.error)
                for t in self._optimizer.study.trials()
                if t.worker != PRIOR_WORKER  # the prior is rebuilt from the arguments
            ]
        return {
            "version": _STATE_VERSION,
            "space": None if self._space is None else self._space.to_dict(),
            "nested": self._nested,
            "steps": {n: (step.q, step.integer) for n, step in self._steps.items()},
            "metric": self._metric,
            "mode": self._mode,
            "seed": self._optimizer.seed if self._optimizer is not None else self._seed,
            # once started, the prior's rows as the optimizer read them, not prior= as given: a
            # checkpoint then holds no PostgreSQL password and restores without reaching the source
            "prior": self._optimizer.prior if self._optimizer is not None else self._prior,
            "transfer": self._transfer,
            "n_initial": self._n_initial,
            "options": self._options,
            "started": self._optimizer is not None,
            "points": [dict(p) for p in self._points],
            "trials": trials,
            "live": dict(self._live),
            "last": dict(self._last),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        if state.get("version") != _STATE_VERSION:
            raise ValueError(f"unknown WarmboSearch state version {state.get('version')!r}")
        self._space = None if state["space"] is None else Space.from_dict(state["space"])
        self._nested = state["nested"]
        self._steps = {n: _Step(n, q, integer) for n, (q, integer) in state.get("steps", {}).items()}
        self._metric, self._mode = state["metric"], state["mode"]
        self._seed, self._prior, self._transfer = state["seed"], state["prior"], state["transfer"]
        self._n_initial, self._options = state["n_initial"], state["options"]
        self._points = [dict(p) for p in state.get("points", [])]  # (absent from older checkpoints)
        self._optimizer, self._live, self._prior_read = None, {}, None
        self._last = dict(state.get("last", {}))  # (absent from older checkpoints)
        if not state["started"]:
            return
        self._optimizer = self._build()
        study = self._optimizer.study
        renumber = {}
        with study.transaction():
            for old_id, params, trial_state, value, error in state["trials"]:
                trial = study.add_trial(
                    params, trial_state, value=value if trial_state == COMPLETE else None, error=error
                )
                renumber[old_id] = trial.id
        self._live = {tid: renumber[wid] for tid, wid in state["live"].items() if wid in renumber}

    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "wb") as fh:
            pickle.dump(self.get_state(), fh)

    def restore(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "rb") as fh:
            self.set_state(pickle.load(fh))
