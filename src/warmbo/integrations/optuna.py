"""Optuna sampler: warmbo's optimizer proposes the trials of an Optuna study.

An Optuna user changes one line, ``optuna.create_study(sampler=WarmboSampler(...))``, and keeps
Optuna's storages (RDB, journal: many machines on one study), pruners and dashboard. This module
owns the translation between the two libraries and nothing of the optimisation itself:

- :class:`SpaceMap`: Optuna's distributions as a warmbo :class:`~warmbo.space.Space` and back.
  ``FloatDistribution`` becomes a :class:`~warmbo.space.Float` (``log`` kept); ``IntDistribution``
  an :class:`~warmbo.space.Int` (``log`` kept); a ``step`` (float or int) is kept as warmbo's own
  ``step`` (the grid ``low + k * step``, Optuna's ``high`` already moved down onto it), so the model
  sees the grid exactly, no point rounds onto another, and the optimizer's trials hold the real
  values (before, the grid index ``k``; nothing of that was stored in the Optuna study, so a study
  begun with it goes on unchanged); ``CategoricalDistribution`` a
  :class:`~warmbo.space.Categorical` of the same choices (or of their indices, for choices warmbo
  does not take, such as ``None``).
- :class:`WarmboSampler`: the ``optuna.samplers.BaseSampler`` contract. The relative search space is
  read from the study's completed trials (:func:`conditional_search_space`): the parameters in all
  of them, as Optuna's intersection search space (``GPSampler``'s, multivariate ``TPESampler``'s),
  and the parameters of a define-by-run branch, each with the condition the trials show (``C`` when
  ``model`` is ``"svm"``: warmbo's ``when=``), so that warmbo proposes a branch's parameters too;
  single-valued distributions are left out. Every other parameter (asked when a number is large, or
  whose range changed), and every parameter of the first ``n_startup_trials`` trials, comes from the
  independent sampler. Before, every branch's parameter came from the independent sampler: on the
  choice of a model and its hyperparameters (``bench/conditional.py``, cash-digits) the error after
  30 trials fell from 0.0189 to 0.0150 (10 of 10 seeds lower), level with TPE's define-by-run.

What the optimizer sees. The sampler keeps one in-memory :class:`~warmbo.optimizer.Optimizer` per
(study, relative search space) and, before each proposal, brings it up to date with the Optuna
storage: complete trials are told with their values, running trials (of any worker, any process)
become pending points, fantasised by the optimizer (kriging believer) so that parallel workers do
not propose the same point, and failed or pruned trials become failed points (not proposed again,
read by the optimizer's failure model, ``failures=``: a classifier of success by default; when
every point of a finite space is one of these, the trial comes from the independent sampler, as
Optuna repeats points). A result is recorded at the
point Optuna evaluated: when that is not the proposal (Optuna replaced a value outside a changed
distribution, or the objective never asked for a parameter), the proposal is withdrawn. A running
trial's full proposal is stored in its system attributes (``warmbo:params``) as soon as it is made,
because Optuna records a parameter only when the objective asks for it. The hyperparameters of the
optimizer's last fit are kept in the study's system attributes (``warmbo:warm_start:<digest>``, one
per relative search space), so that a new sampler (a resumed study, another process or worker)
starts its first fit from them, as a warmbo optimizer resuming a stored study does, instead of a
full multi-start fit (bench/sampler_first_ask.py). Everything the sampler knows is therefore in the
Optuna storage and the ``prior``; its optimizer is a cache, rebuilt after unpickling or when the
search space changes.

Prior knowledge: ``prior=`` takes what ``Optimizer(prior=...)`` takes, in the units of the Optuna
parameters (an ``(X, y)`` pair of parameter dicts or of rows in the search space's order, i.e.
sorted by name, a :class:`~warmbo.data.TaskData`, a CSV path or a DataFrame, where a choice warmbo
does not take, such as ``None``, is given as its index; a finished warmbo study, its file or
URL, or a list of warmbo studies, CSV paths and TaskData, read by :func:`warmbo.prior.as_prior`, one
source task each), or a list of earlier Optuna studies
(``optuna.Study`` objects), whose completed trials inside the current search space are the source
data, one source task per study, signed by each study's direction. ``transfer=`` chooses how they
are used (default ``"auto"``: a warm design from the sources, then the guarded portfolio;
``"envelope"``, ``"rgpe"``, ... as in :mod:`warmbo.transfer.registry`; ``"none"``: as trials of this
same objective). Each relative search space reads the prior rows that hold all of its parameters
(:func:`warmbo.prior.subspace_prior`): in a conditional search space, the rows of another branch are
left out, and other parameters dropped; a space no row lies in is optimised without the prior. A
row of any form whose value lies outside the space's range (branches that give a parameter other
ranges) is left out too, with one :class:`~warmbo.prior.PriorOutsideSpaceWarning` counting them
(which says the space is searched without the prior when no row is left;
:func:`warmbo.prior.left_out_of_subspace`). What can be read without the search space is checked
when the sampler is made (:func:`warmbo.prior.check_prior`: a missing, empty or malformed file, a
value that is not a finite number, a warmbo study that does not exist or holds no complete trial),
with the message ``Optimizer(prior=...)`` gives, so that no trial is spent on a prior that cannot be
read; its parameter columns and values are checked against each relative search space.

Self-contained (it needs optuna and warmbo's public API only), so that it can be published on
OptunaHub as a package whose ``__init__.py`` re-exports :class:`WarmboSampler`.

Why this file is long: that one-file package holds the whole translation (distributions both ways,
the storage sync, the concurrent-proposal check, prior studies and files, the arguments checked
before the first trial), which would otherwise be split into modules OptunaHub would have to ship.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler, RandomSampler
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from ..data import DataError, TaskData
from ..optimizer import Optimizer, SpaceExhaustedError, optimizer_arguments, refuse_dropped_model
from ..prior import PriorFormError, check_prior, left_out_of_subspace, subspace_prior
from ..space import Categorical, Float, Int, Parameter, Space, SpaceError
from ..transfer.registry import TRANSFER_METHODS
from ..transfer.warm_design import design_size
from ..trial import COMPLETE, FAILED, PENDING

__all__ = ["SpaceMap", "WarmboSampler", "conditional_search_space"]

#: system attribute (split in chunks ``:0``, ``:1``, ...) holding a running trial's proposal
PARAMS_KEY = "warmbo:params"
# RDBStorage keeps system attribute values below 2046 characters
_CHUNK = 2000
#: system attribute set once a running trial's proposal has been checked against concurrent ones
CHECKED_KEY = "warmbo:checked"
#: study system attribute (one per relative search space: ``warmbo:warm_start:<digest>``) holding the
#: hyperparameters of the optimizer's last fit, so that a new sampler object (another process,
#: another worker, a resumed study) starts its first fit from them
WARM_START_KEY = "warmbo:warm_start"
# a concurrent proposal closer than this (max norm on the unit cube) to ours is the same point
_COLLISION = 1e-3
# seconds to wait for a concurrent worker's decision on a colliding point
_DECISION_WAIT = 2.0
# proposals per trial when concurrent workers keep colliding
_ATTEMPTS = 3
_MISSING = object()  # (a parameter a trial does not hold)
# complete trials before warmbo proposes, without a prior (Optuna's GPSampler uses 10 as well)
_STARTUP = 10


class _Dimension:
    """One Optuna parameter: its distribution, the warmbo parameter that models it, and the two
    conversions of a value (Optuna's units <-> warmbo's)."""

    def __init__(self, name: str, distribution: BaseDistribution):
        self.name = name
        self.distribution = distribution
        self.indexed = False  # warmbo value = index of the Optuna value (odd choices)
        d = distribution
        if isinstance(d, FloatDistribution):
            # (Optuna has already moved a high off the step's grid down onto it, as warmbo requires)
            self.parameter: Parameter = Float(name, d.low, d.high, log=d.log, step=d.step)
        elif isinstance(d, IntDistribution):
            self.parameter = Int(name, d.low, d.high, log=d.log, step=d.step)
        elif isinstance(d, CategoricalDistribution):
            try:
                self.parameter = Categorical(name, tuple(d.choices))
            except SpaceError:  # None, or 1 and 1.0 both: warmbo models the index instead
                self.indexed = True
                self.parameter = Categorical(name, tuple(range(len(d.choices))))
            else:
                self.indexed = tuple(self.parameter.choices) != tuple(d.choices) or any(
                    type(a) is not type(b) for a, b in zip(self.parameter.choices, d.choices, strict=True)
                )
                if self.indexed:
                    self.parameter = Categorical(name, tuple(range(len(d.choices))))
        else:
            raise ValueError(f"parameter {name!r}: WarmboSampler does not know the distribution {d!r}")

    def to_warmbo(self, value: Any) -> Any:
        """The warmbo value of an Optuna value; ValueError if the distribution does not contain it."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            index = d.to_internal_repr(value)  # ValueError for an unknown choice
            return index if self.indexed else self.parameter.choices[index]
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise ValueError(f"parameter {self.name!r}: {value!r} is not a number")
        v = float(value)
        if not (math.isfinite(v) and d.low <= v <= d.high):
            raise ValueError(f"parameter {self.name!r}: {value!r} is outside [{d.low}, {d.high}]")
        try:  # (a step parameter takes a value within float noise of its grid as the grid value)
            return self.parameter.validate(value)
        except SpaceError as error:  # e.g. 2.5 for an integer
            raise ValueError(str(error)) from None

    def to_optuna(self, value: Any) -> Any:
        """The Optuna value of a warmbo value (a value the warmbo parameter contains)."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return d.choices[int(value) if self.indexed else self.parameter.index(value)]
        if isinstance(d, IntDistribution):
            return int(value)
        return float(min(max(float(value), d.low), d.high))


class SpaceMap:
    """Optuna distributions as a warmbo Space, and the conversion of points both ways.

    Parameters
    ----------
    distributions : dict of str to optuna.distributions.BaseDistribution
        The search space (e.g. a relative search space); the warmbo space keeps this order.

    Attributes
    ----------
    space : Space
        The space the optimizer works in, in Optuna's own units (a ``step`` kept as warmbo's
        ``step``): also the space in which prior data files and :class:`~warmbo.data.TaskData` are
        read.
    user_space : Space
        The same space (kept for code written when step parameters were held as a grid index).

    Examples
    --------
    >>> from optuna.distributions import FloatDistribution, IntDistribution
    >>> lr, units = FloatDistribution(1e-4, 1.0, log=True), IntDistribution(16, 128, step=16)
    >>> m = SpaceMap({"lr": lr, "units": units})
    >>> m.space.params[1]
    Int(name='units', low=16, high=128, log=False, step=16)
    >>> m.to_optuna(m.to_warmbo({"lr": 0.01, "units": 64}))
    {'lr': 0.01, 'units': 64}
    """

    def __init__(
        self,
        distributions: Mapping[str, BaseDistribution],
        when: Mapping[str, Mapping[str, Sequence]] | None = None,
    ):
        if not distributions:
            raise ValueError("the search space is empty: there is nothing for warmbo to propose")
        self.distributions = dict(distributions)
        self.when = {name: dict(condition) for name, condition in (when or {}).items()}
        self.dimensions = [_Dimension(name, d) for name, d in self.distributions.items()]
        by_name = {dim.name: dim for dim in self.dimensions}
        for dim in self.dimensions:
            if dim.name in self.when:  # (a parent's Optuna choices as its warmbo values: an index if odd)
                condition = {
                    parent: [by_name[parent].to_warmbo(v) for v in values]
                    for parent, values in self.when[dim.name].items()
                }
                dim.parameter = dataclasses.replace(dim.parameter, when=condition)
        self.space = Space([dim.parameter for dim in self.dimensions])
        # (the same space: odd categorical choices are read as their index in prior rows too)
        self.user_space = self.space

    @property
    def names(self) -> list[str]:
        return list(self.distributions)

    def to_warmbo(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The warmbo point of Optuna parameters: the parameters active at it (extra names are
        ignored, and so are the values of inactive parameters; a missing active parameter or a value
        outside its distribution is a ValueError)."""
        point, wrong = {}, {}
        for dim in self.dimensions:
            if dim.name in params:
                try:
                    point[dim.name] = dim.to_warmbo(params[dim.name])
                except ValueError as error:
                    wrong[dim.name] = error
        if not self.when:
            missing = [n for n in self.distributions if n not in params]
            if missing:
                raise ValueError(f"missing parameter(s) {missing!r} in {dict(params)!r}")
            if wrong:
                raise next(iter(wrong.values()))
            return point
        for name, error in wrong.items():  # (a parent's value before the children it decides)
            if not self.space.inactive(point) >= {name}:
                raise error
        point = {n: v for n, v in point.items() if n not in wrong}
        missing = self.space.missing(point)
        if missing:
            raise ValueError(f"missing parameter(s) {missing!r} in {dict(params)!r}")
        active = self.space.active(point)
        return {n: point[n] for n in active}

    def lacks(self, params: Mapping[str, Any]) -> bool:
        """Whether Optuna parameters lack one the point needs (a parent, or a parameter its parents'
        values make active): another branch's trial. A value outside its distribution is not a lack
        but a row outside the space, said by :meth:`to_warmbo`."""
        if not self.when:
            return not set(self.distributions) <= set(params)
        settled = {}
        for dim in self.dimensions:
            if dim.name in params:
                with contextlib.suppress(ValueError):
                    settled[dim.name] = dim.to_warmbo(params[dim.name])
        return any(name not in params for name in self.space.missing(settled))

    def to_optuna(self, point: Mapping[str, Any]) -> dict[str, Any]:
        """The Optuna parameters of a warmbo point (its active parameters)."""
        return {dim.name: dim.to_optuna(point[dim.name]) for dim in self.dimensions if dim.name in point}


def _close(cache: _Cache, point: dict, encoded: np.ndarray) -> bool:
    return bool(np.max(np.abs(cache.optimizer.space.encode(point)[0] - encoded)) < _COLLISION)


def _settle(
    cache: _Cache, trial: FrozenTrial, warmbo_id: int, target: str, value: float, state: TrialState
) -> int | None:
    """Record a finished Optuna trial, proposed as the optimizer's trial ``warmbo_id``, under the point
    Optuna evaluated; returns the optimizer's trial id for it (None: not a point of the search space).

    Usually every parameter the objective asked for holds the proposed value, and the proposal is
    completed (or failed); parameters it did not ask for (a conditional branch, or a failure before
    the objective asked for them) do not matter to the result. But Optuna replaces a proposed value
    that lies outside the distribution the objective asks for (a changed range): then the proposal,
    never evaluated, is withdrawn and the trial's own parameters, when they lie in the search space,
    are added with the result.
    """
    optimizer = cache.optimizer
    error = f"optuna trial {trial.number}: {state.name}"
    proposal = cache.map.to_optuna(optimizer.study.trial(warmbo_id).params)
    asked = dict(trial.params)
    if all(_same_value(asked[name], proposal[name]) for name in asked.keys() & proposal.keys()):
        if target == COMPLETE:
            optimizer.tell(warmbo_id, value)
        else:
            optimizer.tell_failed(warmbo_id, error=error)
        return warmbo_id
    optimizer.study.delete_trials([warmbo_id])
    try:
        point = cache.map.to_warmbo(asked)
    except ValueError:  # a parameter outside the search space, or not asked for
        return None
    complete = target == COMPLETE
    added = optimizer.study.add_trial(
        point, target, value=value if complete else None, worker="optuna", error=None if complete else error
    )
    return added.id


def _same_value(a: Any, b: Any) -> bool:
    """One parameter value as Optuna recorded it and as it was proposed (floats to round-off)."""
    numbers = [
        isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool | np.bool_)
        for v in (a, b)
    ]
    if all(numbers):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return not any(numbers) and type(a) is type(b) and a == b


def _publish(study: optuna.Study, trial: FrozenTrial, key: str, text: str) -> None:
    """Store ``text`` in the trial's system attributes ``key:0``, ``key:1``, ... (RDB storages keep
    values shorter than 2046 characters)."""
    for i in range(0, max(len(text), 1), _CHUNK):
        study._storage.set_trial_system_attr(trial._trial_id, f"{key}:{i // _CHUNK}", text[i : i + _CHUNK])


def trial_params(trial: FrozenTrial) -> dict[str, Any]:
    """A trial's parameters, completed by the proposal stored in its system attributes while it runs
    (Optuna records a parameter only once the objective asks for it)."""
    if trial.state.is_finished():
        return dict(trial.params)
    chunks, i = [], 0
    while (chunk := trial.system_attrs.get(f"{PARAMS_KEY}:{i}")) is not None:
        chunks.append(chunk)
        i += 1
    params = json.loads("".join(chunks)) if chunks else {}
    params.update(trial.params)
    return params


class _SearchSpace(dict):
    """A relative search space: Optuna's dict of distributions, which Optuna hands back to
    :meth:`WarmboSampler.sample_relative`, with ``when``: the conditions of its parameters that are
    not in every completed trial (:func:`conditional_search_space`)."""

    def __init__(self, distributions: Mapping[str, BaseDistribution], when: Mapping[str, dict]):
        super().__init__(distributions)
        self.when = dict(when)


def conditional_search_space(
    trials: Sequence[FrozenTrial], prior_trials: Sequence[FrozenTrial] = ()
) -> _SearchSpace:
    """The search space of a define-by-run objective, read from its completed ``trials``: every
    parameter with one distribution in all of them (more than one value), a parameter in some of
    them only with the condition the trials show for it.

    A parameter ``p`` absent from some trials is conditional on a categorical parameter ``c`` when
    the trials say so without exception: ``c`` is in every trial that holds ``p``, and each value of
    ``c`` seen goes with ``p`` always or never. ``p`` is then active where ``c`` is active and takes
    a value ``V`` other than those seen without ``p``: ``when={c: V}``
    (:class:`~warmbo.space.Parameter`). Of several such ``c``, the one in the most trials (a model
    rather than the SVM kernel the branch also asks for); only parameters in more trials than ``p``
    (or as many, and seen first) are tried, so no condition can come back to ``p``. A parameter
    with no such ``c`` (asked when a number is large, say, or whose only such ``c`` is left out
    itself) is left out, and so is one whose distribution differs between trials (a changed range,
    a branch's own): Optuna's independent sampler proposes them, as it does every parameter of a
    sampler's intersection search space.

    A value of ``c`` not seen yet is taken to hold ``p``: only the trials' absences take a parameter
    out. So a prior's rows of a branch the study has not tried yet keep their ``p``, and rows without
    it are another branch's, left out (a review: when an unseen value left ``p`` out, every such row
    was read as the one point ``{c: value}``, whatever its ``p``). When the objective does not ask
    for ``p`` at such a value, the proposal's ``p`` is not evaluated, and the next completed trial
    corrects the condition (the optimizer is rebuilt from the storage, which holds what was
    evaluated). With
    every parameter in every trial, this is Optuna's intersection search space
    (``IntersectionSearchSpace``), the single-valued distributions left out.

    ``prior_trials``, the complete trials of earlier studies of the objective (a prior of Optuna
    studies), are read with ``trials`` for the conditions, so that the space has its branches from
    the first trial on and the prior's rows of every branch hold their parameters. A prior trial
    whose distribution of a parameter differs from this study's is left out of that reading; a
    parameter of the prior alone is in the space (:meth:`WarmboSampler.sample_relative` leaves its
    proposal to the independent sampler until this study's trials hold it: Optuna would refuse a
    value of another kind). Where the prior's trials contradict a condition this study's trials
    show, or a parameter they leave out is in this study's space, this study's trials decide."""
    own = _read_space(trials)
    if not prior_trials:
        return own
    seen, changed, _ = _distributions(trials)
    agreeing = [t for t in prior_trials if all(seen.get(n, d) == d for n, d in t.distributions.items())]
    both = _read_space([*trials, *agreeing])
    names = {n: d for n, d in both.items() if n not in changed}
    when = {n: c for n, c in both.when.items() if n in names}
    for name, distribution in own.items():
        if name not in names:
            names[name] = distribution
            if name in own.when:
                when[name] = own.when[name]
    return _present(_SearchSpace(dict(sorted(names.items())), when))


def _distributions(
    trials: Sequence[FrozenTrial],
) -> tuple[dict[str, BaseDistribution], set[str], dict[str, set[int]]]:
    """Each parameter's distribution as first seen in ``trials``, the parameters whose distribution
    changed between trials, and the indices of the trials that hold each parameter."""
    distributions: dict[str, BaseDistribution] = {}
    changed: set[str] = set()
    holding: dict[str, set[int]] = {}
    for i, trial in enumerate(trials):
        for name, distribution in trial.distributions.items():
            if distributions.setdefault(name, distribution) != distribution:
                changed.add(name)
            holding.setdefault(name, set()).add(i)
    return distributions, changed, holding


def _read_space(trials: Sequence[FrozenTrial]) -> _SearchSpace:
    """:func:`conditional_search_space` of ``trials`` alone."""
    distributions, changed, holding = _distributions(trials)
    names = [n for n in distributions if n not in changed and not distributions[n].single()]
    # (the most held first, then as first seen: a parent is decided before the parameters it decides)
    order = sorted(names, key=lambda n: -len(holding[n]))
    kept: list[str] = []
    when: dict[str, dict] = {}
    for name in order:
        if len(holding[name]) == len(trials):
            kept.append(name)
            continue
        for parent in kept:
            values = _condition(trials, holding, name, parent, distributions[parent])
            if values is not None:
                kept.append(name)
                when[name] = {parent: values}
                break
    return _SearchSpace({n: distributions[n] for n in sorted(kept)}, when)


def _condition(
    trials: Sequence[FrozenTrial], holding: dict[str, set[int]], name: str, parent: str, distribution
) -> list | None:
    """The values of ``parent`` that make ``name`` active, in the order of its choices: every value but
    those the trials show without ``name``, when ``parent`` is categorical, in every trial that holds
    ``name``, and each of its values seen goes with ``name`` always or never
    (:func:`conditional_search_space`); None otherwise."""
    if not isinstance(distribution, CategoricalDistribution) or not holding[name] <= holding[parent]:
        return None
    with_name: dict[int, bool] = {}
    for i in holding[parent]:
        index = distribution.to_internal_repr(trials[i].params[parent])
        held = i in holding[name]
        if with_name.setdefault(index, held) != held:
            return None
    choices = distribution.choices
    return [choices[k] for k in range(len(choices)) if with_name.get(k, True)]


def _present(search_space: Mapping[str, BaseDistribution]) -> Mapping[str, BaseDistribution]:
    """``search_space`` without the parameters whose parents are not in it (parents' parents and so
    on): a sampler around this one may take a parameter out of the space it inferred (Optuna's
    ``PartialFixedSampler`` takes out the ones it fixes; a KeyError before), and a parameter whose
    parent is out goes too (its activity is not known), left to the independent sampler."""
    when = getattr(search_space, "when", {})
    kept = {n: c for n, c in when.items() if n in search_space}
    while True:
        gone = [
            n
            for n, c in kept.items()
            if not all(p in search_space and (p not in when or p in kept) for p in c)
        ]
        if not gone:
            break
        for n in gone:
            del kept[n]
    if len(kept) == len(when):
        return search_space
    return _SearchSpace({n: d for n, d in search_space.items() if n in kept or n not in when}, kept)


class _Cache:
    """The optimizer of one (study, relative search space), and which Optuna trial is which warmbo
    trial (``known``: Optuna ``_trial_id`` -> (warmbo trial id or None if out of the space, state)).
    ``key`` is (study id, search space); ``storage`` a weak reference to the study's Optuna storage."""

    def __init__(self, key: tuple, storage: Any, space_map: SpaceMap, optimizer: Optimizer):
        self.key = key
        self.storage = weakref.ref(storage)
        self.map = space_map
        self.optimizer = optimizer
        self.known: dict[int, tuple[int | None, str]] = {}
        # the study system attribute of this search space's warm start, and its last value there
        self.warm_key = f"{WARM_START_KEY}:{hashlib.sha1(repr(key[1:]).encode()).hexdigest()[:16]}"
        self.warm_text: str | None = None


class WarmboSampler(BaseSampler):
    """An Optuna sampler that proposes with warmbo's :class:`~warmbo.optimizer.Optimizer`.

    Single-objective studies only. The relative search space is proposed jointly by warmbo: the
    parameters present with the same distribution in every completed trial, and those of a
    define-by-run branch (present in some trials, with the condition on a categorical parameter the
    trials show: :func:`conditional_search_space`). Other parameters and the startup trials come
    from ``independent_sampler``. Running trials are pending points of the optimizer, so parallel
    workers on one storage propose different points.

    Parameters
    ----------
    seed : int, optional
        Seed of warmbo's optimizer and of the default independent sampler. Give each process that
        shares a study its own seed: the startup trials of processes with one seed are the same.
    prior : optional
        Earlier evaluations: an ``(X, y)`` pair in the units of the Optuna parameters (X parameter
        dicts, or rows in the search space's order, sorted by name), a :class:`~warmbo.data.TaskData`,
        a CSV path or a DataFrame (one column per parameter and ``y``, optionally ``task``), a
        finished warmbo study (file or URL) or a list of warmbo studies, CSV paths and TaskData (one
        source task each, as ``Optimizer(prior=...)`` reads them), or a list of ``optuna.Study`` objects whose
        completed trials (inside the current search space) are the
        data, one source task per study, signed by each study's direction. Each relative search
        space reads the rows that hold all of its parameters (a conditional space's other branch is
        left out) and lie in its ranges (the others are left out with a ``PriorOutsideSpaceWarning``
        counting them; without a prior, said, when none is left). A prior that cannot be read
        without the search space (a missing, empty or malformed file, a value that is not a finite
        number, ...) is refused here, with ``Optimizer(prior=...)``'s :class:`~warmbo.data.DataError`;
        its parameters are checked at the first proposal, when the search space is known.
    transfer : str, optional
        How the prior is used (see :class:`~warmbo.optimizer.Optimizer`): ``"auto"`` (default with a
        prior: a warm design from the sources, then the guarded portfolio), a transfer method such
        as ``"envelope"`` or ``"rgpe"``, or ``"none"`` (the same objective: its rows are trials of
        the model).
    n_startup_trials : int, optional
        Complete trials before warmbo proposes; until then the independent sampler does. Default 10
        without a prior, 1 with one (the first trial fixes the search space); that first trial is
        then the prior's best row (:meth:`_first_value`).
    independent_sampler : optuna.samplers.BaseSampler, optional
        Sampler of the startup trials and of parameters outside the relative search space; default
        ``RandomSampler(seed=seed)``.
    optimizer_options : dict, optional
        More keyword arguments of :class:`~warmbo.optimizer.Optimizer` (``acquisition``,
        ``kernel``, ``model``, ``max_prior``, ...), on the encoded space of :class:`SpaceMap`.
    warn_independent_sampling : bool
        Log a warning when a parameter after the startup trials is sampled independently.

    Examples
    --------
    >>> import optuna
    >>> from warmbo.integrations.optuna import WarmboSampler
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> study = optuna.create_study(sampler=WarmboSampler(seed=0, n_startup_trials=4))
    >>> study.optimize(lambda t: (t.suggest_float("x", -2.0, 2.0) - 0.5) ** 2, n_trials=12)
    >>> abs(study.best_params["x"] - 0.5) < 0.1
    True
    """

    def __init__(
        self,
        *,
        seed: int | None = None,
        prior=None,
        transfer: str | None = None,
        n_startup_trials: int | None = None,
        independent_sampler: BaseSampler | None = None,
        optimizer_options: dict | None = None,
        warn_independent_sampling: bool = True,
    ):
        if n_startup_trials is not None and (
            isinstance(n_startup_trials, bool)
            or not isinstance(n_startup_trials, int)
            or n_startup_trials < 0
        ):
            raise ValueError(f"n_startup_trials must be a non-negative integer, got {n_startup_trials!r}")
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise ValueError(f"independent_sampler must be an Optuna sampler, got {independent_sampler!r}")
        options = dict(optimizer_options or {})
        reserved = {"space", "maximize", "seed", "prior", "transfer", "storage", "n_initial", "worker"}
        if reserved & set(options):
            raise ValueError(
                f"optimizer_options may not set {', '.join(sorted(reserved & set(options)))}: the sampler "
                "sets them"
            )
        # the optimizer is built at the first proposal, after the startup trials: arguments it would
        # refuse are refused here, before any trial is spent
        unknown = set(options) - set(optimizer_arguments())
        if unknown:
            raise ValueError(
                f"optimizer_options: Optimizer has no argument {', '.join(sorted(unknown))} (it takes "
                f"{', '.join(sorted(set(optimizer_arguments()) - reserved))})"
            )
        if transfer is not None and transfer not in TRANSFER_METHODS:
            raise ValueError(TRANSFER_METHODS.unknown(transfer))
        _check_prior(prior)
        refuse_dropped_model(prior is not None, transfer, "model" in options, "kernel" in options)
        self.seed = seed
        self.prior = prior
        self.transfer = transfer
        self.n_startup_trials = (
            (_STARTUP if prior is None else 1) if n_startup_trials is None else n_startup_trials
        )
        self.optimizer_options = options
        self.warn_independent_sampling = warn_independent_sampling
        self._independent_sampler = independent_sampler or RandomSampler(seed=seed)
        self._lock = threading.Lock()
        self._cache: _Cache | None = None
        self._relative: set[int] = set()  # trials whose relative parameters warmbo proposed

    # -- pickling: the optimizer is a cache of the Optuna storage, rebuilt on the next proposal
    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_lock"] = None
        state["_cache"] = None
        state.pop("_prior_complete", None)  # (read again from the prior studies)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def optimizer(self) -> Optimizer | None:
        """The warmbo optimizer of the last proposal (None before the first one)."""
        return None if self._cache is None else self._cache.optimizer

    def reseed_rng(self) -> None:
        self._independent_sampler.reseed_rng()

    # -- the BaseSampler contract
    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        if len(study.directions) > 1:
            # Optuna creates the trial before it asks the sampler: fail it, so that no trial is left
            # RUNNING in the storage by a study this sampler cannot serve
            study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
            raise ValueError(
                f"WarmboSampler optimises one objective, but the study {study.study_name!r} has "
                f"{len(study.directions)} directions; use a multi-objective sampler (e.g. NSGAIISampler)"
            )
        self._independent_sampler.before_trial(study, trial)

    def infer_relative_search_space(
        self, study: optuna.Study, trial: FrozenTrial
    ) -> dict[str, BaseDistribution]:
        complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        return conditional_search_space(complete, self._prior_trials())

    def _prior_trials(self) -> list[FrozenTrial]:
        """The complete trials of a prior of Optuna studies (read once), for the conditions of the
        search space (:func:`conditional_search_space`); [] for any other prior."""
        cached = self.__dict__.get("_prior_complete")
        if cached is None:
            prior = self.prior
            studies = (
                isinstance(prior, list | tuple) and prior and all(isinstance(s, optuna.Study) for s in prior)
            )
            cached = self._prior_complete = (
                [t for s in prior for t in s.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))]
                if studies
                else []
            )
        return cached

    def sample_relative(
        self, study: optuna.Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> dict[str, Any]:
        search_space = _present(search_space)
        if not search_space:
            return {}
        complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if len(complete) < self.n_startup_trials:
            return {}
        with self._lock:
            cache = self._cache_for(study, search_space)
            held = self._fixed(cache, trial)
            if held and not cache.map.space.missing(held):
                return {}  # (every value given: Optuna takes them, there is nothing to choose)
            own = {n for t in complete for n in t.distributions}  # (this study's parameters)
            for attempt in range(_ATTEMPTS):
                self._sync(cache, study, current=trial._trial_id)
                try:
                    suggestion = cache.optimizer.ask(fixed=held) if held else cache.optimizer.ask()
                except SpaceExhaustedError:
                    # a finite space (categorical, int, step parameters) whose every point is pending
                    # or failed (e.g. pruned): warmbo proposes none again, but Optuna may repeat one
                    _logger().warning(
                        f"WarmboSampler: every point of the search space of {', '.join(cache.map.names)} is "
                        f"running, failed or pruned; trial {trial.number} is sampled by "
                        f"{type(self._independent_sampler).__name__}"
                    )
                    study._storage.set_trial_system_attr(trial._trial_id, CHECKED_KEY, True)
                    return {}
                cache.known[trial._trial_id] = (suggestion.trial_id, PENDING)
                params = cache.map.to_optuna(suggestion)
                if self._repeats_a_reduced_space(cache, own, params, complete):
                    # the space looks finite only because parameters are left out of it (a name with
                    # a range of its own in each branch, a user test): every point of it is measured,
                    # and warmbo would repeat the best finished trial (12-14 of 30 trials). Optuna's
                    # independent sampler proposes the trial instead, with the left-out parameters
                    cache.optimizer.study.delete_trials([suggestion.trial_id])
                    del cache.known[trial._trial_id]
                    if not self.__dict__.get("_said_reduced"):
                        self._said_reduced = True
                        _logger().warning(
                            f"WarmboSampler: every point of its search space ({', '.join(cache.map.names)}; "
                            f"{', '.join(sorted(own - set(cache.map.names)))} left out, see "
                            "docs/optuna.md) is measured; trials are sampled by "
                            f"{type(self._independent_sampler).__name__} while that holds"
                        )
                    study._storage.set_trial_system_attr(trial._trial_id, CHECKED_KEY, True)
                    return {}
                _publish(study, trial, PARAMS_KEY, json.dumps(params))
                # a parameter of the prior's trials alone: Optuna would refuse a value of another
                # kind than the objective asks for (an int where it now asks a choice), so the
                # independent sampler proposes it until this study's trials hold it (the proposal,
                # not evaluated as it stands, is withdrawn: _settle). Not said as independent sampling
                withheld = [n for n in params if n not in own]
                if withheld:
                    self.__dict__.setdefault("_said_independent", set()).update(withheld)
                    params = {n: v for n, v in params.items() if n in own}
                if attempt + 1 == _ATTEMPTS or not self._collides(cache, study, trial, suggestion):
                    break
                # another worker proposed the same point at the same time: withdraw ours and ask
                # again, with its point pending
                cache.optimizer.study.delete_trials([suggestion.trial_id])
                del cache.known[trial._trial_id]
            study._storage.set_trial_system_attr(trial._trial_id, CHECKED_KEY, True)
            self._keep_warm_start(cache, study)
            self._relative.add(trial._trial_id)
        return params

    @staticmethod
    def _fixed(cache: _Cache, trial: FrozenTrial) -> dict[str, Any]:
        """The values ``study.enqueue_trial`` gave this trial for some parameters (Optuna's
        ``fixed_params``), as warmbo values: the optimizer chooses the others with them held
        (``ask(fixed=...)``), so that the point it records is the point Optuna evaluates. Before, it
        chose every value, Optuna replaced the enqueued ones, and the others had been chosen for
        values never evaluated. A value outside its distribution is left to Optuna (which warns)."""
        given = trial.system_attrs.get("fixed_params") or {}
        held = {}
        for dim in cache.map.dimensions:
            if dim.name in given:
                try:
                    held[dim.name] = dim.to_warmbo(given[dim.name])
                except ValueError:
                    continue
        # a conditional parameter is held where the held values make it active (its parents given
        # too); otherwise the optimizer chooses for the point its parents' values make
        space = cache.map.space
        return {n: v for n, v in held.items() if space._settled_active(held, n)}

    @staticmethod
    def _repeats_a_reduced_space(cache: _Cache, own: set, params: dict, complete) -> bool:
        """Whether ``params`` repeat a complete trial's values on a space that leaves some of the
        study's parameters out (their values, the independent sampler's, tell those trials apart
        where the space cannot). warmbo repeats a point only once it holds every point of the space
        (docs/optimizer.md, "No point is suggested twice")."""
        if not own - set(cache.map.names):
            return False
        return any(all(t.params.get(n, _MISSING) == v for n, v in params.items()) for t in complete)

    @staticmethod
    def _collides(cache: _Cache, study: optuna.Study, trial: FrozenTrial, suggestion) -> bool:
        """Whether a trial of another worker, proposed concurrently (our sync did not see it), holds
        (nearly) our point and has the priority: it is finished, has the lower trial number, or has
        already checked and kept its point (so it did not see ours, and will not move)."""
        mine = cache.optimizer.space.encode(dict(suggestion))[0]
        for other in study.get_trials(deepcopy=False):
            if other._trial_id == trial._trial_id or other._trial_id in cache.known:
                continue
            try:
                point = cache.map.to_warmbo(trial_params(other))
            except ValueError:
                continue
            if not _close(cache, point, mine):
                continue
            if other.state.is_finished() or other.number < trial.number:
                return True
            # a later trial yields to us if it saw our point; if it checked before we published, it
            # keeps its point and we yield. Wait (briefly) for its decision: it waits for no one
            # with a lower number than its own, so this cannot deadlock.
            deadline = time.monotonic() + _DECISION_WAIT
            while CHECKED_KEY not in other.system_attrs and not other.state.is_finished():
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
                other = study._storage.get_trial(other._trial_id)
            try:
                if _close(cache, cache.map.to_warmbo(trial_params(other)), mine):
                    return True
            except ValueError:
                continue
        return False

    def sample_independent(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        param_name: str,
        param_distribution: BaseDistribution,
    ) -> Any:
        first = self._first_value(study, trial, param_name, param_distribution)
        if first is not _NO_VALUE:
            return first
        said = self.__dict__.setdefault("_said_independent", set())
        if self.warn_independent_sampling and trial._trial_id in self._relative and param_name not in said:
            # once per parameter (a user test's conditional space logged 15 such lines in 25 trials)
            said.add(param_name)
            _logger().warning(
                f"WarmboSampler: parameter {param_name!r} of trial {trial.number} is sampled by "
                f"{type(self._independent_sampler).__name__}, because it is not in every completed "
                "trial with the same distribution, nor decided by a categorical parameter's value in "
                "them (asked when a number is large, a branch not seen yet, or a changed range); said "
                "once per parameter"
            )
        return self._independent_sampler.sample_independent(study, trial, param_name, param_distribution)

    def _prior_best(self, maximize: bool) -> dict[str, Any]:
        """The prior's best trial's parameters (:func:`_best_row`), read once."""
        cached = self.__dict__.get("_best_params")
        if cached is None or cached[0] != maximize:
            cached = self._best_params = (maximize, _best_row(self.prior, maximize))
        return cached[1]

    def _first_value(self, study: optuna.Study, trial: FrozenTrial, name: str, distribution) -> Any:
        """The first trial of a study with a prior: the prior's best row's value of
        ``name`` (when it has one inside ``distribution``), so that the first evaluation is warm, as
        ``Optimizer(prior=...)``'s first ask is (a user test: trial 0 was random, 2.4, and trial 1 the
        source's best, 0.115). Only while this trial is the study's only one (parallel workers'
        first trials would all be this point); :data:`_NO_VALUE` otherwise."""
        if self.prior is None or self.transfer == "none" or trial.number != 0:
            return _NO_VALUE
        if len(study.get_trials(deepcopy=False)) != 1:
            return _NO_VALUE
        best = self._prior_best(study.direction == StudyDirection.MAXIMIZE)
        if name not in best:
            return _NO_VALUE
        value = best[name]
        try:
            inside = distribution._contains(distribution.to_internal_repr(value))
        except (TypeError, ValueError):
            inside = False
        if (
            not inside
            and isinstance(distribution, CategoricalDistribution)
            and _Dimension(name, distribution).indexed
        ):
            # a prior that gives a choice by its position (None's, as docs/scale.md says): the
            # choice at that position (the best row's act=0 gave a random choice, a user test); only
            # for choices warmbo models by position (batch=1 of [2, 4, 8] is no position: a review)
            n = len(distribution.choices)
            if isinstance(value, int | np.integer) and not isinstance(value, bool) and 0 <= value < n:
                return distribution.choices[int(value)]
        return value if inside else _NO_VALUE

    def after_trial(
        self,
        study: optuna.Study,
        trial: FrozenTrial,
        state: TrialState,
        values: Sequence[float] | None,
    ) -> None:
        # tell this process's optimizer at once (other processes' trials are synced at the next ask)
        with self._lock:
            self._relative.discard(trial._trial_id)
            cache = self._cache
            known = None if cache is None else cache.known.get(trial._trial_id)
            if known is not None and known[0] is not None and known[1] == PENDING:
                value = float(values[0]) if state == TrialState.COMPLETE and values else math.nan
                target = COMPLETE if math.isfinite(value) else FAILED if state != TrialState.RUNNING else None
                if target is not None:
                    settled = _settle(cache, trial, known[0], target, value, state)
                    cache.known[trial._trial_id] = (settled, target)
        self._independent_sampler.after_trial(study, trial, state, values)

    # -- the optimizer behind the sampler
    def _cache_for(self, study: optuna.Study, search_space: dict[str, BaseDistribution]) -> _Cache:
        when = getattr(search_space, "when", {})  # (a plain dict: every parameter in every trial)
        key = (study._study_id, tuple(search_space.items()), repr(sorted(when.items())))
        # the storage by identity, not id(): a new study's storage may take a freed one's address
        if self._cache is not None and self._cache.key == key and self._cache.storage() is study._storage:
            return self._cache
        space_map = SpaceMap(search_space, when)
        maximize = study.direction == StudyDirection.MAXIMIZE
        prior = None if self.prior is None else self._prior_data(space_map, maximize)
        optimizer = Optimizer(
            space_map.space,
            maximize=maximize,
            seed=self.seed,
            prior=prior,
            transfer=self.transfer if prior is not None else None,
            n_initial=self._n_initial(prior, maximize),
            worker="optuna",
            **self.optimizer_options,
        )
        optimizer._asks_by_hand = False  # (trials in flight are Optuna's: no UnansweredAskWarning)
        if self._cache is not None:
            self._cache.optimizer.study.close()
        self._cache = _Cache(key, study._storage, space_map, optimizer)
        stored = study._storage.get_study_system_attrs(study._study_id).get(self._cache.warm_key)
        if isinstance(stored, str):
            # the last fit of any sampler on this study and search space: this optimizer's first fit
            # starts from it, as a warmbo optimizer resuming a stored study does (without it the
            # first proposal of every new process was a full multi-start fit: 2.7 s at 1000 trials,
            # d = 6, against 1.3 s with it, imports included; bench/sampler_first_ask.py)
            optimizer.study.set_meta("warm_start", stored)
            optimizer._warm_start = optimizer._stored_warm_start()  # (read when it was made)
            self._cache.warm_text = stored
        return self._cache

    @staticmethod
    def _keep_warm_start(cache: _Cache, study: optuna.Study) -> None:
        """Store the optimizer's last fit's hyperparameters in the study (:data:`WARM_START_KEY`)
        when they changed. A record longer than :data:`_CHUNK` (a very large space) is not stored,
        nor one the storage refuses: the next new sampler then fits from scratch, as before. Two
        workers storing at once is one write: an RDB storage ignores the second insert of a key."""
        text = cache.optimizer.study.get_meta("warm_start")
        if text and text != cache.warm_text and len(text) <= _CHUNK:
            try:
                study._storage.set_study_system_attr(study._study_id, cache.warm_key, text)
            except optuna.exceptions.StorageInternalError as error:  # (a busy database, say)
                # a lost record costs the next new sampler one full fit; the trial goes on
                _logger().debug(f"WarmboSampler: the warm start was not stored ({error})")
                return
            cache.warm_text = text

    def _n_initial(self, prior: TaskData | None, maximize: bool) -> int:
        """The optimizer's design size. Without a prior the startup trials are the design (1: the
        model chooses once two trials are complete). With one, the design counts the startup trials
        too, so it is their number plus the warm design's own size (2 for one source, the second a
        source model's maximum on a continuous space; 3 for several): the warm design then holds
        that many points from the sources, proposed after the startup trials. With 1, as before,
        the model chose right after the warm design's first point."""
        if prior is None or self.transfer == "none":
            return 1
        # (a prior of studies made the first startup trial the warm design's first point already)
        warm_first = 1 if self.n_startup_trials >= 1 and self._prior_best(maximize) else 0
        return self.n_startup_trials - warm_first + design_size(max(1, len(prior.tasks)))

    def _sync(self, cache: _Cache, study: optuna.Study, current: int) -> None:
        """Bring the optimizer's study up to date with the Optuna storage (see module docstring)."""
        optimizer, known = cache.optimizer, cache.known
        for trial in study.get_trials(deepcopy=False):
            if trial._trial_id == current:
                continue
            if trial.state == TrialState.COMPLETE:
                target = COMPLETE
            elif trial.state in (TrialState.FAIL, TrialState.PRUNED):
                target = FAILED
            else:  # RUNNING or WAITING
                target = PENDING
            warmbo_id, state = known.get(trial._trial_id, (None, None))
            if state == target or state in (COMPLETE, FAILED):
                continue
            if warmbo_id is None:
                try:
                    point = cache.map.to_warmbo(trial_params(trial))
                except ValueError:  # outside the relative search space (or not yet proposed)
                    if target != PENDING:
                        known[trial._trial_id] = (None, target)
                    continue
            value = trial.value if target == COMPLETE else None
            if target == COMPLETE and not math.isfinite(value):
                target = FAILED
            if warmbo_id is None:
                added = optimizer.study.add_trial(point, target, value=value, worker="optuna")
                warmbo_id = added.id
            elif target in (COMPLETE, FAILED):
                warmbo_id = _settle(cache, trial, warmbo_id, target, value, trial.state)
            known[trial._trial_id] = (warmbo_id, target)

    def _prior_data(self, space_map: SpaceMap, maximize: bool) -> TaskData | None:
        """``prior`` as TaskData of the optimizer's space (warmbo units, the new study's sense); None
        when it is a list of studies none of whose complete trials lies in that space."""
        prior = self.prior
        if isinstance(prior, list | tuple) and prior and all(isinstance(s, optuna.Study) for s in prior):
            rows, values, labels = [], [], []
            outside: list[str] = []  # trials of this space's parameters outside its ranges
            for source in prior:
                if len(source.directions) > 1:
                    raise ValueError(f"prior study {source.study_name!r} has several objectives")
                sign = 1.0 if (source.direction == StudyDirection.MAXIMIZE) == maximize else -1.0
                for trial in source.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
                    if space_map.lacks(trial.params):
                        continue  # (another branch of a conditional space, or other parameters)
                    try:
                        point = space_map.to_warmbo(trial.params)
                    except ValueError as error:  # another range (a branch's, or changed since)
                        outside.append(f"prior study {source.study_name!r}, trial {trial.number}: {error}")
                        continue
                    if math.isfinite(trial.value):
                        rows.append(point)
                        values.append(sign * float(trial.value))
                        labels.append(source.study_name)
            if outside:  # (one warning counting them, as for any prior)
                left_out_of_subspace(outside, space_map.names, len(rows))
            if not rows:
                # earlier studies of other parameters, or of other ranges: a search space they do not
                # reach is optimised without them (this one is asked again when the space changes)
                _logger().warning(
                    f"WarmboSampler: no complete trial of the prior studies lies in the search space of "
                    f"{', '.join(space_map.names)}; it is optimised without them"
                )
                return None
            task = labels if self.transfer != "none" else None
            return TaskData.from_records(rows, values, space_map.space, task=task, source="<optuna studies>")
        data = _user_data(_positions(prior, space_map), space_map.user_space, maximize)
        if data is None:
            # the prior of a conditional search space whose rows are all of another branch than the
            # parameters the trials share so far (or a space with a parameter the prior never had)
            names = _prior_names(prior)
            _logger().warning(
                f"WarmboSampler: no row of the prior holds every parameter of the search space "
                f"({', '.join(space_map.names)})"
                + (f"; the prior's columns are {', '.join(map(str, names))}" if names else "")
                + "; it is optimised without the prior"
            )
            return None
        # (read in the optimizer's own space, ranges and grids checked: its rows are already the
        # optimizer's points, odd categorical choices given as their index; converting them again
        # as Optuna values refused an index that is not itself a choice)
        task = data.task if self.transfer != "none" else None
        return TaskData.from_records(
            list(data.params), data.y, space_map.space, task=task, source=data.source
        )


def _prior_names(prior) -> list:
    """The column (or key) names of a prior given as a DataFrame, records, an ``(X, y)`` pair of
    dicts or a TaskData, to name them when none matches the search space; [] for other forms."""
    try:
        if isinstance(prior, TaskData):
            return list(prior.space.names)
        if hasattr(prior, "columns"):
            return [c for c in prior.columns if c not in ("y", "task")]
        rows = prior[0] if isinstance(prior, tuple) and len(prior) == 2 else prior
        if isinstance(rows, list | tuple) and rows and isinstance(rows[0], dict):
            return [k for k in rows[0] if k not in ("y", "task")]
        if hasattr(rows, "columns"):
            return list(rows.columns)
    except (TypeError, IndexError, AttributeError):
        pass
    return []


_NO_VALUE = object()


def _logger():
    """The sampler's logger, under Optuna's ``optuna`` logger: ``optuna.logging.set_verbosity`` sets
    its level too, and its lines look like Optuna's own. Before, it was ``warmbo.integrations.optuna``,
    outside Optuna's tree: ``set_verbosity(optuna.logging.ERROR)`` left its warnings on, printed by
    Python's last-resort handler without Optuna's format."""
    return optuna.logging.get_logger(f"optuna.{__name__}")


def _table_rows(item) -> list[tuple[dict, float]] | None:
    """A table prior's rows as ``(parameters, value)`` in the new study's direction (as tables are
    read): an ``(X, y)`` pair of dicts, a TaskData, a DataFrame or a CSV file with a ``y`` column;
    None for any other form. Cells are taken as they are (a CSV's as numbers where they read as one):
    a value outside a parameter's distribution is not proposed (:meth:`WarmboSampler._first_value`)."""
    import csv
    import os

    if isinstance(item, TaskData):
        return list(zip(item.params, (float(v) for v in item.y), strict=True))
    if isinstance(item, tuple) and len(item) == 2 and all(isinstance(r, dict) for r in item[0]):
        return list(zip((dict(r) for r in item[0]), (float(v) for v in item[1]), strict=True))
    if hasattr(item, "columns") and hasattr(item, "to_dict") and "y" in item.columns:
        return [
            ({k: v for k, v in row.items() if k not in ("y", "task") and v == v}, float(row["y"]))
            for row in item.to_dict("records")
        ]
    if isinstance(item, str | os.PathLike) and str(item).lower().endswith(".csv"):

        def cell(text: str):
            for kind in (int, float):
                try:
                    return kind(text)
                except ValueError:
                    pass
            return text

        with open(item, newline="", encoding="utf-8") as f:
            return [
                ({k: cell(v) for k, v in row.items() if k not in ("y", "task") and v != ""}, float(row["y"]))
                for row in csv.DictReader(f)
            ]
    return None


def _best_row(prior, maximize: bool) -> dict[str, Any]:
    """The parameters of the best row of the prior: a complete trial of its studies (Optuna studies,
    warmbo study files or URLs, each study's values signed by its direction) or a row of its tables
    (:func:`_table_rows`, in the new study's direction); {} for any other form or a table that
    cannot be read (it is read with its own message at the first proposal)."""
    from ..prior import names_a_study
    from ..storage import Study

    items = (
        [prior] if isinstance(prior, tuple) and len(prior) == 2 and not isinstance(prior[0], str) else None
    )
    items = items or (list(prior) if isinstance(prior, list | tuple) else [prior])
    best, top = {}, -math.inf
    for item in items:
        if isinstance(item, optuna.Study):
            sign = 1.0 if (item.direction == StudyDirection.MAXIMIZE) == maximize else -1.0
            rows = [
                (t.params, t.value) for t in item.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            ]
        elif isinstance(item, str) and names_a_study(item):
            try:
                source = Study(item, readonly=True)
            except Exception:  # noqa: BLE001 - read at the first proposal, with its own message
                continue
            try:
                sign = 1.0 if (source.settings.get("direction") == "maximize") == maximize else -1.0
                rows = [(t.params, t.value) for t in source.trials((COMPLETE,))]
            finally:
                source.close()
        else:
            try:
                rows, sign = _table_rows(item), 1.0
            except Exception:  # noqa: BLE001 - read at the first proposal, with its own message
                return {}
            if rows is None:
                return {}
        for params, value in rows:
            score = (1.0 if maximize else -1.0) * sign * float(value)
            if math.isfinite(score) and score > top:
                best, top = dict(params), score
    return best


def _check_prior(prior) -> None:
    """Refuse at construction, before any trial is spent, a ``prior`` that cannot be read: a list of
    Optuna studies with a multi-objective one, or mixed with other sources; any other form as
    :func:`warmbo.prior.check_prior` refuses it (with ``Optimizer(prior=...)``'s message: a missing,
    empty or malformed file, a value that is not a finite number, ...). Its columns and values are
    checked against the search space at the first proposal (:meth:`WarmboSampler._prior_data`)."""
    if prior is None:
        return
    if isinstance(prior, list | tuple) and prior and all(isinstance(s, optuna.Study) for s in prior):
        for source in prior:
            if len(source.directions) > 1:
                raise ValueError(f"prior study {source.study_name!r} has several objectives")
        return
    if isinstance(prior, list | tuple) and any(isinstance(s, optuna.Study) for s in prior):
        raise DataError(
            "prior: a list of optuna studies cannot be mixed with other sources; give the optuna "
            "studies alone, or warmbo studies and CSV files alone"
        )
    try:
        check_prior(prior)
    except PriorFormError:
        raise DataError(f"{_FORMS}; got {type(prior).__name__}") from None


_FORMS = (
    "prior must be an (X, y) pair, a TaskData, a CSV path, a DataFrame (parameter columns, 'y', "
    "optional 'task'), a warmbo study (file or URL), a list of warmbo studies, CSV paths and TaskData, "
    "or a list of optuna studies"
)


def _positions(prior, space_map: SpaceMap):
    """A DataFrame prior with the values of a categorical that warmbo models by position (its choices
    hold None, or 1 and 1.0) given as positions: a value that is a position (an int in range) stays,
    one that is a choice (of the same type) becomes its position. ``trials_dataframe()``'s strings
    were refused ("unknown category 'relu'; choices are (0, 1, 2)") and the whole prior thrown away
    when ``None`` was one of the choices (a user test). An empty cell (``None``, NaN) is ``None``'s
    position for a parameter the space holds in every trial; for a conditional one it stays empty,
    a row of another branch. Other priors are returned as given."""
    indexed = [dim for dim in space_map.dimensions if dim.indexed]
    if not indexed or not (hasattr(prior, "columns") and hasattr(prior, "assign")):
        return prior
    choices_of = {dim.name: tuple(dim.distribution.choices) for dim in indexed if dim.name in prior.columns}
    always = {p.name for p in space_map.space.params if p.when is None}

    def position(value, choices, name):
        empty = value is None or (isinstance(value, float | np.floating) and math.isnan(value))
        if empty:
            return choices.index(None) if None in choices and name in always else value
        if isinstance(value, float | np.floating):
            # a column of int choices with None is float in trials_dataframe() (4.0, NaN): its values
            # are the choices, not positions (a review: 1.0 read as position 1, 4.0 refused)
            for i, choice in enumerate(choices):
                if isinstance(choice, int | float) and not isinstance(choice, bool) and choice == value:
                    return i
            return value
        if isinstance(value, int | np.integer) and not isinstance(value, bool) and 0 <= value < len(choices):
            return value
        for i, choice in enumerate(choices):
            if choice is not None and type(choice) is type(value) and choice == value:
                return i
        return value

    return prior.assign(
        **{
            name: prior[name].astype(object).map(lambda v, c=choices, n=name: position(v, c, n))
            for name, choices in choices_of.items()
        }
    )


def _user_data(prior, user_space: Space, maximize: bool) -> TaskData | None:
    """The rows of prior data that hold every parameter of ``user_space``, in the units of the Optuna
    parameters (a warmbo study's values signed by its direction, as ``Optimizer(prior=...)`` reads
    it); None when no row does. Rows of another branch of a conditional search space (a record
    without one of the parameters, an empty CSV cell, a warmbo study without one of them) are left
    out, and the parameters of other branches dropped (:func:`warmbo.prior.subspace_prior`)."""
    return subspace_prior(prior, user_space, maximize)
