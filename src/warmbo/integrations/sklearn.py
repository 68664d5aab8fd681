"""``WarmboSearchCV``: scikit-learn's hyperparameter search, with warmbo choosing the candidates.

A drop-in for ``GridSearchCV`` and ``RandomizedSearchCV`` (skopt's ``BayesSearchCV`` and Optuna's
``OptunaSearchCV`` serve the same need): ``fit(X, y)`` cross-validates ``n_iter`` candidates, and
sets ``cv_results_``, ``best_params_``, ``best_score_`` and ``best_estimator_`` as scikit-learn's
searches do. It is a :class:`sklearn.model_selection._search.BaseSearchCV` whose ``_run_search``
(the hook scikit-learn documents for sequential model-based optimisation) runs warmbo's ask/tell
loop: each round asks the :class:`~warmbo.Optimizer` for ``n_points`` candidates, has scikit-learn
cross-validate them (``evaluate_candidates``: its folds, scoring, ``n_jobs``, ``error_score``), and
tells the optimizer each candidate's mean test score (the ``refit`` metric's, for several metrics).
Scores are greater-is-better, so the optimizer maximises them. A candidate whose every fit failed
(score NaN under the default ``error_score=np.nan``) is told as a failed trial, and the search goes
on (scikit-learn raises when every fit of one ``evaluate_candidates`` call failed, which for a round
of one candidate would stop the search: such a round is caught, its candidates told as failed, and
a :class:`FitFailedCandidatesWarning` lists them at the end, since they are then not in
``cv_results_``; only when every candidate failed is scikit-learn's error raised).

What warmbo adds to a search: ``prior=`` starts it warm from earlier tuning (a CSV of
configurations and scores, an earlier study, on another data set: any ``Optimizer`` prior, with
``transfer``); ``storage=`` keeps every candidate's score in a study as it is evaluated (``warmbo
status`` and ``warmbo report`` read it, and a later ``fit`` on the same storage starts warm from
those trials, evaluating ``n_iter`` new candidates).

Written by hand: the loop over scikit-learn's documented extension point, which neither library
offers.

Why this file is long: one estimator, whose search space comes in scikit-learn's three forms (a
dict of distributions, warmbo parameters, a list of dicts as a conditional space, with the stored
studies of the list's earlier, flat form read as they were), each converted here beside the loop
that reads its candidates back.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
import os
import warnings
from collections.abc import Sequence

import numpy as np
from sklearn.model_selection._search import BaseSearchCV
from sklearn.utils import check_random_state

from .._warnings import user_stacklevel
from ..optimizer import PRIOR_WORKER, Optimizer
from ..parameters import SpaceError
from ..space import Categorical, Float, Int, Parameter, Space
from ..trial import COMPLETE, FAILED

__all__ = ["FitFailedCandidatesWarning", "RandomizedSplitsWarning", "WarmboSearchCV"]


class FitFailedCandidatesWarning(UserWarning):
    """Candidates whose every cross-validation fit failed are not in ``cv_results_`` (scikit-learn
    keeps nothing of a call whose fits all failed); they are failed trials of the study."""


class RandomizedSplitsWarning(UserWarning):
    """The ``cv`` splitter gives other folds at each call (``KFold(shuffle=True)`` without a
    ``random_state``): each round of the search would score its candidates on other folds."""


def _parameter(name: str, given) -> tuple[Parameter, dict]:
    """One entry of a ``param_distributions`` dict as a warmbo parameter, with the labels of choices
    warmbo cannot hold (None, tuples, objects: scikit-learn's ``max_depth=None``,
    ``hidden_layer_sizes=(64, 64)``) mapped to their values; {} when every choice is held as is."""
    if isinstance(given, Parameter):
        if given.name != name:
            raise ValueError(f"search_space[{name!r}] is the parameter {given.name!r}: name them alike")
        return given, {}
    if isinstance(given, list | tuple | range | np.ndarray):  # (np.logspace(...), range(2, 10))
        choices = given.tolist() if isinstance(given, np.ndarray) else list(given)
        if not choices:
            raise ValueError(f"search_space[{name!r}] is an empty list of choices")
        plain = all(
            isinstance(c, str | bool | int | float | np.integer | np.floating) and c == c for c in choices
        )
        if plain:
            return Categorical(name, choices), {}
        labels = [str(c) for c in choices]
        if len(set(labels)) < len(labels):
            labels = [f"{k}: {c!r}" for k, c in enumerate(choices)]
        return Categorical(name, labels), dict(zip(labels, choices, strict=True))
    dist = getattr(getattr(given, "dist", None), "name", None)
    if dist is not None:
        low, high = (float(v) for v in given.support())
        if dist in ("loguniform", "reciprocal"):
            return Float(name, low, high, log=True), {}
        if dist == "uniform":
            return Float(name, low, high), {}
        if dist == "randint":
            return Int(name, int(low), int(high)), {}
    raise ValueError(
        f"search_space[{name!r}] = {given!r}: give a list of choices, scipy.stats.loguniform(a, b), "
        "uniform(loc, scale) or randint(low, high), or a warmbo parameter (wb.Float, wb.Int, "
        "wb.Categorical)"
    )


#: the categorical parameter that picks one dict of a list-of-dicts ``search_space``
DICT_PARAMETER = "search space dict"

#: rounds in a row whose every point is a candidate evaluated already, after which a list-of-dicts
#: search draws a candidate not evaluated yet at random (:meth:`WarmboSearchCV._unseen`)
STALLED_ROUNDS = 3


class _Dicts:
    """A list of ``param_distributions`` dicts (scikit-learn's form for conditional spaces: an SVC's
    ``gamma`` only with ``kernel="rbf"``) as one warmbo space: a categorical :data:`DICT_PARAMETER`
    picks the dict, and the space holds the union of the dicts' parameters. A name that every dict
    holding it defines alike is one parameter; one defined differently (``C`` over other ranges) is
    one parameter per dict, ``"C (dict 1)"``. A candidate gives the estimator the chosen dict's
    parameters alone, by their own names. A parameter that not every dict holds is conditional
    (``when={"search space dict": [the dicts holding it]}``, :mod:`warmbo.conditions`): a point
    holds the chosen dict's parameters only. Studies stored before session 44 hold every parameter
    in every point (``flat``): they are searched as they were, and two of their points that differ
    only in another dict's parameters are one candidate (:meth:`key`). Written by hand: neither
    library maps the one form to the other."""

    def __init__(self, dicts: Sequence, flat: bool = False) -> None:
        per_dict = []
        for i, given in enumerate(dicts):
            if not isinstance(given, dict) or not given:
                raise ValueError(
                    f"search_space[{i}] must be a non-empty dict of parameter distributions, as each "
                    f"dict of RandomizedSearchCV's param_distributions list, got {given!r}"
                )
            per_dict.append({str(name): _parameter(str(name), value) for name, value in given.items()})
        names = list(dict.fromkeys(name for entry in per_dict for name in entry))
        if DICT_PARAMETER in names:
            raise ValueError(f"{DICT_PARAMETER!r} names the choice of dict: name the parameter otherwise")
        params: list[Parameter] = [Categorical(DICT_PARAMETER, list(range(len(per_dict))))]
        #: per dict, the estimator's name -> the space's name
        self.active: list[dict[str, str]] = [{} for _ in per_dict]
        self.values: dict[str, dict] = {}
        for name in names:
            defined = [(i, entry[name]) for i, entry in enumerate(per_dict) if name in entry]
            first = defined[0][1]
            alike = all(param == first[0] and labels == first[1] for _, (param, labels) in defined)
            for i, (param, labels) in defined[:1] if alike else defined:
                inner = name if alike else f"{name} (dict {i})"
                params.append(param if alike else dataclasses.replace(param, name=inner))
                if labels:
                    self.values[inner] = labels
                for j, _ in defined if alike else [(i, None)]:
                    self.active[j][name] = inner
        if not flat:  # a parameter of some dicts only: active where one of them is chosen
            holders = {
                inner: [i for i, used in enumerate(self.active) if inner in used.values()]
                for inner in (p.name for p in params)
            }
            params = [
                p if p.name == DICT_PARAMETER or len(holders[p.name]) == len(per_dict)
                else dataclasses.replace(p, when={DICT_PARAMETER: holders[p.name]})
                for p in params
            ]  # fmt: skip
        self.flat = flat
        self.space = Space(params)
        # the value an inactive parameter takes in a flat space's prior point (any: it changes nothing)
        self._filler = self.space.decode(np.zeros((1, self.space.dim)))[0] if flat else {}
        self.cardinality = sum(
            math.prod(
                Space(
                    [dataclasses.replace(self.space.params[self.space.names.index(inner)], when=None)]
                ).cardinality
                for inner in used.values()
            )
            for used in self.active
        )

    def candidate(self, point: dict) -> dict:
        """The estimator's parameters at a point of the space: its dict's, by their own names."""
        used = self.active[point[DICT_PARAMETER]]
        return {
            name: self.values.get(inner, {}).get(point[inner], point[inner]) for name, inner in used.items()
        }

    @staticmethod
    def key(candidate: dict) -> tuple:
        return tuple(sorted((name, repr(value)) for name, value in candidate.items()))

    def point(self, row: dict) -> dict:
        """A prior's candidate (an earlier search's ``cv_results_["params"]`` row, labels already
        given as :func:`_labelled` writes them) as a point of the space: the first dict with exactly
        its names."""
        for i, used in enumerate(self.active):
            if set(row) != set(used):
                continue
            point = dict(self._filler)
            point[DICT_PARAMETER] = i
            point.update({used[name]: value for name, value in row.items()})
            try:  # (dicts of the same names, a pipeline's clf and clf__C for two models: its values')
                self.space.validate(point)
            except SpaceError:
                continue
            return point
        for i, used in enumerate(self.active):  # (values of no dict: read as the first's, left out later)
            if set(row) == set(used):
                point = dict(self._filler)
                point[DICT_PARAMETER] = i
                point.update({used[name]: value for name, value in row.items()})
                return point
        raise ValueError(
            f"the prior's candidate {row!r} has the parameters of none of the search_space's dicts "
            f"({'; '.join(', '.join(used) for used in self.active)})"
        )


def _stored_space(storage) -> Space | None:
    """The space of the study at ``storage``, or None when there is none (nothing is created)."""
    if storage is None:
        return None
    from ..storage import StorageError, Study

    try:
        study = Study(storage)
    except StorageError:
        return None
    try:
        return study.space
    finally:
        study.close()


def _labelled(prior, values: dict[str, dict], categorical: frozenset[str] | set[str] = frozenset()):
    """``prior`` as the search reads it, when it is an ``(X, y)`` pair of parameter dicts (an earlier
    search's ``(cv_results_["params"], cv_results_["mean_test_score"])``): its unscored candidates
    (NaN) left out with a warning, and the choices warmbo holds by label (None, tuples, estimators:
    :func:`_parameter`) written as those labels, its dicts holding the values themselves; any other
    form (None too) as given. A DataFrame of parameter columns and ``y`` (no ``task``) whose
    parameters include such a choice is read as that pair: its None is NaN and its ints floats once a
    column holds None (a user test: ``unknown category 3; choices are ('None', '3', '6')``)."""
    columns = getattr(prior, "columns", None)
    if (
        columns is not None
        and "y" in columns
        and "task" not in columns
        and any(values.get(str(c)) for c in columns)
    ):
        frame = prior.astype(object)
        rows = [
            {str(k): (None if isinstance(v, float) and math.isnan(v) else v) for k, v in record.items()}
            for record in frame.drop(columns=["y"]).to_dict("records")
        ]
        prior = (rows, np.asarray(prior["y"], dtype=np.float64))
    if not (isinstance(prior, tuple) and len(prior) == 2):
        return prior
    rows, y = prior
    try:
        rows = list(rows)
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        return prior
    if not rows or len(rows) != len(y) or not all(isinstance(row, dict) for row in rows):
        return prior
    scored = np.isfinite(y)
    if not scored.all():  # (error_score=np.nan: a candidate with one failed fold scores NaN)
        warnings.warn(
            f"{int((~scored).sum())} of the prior's {len(y)} candidates have no score (NaN: a fold "
            "failed) and are left out",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        rows, y = [row for row, ok in zip(rows, scored, strict=True) if ok], y[scored]

    def label(name: str, value):
        for text, choice in values[name].items():
            if choice is value or (type(choice) is type(value) and choice == value):
                return text
        if isinstance(value, float | np.floating) and float(value).is_integer():
            for text, choice in values[name].items():  # (an int choice in a column that holds None: 6.0)
                if isinstance(choice, int | np.integer) and not isinstance(choice, bool) and choice == value:
                    return text
        for text, choice in values[name].items():  # (an estimator saved and loaded: another object)
            if type(choice) is type(value) and str(choice) == str(value):
                return text
        return value  # (not a choice: the prior's reading says so)

    def read(name: str, value):
        if value is None and name in categorical and None not in values.get(name, {}).values():
            # a None the earlier grid held and this one dropped: a choice this space does not have,
            # left out as a dropped string choice is (it aborted the fit, "missing value": a user test)
            return "None"
        return label(name, value) if name in values else value

    return [{k: read(k, v) for k, v in row.items()} for row in rows], y


def _labelled_dicts(prior, dicts: _Dicts):
    """:func:`_labelled` for a list-of-dicts search: each candidate's labels by its own dict's
    parameters (a name defined differently in two dicts has its labels under each dict's), then
    its point in the union space (:meth:`_Dicts.point`)."""
    if not (isinstance(prior, tuple) and len(prior) == 2):
        return prior
    rows = prior[0]
    if not isinstance(rows, list | tuple) or not all(isinstance(row, dict) for row in rows):
        return prior
    by_name = {}
    for used in dicts.active:
        for name, inner in used.items():
            if inner in dicts.values:
                by_name.setdefault(name, {}).update(dicts.values[inner])
    labelled = _labelled(prior, by_name)
    if labelled is prior:
        return prior
    rows, y = labelled
    return [dicts.point(row) for row in rows], y


def _seed(random_state) -> int | None:
    """The optimizer's seed: an int or None as given; a ``RandomState`` draws one (a user test:
    ``random_state=np.random.RandomState(0)``, which scikit-learn's searches take, was refused)."""
    if random_state is None or isinstance(random_state, numbers.Integral):
        return None if random_state is None else int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class WarmboSearchCV(BaseSearchCV):
    """Bayesian optimisation of an estimator's hyperparameters by cross-validation.

    Parameters
    ----------
    estimator : estimator
        The scikit-learn estimator (or pipeline) to tune.
    search_space : Space, sequence of Parameter, or dict
        The hyperparameters, named as ``estimator.set_params`` takes them (``"svc__C"`` in a
        pipeline): ``Float`` (``log=True`` for a scale such as C or a learning rate), ``Int``,
        ``Categorical``; or a dict as ``RandomizedSearchCV``'s ``param_distributions``: a list of
        choices (any values: ``[None, 5, 10]``, ``[(64,), (64, 64)]``; warmbo holds choices that are
        not str, int, float or bool by their ``str`` and gives the estimator the values),
        ``scipy.stats.loguniform(a, b)`` (a log-scaled float), ``uniform(loc, scale)``,
        ``randint(low, high)`` (high excluded); or a list of such dicts, a conditional space
        (:class:`_Dicts`: each candidate gets one dict's parameters, that dict chosen by the
        optimizer as the parameter ``"search space dict"``).
    n_iter : int, default 32
        Candidates to cross-validate in this ``fit`` (at most the points of a finite space not yet
        evaluated, with a warning, as ``RandomizedSearchCV`` caps a small grid).
    n_points : int, default 1
        Candidates asked per round and cross-validated together (with ``n_jobs``, in parallel); the
        optimizer chooses a batch of distinct points (pending ones fantasised).
    scoring, n_jobs, refit, cv, verbose, pre_dispatch, error_score, return_train_score
        As for :class:`sklearn.model_selection.RandomizedSearchCV`. With several metrics, the
        optimizer maximises the ``refit`` one (which must then name a metric).
    random_state : int, RandomState instance or None
        The optimizer's seed (its design and searches); None draws one; a ``RandomState`` gives
        one drawn from it at each ``fit`` (scikit-learn's convention: fits differ, the sequence of
        fits is reproducible).
    n_initial : int, optional
        Size of the optimizer's initial design (default: the optimizer's, by dimension).
    prior : optional
        Earlier evaluations to start warm from (any form ``Optimizer(prior=...)`` takes: CSV paths,
        studies, DataFrames, ``(X, y)`` pairs), or an earlier search's ``cv_results_`` (the dict
        or its DataFrame; the ``refit`` metric's scores), scored as this search scores (greater is
        better).
    transfer : str, optional
        How the prior is used (``Optimizer``'s ``transfer``; default ``"auto"`` with a prior).
    storage : str, optional
        A study to keep the candidates' scores in (``"tuning.db"``, a PostgreSQL URL); None keeps
        them in memory. A later ``fit`` on the same storage starts warm from its trials.

    Attributes
    ----------
    cv_results_, best_params_, best_score_, best_estimator_, best_index_, scorer_, n_splits_,
    refit_time_, multimetric_
        As scikit-learn's searches set them (this ``fit``'s candidates).
    optimizer_ : Optimizer
        The optimizer the search ran (its study holds every candidate told). Not pickled (it holds
        the study's connection): a search saved with ``joblib.dump`` has none; with ``storage=``,
        ``wb.Optimizer.load(storage)`` reopens it.
    """

    _parameter_constraints: dict = {
        **BaseSearchCV._parameter_constraints,
        "search_space": "no_validation",  # (checked by _space_and_values, with the forms it takes)
        "n_iter": [numbers.Integral],
        "n_points": [numbers.Integral],
        "random_state": ["random_state"],
        "n_initial": [numbers.Integral, None],
        "prior": "no_validation",
        "transfer": [str, None],
        "storage": [str, os.PathLike, None],  # (a pathlib.Path too: a user test had one refused)
    }

    def __init__(
        self,
        estimator,
        search_space,
        *,
        n_iter: int = 32,
        n_points: int = 1,
        scoring=None,
        n_jobs=None,
        refit=True,
        cv=None,
        verbose: int = 0,
        pre_dispatch="2*n_jobs",
        random_state: int | np.random.RandomState | None = None,
        error_score=np.nan,
        return_train_score: bool = False,
        n_initial: int | None = None,
        prior=None,
        transfer: str | None = None,
        storage: str | None = None,
    ):
        self.search_space = search_space
        self.n_iter = n_iter
        self.n_points = n_points
        self.random_state = random_state
        self.n_initial = n_initial
        self.prior = prior
        self.transfer = transfer
        self.storage = storage
        super().__init__(
            estimator=estimator,
            scoring=scoring,
            n_jobs=n_jobs,
            refit=refit,
            cv=cv,
            verbose=verbose,
            pre_dispatch=pre_dispatch,
            error_score=error_score,
            return_train_score=return_train_score,
        )

    def _space_and_values(self) -> tuple[Space, dict[str, dict]]:
        """The warmbo Space of ``search_space``, and for each parameter whose choices warmbo cannot
        hold (None, tuples, objects) the map from the label warmbo holds to the value the estimator
        gets. A dict is read as ``RandomizedSearchCV``'s ``param_distributions``: a list is a
        categorical, scipy's ``loguniform(a, b)`` a log-scaled float, ``uniform(loc, scale)`` a
        float, ``randint(low, high)`` an integer (high excluded, as scipy's)."""
        space = self.search_space
        if isinstance(space, Space):
            return space, {}
        if isinstance(space, Sequence) and space and all(isinstance(p, Parameter) for p in space):
            return Space(list(space)), {}
        if isinstance(space, list | tuple) and len(space) == 1 and isinstance(space[0], dict):
            space = space[0]  # (one dict in a list, as scikit-learn allows)
        if isinstance(space, dict) and space:
            params, values = [], {}
            for name, given in space.items():
                parameter, labels = _parameter(str(name), given)
                params.append(parameter)
                if labels:
                    values[str(name)] = labels
            return Space(params), values
        raise ValueError(
            "search_space must be a warmbo Space, a list of its parameters (wb.Float, wb.Int, "
            "wb.Categorical), or a dict as RandomizedSearchCV's param_distributions (lists, scipy's "
            f"loguniform, uniform, randint), or a list of such dicts, got {space!r}"
        )

    def __getstate__(self) -> dict:
        # the optimizer holds the study's open connection, which cannot be pickled: scikit-learn sends
        # the search itself to its workers (n_jobs=2, caller=self), and a fitted search is saved with
        # joblib.dump; both failed (a user test). Reopen it with wb.Optimizer.load(storage)
        # (a copy: scikit-learn's __getstate__ returns the live __dict__ for classes outside
        # sklearn, so popping from it took optimizer_ off the search itself, after every n_jobs=2 fit)
        state = dict(super().__getstate__())
        state.pop("optimizer_", None)
        return state

    def _score_key(self, results: dict) -> str:
        """The ``cv_results_`` column the optimizer maximises: the score, or with several metrics the
        ``refit`` one (scikit-learn sets ``multimetric_`` only after the search)."""
        if "mean_test_score" in results:
            return "mean_test_score"
        if isinstance(self.refit, str) and f"mean_test_{self.refit}" in results:
            return f"mean_test_{self.refit}"
        raise self._refit_error()

    def _cv_results_prior(self):
        """``prior``, or for an earlier search's ``cv_results_`` itself (a dict, or its DataFrame:
        ``params`` and the scores, a user's first try) the ``(params, scores)`` pair :func:`_labelled`
        reads, the score this search optimises (:meth:`_score_key`; a user test passed
        ``search.cv_results_`` and was told a dict is not a prior)."""
        prior = self.prior
        columns = getattr(prior, "columns", None)
        keys = list(prior) if isinstance(prior, dict) else [] if columns is None else list(columns)
        if "params" not in keys or not any(str(k).startswith("mean_test_") for k in keys):
            return prior
        several = isinstance(self.scoring, list | tuple | set | dict)
        # (the score this search optimises, by its name: a single-metric prior's mean_test_score read
        # as a several-metric search's accuracy gave log-losses as accuracies, a review)
        key = f"mean_test_{self.refit}" if several and isinstance(self.refit, str) else "mean_test_score"
        if key not in keys:
            scores = ", ".join(str(k) for k in keys if str(k).startswith("mean_test_"))
            raise ValueError(
                f"the prior's cv_results_ has no {key} (it has {scores}): give the results of a "
                "search scored by the metric this search optimises"
                + ("" if several else ", or name that metric with refit= and scoring=")
            )
        return list(prior["params"]), np.asarray(prior[key], dtype=np.float64)

    def _refit_error(self) -> ValueError:
        return ValueError(
            "with several metrics, refit must name the one to optimise (refit='accuracy'), "
            f"got refit={self.refit!r}"
        )

    def _run_search(self, evaluate_candidates, *, callback_ctx=None) -> None:  # noqa: ARG002
        """warmbo's ask/tell loop over ``evaluate_candidates`` (scikit-learn's hook for sequential
        model-based optimisation): ``n_iter`` candidates, ``n_points`` per round."""
        for name, value, low in (("n_iter", self.n_iter, 1), ("n_points", self.n_points, 1)):
            if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
                raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")
        if isinstance(self.scoring, list | tuple | set | dict) and not isinstance(self.refit, str):
            raise self._refit_error()  # (before any evaluation: several metrics, none to optimise)
        self._check_splits()
        dicts = self._dicts()
        space, values = (dicts.space, dicts.values) if dicts else self._space_and_values()
        prior = self._cv_results_prior()
        optimizer = Optimizer(
            space,
            maximize=True,
            seed=_seed(self.random_state),
            n_initial=self.n_initial,
            storage=self.storage,
            prior=_labelled_dicts(prior, dicts)
            if dicts
            else _labelled(prior, values, {p.name for p in space.params if isinstance(p, Categorical)}),
            transfer=self.transfer,
        )
        self.optimizer_ = optimizer

        def candidate(point: dict) -> dict:
            if dicts:
                return dicts.candidate(point)
            return {k: values[k][v] if k in values else v for k, v in point.items()}

        # a list-of-dicts search: the score of each candidate evaluated (None: failed), by its key
        # (points that differ only in another dict's parameters are the same candidate)
        seen: dict[tuple, float | None] = {}
        if dicts:
            for trial in optimizer.study.trials((COMPLETE, FAILED)):
                seen[dicts.key(candidate(trial.params))] = trial.value
        n_iter = self.n_iter
        cardinality = dicts.cardinality if dicts else space.cardinality
        if math.isfinite(cardinality):
            taken = len(seen) if dicts else len(optimizer.study.trials())
            left = int(cardinality) - taken
            if left <= 0:
                raise ValueError(
                    f"every one of the search space's {int(cardinality)} candidates is a trial of the "
                    "study already: nothing is left to evaluate"
                )
            if left < n_iter:  # (as RandomizedSearchCV says of a grid smaller than n_iter)
                warnings.warn(
                    f"the search space has {int(cardinality)} candidates, {left} of them not yet "
                    f"evaluated, fewer than n_iter={n_iter}: running {left} candidates",
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
                n_iter = left
        done, lost, evaluated, scored, stalled = 0, [], False, [], 0
        while done < n_iter:
            if stalled >= STALLED_ROUNDS:
                # the optimizer's last rounds all asked for candidates evaluated already (the best
                # dict's grid exhausted: it moves only in other dicts' parameters, which change
                # nothing): a candidate not evaluated yet, drawn at random as RandomizedSearchCV draws
                # (a review: 1000 such points, stored as trials, and the search stopped at 9 of 20)
                asked = self._unseen(dicts, seen, optimizer.seed, done)
                if not asked:
                    warnings.warn(
                        f"the search stopped after {done} candidates: every candidate was evaluated",
                        UserWarning,
                        stacklevel=user_stacklevel(),
                    )
                    break
                stalled = 0
            else:
                asked = optimizer.ask(min(self.n_points, n_iter - done))
            batch, candidates, keys, repeats = [], [], [], []
            for suggestion in asked:
                chosen = candidate(dict(suggestion))
                key = dicts.key(chosen) if dicts else None
                if dicts and (key in seen or key in keys):
                    repeats.append((suggestion, key))  # (told the candidate's score below, not refitted)
                    continue
                batch.append(suggestion)
                candidates.append(chosen)
                keys.append(key)
            if not batch:
                self._tell_repeats(optimizer, repeats, seen)
                stalled += 1
                continue
            stalled = 0
            try:
                results = evaluate_candidates(candidates)
            except (KeyboardInterrupt, SystemExit):
                # a search stopped (Ctrl-C) in its cross-validation: its round's trials were left
                # pending for good, never evaluated by a later fit (a finite grid then said every
                # candidate was done: a user test); withdrawn, the next fit asks them again
                for suggestion in [*batch, *(s for s, _ in repeats)]:
                    with contextlib.suppress(Exception):
                        optimizer.withdraw(suggestion, note="cross-validation interrupted")
                raise
            except ValueError as exc:
                # scikit-learn raises when every fit of one call failed: right for a search that
                # evaluates all its candidates in one call, but here a call is one round, and one
                # candidate that cannot be fitted stopped the whole search. Its trials are failed
                # ones, and the search goes on; the round is not in cv_results_ (scikit-learn kept
                # nothing of it), which a warning says at the end
                if "fits failed" not in str(exc):
                    raise
                for suggestion, key in zip(batch, keys, strict=True):
                    optimizer.tell_failed(suggestion, "cross-validation: every fit failed")
                    seen[key] = None
                lost.append((batch, exc))
                done += len(batch)
                self._tell_repeats(optimizer, repeats, seen)
                continue
            evaluated = True
            key = self._score_key(results)
            scores = np.asarray(results[key][-len(batch) :], dtype=np.float64)
            for suggestion, score, candidate_key in zip(batch, scores, keys, strict=True):
                if math.isfinite(score):
                    optimizer.tell(suggestion, float(score))
                    scored.append(float(score))
                    seen[candidate_key] = float(score)
                else:
                    optimizer.tell_failed(
                        suggestion, f"cross-validation gave no score ({key} = {score}): its fits failed"
                    )
                    seen[candidate_key] = None
            done += len(batch)
            self._tell_repeats(optimizer, repeats, seen)
            if self.verbose > 0:
                best = optimizer.best
                shown = "none yet" if best is None else f"{best.value:.6g}"
                print(f"[WarmboSearchCV] {done}/{n_iter} candidates; best score so far: {shown}")
        # the study's best: an earlier fit's when it beats all of this fit's (not a prior row imported
        # with transfer="none": another data set's score, reported as "an earlier fit on this
        # storage" where there was none, a user test)
        own = [
            t for t in optimizer.study.trials((COMPLETE,)) if t.worker != PRIOR_WORKER and t.value is not None
        ]
        earlier = max(own, key=lambda t: t.value, default=None)
        if earlier is not None and scored and earlier.value > max(scored):
            warnings.warn(
                f"the study holds a better candidate from an earlier fit on this storage, "
                f"{candidate(earlier.params)} "
                f"({earlier.value:.6g}); best_params_ and best_estimator_ are this fit's best, as "
                "scikit-learn's searches choose among the candidates they evaluate",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        if lost and not evaluated:
            raise lost[0][1]  # (every candidate failed: scikit-learn's own error, as its searches raise)
        if lost:
            shown = "; ".join(str(candidate(dict(s))) for batch, _ in lost for s in batch)
            warnings.warn(
                f"{sum(len(batch) for batch, _ in lost)} candidate(s) could not be fitted in any fold and "
                f"are not in cv_results_ (they are failed trials of the search's study, which the "
                f"optimizer moved away from): {shown}",
                FitFailedCandidatesWarning,
                stacklevel=user_stacklevel(),
            )

    def _dicts(self) -> _Dicts | None:
        """The list-of-dicts form of ``search_space`` (two dicts or more), else None."""
        space = self.search_space
        if not (
            isinstance(space, list | tuple) and len(space) > 1 and all(isinstance(d, dict) for d in space)
        ):
            return None
        dicts = _Dicts(space)
        stored = _stored_space(self.storage)
        if stored is not None and stored != dicts.space:
            flat = _Dicts(space, flat=True)
            if stored == flat.space:  # (a study stored before conditional parameters: searched as it was)
                return flat
        return dicts

    @staticmethod
    def _unseen(dicts: _Dicts, seen: dict, seed: int | None, round_: int) -> list[dict]:
        """One point of the space whose candidate is not evaluated yet, drawn uniformly (its dict
        first, as RandomizedSearchCV picks a dict, then its parameters), or [] when none is found."""
        rng = np.random.default_rng([0 if seed is None else seed, round_])
        for _ in range(64):
            points = dicts.space.sample(64, seed=int(rng.integers(2**31)))
            for point in points:
                chosen = int(rng.integers(len(dicts.active)))
                if not dicts.flat and point[DICT_PARAMETER] != chosen:
                    continue  # (a conditional space's point holds its own dict's parameters only)
                point[DICT_PARAMETER] = chosen
                if dicts.key(dicts.candidate(point)) not in seen:
                    return [point]
        return []

    @staticmethod
    def _tell_repeats(optimizer: Optimizer, repeats: list, seen: dict) -> None:
        """Tell each point that is a candidate evaluated already (it differs from it only in other
        dicts' parameters, which the estimator never gets) that candidate's score: the optimizer
        learns they change nothing, and scikit-learn fits nothing twice."""
        for suggestion, key in repeats:
            if seen[key] is None:
                optimizer.tell_failed(
                    suggestion, "the same candidate failed (it differs only in other dicts)"
                )
            else:
                optimizer.tell(suggestion, seen[key])

    def _check_splits(self) -> None:
        """Warn when the splitter gives other folds at each call (rounds scored on other folds)."""
        cv = getattr(self, "_checked_cv_orig", None)
        try:
            from sklearn.model_selection._split import _yields_constant_splits
        except ImportError:  # (a private helper: scikit-learn may move it)
            return
        if cv is not None and not _yields_constant_splits(cv):
            warnings.warn(
                f"cv={cv!r} gives other folds at each call, and the search calls it once per round: "
                "candidates of different rounds would be scored on different folds. Give the splitter "
                "a random_state (KFold(5, shuffle=True, random_state=0))",
                RandomizedSplitsWarning,
                stacklevel=user_stacklevel(),
            )
