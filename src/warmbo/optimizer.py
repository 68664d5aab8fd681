"""The ask/tell optimizer: the data path of warmbo with a durable study behind it.

One round of :meth:`Optimizer.ask`, inside one store transaction:

``trials -> Space.encode -> model.fit(X, y) -> fantasise pending points -> acquisition.bind(model)
-> maximize(acq, space) -> Space.decode -> store the pending trial``

- The model sees outputs in the maximisation convention (``y`` or ``-y`` when minimising).
- The first ``n_initial`` trials (default :func:`default_n_initial`: ``min(max(3, 2 d), 20)`` for d
  parameters, a categorical counting one) follow a scrambled Sobol design; after that every
  point maximises the acquisition (with transfer sources the design is the warm design, and
  ``transfer="auto"`` replaces one model ask by a cold design point, the probe:
  :meth:`Optimizer._probe_due`; while its sources weigh, it does not ask beside two of the study's
  trials of one value: :meth:`Optimizer._plateau`).
  No point is suggested twice while the space has points left: pending, failed and evaluated
  points are excluded on every space (see ``_busy``), until a finite space
  (``space.cardinality``) has been exhausted. Design points are
  indexed by how many trials exist, so concurrent workers take different ones.
- Pending trials are fantasised with the kriging believer (Ginsbourger et al. 2010): the model is
  conditioned on them at its own posterior mean, which collapses the uncertainty there, so
  ``ask(4)`` or four workers get four different points; and, while another point can be, none is
  suggested whose prior correlation with a pending one exceeds ``warmbo.suggest.BATCH_CORRELATION``
  (0.999, about 0.035 lengthscales): with a confident model the believer alone let ``ask(8)`` return
  eight points within 6e-4 of each other (see :mod:`warmbo.suggest`). Failed trials weigh EI by the
  probability of success of a classifier of the study's outcomes (``failures="classifier"``,
  :mod:`warmbo.feasibility`), their near-duplicates avoided as the pending points' are; or
  (``failures="liar"``, and with UCB) they are fantasised as a constant liar at the worst value
  observed. Models with an ``add`` method (``GP``) are updated; others are refitted. Incumbents, the
  round t and the information gain come from the model of the real observations (``reference`` in
  ``bind``).
- Prior knowledge enters through ``model=`` (a transfer model) or ``kernel=``; the optimizer
  branches on the method in one place, ``transfer="auto"``'s probe (``rgpe`` stays as published).

Defaults: a GP with ``Constant * Matern-5/2`` ARD kernel, MAP hyperparameters (noise included) under
dimension-scaled priors and a fitted constant mean (:func:`warmbo.models.default_model`), on a
Yeo-Johnson power transform of the outputs (``output_transform="yeo-johnson"``); expected improvement
over the best observation.

Hyperparameter refits are warm-started: a GP that fits its hyperparameters starts from those of this
optimizer's previous fit, and its random restarts run only when the number of complete trials is a
power of two (2, 4, 8, ...), so an ask costs one local refit in between (the refits of a long study
cost O(log n) multi-start fits instead of n). From 256 trials on, the multi-start fit keeps the
previous optimum as its first start, so it costs one local refit plus the restarts (which run on a
subset of 256 points, ``GP(restart_points=...)``) unless a restart finds better hyperparameters, and
every refit's search on all the data stops after 9 likelihood evaluations
(``GP(max_evaluations=...)``): hyperparameters that are still moving move on at the next ask, so no
ask of a long study pays for a long search.
Below 64 trials, while the hyperparameters still move with every point, a second local fit from the
prototype's own starting point runs beside the warm start at every second ask (an even number of
complete trials, or two since the last check) and the better is kept (a warm start alone got stuck
on the tuned-prior demo panel: median regret 0.22 instead of 0.007). That second fit stops after 10
likelihood evaluations, and wins only if it is already the more likely: on the quality suite's 12
problems x 10 seeds the cap ended better than the uncapped fit in 63 runs and worse in 53
(``bench/cost_variants.py``), and running it at every second ask instead of every ask saves 9% of a
50-evaluation run's CPU and ended better in 21 runs and worse in 20 (79 the same; docs/optimizer.md,
"What one ask costs"). The last fit's hyperparameters are stored with the study, so the first fit of
a new optimizer object on an existing study (``warmbo suggest``, a resumed run, another worker)
warm-starts from them too; only a new study's first fit is a full multi-start fit.
EI is the default rather than
GP-UCB because it has no exploration weight to tune: with the Srinivas beta_t, GP-UCB explores far
too much at realistic budgets (on Branin 1 seed in 10 reached regret 0.05 in 40 evaluations, against
10 in 10 with beta = 4; see docs/core.md), and a constant beta is a guess. Pass
``acquisition=UCB(...)`` or ``schedule=`` for GP-UCB with confidence bounds.

Why this file is long: the ask/tell loop, the design, the warm refits, ``run`` with its workers and the
prior imports are one object's methods; the BO step itself is :func:`warmbo.suggest.suggest`, the store
:mod:`warmbo.storage`.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import json
import math
import os
import re
import shlex
import socket
import sqlite3
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    BrokenExecutor,
    CancelledError,
    Executor,
    Future,
    ThreadPoolExecutor,
    as_completed,
    wait,
)
from dataclasses import replace
from typing import Any, NamedTuple, NoReturn, overload

import numpy as np

from ._linalg import NotPositiveDefiniteError
from ._remote import ObjectiveNotSentError, Submitter, executor_slots
from ._threads import blas_limited, blas_threads, source_threads
from ._validation import check_int, check_seconds
from ._warnings import UnansweredAskWarning, user_stacklevel
from ._warnings import warn as _warn
from .acquisition import EI, PI, UCB, Acquisition
from .audit import KERNEL_MISFIT, LEVELS, MAX_HELD_OUT, Audit, audit, on_transformed_scale, rescaled
from .bounds import Schedule, parse_schedule
from .data import DataError, TaskData
from .enqueued import QUEUE_PREFIX, QueuedPoint, is_waiting, new_records, queue_records, stale_keys
from .feasibility import SuccessClassifier
from .fixed import Fixed, fix, free_point
from .kernels import Kernel
from .maximize import DUPLICATE_TOLERANCE, anchored_candidates, chained_groups, sobol_screen, taken, taken_by
from .models import GP, Prediction, default_model
from .models.gp import default_kernel
from .output_transform import OUTPUT_TRANSFORMS, YeoJohnson, log_evidence
from .parameters import Float, Parameter, SpaceError
from .prior import (
    POOLED_PRIOR_ROWS,
    PRIOR_ROWS,
    as_prior,
    digest,
    prior_subset,
    prior_subset_by_source,
    sources_from_text,
    sources_summary_from_text,
    sources_text,
)
from .space import Categorical, Space
from .storage import (
    ConnectionLostError,
    StorageError,
    StoreUnavailableError,
    Study,
    TrialNotFoundError,
    default_worker,
    person,
    readonly_url,
    redacted,
    study_exists,
    value_refusal_kind,
)
from .suggest import best_observations, crowded, suggest, too_close
from .transfer.registry import TRANSFER_METHODS, separate_sources, transfer_model
from .transfer.sources import as_sources
from .transfer.taf import TAF
from .transfer.transfer_report import SourceSummary, TransferReport, transfer_report
from .transfer.verdict import Refutation, confirmation_due, refutation
from .transfer.warm_design import WarmDesign, design_size, source_model_maxima, warm_design
from .trial import COMPLETE, FAILED, PENDING, History, Trial

__all__ = [
    "Optimizer",
    "Suggestion",
    "Best",
    "TrialFailedWarning",
    "PriorSubsetWarning",
    "TransferPredictionWarning",
    "LargeStudyWarning",
    "RestoreWarning",
    "SpaceExhaustedError",
    "BudgetNotReachedWarning",
    "BudgetHeldWarning",
    "HeldElsewhereWarning",
    "LiveTrialsLeftWarning",
    "RecordedElsewhereWarning",
    "InterruptedRunWarning",
    "NoWorkersWarning",
    "ObjectiveNotSentError",
    "RepeatedPointsWarning",
    "RepeatedFailureError",
    "ExecutorBrokenError",
    "UnansweredAskWarning",
    "cold_design_size",
    "default_n_initial",
]

#: what ``Optimizer(failures=...)`` takes
FAILURE_MODELS = ("classifier", "liar")

#: a run whose first this-many evaluations (in the order they were started) all fail with the same
#: error stops with a :class:`RepeatedFailureError` (a typo raising NameError, a missing module, a
#: --cmd that is not found: every further evaluation would fail too, and fill the study with failed
#: trials). ``Optimizer.run`` and ``warmbo optimize`` share it.
FIRST_FAILURES = 3
#: repeats with the value measured before at their point (and none that differed) before a run
#: says that a finite space's objective looks deterministic (RepeatedPointsWarning)
REPEATS_BEFORE_WARNING = 2
#: a run warns of each of its first this many failed evaluations; the others in one warning at its end
FAILURE_WARNINGS = 5
#: under the classifier of success, EI over the model's best mean at the complete points, not over the
#: best measurement (session 48; False: as before, the benchmark's ``classifier-best`` arm)
FAILED_INCUMBENT = True

#: times one ask makes its write transaction again after the server dropped the connection in it (a
#: restart, a failover, ``pg_terminate_backend``, an idle timeout; PostgreSQL): one more drop stops the
#: ask with a :class:`~warmbo.storage.StorageError` saying that nothing of it was stored
LOST_CONNECTION_RETRIES = 3

#: meta key prefix of the time a worker's run stopped by an exception (Ctrl-C, SIGTERM, an error)
RUN_ENDED_PREFIX = "run_ended:"

#: the cold Sobol design has at most this many points (:func:`default_n_initial`)
MAX_COLD_DESIGN = 20

#: seconds of a design ask spent preparing a transfer model's source GPs (``model.prepare``)
_PREPARE_SECONDS = 0.8

#: study metadata: which transfer sources the study holds (a small JSON), and the sources themselves
_SOURCES_KEY = "transfer_sources"
_SOURCE_ROWS_KEY = "transfer_source_rows"
_SOURCE_FITS_KEY = "transfer_source_fits"  # the source GPs' hyperparameters (RGPE: auto, rgpe)
_WARM_DESIGN_KEY = "transfer_warm_design"

#: the worker name of imported prior rows
PRIOR_WORKER = "prior"


#: :meth:`Optimizer._sources_lost`'s rule on (bench/auto_variants.py's ``auto-nofallback`` arm
#: turns it off to measure it).
COLD_FALLBACK = True

#: :meth:`Optimizer._probe_due`'s rule on (bench/auto_variants.py's ``auto-noprobe`` arm turns it off
#: to measure it), and how many model asks follow the warm design before the probe.
COLD_PROBE = True
PROBE_AFTER = 3

#: the probe's verdict on (:meth:`Optimizer._verdict`; bench/auto_variants.py's ``auto-noverdict`` arm
#: turns it off to measure it), and the study metadata that keeps it
COLD_VERDICT = True
_REFUTED_KEY = "transfer_refuted"

#: :meth:`Optimizer._plateau`'s rule: while ``transfer="auto"``'s ensemble gives its sources weight,
#: the search avoids near-repeats of the study's complete trials that have a near neighbour of the
#: same value (``"ties"``), of every complete trial (``"all"``: bench/auto_variants.py's
#: ``auto-apart-all`` arm, measured and not kept), or of none (None: ``auto-repeats``, ``auto``
#: before session 46)
ENSEMBLE_APART: str | None = "ties"
#: how many of the study's latest own complete trials :meth:`Optimizer._plateau` reads: its pairs
#: cost the square of the largest group of one value (5000 trials of one value, a 0/1 objective:
#: 1.8 s and 460 MB per ask; 1024 of one value, d = 6: 0.04 s and 24 MiB)
PLATEAU_TRIALS = 1024


#: the clock ``run``'s ``timeout`` reads
_clock = time.monotonic


def cold_design_size(space: Space) -> int:
    """The cold Sobol design's size for ``space``, ``default_n_initial(len(space.params))``: the
    default ``n_initial`` and the size every rule of the transfer loop calls the cold design's (the
    fallback, the probe, the verdict's restart). A categorical counts one parameter whatever its
    choices.

    Session 42 counted a k-way categorical as k - 1 (the degrees of freedom of its one-hot block),
    from two lab campaigns where a larger design found the best catalyst more often (10 -> 5 of 30
    and 3 -> 0 of 20 seeds trapped at another catalyst's optimum). Measured in session 43 on seven
    problems that played no part in it (``python bench/categorical_design.py``, docs/optimizer.md),
    the larger design was worse on CoCaBO's Func2C (lower regret after 50 evaluations in 5 seeds of
    20, higher in 15, sign test p = 0.04) and Func3C (7 and 13) and level on five scikit-learn
    problems, so parameters are counted again, as before session 42.
    """
    return default_n_initial(len(space.params))


def default_n_initial(n_params: int) -> int:
    """The size of the cold Sobol design for d = ``n_params`` parameters (a categorical counts one:
    :func:`cold_design_size`): ``min(max(3, 2 d), 20)``.

    Two points per dimension, at least 3, and at most :data:`MAX_COLD_DESIGN`. The cap matters from
    d = 11 on, where 2 d Sobol points would take most of a budget of 25-50 evaluations before the
    model chooses one: on the eight problems of d = 12 to 20 measured (``python
    bench/initial_design.py``, docs/optimizer.md), 20 points gave a lower median regret than 2 d
    after 25 evaluations on all eight and after 50 on seven (Rosenbrock-20: 9.2e4 against 8.9e4).
    """
    check_int(n_params, "n_params", 0)
    return min(max(3, 2 * int(n_params)), MAX_COLD_DESIGN)


class PriorSubsetWarning(UserWarning):
    """The model sees only part of a large prior (``max_prior``); every row stays stored."""


def _sources_summary(study: Study) -> dict | None:
    """The small record naming a study's stored sources (``{"digest", "transfer", "max_prior",
    "n_initial"}``), None for a study without sources or an unreadable record. When only the rows
    are there (a process of an earlier version stopped between writing the two) it is read from the
    rows' own record, which holds the same settings and digest."""
    text = study.get_meta(_SOURCES_KEY)
    if text is None:
        rows = study.get_meta(_SOURCE_ROWS_KEY)
        return None if rows is None else sources_summary_from_text(rows)
    try:
        record = json.loads(text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


class SourcesReplacedWarning(UserWarning):
    """``prior=`` given on a study that stores other transfer sources: the given ones replace them
    (in Python the sources given are the study's whole set; the command line asks for
    ``--prior-add`` or ``--prior-replace`` instead)."""


class SourcesSetAsideWarning(UserWarning):
    """``transfer="auto"``: the study's own evaluations refuted its transfer sources (a point of the
    cold design did better than every point they chose, twice: :mod:`warmbo.transfer.verdict`), so
    the study continues as without them. Said once, by the ask that reached the verdict."""


class UninformativeSourceWarning(UserWarning):
    """A transfer source whose values are all equal is left out of the warm design and the model: it
    ranks no configuration above another (every row stays stored with the study)."""


def _informative(prior: TaskData) -> TaskData | None:
    """``prior`` without its sources whose values are all equal (each said with an
    :class:`UninformativeSourceWarning`), or None when no source is left (the study starts cold).
    Such a source (a CSV with a constant column, a study whose every trial scored the same) made the
    warm design an arbitrary pick of its rows and, in ``auto``'s ensemble, took weight by ranking the
    target's first observations at random; on Hartmann-3 the median regret after 30 evaluations was
    0.0071 against 0.00014 cold (bench/useless_sources.py, the arm ``auto-old``)."""
    y = np.asarray(prior.y, dtype=np.float64)
    labels = np.zeros(y.size, dtype=np.intp) if prior.task is None else prior.task
    keep = np.ones(y.size, dtype=bool)
    for label in dict.fromkeys(labels.tolist()):
        rows = labels == label
        if y[rows].size and np.all(y[rows] == y[rows][0]):  # (np.ptp overflows near 1.8e308)
            keep &= ~rows
            name = prior.source if prior.task is None else f"{label!s}"
            count = int(rows.sum())
            what = (
                f"has one evaluation ({y[rows][0]:.6g})"
                if count == 1
                else f"({count} rows): every value is {y[rows][0]:.6g}"
            )
            hint = (
                " To evaluate that configuration first, queue it: Optimizer.enqueue(params) or "
                "`warmbo enqueue --params '{...}'`"
                if count == 1
                else ""
            )
            warnings.warn(
                f"transfer source {name!r} {what}, so it cannot say which configurations are better; "
                f"it is left out of the warm design and the model (its rows stay stored).{hint}",
                UninformativeSourceWarning,
                stacklevel=user_stacklevel(),  # (Optimizer(...) or Optimizer.load(...): the user's line)
            )
    if keep.all():
        return prior
    return prior.subset(np.flatnonzero(keep)) if keep.any() else None


class _BudgetReached(Exception):
    """``run``'s budget filled while a point was being chosen (other runs' evaluations): nothing inserted."""


#: meta key prefix of the trials asked with fixed values (``fixed:<trial id>``: the values, JSON)
FIXED_PREFIX = "fixed:"


class _QueueTaken(Exception):
    """The partial queue entry an ask was choosing the rest of was taken by another worker meanwhile."""


class LargeStudyWarning(UserWarning):
    """The model is an exact GP on more than :data:`LARGE_STUDY` of the study's own trials, so every ask
    costs seconds to minutes; ``max_trials=`` models a subset."""


#: own complete trials above which an optimizer without ``max_trials`` warns (:class:`LargeStudyWarning`):
#: an exact GP's refit costs O(n^3) per likelihood evaluation (a walkthrough under load: the first ask
#: at 5000 trials, d = 6, took 55 s and 961 MB)
LARGE_STUDY = 2000


class SmallModelWarning(UserWarning):
    """``max_trials`` below :data:`SMALL_MAX_TRIALS`: the model sees only that many of the study's trials."""


#: ``max_trials`` below which an optimizer warns (:class:`SmallModelWarning`): a cap meant for studies of
#: thousands, taken for a trial budget (Optuna's ``n_trials``), left the model blind to most trials
SMALL_MAX_TRIALS = 20


#: an EI or PI as the study stores it (its repr), which load() rebuilds
_STORED_INCUMBENT = re.compile(
    r"(?P<kind>EI|TAF|PI)\(incumbent='(?P<incumbent>best|observed|mean)', xi=(?P<xi>[0-9.e+-]+)\)"
)


class RestoreWarning(UserWarning):
    """``Optimizer.load`` cannot rebuild a setting the study was created with (a model, a kernel or
    an acquisition other than GP-UCB, EI and PI) and uses the default. ``lost`` holds ``(argument, stored
    repr)`` pairs, for callers that say it in their own terms (the CLI)."""

    def __init__(self, lost: Sequence[tuple[str, str]]):
        self.lost = tuple(lost)
        what = "; ".join(f"{self.stored(a, text)}; pass {a}= to load() to use it again" for a, text in lost)
        super().__init__(
            "this study was created with settings that load() cannot rebuild, and resumes with the "
            "default instead: " + what
        )

    @staticmethod
    def stored(arg: str, text: str) -> str:
        """What the study stores for ``arg``: ``model= (stored as GP(...))``, ``acquisition=EI(...)``."""
        return f"acquisition={text}" if arg == "acquisition" else f"{arg}= (stored as {text})"


class TrialFailedWarning(UserWarning):
    """An evaluation failed during :meth:`Optimizer.run`; the trial is marked failed and the run goes on."""


class SpaceExhaustedError(ValueError):
    """No point of the search space is left to suggest: every one is pending or failed (a finite
    space, or a continuous one narrower than the duplicate tolerance). :meth:`Optimizer.run` stops
    with a :class:`BudgetNotReachedWarning` instead of raising it."""


class BudgetHeldWarning(UserWarning):
    """``run`` stopped short of its budget because pending trials of this worker left by a run just
    interrupted still beat fresh, and so hold the remaining places."""


class LiveTrialsLeftWarning(UserWarning):
    """``run(retry_pending=True)`` left the pending trials live runs are evaluating to them."""


class HeldElsewhereWarning(UserWarning):
    """``run`` stopped short of its budget because other workers' evaluations hold the remaining
    places: live runs sharing the study (how they end together), or a process just killed, whose
    trials beat fresh for 30 s. Filter it where runs share a study on purpose."""


class BudgetAlreadyReachedWarning(UserWarning):
    """:meth:`Optimizer.run` had nothing to do: ``budget`` counts the study's finished trials, and the
    study already held that many (``held``; ``budget=5`` on a study of 9 trials is not "5 more")."""

    def __init__(self, budget: int, held: int):
        self.budget, self.held = budget, held
        super().__init__(
            "budget=0 asks for no evaluation: nothing was evaluated"
            if budget == 0
            else f"budget={budget} counts the study's finished trials (imported prior rows not counted), "
            f"and it already holds {held}: nothing was evaluated. For {budget} more, give "
            f"budget={held + budget}"
        )


class InterruptedRunWarning(UserWarning):
    """``run`` was interrupted while evaluations were running: on its threads, it waits for them and
    stores their values; on an executor it was given (a Dask cluster's), it cancels them, withdraws
    their trials and says what it kept."""


def _refuse_prior_row(stored: Trial, action: str) -> None:
    """An imported prior row is not withdrawn or amended: its import's bookkeeping counts the study's
    rows, so a re-import of the grown file would bring the old row back (an amended row came back
    beside its correction, with "no longer in it" said of it), and `prior list` would count it. A
    user test's amend of one as failed left no failed trial of the study's own, and every later
    ask raised from the failure model."""
    if stored.worker == PRIOR_WORKER:
        raise ValueError(
            f"cannot {action} trial {stored.id}: it is a row of prior data (imported with add_prior or "
            "--prior --transfer none), not a trial of this study's own: correct the data and import "
            "them again, or remove the import (opt.remove_prior, warmbo prior remove)"
        )


class NoWorkersWarning(UserWarning):
    """:meth:`Optimizer.run` on a Dask cluster's executor has evaluations waiting and the cluster has
    no workers when :data:`NO_WORKERS_AFTER` seconds have passed with no evaluation ending: the run waits
    for one."""


#: seconds a run on a Dask cluster waits with evaluations in flight and no worker before it says so
NO_WORKERS_AFTER = 30.0


class RepeatedPointsWarning(UserWarning):
    """:meth:`Optimizer.run` evaluated a point of a finite space again (every point had been tried)
    and got the value the point already had: for a deterministic objective the rest of the budget
    evaluates known values. Not raised for a noisy objective, whose repeats are new measurements.
    Also said once by :meth:`Optimizer.ask` (``warmbo suggest``) when it suggests points measured
    before, every point having been tried."""


class RepeatedFailureError(RuntimeError):
    """:meth:`Optimizer.run` stopped because the first :data:`FIRST_FAILURES` evaluations of the run
    all failed with the same error (warmbo's refusal of a returned value: of the same type).
    ``error`` is the first one (as the trials store it), ``pending`` the
    ids of this run's trials still being evaluated then, left pending, ``failed`` the ids of the
    failed trials (their points are not proposed again unless they are withdrawn: the message says
    how, since a bug of the objective fails good points; a user test)."""

    def __init__(self, error: str, pending: Sequence[int] = (), failed: Sequence[int] = (), where: str = ""):
        self.error = error
        self.pending = tuple(pending)
        self.failed = tuple(failed)
        #: where the first failure was raised in the objective's own code (``file:line, in name``), or ""
        self.where = where
        left = (
            f"; trial(s) {', '.join(map(str, self.pending))} were still running and are left pending: "
            "run with retry_pending=True to evaluate them)"
            if self.pending
            else ")"
        )
        hint = ""
        if "'dict' object has no attribute 'suggest_" in error:
            # (a user test: an Optuna objective, def f(trial): trial.suggest_float(...), given as it was)
            hint = (
                " (the objective gets a dict of parameters, params['lr'], not an Optuna trial: the space "
                "is the Optimizer's, wb.Space([wb.Float('lr', 1e-4, 1e-1, log=True), ...]); docs/optuna.md)"
            )
        again = ""
        if self.failed:
            ids = ", ".join(map(str, self.failed))
            again = (
                f"; if the error was the objective's, not those points', withdraw trials {ids} first so "
                f"that they can be: opt.withdraw(id) for each, or warmbo observe STUDY --trial ID --withdraw"
            )
        at = f" (raised at {where})" if where else ""
        super().__init__(
            f"the first {FIRST_FAILURES} evaluations of this run all failed with: {error}{at}{hint}; stopped "
            "instead of spending the budget on it. Fix the objective and run again (the failed trials stay "
            "in the study, and their points are not proposed again" + again + left
        )


class ExecutorBrokenError(RuntimeError):
    """:meth:`Optimizer.run`'s executor broke (``concurrent.futures.BrokenExecutor``: a process pool
    one of whose processes died, killed by the OS for its memory or ended by the objective with
    ``os._exit``, a signal or a crash in native code) and can run nothing more. ``failed``: the trial
    marked failed, when it was the only evaluation running (it ended its process); ``withdrawn``: the
    trials this run had asked for and that were running together, taken out of the study, since any
    of them may have ended the process (a user test: a healthy point beside the one that killed its
    process was stored as failed, so never proposed again); ``pending``: trials retried from an earlier
    run, left pending as they were."""

    def __init__(
        self,
        error: str,
        failed: Sequence[int] = (),
        withdrawn: Sequence[int] = (),
        pending: Sequence[int] = (),
    ):
        self.error = error
        self.failed = tuple(failed)
        self.withdrawn = tuple(withdrawn)
        self.pending = tuple(pending)
        what = []
        if self.failed:
            what.append(f"trial {_ids(self.failed)}, the only evaluation running, is marked failed")
        if self.withdrawn:
            what.append(
                f"trials {_ids(self.withdrawn)}, running together, were withdrawn: one of them may have "
                "ended its process, and which cannot be told (with n_workers=1 such a point is marked "
                "failed and not proposed again)"
            )
        if self.pending:
            what.append(f"trial(s) {_ids(self.pending)} (retried from an earlier run) stay pending")
        super().__init__(
            f"the executor broke ({error}): a worker process died, killed by the operating system (out "
            "of memory?) or ended by the objective (os._exit, a signal, a crash in native code), and the "
            "executor can run nothing more. "
            + "; ".join(what)
            + (". " if what else "")
            + "Run again with a new executor to go on"
        )


class _FirstFailures:
    """Whether a run's first :data:`FIRST_FAILURES` evaluations, in the order they were started (trial
    ids grow with each ask; retried trials are older and go first), all failed with the same error.
    Decided once they have all finished, so fast failures finishing before slow successes (several
    workers) do not count alone."""

    def __init__(self, answered: bool = False, known: Iterable[str | None] = ()):
        self.outcomes: dict[int, str | None] = {}  # this run's finished trials: id -> the error, or None
        self.deciding = True
        self.failed: tuple[int, ...] = ()
        # the study holds values the objective returned before this run: a NaN or inf it returns now
        # is its answer for a region (a learning rate that diverges), not a broken objective (a
        # user test: a continued run asking three times beside a diverging region stopped with "fix
        # the objective"); so is an error the study's failed trials already hold beside those values
        # (a solver that crashes in a region: a resumed run, or points enqueued there, stopped with
        # "fix the objective", a user test), where a new error (a typo since) still stops the run
        self.answered = answered
        self.known = {_error_kind(error) for error in known} if answered else set()

    def stops(self, trial: Trial, unfinished: Iterable[int]) -> str | None:
        """Record a finished ``trial``; the repeated error when the run should stop there, else None
        (the failed trials' ids are then :attr:`failed`). ``unfinished``: the ids of the run's trials
        started and not finished yet."""
        known = _NONFINITE.fullmatch(trial.error or "") or _error_kind(trial.error) in self.known
        failed = trial.state == FAILED and not (self.answered and known)
        self.outcomes[trial.id] = trial.error if failed else None
        if not self.deciding:
            return None
        first = sorted([*self.outcomes, *unfinished])[:FIRST_FAILURES]
        if len(first) < FIRST_FAILURES or any(i not in self.outcomes for i in first):
            return None
        self.deciding = False
        errors = {_error_kind(self.outcomes[i]) for i in first}
        if None in errors or len(errors) != 1:
            return None
        error = self.outcomes[first[0]]
        self.failed = tuple(first)
        if len({self.outcomes[i] for i in first}) > 1:
            error += " (and the same for the other values returned)"
        return error


#: what :meth:`Optimizer.run` stores for an objective that returned NaN or inf (:class:`_FirstFailures`)
_NONFINITE = re.compile(r"the objective returned -?(nan|inf), not a finite number")


def _non_finite(value) -> float | None:
    """``value`` as a float when it is a number that is NaN or infinite (a Python or numpy float, a
    one-number array), else None."""
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind == "f":
        value = value.reshape(())
    if isinstance(value, float | np.floating) or (isinstance(value, np.ndarray) and value.ndim == 0):
        number = float(value)
        return None if math.isfinite(number) else number
    return None


def _error_kind(error: str | None) -> str | None:
    """What :class:`_FirstFailures` compares: the error as stored, except that warmbo's own refusal of
    a returned value names the value's type, not the value ("got {'loss': 0.31} (dict)" differs at
    every trial, so an objective returning a dict spent its whole budget on failures;
    :func:`~warmbo.storage.value_refusal_kind`), and a command's output it cannot read is one error
    whatever the output (:func:`~warmbo.objective.output_refusal_kind`). The user's own messages are
    compared whole: a message that differs between trials ("diverged at step 37") may depend on the
    configuration, and the run goes on."""
    from .objective import output_refusal_kind

    return None if error is None else output_refusal_kind(value_refusal_kind(error))


class TransferPredictionWarning(UserWarning):
    """:meth:`Optimizer.predict` of a transfer ensemble (``transfer="auto"``/``"rgpe"`` with a source
    weighted): its mean ranks settings but need not be on the scale of the user's values."""


class RecordedElsewhereWarning(TrialFailedWarning):
    """:meth:`Optimizer.run`: a trial it was evaluating was recorded by someone else meanwhile (a
    ``warmbo observe``, another worker that took it over), so the run's own outcome is not stored."""


class BudgetNotReachedWarning(TrialFailedWarning):
    """:meth:`Optimizer.run` stopped before its budget: no point of the space was left to evaluate."""


class Suggestion(dict):
    """Parameters to evaluate, returned by :meth:`Optimizer.ask`; ``trial_id`` names the trial."""

    def __init__(self, params: dict, trial_id: int):
        super().__init__(params)
        self.trial_id = trial_id

    def __repr__(self) -> str:
        return f"Suggestion({dict(self)!r}, trial_id={self.trial_id})"


class Best(NamedTuple):
    """The best complete trial: its parameters and value."""

    params: dict
    value: float


# number of best observations around which the acquisition search draws local candidates
_N_ANCHORS = 5
# below this many complete trials a warm-started refit is paired with a cold one (see fit_model)
_COLD_REFIT_BELOW = 64
# below _COLD_REFIT_BELOW, the cold fit runs when the number of complete trials is a multiple of this
# or the last check is this many trials back (asks of several points; see _fit_scaled): at every
# second ask, 9% less CPU per 50-evaluation run with no measurable change in regret (final
# regret lower / higher than at every ask in 21 / 20 of 120 paired runs in session 15, 53 / 63 before
# the cold fit's cap, 4 / 9 of 30 in session 27: 78 / 92, p ~ 0.3; a warm fit that settles in a poor
# optimum is still checked an ask later).
# Adopted in session 27, to take the per-run cost below a third of Optuna's GPSampler's
# (docs/optimizer.md)
_COLD_REFIT_EVERY = 2
# most likelihood evaluations of that cold fit (None: to convergence; see the module docstring)
_COLD_MAX_EVALUATIONS: int | None = 10
# from this many complete trials, a refit at a power of two keeps the previous optimum among its starts;
# below, it is the prototype's own multi-start fit: cheap there, and the warm start made the quality
# section's regret after 25 evaluations worse in 17 runs of 120 and better in 7 (sign test p = 0.06)
_WARM_FULL_REFIT_FROM = 256
# from _WARM_FULL_REFIT_FROM trials on, a warm refit's search from the previous optimum stops after
# this many likelihood evaluations (GP(max_evaluations=...)); the next ask goes on from there. A
# settled ask takes 6-7; after the refit at a power of two moved the hyperparameters, the asks that
# follow hit the cap: at 12 the dearest ask of a 1000 -> 1100 loop (d = 6) was 1.9-2.1x its median,
# at 9 1.6x, the search spread over a few more asks (``python bench/loop_cap.py 12 9``, session 27)
_WARM_MAX_EVALUATIONS = 9
# from _WARM_FULL_REFIT_FROM trials on, that search also stops once an iteration improves the log
# posterior by less than this fraction (a looser tolerance never tightens): with >= 256 points it is
# a sum of >= 256 terms, so 1e-5 is ~0.01 nats at n = 1000. From the previous optimum, L-BFGS-B
# rebuilds its curvature estimate at every ask and at 1e-6 spent 9 evaluations per ask settling
# steps of ~1e-3 nats (13, the cap of 12 then, on a new object's first ask at n = 1000); at 1e-5, 6-7
# (``python bench/profile_ask.py --mode first --n 1000``; ``bench/fit_tolerance.py`` shows the
# objective each tolerance reaches). Below 256 trials the fits are unchanged.
_WARM_FIT_TOLERANCE = 1e-5
# rows on which the random restarts of a long study's refit at a power of two search (GP's
# restart_points, 256 by default; never raised): they only propose starts, which are then scored on all
# the data. On 256 rows their ~110 likelihood evaluations made the ask at n = 1024 of a 1000 -> 1100
# loop (d = 6) 0.66 s against a median of 0.30-0.34 s; on 128, 0.50 s (python bench/profile_ask.py)
_WARM_RESTART_POINTS = 128


#: the transfer method whose model may take the study's values on the Yeo-Johnson scale
#: (``output_transform="yeo-johnson"``, not its default): ``auto``'s ensemble standardises each task on
#: its own (its weights read only the ranks of the study's values), so its target GP can see them as a
#: cold study's GP does (session 47, docs/transfer.md); the other methods put the sources' values and
#: the study's on one scale themselves (``rgpe`` stays as published)
TRANSFORMED_TRANSFER = "auto"


#: study meta key: the ``output_transform`` the last optimizer that transferred with ``auto`` used
#: (a study made without sources stores the plain GP's transform in its settings, so a choice made
#: when sources were given later is kept here)
TRANSFER_TRANSFORM_META = "transfer_output_transform"


def transfer_transform(method: str, settings: dict, recorded: str | None = None) -> str | None:
    """The ``output_transform`` a study that transfers with ``method`` resumes with when none is
    given: ``"yeo-johnson"`` if its last ``auto`` optimizer used it (``recorded``, the study's
    :data:`TRANSFER_TRANSFORM_META`; for a study without that record, if it was made with sources
    and asked for it); else None, the constructor's default for the method, so that a study whose
    sources are set aside (the verdict) or all left out goes on with the plain GP's transform."""
    if method != TRANSFORMED_TRANSFER:
        return None
    if recorded is None:
        made_with_it = settings.get("warm_design") and settings.get("output_transform") == "yeo-johnson"
        recorded = "yeo-johnson" if made_with_it else None
    return "yeo-johnson" if recorded == "yeo-johnson" else None


def _fit_score(model: GP, y: np.ndarray) -> float:
    """The criterion the GP's hyperparameters maximise: log marginal likelihood, LOO log predictive
    probability, or minus the LOO squared error (all on the outputs the two fits share)."""
    if model.optimizer == "ml2":  # MAP when the GP has a hyperprior
        hook = getattr(model, "log_hyperprior", None)
        return model.log_marginal_likelihood() + (hook() if callable(hook) else 0.0)
    mean, std = model.loo()
    if model.optimizer == "loo-mse":
        return -float(np.mean((y - mean) ** 2))
    return float(np.sum(-0.5 * ((y - mean) / std) ** 2 - np.log(std)))


def _decides_scale(n: int) -> bool:
    """Whether ``output_transform="auto"`` fits both scales at n complete trials: at powers of two
    below ``_WARM_FULL_REFIT_FROM`` (with the hyperparameters' random restarts), and from there on at
    three times a power of two (384, 768, 1536, ...), between the restarts' asks, so that no ask of
    a long study pays for both."""
    if n < _WARM_FULL_REFIT_FROM:
        return n & (n - 1) == 0
    return n % 3 == 0 and (n // 3) & (n // 3 - 1) == 0


def _stored_seed(storage) -> int | None:
    """The seed stored with the study at ``storage``, or None when there is no readable study there
    yet (no file, an empty file, a study another process is creating this moment: the caller checks
    the seed again once the study is open, see ``Optimizer.__init__``)."""
    try:
        if storage is None or not study_exists(storage):
            return None
        study = Study(readonly_url(storage))
    except StorageError:
        return None
    try:
        seed = study.settings.get("seed")
    finally:
        study.close()
    try:
        return None if seed is None else int(seed)
    except (TypeError, ValueError):
        return None


def _seeded(model, seed: int):
    """``model``, or a copy with the optimizer's seed when it takes a ``seed`` and was given none (a
    ``GP(optimizer="ml2")`` draws its hyperparameter restarts from it): ``Optimizer(seed=0)`` then
    repeats its runs with a model of the user's as with its own."""
    params = getattr(model, "get_params", None)
    clone = getattr(model, "clone", None)
    if not (callable(params) and callable(clone)):
        return model
    values = params()
    if "seed" not in values or values["seed"] is not None:
        return model
    return clone(seed=int(seed))


def check_kernel_dim(kernel, space: Space) -> None:
    """Refuse a kernel whose input dimension is not the encoded space's (it would fail only at the
    first model fit, after the initial design had been evaluated)."""
    dim = getattr(kernel, "input_dim", None)
    if dim is not None and dim != space.dim:
        raise ValueError(
            f"kernel {kernel!r} takes {dim}-dimensional inputs but the space encodes points in "
            f"{space.dim} dimensions (one per float or integer, one per choice of a categorical); "
            f"give it {space.dim} lengthscales, or one shared lengthscale"
        )


def _refuse_multitask(storage) -> None:
    """Refuse a multi-task study: its trials' values are utilities of task vectors, which a
    single-objective optimizer would mix with values of its own (as MultiTaskOptimizer refuses a
    single-objective study)."""
    try:
        if storage is None or not study_exists(storage):
            return
        study = Study(readonly_url(storage))
    except StorageError:
        return  # not readable yet (being created): Study() below says what is wrong, if anything
    try:
        multitask = study.get_meta("multitask")
    finally:
        study.close()
    if multitask is not None:
        tasks = json.loads(multitask).get("task_names")
        raise StorageError(
            f"study {redacted(storage)!r} is a multi-task study (tasks {tasks}); open it with "
            "warmbo.MultiTaskOptimizer (or MultiTaskOptimizer.load), not warmbo.Optimizer"
        )


def refuse_dropped_model(
    prior_given: bool, transfer: str | None, model_given: bool, kernel_given: bool
) -> None:
    """Refuse a model or kernel that a transfer would drop: ``prior=`` without ``transfer=`` means
    ``transfer="auto"``, and every transfer method builds its own model from the sources, so the
    ``model=`` or ``kernel=`` given was ignored without a word (``model=`` with a named method is
    refused in :class:`Optimizer` already). Also called by the Optuna and Ray integrations when they
    are made, before any trial is spent."""
    if not prior_given or transfer == "none" or not (kernel_given or (model_given and transfer is None)):
        return
    given = "model=" if model_given else "kernel="
    method = (
        "prior= without transfer= transfers with transfer='auto', which"
        if transfer is None
        else (f"transfer={transfer!r}")
    )
    raise ValueError(
        f"{method} builds its own model from the sources, so {given} would be ignored: give "
        f"transfer='none' to import the prior rows as trials of this objective for your {given[:-1]}, or "
        f"leave {given} out (a transfer model you built yourself goes in model= without prior=)"
    )


def _check_fitted_protocol(model) -> None:
    """A fitted model without what the acquisition reads (``n_observations``, ``X_train_``,
    ``y_train_``) is refused in words naming them (before: an AttributeError deep in the acquisition)."""
    missing = [name for name in ("n_observations", "X_train_", "y_train_") if not hasattr(model, name)]
    if missing:
        raise ValueError(
            f"the model {type(model).__name__}, fitted, has no {', '.join(missing)}: warmbo's model "
            "protocol needs them (docs/optimizer.md, 'Your own model')"
        )


def _basis(trials) -> tuple[tuple[int, float], ...]:
    """What a fit depends on: the complete trials' ids and values (an amended value changes it)."""
    return tuple((t.id, t.value) for t in trials if t.state == COMPLETE)


def live_run_trials(study: Study, now: float | None = None) -> dict[int, float]:
    """The pending trials a live run is evaluating, id -> seconds since their last heartbeat: a
    heartbeat within :data:`LIVE_BEATS` x :data:`HEARTBEAT_INTERVAL` s, from a run that has not
    recorded that it stopped since (``run_ended:<worker>``, :meth:`Optimizer._record_run_ended`: a
    stopped run is not live, whatever its heartbeat). ``warmbo clean-pending`` never clears them by
    default, and :meth:`Optimizer.withdraw` refuses them."""
    now = time.time() if now is None else now
    ended = _runs_ended(study)
    beating = study.last_beats(beating_only=True)
    live = {}
    for trial in study.trials((PENDING,)):
        beat = beating.get(trial.id)
        if beat is None or now - beat > LIVE_BEATS * HEARTBEAT_INTERVAL:
            continue
        if ended.get(trial.worker, -math.inf) < beat:
            live[trial.id] = now - beat
    return live


def _runs_ended(study: Study) -> dict[str, float]:
    """Worker name -> when its last run recorded that it stopped (``run_ended:<worker>``)."""
    ended = {}
    for key, stamp in study.meta_items(RUN_ENDED_PREFIX).items():
        with contextlib.suppress(ValueError):
            ended[key[len(RUN_ENDED_PREFIX) :]] = float(stamp)
    return ended


def _point_text(point: Mapping) -> str:
    """A point as JSON for a message, floats to 6 significant digits (a user test read a Python dict,
    ``{'conc_mM': 4.6126788595166826}``, where the CLI takes JSON)."""
    shown = {k: float(f"{v:.6g}") if isinstance(v, float) else v for k, v in point.items()}
    return json.dumps(shown, ensure_ascii=False, default=str)


def _row_key(params: dict, value: float) -> str:
    """A prior row's identity for re-imports: its parameters and value, exactly (JSON of the stored
    Python values, as the study keeps them)."""
    return json.dumps([sorted(params.items()), float(value)])


#: other libraries' words for the optimizer's arguments (a user test: Optuna's
#: ``direction="maximize"`` met a bare TypeError)
_THEIR_WORDS = {
    "direction": "maximize=True (Optuna's direction='maximize'; minimising is the default)",
    "directions": "a wb.MultiTaskOptimizer for several objectives, or maximize=True for one",
    "random_state": "seed=",
    "n_trials": "a budget: opt.run(objective, budget=N)",
    "sampler": "model=, acquisition= and transfer=",
    "search_space": "the space, as the first argument",
    "n_startup_trials": "n_initial=",
    # (a user test met a bare TypeError for these two, which docs/optuna.md said were answered)
    "load_if_exists": "no argument (an existing study at storage= is always resumed)",
    "study_name": "storage= (one study per SQLite file; a PostgreSQL URL names it with ?study=NAME)",
}


#: Optuna's names of what an Optimizer has under other names (a user test met a bare AttributeError
#: for ``opt.best_params`` and ``opt.optimize``, where the constructor's Optuna words say the warmbo one)
_THEIR_ATTRIBUTES = {
    "best_params": "opt.best.params",
    "best_value": "opt.best.value",
    "best_trial": "opt.best (its params and value; the trials are opt.history)",
    "optimize": "opt.run(objective, budget=N), N the total of finished trials",
    "trials": "opt.history",
    "trials_dataframe": "opt.history.to_dataframe()",
    "enqueue_trial": "opt.enqueue(params)",
    "get_trials": "opt.history",
}


def _their_attribute(name: str) -> property:
    """A property that raises the AttributeError naming the warmbo word for Optuna's ``name`` (a
    property, not ``__getattr__``, which would also replace an AttributeError raised inside another
    property's getter)."""

    def refuse(self):
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute {name!r} (Optuna's word): use "
            f"{_THEIR_ATTRIBUTES[name]}",
            name=name,
            obj=self,
        )

    return property(refuse, doc=f"Not an attribute: Optuna's word; use {_THEIR_ATTRIBUTES[name]}.")


def _not_a_space(space) -> str:
    """What to give in place of ``space`` (a user test passed Optuna's dict of distributions and read
    only "space must be a warmbo Space, got dict")."""
    said = f"space must be a warmbo Space, got {type(space).__name__}"
    example = (
        "wb.Space([wb.Float('lr', 1e-4, 0.1, log=True), wb.Int('layers', 1, 4), "
        "wb.Categorical('activation', ['relu', 'tanh'])])"
    )
    if isinstance(space, Mapping):
        optuna = any(type(v).__name__.endswith("Distribution") for v in space.values())
        return f"{said}: build one as {example}" + (
            " (Optuna's distributions map one to one: FloatDistribution to wb.Float, IntDistribution "
            "to wb.Int, CategoricalDistribution to wb.Categorical; or keep Optuna and sample with "
            "warmbo.integrations.optuna.WarmboSampler: docs/optuna.md)"
            if optuna
            else ""
        )
    return f"{said}, e.g. {example}"


_WORKER = re.compile(r"^(?:.*@)?([^@:]+):(\d+)(?::.*)?$")


def _dead_here(worker: str | None) -> bool:
    """Whether ``worker`` (``user@host:pid[:thread]``, :func:`~warmbo.storage.default_worker`) names a
    process of this machine that no longer exists. Only where the name says this host and no process
    has that id (a process of another user exists as far as this asks); a name of another form, or of
    another machine, is never taken for dead. (Two containers with one host name and their own process
    ids could take a live one for dead: a run would then evaluate one trial more than its budget, or,
    with ``retry_pending``, evaluate that trial's point a second time; ``clean-pending``, ``observe``
    and ``withdraw`` do not use it, :func:`live_run_trials`.)"""
    if not worker or os.name != "posix":  # (Windows' os.kill(pid, 0) ends the process)
        return False
    match = _WORKER.match(worker)
    if match is None or match.group(1) != socket.gethostname():
        return False
    pid = int(match.group(2))
    if pid == os.getpid() or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False
    return False


def optimizer_arguments() -> list[str]:
    """The names of :class:`Optimizer`'s arguments (the integrations check their options by them)."""
    import inspect

    return [
        name
        for name, p in inspect.signature(Optimizer.__init__).parameters.items()
        if name != "self" and p.kind is not p.VAR_KEYWORD
    ]


def _refuse_unknown(unknown: dict, name: str, taken: Sequence[str] | None = None, words=None) -> None:
    """A ``TypeError`` naming each argument ``name`` (the optimizer by default) does not take and what
    it takes instead (another library's word, or the nearest of ``taken``'s names)."""
    import difflib

    taken = optimizer_arguments() if taken is None else taken
    words = _THEIR_WORDS if words is None else words
    said = []
    for arg in unknown:
        if arg in words:
            said.append(f"{arg!r}: use {words[arg]}")
            continue
        near = difflib.get_close_matches(arg, taken, n=1, cutoff=0.6)
        said.append(f"{arg!r}" + (f": did you mean {near[0]}=?" if near else ""))
    raise TypeError(f"{name}() got unexpected keyword argument(s) " + "; ".join(said))


def _new_model(prototype):
    clone = getattr(prototype, "clone", None)
    return clone() if callable(clone) else copy.deepcopy(prototype)


class Optimizer:
    """Ask/tell Bayesian optimizer over a :class:`~warmbo.space.Space`, backed by a durable study.

    Parameters
    ----------
    space : Space or list of Parameter
        The search space (a list of parameters is made a :class:`Space`).
    model : object, optional
        Prototype of the surrogate, a :class:`~warmbo.models.base.Model` (fit, predict, add,
        clone, n_observations, X_train_, y_train_; every shipped model is one). A clone is fitted
        at every ask; a model with a ``seed`` parameter left at None gets this optimizer's seed.
        Default: see :func:`~warmbo.models.default_model`.
    acquisition : Acquisition, optional
        Default ``EI()`` (or ``UCB(schedule)`` when ``schedule`` is given). With ``prior=``,
        ``TAF()`` (the transfer acquisition function: the study's own EI plus each source's
        predicted improvement, instead of EI on the ensemble's mean) suits spaces whose sources
        favour one branch, such as the choice of model on another data set; see docs/transfer.md,
        "TAF".
    schedule : Schedule, optional
        Confidence schedule beta_t for GP-UCB: the acquisition is then ``UCB(schedule)``, or the
        given ``UCB()`` with this schedule (a UCB given a schedule of its own, ``Srinivas()`` included,
        and another as ``schedule=`` is refused; the same one twice is accepted).
    maximize : bool
        Maximise (True) or minimise (False, default) the objective.
    n_initial : int, optional
        Size of the Sobol initial design (default :func:`default_n_initial`: ``min(max(3, 2 d), 20)``
        for d parameters, counted by parameters, not by encoded width).
    seed : int, optional
        Seed of the design, the acquisition search and the hyperparameter restarts. On an existing
        study a given seed is this optimizer's (workers sharing a study may each have one); the study
        keeps the seed it was created with, which an optimizer given none uses. (`warmbo suggest`
        and `warmbo optimize` refuse another ``--seed`` on an existing study: each command is a new
        optimizer, and its design would then not continue the study's.)
    storage : str, optional
        Study URL (``"study.db"``, ``"sqlite:///study.db"``); None keeps the study in memory. An
        existing study is resumed.
    kernel : Kernel, optional
        Kernel of the default GP (ignored when ``model`` is given).
    worker : str, optional
        Name recorded with this optimizer's trials (default ``user@host:pid``).
    prior : optional
        Earlier evaluations, in your own units: a :class:`~warmbo.data.TaskData`, a CSV path, a
        DataFrame (parameter columns, ``y``, optional ``task``), an ``(X, y)`` pair (parameter dicts,
        a DataFrame of parameter columns or raw values; objective values as you measure them), or a
        list of finished study URLs (see :mod:`warmbo.prior`). They are encoded and signed exactly
        as this optimizer's own trials.
    transfer : str, optional
        How ``prior`` is used. ``"auto"`` (the default when ``prior`` is given): the guarded portfolio
        (RGPE's ranking-weighted ensemble, in which the study's own GP competes with the sources, so
        it falls back to the plain GP when no source ranks the target's observations better; without
        RGPE's dilution guard, see docs/transfer.md). ``"envelope"`` (003), ``"rgpe"``, ``"diff"``,
        ``"efficient"``, ``"collaborative"`` or ``"generic"`` build that transfer model with the prior
        as source task(s) (one per task label or study). With any of these, the first points are a
        warm design chosen from the sources (:meth:`warm_design`; 2-3 points unless ``n_initial`` is
        given). ``"none"`` tells the prior as trials of this same objective. To pass a transfer model
        you built yourself, use ``model=`` instead (its sources must then be encoded and in the
        maximisation convention).
    max_prior : int, optional
        At most this many prior rows reach the model (all rows stay stored). Default: 1000 per source
        for the per-source transfer methods (``auto``, ``rgpe``) and in all for ``transfer="none"``;
        256 in all for the methods that pool the sources into one GP (``envelope``, ``diff``,
        ``efficient``, ``collaborative``, ``generic``), shared equally among the sources, each
        keeping its best rows (:func:`warmbo.prior.prior_subset_by_source`): the bounded source
        representation that keeps their asks under 1 s with 50 sources of 300 rows.
    max_trials : int, optional
        At most this many of the study's own complete trials reach the model (all stay stored): the
        best quarter by value and the rest at random with the study's seed, as for prior rows
        (:func:`warmbo.prior.prior_subset`). Default: all of them, with a :class:`LargeStudyWarning`
        once above :data:`LARGE_STUDY`, since each ask then fits an exact GP on all (O(n^3)).
    heartbeat_grace : float, optional
        Seconds a pending trial's worker may stay silent. Then the next ask of another worker (or of
        the same ``worker`` name started again: only trials this object gave out are never taken
        from it) reclaims the trial (``reclaim``), so a crashed machine never blocks a study and its
        point is not lost. :meth:`run` sends heartbeats on its own (with or without a grace period: `warmbo
        status` shows them); an ask/tell loop calls :meth:`heartbeat` while it evaluates. None
        (default): trials are never reclaimed (an evaluation may take any time).
    output_transform : {"yeo-johnson", "none", "auto"}, optional
        The scale on which the GP sees the objective (:mod:`warmbo.output_transform`). ``"none"``:
        the signed values, standardised by the GP. ``"yeo-johnson"``: a power transform fitted to the
        complete trials at every ask, for heavy-tailed objectives. ``"auto"``: whichever of the two
        gives the complete trials the higher likelihood in your units (the GP's marginal likelihood
        with the transform's Jacobian, :func:`~warmbo.output_transform.log_evidence`), decided when
        the number of complete trials is a power of two and stored with the study
        (:attr:`output_scale`). Default: ``"yeo-johnson"`` for the optimizer's own GP (measured on
        the quality suite, docs/optimizer.md: lower regret after 50 evaluations than ``"none"`` in
        85 of 120 paired runs, higher in 35; ``"auto"`` kept the plain scale where the transform
        helped and won only 52 of 120); ``"none"`` with a model you pass (``model=``), which is used
        as it is, and with a transfer model. ``transfer="auto"`` also takes ``"yeo-johnson"``: its
        ensemble then sees the study's values as a cold study's GP does (session 47,
        docs/transfer.md, "Yeo-Johnson": better on the lab campaign, HPOBench and continuous related
        sources, behind on the SVM grids); the other transfer methods put
        the sources' values and the study's on one scale themselves and refuse it, and ``"auto"``,
        which compares GP likelihoods, is refused with any transfer model. A resumed study that
        transfers with ``auto`` keeps the scale its last ``auto`` optimizer used
        (:func:`transfer_transform`).
        :meth:`predict` maps back to your units; :meth:`audit` works on the transformed scale
        (coverage is the same on both: the transform is monotone).
    reclaim : {"retry", "fail"}
        What happens to a reclaimed trial: ``"retry"`` (default) hands the same trial (same id and
        point) to the asking worker as its next suggestion; ``"fail"`` marks it failed.
    failures : {"classifier", "liar"}, optional
        What the model makes of failed trials. ``"classifier"`` (default for a new study): EI (or PI)
        over the complete trials, weighed by the probability that an evaluation succeeds, from a
        Gaussian-process classifier of the study's outcomes (Gelbart et al. 2014;
        :mod:`warmbo.feasibility`). ``"liar"``: each failed point fantasised at the worst value
        observed (a constant liar, as before session 43). Either way a failed point is not proposed
        again. With an acquisition other than EI or PI (UCB, the posterior mean), or a multi-task
        optimizer, failures are always the liar's. Kept with the study: an existing study opened
        without it keeps its own (studies made before session 43 take the default). Measured in
        docs/optimizer.md.

    Examples
    --------
    >>> import warmbo as wb
    >>> space = wb.Space([wb.Float("x", -2.0, 2.0)])
    >>> opt = wb.Optimizer(space, seed=0)
    >>> best = opt.run(lambda p: (p["x"] - 0.5) ** 2, budget=12, progress=False)
    >>> abs(best.params["x"] - 0.5) < 0.1
    True
    """

    def __init__(
        self,
        space: Space,
        model=None,
        acquisition: Acquisition | None = None,
        schedule: Schedule | None = None,
        maximize: bool = False,
        n_initial: int | None = None,
        seed: int | None = None,
        storage=None,
        kernel: Kernel | None = None,
        worker: str | None = None,
        prior=None,
        transfer: str | None = None,
        max_prior: int | None = None,
        heartbeat_grace: float | None = None,
        reclaim: str = "retry",
        output_transform: str | None = None,
        max_trials: int | None = None,
        failures: str | None = None,
        **unknown,
    ):
        if unknown:
            _refuse_unknown(unknown, type(self).__name__)
        if failures is not None and failures not in FAILURE_MODELS:
            raise ValueError(
                f"failures must be one of {', '.join(map(repr, FAILURE_MODELS))}, got {failures!r}"
            )
        self.failures = failures or FAILURE_MODELS[0]
        if isinstance(space, list | tuple) and space and all(isinstance(p, Parameter) for p in space):
            space = Space(list(space))  # (a list of parameters, as WarmboSearchCV takes it)
        if not isinstance(space, Space):
            raise ValueError(_not_a_space(space))
        if not isinstance(maximize, bool):
            raise ValueError(f"maximize must be True or False, got {maximize!r}")
        # the thread settings read from the environment, checked here: a bad one surfaced only when a
        # reopened transfer study rebuilt its source GPs, so `warmbo suggest` failed mid-study
        blas_threads(), source_threads()
        n_initial_given = n_initial is not None
        if n_initial is None:
            n_initial = cold_design_size(space)
        check_int(n_initial, "n_initial", 1)
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**63
        ):
            raise ValueError(f"seed must be a non-negative integer (below 2**63) or None, got {seed!r}")
        if kernel is not None and not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a warmbo Kernel, got {kernel!r}")
        check_kernel_dim(kernel, space)
        if not self._multitask:
            _refuse_multitask(storage)
        if schedule is not None and not isinstance(schedule, Schedule):
            raise ValueError(f"schedule must be a warmbo.bounds.Schedule, got {schedule!r}")
        if acquisition is not None and not isinstance(acquisition, Acquisition):
            raise ValueError(f"acquisition must be a warmbo Acquisition, got {acquisition!r}")
        if schedule is not None:
            if acquisition is None:
                acquisition = UCB(schedule)
            elif isinstance(acquisition, UCB):
                # (an explicit UCB(Srinivas()) equals UCB()'s default, and was replaced silently)
                if acquisition.schedule_given and acquisition.schedule != schedule:
                    raise ValueError(
                        f"the acquisition {acquisition!r} has its own schedule and schedule= gives "
                        f"another, {schedule!r}: give the schedule once, in UCB(...) or as schedule="
                    )
                acquisition = replace(acquisition, schedule=schedule)
            else:
                raise ValueError(f"schedule applies to UCB only, but acquisition is {acquisition!r}")
        if isinstance(model, type):  # a class passes the method check below, then get_params() failed
            name = model.__name__
            raise ValueError(f"model must be a model object, got the class {name}: pass {name}(...)")
        if model is not None:
            # what the protocol needs before a fit, checked here (clone and add are optional): a
            # scikit-learn regressor passed fit and predict, then failed with "no attribute
            # 'n_observations'" after the design's evaluations were paid for
            missing = [f"{m}()" for m in ("fit", "predict") if not callable(getattr(model, m, None))]
            foreign = type(model).__module__.split(".")[0] == "sklearn"  # (a model of the user's own
            # may set n_observations in fit: checked after its first fit, _check_fitted_protocol)
            if foreign and not any(hasattr(owner, "n_observations") for owner in (type(model), model)):
                missing.append("n_observations")
            if missing:
                raise ValueError(
                    f"model must follow warmbo's model protocol (fit, predict -> (mean, std), "
                    f"n_observations, X_train_, y_train_: docs/optimizer.md, 'Your own model'), but "
                    f"{type(model).__name__} has no {', '.join(missing)}; a scikit-learn regressor needs a "
                    "wrapper (a subclass of warmbo.models.base.RegressorModel), or use kernel= with "
                    "warmbo's GP"
                )
        if transfer is not None and transfer not in TRANSFER_METHODS:
            raise ValueError(TRANSFER_METHODS.unknown(transfer))
        if transfer not in (None, "none") and prior is None:
            raise ValueError(f"transfer={transfer!r} transfers from source data: give them with prior=")
        if transfer not in (None, "none") and model is not None:
            raise ValueError(
                "give either model= (a transfer model you built) or transfer= (one warmbo builds)"
            )
        refuse_dropped_model(prior is not None, transfer, model is not None, kernel is not None)
        self.space = space
        self.maximize = maximize
        self.n_initial = int(n_initial)
        #: whether the last :meth:`run` stopped at its ``timeout`` before its budget
        self.stopped_by_timeout = False
        # the trials this optimizer gave out (asked, took over): heartbeat_grace never reclaims them
        # from it, but it does reclaim a silent trial of the same worker name that it did not give out
        self._handed_out: set[int] = set()
        self.seed = None if seed is None else int(seed)
        # prior data without a named method: the guarded portfolio (transfer="auto")
        self.transfer = ("auto" if prior is not None else "none") if transfer is None else transfer
        pooled = self.transfer != "none" and not separate_sources(self.transfer)
        default_max_prior = POOLED_PRIOR_ROWS if pooled else PRIOR_ROWS
        self.max_prior = check_int(default_max_prior if max_prior is None else max_prior, "max_prior", 1)
        # (a cap below the default is the user's choice: the subset warning must not blame speed)
        self._max_prior_given = self.max_prior < default_max_prior
        self.max_trials = None if max_trials is None else check_int(max_trials, "max_trials", 2)
        if self.max_trials is not None and self.max_trials < SMALL_MAX_TRIALS:
            # (a user test took --max-trials for Optuna's n_trials: 20 trials ran on a 3-trial model)
            warnings.warn(
                f"max_trials={self.max_trials} lets the model see at most {self.max_trials} of the study's "
                "trials (a cap for studies of thousands, where an exact GP is slow), so it learns little "
                "from the rest; the number of trials to run is run's budget (warmbo optimize --budget)",
                SmallModelWarning,
                stacklevel=2,
            )
        self._large_warned = False
        if heartbeat_grace is not None:
            check_seconds(heartbeat_grace, "heartbeat_grace", or_none=True)
        if reclaim not in ("retry", "fail"):
            raise ValueError(f"reclaim must be 'retry' or 'fail', got {reclaim!r}")
        resolved = ("auto" if prior is not None else "none") if transfer is None else transfer
        self._transform_default = output_transform is None and model is None
        if output_transform is None:  # the transform for the optimizer's own GP; a model you pass as is
            output_transform = "yeo-johnson" if model is None and resolved == "none" else "none"
        if output_transform not in OUTPUT_TRANSFORMS:
            raise ValueError(
                f"unknown output_transform {output_transform!r}; choose one of {', '.join(OUTPUT_TRANSFORMS)}"
            )
        if (
            output_transform == "auto"
            and model is not None
            and not callable(getattr(model, "log_marginal_likelihood", None))
        ):
            raise ValueError(
                "output_transform='auto' compares the GP's marginal likelihood on the two scales; "
                f"{type(model).__name__} has no log_marginal_likelihood() (use 'none' or 'yeo-johnson')"
            )
        if output_transform == "auto" and resolved != "none":
            raise ValueError(
                "output_transform='auto' compares the GP's marginal likelihood on the two scales; a transfer "
                "model has none (use 'yeo-johnson' or 'none')"
            )
        if output_transform != "none" and resolved not in ("none", TRANSFORMED_TRANSFER):
            raise ValueError(
                f"output_transform={output_transform!r} applies to the optimizer's own GP and to "
                f"transfer='auto'; transfer={resolved!r} puts the sources' values and the target's on one "
                "scale itself (use transfer='auto', transfer='none' or output_transform='none')"
            )
        self.output_transform = output_transform
        self.heartbeat_grace = None if heartbeat_grace is None else float(heartbeat_grace)
        self.reclaim = reclaim
        self._prior_warned = False
        self._ensemble_warned = False
        seed_given = self.seed is not None
        if not seed_given:
            # the study's stored seed when it exists, else one drawn now and stored with the study: the
            # design stays one Sobol sequence across asks, processes and reopenings (a fresh scramble
            # per ask would make it i.i.d. uniform), and a reopened study's transfer model sees the
            # same prior rows and draws as the first object's
            stored_seed = _stored_seed(storage)
            self.seed = (
                stored_seed if stored_seed is not None else int(np.random.SeedSequence().entropy % (2**31))
            )
        # (a prior study with parameters removed since is read on the shared ones by a transfer
        # method, which weighs it; never as this study's own trials, transfer="none")
        self.prior = (
            None if prior is None else as_prior(prior, space, maximize, storage, extra=resolved != "none")
        )
        # the prior's identity in stored records (a hash of every row: 50 ms for 15,000 rows, so once)
        self._prior_digest = None if self.prior is None else digest(self.prior)
        self._source: TaskData | None = None  # the transfer sources, signed and encoded
        self._design_rows: tuple | None = None  # (X, y, task) of every source row, for the design
        self._warm: WarmDesign | None = None
        self._warm_extended: np.ndarray | None = None  # the design's next points for a batch start
        self.model = self._build_model(model, kernel, n_initial_given)
        self.acquisition = acquisition if acquisition is not None else EI()
        self.worker = worker or default_worker()
        settings = {
            "direction": "maximize" if maximize else "minimize",
            "n_initial": self.n_initial,
            "warm_design": self._source is not None,  # n_initial is a warm design's size
            "seed": self.seed,
            "model": repr(self.model),
            # what load() cannot rebuild from the repr above: a model or kernel the caller passed
            "model_given": "model" if model is not None else ("kernel" if kernel is not None else None),
            "acquisition": repr(self.acquisition),
            "output_transform": self.output_transform,
            "failures": self.failures,
        }
        self.study = Study(storage, space, settings)
        if failures is None and self.study.settings.get("failures") in FAILURE_MODELS:
            self.failures = self.study.settings["failures"]  # (a study keeps its own unless one is given)
        # (a study made before output transforms stores none: its GP saw the plain scale, and it
        # stays there, as the docs say; the upgrade user test found it switched to yeo-johnson)
        kept_transform = self.study.settings.get("output_transform", "none")
        if (
            model is None
            and resolved == "none"
            and kept_transform in OUTPUT_TRANSFORMS
            and kept_transform != self.output_transform
        ):
            # a reopened study keeps its own scale, as it keeps its failure model: before, the README's
            # `Optimizer(space, storage=url)` of a study made with output_transform="none" went on with
            # yeo-johnson without a word (the CLI refuses another --output-transform)
            if self._transform_default:
                self.output_transform = kept_transform
            else:
                _warn(
                    f"study {redacted(self.study.url)!r} was made with output_transform={kept_transform!r}; "
                    f"this Optimizer uses {self.output_transform!r} (the study keeps {kept_transform!r} "
                    "for the next one that opens it; leave output_transform out to go on with it)",
                    UserWarning,
                )
        stored_seed = self.study.settings.get("seed")
        if not seed_given and stored_seed is not None and int(stored_seed) != self.seed:
            # another process created the study between the look above and now: use its seed
            self.seed = int(stored_seed)
            self.model = self._build_model(model, kernel, n_initial_given)
        if self.space.is_finite:
            self.n_initial = min(self.n_initial, int(self.space.cardinality))
        if self.prior is not None and self.transfer == "none":
            self._import_prior(prior, storage)
        self._source_fits_stored = False
        self._source_fits_count = 0  # source GPs' fits the study holds (_store_source_fits)
        if self._source is not None and transfer is None:
            kept = self.stored_transfer(self.study).get("transfer")
            if kept is not None and kept != self.transfer:  # (it was replaced without a word)
                _warn(
                    f"study {redacted(self.study.url)!r} transfers with transfer={kept!r}; this Optimizer, "
                    f"given prior= without transfer=, uses {self.transfer!r} and stores it with the "
                    f"study: pass transfer={kept!r} to keep the study's method (Optimizer.load(url, "
                    "prior=...) keeps it too)",
                    UserWarning,
                )
        if self.prior is not None and self.transfer != "none" and not self.study.readonly:
            self._store_sources()  # (also sources all left out as uninformative: they replace the stored)
        if self.prior is not None and self.transfer != "none":
            self._warn_sources_are_trials()
        if self._source is not None and self.transfer == TRANSFORMED_TRANSFER and not self.study.readonly:
            # the scale auto's ensemble sees, for the next object that resumes the study
            # (transfer_transform): a study made without sources keeps the plain GP's in its settings
            if self.study.get_meta(TRANSFER_TRANSFORM_META) != self.output_transform:
                self.study.set_meta(TRANSFER_TRANSFORM_META, self.output_transform)
        if self._source is not None:
            self._restore_source_fits()
        # the probe's verdict against the sources (transfer="auto"), once reached: kept with the study,
        # so that every later object (`warmbo suggest`, status, another worker) sets them aside too
        self._kernel = kernel
        self._refuted: Refutation | None = None
        self._other_verdict = False  # the study holds a verdict against other sources
        self._restore_refutation()
        # given no sources on a study that stores some, the first ask says it asks without them
        # (tells, `warmbo observe` and inspection do not need them)
        self._check_stored_sources = (
            self._source is None and prior is None and transfer is None and model is None
        )
        # ask() by hand on the main thread: (trial id, tells so far) of its last suggestion, to say once
        # when ask() is called again with that trial still pending and nothing told since (a notebook
        # cell run twice piled up pending trials silently); the integrations turn it off
        self._asks_by_hand = True
        self._last_ask: tuple[int, int] | None = None
        self._tells = 0
        self._unanswered_warned = False
        self._repeats_said = False  # (an ask by hand that repeats measured points: said once)
        self.model_: Any = None  # the last fitted model (its class follows model=), None before one
        # (id, value) of the complete trials model_ was fitted to (a value can be amended)
        self._model_basis: tuple[tuple[int, float], ...] = ()
        self._inspected = None  # (basis, model) of the last fit made for predict/transfer_report
        self._fixed_fit = None  # (prototype, last fit) of a model without hyperparameter fitting
        self._screen = None  # the fixed fits' Sobol screen, their candidates' seed: _tracking_screen
        self._screen_seed = 0
        self._anchor_blocks: dict[tuple[int, bytes], np.ndarray] = {}  # the last ask's, by anchor
        self._categorical = any(isinstance(p, Categorical) for p in space.params)
        self._grid_groups: int | None = None  # _grid_points, counted at the first need
        self._warm_start: dict = self._stored_warm_start()  # warm_start_overrides() of the last fit
        # the number of complete trials at the last fit that a cold fit checked (or that was cold
        # itself): below _COLD_REFIT_BELOW, no two warm fits in a row go unchecked (see fit_model)
        self._cold_checked_at: int | None = None
        # output_transform="auto": the chosen scale (stored with the study), its evidences, and the
        # (warm start, fixed fit) of each scale's last fit
        choice = self.study.get_meta("output_transform_choice")
        self._transform_choice: str | None = choice if choice in ("none", "yeo-johnson") else None
        self._stored_choice = self._transform_choice
        self._transform_evidence: dict[str, float] = {}
        self._scale_states: dict[str, tuple] = {}
        # the reads' own chain of warm starts (the state above after the last read's fit), valid while
        # no ask has fitted since (_ask_fits): a read in a loop starts from the last read, as before
        self._ask_fits = 0
        self._read_state: tuple[int, tuple] | None = None
        # id -> (params, encoding, types, the study's own params dict or None): see _encode_trials
        self._encoded: dict[int, tuple[dict, np.ndarray, tuple, dict | None]] = {}
        self._cold_heads: dict[int, np.ndarray] = {}  # see _cold_design_head
        self._cold_permutation: np.ndarray | None = None  # see _cold_order

    def _build_model(self, model, kernel: Kernel | None, n_initial_given: bool):
        """The model prototype: ``model`` as given, the transfer model built from the prior (its rows
        subset with ``self.seed``; sets ``_source`` and ``_design_rows``, and the warm design's size
        unless ``n_initial`` was given), or the default GP."""
        prior = None if self.prior is None or self.transfer == "none" else _informative(self.prior)
        if prior is None and self.prior is not None and self.transfer != "none" and self._transform_default:
            self.output_transform = "yeo-johnson"  # every source left out: the cold optimizer's own GP
        if prior is not None:
            # sources are encoded and signed exactly as this optimizer's own trials are
            signed = self._signed(np.asarray(prior.y, dtype=np.float64))
            if separate_sources(self.transfer) and prior.task is not None:
                # one GP per source: the cap holds per source (each fit is O(rows^3) on its own)
                labels = prior.task
                keep = np.sort(
                    np.concatenate(
                        [
                            np.flatnonzero(labels == t)[
                                prior_subset(signed[labels == t], self.max_prior, self.seed)
                            ]
                            for t in dict.fromkeys(labels.tolist())
                        ]
                    )
                )
            elif prior.task is not None:
                # one GP on every source: the cap holds in all, shared equally among the sources
                keep = prior_subset_by_source(signed, prior.task, self.max_prior, self.seed)
            else:
                keep = prior_subset(signed, self.max_prior, self.seed)
            if keep.size < signed.size:
                self._warn_prior_subset(keep.size, signed.size)
            source = prior.subset(keep, y=signed[keep])  # (validated rows: not again)
            model = transfer_model(self.transfer, source, seed=self.seed)
            self._source = source
            # the warm design reads every source row (a k-d tree: cheap), not the model's subset
            self._design_rows = (np.asarray(prior.X), signed, prior.task)
            if not n_initial_given:  # the warm design's size replaces the cold default
                self.n_initial = design_size(max(1, len(source.tasks)))
        if model is None:
            return default_model(self.space.dim, self.seed, self._default_kernel(kernel))
        return _seeded(model, self.seed)

    def _default_kernel(self, kernel: Kernel | None) -> Kernel:
        """The kernel given, else the default kernel with one lengthscale per parameter (a
        categorical's one-hot columns share one: Space.lengthscale_groups)."""
        if kernel is not None:
            return kernel
        return default_kernel(self.space.dim, self.space.lengthscale_groups())

    def _warn_sources_are_trials(self) -> None:
        """Say so when every row of the transfer sources is already one of the study's imported prior
        trials (imported before with ``transfer="none"``): the model would see each evaluation twice,
        as a trial and as a source's (the upgrade user test: `suggest --prior old.db` without
        `--transfer none` on a study that had imported old.db gave it weight 1.00 beside its own
        copy). Only complete prior rows are compared, exactly (parameters and value)."""
        imported: dict[str, int] = {}
        for trial in self.study.trials((COMPLETE,)):
            if trial.worker == PRIOR_WORKER:
                key = _row_key(trial.params, float(trial.value))
                imported[key] = imported.get(key, 0) + 1
        if not imported:
            return
        # (the prior's values are read in this study's direction, as its imported trials hold them)
        rows = [_row_key(p, float(v)) for p, v in zip(self.prior.params, self.prior.y, strict=True)]
        if all(r in imported for r in rows):
            _warn(
                f"the {len(rows)} rows of prior= are already trials of study "
                f"{redacted(self.study.url)!r} (imported with transfer='none'): transferring from them "
                "too makes the model see each twice; leave prior= out (the trials are the study's own), "
                "or give it with transfer='none' to import only rows that are new",
                UserWarning,
            )

    def _store_sources(self) -> None:
        """Keep the transfer sources and how they are used in the study (:func:`warmbo.prior.sources_text`),
        so that :meth:`load` (``warmbo suggest``, a resumed run, another machine) transfers from them as
        this object does. Written once per set of sources: the small ``transfer_sources`` key says which
        set the large ``transfer_source_rows`` key holds; both are written in one transaction."""
        # (with the warm design's size: the study's settings hold the size it was created with,
        # which is a cold design's when the sources came later)
        settings = {"transfer": self.transfer, "max_prior": self.max_prior, "n_initial": self.n_initial}
        summary = json.dumps({"digest": self._prior_digest, **settings}, sort_keys=True)
        if self.study.get_meta(_SOURCES_KEY) == summary:
            return
        previous = (_sources_summary(self.study) or {}).get("digest")
        if previous is not None and previous != self._prior_digest:
            # (a user test reopened a study with a second file, meaning "these too", and its 30
            # stored rows were replaced without a word)
            url = redacted(self.study.url)
            _warn(
                f"study {url!r} stored other transfer sources; prior= replaced them with these "
                f"{len(self.prior)} evaluations (in Python the sources given are the study's whole set): "
                "to transfer from both, give the earlier sources together with the new ones",
                SourcesReplacedWarning,
            )
        # one transaction: a process killed while storing them left the rows without the summary,
        # and the study then reopened cold without a word (a user test, kill -9 at creation)
        rows = sources_text(self.prior, settings, self._prior_digest)
        self.study.set_metas({_SOURCE_ROWS_KEY: rows, _SOURCES_KEY: summary})

    def _source_fits_key(self) -> str:
        """What the source GPs' stored hyperparameters depend on: the sources, the method, the cap on
        rows and the seed (which draws the rows a source GP sees), and the model's settings."""
        return json.dumps(
            {
                "digest": self._prior_digest,
                "transfer": self.transfer,
                "max_prior": self.max_prior,
                "model": repr(self.model),
                "seed": self.seed,
                "dim": self.space.dim,
            },
            sort_keys=True,
        )

    def _restore_source_fits(self) -> None:
        """Hand the source GPs' hyperparameters stored by an earlier object on this study to the
        transfer model (RGPE's ``restore_source_fits``), so a reopened study's first model ask
        conditions each source GP on its rows instead of fitting it again (50 sources x 300 rows:
        1.6 s -> see docs/transfer.md)."""
        restore = getattr(self.model, "restore_source_fits", None)
        text = self.study.get_meta(_SOURCE_FITS_KEY)
        if not callable(restore) or text is None:
            return
        try:
            record = json.loads(text)
            if record["key"] != self._source_fits_key():
                return
            fits = record["fits"]
            if restore(fits, self.space.dim):
                self._source_fits_count = sum(f is not None for f in fits)
                self._source_fits_stored = all(f is not None for f in fits)
        except (ValueError, KeyError, TypeError):
            return  # a record of another version: the source GPs are fitted again

    def _store_source_fits(self, reference) -> None:
        """Keep the source GPs' hyperparameters fitted so far (see :meth:`_restore_source_fits`),
        whenever more are fitted than the study holds: the design asks fit the sources a few at a
        time (``prepare``), and each `warmbo suggest` is a process of its own, which threw them away
        (at 100 sources x 1000 rows the first model ask then fitted all of them, ~5 s)."""
        fits_of = getattr(reference, "source_fits", None)
        if self._source_fits_stored or not callable(fits_of) or self.study.readonly:
            return
        fits = fits_of(self.space.dim, partial=True)
        count = 0 if fits is None else sum(f is not None for f in fits)
        if count > self._source_fits_count:
            # what another process stored meanwhile (two `warmbo suggest` at once) is kept too
            try:
                record = json.loads(self.study.get_meta(_SOURCE_FITS_KEY) or "{}")
                theirs = record["fits"] if record.get("key") == self._source_fits_key() else None
            except (ValueError, KeyError, TypeError, AttributeError):
                theirs = None
            if isinstance(theirs, list) and len(theirs) == len(fits):
                fits = [mine if mine is not None else other for mine, other in zip(fits, theirs, strict=True)]
                count = sum(f is not None for f in fits)
            self.study.set_meta(_SOURCE_FITS_KEY, json.dumps({"key": self._source_fits_key(), "fits": fits}))
            self._source_fits_count = count
            self._source_fits_stored = count == len(fits)

    def _warn_stored_sources(self) -> None:
        summary = _sources_summary(self.study)
        if summary is None:
            return
        method = summary.get("transfer", "?")
        warnings.warn(
            f"this study transfers from stored sources (transfer={method!r}); this optimizer was given no "
            "prior= and asks without them. Optimizer.load(url) reopens the study with its sources.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )

    @staticmethod
    def stored_sources(study: Study) -> dict:
        """The transfer arguments a study stores (``{"prior": TaskData, "transfer": ..., "max_prior":
        ...}``), empty for a study that does not transfer; :class:`~warmbo.data.DataError` when the
        stored sources are unreadable."""
        text = study.get_meta(_SOURCE_ROWS_KEY)
        if study.get_meta(_SOURCES_KEY) is None and text is None:
            return {}
        # (rows without their summary: written by a version that stored them in two steps and was
        # stopped between the two; the rows' record holds the settings, so they are used)
        try:
            if text is None:
                raise DataError("the study names transfer sources but holds none")
            data, stored = sources_from_text(text, study.space)
            method, max_prior = stored["transfer"], stored["max_prior"]
            if method not in TRANSFER_METHODS or method == "none":
                raise DataError(f"the study's stored transfer method {method!r} is unknown")
            check_int(max_prior, "the stored max_prior", 1)
            n_initial = stored.get("n_initial")  # absent from records of session 14
            if n_initial is not None:
                check_int(n_initial, "the stored n_initial", 1)
        except (DataError, KeyError, TypeError, ValueError) as exc:
            problem = (
                str(exc)
                if isinstance(exc, DataError)
                else f"the study's stored transfer sources are unreadable ({exc!r})"
            )
            raise DataError(
                f"{problem}; reopen the study with its sources given again (prior=, or warmbo optimize "
                "--prior FILE) or without them (transfer='none', or --transfer none); its trials are intact"
            ) from None
        out = {"prior": data, "transfer": method, "max_prior": max_prior}
        return out if n_initial is None else {**out, "n_initial": n_initial}

    @staticmethod
    def stored_transfer(study: Study) -> dict:
        """The transfer method and row cap a study stores with its sources (``{"transfer": ...,
        "max_prior": ...}``), read from their small summary record (not the rows); empty for a study
        without sources, or when the record cannot be read."""
        try:
            record = _sources_summary(study) or {}
            out = {
                "transfer": record["transfer"],
                "max_prior": check_int(record["max_prior"], "max_prior", 1),
            }
        except (ValueError, KeyError, TypeError):
            return {}
        return out if out["transfer"] in TRANSFER_METHODS and out["transfer"] != "none" else {}

    @staticmethod
    def _created_n_initial(study: Study, transferring: bool) -> int | None:
        """The design size stored when ``study`` was created, if that design was of the kind a
        reopening uses (warm with transfer sources, cold without), else None (the default size)."""
        settings = study.settings
        warm = settings.get("warm_design")
        if warm is None:  # a study made before session 15: warm if it holds transfer sources
            warm = _sources_summary(study) is not None
        return settings.get("n_initial") if bool(warm) == transferring else None

    @classmethod
    def load(cls, storage, **overrides) -> Optimizer:
        """Reopen a stored study with its stored space, direction, design size, seed and output
        transform, and, for a study that transfers, its sources and transfer method (stored by the
        optimizer that was first given them). Among ``overrides``, ``prior=`` replaces the stored
        sources (used with the stored method and ``max_prior`` unless ``transfer=`` names another),
        ``transfer=`` the stored method (``"none"``: no sources), ``max_prior=`` the stored cap.

        The design size is the warm design's stored with the sources when they are used, otherwise
        the size stored at the study's creation if that design was of the same kind (warm or cold),
        otherwise the default (:func:`default_n_initial`, or the warm design's).

        A GP-UCB acquisition is restored with its schedule (the stored ``repr``, read by
        :func:`~warmbo.bounds.parse_schedule`, which evaluates nothing), an EI or PI with its
        incumbent and margin. A model or kernel passed at creation, or another acquisition, cannot
        be rebuilt from what the study stores: ``load``
        then warns (:class:`RestoreWarning`) and resumes with the default, unless ``model=`` /
        ``kernel=`` / ``acquisition=`` are given again.
        """
        study = Study(storage)
        settings = study.settings
        kwargs = {"maximize": settings.get("direction") == "maximize", "seed": settings.get("seed")}
        if not cls._multitask:  # refused before any warning about what it could not restore
            _refuse_multitask(storage)
        kwargs.update(cls._restored_acquisition(settings, overrides))
        if "output_transform" in settings:  # as stored ("none" for studies made before "auto")
            kwargs["output_transform"] = settings["output_transform"]
        elif not cls._multitask:  # (made before output transforms: the plain scale it was made on)
            kwargs["output_transform"] = "none"
        if not {"prior", "model"} & set(overrides) and overrides.get("transfer") != "none":
            try:
                stored = cls.stored_sources(study)
            except DataError:
                study.close()
                raise
            if stored:
                if "transfer" in overrides and overrides["transfer"] != stored["transfer"]:
                    del stored["max_prior"]  # another method: its own default cap, unless given
                kwargs.update(stored)
            elif settings.get("warm_design"):
                # created to transfer, but the sources were never stored: its creator was stopped
                # between creating the study and storing them (a user test, kill -9 at creation)
                _warn(
                    f"study {redacted(study.url)!r} was created to transfer from sources, but they were "
                    "not stored (the process that created it stopped first): it is reopened without "
                    "them, as a cold start; give them again with prior= (warmbo optimize/suggest: --prior)",
                    UserWarning,
                )
            elif study.get_meta("transfer_report") is not None:
                # made by a version that did not store its sources (before session 15): it asked
                # with them, and now goes on without (the upgrade user test: silent, while status
                # still showed its last weights)
                shown = re.sub(r"[?&]mode=ro$", "", redacted(study.url))  # (status opens it read-only)
                _warn(
                    f"study {shown!r} transferred from sources that an earlier version of "
                    "warmbo did not store with it: it is reopened without them, as a cold start; give "
                    "them again with prior= (warmbo optimize/suggest: --prior) to go on transferring",
                    UserWarning,
                )
        elif overrides.get("prior") is not None and "model" not in overrides:
            # new sources for a study that transfers: the stored method (and its cap) as before,
            # not the default (auto) in its place; transfer= naming the stored method keeps its cap
            # too (before, it fell back to the method's default without a word)
            kept = cls.stored_transfer(study)
            if kept and overrides.get("transfer", kept["transfer"]) == kept["transfer"]:
                kwargs.update(kept)
        kwargs.update(overrides)
        transferring = kwargs.get("prior") is not None and kwargs.get("transfer") != "none"
        if kwargs.get("n_initial") is None:  # neither given nor stored with the sources
            kwargs["n_initial"] = cls._created_n_initial(study, transferring)
        if transferring and "output_transform" not in overrides:
            # the transform the study was made with, if it was made with sources and the method takes
            # it (auto: "yeo-johnson" when asked for); else the constructor's default for the method
            # ("none" for a transfer model; the plain GP's when every source is left out): a study
            # made without sources stored the plain GP's "yeo-johnson"
            kwargs["output_transform"] = transfer_transform(
                kwargs.get("transfer") or "auto", settings, study.get_meta(TRANSFER_TRANSFORM_META)
            )
        study.close()
        return cls(study.space, storage=storage, **kwargs)

    @staticmethod
    def _restored_acquisition(settings: dict, overrides: dict) -> dict:
        """The stored acquisition as load() keywords, and a warning for what cannot be restored."""
        out = {}
        lost = []
        given = settings.get("model_given")
        if given and not {"model", "kernel"} & set(overrides):
            lost.append((given, str(settings.get("model"))))
        stored = settings.get("acquisition")
        if stored is not None and not {"acquisition", "schedule"} & set(overrides):
            schedule = parse_schedule(stored)
            incumbent = _STORED_INCUMBENT.fullmatch(stored)
            if schedule is not None and stored.startswith("UCB("):
                out["acquisition"] = UCB(schedule)
            elif stored == repr(EI()):
                pass  # the default
            elif incumbent is not None:
                kind = {"EI": EI, "TAF": TAF, "PI": PI}[incumbent["kind"]]
                out["acquisition"] = kind(incumbent=incumbent["incumbent"], xi=float(incumbent["xi"]))
            else:
                lost.append(("acquisition", stored))
        if lost:
            warnings.warn(RestoreWarning(lost), stacklevel=user_stacklevel())
        return out

    # ------------------------------------------------------------------ state
    @property
    def history(self) -> History:
        """All trials in id order (a list with ``to_dataframe()``)."""
        return self.study.trials()

    @property
    def best(self) -> Best | None:
        """Best complete trial as ``(params, value)``, or None before the first value."""
        complete = self.study.trials((COMPLETE,))
        if not complete:
            return None
        values = np.array([t.value for t in complete])
        i = int(np.argmax(values) if self.maximize else np.argmin(values))
        return Best(complete[i].params, float(values[i]))

    @property
    def n_finished(self) -> int:
        """The study's finished trials as :meth:`run`'s ``budget`` counts them: complete or failed,
        imported prior rows (``add_prior``, ``prior=`` with ``transfer="none"``) not counted. So
        ``run(f, budget=opt.n_finished + N)`` evaluates ``N`` more (Optuna's ``n_trials=N``);
        ``len(opt.study)`` counts the prior rows and pending trials too (a user test's recipe with
        it ran 35 evaluations for 5 on a study holding 30 prior rows)."""
        return self._finished()

    @property
    def output_scale(self) -> str | None:
        """The scale the GP sees: ``"none"`` or ``"yeo-johnson"``; with ``output_transform="auto"``
        the last choice (stored with the study), None before the first model ask."""
        return self._transform_choice if self.output_transform == "auto" else self.output_transform

    def _signed(self, values: np.ndarray) -> np.ndarray:
        return values if self.maximize else -values

    # ------------------------------------------------------------------ model
    @blas_limited
    def fit_model(self, trials: Sequence[Trial] | None = None):
        """A fresh copy of the model fitted to the complete trials (maximisation convention).

        Returns None when fewer than two trials are complete. A fit for reading (this,
        :meth:`predict`, :meth:`audit`, :meth:`report`) leaves what the next ask starts from as it
        was: only an ask's own fit is the previous fit of the next ask.
        """
        trials = self.study.trials() if trials is None else trials
        return self._fit_trials(self._model_trials([t for t in trials if t.state == COMPLETE]))

    def _ask_fit(self, trials: Sequence[Trial]):
        """The fit an ask uses: :meth:`fit_model`'s, kept as the start of the next ask's fit."""
        self._ask_fits += 1
        return self._fit_trials(self._model_trials([t for t in trials if t.state == COMPLETE]), for_ask=True)

    @blas_limited
    def _fit_trials(self, complete: list[Trial], for_ask: bool = False):
        """:meth:`fit_model` on the complete trials :meth:`_model_trials` chose, in their order (the
        model's rows); None below two. Only an ask's fit (``for_ask``) keeps its hyperparameters, its
        factor and its output scale for the next ask to start from: before, a read (``predict``,
        ``audit``, ``report``) fitted in between moved the next ask's warm start, and so what it
        suggested."""
        if not for_ask:
            kept = (
                self._warm_start,
                self._fixed_fit,
                self._cold_checked_at,
                self._transform_choice,
                dict(self._scale_states),
                self._transform_evidence,
            )
            if self._read_state is not None and self._read_state[0] == self._ask_fits:
                # the last read's fit, made since the last ask's: a read after a read starts where it
                # ended (a read after each tell refitted from the ask's, or cold without one: three
                # times as long on 400 trials)
                (
                    self._warm_start,
                    self._fixed_fit,
                    self._cold_checked_at,
                    self._transform_choice,
                    self._scale_states,
                    self._transform_evidence,
                ) = self._read_state[1]
                self._scale_states = dict(self._scale_states)
            try:
                model = self._fit_trials(complete, for_ask=True)
                self._read_state = (
                    self._ask_fits,
                    (
                        self._warm_start,
                        self._fixed_fit,
                        self._cold_checked_at,
                        self._transform_choice,
                        dict(self._scale_states),
                        self._transform_evidence,
                    ),
                )
                return model
            finally:
                (
                    self._warm_start,
                    self._fixed_fit,
                    self._cold_checked_at,
                    self._transform_choice,
                    self._scale_states,
                    self._transform_evidence,
                ) = kept
        if len(complete) < 2:
            return None
        X = self._encode_trials(complete)
        y = self._signed(np.array([t.value for t in complete], dtype=np.float64))
        if self.output_transform == "auto" and callable(getattr(self.model, "log_marginal_likelihood", None)):
            return self._fit_auto(X, y)  # (a model without a likelihood, set after __init__: plain scale)
        transform = YeoJohnson.fit(y) if self.output_transform == "yeo-johnson" else None
        return self._fit_scaled(X, y, transform)

    def _fit_scaled(self, X: np.ndarray, y: np.ndarray, transform: YeoJohnson | None):
        """The model fitted to ``X`` and the signed values ``y`` on the scale of ``transform``."""
        if transform is not None:
            y = transform.forward(y)  # the GP, the acquisition and the fantasies all work on this scale
        previous = self._fixed_fit
        if previous is not None and previous[0] is self.model:
            # hyperparameters that are never fitted: the factor of the last ask extended by the new
            # rows (O(n^2) instead of O(n^3); equal to a fresh fit, see GP.extend)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                model = previous[1].extend(X, y)
            self._fixed_fit = (self.model, model)
            model.output_transform_ = transform
            self._tracking_screen(model)
            return model
        model, warm = self._warm_started(_new_model(self.model), len(y))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                model.fit(X, y)
            except NotPositiveDefiniteError:
                if not warm:
                    raise
                # the previous ask's hyperparameters give no usable factor on these data (a kernel
                # that is not positive definite to the last digit): fit from the prototype instead,
                # with its restarts, as a first ask would (and raise if that fails too)
                model, warm = _new_model(self.model), False
                model.fit(X, y)
            n = len(y)
            checked = self._cold_checked_at
            if not warm:
                self._cold_checked_at = n  # the prototype's own fit: nothing to check
            elif n < _COLD_REFIT_BELOW and (
                n % _COLD_REFIT_EVERY == 0 or checked is None or n - checked >= _COLD_REFIT_EVERY
            ):
                # a warm start alone can stay in a poor local optimum while the hyperparameters still
                # move with every point (the tuned-prior demo panel, n <= 20, went from 0.007 to 0.22
                # median regret): also fit from the prototype's own starting point, without random
                # restarts, and keep the better of the two. At every second number of trials, and
                # whenever the last check is that many trials back (asks of q points at a time, a
                # new object's first warm fit), so no two warm fits in a row go unchecked
                self._cold_checked_at = n
                cold = _new_model(self.model).clone(n_restarts=0)
                if _COLD_MAX_EVALUATIONS is not None and hasattr(cold, "max_evaluations"):
                    cold = cold.clone(max_evaluations=_COLD_MAX_EVALUATIONS)
                try:
                    cold.fit(X, y)
                except NotPositiveDefiniteError:
                    # no usable factor from the prototype's start (a kernel that is not positive
                    # definite there, even with the largest jitter): the warm fit stands
                    cold = None
                if cold is not None and _fit_score(cold, y) > _fit_score(model, y):
                    model = cold
        hook = getattr(model, "warm_start_overrides", None)
        self._warm_start = hook() if callable(hook) else {}
        if getattr(model, "optimizer", "") is None and callable(getattr(model, "extend", None)):
            self._fixed_fit = (self.model, model)  # the next ask extends this fit
            self._tracking_screen(model)
        model.output_transform_ = transform  # None: the model sees the values as they are (signed)
        return model

    def _tracking_screen(self, model) -> None:
        """Make ``model`` (a fixed-hyperparameter fit) keep the posterior of this ask's candidates through
        :meth:`warmbo.models.GP.track` (issue 15, item 7): the search's screen is a Sobol set drawn once
        per optimizer (:func:`~warmbo.maximize.sobol_screen`, 256 points) and local candidates keyed to
        the anchors (:func:`~warmbo.maximize.anchored_candidates`, 52 around each of the five best
        observations), instead of new draws at every ask. The factor's extension carries their
        posterior along, and only the candidates of a new anchor are solved for: about O(n) per
        candidate instead of O(n^2). Continuous and mixed spaces (a finite space's search evaluates
        all of its points)."""
        track = getattr(model, "track", None)
        if not callable(track) or self.space.is_finite:
            return
        if self._screen is None:
            self._screen_seed = int(np.random.SeedSequence(self.seed).generate_state(1)[0])
            self._screen = sobol_screen(self.space, np.random.default_rng([self._screen_seed, 1]))
        anchors = best_observations(model, self._n_anchors)
        if anchors is None:
            track(self._screen)
            return
        track(np.vstack([self._screen, *self._anchored_blocks(np.clip(anchors, 0.0, 1.0))]))

    def _anchored_blocks(self, anchors: np.ndarray) -> list[np.ndarray]:
        """The blocks of :func:`~warmbo.maximize.anchored_candidates` (``ceil(screen / k)`` rows per
        anchor, each drawn from the anchor's own generator, so its block alone is the same), the blocks
        of anchors that were among the last ask's kept (5 generators cost 0.1 ms per ask)."""
        per = -(-self._screen.shape[0] // anchors.shape[0])
        kept, blocks = {}, []
        for anchor in anchors:
            key = (per, np.ascontiguousarray(anchor).tobytes())  # (the bytes that seed its generator)
            block = self._anchor_blocks.get(key)
            if block is None:
                block = anchored_candidates(anchor[None, :], per, self._screen_seed)
                if self._categorical:  # (valid points: a one-hot block between categories is none)
                    block = self.space.snap(block)
            kept[key] = block
            blocks.append(block)
        self._anchor_blocks = kept
        return blocks

    def _fit_auto(self, X: np.ndarray, y: np.ndarray):
        """``output_transform="auto"``: the GP on the plain scale or on the Yeo-Johnson scale, whichever
        gives the raw observations the higher density (:func:`~warmbo.output_transform.log_evidence`).

        Both are fitted, each warm-started from its own previous fit, when there is no choice yet (a
        new study: the first model ask; a new optimizer object reads the stored choice) and when the
        number of complete trials is a power of two, as the hyperparameters' random restarts are
        (from 256 trials on: three times a power of two, between the restarts, :func:`_decides_scale`);
        in between only the chosen scale is fitted (its transform refitted to the new values), so a
        50-evaluation run decides about five times instead of paying two fits at every ask. The
        transform's evidence carries Schwarz's penalty for its one extra fitted parameter, lambda:
        ``- 1/2 log n`` (BIC). The evidences of the last decision, penalty included, are
        ``model.output_evidence_``.
        """
        n = len(y)
        chosen = self._transform_choice
        kinds = ("none", "yeo-johnson") if chosen is None or _decides_scale(n) else (chosen,)
        initial = (self._warm_start, self._fixed_fit, self._cold_checked_at)
        fits = {}
        for kind in kinds:
            self._warm_start, self._fixed_fit, self._cold_checked_at = self._scale_states.get(kind, initial)
            transform = YeoJohnson.fit(y) if kind == "yeo-johnson" else None
            fits[kind] = self._fit_scaled(X, y, transform)
            self._scale_states[kind] = (self._warm_start, self._fixed_fit, self._cold_checked_at)
        if len(fits) > 1:
            evidence = {kind: log_evidence(model, y, model.output_transform_) for kind, model in fits.items()}
            # the transform fits one more parameter (lambda): Schwarz's BIC penalty, 1/2 log n, so a
            # handful of points does not switch scales on a fraction of a nat; the plain scale wins ties
            evidence["yeo-johnson"] -= 0.5 * math.log(n)
            chosen = "yeo-johnson" if evidence["yeo-johnson"] > evidence["none"] else "none"
            self._transform_evidence = evidence
        self._transform_choice = chosen
        self._warm_start, self._fixed_fit, self._cold_checked_at = self._scale_states[chosen]
        model = fits[chosen]
        model.output_evidence_ = dict(self._transform_evidence)
        return model

    def _current_model(self):
        """The model of the study's complete trials as they are now: the last ask's when it was fitted
        to exactly these (``model_``), else a fresh fit (:meth:`fit_model`; None below two complete
        trials). A value told after the last ask is never left out of a prediction."""
        trials = self.study.trials()
        basis = _basis(trials)
        if self.model_ is not None and self._model_basis == basis:
            return self.model_
        if self._inspected is None or self._inspected[0] != basis:  # kept: the same data, the same answer
            self._inspected = (basis, self.fit_model(trials))
        return self._inspected[1]

    def transfer_report(self) -> TransferReport | None:
        """What the transfer does (:mod:`warmbo.transfer.transfer_report`): the method, each source
        task with its rows and the fitted model's weight for it (``auto``/``rgpe``) or its learned noise
        (``envelope``), and the warm design. None when this optimizer has no transfer sources.

        The model is fitted to the complete trials if no ask has fitted it yet (two are needed), so
        its weights are those of every complete trial; ``warmbo status`` and
        :meth:`stored_transfer_report` show those the last model ask stored (one tell earlier, after
        a run), and each line says which.
        """
        if self._source is None:
            return self._left_out_report()
        model = self._current_model() or self.model
        report = self._transfer_report(model, self.study.count(COMPLETE))
        return replace(report, fitted_now=True) if report.target_weight is not None else report

    def stored_transfer_report(self) -> TransferReport | None:
        """The transfer report a study shows (``warmbo status``, :meth:`report`) without fitting a
        model: the one its last model ask stored, while that ask used the sources and method this
        object uses; otherwise (no model ask yet: the warm design's; sources replaced since) the
        sources as given and the warm design, without weights. None for a study without sources."""
        text = self.study.get_meta("transfer_report")
        stored = TransferReport.from_dict(json.loads(text)) if text else None
        if self._source is None:  # (sources given but all left out as uninformative: none is used)
            left_out = self._left_out_report()
            unstored = (
                self.study.get_meta(_SOURCES_KEY) is None and self.study.get_meta(_SOURCE_ROWS_KEY) is None
            )
            if left_out is None and stored is not None and unstored:
                # (the report of sources an earlier version did not store: its weights are no
                # longer what the study asks with; the upgrade user test read them as current)
                return replace(
                    stored,
                    refuted="its sources were not stored with the study by the version that used them: "
                    "it goes on without them, as a cold start, unless they are given again (prior=, --prior)",
                )
            return left_out if left_out is not None else stored
        given = self._transfer_report(self.model, self.study.count(COMPLETE))
        if self._refuted is not None:
            return given  # the sources as given, and the verdict that set them aside
        refuted, _ = self._verdict(self.study.trials())
        if refuted is not None:
            # (a user test: between the tell that refutes them and the next ask, status showed the
            # last ask's weights) the verdict is reached; the next ask sets them aside
            return replace(given, refuted=f"{refuted} from the next ask on")
        if stored is not None and (stored.method, [s.name for s in stored.sources]) == (
            given.method,
            [s.name for s in given.sources],
        ):
            return stored
        return given

    def _left_out_report(self) -> TransferReport | None:
        """The report of sources given but every one left out as uninformative (all its values equal,
        :func:`_informative`), or None. It was None, as if no source had been given, and only the
        construction's warning said what happened (a user test)."""
        if self.prior is None or self.transfer == "none":
            return None
        sources = tuple(
            SourceSummary(str(self.prior.source if label is None else label), len(y))
            for label, (_, y) in self.prior.by_task().items()
        )
        return TransferReport(
            self.transfer,
            sources,
            None,
            self.study.count(COMPLETE),
            refuted="every source left out: each has one value throughout, so none can say which "
            "configurations are better (UninformativeSourceWarning); the study runs as without sources",
        )

    def _transfer_report(self, model, n_target: int) -> TransferReport:
        warm = self.warm_design()
        if warm is not None and len(warm) and not self._warm_design_used(warm):
            warm = None  # sources given after the study's own design: their design was never asked
        points = (
            ()
            if warm is None or not len(warm)
            else tuple(self.space.decode(self._design_asked(warm), as_written=True))
        )
        report = transfer_report(self.transfer, model, n_target, points, () if warm is None else warm.scores)
        if not report.sources:  # not fitted yet: the sources as given
            rows = [(task.name, len(task)) for task in as_sources(self._source)]
            report = TransferReport(
                report.method,
                tuple(SourceSummary(n, r) for n, r in rows),
                None,
                n_target,
                report.warm_design,
                report.warm_scores,
            )
        if self._refuted is not None:
            report = replace(report, refuted=str(self._refuted))
        return report

    def _design_asked(self, warm: WarmDesign) -> np.ndarray:
        """The warm design's points, and after them the sources' configurations a batch asked before
        any result went on with (``_warm_points``' extension): the study's first trials that are
        source configurations, in a row from its first. A lab user test's `suggest -n 8` took 8
        configurations of the sources, and status and the report said "2 point(s) from the sources"."""
        own = [t for t in self.study.snapshot() if t.worker != PRIOR_WORKER]
        own = sorted(own, key=lambda t: t.id)[: max(self.n_initial, cold_design_size(self.space))]
        if len(own) <= len(warm) or self._design_rows is None:
            return warm.points
        X_own = self._encode_trials(own)
        sources = np.vstack([warm.points, self._design_rows[0]])
        run = 0
        for from_sources in taken(X_own, sources):
            if not from_sources:
                break
            run += 1
        extra = X_own[:run][~taken(X_own[:run], warm.points)]
        return np.vstack([warm.points, extra]) if len(extra) else warm.points

    def _warm_design_used(self, warm: WarmDesign) -> bool:
        """Whether the study asked a point of the warm design ``warm``, or still may: a study whose
        design was over when these sources were given (``prior=`` on a resumed study) never asks
        them, and a report that listed them would describe a start the study did not have."""
        own = [t for t in self.study.snapshot() if t.worker != PRIOR_WORKER]
        if len(own) < self.n_initial:
            return True
        return bool(np.any(taken(warm.points, self._encode_trials(own))))

    def _model_trials(self, complete: list[Trial]) -> list[Trial]:
        """The complete trials the model sees: this study's own (at most ``max_trials`` of them), and
        at most ``max_prior`` imported prior rows (see :func:`warmbo.prior.prior_subset`)."""
        own = [t for t in complete if t.worker != PRIOR_WORKER]
        if self.max_trials is not None and len(own) > self.max_trials:
            keep = prior_subset(self._signed(np.array([t.value for t in own])), self.max_trials, self.seed)
            chosen_own = {own[i].id for i in keep}
            complete = [t for t in complete if t.worker == PRIOR_WORKER or t.id in chosen_own]
        elif self.max_trials is None and len(own) > LARGE_STUDY and not self._large_warned:
            self._large_warned = True
            # half the size at which it fires: it advised 2000 at 2006 trials, which saved nothing (a
            # user test measured 0.9 s per ask with 1000 of 2010 trials, d = 30, against 3-4 s with all)
            suggested = LARGE_STUDY // 2
            warnings.warn(
                f"the model is an exact GP on all {len(own)} of the study's trials: every ask refits it "
                f"in O(n^3), which takes seconds to minutes at this size; max_trials={suggested} "
                f"(in Python) or --max-trials {suggested} models the best quarter and a random "
                "rest of them, about 4x cheaper per ask",
                LargeStudyWarning,
                stacklevel=user_stacklevel(),
            )
        prior = [t for t in complete if t.worker == PRIOR_WORKER]
        if len(prior) <= self.max_prior:
            return complete
        keep = prior_subset(self._signed(np.array([t.value for t in prior])), self.max_prior, self.seed)
        self._warn_prior_subset(keep.size, len(prior))
        chosen = {prior[i].id for i in keep}
        return [t for t in complete if t.worker != PRIOR_WORKER or t.id in chosen]

    def _warn_prior_subset(self, used: int, total: int) -> None:
        # (attributed to the user's line: from an ask it is three calls deep, and a fixed stacklevel
        # showed a line of optimizer.py in a notebook)
        if not self._prior_warned:
            self._prior_warned = True
            why = (
                f"max_prior={self.max_prior} was given"
                if self._max_prior_given
                else "an exact GP on all of them would take minutes per ask"
            )
            warnings.warn(
                f"the model uses {used} of the {total} prior rows (the best quarter of the budget, per "
                f"source for transfer, and the rest at random; all are stored): {why}. max_prior= in "
                f"Python (Optimizer, Optimizer.load) or --max-prior N on the command line (optimize, "
                f"suggest) uses more.",
                PriorSubsetWarning,
                stacklevel=user_stacklevel(),
            )

    def _store_warm_start(self) -> None:
        """Keep the last fit's hyperparameters (kernel theta, noise) in the study, so that the next
        optimizer object on it (``warmbo suggest``, a resumed study, another worker) warm-starts
        instead of paying a multi-start fit on its first ask; with ``output_transform="auto"`` the
        chosen scale too."""
        if self._transform_choice is not None and self._transform_choice != self._stored_choice:
            self.study.set_meta("output_transform_choice", self._transform_choice)
            self._stored_choice = self._transform_choice
        kernel = self._warm_start.get("kernel")
        if kernel is None or not hasattr(kernel, "theta"):
            return
        record = {"kernel": type(kernel).__name__, "theta": [float(v) for v in kernel.theta]}
        if "noise" in self._warm_start:
            record["noise"] = float(self._warm_start["noise"])
        text = json.dumps(record)
        if text != self._stored_text:
            self.study.set_meta("warm_start", text)
            self._stored_text = text

    def _stored_warm_start(self) -> dict:
        """The warm start stored by an earlier optimizer object on this study, when it fits this
        optimizer's model (same kernel type and number of hyperparameters); else empty."""
        self._stored_text = self.study.get_meta("warm_start")
        kernel = getattr(self.model, "kernel", None)
        if not self._stored_text or kernel is None or not hasattr(kernel, "with_theta"):
            return {}
        try:
            record = json.loads(self._stored_text)
            theta = np.asarray(record["theta"], dtype=np.float64)
            if record["kernel"] != type(kernel).__name__ or theta.shape != (kernel.n_theta,):
                return {}
            out = {"kernel": kernel.with_theta(theta), "n_restarts": 0}
        except (ValueError, KeyError, TypeError):
            return {}  # a record of another version: fit from the prototype
        if "noise" in record and np.ndim(getattr(self.model, "noise", None)) == 0:
            out["noise"] = float(record["noise"])
        return out

    def _warm_started(self, model, n_complete: int) -> tuple[Any, bool]:
        """The fresh model, started from the hyperparameters of the previous fit (see module docstring),
        and whether it was warm-started.

        The previous fit says how a clone starts from it (``warm_start_overrides()`` of the model
        protocol: empty for models that fit no hyperparameters); when the number of complete trials
        is a power of two the prototype's random restarts run too (the previous optimum is the first
        start); a cold fit runs when the kernel's structure differs from the prototype's.
        """
        overrides = self._warm_start
        if not overrides:
            if (
                n_complete >= _WARM_FULL_REFIT_FROM
                and getattr(model, "max_evaluations", 0) is None
                and getattr(model, "optimizer", None) is not None
            ):
                # a long study with no fit stored yet (its trials told or imported, not asked): the
                # prototype's multi-start fit with its full-data search bounded as a warm refit's is;
                # the asks after go on from there (uncapped it took 79 likelihood evaluations at
                # n = 1012, d = 30, and the first ask cost 8x the next: a user test)
                restarts = getattr(model, "restart_points", None)
                bounded = {"max_evaluations": 2 * _WARM_MAX_EVALUATIONS}  # (halved by GP: subset restarts)
                # (restart_points=None, every restart on all the data, is the user's choice: a review)
                if restarts is not None:
                    bounded["restart_points"] = min(restarts, _WARM_RESTART_POINTS)
                model = model.clone(**bounded)
            return model, False
        kernel = overrides.get("kernel")
        current = getattr(model, "kernel", None)
        if kernel is not None and (type(kernel) is not type(current) or kernel.n_theta != current.n_theta):
            return model, False
        if n_complete >= _WARM_FULL_REFIT_FROM and hasattr(model, "max_evaluations"):
            # a long study: the full-data search from the previous optimum does bounded work per ask
            # and the next ask continues it (uncapped, the asks of a 1000 -> 1100 loop cost 0.45 to
            # 1.4 s as the amplitude drifted: about 9 evaluations when settled, 23 while moving); it
            # stops at a relative change of _WARM_FIT_TOLERANCE (see there)
            overrides = {**overrides, "max_evaluations": _WARM_MAX_EVALUATIONS}
            tolerance = getattr(model, "fit_tolerance", None)
            if isinstance(tolerance, float) and tolerance < _WARM_FIT_TOLERANCE:
                overrides["fit_tolerance"] = _WARM_FIT_TOLERANCE
        if n_complete & (n_complete - 1) == 0:
            if n_complete < _WARM_FULL_REFIT_FROM:
                return model, False  # the prototype's multi-start fit: cheap at this size
            # the full refit of a large study: the prototype's random restarts, with the previous
            # optimum as the first start, so the full-data search starts where the last one ended
            # unless a restart scores better (from the prototype's start, the ask at n = 1024 took
            # 3.1x a steady ask)
            full = {k: v for k, v in overrides.items() if k != "n_restarts"}
            cap = getattr(model, "restart_points", None)
            if isinstance(cap, int) and cap > _WARM_RESTART_POINTS:
                # the restarts propose starts; on 128 rows they cost a third of what they did on 256
                full["restart_points"] = _WARM_RESTART_POINTS
            return model.clone(**full), True
        return model.clone(**overrides), True

    @blas_limited
    def predict(self, params: dict | Sequence[dict], *, target_only: bool = False) -> Prediction:
        """Posterior mean and std of the objective (user's sign and units) at parameter dicts, as the
        models' :class:`~warmbo.models.Prediction` (it unpacks as ``mean, std``).

        With ``output_transform``, the GP's normal posterior on the transformed scale is mapped back:
        the mean and sd of the objective under it (:meth:`YeoJohnson.moments`).

        With ``transfer="auto"`` or ``"rgpe"`` the model is an ensemble, ``sum_i w_i mu_i`` over the
        sources' GPs and the target's (RGPE): each source on its own standardised scale, so its mean
        ranks settings (what the acquisition needs) but need not be on the scale of your values, and
        its sd is no error bar for them. While a source has weight, ``predict`` says so once
        (:class:`TransferPredictionWarning`); ``target_only=True`` gives the target GP's posterior alone
        (fitted to this study's own trials, in your units), the estimate of what a setting will measure.
        """
        model = self._current_model()
        if model is None:
            raise ValueError("predict needs at least two complete trials")
        encoded = self.space.encode(params)
        target = getattr(model, "target_model_", None)
        transform = getattr(model, "output_transform_", None)
        if target_only and target is not None:
            mean, std = target.predict(encoded)  # on the target's standardised scale: to the user's
            mean, std = mean * model.y_std_ + model.y_mean_, std * model.y_std_
            if transform is not None:  # (auto's ensemble sees the Yeo-Johnson scale) back to the objective's
                mean, std = transform.moments(mean, std)
            return Prediction(self._signed(mean), std)
        if target is not None and getattr(model, "sources_weight_", 0.0) > 0:
            if not self._ensemble_warned:
                self._ensemble_warned = True
                _warn(
                    f"predict: the transfer model (transfer={self.transfer!r}) is an ensemble of the "
                    "sources' GPs and the target's, each source on its own standardised scale: its mean "
                    "ranks settings but need not be on the scale of your values, and its sd is no error "
                    "bar for them. predict(params, target_only=True) gives the target GP's posterior "
                    "alone, in your units. (Said once per optimizer.)",
                    TransferPredictionWarning,
                )
        mean, std = model.predict(encoded)
        if transform is not None:  # back to the objective's own scale
            mean, std = transform.moments(mean, std)
        return Prediction(self._signed(mean), std)

    @blas_limited  # the closed-form leave-one-out inverts the Gram matrix (warmbo status runs it)
    def audit(
        self,
        levels: Sequence[float] = LEVELS,
        max_held_out: int = MAX_HELD_OUT,
        schedule: Schedule | None = None,
        *,
        target_only: bool = False,
    ) -> Audit:
        """Leave-one-out confidence audit of the study's fitted model on its complete trials.

        The model is the one :meth:`fit_model` returns (the one an ask uses); every complete trial it
        sees is left out in turn (exactly, in closed form, for the GP; ``max_held_out`` of them for
        other models). Results are in your direction: observed values and predicted means carry the
        objective's sign, whether the study minimises or maximises. They are on the GP's scale: your
        units when :attr:`output_scale` is ``"none"``; on the Yeo-Johnson scale (the default for the
        optimizer's own GP) observed values, means and widths are transformed values, and the
        coverage is the same as in your units (the transform is monotone). When the acquisition is
        GP-UCB, its schedule's intervals are audited too (``Audit.theory``), or those of
        ``schedule`` when given. See :func:`warmbo.audit.audit` and docs/optimizer.md.

        ``target_only=True``, in a study whose model is a transfer ensemble (``transfer="auto"`` or
        ``"rgpe"``), audits the ensemble's GP of this study's own trials instead (the one
        :meth:`predict` reads with ``target_only=True``), whose intervals are meant to hold in your
        units (up to an affine map, which coverage ignores); its ``subject`` says so. Without
        such an ensemble it is the plain audit. ``warmbo status`` shows this one for a transfer
        study, beside the estimate it prints from the same GP.

        Raises
        ------
        ValueError
            With fewer than two complete trials (nothing to leave out).
        """
        complete = self._model_trials(self.study.trials((COMPLETE,)))
        fitted = self._fit_trials(complete)
        own = self._audit_target(fitted, complete, levels, max_held_out) if target_only else None
        return (
            own if own is not None else self._audit_fitted(fitted, complete, levels, max_held_out, schedule)
        )

    def _audit_target(
        self,
        fitted,
        complete: list[Trial],
        levels: Sequence[float] = LEVELS,
        max_held_out: int = MAX_HELD_OUT,
    ) -> Audit | None:
        """:meth:`audit` with ``target_only=True`` of ``fitted`` (fitted to ``complete``): its GP of
        the study's own trials, in the user's units; None when ``fitted`` is no transfer ensemble."""
        target = getattr(fitted, "target_model_", None)
        if target is None:
            return None
        own = [t for t in complete if t.worker != PRIOR_WORKER]  # (the target GP's rows)
        result = self._audit_fitted(target, own, levels, max_held_out, None, own_gp=True)
        # the target GP is fitted on the ensemble's standardised values: back to the user's units (as
        # predict(target_only=True) maps its posterior)
        result = rescaled(result, float(fitted.y_std_), float(self._signed(np.float64(fitted.y_mean_))))
        if getattr(fitted, "output_transform_", None) is not None:  # (auto: the Yeo-Johnson scale)
            result = on_transformed_scale(result, "Yeo-Johnson")
        return replace(result, subject="this study's own GP")

    def _audit_fitted(
        self,
        model,
        complete: list[Trial],
        levels: Sequence[float] = LEVELS,
        max_held_out: int = MAX_HELD_OUT,
        schedule: Schedule | None = None,
        own_gp: bool = False,
    ) -> Audit:
        """:meth:`audit` of ``model``, already fitted to ``complete`` (its rows, from
        :meth:`_model_trials`): the report audits the model its slices are drawn from, fitted once.
        ``own_gp``: ``model`` is a transfer ensemble's GP of this study's trials, which the sources'
        note does not concern."""
        if model is None:
            raise ValueError(
                f"an audit needs at least two complete trials; the study has {self.study.count(COMPLETE)}"
            )
        if schedule is None and isinstance(self.acquisition, UCB):
            schedule = self.acquisition.schedule
        if schedule is not None:
            schedule = schedule.for_space(self.space)
        y = self._signed(np.asarray(model.y_train_, dtype=np.float64))  # back to the user's sign
        # RGPE's ensemble mean adds each GP's mean on its own task's standardised scale (Feurer et al.
        # 2018: the weights choose models by how they rank, not by their scale), so while the sources
        # carry weight its intervals need not hold in the user's units: a user test (40 sources) read
        # "95% intervals cover 0%" as a kernel misfit. The summary names the ensemble, and a warning
        # says why, first.
        ensemble_weight = float(getattr(model, "sources_weight_", 0.0) or 0.0)
        is_ensemble = getattr(model, "target_model_", None) is not None and ensemble_weight > 0
        subject = "the transfer ensemble" if is_ensemble else ""
        # the outlier warning names trials, when the model's rows are exactly these trials
        labels = [f"trial {t.id}" for t in complete] if len(complete) == y.size else None
        result = audit(
            model,
            model.X_train_,
            y,
            levels,
            schedule,
            maximize=self.maximize,
            max_held_out=max_held_out,
            seed=int(self.seed) % 2**32,
            labels=labels,
        )
        if getattr(model, "output_transform_", None) is not None:  # widths are transformed values
            result = on_transformed_scale(result, "Yeo-Johnson")
        if subject:
            note = (
                f"this study transfers ({self.transfer}) and its sources carry {ensemble_weight:.0%} of the "
                "model's weight: RGPE's ensemble adds each GP's mean on its own task's standardised scale "
                "(the weights choose GPs by how they rank your trials, not by scale), so its intervals "
                "need not hold in your units; misses here come from the sources' scales, not from the "
                "kernel. The ranking is what the optimizer uses; opt.audit(target_only=True) (and "
                "warmbo status) audits this study's own GP, in your units"
            )
            # the calibration warnings' kernel advice contradicts the note (a docs-reader user test
            # got both): for the ensemble they say the sources' scales, and no more
            said = tuple(
                w.replace(KERNEL_MISFIT, "for this ensemble: the sources' scales, as said above")
                for w in result.warnings
            )
            return replace(result, subject=subject, warnings=(note, *said))
        if (
            self._source is not None
            and not own_gp
            and self._refuted is None
            and any(w.startswith(("overconfident", "heteroscedastic")) for w in result.warnings)
        ):
            note = (
                f"this study transfers ({self.transfer}): its model combines the sources' GPs with this "
                "study's (weights in transfer_report()), so intervals that miss this study's values may "
                "come from the sources it trusts rather than from the kernel"
            )
            result = replace(result, warnings=(*result.warnings, note))
        return result

    # ------------------------------------------------------------------ figures and reports
    def plot(self):
        """The best value so far against the trial id, observed values as dots, failed trials as
        crosses and pending ones as hollow circles (:func:`warmbo.report.plot_best_so_far`): a
        matplotlib ``Figure``, which a notebook shows inline; ``fig.savefig("history.png")`` writes it.
        A multi-task study plots its utility."""
        from .report import plot_best_so_far

        name = "utility" if getattr(self, "task_names", None) else "objective"
        return plot_best_so_far(list(self.history), self.maximize, name=name)

    def report(self, out="warmbo-report", title: str | None = None):
        """Write the study's report into the folder ``out``, as ``warmbo report`` does: a
        self-contained ``report.html`` (best so far, observed values per parameter, posterior slices
        and parameter importance, the calibration audit from 10 complete trials on (of a transfer
        study, its own GP's: ``audit(target_only=True)``, as ``warmbo status`` shows), the transfer
        weights of a transfer study, every trial) and the figures as PNGs. Returns the path of
        ``report.html``. An audit that cannot run (values whose variances a float cannot hold)
        leaves its section out with a ``RuntimeWarning`` saying why."""
        from .audit import MIN_HELD_OUT
        from .report import write_report

        task_names = getattr(self, "task_names", None)
        model = None
        if not task_names:  # one fit for the slices and the audit (ML-II on 2000 trials takes seconds)
            with warnings.catch_warnings():
                # (it speaks of asks, which a report makes none of: a user test; `warmbo report` too)
                warnings.simplefilter("ignore", LargeStudyWarning)
                complete = self._model_trials(self.study.trials((COMPLETE,)))
            model = self._fit_trials(complete)
        audit = None
        n_complete = self.study.count(COMPLETE)
        if n_complete >= MIN_HELD_OUT:
            try:
                # a transfer study: its own GP, as `warmbo status` shows (a chemist user test read the
                # ensemble's "cover 62%" in the report beside status's 94% and did not know which to use)
                audit = (
                    self.audit()
                    if task_names
                    else self._audit_target(model, complete) or self._audit_fitted(model, complete)
                )
            except ValueError as exc:
                warnings.warn(f"report without the calibration section: {exc}", RuntimeWarning, stacklevel=2)
        missing = []  # sections left out for want of trials, said on the page (they vanished: a user test)
        if not task_names and model is None and n_complete:
            missing.append("the model's figures (posterior slices, importance) from 2 complete trials on")
        if audit is None and 0 < n_complete < MIN_HELD_OUT:
            missing.append(f"the calibration audit from {MIN_HELD_OUT} on")
        extra = (
            f'<p class="note">Not drawn yet: {"; ".join(missing)} ({n_complete} so far).</p>'
            if missing
            else ""
        )
        return write_report(
            out,
            self.space,
            list(self.history),
            maximize=self.maximize,
            title=title or f"warmbo study {redacted(self.study.url)}",
            predict=None if model is None else self._report_predictor(model),
            tasks=dict(zip(task_names, self.directions, strict=True)) if task_names else None,
            transfer=self.stored_transfer_report(),
            audit=audit,
            amendments=self.study.amendments(),
            notes=self.study.notes(),
            withdrawn=self.study.withdrawn(),
            extra_html=extra,
        )

    def _report_predictor(self, model):
        """``predict(U) -> (mean, std)`` of ``model`` (from :meth:`fit_model`) in the user's units and
        sign, for the report's model figures."""
        transform = getattr(model, "output_transform_", None)

        def predict(U):
            mean, std = model.predict(U)
            if transform is not None:  # the report plots the objective in the user's units
                mean, std = transform.moments(mean, std)
            return (mean if self.maximize else -mean), std

        return predict

    # ------------------------------------------------------------------ ask / tell
    def _busy(self, trials: Sequence[Trial]) -> np.ndarray:
        """Encoded points that must not be suggested again: pending, failed and evaluated trials.

        Evaluated points become available again only once every point of a finite space (a grid,
        or integers, categoricals and step parameters only) has been tried; on a continuous space an
        exact repeat is excluded too (it adds nothing the model does not have).
        """
        busy = self._encode_trials(trials)
        if self.space.is_finite:
            # a grid is tried once every candidate is taken as the search sees it (within
            # DUPLICATE_TOLERANCE of a trial): near-duplicate candidates are one point, and counting
            # them as two left a grid of [0, 1e-7, 1] refusing its fourth ask. (The test runs only
            # once there are as many trials as the grid has such points at the least.)
            if busy.shape[0] >= self._grid_points() and taken(self.space.candidates, busy).all():
                return self._encode_trials([t for t in trials if t.state in (PENDING, FAILED)])
            return busy
        if busy.shape[0] >= self.space.cardinality:
            if np.unique(busy, axis=0).shape[0] >= self.space.cardinality:
                return self._encode_trials([t for t in trials if t.state in (PENDING, FAILED)])
        return busy

    def _warn_repeat(self, trial: Trial, budget: int, finished: int, started: int) -> bool:
        """Say so when ``run`` has evaluated a point again and its value is the one the point had: the
        objective is deterministic, and the rest of the budget evaluates known points (a finite space,
        integers, categoricals and step parameters only, or a grid, every point of it tried: what
        ``_busy`` allows then).
        Returns whether it warned.

        Before, the warning compared the budget with the space at the start of the run, and fired
        where repeats are no trouble: for a noisy objective (a repeat is a second measurement) and for
        a run whose evaluations all fail (a failed point is never asked again, so it repeats nothing).

        ``finished`` counts the study's own finished trials now, ``started`` when the run began; the
        budget the message advises is the one at which every point had been tried (not less than
        ``started``, which a resumed run cannot undo). It was ``finished - 1``, which counted the
        failed repeats made since as needed ("a budget of 5" on 4 points with one failed repeat).
        """
        size = self.space.cardinality
        if self.space.is_finite:
            size = min(size, self._grid_points())
        if trial.state != COMPLETE or not math.isfinite(size):
            return False
        earlier = [t for t in self.study.trials((COMPLETE,)) if t.id != trial.id]
        if not earlier:
            return False
        at = self._encode_trials([trial])[0]
        same = np.flatnonzero(np.all(np.abs(self._encode_trials(earlier) - at) <= 1e-12, axis=1))
        value = _observed(trial)
        if not any(
            np.allclose(_observed(earlier[i]), value, rtol=1e-9, atol=1e-12, equal_nan=False) for i in same
        ):
            return False
        if not self._repeats_all_equal(earlier + [trial]):
            return False
        # (a repeat by design, MT-KB's, is not the budget running over the space: said only once every
        # point had been tried before this trial)
        if self._distinct_points([t for t in self.study.trials() if t.id != trial.id]) < size:
            return False
        what = (
            "grid candidates"
            if self.space.is_finite
            else "points (integers, categoricals and step parameters only)"
        )
        shown = float(value[0]) if value.size == 1 else tuple(float(v) for v in value)
        left = max(0, budget - finished)
        enough = max(self._budget_trying_every_point(int(size)), started)
        # (with none left it read "the rest of this run (0 more evaluation(s))": PostgreSQL user test)
        rest = (
            f"the rest of this run ({left} more evaluation(s)) evaluates known points again"
            if left
            else "this evaluation, the run's last, was of a point already known"
        )
        _warn(
            f"trial {trial.id} evaluated {dict(trial.params)} again and got the value the point already "
            f"had ({shown!r}): the objective looks deterministic. The search space has {int(size)} {what} "
            f"and every one has been tried, so {rest}. For a deterministic objective, a budget of {enough} "
            "had tried every point; for a noisy one, repeats are second measurements (no warning once one "
            "differs).",
            RepeatedPointsWarning,
        )
        return True

    def _repeats_all_equal(self, trials: Sequence[Trial]) -> bool:
        """Whether the complete ``trials`` hold at least :data:`REPEATS_BEFORE_WARNING` repeats (a
        trial at a point measured before) and every one got the value measured there before. A noisy
        objective whose values come in steps (a success count out of 10 episodes, a capped return)
        ties a repeat by chance, about one in four in a user test, and was called deterministic at its
        first tie; two ties in a row, with no repeat that differed, are rarer (one in sixteen there)."""
        X = self._encode_trials(list(trials))
        first: dict[bytes, np.ndarray] = {}
        repeats = 0
        for row, trial in zip(np.round(X, 12), trials, strict=True):
            key = row.tobytes()
            value = _observed(trial)
            if key not in first:
                first[key] = value
                continue
            if not np.allclose(first[key], value, rtol=1e-9, atol=1e-12, equal_nan=False):
                return False  # a repeat that differed: a noisy objective
            repeats += 1
        return repeats >= REPEATS_BEFORE_WARNING

    def _budget_trying_every_point(self, size: int) -> int:
        """The budget at which the study had tried every one of the ``size`` points of its finite space:
        its own trials (complete, failed or pending, in the order they were asked) up to the one that
        tried the last point no trial had (a failed trial tried its point too: it is never asked
        again; imported prior rows hold points but are no budget)."""
        trials = sorted(self.study.trials(), key=lambda t: t.id)
        _, first = np.unique(self._encode_trials(trials), axis=0, return_index=True)
        if first.size < size:  # (not reached: the caller checked that every point was tried)
            return sum(t.worker != PRIOR_WORKER for t in trials)
        last = int(np.sort(first)[size - 1])
        return sum(t.worker != PRIOR_WORKER for t in trials[: last + 1])

    def _distinct_points(self, trials: Sequence[Trial]) -> int:
        """How many distinct points ``trials`` hold."""
        if not trials:
            return 0
        return int(np.unique(self._encode_trials(trials), axis=0).shape[0])

    def _grid_points(self) -> int:
        """A lower bound on the trials that take every candidate of a grid space: its groups of
        candidates chained within :data:`~warmbo.maximize.DUPLICATE_TOLERANCE` of each other (a trial
        of a grid is one of its candidates, so it takes candidates of one group only). Counted once."""
        if self._grid_groups is None:
            self._grid_groups = chained_groups(self.space.candidates)  # radius: taken()'s, the default
        return self._grid_groups

    def _encode_trials(self, trials: Sequence[Trial]) -> np.ndarray:
        """``space.encode`` of the trials' parameters, (len(trials), dim), remembering each trial's
        encoding: a trial's parameters never change once stored, so an ask encodes only new trials
        (validating and encoding every trial again was a third of an ask at n = 200). A trial of the
        study's :meth:`~warmbo.storage.Study.snapshot` is recognised by its parameter dict itself,
        which the study never changes (comparing the dicts cost 0.1 ms per ask at n = 200, 2.5 ms at
        n = 2000); any other trial by equal parameters of equal types."""
        out = np.empty((len(trials), self.space.dim))
        missing = []
        get = self._encoded.get
        for i, trial in enumerate(trials):
            cached = get(trial.id)
            # (types compared too: True == 1, but they are different categorical choices; a tuple
            # of the types compares in C, a generator over the pairs cost 2 us per trial)
            if cached is not None and (
                cached[3] is trial.params
                or (cached[0] == trial.params and cached[2] == tuple(map(type, trial.params.values())))
            ):
                out[i] = cached[1]
            else:
                missing.append(i)
        if missing:
            encoded = self.space.encode([trials[i].params for i in missing])
            for i, row in zip(missing, encoded, strict=True):
                out[i] = row
                trial = trials[i]
                if trial.id is not None:
                    params = dict(trial.params)
                    shared = trial.params if self.study.shares(trial) else None
                    self._encoded[trial.id] = (params, row.copy(), tuple(map(type, params.values())), shared)
        return out

    @staticmethod
    def _collides(x: np.ndarray, busy_X: np.ndarray) -> bool:
        return bool(taken(np.asarray(x, dtype=np.float64)[None, :], busy_X)[0])

    def _beside_fresh_pending(self, x: np.ndarray, fresh: Sequence[Trial]) -> bool:
        """Whether ``x`` lies beside a trial another worker made pending since this ask's snapshot (a
        prior correlation above :data:`~warmbo.suggest.BATCH_CORRELATION` under this ask's fitted
        kernel, as a batch keeps its points apart: :func:`~warmbo.suggest.too_close`). Two workers
        asking at once on the same trials chose the same maximum of the acquisition, a hair apart,
        since neither saw the other's pending point (a user test: 4 of 16 trials of two workers at
        C=0.01, gamma 0.09-0.10); the ask starts again from a snapshot that has it."""
        pending = [t.params for t in fresh if t.state == PENDING]
        if not pending or self.model_ is None:
            return False
        near = too_close(self.model_, self.space.encode(pending))
        return near is not None and bool(near(np.asarray(x, dtype=np.float64)[None, :])[0])

    def _next_point(self, trials: list[Trial], index: int, fixed: Fixed | None = None) -> np.ndarray:
        """The point to suggest given a snapshot of the trials (no lock is held while this runs); with
        ``fixed``, one that has those values (:meth:`_held`)."""
        busy_X = self._busy(trials)
        # trials asked with fixed values do not count towards the design of the asks without: seven
        # asks on one catalyst's slice had taken a 5-point design, and every later free ask stayed on
        # that catalyst, the model having seen no other (a user test)
        design_index = index if fixed is not None else index - self._fixed_asks(trials)
        x = self._chosen_point(trials, index, busy_X, fixed, design_index)
        return x if fixed is None else self._held(x, fixed, busy_X, index)

    def _fixed_asks(self, trials: Sequence[Trial]) -> int:
        """How many of ``trials`` were asked with fixed values (meta ``fixed:<id>``, written with the
        trial by :meth:`ask`'s ``fixed`` and partial queued points)."""
        keys = self.study.meta_items(FIXED_PREFIX)
        if not keys:
            return 0
        ids = {t.id for t in trials}
        return sum(
            1 for key in keys if key[len(FIXED_PREFIX) :].isdigit() and int(key[len(FIXED_PREFIX) :]) in ids
        )

    def _held(self, x: np.ndarray, fixed: Fixed, busy_X: np.ndarray, index: int) -> np.ndarray:
        """``x`` with the ``fixed`` values (a design point is the design's with them set; a model point
        has them already: the search held them), or, when that point is taken, a free point with
        them (:func:`warmbo.fixed.free_point`)."""
        # (children a held parent switches on are drawn, not left at the constant of inactive columns)
        x = self.space._activated(
            x[None, :], fixed.apply(x)[None, :], np.random.default_rng([self.seed or 0, index])
        )[0]
        if not self.space.is_finite:  # (a grid space snaps to its nearest candidate, which may not hold them)
            x = fixed.apply(x)
        if fixed.holds(x[None, :])[0] and not self._collides(x, busy_X):
            return x
        other = free_point(self.space, fixed, busy_X, self.seed * 100_003 + index)
        if other is None:
            shown = ", ".join(f"{k}={v!r}" for k, v in fixed.params.items())
            raise SpaceExhaustedError(
                f"every point of the search space with {shown} is pending, failed or evaluated"
            )
        return other

    def _chosen_point(
        self, trials: list[Trial], index: int, busy_X: np.ndarray, fixed: Fixed | None, design_index: int
    ) -> np.ndarray:
        """:meth:`_next_point`'s choice: the design's (point ``design_index``, the trials asked with
        fixed values left out of the count for an ask without), the probe's, or the model's
        (``fixed`` held)."""
        n_complete = sum(t.state == COMPLETE for t in trials)
        if self._refuted is None and index >= self.n_initial:
            refuted, confirm = self._verdict(trials)
            if refuted is not None and not self._restore_refutation(announce=True):  # (another's, kept)
                self._set_aside(refuted, reached=trials)
            if confirm and fixed is None:  # one cold point beat the sources: the cold design's next checks it
                return self._cold_design_point(0, busy_X)
        # (the probe, its confirmation, the restart and the cold fallback are the cold design's points:
        # with fixed values set they are not, and were asked again at every fixed ask of their window,
        # random points of the slice instead of the model's; an ask with fixed values takes the model)
        if self._refuted is not None and fixed is None and self._restart_due(trials):
            # the sources were set aside: the cold optimizer's space-filling start first
            return self._cold_design_point(0, busy_X)
        probe = fixed is None and index >= self.n_initial and self._probe_due(trials)
        if design_index < self.n_initial or n_complete < 2 or probe:
            started = time.perf_counter()
            if probe:
                x = self._cold_design_point(0, busy_X)
            else:
                # (the Sobol point of the trial's own position: an ask without fixed values took the
                # point its count gave, the one an earlier fixed ask had taken with other values
                # held, and 4 of 6 free design points repeated a fixed trial's continuous settings:
                # a fixed-values user test; the count still decides the design's length)
                x = self._design_point(design_index, busy_X, before_results=n_complete < 2, cold_index=index)
            prepare = getattr(self.model, "prepare", None)
            if self._source is not None and self._refuted is None and callable(prepare):
                # fit the transfer model's source GPs while the user evaluates design points, so the
                # first model ask does not pay for every source at once (issue 14: < 1 s per ask)
                prepare(self.space.dim, seconds=max(0.0, _PREPARE_SECONDS - (time.perf_counter() - started)))
                self._store_source_fits(self.model)  # (the prototype: its clones share the fits)
            return x
        reference = self._ask_fit(trials)
        _check_fitted_protocol(reference)
        self.model_ = reference
        self._model_basis = _basis(trials)
        self._store_warm_start()
        if self._source is not None and self._refuted is None:  # what `warmbo status` shows (a small JSON)
            report = self._transfer_report(reference, n_complete)
            self.study.set_meta("transfer_report", json.dumps(report.to_dict(), default=str))
            self._store_source_fits(reference)
        if fixed is None and self._sources_lost(reference, len(trials)):
            # the sources have no weight: the cold optimizer, so its space-filling design first
            return self._cold_design_point(0, busy_X)
        acquisition = self._acquisition_for(reference)
        failed = [t for t in trials if t.state == FAILED] if self._fantasise_failed else []
        success = near = None
        if failed and self.failures == "classifier" and isinstance(acquisition, EI | PI):
            finished = [t for t in trials if t.state in (COMPLETE, FAILED) and t.worker != PRIOR_WORKER]
            # (every own trial failed: the liar's; no own trial failed, only a prior row marked
            # failed before amend refused it: the liar's too, where the classifier raised at every ask)
            if {COMPLETE, FAILED} <= {t.state for t in finished}:
                # EI weighed by the chance of success where failures are, instead of the liar there
                # (fitted at every ask: a suggestion depends on the study, not on this object's past)
                success = SuccessClassifier(
                    self._encode_trials(finished), [t.state == COMPLETE for t in finished], seed=self.seed
                )
                near, failed = self._encode_trials(failed), []
                if (
                    FAILED_INCUMBENT
                    and type(acquisition) is EI
                    and acquisition.incumbent == "best"
                    and (self._source is None)
                ):
                    # improvement over the model's best mean at the measured points (Gelbart, Snoek &
                    # Adams 2014: the incumbent of constrained EI is the best posterior mean among the
                    # feasible points): over the best single measurement, a lucky noisy value, EI is
                    # next to nothing near the optimum, and EI times a chance of success of 0.002 in the
                    # failing region, where the GP has seen nothing and is wide, won: a user test's noisy
                    # objective (noise sd 0.05) spent 35 of 80 evaluations failing, 1 with this (the
                    # liar 2); bench/failures.py's cliff-noisy: 282 failed evaluations in 20 runs -> 67.
                    # Without noise the two are nearly the same (its six noise-free scenarios: lower
                    # regret in 52 of 119 paired runs, higher in 67)
                    acquisition = replace(acquisition, incumbent="observed")
        plateau = self._plateau(reference, trials)
        if plateau is not None:
            near = plateau if near is None else np.vstack([near, plateau])
        x = suggest(
            reference,
            acquisition,
            self.space,
            pending=self._encode_trials([t for t in trials if t.state == PENDING]),
            failed=self._encode_trials(failed),
            exclude=busy_X,
            seed=self.seed * 100_003 + index,
            n_anchors=self._n_anchors,
            fixed=fixed,
            success=success,
            near=near,
        )
        return self._design_point(index, busy_X) if x is None else x

    def _probe_due(self, trials: Sequence[Trial]) -> bool:
        """Whether this ask is ``transfer="auto"``'s probe: the cold design's first point (its next
        one not yet taken), once the study holds the warm design and :data:`PROBE_AFTER` more
        trials, unless a point of the cold design is among its trials already.

        RGPE's weights rank each source by how well it orders the target's own observations (the
        ranking loss, 003 eq. 6); when every observation was chosen by the sources, the loss judges
        them only where they pointed. A misleading source (the target negated: its best points the
        target's worst) sends the design to a region where the target is flat, orders those points
        no worse than the target's own GP does, and keeps its weight: on Hartmann-6 it kept weight
        for 12 asks and the run ended at regret 2.57 where the cold run ended at 0.16 (seed 2,
        bench/useless_sources.py). One point that no source chose shows the ranking the target
        outside the sources' region; it costs a model ask where the sources are right. Placed after
        3 model asks so that the regret after 5 evaluations on related sources is untouched (a
        probe right after the warm design cost HPOBench and SVM there; docs/transfer.md, "The
        probe").

        Decided from the study's state, not from one trial count, so that parallel workers (whose
        asks may skip a count), a point told from outside, or a design size changed on reopening
        neither skip the probe nor repeat it: due while the study holds from ``n_initial +
        PROBE_AFTER`` to ``n_initial + PROBE_AFTER + default_n_initial(d)`` trials (of its own, any
        state), at least two complete, began with the warm design (a warm point among its trials:
        sources given to a study whose own design was over are not probed), and holds none of the
        cold design's first ``default_n_initial(d)`` points (a probe, or the cold fallback's points,
        already showed the ranking the target elsewhere; a probe that failed does not count, so the
        cold design's next point replaces it, within the same window). A batch asked before any
        result takes the sources' next points, as before.
        """
        if not (
            COLD_PROBE and self._source is not None and self.transfer == "auto" and self._refuted is None
        ):
            return False
        own = [t for t in trials if t.worker != PRIOR_WORKER]
        first = self.n_initial + PROBE_AFTER
        m = cold_design_size(self.space)
        if not first <= len(own) < first + m or sum(t.state == COMPLETE for t in own) < 2:
            return False
        warm = self.warm_design()
        X = self._encode_trials(own)
        if warm is None or not taken(warm.points, X).any():
            return False
        # a probe that failed (the objective crashed there) showed nothing: the cold design's next
        # point replaces it (the probe skips the failed point as taken), within the same window
        shown = self._encode_trials([t for t in own if t.state != FAILED])
        return not taken(self._cold_design_head(m), shown).any()

    def _cold_design_head(self, k: int) -> np.ndarray:
        """The first ``k`` points of the cold design (:meth:`_cold_design_point`'s sequence, encoded,
        before any point is skipped as taken), kept: the probe's check reads them on each of up to
        20 asks (7 ms each at d = 20)."""
        head = self._cold_heads.get(k)
        if head is None:
            if self.space.is_finite:
                head = self.space.candidates[self._cold_order()[:k]]
            else:
                head = self.space.sample_encoded(int(2 ** math.ceil(math.log2(max(k, 1)))), self.seed)[:k]
            self._cold_heads[k] = head
        return head

    def _cold_order(self) -> np.ndarray:
        """A finite space's cold design: the seeded random order of its candidates (drawn once)."""
        if self._cold_permutation is None:
            size = self.space.candidates.shape[0]
            self._cold_permutation = np.random.default_rng(self.seed).permutation(size)
        return self._cold_permutation

    def _plateau(self, reference, trials: Sequence[Trial]) -> np.ndarray | None:
        """The encoded complete trials whose near-repeats this ask avoids, or None. With
        ``transfer="auto"``, while its ensemble gives the sources weight (``sources_weight_ > 0``):
        the study's own complete trials that have a neighbour of exactly the same value, a prior
        correlation above :data:`~warmbo.suggest.BATCH_CORRELATION` under the target GP's kernel
        away (the radius within which a batch keeps apart from its pending points,
        :func:`~warmbo.suggest.too_close`; 0.035 lengthscales for Matern-5/2). Two such trials show
        the objective flat there (a validation accuracy is a count of correct answers), so a third
        is the same experiment. The search takes the best point outside those radii, or, if every
        candidate is inside, drops the rule (:func:`~warmbo.suggest.suggest`).

        Why: RGPE's prediction keeps the sources' terms at a point the study has evaluated, since a
        source GP never sees the target's observations. Its variance ``sum_i w_i^2 sigma_i^2(x)``
        does not collapse there, and its mean, on each source's own z-scores, need not pass through
        the observation (docs/transfer.md, "The incumbent and the sources' scale"). So EI over the
        best observation stays positive at the incumbent, and with the exact repeat excluded the
        search returned a hair from it. On cash-digits (bench/conditional.py, a prior of 30 random
        trials on breast cancer, 10 seeds) the warm runs spent a median of 3 (warmbo's loop) and 6
        (Optuna's WarmboSampler) of 30 evaluations within 1% of the range of an earlier trial, one
        run 17, most of them returning the very same accuracy; the cold runs 0.

        Why only at ties (docs/transfer.md, "Near-repeats"): avoiding near-repeats of every complete
        trial (``ENSEMBLE_APART = "all"``) also took the ensemble's refinement of smooth objectives:
        on bench/transfer_continuous.py's related sources it ended behind after 10 evaluations in 38
        draws of 80 and ahead in 22 (p = 0.05), though it helped the noisy lab problem of
        bench/warm_categorical.py (Pd found in 23 of 30 seeds instead of 19). This rule acts only
        where two trials have exactly one value (a quantised objective, a plateau, a point told
        twice), which a smooth or noisy objective does not give. Ties shrink the target GP's
        lengthscale along the flat direction, and the radius with it, so the search can still
        step just outside: the rule halved the near-repeats on a rounded bowl, not more. A cold
        GP's variance collapses at its observations, and ``rgpe`` stays as published."""
        if ENSEMBLE_APART is None or not self._sources_weigh(reference):
            return None
        own = [t for t in trials if t.state == COMPLETE and t.worker != PRIOR_WORKER and t.value is not None]
        own = own[-PLATEAU_TRIALS:]
        if ENSEMBLE_APART == "all":
            return self._encode_trials(own) if own else None
        by_value: dict[float, list[Trial]] = {}
        for trial in own:
            by_value.setdefault(float(trial.value), []).append(trial)
        flat: list[np.ndarray] = []
        for group in by_value.values():
            if len(group) > 1:
                X = self._encode_trials(group)
                tied = crowded(reference, X)
                if tied is None:  # (no kernel that measures distance: nothing is avoided)
                    return None
                if tied.any():
                    flat.append(X[tied])
        return np.vstack(flat) if flat else None

    def _sources_weigh(self, reference) -> bool:
        """Whether ``transfer="auto"``'s ensemble ``reference`` gives its sources weight
        (``sources_weight_ > 0``) and no verdict has set them aside: when :meth:`_plateau` acts."""
        if self.transfer != "auto" or self._source is None or self._refuted is not None:
            return False
        weight = getattr(reference, "sources_weight_", None)
        return weight is not None and weight > 0

    def _sources_lost(self, reference, n_trials: int) -> bool:
        """Whether this ask takes the cold design's next point instead of the model's: the transfer
        model gives its sources no weight at all (``sources_weight_ == 0``: the target's own GP ranks
        its observations best in every draw) while the study holds fewer trials (pending and failed
        ones too, as the cold design counts them) than the cold design has points
        (:func:`default_n_initial`). A study whose sources proved useless
        then has the cold optimizer's space-filling start, less the points already spent, instead of
        a GP of a few points clustered where the sources pointed (on Levy-6 with a constant, a
        pure-noise or a negated source: median regret after 30 evaluations 7.4, 3.4 and 2.5 with it,
        against 12.6, 14.1 and 12.6 without and 5.4 cold; bench/useless_sources.py). This rule
        never overrules sources with any weight, and never sends a study past the cold design's
        size back to it (``auto``'s probe, :meth:`_probe_due`, is one such ask whatever the
        weights)."""
        if self._source is None or not COLD_FALLBACK:
            return False
        weight = getattr(reference, "sources_weight_", None)
        return weight is not None and weight == 0 and n_trials < cold_design_size(self.space)

    def _verdict(self, trials: Sequence[Trial]) -> tuple[Refutation | None, bool]:
        """The probe's verdict on this study's sources (:mod:`warmbo.transfer.verdict`): whether two
        points of the cold design (the probe, :meth:`_probe_due`, its confirmation, or the cold
        fallback's, :meth:`_sources_lost`) each did better than every trial the sources
        chose before them; and whether this ask is the confirmation (one did, and it is the study's
        only cold point). ``transfer="auto"`` only (``rgpe`` stays as published), for a study that
        began with the warm design of these sources and holds no verdict against other sources
        (sources given after a verdict did not choose the trials it read); read from the study's
        first ``n_initial + PROBE_AFTER + 2 m`` own trials (m: the cold design's size), the window in
        which the probe, its confirmation and the fallback take their cold points, so that it costs
        the same at every ask of a long study."""
        if not (COLD_VERDICT and self._source is not None and self.transfer == "auto"):
            return None, False
        if self._other_verdict:
            return None, False
        m = cold_design_size(self.space)
        window = self.n_initial + PROBE_AFTER + 2 * m
        own = [t for t in trials if t.worker != PRIOR_WORKER]
        n_own = len(own)
        if not self.n_initial < n_own <= window:
            # (past the window the study is judged already: a study that grew before the verdict
            # existed, reopened, is not sent back to a cold design at trial 20)
            return None, False
        X = self._encode_trials(own)
        warm = self.warm_design()
        if warm is None or not taken(warm.points, X).any():
            return None, False  # sources given after the study's own start chose none of these trials
        cold = self._cold_trials(own, X)
        if not cold.any():
            return None, False
        values = np.array([np.nan if t.value is None else t.value for t in own], dtype=np.float64)
        complete = np.array([t.state == COMPLETE for t in own])
        pending = np.array([t.state == PENDING for t in own])
        ids, signed = [t.id for t in own], self._signed(values)
        found = refutation(ids, values, signed, complete, cold, pending, n_trials=n_own)
        if found is not None:
            return found, False
        failed = np.array([t.state == FAILED for t in own])
        return None, confirmation_due(ids, values, signed, complete, cold, failed)

    def _cold_trials(self, trials: Sequence[Trial], X: np.ndarray | None = None) -> np.ndarray:
        """Which of the study's own ``trials`` (in order; ``X`` their encoding) are cold points to
        :meth:`_verdict`: at one of the cold design's first m points, past the design, and not at a
        point of the warm design (on a grid the sources' own choice can be a cold design point: a
        review found right sources set aside by their own second point)."""
        own = [t for t in trials if t.worker != PRIOR_WORKER]
        X = self._encode_trials(own) if X is None else X
        cold = taken(X, self._cold_design_head(cold_design_size(self.space)))
        warm = self.warm_design()
        if warm is not None and len(warm):
            cold &= ~taken(X, warm.points)
        cold[: self.n_initial] = False
        return cold

    def _set_aside(self, refuted: Refutation, reached: Sequence[Trial] | None = None) -> None:
        """Continue without the sources the verdict refuted: the model prototype becomes the cold
        optimizer's (:func:`~warmbo.models.default_model` with the kernel given, on the cold
        default's output transform), and the next asks take the cold design's points first
        (:meth:`_restart_due`). ``reached``: the trials of the ask with which this object reached
        the verdict (it keeps it with the study and says so once); None when it was read from the
        study."""
        before = tuple(  # (an object being made has not all of them yet)
            getattr(self, name, None)
            for name in ("_refuted", "model", "output_transform", "_warm_start", "_fixed_fit", "_inspected")
        )
        try:
            self._refuted = refuted
            self.model = default_model(self.space.dim, self.seed, self._default_kernel(self._kernel))
            if self._transform_default:
                self.output_transform = "yeo-johnson"
            self._warm_start, self._fixed_fit, self._inspected = {}, None, None
            if reached is None:
                return
            if not self.study.readonly:
                record = {"digest": self._prior_digest, "transfer": self.transfer, **refuted.to_dict()}
                report = self._transfer_report(self.model, self.study.count(COMPLETE))
                self.study.set_metas(
                    {
                        _REFUTED_KEY: json.dumps(record),
                        "transfer_report": json.dumps(report.to_dict(), default=str),
                    }
                )
        except BaseException:
            # not stored (a dropped connection in its reads or its write: the ask makes it again): as it
            # was, so that the ask made again reaches the verdict again and stores it (a review: it
            # found the sources set aside in memory, never stored the verdict nor said it)
            (self._refuted, self.model, self.output_transform, self._warm_start, self._fixed_fit,
             self._inspected) = before  # fmt: skip
            raise
        first = max(0, self._restart_size() - self._cold_held(reached))
        then = {0: "its GP alone", 1: "the cold design's next point first"}.get(
            first, f"the cold design's next {first} points first"
        )
        _warn(f"{refuted} ({then})", SourcesSetAsideWarning)

    def _restore_refutation(self, announce: bool = False) -> bool:
        """Set the sources aside when the study keeps a verdict against these very sources (reached
        by another object; its verdict names the trials it saw). ``announce``: say so (an ask of an
        object that did not know it, another worker's: its user learns it too; a new object, as
        `warmbo suggest` makes, is told by `warmbo status` and the report instead). A verdict
        against other sources (replaced since) leaves these unjudged (``_other_verdict``)."""
        if self._source is None or self.transfer != "auto" or not COLD_VERDICT:
            return False
        text = self.study.get_meta(_REFUTED_KEY)
        if text is None:
            return False
        try:
            record = json.loads(text)
            refuted = Refutation.from_dict(record)
        except (ValueError, KeyError, TypeError, AttributeError):
            return False  # unreadable: reached again from the trials at the next ask
        if record.get("digest") != self._prior_digest or record.get("transfer") != self.transfer:
            self._other_verdict = True
            return False
        self._set_aside(refuted)
        if announce:
            _warn(f"another worker's ask: {refuted}", SourcesSetAsideWarning)
        return True

    def _restart_size(self) -> int:
        """How many of the cold design's first points a study whose sources were set aside holds
        before its GP asks (:meth:`_restart_due`): half the cold design, ``ceil(m / 2)``.

        Measured against the whole design, none, and the cold fallback's rule (cold points while
        the study holds fewer than m trials), on bench/useless_sources.py's four problems with one
        pure-noise or negated source (20 seeds) and five negated ones (12 seeds); docs/transfer.md,
        "The verdict", has the table. With no cold points first, the GP on the sources' clustered
        points stayed stuck in low dimensions (Hartmann-3 with one negated source: mean regret 0.50
        against 0.12 with half the design); the whole design spent the budget again at d = 6
        (Hartmann-6 with a noise source: median 0.48 against 0.19; cold 0.14)."""
        return (cold_design_size(self.space) + 1) // 2

    def _restart_due(self, trials: Sequence[Trial]) -> bool:
        """Whether this ask, in a study whose sources were set aside, takes the cold design's next
        point: while fewer than :meth:`_restart_size` of the cold design's first points are among
        its own trials (a failed one counts: the restart does not chase replacements)."""
        return self._cold_held(trials) < self._restart_size()

    def _cold_held(self, trials: Sequence[Trial]) -> int:
        """How many of the cold design's first m points are among the study's own ``trials``."""
        own = [t for t in trials if t.worker != PRIOR_WORKER]
        head = self._cold_design_head(cold_design_size(self.space))
        return int(taken(head, self._encode_trials(own)).sum()) if own else 0

    _multitask = False  # MultiTaskOptimizer: the one optimizer that opens multi-task studies

    # what a subclass may change in the shared BO step (warmbo.suggest)
    _n_anchors = _N_ANCHORS  # best observations around which the search draws local candidates
    _fantasise_failed = True  # failed points as a constant liar at the worst observed value

    def _acquisition_for(self, reference) -> Acquisition:
        """The acquisition of this ask (a subclass may build it from the fitted model)."""
        return self.acquisition

    @blas_limited  # it may fit and maximise source models
    def warm_design(self) -> WarmDesign | None:
        """The warm initial design from the transfer sources (:mod:`warmbo.transfer.warm_design`),
        computed once from every source row (not only the ``max_prior`` rows the model sees); None
        without transfer sources."""
        if self._source is None:
            return None
        if self._warm is None:
            # stored with the study by the first object that computed it: a reopened study does not
            # pay for it again (50 sources x 300 rows of a continuous space: 0.85 s of k-d tree queries)
            # (version 2: on a continuous space the second point is the first one's source-model maximum)
            version = 1 if self.space.is_finite else 2
            key = json.dumps(
                {"digest": self._prior_digest, "size": self.n_initial, "seed": self.seed, "version": version},
                sort_keys=True,
            )
            self._warm = self._stored_warm_design(key)
            if self._warm is None:
                X, y, task = self._design_rows
                self._warm = warm_design(
                    X,
                    y,
                    task,
                    size=self.n_initial,
                    candidates=self.space.candidates if self.space.is_finite else None,
                    seed=self.seed,
                )
                if not self.space.is_finite:
                    snap, seed = self.space.snap, self.seed
                    self._warm = source_model_maxima(self._warm, X, y, task, snap=snap, seed=seed)
                if not self.study.readonly:
                    record = {
                        "key": key,
                        "points": self._warm.points.tolist(),
                        "scores": list(self._warm.scores),
                        "n_sources": self._warm.n_sources,
                        "n_candidates": self._warm.n_candidates,
                    }
                    self.study.set_meta(_WARM_DESIGN_KEY, json.dumps(record))
        return self._warm

    def _stored_warm_design(self, key: str) -> WarmDesign | None:
        text = self.study.get_meta(_WARM_DESIGN_KEY)
        if text is None:
            return None
        try:
            record = json.loads(text)
            if record["key"] != key:
                return None
            points = np.asarray(record["points"], dtype=np.float64).reshape(-1, self.space.dim)
            return WarmDesign(
                points,
                tuple(map(float, record["scores"])),
                int(record["n_sources"]),
                int(record["n_candidates"]),
            )
        except (ValueError, KeyError, TypeError):
            return None  # a record of another version: computed again

    def _design_point(
        self, index: int, busy_X: np.ndarray, before_results: bool = False, cold_index: int | None = None
    ) -> np.ndarray:
        """Point ``index`` of the initial design, skipping points that must not be repeated.

        With transfer sources, the first points are the warm design's (best first, those already
        taken skipped); then, as without sources: continuous spaces take the scrambled Sobol sequence
        of the study's seed, finite spaces a seeded random order of the candidates (Sobol over a
        finite set would repeat points). Past the first ``n_initial`` points, a design kept on while
        fewer than two trials are complete (``before_results``: a batch ``ask(k)`` or parallel
        workers asking before results come in) continues with the warm design's next points, up to
        the cold design's size (:meth:`_warm_points`), and Sobol after them. ``cold_index``: the
        Sobol point to take (default ``index``; :meth:`_chosen_point` gives the trial's position, so
        that asks without fixed values do not take the points asks with them took).
        """
        warm = self._warm_points(index, busy_X, before_results)
        if warm is not None and warm.shape[0]:
            # the design phase takes the warm points first, whatever was told before (an Optuna
            # trial, a point evaluated outside the optimizer); Sobol once they are all taken
            free = warm[~taken(warm, busy_X)]
            if free.shape[0]:
                return free[0].copy()
        return self._cold_design_point(index if cold_index is None else cold_index, busy_X)

    def _cold_design_point(self, index: int, busy_X: np.ndarray) -> np.ndarray:
        """Point ``index`` of the design a study without sources takes (skipping points that must not
        be repeated): the scrambled Sobol sequence of the study's seed, or on a finite space a seeded
        random order of the candidates."""
        if self.space.is_finite:
            candidates = self.space.candidates
            order = self._cold_order()
            rotated = np.concatenate([order[index % order.size :], order[: index % order.size]])
            free = rotated[~taken(candidates[rotated], busy_X)]
            if free.size:
                return candidates[free[0]].copy()
            raise SpaceExhaustedError("every candidate of the finite search space is pending or failed")
        n = max(self.n_initial, index + 1)
        for _ in range(8):
            design = self.space.sample_encoded(
                int(2 ** math.ceil(math.log2(n + busy_X.shape[0] + 1))), self.seed
            )
            free = design[index:][~taken(design[index:], busy_X)]
            if free.shape[0]:
                return free[0]
            n *= 2
        raise SpaceExhaustedError("the search space has no point left that is not pending or failed")

    def _warm_points(self, index: int, busy_X: np.ndarray, before_results: bool) -> np.ndarray | None:
        """The warm design points open to design point ``index`` (encoded, best first; None without
        sources).

        Within the first ``n_initial`` points: the warm design (:meth:`warm_design`). Past them, while
        fewer than two trials are complete (``before_results``) and the study began with this warm
        design (its points are all in ``busy_X``), the same design extended to
        ``max(n_initial, default_n_initial(d))`` points (the rule's next points: both rules choose
        one point at a time, so the design's first points are unchanged). A batch asked before any
        result, or parallel workers starting together, thus spend the points a cold study spends on
        Sobol on the sources' next-best configurations instead (before, points 4 to k of a warm
        ``ask(k)`` were the cold Sobol design's), and never more than a cold design has: the sources
        may mislead, and the model that weighs them needs results first. Sources given to a study
        whose design was over (``prior=`` on a reopened study, ``--prior-add``) are not suggested as
        its design: its first points were not theirs.
        """
        if self._source is None:
            return None
        if index < self.n_initial:
            warm = self.warm_design()
            return None if warm is None else warm.points
        if not before_results:
            return None
        size = max(self.n_initial, cold_design_size(self.space))
        warm = self.warm_design()
        if index >= size or warm is None or not taken(warm.points, busy_X).all():
            return None
        if self._warm_extended is None:
            if len(warm) < self.n_initial:  # the sources have no more configurations
                self._warm_extended = warm.points
            else:
                X, y, task = self._design_rows
                finite = self.space.is_finite
                candidates = self.space.candidates if finite else None
                more = warm_design(X, y, task, size=size, candidates=candidates, seed=self.seed)
                if not finite:
                    more = source_model_maxima(more, X, y, task, snap=self.space.snap, seed=self.seed)
                # the stored design first (one stored by another version may differ), then the rest
                extra = more.points[~taken(more.points, warm.points)]
                self._warm_extended = np.vstack([warm.points, extra])[:size]
        return self._warm_extended

    def _from_sources(self, x: np.ndarray, held: Fixed | None = None) -> bool:
        """Whether encoded point ``x`` is one of the warm design's (a source's configuration, bit for
        bit; with ``held``, in the columns it does not fix): decoded as written
        (``Space.decode(as_written=True)``), so that a source's ``lr = 0.001`` is suggested as 0.001,
        not as ``0.0010000000000000002``."""
        free = np.ones(x.shape[0], dtype=bool)
        if held is not None:  # (a warm point with fixed values set: its other values as written)
            free[held.columns] = False
        return any(
            points is not None and bool((points[:, free] == x[free]).all(axis=1).any())
            for points in (None if self._warm is None else self._warm.points, self._warm_extended)
        )

    def _check_room(self, count: int) -> None:
        """Refuse at once an ``ask(count)`` that a finite space (a grid, or integers, categoricals
        and step parameters only) cannot serve: at most its points that
        are not pending or failed can be suggested (evaluated ones come back once every point has
        been tried), and finding them one by one first took a minute for a 1200-point grid."""
        cardinality = int(self.space.cardinality)
        held = [t for t in self.study.snapshot() if t.state in (PENDING, FAILED)]
        busy = np.unique(self._encode_trials(held), axis=0).shape[0] if held else 0
        if count > cardinality - busy:
            raise SpaceExhaustedError(
                f"ask({count}) asks for more points than the finite search space has free: it has "
                f"{cardinality} point(s), {busy} of them pending or failed, so at most "
                f"{cardinality - busy} can be suggested now; none was stored"
            )

    @overload
    def ask(self, n: None = None, *, fixed: Mapping[str, Any] | None = None) -> Suggestion: ...

    @overload
    def ask(self, n: int, *, fixed: Mapping[str, Any] | None = None) -> list[Suggestion]: ...

    @blas_limited
    def ask(
        self, n: int | None = None, *, fixed: Mapping[str, Any] | None = None
    ) -> Suggestion | list[Suggestion]:
        """Suggest the next point(s) to evaluate and store them as pending trials.

        Parameters
        ----------
        n : int, optional
            Number of points; ``ask()`` returns one :class:`Suggestion`, ``ask(n)`` a list of n.
        fixed : dict, optional
            Parameters whose values are already decided (``{"batch_size": 64}``: what the free GPU
            fits; the catalyst on the shelf): every point returned has them, and the others are
            chosen with them held (Ax's ``fixed_features``). While the design runs, the design's next
            point with these values; after it, the acquisition maximised over the other parameters
            (:mod:`warmbo.fixed`). Points waiting in the queue (:meth:`enqueue`) and trials reclaimed
            from silent workers wait for an ask without ``fixed``. A point taken already (pending,
            failed or evaluated) is never returned: when the design's point with these values is, a
            random free point with them is. ``fixed`` naming every parameter asks for that point
            (:meth:`enqueue` queues it instead); an empty dict holds nothing, as None does.

        Returns
        -------
        Suggestion or list of Suggestion
            Parameter dicts with a ``trial_id`` attribute.

        Raises
        ------
        SpaceError
            ``fixed`` names an unknown parameter or holds an invalid value (nothing is stored).
        SpaceExhaustedError
            No point with the ``fixed`` values is left (every one is pending, failed or evaluated).

        Warns
        -----
        UnansweredAskWarning
            Once per optimizer: ``ask()`` called again (on the main thread) while the trial it
            suggested last is still pending and nothing was told since. That trial stays pending and
            counts as running; ``ask(n)`` asks for a batch, ``tell`` or ``tell_failed`` closes it.
        """
        count = 1 if n is None else check_int(n, "n", 1)
        if isinstance(fixed, Mapping) and not fixed:
            fixed = None  # nothing held (a dict built conditionally, Ax's fixed_features={})
        held = None if fixed is None else fix(self.space, fixed)
        by_hand = n is None and self._asks_by_hand and threading.current_thread() is threading.main_thread()
        if by_hand:
            self._warn_unanswered_ask()
        # (with heartbeat_grace, an ask may reclaim silent pending trials, which the bound counts as held)
        if count > 1 and math.isfinite(self.space.cardinality) and self.heartbeat_grace is None:
            self._check_room(count)
        if self._check_stored_sources:
            self._check_stored_sources = False
            self._warn_stored_sources()
        suggestions: list[Suggestion] = []
        stored: list[tuple[int, dict]] = []  # (id, point) of the trials this call added
        try:
            for _ in range(int(count)):
                suggestions.append(self._ask_one(stored=stored, fixed=held))
        except BaseException as exc:
            # all or nothing: the points stored before the failure were never handed out, so they
            # must not stay pending (they would block those points, and a finite space, for good)
            if stored:
                try:
                    self._remove_own_pending(stored)
                except Exception as cleanup:  # noqa: BLE001 - the first error is the one to report
                    ids = [i for i, _ in stored]
                    exc.add_note(f"(and trials {ids}, stored before it, could not be removed: {cleanup})")
                    raise
            if suggestions and type(exc) in (ValueError, SpaceExhaustedError):
                partial = type(exc)(
                    f"ask({count}) found {len(suggestions)} point(s), then: {exc}; none of them was stored"
                )
                partial.found, partial.then = len(suggestions), str(exc)  # (the CLI says it as -n)
                raise partial from exc
            if suggestions:
                exc.add_note(f"ask({count}) found {len(suggestions)} point(s) before this; none was stored")
            raise
        if by_hand:
            self._last_ask = (suggestions[0].trial_id, self._tells)
        if self._asks_by_hand and not self._repeats_said and math.isfinite(self.space.cardinality):
            self._say_repeated_asks(suggestions)
        return suggestions[0] if n is None else suggestions

    def _say_repeated_asks(self, suggestions: Sequence[Suggestion]) -> None:
        """Say (once per optimizer) that an ask by hand suggested points measured before: a finite
        space whose every point has been tried offers its points again (second measurements), which
        ``run`` says with its RepeatedPointsWarning and ``ask``/``warmbo suggest`` said nowhere (a user
        test read a repeat as a new suggestion; a ``fixed`` slice then repeats too, where it raised
        SpaceExhaustedError while other points were free)."""
        trials = self.study.trials()
        measured = [t for t in trials if t.state == COMPLETE and t.worker != PRIOR_WORKER]
        if not measured:
            return
        again = taken(self.space.encode([dict(s) for s in suggestions]), self._encode_trials(measured))
        # (the space's exhaustion checked only when a suggestion repeats: an ask has read it already)
        if not again.any() or self._busy(trials).shape[0] == len(trials):  # (else MT-KB's own repeats)
            return
        self._repeats_said = True
        first = suggestions[int(np.flatnonzero(again)[0])]
        _warn(
            f"every point of the finite search space has been tried, so {int(again.sum())} of the "
            f"{len(suggestions)} suggestion(s) repeat points measured before (trial {first.trial_id}: "
            f"{_point_text(dict(first))}): a second measurement, which a noisy objective can use; a "
            "deterministic one gives the value it had. (Said once per optimizer.)",
            RepeatedPointsWarning,
        )

    def _warn_unanswered_ask(self) -> None:
        """Say (once) that the trial the last ``ask()`` suggested is still pending, nothing told since."""
        if self._unanswered_warned or self._last_ask is None:
            return
        trial_id, tells = self._last_ask
        if tells != self._tells:
            return
        try:
            if self.study.trial(trial_id).state != PENDING:
                return
        except TrialNotFoundError:
            return
        self._unanswered_warned = True
        _warn(
            f"ask() again while trial {trial_id}, which the last ask() suggested, is still pending and "
            f"nothing was told since: it stays pending, and the optimizer treats it as running (it "
            f"suggests points away from it, and `warmbo status` lists it). To evaluate several points "
            f"at once, ask for a batch with ask(n). To close trial {trial_id}, tell its result with "
            f"opt.tell({trial_id}, value); if it will not be evaluated, take it out with "
            f"opt.withdraw({trial_id}). "
            f"(Said once per optimizer.)",
            UnansweredAskWarning,
        )

    def _remove_own_pending(self, stored: list[tuple[int, dict]]) -> None:
        """Delete, in one transaction, the trials ``stored`` lists that are still this call's: pending,
        this worker's and at the recorded point. An id is recorded inside the transaction that inserts
        it, so an interruption before that commit leaves an id whose row was rolled back, and SQLite
        may give the same id to the next writer: that trial is another's and stays."""
        with self.study.transaction():
            ours = []
            for trial_id, params in stored:
                try:
                    trial = self.study.trial(trial_id)
                except TrialNotFoundError:
                    continue
                if trial.state == PENDING and trial.worker == self.worker and trial.params == params:
                    ours.append(trial_id)
            self.study.delete_trials(ours)

    # ------------------------------------------------------------------ heartbeats
    def heartbeat(self, trial_id=None) -> int:
        """Tell the study this worker is alive: refresh the heartbeat of one pending trial, or of
        every pending trial of this worker (``trial_id=None``). Returns how many were refreshed.
        Call it while an evaluation runs when ``heartbeat_grace`` is set (``run`` does it itself)."""
        if trial_id is not None:
            return self.study.heartbeat([self._resolve(trial_id)])
        mine = [t.id for t in self.study.trials((PENDING,)) if t.worker == self.worker]
        return self.study.heartbeat(mine)

    def _reclaim(self, claimed: list[tuple[int, dict]] | None = None) -> Suggestion | None:
        """Reclaim the pending trials whose worker has been silent longer than ``heartbeat_grace``:
        mark them failed, or (``reclaim="retry"``) take the oldest over as this ask's suggestion (its
        id appended to ``claimed`` inside the transaction, as ``_ask_one`` records an insert)."""
        if self.heartbeat_grace is None:
            return None
        now = time.time()
        stale = [i for i, beat in self.study.last_beats().items() if now - beat > self.heartbeat_grace]
        if not stale:
            return None
        taken_over = None
        with self.study.transaction():  # re-checked under the lock: two workers never both take one
            beats = self.study.last_beats()
            for trial_id in sorted(stale):
                beat = beats.get(trial_id)
                if beat is None or now - beat <= self.heartbeat_grace:
                    continue  # finished or alive again meanwhile
                trial = self.study.trial(trial_id)
                if trial.worker == self.worker and trial_id in self._handed_out:
                    continue  # this optimizer gave it out and is asking: it may be evaluating it still
                # (a trial of this worker's name that this optimizer did not give out is a dead
                # incarnation's: a worker restarted under the same worker= after kill -9. Before, it
                # was skipped as "alive" and stayed pending for good; a user test)
                record = {
                    "from": trial.worker, "to": self.worker, "silent_s": round(now - beat, 1),
                    "mode": self.reclaim, "at": now,
                }  # fmt: skip
                if self.reclaim == "fail":
                    self.study.fail(
                        trial_id,
                        error=f"worker {trial.worker} silent for {now - beat:.0f} s "
                        f"(heartbeat_grace {self.heartbeat_grace:g} s); reclaimed by {self.worker}",
                    )
                elif taken_over is None:
                    self.study.reassign(trial_id, self.worker, now)
                    self._handed_out.add(trial_id)
                    taken_over = Suggestion(trial.params, trial.id)
                    if claimed is not None:
                        claimed.append((trial.id, trial.params))
                else:
                    continue  # one re-queued trial per ask; the next asks take the others
                self.study.set_meta(f"reclaimed:{trial_id}", json.dumps(record))
        return taken_over

    @blas_limited  # run() calls it directly, not through ask(); nested under ask() it costs nothing
    def _ask_one(
        self,
        attempts: int = 3,
        stored: list[tuple[int, dict]] | None = None,
        admit: Callable[[], bool] | None = None,
        fixed: Fixed | None = None,
    ) -> Suggestion:
        """Choose a point on a snapshot without holding the store's lock (fitting and maximising can
        take seconds), then insert it in a short transaction that re-checks that no other worker
        took the same point meanwhile; if one did, start again from a fresh snapshot. A trial
        reclaimed from a silent worker (``heartbeat_grace``, ``reclaim="retry"``) comes first.
        The id of a trial it adds is appended to ``stored`` inside the inserting transaction, so an
        exception at any moment (a signal turned into one) leaves no added trial out of ``stored``.
        ``admit`` (``run``'s budget) is asked inside that transaction, before the insert: False raises
        :class:`_BudgetReached`; an admitted trial gets its first heartbeat in the same transaction, so
        other runs count it from the moment it exists.

        A write transaction the server cuts by dropping the connection (PostgreSQL: a restart, a
        failover, ``pg_terminate_backend``, an idle timeout) is made again on a new connection, on the
        same snapshot and point (the transaction re-checks them), up to
        :data:`LOST_CONNECTION_RETRIES` times in all; when the drop came at the COMMIT, which may have
        reached the server, the trial it inserted (or took over) is this ask's if it is stored.
        With ``fixed`` (:meth:`ask`'s), every point has those values; the queue and reclaimed trials
        are left for the next ask without them."""
        stored = [] if stored is None else stored
        lost: list[ConnectionLostError] = []

        def written(step: Callable[..., Suggestion | None], recorded: list[tuple[int, dict]], *args):
            """``step(*args)`` (which makes one write transaction, recording in ``recorded`` the trial
            it adds or takes over), made again while the server drops its connection."""
            while True:
                mark = len(recorded)
                try:
                    return step(*args)
                except ConnectionLostError as exc:
                    found = self._lost_write_outcome(exc, recorded, mark)
                    if found is not None:
                        return found
                    count_lost(exc)

        def count_lost(exc: ConnectionLostError) -> None:
            """One more drop in this ask: past :data:`LOST_CONNECTION_RETRIES`, the ask stops."""
            lost.append(exc)
            if len(lost) > LOST_CONNECTION_RETRIES:
                raise StorageError(self._lost_ask_message(lost)) from None

        def insert_params(params: dict) -> Suggestion:
            if admit is not None and not admit():
                raise _BudgetReached
            trial = self.study.add_trial(params, PENDING, worker=self.worker)
            stored.append((trial.id, trial.params))
            self._handed_out.add(trial.id)
            if admit is not None:
                self.study.heartbeat([trial.id])
            return Suggestion(trial.params, trial.id)

        def insert(x, held: Fixed | None = None) -> Suggestion:
            as_written = self._from_sources(x, held)  # (a source's configuration: its values as written)
            params = self.space.decode(x, as_written=as_written)[0]
            if held is None:
                return insert_params(params)
            params.update(held.params)  # as given (decoding a log scale's 0.01 gives 0.009999999999999995)
            suggestion = insert_params(params)
            self.study.set_meta(f"{FIXED_PREFIX}{suggestion.trial_id}", json.dumps(held.params, default=str))
            return suggestion

        def checked(x, snapshot: list[Trial], version, entry=None, held=None) -> Suggestion | None:
            """Insert ``x`` unless another worker took it since ``snapshot`` (then None); mark the
            partial queue ``entry`` it completes taken (:meth:`_claim`)."""
            with self.study.transaction():
                # nothing written since the snapshot (the usual case): no need to read every trial again
                current = snapshot if self.study.version() == version else list(self.study.snapshot())
                if current is not snapshot and current != snapshot:
                    # another worker acted meanwhile: its new trials (in any state, they may already be
                    # complete) and every pending or failed point are off limits
                    known = {t.id for t in snapshot}
                    fresh = [t for t in current if t.id not in known]
                    taken = self._busy(current)
                    if fresh:
                        taken = np.vstack([taken, self.space.encode([t.params for t in fresh])])
                    if self._collides(x, taken) or self._beside_fresh_pending(x, fresh):
                        return None
                suggestion = insert(x, held)
                self._claim(entry, suggestion)
                return suggestion

        def contended(entry=None, held=None) -> Suggestion:
            with self.study.transaction():  # contended: a design point, chosen under the lock
                current = list(self.study.trials())
                early = sum(t.state == COMPLETE for t in current) < 2
                busy = self._busy(current)
                x = self._design_point(len(current), busy, before_results=early)
                suggestion = insert(x if held is None else self._held(x, held, busy, len(current)), held)
                self._claim(entry, suggestion)
                return suggestion

        def chosen(snapshot: list[Trial], held: Fixed | None):
            """The point the model (or the design) chooses; its records of the fit (the warm start,
            the transfer report, the source fits: writes of their own) made again while the server
            drops the connection (a user test: one pg_terminate_backend during the warm start's write
            stopped the worker, where the insert's own drop is survived)."""
            while True:
                try:
                    return self._next_point(snapshot, len(snapshot), held)
                except ConnectionLostError as exc:
                    count_lost(exc)

        claimed: list[tuple[int, dict]] = []  # (a trial taken over, recorded as an insert is)
        reclaimed = None if fixed is not None else written(self._reclaim, claimed, claimed)
        if reclaimed is not None:
            return reclaimed
        while True:
            queued = None if fixed is not None else written(self._take_queued, stored, insert_params)
            if queued is not None and not isinstance(queued, tuple):  # (a Suggestion: a whole point taken)
                return queued
            entry, held = (None, fixed) if queued is None else queued  # (a partial entry: choose the rest)
            mark = len(stored)
            try:
                for _ in range(attempts):
                    version = self.study.version()  # before the snapshot: a write in between is a change
                    snapshot = list(self.study.snapshot())
                    x = chosen(snapshot, held)
                    suggestion = written(checked, stored, x, snapshot, version, entry, held)
                    if suggestion is not None:
                        return suggestion
                return written(contended, stored, entry, held)
            except _QueueTaken:  # another worker took the partial entry: the queue's next one, or the design
                del stored[mark:]  # (the transaction that inserted a trial for it was rolled back)
            except SpaceExhaustedError:
                if entry is None:
                    raise
                # no free point has the partial entry's values: it would stop every later ask and
                # run (a review), so it leaves the queue with a warning, and the next one is taken
                del stored[mark:]
                self._drop_exhausted(entry)

    def _lost_write_outcome(
        self, exc: ConnectionLostError, recorded: list[tuple[int, dict]], mark: int
    ) -> Suggestion | None:
        """After an ask's write transaction was cut by a dropped connection: the trial it added or took
        over (``recorded[mark:]``) when the transaction is stored after all (the drop came after the
        COMMIT reached the server: the trial is there, pending, this worker's, at the recorded point;
        one transaction, so its heartbeat and the budget's check are stored with it), else None. The
        records of a transaction that is not stored are dropped: nothing of it is in the study. Read on
        a new connection (made as the reads make it, waiting for the server)."""
        cut = recorded[mark:]
        del recorded[mark:]
        if not exc.at_commit:
            return None  # (the server rolls back a transaction whose connection it drops)
        for trial_id, params in cut:
            try:
                trial = self.study.trial(trial_id)
            except TrialNotFoundError:
                continue
            except StorageError as error:  # the server is not back: whether it was stored is unknown
                raise StorageError(
                    f"{error}; trial {trial_id}, which this ask was storing when the server dropped the "
                    "connection at its COMMIT, may have been stored: if it was, it stays pending, and "
                    f"`warmbo clean-pending --storage {shlex.quote(redacted(self.study.url))} --all` marks "
                    "it failed"
                ) from None
            if trial.state == PENDING and trial.worker == self.worker and trial.params == params:
                recorded.append((trial_id, params))
                return Suggestion(trial.params, trial.id)
        return None

    def _lost_ask_message(self, lost: list[ConnectionLostError]) -> str:
        """Why an ask stopped after the server dropped its connection more often than it retries."""
        return (
            f"the server of {redacted(self.study.url)} dropped the connection {len(lost)} times while "
            f"this ask stored its trial (last: {lost[-1].reason}); no trial of this ask was stored and "
            "no value was lost: every finished trial stays in the study. Once the server keeps its "
            "connections, ask again, or run again (a run goes on to its budget)"
        )

    def _resolve(self, trial_or_params) -> int | None:
        if isinstance(trial_or_params, Suggestion | Trial):
            # the parameters it carries must be the stored trial's: a suggestion edited after the ask,
            # or one from another study, would otherwise store a value under a point never evaluated
            if isinstance(trial_or_params, Suggestion):
                trial_id, given, kind = trial_or_params.trial_id, dict(trial_or_params), "suggestion"
            else:
                trial_id, given, kind = trial_or_params.id, trial_or_params.params, "trial"
            stored = self.study.trial(trial_id).params
            if self.space.validate(given) != stored:
                raise ValueError(
                    f"the {kind}'s parameters {given} are not those of trial {trial_id} in this study "
                    f"({stored}): was it changed after the ask, or does it come from another study? "
                    "Tell the parameters evaluated as a plain dict instead"
                )
            return trial_id
        if isinstance(trial_or_params, int | np.integer) and not isinstance(trial_or_params, bool):
            return int(trial_or_params)
        if isinstance(trial_or_params, dict):
            params = self.space.validate(trial_or_params)
            pending = self.study.trials((PENDING,))
            for trial in pending:
                if trial.params == params:
                    return trial.id
            # the settings of a pending suggestion as copied or rounded ("0.00123457" for
            # 0.001234567891): the one pending trial equal in every parameter but a continuous float,
            # and in those to 6 significant digits, is completed, stored as suggested (telling it as a
            # new trial left the suggestion pending for good, counted as running)
            close = [t for t in pending if self._rounded_copy(t.params, params)]
            return close[0].id if len(close) == 1 else None
        raise ValueError(
            f"tell needs a Suggestion, Trial, trial id or parameter dict, got {trial_or_params!r}"
        )

    def _rounded_copy(self, suggested: dict, told: dict) -> bool:
        """Whether ``told`` is ``suggested`` with its continuous floats rounded to 6 significant digits
        or more: within 5e-6 of their value (half a unit of the 6th digit is at most that; and 1e-12
        of the range, for values near 0); every integer, categorical and grid parameter equal; the
        same parameters present (a conditional space's points hold their active ones only)."""
        if set(suggested) != set(told):
            return False
        for p in self.space.params:
            if p.name not in suggested:
                continue
            a, b = suggested[p.name], told[p.name]
            if type(p) is Float and p.step is None:
                if abs(a - b) > 5e-6 * max(abs(a), abs(b)) + 1e-12 * (p.high - p.low):
                    return False
            elif a != b:
                return False
        return True

    def tell(self, trial_or_params, value) -> Trial:
        """Record the objective value of a suggestion, trial, trial id, or of any parameter dict.

        A dict that matches a pending trial completes it; any other valid dict is stored as a new
        complete trial (a point evaluated outside the optimizer). The value is committed to the
        store before this returns.
        """
        self._tells += 1
        resolved: list[int | None] = []  # (the trial the first attempt resolved: kept for the next)
        for attempt in range(LOST_CONNECTION_RETRIES + 1):
            try:
                with self.study.transaction():
                    if not resolved:
                        resolved.append(self._resolve(trial_or_params))
                    if resolved[0] is None:
                        return self.study.add_trial(
                            trial_or_params, COMPLETE, value=value, worker=self.worker
                        )
                    return self.study.complete(resolved[0], value)
            except ConnectionLostError as exc:
                # the server dropped the connection (a restart, pg_terminate_backend): told again on a
                # new one, as an ask's write is (a user test: the team recipe's worker died on one
                # drop, its value lost). The trial the first attempt resolved is told again, its value
                # the stored one if that COMMIT got through (a dict resolved again would no longer
                # match a pending trial, and be stored as a second one: a review); a new trial whose
                # COMMIT may have got through is not inserted again
                new_trial = bool(resolved) and resolved[0] is None
                if attempt == LOST_CONNECTION_RETRIES or (exc.at_commit and new_trial):
                    self._raise_unstored(resolved, trial_or_params, value, exc)
            except (StoreUnavailableError, sqlite3.OperationalError) as exc:  # (not what the study refuses)
                self._raise_unstored(resolved, trial_or_params, value, exc)
        raise AssertionError("unreachable")  # pragma: no cover

    def _raise_unstored(self, resolved: list, trial_or_params, value, error: Exception) -> None:
        """Raise ``error`` for a tell that the store could not take, naming the trial and the value
        when the tell was of a trial (``run`` said both; a bare tell gave only "lost the connection to
        the server": PostgreSQL user test), with how to record it once the study can be written
        again. The trial is the one the tell resolved, else the one it was given (a suggestion, a
        trial, an id: the store may fail before anything is resolved)."""
        trial_id = resolved[0] if resolved else None
        if trial_id is None and not resolved:
            given = trial_or_params.id if isinstance(trial_or_params, Trial) else trial_or_params
            given = getattr(given, "trial_id", given)
            trial_id = given if isinstance(given, int) and not isinstance(given, bool) else None
        if trial_id is None:
            raise error
        message = _unstored_message(self.study.url, trial_id, value, error)
        # (the same type as the store's: a caller's `except ConnectionLostError` still catches it, and
        # run's record reads at_commit from it; the review)
        if isinstance(error, ConnectionLostError):
            raised: StorageError = ConnectionLostError(
                message, at_commit=error.at_commit, reason=error.reason
            )
        else:
            raised = StoreUnavailableError(message)
        raised.unstored = True  # (the whole message already: run's record does not wrap it again)
        raise raised from error

    def amend(self, trial, value=None, failed: bool = False, note: str | None = None) -> Trial:
        """Correct a complete trial whose value was recorded wrongly (``value``), or mark it failed
        (``failed=True``, ``note`` says why). The earlier result is kept in the study
        (:meth:`~warmbo.storage.Study.amend`, meta ``amended:<id>``); committed before this returns."""
        with self.study.transaction():
            trial_id = self._amended_id(trial)
            _refuse_prior_row(self.study.trial(trial_id), "amend")
            return self.study.amend(trial_id, value, failed=failed, note=note, by=person())

    def withdraw(self, trial, note: str | None = None) -> Trial:
        """Take a trial out of the study (:meth:`~warmbo.storage.Study.withdraw`): a result recorded
        twice, a suggestion run at other settings or never run. Nothing reads it afterwards: not the
        model (a failed trial is read by the failure model, ``failures``; a withdrawn one is not there), not
        ``best``, not the counts. The trial as it stood, ``note`` and who withdrew it are kept in the
        study (meta ``withdrawn:<id>``). A pending trial that a live run is evaluating (its heartbeat
        within the last :data:`LIVE_BEATS` x :data:`HEARTBEAT_INTERVAL` s) is refused: the run would
        fail telling it. Returns the trial as it stood."""
        if isinstance(trial, dict) and not isinstance(trial, Suggestion):
            raise ValueError("withdraw needs the trial (its id, Trial or Suggestion), not a parameter dict")
        trial_id = trial.id if isinstance(trial, Trial) else getattr(trial, "trial_id", trial)
        with self.study.transaction():
            stored = self.study.trial(trial_id)
            _refuse_prior_row(stored, "withdraw")
            silent = live_run_trials(self.study).get(stored.id) if stored.state == PENDING else None
            if silent is not None:
                raise StorageError(
                    f"trial {stored.id} is being evaluated by a live run ({stored.worker}, heartbeat "
                    f"{silent:.0f} s ago): withdrawing it would make that run fail when it reports; stop "
                    "the run first, or withdraw the trial once it has reported"
                )
            return self.study.withdraw(stored.id, note=note, by=person())

    def _amended_id(self, trial) -> int:
        if isinstance(trial, dict) and not isinstance(trial, Suggestion):
            raise ValueError("amend needs the trial (its id, Trial or Suggestion), not a parameter dict")
        return self._resolve(trial)

    def tell_failed(self, trial_or_params, error: str | None = None) -> Trial:
        """Mark a trial failed; it is kept (and not proposed again) but has no value."""
        self._tells += 1
        with self.study.transaction():
            trial_id = self._resolve(trial_or_params)
            if trial_id is None:
                return self.study.add_trial(trial_or_params, FAILED, worker=self.worker, error=error)
            return self.study.fail(trial_id, error)

    # ------------------------------------------------------------------ points of the user's, first
    def enqueue(self, params: Mapping | Sequence[Mapping]) -> list[dict]:
        """Have these points evaluated first: the next asks, of this optimizer or of any other worker
        of the study, return them in the order given, before the design or the model chooses.

        For a configuration known to be good (last run's best, a default that works), as Optuna's
        ``Study.enqueue_trial``. The queue is stored in the study (meta entries ``queued:<n>``,
        :mod:`warmbo.enqueued`), so it survives the process and ``Optimizer.load``; an ask takes a
        point in the transaction that stores its trial, so two workers never take the same one. A
        queued point counts towards the initial design as any trial does (one queued point, then
        ``n_initial - 1`` design points), and an ask returns it even during a transfer's warm design.

        Parameters
        ----------
        params : dict or sequence of dicts
            Points of the space (valid values). A point that names some of the parameters only is
            partial, as Optuna's ``enqueue_trial`` takes: the ask that takes it chooses the others
            with these held (the design's point with them while the design runs, the acquisition's
            maximiser on their slice after it: :meth:`ask`'s ``fixed``).

        Returns
        -------
        list of dict
            The points queued, validated. A (whole) point that is already a complete or pending trial
            of the study, or already waits in the queue, is not queued again, with a warning naming
            it: no point is suggested twice. A partial point is always queued (twice, if given twice:
            two asks with those values). A point whose trial failed can be queued: that is how a failed
            configuration is tried again (the design and the model never suggest it again by
            themselves; ``warmbo enqueue --failed`` queues every one).

        Raises
        ------
        SpaceError
            A point that is not one of the space's (naming the point and what is wrong); nothing
            is queued then.
        """
        if isinstance(params, Mapping):
            points, one = [params], True
        elif isinstance(params, Sequence) and not isinstance(params, str | bytes):
            points, one = list(params), False
        else:
            raise TypeError(f"enqueue needs a parameter dict or a list of them, got {type(params).__name__}")
        if not points:
            raise ValueError("enqueue needs a parameter dict or a list of them, got an empty list")
        validated = []
        for i, point in enumerate(points):
            if not isinstance(point, Mapping):
                raise TypeError(
                    f"enqueue's point {i + 1} of {len(points)} is a {type(point).__name__}, "
                    "not a parameter dict"
                )
            try:
                if not point:  # (validate said "missing parameter(s) [every one]": partial points are fine)
                    raise SpaceError("it names no parameter: give a value for one at least")
                validated.append(self._queue_point(point))
            except SpaceError as exc:
                which = "the point of enqueue" if one else f"enqueue's point {i + 1} of {len(points)}"
                raise SpaceError(f"{which}: {exc}; nothing was queued") from None
        skipped = []
        with self.study.transaction():
            every = list(self.study.trials())
            entries, waiting, _ = self._queue_state({t.id: t for t in every})
            trials = [t for t in every if t.state != FAILED]  # (a failed point may be tried again)
            X = self._encode_trials(trials) if trials else None
            held = [params for _, params in waiting if self._whole(params)]
            fresh = []
            whole = [point for point in validated if self._whole(point)]
            nearest = iter(taken_by(self.space.encode(whole), X) if whole else ())
            for point in validated:
                if not self._whole(point):  # partial: its other values are chosen at the ask
                    fresh.append(point)
                    continue
                near = next(nearest)
                if near >= 0:
                    trial = trials[int(near)]
                    same = (
                        ""
                        if trial.params == point
                        else f", within {DUPLICATE_TOLERANCE:g} of the space's range"
                    )
                    skipped.append(f"{_point_text(point)} (trial {trial.id}, {trial.state}{same})")
                elif held and taken(self.space.encode([point]), self.space.encode(held))[0]:
                    skipped.append(f"{_point_text(point)} (queued already)")
                else:
                    held.append(point)
                    fresh.append(point)
            if fresh:
                self.study.set_metas(new_records(entries, fresh))
        if skipped:
            _warn(
                f"not queued, since no point is suggested twice: {'; '.join(skipped)}",
                UserWarning,
            )
        return fresh

    def _queue_point(self, point: Mapping) -> dict:
        """A queued point validated: a whole one by the space, one naming some of the parameters
        (a partial one) by :func:`~warmbo.fixed.fix`; one naming none is the space's to refuse. In a
        conditional space the values its others make inactive are dropped first, and a point is
        whole when it names every parameter active at it."""
        if isinstance(point, Mapping) and self.space.is_conditional:
            off = self.space.inactive(point)
            point = {k: v for k, v in point.items() if k not in off}
        named = sum(name in point for name in self.space.names)
        if named and self.space.missing(point):
            return fix(self.space, point).params
        return self.space.validate(point)

    def _whole(self, params: Mapping) -> bool:
        """Whether validated ``params`` name every parameter active at them (not a partial queued point)."""
        return not self.space.missing(params)

    def queued(self) -> list[dict]:
        """The points :meth:`enqueue` queued that the next asks will take, in the order they take them
        (a point told meanwhile as a trial of its own is not among them: the ask drops it)."""
        if not self.study.meta_items(QUEUE_PREFIX):
            return []
        _, waiting, _ = self._queue_state({t.id: t for t in self.study.trials()})
        return [dict(params) for _, params in waiting]

    def clear_queue(self) -> int:
        """Remove the points still waiting in the queue (:meth:`enqueue`); returns how many."""
        with self.study.transaction():
            _, waiting, _ = self._queue_state({t.id: t for t in self.study.trials()})
            for entry, _ in waiting:
                self.study.delete_meta(entry.key)
        return len(waiting)

    def _queue_state(
        self, trials_by_id: Mapping[int, Trial]
    ) -> tuple[list[QueuedPoint], list[tuple[QueuedPoint, dict]], list[str]]:
        """Every entry of the queue (waiting or taken), the entries still waiting, in order, each with
        its point validated, and the keys of the entries done with: taken ones whose trial is told or
        failed, and waiting ones whose point is (within :data:`~warmbo.maximize.DUPLICATE_TOLERANCE`)
        a complete or pending trial already (a failed one's may be queued again), told meanwhile
        as an experiment of its own, or that no longer read as a point of the space (edited by
        hand). A partial entry (some parameters) waits until an ask takes it."""
        entries = queue_records(self.study)
        done = stale_keys(entries, trials_by_id)
        candidates = []
        for entry in entries:
            if not is_waiting(entry, trials_by_id):
                continue
            try:
                params = self._queue_point(entry.params)
            except SpaceError:
                done.append(entry.key)
                continue
            candidates.append((entry, params))
        whole = [k for k, (_, params) in enumerate(candidates) if self._whole(params)]
        if not whole:
            return entries, candidates, done
        trials = [t for t in trials_by_id.values() if t.state != FAILED]  # (a failed point queued again)
        X = self._encode_trials(trials) if trials else None
        told = taken(self.space.encode([candidates[k][1] for k in whole]), X)  # one query for all
        gone = {k for k, t in zip(whole, told, strict=True) if t}
        done += [candidates[k][0].key for k in sorted(gone)]
        waiting = [c for k, c in enumerate(candidates) if k not in gone]
        return entries, waiting, done

    def _take_queued(
        self, insert_params: Callable[[dict], Suggestion]
    ) -> Suggestion | tuple[QueuedPoint, Fixed] | None:
        """The first point still waiting in the queue (:meth:`enqueue`), stored as this ask's trial by
        ``insert_params`` in the transaction that marks its entry taken; None when none waits; when
        the first waiting entry is partial, that entry and its values as :meth:`ask`'s ``fixed``
        (the ask chooses the other values without the lock, then marks it: :meth:`_claim`). Without
        queue entries an ask costs one read of the meta entries; while entries exist, the queue is
        first judged on the ask's snapshot without the lock, and a write transaction is opened only
        when a point waits or an entry is done with (deleted on the way), not for every ask while a
        taken point's trial is pending. A waiting point that became a trial meanwhile (told as an
        experiment of its own) is dropped, not suggested again."""
        if not self.study.meta_items(QUEUE_PREFIX):
            return None
        _, waiting, done = self._queue_state({t.id: t for t in self.study.snapshot()})
        if not waiting and not done:
            return None
        with self.study.transaction():
            _, waiting, done = self._queue_state({t.id: t for t in self.study.trials()})
            suggestion = None
            if waiting:
                entry, params = waiting[0]
                if not self._whole(params):
                    suggestion = (entry, fix(self.space, params))
                else:
                    suggestion = insert_params(params)
                    self.study.set_meta(entry.key, replace(entry, trial=suggestion.trial_id).record())
            for key in done:
                self.study.delete_meta(key)
        return suggestion

    def _drop_exhausted(self, entry: QueuedPoint) -> None:
        """Remove the partial queue ``entry`` none of whose points is free, if it still waits, and say
        so (:class:`UserWarning`)."""
        with self.study.transaction():
            trials = {t.id: t for t in self.study.trials()}
            current = next((e for e in queue_records(self.study) if e.key == entry.key), None)
            if current is None or not is_waiting(current, trials):
                return  # (another worker took it or removed it meanwhile)
            self.study.delete_meta(entry.key)
        shown = ", ".join(f"{k}={v!r}" for k, v in entry.params.items())
        _warn(
            f"the queued configuration with {shown} was removed from the queue: every point of the "
            "search space with these values is pending, failed or evaluated",
            UserWarning,
        )

    def _claim(self, entry: QueuedPoint | None, suggestion: Suggestion) -> None:
        """Mark the partial queue ``entry`` an ask chose the rest of taken by ``suggestion``'s trial,
        inside the transaction that stored that trial; :class:`_QueueTaken` when another worker took
        it meanwhile (the transaction is rolled back and the ask starts again)."""
        if entry is None:
            return
        trials = {t.id: t for t in self.study.trials()}
        current = next((e for e in queue_records(self.study) if e.key == entry.key), None)
        if current is None or current.params != entry.params or not is_waiting(current, trials):
            raise _QueueTaken
        self.study.set_meta(entry.key, replace(current, trial=suggestion.trial_id).record())

    def _import_prior(self, prior, storage) -> None:
        """``prior=..., transfer="none"``: the rows as trials of this study, once. A file or a study
        (a path, a URL; alone or in a list of them) is imported as the command line imports it, on
        its own, tagged by its contents and recorded with where it comes from
        (:func:`warmbo.prior.import_source`), so that reopening with the same line after the source
        grew adds only its new rows; before, the whole prior was one import tagged by the hash of
        every row, and each reopening after the source changed imported every row again (a
        PostgreSQL user test: 3 rows, then 7 for 4). Any other form is one import tagged by its rows."""
        from .prior import as_prior, import_source, import_tag, is_one_source, single_task

        if self.study.get_meta(f"prior:{self._prior_digest}") is not None:
            return  # (this very prior, imported whole as before session 50: nothing new in it)
        entries = [prior] if isinstance(prior, str | os.PathLike) else prior
        if not (isinstance(entries, list | tuple) and entries and all(is_one_source(e) for e in entries)):
            self.add_prior(self.prior, tag=self._prior_digest)
            return
        for entry in entries:
            part = self.prior if len(entries) == 1 else as_prior(entry, self.space, self.maximize, storage)
            part = single_task(part)
            if isinstance(entry, str | os.PathLike):
                self.add_prior(part, tag=import_tag(entry, part), source=import_source(entry))
            else:  # (data in memory: one import each, tagged by its rows; a list of them was refused,
                # "several tasks needs a transfer model", where a list of files worked: a user test)
                self.add_prior(part, tag=digest(part))

    def add_prior(self, data, tag: str | None = None, source: str | None = None) -> int:
        """Tell prior observations of this same objective (a :class:`~warmbo.data.TaskData`, or any
        form ``prior=`` takes: ``(X, y)``, records, a DataFrame, a CSV file, a study).

        Rows are stored, in one transaction (all or nothing), as complete trials with worker
        ``"prior"``; the model sees at most ``max_prior`` of them (:func:`warmbo.prior.prior_subset`).
        With ``tag`` (e.g. the file's hash) the import happens once per study: a second call with the
        same tag adds nothing, and :meth:`remove_prior` can take exactly these rows out again.
        ``source`` names where the rows come from (the CLI: the file's absolute path): a later
        version of the same source (another tag: a spreadsheet that grew) adds only its rows that
        no earlier import of that source holds (the same parameters and value, counted), and its
        record (:meth:`priors`) says how many it skipped and how many rows of the earlier imports
        the new version no longer has. Returns the number of trials added.
        """
        if not isinstance(data, TaskData):
            # any form prior= takes ((X, y), records, a DataFrame, a CSV file, a study): only a
            # TaskData was, and (X, y) met "'tuple' object has no attribute 'space'" (hostile-input
            # user test)
            from .prior import as_prior

            data = as_prior(data, self.space, self.maximize, self.study)
        if getattr(data, "task", None) is not None and len(set(np.asarray(data.task).tolist())) > 1:
            raise ValueError(
                "prior data with several tasks needs a transfer model; the optimizer takes one task"
            )
        if data.space != self.space:
            raise ValueError(
                "prior data were validated against a different space: "
                + "; ".join(data.space.diff(self.space))
            )
        key = f"prior:{tag}" if tag else None
        with self.study.transaction():
            if key and self.study.get_meta(key) is not None:
                return 0
            rows = list(zip(data.params, (float(v) for v in data.y), strict=True))
            extra: dict = {}
            if source is not None:
                known = self._rows_of_source(source)
                # rows of imports that recorded no source (``prior=[...], transfer="none"`` in Python
                # before session 50 tagged the whole prior): the same rows again are not imported
                # again (the upgrade user test: the CLI given the same study stored its 5 rows twice),
                # nor counted as gone from this source
                legacy = self._rows_of_source(None)
                fresh = []
                for params, value in rows:
                    row = _row_key(params, value)
                    if known.get(row, 0) > 0:
                        known[row] -= 1
                    elif legacy.get(row, 0) > 0:
                        legacy[row] -= 1
                    else:
                        fresh.append((params, value))
                extra = {"source": source, "skipped": len(rows) - len(fresh), "gone": sum(known.values())}
                rows = fresh
            ids = [
                self.study.add_trial(params, COMPLETE, value=value, worker=PRIOR_WORKER).id
                for params, value in rows
            ]
            if key:
                self.study.set_meta(key, json.dumps({**self._prior_record(ids), **extra}))
        return len(rows)

    def _rows_of_source(self, source: str | None) -> dict[str, int]:
        """(parameters, value) -> count of the rows that earlier tagged imports of ``source`` stored
        (``None``: the imports that recorded no source)."""
        ranges = [
            (record["first"], record["last"])
            for record in self.priors().values()
            if record.get("source") == source and record.get("first") is not None
        ]
        counts: dict[str, int] = {}
        for trial in self.study.trials((COMPLETE,)):
            if trial.worker == PRIOR_WORKER and any(a <= trial.id <= b for a, b in ranges):
                row = _row_key(trial.params, float(trial.value))
                counts[row] = counts.get(row, 0) + 1
        return counts

    @staticmethod
    def _prior_record(ids: Sequence[int]) -> dict:
        """What a tagged import stores (:meth:`priors` shows it, :meth:`remove_prior` reads it)."""
        return {
            "imported": time.time(),
            "rows": len(ids),
            "first": min(ids, default=None),
            "last": max(ids, default=None),
        }

    def priors(self) -> dict[str, dict]:
        """The tagged prior imports of this study: ``{tag: {"rows", "first", "last", "imported"}}``
        (imports made before rows were recorded per tag show only ``imported``)."""
        out = {}
        for key, value in self.study.meta_items("prior:").items():
            try:
                record = json.loads(value)
            except ValueError:
                record = None
            out[key[len("prior:") :]] = record if isinstance(record, dict) else {"imported": value}
        return out

    def remove_prior(self, tag: str | None = None, source: str | None = None) -> int:
        """Remove imported prior rows: those of one tagged import, those of every import of one
        ``source`` (each version of a file: :meth:`add_prior`), or every prior row (neither given),
        with their tags, in one transaction. Returns the number of trials removed."""
        if tag is not None and source is not None:
            raise ValueError("remove_prior takes a tag or a source, not both")
        with self.study.transaction():
            priors = self.priors()
            if tag is None and source is None:
                ids = [t.id for t in self.study.trials() if t.worker == PRIOR_WORKER]
                keys = [f"prior:{t}" for t in priors]
            else:
                if source is not None:
                    tags = [t for t, record in priors.items() if record.get("source") == source]
                    if not tags:
                        known = sorted({str(r["source"]) for r in priors.values() if r.get("source")})
                        raise ValueError(f"no prior import from {source!r}; sources: {known or 'none'}")
                elif tag not in priors:
                    raise ValueError(f"no prior import tagged {tag!r}; tags: {sorted(priors) or 'none'}")
                else:
                    tags = [tag]
                ranges = []
                for name in tags:
                    record = priors[name]
                    if "first" not in record:
                        raise ValueError(
                            f"prior import {name!r} predates per-tag records; remove every prior row instead"
                        )
                    if record["first"] is not None:
                        ranges.append((record["first"], record["last"]))
                ids = [
                    t.id
                    for t in self.study.trials()
                    if t.worker == PRIOR_WORKER and any(a <= t.id <= b for a, b in ranges)
                ]
                keys = [f"prior:{name}" for name in tags]
            self.study.delete_trials(ids)
            for key in keys:
                self.study.delete_meta(key)
        self._encoded.clear()
        return len(ids)

    # ------------------------------------------------------------------ run
    def run(
        self,
        objective: Callable[[dict], float],
        budget: int | None = None,
        n_workers: int | None = None,
        executor: Executor | None = None,
        callbacks: Iterable[Callable[[Optimizer, Trial], Any]] = (),
        progress: bool = True,
        retry_pending: bool = False,
        timeout: float | None = None,
        **unknown,
    ) -> Best | None:
        """Evaluate ``objective(params)`` until the study holds ``budget`` finished trials.

        Finished means complete or failed, so a resumed study continues where it stopped; imported
        prior rows (:meth:`add_prior`) do not count. An exception in the objective (or a value that is
        not a finite number) marks the trial failed and the run goes on, unless the first
        :data:`FIRST_FAILURES` evaluations of the run all fail with the same error (a typo raising
        NameError every time; NaN or inf every time only when the study holds no value yet, since a
        study that does has seen the objective work, and NaN is then its answer for a region): the
        run then stops with a :class:`RepeatedFailureError`, as
        ``warmbo optimize`` does, instead of spending its budget on it. Runs sharing a study leave
        places in the budget to each other's live evaluations (pending trials with a heartbeat within
        ``LIVE_BEATS`` heartbeat intervals), so they stop together at ``budget`` finished trials;
        suggestions from ``ask`` waiting for a result (no heartbeat) hold no place.

        Parameters
        ----------
        objective : callable
            Takes a parameter dict, returns a number (NaN/inf or an exception: trial failed).
        budget : int
            Total number of finished trials wanted in the study, imported prior rows not counted.
        n_workers : int, optional
            Concurrent evaluations (threads, unless an ``executor`` is given); default 1. With an
            ``executor`` that runs more than one evaluation at a time (a Dask cluster's, a pool's)
            and no ``n_workers``, the run warns that it evaluates one point at a time.
        executor : concurrent.futures.Executor, optional
            Where evaluations run (e.g. a ProcessPoolExecutor; the objective must then be picklable).
        callbacks : iterable of callables
            Each called as ``callback(optimizer, trial)`` after every finished trial.
        progress : bool
            Show a progress bar: this run's finished trials against what is left of the budget, the
            study's total beside them when it holds more (``5/5 trials (14 in the study)``), and the
            best value so far.
        retry_pending : bool
            First evaluate every trial left pending by an earlier run, except those a live run is
            evaluating (a heartbeat within the last 30 s, :func:`live_run_trials`; a killed run of
            this machine is known dead at once, one of another machine after those 30 s: a
            :class:`LiveTrialsLeftWarning` names them). A trial another worker records meanwhile
            keeps that result (a :class:`RecordedElsewhereWarning`), and the run goes on.
        timeout : float, optional
            Seconds after which the run asks for no new point: the clock is read before each ask, as
            Optuna's ``optimize(timeout=)`` reads it before each trial, so a point asked for before
            the limit is still evaluated (the run can last an ask and an evaluation longer); the
            evaluations under way finish and are recorded, and the run returns before its budget
            (``stopped_by_timeout`` is then True). Run again with the same budget to go on.

        Returns
        -------
        Best or None

        Raises
        ------
        RepeatedFailureError
            The first :data:`FIRST_FAILURES` evaluations of this run all failed with the same error.
        """
        if unknown or budget is None:
            self._refuse_run_arguments(unknown, budget)
        check_int(budget, "budget", 0)
        if n_workers is None:
            n_workers = 1
            if executor is not None:
                _warn_one_at_a_time(executor)
        check_int(n_workers, "n_workers", 1)
        if not callable(objective):
            raise ValueError(f"objective must be callable, got {objective!r}")
        deadline = None if timeout is None else _clock() + check_seconds(timeout, "timeout")
        self.stopped_by_timeout = False
        callbacks = list(callbacks)
        own_executor = executor is None and n_workers > 1
        if own_executor:
            executor = ThreadPoolExecutor(max_workers=n_workers)
        # a Dask client's executor gets the objective once per worker, not with every evaluation
        submitter = Submitter(executor, objective) if executor is not None and not own_executor else None
        queue: list[Suggestion] = []
        # the trial just asked, until an evaluation has it: an interrupt in between (inside the ask,
        # after its insert, or before the thread starts) would leave a pending trial nothing evaluates
        unstarted: list[tuple[int, dict]] = []
        created: set[int] = set()  # the trials this run inserted (not the retried or reclaimed ones)
        if retry_pending:
            # not the trials live runs are evaluating now (a user test: a third worker started with
            # --retry-pending evaluated two live workers' points a second time, at the same moment)
            # (this worker's own, under its name, are its: a worker restarted under its name retries
            # what its killed process left, as BudgetHeldWarning advises; and a process of this machine
            # that no longer exists evaluates nothing, as the budget counts it: _dead_here)
            pending = self.study.trials((PENDING,))
            workers = {t.id: t.worker for t in pending}
            live = {
                i
                for i in live_run_trials(self.study)
                if workers.get(i) != self.worker and not _dead_here(workers.get(i))
            }
            queue = [Suggestion(t.params, t.id) for t in pending if t.id not in live]
            if len(queue) < len(pending):
                _warn(
                    f"trial(s) {', '.join(str(i) for i in sorted(live))} are being evaluated by live runs "
                    "(a heartbeat within the last 30 s) and are left to them; a run of another machine "
                    "killed just now beats for 30 s more: retry again then",
                    LiveTrialsLeftWarning,
                )
        running: dict[Future, Suggestion] = {}
        cancelled: collections.Counter[int] = collections.Counter()  # evaluations the executor cancelled
        raised: dict[int, BaseException | None] = {}  # the first failed evaluations' exceptions
        # this run's failures warned of, left unsaid, the last unsaid (a run inside another, on the same
        # object, has its own and gives the outer one's back: _said_failures)
        outer_said, self._failures_said = getattr(self, "_failures_said", None), [0, 0, None]
        repeat_warned = False  # (said once per run)
        timed_out = False  # (stopped by ``timeout``: the places left are not held by anyone)

        # imported prior rows (add_prior, prior= with transfer="none") are complete trials that no run
        # evaluated: the budget counts the study's own
        n_prior = self._prior_rows()  # read once: a run adds no prior rows
        first_failures = _FirstFailures(  # (this objective's values, and its errors beside them)
            answered=self.study.count(COMPLETE) > n_prior, known=self._errors_beside_values()
        )

        def finished() -> int:
            return self._finished(n_prior)

        started = finished()  # (a resumed study's trials: the repeated-points warning counts from them)
        if started >= budget:  # (the bar read "9/5 trials" and nothing was said)
            warnings.warn(BudgetAlreadyReachedWarning(budget, started), stacklevel=user_stacklevel())
        # the bar counts this run's trials against what is left of the budget ("5/5 trials"), the study's
        # total beside it ("(14 in the study)"); before, it counted the study's ("9/14", then "14/14")
        bar = _ProgressBar(progress, max(budget - started, 0), started, self)
        # heartbeats always (`warmbo status` and `clean-pending --older-than` tell a live evaluation
        # from a dead one by them); reclaiming silent trials only with heartbeat_grace
        # the trials this run is evaluating, from the ask to the record: the only ones it beats, so a
        # pending trial of this worker that it does not evaluate (a suggestion waiting for a person, one
        # left by an interrupted run) does not look alive to this run or to others
        evaluating: set[int] = set()
        lock = threading.Lock()

        def beat_ids() -> list[int]:
            with lock:
                return sorted(evaluating)

        def evaluate(trial_id: int, add: bool) -> None:
            with lock:
                (evaluating.add if add else evaluating.discard)(trial_id)

        beating = _Heartbeats(self, beat_ids)

        def in_flight() -> int:
            """This run's evaluations and the live ones of other runs on the study (pending trials
            with a heartbeat within LIVE_BEATS intervals; a run beats each trial it evaluates as it
            asks it), so that runs sharing a study stop at ``budget`` finished trials together instead
            of each adding its own last one. Suggestions waiting for a person (never beating) hold no
            place."""
            mine = set(beat_ids()) | {s.trial_id for s in queue}
            return len(running) + len(self._live_elsewhere(mine, beating.interval))

        try:
            with bar:
                while True:
                    while len(running) < n_workers and finished() + in_flight() < budget:
                        if deadline is not None and _clock() >= deadline:
                            # no new evaluation after the timeout; a trial of this run the executor
                            # cancelled and queued again is withdrawn, not left pending
                            self._remove_own_pending(
                                [(s.trial_id, dict(s)) for s in queue if s.trial_id in created]
                            )
                            queue[:] = [s for s in queue if s.trial_id not in created]
                            timed_out = self.stopped_by_timeout = True
                            break
                        if queue:  # a retried trial is this worker's now: its heartbeats, its name
                            # (it stays in the queue until its evaluation is registered in running: an
                            # interrupt in between, during a resubmission after a client.restart(), say,
                            # would otherwise leave a trial this run asked for pending, known to nothing)
                            suggestion = queue[0]
                            self.study.reassign(suggestion.trial_id, self.worker)
                            self._handed_out.add(suggestion.trial_id)
                            evaluate(suggestion.trial_id, True)
                        else:
                            try:
                                if self._check_stored_sources:
                                    self._check_stored_sources = False
                                    self._warn_stored_sources()
                                # the budget is checked again where the trial is inserted, and the trial
                                # beats from there: another run's ask in between cannot add one too many
                                suggestion = self._ask_one(
                                    admit=lambda: finished() + in_flight() < budget, stored=unstarted
                                )
                                created.update(trial_id for trial_id, _ in unstarted)
                                evaluate(suggestion.trial_id, True)
                            except _BudgetReached:
                                break  # other runs' evaluations filled the budget during this ask
                            except SpaceExhaustedError as exc:
                                if running:  # the running ones may free points (finite spaces)
                                    break
                                message = f"run stopped before its budget: {exc}"
                                warnings.warn(message, BudgetNotReachedWarning, stacklevel=3)
                                return self.best
                        if executor is None:
                            if queue and queue[0] is suggestion:
                                queue.pop(0)  # (retried: pending before this run, so after an interrupt)
                            future: Future = Future()
                            unstarted.clear()  # (an interrupt during the evaluation leaves it pending)
                            try:
                                future.set_result(objective(dict(suggestion)))
                            except (Exception, SystemExit) as exc:  # noqa: BLE001 - any objective failure
                                # fails the trial; sys.exit() in a simulation wrapper too (it stopped
                                # the run with its trial pending and no word, a user test), as it
                                # already did with n_workers > 1
                                future.set_exception(exc)
                        elif own_executor:
                            # the run's own future, registered before its thread can start: a Ctrl-C
                            # between the two would otherwise leave a running evaluation unknown to
                            # the run (_record_interrupted waits for every one it knows)
                            future = Future()
                            running[future] = suggestion
                            unstarted.clear()  # (_record_interrupted knows it now)
                            if queue and queue[0] is suggestion:
                                queue.pop(0)
                            executor.submit(_evaluate_into, future, objective, dict(suggestion))
                            continue
                        else:
                            try:
                                future = submitter.submit(dict(suggestion))
                            except BrokenExecutor as broken:
                                # the pool broke while this run recorded, asked or ran callbacks (a
                                # review: its futures were then recorded failed by _stop_submitted)
                                self._remove_own_pending(unstarted)
                                unstarted.clear()
                                self._executor_broke(running, queue, created, evaluate, broken)
                        running[future] = suggestion
                        unstarted.clear()
                        if queue and queue[0] is suggestion:
                            queue.pop(0)
                        if executor is None:
                            break
                    if not running:
                        break
                    done = self._wait_for_one(running, submitter)
                    # (an objective that raises BrokenExecutor itself, its own inner pool's, on a pool
                    # that still works fails its trial as any exception does: a review)
                    broke = not own_executor and any(_broke(f) for f in done) and _pool_broken(executor)
                    for future in done:
                        if broke and _broke(future):
                            continue  # (said below, once the evaluations that ended are recorded)
                        suggestion = running[future]
                        if future.cancelled() and not own_executor and cancelled[suggestion.trial_id] < 3:
                            # cancelled by the executor (a Dask client.restart(), a lost worker's
                            # data), not by the objective: it says nothing of the point, which is
                            # evaluated again (before, the run stopped with a bare CancelledError and
                            # left the trials pending), up to three times: a fourth cancellation of
                            # the trial fails it
                            cancelled[suggestion.trial_id] += 1
                            del running[future]
                            evaluate(suggestion.trial_id, False)
                            queue.append(suggestion)
                            continue
                        trial = self._record(suggestion, future)
                        if trial.is_failed and len(raised) < FIRST_FAILURES and not future.cancelled():
                            raised[trial.id] = future.exception()  # (the objective's own, for its line)
                        del running[future]  # (after the record: an interrupt during it leaves it to
                        # _record_interrupted, which stores it if it is still pending)
                        evaluate(suggestion.trial_id, False)
                        done = finished()  # (one read of the study for both)
                        bar.advance(done)
                        if not repeat_warned:
                            repeat_warned = self._warn_repeat(trial, budget, done, started)
                        for callback in callbacks:
                            callback(self, trial)
                        unfinished = [s.trial_id for s in running.values()] + [s.trial_id for s in queue]
                        error = first_failures.stops(trial, unfinished)
                        if error is not None:
                            self._stop_evaluations(objective, running)
                            stopping = [s.trial_id for s in running.values()]
                            if submitter is not None:
                                # on a given executor (a Dask cluster's) this run's trials still
                                # running are withdrawn, not left pending: the error names only those
                                # that stay pending (retried from an earlier run, or not withdrawn).
                                # Before, it advised retry_pending=True for trials no longer there
                                stopping += [s.trial_id for s in queue]
                                self._stop_submitted(
                                    running,
                                    queue,
                                    created,
                                    evaluate,
                                    "stopped by RepeatedFailureError",
                                    finished,
                                )
                                running.clear()
                                still = {t.id for t in self.study.trials((PENDING,))}
                                stopping = [i for i in stopping if i in still]
                            # every trial of this run that failed (with several workers, more than
                            # the first three did before the run stopped)
                            failed_here = set(first_failures.failed) | {
                                t.id for t in self.study.trials((FAILED,)) if t.id in created
                            }
                            # the objective's exception, chained, and its own line in the message: a
                            # user test's KeyError showed no file or line, with --debug neither
                            first = raised.get(first_failures.failed[0]) if first_failures.failed else None
                            raise RepeatedFailureError(
                                error, sorted(stopping), sorted(failed_here), where=_user_line(first)
                            ) from first
                    if broke:
                        self._executor_broke(running, queue, created, evaluate)
        except KeyboardInterrupt as interrupt:
            threads = own_executor
            if own_executor and running and not self._record_interrupted(running, evaluate):
                own_executor = False  # interrupted twice: stop waiting for the threads
                executor.shutdown(wait=False, cancel_futures=True)
            # trials this run asked for but never evaluated (cancelled before their thread started,
            # or asked just before the interrupt) are withdrawn: left pending, they held places in the
            # budget (a rerun at once stopped short with a BudgetHeldWarning) and nothing would
            # evaluate them. A retried or reclaimed trial stays pending, as it was before the run
            if threads:
                unstarted += [
                    (s.trial_id, dict(s))
                    for f, s in running.items()
                    if f.cancelled() and s.trial_id in created
                ]
            with contextlib.suppress(Exception):  # (a store that fails now leaves them pending)
                self._remove_own_pending(unstarted)
            if submitter is not None:
                self._stop_submitted(running, queue, created, evaluate, "interrupted", finished)
            self._record_run_ended()
            # how to go on, under the traceback's last line (where a notebook's stop button leaves
            # the reader); the interrupt itself is what matters if the study cannot be read now
            with contextlib.suppress(Exception):
                mine = set(beat_ids()) | {s.trial_id for s in queue}
                left = sorted(t.id for t in self.study.trials((PENDING,)) if t.id in mine)
                interrupt.add_note(self._interrupted_note(finished(), budget, left))
            raise
        except BaseException as exc:
            # the trial just asked, that no evaluation has (an objective Dask could not send, an
            # ask's own error after its insert): withdrawn, as after an interrupt (it stayed pending)
            with contextlib.suppress(Exception):
                self._remove_own_pending(unstarted)
            if submitter is not None and (running or queue):
                # (a callback's error, a client.restart() that timed out: nothing records the
                # evaluations still running on the cluster after this)
                self._stop_submitted(
                    running, queue, created, evaluate, f"stopped by {type(exc).__name__}", finished
                )
            self._record_run_ended()
            raise
        finally:
            if beating is not None:
                beating.stop()
            if own_executor:
                executor.shutdown(wait=True, cancel_futures=True)
            if submitter is not None:
                submitter.close()
            # (stopped by an exception: the outer run's warnings given back, this one's left unsaid, so
            # that no warning a filter turns into an error takes the exception's place)
            self._said_failures(outer_said, quiet=sys.exc_info()[0] is not None)
        held = self._held_by_own_worker(beating.interval) if finished() < budget and not timed_out else []
        if held:
            # only this worker's own trials (a run of this process or host:pid interrupted just before):
            # other workers' live evaluations holding places is how runs sharing a study end together
            warnings.warn(
                f"run stopped at {finished()} of {budget} finished trials: {len(held)} pending trial(s) of "
                f"this worker ({self.worker}; trial(s) {', '.join(map(str, held))}) still beat fresh and "
                "hold the other places: left by an interrupted run of this worker, or being evaluated by "
                "another process under the same worker name (each process its own worker= name keeps "
                f"them apart). If none is running, run again with retry_pending=True to evaluate them, or "
                f"after {LIVE_BEATS * beating.interval:.0f} s",
                BudgetHeldWarning,
                stacklevel=user_stacklevel(),
            )
        elif finished() < budget and not timed_out:
            # other workers' evaluations hold the places: runs sharing a study end together so. But a
            # process killed by SIGKILL leaves its trials beating fresh for LIVE_BEATS intervals under
            # its own worker name (user@host:pid), and a run resumed at once stopped short, silently
            # (a user test: "finished: 11 of 12", rc 0); the CLI says so, and now run does too
            fresh = self._fresh_beats(beating.interval)
            others = sorted(t for t in fresh if t not in {s.trial_id for s in queue})
            if others:
                warnings.warn(
                    f"run stopped at {finished()} of {budget} finished trials: {len(others)} evaluation(s) "
                    f"in flight on other workers (trial(s) {', '.join(map(str, others))}; last heartbeat "
                    f"{min(fresh[t] for t in others):.0f} s ago at most) hold the remaining place(s). If "
                    "those workers are gone (a process killed on another machine), run again after "
                    f"{LIVE_BEATS * beating.interval:.0f} s, when their trials hold no place any more "
                    "(with retry_pending=True to evaluate them too; until then it leaves them to their "
                    "runs, which may be alive)",
                    HeldElsewhereWarning,
                    stacklevel=user_stacklevel(),
                )
        return self.best

    def _record_run_ended(self) -> None:
        """Store that this worker's run has stopped (``run_ended:<worker>``: the time): the pending
        trials it leaves still carry a fresh heartbeat for up to 30 s, and ``warmbo clean-pending``
        reads this to clear them at once instead of keeping them as a live run's. A store that fails
        now records nothing (the heartbeat then decides, as after ``kill -9``)."""
        if self.study.readonly:
            return
        with contextlib.suppress(Exception):
            self.study.set_meta(f"{RUN_ENDED_PREFIX}{self.worker}", repr(time.time()))

    def _interrupted_note(self, finished: int, budget: int, left: Sequence[int]) -> str:
        """What an interrupted :meth:`run` kept and how to go on, added to its KeyboardInterrupt (the
        last line of the traceback a notebook shows when its stop button is pressed)."""
        where = redacted(self.study.url)
        where = "this Optimizer's study (in memory)" if where == ":memory:" else where
        note = (
            f"warmbo: run interrupted at {finished} of {budget} finished trials, each stored in {where} "
            "as it finished; run it again to go on to the budget"
        )
        if left:
            note += (
                f". Trial(s) {_ids(left)}, whose evaluation was cut short, stay pending and are not "
                "evaluated again unless you pass retry_pending=True"
            )
        return note

    @staticmethod
    def _stop_evaluations(objective, running: dict[Future, Suggestion]) -> None:
        """A run stopping early: evaluations not started are cancelled, and a command objective's
        running commands are killed (a thread cannot be stopped, and the run waits for its threads)."""
        from .objective import CommandObjective, terminate_running

        for future in running:
            future.cancel()
        if isinstance(objective, CommandObjective):
            terminate_running()

    def _held_by_own_worker(self, interval: float) -> list[int]:
        """Ids of this worker's pending trials that no run of this object evaluates but whose
        heartbeat is fresh (within ``LIVE_BEATS`` intervals): left by a run interrupted just before."""
        fresh = self._fresh_beats(interval)
        mine = (t.id for t in self.study.trials((PENDING,)) if t.worker == self.worker)
        return sorted(i for i in mine if i in fresh)

    def _record_interrupted(self, running: dict[Future, Suggestion], evaluate) -> bool:
        """Ctrl-C (or the CLI's SIGTERM) in a run on its own threads: a thread cannot be stopped, and
        the executor waits for it anyway, so the evaluations still running are waited for and the
        values they return are stored (before, they were dropped and their trials left pending). One
        that fails now is left pending: the CLI kills its commands on the signal, and a killed command
        fails by the signal, not by its objective (``retry_pending`` evaluates it again). Returns
        False when interrupted again while waiting (those still running are left pending)."""
        for future in running:
            future.cancel()  # (one not started yet is never run)
        left = {future: s for future, s in running.items() if not future.cancelled()}
        if not left:
            return True
        ids = ", ".join(str(s.trial_id) for s in left.values())
        warnings.warn(
            f"interrupted: waiting for the {len(left)} evaluation(s) still running (trial(s) {ids}) to "
            "store their values; interrupt again to stop waiting and leave them pending (the process "
            "still cannot exit before they return: a thread cannot be stopped)",
            InterruptedRunWarning,
            stacklevel=user_stacklevel(),
        )
        try:
            for future in as_completed(left):
                suggestion = left[future]
                still = self.study.trial(suggestion.trial_id).state == PENDING  # (not stored just before)
                if future.exception() is None and still:
                    self._record(suggestion, future)
                evaluate(suggestion.trial_id, False)
        except KeyboardInterrupt:
            return False
        return True

    @staticmethod
    def _wait_for_one(running: dict, submitter: Submitter | None) -> set:
        """The finished futures of ``running``, once one is. On a Dask cluster that has had no
        workers for :data:`NO_WORKERS_AFTER` seconds while evaluations wait, says so once
        (``NoWorkersWarning``): a cluster whose workers all died (a nanny that could not restart
        them) left the run waiting with no word (Ray/Dask user, session 50)."""
        said = False
        while True:
            timeout = NO_WORKERS_AFTER if submitter is not None and submitter.client is not None else None
            done, _ = wait(list(running), return_when=FIRST_COMPLETED, timeout=timeout)
            if done:
                return done
            if not said and submitter.workers() == 0:
                said = True
                trials = ", ".join(str(s.trial_id) for s in running.values())
                warnings.warn(
                    f"the Dask cluster has no workers, and no evaluation ended in {NO_WORKERS_AFTER:.0f} s: "
                    f"the {len(running)} evaluation(s) in flight (trial(s) {trials}) wait for one. Start "
                    "workers, or see why they died (memory limits, a nanny that cannot restart them); "
                    "Ctrl-C stops the run and withdraws these trials",
                    NoWorkersWarning,
                    stacklevel=user_stacklevel(),
                )

    def _errors_beside_values(self) -> list[str | None]:
        """The errors of the study's failed trials that a complete trial of its own followed (asked
        later): the objective's answer for a region, which :class:`_FirstFailures` lets a resumed run
        meet again. An error no value followed (a run stopped by it, with the same bug rerun) is not
        one (a review: the rerun spent its whole budget failing)."""
        own = [t for t in self.study.trials((COMPLETE,)) if t.worker != PRIOR_WORKER]
        last = max((t.id for t in own), default=-1)
        return [t.error for t in self.study.trials((FAILED,)) if t.id < last]

    def _executor_broke(
        self, running, queue, created, evaluate, error: BaseException | None = None
    ) -> NoReturn:
        """Raise :class:`ExecutorBrokenError` for an executor that broke under this run (a process
        pool whose process died; ``error``: the break, else the broken futures' own). An evaluation
        that ended meanwhile is stored; one broken evaluation with none beside it ended its process,
        so it is marked failed; several broken together are withdrawn (those this run asked for; a
        retried one stays pending), since any of them may have; so are the queue's."""
        broken = [(f, s) for f, s in running.items() if _broke(f)]
        if error is None:
            error = broken[0][0].exception()
        for future, suggestion in list(running.items()):
            if future.done() and not future.cancelled() and not _broke(future):  # (ended meanwhile)
                self._record(suggestion, future)
                del running[future]
                evaluate(suggestion.trial_id, False)
        failed = []
        if len(broken) == 1 and len(running) == 1:
            future, suggestion = broken[0]
            self._record(suggestion, future)
            evaluate(suggestion.trial_id, False)
            failed.append(suggestion.trial_id)
            running.clear()
        leaving = [*running.values(), *queue]
        withdraw = [s for s in leaving if s.trial_id in created]
        pending = [s.trial_id for s in leaving if s.trial_id not in created]
        withdrawn = [s.trial_id for s in withdraw]
        try:
            self._remove_own_pending([(s.trial_id, dict(s)) for s in withdraw])
        except Exception:  # noqa: BLE001 - a store that fails now: they stay pending, said as such
            pending, withdrawn = pending + withdrawn, []
        for suggestion in leaving:
            evaluate(suggestion.trial_id, False)
        running.clear()
        queue.clear()
        raise ExecutorBrokenError(failure_text(error), failed, withdrawn, pending) from error

    def _stop_submitted(self, running, queue, created, evaluate, why: str, finished) -> None:
        """A run on an executor it was given (a Dask client's, a process pool's) stopped by Ctrl-C or
        an error: its evaluations still running are cancelled (on a Dask cluster at once; before, they
        ran on for nothing, their trials left pending for good), an evaluation that had finished is
        stored, and every trial this run asked for and will not record (cancelled, or requeued after a
        ``client.restart()``) is withdrawn from the study. A trial retried from an earlier run stays
        pending, as it was before. An ``InterruptedRunWarning`` says what was kept."""
        for future in running:
            future.cancel()  # (a pool's running evaluation cannot be: it is lost below)
        kept, withdraw, lost, left = [], [], [], []
        for future, suggestion in list(running.items()):
            trial_id = suggestion.trial_id
            evaluate(trial_id, False)
            if (
                future.done() and not future.cancelled() and not _broke(future)
            ):  # finished before the stop: stored
                try:
                    if self.study.trial(trial_id).state == PENDING:
                        self._record(suggestion, future)
                    kept.append(trial_id)
                    continue
                except Exception:  # noqa: BLE001 - a store that fails now: withdrawn, said below
                    pass
            if not future.done():
                lost.append(trial_id)
            if trial_id in created:
                withdraw.append(suggestion)
            else:
                left.append(trial_id)
        for suggestion in queue:  # requeued after a cancellation, or retried and not started yet
            if suggestion.trial_id in created:
                withdraw.append(suggestion)
            else:
                left.append(suggestion.trial_id)
        queue.clear()
        withdrawn, not_withdrawn = [s.trial_id for s in withdraw], ""
        try:
            self._remove_own_pending([(s.trial_id, dict(s)) for s in withdraw])
        except Exception as exc:  # noqa: BLE001 - say what is left, then stop as asked
            not_withdrawn = (
                f"trial(s) {_ids(withdrawn)} stay pending: withdrawing them failed ({exc}); "
                "warmbo observe STUDY --trial ID --withdraw takes each out (clean-pending marks them failed)"
            )
            withdrawn = []
        cancelled = [s.trial_id for f, s in running.items() if f.cancelled()]
        lines = [f"run {why}"]
        if cancelled:
            lines.append(
                f"cancelled the {len(cancelled)} evaluation(s) still running (trial(s) {_ids(cancelled)})"
            )
        if lost:
            lines.append(
                f"the executor could not cancel the evaluation(s) of trial(s) {_ids(lost)}, which run on; "
                "their values are not stored"
            )
        if withdrawn:
            lines.append(
                f"withdrew trial(s) {_ids(withdrawn)} from the study (asked by this run; no value of "
                "theirs is stored)"
            )
        if not_withdrawn:
            lines.append(not_withdrawn)
        if kept:
            lines.append(f"stored the outcome of trial(s) {_ids(kept)}, which had finished")
        with contextlib.suppress(Exception):  # (a study that cannot be read now: said without it)
            lines.append(f"the study keeps its {finished()} finished trial(s)")
        if left:
            lines.append(
                f"trial(s) {_ids(left)}, taken over from an earlier run, stay pending as they were "
                "(retry_pending=True evaluates them)"
            )
        warnings.warn("; ".join(lines), InterruptedRunWarning, stacklevel=user_stacklevel())

    def _prior_rows(self) -> int:
        """Imported prior rows among the complete trials (``add_prior``, ``transfer="none"``)."""
        return sum(t.worker == PRIOR_WORKER for t in self.study.trials((COMPLETE,)))

    def _finished(self, n_prior: int | None = None) -> int:
        """The study's own finished trials (complete or failed, prior rows not counted): what a
        ``run``'s budget counts."""
        n_prior = self._prior_rows() if n_prior is None else n_prior
        return self.study.count(COMPLETE) + self.study.count(FAILED) - n_prior

    def _live_elsewhere(self, exclude=(), interval: float | None = None) -> list[float]:
        """Ages (seconds, ascending) of the last beats of pending trials evaluated elsewhere and
        alive: a heartbeat within ``LIVE_BEATS`` intervals (default :data:`HEARTBEAT_INTERVAL`), not
        one of ``exclude``."""
        ages = self._fresh_beats(HEARTBEAT_INTERVAL if interval is None else interval)
        return sorted(age for i, age in ages.items() if i not in exclude)

    def _fresh_beats(self, interval: float) -> dict[int, float]:
        """Trial id -> age (seconds) of the last beat of each pending trial that beat within
        ``LIVE_BEATS`` heartbeat intervals: a live evaluation, as runs sharing a study count it.
        A trial of a process of this machine that no longer exists (:func:`_dead_here`) is not one:
        a run resumed at once after ``kill -9`` stopped one trial short of its budget, its place held
        by the killed process's last trial (a user test)."""
        now = time.time()
        beats = self.study.last_beats(beating_only=True)
        fresh = {i: now - beat for i, beat in beats.items() if now - beat <= LIVE_BEATS * interval}
        ended = _runs_ended(self.study) if fresh else {}
        for i in list(fresh):  # (read each time: a reclaimed trial changes worker)
            try:
                worker = self.study.trial(i).worker
            except TrialNotFoundError:
                continue
            if worker != self.worker and _dead_here(worker):
                del fresh[i]
            elif ended.get(worker, -math.inf) >= beats[i]:
                # its run recorded that it stopped after this beat (an interrupted run: a notebook's
                # stop button, then the cell run again at once stopped one trial short of its budget,
                # the trial cut short holding a place for 30 s; the notebook user test)
                del fresh[i]
        return fresh

    def _said_failures(self, outer, quiet: bool = False) -> None:
        """The end of a run's failure warnings: the failures it left unsaid in one warning (not when
        ``quiet``), and the warnings of the run it ran inside (``outer``: None for none) given back."""
        said, self._failures_said = getattr(self, "_failures_said", None), outer
        if said is not None and said[1] and not quiet:
            trial_id, text = said[2]
            warnings.warn(
                f"{said[1]} more trial(s) of this run failed (the last, trial {trial_id}: {text}); each "
                "failed trial keeps its error (opt.history, Trial.error; warmbo status)",
                TrialFailedWarning,
                stacklevel=user_stacklevel(),
            )

    def _failure_warning(self, trial_id: int, text: str) -> None:
        """A :class:`TrialFailedWarning` for a failed evaluation of a run: the first
        :data:`FAILURE_WARNINGS` of the run, each; the others counted and said in one warning at its
        end (a user test's notebook showed 74 warnings for 74 failed trials, each naming its trial,
        so Python's filters never folded them, burying the progress line)."""
        said = getattr(self, "_failures_said", None)
        if said is not None and said[0] >= FAILURE_WARNINGS:
            said[1] += 1
            said[2] = (trial_id, text)
            return
        if said is not None:
            said[0] += 1
        warnings.warn(f"trial {trial_id} failed: {text}", TrialFailedWarning, stacklevel=user_stacklevel())

    def _record(self, suggestion: Suggestion, future: Future) -> Trial:
        """Store an evaluation's outcome: its value, or the failure (an exception, a value that is not
        a finite number). A trial another worker recorded meanwhile (it took it for a dead one's:
        ``retry_pending``, ``heartbeat_grace``) keeps that worker's result, and the run goes on. A
        value the study cannot store (a full disk, a lock held too long, a lost server) stops the run
        with an error that gives the value, so that the evaluation is not lost with it."""
        exc = (
            CancelledError(
                "the executor cancelled the evaluation four times (a Dask client.restart(), a lost worker)"
            )
            if future.cancelled()
            else future.exception()
        )
        try:
            if exc is not None:
                error_text = failure_text(exc)
                self._failure_warning(suggestion.trial_id, error_text)
                return self.tell_failed(suggestion.trial_id, error=error_text)
            value = future.result()
            try:
                return self.tell(suggestion.trial_id, value)
            except StorageError:
                raise
            except ValueError as error:
                reason = str(error)
                number = _non_finite(value)
                if number is not None:
                    # (the store's message advises tell_failed, which a run's objective never calls;
                    # as a float: numpy's repr, np.float64(nan), escaped _FirstFailures, a review)
                    reason = f"the objective returned {number!r}, not a finite number"
                self._failure_warning(suggestion.trial_id, reason)
                return self.tell_failed(suggestion.trial_id, error=reason)
        except Warning:
            raise  # (a TrialFailedWarning turned into an error by the caller's filters)
        except Exception as error:  # noqa: BLE001 - the store's failures are told apart below
            if not _storage_failure(error):
                raise
            if isinstance(error, StorageError):
                try:
                    stored = self.study.trial(suggestion.trial_id)
                except Exception:  # noqa: BLE001 - the study cannot be read either: said below
                    stored = None
                if stored is not None and self._recorded_before_drop(error, stored, exc, future):
                    return stored  # (its COMMIT reached the server before the connection dropped)
                if stored is not None and stored.state != PENDING:
                    warnings.warn(
                        f"trial {suggestion.trial_id} was recorded by another worker meanwhile ({error}); "
                        "this evaluation's outcome is not stored",
                        RecordedElsewhereWarning,
                        stacklevel=3,
                    )
                    return stored
            if exc is not None:
                raise
            if isinstance(error, TrialNotFoundError):  # removed meanwhile (clean-pending, by hand)
                value = future.result()
                with contextlib.suppress(Exception):  # a multi-task dict, in task order, if it reads
                    value = self._as_values(value) if hasattr(self, "_as_values") else value
                message = _removed_message(self.study.url, suggestion, value)
            elif getattr(error, "unstored", False):  # (tell said it whole: not wrapped twice, the review)
                raise error
            else:
                message = _unstored_message(self.study.url, suggestion.trial_id, future.result(), error)
            raise StorageError(message) from error

    @staticmethod
    def _recorded_before_drop(error: Exception, stored: Trial, exc, future: Future) -> bool:
        """Whether ``stored`` holds this evaluation's own outcome, written by a record whose COMMIT
        reached the server just before it dropped the connection (``error``): the value (a single
        objective's) or the failure, as told."""
        if not (isinstance(error, ConnectionLostError) and error.at_commit):
            return False
        if exc is not None:
            return stored.state == FAILED and stored.error == failure_text(exc)
        try:
            return stored.state == COMPLETE and stored.value == float(future.result())
        except (TypeError, ValueError):
            return False  # (a multi-task value: said as another worker's record, as before)

    def __repr__(self) -> str:
        direction = "maximize" if self.maximize else "minimize"
        return f"Optimizer({direction}, trials={len(self.study)}, storage={redacted(self.study.url)!r})"

    def _refuse_run_arguments(self, unknown: dict, budget) -> None:
        """A ``TypeError`` for :meth:`run`'s arguments in another library's words (Optuna's
        ``study.optimize(f, n_trials=3)``: before, a bare "unexpected keyword argument"), or a
        missing budget."""
        finished = self._finished()
        words = {
            "n_trials": (
                f"budget=, the total of finished trials in the study (it holds {finished}: "
                f"budget={finished + unknown['n_trials']} runs {unknown['n_trials']} more)"
                if isinstance(unknown.get("n_trials"), int) and finished
                else "budget=, the total of finished trials in the study (Optuna's n_trials counts new ones)"
            ),
            "n_jobs": "n_workers=",
            "show_progress_bar": "progress=",
            "catch": "nothing: every exception of the objective fails its trial, and the run goes on",
            "gc_after_trial": "nothing (warmbo keeps no per-trial objects)",
        }
        taken = [
            "objective",
            "budget",
            "n_workers",
            "executor",
            "callbacks",
            "progress",
            "retry_pending",
            "timeout",
        ]
        if unknown:
            _refuse_unknown(unknown, "run", taken, words)
        raise TypeError(
            "run() needs budget=, the total of finished trials the study should hold "
            f"(it holds {finished}: budget={finished + 20} runs 20 more)"
        )

    def close(self) -> None:
        """Close this thread's connection to the study (the study stays stored; a later call on the
        optimizer connects again). Optional: a thread's connection is closed when the thread ends
        (a run's worker and heartbeat threads) and every one when the optimizer is dropped.
        ``with wb.Optimizer(...) as opt:`` calls it at the end of the block."""
        self.study.close()

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


for _name in _THEIR_ATTRIBUTES:
    setattr(Optimizer, _name, _their_attribute(_name))
del _name


def _user_line(exc: BaseException | None) -> str:
    """``file:line, in name`` of the innermost frame of ``exc``'s traceback outside warmbo and Python's
    own library (the objective's line that raised), or "" (no exception, a command's failure)."""
    import sysconfig
    import traceback

    if exc is None or exc.__traceback__ is None:
        return ""
    own = os.path.dirname(os.path.abspath(__file__)) + os.sep
    library = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not os.path.abspath(f.filename).startswith((own, library)) and not f.filename.startswith("<frozen")
    ]
    return f"{frames[-1].filename}:{frames[-1].lineno}, in {frames[-1].name}" if frames else ""


def failure_text(exc: BaseException) -> str:
    """How a failed evaluation's exception is stored (``Trial.error``) and shown: as the last line of
    Python's traceback, ``ValueError: diverged at step 37`` (not its repr, whose quotes and doubled
    backslashes a status table would show); a command's failure (``--cmd``) in warmbo's own words
    alone: ``command exited with status 1: ...``."""
    from .objective import ObjectiveError

    said = str(exc)
    if isinstance(exc, ObjectiveError) and said:
        return said
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def _observed(trial: Trial) -> np.ndarray:
    """A complete trial's value, or its task values (a multi-task trial), as a flat array."""
    return np.ravel(np.asarray(trial.values if trial.values is not None else trial.value, dtype=float))


def _storage_failure(error: BaseException) -> bool:
    """Whether an error is the study's store failing (SQLite's, PostgreSQL's driver's, or a
    StorageError), not a bug elsewhere that a "could not be stored" message would misname."""
    from .storage_postgres import is_driver_error

    return isinstance(error, StorageError | sqlite3.Error) or is_driver_error(error)


def _shown_value(value) -> str:
    try:
        values = [float(v) for v in np.ravel(np.asarray(value, dtype=float))]
    except (TypeError, ValueError, OverflowError):
        values = []
    return ",".join(repr(v) for v in values) if values else repr(value)


def _removed_message(url, suggestion: Suggestion, value) -> str:
    """Says that an evaluation's trial was removed from the study while it ran (``warmbo
    clean-pending``, a person), so its value has no trial to go to: it can be recorded as a new
    trial at the same settings (the "record it with --trial" advice would fail: no such trial)."""
    shown = _shown_value(value)
    params = shlex.quote(json.dumps(dict(suggestion), ensure_ascii=False))
    try:
        finite = bool(np.all(np.isfinite(np.asarray(value, dtype=float))))
    except (TypeError, ValueError, OverflowError):
        finite = False
    result = f"--value {shown}" if finite else "--failed"  # (observe takes finite values only)
    python = "opt.tell(params, value)" if finite else "opt.tell_failed(params)"
    return (
        f"trial {suggestion.trial_id} was removed from the study while it was being evaluated (by "
        f"`warmbo clean-pending` or by hand?), so its value, {shown}, was not stored; to keep it, record "
        f"it as a new trial: `warmbo observe --storage {shlex.quote(redacted(url))} --params {params} "
        f"{result}` (or {python})"
    )


def _unstored_message(url, trial_id: int, value, error: Exception) -> str:
    """Says which evaluation's value was not stored, and the value, so that an evaluation of hours is
    not lost with the run: the trial stays pending, and the value can be told once the study can be
    written again (before, only the database's "database or disk is full" was said)."""
    shown = _shown_value(value)
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    storage = shlex.quote(redacted(url))  # (a PostgreSQL URL's & would end the command in a shell)
    return (
        f"the value of trial {trial_id}, {shown}, could not be stored ({reason}); the trial stays "
        f"pending: once the study can be written again, record it with `warmbo observe --storage {storage} "
        f"--trial {trial_id} --value {shown}` (or opt.tell({trial_id}, ...))"
    )


def _pool_broken(executor) -> bool:
    """Whether ``executor`` can run nothing more (``BrokenExecutor`` on a no-op submission): a future's
    ``BrokenExecutor`` may be the objective's own (its inner pool's) on an executor that works."""
    try:
        executor.submit(int).cancel()
    except BrokenExecutor:
        return True
    except Exception:  # noqa: BLE001 - shut down, or any other refusal: not the break this is about
        return False
    return False


def _broke(future: Future) -> bool:
    """Whether ``future`` ended with its executor broken (``BrokenExecutor``: a process pool's process
    died), which says nothing of its own point when other evaluations ran beside it."""
    return future.done() and not future.cancelled() and isinstance(future.exception(), BrokenExecutor)


def _evaluate_into(future: Future, objective: Callable[[dict], float], params: dict) -> None:
    """Run ``objective(params)`` in a worker thread of ``run``'s own executor into ``future`` (the
    run's own, registered before this starts); nothing if the run cancelled it first."""
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(objective(params))
    except BaseException as exc:  # noqa: BLE001 - any failure fails the trial; the run must learn of it
        future.set_exception(exc)


#: seconds between the heartbeats of a run (at most; a third of ``heartbeat_grace`` when that is shorter)
HEARTBEAT_INTERVAL = 10.0
#: a pending trial whose heartbeat (or creation) is at most this many heartbeat intervals old is taken
#: for a live evaluation by other runs on the study, which leave its place in the budget to it
LIVE_BEATS = 3.0


class _Heartbeats:
    """A daemon thread that refreshes the heartbeat of the trials ``run`` evaluates (``ids()``), every
    :data:`HEARTBEAT_INTERVAL` seconds or every third of the grace period if that is shorter, until
    stopped."""

    def __init__(self, optimizer: Optimizer, ids: Callable[[], list[int]]):
        self.optimizer = optimizer
        self.ids = ids
        grace = optimizer.heartbeat_grace
        self.interval = HEARTBEAT_INTERVAL if grace is None else min(grace / 3.0, HEARTBEAT_INTERVAL)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="warmbo-heartbeat", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:  # the run's trials (the one evaluated in the loop's own thread too)
                    ids = self.ids()
                    if ids:
                        self.optimizer.study.heartbeat(ids)
                except Exception:  # noqa: BLE001 - a missed beat is retried; the run must go on
                    continue
        finally:  # this thread's connection (left open, PostgreSQL's driver warned at exit)
            with contextlib.suppress(Exception):
                self.optimizer.study.close()

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5.0)


def _ids(trial_ids) -> str:
    """Trial ids for a message: ``3, 4, 7``."""
    return ", ".join(map(str, sorted(trial_ids)))


def _warn_one_at_a_time(executor: Executor) -> None:
    """``run(objective, budget, executor=client.get_executor())`` without ``n_workers`` keeps one
    evaluation in flight: on a Dask cluster of four workers, three stood idle without a word."""
    slots = executor_slots(executor)
    if slots is not None and slots > 1:
        _warn(
            f"run evaluates one point at a time (n_workers=1) on an executor that runs {slots} at once; "
            f"pass n_workers={slots} to use them all, or n_workers=1 to keep one and silence this",
            UserWarning,
        )


class _ProgressBar:
    """This run's finished trials against its share of the budget, the study's total and the best
    value so far: a rich bar, plain lines when piped, or nothing.

    ``total`` is what the run has left to do (the budget less the study's finished trials when it
    started); the count starts at 0. When the study holds more than this run's trials (a resumed study,
    another run on it), the unit says how many: ``"5/5 trials (14 in the study)"``.
    """

    def __init__(self, enabled: bool, total: int, in_study: int, optimizer: Optimizer):
        self.enabled = enabled
        self.optimizer = optimizer
        self.total, self.in_study, self.completed = total, in_study, 0
        self.progress = None

    def _description(self) -> str:
        best = self.optimizer.best
        return "best: none yet" if best is None else f"best: {best.value:.6g}"  # (was "best: - -")

    def _unit(self) -> str:
        if self.in_study == self.completed:
            return "trials"
        return f"trials ({self.in_study} in the study)"

    def __enter__(self):
        if self.enabled:  # a bar on a terminal, plain lines when piped (warmbo._progress)
            from rich import get_console

            from ._progress import progress

            self.progress = progress(get_console(), transient=False)
            self.progress.__enter__()
            self.task = self.progress.add_task(
                self._description(), total=self.total, completed=0, unit=self._unit()
            )
        return self

    def advance(self, in_study: int) -> None:
        """One more trial of this run finished; the study now holds ``in_study`` finished trials."""
        self.completed += 1
        self.in_study = in_study
        if self.progress is not None:
            self.progress.update(self.task, advance=1, description=self._description(), unit=self._unit())

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)
        return False
