"""Prior data for the optimizer: the forms ``Optimizer(space, prior=...)`` accepts, read into one
:class:`~warmbo.data.TaskData` in the user's own units of the new study.

Accepted forms:

- a :class:`~warmbo.data.TaskData` (validated against the same space);
- a path to a CSV file (``str`` or ``os.PathLike``), read with :meth:`TaskData.from_csv`: one column
  per parameter, a ``y`` column, and an optional ``task`` column naming the source of each row;
- a DataFrame (pandas or anything with ``columns`` and ``to_dict("records")``): one column per
  parameter, a ``y`` column and an optional ``task`` column, read with :meth:`TaskData.from_dataframe`;
- an ``(X, y)`` pair in the user's own units: X a list of parameter dicts, a DataFrame of parameter
  columns or a 2-D array of raw parameter values (columns in the space's order), y the objective
  values as the user measures them;
- a list of parameter dicts, each with its objective value under ``"y"`` (and its source task under
  ``"task"`` when every dict has one), as ``DataFrame.to_dict("records")`` gives them;
- a list (or tuple) of finished studies (URLs or :class:`~warmbo.storage.Study` objects): their
  complete trials, one source task per study; CSV paths may be among them, one source task each
  (:func:`join_sources` names them as ``warmbo optimize --prior`` does), and TaskData, DataFrames
  and ``(X, y)`` pairs, each one source task: a CSV file read with its own options
  (``TaskData.from_csv("runs.csv", space, delimiter=";")``, named by its file as a path is), or rows
  from anywhere else. A study's space may differ
  from the new one in bounds and choices (a range widened after a first study), not in its
  parameters' names; its trials outside the new space (a range narrowed since) are left out with a
  :class:`PriorOutsideSpaceWarning`. A study stores its direction; a
  source optimised in the other direction than the new study is negated so that every value reads
  in the new study's sense.

The optimizer then signs these values exactly as it signs its own trials (negated when minimising),
so a Python user never encodes or negates a source by hand.

A study that transfers keeps its sources (:mod:`warmbo.source_record`: the rows in the user's units,
their task labels and the transfer settings, as zlib-compressed JSON in the study's metadata), so
``Optimizer.load(url)``, ``warmbo suggest`` and a resumed run transfer as the first optimizer object
did, on another machine too, without the source files.

Why this file is long: every form above is read three ways, by one reader (:func:`_read`), so that
they cannot drift apart: whole (:func:`as_prior`), the rows of one branch of a conditional space
(:func:`subspace_prior`, Optuna's define-by-run spaces) and without a space at all
(:func:`check_prior`, what a sampler can refuse when it is made); splitting the forms over modules
would split that reader.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from ._validation import is_dataframe as _is_dataframe
from ._warnings import user_stacklevel
from .data import DataError, TaskData, _check_csv, _check_dataframe, _history_y
from .source_record import (  # noqa: F401  (the stored sources' record: there since session 34)
    _digest_of,
    digest,
    sources_from_text,
    sources_summary_from_text,
    sources_text,
)
from .space import Space, SpaceError
from .storage import _is_postgres, redacted, study_label

__all__ = [
    "PriorColumnsIgnoredWarning",
    "PriorDirectionWarning",
    "PriorOutsideSpaceWarning",
    "as_prior",
    "check_prior",
    "PriorFormError",
    "subspace_prior",
    "left_out_of_subspace",
    "names_a_study",
    "first_repeat",
    "join_sources",
    "source_label",
    "digest",
    "prior_subset",
    "prior_subset_by_source",
    "sources_text",
    "sources_from_text",
    "PRIOR_ROWS",
    "POOLED_PRIOR_ROWS",
]


class PriorParametersDroppedWarning(UserWarning):
    """A prior study has parameters the new study has not (removed since): its trials are read on the
    parameters both have, as one related task whose relevance the transfer method weighs."""


def _dropped_warning(where: str, removed: list[str]) -> None:
    held = " & ".join(f"(df[{name!r}] == VALUE)" for name in removed)
    warnings.warn(
        f"prior study {where!r} has parameters this study has not ({', '.join(removed)}): its trials are "
        "read on the parameters both have, as one related task whose weight the transfer learns from "
        "this study's results. To read only the trials at the value each is held at now (pandas): "
        f"df = wb.Optimizer.load({where!r}).history.to_dataframe(); prior=[df[{held}]] (on the command "
        f"line: warmbo export {shlex.quote(where)} --complete --out old.csv, keep those rows, "
        "--prior old.csv)",
        PriorParametersDroppedWarning,
        stacklevel=user_stacklevel(),
    )


class PriorColumnsIgnoredWarning(PriorParametersDroppedWarning):
    """A prior given as data (a DataFrame, a CSV file, records) has columns that are not parameters of
    the study and vary between its rows: perhaps a parameter removed since, whose rows are then of
    other settings (a user test: a DataFrame of last week's trials with a ``dropout`` column the new
    space has not was read without a word, where the same trials given as a study were refused)."""


#: columns of a prior's data that are no parameters: warmbo's ``history.to_dataframe()`` and ``warmbo
#: export``, Optuna's ``trials_dataframe()`` (``number``, ``datetime_*``), and a lab's notes
_NOT_PARAMETERS = frozenset(
    {"id", "trial", "number", "state", "value", "y", "task", "created", "completed", "duration", "worker"}
    | {"error", "amended", "note", "notes", "comment", "comments", "datetime_start", "datetime_complete"}
    # (a review: an index written by to_csv, replicates and dates)
    | {"", "index", "level_0", "seed", "rep", "replicate", "repeat", "run", "date", "datetime"}
    | {"timestamp", "time_stamp", "runtime", "elapsed"}
)
#: columns that are other metrics of the same runs when they hold numbers (text under these names is
#: a setting: SGDClassifier's loss="hinge", a precision of "bf16", a review)
_METRIC_NAMES = frozenset(
    {"accuracy", "acc", "loss", "score", "f1", "auc", "rmse", "mae", "mse", "r2", "precision", "recall"}
)
_NOT_PARAMETER_PREFIXES = ("warmbo_", "value_", "user_attrs_", "system_attrs_", "Unnamed: ")
#: a text column with more distinct values than this (or a value per row) reads as notes, not a setting
_TEXT_CHOICES = 8


def _unknown_columns(names, used) -> list[str]:
    """The column names among ``names`` outside ``used`` and :data:`_NOT_PARAMETERS`."""
    return [
        n
        for n in names
        if isinstance(n, str)
        and n not in used
        and n not in _NOT_PARAMETERS
        and not n.startswith(_NOT_PARAMETER_PREFIXES)
    ]


def _varying_columns(rows, used) -> list[str]:
    """The columns of ``rows`` (dicts, or ``{column: values}``) outside ``used`` and
    :data:`_NOT_PARAMETERS` whose values differ between rows: numbers (or booleans) taking two or more
    values, or text taking 2 to :data:`_TEXT_CHOICES` values, some of them repeated (a removed
    categorical parameter; a free-text column with a value per row is notes). Missing values (None,
    NaN, blank) are not values; a column of dates or times is no setting."""
    columns = rows if isinstance(rows, Mapping) else None
    names = _unknown_columns(
        columns if columns is not None else {key: None for row in rows for key in row}, used
    )
    varying = []
    for name in names:
        values = list(columns[name]) if columns is not None else [row.get(name) for row in rows]
        values = [v for v in values if v is not None and not (isinstance(v, str) and not v.strip())]
        if any(callable(getattr(v, "isoformat", None)) for v in values):
            continue  # (datetime, date, pandas' Timestamp: when, not how)
        values = [v for v in values if not (isinstance(v, float) and v != v)]
        numbers = set()
        for v in values:
            try:
                numbers.add(float(v))
            except (TypeError, ValueError):
                break
        else:
            if len(numbers) > 1 and name.lower() not in _METRIC_NAMES:
                varying.append(name)
            continue
        texts = {str(v) for v in values}
        if 2 <= len(texts) <= _TEXT_CHOICES and len(texts) < len(values):
            varying.append(name)
    return varying


def _columns_ignored(where: str, rows, space: Space, y="y", task=None, extra=()) -> None:
    """Warn (:class:`PriorColumnsIgnoredWarning`) of the columns of a prior's rows that are no
    parameters of ``space`` and vary (:func:`_varying_columns`); ``extra``: other columns read."""
    used = {*space.names, y, *([task] if task is not None else []), *extra}
    varying = _varying_columns(rows, used)
    if not varying:
        return
    names = ", ".join(repr(c) for c in varying)
    held = " & ".join(f"(df[{c!r}] == VALUE)" for c in varying)
    warnings.warn(
        f"prior {where} has columns that are not parameters of this study and vary between its rows "
        f"({names}): they are left out, so rows that differ only in them are read as the same "
        f"settings. If a column is a parameter removed since, keep the rows at the value it is held at "
        f"now (pandas: df[{held}]); if it holds notes, drop it (df.drop(columns=[{names}])) to say so",
        PriorColumnsIgnoredWarning,
        stacklevel=user_stacklevel(),
    )


class PriorDirectionWarning(UserWarning):
    """A prior study was created in the other direction than this study's: its values are read turned
    (its best is taken as this study's best), which is right for an opposite task (a loss from an
    accuracy) and wrong for the same objective started without ``maximize=True`` (a chemist user
    test's yield study, on the command line, minimised the yield)."""


class PriorOutsideSpaceWarning(UserWarning):
    """Some complete trials of a prior study lie outside the new study's space (a range narrowed or a
    choice dropped since the prior study ran) and are left out of the prior; the prior study is
    unchanged."""


#: default number of prior rows a model sees (``Optimizer(max_prior=...)``): per source for the
#: per-source transfer methods (auto, rgpe), in total when the prior is told as trials
PRIOR_ROWS = 1000
#: default number of prior rows, in all, of a transfer method that pools every source into one GP
#: (envelope, diff, efficient, collaborative, generic): with 50 sources x 300 rows, 256 keeps every
#: ask under 1 s on 2 cores (bench/transfer_scale.py), where 1000 took 3-10 s
POOLED_PRIOR_ROWS = 256


def _from_studies(
    studies: list,
    space: Space | None,
    maximize: bool,
    own=None,
    rename=None,
    partial: bool = False,
    outside: list[str] | None = None,
    extra: bool = False,
) -> TaskData | None:
    """The complete trials of ``studies`` in ``space``, one task label per study (without a
    ``space``, each study is checked in its own, and None returned: :func:`check_prior`). ``partial`` (see
    :func:`subspace_prior`): a study whose parameters are more than ``space``'s is read on those of
    ``space``, one that lacks some of them gives no row, and a trial outside ``space``'s ranges is
    described in ``outside`` (not warned about here); :class:`_NoRows` when none gives any row.
    ``extra``: a study with parameters this one has not (removed since) is read on the shared ones,
    with a :class:`PriorParametersDroppedWarning`, instead of refused."""
    from .storage import StorageError, Study, optuna_studies, study_exists, study_identity
    from .trial import COMPLETE

    params, values, labels = [], [], []
    own_identity = None if own is None else study_identity(own)
    seen: dict[str, object] = {}
    used: set[str] = set()  # source labels: in-memory studies all have the URL ':memory:'
    for item in studies:
        # one study twice would be one source task holding every row twice (both get the same
        # label), and this very study as its own source would count each trial twice: both refused
        identity = study_identity(item)
        if identity is not None and identity == own_identity:
            raise DataError(
                f"prior study {_shown(item)!r} is this study itself: its trials are already the study's "
                "own observations; give the finished studies of earlier, related tasks as prior"
            )
        if identity is not None and identity in seen:
            raise DataError(
                f"prior study {_shown(item)!r} is given twice (also as {_shown(seen[identity])!r}); each "
                "prior study is one source task: give it once"
            )
        if identity is not None:
            seen[identity] = item
        try:
            if not isinstance(item, Study) and not study_exists(item):
                # (the storage's own error advises creating a study there: no use for a source)
                names = optuna_studies(item)
                if names is not None:
                    first, listed = (names[0] if names else "NAME"), ", ".join(names) or "none"
                    where = _shown(item)
                    where = where if where.startswith("sqlite:") else f"sqlite:///{where}"  # (Optuna's form)
                    said = (
                        f"prior {_shown(item)!r} is an Optuna storage (studies: {listed}), not a warmbo study"
                    )
                    load = f"optuna.load_study(study_name={first!r}, storage={where!r})"
                    raise DataError(
                        f"{said}: give the Optuna study itself, prior=[{load}]",
                        # (no option takes an Optuna study: its trials exported, as the CLI reads them)
                        shell=f"{said}: export its trials, {load}.trials_dataframe().to_csv('{first}.csv'), "
                        f"and give --prior {first}.csv --prior-y value --prior-rename params_NAME=NAME "
                        "(one per parameter)",
                    )
                raise DataError(
                    f"prior study {_shown(item)!r} does not exist: give the file or URL of a finished study"
                )
            # read-only: a source is never changed (an old study's schema is not migrated), and may
            # be an archived study in a folder the user cannot write
            study = item if isinstance(item, Study) else Study(item, readonly=True)
        except StorageError as exc:
            raise DataError(f"prior study {_shown(item)!r}: {exc}") from None
        try:
            multitask = study.get_meta("multitask")
            if multitask is not None:  # (before: read as one objective, its utilities taken as values)
                tasks = json.loads(multitask).get("task_names")
                raise DataError(
                    f"prior study {_shown(study)!r} is a multi-task study (tasks {tasks}): its trials' "
                    "values are utilities of the task vectors, not values of one objective; give one "
                    "task's values as prior=(X, y) (history.to_dataframe() has a column per task) or "
                    "as a CSV file"
                )
            # a parameter renamed since (``rename``: {name in the prior study: name here})
            names = {n: (rename or {}).get(n, n) for n in study.space.names}
            onto = [v for v in dict.fromkeys(names.values()) if list(names.values()).count(v) > 1]
            if onto:  # (a rename onto a parameter the study keeps: one of the two was dropped)
                both = " and ".join(repr(k) for k, v in names.items() if v == onto[0])
                raise DataError(
                    f"prior study {_shown(study)!r}: its parameters {both} would both be read as "
                    f"{onto[0]!r}; a rename onto a parameter the prior study has needs that one renamed too"
                )
            other = space is not None and (study.space != space or any(k != v for k, v in names.items()))
            if partial and not space.is_conditional and not set(space.names) <= set(names.values()):
                continue  # (another branch of a conditional space: none of its trials lies in this one)
            if partial:  # (its other parameters, of another branch, are left out of its rows)
                names = {k: v for k, v in names.items() if v in space.names}
            if extra and other and set(space.names) < set(names.values()):
                # parameters removed since, none added: its trials read on the shared ones, as one
                # related task the transfer weighs (a user test dropped two parameters between
                # studies, the commonest warm start, and met a refusal, while a DataFrame of the same
                # trials was read as it stands)
                _dropped_warning(_shown(study), sorted(set(names.values()) - set(space.names)))
                names = {k: v for k, v in names.items() if v in space.names}
            if other and not partial and set(names.values()) != set(space.names):
                shown = ", ".join(f"{k} as {v}" for k, v in names.items() if k != v)
                if shown:
                    only_here = sorted(set(space.names) - set(names.values()))
                    only_there = sorted(set(names.values()) - set(space.names))
                    raise DataError(
                        f"prior study {_shown(study)!r} has other parameters than this study (reading "
                        f"{shown}): only in this study {only_here}, only in the prior study {only_there}"
                    )
                renamed = set(space.names) - set(names.values()) and set(names.values()) - set(space.names)
                only = "; ".join(line for line in space.diff(study.space) if " only in " in line)
                only = only.replace("only in this space", "only in this study")
                only = only.replace("only in other space", "only in the prior study")
                differs = f"prior study {_shown(study)!r} has other parameters than this study: {only}"
                added = sorted(set(space.names) - set(names.values()))
                removed = sorted(set(names.values()) - set(space.names))
                python, shell = _changed_space_hints(_shown(study), added, removed)
                raise DataError(
                    differs
                    + (
                        "; for a parameter renamed since, read it under its new name: "
                        f"prior=warmbo.prior.as_prior([{_shown(study)!r}], space, maximize, "
                        "rename={'OLD': 'NEW'}) (warmbo optimize: --prior-rename OLD=NEW)"
                        if renamed
                        else python
                    ),
                    shell=differs
                    + ("; for a parameter renamed since, give --prior-rename OLD=NEW" if renamed else shell),
                )
            sign = 1.0 if (study.settings.get("direction") == "maximize") == maximize else -1.0
            if sign < 0 and study.settings.get("direction") in ("maximize", "minimize"):
                warnings.warn(
                    f"prior study {_shown(study)!r} was created to {study.settings['direction']}, and this "
                    f"study {'maximizes' if maximize else 'minimizes'}: its values are read turned, its "
                    "best taken as this study's best. If this study is the same objective, give it the "
                    f"same direction ({'maximize=False' if maximize else 'maximize=True'}; warmbo: "
                    f"{'--minimize' if maximize else '--maximize'})",
                    PriorDirectionWarning,
                    stacklevel=user_stacklevel(),
                )
            complete = study.trials((COMPLETE,))
            if not complete:  # (among other studies it was left out without a word)
                counts = ", ".join(f"{study.count(state)} {state}" for state in ("failed", "pending"))
                raise DataError(
                    f"prior study {_shown(study)!r} holds no complete trial ({counts}), so there is nothing "
                    "to transfer from it: leave it out"
                )
            label, n = redacted(study.url), 1
            while label in used:  # (one label would make two in-memory studies one source task)
                n += 1
                label = f"{redacted(study.url)} ({n})"
            used.add(label)
            left: list[tuple[int, str]] = []  # (trial id, why) of the trials this space leaves out
            for trial in complete:
                trial_params = {names[k]: v for k, v in trial.params.items() if k in names}
                if partial and _lacks(space, trial_params):
                    continue  # (a trial of another branch of a conditional search space)
                if other:  # (other bounds or choices: only the trials in this study's space are read)
                    try:
                        space.validate(trial_params)
                    except SpaceError as exc:
                        left.append((trial.id, str(exc)))
                        continue
                params.append(trial_params)
                values.append(sign * float(trial.value))
                labels.append(label)
            if left and partial and outside is not None:  # (partial: told once for the whole prior)
                outside.extend(f"prior study {_shown(study)!r}, trial {tid}: {why}" for tid, why in left)
            elif left:
                _left_out(study, left, len(complete))
        finally:
            if study is not item:
                study.close()
    if not params:
        if partial:
            raise _NoRows
        raise DataError("the prior studies hold no complete trial")
    if space is None:
        return None
    return TaskData.from_records(params, values, space, task=labels, source="<studies>")


class _NoRows(DataError):
    """No row of a prior holds every parameter of the space (:func:`subspace_prior`)."""

    def __init__(self):
        super().__init__("no row of the prior holds every parameter of the space")


def _left_out(study, outside: list[tuple[int, str]], n_complete: int) -> None:
    """Say which complete trials of a prior study lie outside the new study's space (a range narrowed,
    a choice dropped since): a warning when some are left, an error when none is."""
    first_id, first_why = outside[0]
    if len(outside) == n_complete:
        raise DataError(
            f"prior study {_shown(study)!r}: none of its {n_complete} complete trials lies in this "
            f"study's space (trial {first_id}: {first_why}), so there is nothing to transfer from it"
        )
    warnings.warn(
        f"prior study {_shown(study)!r}: {len(outside)} of its {n_complete} complete trials lie outside "
        f"this study's space and are left out (trial {first_id}: {first_why}"
        + (f"; {len(outside) - 1} more)" if len(outside) > 1 else ")"),
        PriorOutsideSpaceWarning,
        stacklevel=user_stacklevel(),
    )


def _shown(item) -> str:
    """A prior study as its user named it (a Study object by its URL), without a password."""
    return redacted(getattr(item, "url", item))


def as_prior(prior, space: Space, maximize: bool, study=None, rename=None, extra: bool = False) -> TaskData:
    """``prior`` (any accepted form, see the module docstring) as a TaskData in the new study's units.

    ``study`` is the new study's storage (URL or :class:`~warmbo.storage.Study`): a prior study that
    is this very study, or a prior study named twice, is refused (:class:`~warmbo.data.DataError`).
    ``rename`` (``{old name: name here}``) reads prior studies' parameters renamed since. ``extra``:
    a prior study with parameters ``space`` has not (removed since) is read on the shared ones, with a
    :class:`PriorParametersDroppedWarning` (for a transfer method, which weighs it as a related task;
    never for rows taken as the study's own trials, ``transfer="none"``).

    Rows with a value outside the space's ranges (out of bounds, off a step grid, a choice it does
    not have) are left out with a :class:`PriorOutsideSpaceWarning` naming the first, as a prior
    study's trials are; when no row is left, a :class:`~warmbo.data.DataError` says so. (A CSV file
    refused the whole file for one such row, while the same rows exported as a study were left out
    with a warning: a user test.) A malformed value (text in a number's column, NaN) is an error."""
    outside: list[str] = []
    try:
        data = _read(prior, space, maximize, study, rename, partial=False, outside=outside, extra=extra)
    except _NoRows:
        left_out_rows(outside, 0)  # (every row outside: says so, naming the first)
        raise
    assert data is not None
    left_out_rows(outside, len(data))
    return data


def left_out_rows(outside: list[str], kept: int) -> None:
    """Say that the prior rows described in ``outside`` (``"where: why"``) lie outside the study's
    space and are left out: a :class:`PriorOutsideSpaceWarning` when ``kept`` rows remain, a
    :class:`~warmbo.data.DataError` when none does; nothing when ``outside`` is empty."""
    if not outside:
        return
    more = f"; {len(outside) - 1} more" if len(outside) > 1 else ""
    if not kept:
        raise DataError(
            f"every row of the prior lies outside this study's space ({outside[0]}{more}), so there is "
            "nothing to transfer from it"
        )
    warnings.warn(
        f"{len(outside)} row(s) of the prior lie outside this study's space and are left out "
        f"({outside[0]}{more})",
        PriorOutsideSpaceWarning,
        stacklevel=user_stacklevel(),
    )


def check_prior(prior) -> None:
    """Refuse, before a search space is known, a ``prior`` that :func:`as_prior` would refuse in any
    space, with the :class:`~warmbo.data.DataError` it would raise (the same message): a form it
    does not take (:class:`PriorFormError`); a CSV file that is missing, empty, not UTF-8 or
    malformed, or whose ``y`` column is absent, holds a value that is not a finite number (NaN, inf,
    text) or holds no value at all (rows without a value whose ``state`` is not complete are left out
    later, as :meth:`~warmbo.data.TaskData.from_csv` leaves them out); a DataFrame likewise; an
    ``(X, y)`` pair whose lengths differ or whose ``y`` is not finite; a warmbo study that does not
    exist, is multi-task or holds no complete trial (read in its own space); a file or study named
    twice in a list. What needs the space (the parameter columns and their values, a study's
    parameters and ranges) is checked when the prior is read (:func:`as_prior`,
    :func:`subspace_prior`).

    For the integrations, whose space is known only at the first proposal (Optuna's define-by-run)
    or once the run starts: a bad prior is refused when the sampler or searcher is made, before
    any evaluation is spent. A :class:`~warmbo.data.TaskData` is already valid; nothing is warned.
    Neither is a study's direction (:class:`PriorDirectionWarning`): the new study's is not known
    here, and the read with it says so when they differ (a user test: a minimising sampler warned
    that the minimised prior was read for a study that maximizes)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=PriorDirectionWarning)
        _read(prior, None, True, None, None, partial=False, outside=None)


class PriorFormError(DataError):
    """``prior`` is none of the forms :func:`as_prior` takes (a caller that takes more forms, such as
    the Optuna sampler's lists of Optuna studies, says so in its own words)."""


def subspace_prior(prior, space: Space, maximize: bool) -> TaskData | None:
    """The rows of ``prior`` that hold every parameter of ``space``, read as :func:`as_prior` reads
    them; None when no row does.

    For a sampler of a conditional search space (Optuna's), whose ``space`` is the parameters its
    trials share so far and whose prior comes from the whole space: a record (of an ``(X, y)`` pair)
    without one of the parameters, a CSV row with an empty cell in a parameter column (or a file
    without the column) and a study or TaskData without one of them are another branch's, and are
    left out; the other parameters of a study's trials, of a TaskData's rows and of the records are
    dropped. The branches may give a parameter other ranges (``x`` in ``[0, 1]`` in one, ``[0,
    10]`` in another): a row of any kind with a value outside ``space``'s range (out of bounds, off
    the grid, another choice) is left out too, all of them said in one
    :class:`PriorOutsideSpaceWarning` that counts them (:func:`left_out_of_subspace`); when no row is
    left, the warning says so and the space is searched without a prior (None). A value that is not
    a value of its parameter at all (text for a number) is refused, as :func:`as_prior` refuses it."""
    outside: list[str] = []
    try:
        data = _read(prior, space, maximize, None, None, partial=True, outside=outside)
    except _NoRows:
        data = None
    kept = 0 if data is None else len(data)
    if outside:
        left_out_of_subspace(outside, space.names, kept)
    return data if kept else None


def left_out_of_subspace(outside: list[str], names, kept: int) -> None:
    """Say that the prior rows described in ``outside`` (``"where: why"``) lie outside the ranges of
    a sampler's search space of the parameters ``names`` and were left out: one
    :class:`PriorOutsideSpaceWarning` counting them, which says the space is searched without a prior
    when no row is ``kept`` (a conditional study goes on; before this helper, an Optuna-study prior
    went on silently and the other kinds stopped the proposal with a DataError)."""
    more = f"; {len(outside) - 1} more" if len(outside) > 1 else ""
    if not kept:  # (a conditional study goes on: this branch starts without a prior, as one without rows)
        warnings.warn(
            f"every row of the prior that holds the parameters {', '.join(names)} lies outside their "
            f"ranges in this search space ({len(outside)} row(s): {outside[0]}{more}): it is searched "
            "without a prior",
            PriorOutsideSpaceWarning,
            stacklevel=user_stacklevel(),
        )
        return
    warnings.warn(
        f"{len(outside)} row(s) of the prior lie outside the ranges of the search space "
        f"{', '.join(names)} and are left out ({outside[0]}{more})",
        PriorOutsideSpaceWarning,
        stacklevel=user_stacklevel(),
    )


def _changed_space_hints(where: str, added: list[str], removed: list[str]) -> tuple[str, str]:
    """How to read a prior study whose parameters are not this study's (a parameter added or removed
    since), in Python and on the command line: as a table of its trials, with the value a new
    parameter had in its runs added as a column, or the rows at the value a removed one is held at
    now kept (a user test added ``max_bins`` and was left with an error and no way on)."""
    if added:
        name = added[0]
        return (
            f"; for a parameter added since, give the prior study's trials with the value its runs had: "
            f"df = wb.Optimizer.load({where!r}).history.to_dataframe(); df[{name!r}] = VALUE; prior=[df]",
            f"; for a parameter added since: warmbo export {shlex.quote(where)} --complete --out old.csv, "
            f"add a column {name} holding the value its runs had, and give --prior old.csv",
        )
    if removed:
        held = " & ".join(f"(df[{name!r}] == VALUE)" for name in removed)
        return (
            "; for parameters removed since, give the prior study's trials at the value each is held at "
            f"now (pandas): df = wb.Optimizer.load({where!r}).history.to_dataframe(); prior=[df[{held}]]",
            f"; for parameters removed since: warmbo export {shlex.quote(where)} --complete --out old.csv, "
            f"keep the rows at the value {' and '.join(removed)} {'is' if len(removed) == 1 else 'are'} "
            "held at now, and give --prior old.csv",
        )
    return "", ""


def _is_optuna_study(item) -> bool:
    """Whether ``item`` is an Optuna ``Study`` (duck-typed: Optuna is not a dependency)."""
    kind = type(item)
    return kind.__module__.startswith("optuna") and kind.__name__ == "Study" and hasattr(item, "trials")


class _NamedPair(tuple):
    """An ``(X, y)`` pair read from an Optuna study, with the study's name: the label of its source
    task (a user test's Optuna study 'digits' was reported as "source", in a list as
    "<prior (X, y) 1>")."""

    name: str

    def __new__(cls, pair, name: str):
        made = super().__new__(cls, pair)
        made.name = name
        return made


def _optuna_as_pairs(prior, maximize: bool):
    """``prior`` with each Optuna study in it (itself, or an item of a list) read as the ``(params,
    values)`` pair of its complete trials, the values negated when it was optimised in the other
    direction (as a warmbo study's are); a user test passed ``prior=[optuna.load_study(...)]`` and
    was sent to ``trials_dataframe()``, whose columns then needed renaming. A study of several
    objectives is refused."""

    def pair(study):
        if len(study.directions) != 1:
            raise DataError(
                f"prior: the Optuna study {study.study_name!r} has {len(study.directions)} objectives; give "
                "one objective's values as (params, values)"
            )
        same = (study.direction.name == "MAXIMIZE") == maximize
        done = [t for t in study.trials if t.state.name == "COMPLETE" and t.value is not None]
        if not done:
            raise DataError(f"prior: the Optuna study {study.study_name!r} holds no complete trial")
        return _NamedPair(
            ([dict(t.params) for t in done], [t.value if same else -t.value for t in done]), study.study_name
        )

    if _is_optuna_study(prior):
        return pair(prior)
    if isinstance(prior, list) and any(_is_optuna_study(item) for item in prior):
        return [pair(item) if _is_optuna_study(item) else item for item in prior]
    return prior


def applied_renames(rename: Mapping[str, str], columns: Iterable) -> dict[str, str]:
    """``{parameter: column}`` of the renames ``{OLD: NEW}`` that apply to data with ``columns``:
    those whose OLD column it has, and not NEW, unless its NEW column is itself renamed away (``a=b
    b=a`` swaps two columns, ``a=b b=c`` shifts them, as they do for a prior study)."""
    header = [str(c) for c in columns]
    applied = {old: new for old, new in rename.items() if old in header}
    while True:  # (a rename onto a column that stays where it is does not apply, nor what it frees)
        kept = {old: new for old, new in applied.items() if new not in header or new in applied}
        if kept == applied:
            return {new: old for old, new in applied.items()}
        applied = kept


def _csv_header(path: str | os.PathLike, delimiter: str = ",") -> list[str]:
    """The stripped column names of a CSV file's first row ([] when it cannot be read: reading the
    file then says why)."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            return [cell.strip() for cell in next(csv.reader(fh, delimiter=delimiter), [])]
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def _renamed(prior, rename: Mapping[str, str]):
    """Data given in memory with ``rename`` (``{OLD: NEW}``) applied to its columns or keys: a
    DataFrame, an ``(X, y)`` pair of dicts or of a DataFrame, a list of records (it was ignored,
    and the rows refused for lacking the new names: a transfer user test). Files, studies, TaskData
    and lists of sources are renamed where they are read."""

    def frame(df):
        return df.rename(
            columns={column: name for name, column in applied_renames(rename, df.columns).items()}
        )

    def rows(items):
        keys = {k for item in items for k in item}
        moved = applied_renames(rename, keys)
        back = {column: name for name, column in moved.items()}
        return [{back.get(k, k): v for k, v in item.items()} for item in items]

    if _is_dataframe(prior):
        return frame(prior)
    if _is_pair(prior):
        X, y = prior
        if _is_dataframe(X):
            return (frame(X), y)
        if isinstance(X, list | tuple) and X and all(isinstance(item, Mapping) for item in X):
            return (rows(X), y)
        return prior
    if isinstance(prior, list | tuple) and prior and all(isinstance(item, Mapping) for item in prior):
        return rows(prior)
    return prior


def _read(
    prior,
    space: Space | None,
    maximize: bool,
    study,
    rename,
    partial: bool,
    outside: list[str] | None,
    extra: bool = False,
) -> TaskData | None:
    """:func:`as_prior`, or with ``partial`` the rows of :func:`subspace_prior` (:class:`_NoRows`
    when there are none; rows outside ``space``'s ranges described in ``outside``); without a
    ``space``, what needs none is checked and None returned (:func:`check_prior`)."""
    prior = _optuna_as_pairs(prior, maximize)
    if rename:  # (data read under the parameters' new names, as studies and the CLI's CSV files are)
        prior = _renamed(prior, rename)
    if isinstance(prior, TaskData):
        if space is None:
            return None
        if partial and prior.space != space:
            records = [{n: p[n] for n in space.names if n in p} for p in prior.params]
            whole = [k for k, p in enumerate(records) if not _lacks(space, p)]
            if not whole:
                raise _NoRows
            task = None if prior.task is None else [prior.task[k] for k in whole]
            return TaskData.from_records(
                [records[k] for k in whole],
                prior.y[whole],
                space,
                task=task,
                source=prior.source,
                outside=outside,
            )
        if prior.space != space:
            raise DataError(
                "prior data were validated against a different space: " + "; ".join(prior.space.diff(space))
            )
        return prior
    if isinstance(prior, str | os.PathLike):
        text = os.fspath(prior)
        if names_a_study(text):
            return _from_studies([text], space, maximize, study, rename, partial, outside, extra)
        task = "task" if _has_column(text, "task") else None
        if space is None:
            return _check_csv(text, task=task)
        x = applied_renames(rename, _csv_header(text)) if rename else None
        data = TaskData.from_csv(
            text, space, x=x or None, task=task, skip_incomplete=partial, outside=outside
        )
        if not len(data):
            raise _NoRows
        if not partial:  # (a subspace's rows hold the other branches' parameters on purpose)
            _csv_columns_ignored(text, space, task, x=x or None)
        return data
    if _is_dataframe(prior):
        task = "task" if "task" in list(prior.columns) else None
        if space is None:
            return _check_dataframe(prior, task=task, source=_DATAFRAME)
        data = TaskData.from_dataframe(
            prior, space, task=task, source=_DATAFRAME, skip_incomplete=partial, outside=outside
        )
        if not len(data):
            raise _NoRows
        columns = list(prior.columns)
        unknown = _unknown_columns(columns, {*space.names, task}) if not partial else []
        if unknown:  # (read column by column: the records of 100,000 rows took 1.4 s, a review)
            y = _history_y(columns, "y")  # (warmbo's own history frame: its 'value')
            _columns_ignored("DataFrame", {c: list(prior[c]) for c in unknown}, space, y, task)
        return data
    if _is_pair(prior):
        X, y = prior
        if isinstance(X, Mapping):  # (a first-time user test: [(dict, 3.0), ...] raised KeyError: 0)
            raise DataError(
                "<prior (X, y)>: X is one parameter dict, so this pair is one row: give the rows as "
                "(list of dicts, list of values), ([{'x': 1.0}, {'x': 5.0}], [3.0, 1.0]), or as dicts "
                "with their value under 'y', [{'x': 1.0, 'y': 3.0}, ...]"
            )
        _check_aligned(X, y)
        if _is_dataframe(X):  # parameter columns by name, in any order
            X = X.to_dict("records")
        try:
            empty = len(X) == 0
        except TypeError:
            raise DataError(
                f"<prior (X, y)>: X must be a list of parameter dicts, a DataFrame or a 2-D array, got "
                f"{type(X).__name__}"
            ) from None
        if empty:  # (before: from_numpy's message about categorical parameters)
            raise DataError("<prior (X, y)>: no data rows (X is empty)")
        if space is None:  # (the points need the space; y, the values, does not)
            _check_pair(X, y)
            return None
        label = getattr(prior, "name", None) or "<prior (X, y)>"  # (an Optuna study's: its name)
        if isinstance(X[0], Mapping):
            data = _records(list(X), y, None, space, partial, outside, label)
            if not partial and len(data):
                _columns_ignored("(X, y)", list(X), space)
        else:
            data = TaskData.from_numpy(np.asarray(X), y, space, source=label, outside=outside)
        if not len(data):  # every row outside the space: said by the caller, as for a DataFrame
            raise _NoRows
        return data
    if isinstance(prior, list | tuple) and prior and all(isinstance(item, Mapping) for item in prior):
        missing = sum("y" not in item for item in prior)
        if space is not None and "y" in space.names:  # (then 'y' is a parameter, not the value)
            raise DataError(
                "prior: a list of parameter dicts holds no objective values ('y' is a parameter of this "
                "space); give (dicts, values), or a DataFrame with one column per parameter and a column "
                "of values read with TaskData.from_dataframe(df, space, y=...)"
            )
        if missing:
            raise DataError(
                f"prior: a list of parameter dicts without objective values ({missing} of {len(prior)} "
                "have no 'y'); give each dict its value under 'y' (and its source under 'task'), or "
                "give (dicts, y), or a DataFrame with one column per parameter and a 'y' column"
            )
        # records with their value, as df.to_dict("records") gives them (and 'task' when every one has it)
        prior = _finished_records(prior, space, warn=space is not None)
        labelled = all("task" in item for item in prior) and (space is None or "task" not in space.names)
        labels = [item["task"] for item in prior] if labelled else None
        X = [{k: v for k, v in item.items() if k != "y" and not (labelled and k == "task")} for item in prior]
        if space is None:
            _check_pair(X, [item["y"] for item in prior])
            return None
        data = _records(X, [item["y"] for item in prior], labels, space, partial, outside, "<prior records>")
        if not len(data):
            raise _NoRows
        if not partial:
            _columns_ignored("records", X, space)
        return data
    if (
        isinstance(prior, tuple)
        and len(prior) > 2
        and not (_is_location(prior[0]) or _is_data_item(prior[0]))
    ):
        raise DataError(f"prior is a tuple of {len(prior)} items: an (X, y) pair is a tuple of two")
    if isinstance(prior, list | tuple) and prior:
        for k, item in enumerate(prior, start=1):
            if not (_is_location(item) or _is_data_item(item)):
                kind = type(item)
                package = kind.__module__.split(".")[0]
                name = kind.__name__ if package in ("builtins", "warmbo") else f"{package}.{kind.__name__}"
                shown = f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
                shown += f" of {len(item)} items" if isinstance(item, list | tuple) else ""
                other = (
                    " (an Optuna study itself is a prior: prior=[study])"
                    if kind.__module__.startswith("optuna")
                    else ""
                )
                raise DataError(
                    f"prior item {k} is {shown}: a list prior holds one source each, as CSV paths, "
                    "study URLs or warmbo Study objects, TaskData, DataFrames or (X, y) pairs"
                    + (" (an (X, y) pair is a tuple of two)" if isinstance(item, tuple) else "")
                    + other
                )
        # CSV paths, TaskData (a CSV read with its own options, TaskData.from_csv(path, space,
        # delimiter=";")), DataFrames and (X, y) pairs among the studies: one source task each
        data = [_is_data_item(item) for item in prior]
        if not any(data):
            return _from_studies(list(prior), space, maximize, study, rename, partial, outside, extra)
        from .storage import study_identity

        def entry(k: int, item) -> str:
            if isinstance(item, TaskData):
                return item.source or f"<prior {k + 1}>"
            if _is_dataframe(item):
                return f"<prior DataFrame {k + 1}>"
            if _is_pair(item):
                return getattr(item, "name", None) or f"<prior (X, y) {k + 1}>"
            return _shown(item)

        entries = [entry(k, item) for k, item in enumerate(prior)]
        # (in-memory Study objects, all ':memory:', are each a study of its own; a TaskData is
        # checked by its source file, if it has one; rows given in memory are not located)
        located = [
            e
            for e, item in zip(entries, prior, strict=True)
            if (
                os.path.isfile(e)
                if isinstance(item, TaskData)
                else _is_location(item) and study_identity(item)
            )
        ]
        twice = first_repeat(located)
        if twice is not None:
            again = "" if twice[0] == twice[1] else f" (also as {twice[1]!r})"
            raise DataError(
                f"prior {twice[0]!r} is given twice{again}; each is one source task: give it once"
            )
        parts, kept = [], []
        for k, (item, is_data) in enumerate(zip(prior, data, strict=True)):
            try:
                part = _read(
                    item if is_data else [item], space, maximize, study, rename, partial, outside, extra
                )
            except _NoRows:  # (partial: another branch's source)
                continue
            if part is not None:  # (None: checked without a space)
                parts.append(part)
            kept.append(k)
        if space is None:
            return None
        if not parts:
            raise _NoRows
        # the same rows given twice in memory ([df, df]) were two sources, silently: double weight
        # for one task, as the same CSV path twice (refused above) would have had
        # (hashed only where a cheap key collides: digesting every part cost ~0.3 s per 100,000 rows)
        alike: dict[tuple, list[tuple[int, TaskData]]] = {}
        for k, part in zip(kept, parts, strict=True):
            alike.setdefault((len(part), float(part.y[0]), float(part.y[-1])), []).append((k, part))
        seen: dict[str, int] = {}
        for k, part in sorted(
            (kp for group in alike.values() if len(group) > 1 for kp in group), key=lambda kp: kp[0]
        ):
            earlier = seen.setdefault(digest(part), k)
            if earlier != k:
                raise DataError(
                    f"prior {entries[k]!r} holds the same rows and values as {entries[earlier]!r}; each "
                    "is one source task, so the same data given twice would count twice: give it once"
                )
        return join_sources([entries[k] for k in kept], parts, space, [not data[k] for k in kept])
    if isinstance(prior, list | tuple) and not prior:
        raise PriorFormError("prior is an empty list: give at least one source (or leave prior= out)")
    raise PriorFormError(
        "prior must be a TaskData, a CSV path, a DataFrame (parameter columns, 'y', optional 'task'), an "
        "(X, y) pair in your own units, a list of parameter dicts with their value under 'y', or a list "
        f"of sources (study URLs, CSV paths, TaskData, DataFrames, (X, y) pairs); got {type(prior).__name__}"
    )


_DATAFRAME = "<prior DataFrame>"


def _check_aligned(X, y) -> None:
    """An ``(X, y)`` pair of a DataFrame and a Series whose indexes differ is refused: the pair is
    read by position, so a ``y`` sorted, reversed or filtered apart from X paired every value with
    another row's point, without a word (a user test: the first suggestion was the worst point)."""
    x_index, y_index = getattr(X, "index", None), getattr(y, "index", None)
    if not (_is_dataframe(X) and hasattr(y_index, "equals") and hasattr(x_index, "equals")):
        return
    if not x_index.equals(y_index):
        raise DataError(
            "<prior (X, y)>: y's index is not X's (the pair is read by position, so each value would go "
            "with another row's point): give y.reindex(X.index), or both in the same row order"
        )


def _check_pair(X, y) -> None:
    """The values of an ``(X, y)`` pair, checked as the readers check them, without the space that
    the points need: one per point, each a finite number (parameter dicts must be mappings)."""
    source = "<prior (X, y)>"
    if isinstance(X, list | tuple) and X and isinstance(X[0], Mapping):
        for i, rec in enumerate(X, start=1):
            if not isinstance(rec, Mapping):
                raise DataError(
                    f"{source}, row {i}: a record must be a mapping of parameter name to value, got {rec!r}"
                )
    try:
        n = len(X)
    except TypeError:
        return  # (refused with the space, as the reader refuses it)
    if not n:
        raise DataError(f"{source}: no data rows")
    TaskData._values(y, n, source)


def first_repeat(entries: list[str]) -> tuple[str, str] | None:
    """The first of ``entries`` (CSV paths and study URLs) that names the same file or study as an
    earlier one (``run.csv`` and ``./run.csv``, ``a.db`` and ``sqlite:///a.db``), with that earlier
    one; None when each is given once."""
    from .storage import file_identity, study_identity

    seen: dict[str, str] = {}
    for entry in entries:
        identity = study_identity(entry) if names_a_study(entry) else file_identity(entry)
        if identity is not None and identity in seen:
            return entry, seen[identity]
        if identity is not None:
            seen[identity] = entry
    return None


def join_sources(
    entries: list[str], parts: list[TaskData], space: Space, studies: list[bool] | None = None
) -> TaskData:
    """Several priors (CSV files, studies) as one TaskData with a source task per entry, labelled by
    its file name, or by the entry as given when two entries share a file name (as
    ``runs/a/trials.csv`` and ``runs/b/trials.csv`` do), or per ``file:label`` when a file has a task
    column. ``studies`` says which entries are studies (default: those whose text names one); two
    in-memory studies, both ``:memory:``, are numbered."""
    if len(parts) == 1:
        return parts[0]
    studies = [names_a_study(entry) for entry in entries] if studies is None else studies
    # (a PostgreSQL study by its study name, not the database's; no entry shows a password)
    stems = [source_label(e) for e in entries]
    names = [stem if stems.count(stem) == 1 else redacted(e) for e, stem in zip(entries, stems, strict=True)]
    for k, name in enumerate(names):  # (only entries that are not files can still share a name)
        if names[:k].count(name):
            names[k] = f"{name} ({names[:k].count(name) + 1})"
    params, values, labels = [], [], []
    for name, study, part in zip(names, studies, parts, strict=True):
        params += list(part.params)
        values += list(part.y)
        if part.task is None or study:  # (a study's rows are labelled by its URL)
            labels += [name] * len(part)
        else:
            labels += [f"{name}:{t}" for t in part.task]
    return TaskData(params, values, labels, space, source=", ".join(redacted(e) for e in entries))


def source_label(entry: str) -> str:
    """The task label of a prior given as text: a file's name without folder and suffix, a
    PostgreSQL study's study name (never the URL, which may hold a password)."""
    return study_label(entry) if _is_postgres(entry) else Path(entry.split("?")[0]).stem


def names_a_study(text: str) -> bool:
    """Whether a prior given as text names a finished study (a study file or URL), not a CSV file."""
    lowered = text.lower()
    return lowered.startswith(("sqlite:", "postgresql:", "postgres:")) or lowered.endswith(
        (".db", ".sqlite", ".sqlite3")
    )


def _finished_records(prior, space: Space | None, warn: bool) -> list:
    """Records without a value (None or NaN under ``y``) left out as the DataFrame they came from
    leaves them out (``df.to_dict("records")``; a user test found the frame read and its records
    refused): unless their ``state`` says complete, said in one
    :class:`~warmbo.data.UnfinishedRowsWarning`. A ``state`` key every record has, and no parameter
    is named, is dropped from the points. :class:`~warmbo.data.DataError` when no record is left."""
    from .data import _no_rows, _unfinished_state, _warn_unfinished

    source = "<prior records>"
    unfinished: dict[str, int] = {}
    kept = []
    for item in prior:
        state = _unfinished_state(item, "y")
        if state is None:
            kept.append(item)
        else:
            unfinished[state] = unfinished.get(state, 0) + 1
    if warn:
        _warn_unfinished(source, unfinished, "y")
    if not kept:
        raise _no_rows(source, unfinished)
    if all("state" in item for item in kept) and (space is None or "state" not in space.names):
        kept = [{k: v for k, v in item.items() if k != "state"} for item in kept]
    return kept


def _records(X: list, y, task, space: Space, partial: bool, outside, source: str) -> TaskData:
    """Parameter dicts ``X`` with their values (and task labels) as a TaskData; with ``partial``
    only the dicts that hold every parameter of ``space`` (:class:`_NoRows` when none does)."""
    y = np.asarray(y)
    if partial:
        if len(X) != len(y):
            raise DataError(f"{source}: X has {len(X)} rows and y {len(y)} values")
        whole = [k for k, p in enumerate(X) if not isinstance(p, Mapping) or not _lacks(space, p)]
        if not whole:
            raise _NoRows
        X, y = [X[k] for k in whole], y[whole]
        task = None if task is None else [task[k] for k in whole]
    return TaskData.from_records(X, y, space, task=task, source=source, outside=outside)


def _lacks(space: Space, point: Mapping) -> bool:
    """Whether ``point`` lacks a parameter of ``space`` it needs: any, in an unconditional space; in a
    conditional one, a parent or a parameter its parents' values make active (the row of another
    branch). A parent's value that is not one of its values is left to the reading to name."""
    try:
        return any(name not in point for name in space.missing(point))
    except SpaceError:
        return False


def _is_pair(obj) -> bool:
    """An ``(X, y)`` pair: a tuple of two that are not both sources (study locations, CSV paths,
    TaskData, DataFrames or pairs themselves: ``(data_a, data_b)`` is two sources)."""
    if not (isinstance(obj, tuple) and len(obj) == 2):
        return False
    return not all(_is_location(item) or _is_source_rows(item) for item in obj)


def _is_source_rows(item) -> bool:
    """Rows of one source given in memory: a TaskData, a DataFrame, or an ``(X, y)`` pair."""
    if isinstance(item, TaskData) or _is_dataframe(item):
        return True
    return isinstance(item, tuple) and len(item) == 2 and _is_pair(item)


def _is_data_item(item) -> bool:
    """An item of a list prior that is rows, not a study: a TaskData, a CSV path, a DataFrame or an
    ``(X, y)`` pair (one source task each)."""
    if isinstance(item, TaskData) or _is_dataframe(item) or _is_pair(item):
        return True
    return isinstance(item, str | os.PathLike) and not names_a_study(os.fspath(item))


def is_one_source(item) -> bool:
    """An item of a list prior that is one source task of its own: a study (URL, path or object), a
    CSV path, or rows given in memory (a TaskData, a DataFrame, an ``(X, y)`` pair); not a record
    (a dict) of a list of records."""
    return _is_location(item) or _is_source_rows(item)


def _is_location(obj) -> bool:
    """A study given by URL, path or object (an item of a list of prior studies)."""
    from .storage import Study

    return isinstance(obj, str | os.PathLike | Study)


def _csv_columns_ignored(path, space: Space, task, y="y", delimiter=",", x=None) -> None:
    """:func:`_columns_ignored` for a CSV prior (its rows are read again only when its header names a
    column that is no parameter); ``x``: ``{parameter: column}`` read under other names."""
    import csv

    used = {*space.names, task, y, *((x or {}).values())}
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh, delimiter=delimiter)
        header = [(h or "").strip() for h in reader.fieldnames or ()]
        if not _unknown_columns(header, used):
            return
        rows = [{(k or "").strip(): v for k, v in row.items()} for row in reader]
    _columns_ignored(repr(str(path)), rows, space, y, task, extra=used)


def _has_column(path: str, name: str) -> bool:
    try:
        with open(path, newline="") as fh:
            header = fh.readline()
    except OSError as exc:
        raise DataError(f"cannot read prior file {path!r}: {exc.strerror or exc}") from None
    return name in [cell.strip() for cell in header.split(",")]


def prior_subset(values, max_rows: int, seed: int | None) -> np.ndarray:
    """Indices (sorted) of the prior rows a model sees when there are more than ``max_rows``.

    An exact GP costs O(n^3) to fit and its ML-II hyperparameter search multiplies that (a first ask
    on 2000 prior rows took 44 s here, on 5000 it did not finish in 590 s), so the model sees at most
    ``max_rows`` prior rows: the best quarter of that budget by value (``values`` in the maximisation
    convention: where the optimum is likely) and the rest drawn uniformly at random, without
    replacement, with ``seed`` (where the model must not be blind). All rows stay stored.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[0]
    if n <= max_rows:
        return np.arange(n)
    n_best = max(1, max_rows // 4)  # the best row at least, whatever the budget
    order = np.argsort(-values, kind="stable")
    best, rest = order[:n_best], order[n_best:]
    drawn = np.random.default_rng(seed).choice(rest, size=max_rows - n_best, replace=False)
    return np.sort(np.concatenate([best, drawn]))


def prior_subset_by_source(values, labels, max_rows: int, seed: int | None) -> np.ndarray:
    """Indices (sorted) of at most ``max_rows`` prior rows, shared equally among the sources.

    The bounded source representation of the pooled transfer methods (issue 14): every source keeps
    ``max(1, max_rows // S)`` of its rows, chosen within the source by :func:`prior_subset` (its best
    quarter by value, the rest at random), and rows a small source leaves unused go to the others in
    the order of the sources. Selecting per source keeps every source in the model whatever the
    scales of their values (one pooled ranking would keep only the sources with the largest values)
    and keeps each source's optimum. With more sources than ``max_rows``, each keeps its best row.
    """
    values = np.asarray(values, dtype=np.float64)
    labels = np.asarray(labels)
    if values.shape[0] <= max_rows:
        return np.arange(values.shape[0])
    groups = [np.flatnonzero(labels == t) for t in dict.fromkeys(labels.tolist())]
    share = np.full(len(groups), max(1, max_rows // len(groups)))
    sizes = np.array([g.size for g in groups])
    spare = max_rows - int(np.minimum(share, sizes).sum())
    for k in range(len(groups)):  # what small sources leave unused, in source order
        if spare <= 0:
            break
        extra = min(spare, max(0, sizes[k] - share[k]))
        share[k] += extra
        spare -= extra
    keep = [g[prior_subset(values[g], int(q), seed)] for g, q in zip(groups, share, strict=True)]
    return np.sort(np.concatenate(keep))


def single_task(part: TaskData) -> TaskData:
    """A one-task prior without its task label (a study's rows are labelled by its URL)."""
    if part.task is None:
        return part
    return TaskData(part.params, part.y, None, part.space, source=part.source)


def import_source(entry: str | os.PathLike) -> str:
    """Where a ``transfer="none"`` import of ``entry`` (a CSV file or a study) comes from, as its
    record keeps it (``prior list``'s ``from``, ``prior remove --file``): a CSV file's or an SQLite
    study's absolute path, a PostgreSQL study's URL without its password. A later version of the
    same source adds only its new rows (:meth:`warmbo.Optimizer.add_prior`). Before, a study's
    imports kept none, so importing a study that had grown since stored its earlier rows a second
    time (a user test: 22 rows twice; in Python, ``prior=[study], transfer="none"`` reopened after
    the source grew, every row again: a PostgreSQL user test)."""
    from .storage import _is_postgres, parse_url, redacted

    entry = os.fspath(entry)
    if _is_postgres(entry):  # (whatever its spelling: scheme, parameters' order; no password: a review)
        from urllib.parse import parse_qsl, urlencode, urlsplit

        from .storage_postgres import split_url, study_parameter

        conninfo, name = split_url(entry)
        parts = urlsplit(conninfo)
        query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
        where = redacted(f"postgresql://{parts.netloc}{parts.path}?{query}".rstrip("?"))
        return f"{where}{'&' if query else '?'}{study_parameter(name)}"
    return str(Path(parse_url(entry) if names_a_study(entry) else entry).resolve())


def import_tag(entry: str | os.PathLike, part: TaskData) -> str:
    """The tag of one ``transfer="none"`` import: the hash of the CSV file's bytes (so an unchanged
    file is imported once per study), or of a study's rows (``part``, as read)."""
    entry = os.fspath(entry)
    if names_a_study(entry):
        return digest(single_task(part))
    return hashlib.sha256(Path(entry).read_bytes()).hexdigest()[:16]
